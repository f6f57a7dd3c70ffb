/* Cache-to-cache probes built on plumb/coherence.h: the latency of each
 * access on lines in each state between two CPUs, ping-pong round trips,
 * invalidation of k sharers and false sharing; plus how far apart two CPUs
 * are in the topology, which decides what these costs mean. */
#ifndef PLUMB_C2C_H
#define PLUMB_C2C_H

#include <stddef.h>
#include <stdint.h>
#include "coherence/coherence.h"
#include "core/status.h"
#include "core/timer.h"

/* ---- topology distance between two CPUs (from hwloc) ---- */
typedef enum cpu_distance {
	CPU_DISTANCE_SAME,          /* the same CPU */
	CPU_DISTANCE_SMT,           /* hardware threads of one core */
	CPU_DISTANCE_SAME_L2,       /* different cores sharing an L2 (a cluster) */
	CPU_DISTANCE_SAME_L3,       /* different cores sharing the last-level cache */
	CPU_DISTANCE_OTHER_L3,      /* same package, different L3 (CCX, die, tile) */
	CPU_DISTANCE_OTHER_SOCKET,  /* different packages */
	CPU_DISTANCE_UNKNOWN
} cpu_distance;
#define CPU_DISTANCE_COUNT 7

typedef struct cpu_distance_map cpu_distance_map;
int cpu_distance_open(cpu_distance_map **out, plumb_status *status);
cpu_distance cpu_distance_between(const cpu_distance_map *map, int cpu_a, int cpu_b);
void cpu_distance_close(cpu_distance_map *map);
/* "same-cpu", "smt-sibling", "same-l2", "same-l3", "other-l3", "other-socket", "unknown" */
const char *cpu_distance_name(cpu_distance distance);

/* One representative ordered pair per distance class, searching pairs in
 * order with the lowest first CPU.  Fills pairs[class] = {a, b} or {-1, -1}. */
void cpu_distance_representatives(const cpu_distance_map *map, const int *cpus, int count,
                                  int pairs[CPU_DISTANCE_COUNT][2]);

/* ---- access latency on prepared lines ---- */
typedef struct c2c_config {
	size_t lines;         /* lines in the random chain (default 2048) */
	size_t spacing;       /* bytes between lines (default 128: defeats the adjacent-line prefetcher) */
	int trials;           /* timed passes per measurement, after one warm-up (default 11) */
	uint64_t seed;        /* chain order */
	uint64_t timeout_ns;  /* bound on every wait for a helper (default 2 s) */
} c2c_config;

void c2c_config_default(c2c_config *config);

typedef struct c2c_result {
	double median_ns, min_ns;   /* per access, over the trials */
	int trials;
} c2c_result;

/* A bench: the lines (one arena), their random chain, and a team of helper
 * threads on cpus[1..count-1]; the caller becomes A and is pinned to
 * cpus[0] until c2c_bench_close, which restores its affinity. */
typedef struct c2c_bench c2c_bench;
int c2c_bench_open(c2c_bench **out, const c2c_config *config, const int *cpus, int count,
                   const timer_calibration *timer, plumb_status *status);
/* Prepares the state before every timed pass, times A's access on every
 * line, and summarises.  sharers as for coherence_plan_build. */
int c2c_bench_measure(c2c_bench *bench, coherence_state state, int sharers, coherence_access access,
                      c2c_result *out, plumb_status *status);
void c2c_bench_close(c2c_bench *bench);

/* ---- ping-pong: a flag bounced between two CPUs ---- */
typedef struct c2c_pingpong_result {
	double median_ns, min_ns;   /* one round trip (two line transfers) */
	int trials;
} c2c_pingpong_result;

int c2c_pingpong(int cpu_a, int cpu_b, size_t round_trips, int trials, uint64_t timeout_ns,
                 c2c_pingpong_result *out, plumb_status *status);

/* ---- false sharing: two threads updating different words ---- */
typedef struct c2c_false_sharing_result {
	double shared_ns_per_update;   /* both counters in one line */
	double padded_ns_per_update;   /* counters 256 bytes apart */
	double slowdown;               /* shared / padded time per update */
	uint64_t shared_updates, padded_updates;
	int repeats;
} c2c_false_sharing_result;

int c2c_false_sharing(int cpu_a, int cpu_b, uint64_t duration_ns, int repeats, uint64_t timeout_ns,
                      c2c_false_sharing_result *out, plumb_status *status);

/* ---- the whole `plumb c2c` run, into a report ---- */
#include "core/output.h"

#define C2C_MAX_CPUS 1024
enum { C2C_SECTION_PAIRS = 1, C2C_SECTION_STATES = 2, C2C_SECTION_INVALIDATE = 4, C2C_SECTION_FALSE_SHARING = 8 };

typedef struct c2c_run_options {
	int cpus[C2C_MAX_CPUS];  /* the CPUs to use, all available to the caller */
	int cpu_count;
	int pair[2];             /* with has_pair: A, B for every section but --matrix */
	bool has_pair, matrix;   /* matrix: every ordered pair in the pairs section */
	unsigned sections;       /* C2C_SECTION_* */
	c2c_config config;
	size_t round_trips;      /* ping-pong round trips per trial */
	uint64_t duration_ns;    /* false-sharing window */
} c2c_run_options;

void c2c_run_options_default(c2c_run_options *options);
/* Adds the tables (pairs or matrix, states, invalidate, false_sharing),
 * metadata and notes described in docs/output-schema.md to report. */
int c2c_run(const c2c_run_options *options, const timer_calibration *timer, output_report *report,
            plumb_status *status);

#endif
