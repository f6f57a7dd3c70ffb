/* plumb explain: the four sources for a user's own regions.
 *
 * For each region a program marks with plumb_region_begin/end
 * (<plumb/region.h>), and for the whole program:
 *   measured      wall time over R runs (mean and 95% CI) and every counter
 *                 that works here (perf_event or PAPI, through the markers);
 *   instrumented  exact instructions, loads and stores (plumbgrind);
 *   simulated     misses per level and coherence events on this machine's
 *                 caches (the simulator's host preset), from the region's
 *                 own references;
 *   predicted     a time from the simulated misses and this machine's
 *                 measured latencies, bandwidths and memory-level
 *                 parallelism (docs/explain.md gives the model).
 *
 *   explain_options options;
 *   explain_options_init(&options);
 *   explain_result result;
 *   explain_run(argv, &options, &result, &status);
 *   output_report *report = explain_report(&result);
 *   explain_result_free(&result);
 *
 * Every step is also callable alone (the tests do), and the model is pure
 * arithmetic (explain_predict). */
#ifndef PLUMB_EXPLAIN_H
#define PLUMB_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "counters/counters.h"
#include "instrument/instrument.h"
#include "core/output.h"
#include "core/stats.h"
#include "core/status.h"

/* The row for everything the program did. */
#define EXPLAIN_PROGRAM "(program)"
#define EXPLAIN_NAME_MAX 256   /* plumbgrind names regions up to 255 bytes */
#define EXPLAIN_RUNS_MAX 100

/* Where a reference is served from: a hit at L1, L2, L3, or memory. */
typedef enum explain_level { EXPLAIN_L1 = 0, EXPLAIN_L2, EXPLAIN_L3, EXPLAIN_MEMORY, EXPLAIN_LEVELS } explain_level;
const char *explain_level_name(explain_level level);   /* "L1", "L2", "L3", "memory" */

/* ------------------------------------------------------------- the machine */

/* What the model needs to know about this machine.  A level whose figure is
 * unknown has NaN there (and the model says so). */
typedef struct explain_machine {
	char source[256];                    /* "measured now", or the file it came from */
	double clock_ghz;                    /* core clock (a dependent add per cycle) */
	unsigned line_bytes;
	double latency_ns[EXPLAIN_LEVELS];   /* load-to-use of a hit at the level (dependent loads) */
	double bandwidth_gbps[EXPLAIN_LEVELS]; /* one thread's read bandwidth from the level (10^9 B/s) */
	double mlp[EXPLAIN_LEVELS];          /* misses in flight at the peak (random chains; Little's law) */
	uint64_t size_bytes[EXPLAIN_LEVELS]; /* the cache sizes the probes used (sysfs); 0 for memory */
	double fault_ns;                     /* the kernel's time for one minor page fault (measured now) */
} explain_machine;

typedef struct explain_machine_options {
	uint64_t time_cap_ns;                /* per measurement (30 ms) */
	unsigned max_chains;                 /* MLP: 1..max_chains interleaved chains (16) */
	int cpu;                             /* -1: the CPU the caller runs on */
} explain_machine_options;

void explain_machine_options_init(explain_machine_options *options);
/* This machine's figures through the machine model's code
 * (machine_model.h): plumb lat's sweep, one pass (levels named by
 * capacity, memory's latency from its plateau, MLP at each level, the
 * core clock), then one-thread read bandwidth per level (plumb bw's read
 * kernel).  10-20 s on a quiet 2-CPU machine. */
int explain_machine_measure(const explain_machine_options *options, explain_machine *out, plumb_status *status);
/* The same, and the fresh machine model it measured (fresh may be NULL),
 * one thread's read bandwidth per level with its spread included, to be
 * held against a saved one (machine_model_difference_notes). */
struct machine_model;
int explain_machine_measure_model(const explain_machine_options *options, explain_machine *out,
                                  struct machine_model *fresh, plumb_status *status);
/* Reads the figures from a saved JSON report: plumb report's report.json
 * (the summary's machine model; or, from before it had one, its sections),
 * plumb explain's own (table "machine"), or plumb lat --mlp's (tables
 * "levels" and "mlp"; bandwidth then unknown: see
 * explain_machine_measure_bandwidths). */
int explain_machine_load(const char *path, explain_machine *out, plumb_status *status);
/* Whether a level past L1 has a latency but no bandwidth (figures read
 * from plumb lat's report), so that misses served there cannot be priced. */
bool explain_machine_lacks_bandwidth(const explain_machine *m);
/* One thread's read bandwidth at each level m does not know yet (plumb
 * bw's read kernel at each level's default footprint, sysfs's sizes),
 * its source extended to say so.  1-3 s. */
int explain_machine_measure_bandwidths(const explain_machine_options *options, explain_machine *m,
                                       plumb_status *status);
/* The kernel's time (thread CPU time) for one minor page fault: fresh
 * anonymous pages (no huge pages) written once each, the fastest of a few
 * rounds; NaN if it cannot be measured.  About 50 ms. */
double explain_machine_fault_ns(void);

/* -------------------------------------------------------------- a region */

typedef struct explain_counter {
	counter_state state;                 /* worst over the runs */
	double mean;                         /* over the runs (NaN unless ok/multiplexed) */
	double ci95;                         /* half-width */
	size_t observed;                     /* runs that reported it */
	size_t n;                            /* runs that counted it */
	double sum, sum_squares;             /* over those runs, for mean and ci95 */
	double min;                          /* the lowest of those runs */
} explain_counter;

/* Simulated counts of one region (summed over its threads).  misses[l] is
 * the number of data references that missed level l (L1D, L2, L3: the
 * reference went on to the next level). */
typedef struct explain_simulated {
	bool done;
	uint64_t references;                 /* data references (reads + writes) */
	uint64_t instruction_fetches;
	uint64_t l1i_misses;
	uint64_t misses[3];                  /* L1D, L2, L3 data misses */
	uint64_t memory_reads, memory_writes;   /* lines */
	uint64_t invalidations, transfers, upgrades;   /* coherence events */
	/* Misses of lines another core's write took away (classified from the
	 * first reference of a second thread on): the same bytes (true
	 * sharing) or other bytes of the line (false sharing) */
	uint64_t true_sharing, false_sharing;
} explain_simulated;

/* The region's own code (explain_code.c): its executed instructions grouped
 * into basic blocks, each priced by LLVM's scheduling model of this CPU
 * (llvm-mca), and the constant-stride streams of its loads and stores. */
typedef struct explain_core {
	bool done;                           /* cycles priced */
	double cycles;                       /* in-core cycles: each block's steady-state cycles x its executions */
	uint64_t instructions;               /* executed (from the trace's instruction fetches) */
	uint64_t priced_instructions;        /* of those, in blocks llvm-mca priced (the rest at their average) */
	uint64_t blocks;                     /* distinct blocks executed */
	uint64_t chained_loads;              /* executed loads whose address register is their own destination */
	uint64_t decoded_loads;              /* executed instructions with a memory source, in priced blocks */
	bool watched;                        /* lines below were counted */
	uint64_t lines;                      /* new lines referenced, per load or store instruction */
	uint64_t strided_lines;              /* of those, by an instruction in a constant stride */
} explain_core;

/* LLVM CPU names for a CPUID vendor, family and model, nearest first
 * (e.g. GenuineIntel 6/207: emeraldrapids, sapphirerapids); the count
 * (<= max).  The last is always "x86-64". */
size_t explain_llvm_cpus(const char *vendor, unsigned family, unsigned model, const char **names, size_t max);

/* A line two threads' cores took from each other, among the hottest. */
typedef struct explain_shared_line {
	uint64_t address;                    /* of the line */
	uint32_t bytes;                      /* the line's size */
	uint64_t true_sharing, false_sharing, invalidations;
	char variable[256];                  /* "counters+8 (the symbol's size 16)", or "unknown (why)" */
} explain_shared_line;
#define EXPLAIN_SHARED_LINES 3

typedef struct explain_prediction {
	bool done;
	char reason[160];                    /* why not, when !done */
	double compute_ns;                   /* in-core time: the blocks' llvm-mca cycles / clock, or
	                                        instructions / (IPC x clock) */
	double ipc;                          /* instructions per in-core cycle that compute_ns implies */
	bool ipc_from_code;                  /* compute_ns from the region's blocks (not a base IPC) */
	double sequential;                   /* the prefetchable fraction of its misses */
	double chained;                      /* the fraction of its loads that chain (pointer chase) */
	double latency_ns[EXPLAIN_LEVELS];   /* irregular misses served at the level x latency / overlap */
	double stream_ns[EXPLAIN_LEVELS];    /* prefetchable misses (and write-backs) at the level x line / bandwidth */
	double transfer_ns;                  /* the sum of stream_ns: the data transfers that overlap the core */
	double stall_ns;                     /* the sum of latency_ns: what does not overlap */
	double bandwidth_bound_ns;           /* all lines moved from and to memory / memory bandwidth */
	double kernel_ns;                    /* the region's page faults x one fault's kernel time */
	double total_ns;                     /* the prediction: max(compute, transfers, memory bound) + stalls
	                                        + kernel */
	double overlapped_ns;                /* with every irregular miss overlapped by the measured MLP */
} explain_prediction;

typedef struct explain_region {
	char name[EXPLAIN_NAME_MAX];
	/* measured */
	size_t runs;                         /* runs in which the region was seen */
	uint64_t entries;                    /* per run (the first run's) */
	double wall_ns[EXPLAIN_RUNS_MAX];    /* per run, summed over entries and threads */
	stats_summary wall;
	explain_counter counters[COUNTER_MAX_EVENTS];
	double page_faults;                  /* per run (the page-faults counter's mean), NaN if not counted */
	/* instrumented */
	bool instrumented;
	instrument_counts counts;
	/* simulated */
	explain_simulated simulated;
	explain_core core;
	/* predicted */
	explain_prediction predicted;
	/* on the other machine (--on): its caches' misses and its prediction */
	explain_simulated other_simulated;
	explain_core other_core;             /* in-core cycles priced for the other machine's core (--on), when
	                                        it is another and llvm-mca prices it; else not done */
	explain_prediction other_predicted;
} explain_region;

/* ------------------------------------------------------------------ a run */

typedef struct explain_options {
	unsigned runs;                       /* R: measured runs (5) */
	const char *backend;                 /* counters: "perf" (default) or "papi" */
	const char *events;                  /* comma-separated; NULL: explain_default_events */
	const char *machine_file;            /* NULL: measure this machine */
	const char *compare_file;            /* with machine_file NULL: plumb report's report.json whose machine model
	                                        the fresh figures are held against (a note per difference); NULL: none */
	explain_machine_options machine;
	const char *preset;                  /* the simulator's configuration ("host") */
	double ipc_base;                     /* instructions per cycle outside misses; 0 (default): each
	                                        block's throughput from llvm-mca, else 1.0 */
	bool instrument;                     /* run the program under plumbgrind (true) */
	bool simulate;                       /* ... and simulate its references (true) */
	const char *valgrind;                /* NULL: valgrind on PATH */
	int program_stdout;                  /* where the program's standard output goes (-1: inherited) */
	/* The simulation runs the threads' references in lockstep, this many of
	 * each in turn (plumb sim --interleave; 1 by default, so that threads
	 * that share lines do so as often as on hardware); 0: Valgrind's order. */
	uint64_t interleave;
	bool fair_sched;                     /* Valgrind's --fair-sched=yes */
	/* "l1d", "l1i", "l2" or "l3": the miss-ratio curve of that level per
	 * region (plumb/sim_curve.h) from the simulated references; NULL: none. */
	const char *curve_level;
	/* Another machine's report.json (plumb report wrote it there): the same
	 * references through its caches and each region's time predicted with
	 * its figures, beside this machine's; NULL: none. */
	const char *other_file;
} explain_options;

extern const char explain_default_events[];

void explain_options_init(explain_options *options);

typedef struct explain_result {
	char *command;                       /* the program and its arguments, for people */
	explain_region *regions;             /* regions[0] is the whole program */
	size_t region_count;
	unsigned runs;
	char backend[16];
	char event_storage[1024];
	const char *events[COUNTER_MAX_EVENTS];
	size_t event_count;
	char event_reason[COUNTER_MAX_EVENTS][COUNTER_REASON_MAX];   /* first reason an event failed */
	explain_machine machine;
	bool have_machine;
	double ipc_base;
	char preset[64];
	char measure_note[PLUMB_MESSAGE_MAX];
	char program_counters_error[PLUMB_MESSAGE_MAX];   /* why the whole program was not counted */
	char instrument_error[PLUMB_MESSAGE_MAX];   /* empty when instrumented */
	char simulate_error[PLUMB_MESSAGE_MAX];     /* empty when simulated */
	char machine_error[PLUMB_MESSAGE_MAX];      /* empty when the machine is known */
	char simulate_source[640];                  /* how the per-region simulation was done */
	char core_source[320];                      /* how blocks were priced ("llvm-mca -mcpu=..."), or empty */
	char core_error[PLUMB_MESSAGE_MAX];         /* why they were not */
	explain_shared_line shared[EXPLAIN_SHARED_LINES];   /* the hottest shared lines, hottest first */
	size_t shared_count;
	char **notes;
	size_t note_count;
	int exit_code;                       /* the program's, in the last measured run */
	int exit_signal;                     /* the signal that killed it in a measured run, or 0 */
	struct sim_curve *curve;             /* options->curve_level's curve, or NULL */
	uint64_t cache_bytes[4];             /* the simulated L1I, L1D, L2, L3 (0: none or not simulated) */
	/* the other machine (options->other_file) */
	bool have_other;                     /* its caches are simulated */
	explain_machine other_machine;       /* its figures, for its prediction */
	struct sim_config *other_config;     /* its caches */
	char other_caches[256];              /* the caches simulated for it, in words */
	char other_cpu[13];                  /* its CPU's vendor when it is not this one's model, else empty */
	unsigned other_cpu_family, other_cpu_model;
	char other_error[PLUMB_MESSAGE_MAX]; /* why there is no column for it */
	char curve_error[PLUMB_MESSAGE_MAX]; /* why there is none when one was asked for */
} explain_result;

/* The whole job.  Fails for bad options or when the program cannot be run
 * at all; a source that cannot be had here (no valgrind, no machine figures)
 * leaves its columns unsupported with the reason, and the rest is done. */
int explain_run(char *const argv[], const explain_options *options, explain_result *out, plumb_status *status);
void explain_result_free(explain_result *result);

/* The other machine of options->other_file: its caches (the topo section,
 * at the usable capacity its machine model measured), its figures, and
 * notes in result for what cannot be carried over (another instruction
 * set: refused; another CPU model: the in-core cycles stay this CPU's).
 * Fails when the file is not a report.json with a topo section. */
int explain_other_load(const char *path, explain_result *result, plumb_status *status);

/* The steps explain_run takes, in order. */
int explain_result_init(explain_result *result, char *const argv[], const explain_options *options,
                        plumb_status *status);
/* Runs the program R times with the markers' JSON output and the whole
 * program timed and counted from outside. */
int explain_measure(char *const argv[], const explain_options *options, explain_result *result,
                    plumb_status *status);
/* Folds one run's region summary (the markers' JSON report) into result. */
int explain_measure_add_regions(explain_result *result, const output_report *regions, size_t run,
                                plumb_status *status);
/* One run under plumbgrind: the exact counts per region, and, when
 * options->simulate, the simulation of the same run's references per region
 * (a failed simulation leaves result->simulate_error; only a failed
 * Valgrind run fails). */
int explain_instrument(char *const argv[], const explain_options *options, explain_result *result,
                       plumb_status *status);
/* The model for one region (pure arithmetic). */
void explain_predict(const explain_machine *machine, double ipc_base, const explain_region *region,
                     explain_prediction *out);
void explain_predict_all(explain_result *result);
/* The region named so, created when absent (NULL when out of memory). */
explain_region *explain_result_region(explain_result *result, const char *name);
void explain_result_note(explain_result *result, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The report: tables "regions" (region, measured_ns, ci95_ns, runs,
 * instructions, loads, stores, l1d_misses, l2_misses, llc_misses,
 * predicted_ns, ratio, then the counters that counted), "sources" (the
 * predicted terms), "counters" (unsupported events, once each, with the
 * reason), "machine"; a note on where prediction and measurement disagree
 * most.  NULL when out of memory. */
output_report *explain_report(const explain_result *result);
/* What a region's prediction is compared with (the ratio column): its CPU
 * time (task-clock) when counted (*cpu set), else its median wall time. */
double explain_region_compared_ns(const explain_result *result, const explain_region *region, bool *cpu);
/* Why a region's prediction misses its measurement by more than 25%: the
 * term suspected and the evidence (page faults, preemption, CPU against wall
 * time, the terms' shares), one line into out; 0 when it does not miss. */
size_t explain_diagnose(const explain_result *result, const explain_region *region, char *out, size_t size);
/* The same as one HTML page through the report's renderer. */
int explain_write_html(output_report *report, const char *path, plumb_status *status);

#endif
