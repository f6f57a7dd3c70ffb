/* The `plumb loaded` report: metadata, one row per point, and a row of
 * skipped cells saying why when no generator could run; then the checks
 * table (the idle point against lat's loop, and whether the rise can be
 * queueing). */
#include <math.h>
#include <stdio.h>
#include "loaded/loaded.h"
#include "core/parse.h"

#define LOADED_COLUMNS 9

static void add_checks(const loaded_config *config, const loaded_point *points, size_t count,
                       const loaded_reference *reference, output_report *r)
{
	char size[32], detail[640];
	format_size(config->chase_bytes, size, sizeof size);
	output_table *t = output_table_add(r, "checks", "Checks: idle against plumb lat, and whether the rise can be queueing");
	output_column(t, "check", NULL, 0);
	output_column(t, "verdict", NULL, 0);
	output_column(t, "measured", "ns", 1);
	output_column(t, "reference", "ns", 1);
	output_column(t, "ratio", NULL, 2);
	output_column(t, "at_bandwidth", "MB/s", 0);
	output_column(t, "detail", NULL, 0);

	loaded_idle_check idle;
	loaded_check_idle(points, count, reference, &idle);
	output_row(t);
	output_cell_text(t, "idle");
	if (idle.checked) {
		output_cell_text(t, idle.agrees ? "agrees" : "disagrees");
		output_cell_real(t, idle.idle_ns);
		output_cell_real(t, idle.reference_ns);
		output_cell_real(t, idle.ratio);
		output_cell_real(t, 0);
		snprintf(detail, sizeof detail,
		         "idle point %.1f ns against %.1f ns from plumb lat's measuring loop (short samples, median) on the same "
		         "%s random chain (%s), same CPU, before any generator started; %s",
		         idle.idle_ns, idle.reference_ns, size, reference->pages,
		         idle.agrees ? "they agree within 25%" :
		         "they disagree by more than 25%: the idle point was disturbed (another program on the latency CPU, "
		         "or the host), so read the curve's rise, not its level");
		output_cell_text(t, detail);
		output_note(r, "idle check: %s", detail);
	} else {
		const char *why = !reference ? "the reference was not measured"
		                  : !reference->measured ? reference->why_not
		                  : "no idle point";
		for (int i = 0; i < 5; i++)
			output_cell_status(t, "unsupported", why);
		output_cell_text(t, "");
	}

	loaded_queueing_check q;
	loaded_check_queueing(points, count, (double)config->line_bytes, &q);
	output_row(t);
	output_cell_text(t, "queueing");
	if (q.checked) {
		output_cell_text(t, q.step_not_queueing ? "step-not-queueing" : "consistent");
		const loaded_point *w = &points[q.worst_index];
		output_cell_real(t, w->latency_ns);
		if (isfinite(q.worst_bound_ns)) {
			output_cell_real(t, q.worst_bound_ns);
			output_cell_real(t, w->latency_ns / q.worst_bound_ns);
		} else {
			output_cell_status(t, "unsupported", "this load saturates the memory system at the largest service time the data allow: any latency is possible");
			output_cell_status(t, "unsupported", "no bound at this load");
		}
		output_cell_real(t, q.worst_bandwidth_mb_s);
		if (q.step_not_queueing)
			snprintf(detail, sizeof detail,
			         "at %.0f MB/s of generator traffic latency rose %.0f ns over idle, to %.1f ns; Hristea's queueing model "
			         "(1997) allows at most %.1f ns there, even with the largest service time the highest load allows "
			         "(%.2f ns): a step this size cannot be queueing behind the generators' traffic; it comes from "
			         "something sharing the latency thread's core or time (an SMT sibling, the host's scheduling, a "
			         "clock change) or from memory traffic the generators did not make (other programs or guests)",
			         q.worst_bandwidth_mb_s, q.worst_rise_ns, w->latency_ns, q.worst_bound_ns, q.service_bound_ns);
		else
			snprintf(detail, sizeof detail,
			         "every point is within %.0f ns (20%% of idle) of what Hristea's queueing model (1997) allows at its "
			         "load with the largest service time the highest load allows (%.2f ns)",
			         q.tolerance_ns, q.service_bound_ns);
		output_cell_text(t, detail);
		output_note(r, "queueing check: %s", detail);
	} else {
		for (int i = 0; i < 5; i++)
			output_cell_status(t, "unsupported", q.why_not);
		output_cell_text(t, "");
	}
}

void loaded_report(const loaded_config *config, const timer_calibration *timer, const loaded_point *points,
                   size_t count, const loaded_reference *reference, int cpus_available, output_report *r)
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
	output_meta_integer(r, "chunk_loads", (int64_t)loaded_chunk_loads(config));
	if (reference && reference->pages[0])
		output_meta_text(r, "pages_obtained", reference->pages);
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
	output_column(t, "latency_p10", "ns", 1);
	output_column(t, "preempted", "%", 1);
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
		output_cell_real(t, points[i].latency_p10_ns);
		output_cell_real(t, points[i].chunks ? 100.0 * (double)points[i].chunks_preempted / (double)points[i].chunks : NAN);
	}
	if (config->generators == 0) {
		output_row(t);
		output_cell_status(t, "skipped", cpus_available < 2 ? "needs 2 CPUs: one latency thread and at least one "
		                                                 "generator; this process may use 1"
		                                               : "no generators requested (--generators 0)");
		for (int i = 0; i < LOADED_COLUMNS - 1; i++)
			output_cell_status(t, "skipped", cpus_available < 2 ? "needs 2 CPUs: one latency thread and at least one "
			                                                 "generator; this process may use 1"
			                                               : "no generators requested (--generators 0)");
		output_note(r, "only the idle point was measured: %s",
		            cpus_available < 2 ? "a single CPU cannot run a generator beside the latency thread"
		                          : "no generators were requested");
	}
	output_note(r, "generator bandwidth counts %s bytes moved only while the latency thread was timing "
	               "(flag up), divided by the timed interval", loaded_pattern_name(config->pattern));
	output_note(r, "latency is the median over chunks of %zu loads, leaving out chunks during which the latency thread "
	               "was switched out (column preempted): a long sample timed whole takes in other programs' time slices",
	            loaded_chunk_loads(config));
	add_checks(config, points, count, reference, r);
}
