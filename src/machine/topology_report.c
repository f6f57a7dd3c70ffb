/* plumb topo's report: the machine, its caches, pages, timer and counters
 * as the library reads them (hwloc, CPUID, sysfs, /proc). */
#include <stdint.h>
#include <stdio.h>
#include "core/cpu.h"
#include "core/output.h"
#include "core/parse.h"
#include "core/timer.h"
#include "machine/topology.h"

static const char *cache_type_name(cache_type type)
{
	return type == CACHE_DATA ? "data" : type == CACHE_INSTRUCTION ? "instruction" : "unified";
}

output_report *topology_report(const topology *t, const timer_calibration *cal, const cpu_features *f)
{
	output_report *r = output_report_new("topo");
	char buffer[64];
	output_table *m = output_table_add(r, "machine", "Machine");
	output_column(m, "property", NULL, 0);
	output_column(m, "value", NULL, 0);
	output_row(m); output_cell_text(m, "cpu_model"); output_cell_text(m, t->cpu_model);
	/* the instruction set, so that a report read on another machine (plumb
	 * explain --on) can say whether its programs run the same instructions */
	output_row(m); output_cell_text(m, "isa"); output_cell_text(m, TOPOLOGY_ISA);
	output_row(m); output_cell_text(m, "vendor"); output_cell_text(m, f->vendor);
	snprintf(buffer, sizeof buffer, "%u/%u/%u", f->family, f->model, f->stepping);
	output_row(m); output_cell_text(m, "family/model/stepping"); output_cell_text(m, buffer);
	/* the model whose cores these are (cpu.h), which explain --on prices
	 * this machine's core as */
	snprintf(buffer, sizeof buffer, "%u", f->core_model);
	output_row(m); output_cell_text(m, "core_model"); output_cell_text(m, buffer);
	/* The generation by name: a guest's brand string often hides it. */
	const char *generation = cpu_generation_name(f->vendor, f->family, f->core_model);
	output_row(m); output_cell_text(m, "generation");
	if (generation && f->core_model != f->model) {
		/* a hypervisor's older model than the features say (cpu.h) */
		const char *shown = cpu_generation_name(f->vendor, f->family, f->model);
		char said[256];
		snprintf(said, sizeof said, "%s or later (CPUID says model %u%s%s, but %s)", generation, f->model,
		         shown ? ", " : "", shown ? shown : "", f->core_model_reason);
		output_cell_text(m, said);
	} else if (generation)
		output_cell_text(m, generation);
	else
		output_cell_status(m, "unknown", "plumb's table of x86 generations does not know this family and model");
	output_row(m); output_cell_text(m, "virtualised"); output_cell_text(m, t->hypervisor ? "yes (CPUID hypervisor bit)" : "no");
	snprintf(buffer, sizeof buffer, "%d", t->cpus);
	output_row(m); output_cell_text(m, "cpus"); output_cell_text(m, buffer);
	snprintf(buffer, sizeof buffer, "%d", t->cores);
	output_row(m); output_cell_text(m, "cores"); output_cell_text(m, buffer);
	snprintf(buffer, sizeof buffer, "%d", t->threads_per_core);
	output_row(m); output_cell_text(m, "threads_per_core"); output_cell_text(m, buffer);
	snprintf(buffer, sizeof buffer, "%d", t->sockets);
	output_row(m); output_cell_text(m, "sockets"); output_cell_text(m, buffer);
	snprintf(buffer, sizeof buffer, "%d", t->numa_nodes);
	output_row(m); output_cell_text(m, "numa_nodes"); output_cell_text(m, buffer);
	output_row(m); output_cell_text(m, "memory"); output_cell_text(m, format_size(t->memory_total, buffer, sizeof buffer));
	snprintf(buffer, sizeof buffer, "%s%s%s%s", f->avx2 ? "avx2 " : "", f->avx512f ? "avx512f " : "",
	         f->clflushopt ? "clflushopt " : "", f->clwb ? "clwb" : "");
	output_row(m); output_cell_text(m, "features"); output_cell_text(m, buffer);

	output_table *ct = output_table_add(r, "caches", "Caches (from hwloc: sysfs and CPUID)");
	output_column(ct, "level", NULL, 0);
	output_column(ct, "type", NULL, 0);
	output_column(ct, "size", "bytes", 0);
	output_column(ct, "line", "bytes", 0);
	output_column(ct, "ways", NULL, 0);
	output_column(ct, "instances", NULL, 0);
	/* The CPUs of one instance, as a list ("0-1"): a column named
	 * shared_by_cpus read "shared by 0 CPUs" for a private cache. */
	output_column(ct, "cpu_list", NULL, 0);
	for (int i = 0; i < t->cache_count; i++) {
		const topology_cache *k = &t->caches[i];
		output_row(ct);
		snprintf(buffer, sizeof buffer, "L%d", k->level);
		output_cell_text(ct, buffer);
		output_cell_text(ct, cache_type_name(k->type));
		output_cell_integer(ct, (int64_t)k->size);
		output_cell_integer(ct, k->line);
		if (k->associativity == -1)
			output_cell_text(ct, "full");
		else if (k->associativity == 0)
			output_cell_status(ct, "unknown", "the system does not report this cache's associativity");
		else
			output_cell_integer(ct, k->associativity);
		output_cell_integer(ct, k->instances);
		output_cell_text(ct, k->shared_cpu_list);
	}

	output_table *pt = output_table_add(r, "pages", "Pages");
	output_column(pt, "kind", NULL, 0);
	output_column(pt, "size", "bytes", 0);
	output_column(pt, "reserved", NULL, 0);
	output_row(pt); output_cell_text(pt, "base"); output_cell_integer(pt, (int64_t)t->base_page_size); output_cell_empty(pt);
	for (int i = 0; i < t->huge_page_count; i++) {
		output_row(pt);
		output_cell_text(pt, "hugetlb");
		output_cell_integer(pt, (int64_t)t->huge_page_sizes[i]);
		output_cell_integer(pt, t->huge_pages_reserved[i]);
	}
	snprintf(buffer, sizeof buffer, "thp (%s)", t->thp_mode);
	output_row(pt); output_cell_text(pt, buffer); output_cell_integer(pt, 2 << 20); output_cell_empty(pt);

	output_table *kt = output_table_add(r, "timing_and_counters", "Timer and counters");
	output_column(kt, "property", NULL, 0);
	output_column(kt, "value", NULL, 0);
	output_row(kt); output_cell_text(kt, "timer");
	output_cell_text(kt, cal->source == TIMER_TSC ? "TSC (rdtscp), invariant" : "clock_gettime(CLOCK_MONOTONIC_RAW)");
	snprintf(buffer, sizeof buffer, "%.4f GHz (spread %.2g over %d rounds)", cal->ticks_per_ns, cal->spread, cal->rounds);
	output_row(kt); output_cell_text(kt, "timer_rate"); output_cell_text(kt, buffer);
	snprintf(buffer, sizeof buffer, "%.0f ticks", cal->overhead_ticks);
	output_row(kt); output_cell_text(kt, "timer_overhead"); output_cell_text(kt, buffer);
	output_row(kt); output_cell_text(kt, "perf_event_paranoid");
	if (t->perf_event_paranoid == INT32_MIN) {
		output_cell_status(kt, "unknown", "/proc/sys/kernel/perf_event_paranoid is unreadable");
	} else {
		snprintf(buffer, sizeof buffer, "%d", t->perf_event_paranoid);
		output_cell_text(kt, buffer);
	}
	output_row(kt); output_cell_text(kt, "hardware_counters");
	if (t->hardware_counters)
		output_cell_text(kt, "available");
	else
		output_cell_status(kt, "unsupported", t->hardware_counters_reason);

	output_meta_real(r, "timer_ticks_per_ns", cal->ticks_per_ns);
	return r;
}
