/* Load latency of the memory hierarchy, measured with pointer chases
 * (plumb/chase.h): a working-set sweep, the plateaus and boundaries of the
 * resulting curve, restart latency (seed 001 section 3.3) and memory-level
 * parallelism (k independent chains).  Methodology: docs/latency.md.
 *
 * The measuring functions run on the calling thread (pin it first) over
 * memory the caller provides (an arena); the analysing functions
 * (latency_find_levels, latency_restart_analyze, latency_mlp_analyze) are
 * pure arithmetic on measured or synthetic curves. */
#ifndef PLUMB_LATENCY_H
#define PLUMB_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "chase/chase.h"
#include "core/progress.h"
#include "core/status.h"
#include "core/timer.h"

/* ---- Repeating one measurement ---------------------------------------- */

typedef struct latency_measure_options {
	double target_relative_ci;  /* stop once the 95% CI half-width is within this (0.02) */
	uint64_t time_cap_ns;       /* ... or once this much time has gone (per measurement) */
	size_t min_runs, max_runs;  /* samples */
	double sample_ns;           /* aim for samples this long (short: less often preempted) */
	size_t warm_loads_max;      /* warm-up: two laps of the chain, at most this many loads */
} latency_measure_options;

/* Defaults tuned for a shared 2-core machine: see docs/latency.md. */
void latency_measure_defaults(latency_measure_options *options);

/* One repeated measurement, in ns per load. */
typedef struct latency_result {
	double ns;             /* median over samples: the reported value */
	double ns_min;
	double ns_p10;         /* 10th percentile of the samples: the lower envelope */
	double mean, cv, ci95_relative;
	size_t samples;
	size_t loads_per_sample;
	bool noisy;            /* the CI target was not reached before the cap */
} latency_result;

/* A kernel the measuring loop times: runs `units` units of work from the
 * state in context (advancing it).  Each unit performs loads_per_unit loads. */
typedef void (*latency_kernel_fn)(void *context, size_t units);

/* Warms up (warm_units units, untimed), sizes a sample to options->sample_ns,
 * then repeats timed samples (core stats_repeat) until the CI target or the
 * time cap.  Fills result in ns per load. */
int latency_measure(const timer_calibration *timer, latency_kernel_fn kernel, void *context,
                    size_t loads_per_unit, size_t warm_units, const latency_measure_options *options,
                    latency_result *result, plumb_status *status);

/* Dependent-load latency of one built chain. */
int latency_measure_chain(const timer_calibration *timer, const chase_chain *chain,
                          const latency_measure_options *options, latency_result *result, plumb_status *status);

/* ---- Working-set sweep ------------------------------------------------ */

/* Working-set sizes from min_bytes to at least max_bytes, points_per_octave
 * per doubling (geometric), each a multiple of line; strictly increasing.
 * Returns the number written (<= capacity), or 0 on bad input. */
size_t latency_sweep_sizes(uint64_t min_bytes, uint64_t max_bytes, unsigned points_per_octave, size_t line,
                           uint64_t *sizes, size_t capacity);

typedef struct latency_sweep_options {
	chase_layout layout;              /* pattern, slot, page/stride, seed; bytes is set per point */
	latency_measure_options measure;
	uint64_t budget_ns;               /* 0 = none; else each point's time cap shrinks so the
	                                     sweep ends near this (never below 10 ms a point) */
} latency_sweep_options;

typedef struct latency_point {
	uint64_t bytes;
	latency_result latency;
} latency_point;

/* Measures each size in sizes[0..count-1] with a chain laid out in memory
 * (capacity bytes, at least the largest size).  progress may be NULL. */
int latency_sweep(const timer_calibration *timer, const latency_sweep_options *options, void *memory,
                  size_t capacity, const uint64_t *sizes, size_t count, latency_point *points,
                  progress *progress_bar, plumb_status *status);

/* ---- Plateaus and boundaries ------------------------------------------ */

typedef struct latency_plateau_options {
	double flat_ratio;      /* max/min latency inside one plateau (1.25) */
	size_t min_points;      /* points a plateau needs (3) */
	double level_ratio;     /* neighbouring plateaus closer than this are one level (2.0) */
	size_t expected_levels; /* 0 = unknown; else merge neighbours while more levels were found */
	double expected_merge_ratio; /* ... among those closer than this (4.0) */
} latency_plateau_options;

void latency_plateau_defaults(latency_plateau_options *options);

#define LATENCY_MAX_LEVELS 8

typedef struct latency_level {
	double ns;                 /* median latency over the level's plateau points */
	double ns_low, ns_high;    /* their range */
	size_t first_index;        /* first plateau point */
	size_t last_index;         /* last plateau point */
	size_t end_index;          /* last point that still belongs to the level */
	bool open_ended;           /* the last level: it does not end inside the sweep */
} latency_level;

/* Finds the levels of a latency curve: ns[i] at working set bytes[i],
 * bytes increasing.  Robust to single outliers (median-of-3 smoothing of
 * log latency), to slow drifts inside a level (plateaus merge when their
 * latencies are within level_ratio) and to gradual transitions (a level
 * ends at the last point below the mean of its latency and the next
 * level's: where half the loads still hit it).  Levels come out with
 * increasing latency; *count may be 0 when the curve has no plateau. */
int latency_find_levels(const uint64_t *bytes, const double *ns, size_t n, const latency_plateau_options *options,
                        latency_level *levels, size_t capacity, size_t *count, plumb_status *status);

/* The levels of a measured sweep as plumb lat finds them: latency_find_levels
 * on each point's 10th percentile (the lower envelope: another program only
 * ever adds latency, so the quiet moments measure the cache). */
int latency_levels_of_points(const uint64_t *sizes, const latency_point *points, size_t n,
                             const latency_plateau_options *plateau, latency_level *levels, size_t capacity,
                             size_t *count, plumb_status *status);

/* ---- Repeats: one boundary, several passes ---------------------------- */

/* A boundary found again on each pass of a repeated sweep.  On a shared
 * machine another program evicts a shared level now and then, and a pass
 * measured meanwhile sees the level end early (the L3 came out at 28, 19,
 * 11.3, 4.8 and 2.5 MiB in runs minutes apart), so the boundary is given
 * with its spread over the passes. */
typedef struct latency_boundary_spread {
	uint64_t low_bytes, high_bytes;  /* the smallest and largest end over the passes */
	size_t passes;                   /* passes that measured the end point or a neighbour */
	double spread_steps;             /* log2(high / low) x points per octave */
	bool stable;                     /* spread_steps <= LATENCY_STABLE_STEPS */
} latency_boundary_spread;

/* Two sweep steps: a gradual edge moves the half-way mark by one step
 * between quiet passes; more is interference. */
#define LATENCY_STABLE_STEPS 2.0

/* The one detector for capacities and level latencies (plumb lat, plumb
 * geometry and the report).  pass_ns holds passes x n 10th percentiles,
 * row p for pass p; pass 0 is the full sweep (every point), a later pass
 * has NAN where it did not measure.  The levels are found
 * (latency_find_levels) on the lower envelope (each point's lowest pass:
 * another program only ever adds latency); then each boundary is found
 * again on each pass's own curve (its points, pass 0's elsewhere) with
 * the same half-way rule and the envelope's level latencies, and
 * spreads[k] gets the range of level k's end over the passes that
 * measured near it (the envelope's end included).  spreads has room for
 * capacity entries; the last level's has passes = 0 and stable = true. */
int latency_levels_of_passes(const uint64_t *bytes, const double *pass_ns, size_t passes, size_t n,
                             unsigned points_per_octave, const latency_plateau_options *options,
                             latency_level *levels, latency_boundary_spread *spreads, size_t capacity, size_t *count,
                             plumb_status *status);

/* The measuring side: latency_levels_of_passes on points (the full
 * sweep, pass 0), then, when again is not NULL, repeats more passes: each
 * measures the points within three sweep steps of every boundary the
 * envelope has so far (so a boundary a disturbed first pass put too early
 * moves up to three steps a pass), later, with the seed plus the pass
 * number and in another part of the memory (other physical pages: which
 * cache sets a working set overfills depends on where its pages landed).
 * points[i] keeps the pass with the lowest 10th percentile.  pass_ns
 * (room for (1 + repeats) x n) receives every pass's 10th percentiles
 * (NAN where a pass did not measure); *passes_done the passes made;
 * *remeasured (may be NULL) the measurements after the first pass.  One
 * implementation for plumb lat and plumb geometry. */
int latency_sweep_levels(const timer_calibration *timer, const latency_sweep_options *again, unsigned repeats,
                         void *memory, size_t capacity, const uint64_t *sizes, latency_point *points, size_t n,
                         unsigned points_per_octave, const latency_plateau_options *plateau, latency_level *levels,
                         latency_boundary_spread *spreads, size_t level_capacity, size_t *count, double *pass_ns,
                         size_t *passes_done, size_t *remeasured, plumb_status *status);

/* True when a measured boundary and a reference size (sysfs) are within
 * `steps` sweep steps of 2^(1/points_per_octave). */
bool latency_boundary_agrees(uint64_t measured, uint64_t reference, unsigned points_per_octave, double steps);

/* ---- Restart latency -------------------------------------------------- */

/* Time per load t(k) with k dependent work units after each load is
 * modelled as max(B, R + c k): flat at the back-to-back latency B while the
 * work hides in the line fill, then rising one unit cost c per unit.  The
 * fill time F is the work that hides, F = B - R, and the restart latency
 * is R = B - F.  Everything is per load (the thesis's listing subtracts the
 * work once per run instead of once per load; see docs/latency.md). */
typedef struct latency_restart {
	double back_to_back_ns;    /* B: fitted flat level (t at k = 0 and the hidden region) */
	double restart_ns;         /* R = B - F */
	double fill_ns;            /* F, in [0, B] */
	unsigned fill_work;        /* the largest measured k that adds no time (k c <= F) */
	double work_unit_ns;       /* c as calibrated (a chain of adds without loads) */
	double slope_ns;           /* c as fitted: the slope of the rising part (used) */
	bool fill_beyond_range;    /* no k in the sweep added time: F is a lower bound */
	double fit_error;          /* mean over k of |t - model| / t */
	/* Set by latency_restart_judge: */
	double fill_estimate_ns;   /* F as fitted, before the noise test */
	double fill_within_ns;     /* the noise on F: an F at or below it is "0 within +-x" */
	bool fill_resolved;        /* F stands out of the noise; if not, fill_ns = 0, restart_ns = B */
} latency_restart;

/* work[0..n-1] ascending with work[0] == 0; ns[i] = t(work[i]); c > 0. */
int latency_restart_analyze(const unsigned *work, const double *ns, size_t n, double work_unit_ns,
                            latency_restart *out, plumb_status *status);

/* Decides whether the fitted fill time stands out of the spread over
 * repeats.  spread[i] is the relative spread of t(work[i]) over its
 * repeated samples ((median - 10th percentile) / median).  F = B - R is a difference
 * of two medians of such points, so its noise x is twice the median
 * relative spread times B (relative, since the large-k points are slow
 * and their absolute spread would swamp a fast level), or the fit's mean
 * misfit times B if larger.  F <= x is reported as 0 within +-x
 * (fill_ns = 0, restart_ns = B, fill_work = 0); the fitted value stays in
 * fill_estimate_ns.  With no spreads (n = 0) only the misfit counts. */
void latency_restart_judge(latency_restart *r, const double *spread_ns, size_t n);

/* Cost of one work unit (a dependent add): ns per add, median of repeats. */
int latency_measure_work_unit(const timer_calibration *timer, const latency_measure_options *options,
                              latency_result *result, plumb_status *status);

typedef struct latency_restart_point {
	unsigned work;
	latency_result latency;
} latency_restart_point;

/* Measures t(k) on a chain for every k in work[0..n-1] (each supported by
 * chase_work_supported), then analyses the 10th percentiles (contention
 * only adds, and one disturbed t(0) would invent a fill time). */
int latency_restart_measure(const timer_calibration *timer, const chase_chain *chain,
                            const latency_measure_options *options, const unsigned *work, size_t n,
                            double work_unit_ns, latency_restart_point *points, latency_restart *out,
                            plumb_status *status);

/* ---- Memory-level parallelism ----------------------------------------- */

typedef struct latency_mlp_point {
	unsigned chains;
	latency_result latency;    /* ns per load over all chains */
	double ns_per_load;        /* the value analysed: latency.ns_p10 (contention only adds) */
	double mb_per_s;           /* line bytes / ns_per_load, 10^6 B/s */
} latency_mlp_point;

typedef struct latency_mlp_summary {
	unsigned saturation_chains;  /* smallest k reaching threshold of the peak bandwidth */
	bool saturated;              /* false: the first three quarters of the k range stay more
	                                than 10% below the peak (still rising), so
	                                saturation_chains and outstanding are lower bounds */
	double peak_mb_per_s;        /* highest (median-of-3 smoothed) bandwidth */
	double single_ns;            /* ns_per_load with one chain */
	double outstanding;          /* peak / one-chain bandwidth: by Little's law the
	                                misses in flight at the peak */
} latency_mlp_summary;

/* points ordered by chains ascending; threshold in (0, 1] (0.9). */
int latency_mlp_analyze(const latency_mlp_point *points, size_t n, double threshold,
                        latency_mlp_summary *out, plumb_status *status);

/* Measures k = 1..max_chains interleaved chains spread along one chain. */
int latency_mlp_measure(const timer_calibration *timer, const chase_chain *chain,
                        const latency_measure_options *options, unsigned max_chains, size_t line_bytes,
                        latency_mlp_point *points, plumb_status *status);

#endif
