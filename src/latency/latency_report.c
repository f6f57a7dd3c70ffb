/* The `plumb lat` report: tables and notes through the output layer.
 * Table and column names are a schema (docs/output-schema.md, "lat"). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "latency/latency_run.h"
#include "core/parse.h"

static const char *pages_name(arena_pages pages)
{
	switch (pages) {
	case ARENA_PAGES_DEFAULT: return "default";
	case ARENA_PAGES_SMALL: return "small";
	case ARENA_PAGES_THP: return "thp";
	case ARENA_PAGES_HUGETLB: return "hugetlb";
	}
	return "unknown";
}

static void cell_label(output_table *t, const latency_result *r)
{
	output_cell_text(t, r->noisy ? "noisy" : "ok");
}

static void add_meta(output_report *report, const latency_run_options *o, const latency_run_result *r)
{
	char buffer[160], a[32];
	output_meta_integer(report, "cpu", r->cpu);
	output_meta_text(report, "timer", r->timer.source == TIMER_TSC ? "tsc" : "clock_gettime");
	output_meta_real(report, "timer_ticks_per_ns", r->timer.ticks_per_ns);
	output_meta_text(report, "cycles", "TSC cycles at the nominal TSC rate (ns x timer_ticks_per_ns), not core clocks");
	/* One clock estimate for every command (machine_clock_estimate): the
	 * add chain's quiet samples, with the median's and the fastest
	 * sample's clocks as its spread. */
	double ghz = r->clock_ghz > 0 ? r->clock_ghz : r->work_unit.ns > 0 ? 1.0 / r->work_unit.ns : NAN;
	output_meta_real(report, "core_clock_ghz_estimate", ghz);
	output_meta_real(report, "core_clock_ghz_low", r->clock_low_ghz > 0 ? r->clock_low_ghz : ghz);
	output_meta_real(report, "core_clock_ghz_high", r->clock_high_ghz > 0 ? r->clock_high_ghz : ghz);
	output_meta_text(report, "pattern", chase_pattern_name(o->pattern));
	if (o->pattern == CHASE_PAGE_GROUPED || o->pattern == CHASE_LMBENCH || o->pattern == CHASE_LMBENCH_THRASH ||
	    o->pattern == CHASE_MULTICHASE)
		output_meta_integer(report, "page_group_bytes",
		                    (int64_t)(o->page_group_bytes ? o->page_group_bytes
		                              : r->have_topology && r->topo.base_page_size ? r->topo.base_page_size : 4096));
	if (o->pattern == CHASE_STRIDED)
		output_meta_integer(report, "stride_bytes", (int64_t)(o->stride_bytes ? o->stride_bytes : r->line_bytes));
	output_meta_integer(report, "line_bytes", (int64_t)r->line_bytes);
	output_meta_text(report, "pages_requested", pages_name(o->pages));
	output_meta_text(report, "pages_obtained", r->pages_obtained);
	snprintf(buffer, sizeof buffer, "%llu", (unsigned long long)o->seed);
	output_meta_text(report, "seed", buffer);
	output_meta_integer(report, "points_per_octave", o->points_per_octave);
	output_meta_integer(report, "min_bytes", (int64_t)(r->point_count ? r->sizes[0] : o->min_bytes));
	output_meta_integer(report, "max_bytes", (int64_t)(r->point_count ? r->sizes[r->point_count - 1] : o->max_bytes));
	output_meta_real(report, "target_ci95_relative", o->measure.target_relative_ci);
	output_meta_real(report, "time_cap_ms", (double)o->measure.time_cap_ns / 1e6);
	output_meta_real(report, "sweep_seconds", r->sweep_seconds);
	output_meta_integer(report, "repeats", (int64_t)o->repeats);
	output_meta_integer(report, "passes", (int64_t)r->passes);
	output_meta_integer(report, "remeasured_points", (int64_t)r->remeasured);
	output_meta_real(report, "total_seconds", r->total_seconds);
	if (r->have_topology) {
		const topology_cache *llc = topology_last_level_cache(&r->topo);
		if (llc)
			output_meta_text(report, "sysfs_last_level_cache", format_size(llc->size, a, sizeof a));
	}
	/* The data caches the levels were named and judged against, so a
	 * saved run re-analyses (plumb lat --from) as it was analysed. */
	buffer[0] = 0;
	for (size_t k = 0; k < r->sysfs_levels; k++) {
		size_t used = strlen(buffer);
		snprintf(buffer + used, sizeof buffer - used, "%s%llu", k ? "," : "", (unsigned long long)r->sysfs_sizes[k]);
	}
	output_meta_text(report, "sysfs_data_caches", buffer);
}

static void add_sweep(output_report *report, const latency_run_result *r)
{
	char size[32];
	output_table *t = output_table_add(report, "sweep", "Dependent-load latency against working set");
	output_column(t, "bytes", "bytes", 0);
	output_column(t, "size", NULL, 0);
	output_column(t, "latency", "ns", 2);
	output_column(t, "tsc_cycles", "cycles", 1);
	output_column(t, "p10", "ns", 2);
	output_column(t, "min", "ns", 2);
	output_column(t, "cv", NULL, 3);
	output_column(t, "ci95", "%", 1);
	output_column(t, "samples", NULL, 0);
	output_column(t, "label", NULL, 0);
	for (size_t i = 0; i < r->point_count; i++) {
		const latency_point *p = &r->points[i];
		output_row(t);
		output_cell_integer(t, (int64_t)p->bytes);
		output_cell_text(t, format_size(p->bytes, size, sizeof size));
		output_cell_real(t, p->latency.ns);
		output_cell_real(t, p->latency.ns * r->timer.ticks_per_ns);
		output_cell_real(t, p->latency.ns_p10);
		output_cell_real(t, p->latency.ns_min);
		output_cell_real(t, p->latency.cv);
		output_cell_real(t, 100.0 * p->latency.ci95_relative);
		output_cell_integer(t, (int64_t)p->latency.samples);
		cell_label(t, &p->latency);
	}
}

/* Every pass's 10th percentile at every point it measured: the saved
 * measurement the levels are found on (plumb lat --from re-analyses it). */
static void add_passes(output_report *report, const latency_run_result *r)
{
	output_table *t = output_table_add(report, "passes", "Each pass's 10th percentile at the points it measured");
	output_column(t, "pass", NULL, 0);
	output_column(t, "bytes", "bytes", 0);
	output_column(t, "p10", "ns", 2);
	for (size_t p = 0; r->pass_ns && p < r->passes; p++)
		for (size_t i = 0; i < r->point_count; i++) {
			double v = r->pass_ns[p * r->point_count + i];
			if (!isfinite(v))
				continue;
			output_row(t);
			output_cell_integer(t, (int64_t)p);
			output_cell_integer(t, (int64_t)r->sizes[i]);
			output_cell_real(t, v);
		}
}

/* A cache sysfs lists that the sweep shows no plateau of: kept, named by
 * its level, with its nominal size and why nothing was measured. */
static void add_hidden_level(output_report *report, output_table *t, const latency_run_result *r, size_t c)
{
	char a[32];
	char why[PLUMB_MESSAGE_MAX];
	snprintf(why, sizeof why, "hidden: sysfs lists a %s L%zu, but the sweep shows no plateau of its own",
	         format_size(r->sysfs_sizes[c], a, sizeof a), c + 1);
	output_row(t);
	char name[16];
	snprintf(name, sizeof name, "L%zu", c + 1);
	output_cell_text(t, name);
	for (int column = 0; column < 8; column++)
		output_cell_status(t, "hidden", why);
	output_cell_integer(t, (int64_t)r->sysfs_sizes[c]);
	output_cell_text(t, "hidden");
	for (int column = 0; column < 3; column++)
		output_cell_status(t, "hidden", why);
	output_cell_integer(t, 0);
	output_cell_text(t, "hidden");
	output_note(report,
	            "L%zu: hidden: sysfs lists a %s cache, but the latency curve has no plateau of its own for it; the "
	            "other levels are named by their capacity, so none takes its name. A virtual machine's host can "
	            "leave a guest only a sliver of a shared cache, which then shows as part of the transition to the "
	            "next level.", c + 1, format_size(r->sysfs_sizes[c], a, sizeof a));
}

static void add_levels(output_report *report, const latency_run_options *o, const latency_run_result *r)
{
	char a[32], b[32], c[32];
	output_table *t = output_table_add(report, "levels",
	                                   "Levels: plateaus of the latency curve (10th percentiles) and where they end");
	output_column(t, "level", NULL, 0);
	output_column(t, "latency", "ns", 2);
	output_column(t, "tsc_cycles", "cycles", 1);
	output_column(t, "median", "ns", 2);
	output_column(t, "low", "ns", 2);
	output_column(t, "high", "ns", 2);
	output_column(t, "plateau_from", "bytes", 0);
	output_column(t, "plateau_to", "bytes", 0);
	output_column(t, "ends_at", "bytes", 0);
	output_column(t, "sysfs_size", "bytes", 0);
	output_column(t, "sysfs", NULL, 0);
	output_column(t, "ends_low", "bytes", 0);
	output_column(t, "ends_high", "bytes", 0);
	output_column(t, "spread_steps", "steps", 1);
	output_column(t, "passes", NULL, 0);
	output_column(t, "stability", NULL, 0);
	size_t next_hidden = 0;
	for (size_t k = 0; k <= r->level_count; k++) {
		/* the caches the sweep shows no plateau of, in their place */
		size_t before = k == r->level_count ? r->sysfs_levels
		                : r->levels[k].cache_level > 0 ? (size_t)r->levels[k].cache_level - 1
		                : r->levels[k].cache_level == 0 ? r->sysfs_levels : 0;
		for (; next_hidden < before && next_hidden < r->sysfs_levels && next_hidden < 8; next_hidden++)
			if (r->sysfs_hidden[next_hidden])
				add_hidden_level(report, t, r, next_hidden);
		if (k == r->level_count)
			break;
		const latency_level_report *l = &r->levels[k];
		if (l->cache_level > 0)
			next_hidden = (size_t)l->cache_level;
		output_row(t);
		output_cell_text(t, l->name);
		output_cell_real(t, l->level.ns);
		output_cell_real(t, l->level.ns * r->timer.ticks_per_ns);
		output_cell_real(t, l->median_ns);
		output_cell_real(t, l->level.ns_low);
		output_cell_real(t, l->level.ns_high);
		output_cell_integer(t, (int64_t)l->plateau_first_bytes);
		output_cell_integer(t, (int64_t)l->plateau_last_bytes);
		if (l->level.open_ended)
			output_cell_status(t, "n/a", "the last level does not end inside the sweep");
		else
			output_cell_integer(t, (int64_t)l->end_bytes);
		if (l->sysfs_bytes)
			output_cell_integer(t, (int64_t)l->sysfs_bytes);
		else
			output_cell_status(t, "n/a", "no sysfs cache matches this level");
		output_cell_text(t, l->verdict ? l->verdict : "-");
		if (l->level.open_ended) {
			for (int column = 0; column < 3; column++)
				output_cell_status(t, "n/a", "the last level does not end inside the sweep");
			output_cell_integer(t, 0);
			output_cell_text(t, "-");
		} else {
			output_cell_integer(t, (int64_t)l->spread.low_bytes);
			output_cell_integer(t, (int64_t)l->spread.high_bytes);
			output_cell_real(t, l->spread.spread_steps);
			output_cell_integer(t, (int64_t)l->spread.passes);
			output_cell_text(t, l->spread.stable ? "stable" : "unstable");
		}
		if (!l->level.open_ended && !l->spread.stable)
			output_note(report,
			            "%s: unstable: the %zu passes put its end between %s and %s (%.1f sweep steps apart). "
			            "Repeats disagree when another program evicts the level between them (other guests share "
			            "the last-level cache on a virtual machine); the end reported, %s, is where the quietest "
			            "moments put it (the lower envelope of the passes), and no verdict against sysfs is given.",
			            l->name, l->spread.passes, format_size(l->spread.low_bytes, a, sizeof a),
			            format_size(l->spread.high_bytes, b, sizeof b), l->spread.spread_steps,
			            format_size(l->end_bytes, c, sizeof c));
		if (l->median_ns > 1.5 * l->level.ns)
			output_note(report,
			            "%s: the median latency over its plateau (%.1f ns) is %.1fx its 10th percentile (%.1f ns): "
			            "something else evicted this level during the run, so its latency and where it ends are "
			            "uncertain", l->name, l->median_ns, l->median_ns / l->level.ns, l->level.ns);
		if (l->verdict && !strcmp(l->verdict, "disagrees"))
			output_note(report,
			            "%s: timing says this level ends at %s, sysfs says the cache is %s (more than one sweep step "
			            "apart). plumb reports what it measures; on a virtual machine the cache a process can use "
			            "is often smaller than sysfs claims (shared with other guests, or partitioned).",
			            l->name, format_size(l->end_bytes, a, sizeof a), format_size(l->sysfs_bytes, b, sizeof b));
	}
	if (r->level_count == 0)
		output_note(report, "no plateau found in the latency curve: too few points, or too noisy a machine");
	bool past_memory = false;
	for (size_t k = 0; k < r->level_count; k++) {
		if (r->levels[k].cache_level == 0)
			past_memory = true;
		else if (r->levels[k].cache_level < 0 && past_memory)
			output_note(report,
			            "%s: past memory's plateau the latency rises again (%.0f ns): memory slowed by page walks "
			            "(on a virtual machine nested paging makes a TLB miss cost two walks); memory's latency is the "
			            "plateau before it", r->levels[k].name, r->levels[k].level.ns);
		else if (r->levels[k].cache_level < 0 && r->sysfs_levels > 0)
			output_note(report,
			            "%s: no data cache sysfs lists fits where this plateau ends (a cache cannot hold more than "
			            "its size), so it is numbered, not named", r->levels[k].name);
	}
	(void)o;
}

static void add_restart(output_report *report, const latency_run_result *r)
{
	output_table *t = output_table_add(report, "restart",
	                                   "Restart latency: back-to-back minus the fill time that dependent work hides");
	output_column(t, "level", NULL, 0);
	output_column(t, "probe", "bytes", 0);
	output_column(t, "back_to_back", "ns", 2);
	output_column(t, "restart", "ns", 2);
	output_column(t, "fill", "ns", 2);
	output_column(t, "fill_work", "adds", 0);
	output_column(t, "work_unit", "ns", 3);
	output_column(t, "slope", "ns/add", 3);
	output_column(t, "fit_error", NULL, 3);
	output_column(t, "label", NULL, 0);
	output_column(t, "fill_estimate", "ns", 2);
	output_column(t, "fill_within", "ns", 2);
	for (size_t k = 0; k < r->level_count; k++) {
		const latency_level_report *l = &r->levels[k];
		output_row(t);
		output_cell_text(t, l->name);
		output_cell_integer(t, (int64_t)l->probe_bytes);
		if (!l->restart_done) {
			for (int c = 0; c < 10; c++)
				output_cell_status(t, "unsupported", l->restart_error[0] ? l->restart_error : "not measured");
			continue;
		}
		output_cell_real(t, l->restart.back_to_back_ns);
		output_cell_real(t, l->restart.restart_ns);
		output_cell_real(t, l->restart.fill_ns);
		output_cell_integer(t, l->restart.fill_work);
		output_cell_real(t, l->restart.work_unit_ns);
		output_cell_real(t, l->restart.slope_ns);
		output_cell_real(t, l->restart.fit_error);
		/* More than 10% mean misfit: the curve is not the two-segment shape
		 * (a busy neighbour evicting a shared level, typically). */
		char label[64];
		if (l->restart.fit_error > 0.1)
			snprintf(label, sizeof label, "poor fit");
		else if (!l->restart.fill_resolved)
			/* The fitted fill does not stand out of the spread over
			 * repeats: 0.76, 14.9 and 4.3 ns in three runs at DRAM. */
			snprintf(label, sizeof label, "fill 0 within \u00b1%.2f ns", l->restart.fill_within_ns);
		else
			snprintf(label, sizeof label, "ok");
		output_cell_text(t, label);
		output_cell_real(t, l->restart.fill_estimate_ns);
		output_cell_real(t, l->restart.fill_within_ns);
		if (l->restart.back_to_back_ns > 1.5 * l->level.ns)
			output_note(report, "%s: back-to-back latency during the restart run was %.1f ns against %.1f ns in "
			            "the sweep: something else evicted the level meanwhile, so its restart figures are "
			            "unreliable", l->name, l->restart.back_to_back_ns, l->level.ns);
		if (l->restart.fill_beyond_range)
			output_note(report, "%s: no work count in the sweep added time; the fill time is at least %.1f ns and "
			            "the restart latency at most %.1f ns", l->name, l->restart.fill_ns, l->restart.restart_ns);
	}
	output_table *c = output_table_add(report, "restart_curve", "Time per load with k dependent adds after each load");
	output_column(c, "level", NULL, 0);
	output_column(c, "work", "adds", 0);
	output_column(c, "latency", "ns", 2);
	output_column(c, "median", "ns", 2);
	output_column(c, "cv", NULL, 3);
	output_column(c, "label", NULL, 0);
	for (size_t k = 0; k < r->level_count; k++) {
		const latency_level_report *l = &r->levels[k];
		for (size_t i = 0; l->restart_done && i < l->restart_count; i++) {
			output_row(c);
			output_cell_text(c, l->name);
			output_cell_integer(c, l->restart_points[i].work);
			output_cell_real(c, l->restart_points[i].latency.ns_p10);
			output_cell_real(c, l->restart_points[i].latency.ns);
			output_cell_real(c, l->restart_points[i].latency.cv);
			cell_label(c, &l->restart_points[i].latency);
		}
	}
}

static void add_mlp(output_report *report, const latency_run_result *r)
{
	output_table *t = output_table_add(report, "mlp",
	                                   "Memory-level parallelism: k independent chains in one thread");
	output_column(t, "level", NULL, 0);
	output_column(t, "probe", "bytes", 0);
	output_column(t, "one_chain", "ns", 2);
	output_column(t, "peak", "MB/s", 0);
	output_column(t, "saturation_chains", NULL, 0);
	output_column(t, "outstanding", "lines", 1);
	output_column(t, "label", NULL, 0);
	for (size_t k = 0; k < r->level_count; k++) {
		const latency_level_report *l = &r->levels[k];
		output_row(t);
		output_cell_text(t, l->name);
		output_cell_integer(t, (int64_t)l->probe_bytes);
		if (!l->mlp_done) {
			for (int c = 0; c < 5; c++)
				output_cell_status(t, "unsupported", l->mlp_error[0] ? l->mlp_error : "not measured");
			continue;
		}
		output_cell_real(t, l->mlp.single_ns);
		output_cell_real(t, l->mlp.peak_mb_per_s);
		if (l->mlp.saturated)
			output_cell_integer(t, l->mlp.saturation_chains);
		else
			output_cell_status(t, "n/a", "bandwidth still rising at the largest chain count: no saturation seen");
		output_cell_real(t, l->mlp.outstanding);
		output_cell_text(t, l->mlp.saturated ? "saturated" : "lower bound");
		if (l->mlp.single_ns > 1.5 * l->level.ns)
			output_note(report, "%s: one chain took %.1f ns per load during the MLP run against %.1f ns in the "
			            "sweep: something else evicted the level meanwhile, so its MLP figures are unreliable",
			            l->name, l->mlp.single_ns, l->level.ns);
		if (!l->mlp.saturated)
			output_note(report, "%s: bandwidth still rises at %zu chains; the level keeps at least %.1f misses in "
			            "flight", l->name, l->mlp_count, l->mlp.outstanding);
	}
	output_table *c = output_table_add(report, "mlp_curve", "Time per load and bandwidth against the number of chains");
	output_column(c, "level", NULL, 0);
	output_column(c, "chains", NULL, 0);
	output_column(c, "latency", "ns", 2);
	output_column(c, "median", "ns", 2);
	output_column(c, "bandwidth", "MB/s", 0);
	output_column(c, "cv", NULL, 3);
	output_column(c, "label", NULL, 0);
	for (size_t k = 0; k < r->level_count; k++) {
		const latency_level_report *l = &r->levels[k];
		for (size_t i = 0; l->mlp_done && i < l->mlp_count; i++) {
			output_row(c);
			output_cell_text(c, l->name);
			output_cell_integer(c, l->mlp_points[i].chains);
			output_cell_real(c, l->mlp_points[i].ns_per_load);
			output_cell_real(c, l->mlp_points[i].latency.ns);
			output_cell_real(c, l->mlp_points[i].mb_per_s);
			output_cell_real(c, l->mlp_points[i].latency.cv);
			cell_label(c, &l->mlp_points[i].latency);
		}
	}
}

output_report *latency_run_report(const latency_run_options *options, const latency_run_result *result)
{
	output_report *report = output_report_new("lat");
	if (!report)
		return NULL;
	add_meta(report, options, result);
	add_sweep(report, result);
	add_levels(report, options, result);
	add_passes(report, result);
	if (options->restart)
		add_restart(report, result);
	if (options->mlp)
		add_mlp(report, result);
	size_t noisy = 0;
	for (size_t i = 0; i < result->point_count; i++)
		noisy += result->points[i].latency.noisy;
	if (noisy)
		output_note(report, "%zu of %zu sweep points missed the +-%.0f%% CI target within the time cap (label "
		            "\"noisy\"): the machine was busy; values are medians", noisy, result->point_count,
		            100 * options->measure.target_relative_ci);
	output_note(report, "cycles are TSC cycles at the nominal %.3f GHz TSC rate; the core ran at about %.2f GHz "
	            "(from the latency of a dependent add chain), so core cycles = ns x that clock",
	            result->timer.ticks_per_ns, result->clock_ghz > 0 ? result->clock_ghz : result->work_unit.ns > 0 ? 1.0 / result->work_unit.ns : NAN);
	return report;
}
