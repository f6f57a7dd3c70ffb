/* The whole `plumb lat` job as a library call: read the topology, pin,
 * calibrate the timer, map an arena, sweep the working set, find the
 * levels, and optionally measure restart latency and memory-level
 * parallelism at each level; then build the report (plumb/output.h).
 * Schema of the report: docs/output-schema.md, section "lat". */
#ifndef PLUMB_LATENCY_RUN_H
#define PLUMB_LATENCY_RUN_H

#include "core/arena.h"
#include "latency/latency.h"
#include "core/output.h"
#include "machine/topology.h"

typedef struct latency_run_options {
	uint64_t min_bytes;            /* sweep start (4 KiB) */
	uint64_t max_bytes;            /* sweep end; 0 = 4x the last-level cache (sysfs) */
	unsigned points_per_octave;    /* 4 */
	chase_pattern pattern;         /* CHASE_RANDOM */
	size_t page_group_bytes;       /* CHASE_PAGE_GROUPED; 0 = the base page */
	size_t stride_bytes;           /* CHASE_STRIDED; 0 = one line */
	size_t line_bytes;             /* 0 = the L1 data cache's line */
	arena_pages pages;             /* ARENA_PAGES_THP */
	int cpu;                       /* CPU to pin to; -1 = the one the run starts on */
	uint64_t seed;
	bool restart;                  /* restart latency at each level */
	bool mlp;                      /* memory-level parallelism at each level */
	unsigned max_chains;           /* MLP: 1..max_chains (32) */
	double mlp_threshold;          /* MLP saturation: fraction of the peak (0.9) */
	unsigned repeats;              /* passes after the first over the points near each boundary (4; 0 = none) */
	uint64_t sweep_budget_ns;      /* the sweep's time budget (11 s; 0 = none): see latency_sweep_options */
	uint64_t repeat_budget_ns;     /* all the repeat passes' (2 s, as the one second pass had; 0 = none), shared equally */
	latency_measure_options measure;
	latency_plateau_options plateau;
} latency_run_options;

void latency_run_defaults(latency_run_options *options);

/* Named patterns (plumb lat --pattern NAME): plumb's own, and the chains
 * other tools build, so their figures can be compared with plumb's at the
 * same pattern.  A preset gives the pattern and the slot, group and pages
 * the tool uses by default; 0 / !set_pages leave the caller's choice. */
typedef struct latency_pattern_preset {
	const char *name;
	chase_pattern pattern;
	size_t line_bytes;             /* slot (the other tool's stride); 0 = keep */
	size_t page_group_bytes;       /* 0 = keep (the base page) */
	bool set_pages;
	arena_pages pages;
	const char *summary;           /* one line for --help and errors */
} latency_pattern_preset;
/* NULL when the name is unknown; names lists them ("random, page, ..."). */
const latency_pattern_preset *latency_pattern_find(const char *name);
const char *latency_pattern_names(void);

typedef struct latency_level_report {
	latency_level level;           /* found on the per-point 10th percentiles */
	double median_ns;              /* median of the per-point medians over the plateau */
	char name[16];                 /* "L1", "L2", "L3", "memory", or "level N" (no sysfs cache matches it) */
	int cache_level;               /* 1.. the sysfs data cache it was matched to by capacity, 0 memory, -1 none */
	uint64_t plateau_first_bytes, plateau_last_bytes, end_bytes;
	uint64_t sysfs_bytes;          /* 0 = no cache at this level in sysfs */
	bool agrees;                   /* end within one sweep step of sysfs */
	latency_boundary_spread spread;   /* the end over the passes (not for the last level) */
	const char *verdict;           /* "agrees", "disagrees", "unstable" (the passes disagree by more than
	                                  LATENCY_STABLE_STEPS: no verdict), or "-" (no sysfs size, or the last level) */
	uint64_t probe_bytes;          /* where restart / MLP were measured */
	bool restart_done, mlp_done;
	latency_restart restart;
	latency_restart_point *restart_points;
	size_t restart_count;
	latency_mlp_point mlp_points[CHASE_MAX_PARALLEL];
	size_t mlp_count;
	latency_mlp_summary mlp;
	char restart_error[PLUMB_MESSAGE_MAX], mlp_error[PLUMB_MESSAGE_MAX];
} latency_level_report;

typedef struct latency_run_result {
	topology topo;
	bool have_topology;
	timer_calibration timer;
	int cpu;
	size_t line_bytes;
	char pages_obtained[PLUMB_MESSAGE_MAX + 16];
	latency_result work_unit;      /* ns per dependent add: the core clock period */
	uint64_t *sizes;
	latency_point *points;
	size_t point_count;
	uint64_t sysfs_sizes[8];       /* the data caches sysfs lists, L1 first (from the topology, or a saved report) */
	size_t sysfs_levels;
	bool sysfs_hidden[8];          /* a sysfs cache the sweep shows no plateau of (machine_match_levels) */
	double clock_ghz, clock_low_ghz, clock_high_ghz;   /* machine_clock_estimate of work_unit */
	double *pass_ns;               /* passes x point_count 10th percentiles, NAN where a pass did not measure */
	size_t passes;
	latency_level_report levels[LATENCY_MAX_LEVELS];
	size_t level_count;
	size_t remeasured;             /* measurements after the first pass (near the boundaries) */
	double sweep_seconds, total_seconds;
} latency_run_result;

int latency_run(const latency_run_options *options, latency_run_result *result, plumb_status *status);

/* The analysis alone (latency_levels_of_passes, then names, sysfs
 * verdicts and plateau medians) on result's sizes, points, pass_ns,
 * passes and sysfs sizes: what latency_run does after measuring, and what
 * a saved measurement is re-analysed with. */
int latency_run_analyze(const latency_run_options *options, latency_run_result *result, plumb_status *status);

/* Rebuilds a measurement from a `plumb lat --json` report (its meta, the
 * sweep table and the passes table) and analyses it (latency_run_analyze):
 * the levels come out as the run that saved it found them.  *options gets
 * the saved sweep's settings (points per octave, pattern, seed, ...);
 * restart and MLP are not re-analysed.  -1 with one line of reason when
 * the report is not lat's or lacks a table. */
int latency_run_from_report(const output_report *report, latency_run_options *options, latency_run_result *result,
                            plumb_status *status);
void latency_run_free(latency_run_result *result);
/* A new report (free with output_report_free), or NULL when out of memory. */
output_report *latency_run_report(const latency_run_options *options, const latency_run_result *result);

#endif
