/* One node's row of the cluster table: the headline figures of the
 * report's summary (report_summary_build, the same code that writes a
 * single machine's report), flattened to one value per figure, and the
 * node's configuration, so nodes can be compared column by column. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include "cluster/cluster.h"
#include "core/parse.h"
#include "counters/counters.h"
#include "report/report.h"

#define CLUSTER_FILE_LIMIT_MIN (8ull << 20)

int cluster_file_limit_check(plumb_status *status)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
	    (unsigned long long)limit.rlim_cur >= CLUSTER_FILE_LIMIT_MIN)
		return 0;
	char size[32];
	format_size((uint64_t)limit.rlim_cur, size, sizeof size);
	return plumb_fail(status, EFBIG, "the file size limit (ulimit -f) is %s: Open MPI's session files need several "
	                  "MiB; raise it to 8 MiB or more (ulimit -f unlimited)", size);
}

int cluster_sections_parse(char *list, const char **names, size_t max, size_t *count, plumb_status *status)
{
	*count = 0;
	if (parse_list_check(list, 0, status) != 0)
		return -1;
	for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		const report_section *section = report_section_find(s);
		if (!section || !(section->lists & REPORT_SECTION_CLUSTER)) {
			char known[256];
			report_section_list(REPORT_SECTION_CLUSTER, ", ", known, sizeof known);
			return plumb_fail(status, EINVAL, "'%s' is not a cluster section (%s)", s, known);
		}
		for (size_t k = 0; k < *count; k++)
			if (!strcmp(names[k], s))
				return plumb_fail(status, EINVAL, "section '%s' is listed twice", s);
		if (*count + 2 > max)
			return plumb_fail(status, EINVAL, "at most %zu sections", max - 1);
		/* A section that cannot run without an earlier one's report (the
		 * model, fitted to loaded's measurements) gets it before it. */
		if (section->input && section->input_required) {
			bool listed = false;
			for (size_t k = 0; k < *count; k++)
				listed |= !strcmp(names[k], section->input);
			if (!listed)
				names[(*count)++] = section->input;
		}
		names[(*count)++] = s;
	}
	if (!*count)
		return plumb_fail(status, EINVAL, "--sections names no section (e.g. topo,lat)");
	return 0;
}

static long find_row(const output_table *t, const char *key, const char *value)
{
	int k = t ? output_column_index(t, key) : -1;
	for (size_t r = 0; k >= 0 && r < output_row_count(t); r++) {
		const char *s = output_cell_string(t, r, (size_t)k);
		if (s && !strcmp(s, value))
			return (long)r;
	}
	return -1;
}

static const output_report *section(output_report *const *sections, const char *const *commands, size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (sections[i] && !strcmp(commands[i], name))
			return sections[i];
	return NULL;
}

static const char *section_failure(const char *const *commands, const char *const *failures, size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (!strcmp(commands[i], name))
			return failures[i];
	return NULL;
}

/* Why a figure is missing: its section failed (its reason), or did not run. */
static void missing_reason(char *out, size_t length, const char *const *commands, const char *const *failures, size_t count,
                           const char *name)
{
	bool listed = false;
	for (size_t i = 0; i < count; i++)
		listed |= !strcmp(commands[i], name);
	const char *failure = section_failure(commands, failures, count, name);
	if (failure)
		snprintf(out, length, "the %s section failed on this node: %s", name, failure);
	else if (!listed)
		snprintf(out, length, "the %s section was not run", name);
	else
		out[0] = 0;
}

/* Copies one cell of the summary as a figure: its value, or its status and
 * reason; sec_reason (non-empty) overrides when the section failed or did not run. */
static void figure_from(output_table *t, const char *figure, const char *unit, const output_table *from, long row,
                        const char *column, const char *sec_reason)
{
	output_row(t);
	output_cell_text(t, figure);
	int c = from && row >= 0 ? output_column_index(from, column) : -1;
	if (sec_reason && sec_reason[0]) {
		output_cell_status(t, "unsupported", sec_reason);
	} else if (c < 0) {
		output_cell_status(t, "unsupported", "the section did not measure it on this node");
	} else {
		double v = output_cell_number(from, (size_t)row, (size_t)c);
		if (isfinite(v))
			output_cell_real(t, v);
		else
			output_cell_status(t, output_cell_string(from, (size_t)row, (size_t)c) ? output_cell_string(from, (size_t)row, (size_t)c) : "unsupported",
			                   output_cell_reason(from, (size_t)row, (size_t)c) ? output_cell_reason(from, (size_t)row, (size_t)c) : "not measured");
	}
	output_cell_text(t, unit);
}

static void figure_value(output_table *t, const char *figure, const char *unit, double value, const char *why)
{
	output_row(t);
	output_cell_text(t, figure);
	if (isfinite(value))
		output_cell_real(t, value);
	else
		output_cell_status(t, "unsupported", why && why[0] ? why : "not measured");
	output_cell_text(t, unit);
}

static bool good_class(const char *c)
{
	return c && (!strcmp(c, "exact") || !strcmp(c, "accurate"));
}

/* validate's verdicts: the events every benchmark of which a source counted
 * exactly or accurately (NaN when the section did not run). */
static double events_verified(const output_report *validate, const char *source)
{
	const output_table *v = validate ? output_table_find(validate, "verdict") : NULL;
	int ce = v ? output_column_index(v, "event") : -1, cs = v ? output_column_index(v, "source") : -1;
	int cc = v ? output_column_index(v, "class") : -1;
	if (ce < 0 || cs < 0 || cc < 0)
		return NAN;
	double verified = 0;
	size_t rows = output_row_count(v);
	for (size_t r = 0; r < rows; r++) {
		const char *event = output_cell_string(v, r, (size_t)ce);
		bool first = event != NULL;
		for (size_t q = 0; first && q < r; q++) {
			const char *e = output_cell_string(v, q, (size_t)ce);
			first = !(e && !strcmp(e, event));
		}
		if (!first)
			continue;
		bool any = false, good = true;
		for (size_t q = r; q < rows; q++) {
			const char *e = output_cell_string(v, q, (size_t)ce), *s = output_cell_string(v, q, (size_t)cs);
			if (!e || strcmp(e, event) || !s || strcmp(s, source) || output_cell_kind(v, q, (size_t)cc) == CELL_STATUS)
				continue;
			any = true;
			good &= good_class(output_cell_string(v, q, (size_t)cc));
		}
		verified += any && good;
	}
	return verified;
}

static const char *const level_names[] = { "L1", "L2", "L3", "DRAM" };

static void add_figures(output_report *node, const output_report *summary, output_report *const *sections,
                        const char *const *commands, const char *const *failures, size_t count)
{
	output_table *t = output_table_add(node, "figures", "This node's headline figures");
	output_column(t, "figure", NULL, 0);
	output_column(t, "value", NULL, 3);
	output_column(t, "unit", NULL, 0);
	const output_table *h = summary ? output_table_find(summary, "hierarchy") : NULL;
	char lat_reason[PLUMB_MESSAGE_MAX + 64], bw_reason[PLUMB_MESSAGE_MAX + 64];
	missing_reason(lat_reason, sizeof lat_reason, commands, failures, count, "lat");
	missing_reason(bw_reason, sizeof bw_reason, commands, failures, count, "bw");
	static const struct { const char *column, *suffix, *unit; bool bandwidth; } columns[] = {
		{ "latency", "latency", "ns", false },
		{ "read_1", "read_1", "GB/s", true },
		{ "read_all", "read_all", "GB/s", true },
		{ "write_1", "write_1", "GB/s", true },
		{ "write_all", "write_all", "GB/s", true },
	};
	for (size_t l = 0; l < 4; l++) {
		long row = find_row(h, "level", level_names[l]);
		for (size_t c = 0; c < sizeof columns / sizeof *columns; c++) {
			char name[64];
			snprintf(name, sizeof name, "%s_%s", level_names[l], columns[c].suffix);
			const char *why = columns[c].bandwidth ? bw_reason : lat_reason;
			if (!why[0] && row < 0)
				why = "this node's sections found no such level";
			figure_from(t, name, columns[c].unit, h, row, columns[c].column, why);
		}
	}
	const output_table *f = summary ? output_table_find(summary, "figures") : NULL;
	static const struct { const char *quantity, *name, *section; } others[] = {
		{ "cache-to-cache transfer", "c2c_latency", "c2c" },
		{ "loaded latency, idle", "loaded_latency_idle", "loaded" },
		{ "loaded latency, highest load", "loaded_latency_highest", "loaded" },
		{ "queueing model service time", "model_service_time", "model" },
	};
	for (size_t k = 0; k < sizeof others / sizeof *others; k++) {
		char why[PLUMB_MESSAGE_MAX + 64];
		missing_reason(why, sizeof why, commands, failures, count, others[k].section);
		long row = find_row(f, "quantity", others[k].quantity);
		if (!why[0] && row < 0)
			snprintf(why, sizeof why, "the %s section produced no such figure", others[k].section);
		figure_from(t, others[k].name, "ns", f, row, "value", why);
	}
	char why[PLUMB_MESSAGE_MAX + 64];
	double ghz = NAN;
	for (size_t i = 0; summary && i < output_meta_count(summary); i++)
		if (!strcmp(output_meta_key(summary, i), "core_clock_ghz")) {
			char b[64];
			output_meta_format(summary, i, b, sizeof b);
			ghz = strtod(b, NULL);
		}
	figure_value(t, "core_clock", "GHz", ghz, lat_reason[0] ? lat_reason : "the latency section did not estimate the core clock");
	const output_report *validate = section(sections, commands, count, "validate");
	missing_reason(why, sizeof why, commands, failures, count, "validate");
	figure_value(t, "events_verified_perf_event", "events", events_verified(validate, "perf_event"), why);
	figure_value(t, "events_verified_papi", "events", events_verified(validate, "papi"), why);
}

static void property(output_table *t, const char *name, const char *value)
{
	output_row(t);
	output_cell_text(t, name);
	output_cell_text(t, value && value[0] ? value : "unknown");
}

static const char *table_value(const output_report *r, const char *table, const char *key, const char *value_column,
                               char *buffer, size_t length)
{
	const output_table *t = r ? output_table_find(r, table) : NULL;
	long row = find_row(t, "property", key);
	int c = row >= 0 ? output_column_index(t, value_column) : -1;
	if (c < 0)
		return NULL;
	output_cell_format(t, (size_t)row, (size_t)c, buffer, length);
	return buffer;
}

static void add_configuration(output_report *node, const output_report *topo)
{
	output_table *t = output_table_add(node, "configuration", "This node's configuration");
	output_column(t, "property", NULL, 0);
	output_column(t, "value", NULL, 0);
	char b[256];
	property(t, "cpu_model", table_value(topo, "machine", "cpu_model", "value", b, sizeof b));
	property(t, "family/model/stepping", table_value(topo, "machine", "family/model/stepping", "value", b, sizeof b));
	property(t, "cpus", table_value(topo, "machine", "cpus", "value", b, sizeof b));
	property(t, "numa_nodes", table_value(topo, "machine", "numa_nodes", "value", b, sizeof b));
	property(t, "memory", table_value(topo, "machine", "memory", "value", b, sizeof b));
	/* Cache sizes as hwloc gives them: a BIOS setting or a different part shows here. */
	const output_table *caches = topo ? output_table_find(topo, "caches") : NULL;
	int cl = caches ? output_column_index(caches, "level") : -1, ct = caches ? output_column_index(caches, "type") : -1;
	int cs = caches ? output_column_index(caches, "size") : -1, cw = caches ? output_column_index(caches, "ways") : -1;
	static const char *const cache_names[][3] = { { "L1", "data", "L1d" }, { "L1", "instruction", "L1i" }, { "L2", "unified", "L2" },
	                                             { "L3", "unified", "L3" } };
	for (size_t k = 0; k < 4; k++) {
		char name[32], value[96] = "", size[32];
		snprintf(name, sizeof name, "%s_cache", cache_names[k][2]);
		for (size_t r = 0; cl >= 0 && ct >= 0 && cs >= 0 && r < output_row_count(caches); r++) {
			const char *l = output_cell_string(caches, r, (size_t)cl), *ty = output_cell_string(caches, r, (size_t)ct);
			if (!l || !ty || strcmp(l, cache_names[k][0]) || strcmp(ty, cache_names[k][1]))
				continue;
			double ways = cw >= 0 ? output_cell_number(caches, r, (size_t)cw) : NAN;
			report_format_bytes(output_cell_number(caches, r, (size_t)cs), size, sizeof size);
			if (isfinite(ways))
				snprintf(value, sizeof value, "%s %.0f-way", size, ways);
			else
				snprintf(value, sizeof value, "%s", size);
			break;
		}
		property(t, name, topo ? (value[0] ? value : "none") : NULL);
	}
	/* Transparent huge pages: topo's pages table names the mode in its kind. */
	const output_table *pages = topo ? output_table_find(topo, "pages") : NULL;
	int ck = pages ? output_column_index(pages, "kind") : -1;
	char thp[64] = "";
	for (size_t r = 0; ck >= 0 && r < output_row_count(pages); r++) {
		const char *k = output_cell_string(pages, r, (size_t)ck);
		if (k && !strncmp(k, "thp", 3)) {
			const char *open = strchr(k, '(');
			snprintf(thp, sizeof thp, "%.*s", open ? (int)strcspn(open + 1, ")") : 3, open ? open + 1 : "unknown");
		}
	}
	property(t, "transparent_hugepages", topo ? (thp[0] ? thp : "unavailable") : NULL);
	struct utsname u;
	property(t, "kernel", uname(&u) == 0 ? u.release : NULL);
	property(t, "perf_event_paranoid", table_value(topo, "timing_and_counters", "perf_event_paranoid", "value", b, sizeof b));
	/* Counter availability: the hardware PMU as topo found it, and PAPI as
	 * its own component status says. */
	const output_table *tc = topo ? output_table_find(topo, "timing_and_counters") : NULL;
	long hw = find_row(tc, "property", "hardware_counters");
	int cv = hw >= 0 ? output_column_index(tc, "value") : -1;
	if (cv >= 0 && output_cell_kind(tc, (size_t)hw, (size_t)cv) == CELL_STATUS) {
		snprintf(b, sizeof b, "%s: %s", output_cell_string(tc, (size_t)hw, (size_t)cv), output_cell_reason(tc, (size_t)hw, (size_t)cv));
		property(t, "perf_hardware_counters", b);
	} else {
		property(t, "perf_hardware_counters", table_value(topo, "timing_and_counters", "hardware_counters", "value", b, sizeof b));
	}
	plumb_status status;
	if (counter_backend_usable("papi", &status) == 0)
		property(t, "papi", "usable");
	else {
		char why[PLUMB_MESSAGE_MAX + 16];
		snprintf(why, sizeof why, "unusable: %s", status.message);
		property(t, "papi", why);
	}
	property(t, "plumb_version", PLUMB_VERSION);
}

output_report *cluster_node_report(const cluster_placement *placement, output_report *const *sections,
                                   const char *const *commands, const char *const *failures, size_t count)
{
	output_report *node = output_report_new("cluster-node");
	output_report *summary = report_summary_build(sections, commands, count);
	if (!node || !summary) {
		output_report_free(node);
		output_report_free(summary);
		return NULL;
	}
	output_meta_integer(node, "rank", placement->rank);
	output_meta_text(node, "host", placement->host);
	output_meta_text(node, "cpus", placement->cpus);
	output_meta_text(node, "sharing", placement->sharing);
	output_meta_integer(node, "ranks_on_node", placement->ranks_on_node);
	output_meta_text(node, "placement", placement->detail);
	add_figures(node, summary, sections, commands, failures, count);
	add_configuration(node, section(sections, commands, count, "topo"));
	output_table *t = output_table_add(node, "sections", "The sections this node ran");
	output_column(t, "section", NULL, 0);
	output_column(t, "result", NULL, 0);
	for (size_t i = 0; i < count; i++) {
		output_row(t);
		output_cell_text(t, commands[i]);
		if (failures[i])
			output_cell_status(t, "failed", failures[i]);
		else
			output_cell_text(t, "ok");
	}
	output_report_free(summary);
	return node;
}
