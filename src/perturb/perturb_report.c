/* The report of a halting experiment: tables configurations, runs,
 * statistics, events (most to least affected), calibration; the conclusion
 * in the metadata and notes.  Schema in docs/output-schema.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "perturb/perturb.h"

static void cell_value(output_table *t, const counter_value *v)
{
	if (counter_value_usable(v))
		output_cell_real(t, v->value);
	else
		output_cell_status(t, counter_state_name(v->state), v->reason[0] ? v->reason : counter_state_name(v->state));
}

static void cell_real_or(output_table *t, double value, const char *status, const char *reason)
{
	if (isfinite(value))
		output_cell_real(t, value);
	else
		output_cell_status(t, status, reason);
}

int perturb_report_build(const perturb_result *r, const perturb_analysis *a, output_report *report,
                         plumb_status *status)
{
	(void)status;
	const perturb_design *d = &r->design;
	char text[256];
	output_meta_text(report, "program", r->command_text);
	output_meta_text(report, "design", d->name);
	output_meta_integer(report, "configurations", (int64_t)d->n);
	output_meta_integer(report, "runs_per_configuration", (int64_t)r->options.runs);
	output_meta_integer(report, "cpu", r->cpu);
	output_meta_text(report, "halt_clock", r->clock);
	output_meta_real(report, "spin_iterations_per_second", r->spin_iterations_per_second);
	snprintf(text, sizeof text, "%llu,%llu,%llu", (unsigned long long)r->options.footprint.lines,
	         (unsigned long long)r->options.footprint.pages, (unsigned long long)r->options.footprint.code_bytes);
	output_meta_text(report, "footprint", text);
	output_meta_real(report, "elapsed_seconds", r->elapsed_seconds);
	output_meta_real(report, "baseline_wall_seconds", a->x_wall);
	output_meta_real(report, "baseline_running_seconds", a->x_clock);
	if (isfinite(a->x_running))
		output_meta_real(report, "baseline_thread_cpu_seconds", a->x_running);
	if (isfinite(a->agent_cost_seconds)) {
		output_meta_real(report, "agent_cost_seconds", a->agent_cost_seconds);
		output_meta_text(report, "agent_cost_from", a->agent_cost_from);
	} else {
		output_meta_text(report, "agent_cost_seconds", "not measured (no t = 0 configuration halted)");
	}
	if (a->have_f_star) {
		output_meta_real(report, "f_star_seconds", a->f_star);
	} else {
		output_meta_text(report, "f_star_seconds", "not reached");
	}
	if (a->have_f_star)
		output_meta_text(report, "f_star_bounded_by_agent", a->f_star_bounded_by_agent ? "yes" : "no");
	if (a->have_f_star_with_agent)
		output_meta_real(report, "f_star_with_agent_seconds", a->f_star_with_agent);
	else
		output_meta_text(report, "f_star_with_agent_seconds", "not reached");
	if (a->reference_rate > 0) {
		output_meta_real(report, "reference_rate", a->reference_rate);
		if (a->have_f_star)
			output_meta_real(report, "buffer_records", a->buffer_records);
	}
	if (a->bus_rate > 0) {
		output_meta_real(report, "bus_transaction_rate", a->bus_rate);
		if (a->have_f_star)
			output_meta_real(report, "buffer_bus_transactions", a->buffer_bus_transactions);
	}

	output_table *t = output_table_add(report, "configurations", "Configurations: halts and total time");
	output_column(t, "configuration", NULL, 0);
	output_column(t, "interval", "s", 6);
	output_column(t, "halt", "s", 6);
	output_column(t, "halts", NULL, 1);
	output_column(t, "expected_halts", NULL, 1);
	output_column(t, "wall", "s", 4);
	output_column(t, "predicted_wall", "s", 4);
	output_column(t, "wall_ratio", NULL, 3);
	output_column(t, "slowdown", NULL, 3);
	output_column(t, "halt_seconds", "s", 6);
	output_column(t, "significant_events", NULL, 0);
	output_column(t, "halt_length", "s", 6);
	output_column(t, "halt_cpu", "s", 6);
	output_column(t, "halt_preemptions", NULL, 3);
	output_column(t, "halt_waits", NULL, 3);
	output_column(t, "running", "s", 4);
	output_column(t, "predicted_running", "s", 4);
	output_column(t, "running_ratio", NULL, 3);
	for (size_t c = 0; c < d->n; c++) {
		const perturb_config *cfg = &d->configs[c];
		output_row(t);
		output_cell_text(t, cfg->name);
		output_cell_real(t, cfg->interval);
		output_cell_real(t, cfg->halt);
		output_cell_real(t, a->measured_halts[c]);
		output_cell_real(t, a->expected_halts[c]);
		output_cell_real(t, a->measured_wall[c]);
		output_cell_real(t, a->predicted_wall[c]);
		output_cell_real(t, a->predicted_wall[c] > 0 ? a->measured_wall[c] / a->predicted_wall[c] : NAN);
		output_cell_real(t, perturb_slowdown(cfg->baseline ? 0 : cfg->interval, cfg->halt));
		cell_real_or(t, r->calibrations[c].seconds_per_halt, "n/a", "the baseline does not halt");
		output_cell_integer(t, (int64_t)a->significant_in_config[c]);
		cell_real_or(t, a->halt_length[c], "n/a", "no halt");
		cell_real_or(t, a->halt_cpu[c], "n/a", "no halt");
		cell_real_or(t, a->halt_preemptions[c], "n/a", "no halt");
		cell_real_or(t, a->halt_waits[c], "n/a", "no halt");
		cell_real_or(t, a->measured_running[c], "unsupported", "the thread's CPU clock was not read");
		cell_real_or(t, a->predicted_running[c], "unsupported", "the thread's CPU clock was not read");
		cell_real_or(t, a->predicted_running[c] > 0 ? a->measured_running[c] / a->predicted_running[c] : NAN,
		             "unsupported", "the thread's CPU clock was not read");
	}

	t = output_table_add(report, "runs", "Every run, in the order they ran");
	output_column(t, "order", NULL, 0);
	output_column(t, "configuration", NULL, 0);
	output_column(t, "repetition", NULL, 0);
	output_column(t, "interval", "s", 6);
	output_column(t, "halt", "s", 6);
	output_column(t, "halts", NULL, 0);
	output_column(t, "wall", "s", 4);
	output_column(t, "halted", "s", 4);
	output_column(t, "tsc", "cycles", 0);
	output_column(t, "running", "s", 4);
	output_column(t, "halted_cpu", "s", 4);
	output_column(t, "longest_halt", "s", 6);
	output_column(t, "halt_preemptions", NULL, 0);
	output_column(t, "halt_waits", NULL, 0);
	output_column(t, "interrupts", NULL, 0);
	output_column(t, "deferred_signals", NULL, 0);
	for (size_t e = 0; e < r->n_events; e++) {
		output_column(t, r->events[e], !strcmp(r->events[e], "task-clock") ? "ns" : NULL, 0);
		snprintf(text, sizeof text, "%s:excluded", r->events[e]);
		output_column(t, text, !strcmp(r->events[e], "task-clock") ? "ns" : NULL, 0);
	}
	for (size_t i = 0; i < r->n_runs; i++) {
		const perturb_run *run = &r->runs[i];
		const perturb_config *cfg = &d->configs[run->config];
		output_row(t);
		output_cell_integer(t, (int64_t)run->order + 1);
		output_cell_text(t, cfg->name);
		output_cell_integer(t, (int64_t)run->repetition + 1);
		output_cell_real(t, cfg->interval);
		output_cell_real(t, cfg->halt);
		output_cell_integer(t, (int64_t)run->halts);
		output_cell_real(t, run->wall_seconds);
		output_cell_real(t, run->halted_seconds);
		output_cell_real(t, run->tsc_cycles);
		output_cell_real(t, run->running_seconds);
		output_cell_real(t, run->halted_cpu_seconds);
		output_cell_real(t, run->longest_halt_seconds);
		output_cell_integer(t, (int64_t)run->halt_preemptions);
		output_cell_integer(t, (int64_t)run->halt_waits);
		cell_real_or(t, run->interrupts, "unsupported", "/proc/interrupts has no column for this CPU");
		output_cell_integer(t, (int64_t)run->deferred_signals);
		for (size_t e = 0; e < r->n_events; e++) {
			cell_value(t, &run->raw[e]);
			cell_value(t, &run->excluded[e]);
		}
	}

	t = output_table_add(report, "statistics", "Per configuration and measure (95% CI, Student t)");
	output_column(t, "measure", NULL, 0);
	output_column(t, "configuration", NULL, 0);
	output_column(t, "n", NULL, 0);
	output_column(t, "mean", NULL, 2);
	output_column(t, "stddev", NULL, 2);
	output_column(t, "ci_low", NULL, 2);
	output_column(t, "ci_high", NULL, 2);
	output_column(t, "change", "%", 3);
	output_column(t, "significant", NULL, 0);
	output_column(t, "welch_p", NULL, 4);
	output_column(t, "welch_significant", NULL, 0);
	output_column(t, "needed_runs", NULL, 0);
	for (size_t i = 0; i < a->n_measures; i++) {
		const perturb_measure *m = &a->measures[i];
		for (size_t c = 0; c < d->n; c++) {
			const perturb_cell *cell = &m->cells[c];
			output_row(t);
			output_cell_text(t, m->name);
			output_cell_text(t, d->configs[c].name);
			if (!m->counted) {
				output_cell_integer(t, 0);
				for (int k = 0; k < 9; k++)
					output_cell_status(t, "unsupported", m->reason);
				continue;
			}
			output_cell_integer(t, (int64_t)cell->stats.n);
			cell_real_or(t, cell->stats.mean, "n/a", "no run counted it");
			cell_real_or(t, cell->stats.stddev, "n/a", "fewer than 2 runs");
			cell_real_or(t, cell->stats.ci_low, "n/a", "fewer than 2 runs");
			cell_real_or(t, cell->stats.ci_high, "n/a", "fewer than 2 runs");
			cell_real_or(t, cell->change_percent, "n/a", "the baseline mean is 0");
			if (c == 0) {
				output_cell_text(t, "baseline");
				output_cell_status(t, "n/a", "the baseline itself");
				output_cell_text(t, "baseline");
			} else {
				output_cell_text(t, cell->significant ? "yes" : "no");
				cell_real_or(t, cell->welch_p, "n/a", "fewer than 2 runs");
				output_cell_text(t, cell->welch_significant ? "yes" : "no");
			}
			cell_real_or(t, cell->needed_runs, "n/a", "mean 0 or too few runs");
		}
	}

	t = output_table_add(report, "events", "Measures, judged ones most to least affected");
	output_column(t, "rank", NULL, 0);
	output_column(t, "measure", NULL, 0);
	output_column(t, "judged", NULL, 0);
	output_column(t, "trend", NULL, 0);
	output_column(t, "significant_configurations", NULL, 0);
	output_column(t, "max_change", "%", 3);
	output_column(t, "slope_per_halt", NULL, 4);
	output_column(t, "slope_r2", NULL, 3);
	size_t rank = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		size_t count = pass == 0 ? a->n_order : a->n_measures;
		for (size_t k = 0; k < count; k++) {
			size_t i = pass == 0 ? a->order[k] : k;
			const perturb_measure *m = &a->measures[i];
			if (pass == 1 && m->judged)
				continue;
			output_row(t);
			if (pass == 0)
				output_cell_integer(t, (int64_t)++rank);
			else
				output_cell_empty(t);
			output_cell_text(t, m->name);
			output_cell_text(t, m->judged ? "yes" : "no");
			if (!m->counted) {
				output_cell_status(t, "unsupported", m->reason);
				for (int c = 0; c < 4; c++)
					output_cell_status(t, "unsupported", m->reason);
				continue;
			}
			output_cell_text(t, perturb_trend_name(m->trend));
			output_cell_integer(t, (int64_t)m->significant_configs);
			output_cell_real(t, m->max_change_percent);
			cell_real_or(t, m->slope_per_halt, "n/a", "the halts did not vary");
			cell_real_or(t, m->slope_r2, "n/a", "the halts did not vary");
		}
	}

	t = output_table_add(report, "calibration", "Events one halt adds (the handler alone)");
	output_column(t, "configuration", NULL, 0);
	output_column(t, "halt", "s", 6);
	output_column(t, "seconds_per_halt", "s", 6);
	output_column(t, "cpu_seconds_per_halt", "s", 6);
	for (size_t e = 0; e < r->n_events; e++)
		output_column(t, r->events[e], NULL, 3);
	for (size_t c = 1; c < d->n; c++) {
		output_row(t);
		output_cell_text(t, d->configs[c].name);
		output_cell_real(t, d->configs[c].halt);
		output_cell_real(t, r->calibrations[c].seconds_per_halt);
		output_cell_real(t, r->calibrations[c].cpu_seconds_per_halt);
		for (size_t e = 0; e < r->n_events; e++)
			if (!counter_value_usable(&r->opened[e]))
				output_cell_status(t, counter_state_name(r->opened[e].state), r->opened[e].reason);
			else
				cell_real_or(t, r->calibrations[c].per_halt[e], "not-counted", "the calibration did not count it");
	}

	/* Tallies and the conclusion, in words. */
	size_t judged = a->n_order, affected = 0;
	for (size_t k = 0; k < a->n_order; k++)
		affected += a->measures[a->order[k]].significant_configs > 0;
	output_note(report, "%zu of %zu judged events (counters disabled inside the handler) differ from the "
	            "baseline in at least one configuration (95%% CIs that do not overlap).", affected, judged);
	if (a->n_order > 0 && affected > 0) {
		char list[1024] = "";
		size_t used = 0;
		for (size_t k = 0; k < a->n_order && used < sizeof list - 100; k++) {
			const perturb_measure *m = &a->measures[a->order[k]];
			if (m->significant_configs == 0)
				break;
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s (%zu)", k ? ", " : "", m->name,
			                         m->significant_configs);
		}
		output_note(report, "Most to least affected: %s.", list);
	}
	if (a->have_f_star)
		output_note(report, "Halting every %g s or less often changed nothing measured significantly "
		            "(f* = %g s).", a->f_star, a->f_star);
	else
		output_note(report, "Even the longest interval tested changed some event significantly: no f* "
		            "in this design.");
	if (isfinite(a->agent_cost_seconds)) {
		char with[96];
		if (a->have_f_star_with_agent)
			snprintf(with, sizeof with, "f* = %g s", a->f_star_with_agent);
		else
			snprintf(with, sizeof with, "no f*");
		output_note(report, "The halting agent's own entry and exit (signal delivery, the sampler, "
		            "sigreturn) cost %.3g us of the program's running time per halt (measured at t = 0, "
		            "%s); it is subtracted from the running-time events before judging (EVENT:program). "
		            "Judged with it, %s.", 1e6 * a->agent_cost_seconds, a->agent_cost_from, with);
		if (a->f_star_bounded_by_agent)
			output_note(report, "f* = %g s is bounded by the agent, not found in the program: its own %.3g us "
			            "per halt is %.0f%% of that interval, and decides how often the program is halted "
			            "(h = x/(f - c)). Only longer intervals, or a cheaper halting agent, measure the "
			            "program there.", a->f_star, 1e6 * a->agent_cost_seconds,
			            100 * a->agent_cost_seconds / a->f_star);
	} else {
		output_note(report, "The halting agent's own cost per halt was not measured (no t = 0 configuration "
		            "halted): f* includes it, and cannot be told from it at intervals near that cost.");
	}
	/* How long the halts lasted: t of the program's CPU each, longer on the wall clock where
	 * the CPU was taken away in the middle of one. */
	double longest_ratio = 0;
	size_t at = 0;
	for (size_t c = 1; c < d->n; c++)
		if (d->configs[c].halt > 0 && isfinite(a->halt_length[c]) &&
		    a->halt_length[c] / d->configs[c].halt > longest_ratio) {
			longest_ratio = a->halt_length[c] / d->configs[c].halt;
			at = c;
		}
	if (at > 0 && longest_ratio > 1.1)
		output_note(report, "Every halt took its t of the program's CPU; on the wall clock they lasted longer "
		            "where the CPU was taken away mid-halt (%s: %.3g s per halt, %.2g involuntary and %.2g "
		            "voluntary context switches per halt; the rest of the excess is the virtual CPU itself "
		            "taken away, or waiting that is not a switch). Eq. 2.1 for wall time serves the running "
		            "time at the baseline's share of the CPU.", d->configs[at].name,
		            a->halt_length[at], a->halt_preemptions[at], a->halt_waits[at]);
	if (a->have_f_star && a->reference_rate > 0)
		output_note(report, "At %.4g CPU references per second that is a trace buffer of at least %.4g "
		            "CPU references.", a->reference_rate, a->buffer_records);
	if (a->have_f_star && a->bus_rate > 0)
		output_note(report, "At %.4g bus transactions per second (simulated line fills from memory and "
		            "write-backs, what a bus tracer records) that is a buffer of at least %.4g bus "
		            "transactions.", a->bus_rate, a->buffer_bus_transactions);
	return 0;
}
