/* plumb bw's choices and report: which kernels for which ISA, the thread
 * counts of a default run, and the report of a sweep (the levels table,
 * every point, what a GB/s counts). */
#include <errno.h>
#include <string.h>
#include "bandwidth/bandwidth.h"
#include "core/output.h"

int bandwidth_kernels_resolve(const char *isa, const char *const *names, int name_count,
                              const cpu_features *features, const bandwidth_kernel **kernels, int capacity,
                              int *count, plumb_status *status)
{
	bandwidth_isa isas[BANDWIDTH_ISAS];
	int isa_count = 0;
	*count = 0;
	if (!isa) {
		isas[isa_count++] = bandwidth_isa_best(features);
	} else if (strcmp(isa, "all") == 0) {
		for (int i = 0; i < BANDWIDTH_ISAS; i++)
			if (bandwidth_isa_available((bandwidth_isa)i, features))
				isas[isa_count++] = (bandwidth_isa)i;
	} else {
		int parsed = bandwidth_isa_parse(isa);
		if (parsed < 0)
			return plumb_fail(status, EINVAL, "unknown ISA '%s' (scalar, avx2, avx512, all)", isa);
		if (!bandwidth_isa_available((bandwidth_isa)parsed, features))
			return plumb_fail(status, EOPNOTSUPP, "ISA %s is unsupported: this CPU or OS does not enable it", isa);
		isas[isa_count++] = (bandwidth_isa)parsed;
	}
	if (!names) {
		names = (const char *const *)bandwidth_kernel_names;
		for (name_count = 0; bandwidth_kernel_names[name_count]; name_count++)
			;
	}
	for (int i = 0; i < isa_count; i++)
		for (int k = 0; k < name_count; k++) {
			const bandwidth_kernel *kernel = bandwidth_kernel_by_name(names[k], isas[i]);
			if (!kernel)
				return plumb_fail(status, EINVAL, "unknown kernel '%s'", names[k]);
			if (*count == capacity)
				return plumb_fail(status, E2BIG, "more than %d kernels", capacity);
			kernels[(*count)++] = kernel;
		}
	return 0;
}

int bandwidth_default_threads(int cpu_count, int *threads, int capacity)
{
	int count = 0;
	for (int t = 1; t < cpu_count && count < capacity - 1; t *= 2)
		threads[count++] = t;
	threads[count++] = cpu_count;
	return count;
}

static void add_results_table(output_report *report, const bandwidth_sweep *sweep)
{
	output_table *table = output_table_add(report, "bandwidth", "Bandwidth per working set (aggregate over threads)");
	output_column(table, "threads", NULL, 0);
	output_column(table, "kernel", NULL, 0);
	output_column(table, "isa", NULL, 0);
	output_column(table, "level", NULL, 0);
	output_column(table, "footprint_per_thread", "bytes", 0);
	output_column(table, "gbps_median", "GB/s", 2);
	output_column(table, "gbps_best", "GB/s", 2);
	output_column(table, "gbps_with_allocate", "GB/s", 2);
	output_column(table, "cv", NULL, 3);
	output_column(table, "ci95_relative", NULL, 3);
	output_column(table, "samples", NULL, 0);
	output_column(table, "quality", NULL, 0);
	for (size_t i = 0; i < sweep->count; i++) {
		const bandwidth_point *p = &sweep->points[i];
		output_row(table);
		output_cell_integer(table, p->threads);
		output_cell_text(table, p->kernel->name);
		output_cell_text(table, bandwidth_isa_name(p->kernel->isa));
		output_cell_text(table, p->level);
		output_cell_integer(table, (int64_t)p->result.footprint);
		output_cell_real(table, p->result.gbps.median);
		output_cell_real(table, p->result.gbps.max);
		/* Inside L1 no line is allocated from further out: the counted
		 * bytes are all there is. */
		if (strcmp(p->level, "L1") == 0)
			output_cell_real(table, p->result.gbps.median);
		else
			output_cell_real(table, p->result.gbps.median * p->result.moved_factor);
		output_cell_real(table, p->result.gbps.cv);
		output_cell_real(table, p->result.gbps.ci95_relative);
		output_cell_integer(table, (int64_t)p->result.gbps.n);
		output_cell_text(table, p->result.noisy ? "noisy" : "ok");
	}
}

static void add_levels_table(output_report *report, const bandwidth_sweep *sweep, const bandwidth_sweep_request *request)
{
	output_table *table = output_table_add(report, "levels", "GB/s per memory level (best sample, median over the sizes in each level)");
	output_column(table, "threads", NULL, 0);
	output_column(table, "kernel", NULL, 0);
	output_column(table, "isa", NULL, 0);
	for (int l = 0; l < sweep->level_count; l++)
		output_column(table, sweep->levels[l].name, "GB/s", 2);
	output_column(table, "noisy_levels", NULL, 0);
	for (int t = 0; t < request->thread_count_count; t++)
		for (int k = 0; k < request->kernel_count; k++) {
			output_row(table);
			output_cell_integer(table, request->thread_counts[t]);
			output_cell_text(table, request->kernels[k]->name);
			output_cell_text(table, bandwidth_isa_name(request->kernels[k]->isa));
			char noisy_levels[64] = "";
			for (int l = 0; l < sweep->level_count; l++) {
				double value;
				bool noisy;
				size_t found = bandwidth_level_value(sweep->points, sweep->count, request->thread_counts[t],
				                                     request->kernels[k], sweep->levels[l].name, &value, &noisy);
				if (!found) {
					output_cell_status(table, "skipped", "no working set of this run lands in this level");
					continue;
				}
				output_cell_real(table, value);
				if (noisy) {
					if (noisy_levels[0])
						strncat(noisy_levels, ",", sizeof noisy_levels - strlen(noisy_levels) - 1);
					strncat(noisy_levels, sweep->levels[l].name, sizeof noisy_levels - strlen(noisy_levels) - 1);
				}
			}
			output_cell_text(table, noisy_levels[0] ? noisy_levels : "-");
		}
}

output_report *bandwidth_report(const bandwidth_sweep *sweep, const bandwidth_sweep_request *request,
                                double wall_seconds)
{
	output_report *report = output_report_new("bw");
	output_meta_text(report, "cpu", request->topo->cpu_model);
	output_meta_text(report, "pages", sweep->pages_obtained);
	output_meta_text(report, "timer", request->timer->source == TIMER_TSC ? "tsc" : "clock_gettime");
	output_meta_real(report, "timer_ticks_per_ns", request->timer->ticks_per_ns);
	output_meta_real(report, "target_ci_relative", request->options.target_relative_ci);
	output_meta_real(report, "time_cap_ms", (double)request->options.time_cap_ns / 1e6);
	output_meta_text(report, "byte_counting", "stream");
	output_meta_real(report, "wall_seconds", wall_seconds);
	add_levels_table(report, sweep, request);
	add_results_table(report, sweep);
	output_note(report, "GB/s = 10^9 bytes/s counted as STREAM does: read 8, write 8, copy 16, triad 24 bytes per element.");
	output_note(report, "gbps_with_allocate adds the write-allocate read each ordinary stored line costs beyond L1; non-temporal (-nt) stores do not allocate.");
	if (sweep->usable_note[0]) {
		output_meta_text(report, "usable_capacity", sweep->usable_note);
		output_note(report, "Levels come from the topology (sysfs), a shared cache at the usable size the machine model measured: %s.",
		            sweep->usable_note);
	} else {
		output_note(report, "Levels come from the topology (sysfs): on a VM the cache really usable can be smaller (plumb bw "
		                    "--machine report.json or --levels-from a plumb lat report sizes the working sets from it).");
	}
	return report;
}
