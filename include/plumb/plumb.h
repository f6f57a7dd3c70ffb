/* plumb/plumb.h: libplumb's public API.
 *
 * libplumb measures, predicts and simulates the memory hierarchy.  This
 * header and <plumb/region.h> (which it includes) are the whole installed
 * interface; every exported symbol starts with plumb_ and is listed in the
 * library's version script (PLUMB_1.0).  Link with
 *   cc prog.c $(pkg-config --cflags --libs plumb)
 *
 * Four parts:
 *   - counters: open a set of events (perf_event or PAPI) on the calling
 *     thread, start, read, stop (plumb_counters_*); region markers are in
 *     <plumb/region.h>;
 *   - the simulator: a multi-core cache hierarchy with coherence, fed one
 *     reference at a time or a whole trace (plumb_sim_*);
 *   - traces: read and write memory-reference traces in plumb's native
 *     format, Valgrind lackey's text or Dinero's din text (plumb_trace_*);
 *   - probes: the load-to-use latency of a working set by pointer chasing
 *     (plumb_latency_measure) and sustained bandwidth with STREAM's kernels
 *     (plumb_bandwidth_measure).
 *
 * Conventions, for every function below unless it says otherwise:
 *   Errors: a fallible call returns 0 (or a count) on success and -1 on
 *     failure, and then fills *error, when error is not NULL, with an errno
 *     value and one line of text.  A value that cannot be measured is
 *     reported as unsupported with a reason, never as 0.
 *   Ownership: the caller owns what it passes in and the structures it asks
 *     to be filled; a handle returned through `out` is the caller's until
 *     it passes it to the matching close/free call.  Strings returned as
 *     `const char *` belong to the library.
 *   Thread-safety: the library has no mutable global state (besides the
 *     region markers' per-process table).  Different handles may be used
 *     from different threads at once; one handle must not be used by two
 *     threads at the same time.
 *
 * Usable from C (C99 and later) and C++. */
#ifndef PLUMB_PLUMB_H
#define PLUMB_PLUMB_H

#include <stddef.h>
#include <stdint.h>
#include <plumb/region.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every declaration below is exported from libplumb.so (the library is
 * built with -fvisibility=hidden). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---- General --------------------------------------------------------- */

#define PLUMB_ERROR_MAX 256

/* What went wrong, filled by a call that failed. */
typedef struct plumb_error {
	int code;                        /* an errno value; EINVAL for bad input */
	char message[PLUMB_ERROR_MAX];   /* one line, no trailing newline */
} plumb_error;

/* The library's version, "MAJOR.MINOR.PATCH".  Never fails. */
const char *plumb_version(void);

/* ---- Counters -------------------------------------------------------- */

/* A set of events counted on the calling thread (and, when the backend
 * allows it, as one group so that they count the same instructions). */
typedef struct plumb_counters plumb_counters;

/* Opens `events`, a comma-separated list of event names (perf's names such
 * as "task-clock,page-faults,cycles", PAPI presets such as "PAPI_L1_DCM",
 * or raw encodings), on the calling thread, stopped.  `backend` is "perf"
 * (NULL means perf), "papi" or "none" (every event unsupported: a dry run).
 * An event this machine cannot count does not fail the call: it opens as
 * unsupported, and its reason is given by plumb_counters_read.  Fails
 * (EINVAL) on an empty or malformed list, more than PLUMB_EVENTS_MAX
 * events, or an unknown backend.  The counters count only the thread that
 * opened them; use them from that thread.  Free with plumb_counters_close. */
int plumb_counters_open(plumb_counters **out, const char *backend, const char *events, plumb_error *error);

/* Starts, or stops, counting.  Counts accumulate over start/stop pairs. */
int plumb_counters_start(plumb_counters *counters, plumb_error *error);
int plumb_counters_stop(plumb_counters *counters, plumb_error *error);

/* Reads every event's count so far (running or stopped): fills
 * counts[0 .. min(n, capacity) - 1] and returns n, the number of events, or
 * -1.  A multiplexed event is scaled (state PLUMB_COUNT_MULTIPLEXED); an
 * event that cannot be counted is PLUMB_COUNT_UNSUPPORTED with its reason. */
int plumb_counters_read(plumb_counters *counters, plumb_count *counts, size_t capacity, plumb_error *error);

/* The number of events, and the name of event `index` (NULL past the end). */
size_t plumb_counters_size(const plumb_counters *counters);
const char *plumb_counters_event(const plumb_counters *counters, size_t index);

/* Stops and frees the set.  NULL is allowed. */
void plumb_counters_close(plumb_counters *counters);

/* "ok", "multiplexed", "unsupported" or "not-counted"; "unknown" otherwise. */
const char *plumb_count_state_name(plumb_count_state state);

/* ---- The simulator --------------------------------------------------- */

/* A simulated machine: per-core L1I, L1D and L2, a shared L3, TLBs, a
 * prefetcher, and a coherence protocol (MESI by default) between the cores,
 * in the manner of Dinero IV and cachegrind, extended to several cores. */
typedef struct plumb_sim plumb_sim;

typedef enum plumb_access_kind {
	PLUMB_ACCESS_IFETCH = 0,     /* an instruction fetch */
	PLUMB_ACCESS_READ = 1,
	PLUMB_ACCESS_WRITE = 2
} plumb_access_kind;

/* Creates a simulator.  `config` names a preset (plumb_sim_presets; "host"
 * describes this machine from its caches as the kernel reports them), or is
 * the path of a configuration file (key = value lines, see `plumb sim
 * --help`); NULL means the default machine.  `settings`, if not NULL, is a
 * NULL-terminated array of "key=value" strings applied on top (for example
 * "cores=4", "l2.size=1M", "protocol=moesi").  Fails (EINVAL) on an unknown
 * preset, a bad key or value, or an inconsistent configuration, and with
 * the file's errno when it cannot be read.  Free with plumb_sim_free. */
int plumb_sim_new(plumb_sim **out, const char *config, const char *const *settings, plumb_error *error);

/* The preset names, a NULL-terminated array owned by the library. */
const char *const *plumb_sim_presets(void);

/* The number of simulated cores. */
unsigned plumb_sim_cores(const plumb_sim *sim);

/* Simulates one reference of `size` bytes (1 or more) at `address` by
 * `core` (0 .. cores - 1).  A reference that straddles lines touches each.
 * Fails (EINVAL) on a bad core, kind or size. */
int plumb_sim_access(plumb_sim *sim, unsigned core, plumb_access_kind kind, uint64_t address, uint32_t size,
                     plumb_error *error);

/* Simulates every reference of the trace file at `path` (any format
 * plumb_trace_open reads); thread t of the trace runs on core t modulo the
 * number of cores.  Returns 0, or -1 on an unreadable or corrupt trace (the
 * references before the error stay simulated). */
int plumb_sim_run_trace(plumb_sim *sim, const char *path, plumb_error *error);

/* What one cache level counted: references that reached it, and of those
 * the ones that missed (a reference is counted once per level whatever the
 * number of lines it touches). */
typedef struct plumb_sim_level {
	uint64_t accesses;
	uint64_t misses;
} plumb_sim_level;

/* The simulator's counts so far, for one core or the whole machine. */
typedef struct plumb_sim_counts {
	uint64_t references[3];      /* by plumb_access_kind */
	plumb_sim_level l1i, l1d, l2;
	plumb_sim_level l3;          /* a core: its share of the shared L3 */
	uint64_t memory_reads;       /* lines fetched from memory */
	uint64_t memory_writes;      /* lines written back to memory */
	uint64_t invalidations_sent; /* copies in other cores invalidated by this core's writes */
	uint64_t transfers_received; /* misses served by another core's cache */
} plumb_sim_counts;

/* Fills *out for `core`, or for the whole machine (summed over the cores)
 * when core is -1.  Fails (EINVAL) on a bad core. */
int plumb_sim_counts_get(const plumb_sim *sim, int core, plumb_sim_counts *out, plumb_error *error);

/* Zeroes the counts, keeping the caches' contents. */
void plumb_sim_reset_counts(plumb_sim *sim);

/* Frees the simulator.  NULL is allowed. */
void plumb_sim_free(plumb_sim *sim);

/* ---- Traces ---------------------------------------------------------- */

typedef enum plumb_trace_kind {
	PLUMB_TRACE_INSTRUCTION = 0, /* an instruction fetch */
	PLUMB_TRACE_READ = 1,
	PLUMB_TRACE_WRITE = 2,
	PLUMB_TRACE_MODIFY = 3,      /* read then write of the same bytes (lackey's 'M') */
	PLUMB_TRACE_REGION_BEGIN = 4,/* markers, not references: see plumb_trace_region_name */
	PLUMB_TRACE_REGION_END = 5
} plumb_trace_kind;

#define PLUMB_TRACE_HAS_INSTRUCTION_ADDRESS 0x1
#define PLUMB_TRACE_HAS_TIME 0x2

/* One trace record. */
typedef struct plumb_trace_record {
	uint64_t address;
	uint64_t instruction_address; /* 0 when unknown */
	uint64_t time;                /* time or instruction count; 0 when unknown */
	uint32_t thread;              /* 0-based thread index */
	uint16_t size;                /* bytes */
	uint8_t kind;                 /* plumb_trace_kind */
	uint8_t flags;                /* PLUMB_TRACE_HAS_* */
} plumb_trace_record;

typedef struct plumb_trace_reader plumb_trace_reader;
typedef struct plumb_trace_writer plumb_trace_writer;

/* Opens the trace at `path` for reading; its format (native, lackey, din)
 * is recognised from its first bytes.  "-" is standard input.  Fails with
 * the file's errno, or EINVAL when the format is not recognised.  Close with
 * plumb_trace_close. */
int plumb_trace_open(plumb_trace_reader **out, const char *path, plumb_error *error);

/* Reads up to `capacity` records into `records` (the caller's).  Returns
 * how many (0 at the end of the trace), or -1 on a corrupt or truncated
 * trace.  A region marker's name (plumb_trace_region_name) stays valid
 * until the next read. */
long plumb_trace_read(plumb_trace_reader *reader, plumb_trace_record *records, size_t capacity,
                      plumb_error *error);

/* Closes the reader; returns -1 if the trace turned out to be damaged
 * after the records read.  NULL is allowed (returns 0). */
int plumb_trace_close(plumb_trace_reader *reader, plumb_error *error);

/* The name of a region marker record (kind PLUMB_TRACE_REGION_BEGIN or
 * _END), or NULL for any other record. */
const char *plumb_trace_region_name(const plumb_trace_record *record);

/* Creates the trace file `path`; the format follows the name: ".ptrace"
 * plumb's compressed native format, ".lackey" lackey text, ".din" din text
 * (any other name fails with EINVAL).  The file appears complete at
 * plumb_trace_finish, never half written.  Fails with the directory's
 * errno when it cannot be created. */
int plumb_trace_create(plumb_trace_writer **out, const char *path, plumb_error *error);

/* Appends `count` records. */
int plumb_trace_write(plumb_trace_writer *writer, const plumb_trace_record *records, size_t count,
                      plumb_error *error);

/* Finishes the file and frees the writer (also when it fails). */
int plumb_trace_finish(plumb_trace_writer *writer, plumb_error *error);

/* Frees the writer and leaves no file behind.  NULL is allowed. */
void plumb_trace_abort(plumb_trace_writer *writer);

/* ---- Probes ---------------------------------------------------------- */

/* A load-to-use latency, from a random pointer chase over a working set. */
typedef struct plumb_latency {
	double ns;                   /* median over the samples: the value to report */
	double ns_min;
	double ns_p10;               /* 10th percentile: the lower envelope */
	double ci95_relative;        /* half-width of the 95% CI of the mean, over the mean */
	size_t samples;
	int noisy;                   /* 1: the 2% CI target was not reached within the time cap */
} plumb_latency;

/* Measures the latency of a dependent load over a working set of `bytes`
 * (at least 4 KiB), walked in a random cyclic order of its cache lines (the
 * method of lmbench's lat_mem_rd and Google's multichase), on the calling
 * thread, for up to about one second.  Takes the calling thread's CPU time
 * and `bytes` of memory for the duration.  Fails (EINVAL) on a size too
 * small, ENOMEM when the memory cannot be had. */
int plumb_latency_measure(size_t bytes, plumb_latency *out, plumb_error *error);

/* A sustained bandwidth, counted as STREAM counts it (bytes the kernel
 * names, 10^9 B/s). */
typedef struct plumb_bandwidth {
	double gbps;                 /* median over the samples */
	double gbps_min, gbps_max;
	double ci95_relative;
	size_t samples;
	int noisy;                   /* 1: the 2% CI target was not reached within the time cap */
} plumb_bandwidth;

/* Measures STREAM's `kernel` ("read", "write", "copy" or "triad"; with
 * "-nt" for non-temporal stores where available) over `bytes` per thread,
 * with `threads` threads (1 or more) pinned to the first CPUs this process
 * may run on, using the widest vector instructions this CPU has.  Takes
 * those CPUs and threads * bytes of memory for up to a few seconds.  Fails
 * (EINVAL) on an unknown kernel, a size too small, more threads than
 * allowed CPUs. */
int plumb_bandwidth_measure(const char *kernel, size_t bytes, int threads, plumb_bandwidth *out,
                            plumb_error *error);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
