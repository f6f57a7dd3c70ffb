/* The `plumb lat` job: topology, pinning, timer, arena, sweep, levels,
 * then restart latency and MLP at each level when asked. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/cpu.h"
#include "latency/latency_run.h"
#include "machine/machine_model.h"
#include "core/parse.h"
#include "core/stats.h"

void latency_run_defaults(latency_run_options *options)
{
	memset(options, 0, sizeof *options);
	options->min_bytes = 4096;
	options->points_per_octave = 4;
	options->pattern = CHASE_RANDOM;
	options->pages = ARENA_PAGES_THP;
	options->cpu = -1;
	options->seed = 0x706c756d62ULL;   /* "plumb" */
	options->max_chains = CHASE_MAX_PARALLEL;
	options->mlp_threshold = 0.9;
	options->repeats = 4;
	options->sweep_budget_ns = 11000000000ull;
	options->repeat_budget_ns = 2000000000ull;
	latency_measure_defaults(&options->measure);
	latency_plateau_defaults(&options->plateau);
}

static uint64_t default_max_bytes(const latency_run_result *r)
{
	/* 4x the last-level cache as sysfs reports it: far enough past any
	 * cache that the last points are all DRAM even if sysfs is wrong. */
	const topology_cache *llc = r->have_topology ? topology_last_level_cache(&r->topo) : NULL;
	return llc && llc->size ? 4 * llc->size : (uint64_t)128 << 20;
}

/* Levels are named by capacity (machine_match_levels, the rule every
 * command uses): a plateau is the sysfs cache whose size its end fits
 * best, in order, and a cache with no plateau of its own (a VM that hides
 * most of a shared L3) is recorded as hidden, not given another level's
 * name. */
static void name_levels(const latency_run_options *options, latency_run_result *r)
{
	size_t caches = r->sysfs_levels < 8 ? r->sysfs_levels : 8;
	double ends[LATENCY_MAX_LEVELS], flat[LATENCY_MAX_LEVELS], nominal[8];
	int level_of[LATENCY_MAX_LEVELS];
	for (size_t c = 0; c < caches; c++) {
		nominal[c] = (double)r->sysfs_sizes[c];
		r->sysfs_hidden[c] = false;
	}
	for (size_t k = 0; k < r->level_count; k++) {
		const latency_level *v = &r->levels[k].level;
		ends[k] = v->open_ended ? NAN : (double)r->sizes[v->end_index];
		flat[k] = (double)r->sizes[v->last_index];
		level_of[k] = -1;
	}
	plumb_status ignored;
	bool matched = caches > 0 && r->level_count > 0 &&
	               machine_match_levels(flat, ends, r->level_count, nominal, caches,
	                                    r->point_count ? (double)r->sizes[r->point_count - 1] : 0, level_of, r->sysfs_hidden, &ignored) == 0;
	if (!matched)
		for (size_t c = 0; c < caches; c++)
			r->sysfs_hidden[c] = false;
	for (size_t k = 0; k < r->level_count; k++) {
		latency_level_report *l = &r->levels[k];
		const latency_level *v = &l->level;
		l->plateau_first_bytes = r->sizes[v->first_index];
		l->plateau_last_bytes = r->sizes[v->last_index];
		l->end_bytes = v->open_ended ? 0 : r->sizes[v->end_index];
		/* Restart and MLP run in the middle of the plateau (in log size),
		 * away from both of its edges. */
		l->probe_bytes = r->sizes[(v->first_index + v->last_index + 1) / 2];
		l->cache_level = matched ? level_of[k] : -1;
		if (l->cache_level > 0)
			snprintf(l->name, sizeof l->name, "L%d", l->cache_level);
		else if (l->cache_level == 0)
			snprintf(l->name, sizeof l->name, "memory");
		else
			snprintf(l->name, sizeof l->name, "level %zu", k + 1);
		l->sysfs_bytes = l->cache_level > 0 ? r->sysfs_sizes[l->cache_level - 1] : 0;
		l->agrees = l->sysfs_bytes && !v->open_ended &&
		            latency_boundary_agrees(l->end_bytes, l->sysfs_bytes, options->points_per_octave, 1.0);
		/* Passes that disagree by more than two steps measured other
		 * programs as much as the cache: no verdict against sysfs. */
		l->verdict = !l->sysfs_bytes || v->open_ended ? "-" : !l->spread.stable ? "unstable"
		             : l->agrees ? "agrees" : "disagrees";
	}
}

static int probe_level(const latency_run_options *options, latency_run_result *r, latency_level_report *l,
                       void *memory, size_t capacity, plumb_status *status)
{
	chase_layout layout = { .pattern = CHASE_RANDOM, .bytes = (size_t)l->probe_bytes, .slot_bytes = r->line_bytes,
	                        .seed = options->seed ^ 0x5eed };
	chase_chain chain;
	if (chase_build_layout(&chain, memory, capacity, &layout, status) != 0)
		return -1;
	/* 37 work counts and 32 chain counts per level: a third of the sweep's
	 * time cap each keeps a busy machine's worst case near 15 s. */
	latency_measure_options measure = options->measure;
	if (measure.time_cap_ns > 50000000)
		measure.time_cap_ns = 50000000;
	if (options->restart) {
		size_t n;
		const unsigned *work = chase_work_counts(&n);
		l->restart_points = calloc(n, sizeof *l->restart_points);
		if (!l->restart_points)
			return plumb_fail_errno(status, ENOMEM, "out of memory");
		plumb_status s;
		if (latency_restart_measure(&r->timer, &chain, &measure, work, n, r->work_unit.ns,
		                            l->restart_points, &l->restart, &s) == 0) {
			l->restart_done = true;
			l->restart_count = n;
		} else
			snprintf(l->restart_error, sizeof l->restart_error, "%s", s.message);
	}
	if (options->mlp) {
		unsigned k = options->max_chains;
		if (k > chain.length)
			k = (unsigned)chain.length;
		plumb_status s;
		if (latency_mlp_measure(&r->timer, &chain, &measure, k, r->line_bytes, l->mlp_points, &s) == 0 &&
		    latency_mlp_analyze(l->mlp_points, k, options->mlp_threshold, &l->mlp, &s) == 0) {
			l->mlp_done = true;
			l->mlp_count = k;
		} else
			snprintf(l->mlp_error, sizeof l->mlp_error, "%s", s.message);
	}
	return 0;
}

/* The levels are found on the lower envelope (10th percentile of each
 * point's samples; latency_sweep_levels): another program only ever adds
 * latency (the other core evicting our lines from the shared L3,
 * preemption), so on a busy machine the median measures the neighbour as
 * much as the cache, while the quiet moments measure the cache.  Each
 * level also reports the median of its plateau points' medians. */
static void level_medians(latency_run_result *r, const latency_level *found, const latency_boundary_spread *spreads)
{
	for (size_t k = 0; k < r->level_count; k++) {
		r->levels[k].level = found[k];
		r->levels[k].spread = spreads[k];
		double medians[256];
		size_t m = 0;
		for (size_t i = found[k].first_index; i <= found[k].last_index && m < 256; i++)
			medians[m++] = r->points[i].latency.ns;
		r->levels[k].median_ns = stats_median(medians, m);
	}
}

int latency_run_analyze(const latency_run_options *options, latency_run_result *r, plumb_status *status)
{
	/* Expect one level per sysfs data cache plus memory; more plateaus
	 * than that are transitions and noise, unless far apart. */
	latency_plateau_options plateau = options->plateau;
	if (plateau.expected_levels == 0 && r->sysfs_levels > 0)
		plateau.expected_levels = r->sysfs_levels + 1;
	latency_level found[LATENCY_MAX_LEVELS];
	latency_boundary_spread spreads[LATENCY_MAX_LEVELS];
	if (latency_levels_of_passes(r->sizes, r->pass_ns, r->passes, r->point_count, options->points_per_octave,
	                             &plateau, found, spreads, LATENCY_MAX_LEVELS, &r->level_count, status) != 0)
		return -1;
	level_medians(r, found, spreads);
	name_levels(options, r);
	return 0;
}

int latency_run(const latency_run_options *options, latency_run_result *r, plumb_status *status)
{
	memset(r, 0, sizeof *r);
	uint64_t started = timer_monotonic_ns();
	plumb_status ignored;
	r->have_topology = topology_read(&r->topo, &ignored) == 0;
	while (r->have_topology && r->sysfs_levels < 8 && topology_data_cache(&r->topo, (int)r->sysfs_levels + 1)) {
		r->sysfs_sizes[r->sysfs_levels] = topology_data_cache(&r->topo, (int)r->sysfs_levels + 1)->size;
		r->sysfs_levels++;
	}
	const topology_cache *l1 = r->have_topology ? topology_data_cache(&r->topo, 1) : NULL;
	r->line_bytes = options->line_bytes ? options->line_bytes : l1 && l1->line ? l1->line : 64;
	if (options->points_per_octave < 1 || options->points_per_octave > 64)
		return plumb_fail(status, EINVAL, "points per octave must be between 1 and 64");
	r->cpu = options->cpu >= 0 ? options->cpu : cpu_current();
	if (r->cpu < 0)
		return plumb_fail(status, EINVAL, "cannot tell which CPU this thread runs on");
	if (cpu_pin_self(r->cpu, status) != 0)
		return -1;
	if (timer_calibrate(&r->timer, 50, &ignored) != 0)
		timer_calibration_clock(&r->timer);

	uint64_t max = options->max_bytes ? options->max_bytes : default_max_bytes(r);
	if (options->min_bytes < r->line_bytes)
		return plumb_fail(status, EINVAL, "the smallest working set must hold at least one %zu-byte line",
		                  r->line_bytes);
	if (max < options->min_bytes)
		return plumb_fail(status, EINVAL, "the largest working set is below the smallest");
	size_t capacity = (size_t)(options->points_per_octave * (log2((double)max / options->min_bytes) + 2) + 4);
	r->sizes = calloc(capacity, sizeof *r->sizes);
	r->points = calloc(capacity, sizeof *r->points);
	r->pass_ns = calloc(capacity * (1 + (size_t)options->repeats), sizeof *r->pass_ns);
	if (!r->sizes || !r->points || !r->pass_ns)
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	r->point_count = latency_sweep_sizes(options->min_bytes, max, options->points_per_octave, r->line_bytes,
	                                     r->sizes, capacity);
	if (r->point_count == 0)
		return plumb_fail(status, EINVAL, "no working-set sizes between %llu and %llu bytes",
		                  (unsigned long long)options->min_bytes, (unsigned long long)max);

	arena memory;
	arena_request request = { .size = (size_t)r->sizes[r->point_count - 1], .pages = options->pages,
	                          .fault = ARENA_FAULT_PREFAULT };
	if (arena_create(&memory, &request, status) != 0)
		return -1;
	if (arena_inspect(&memory, &ignored) == 0)
		arena_describe(&memory, r->pages_obtained, sizeof r->pages_obtained);
	else
		snprintf(r->pages_obtained, sizeof r->pages_obtained, "unknown (%.200s)", ignored.message);

	if (latency_measure_work_unit(&r->timer, &options->measure, &r->work_unit, status) != 0) {
		arena_destroy(&memory);
		return -1;
	}
	machine_clock_estimate(r->work_unit.ns_p10, r->work_unit.ns, r->work_unit.ns_min, &r->clock_ghz, &r->clock_low_ghz,
	                       &r->clock_high_ghz);

	latency_sweep_options sweep = { .measure = options->measure };
	sweep.layout.pattern = options->pattern;
	sweep.layout.slot_bytes = r->line_bytes;
	sweep.layout.page_bytes = options->page_group_bytes ? options->page_group_bytes
	                          : r->have_topology && r->topo.base_page_size ? r->topo.base_page_size : 4096;
	sweep.layout.stride_bytes = options->stride_bytes ? options->stride_bytes : r->line_bytes;
	sweep.layout.seed = options->seed;
	/* The default run must end within 20 s on a busy 2-core machine:
	 * 11 s for the sweep, 2 s for the second pass, the rest for set-up. */
	sweep.budget_ns = options->sweep_budget_ns;
	progress bar;
	progress_begin(&bar, "plumb lat: sweep", r->point_count);
	/* What plumb report's progress line is told: the sweep is from about
	 * an eighth to half of a default run under load (timed at load 12 on
	 * two CPUs: set-up 11 s, sweep 33 s, the passes and analysis after it
	 * 44 s). */
	progress_share(&bar, 0.12, 0.5);
	uint64_t sweep_start = timer_monotonic_ns();
	int rc = latency_sweep(&r->timer, &sweep, memory.base, memory.size, r->sizes, r->point_count, r->points, &bar,
	                       status);
	progress_end(&bar);
	r->sweep_seconds = (double)(timer_monotonic_ns() - sweep_start) / 1e9;
	if (rc != 0) {
		arena_destroy(&memory);
		return -1;
	}

	/* Contention comes and goes: the points around each boundary are
	 * measured again in `repeats` more passes, later and on other pages;
	 * the levels are found on the lower envelope and each boundary gets
	 * its spread over the passes (latency_sweep_levels). */
	latency_plateau_options plateau = options->plateau;
	if (plateau.expected_levels == 0 && r->sysfs_levels > 0)
		plateau.expected_levels = r->sysfs_levels + 1;
	latency_sweep_options again = sweep;
	again.budget_ns = sweep.budget_ns && options->repeats ? options->repeat_budget_ns / options->repeats : 0;
	latency_level found[LATENCY_MAX_LEVELS];
	latency_boundary_spread spreads[LATENCY_MAX_LEVELS];
	rc = latency_sweep_levels(&r->timer, options->repeats ? &again : NULL, options->repeats, memory.base, memory.size,
	                          r->sizes, r->points, r->point_count, options->points_per_octave, &plateau, found,
	                          spreads, LATENCY_MAX_LEVELS, &r->level_count, r->pass_ns, &r->passes, &r->remeasured,
	                          status);
	if (rc == 0)
		rc = latency_run_analyze(options, r, status);

	if (rc == 0 && (options->restart || options->mlp)) {
		progress_begin(&bar, options->restart && options->mlp ? "plumb lat: restart, MLP" : options->restart ? "plumb lat: restart" : "plumb lat: MLP",
		               r->level_count);
		for (size_t k = 0; rc == 0 && k < r->level_count; k++) {
			rc = probe_level(options, r, &r->levels[k], memory.base, memory.size, status);
			progress_step(&bar, k + 1);
		}
		progress_end(&bar);
	}
	arena_destroy(&memory);
	r->total_seconds = (double)(timer_monotonic_ns() - started) / 1e9;
	return rc;
}

void latency_run_free(latency_run_result *r)
{
	for (size_t k = 0; k < r->level_count; k++)
		free(r->levels[k].restart_points);
	free(r->sizes);
	free(r->points);
	free(r->pass_ns);
	memset(r, 0, sizeof *r);
}
