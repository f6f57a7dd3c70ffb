/* The machine figures the model needs, from the machine model
 * (machine_model.h): read from plumb report's report.json, or measured
 * now through the same code (plumb lat's sweep, its levels named by
 * capacity and memory's latency from its plateau, and its MLP at each
 * level), so explain, the report and the simulator's host preset name the
 * same levels with the same capacities and latencies.  One thread's read
 * bandwidth per level is plumb bw's read kernel at its default footprint
 * per level (a shared cache's from its usable size, as plumb bw sizes it
 * given the model). */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include "core/read_file.h"
#include "core/arena.h"
#include "bandwidth/bandwidth.h"
#include "chase/chase.h"
#include "core/cpu.h"
#include "explain/explain.h"
#include "latency/latency.h"
#include "latency/latency_run.h"
#include "machine/machine_model.h"
#include "core/timer.h"
#include "machine/topology.h"

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
	m->fault_ns = NAN;
	m->line_bytes = 64;
	for (int l = 0; l < EXPLAIN_LEVELS; l++)
		m->latency_ns[l] = m->bandwidth_gbps[l] = m->mlp[l] = NAN;
}

/* The explain levels from the machine model: latency, one thread's read
 * bandwidth, MLP and the capacity a program can use (the usable size of
 * a shared cache measured far below its nominal one, else sysfs's). */
static void from_model(const machine_model *model, explain_machine *m, char *capacity_note, size_t length)
{
	if (length)
		capacity_note[0] = 0;
	if (isfinite(model->clock_ghz) && model->clock_ghz > 0)
		m->clock_ghz = model->clock_ghz;
	if (model->line_bytes >= 8)
		m->line_bytes = model->line_bytes;
	for (int l = 0; l < EXPLAIN_LEVELS; l++) {
		const machine_level *ml = machine_model_level(model, l == EXPLAIN_MEMORY ? "DRAM" : explain_level_name((explain_level)l));
		if (!ml)
			continue;
		if (isfinite(ml->latency_ns) && ml->latency_ns > 0)
			m->latency_ns[l] = ml->latency_ns;
		if (isfinite(ml->read_1) && ml->read_1 > 0)
			m->bandwidth_gbps[l] = ml->read_1;
		if (isfinite(ml->mlp) && ml->mlp > 0)
			m->mlp[l] = ml->mlp;
		if (l == EXPLAIN_MEMORY || !(ml->nominal_bytes > 0))
			continue;
		double size = ml->nominal_bytes;
		if (isfinite(machine_level_usable(ml))) {
			size = ml->usable_bytes;
			if (length)
				snprintf(capacity_note, length, "; %s: usable %.1f MiB of the nominal %.0f MiB", ml->name, size / 1048576,
				         ml->nominal_bytes / 1048576);
		}
		m->size_bytes[l] = (uint64_t)size;
	}
	/* A hidden level (no plateau of its own: a VM that leaves the guest
	 * none of a shared cache to speak of) serves its hits at the next
	 * level's latency, so a miss the simulator counts there costs that. */
	for (int l = EXPLAIN_MEMORY - 1; l >= EXPLAIN_L1; l--) {
		const machine_level *ml = machine_model_level(model, explain_level_name((explain_level)l));
		if (!ml || !ml->hidden || isfinite(m->latency_ns[l]) || !isfinite(m->latency_ns[l + 1]))
			continue;
		m->latency_ns[l] = m->latency_ns[l + 1];
		size_t used = length ? strlen(capacity_note) : 0;
		if (used + 1 < length)
			snprintf(capacity_note + used, length - used, "; %s hidden: its hits priced at %s's latency", ml->name,
			         explain_level_name((explain_level)(l + 1)));
	}
}

static int measure_bandwidths(const explain_machine_options *options, const topology *topo, int cpu,
                              machine_model *model_in, explain_machine *m, machine_model *fresh, plumb_status *status);

static int measure_levels(const explain_machine_options *options, const topology *topo, int cpu, explain_machine *m,
                          machine_model *fresh, char *capacity_note, size_t note_length, plumb_status *status)
{
	/* plumb lat's sweep, shorter: one pass, the caller's time cap per
	 * point, a 4 s budget, MLP at each level's plateau. */
	latency_run_options lat;
	latency_run_defaults(&lat);
	lat.cpu = cpu;
	lat.repeats = 0;
	lat.measure.time_cap_ns = options->time_cap_ns;
	lat.sweep_budget_ns = 4000000000ull;
	lat.mlp = true;
	lat.max_chains = options->max_chains < 2 ? 2 : options->max_chains > CHASE_MAX_PARALLEL ? CHASE_MAX_PARALLEL
	                                                                                     : options->max_chains;
	latency_run_result result;
	if (latency_run(&lat, &result, status) != 0)
		return -1;
	/* At most one miss per chain: more means the one-chain run was
	 * slowed by a neighbour (134 "lines" was read so at the L3). */
	for (size_t k = 0; k < result.level_count; k++)
		if (result.levels[k].mlp_done && result.levels[k].mlp.outstanding > lat.max_chains)
			result.levels[k].mlp.outstanding = lat.max_chains;
	output_report *lat_report = latency_run_report(&lat, &result);
	latency_run_free(&result);
	if (!lat_report)
		return plumb_fail(status, ENOMEM, "out of memory");
	machine_model model;
	int rc = machine_model_build(&model, NULL, lat_report, NULL, NULL, status);
	output_report_free(lat_report);
	if (rc != 0)
		return -1;
	from_model(&model, m, capacity_note, note_length);
	/* L1 hits are in the base rate; no misses to overlap */
	m->mlp[EXPLAIN_L1] = NAN;
	return measure_bandwidths(options, topo, cpu, &model, m, fresh, status);
}

/* One thread's read bandwidth per level: plumb bw's read kernel at its
 * default footprint per level (a shared cache's at the usable size model
 * measured; model NULL: sysfs's sizes).  Only the levels whose bandwidth
 * m does not know yet are set; fresh (may be NULL) gets model with the
 * bandwidths and their spread. */
static int measure_bandwidths(const explain_machine_options *options, const topology *topo, int cpu,
                              machine_model *model_in, explain_machine *m, machine_model *fresh, plumb_status *status)
{
	machine_model none;
	machine_model *model_used = model_in;
	if (!model_used) {
		machine_model_clear(&none);
		model_used = &none;
	}
	machine_model model = *model_used;
	timer_calibration timer;
	plumb_status ignored;
	if (timer_calibrate(&timer, 20, &ignored) != 0)
		timer_calibration_clock(&timer);

	/* One thread's read bandwidth per level: plumb bw's read kernel at its
	 * default footprint per level. */
	cpu_features features;
	cpu_features_detect(&features);
	const bandwidth_kernel *kernel = bandwidth_kernel_find(BANDWIDTH_READ, false, bandwidth_isa_best(&features));
	if (!kernel) {
		if (fresh)
			*fresh = model;
		return 0;
	}
	const bandwidth_kernel *kernels[1] = { kernel };
	int threads[1] = { 1 }, cpus[1] = { cpu };
	bandwidth_sweep_request sweep_request = { .topo = topo, .kernels = kernels, .kernel_count = 1,
	                                          .thread_counts = threads, .thread_count_count = 1, .cpus = cpus,
	                                          .cpu_count = 1, .pages = ARENA_PAGES_THP, .timer = &timer,
	                                          .model = model_in ? &model : NULL };
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
		if (isnan(m->bandwidth_gbps[l]) &&
		    bandwidth_level_value(sweep.points, sweep.count, 1, kernel, sweep.levels[k].name, &value, &noisy) > 0)
			m->bandwidth_gbps[l] = value;
	}
	/* the fresh model gets the bandwidths too, with their spread (the
	 * median cv of the points in the level, as the report's model) */
	for (size_t k = 0; fresh && k < model.level_count; k++) {
		machine_level *ml = &model.levels[k];
		double cv[BANDWIDTH_MAX_LEVELS * 4];
		size_t n = 0;
		for (size_t i = 0; i < sweep.count && n < sizeof cv / sizeof *cv; i++)
			if (!strcmp(sweep.points[i].level, ml->name))
				cv[n++] = sweep.points[i].result.gbps.cv;
		double value;
		bool noisy;
		if (bandwidth_level_value(sweep.points, sweep.count, 1, kernel, ml->name, &value, &noisy) > 0) {
			ml->read_1 = value;
			ml->bandwidth_cv = n ? stats_median(cv, n) : NAN;
		}
	}
	if (fresh)
		*fresh = model;
	bandwidth_sweep_free(&sweep);
	return 0;
}

int explain_machine_measure(const explain_machine_options *options, explain_machine *out, plumb_status *status)
{
	return explain_machine_measure_model(options, out, NULL, status);
}

/* What a probe measures: the levels' latencies (and then their
 * bandwidths), or only the bandwidths missing from figures read elsewhere. */
typedef enum { PROBE_LEVELS, PROBE_BANDWIDTHS } probe_kind;

/* Reads the topology, pins this thread to the chosen CPU while probing,
 * then gives back the affinity the caller had: the programs measured
 * afterwards inherit this process's affinity.  *cpu_used: the CPU, -1
 * when it failed before probing. */
static int measure_pinned(const explain_machine_options *options, probe_kind kind, explain_machine *m,
                          machine_model *fresh, char *capacity_note, size_t note_length, int *cpu_used,
                          plumb_status *status)
{
	*cpu_used = -1;
	explain_machine_options defaults;
	if (!options) {
		explain_machine_options_init(&defaults);
		options = &defaults;
	}
	topology topo;
	if (topology_read(&topo, status) != 0)
		return -1;
	cpu_set_t before;
	bool have_before = sched_getaffinity(0, sizeof before, &before) == 0;
	int cpu = options->cpu >= 0 ? options->cpu : cpu_current();
	if (cpu < 0)
		return plumb_fail(status, EINVAL, "cannot tell which CPU this thread runs on");
	if (cpu_pin_self(cpu, status) != 0)
		return -1;
	int rc = kind == PROBE_LEVELS
	                 ? measure_levels(options, &topo, cpu, m, fresh, capacity_note, note_length, status)
	                 : measure_bandwidths(options, &topo, cpu, NULL, m, NULL, status);
	if (have_before)
		sched_setaffinity(0, sizeof before, &before);
	*cpu_used = cpu;
	return rc;
}

int explain_machine_measure_model(const explain_machine_options *options, explain_machine *out, machine_model *fresh,
                                  plumb_status *status)
{
	machine_clear(out);
	if (fresh)
		machine_model_clear(fresh);
	char capacity[128] = "";
	int cpu;
	int rc = measure_pinned(options, PROBE_LEVELS, out, fresh, capacity, sizeof capacity, &cpu, status);
	if (cpu >= 0)
		snprintf(out->source, sizeof out->source, "measured now on CPU %d (plumb lat's sweep and MLP, read kernel)%s",
		         cpu, capacity);
	return rc;
}

bool explain_machine_lacks_bandwidth(const explain_machine *m)
{
	for (int l = EXPLAIN_L2; l < EXPLAIN_LEVELS; l++)
		if (isfinite(m->latency_ns[l]) && !isfinite(m->bandwidth_gbps[l]))
			return true;
	return false;
}

int explain_machine_measure_bandwidths(const explain_machine_options *options, explain_machine *m,
                                       plumb_status *status)
{
	int cpu;
	int rc = measure_pinned(options, PROBE_BANDWIDTHS, m, NULL, NULL, 0, &cpu, status);
	if (rc == 0) {
		size_t used = strlen(m->source);
		snprintf(m->source + used, sizeof m->source - used, "; read bandwidths measured now on CPU %d", cpu);
	}
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

/* The figures read from someone else's file, each one a machine can have
 * when it is there (NaN: unknown, not used): a latency of -5 or 1e300 ns, a
 * bandwidth of 0 or a clock of 0 once went into the prediction as read. */
static int figures_possible(const char *path, const explain_machine *m, plumb_status *status)
{
	static const char *const names[EXPLAIN_LEVELS] = { "L1", "L2", "L3", "memory" };
	if (!isnan(m->clock_ghz) && !(m->clock_ghz >= 1e-3 && m->clock_ghz <= 1e3))
		return plumb_fail(status, EINVAL, "--machine: %s: a clock of %g GHz is not one a machine can have", path,
		                  m->clock_ghz);
	for (int l = 0; l < EXPLAIN_LEVELS; l++) {
		double latency = m->latency_ns[l], bandwidth = m->bandwidth_gbps[l], mlp = m->mlp[l];
		if (!isnan(latency) && !(latency >= 1e-3 && latency <= 1e9))
			return plumb_fail(status, EINVAL, "--machine: %s: %s's latency of %g ns is not one a load can take "
			                  "(more than 0, at most 1 s)", path, names[l], latency);
		if (!isnan(bandwidth) && !(bandwidth > 0 && bandwidth <= 1e7))
			return plumb_fail(status, EINVAL, "--machine: %s: %s's bandwidth of %g GB/s is not one a machine can "
			                  "have", path, names[l], bandwidth);
		if (!isnan(mlp) && !(mlp > 0 && mlp <= 1e6))
			return plumb_fail(status, EINVAL, "--machine: %s: %s's %g lines in flight is not a count a machine can "
			                  "have", path, names[l], mlp);
	}
	return 0;
}

static int machine_load(const char *path, explain_machine *out, plumb_status *status);

int explain_machine_load(const char *path, explain_machine *out, plumb_status *status)
{
	if (machine_load(path, out, status) != 0)
		return -1;
	return figures_possible(path, out, status);
}

static int machine_load(const char *path, explain_machine *out, plumb_status *status)
{
	machine_clear(out);
	char *text;
	size_t length;
	plumb_status read_status;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, &read_status) != 0)
		return plumb_fail(status, read_status.code, "--machine: %s", read_status.message);
	json_object *root = json_tokener_parse(text);
	/* report.json with the machine model: the figures every command reads */
	json_object *summary_object = NULL;
	output_report *summary = root && json_object_object_get_ex(root, "summary", &summary_object) ? embedded_report(summary_object)
	                                                                                              : NULL;
	machine_model model;
	plumb_status no_model = { 0 };
	if (summary && machine_model_from_report(summary, &model, &no_model) != 0 && no_model.code == EINVAL) {
		/* a model that is there but wrong is said, not replaced by the sections' figures */
		output_report_free(summary);
		json_object_put(root);
		free(text);
		return plumb_fail(status, EINVAL, "--machine: %s: %s", path, no_model.message);
	}
	if (summary && no_model.code == 0) {
		char usable[128];
		from_model(&model, out, usable, sizeof usable);
		output_report_free(summary);
		json_object_put(root);
		free(text);
		snprintf(out->source, sizeof out->source, "%.100s (machine model)%s", path, usable);
		return 0;
	}
	output_report_free(summary);
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

/* Why fresh pages and CPU time: a minor fault is the kernel zeroing a page
 * and mapping it, the work a program's first touch of its heap does (and
 * the part of its time the cache model has no term for); the thread's CPU
 * time leaves out what other programs took from this CPU meanwhile.  Huge
 * pages are turned off so that each page is one fault. */
double explain_machine_fault_ns(void)
{
	enum { PAGES = 4096, ROUNDS = 3 };
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return NAN;
	double best = NAN;
	for (int round = 0; round < ROUNDS; round++) {
		size_t bytes = (size_t)PAGES * (size_t)page;
		char *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (memory == MAP_FAILED)
			return best;
		(void)madvise(memory, bytes, MADV_NOHUGEPAGE);
		struct timespec start, end;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
		for (size_t i = 0; i < PAGES; i++)
			((volatile char *)memory)[i * (size_t)page] = 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
		munmap(memory, bytes);
		double ns = ((double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec)) / PAGES;
		if (ns > 0 && !(ns >= best))
			best = ns;
	}
	return best;
}
