/* One memory reference, as every trace source (native file, lackey, din,
 * Valgrind tool, microbenchmark emitter) hands it to the simulator. */
#ifndef PLUMB_TRACE_H
#define PLUMB_TRACE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum trace_kind {
	TRACE_INSTRUCTION = 0,  /* instruction fetch */
	TRACE_READ = 1,
	TRACE_WRITE = 2,
	TRACE_MODIFY = 3,       /* read then write of the same bytes (lackey 'M') */
	/* Region markers (not references): the thread enters or leaves a named
	 * region (plumb_region_begin/end, PLUMB_VG_REGION_BEGIN/END).  size 0,
	 * flags 0, and `address` holds the name: see trace_region_name(). */
	TRACE_REGION_BEGIN = 4,
	TRACE_REGION_END = 5,
	/* Calls and returns (not references), from plumbgrind's ring when
	 * `plumb sim --callgrind-out` asks for them (--plumb-calls=yes): a call
	 * has the call instruction in instruction_address and the callee's
	 * entry in address; a return says the thread left its `address`
	 * innermost calls.  size 0, flags 0.  Only the simulator takes them
	 * (inclusive costs, sim_annotate); no trace format stores them. */
	TRACE_CALL = 6,
	TRACE_RETURN = 7,
	/* Collector markers (not references, version 1.2 of the native format):
	 * what a bounded trace buffer did at this point of the trace (plumb
	 * trace record --buffer).  A halt: the program was stopped while the
	 * full buffer drained; lost: references the buffer could not hold
	 * (--when-full drop or wrap).  See trace_collector_marker(). */
	TRACE_HALT = 8,
	TRACE_LOST = 9
} trace_kind;

typedef struct trace_record {
	uint64_t address;
	uint64_t instruction_address;  /* 0 when unknown */
	uint64_t time;                 /* time or instruction count; 0 when unknown */
	uint32_t thread;               /* 0-based thread index */
	uint16_t size;                 /* bytes */
	uint8_t kind;                  /* trace_kind */
	uint8_t flags;                 /* TRACE_HAS_* */
} trace_record;

#define TRACE_HAS_INSTRUCTION_ADDRESS 0x1
#define TRACE_HAS_TIME 0x2

/* Region markers.  A marker's name is a NUL-terminated string of 1 to
 * TRACE_REGION_NAME_MAX bytes without control characters; the record holds
 * a pointer to it in `address`.  A reader's markers point into the reader's
 * own copy of the name, valid until the reader is closed; a caller that
 * makes markers itself keeps its string alive while the records are used.
 * Every consumer (simulator, writers, trace stats) reads the name through
 * trace_region_name(), so records stay 32 bytes and need no side table.
 * Formats: docs/trace-format.md ("Region markers"). */
#define TRACE_REGION_NAME_MAX 255

/* A region marker (collector markers: trace_is_collector_marker). */
static inline int trace_is_marker(const trace_record *record)
{
	return record->kind == TRACE_REGION_BEGIN || record->kind == TRACE_REGION_END;
}

static inline int trace_is_call(const trace_record *record)
{
	return record->kind == TRACE_CALL || record->kind == TRACE_RETURN;
}

static inline const char *trace_region_name(const trace_record *record)
{
	return (const char *)(uintptr_t)record->address;
}

/* Makes *record a region marker (begin != 0: TRACE_REGION_BEGIN) of thread. */
static inline void trace_region_marker(trace_record *record, int begin, uint32_t thread, const char *name)
{
	record->address = (uint64_t)(uintptr_t)name;
	record->instruction_address = 0;
	record->time = 0;
	record->thread = thread;
	record->size = 0;
	record->kind = (uint8_t)(begin ? TRACE_REGION_BEGIN : TRACE_REGION_END);
	record->flags = 0;
}

/* Collector markers.  A record of kind TRACE_HALT or TRACE_LOST has size 0
 * and flags 0, the thread of the reference before it (so a consumer's thread
 * logic sees no switch), and:
 *   address              start, in ns since the recording began (CLOCK_MONOTONIC)
 *   instruction_address  end, likewise (>= start)
 *   time                 index << 40 | count: the marker's number among the
 *                        trace's markers of its kind (from 0, below 2^24) and
 *                        the references drained (halt) or lost (lost), below 2^40.
 * Every consumer skips them as references (trace_is_reference). */
#define TRACE_COLLECTOR_INDEX_MAX ((1u << 24) - 1)
#define TRACE_COLLECTOR_COUNT_MAX ((1ull << 40) - 1)

static inline int trace_is_collector_marker(const trace_record *record)
{
	return record->kind == TRACE_HALT || record->kind == TRACE_LOST;
}

/* A reference (an instruction fetch, read, write or modify), not a marker. */
static inline int trace_is_reference(const trace_record *record)
{
	return record->kind <= TRACE_MODIFY;
}

static inline void trace_collector_marker(trace_record *record, trace_kind kind, uint32_t thread, uint32_t index,
                                          uint64_t start_ns, uint64_t end_ns, uint64_t count)
{
	record->address = start_ns;
	record->instruction_address = end_ns;
	record->time = (uint64_t)index << 40 | (count & TRACE_COLLECTOR_COUNT_MAX);
	record->thread = thread;
	record->size = 0;
	record->kind = (uint8_t)kind;
	record->flags = 0;
}

static inline uint32_t trace_collector_index(const trace_record *record) { return (uint32_t)(record->time >> 40); }
static inline uint64_t trace_collector_count(const trace_record *record) { return record->time & TRACE_COLLECTOR_COUNT_MAX; }
static inline uint64_t trace_collector_start(const trace_record *record) { return record->address; }
static inline uint64_t trace_collector_end(const trace_record *record) { return record->instruction_address; }

/* Streaming trace sources and sinks.  Readers hand out records in batches so
 * the simulator's inner loop never pays a call per reference; memory use is
 * a fixed buffer, whatever the trace's length. */
#include <stddef.h>
#include "core/status.h"

typedef enum trace_format {
	TRACE_FORMAT_AUTO,     /* readers: sniff the magic; writers: from the file name */
	TRACE_FORMAT_NATIVE,   /* plumb's framed, zstd-compressed binary format */
	TRACE_FORMAT_LACKEY,   /* valgrind --tool=lackey --trace-mem=yes text */
	TRACE_FORMAT_DIN       /* Dinero III/IV "din" text: label address */
} trace_format;

typedef struct trace_reader trace_reader;
typedef struct trace_writer trace_writer;

/* path "-" reads standard input; pipes work (no seeking). */
int trace_reader_open(trace_reader **out, const char *path, trace_format format, plumb_status *status);
/* Runs argv under Valgrind's lackey and streams its references. */
int trace_reader_open_command(trace_reader **out, char *const argv[], plumb_status *status);
/* The same with more options for valgrind (NULL-terminated; NULL for none),
 * given before the program: --fair-sched=yes, --scheduling-quantum=N, ...
 * TRACE_NO_CODE_MAP among them is not passed on: it says no code map is
 * wanted (trace_reader_code_map gives none), which spares plumbgrind the
 * debug-information lookups of every instruction it translates. */
#define TRACE_NO_CODE_MAP "--plumb-code=none"
int trace_reader_open_command_options(trace_reader **out, char *const argv[], const char *const valgrind_options[],
                                      plumb_status *status);
/* The same with plumbgrind's ring of shared memory in ring_blocks blocks
 * (2 to 8; 0: 8) of ring_block_bytes (a multiple of 4 KiB up to 512 KiB;
 * 0: 512 KiB).  The reader sees a block once the program has filled it, and
 * the program waits for a free block: with fewer, smaller blocks it runs at
 * most that far ahead of the reader (trace record --buffer stops it within
 * two blocks of the buffer's N-th reference), for more system calls. */
int trace_reader_open_command_blocks(trace_reader **out, char *const argv[], const char *const valgrind_options[],
                                     size_t ring_blocks, size_t ring_block_bytes, plumb_status *status);

/* The one launcher of a program under Valgrind (the three above are it with
 * defaults; plumb sim, trace record, explain and validate's plumbgrind
 * source all start their program through it).  plumbgrind sends the
 * references through its binary ring; lackey's text through a pipe when the
 * tool is not built.  A program that exec's another is refused at the
 * trace's end (trace_reader_code_map, trace_reader_close): Valgrind does not
 * follow an exec, and plumb follows one program image. */
typedef struct trace_launch_exit {
	int ended;                     /* the program ran to its end (exited or was killed) */
	int code;                      /* its exit status (128 + signal when killed) */
	int signal;                    /* the signal that killed it, else 0 */
	int exec_failed;               /* valgrind could not start it (status 126 or 127) */
} trace_launch_exit;

typedef struct trace_launch {
	const char *const *valgrind_options;   /* NULL-terminated (NULL: none), given before the program */
	size_t ring_blocks, ring_block_bytes;  /* as trace_reader_open_command_blocks; 0: the defaults */
	const char *valgrind;                  /* NULL: $PLUMB_VALGRIND, else valgrind on PATH */
	/* plumbgrind's summary of exact counts (--plumb-out, instrument_summary_read)
	 * into this file; NULL: none.  Needs plumbgrind: refused when lackey would run. */
	const char *summary_path;
	int program_stdout;                    /* the program's standard output; -1: plumb's standard error */
	/* the folder to use as VALGRIND_LIB, holding plumbgrind (plumb instrument
	 * --tool-dir); NULL: found as trace_tool_find finds it */
	const char *tool_dir;
	/* "NAME=VALUE" set, "NAME" removed, in the child only; NULL-terminated or NULL */
	const char *const *environment;
	/* filled when the reader is closed (trace_reader_close); NULL: not wanted */
	trace_launch_exit *exit;
} trace_launch;

void trace_launch_init(trace_launch *launch);
int trace_reader_open_launch(trace_reader **out, char *const argv[], const trace_launch *launch,
                             plumb_status *status);
/* Up to capacity records; returns the count, 0 at the end, -1 on error
 * (a corrupt or truncated input says where). */
long trace_reader_read(trace_reader *reader, trace_record *records, size_t capacity, plumb_status *status);
trace_format trace_reader_format(const trace_reader *reader);
/* Closes; for a command source, fails if the program or valgrind failed. */
int trace_reader_close(trace_reader *reader, plumb_status *status);

/* Writers are atomic: nothing appears at path until trace_writer_close succeeds. */
int trace_writer_open(trace_writer **out, const char *path, trace_format format, plumb_status *status);
int trace_writer_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status);
int trace_writer_close(trace_writer *writer, plumb_status *status);
void trace_writer_abort(trace_writer *writer);

/* ---- Additions (trace developer): memory sources, format names, what a
 * reader saw.  Nothing above changed. ---- */

/* Reads a trace held in memory (not copied: data must outlive the reader).
 * Used by the fuzz targets and by callers that map a file themselves. */
int trace_reader_open_memory(trace_reader **out, const void *data, size_t size, trace_format format,
                             plumb_status *status);

/* A native trace cut short (a block incomplete at end of input) is by default
 * an error, reported after every complete block's records were handed out.
 * With allow set, the reader ends quietly at the last complete block and
 * trace_reader_info() says the trace was truncated. */
void trace_reader_allow_truncated(trace_reader *reader, int allow);

/* A native trace opened from a path is decoded ahead by a worker thread (same
 * records in the same order; 1.5 MiB of buffers; a file of plumbgrind's
 * entries has its blocks loaded ahead, 3 block buffers).  enable = 0 before the
 * first read makes it decode in the caller's thread instead; later calls
 * change nothing.  Returns 1 if the reader decodes in the background. */
int trace_reader_set_background(trace_reader *reader, int enable);

/* Like trace_reader_read, but lends the records instead of copying them:
 * *records points to up to max records (the background worker's buffer, or
 * the reader's own), valid until the next call on this reader.  Returns the
 * count, 0 at the end, -1 on error.  Saves a copy per record for consumers
 * such as the simulator that read each record once. */
long trace_reader_view(trace_reader *reader, const trace_record **records, size_t max, plumb_status *status);

/* plumbgrind's compact entries, as they come through its ring: a run of
 * "use" entries of one thread, each naming a definition (the records of one
 * flush of the instrumented code, data addresses left out) and giving the
 * data addresses in order.  A consumer that keeps its own form of the
 * definitions (the simulator) walks these instead of the records they stand
 * for.  Valid until the next call on the reader; the definitions only grow,
 * so what a consumer made of definition i stays true for the same stream. */
typedef struct trace_compact {
	const uint64_t *words, *end;   /* entries: a word of tag 1 in bits 60-63, the definition's data
	                                * count (data[number]) in bits 32-39 and its number in bits
	                                * 0-31, then its data addresses */
	uint32_t thread;
	uint64_t records;              /* the records the entries stand for */
	const trace_record *templates; /* every definition's records (thread 0, data addresses 0) */
	const uint32_t *first;         /* per definition: its first template */
	const uint8_t *count;          /* per definition: its records (1-255) */
	const uint8_t *data;           /* per definition: its data records, the address words of a use */
	size_t definitions;            /* definitions known; every entry's number is below */
	uint64_t stream;               /* an identity of the stream: equal for all its runs, differs between streams */
	/* With plumbgrind's L1 filter (docs/valgrind-tool.md, "L1 filtering"): the
	 * words are instead COUNTS and GENERAL entries (vg/pg_filter.h has their
	 * layout), records those the COUNTS among them count (possibly 0: the
	 * reader then returns 1), and the definitions are not given. */
	bool filtered;
	/* A run handed out unchecked (trace_reader_want_unchecked_runs): only
	 * its first use is checked and end is the end of the reader's block,
	 * past the run; records are the first use's.  The consumer walks the
	 * uses while each is good (bits 40-63 of its word TRACE_COMPACT_USE_HIGH,
	 * its number below definitions, its data count data[number], its data
	 * before end), stops at the first that is not (another entry, or a bad
	 * use, which the reader reports at its next call), sets end there and
	 * records to what the uses before stand for, clears unchecked
	 * (trace_compact_settle does all that for a consumer that walks later),
	 * and gives the run back with trace_reader_compact_taken.  So the uses
	 * are walked once, by the consumer, and still checked. */
	bool unchecked;
} trace_compact;

/* Bits 40-63 of a use's word: its tag (1) and zeros. */
#define TRACE_COMPACT_USE_HIGH ((uint64_t)1 << 20)

/* trace_reader_view, or a run of compact entries from readers that have
 * them (plumbgrind's ring): returns the records given either way (0 at the
 * end, -1 on error; at least 1 for a filtered run, whose records are
 * compact->records); compact->words is NULL when they are in *records. */
long trace_reader_view_compact(trace_reader *reader, const trace_record **records, trace_compact *compact, size_t max,
                               plumb_status *status);

/* From now on, trace_reader_view_compact hands runs of uses out unchecked
 * (trace_compact.unchecked) to a consumer that checks them as it walks and
 * calls trace_reader_compact_taken after each; nothing else may be read
 * from the reader. */
void trace_reader_want_unchecked_runs(trace_reader *reader);
/* The consumer of an unchecked run (settled: end and records set) says
 * where it stopped; a run not given back is walked by the reader itself at
 * its next call. */
void trace_reader_compact_taken(trace_reader *reader, const trace_compact *compact);
/* An unchecked run walked and checked as its consumer would: end set at the
 * first entry that is not a good use, records counted, unchecked cleared.
 * Nothing for a checked run. */
void trace_compact_settle(trace_compact *compact);

typedef struct trace_reader_info {
	uint64_t records;          /* records handed out so far */
	uint64_t bytes;            /* input bytes consumed so far */
	uint64_t blocks;           /* native: complete blocks read */
	uint64_t lines;            /* text formats: lines read */
	uint64_t skipped;          /* source records plumb cannot represent, skipped (din label 4: flush) */
	uint64_t unknown_as_read;  /* din label 3 (unknown access type) records, delivered as reads */
	uint64_t thread_switches;  /* lackey: SCHED lines that changed the current thread */
	int truncated;             /* native: the input ended inside a block */
	uint64_t truncated_bytes;  /* bytes of that incomplete block */
	int complete;              /* native: the end marker was read */
} trace_reader_info;

void trace_reader_get_info(const trace_reader *reader, trace_reader_info *info);

/* ---- Keeping plumbgrind's entries in a native file (format 1.3) ----
 * A native trace can hold plumbgrind's compact entries as the tool wrote
 * them (docs/trace-format.md, "Entry blocks"): smaller than records to
 * write, and `plumb sim FILE` walks them as it walks a live run's.  Every
 * reader still hands out records (trace_reader_read), and
 * trace_reader_view_compact the entries.  trace_writer_can_take_entries
 * says whether writer (native) can take reader's entries (a reader of
 * plumbgrind's ring, trace_reader_open_command, nothing read from it yet);
 * trace_writer_take_entries then moves the next block of them: returns the
 * records they stand for, 0 at the end of the trace, -1 on an error. */
int trace_writer_can_take_entries(const trace_writer *writer, const trace_reader *reader);
long trace_writer_take_entries(trace_writer *writer, trace_reader *reader, plumb_status *status);

/* ---- Source attribution ----
 * The function, file and line of code addresses, from Valgrind's debug
 * information: plumbgrind writes them for every instruction the program
 * runs (docs/valgrind-tool.md, "Source attribution"). */
typedef struct trace_code_map trace_code_map;

/* For a program run with trace_reader_open_command under plumbgrind, once
 * its trace has ended (trace_reader_read returned 0): the map, which the
 * caller frees.  *out is NULL, without an error, when there is none (lackey
 * traced the program).  Fails if plumbgrind's file is missing or bad. */
int trace_reader_code_map(trace_reader *reader, trace_code_map **out, plumb_status *status);
/* For a program run with trace_reader_open_command: NULL when plumbgrind
 * traces it, else one sentence saying that plumbgrind was not found and
 * lackey (slower, no source lines) traces it instead, for the caller to show
 * the user.  NULL too when PLUMB_TRACE_LACKEY chose lackey on purpose. */
const char *trace_reader_tool_note(const trace_reader *reader);
int trace_code_map_load(trace_code_map **out, const char *path, plumb_status *status);
/* 1 and the names (valid until the map is freed; "???" and line 0 where the
 * debug information has none, as in cachegrind) if address is an
 * instruction the map knows, else 0. */
int trace_code_map_lookup(const trace_code_map *map, uint64_t address, const char **function, const char **file,
                          uint32_t *line);
size_t trace_code_map_size(const trace_code_map *map);   /* address ranges */
/* An executable file mapping the program's code ran from: the bytes at
 * start .. end (inclusive) are the file's from offset on.  Maps of version
 * 1 have none. */
typedef struct trace_code_segment {
	uint64_t start, end, offset;
	const char *path;              /* valid until the map is freed */
} trace_code_segment;
/* The map's segments, in the order they were first run from. */
size_t trace_code_map_segments(const trace_code_map *map, const trace_code_segment **segments);
/* 1 and the lowest address the program ran of function (its entry, for a
 * function entered by a call, such as main), else 0: where the program's
 * image lay in memory, to place its symbol table's addresses. */
int trace_code_map_function_start(const trace_code_map *map, const char *function, uint64_t *address);
/* Writes the map in plumbgrind's format, atomically.  `plumb trace record
 * OUT` keeps the map of the recorded program beside the trace as OUT.code,
 * which `plumb sim OUT` reads (trace_code_map_path_for). */
int trace_code_map_save(const trace_code_map *map, const char *path, plumb_status *status);
/* The code map's path for a trace file: trace_path + ".code" (NULL if too long). */
const char *trace_code_map_path_for(const char *trace_path, char *buffer, size_t size);
void trace_code_map_free(trace_code_map *map);

/* Re-interleaving a trace's threads (plumb sim --interleave K): the records of
 * each thread in their order, K of each thread in turn, from a read-ahead of
 * at most `window` records in per-thread queues (threads whose records lie
 * within about half the window of each other in the trace are interleaved).
 * Valgrind runs one thread at a time, by turns of a scheduling quantum; this
 * models threads that run at once.  trace_interleaver_view reads `reader` and
 * lends up to max records (valid until the next call); 0 at the end, -1 on an
 * error (the reader's, or out of memory). */
typedef struct trace_interleaver trace_interleaver;
#define TRACE_INTERLEAVE_WINDOW (4u << 20)
int trace_interleaver_new(trace_interleaver **out, uint64_t quantum, size_t window, plumb_status *status);
long trace_interleaver_view(trace_interleaver *interleaver, trace_reader *reader, const trace_record **records,
                            size_t max, plumb_status *status);
void trace_interleaver_free(trace_interleaver *interleaver);

/* ---- A bounded trace buffer (plumb trace record --buffer N) ----
 * What a hardware tracer's buffer does to a trace, between a reader and a
 * writer: the buffer holds `capacity` references; when it is full,
 *   halt  the traced program is stopped until the buffer has drained (the
 *         model of a logic analyzer that halts the machine, Watson 2004):
 *         nothing is lost, and a TRACE_HALT marker follows every capacity-th
 *         reference;
 *   drop  the program runs on and the references that find the buffer full
 *         are lost, counted by TRACE_LOST markers where they were;
 *   wrap  the program runs on and the newest reference overwrites the
 *         oldest: the trace keeps the last `capacity` references, after one
 *         TRACE_LOST marker counting the overwritten ones.
 * The buffer drains at drain_rate references per second (0: at once, as
 * fast as plumb writes); a halt lasts until it has drained (capacity /
 * drain_rate seconds) plus halt_extra seconds.  Region markers go through
 * with their references (wrap keeps references only and drops them). */
typedef enum trace_when_full { TRACE_FULL_HALT, TRACE_FULL_DROP, TRACE_FULL_WRAP } trace_when_full;

typedef struct trace_buffer_options {
	uint64_t capacity;         /* references, 1 .. TRACE_BUFFER_CAPACITY_MAX */
	trace_when_full when_full;
	double drain_rate;         /* references per second; 0: unthrottled (not with wrap) */
	double halt_extra;         /* seconds added to every halt (halt only) */
} trace_buffer_options;
#define TRACE_BUFFER_CAPACITY_MAX (1ull << 32)

/* How the buffer stops the program and keeps time; NULL members take the
 * defaults (no program to stop, CLOCK_MONOTONIC, nanosleep).  Tests pass a
 * clock of their own. */
typedef struct trace_buffer_hooks {
	int (*pause)(void *context, int stop, plumb_status *status);   /* stop = 1 stops, 0 resumes */
	uint64_t (*now_ns)(void *context);
	void (*sleep_ns)(void *context, uint64_t ns);
	void *context;
} trace_buffer_hooks;

typedef struct trace_buffer_totals {
	uint64_t offered;          /* references taken: what an unbounded buffer would have kept */
	uint64_t kept;             /* references written */
	uint64_t halts, halted_ns;
	uint64_t lost;             /* references lost (drop, wrap) */
	uint64_t region_markers_lost;   /* wrap only */
} trace_buffer_totals;

typedef struct trace_buffer trace_buffer;
/* Fails on bad options with a message naming them. */
int trace_buffer_check_options(const trace_buffer_options *options, plumb_status *status);
int trace_buffer_new(trace_buffer **out, const trace_buffer_options *options, const trace_buffer_hooks *hooks,
                     trace_writer *writer, plumb_status *status);
/* Takes records in trace order and writes what the buffer keeps to the writer. */
int trace_buffer_take(trace_buffer *buffer, const trace_record *records, size_t count, plumb_status *status);
/* The end of the trace: writes what is still held (wrap) and the last loss. */
int trace_buffer_finish(trace_buffer *buffer, plumb_status *status);
void trace_buffer_get_totals(const trace_buffer *buffer, trace_buffer_totals *totals);
void trace_buffer_free(trace_buffer *buffer);
/* "halt", "drop", "wrap". */
const char *trace_when_full_name(trace_when_full when_full);
int trace_when_full_parse(const char *text, trace_when_full *out, plumb_status *status);
/* Stops (stop = 1) or resumes the program a command reader is tracing
 * (SIGSTOP / SIGCONT to its Valgrind process); fails for other readers. */
int trace_reader_pause_program(trace_reader *reader, int stop, plumb_status *status);

/* ---- Removing the collector from a trace (plumb trace filter) ----
 * A tracer leaves two things of its own in a trace: its markers (halts and
 * losses) and, for a tracer that runs in the traced machine (a driver, an
 * interrupt handler), the references of its own code and data, which lie in
 * address ranges it knows.  Both can be removed (Watson 2004: the driver's
 * references are the removable part of the perturbation; what they displaced
 * in caches and TLBs is not). */
#define TRACE_FILTER_RANGES_MAX 16
typedef struct trace_filter {
	int drop_collector_markers;    /* TRACE_HALT and TRACE_LOST records */
	size_t range_count;            /* references with an address or instruction address in [low, high) */
	uint64_t low[TRACE_FILTER_RANGES_MAX], high[TRACE_FILTER_RANGES_MAX];
} trace_filter;

typedef struct trace_filter_counts {
	uint64_t references_in, references_dropped, markers_dropped;
} trace_filter_counts;

/* Adds "LOW-HIGH" (hex with 0x, or decimal; HIGH exclusive, above LOW). */
int trace_filter_add_range(trace_filter *filter, const char *text, plumb_status *status);
/* Removes in place what the filter drops; returns the records kept. */
size_t trace_filter_apply(const trace_filter *filter, trace_record *records, size_t count, trace_filter_counts *counts);

/* "native", "lackey", "din" ("auto" for TRACE_FORMAT_AUTO). */
const char *trace_format_name(trace_format format);
/* Parses those names; fails with a message listing them. */
int trace_format_parse(const char *name, trace_format *out, plumb_status *status);
/* The format a writer would pick for path under TRACE_FORMAT_AUTO (by suffix:
 * .ptrace native, .din din, .lackey lackey); fails if the suffix says nothing. */
int trace_format_from_path(const char *path, trace_format *out, plumb_status *status);

#endif
