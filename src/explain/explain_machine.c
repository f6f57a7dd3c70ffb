/* The machine figures the model needs, measured quickly with plumb lat's
 * chains and plumb bw's read kernel, or read from a saved report.
 *
 * One working set per level instead of a sweep: half the level's capacity
 * for L1 and L2 (past the previous level, inside this one), 4x the L2 for
 * L3 (the shared L3 of a virtual machine holds only part of its nominal
 * size: docs/latency.md), 4x the last-level cache for memory.  Each
 * latency is the 10th percentile of its samples, as plumb lat's levels are,
 * and the lowest of three tries: another program sharing the L3 only ever
 * adds latency; MLP is "outstanding" from k = 1..max_chains interleaved chains
 * (docs/latency.md, "Memory-level parallelism"). */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "plumb/read_file.h"
#include "plumb/arena.h"
#include "plumb/bandwidth.h"
#include "plumb/chase.h"
#include "plumb/cpu.h"
#include "plumb/explain.h"
#include "plumb/latency.h"
#include "plumb/timer.h"
#include "plumb/topology.h"

void explain_machine_options_init(explain_machine_options *options)
{
	memset(options, 0, sizeof *options);
	options->time_cap_ns = 30000000;
	options->max_chains = 16;
	options->cpu = -1;
}

static void machine_clear(explain_machine *m)
{
	memset(m, 0, sizeof *m);
	m->clock_ghz = NAN;
	m->line_bytes = 64;
	for (int l = 0; l < EXPLAIN_LEVELS; l++)
		m->latency_ns[l] = m->bandwidth_gbps[l] = m->mlp[l] = NAN;
}

static int measure_levels(const explain_machine_options *options, const topology *topo, int cpu,
                          explain_machine *m, plumb_status *status)
{
	timer_calibration timer;
	plumb_status ignored;
	if (timer_calibrate(&timer, 20, &ignored) != 0)
		timer_calibration_clock(&timer);
	latency_measure_options measure;
	latency_measure_defaults(&measure);
	measure.time_cap_ns = options->time_cap_ns;
	latency_result unit;
	if (latency_measure_work_unit(&timer, &measure, &unit, status) != 0)
		return -1;
	/* The quiet samples' time (10th percentile): another program only ever
	 * adds time, and under load 15 the median made the clock look 2.5x
	 * slower than the CPU time the program then took, so a compute-bound
	 * region was predicted 2.45x too long. */
	double unit_ns = unit.ns_p10 > 0 ? unit.ns_p10 : unit.ns;
	m->clock_ghz = unit_ns > 0 ? 1.0 / unit_ns : NAN;

	uint64_t bytes[EXPLAIN_LEVELS] = { 0 };
	const topology_cache *l1 = topology_data_cache(topo, 1), *l2 = topology_data_cache(topo, 2);
	const topology_cache *l3 = topology_data_cache(topo, 3), *llc = topology_last_level_cache(topo);
	if (!l1 || !l1->size)
		return plumb_fail(status, ENOENT, "sysfs/hwloc do not describe the L1 data cache");
	m->line_bytes = l1->line ? l1->line : 64;
	m->size_bytes[EXPLAIN_L1] = l1->size;
	bytes[EXPLAIN_L1] = l1->size / 2;
	if (l2 && l2->size) {
		m->size_bytes[EXPLAIN_L2] = l2->size;
		bytes[EXPLAIN_L2] = l2->size / 2 > 4 * l1->size ? l2->size / 2 : 4 * l1->size;
	}
	if (l3 && l3->size && l2) {
		m->size_bytes[EXPLAIN_L3] = l3->size;
		bytes[EXPLAIN_L3] = 4 * l2->size < l3->size / 2 ? 4 * l2->size : l3->size / 2;
	}
	bytes[EXPLAIN_MEMORY] = 4 * (llc && llc->size ? llc->size : ((uint64_t)32 << 20));
	arena memory;
	arena_request request = { .size = (size_t)bytes[EXPLAIN_MEMORY], .pages = ARENA_PAGES_THP,
	                          .fault = ARENA_FAULT_PREFAULT };
	if (arena_create(&memory, &request, status) != 0)
		return -1;
	int rc = 0;
	for (int l = 0; rc == 0 && l < EXPLAIN_LEVELS; l++) {
		if (!bytes[l])
			continue;
		chase_layout layout = { .pattern = CHASE_RANDOM, .bytes = (size_t)bytes[l], .slot_bytes = m->line_bytes,
		                        .seed = 0x706c756d62ULL + (uint64_t)l };
		chase_chain chain;
		latency_result latency;
		rc = chase_build_layout(&chain, memory.base, memory.size, &layout, status);
		if (rc != 0)
			break;
		/* Three tries a little apart, keeping the lowest: the L3 and memory
		 * are shared with the other CPUs (and, in a VM, other guests), and a
		 * neighbour's burst made a single try read the L3 at memory's
		 * latency (101-122 ns against 13 ns quiet here). */
		m->latency_ns[l] = INFINITY;
		for (int attempt = 0; rc == 0 && attempt < (l == EXPLAIN_L1 ? 1 : 3); attempt++) {
			if (attempt)
				nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
			rc = latency_measure_chain(&timer, &chain, &measure, &latency, status);
			if (rc == 0 && latency.ns_p10 < m->latency_ns[l])
				m->latency_ns[l] = latency.ns_p10;
		}
		if (rc != 0)
			break;
		if (l == EXPLAIN_L1)
			continue;   /* L1 hits are in the base rate; no misses to overlap */
		latency_mlp_point points[CHASE_MAX_PARALLEL];
		unsigned chains = options->max_chains < 2 ? 2 : options->max_chains;
		if (chains > CHASE_MAX_PARALLEL)
			chains = CHASE_MAX_PARALLEL;
		latency_measure_options quick = measure;
		quick.time_cap_ns = options->time_cap_ns / 2;
		latency_mlp_summary mlp;
		plumb_status mlp_status;
		if (latency_mlp_measure(&timer, &chain, &quick, chains, m->line_bytes, points, &mlp_status) == 0 &&
		    latency_mlp_analyze(points, chains, 0.9, &mlp, &mlp_status) == 0)
			/* At most one miss per chain: more means the one-chain run was
			 * slowed by a neighbour (134 "lines" was read so at the L3). */
			m->mlp[l] = mlp.outstanding < chains ? mlp.outstanding : chains;
	}
	arena_destroy(&memory);
	if (rc != 0)
		return -1;

	/* One thread's read bandwidth per level: plumb bw's read kernel at its
	 * default footprint per level. */
	cpu_features features;
	cpu_features_detect(&features);
	const bandwidth_kernel *kernel = bandwidth_kernel_find(BANDWIDTH_READ, false, bandwidth_isa_best(&features));
	if (!kernel)
		return 0;
	const bandwidth_kernel *kernels[1] = { kernel };
	int threads[1] = { 1 }, cpus[1] = { cpu };
	bandwidth_sweep_request sweep_request = { .topo = topo, .kernels = kernels, .kernel_count = 1,
	                                          .thread_counts = threads, .thread_count_count = 1, .cpus = cpus,
	                                          .cpu_count = 1, .pages = ARENA_PAGES_THP, .timer = &timer };
	bandwidth_measure_defaults(&sweep_request.options);
	sweep_request.options.time_cap_ns = options->time_cap_ns;
	sweep_request.options.max_runs = 20;
	bandwidth_sweep sweep;
	if (bandwidth_sweep_run(&sweep_request, &sweep, status) != 0)
		return -1;
	for (int k = 0; k < sweep.level_count; k++) {
		int l = !strcmp(sweep.levels[k].name, "DRAM") ? EXPLAIN_MEMORY : sweep.levels[k].cache_level - 1;
		if (l < 0 || l >= EXPLAIN_LEVELS)
			continue;
		double value;
		bool noisy;
		if (bandwidth_level_value(sweep.points, sweep.count, 1, kernel, sweep.levels[k].name, &value, &noisy) > 0)
			m->bandwidth_gbps[l] = value;
	}
	bandwidth_sweep_free(&sweep);
	return 0;
}

int explain_machine_measure(const explain_machine_options *options, explain_machine *out, plumb_status *status)
{
	machine_clear(out);
	explain_machine_options defaults;
	if (!options) {
		explain_machine_options_init(&defaults);
		options = &defaults;
	}
	topology topo;
	if (topology_read(&topo, status) != 0)
		return -1;
	/* Pinned while probing, then back to what the caller had: the programs
	 * measured afterwards inherit this process's affinity. */
	cpu_set_t before;
	bool have_before = sched_getaffinity(0, sizeof before, &before) == 0;
	int cpu = options->cpu >= 0 ? options->cpu : cpu_current();
	if (cpu < 0)
		return plumb_fail(status, EINVAL, "cannot tell which CPU this thread runs on");
	if (cpu_pin_self(cpu, status) != 0)
		return -1;
	int rc = measure_levels(options, &topo, cpu, out, status);
	if (have_before)
		sched_setaffinity(0, sizeof before, &before);
	snprintf(out->source, sizeof out->source, "measured now on CPU %d (dependent loads, %u chains, read kernel)",
	         cpu, options->max_chains);
	return rc;
}

/* ----------------------------------------------------------- saved figures */

static double meta_number(const output_report *report, const char *key)
{
	for (size_t i = 0; i < output_meta_count(report); i++)
		if (!strcmp(output_meta_key(report, i), key)) {
			char text[64];
			output_meta_format(report, i, text, sizeof text);
			char *end;
			double value = strtod(text, &end);
			return end != text ? value : NAN;
		}
	return NAN;
}

static int level_of_name(const char *name)
{
	if (!name)
		return -1;
	for (int l = 0; l < EXPLAIN_LEVELS; l++)
		if (!strcmp(name, explain_level_name((explain_level)l)))
			return l;
	return !strcmp(name, "DRAM") ? EXPLAIN_MEMORY : -1;
}

static double cell_by_name(const output_table *table, size_t row, const char *column)
{
	int c = output_column_index(table, column);
	return c < 0 ? NAN : output_cell_number(table, row, (size_t)c);
}

/* plumb explain's own "machine" table. */
static bool from_explain(const output_report *report, explain_machine *m)
{
	const output_table *table = output_table_find(report, "machine");
	int level = table ? output_column_index(table, "level") : -1;
	if (level < 0)
		return false;
	for (size_t row = 0; row < output_row_count(table); row++) {
		int l = level_of_name(output_cell_string(table, row, (size_t)level));
		if (l < 0)
			continue;
		m->latency_ns[l] = cell_by_name(table, row, "latency_ns");
		m->bandwidth_gbps[l] = cell_by_name(table, row, "bandwidth_gbps");
		m->mlp[l] = cell_by_name(table, row, "mlp");
		double size = cell_by_name(table, row, "size_bytes");
		m->size_bytes[l] = isfinite(size) && size > 0 ? (uint64_t)size : 0;
	}
	m->clock_ghz = meta_number(report, "clock_ghz");
	double line = meta_number(report, "line_bytes");
	if (isfinite(line) && line >= 8 && line <= 4096)
		m->line_bytes = (unsigned)line;
	return true;
}

/* plumb lat --mlp: levels (latency) and mlp (outstanding). */
static bool from_lat(const output_report *report, explain_machine *m)
{
	const output_table *levels = output_table_find(report, "levels");
	int level = levels ? output_column_index(levels, "level") : -1;
	if (level < 0 || output_column_index(levels, "latency") < 0)
		return false;
	for (size_t row = 0; row < output_row_count(levels); row++) {
		int l = level_of_name(output_cell_string(levels, row, (size_t)level));
		if (l >= 0)
			m->latency_ns[l] = cell_by_name(levels, row, "median");
		if (l >= 0 && !isfinite(m->latency_ns[l]))
			m->latency_ns[l] = cell_by_name(levels, row, "latency");
	}
	const output_table *mlp = output_table_find(report, "mlp");
	int mlp_level = mlp ? output_column_index(mlp, "level") : -1;
	for (size_t row = 0; mlp_level >= 0 && row < output_row_count(mlp); row++) {
		int l = level_of_name(output_cell_string(mlp, row, (size_t)mlp_level));
		if (l >= 0)
			m->mlp[l] = cell_by_name(mlp, row, "outstanding");
	}
	m->clock_ghz = meta_number(report, "core_clock_ghz_estimate");
	return true;
}

/* plumb bw: levels (one column of GB/s per level), one thread, read. */
static void from_bw(const output_report *report, explain_machine *m)
{
	const output_table *levels = output_table_find(report, "levels");
	int threads = levels ? output_column_index(levels, "threads") : -1;
	int kernel = levels ? output_column_index(levels, "kernel") : -1;
	if (threads < 0 || kernel < 0)
		return;
	for (size_t row = 0; row < output_row_count(levels); row++) {
		const char *name = output_cell_string(levels, row, (size_t)kernel);
		if (output_cell_number(levels, row, (size_t)threads) != 1 || !name || strcmp(name, "read"))
			continue;
		for (int l = 0; l < EXPLAIN_LEVELS; l++) {
			double value = cell_by_name(levels, row, l == EXPLAIN_MEMORY ? "DRAM" : explain_level_name((explain_level)l));
			if (isfinite(value) && value > 0)
				m->bandwidth_gbps[l] = value;
		}
	}
}

/* A plumb-report document inside a larger JSON document. */
static output_report *embedded_report(json_object *object)
{
	output_report *report = NULL;
	plumb_status ignored;
	if (!object || output_report_parse_json(json_object_to_json_string(object), &report, &ignored) != 0)
		return NULL;
	return report;
}

/* plumb report's report.json: the summary's hierarchy (latency and one
 * thread's read bandwidth per level, the core clock), and the lat section's
 * MLP when it measured one. */
static bool from_machine_report(json_object *root, explain_machine *m)
{
	json_object *schema = NULL;
	if (!json_object_object_get_ex(root, "schema", &schema) ||
	    strcmp(json_object_get_string(schema) ? json_object_get_string(schema) : "", "plumb-machine-report") != 0)
		return false;
	json_object *sections = NULL;
	if (json_object_object_get_ex(root, "sections", &sections) && json_object_is_type(sections, json_type_array))
		for (size_t i = 0; i < json_object_array_length(sections); i++) {
			json_object *section = json_object_array_get_idx(sections, i), *inner = NULL;
			if (!json_object_object_get_ex(section, "report", &inner))
				continue;
			output_report *report = embedded_report(inner);
			if (!report)
				continue;
			if (!strcmp(output_report_command(report), "lat"))
				from_lat(report, m);
			else if (!strcmp(output_report_command(report), "bw"))
				from_bw(report, m);
			output_report_free(report);
		}
	json_object *summary_object = NULL;
	json_object_object_get_ex(root, "summary", &summary_object);
	output_report *summary = embedded_report(summary_object);
	const output_table *hierarchy = summary ? output_table_find(summary, "hierarchy") : NULL;
	int level = hierarchy ? output_column_index(hierarchy, "level") : -1;
	for (size_t row = 0; level >= 0 && row < output_row_count(hierarchy); row++) {
		int l = level_of_name(output_cell_string(hierarchy, row, (size_t)level));
		if (l < 0)
			continue;
		double latency = cell_by_name(hierarchy, row, "latency"), read = cell_by_name(hierarchy, row, "read_1");
		double size = cell_by_name(hierarchy, row, "sysfs_size");
		if (isfinite(latency) && latency > 0)
			m->latency_ns[l] = latency;
		if (isfinite(read) && read > 0)
			m->bandwidth_gbps[l] = read;
		if (isfinite(size) && size > 0 && l != EXPLAIN_MEMORY)
			m->size_bytes[l] = (uint64_t)size;
	}
	if (summary) {
		double clock = meta_number(summary, "core_clock_ghz");
		if (isfinite(clock) && clock > 0)
			m->clock_ghz = clock;
		output_report_free(summary);
	}
	return true;
}

int explain_machine_load(const char *path, explain_machine *out, plumb_status *status)
{
	machine_clear(out);
	char *text;
	size_t length;
	plumb_status read_status;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, &read_status) != 0)
		return plumb_fail(status, read_status.code, "--machine: %s", read_status.message);
	json_object *root = json_tokener_parse(text);
	if (root && from_machine_report(root, out)) {
		json_object_put(root);
		free(text);
		snprintf(out->source, sizeof out->source, "%s", path);
		return 0;
	}
	json_object_put(root);
	output_report *report = NULL;
	plumb_status parse;
	int rc = output_report_parse_json(text, &report, &parse);
	free(text);
	if (rc != 0)
		return plumb_fail(status, EINVAL, "--machine: '%s' is not a plumb JSON report: %s", path, parse.message);
	bool found = from_explain(report, out);
	if (!found && !strcmp(output_report_command(report), "lat"))
		found = from_lat(report, out);
	if (!found && !strcmp(output_report_command(report), "bw")) {
		from_bw(report, out);
		found = true;
	}
	output_report_free(report);
	if (!found)
		return plumb_fail(status, EINVAL, "--machine: '%s' holds no machine figures (give plumb report's "
		                  "report.json, or the JSON output of plumb explain or of plumb lat --mlp)", path);
	snprintf(out->source, sizeof out->source, "%s", path);
	return 0;
}
