/* plumb explain's report: the four sources side by side, per region. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "explain/explain.h"
#include "report/report.h"
#include "sim/sim_curve.h"

static void cell_count(output_table *table, bool have, uint64_t value, const char *reason)
{
	if (have)
		output_cell_integer(table, (int64_t)value);
	else
		output_cell_status(table, "unsupported", reason);
}

static const char *instrument_reason(const explain_result *r)
{
	return r->instrument_error[0] ? r->instrument_error : "plumbgrind saw no such region";
}

static const char *simulate_reason(const explain_result *r)
{
	return r->simulate_error[0] ? r->simulate_error : "the simulation saw no such region";
}

static const char *event_reason(const explain_result *r, const explain_region *region, size_t e)
{
	if (region == &r->regions[0] && r->program_counters_error[0])
		return r->program_counters_error;
	return r->event_reason[e][0] ? r->event_reason[e] : counter_state_name(region->counters[e].state);
}

static const char *predict_reason(const explain_result *r, const explain_region *region)
{
	if (!region->instrumented && r->instrument_error[0])
		return r->instrument_error;
	if (!region->simulated.done && r->simulate_error[0])
		return r->simulate_error;
	if (!r->have_machine && r->machine_error[0])
		return r->machine_error;
	return region->predicted.reason[0] ? region->predicted.reason : "not predicted";
}

static bool counter_counted(const explain_counter *c)
{
	return (c->state == COUNTER_OK || c->state == COUNTER_MULTIPLEXED) && c->n > 0;
}

/* An event is a column when it counted somewhere; otherwise it is listed
 * once, with its reason, in the "counters" table. */
static bool event_counted_anywhere(const explain_result *r, size_t e)
{
	for (size_t i = 0; i < r->region_count; i++)
		if (counter_counted(&r->regions[i].counters[e]))
			return true;
	return false;
}

/* The task-clock event's index, or -1. */
static int cpu_event(const explain_result *r)
{
	for (size_t e = 0; e < r->event_count; e++)
		if (!strcmp(r->events[e], "task-clock") || !strcmp(r->events[e], "perf::TASK-CLOCK"))
			return (int)e;
	return -1;
}

/* What the prediction is compared with: the CPU time of the region's
 * threads (task-clock) when it was counted, since the model predicts
 * execution, not waiting for a CPU that another program holds; the wall
 * time otherwise. */
double explain_region_compared_ns(const explain_result *r, const explain_region *region, bool *cpu)
{
	int e = cpu_event(r);
	*cpu = false;
	if (e >= 0 && counter_counted(&region->counters[e]) && region->counters[e].mean > 0) {
		*cpu = true;
		return region->counters[e].mean;
	}
	return region->runs > 0 ? region->wall.median : NAN;
}

static double ratio_of(const explain_result *r, const explain_region *region)
{
	bool cpu;
	double measured = explain_region_compared_ns(r, region, &cpu);
	if (!region->predicted.done || !(measured > 0))
		return NAN;
	return region->predicted.total_ns / measured;
}

static void add_regions(output_report *report, const explain_result *r)
{
	output_table *t = output_table_add(report, "regions", "The four sources per region (times summed over entries and threads)");
	output_column(t, "region", NULL, 0);
	output_column(t, "entries", NULL, 0);
	output_column(t, "runs", NULL, 0);
	/* The answer first, predicted beside measured and their ratio: last
	 * of seventeen columns, the ratio was off a screen's width in the page
	 * and the first column a narrow terminal left out. */
	output_column(t, "measured_ns", "ns", 0);
	output_column(t, "predicted_ns", "ns", 0);
	output_column(t, "ratio", "predicted/measured", 2);   /* cpu_ns, else measured_ns */
	output_column(t, "mean_ns", "ns", 0);
	output_column(t, "ci95_ns", "ns", 0);
	output_column(t, "best_ns", "ns", 0);
	output_column(t, "cpu_ns", "ns", 0);
	output_column(t, "cpu_best_ns", "ns", 0);
	output_column(t, "instructions", NULL, 0);
	output_column(t, "loads", NULL, 0);
	output_column(t, "stores", NULL, 0);
	output_column(t, "l1d_misses", NULL, 0);
	output_column(t, "l2_misses", NULL, 0);
	output_column(t, "llc_misses", NULL, 0);
	for (size_t e = 0; e < r->event_count; e++)
		if (event_counted_anywhere(r, e))
			output_column(t, r->events[e], NULL, 0);
	for (size_t i = 0; i < r->region_count; i++) {
		const explain_region *region = &r->regions[i];
		output_row(t);
		output_cell_text(t, region->name);
		output_cell_integer(t, (int64_t)region->entries);
		output_cell_integer(t, (int64_t)region->runs);
		const char *why = r->measure_note[0] ? r->measure_note : "the region did not run natively";
		if (region->runs > 0)
			output_cell_real(t, region->wall.median);
		else
			output_cell_status(t, "unsupported", why);
		if (region->predicted.done)
			output_cell_real(t, region->predicted.total_ns);
		else
			output_cell_status(t, "unsupported", predict_reason(r, region));
		output_cell_real(t, ratio_of(r, region));
		if (region->runs > 0) {
			output_cell_real(t, region->wall.mean);
			output_cell_real(t, region->wall.n > 1 ? region->wall.ci95 : NAN);
			output_cell_real(t, region->wall.min);
		} else {
			for (int c = 0; c < 3; c++)
				output_cell_status(t, "unsupported", why);
		}
		int cpu = cpu_event(r);
		for (int k = 0; k < 2; k++) {
			if (cpu >= 0 && counter_counted(&region->counters[cpu]))
				output_cell_real(t, k ? region->counters[cpu].min : region->counters[cpu].mean);
			else
				output_cell_status(t, "unsupported", cpu < 0 ? "task-clock is not among the events"
				                   : event_reason(r, region, (size_t)cpu));
		}
		static const instrument_counter exact[3] = { INSTRUMENT_INSTRUCTIONS, INSTRUMENT_LOADS, INSTRUMENT_STORES };
		for (int c = 0; c < 3; c++)
			cell_count(t, region->instrumented, region->counts.value[exact[c]], instrument_reason(r));
		for (int l = 0; l < 3; l++)
			cell_count(t, region->simulated.done, region->simulated.misses[l], simulate_reason(r));
		for (size_t e = 0; e < r->event_count; e++) {
			if (!event_counted_anywhere(r, e))
				continue;
			const explain_counter *c = &region->counters[e];
			if (counter_counted(c))
				output_cell_real(t, c->mean);
			else
				output_cell_status(t, counter_state_name(c->state), event_reason(r, region, e));
		}
	}
}

/* The share of the region's instructions in blocks llvm-mca priced (NaN
 * when the region ran none). */
static double priced_share(const explain_core *core)
{
	return core->instructions ? (double)core->priced_instructions / (double)core->instructions : NAN;
}

static void add_terms(output_report *report, const explain_result *r)
{
	output_table *t = output_table_add(report, "prediction", "The predicted time, term by term (docs/explain.md)");
	output_column(t, "region", NULL, 0);
	output_column(t, "compute_ns", "ns", 0);
	output_column(t, "ipc", "instructions/cycle", 2);
	output_column(t, "priced", "fraction", 2);
	output_column(t, "l2_ns", "ns", 0);
	output_column(t, "l3_ns", "ns", 0);
	output_column(t, "memory_ns", "ns", 0);
	output_column(t, "sequential", "fraction", 2);
	output_column(t, "chained", "fraction", 2);
	output_column(t, "transfer_ns", "ns", 0);
	output_column(t, "stall_ns", "ns", 0);
	output_column(t, "bandwidth_bound_ns", "ns", 0);
	output_column(t, "kernel_ns", "ns", 0);
	output_column(t, "predicted_ns", "ns", 0);
	output_column(t, "overlapped_ns", "ns", 0);
	output_column(t, "measured_ns", "ns", 0);
	for (size_t i = 0; i < r->region_count; i++) {
		const explain_region *region = &r->regions[i];
		const explain_prediction *p = &region->predicted;
		output_row(t);
		output_cell_text(t, region->name);
		if (!p->done) {
			for (int c = 0; c < 14; c++)
				output_cell_status(t, "unsupported", predict_reason(r, region));
		} else {
			output_cell_real(t, p->compute_ns);
			output_cell_real(t, p->ipc);
			/* the share of its instructions in blocks LLVM priced (the
			 * rest at their average, or all at 1.00 per cycle when none) */
			if (r->ipc_base > 0)
				output_cell_status(t, "unsupported", "--ipc gives the in-core rate");
			else if (!r->core_source[0])
				output_cell_status(t, "unsupported", r->core_error[0] ? r->core_error : "the blocks were not priced");
			else
				output_cell_real(t, priced_share(&region->core));
			for (int l = EXPLAIN_L2; l < EXPLAIN_LEVELS; l++)
				output_cell_real(t, p->latency_ns[l] + p->stream_ns[l]);
			output_cell_real(t, p->sequential);
			output_cell_real(t, p->chained);
			output_cell_real(t, p->transfer_ns);
			output_cell_real(t, p->stall_ns);
			output_cell_real(t, p->bandwidth_bound_ns);
			output_cell_real(t, p->kernel_ns);
			output_cell_real(t, p->total_ns);
			output_cell_real(t, p->overlapped_ns);
		}
		output_cell_real(t, region->runs > 0 ? region->wall.median : NAN);
	}
}

static void add_simulated(output_report *report, const explain_result *r)
{
	output_table *t = output_table_add(report, "simulated", "Simulated on this machine's caches, per region");
	output_column(t, "region", NULL, 0);
	output_column(t, "references", NULL, 0);
	output_column(t, "l1i_misses", NULL, 0);
	output_column(t, "l1d_misses", NULL, 0);
	output_column(t, "l2_misses", NULL, 0);
	output_column(t, "llc_misses", NULL, 0);
	output_column(t, "memory_reads", "lines", 0);
	output_column(t, "memory_writes", "lines", 0);
	output_column(t, "invalidations", NULL, 0);
	output_column(t, "transfers", NULL, 0);
	output_column(t, "upgrades", NULL, 0);
	output_column(t, "true_sharing", NULL, 0);
	output_column(t, "false_sharing", NULL, 0);
	for (size_t i = 0; i < r->region_count; i++) {
		const explain_region *region = &r->regions[i];
		const explain_simulated *s = &region->simulated;
		output_row(t);
		output_cell_text(t, region->name);
		uint64_t values[12] = { s->references, s->l1i_misses, s->misses[0], s->misses[1], s->misses[2],
		                        s->memory_reads, s->memory_writes, s->invalidations, s->transfers, s->upgrades,
		                        s->true_sharing, s->false_sharing };
		for (int c = 0; c < 12; c++)
			cell_count(t, s->done, values[c], simulate_reason(r));
	}
}

static counter_state event_state(const explain_result *r, size_t e)
{
	for (size_t i = 0; i < r->region_count; i++)
		if (r->regions[i].counters[e].observed)
			return r->regions[i].counters[e].state;
	return COUNTER_UNSUPPORTED;
}

static const char *event_reason_text(const explain_result *r, size_t e)
{
	return r->event_reason[e][0] ? r->event_reason[e] : "no region counted it";
}

/* The events no region counted, one row per distinct reason. */
static void add_counters(output_report *report, const explain_result *r)
{
	output_table *t = output_table_add(report, "counters", "Events this machine cannot count (each reason once)");
	output_column(t, "events", NULL, 0);
	output_column(t, "backend", NULL, 0);
	output_column(t, "state", NULL, 0);
	output_column(t, "reason", NULL, 0);
	bool done[COUNTER_MAX_EVENTS] = { false };
	for (size_t e = 0; e < r->event_count; e++) {
		if (done[e] || event_counted_anywhere(r, e))
			continue;
		char names[1024] = "";
		size_t used = 0;
		for (size_t k = e; k < r->event_count; k++) {
			if (done[k] || event_counted_anywhere(r, k) || event_state(r, k) != event_state(r, e) ||
			    strcmp(event_reason_text(r, k), event_reason_text(r, e)))
				continue;
			done[k] = true;
			int n = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", r->events[k]);
			if (n > 0 && (size_t)n < sizeof names - used)
				used += (size_t)n;
		}
		output_row(t);
		output_cell_text(t, names);
		output_cell_text(t, r->backend);
		output_cell_text(t, counter_state_name(event_state(r, e)));
		output_cell_text(t, event_reason_text(r, e));
	}
}

static void add_machine(output_report *report, const explain_result *r)
{
	output_table *t = output_table_add(report, "machine", "This machine, as the model uses it");
	output_column(t, "level", NULL, 0);
	output_column(t, "size_bytes", "bytes", 0);
	output_column(t, "latency_ns", "ns", 2);
	output_column(t, "bandwidth_gbps", "GB/s", 2);
	output_column(t, "mlp", "lines in flight", 1);
	const explain_machine *m = &r->machine;
	for (int l = 0; l < EXPLAIN_LEVELS; l++) {
		output_row(t);
		output_cell_text(t, explain_level_name((explain_level)l));
		if (m->size_bytes[l])
			output_cell_integer(t, (int64_t)m->size_bytes[l]);
		else
			output_cell_empty(t);
		if (!r->have_machine) {
			for (int c = 0; c < 3; c++)
				output_cell_status(t, "unsupported", r->machine_error);
			continue;
		}
		output_cell_real(t, m->latency_ns[l]);
		output_cell_real(t, m->bandwidth_gbps[l]);
		output_cell_real(t, m->mlp[l]);
	}
}

static void format_ns(char *buffer, size_t size, double ns)
{
	if (ns >= 1e9)
		snprintf(buffer, size, "%.3g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buffer, size, "%.3g ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buffer, size, "%.3g us", ns / 1e3);
	else
		snprintf(buffer, size, "%.3g ns", ns);
}

/* Which term dominates a prediction, in words. */
static const char *dominant_term(const explain_prediction *p)
{
	double terms[6] = { p->compute_ns, p->latency_ns[EXPLAIN_L2] + p->stream_ns[EXPLAIN_L2],
	                    p->latency_ns[EXPLAIN_L3] + p->stream_ns[EXPLAIN_L3],
	                    p->latency_ns[EXPLAIN_MEMORY] + p->stream_ns[EXPLAIN_MEMORY], p->bandwidth_bound_ns,
	                    p->kernel_ns };
	static const char *const names[6] = { "in-core time", "misses served by L2", "misses served by L3",
	                                      "misses served by memory", "memory bandwidth", "the kernel's page faults" };
	int best = 0;
	for (int i = 1; i < 6; i++)
		if (terms[i] > terms[best])
			best = i;
	return names[best];
}

static double counter_mean(const explain_result *r, const explain_region *region, const char *name)
{
	for (size_t e = 0; e < r->event_count; e++)
		if (!strcmp(r->events[e], name) && counter_counted(&region->counters[e]))
			return region->counters[e].mean;
	return NAN;
}

size_t explain_diagnose(const explain_result *r, const explain_region *region, char *out, size_t size)
{
	out[0] = 0;
	const explain_prediction *p = &region->predicted;
	bool cpu;
	double measured = explain_region_compared_ns(r, region, &cpu);
	if (!p->done || !isfinite(measured) || measured <= 0)
		return 0;
	double ratio = p->total_ns / measured;
	if (ratio >= 0.8 && ratio <= 1.25)
		return 0;
	size_t used = 0;
#define SAY(...) do { int n_ = snprintf(out + used, size - used, __VA_ARGS__); \
	if (n_ > 0) used = (size_t)n_ < size - used ? used + (size_t)n_ : size - 1; } while (0)
	SAY("%s: predicted/measured %.2f; the prediction is mostly %s", region->name, ratio, dominant_term(p));
	double faults = counter_mean(r, region, "page-faults");
	double switches = counter_mean(r, region, "context-switches");
	double migrations = counter_mean(r, region, "cpu-migrations");
	double task = counter_mean(r, region, "task-clock");
	double wall = region->runs > 0 ? region->wall.median : NAN;
	/* the in-core time of blocks llvm-mca did not price is a guess
	 * (their average, or 1.00 per cycle when none was priced) */
	double priced = priced_share(&region->core);
	if (r->ipc_base <= 0 && r->core_source[0] && priced < 0.9 && p->compute_ns > 0.3 * p->total_ns)
		SAY("; %.0f%% of its instructions ran in blocks llvm-mca did not price (%s)", 100.0 * (1 - priced),
		    priced > 0 ? "taken at the priced blocks' average" : "taken at 1.00 per cycle");
	if (ratio < 1) {
		/* the program took longer than the model says: what it left out */
		if (isfinite(faults) && faults >= 1 && !(p->kernel_ns > 0)) {
			/* a minor fault costs about 0.5-2 us of kernel time (zeroing a page, the fault path) */
			double kernel = faults * 1000;
			SAY("; suspect the kernel: %.0f page faults a run, about %.2g ms at ~1 us each (%.0f%% of the "
			    "measured time), not in the prediction: their cost could not be measured", faults, kernel / 1e6,
			    100 * kernel / measured);
		}
		double l3 = p->latency_ns[EXPLAIN_L3] + p->stream_ns[EXPLAIN_L3];
		if (l3 > 0.2 * p->total_ns && r->have_machine)
			SAY("; suspect the L3: %.0f%% of the prediction is lines the simulated L3 (%.0f MiB, from sysfs) "
			    "serves at its measured bandwidth, but a virtual machine's share of it may be far smaller, and "
			    "those lines then come from memory (%.1f against %.1f GB/s here)", 100 * l3 / p->total_ns,
			    (double)r->machine.size_bytes[EXPLAIN_L3] / 1048576.0, r->machine.bandwidth_gbps[EXPLAIN_MEMORY],
			    r->machine.bandwidth_gbps[EXPLAIN_L3]);
		if (isfinite(switches) && switches >= 1)
			SAY("; suspect preemption: %.0f context switches a run", switches);
		if (isfinite(migrations) && migrations >= 1)
			SAY("; %.0f CPU migrations a run (caches refilled elsewhere)", migrations);
		if (p->stall_ns > 0.3 * p->total_ns && p->chained < 0.5)
			SAY("; or a dependency chain the block model cannot see: %.0f%% of the prediction is misses assumed "
			    "to overlap by the measured memory-level parallelism", 100 * p->stall_ns / p->total_ns);
		if (p->ipc_from_code && p->compute_ns > 0.5 * p->total_ns)
			SAY("; the in-core time assumes every load hits the L1 and every branch is predicted (llvm-mca)");
		if (!cpu && isfinite(task) && isfinite(wall) && wall > 1.25 * task)
			SAY("; wall time %.2g ms against %.2g ms of CPU time: the program waited or was preempted", wall / 1e6,
			    task / 1e6);
	} else {
		/* the program ran faster than the model says: what it overlapped */
		if (p->transfer_ns > 0.5 * p->total_ns)
			SAY("; suspect the bandwidths: the levels' one-thread read bandwidth was measured at the start "
			    "(plumb bw); under load, or with more of the lines hitting than the simulated caches say, the "
			    "transfers take less");
		if (p->stall_ns > 0.3 * p->total_ns)
			SAY("; suspect the latency terms: %.0f%% of the prediction is irregular misses; the hardware "
			    "prefetched or overlapped more of them (sequential %.2f, chained %.2f)",
			    100 * p->stall_ns / p->total_ns, p->sequential, p->chained);
		if (p->compute_ns > 0.5 * p->total_ns)
			SAY("; suspect the in-core time (%s IPC %.2f)", p->ipc_from_code ? "llvm-mca's" : "the base", p->ipc);
		if (isfinite(task) && isfinite(wall) && cpu && wall > 1.25 * task)
			SAY("; compared with CPU time (%.2g ms; wall %.2g ms)", task / 1e6, wall / 1e6);
	}
#undef SAY
	return used;
}

static void add_disagreement(output_report *report, const explain_result *r)
{
	const explain_region *worst = NULL;
	double worst_distance = -1;
	for (size_t i = 0; i < r->region_count; i++) {
		double ratio = ratio_of(r, &r->regions[i]);
		if (!isfinite(ratio) || ratio <= 0)
			continue;
		double distance = fabs(log(ratio));
		if (distance > worst_distance) {
			worst_distance = distance;
			worst = &r->regions[i];
		}
	}
	if (!worst) {
		output_note(report, "predicted and measured: no region has both (see the unsupported cells' reasons)");
		return;
	}
	char predicted[32], measured[32];
	bool cpu;
	format_ns(predicted, sizeof predicted, worst->predicted.total_ns);
	format_ns(measured, sizeof measured, explain_region_compared_ns(r, worst, &cpu));
	double ratio = ratio_of(r, worst);
	output_note(report, "predicted and measured disagree most in %s: predicted %s, measured %s%s (predicted/measured "
	            "%.2f; the prediction is mostly %s)", worst->name, predicted, measured, cpu ? " of CPU time" : "",
	            ratio, dominant_term(&worst->predicted));
	/* every region off by more than 25%: the term suspected, and the evidence */
	for (size_t i = 0; i < r->region_count; i++) {
		char why[2048];
		if (explain_diagnose(r, &r->regions[i], why, sizeof why))
			output_note(report, "why: %s", why);
	}
}

static void add_curve(output_report *report, const explain_result *r)
{
	const sim_curve *c = r->curve;
	/* plumb sim --curve's tables, built by the same functions: the same
	 * columns, rows and figures */
	output_table *t = sim_curve_table(report);
	output_table *k = sim_curve_knees_table(report);
	/* the simulated caches' sizes, which the HTML chart marks */
	output_table *sizes = output_table_add(report, "caches", "The simulated caches");
	output_column(sizes, "level", NULL, 0);
	output_column(sizes, "size_bytes", "B", 0);
	static const char *const names[4] = { "L1i", "L1d", "L2", "L3" };
	for (int l = 0; l < 4; l++)
		if (r->cache_bytes[l]) {
			output_row(sizes);
			output_cell_text(sizes, names[l]);
			output_cell_integer(sizes, (int64_t)r->cache_bytes[l]);
		}
	size_t n = sim_curve_region_count(c);
	for (size_t i = 0; i <= n; i++) {
		size_t region = i == 0 ? SIZE_MAX : i - 1;
		uint32_t thread = 0;
		uint64_t entries = 0;
		const char *name = i == 0 ? "(program)" : sim_curve_region_name(c, region, &thread, &entries);
		sim_curve_rows(t, c, region, name);
		sim_curve_knee_row(k, c, region, name);
	}
}

/* The other machine (--on) beside this one: per region, the misses of both
 * simulations, this machine's measurement and both predictions. */
static void add_other(output_report *report, const explain_result *r)
{
	output_table *t = output_table_add(report, "other_machine", "On the other machine (--on), beside this one");
	output_column(t, "region", NULL, 0);
	output_column(t, "measured_ns", "ns", 0);
	output_column(t, "predicted_ns", "ns", 0);
	output_column(t, "other_predicted_ns", "ns", 0);
	output_column(t, "l1d_misses", NULL, 0);
	output_column(t, "other_l1d_misses", NULL, 0);
	output_column(t, "l2_misses", NULL, 0);
	output_column(t, "other_l2_misses", NULL, 0);
	output_column(t, "llc_misses", NULL, 0);
	output_column(t, "other_llc_misses", NULL, 0);
	output_column(t, "other_memory_reads", "lines", 0);
	for (size_t i = 0; i < r->region_count; i++) {
		const explain_region *region = &r->regions[i];
		output_row(t);
		output_cell_text(t, region->name);
		if (region->wall.n > 0)
			output_cell_real(t, region->wall.median);
		else
			output_cell_status(t, "n/a", "not measured");
		if (region->predicted.done)
			output_cell_real(t, region->predicted.total_ns);
		else
			output_cell_status(t, "unsupported", region->predicted.reason);
		if (region->other_predicted.done)
			output_cell_real(t, region->other_predicted.total_ns);
		else
			output_cell_status(t, "unsupported", region->other_predicted.reason[0] ? region->other_predicted.reason
			                                                                       : "not simulated");
		const explain_simulated *here = &region->simulated, *there = &region->other_simulated;
		for (int level = 0; level < 3; level++) {
			cell_count(t, here->done, here->misses[level], simulate_reason(r));
			cell_count(t, there->done, there->misses[level], simulate_reason(r));
		}
		cell_count(t, there->done, there->memory_reads, simulate_reason(r));
	}
}

output_report *explain_report(const explain_result *r)
{
	output_report *report = output_report_new("explain");
	if (!report)
		return NULL;
	output_meta_text(report, "command", r->command ? r->command : "");
	output_meta_integer(report, "runs", r->runs);
	output_meta_text(report, "backend", r->backend);
	output_meta_text(report, "simulator_preset", r->preset);
	output_meta_real(report, "ipc_base", r->ipc_base);
	output_meta_text(report, "machine", r->have_machine ? r->machine.source : r->machine_error);
	if (r->have_machine) {
		output_meta_real(report, "clock_ghz", r->machine.clock_ghz);
		output_meta_integer(report, "line_bytes", r->machine.line_bytes);
		if (isfinite(r->machine.fault_ns))
			output_meta_real(report, "page_fault_ns", r->machine.fault_ns);
	}
	output_meta_integer(report, "exit_code", r->exit_code);
	add_regions(report, r);
	add_terms(report, r);
	add_simulated(report, r);
	if (r->have_other)
		add_other(report, r);
	if (r->curve)
		add_curve(report, r);
	add_counters(report, r);
	add_machine(report, r);
	add_disagreement(report, r);
	char core[400];
	if (r->ipc_base > 0)
		snprintf(core, sizeof core, "instructions at %.2f per cycle (--ipc)", r->ipc_base);
	else if (r->core_source[0])
		snprintf(core, sizeof core, "each executed block's cycles from %s", r->core_source);
	else
		snprintf(core, sizeof core, "instructions at 1.00 per cycle (%s)",
		         r->core_error[0] ? r->core_error : "the blocks were not priced");
	output_meta_text(report, "in_core", core);
	output_note(report, "measured: wall time per region over %u run(s): the median, the mean with its 95%% confidence "
	            "interval, and the best run; "
	            "instrumented: plumbgrind's exact counts; simulated: the %s preset; predicted: the in-core time "
	            "(%s) overlapped with the data transfers at each level's measured bandwidth, plus the latency of "
	            "the misses that cannot overlap, in the manner of the ECM model of Hager, Treibig and Wellein, "
	            "with the memory-level parallelism of Chou et al. (2004)", r->runs, r->preset, core);
	if (r->measure_note[0])
		output_note(report, "measured: %s", r->measure_note);
	if (r->program_counters_error[0])
		output_note(report, "measured: the whole program's counters: %s", r->program_counters_error);
	if (r->instrument_error[0])
		output_note(report, "instrumented: %s", r->instrument_error);
	if (r->simulate_error[0])
		output_note(report, "simulated: %s", r->simulate_error);
	else if (r->simulate_source[0])
		output_note(report, "simulated: %s", r->simulate_source);
	if (r->other_error[0])
		output_note(report, "other machine: %s", r->other_error);
	else if (r->have_other)
		output_note(report, "other machine (--on): its caches simulated as %s; its figures from %s", r->other_caches,
		            r->other_machine.source[0] ? r->other_machine.source : "nowhere (see the notes)");
	if (r->curve_error[0])
		output_note(report, "curve: %s", r->curve_error);
	if (!r->have_machine)
		output_note(report, "predicted: %s", r->machine_error);
	for (size_t i = 0; i < r->note_count; i++)
		output_note(report, "%s", r->notes[i]);
	return report;
}

int explain_write_html(output_report *report, const char *path, plumb_status *status)
{
	output_report *sections[1] = { report };
	const char *commands[1] = { "explain" };
	return report_write_html(path, "plumb explain: the four sources for your regions", sections, commands, NULL, 1,
	                         status);
}
