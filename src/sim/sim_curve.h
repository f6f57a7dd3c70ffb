/* plumb sim --curve LEVEL: the misses of one cache level at every size and
 * associativity of a grid, in one pass over the references.
 *
 * Mattson, Gecsei, Slutz and Traiger (1970): LRU is a stack algorithm, so
 * one LRU stack gives the misses of every fully associative size at once
 * (a reference misses a cache of C lines exactly when C distinct lines were
 * referenced since its line was last referenced: its stack distance).  The
 * stack distance's power-of-two bucket is kept in O(log distance) per
 * reference: the stack as a list cut into groups at the buckets' bounds.
 * Hill and Smith (1989): with bit-selection set indexing, the same holds in
 * each set, so one LRU stack per set gives every associativity of a set
 * count at once; one pass keeps one stack per set for every power-of-two
 * set count.
 *
 * The grid: line size the configuration's; sizes 2^i lines from one line to
 * the footprint (at most max_size); for each size, 1, 2, 4, ...,
 * SIM_CURVE_MAX_WAYS ways (as far as the size allows) and fully
 * associative; sets = size / (ways x line).
 *
 * The input of a level below the L1s is what missed the levels above it in
 * the chosen configuration: the L1s (and for the L3 the L2) are simulated
 * as configured, as plumb's engine does, and their misses (with cachegrind's
 * straddle rule: when one line of a reference misses the L1, all its lines
 * go below) are the level's references.  The curve assumes that the level
 * never removes lines from the levels above (plumb's private L2 and an
 * inclusive L3 do, by back-invalidation): where a configuration had no
 * back-invalidation its misses equal the curve's.  Write-backs never touch
 * a level's replacement state in plumb, so they do not enter the curve.
 * docs/simulator.md, "Miss-ratio curves". */
#ifndef PLUMB_SIM_CURVE_H
#define PLUMB_SIM_CURVE_H

#include <stddef.h>
#include <stdint.h>
#include "core/output.h"
#include "sim/sim.h"
#include "core/status.h"
#include "trace/trace.h"

/* Set-associative points up to this many ways; beyond, fully associative only. */
#define SIM_CURVE_MAX_WAYS 16
/* The largest size of the grid unless told otherwise, and the most it may be. */
#define SIM_CURVE_DEFAULT_MAX_SIZE (64ull << 20)
#define SIM_CURVE_MAX_SIZE_LIMIT (256ull << 20)
#define SIM_CURVE_MAX_LINES (1ull << 22)

typedef struct sim_curve sim_curve;

/* "l1d", "l1i", "l2" or "l3" (any case). */
int sim_curve_level_parse(const char *text, sim_level *level, plumb_status *status);
/* 0 when the curve of level is exact for config; else -1 and one line
 * naming what is not covered (a replacement policy other than LRU, a
 * prefetcher, no-write-allocate, write-through levels above, an exclusive
 * L3, line sizes that differ) and the exact alternative (plumb sim --sweep). */
int sim_curve_covers(const sim_config *config, sim_level level, plumb_status *status);
/* A curve per level of --curve's list (sim_curve_levels_parse) into
 * curves[0..*count) (room for SIM_LEVEL_COUNT); on failure none is left. */
int sim_curve_new_levels(sim_curve **curves, size_t *count, const sim_config *config, const char *levels,
                         uint64_t max_size, plumb_status *status);
/* max_size: the largest size of the grid in bytes (0: the default). */
int sim_curve_new(sim_curve **out, const sim_config *config, sim_level level, uint64_t max_size,
                  plumb_status *status);
void sim_curve_free(sim_curve *c);
/* Records in order, as sim_access_batch takes them (threads onto cores as
 * the simulator maps them, region markers, modify as configured). */
int sim_curve_batch(sim_curve *c, const trace_record *records, size_t n, plumb_status *status);
/* A run of plumbgrind's compact entries (trace_reader_view_compact), as
 * sim_curve_batch takes the records they stand for; an unchecked run is
 * checked as it is walked and settled (end and records set, as
 * trace_compact_settle would).  The definitions are made into the
 * level's own references once, so a use costs its references at the level
 * only (an L1D curve skips the fetches). */
int sim_curve_compact(sim_curve *c, trace_compact *compact, plumb_status *status);
/* Everything reader gives (in the interleaver's order when not NULL);
 * *records counts what was read. */
int sim_curve_run_reader(sim_curve *c, trace_reader *reader, trace_interleaver *interleaver, uint64_t *records,
                         plumb_status *status);
/* The same for count curves (several levels) in one pass over the references. */
int sim_curve_run_reader_all(sim_curve *const *curves, size_t count, trace_reader *reader,
                             trace_interleaver *interleaver, uint64_t *records, plumb_status *status);
/* --curve's list: "l1d", "l1d,l2", ... (each once), or "data": the L1D and
 * every level below it that config has.  levels holds at least
 * SIM_LEVEL_COUNT. */
int sim_curve_levels_parse(const char *text, const struct sim_config *config, sim_level *levels, size_t *count,
                           plumb_status *status);

/* Distinct lines the level was referenced with (the largest over its caches). */
uint64_t sim_curve_footprint(const sim_curve *c);
/* The largest size of the grid, and the largest the report shows (the
 * footprint rounded up to a power of two, at most the former). */
uint64_t sim_curve_max_size(const sim_curve *c);
uint64_t sim_curve_shown_size(const sim_curve *c);
/* Regions (as the simulator's: per thread and name, in order of first entry). */
size_t sim_curve_region_count(const sim_curve *c);
const char *sim_curve_region_name(const sim_curve *c, size_t index, uint32_t *thread, uint64_t *entries);
/* The misses and references of a grid point (size in bytes, ways; ways 0:
 * fully associative) for region index, or SIZE_MAX for the whole program.
 * -1 when the point is not in the grid or the region does not exist. */
int sim_curve_point(const sim_curve *c, size_t region, uint64_t size, uint32_t ways, uint64_t *misses,
                    uint64_t *accesses);
/* The knee of a region's fully associative curve (region: an index, or
 * SIZE_MAX for the whole program): the smallest capacity of the grid whose
 * misses lie within a tenth of the way from the largest capacity's (*least:
 * what no capacity removes, first references) to one line's (*most); 0 when
 * no capacity removes a miss.  plumb explain names it per region, plumb
 * report --program per level. */
uint64_t sim_curve_knee(const sim_curve *c, size_t region, uint64_t *most, uint64_t *least);
/* The table "knees", as plumb sim and plumb explain both give it: region,
 * thread (empty for the whole program), level, references (that reached
 * the level), misses_one_line, misses_largest, knee_bytes (sim_curve_knee;
 * n/a with the reason when no capacity removes a miss).
 * sim_curve_knee_row adds region's row (SIZE_MAX: the whole program),
 * named name. */
output_table *sim_curve_knees_table(output_report *report);
/* The curve's level as its tables name it: "l1i", "l1d", "l2", "l3". */
const char *sim_curve_level_word(const sim_curve *c);
void sim_curve_knee_row(output_table *knees, const sim_curve *c, size_t region, const char *name);
/* The table "curve", as plumb sim and plumb explain both give it: region,
 * level, size_bytes[B], ways (the size in lines: fully associative), sets,
 * misses, miss_ratio (6 decimals; n/a with the reason when no reference
 * reached the level).  sim_curve_rows adds region's rows (SIZE_MAX: the
 * whole program), named name: by size (one line to sim_curve_shown_size),
 * then ways (1, 2, 4, ... SIM_CURVE_MAX_WAYS as far as the size allows,
 * then fully associative where that is more ways). */
output_table *sim_curve_table(output_report *report);
void sim_curve_rows(output_table *curve, const sim_curve *c, size_t region, const char *name);
/* The report: meta (trace, records, level, grid), the table "curve"
 * (sim_curve_table), the whole program ("(all)") first, then each region,
 * and the table "knees" (sim_curve_knees_table).  facts: the run's trace, format and records
 * (sim_run_facts; the rest is not used). */
output_report *sim_curve_report(const sim_curve *c, const sim_run_facts *facts, plumb_status *status);
/* The same for several levels' curves of one run (sim_curve_run_reader_all),
 * level by level in both tables. */
output_report *sim_curve_report_all(const sim_curve *const *curves, size_t count, const sim_run_facts *facts,
                                    plumb_status *status);

#endif
