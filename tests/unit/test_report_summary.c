/* The report's summary, report.json and --compare, from small hand-made
 * section reports whose figures are known. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/report.h"
#include "../temp_folder.h"

static output_report *topo(void)
{
	output_report *r = output_report_new("topo");
	output_table *m = output_table_add(r, "machine", "Machine");
	output_column(m, "property", NULL, 0);
	output_column(m, "value", NULL, 0);
	const char *rows[][2] = { { "cpu_model", "Test CPU" }, { "cpus", "2" }, { "virtualised", "yes (CPUID hypervisor bit)" },
		                  { "generation", "Sapphire Rapids or later (CPUID says model 167, Rocket Lake, but its AMX "
		                                  "says Sapphire Rapids or later: taken as model 143)" } };
	for (size_t i = 0; i < 4; i++) {
		output_row(m);
		output_cell_text(m, rows[i][0]);
		output_cell_text(m, rows[i][1]);
	}
	output_table *c = output_table_add(r, "caches", "Caches");
	output_column(c, "level", NULL, 0);
	output_column(c, "type", NULL, 0);
	output_column(c, "size", "bytes", 0);
	const char *levels[] = { "L1", "L1", "L2", "L3" }, *types[] = { "instruction", "data", "unified", "unified" };
	int64_t sizes[] = { 32768, 49152, 1048576, 33554432 };
	for (size_t i = 0; i < 4; i++) {
		output_row(c);
		output_cell_text(c, levels[i]);
		output_cell_text(c, types[i]);
		output_cell_integer(c, sizes[i]);
	}
	output_table *t = output_table_add(r, "timing_and_counters", "Timer and counters");
	output_column(t, "property", NULL, 0);
	output_column(t, "value", NULL, 0);
	output_row(t);
	output_cell_text(t, "hardware_counters");
	output_cell_status(t, "unsupported", "ENOENT: no PMU");
	return r;
}

static output_report *lat(double memory_ns)
{
	output_report *r = output_report_new("lat");
	output_meta_real(r, "core_clock_ghz_estimate", 4.0);
	output_table *t = output_table_add(r, "levels", "Levels");
	output_column(t, "level", NULL, 0);
	output_column(t, "latency", "ns", 2);
	output_column(t, "low", "ns", 2);
	output_column(t, "high", "ns", 2);
	output_column(t, "ends_at", "bytes", 0);
	output_column(t, "ends_low", "bytes", 0);
	output_column(t, "ends_high", "bytes", 0);
	output_column(t, "passes", NULL, 0);
	output_column(t, "stability", NULL, 0);
	const char *names[] = { "L1", "L2", "L3", "memory" };
	double ns[] = { 1, 3.5, 10, memory_ns }, ends[] = { 49152, 1048576, 3 << 20, NAN };
	/* The L3's passes ended between 1.5 and 3 MiB: unstable. */
	double lows[] = { 49152, 1048576, 3 << 19, NAN };
	for (size_t i = 0; i < 4; i++) {
		output_row(t);
		output_cell_text(t, names[i]);
		output_cell_real(t, ns[i]);
		output_cell_real(t, ns[i] * 0.95);
		output_cell_real(t, ns[i] * 1.05);
		if (isfinite(ends[i])) {
			output_cell_integer(t, (int64_t)ends[i]);
			output_cell_integer(t, (int64_t)lows[i]);
			output_cell_integer(t, (int64_t)ends[i]);
			output_cell_integer(t, 5);
			output_cell_text(t, i == 2 ? "unstable" : "stable");
		} else {
			for (int c = 0; c < 3; c++)
				output_cell_status(t, "n/a", "the last level does not end inside the sweep");
			output_cell_integer(t, 0);
			output_cell_text(t, "-");
		}
	}
	return r;
}

static output_report *geometry(void)
{
	output_report *r = output_report_new("geometry");
	output_table *t = output_table_add(r, "geometry", "Geometry");
	output_column(t, "property", NULL, 0);
	output_column(t, "level", NULL, 0);
	output_column(t, "measured", NULL, 0);
	output_column(t, "low", NULL, 0);
	output_column(t, "high", NULL, 0);
	/* L3: 12 MiB here against 3 MiB in the latency sweep: geometry ran
	 * on its own (sections from two runs). */
	const char *props[] = { "capacity", "capacity", "latency" }, *levels[] = { "L3", "L2", "memory" };
	double v[] = { 12 << 20, 1 << 20, 200 };
	for (size_t i = 0; i < 3; i++) {
		output_row(t);
		output_cell_text(t, props[i]);
		output_cell_text(t, levels[i]);
		output_cell_real(t, v[i]);
		output_cell_real(t, v[i]);
		output_cell_real(t, v[i] * 1.2);
	}
	return r;
}

static output_report *bw(void)
{
	output_report *r = output_report_new("bw");
	output_table *t = output_table_add(r, "levels", "GB/s per level");
	output_column(t, "threads", NULL, 0);
	output_column(t, "kernel", NULL, 0);
	const char *levels[] = { "L1", "L2", "L3", "DRAM" };
	for (size_t i = 0; i < 4; i++)
		output_column(t, levels[i], "GB/s", 1);
	for (int threads = 1; threads <= 2; threads++)
		for (int k = 0; k < 2; k++) {
			output_row(t);
			output_cell_integer(t, threads);
			output_cell_text(t, k ? "write" : "read");
			for (size_t i = 0; i < 4; i++)
				output_cell_real(t, (k ? 50.0 : 100.0) * threads / (double)(i + 1));
		}
	return r;
}

static output_report *validate(void)
{
	output_report *r = output_report_new("validate");
	output_table *t = output_table_add(r, "verdict", "Can I trust my counters?");
	output_column(t, "event", NULL, 0);
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "source", NULL, 0);
	output_column(t, "class", NULL, 0);
	const char *rows[][4] = {
		{ "minor-faults", "page-faults", "perf_event", "exact" },
		{ "minor-faults", "page-faults", "papi", NULL },
		{ "minor-faults", "page-faults", "simulator", "exact" },
		{ "PAPI_L1_DCM", "stride", "perf_event", "-" },
		{ "PAPI_L1_DCM", "stride", "papi", NULL },
		{ "PAPI_L1_DCM", "stride", "simulator", "exact" },
		{ "PAPI_L1_DCM", "random", "perf_event", "-" },
		{ "PAPI_L1_DCM", "random", "papi", NULL },
		{ "PAPI_L1_DCM", "random", "simulator", "exact" },
		{ "PAPI_L1_DCM", "random", "instrumented", "accurate" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		output_row(t);
		output_cell_text(t, rows[i][0]);
		output_cell_text(t, rows[i][1]);
		output_cell_text(t, rows[i][2]);
		if (!rows[i][3])
			output_cell_status(t, "unsupported", "PAPI counts nothing here");
		else if (!strcmp(rows[i][3], "-"))
			output_cell_status(t, "unsupported", "no PMU: perf_event_open gives ENOENT");
		else
			output_cell_text(t, rows[i][3]);
	}
	/* sources: stride's L1 misses at three sizes, the largest outside the domain. */
	output_table *src = output_table_add(r, "sources", "Every source side by side");
	const char *cols[] = { "benchmark", "event", "size", "predicted", "perf_event", "papi", "simulator", "instrumented", "in_domain" };
	for (size_t i = 0; i < 9; i++)
		output_column(src, cols[i], NULL, 0);
	int64_t sizes[] = { 10, 100, 1000 };
	for (size_t i = 0; i < 3; i++) {
		output_row(src);
		output_cell_text(src, "stride");
		output_cell_text(src, "PAPI_L1_DCM");
		output_cell_integer(src, sizes[i]);
		output_cell_real(src, (double)sizes[i]);
		output_cell_status(src, "unsupported", "no PMU: perf_event_open gives ENOENT");
		output_cell_status(src, "unsupported", "PAPI counts nothing here");
		output_cell_real(src, (double)sizes[i] + 1);
		output_cell_real(src, (double)sizes[i]);
		output_cell_text(src, i == 2 ? "no" : "yes");
	}
	output_row(src);
	output_cell_text(src, "page-faults");
	output_cell_text(src, "minor-faults");
	for (size_t i = 2; i < 9; i++)
		output_cell_integer(src, 1);
	output_note(r, "4 verdicts recorded in %s/.local/share/plumb/verification.tsv", getenv("HOME") ? getenv("HOME") : "/root");
	return r;
}

static double cell(const output_report *s, const char *table, const char *key, const char *name, const char *column)
{
	const output_table *t = output_table_find(s, table);
	cr_assert_not_null(t, "no table %s", table);
	int k = output_column_index(t, key), c = output_column_index(t, column);
	cr_assert_geq(c, 0, "no column %s", column);
	for (size_t r = 0; r < output_row_count(t); r++)
		if (!strcmp(output_cell_string(t, r, (size_t)k), name))
			return output_cell_number(t, r, (size_t)c);
	cr_assert_fail("no row %s in %s", name, table);
	return NAN;
}

static const char *text_cell(const output_report *s, const char *table, const char *key, const char *name, const char *column)
{
	const output_table *t = output_table_find(s, table);
	int k = output_column_index(t, key), c = output_column_index(t, column);
	for (size_t r = 0; r < output_row_count(t); r++)
		if (!strcmp(output_cell_string(t, r, (size_t)k), name))
			return output_cell_string(t, r, (size_t)c);
	return NULL;
}

#define SECTIONS 5
static output_report *sections[SECTIONS];
static const char *const commands[SECTIONS] = { "topo", "lat", "geometry", "bw", "validate" };

static void make_sections(double memory_ns)
{
	sections[0] = topo();
	sections[1] = lat(memory_ns);
	sections[2] = geometry();
	sections[3] = bw();
	sections[4] = validate();
}

static void free_sections(void)
{
	for (size_t i = 0; i < SECTIONS; i++)
		output_report_free(sections[i]);
}

Test(report_summary, hierarchy_row_per_level_from_the_sections)
{
	make_sections(100);
	output_report *s = report_summary_build(sections, commands, SECTIONS);
	cr_assert_not_null(s);
	const output_table *h = output_table_find(s, "hierarchy");
	cr_assert_eq(output_row_count(h), 4);
	cr_assert_eq(cell(s, "hierarchy", "level", "L1", "sysfs_size"), 49152, "the data cache, not the instruction cache");
	cr_assert_eq(cell(s, "hierarchy", "level", "L3", "sysfs_size"), 33554432);
	cr_assert_eq(cell(s, "hierarchy", "level", "L1", "latency"), 1);
	cr_assert_eq(cell(s, "hierarchy", "level", "L2", "latency_cycles"), 14);
	cr_assert_eq(cell(s, "hierarchy", "level", "L1", "read_1"), 100);
	cr_assert_eq(cell(s, "hierarchy", "level", "L1", "read_all"), 200);
	cr_assert_eq(cell(s, "hierarchy", "level", "DRAM", "write_1"), 12.5);
	cr_assert_eq(cell(s, "hierarchy", "level", "DRAM", "write_all"), 25);
	/* L3: one figure, the latency sweep's 3 MiB, with its spread over
	 * the passes (1.5-3 MiB), labelled unstable with the reason; the
	 * geometry section's separate 12 MiB is mentioned, not blended in. */
	cr_assert_eq(cell(s, "hierarchy", "level", "L3", "measured_size"), 3 << 20);
	cr_assert_eq(cell(s, "hierarchy", "level", "L3", "measured_size_low"), 3 << 19);
	cr_assert_eq(cell(s, "hierarchy", "level", "L3", "measured_size_high"), 3 << 20);
	cr_assert_eq(cell(s, "hierarchy", "level", "L3", "size_passes"), 5);
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L3", "size_stability"), "unstable");
	cr_assert(strstr(text_cell(s, "hierarchy", "level", "L3", "size_source"), "unstable"));
	cr_assert(strstr(text_cell(s, "hierarchy", "level", "L3", "note"), "unstable"));
	cr_assert(strstr(text_cell(s, "hierarchy", "level", "L3", "note"), "1.5 MiB and 3 MiB"));
	cr_assert(strstr(text_cell(s, "hierarchy", "level", "L3", "note"), "12 MiB"));
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L2", "size_stability"), "stable");
	/* DRAM latency: 100 ns in the latency sweep (95-105 over its
	 * plateau); geometry's separate 200 ns is mentioned, not blended. */
	cr_assert_eq(cell(s, "hierarchy", "level", "DRAM", "latency"), 100);
	cr_assert_eq(cell(s, "hierarchy", "level", "DRAM", "latency_high"), 105);
	cr_assert(strstr(text_cell(s, "hierarchy", "level", "DRAM", "note"), "200 ns"));
	cr_assert_eq(text_cell(s, "hierarchy", "level", "L2", "note")[0], 0, "L2 agrees: no note");
	/* the generation, which the brand string does not say, by name alone */
	char generation[128];
	output_meta_text_of(s, "generation", generation, sizeof generation);
	cr_assert_str_eq(generation, "Sapphire Rapids or later");
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	cr_assert_eq(report_summary_write_text(s, f, 0), 0);
	fclose(f);
	cr_assert(!strncmp(text, "Summary: Test CPU (Sapphire Rapids or later), 2 CPUs", 52), "%s", text);
	free(text);
	output_report_free(s);
	free_sections();
}

Test(report_summary, counter_grid_lists_each_reason_once)
{
	make_sections(100);
	output_report *s = report_summary_build(sections, commands, SECTIONS);
	const output_table *g = output_table_find(s, "counters");
	cr_assert_not_null(g);
	cr_assert_eq(output_row_count(g), 2, "one row per event");
	const output_table *reasons = output_table_find(s, "unsupported_reasons");
	cr_assert_eq(output_row_count(reasons), 2, "PAPI's and perf's reasons, once each");
	cr_assert_str_eq(text_cell(s, "counters", "event", "PAPI_L1_DCM", "predicted"), "stride, random");
	cr_assert_str_eq(text_cell(s, "counters", "event", "PAPI_L1_DCM", "papi"), "unsupported [1]");
	cr_assert_str_eq(text_cell(s, "counters", "event", "PAPI_L1_DCM", "perf_event"), "unsupported [2]");
	cr_assert_str_eq(text_cell(s, "counters", "event", "minor-faults", "perf_event"), "exact");
	cr_assert_str_eq(text_cell(s, "counters", "event", "PAPI_L1_DCM", "instrumented"), "accurate");
	char trust[1024] = "";
	for (size_t i = 0; i < output_meta_count(s); i++)
		if (!strcmp(output_meta_key(s, i), "counters"))
			output_meta_format(s, i, trust, sizeof trust);
	cr_assert(strstr(trust, "No hardware PMU"), "%s", trust);
	cr_assert(strstr(trust, "Software events are exact"), "%s", trust);
	cr_assert(strstr(trust, "1 of 2 events verified through perf_event"), "%s", trust);
	/* The simulator's view: miss events only, at the largest in-domain case. */
	const output_table *sim = output_table_find(s, "simulated");
	cr_assert_not_null(sim);
	cr_assert_eq(output_row_count(sim), 1, "minor-faults is not a miss event");
	cr_assert_eq(cell(s, "simulated", "event", "PAPI_L1_DCM", "size"), 100);
	cr_assert_eq(cell(s, "simulated", "event", "PAPI_L1_DCM", "simulator"), 101);
	cr_assert_eq(cell(s, "simulated", "event", "PAPI_L1_DCM", "predicted"), 100);
	output_report_free(s);
	free_sections();
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char *text = NULL;
	size_t n = 0;
	cr_assert(getdelim(&text, &n, 0, f) > 0);
	fclose(f);
	return text;
}

Test(report_summary, page_json_and_compare)
{
	make_sections(100);
	output_report *s = report_summary_build(sections, commands, SECTIONS);
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-summary-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char html[256], json[256];
	snprintf(html, sizeof html, "%s/report.html", dir);
	snprintf(json, sizeof json, "%s/report.json", dir);
	const char *failures[SECTIONS] = { 0 };
	plumb_status st;
	cr_assert_eq(report_write_page(html, "t", s, json, sections, commands, failures, SECTIONS, &st), 0, "%s", st.message);
	cr_assert_eq(report_write_json(json, "t", s, sections, commands, failures, SECTIONS, &st), 0, "%s", st.message);
	char *page = slurp(html);
	char *summary = strstr(page, "id=\"summary\""), *first = strstr(page, "id=\"topo\"");
	cr_assert(summary && first && summary < first, "the summary comes before every section");
	cr_assert(strstr(page, "href=\"report.json\""), "the page links report.json by its base name");
	cr_assert(strstr(page, "~/.local/share/plumb/verification.tsv"));
	const char *home = getenv("HOME");
	if (home && strlen(home) > 1)
		cr_assert_null(strstr(page, home), "the page shows the home directory as ~");
	char *end = strstr(summary, "</section>");
	cr_assert_not_null(end);
	*end = 0;
	char *reason = strstr(summary, "<li>PAPI counts nothing here</li>");
	cr_assert_not_null(reason);
	cr_assert_null(strstr(reason + 5, "PAPI counts nothing here"), "a reason appears once in the summary");
	cr_assert_null(strstr(summary, "PAPI counts nothing here") < reason ? summary : NULL, "and only in the footnotes");
	free(page);

	report_bundle b;
	cr_assert_eq(report_bundle_read(json, &b, &st), 0, "%s", st.message);
	cr_assert_eq(b.count, SECTIONS);
	cr_assert_str_eq(b.commands[1], "lat");
	cr_assert_not_null(b.summary);
	cr_assert_eq(cell(b.summary, "hierarchy", "level", "L1", "read_all"), 200);

	/* B: DRAM latency 300 ns against 100 (spread up to 52%, geometry saw 200): flagged; L1 the same: not. */
	free_sections();
	make_sections(300);
	output_report *s2 = report_summary_build(sections, commands, SECTIONS);
	output_report *c = report_compare(b.summary, s2, json, "/elsewhere/b.json");
	cr_assert_str_eq(text_cell(c, "compare", "quantity", "DRAM latency", "beyond_spread"), "yes");
	cr_assert_eq(cell(c, "compare", "quantity", "DRAM latency", "difference"), 200);
	cr_assert_str_eq(text_cell(c, "compare", "quantity", "L1 latency", "beyond_spread"), "no");
	char chtml[256];
	snprintf(chtml, sizeof chtml, "%s/compare.html", dir);
	cr_assert_eq(report_write_compare_html(chtml, c, &st), 0, "%s", st.message);
	page = slurp(chtml);
	cr_assert(strstr(page, "DRAM latency"));
	cr_assert(strstr(page, "b.json"));
	cr_assert_null(strstr(page, "/elsewhere"), "file names by base name");
	free(page);
	output_report_free(c);
	output_report_free(s2);
	report_bundle_free(&b);
	output_report_free(s);
	free_sections();
	unlink(html);
	unlink(json);
	unlink(chtml);
	rmdir(dir);
}

Test(report_summary, missing_sections_give_reasons_not_zeros)
{
	output_report *only[] = { lat(90) };
	const char *names[] = { "lat" };
	output_report *s = report_summary_build(only, names, 1);
	const output_table *h = output_table_find(s, "hierarchy");
	int c = output_column_index(h, "read_1");
	cr_assert_eq(output_cell_kind(h, 0, (size_t)c), CELL_STATUS);
	cr_assert(strstr(output_cell_reason(h, 0, (size_t)c), "did not run"));
	cr_assert_null(output_table_find(s, "counters"));
	output_report_free(s);
	output_report_free(only[0]);
}

Test(report_summary, loaded_idle_against_the_latency_sections_dram)
{
	output_report *loaded = output_report_new("loaded");
	output_table *t = output_table_add(loaded, "loaded", "Latency against generator bandwidth");
	output_column(t, "delay", NULL, 0);
	output_column(t, "latency", "ns", 1);
	output_column(t, "total_bandwidth", "MB/s", 1);
	const char *delays[] = { "idle", "4096", "0" };
	double ns[] = { 600, 650, 900 }, mbps[] = { 100, 200, 5000 };
	for (size_t i = 0; i < 3; i++) {
		output_row(t);
		output_cell_text(t, delays[i]);
		output_cell_real(t, ns[i]);
		output_cell_real(t, mbps[i]);
	}
	output_report *reports[] = { lat(100), loaded };
	const char *names[] = { "lat", "loaded" };
	output_report *s = report_summary_build(reports, names, 2);
	cr_assert_eq(cell(s, "figures", "quantity", "loaded latency, idle", "value"), 600);
	cr_assert_eq(cell(s, "figures", "quantity", "loaded latency, highest load", "value"), 900);
	const char *detail = text_cell(s, "figures", "quantity", "loaded latency, idle", "detail");
	cr_assert(strstr(detail, "6.0x the latency section's DRAM latency (100 ns)"), "%s", detail);
	cr_assert(!strstr(detail, "idle check"), "no checks table, no idle check: %s", detail);
	output_report_free(s);
	output_report_free(reports[0]);
	output_report_free(loaded);
}

/* The loaded section's checks reach the summary's two lines. */
static output_report *loaded_with_checks(const char *idle_verdict, double reference, const char *queueing)
{
	output_report *loaded = output_report_new("loaded");
	output_table *t = output_table_add(loaded, "loaded", "Latency against generator bandwidth");
	output_column(t, "delay", NULL, 0);
	output_column(t, "latency", "ns", 1);
	output_column(t, "total_bandwidth", "MB/s", 1);
	const char *delays[] = { "idle", "4096", "0" };
	double ns[] = { 150, 235, 240 }, mbps[] = { 400, 460, 11000 };
	for (size_t i = 0; i < 3; i++) {
		output_row(t);
		output_cell_text(t, delays[i]);
		output_cell_real(t, ns[i]);
		output_cell_real(t, mbps[i]);
	}
	output_table *c = output_table_add(loaded, "checks", "Checks");
	output_column(c, "check", NULL, 0);
	output_column(c, "verdict", NULL, 0);
	output_column(c, "measured", "ns", 1);
	output_column(c, "reference", "ns", 1);
	output_column(c, "at_bandwidth", "MB/s", 0);
	output_row(c);
	output_cell_text(c, "idle");
	output_cell_text(c, idle_verdict);
	output_cell_real(c, 150);
	output_cell_real(c, reference);
	output_cell_real(c, 0);
	output_row(c);
	output_cell_text(c, "queueing");
	output_cell_text(c, queueing);
	output_cell_real(c, 235);
	output_cell_real(c, 150.02);
	output_cell_real(c, 60);
	return loaded;
}

Test(report_summary, loaded_lines_show_the_idle_check_and_the_queueing_flag)
{
	output_report *reports[] = { lat(148), loaded_with_checks("agrees", 146, "step-not-queueing") };
	const char *names[] = { "lat", "loaded" };
	output_report *s = report_summary_build(reports, names, 2);
	const char *idle = text_cell(s, "figures", "quantity", "loaded latency, idle", "detail");
	cr_expect(strstr(idle, "idle check: agrees with the latency probe's own loop on the same chain (146 ns)"), "%s", idle);
	cr_expect(!strstr(idle, "DRAM latency"), "148 and 150 ns agree: %s", idle);
	const char *top = text_cell(s, "figures", "quantity", "loaded latency, highest load", "detail");
	cr_expect(strstr(top, "queueing check: a step of 85 ns at 60 MB/s that Hristea's queueing model (1997) cannot make "
	                      "(it allows 150 ns there)"), "%s", top);
	output_report_free(s);
	output_report_free(reports[1]);

	reports[1] = loaded_with_checks("disagrees", 50, "consistent");
	s = report_summary_build(reports, names, 2);
	idle = text_cell(s, "figures", "quantity", "loaded latency, idle", "detail");
	cr_expect(strstr(idle, "idle check: 3.0x the latency probe's own loop on the same chain (50 ns): the idle point was disturbed"),
	          "%s", idle);
	top = text_cell(s, "figures", "quantity", "loaded latency, highest load", "detail");
	cr_expect(strstr(top, "queueing check: every point is within what Hristea's queueing model (1997) allows"), "%s", top);
	output_report_free(s);
	output_report_free(reports[0]);
	output_report_free(reports[1]);
}

static output_report *perturb_section(const char *f_star, double rate)
{
	output_report *r = output_report_new("perturb");
	output_meta_text(r, "program", "workload code");
	output_meta_integer(r, "configurations", 7);
	output_meta_integer(r, "runs_per_configuration", 5);
	if (strcmp(f_star, "not reached")) {
		output_meta_real(r, "f_star_seconds", atof(f_star));
		if (rate > 0) {
			output_meta_real(r, "reference_rate", rate);
			output_meta_real(r, "buffer_records", atof(f_star) * rate);
		}
	} else {
		output_meta_text(r, "f_star_seconds", f_star);
	}
	return r;
}

Test(report_summary, perturb_gives_f_star_and_the_buffer_it_implies)
{
	/* Watson's conclusion: 1 s between halts at 16 M references/s is a 16 M-reference buffer */
	output_report *reports[] = { perturb_section("1", 16e6) };
	const char *names[] = { "perturb" };
	output_report *s = report_summary_build(reports, names, 1);
	cr_assert_eq(cell(s, "figures", "quantity", "halts that do not perturb (f*)", "value"), 1000);
	cr_assert_eq(cell(s, "figures", "quantity", "trace buffer for f*", "value"), 16e6);
	const char *detail = text_cell(s, "figures", "quantity", "halts that do not perturb (f*)", "detail");
	cr_assert(strstr(detail, "'workload code'") && strstr(detail, "7 configurations, 5 runs each"), "%s", detail);
	output_report_free(s);
	output_report_free(reports[0]);
}

Test(report_summary, perturb_without_f_star_or_rate_says_why)
{
	output_report *reports[] = { perturb_section("not reached", 0) };
	const char *names[] = { "perturb" };
	output_report *s = report_summary_build(reports, names, 1);
	const output_table *t = output_table_find(s, "figures");
	cr_assert_not_null(t);
	int v = output_column_index(t, "value");
	cr_assert_eq(output_cell_kind(t, 0, (size_t)v), CELL_STATUS);
	cr_assert(strstr(output_cell_reason(t, 0, (size_t)v), "no interval tested left every event unchanged"));
	cr_assert(strstr(output_cell_reason(t, 1, (size_t)v), "there is no f*"));
	output_report_free(s);
	output_report_free(reports[0]);
	reports[0] = perturb_section("0.004", 0);
	s = report_summary_build(reports, names, 1);
	t = output_table_find(s, "figures");
	cr_assert(strstr(output_cell_reason(t, 1, (size_t)v), "no reference rate"));
	output_report_free(s);
	output_report_free(reports[0]);
}

/* Found by the report_bundle fuzzer: a schema, command or reason that is
 * null or not a string crashed plumb report --from (strcmp and strdup of
 * NULL).  Each is now refused, or read as missing, with one line. */
Test(report_summary, a_bundle_with_members_of_the_wrong_type_is_refused)
{
	static const struct { const char *json, *message; } cases[] = {
		{ "{\"schema\": null}", "not a plumb report" },
		{ "{\"schema\": 5}", "not a plumb report" },
		{ "{\"schema\": [\"plumb-report\"]}", "not a plumb report" },
		{ "[1, 2]", "not a plumb report" },
		{ "{\"schema\": \"plumb-machine-report\", \"sections\": [{\"command\": null}]}", "section 1 has no command" },
		{ "{\"schema\": \"plumb-machine-report\", \"sections\": [{\"command\": {}}]}", "section 1 has no command" },
		{ "{\"schema\": \"plumb-machine-report\", \"sections\": [5]}", "section 1 has no command" },
	};
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-bundle-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/r.json", dir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fputs(cases[i].json, f);
		fclose(f);
		report_bundle b;
		plumb_status st;
		cr_assert_eq(report_bundle_read(path, &b, &st), -1, "read %s", cases[i].json);
		cr_assert(strstr(st.message, cases[i].message), "%s: %s", cases[i].json, st.message);
	}
	/* A reason that is not a string reads as "not run". */
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"schema\": \"plumb-machine-report\", \"sections\": [{\"command\": \"lat\", \"reason\": null}]}", f);
	fclose(f);
	report_bundle b;
	plumb_status st;
	cr_assert_eq(report_bundle_read(path, &b, &st), 0, "%s", st.message);
	cr_assert_str_eq(b.failures[0], "not run");
	report_bundle_free(&b);
	unlink(path);
	rmdir(dir);
}

/* Issue 28: where a program's working set lands (plumb report --program).
 * The rule alone: the first level whose knee is at most what it holds;
 * a knee of 0 (no capacity removes a miss) lands at once; a level neither
 * simulated nor listed is skipped; one known without the other is unknown. */
Test(report_summary, working_set_level_rule)
{
	bool unknown;
	double capacity[3] = { 48 << 10, 2 << 20, 32 << 20 };
	double fits_l1[3] = { 32 << 10, 4 << 20, 4 << 20 };
	cr_assert_eq(report_working_set_level(fits_l1, capacity, 3, &unknown), 0);
	cr_assert_not(unknown);
	double exact[3] = { 48 << 10, 0, 0 };
	cr_assert_eq(report_working_set_level(exact, capacity, 3, &unknown), 0, "a knee equal to the capacity fits");
	double l2[3] = { 64 << 10, 1 << 20, 1 << 20 };
	cr_assert_eq(report_working_set_level(l2, capacity, 3, &unknown), 1);
	double l3[3] = { 4 << 20, 4 << 20, 4 << 20 };
	cr_assert_eq(report_working_set_level(l3, capacity, 3, &unknown), 2);
	double memory[3] = { 64 << 20, 64 << 20, 64 << 20 };
	cr_assert_eq(report_working_set_level(memory, capacity, 3, &unknown), 3);
	cr_assert_not(unknown);
	double streams[3] = { 0, 0, 0 };
	cr_assert_eq(report_working_set_level(streams, capacity, 3, &unknown), 0, "no capacity removes a miss");
	double below[3] = { 64 << 10, 0, 8 << 20 };
	cr_assert_eq(report_working_set_level(below, capacity, 3, &unknown), 1,
	             "the L1's misses are the L2's first references only");
	/* no L3 on the machine: past the L2 is memory */
	double no_l3_capacity[3] = { 48 << 10, 2 << 20, NAN }, no_l3[3] = { 4 << 20, 4 << 20, NAN };
	cr_assert_eq(report_working_set_level(no_l3, no_l3_capacity, 3, &unknown), 3);
	cr_assert_not(unknown);
	/* a capacity nobody gave: it cannot be placed past that level */
	double no_size[3] = { 48 << 10, NAN, 32 << 20 };
	cr_assert_eq(report_working_set_level(l3, no_size, 3, &unknown), 3);
	cr_assert(unknown);
	cr_assert_eq(report_working_set_level(fits_l1, no_size, 3, &unknown), 0, "placed before the unknown level");
	cr_assert_not(unknown);
}

/* The program section's report as plumb sim --curve data writes it: the
 * knees of the whole program ("(all)") per level, and a region's (which
 * the hierarchy does not read).  NAN: the level was not simulated; 0: no
 * capacity removes a miss (the cell is n/a). */
static output_report *program_section(double l1d, double l2, double l3)
{
	output_report *r = output_report_new("sim");
	output_meta_text(r, "trace", "./prog");
	output_table *k = output_table_add(r, "knees", "Knees");
	const char *columns[] = { "region", "level", "references", "misses_one_line", "misses_largest", "knee_bytes" };
	for (size_t c = 0; c < 6; c++)
		output_column(k, columns[c], NULL, 0);
	const char *levels[] = { "l1d", "l2", "l3" };
	double knees[] = { l1d, l2, l3 };
	for (size_t l = 0; l < 3; l++) {
		if (isnan(knees[l]))
			continue;
		for (int region = 0; region < 2; region++) {
			output_row(k);
			output_cell_text(k, region ? "inner" : "(all)");
			output_cell_text(k, levels[l]);
			output_cell_integer(k, 1000);
			output_cell_integer(k, 900);
			output_cell_integer(k, 100);
			if (region)
				output_cell_integer(k, 64);
			else if (knees[l] > 0)
				output_cell_integer(k, (int64_t)knees[l]);
			else
				output_cell_status(k, "n/a", "no capacity removes a miss");
		}
	}
	return r;
}

static output_report *summary_with_program(output_report *program)
{
	output_report *reports[] = { topo(), lat(100), program };
	const char *names[] = { "topo", "lat", REPORT_PROGRAM_SECTION };
	output_report *s = report_summary_build(reports, names, 3);
	for (size_t i = 0; i < 3; i++)
		output_report_free(reports[i]);
	cr_assert_not_null(s);
	return s;
}

Test(report_summary, program_working_set_lands_in_a_level)
{
	/* topo: L1D 48 KiB, L2 1 MiB, L3 32 MiB in sysfs; lat: the L3 ends
	 * at 3 MiB, below half of it, so it holds 3 MiB for a program here */
	output_report *s = summary_with_program(program_section(512 << 10, 512 << 10, 512 << 10));
	cr_assert_eq(cell(s, "hierarchy", "level", "L1", "program_knee"), 512 << 10);
	cr_assert_eq(cell(s, "hierarchy", "level", "L1", "program_capacity"), 49152);
	cr_assert_eq(cell(s, "hierarchy", "level", "L2", "program_capacity"), 1 << 20);
	cr_assert_eq(cell(s, "hierarchy", "level", "L3", "program_capacity"), 3 << 20, "the usable capacity");
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L1", "program_lands"), "no");
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L2", "program_lands"), "yes");
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L3", "program_lands"), "no");
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "DRAM", "program_lands"), "no");
	char sentence[1024];
	output_meta_text_of(s, "working_set", sentence, sizeof sentence);
	cr_assert(strstr(sentence, "./prog lands in the L2"), "%s", sentence);
	cr_assert(strstr(sentence, "512 KiB"), "%s", sentence);
	cr_assert(strstr(sentence, "beyond its 48 KiB"), "%s", sentence);
	/* the terminal's hierarchy names it too */
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	cr_assert_eq(report_summary_write_text(s, f, 0), 0);
	fclose(f);
	cr_assert(strstr(text, "knee 512 KiB, lands here"), "%s", text);
	cr_assert(strstr(text, "Working set: The working set of ./prog lands in the L2"), "%s", text);
	free(text);
	output_report_free(s);

	/* 8 MiB fits the L3's 32 MiB in sysfs, not the 3 MiB it holds here */
	s = summary_with_program(program_section(8 << 20, 8 << 20, 8 << 20));
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L3", "program_lands"), "no");
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "DRAM", "program_lands"), "yes");
	output_meta_text_of(s, "working_set", sentence, sizeof sentence);
	cr_assert(strstr(sentence, "lands in memory"), "%s", sentence);
	cr_assert(strstr(sentence, "the L3's knee, 8 MiB, is beyond its 3 MiB"), "%s", sentence);
	output_report_free(s);

	/* a program that streams: no capacity removes an L1D miss */
	s = summary_with_program(program_section(0, 0, 0));
	cr_assert_str_eq(text_cell(s, "hierarchy", "level", "L1", "program_lands"), "yes");
	cr_assert(isnan(cell(s, "hierarchy", "level", "L1", "program_knee")));
	output_meta_text_of(s, "working_set", sentence, sizeof sentence);
	cr_assert(strstr(sentence, "first reference"), "%s", sentence);
	output_report_free(s);
}

/* Without --program the hierarchy is what it was: no program's columns. */
Test(report_summary, no_program_no_working_set_columns)
{
	make_sections(100);
	output_report *s = report_summary_build(sections, commands, SECTIONS);
	const output_table *h = output_table_find(s, "hierarchy");
	cr_assert_lt(output_column_index(h, "program_knee"), 0);
	cr_assert_lt(output_column_index(h, "program_lands"), 0);
	char sentence[64];
	output_meta_text_of(s, "working_set", sentence, sizeof sentence);
	cr_assert_str_empty(sentence);
	output_report_free(s);
	free_sections();
}

/* A saved section's own JSON names the command it ran: a plumb sim report
 * with a table of knees is the program's section (report --from
 * DIR/program.json), another plumb sim report stays "sim". */
Test(report_summary, a_saved_program_section_is_known_by_its_knees)
{
	output_report *program = program_section(32768, 0, 0);
	cr_assert_str_eq(report_section_of(program), REPORT_PROGRAM_SECTION);
	cr_assert_str_eq(report_section_command(REPORT_PROGRAM_SECTION), "sim");
	output_report_free(program);
	output_report *sim = output_report_new("sim");
	output_table_add(sim, "levels", "Levels");
	cr_assert_str_eq(report_section_of(sim), "sim");
	output_report_free(sim);
	output_report *lat = output_report_new("lat");
	output_table_add(lat, "knees", "Not the program's");
	cr_assert_str_eq(report_section_of(lat), "lat");
	output_report_free(lat);
}
