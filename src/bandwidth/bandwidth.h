/* Sustained memory bandwidth: STREAM-style read, write, copy and triad
 * kernels (plus non-temporal-store variants), vectorised for AVX2 and
 * AVX-512 and chosen at run time, with a scalar fallback; run on 1..N
 * pinned threads, each streaming over its own buffer.
 *
 * Bytes are counted as STREAM counts them: the bytes the program names
 * (8 per double read, 8 per double written).  The write-allocate read that
 * an ordinary store miss causes is not counted; bandwidth_bytes_moved()
 * gives the estimate that includes it.  See docs/bandwidth.md. */
#ifndef PLUMB_BANDWIDTH_H
#define PLUMB_BANDWIDTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/cpu.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"
#include "machine/machine_model.h"
#include "machine/topology.h"
#include "core/arena.h"

typedef enum bandwidth_operation {
	BANDWIDTH_READ,    /* sum += b[i] */
	BANDWIDTH_WRITE,   /* a[i] = s */
	BANDWIDTH_COPY,    /* a[i] = b[i] */
	BANDWIDTH_TRIAD,   /* a[i] = b[i] + s * c[i] */
	BANDWIDTH_OPERATIONS
} bandwidth_operation;

typedef enum bandwidth_isa {
	BANDWIDTH_ISA_SCALAR,
	BANDWIDTH_ISA_AVX2,
	BANDWIDTH_ISA_AVX512,
	BANDWIDTH_ISAS
} bandwidth_isa;

/* Every kernel has this shape: a is the destination, b and c the sources,
 * n the element count, s the scalar.  Kernels that read return a sum of
 * what they read (so the loads cannot be dropped); the others return 0. */
typedef double (*bandwidth_kernel_fn)(double *a, const double *b, const double *c, size_t n, double s);

typedef struct bandwidth_kernel {
	const char *name;              /* "read", "triad-nt" */
	const char *symbol;            /* the C function, for objdump checks */
	bandwidth_operation operation;
	bandwidth_isa isa;
	bool nontemporal;              /* stores bypass the caches (movnt*) */
	unsigned arrays;               /* distinct arrays touched: 1, 2 or 3 */
	unsigned reads_per_element;    /* doubles loaded per element */
	unsigned writes_per_element;   /* doubles stored per element */
	bandwidth_kernel_fn run;
} bandwidth_kernel;

const char *bandwidth_isa_name(bandwidth_isa isa);
/* Parses "scalar", "avx2", "avx512"; -1 if unknown. */
int bandwidth_isa_parse(const char *text);
/* Whether this CPU (and OS) can run the ISA's kernels. */
bool bandwidth_isa_available(bandwidth_isa isa, const cpu_features *features);
/* The widest available ISA. */
bandwidth_isa bandwidth_isa_best(const cpu_features *features);

/* The kernel for (operation, nontemporal) at isa; NULL if none exists
 * (there is no non-temporal read). */
const bandwidth_kernel *bandwidth_kernel_find(bandwidth_operation operation, bool nontemporal, bandwidth_isa isa);
/* Looks a kernel up by name ("copy-nt") at isa; NULL if unknown. */
const bandwidth_kernel *bandwidth_kernel_by_name(const char *name, bandwidth_isa isa);
/* All kernel names in the default order, NULL-terminated. */
extern const char *const bandwidth_kernel_names[];

/* Byte accounting for n elements of one array. */
uint64_t bandwidth_bytes_counted(const bandwidth_kernel *kernel, size_t elements);
/* The traffic a write-allocate hierarchy really moves beyond the level the
 * buffer fits in: counted bytes plus one line fill per ordinary stored line
 * (non-temporal stores do not allocate). */
uint64_t bandwidth_bytes_moved(const bandwidth_kernel *kernel, size_t elements);
/* Elements per array so that all the kernel's arrays together fill at most
 * footprint bytes, rounded down to whole 512-byte blocks (0 if too small). */
size_t bandwidth_elements_for_footprint(const bandwidth_kernel *kernel, uint64_t footprint);

/* Memory levels a working set can land in, from the topology. */
#define BANDWIDTH_MAX_LEVELS 8
typedef struct bandwidth_level {
	char name[16];                 /* "L1", "L2", "L3", "DRAM" */
	int cache_level;               /* 1.., 0 for DRAM */
	uint64_t cache_size;           /* one instance, bytes (0 for DRAM) */
	uint64_t capacity_per_thread;  /* share of one instance each thread gets */
	int sharing;                   /* CPUs that share one instance (sysfs) */
	uint64_t usable_size;          /* one instance as the machine model measured it; 0: the nominal size */
} bandwidth_level;

/* Data/unified cache levels plus DRAM.  Threads are assumed placed one per
 * CPU in order, so min(threads, CPUs sharing an instance) of them share
 * each instance.  Returns the level count (>= 1: DRAM is always there). */
int bandwidth_levels_from_topology(const topology *topo, int threads, bandwidth_level *levels, int max);
/* The index of the level a per-thread footprint lands in: the first level
 * whose per-thread capacity holds it; the last (DRAM) otherwise.  (The
 * sweep keeps a default footprint sized from a level's usable size in that
 * level.) */
int bandwidth_level_of(const bandwidth_level *levels, int count, uint64_t footprint_per_thread);
/* One default per-thread footprint per level: half of L1; for each later
 * cache min(half its capacity, twice the previous level's), which a
 * streaming sweep evicts from the previous level entirely; and twice the
 * last-level cache for DRAM.  Returns the count (== level count). */
int bandwidth_default_footprints(const bandwidth_level *levels, int count, uint64_t *footprints, int max);
/* The usable capacity the machine model measured, in place of the nominal
 * one, for each level the one rule applies to (machine_level_usable: a
 * shared cache measured far below its nominal size, as on a VM whose host
 * leaves the guest a few MiB of a large L3): each thread's share, and so
 * the level a footprint lands in, come from it.  threads as for
 * bandwidth_levels_from_topology; model may be NULL.  Returns how many
 * levels changed. */
int bandwidth_levels_use_model(bandwidth_level *levels, int count, int threads, const machine_model *model);
/* bandwidth_default_footprints for a sweep whose most threads is
 * max_threads, over one thread's levels (bandwidth_levels_use_model
 * applied).  A level with a usable size gets a footprint for its share at
 * max_threads, so that the all-threads row measures the level and not
 * memory: min(half that share, twice the previous level), or, when that
 * would not leave the previous level, the geometric mean of the previous
 * level and the share (one thread's, when the share at max_threads is no
 * larger than the previous level).  Levels with no usable size get the
 * defaults. */
int bandwidth_footprints_for(const bandwidth_level *levels, int count, int max_threads, uint64_t *footprints, int max);
/* The sentence that says which levels were taken at their usable size
 * (and, with footprints, the default footprint each got), from the model
 * measured in source; "" when none was. */
void bandwidth_usable_note(const bandwidth_level *levels, int count, const uint64_t *footprints, int max_threads,
                           const char *source, char *note, size_t length);

/* A team of pinned worker threads, each with its own buffer that it
 * first-touches itself (so its pages are local to its CPU). */
typedef struct bandwidth_team bandwidth_team;

typedef struct bandwidth_team_request {
	int threads;
	const int *cpus;               /* threads entries */
	uint64_t footprint;            /* largest per-thread footprint to be run */
	arena_pages pages;
	const timer_calibration *timer;
} bandwidth_team_request;

int bandwidth_team_create(bandwidth_team **team, const bandwidth_team_request *request, plumb_status *status);
void bandwidth_team_destroy(bandwidth_team *team);
int bandwidth_team_threads(const bandwidth_team *team);
/* What the first worker's buffer really got ("2MiB THP (100% of range)"). */
const char *bandwidth_team_pages(const bandwidth_team *team);

/* One timed sample: every worker runs the kernel passes times over its
 * arrays, started together, and the sample covers the common interval
 * from the first start to the last finish.  Returns aggregate counted
 * bytes / ns (= GB/s), or NaN on failure. */
double bandwidth_team_sample(bandwidth_team *team, const bandwidth_kernel *kernel, size_t elements, uint64_t passes);

typedef struct bandwidth_measure_options {
	size_t min_runs, max_runs;     /* samples */
	double target_relative_ci;     /* 0.02 = the 95% CI within +-2% */
	uint64_t time_cap_ns;          /* per measurement */
	double sample_ns;              /* aimed length of one sample */
} bandwidth_measure_options;

void bandwidth_measure_defaults(bandwidth_measure_options *options);

typedef struct bandwidth_result {
	stats_summary gbps;            /* aggregate GB/s (10^9 B/s), STREAM counting */
	bool noisy;                    /* CI target missed within the time cap */
	size_t elements;               /* per array per thread */
	uint64_t footprint;            /* bytes per thread actually used */
	uint64_t passes;               /* per sample */
	double moved_factor;           /* bandwidth_bytes_moved / counted */
} bandwidth_result;

/* Warms up and sizes the samples (passes grow until the faster of two
 * samples lasts at least half of sample_ns), then repeats until the CI
 * target or the time cap (stats_repeat). */
int bandwidth_measure(bandwidth_team *team, const bandwidth_kernel *kernel, uint64_t footprint,
                      const bandwidth_measure_options *options, bandwidth_result *result, plumb_status *status);

/* A whole sweep: every thread count x kernel x footprint.  One team per
 * thread count, sized for the largest footprint. */
typedef struct bandwidth_sweep_request {
	const topology *topo;
	const bandwidth_kernel *const *kernels;
	int kernel_count;
	const uint64_t *footprints;    /* per thread; NULL = the defaults per level */
	const machine_model *model;    /* usable capacities measured (may be NULL: sysfs's sizes) */
	int footprint_count;
	const int *thread_counts;
	int thread_count_count;
	const int *cpus;               /* worker i runs on cpus[i] */
	int cpu_count;
	arena_pages pages;
	const timer_calibration *timer;
	bandwidth_measure_options options;
	void (*progress)(void *context, size_t done, size_t total);
	void *progress_context;
} bandwidth_sweep_request;

typedef struct bandwidth_point {
	int threads;
	const bandwidth_kernel *kernel;
	uint64_t footprint_requested;  /* per thread */
	char level[16];                /* where the footprint lands, by the topology */
	bandwidth_result result;
} bandwidth_point;

typedef struct bandwidth_sweep {
	bandwidth_point *points;
	size_t count;
	char pages_obtained[96];
	bandwidth_level levels[BANDWIDTH_MAX_LEVELS];   /* for one thread */
	int level_count;
	char usable_note[320];         /* the levels taken at their usable size, and the footprints chosen; "" if none */
} bandwidth_sweep;

int bandwidth_sweep_run(const bandwidth_sweep_request *request, bandwidth_sweep *sweep, plumb_status *status);
void bandwidth_sweep_free(bandwidth_sweep *sweep);

/* The per-level figure for (threads, kernel, level): the median over the
 * points in that level of each point's best sample (STREAM reports the
 * best rate: on a shared machine a preempted thread stretches a sample,
 * never shortens it).  Returns the number of points
 * found (0: value is NaN); *noisy tells whether any of them was noisy. */
size_t bandwidth_level_value(const bandwidth_point *points, size_t count, int threads, const bandwidth_kernel *kernel,
                             const char *level, double *value, bool *noisy);

/* ---- plumb bw's choices and report ---- */

/* The kernels of names (NULL: every kernel, bandwidth_kernel_names) for
 * isa: a name, "all" (every ISA this CPU and OS enable) or NULL (the best
 * one), ISA by ISA.  An ISA that is known but not enabled fails with
 * EOPNOTSUPP; an unknown ISA or kernel with EINVAL. */
int bandwidth_kernels_resolve(const char *isa, const char *const *names, int name_count,
                              const cpu_features *features, const bandwidth_kernel **kernels, int capacity,
                              int *count, plumb_status *status);
/* The thread counts of a default run on cpu_count CPUs: 1, 2, 4, ... below
 * cpu_count, then cpu_count.  Returns how many (at most capacity). */
int bandwidth_default_threads(int cpu_count, int *threads, int capacity);
/* The report of a sweep: meta (CPU, pages obtained, timer, target CI, time
 * cap, wall_seconds), the table "levels" (GB/s per memory level for each
 * thread count and kernel of the request), "bandwidth" (every point) and
 * notes on what a GB/s counts. */
struct output_report;
struct output_report *bandwidth_report(const bandwidth_sweep *sweep, const bandwidth_sweep_request *request,
                                       double wall_seconds);

#endif
