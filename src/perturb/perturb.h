/* Perturbation by halting (Watson, 2004): a hardware tracer's buffer fills,
 * the traced program is halted while the buffer drains, and the question is
 * whether those halts change what is measured.  This library answers it for
 * any program: it runs the program again and again, halting it every f
 * seconds of its own running time for t seconds, with a no-halting baseline,
 * counts events in every run, and compares the configurations statistically.
 * A second method asks the same question through the cache simulator.
 *
 *   perturb_design design;
 *   perturb_design_builtin("halt-time", 0.001, &design, &status);
 *   perturb_options options;  perturb_options_default(&options);
 *   options.workload = "chase";
 *   perturb_result *result;
 *   perturb_experiment_run(&options, &design, &result, &status);
 *   perturb_analysis analysis;
 *   perturb_analyze(result, &options, &analysis);
 *   perturb_report_build(result, &analysis, report);
 *   perturb_result_free(result);
 *
 * docs/perturbation.md has the method and what a user-space emulation cannot
 * do (mask real interrupts). */
#ifndef PLUMB_PERTURB_H
#define PLUMB_PERTURB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "counters/counters.h"
#include "core/output.h"
#include "core/status.h"

#define PERTURB_MAX_EVENTS 24
#define PERTURB_MAX_CONFIGS 48
#define PERTURB_MAX_RUNS 100

/* ------------------------------------------------------------ arithmetic */

/* Eq. 2.1: total time t·x/f + x of a program that runs x seconds unhalted
 * and is halted for t seconds every f seconds of its running time. */
double perturb_total_time(double x, double interval, double halt);
/* The slowdown t/f + 1 (17 for f = 1/8 s, t = 2 s). */
double perturb_slowdown(double interval, double halt);
/* Halts h ≈ x/f (the last partial interval does not halt). */
double perturb_expected_halts(double x, double interval);
/* The thesis's correction for the spin loop's own events: a halt of t ms
 * spins iterations_per_ms inner iterations per millisecond, each adding
 * per_iteration events, and the outer loop adds per_ms events each
 * millisecond, so h halts add t·h·(iterations_per_ms·per_iteration + per_ms):
 * branches t·h·(1.2M + 1). */
double perturb_spin_correction(double halt_ms, double halts, double iterations_per_ms,
                               double per_iteration, double per_ms);
/* Eq. 2.3, squared as Jain has it: n = ceil((100·z·s / (r·mean))²), r in
 * percent.  0 when the mean is 0 or s is 0 (one run is enough); NaN for bad input. */
double perturb_sample_size(double mean, double stddev, double z, double r_percent);
/* Student's t: the two-sided quantile t(1 - alpha/2; df) for fractional df
 * (t(0.975; 4) = 2.776), and the two-sided p-value of |t| with df. */
double perturb_t_quantile(double p, double df);
double perturb_t_two_sided_p(double t, double df);

typedef struct perturb_sample_stats {
	size_t n;
	double mean, stddev, ci_low, ci_high;   /* 95% CI with t(0.975; n-1) */
} perturb_sample_stats;
void perturb_sample_stats_compute(const double *x, size_t n, perturb_sample_stats *out);
/* Whether two 95% CIs fail to overlap (the thesis's significance rule). */
bool perturb_ci_disjoint(const perturb_sample_stats *a, const perturb_sample_stats *b);
/* Welch's t-test: t, its Welch–Satterthwaite degrees of freedom, and the
 * two-sided p-value.  -1 when either sample has fewer than 2 values. */
int perturb_welch(const perturb_sample_stats *a, const perturb_sample_stats *b, double *t,
                  double *df, double *p);

/* ---------------------------------------------------------------- designs */

typedef struct perturb_config {
	bool baseline;        /* no halting */
	double interval;      /* f, seconds of the program's running time between halts */
	double halt;          /* t, seconds per halt; 0: the handler's entry and exit only */
	char name[48];        /* "baseline", "f=0.000125s t=0.002s" */
} perturb_config;

typedef struct perturb_design {
	char name[32];
	size_t n;             /* configs[0] is the baseline */
	perturb_config configs[PERTURB_MAX_CONFIGS];
} perturb_design;

/* "halt-time" (Table 2.1: f ∈ {1/8, 1/2} s, t per f), "halt-frequency"
 * (Table 2.2: t ∈ {1/2, 2} s, f per t), or "full" (both, shared configs once),
 * every interval and halt multiplied by scale. */
int perturb_design_builtin(const char *name, double scale, perturb_design *out, plumb_status *status);
/* Every (interval, halt) pair of two lists ("1/8,1/2" and "0,0.5,2"; numbers,
 * fractions a/b, optional s/ms/us suffix), times scale, after a baseline. */
int perturb_design_from_lists(const char *intervals, const char *halts, double scale,
                              perturb_design *out, plumb_status *status);
/* One duration: "0.5", "1/8", "2ms", "125us".  Seconds. */
int perturb_parse_seconds(const char *text, double *out, plumb_status *status);

/* -------------------------------------------------------------- footprint */

/* What each halt touches beside its spin, as a real drain would: lines
 * cache lines of data (read and written), pages fresh pages (each halt
 * touches them and gives them back, so each costs a page fault and a TLB
 * entry), code_bytes bytes of code run once (I-cache lines, ITLB pages). */
typedef struct perturb_footprint {
	uint64_t lines, pages, code_bytes;
} perturb_footprint;
/* "LINES,PAGES,CODE" with size suffixes for CODE ("512,16,64K"). */
int perturb_footprint_parse(const char *text, perturb_footprint *out, plumb_status *status);

/* ------------------------------------------------------------- workloads */

/* Small deterministic programs with distinct behaviour.  size is in the
 * workload's own units (0: its default, about half a second here);
 * parameter is SimpleMisses' MISS_TIMES (0: 8).  trace, when not NULL,
 * receives every data load of the workloads that report them (simplemisses),
 * for exact oracles through the simulator. */
typedef void (*perturb_trace_fn)(void *context, uint64_t address, uint32_t size);
typedef struct perturb_workload {
	const char *name;
	const char *description;
	const char *unit;
	uint64_t default_size;
	uint64_t (*run)(uint64_t size, uint64_t parameter, perturb_trace_fn trace, void *context);
} perturb_workload;
const perturb_workload *perturb_workloads(size_t *n);
const perturb_workload *perturb_workload_find(const char *name);
/* SimpleMisses' oracle: the L1D misses above a baseline for an A-way L1D
 * with LRU: iterations × MISS_TIMES when MISS_TIMES > A, else 0. */
uint64_t perturb_simplemisses_extra_misses(uint64_t iterations, uint64_t miss_times,
                                           unsigned associativity);

/* ------------------------------------------------------------ experiments */

typedef struct perturb_options {
	char *const *command;        /* argv of the program, or NULL with workload */
	const char *workload;        /* a built-in workload run in a fresh child */
	uint64_t workload_size;      /* 0: the workload's default */
	uint64_t workload_parameter; /* MISS_TIMES */
	size_t runs;                 /* per configuration (default 5) */
	const char *events[PERTURB_MAX_EVENTS];
	size_t n_events;
	perturb_footprint footprint;
	const char *clock;           /* the halt clock: "task-clock" (default) or "cycles" */
	double cycles_per_second;    /* cycles clock: 0 = the TSC frequency */
	int cpu;                     /* -1: the last CPU of the affinity mask */
	bool show_output;            /* keep the program's stdout (default: /dev/null) */
	bool progress;               /* progress on stderr */
} perturb_options;
void perturb_options_default(perturb_options *options);

/* What the in-child agent sends back for one run. */
typedef struct perturb_run {
	size_t config, repetition, order;
	uint64_t halts;
	double halted_seconds;       /* summed over the halts, measured (wall clock) */
	double halted_cpu_seconds;   /* the program's CPU time inside the halts (t each) */
	double longest_halt_seconds; /* the longest halt, wall clock */
	uint64_t halt_preemptions;   /* involuntary context switches inside the halts */
	uint64_t halt_waits;         /* voluntary ones (the footprint's page faults blocking) */
	double wall_seconds;         /* from the agent's start to its end */
	double running_seconds;      /* the halted thread's CPU time in that window, halts included */
	double tsc_cycles;           /* the same window in TSC cycles */
	double interrupts;           /* /proc/interrupts delta on the CPU; NaN unknown */
	uint64_t deferred_signals;   /* signals that arrived while a halt had them blocked */
	int cpu;
	counter_value raw[PERTURB_MAX_EVENTS];       /* counting the handler too */
	counter_value excluded[PERTURB_MAX_EVENTS];  /* counters disabled in the handler */
} perturb_run;

/* Events one halt adds, counted by calling the handler alone K times. */
typedef struct perturb_calibration {
	double halt;
	double per_halt[PERTURB_MAX_EVENTS];         /* NaN where not counted */
	double seconds_per_halt;     /* wall clock */
	double cpu_seconds_per_halt; /* the thread's CPU time */
} perturb_calibration;

typedef struct perturb_result {
	perturb_design design;
	perturb_options options;     /* command not owned */
	char command_text[256];
	size_t n_events;
	char events[PERTURB_MAX_EVENTS][64];
	counter_value opened[PERTURB_MAX_EVENTS];    /* the state each event got */
	double spin_iterations_per_second;
	perturb_calibration calibrations[PERTURB_MAX_CONFIGS];   /* one per config */
	size_t n_runs;
	perturb_run *runs;
	int cpu;
	char clock[32];
	double clock_period_scale;   /* clock units per second of interval */
	double elapsed_seconds;
} perturb_result;

/* Runs every configuration options->runs times, interleaved (run 1 of every
 * configuration, then run 2, ...), each in a fresh process pinned to one CPU. */
int perturb_experiment_run(const perturb_options *options, const perturb_design *design,
                           perturb_result **out, plumb_status *status);
void perturb_result_free(perturb_result *result);

/* ------------------------------------------------------------- the agent */

/* What a halted child needs; passed in the environment to a command. */
typedef struct perturb_agent_spec {
	uint64_t interval;           /* clock units (ns for task-clock) between halts; 0: none */
	uint64_t halt_ns;
	double spin_per_ns;
	perturb_footprint footprint;
	char clock[32];
	char events[1024];           /* comma-separated */
	int calibrate_halts;         /* > 0: call the handler that many times, no program */
} perturb_agent_spec;

/* ---------------------------------------------------------------- analysis */

typedef enum perturb_trend {
	PERTURB_TREND_NONE = 0,       /* no configuration differs from the baseline */
	PERTURB_TREND_STEP,           /* every halted one differs, none from another */
	PERTURB_TREND_INCREASING_T,   /* grows with the halt time t */
	PERTURB_TREND_LINEAR_THRESHOLD, /* differs from some interval on, ~linear in h */
	PERTURB_TREND_LINEAR_WIDE,    /* linear among halted ones, baseline CI too wide */
	PERTURB_TREND_IRREGULAR,      /* differs, but in none of the shapes above */
	PERTURB_TREND_UNCOUNTED
} perturb_trend;
const char *perturb_trend_name(perturb_trend trend);

/* The values an event is judged by. */
typedef enum perturb_view {
	PERTURB_VIEW_RAW = 0,         /* as counted, the handler included */
	PERTURB_VIEW_CALIBRATED,      /* raw − h × the calibrated events per halt */
	PERTURB_VIEW_EXCLUDED,        /* counters disabled inside the handler */
	PERTURB_VIEW_COUNT
} perturb_view;
const char *perturb_view_name(perturb_view view);

typedef struct perturb_cell {
	perturb_sample_stats stats;
	double change_percent;        /* of the mean from the baseline's */
	bool significant;             /* CIs do not overlap */
	double welch_p;
	bool welch_significant;       /* p < 0.05 */
	double needed_runs;           /* Eq. 2.3, r = 5% */
} perturb_cell;

/* A measure: an event in one view, or wall / TSC / interrupts / halts. */
typedef struct perturb_measure {
	char name[80];
	bool counted;
	char reason[COUNTER_REASON_MAX];
	bool judged;                  /* counts toward tallies and f* */
	perturb_cell cells[PERTURB_MAX_CONFIGS];
	perturb_trend trend;
	double slope_per_halt, slope_r2;
	size_t significant_configs;
	double max_change_percent;
} perturb_measure;

#define PERTURB_MAX_MEASURES (PERTURB_MAX_EVENTS * PERTURB_VIEW_COUNT + 16)

typedef struct perturb_analysis {
	size_t n_measures;
	perturb_measure measures[PERTURB_MAX_MEASURES];
	size_t order[PERTURB_MAX_MEASURES];   /* judged measures, most to least affected */
	size_t n_order;
	/* Eq. 2.1 and h ≈ x/f per configuration.  Eq. 2.1's x/f is the number
	 * of halts; on a CPU the program does not own, x/f with x a wall time
	 * counts halts that never happen (f is running time), so the check uses
	 * the halts counted, h: running time x_running + h·(t + agent cost)
	 * against the program's measured running time (reads ~1 whether or not
	 * the CPU is shared), and that running time times x_wall / x_running
	 * (the baseline's share of the CPU) against the measured wall time. */
	double x_wall, x_clock;               /* baseline means: wall, running time by the halt clock */
	double x_running;                     /* baseline mean of the halted thread's CPU time */
	double predicted_wall[PERTURB_MAX_CONFIGS], measured_wall[PERTURB_MAX_CONFIGS];
	double predicted_running[PERTURB_MAX_CONFIGS], measured_running[PERTURB_MAX_CONFIGS];
	double expected_halts[PERTURB_MAX_CONFIGS], measured_halts[PERTURB_MAX_CONFIGS];
	/* One halt as measured, per configuration: its wall length, the
	 * program's CPU time in it (t), the involuntary context switches in it. */
	double halt_length[PERTURB_MAX_CONFIGS], halt_cpu[PERTURB_MAX_CONFIGS];
	double halt_preemptions[PERTURB_MAX_CONFIGS], halt_waits[PERTURB_MAX_CONFIGS];
	size_t significant_in_config[PERTURB_MAX_CONFIGS];
	/* The halting agent's own cost per halt that no counter can exclude
	 * (signal delivery, the sampler, sigreturn): the slope of the program's
	 * running time outside the handler against h over the baseline and the
	 * t = 0 configurations; NaN without a t = 0 configuration. */
	double agent_cost_seconds;
	char agent_cost_from[64];             /* the measure it was fitted to */
	/* The conclusion: the smallest interval from which on nothing judged
	 * differs, with the agent's own cost subtracted from the running-time
	 * measures (EVENT:program), and without (f_star_with_agent). */
	bool have_f_star;
	double f_star;
	bool have_f_star_with_agent;
	double f_star_with_agent;
	/* f* ≤ 4 × the agent's cost: the agent takes a quarter or more of each
	 * interval and decides how often the program is halted (h ≈ x/(f − c)),
	 * so f* is bounded by the agent, not found in the program. */
	bool f_star_bounded_by_agent;
	double reference_rate;                /* CPU references per second; 0: unknown */
	double buffer_records;                /* f* × rate */
	double bus_rate;                      /* bus transactions (line fills from memory and
	                                         write-backs) per second; 0: unknown */
	double buffer_bus_transactions;       /* f* × bus rate */
} perturb_analysis;

/* Judged: the excluded view of every counted event (what the program itself
 * did), so the halts' own time and events do not decide the conclusion;
 * for the running-time events (task-clock, cpu-clock) the excluded view less
 * h × the agent's cost per halt (EVENT:program) when a t = 0 configuration
 * measured it. */
void perturb_analyze(const perturb_result *result, double reference_rate, perturb_analysis *out);
/* Sets the rates the buffer recommendation is given in (0: unknown): CPU
 * references per second and bus transactions per second. */
void perturb_analysis_rates(perturb_analysis *analysis, double reference_rate, double bus_rate);

/* The memory traffic of a recorded trace, simulated on a preset's caches
 * (one core): what a bus tracer such as Watson's BACH records is not the
 * CPU's references but the bus transactions, the lines filled from memory
 * and the dirty lines written back. */
typedef struct perturb_traffic {
	uint64_t references;          /* CPU references in the trace */
	uint64_t fills;               /* lines read from memory */
	uint64_t writebacks;          /* lines written back to memory */
	char caches[256];             /* the simulated caches, described */
} perturb_traffic;
int perturb_trace_traffic(const char *path, const char *preset, perturb_traffic *out, plumb_status *status);
/* Bus transactions per second of running time: (fills + writebacks) / seconds. */
double perturb_bus_rate(uint64_t fills, uint64_t writebacks, double running_seconds);
/* Tables runs, statistics, events, configurations, calibration; meta has the conclusion. */
int perturb_report_build(const perturb_result *result, const perturb_analysis *analysis,
                         output_report *report, plumb_status *status);

/* ------------------------------------------------------- through the simulator */

typedef struct perturb_sim_options {
	const char *trace_path;
	const char *sim_config_path;  /* NULL: the host's caches */
	const char *preset;           /* NULL: host */
	const char *machine_path;     /* plumb report's report.json for the host preset (sim --machine); NULL: none */
	uint64_t buffers[16];         /* bytes */
	size_t n_buffers;
	uint32_t record_bytes;        /* bytes per trace record in the buffer (default 16) */
	perturb_footprint footprint;  /* handler code and stack beside the buffer (default 4 KiB code, 8 lines) */
	uint64_t window;              /* references per window after a halt (default 1000) */
	size_t windows;               /* windows followed after each halt (default 32) */
	uint64_t max_records;         /* 0: the whole trace */
	bool no_default_tlbs;         /* a preset without TLBs stays without (default: 64-entry ITLB/DTLB added) */
} perturb_sim_options;
void perturb_sim_options_default(perturb_sim_options *options);
/* For every buffer size B: a halt every B / record_bytes references of the
 * trace, where the drain's own references are injected (the B-byte buffer
 * read out, the handler's code fetched, its stack lines written); the
 * program's misses per level are compared with an unhalted simulation of
 * the same trace, per halt and per window after each halt.  Tables
 * buffers and windows. */
int perturb_simulate(const perturb_sim_options *options, output_report *report, plumb_status *status);
/* The memory references (markers left out) in a trace file. */
int perturb_trace_references(const char *path, uint64_t *out, plumb_status *status);

#endif
