/* The `plumb loaded` report: metadata, one row per point, and a row of
 * skipped cells saying why when no generator could run. */
#include <stdio.h>
#include "plumb/loaded.h"
#include "plumb/parse.h"

void loaded_report(const loaded_config *config, const timer_calibration *timer, const loaded_point *points,
                   size_t count, int cpus_available, output_report *r)
{
	char buffer[64];
	output_meta_integer(r, "latency_cpu", config->latency_cpu);
	output_meta_text(r, "latency_cpu_choice", config->latency_cpu_choice ? config->latency_cpu_choice : "given");
	output_meta_integer(r, "generators", config->generators);
	output_meta_text(r, "pattern", loaded_pattern_name(config->pattern));
	output_meta_text(r, "chase_size", format_size(config->chase_bytes, buffer, sizeof buffer));
	output_meta_text(r, "generator_size", format_size(config->generator_bytes, buffer, sizeof buffer));
	output_meta_integer(r, "line_bytes", (int64_t)config->line_bytes);
	output_meta_integer(r, "loads_per_sample", (int64_t)config->loads_per_sample);
	output_meta_integer(r, "samples", config->samples);
	output_meta_text(r, "timer", timer->source == TIMER_TSC ? "tsc" : "clock_gettime");
	output_table *t = output_table_add(r, "loaded", "Latency against generator bandwidth (idle, then delays falling to 0)");
	output_column(t, "delay", "iterations", 0);
	output_column(t, "generators", NULL, 0);
	output_column(t, "generator_bandwidth", "MB/s", 0);
	output_column(t, "latency", "ns", 1);
	output_column(t, "latency_min", "ns", 1);
	output_column(t, "latency_thread_bandwidth", "MB/s", 0);
	output_column(t, "total_bandwidth", "MB/s", 0);
	for (size_t i = 0; i < count; i++) {
		output_row(t);
		if (points[i].idle)
			output_cell_text(t, "idle");
		else
			output_cell_integer(t, points[i].delay);
		output_cell_integer(t, points[i].generators);
		output_cell_real(t, points[i].generator_mb_s);
		output_cell_real(t, points[i].latency_ns);
		output_cell_real(t, points[i].latency_min_ns);
		output_cell_real(t, points[i].latency_thread_mb_s);
		output_cell_real(t, points[i].total_mb_s);
	}
	if (config->generators == 0) {
		output_row(t);
		output_cell_status(t, "skipped", cpus_available < 2 ? "needs 2 CPUs: one latency thread and at least one "
		                                                 "generator; this process may use 1"
		                                               : "no generators requested (--generators 0)");
		for (int i = 0; i < 6; i++)
			output_cell_status(t, "skipped", cpus_available < 2 ? "needs 2 CPUs: one latency thread and at least one "
			                                                 "generator; this process may use 1"
			                                               : "no generators requested (--generators 0)");
		output_note(r, "only the idle point was measured: %s",
		            cpus_available < 2 ? "a single CPU cannot run a generator beside the latency thread"
		                          : "no generators were requested");
	}
	output_note(r, "generator bandwidth counts %s bytes moved only while the latency thread was timing "
	               "(flag up), divided by the timed interval", loaded_pattern_name(config->pattern));
}
