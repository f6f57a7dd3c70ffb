/* Cache and TLB geometry from timing alone (Saavedra-style stride/size
 * sweeps and set-conflict tests), set beside what sysfs and CPUID claim.
 *
 * The work is split in two so the inference can be tested exactly:
 * - the probes (geometry_probe_*.c) measure latency curves with
 *   dependent-load chains (plumb/chase.h), one curve per experiment;
 * - the inference (geometry_infer.c) reads a curve and returns the
 *   geometry it implies; it is deterministic and never times anything.
 * See docs/geometry.md for what each experiment defeats. */
#ifndef PLUMB_GEOMETRY_H
#define PLUMB_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/timer.h"
#include "machine/topology.h"
#include "core/arena.h"
#include "latency/latency_run.h"

/* A measured curve: latency (ns per load) against a parameter x (bytes of
 * working set, bytes of stride, count of conflicting lines, pages). */
typedef struct geometry_curve {
	size_t n;
	double *x;
	double *ns;
	double *cv;       /* per point; may be NULL */
	bool *noisy;      /* per point; may be NULL */
} geometry_curve;

int geometry_curve_init(geometry_curve *curve, size_t n, plumb_status *status);
void geometry_curve_free(geometry_curve *curve);

/* ---- inference (pure) ---- */

/* A plateau: a run of points whose latency stays within tolerance of the
 * run's lowest point.  Transition points between plateaus belong to none. */
typedef struct geometry_plateau {
	size_t first, last;      /* indexes into the curve */
	double ns;               /* median latency of the plateau's points */
	double x_last;           /* x of the last point: the capacity's lower bound */
	double x_next;           /* x of the point after it (or 0): its upper bound */
} geometry_plateau;

#define GEOMETRY_MAX_PLATEAUS 8

typedef struct geometry_tolerance {
	double relative;         /* 0.25: within 25% of the plateau's minimum */
	double absolute_ns;      /* plus this much, for curves near zero */
	size_t min_points;       /* points a plateau needs (>= 1) */
} geometry_tolerance;

/* Finds plateaus in a curve whose x ascends, after a running median of 3
 * (so one disturbed point cannot split or end a plateau).  Returns the
 * count (<= max). */
int geometry_find_plateaus(const geometry_curve *curve, const geometry_tolerance *tolerance,
                           geometry_plateau *plateaus, int max);

/* Cache levels from the capacity sweep (x = working set bytes, y = each
 * point's 10th-percentile ns per load).  The detector is plumb lat's
 * (latency_find_levels, one implementation for both): plateaus of the
 * median-of-3-smoothed log latency, neighbours within x2 merged, and, when
 * expected_levels (the sysfs data caches) is given, merged down to that
 * many plus memory; a level ends at the last working set whose latency is
 * below the mean of its plateau and the next level's: where half the loads
 * still hit it.  Each level but the last is a cache level, the last is
 * memory.  capacity_low is that last working set, capacity_high the next
 * one.  Returns the number of cache levels (<= max); *memory_ns gets the
 * last level's latency (NAN when none). */
typedef struct geometry_cache_estimate {
	double ns;               /* plateau latency, ns per load */
	double capacity_low;     /* largest working set that still fits */
	double capacity_high;    /* smallest one that does not */
	char name[16];           /* plumb lat's name ("L2", "level 3"); empty: "L" and its position */
	int cache_level;         /* the sysfs data cache lat matched it to, -1 none, 0 unknown (by position) */
} geometry_cache_estimate;

int geometry_infer_levels(const geometry_curve *curve, int expected_levels, geometry_cache_estimate *levels,
                          int max, double *memory_ns);

/* Line size from the pair experiment: x = distance d between the two loads
 * a chain makes in each block, y = ns per load.  While d is below the line
 * size the second load hits the line the first one brought in; from the
 * line size on it misses too.  The line is the smallest d whose latency is
 * past the middle of the low and high ends.  -1 if the curve has no clear
 * step (high/low < 1.15). */
int geometry_infer_line_size(const geometry_curve *curve, double *line);

/* Associativity from the set-conflict experiment: x = count of lines
 * spaced by a multiple of the level's way size (all in one set), y = ns.
 * The ways are the largest count whose latency (and that of every smaller
 * count) stays below threshold_ns, normally the geometric mean of this
 * level's and the next level's plateau latency.  Returns 0 with *ways, or
 * -1 when the curve starts above the threshold or never crosses it
 * (*ways then holds the largest count measured, a lower bound). */
int geometry_infer_ways(const geometry_curve *curve, double threshold_ns, double *ways);

/* TLB levels from the page experiment: x = pages touched (one line each),
 * y = ns per load; control = the same number of lines packed densely (so
 * the same cache behaviour with almost no TLB misses).  The TLB penalty
 * (y - control) forms plateaus (3 points or more); each one that a clearly
 * higher penalty follows ends at a TLB level's entry count.  Returns the
 * number of levels found (<= max, normally 2), with entries[i] the x_last
 * of plateau i, entries_upper[i] its x_next and penalty_ns[i] the penalty
 * per load past it (the next plateau's, or the median of what follows). */
int geometry_infer_tlb(const geometry_curve *pages, const geometry_curve *control, double *entries,
                       double *entries_upper, double *penalty_ns, int max);

/* Page size from the stride experiment: a fixed number of lines at stride
 * x, visited block by block so that all lines of a page are touched
 * together; the TLB misses per load grow as x / page until x reaches the
 * page size, then stay at one per load.  The page is the first x of the
 * last plateau.  -1 if the curve has no clear rise. */
int geometry_infer_page_size(const geometry_curve *curve, double *page);

/* True when every point of the curve is below its first point x ratio
 * (1.15): no rise at all.  A curve that rises but has no flat end (noisy
 * points past a step) is not flat: geometry_infer_page_size fails on both,
 * and only a flat one means the TLB holds translations larger than the
 * largest stride. */
bool geometry_curve_is_flat(const geometry_curve *curve, double ratio);

/* ---- probes (timing) ---- */

typedef struct geometry_options {
	const timer_calibration *timer;
	double target_relative_ci;   /* per point */
	uint64_t point_cap_ns;       /* time cap per point */
	size_t min_runs, max_runs;
	double sample_ns;            /* aimed length of one timed sample */
	uint64_t seed;
} geometry_options;

void geometry_options_defaults(geometry_options *options, const timer_calibration *timer);

/* Each fills a curve it initialises (free with geometry_curve_free). */

/* Capacities and level latencies are not measured here: they are plumb
 * lat's (latency_run, or a saved lat report through
 * latency_run_from_report), so both commands and the report give one
 * figure for each.  See geometry_run_request. */
/* Pair loads d = 8..max_distance (<= 256) bytes apart in random 512-byte
 * blocks spanning footprint bytes (256 KiB: 512 blocks, 64 pages). */
int geometry_probe_line(const geometry_options *options, uint64_t footprint, unsigned max_distance,
                        geometry_curve *curve, plumb_status *status);
/* counts 1..max_count lines spaced stride bytes apart, random cyclic order. */
int geometry_probe_conflict(const geometry_options *options, uint64_t stride, unsigned max_count,
                            geometry_curve *curve, plumb_status *status);
/* pages from..to (points_per_octave) pages of page_stride bytes, one line
 * each at rotating offsets, small pages; and the dense control curve. */
int geometry_probe_tlb(const geometry_options *options, uint64_t from, uint64_t to, int points_per_octave,
                       uint64_t page_stride, geometry_curve *pages, geometry_curve *control, plumb_status *status);
/* lines lines at strides 64..max_stride, grouped in blocks of block bytes;
 * lines should be the power of two with lines/2 <= L1 TLB entries < lines.
 * pages: ARENA_PAGES_SMALL for the base page; ARENA_PAGES_THP to see what
 * the TLB really holds for a 2 MiB mapping (4 KiB under a hypervisor that
 * backs guest memory with 4 KiB pages).  *huge_fraction (may be NULL)
 * receives the share of the touched memory that THP backed (smaps). */
int geometry_probe_page_size(const geometry_options *options, size_t lines, uint64_t max_stride,
                             uint64_t block, arena_pages pages, double *huge_fraction, geometry_curve *curve,
                             plumb_status *status);

/* ---- references: what the machine claims ---- */

typedef struct geometry_tlb_reference {
	int levels;                  /* 0 when CPUID does not say */
	unsigned entries[2];         /* data TLB entries for 4 KiB pages, L1 then L2 */
	int ways[2];                 /* -1 fully associative, 0 unknown */
	char source[48];             /* "cpuid 0x80000005/6", "cpuid 0x18" */
} geometry_tlb_reference;

/* Decodes AMD's TLB leaves as the APM lays them out: CPUID Fn8000_0005 EBX
 * [31:24] L1 DTLB 4 KiB associativity (0xFF full), [23:16] its entries;
 * Fn8000_0006 EBX [31:28] L2 DTLB 4 KiB associativity (the L2/L3 code
 * table, 0xF full), [27:16] its entries.  (EAX of both holds the 2/4 MiB
 * TLBs, Fn8000_0019 the 1 GiB ones: not used for 4 KiB reach.)
 * hypervisor: CPUID 1 ECX bit 31; the source then says the counts are
 * what the hypervisor reports, which need not be the silicon's. */
void geometry_tlb_reference_decode_amd(uint32_t ebx_80000005, uint32_t ebx_80000006, bool hypervisor,
                                       geometry_tlb_reference *out);

/* ---- the whole run: every experiment, and each finding beside the
 * machine's own claim ---- */

typedef enum geometry_verdict {
	GEOMETRY_AGREE,
	GEOMETRY_DISAGREE,
	GEOMETRY_UNSTABLE,       /* repeats disagree (interference): no verdict, see the spread */
	GEOMETRY_UNRESOLVED,     /* timing gave no clear answer (see note) */
	GEOMETRY_NO_REFERENCE    /* sysfs/CPUID say nothing to compare with */
} geometry_verdict;

const char *geometry_verdict_name(geometry_verdict verdict);

typedef struct geometry_finding {
	char property[24];       /* "capacity", "line size", "associativity", ... */
	char level[16];          /* "L1", "L2", "DTLB1", "memory", "-" */
	char unit[16];           /* "bytes", "ways", "entries", "ns" */
	bool measured_ok;
	double measured;         /* the estimate (capacity: the bracket's low end) */
	double low, high;        /* bracket; both = measured when exact */
	bool has_reference;
	double reference;
	char reference_source[48];   /* "sysfs", "cpuid 0x80000005/6", "sysconf" */
	geometry_verdict verdict;
	char note[256];
	/* The experiment behind the finding: its points, how many missed
	 * the CI target, and the median CV of its points. */
	int points, noisy_points;
	double cv_median;
	/* Capacities: the end over the repeated passes (plumb lat's). */
	bool has_spread;
	double spread_low, spread_high, spread_steps;
	int passes;
	bool stable;
} geometry_finding;

/* Judges a bracket against a reference: agree when low <= reference <= high. */
geometry_verdict geometry_judge(double low, double high, bool has_reference, double reference);

/* Judges a measured capacity (a sweep point) against a reference: agree
 * when they are at most one sweep step (a factor 2^(1/points_per_octave))
 * apart, as plumb lat judges its boundaries (latency_boundary_agrees).
 * At 4 points per octave 27 KiB and 38 KiB agree with 32 KiB, 23 KiB and
 * 46 KiB do not.  UNRESOLVED when measured is NAN or not positive. */
geometry_verdict geometry_judge_capacity(double measured, bool has_reference, double reference,
                                         int points_per_octave);

#define GEOMETRY_MAX_FINDINGS 40
#define GEOMETRY_MAX_LEVELS 4

typedef struct geometry_run_request {
	const topology *topo;        /* may be NULL: no references */
	geometry_options options;
	/* Capacities and level latencies: plumb lat's measurement and
	 * detector.  levels_from: an analysed lat measurement (a saved report
	 * read with latency_run_from_report) to take them from; NULL = run
	 * latency_run with latency_options (the same defaults as plumb lat). */
	const latency_run_result *levels_from;
	latency_run_options latency_options;
	void (*progress)(void *context, size_t done, size_t total);
	void *progress_context;
} geometry_run_request;

typedef struct geometry_report {
	geometry_finding findings[GEOMETRY_MAX_FINDINGS];
	int finding_count;
	geometry_curve capacity, line, tlb_pages, tlb_control, page, page_thp;
	geometry_curve conflict[GEOMETRY_MAX_LEVELS];
	uint64_t conflict_stride[GEOMETRY_MAX_LEVELS];
	int conflict_count;
	geometry_cache_estimate levels[GEOMETRY_MAX_LEVELS];
	latency_boundary_spread spreads[GEOMETRY_MAX_LEVELS];
	int level_count;
	double memory_ns;
	int points_per_octave;       /* of the capacity sweep */
	bool levels_saved;           /* taken from a saved lat measurement */
	geometry_tlb_reference tlb_reference;
} geometry_report;

int geometry_run(const geometry_run_request *request, geometry_report *report, plumb_status *status);
/* Step 1 of geometry_run alone: the levels of a plumb lat measurement (its
 * names: a plateau lat could not match to a sysfs cache keeps its "level N",
 * never the next cache's name) and their latency and capacity findings
 * against topo (NULL: no references). */
int geometry_level_findings(geometry_report *report, const latency_run_result *lat, unsigned points_per_octave,
                            const topology *topo, bool saved, plumb_status *status);
void geometry_report_free(geometry_report *report);

void geometry_tlb_reference_read(geometry_tlb_reference *out);

/* plumb geometry's tables and notes: "geometry" (each finding, its range,
 * the claimed value and the verdict), with curves the curves it was read
 * from (capacity, line, conflict, TLB, page), and notes on what measured
 * and claimed mean, unstable capacities, disagreements, and (hypervisor)
 * what a hypervisor changes. */
struct output_report;
void geometry_report_tables(struct output_report *report, const geometry_report *g, bool curves, bool hypervisor);

#endif
