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
#include "perturb/perturb.h"
#include "core/stats.h"

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
	SOURCE_HALTED, SOURCE_DEFERRED, SOURCE_RUNNING, SOURCE_HALTED_CPU, SOURCE_PREEMPTIONS,
	SOURCE_OUTSIDE } source_kind;

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
	case SOURCE_RUNNING: return run->running_seconds > 0 ? run->running_seconds : NAN;
	case SOURCE_HALTED_CPU: return run->halted_cpu_seconds;
	case SOURCE_PREEMPTIONS: return (double)run->halt_preemptions;
	/* The program's running time outside the handler's body. */
	case SOURCE_OUTSIDE: return run->running_seconds > 0 ? run->running_seconds - run->halted_cpu_seconds : NAN;
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

/* cost: subtracted h times from every run's value (the agent's own cost per
 * halt, for the EVENT:program measures; 0 otherwise). */
static void analyze_measure(const perturb_result *r, perturb_measure *m, source_kind kind, size_t event,
                            perturb_view view, const double *halts, double cost)
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
			double v = run_value(r, &r->runs[i], kind, event, view) - cost * (double)r->runs[i].halts;
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

static const perturb_measure *find_measure(const perturb_analysis *a, const char *name)
{
	for (size_t i = 0; i < a->n_measures; i++)
		if (!strcmp(a->measures[i].name, name))
			return &a->measures[i];
	return NULL;
}

static bool is_running_time_event(const char *name)
{
	return !strcmp(name, "task-clock") || !strcmp(name, "cpu-clock");
}

/* The agent's own cost per halt in one measure: the least-squares slope of
 * its value against h over the baseline's runs and those of the t = 0
 * configurations (the handler's entry and exit only).  NaN without a t = 0
 * configuration that halted. */
static double fit_t0_cost(const perturb_result *r, source_kind kind, size_t event, perturb_view view)
{
	const perturb_design *d = &r->design;
	double *hx = malloc(r->n_runs * sizeof *hx), *hy = malloc(r->n_runs * sizeof *hy);
	size_t n = 0;
	bool halted = false;
	double slope = NAN;
	if (!hx || !hy)
		goto done;
	for (size_t i = 0; i < r->n_runs; i++) {
		const perturb_run *run = &r->runs[i];
		const perturb_config *c = &d->configs[run->config];
		if (!c->baseline && c->halt != 0)
			continue;
		double v = run_value(r, run, kind, event, view);
		if (isnan(v))
			continue;
		halted |= !c->baseline && run->halts > 0;
		hx[n] = (double)run->halts;
		hy[n++] = v;
	}
	double a, b, r2;
	if (halted && stats_linear_fit(hx, hy, n, &a, &b, &r2) == 0)
		slope = b;
done:
	free(hx);
	free(hy);
	return slope;
}

/* f*: the smallest interval such that it and every longer one show no
 * significant difference at any halt time (significant[c] per config). */
static bool f_star_of(const perturb_design *d, const size_t *significant, double *out)
{
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
	bool have = false;
	for (size_t i = k; i-- > 0;) {
		bool clean = true;
		for (size_t c = 1; c < d->n; c++)
			if (d->configs[c].interval == intervals[i] && significant[c] > 0)
				clean = false;
		if (!clean)
			break;
		have = true;
		*out = intervals[i];
	}
	return have;
}

double perturb_bus_rate(uint64_t fills, uint64_t writebacks, double running_seconds)
{
	if (!(running_seconds > 0))
		return NAN;
	return ((double)fills + (double)writebacks) / running_seconds;
}

void perturb_analysis_rates(perturb_analysis *a, double reference_rate, double bus_rate)
{
	a->reference_rate = reference_rate > 0 ? reference_rate : 0;
	a->bus_rate = bus_rate > 0 ? bus_rate : 0;
	a->buffer_records = a->have_f_star && a->reference_rate > 0 ? a->f_star * a->reference_rate : NAN;
	a->buffer_bus_transactions = a->have_f_star && a->bus_rate > 0 ? a->f_star * a->bus_rate : NAN;
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
		{ "running-seconds", SOURCE_RUNNING }, { "halted-cpu-seconds", SOURCE_HALTED_CPU },
		{ "halt-preemptions", SOURCE_PREEMPTIONS },
	};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
		perturb_measure *m = add_measure(out, own[i].name);
		if (m)
			analyze_measure(r, m, own[i].kind, 0, PERTURB_VIEW_RAW, halts, 0);
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
			analyze_measure(r, m, SOURCE_EVENT, e, (perturb_view)v, halts, 0);
			if (!m->counted)
				snprintf(m->reason, sizeof m->reason, "fewer than 2 baseline runs counted it");
			m->judged = m->counted && v == PERTURB_VIEW_EXCLUDED;
		}
	}
	/* The agent's own cost per halt: the program's running time outside the
	 * handler, fitted over the baseline and the t = 0 configurations (by
	 * task-clock's excluded view where counted, else by the agent's own
	 * thread clock).  The running-time events are judged less that cost
	 * (EVENT:program): it is the agent's time, not the program's. */
	out->agent_cost_seconds = NAN;
	for (size_t e = 0; e < r->n_events && isnan(out->agent_cost_seconds); e++)
		if (!strcmp(r->events[e], "task-clock") && counter_value_usable(&r->opened[e])) {
			out->agent_cost_seconds = fit_t0_cost(r, SOURCE_EVENT, e, PERTURB_VIEW_EXCLUDED) / 1e9;
			snprintf(out->agent_cost_from, sizeof out->agent_cost_from, "task-clock:excluded");
		}
	if (isnan(out->agent_cost_seconds)) {
		out->agent_cost_seconds = fit_t0_cost(r, SOURCE_OUTSIDE, 0, PERTURB_VIEW_RAW);
		snprintf(out->agent_cost_from, sizeof out->agent_cost_from, "running time outside the handler");
	}
	if (isnan(out->agent_cost_seconds))
		out->agent_cost_from[0] = 0;
	bool program_view[PERTURB_MAX_MEASURES] = { false };
	for (size_t e = 0; e < r->n_events; e++) {
		if (!is_running_time_event(r->events[e]) || !counter_value_usable(&r->opened[e]))
			continue;
		double cost = fit_t0_cost(r, SOURCE_EVENT, e, PERTURB_VIEW_EXCLUDED);
		if (isnan(cost))
			continue;
		char name[80];
		snprintf(name, sizeof name, "%s:excluded", r->events[e]);
		const perturb_measure *excluded = find_measure(out, name);
		snprintf(name, sizeof name, "%s:program", r->events[e]);
		perturb_measure *m = add_measure(out, name);
		if (!m || !excluded || !excluded->counted)
			continue;
		analyze_measure(r, m, SOURCE_EVENT, e, PERTURB_VIEW_EXCLUDED, halts, cost);
		m->judged = m->counted;
		if (m->judged) {
			/* judged in place of the excluded view */
			size_t excluded_index = (size_t)(excluded - out->measures);
			out->measures[excluded_index].judged = false;
			program_view[excluded_index] = true;
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

	/* Eq. 2.1 with the halts counted (x/f is the number of halts; x a wall
	 * time on a CPU the program does not own counts halts that never
	 * happen): running time x_running + h·(t + agent cost) against the
	 * measured running time, and the same served at the baseline's share of
	 * the CPU against the wall time.  h ≈ x/(f −
	 * agent cost) with x the baseline's running time by the halt clock (the
	 * excluded task-clock when counted). */
	const perturb_measure *wall = find_measure(out, "wall-seconds"), *running = find_measure(out, "running-seconds");
	out->x_wall = wall->cells[0].stats.mean;
	out->x_running = running && running->counted ? running->cells[0].stats.mean : NAN;
	out->x_clock = NAN;
	const perturb_measure *clock = find_measure(out, "task-clock:excluded");
	if (clock && clock->counted)
		out->x_clock = clock->cells[0].stats.mean / 1e9;
	if (isnan(out->x_clock))
		out->x_clock = isnan(out->x_running) ? out->x_wall : out->x_running;
	double cost = isnan(out->agent_cost_seconds) || out->agent_cost_seconds < 0 ? 0 : out->agent_cost_seconds;
	for (size_t c = 0; c < d->n; c++) {
		const perturb_config *cfg = &d->configs[c];
		double sum_halts = 0, sum_wall = 0, sum_cpu = 0, sum_preempted = 0, sum_waited = 0;
		for (size_t i = 0; i < r->n_runs; i++)
			if (r->runs[i].config == c) {
				sum_halts += (double)r->runs[i].halts;
				sum_wall += r->runs[i].halted_seconds;
				sum_cpu += r->runs[i].halted_cpu_seconds;
				sum_preempted += (double)r->runs[i].halt_preemptions;
				sum_waited += (double)r->runs[i].halt_waits;
			}
		out->halt_length[c] = sum_halts > 0 ? sum_wall / sum_halts : NAN;
		out->halt_cpu[c] = sum_halts > 0 ? sum_cpu / sum_halts : NAN;
		out->halt_preemptions[c] = sum_halts > 0 ? sum_preempted / sum_halts : NAN;
		out->halt_waits[c] = sum_halts > 0 ? sum_waited / sum_halts : NAN;
		out->measured_wall[c] = wall->cells[c].stats.mean;
		out->measured_halts[c] = halts[c];
		out->measured_running[c] = running && running->counted ? running->cells[c].stats.mean : NAN;
		double h = cfg->baseline ? 0 : halts[c];
		double length = h > 0 ? out->halt_length[c] : 0;
		/* Wall time is running time served at the program's share of its
		 * CPU, the baseline's x_running / x_wall (1 on a CPU it owns, where
		 * this is Eq. 2.1 itself).  The halts' measured wall length is not
		 * added: on a shared CPU it holds time the program would have waited
		 * for its CPU anyway. */
		out->predicted_wall[c] = out->x_running > 0 ? out->x_wall * (out->x_running + h * (cfg->halt + cost)) / out->x_running
		                                            : out->x_wall + h * (length + cost);
		out->predicted_running[c] = out->x_running + h * (cfg->halt + cost);
		/* The halt clock counts the agent's entry and exit too (the sampler
		 * is paused only inside the handler): f of clock holds f − cost of
		 * the program's own running time. */
		out->expected_halts[c] = cfg->baseline ? 0 : perturb_expected_halts(out->x_clock,
		                                         cost < cfg->interval ? cfg->interval - cost : cfg->interval);
	}

	out->have_f_star = f_star_of(d, out->significant_in_config, &out->f_star);
	/* The same without the agent's cost taken out: the excluded views judged. */
	size_t with_agent[PERTURB_MAX_CONFIGS] = { 0 };
	for (size_t c = 0; c < d->n; c++)
		for (size_t i = 0; i < out->n_measures; i++) {
			const perturb_measure *m = &out->measures[i];
			bool judged_with_agent = (m->judged && !strstr(m->name, ":program")) || program_view[i];
			if (judged_with_agent && m->counted)
				with_agent[c] += m->cells[c].significant;
		}
	out->have_f_star_with_agent = f_star_of(d, with_agent, &out->f_star_with_agent);
	out->f_star_bounded_by_agent = out->have_f_star && cost > 0 && out->f_star <= 4 * cost;
	perturb_analysis_rates(out, reference_rate, 0);
}
