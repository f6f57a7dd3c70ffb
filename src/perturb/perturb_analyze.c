/* The analysis Watson (2004, §2.5 and chapter 3) made of each counter, per
 * configuration: mean, standard deviation, 95% CI with Student's t, change
 * from the baseline, significance by non-overlapping intervals (Welch's test
 * beside it), the runs Eq. 2.3 asks for, the trend's shape, the slope per
 * halt; Eq. 2.1 and h ≈ x/f; tallies, the most-to-least affected list and
 * the conclusion: the smallest interval f* from which on nothing differs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/perturb.h"
#include "plumb/stats.h"

const char *perturb_trend_name(perturb_trend trend)
{
	switch (trend) {
	case PERTURB_TREND_NONE: return "none";
	case PERTURB_TREND_STEP: return "step";
	case PERTURB_TREND_INCREASING_T: return "increasing-with-t";
	case PERTURB_TREND_LINEAR_THRESHOLD: return "linear-after-threshold";
	case PERTURB_TREND_LINEAR_WIDE: return "linear-wide-baseline";
	case PERTURB_TREND_IRREGULAR: return "irregular";
	default: return "not-counted";
	}
}

const char *perturb_view_name(perturb_view view)
{
	switch (view) {
	case PERTURB_VIEW_RAW: return "raw";
	case PERTURB_VIEW_CALIBRATED: return "calibrated";
	default: return "excluded";
	}
}

/* The value of measure source `kind` in one run: events in a view, or the run's own figures. */
typedef enum source_kind { SOURCE_EVENT, SOURCE_WALL, SOURCE_TSC, SOURCE_INTERRUPTS, SOURCE_HALTS,
	SOURCE_HALTED, SOURCE_DEFERRED } source_kind;

static double run_value(const perturb_result *r, const perturb_run *run, source_kind kind, size_t event,
                        perturb_view view)
{
	switch (kind) {
	case SOURCE_WALL: return run->wall_seconds;
	case SOURCE_TSC: return run->tsc_cycles;
	case SOURCE_INTERRUPTS: return run->interrupts;
	case SOURCE_HALTS: return (double)run->halts;
	case SOURCE_HALTED: return run->halted_seconds;
	case SOURCE_DEFERRED: return (double)run->deferred_signals;
	default: break;
	}
	const counter_value *v = view == PERTURB_VIEW_EXCLUDED ? &run->excluded[event] : &run->raw[event];
	if (!counter_value_usable(v))
		return NAN;
	if (view == PERTURB_VIEW_CALIBRATED) {
		double per_halt = r->calibrations[run->config].per_halt[event];
		if (isnan(per_halt))
			return NAN;
		return v->value - (double)run->halts * per_halt;
	}
	return v->value;
}

static double mean_halts(const perturb_result *r, size_t config)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < r->n_runs; i++)
		if (r->runs[i].config == config) {
			sum += (double)r->runs[i].halts;
			n++;
		}
	return n ? sum / (double)n : NAN;
}

static void classify(const perturb_result *r, perturb_measure *m, const double *halts)
{
	const perturb_design *d = &r->design;
	size_t halted = d->n - 1, significant = 0;
	for (size_t c = 1; c < d->n; c++)
		significant += m->cells[c].significant;
	/* Pairwise differences among halted configurations. */
	bool any_pair = false;
	for (size_t i = 1; i < d->n; i++)
		for (size_t j = i + 1; j < d->n; j++)
			any_pair |= perturb_ci_disjoint(&m->cells[i].stats, &m->cells[j].stats);
	/* Halted configurations with the fewest and the most halts. */
	size_t fewest = 1, most = 1;
	for (size_t c = 1; c < d->n; c++) {
		if (halts[c] < halts[fewest])
			fewest = c;
		if (halts[c] > halts[most])
			most = c;
	}
	if (significant == 0) {
		m->trend = halted >= 2 && perturb_ci_disjoint(&m->cells[fewest].stats, &m->cells[most].stats)
		           ? PERTURB_TREND_LINEAR_WIDE : PERTURB_TREND_NONE;
		return;
	}
	if (significant == halted && !any_pair) {
		m->trend = PERTURB_TREND_STEP;
		return;
	}
	/* Increasing with t: at one interval, means that rise with t over at
	 * least three halt times, the shortest and longest differing. */
	for (size_t i = 1; i < d->n; i++) {
		size_t members[PERTURB_MAX_CONFIGS], k = 0;
		bool first = true;
		for (size_t j = 1; j < i; j++)
			first &= d->configs[j].interval != d->configs[i].interval;
		if (!first)
			continue;
		for (size_t j = 1; j < d->n; j++)
			if (d->configs[j].interval == d->configs[i].interval)
				members[k++] = j;
		if (k < 3)
			continue;
		/* Sort by t. */
		for (size_t a = 0; a < k; a++)
			for (size_t b = a + 1; b < k; b++)
				if (d->configs[members[b]].halt < d->configs[members[a]].halt) {
					size_t s = members[a];
					members[a] = members[b];
					members[b] = s;
				}
		bool rising = true;
		for (size_t a = 1; a < k; a++)
			rising &= m->cells[members[a]].stats.mean >= m->cells[members[a - 1]].stats.mean;
		if (rising && perturb_ci_disjoint(&m->cells[members[0]].stats, &m->cells[members[k - 1]].stats)) {
			m->trend = PERTURB_TREND_INCREASING_T;
			return;
		}
	}
	/* Linear after a threshold: the significant ones are exactly those with
	 * the most halts, and the means follow h. */
	bool threshold = true;
	for (size_t i = 1; i < d->n; i++)
		for (size_t j = 1; j < d->n; j++)
			if (m->cells[i].significant && !m->cells[j].significant && !(halts[i] > halts[j]))
				threshold = false;
	if (threshold && m->slope_r2 >= 0.5) {
		m->trend = PERTURB_TREND_LINEAR_THRESHOLD;
		return;
	}
	m->trend = PERTURB_TREND_IRREGULAR;
}

static void analyze_measure(const perturb_result *r, perturb_measure *m, source_kind kind, size_t event,
                            perturb_view view, const double *halts)
{
	const perturb_design *d = &r->design;
	double *x = malloc(r->n_runs * sizeof *x), *hx = malloc(r->n_runs * sizeof *hx),
	       *hy = malloc(r->n_runs * sizeof *hy);
	if (!x || !hx || !hy) {
		free(x); free(hx); free(hy);
		m->counted = false;
		snprintf(m->reason, sizeof m->reason, "out of memory");
		return;
	}
	size_t fit = 0;
	m->counted = true;
	for (size_t c = 0; c < d->n; c++) {
		size_t n = 0;
		for (size_t i = 0; i < r->n_runs; i++) {
			if (r->runs[i].config != c)
				continue;
			double v = run_value(r, &r->runs[i], kind, event, view);
			if (isnan(v))
				continue;
			x[n++] = v;
			hx[fit] = (double)r->runs[i].halts;
			hy[fit++] = v;
		}
		perturb_sample_stats_compute(x, n, &m->cells[c].stats);
	}
	if (m->cells[0].stats.n < 2) {
		m->counted = false;
		m->trend = PERTURB_TREND_UNCOUNTED;
		free(x); free(hx); free(hy);
		return;
	}
	const perturb_sample_stats *base = &m->cells[0].stats;
	m->max_change_percent = 0;
	m->significant_configs = 0;
	for (size_t c = 0; c < d->n; c++) {
		perturb_cell *cell = &m->cells[c];
		cell->change_percent = base->mean != 0 ? 100.0 * (cell->stats.mean - base->mean) / fabs(base->mean)
		                                       : (cell->stats.mean == 0 ? 0 : NAN);
		cell->needed_runs = perturb_sample_size(cell->stats.mean, cell->stats.stddev, 1.96, 5);
		cell->significant = c > 0 && perturb_ci_disjoint(&cell->stats, base);
		double t, df, p;
		cell->welch_p = c > 0 && perturb_welch(&cell->stats, base, &t, &df, &p) == 0 ? p : NAN;
		cell->welch_significant = c > 0 && cell->welch_p < 0.05;
		if (c > 0) {
			m->significant_configs += cell->significant;
			if (isfinite(cell->change_percent) && fabs(cell->change_percent) > fabs(m->max_change_percent))
				m->max_change_percent = cell->change_percent;
		}
	}
	double a, b, r2;
	if (stats_linear_fit(hx, hy, fit, &a, &b, &r2) == 0) {
		m->slope_per_halt = b;
		m->slope_r2 = r2;
	} else {
		m->slope_per_halt = m->slope_r2 = NAN;
	}
	classify(r, m, halts);
	free(x); free(hx); free(hy);
}

static perturb_measure *add_measure(perturb_analysis *out, const char *name)
{
	if (out->n_measures >= PERTURB_MAX_MEASURES)
		return NULL;
	perturb_measure *m = &out->measures[out->n_measures++];
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", name);
	return m;
}

static int compare_affected(const perturb_analysis *a, size_t i, size_t j)
{
	const perturb_measure *x = &a->measures[i], *y = &a->measures[j];
	if (x->significant_configs != y->significant_configs)
		return x->significant_configs > y->significant_configs ? -1 : 1;
	double cx = fabs(x->max_change_percent), cy = fabs(y->max_change_percent);
	return cx > cy ? -1 : cx < cy ? 1 : 0;
}

void perturb_analyze(const perturb_result *r, double reference_rate, perturb_analysis *out)
{
	memset(out, 0, sizeof *out);
	const perturb_design *d = &r->design;
	double halts[PERTURB_MAX_CONFIGS];
	for (size_t c = 0; c < d->n; c++)
		halts[c] = mean_halts(r, c);
	static const struct { const char *name; source_kind kind; } own[] = {
		{ "halts", SOURCE_HALTS }, { "halted-seconds", SOURCE_HALTED }, { "wall-seconds", SOURCE_WALL },
		{ "tsc-cycles", SOURCE_TSC }, { "interrupts", SOURCE_INTERRUPTS }, { "deferred-signals", SOURCE_DEFERRED },
	};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
		perturb_measure *m = add_measure(out, own[i].name);
		if (m)
			analyze_measure(r, m, own[i].kind, 0, PERTURB_VIEW_RAW, halts);
		if (m && !m->counted)
			snprintf(m->reason, sizeof m->reason, "not measured on this machine");
	}
	for (size_t e = 0; e < r->n_events; e++) {
		for (int v = 0; v < PERTURB_VIEW_COUNT; v++) {
			char name[80];
			snprintf(name, sizeof name, "%s:%s", r->events[e], perturb_view_name((perturb_view)v));
			perturb_measure *m = add_measure(out, name);
			if (!m)
				break;
			if (!counter_value_usable(&r->opened[e])) {
				m->counted = false;
				m->trend = PERTURB_TREND_UNCOUNTED;
				snprintf(m->reason, sizeof m->reason, "%s", r->opened[e].reason[0] ? r->opened[e].reason
				         : counter_state_name(r->opened[e].state));
				continue;
			}
			analyze_measure(r, m, SOURCE_EVENT, e, (perturb_view)v, halts);
			if (!m->counted)
				snprintf(m->reason, sizeof m->reason, "fewer than 2 baseline runs counted it");
			m->judged = m->counted && v == PERTURB_VIEW_EXCLUDED;
		}
	}
	/* Most to least affected, judged measures only. */
	for (size_t i = 0; i < out->n_measures; i++)
		if (out->measures[i].judged)
			out->order[out->n_order++] = i;
	for (size_t i = 1; i < out->n_order; i++)
		for (size_t j = i; j > 0 && compare_affected(out, out->order[j], out->order[j - 1]) < 0; j--) {
			size_t s = out->order[j];
			out->order[j] = out->order[j - 1];
			out->order[j - 1] = s;
		}
	for (size_t c = 0; c < d->n; c++)
		for (size_t i = 0; i < out->n_order; i++)
			out->significant_in_config[c] += out->measures[out->order[i]].cells[c].significant;

	/* Eq. 2.1 with x the baseline's wall time; h ≈ x/f with x its running
	 * time by the halt clock (the excluded task-clock when counted). */
	out->x_wall = out->measures[2].cells[0].stats.mean;
	out->x_clock = NAN;
	for (size_t i = 0; i < out->n_measures; i++)
		if (!strcmp(out->measures[i].name, "task-clock:excluded") && out->measures[i].counted)
			out->x_clock = out->measures[i].cells[0].stats.mean / 1e9;
	if (isnan(out->x_clock))
		out->x_clock = out->x_wall;
	for (size_t c = 0; c < d->n; c++) {
		const perturb_config *cfg = &d->configs[c];
		out->measured_wall[c] = out->measures[2].cells[c].stats.mean;
		out->measured_halts[c] = halts[c];
		out->predicted_wall[c] = cfg->baseline ? out->x_wall : perturb_total_time(out->x_wall, cfg->interval, cfg->halt);
		out->expected_halts[c] = cfg->baseline ? 0 : perturb_expected_halts(out->x_clock, cfg->interval);
	}

	/* f*: the smallest interval such that it and every longer one show no
	 * judged difference at any halt time. */
	double intervals[PERTURB_MAX_CONFIGS];
	size_t k = 0;
	for (size_t c = 1; c < d->n; c++) {
		bool seen = false;
		for (size_t i = 0; i < k; i++)
			seen |= intervals[i] == d->configs[c].interval;
		if (!seen)
			intervals[k++] = d->configs[c].interval;
	}
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && intervals[j] < intervals[j - 1]; j--) {
			double s = intervals[j];
			intervals[j] = intervals[j - 1];
			intervals[j - 1] = s;
		}
	out->have_f_star = false;
	for (size_t i = k; i-- > 0;) {
		bool clean = true;
		for (size_t c = 1; c < d->n; c++)
			if (d->configs[c].interval == intervals[i] && out->significant_in_config[c] > 0)
				clean = false;
		if (!clean)
			break;
		out->have_f_star = true;
		out->f_star = intervals[i];
	}
	out->reference_rate = reference_rate;
	out->buffer_records = out->have_f_star && reference_rate > 0 ? out->f_star * reference_rate : NAN;
}
