/* plumbgrind's compact entries on plumb's side (src/trace only).
 *
 * The tool (vg/pg_ring.c) writes its references as 64-bit entries: a
 * definition, sent once when a superblock is instrumented, says what a flush
 * of its events holds (kinds, sizes, instruction addresses); a use names the
 * definition and gives only the data addresses; thread switches, single
 * references, region markers, calls and returns are entries of their own.
 * They reach plumb through the shared ring (trace_ring.c) and are kept as
 * they are in a native trace's entry blocks (trace_native_*.c, format 1.3,
 * docs/trace-format.md "Entry blocks").  This is the one definition of their
 * layout on plumb's side (vg/pg_ring.c must agree: tests compare the two
 * paths record by record) and the one expander of entries into records that
 * every reader of either source uses. */
#ifndef PLUMB_TRACE_ENTRIES_H
#define PLUMB_TRACE_ENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace/ring_format.h"
#include "trace/trace.h"

/* An entry's tag is the top 4 bits of its first word (plumb/ring_format.h). */
#define TRACE_ENTRY_TAG_SHIFT PLUMB_RING_TAG_SHIFT
#define TRACE_ENTRY_USE PLUMB_RING_USE      /* 1<<60 | data<<32 | id, then the data addresses: one per data event of
                                 * the definition, data (its count, 0-255) of them, so that a walk
                                 * steps from a use to the next without looking its definition up */
#define TRACE_ENTRY_DEFINE PLUMB_RING_DEFINE   /* 2<<60 | n<<32 | id, then n words iaddr | size<<48 | kind<<62 */
#define TRACE_ENTRY_THREAD PLUMB_RING_THREAD   /* 3<<60 | thread */
#define TRACE_ENTRY_SINGLE PLUMB_RING_SINGLE   /* 4<<60 | kind<<16 | size, address, iaddr */
#define TRACE_ENTRY_MARKER PLUMB_RING_MARKER   /* 5<<60 | begin<<56 | length<<32 | thread, then the name, zero-padded words */
#define TRACE_ENTRY_CALL PLUMB_RING_CALL     /* 6<<60, call instruction, target */
#define TRACE_ENTRY_RETURN PLUMB_RING_RETURN   /* 7<<60 | frames */
/* With plumbgrind's L1 filter (--plumb-filter, vg/pg_filter.h has the
 * layout) the ring holds no definitions, uses, singles, calls or returns,
 * but thread switches, markers and: */
#define TRACE_ENTRY_COUNTS PLUMB_RING_COUNTS   /* 8<<60, fetches, reads, writes settled by the tool's L1s, straddles among
                                 * them, trace records since the last COUNTS */
#define TRACE_ENTRY_GENERAL PLUMB_RING_GENERAL  /* 9<<60 | lines<<32 | kind<<16 | size, address, then per line the least
                                 * recent way of its set in the tool's L1: meta<<56 | line */

typedef struct trace_names trace_names;

/* What the entries of one stream have said so far: the definitions (they
 * only grow), the current thread, and for a native file's entry blocks the
 * last address of every data event (their data addresses are stored as
 * differences from it). */
typedef struct trace_entries {
	/* definition i's records (thread 0, data addresses 0) are
	 * templates[first[i], first[i] + count[i]); data_at[first[i] + k] is
	 * the position of its k-th data reference among them */
	uint32_t *first;
	uint8_t *count, *data;
	size_t definitions, definitions_capacity;
	trace_record *templates;
	uint8_t *data_at;
	uint64_t *last;                /* per event position: the last address of that data event (files) */
	size_t event_count, events_capacity;
	uint32_t thread;
	uint64_t stream;               /* trace_compact's identity of this stream */
	trace_names *names;            /* where markers' names go (expand); NULL for a scan */
	bool filtered;                 /* the stream is the L1 filter's (COUNTS and GENERAL, no uses) */
	const char *error;             /* why the last call failed */
} trace_entries;

/* A new stream: zeroed, with an identity no other stream of this process has. */
void trace_entries_init(trace_entries *entries, trace_names *names);
void trace_entries_free(trace_entries *entries);

/* Expands the entries at *cursor (up to end) into out[0, max), advancing
 * *cursor past what was expanded; returns the records written (0: nothing
 * fits or nothing is left), -1 on a bad entry (entries->error).  With
 * stop_at_use, stops before a use entry (trace_entries_run takes those). */
long trace_entries_expand(trace_entries *entries, const uint64_t **cursor, const uint64_t *end, trace_record *out,
                          size_t max, bool stop_at_use);
/* The run of use entries at *cursor as a trace_compact (trace.h), checked
 * (every number defined, nothing cut by end); returns the records it stands
 * for, 0 if the next entry is not a use, -1 on a bad one.  A filtered
 * stream's run is of COUNTS and GENERAL entries (compact->filtered), checked
 * as strictly; it returns at least 1 (its records may be 0). */
long trace_entries_run(trace_entries *entries, const uint64_t **cursor, const uint64_t *end, trace_compact *compact);
/* trace_entries_run for a reader that hands runs out unchecked
 * (trace_compact.unchecked): only the use at cursor is checked, the run
 * reaches to end, the cursor stays (trace_reader_compact_taken moves it).
 * The first use's records, 0 if the next entry is not a use, -1 on a bad
 * one.  Not for a filtered stream. */
/* The next run of uses at *cursor for trace_reader_view_compact: unchecked
 * (trace_entries_run_unchecked) when the reader's caller asked for that,
 * else trace_entries_run's; a run handed out unchecked and not given back
 * (trace_reader_compact_taken) is walked and checked here first. */
long trace_entries_next_run(trace_reader *reader, trace_entries *entries, const uint64_t **cursor,
                            const uint64_t *end, trace_compact *compact);
long trace_entries_run_unchecked(trace_entries *entries, const uint64_t *cursor, const uint64_t *end,
                                 trace_compact *compact);

/* A whole block of entries checked at once (every tag, number, length,
 * kind and name; definitions learnt), *records set to the records it stands
 * for.  TRACE_SCAN_ENCODE also writes the block to out (n words) with every
 * use's data addresses replaced by their differences from the last address
 * of the same data event (modulo 2^64), as entry blocks store them;
 * TRACE_SCAN_DECODE turns such differences back into addresses in place. */
typedef enum trace_scan_mode { TRACE_SCAN_CHECK, TRACE_SCAN_ENCODE, TRACE_SCAN_DECODE } trace_scan_mode;
int trace_entries_scan(trace_entries *entries, uint64_t *words, size_t n, uint64_t *out, trace_scan_mode mode,
                       uint64_t *records);

#endif
