/* plumb stat --calibrate: an empty region counted through each backend (and
 * perf's two ways of reading), as one report (src/counters/counter_stat.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "counters/counter_stat.h"

static void calibration_rows(output_table *bias, output_table *cost, const char *label,
                             const char *const *events, size_t n, const counter_calibration *c)
{
	for (size_t e = 0; e < n; e++) {
		output_row(bias);
		output_cell_text(bias, label);
		output_cell_text(bias, events[e]);
		const counter_bias *b = &c->bias[e];
		if (b->state != COUNTER_OK) {
			for (int k = 0; k < 4; k++)
				output_cell_status(bias, counter_state_name(b->state), b->reason);
			continue;
		}
		output_cell_real(bias, b->mean);
		output_cell_real(bias, b->stddev);
		output_cell_real(bias, b->min);
		output_cell_real(bias, b->max);
	}
	output_row(cost);
	output_cell_text(cost, label);
	output_cell_text(cost, c->read_method);
	const double costs[3] = { c->start_ns, c->stop_ns, c->read_ns };
	for (int k = 0; k < 3; k++) {
		if (c->cost_state != COUNTER_OK)
			output_cell_status(cost, counter_state_name(c->cost_state), c->cost_reason);
		else if (isnan(costs[k]))
			output_cell_status(cost, "unsupported", "no more than the timer's own cost");
		else
			output_cell_real(cost, costs[k]);
	}
	output_cell_integer(cost, (int64_t)c->iterations);
}

output_report *counter_stat_calibration_report(const char *backend, const char *const *events, size_t n,
                                               const counter_options *base, size_t iterations, size_t *calibrated)
{
	output_report *report = output_report_new("stat");
	output_meta_text(report, "mode", "calibrate");
	output_meta_integer(report, "iterations", (int64_t)iterations);
	output_table *bias = output_table_add(report, "bias", "Events counted in an empty region (start; stop; read)");
	output_column(bias, "backend", NULL, 0);
	output_column(bias, "event", NULL, 0);
	output_column(bias, "mean", NULL, 3);
	output_column(bias, "stddev", NULL, 3);
	output_column(bias, "min", NULL, 0);
	output_column(bias, "max", NULL, 0);
	output_table *cost = output_table_add(report, "cost", "Cost of one call (median, clock overhead subtracted)");
	output_column(cost, "backend", NULL, 0);
	output_column(cost, "read_method", NULL, 0);
	output_column(cost, "start", "ns", 0);
	output_column(cost, "stop", "ns", 0);
	output_column(cost, "read", "ns", 0);
	output_column(cost, "iterations", NULL, 0);
	static const struct { const char *label, *backend; bool rdpmc; } variants[] = {
		{ "perf", "perf", true }, { "perf/read()", "perf", false }, { "papi", "papi", false },
	};
	*calibrated = 0;
	plumb_status status;
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		if (backend && strcmp(backend, variants[v].backend))
			continue;
		counter_options options = *base;
		options.no_rdpmc = !variants[v].rdpmc;
		counter_calibration c;
		if (counter_calibrate(variants[v].backend, events, n, &options, iterations, &c, &status) != 0) {
			output_note(report, "%s: unsupported: %s", variants[v].label, status.message);
			continue;
		}
		(*calibrated)++;
		calibration_rows(bias, cost, variants[v].label, events, n, &c);
		if (variants[v].rdpmc && strcmp(c.read_method, "rdpmc"))
			output_note(report, "perf: rdpmc unsupported here, reads fell back to read(): no event of the "
			            "set was on a hardware counter (software events never are; %s)",
			            access("/sys/bus/event_source/devices/cpu", F_OK) ? "this machine has no cpu PMU"
			                                                                 : "check /sys/bus/event_source/devices/cpu/rdpmc");
	}
	return report;
}
