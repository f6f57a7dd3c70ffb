/* Copying a trace from a reader to a writer, as plumb trace convert, filter
 * and record do: a filter, thread folding and a bounded buffer on the way,
 * what the target format cannot carry counted exactly, a signal that stops
 * the copy at a safe point, and the code map beside the output; then the
 * copy's notes and report. */
#ifndef PLUMB_TRACE_COPY_H
#define PLUMB_TRACE_COPY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "core/output.h"
#include "core/status.h"
#include "trace/trace.h"

/* What a target format cannot carry, counted exactly so the notes are true. */
typedef struct trace_losses {
	uint64_t times, instruction_addresses, modifies_split, threads_folded, markers_dropped, collector_dropped;
	/* lackey keeps an instruction address only as "the I line before": */
	uint32_t lackey_thread;
	bool lackey_have_fetch;
	uint64_t lackey_last_fetch;
} trace_losses;

/* Adds what writing these records in format `to` loses (nothing for
 * native; threads_folded is the caller's to count). */
void trace_losses_count(trace_losses *losses, trace_format to, const trace_record *records, size_t count);

typedef struct trace_copy_options {
	bool fold_threads;                    /* write every record as thread 0 (din has no threads) */
	const trace_buffer_options *buffer;   /* a bounded buffer between reader and writer; NULL: none */
	const trace_filter *filter;           /* what to remove; NULL: nothing */
} trace_copy_options;

typedef struct trace_copy_result {
	trace_format from, to;
	uint64_t records;                     /* read (after the filter) */
	double seconds;                       /* reading, writing and closing */
	bool interrupted;                     /* a signal stopped the copy (interrupt.h) */
	trace_losses losses;
	trace_filter_counts filtered;
	trace_buffer_totals buffer;
	trace_reader_info info;
	bool code_map_skipped;                /* the code map was not written beside a non-regular out */
} trace_copy_result;

/* Copies everything reader gives to writer (format `to`, opened on the path
 * out) and closes both.  On success the output is committed, with
 * plumbgrind's code map beside it (OUT.code) unless out is "-".  A SIGINT,
 * SIGTERM or SIGHUP stops the copy between batches: the output is still
 * committed with every record read before it, and result->interrupted is
 * set.  On failure the writer is aborted and -1 returned.  With no buffer,
 * filter or folding, plumbgrind's entries go into a native file as they
 * are (trace_writer_take_entries, format 1.3). */
int trace_copy(trace_reader *reader, trace_writer *writer, const char *out, trace_format to,
               const trace_copy_options *options, trace_copy_result *result, plumb_status *status);
/* The copy's notes, one line each, "PREFIX: note: ..." (or "warning:"):
 * what the target could not carry, din records skipped, an input cut
 * short, region markers a wrapping buffer dropped. */
void trace_copy_write_notes(const trace_copy_result *result, const char *prefix, FILE *stream);
/* The report: input and output, the table "conversion" (formats, records,
 * bytes, seconds, rate), "buffer" with a buffer, "filter" with a filter. */
output_report *trace_copy_report(const char *command, const char *input, const char *out,
                                 const trace_copy_options *options, const trace_copy_result *result);
/* Runs program under Valgrind (plumbgrind, else lackey) as a trace reader;
 * with a buffer, the tool's ring is sized so that the program runs at most
 * about a quarter of the buffer past a full buffer before it is stopped. */
int trace_reader_open_recording(trace_reader **out, char *const program[], const trace_buffer_options *buffer,
                                plumb_status *status);

#endif
