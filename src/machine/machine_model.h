/* One measured description of this machine, for every command that needs it.
 *
 * The machine model is built once from the measurements plumb already makes
 * (plumb topo's caches from sysfs, plumb lat's sweep and its levels, plumb
 * bw's per-level bandwidths, plumb model's fit of Hristea's queueing model,
 * 1997) by machine_model_build, written by plumb report into report.json
 * (the summary's tables "machine" and "checks"), and read back by
 * machine_model_load: plumb explain, plumb sim --preset host, plumb cluster
 * and the summary read the same figures for the same quantity.
 *
 * Levels are named by matching the latency plateaus to the caches sysfs
 * lists, by capacity (machine_match_levels): a cache of which the sweep
 * shows no plateau of its own (a virtual machine that hides most of a shared
 * L3, say) is kept and named as hidden with its nominal size, never dropped
 * or given another level's name.
 *
 * Every figure is held against the physical limits that apply to it
 * (machine_model_check): the L1's load ports at the measured clock, the
 * level nearer the core, monotone latency, all threads at least one
 * thread, the queueing model's peak at least the measured DRAM bandwidth,
 * DRAM latency from a plateau.  A figure that breaks one is flagged with
 * the reason. */
#ifndef PLUMB_MACHINE_MODEL_H
#define PLUMB_MACHINE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/output.h"
#include "core/status.h"

#define MACHINE_MODEL_LEVELS 6      /* up to 4 caches and memory, and one unmatched plateau */
#define MACHINE_MODEL_CHECKS 48

typedef struct machine_level {
	char name[16];              /* "L1", "L2", "L3", "DRAM", or "level K" (a plateau no sysfs cache matches) */
	int cache_level;            /* 1.. for a cache, 0 for memory, -1 unmatched */
	bool hidden;                /* sysfs lists the cache, the sweep shows no plateau of its own */
	bool shared;                /* the last-level cache: other cores (and, on a VM, other guests) use it */
	double nominal_bytes;       /* sysfs; NaN for memory */
	double usable_bytes;        /* where the latency sweep puts the level's end; NaN when hidden or memory */
	double usable_low, usable_high;   /* its spread over the sweep's passes */
	double latency_ns, latency_low, latency_high;
	double latency_cycles;      /* ns x the core clock */
	char latency_source[160];
	double read_1, read_all, write_1, write_all;   /* GB/s (10^9 B/s); all = every thread bw ran */
	double bandwidth_cv;        /* relative, one thread's read */
	double mlp;                 /* misses in flight (plumb lat --mlp), NaN when not measured */
	double footprint_all;       /* bytes per thread of bw's all-threads working sets in this level; 0 or NaN:
	                               unknown (read from bw's report by machine_model_build, not saved) */
} machine_level;

typedef struct machine_model {
	char source[256];           /* the file or the measurement it came from */
	double clock_ghz;           /* core clock from a dependent add chain: its quiet (10th percentile) samples */
	double clock_low, clock_high;   /* from the median and the fastest samples */
	unsigned line_bytes;
	uint64_t page_bytes;
	double threads_all;         /* threads of the "all" bandwidth figures */
	unsigned vector_bytes;      /* widest load the bandwidth kernels used (64 for AVX-512) */
	double service_ns, service_low, service_high;   /* queueing model (NaN when not fitted) */
	double peak_mb_s;           /* the model's peak bandwidth, MB/s (10^6 B/s) */
	bool service_flat;          /* the loaded curve is flat: the fit determines no service time */
	size_t level_count;
	machine_level levels[MACHINE_MODEL_LEVELS];
} machine_model;

void machine_model_clear(machine_model *m);

/* The one clock estimate: the quiet samples of a dependent add chain (one
 * add per cycle), ns per add at the 10th percentile, the median and the
 * fastest sample.  Another program only ever adds time, so the quiet
 * samples give the clock; the median and the fastest bound its spread. */
void machine_clock_estimate(double ns_p10, double ns_median, double ns_min, double *ghz, double *low, double *high);

/* Names plateaus by capacity.  flat_to[k] is the last point of plateau k
 * (where its latency starts to rise) and end_bytes[k] where half the loads
 * still hit it (the last plateau, memory, is open-ended and both are
 * ignored); nominal[c] is sysfs's size of data cache level c + 1.
 * level_of[k] gets the cache level (1..caches) plateau k is, 0 for the
 * last plateau (memory), -1 for a plateau no cache matches.  hidden[c]
 * (may be NULL) is set for each cache no plateau was matched to.  The
 * matching keeps order, never gives a plateau a cache it stays flat past
 * (a cache cannot hold more than its size; 1.25x of slack: one sweep step
 * and the rounding of sizes), and among those prefers the most matches,
 * then the ends closest to the nominal sizes (in octaves).  A plateau
 * that stays flat past every cache's size is memory even when it is not
 * the last (level_of 0); the plateaus after it (memory slowed by page
 * walks) are then -1.  flat_to may be
 * NULL: the ends then decide both.  swept_bytes is the largest working set
 * measured (0: unknown): a sweep that stops short of the last cache's
 * nominal size may end inside a cache, so its last plateau is matched like
 * the others (memory only when no cache takes it), and a cache larger than
 * the sweep is beyond it, not hidden. */
int machine_match_levels(const double *flat_to, const double *end_bytes, size_t plateaus, const double *nominal,
                         size_t caches, double swept_bytes, int *level_of, bool *hidden, plumb_status *status);

/* The first plateau of a latency sweep past from_bytes: the first run of
 * at least min_points points whose latencies stay within flat_ratio of one
 * another, extended as far as it stays so.  Its median, lowest and highest
 * latency; -1 when there is none (the curve still rises). */
int machine_plateau_after(const double *bytes, const double *ns, size_t n, double from_bytes, double flat_ratio,
                          size_t min_points, double *median, double *low, double *high);

/* Builds the model from the sections' reports (any may be NULL). */
int machine_model_build(machine_model *m, const output_report *topo, const output_report *lat, const output_report *bw,
                        const output_report *model, plumb_status *status);

/* A level by name ("L1".., "DRAM"), or NULL. */
const machine_level *machine_model_level(const machine_model *m, const char *name);
/* The memory's measured read bandwidth, GB/s: the larger of one thread's
 * and all threads' (a bandwidth it is known to sustain, which the queueing
 * model's peak must reach); NaN when the model has none. */
double machine_model_memory_bandwidth(const machine_model *m);

/* plumb bw's per-level table ("levels": columns threads, kernel and one
 * per level): the figure for (threads, kernel) at level, NaN when absent;
 * the most threads any row ran. */
double machine_bw_figure(const output_table *levels, double threads, const char *kernel, const char *level);
double machine_bw_max_threads(const output_table *levels);

/* The one usable-capacity rule: a shared cache whose measured end lies
 * below half its nominal size (beyond a sweep step and the passes' spread)
 * holds only the usable size for a program here, which every command then
 * uses (the host preset, explain, bw's footprints, the summary's
 * sentence).  machine_usable_bytes returns usable when the rule applies,
 * else NaN; machine_level_usable applies it to a level of the model (a
 * shared level with a plateau of its own; NaN for any other). */
double machine_usable_bytes(double nominal, double usable);
double machine_level_usable(const machine_level *level);

/* The physical limits, and which figure breaks one. */
typedef struct machine_check {
	char figure[64];            /* "L1 read, 1 thread vs load ports" */
	double value, limit;        /* the figure and the limit it is held against */
	char unit[8];
	bool broken;
	char rule[320];             /* the limit and where it comes from; for a broken one, the reason */
} machine_check;

/* Fills checks (up to capacity) and returns how many; *broken gets how
 * many of them a figure breaks. */
size_t machine_model_check(const machine_model *m, machine_check *checks, size_t capacity, size_t *broken);

/* The model as tables of a report ("machine", and meta machine_*), and
 * back.  machine_model_add_checks adds the table "checks". */
void machine_model_add_tables(output_report *r, const machine_model *m);
void machine_model_add_checks(output_report *r, const machine_check *checks, size_t count);
int machine_model_from_report(const output_report *r, machine_model *m, plumb_status *status);

/* A fresh measurement against a saved model: one line per level figure
 * (latency, one thread's read bandwidth, usable size) and for the clock
 * whose ranges (the spread each run measured, widened by 5% for rounding;
 * a bandwidth's is two cv either side of it) do not overlap, naming the
 * figure, both values and both ranges, written to lines[0..capacity);
 * returns how many differ.  A figure either side lacks is not compared. */
size_t machine_model_compare(const machine_model *fresh, const machine_model *saved, char lines[][256], size_t capacity);

/* The same as sentences for a command's notes: one per difference
 * ("differs from the saved machine model (PATH) beyond both spreads: ..."),
 * or one saying every figure agrees; returns how many differ. */
size_t machine_model_difference_notes(const machine_model *fresh, const machine_model *saved, const char *path,
                                      char notes[][400], size_t capacity);

/* Adds to a plumb lat report a note per figure that differs from the
 * saved model's in path beyond both spreads (machine_model_compare), and
 * one saying it agrees otherwise.  -1 when path is not a report.json with
 * a machine model. */
int machine_model_note_differences(output_report *lat, const char *path, plumb_status *status);

/* Reads the model from plumb report's report.json: the summary's table
 * "machine", or, for a report written before it had one, built from the
 * sections the file holds. */
int machine_model_load(const char *path, machine_model *m, plumb_status *status);

/* The section a report.json holds for command ("topo", "lat", ...), parsed
 * (the caller frees it); NULL with the reason when the file is not a
 * report.json or holds no such section. */
output_report *machine_report_section(const char *path, const char *command, plumb_status *status);

#endif
