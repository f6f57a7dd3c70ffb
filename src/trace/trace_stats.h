/* Summary statistics of a reference stream (plumb trace stats): counts by
 * kind and thread, distinct lines and pages, address ranges, sizes.
 * Memory: fixed, plus the distinct-line and distinct-page sets, which grow
 * with the trace's footprint (not its length) up to a cap; past the cap the
 * counts come from a HyperLogLog sketch kept alongside and are marked
 * estimated. */
#ifndef PLUMB_TRACE_STATS_H
#define PLUMB_TRACE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/output.h"
#include "core/status.h"
#include "trace/trace.h"

#define TRACE_STATS_SIZE_BUCKETS 8   /* 1, 2, 4, 8, 16, 32, 64 bytes, other */
#define TRACE_STATS_HLL_BITS 14

typedef struct trace_distinct {
	uint64_t *slots;           /* open addressing; key+1 so 0 means empty */
	size_t capacity, count, limit;
	bool exact;                /* false once count passed limit: use the sketch */
	uint64_t last_key;         /* consecutive references mostly repeat a line: skip them */
	bool have_last;
	uint8_t sketch[1u << TRACE_STATS_HLL_BITS];
} trace_distinct;

typedef struct trace_thread_counts {
	uint32_t thread;
	uint64_t by_kind[4];
} trace_thread_counts;

typedef struct trace_stats {
	unsigned line_shift, page_shift;
	uint64_t records;                  /* references: region markers are not records here */
	uint64_t region_markers;           /* TRACE_REGION_BEGIN/END records */
	/* collector markers (plumb trace record --buffer): */
	uint64_t halts;                    /* TRACE_HALT markers */
	uint64_t halted_ns;                /* their durations, summed */
	uint64_t drained;                  /* references they drained, summed */
	uint64_t lost_markers, lost;       /* TRACE_LOST markers and the references they lost */
	uint64_t after_last_halt;          /* references since the last halt (or the start) */
	uint64_t by_kind[4], bytes_by_kind[4];
	uint64_t sizes[TRACE_STATS_SIZE_BUCKETS];
	uint64_t line_straddles;           /* references touching two or more lines */
	uint64_t with_instruction_address, with_time;
	uint64_t min_address[2], max_address[2];   /* [0] fetches, [1] data */
	bool seen[2];
	uint64_t first_time, last_time;
	trace_thread_counts *threads;      /* sorted by thread */
	size_t thread_count, thread_capacity, last_thread;
	trace_distinct lines, pages;
} trace_stats;

/* line and page sizes must be powers of two; distinct_limit caps each exact set. */
int trace_stats_init(trace_stats *stats, uint64_t line_size, uint64_t page_size, size_t distinct_limit,
                     plumb_status *status);
int trace_stats_add(trace_stats *stats, const trace_record *records, size_t count, plumb_status *status);
/* Exact count, or the sketch's estimate when *exact comes back false. */
uint64_t trace_distinct_count(const trace_distinct *set, bool *exact);
void trace_stats_free(trace_stats *stats);

/* What reading a trace into its statistics saw. */
typedef struct trace_stats_reading {
	trace_reader_info info;
	trace_format format;               /* the format read (detected under TRACE_FORMAT_AUTO) */
	double seconds;                    /* reading and these statistics together */
} trace_stats_reading;

/* Reads the whole trace at path ("-": standard input) into stats (made by
 * trace_stats_init; the caller frees it). */
int trace_stats_read(trace_stats *stats, const char *path, trace_format from, bool allow_truncated,
                     trace_stats_reading *reading, plumb_status *status);
/* plumb trace stats's report: meta (trace, format, sizes, what a bounded
 * buffer did), the tables kinds, threads, footprint, ranges, sizes, input,
 * and notes. */
output_report *trace_stats_report(const char *path, const trace_stats *stats, const trace_stats_reading *reading);

#endif
