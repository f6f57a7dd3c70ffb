/* The whole `plumb lat` job as a library call: read the topology, pin,
 * calibrate the timer, map an arena, sweep the working set, find the
 * levels, and optionally measure restart latency and memory-level
 * parallelism at each level; then build the report (plumb/output.h).
 * Schema of the report: docs/output-schema.md, section "lat". */
#ifndef PLUMB_LATENCY_RUN_H
#define PLUMB_LATENCY_RUN_H

#include "plumb/arena.h"
#include "plumb/latency.h"
#include "plumb/output.h"
#include "plumb/topology.h"

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
	bool second_pass;              /* re-measure the points near each boundary (true) */
	uint64_t sweep_budget_ns;      /* the sweep's time budget (11 s; 0 = none): see latency_sweep_options */
	latency_measure_options measure;
	latency_plateau_options plateau;
} latency_run_options;

void latency_run_defaults(latency_run_options *options);

typedef struct latency_level_report {
	latency_level level;           /* found on the per-point 10th percentiles */
	double median_ns;              /* median of the per-point medians over the plateau */
	char name[16];                 /* "L1", "L2", "L3", "memory", or "level N" */
	uint64_t plateau_first_bytes, plateau_last_bytes, end_bytes;
	uint64_t sysfs_bytes;          /* 0 = no cache at this level in sysfs */
	bool agrees;                   /* end within one sweep step of sysfs */
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
	latency_level_report levels[LATENCY_MAX_LEVELS];
	size_t level_count;
	size_t remeasured;             /* points measured a second time near the boundaries */
	double sweep_seconds, total_seconds;
} latency_run_result;

int latency_run(const latency_run_options *options, latency_run_result *result, plumb_status *status);
void latency_run_free(latency_run_result *result);
/* A new report (free with output_report_free), or NULL when out of memory. */
output_report *latency_run_report(const latency_run_options *options, const latency_run_result *result);

#endif
