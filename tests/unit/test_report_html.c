#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/report.h"
#include "../temp_folder.h"

static output_report *latency_like(void)
{
	output_report *r = output_report_new("lat");
	output_table *t = output_table_add(r, "sweep", "Latency <sweep> & more");
	output_column(t, "bytes", "bytes", 0);
	output_column(t, "latency", "ns", 2);
	output_column(t, "mode", NULL, 0);
	double sizes[] = { 4096, 65536, 1 << 20, 1 << 24 }, ns[] = { 1.1, 3.9, 12, 100 };
	for (int i = 0; i < 4; i++) {
		output_row(t);
		output_cell_integer(t, (int64_t)sizes[i]);
		output_cell_real(t, ns[i]);
		output_cell_text(t, "random");
	}
	output_row(t);
	output_cell_integer(t, 1 << 25);
	output_cell_status(t, "unsupported", "a reason with <tags>");
	output_cell_text(t, "random");
	return r;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char *text = NULL;
	size_t n = 0;
	cr_assert(getdelim(&text, &n, 0, f) > 0);
	fclose(f);
	return text;
}

Test(report_html, chart_svg_through_gnuplot)
{
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		cr_skip_test("gnuplot not installed");
	output_report *r = latency_like();
	const report_section *section = report_section_find("lat");
	cr_assert_not_null(section);
	const report_chart *lat = NULL;
	for (size_t i = 0; i < section->chart_count; i++)
		if (!strcmp(section->charts[i].table, "sweep"))
			lat = &section->charts[i];
	cr_assert_not_null(lat);
	char *svg = NULL;
	plumb_status st;
	cr_assert_eq(report_chart_svg(output_table_find(r, "sweep"), lat, &svg, &st), 0, "%s", st.message);
	cr_assert(strncmp(svg, "<svg", 4) == 0);
	cr_assert(strstr(svg, "</svg>"));
	free(svg);
	report_chart missing = { "sweep", "nope", "latency", NULL, false, false, "x", NULL, NULL, false, false, NULL };
	cr_assert_eq(report_chart_svg(output_table_find(r, "sweep"), &missing, &svg, &st), -1);
	cr_assert(strstr(st.message, "nope"));
	output_report_free(r);
}

/* A section's record names its charts (issue 27: the page no longer picks
 * them by comparing names): every chart names a table, axes and a title,
 * and where a report of the section was recorded (tests/data/report_vm_xeon,
 * on the Xeon guest) and has the chart's table, its columns are there and
 * it draws.
 * Every input the summary reads is one record's. */
static output_report *recorded(const char *name)
{
	char path[1024];
	const char *dir = getenv("PLUMB_SRCDIR");
	snprintf(path, sizeof path, "%s/tests/data/report_vm_xeon/%s.json", dir ? dir : ".", name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *text = NULL;
	size_t n = 0;
	cr_assert(getdelim(&text, &n, 0, f) > 0);
	fclose(f);
	output_report *r = NULL;
	plumb_status status;
	cr_assert_eq(output_report_parse_json(text, &r, &status), 0, "%s: %s", path, status.message);
	free(text);
	return r;
}

Test(report_html, every_section_record_names_charts_its_report_has)
{
	bool gnuplot = system("command -v gnuplot >/dev/null 2>&1") == 0;
	size_t count, checked = 0, with_charts = 0;
	const report_section *table = report_section_table(&count);
	size_t inputs[REPORT_SUMMARY_INPUTS] = { 0 };
	for (size_t s = 0; s < count; s++) {
		const report_section *section = &table[s];
		cr_assert_eq(report_section_find(section->name), section, "%s", section->name);
		inputs[section->summary_input]++;
		cr_assert_eq(section->chart_count > 0, section->charts != NULL, "%s", section->name);
		if (!section->chart_count)
			continue;
		with_charts++;
		output_report *r = recorded(section->name);
		for (size_t c = 0; c < section->chart_count; c++) {
			const report_chart *chart = &section->charts[c];
			cr_assert(chart->table && chart->table[0] && chart->x && chart->y && chart->title && chart->title[0],
			          "%s: chart %zu", section->name, c);
			if (!r)
				continue;
			/* an optional table (lat's mlp_curve, with --mlp) may be absent, as on the page */
			const output_table *t = output_table_find(r, chart->table);
			if (!t)
				continue;
			cr_assert_geq(output_column_index(t, chart->x), 0, "%s/%s: no column %s", section->name, chart->table, chart->x);
			cr_assert_geq(output_column_index(t, chart->y), 0, "%s/%s: no column %s", section->name, chart->table, chart->y);
			char columns[256];
			snprintf(columns, sizeof columns, "%s", chart->series ? chart->series : "");
			for (char *save = NULL, *k = strtok_r(columns, ",", &save); k; k = strtok_r(NULL, ",", &save))
				cr_assert_geq(output_column_index(t, k), 0, "%s/%s: no series column %s", section->name, chart->table, k);
			if (chart->where) {
				char where[256];
				snprintf(where, sizeof where, "%s", chart->where);
				*strchr(where, '=') = 0;
				cr_assert_geq(output_column_index(t, where), 0, "%s/%s: no column %s", section->name, chart->table, where);
			}
			if (gnuplot) {
				char *svg = NULL;
				plumb_status st;
				cr_assert_eq(report_chart_svg(t, chart, &svg, &st), 0, "%s/%s: %s", section->name, chart->table, st.message);
				cr_assert(strstr(svg, "</svg>"));
				free(svg);
			}
			checked++;
		}
		output_report_free(r);
	}
	cr_assert_geq(with_charts, 5);
	cr_assert_geq(checked, 4, "charts checked against a recorded report: %zu", checked);
	for (int k = REPORT_SUMMARY_NONE + 1; k < REPORT_SUMMARY_INPUTS; k++)
		cr_assert_eq(inputs[k], 1, "summary input %d is %zu records'", k, inputs[k]);
}

Test(report_html, escapes_and_failures)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-report-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	output_report *r = latency_like();
	output_report *reports[] = { r, NULL };
	const char *commands[] = { "lat", "validate" };
	const char *failures[] = { NULL, "needs <counters>" };
	plumb_status st;
	cr_assert_eq(report_write_html(path, "t", reports, commands, failures, 2, &st), 0, "%s", st.message);
	char *html = slurp(path);
	cr_assert(strstr(html, "Latency &lt;sweep&gt; &amp; more"));
	cr_assert(strstr(html, "a reason with &lt;tags&gt;"));
	cr_assert(strstr(html, "Can I trust my counters?"));
	cr_assert(strstr(html, "Not measured: needs &lt;counters&gt;"));
	cr_assert_null(strstr(html, "<tags>"));
	cr_assert(strstr(html, "</html>"));
	free(html);
	unlink(path);
	output_report_free(r);
}

Test(report_html, run_section_reports_failures)
{
	output_report *r = NULL;
	plumb_status st;
	cr_assert_eq(report_run_section("/bin/false", "x", NULL, NULL, &r, &st), -1);
	cr_assert_null(r);
	cr_assert(strstr(st.message, "exit 1"), "%s", st.message);
	cr_assert_eq(report_run_section("/nonexistent/plumb", "x", NULL, NULL, &r, &st), -1);
	cr_assert(strstr(st.message, "cannot run"), "%s", st.message);
	cr_assert_eq(report_read_file("/nonexistent.json", &r, &st), -1);
	cr_assert(strstr(st.message, "/nonexistent.json"));
}

Test(report_html, huge_tables_are_summarised)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-report-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	output_report *r = output_report_new("validate");
	output_table *t = output_table_add(r, "runs", "Every run");
	output_column(t, "run", NULL, 0);
	for (int i = 0; i < 5000; i++) {
		output_row(t);
		output_cell_integer(t, i);
	}
	output_report *reports[] = { r };
	const char *commands[] = { "validate" };
	plumb_status st;
	cr_assert_eq(report_write_html(path, "t", reports, commands, NULL, 1, &st), 0, "%s", st.message);
	char *html = slurp(path);
	cr_assert(strstr(html, "5000 rows"));
	cr_assert_null(strstr(html, "<td class=num>4999</td>"));
	free(html);
	unlink(path);
	output_report_free(r);
}

/* A name under /tmp/ shows as its base name, and that base name was printed
 * unescaped: a report file or a program path could put an element into
 * every page (plumb report, --compare, cluster, explain --html). */
Test(report_html, shortened_temporary_names_are_escaped_too)
{
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	cr_assert_not_null(f);
	report_html_text(f, "run /tmp/x/<img src=x onerror=alert(1)> and /tmp/a&b \"q\" 'p'");
	fclose(f);
	cr_assert_str_eq(text, "run &lt;img src=x onerror=alert(1)&gt; and a&amp;b &quot;q&quot; &#39;p&#39;");
	free(text);
}

/* Section names reach an id and a link: a report file names them. */
Test(report_html, section_names_from_a_file_are_escaped)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-report-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	output_report *r = latency_like();
	output_report *reports[] = { r };
	const char *commands[] = { "\"><script>alert(1)</script>" };
	plumb_status st;
	cr_assert_eq(report_write_page(path, "t", NULL, NULL, reports, commands, NULL, 1, &st), 0, "%s", st.message);
	char *html = slurp(path);
	cr_assert_null(strstr(html, "<script"));
	cr_assert(strstr(html, "id=\"&quot;&gt;&lt;script&gt;"));
	free(html);
	unlink(path);
	output_report_free(r);
}

/* A temporary path shows as its base name, under /tmp and under $TMPDIR
 * alike (plumb makes its temporary files there, plumb/tempdir.h). */
Test(report_html, temporary_paths_show_their_base_name_under_tmpdir_too)
{
	char *text = NULL;
	size_t size = 0;
	setenv("TMPDIR", "/var/scratch/", 1);
	FILE *f = open_memstream(&text, &size);
	cr_assert_not_null(f);
	report_html_text(f, "read /var/scratch/plumb-report-ab12/workload.ptrace and /tmp/x/y.json, not /var/scratchy/z");
	fclose(f);
	unsetenv("TMPDIR");
	cr_assert_str_eq(text, "read workload.ptrace and y.json, not /var/scratchy/z");
	free(text);
}

/* A chart's filter of several conditions joined by '&' (the program
 * section's curve: "sets=1&region=(all)") draws only the rows every
 * condition holds for: with the region as the series, a region the second
 * condition leaves out and the rows the first leaves out are not drawn. */
Test(report_html, chart_filter_of_several_conditions)
{
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		cr_skip_test("gnuplot not installed");
	output_report *r = output_report_new("sim");
	output_table *t = output_table_add(r, "curve", "Curve");
	const char *columns[] = { "region", "level", "size_bytes", "ways", "sets", "misses", "miss_ratio" };
	for (size_t c = 0; c < 7; c++)
		output_column(t, columns[c], NULL, 0);
	const char *regions[] = { "kept-region", "other-kept-region", "dropped-region" };
	for (int g = 0; g < 3; g++)
		for (int sets = 1; sets <= 2; sets++)
			for (int k = 0; k < 6; k++) {
				output_row(t);
				output_cell_text(t, sets == 1 ? regions[g] : "only-set-associative");
				output_cell_text(t, "l1d");
				output_cell_integer(t, 64 << k);
				output_cell_integer(t, (1 << k) / sets ? (1 << k) / sets : 1);
				output_cell_integer(t, sets);
				output_cell_integer(t, 100 >> k);
				output_cell_real(t, 1.0 / (1 + k));
			}
	report_chart chart = { "curve", "size_bytes", "miss_ratio", "region", true, false, "filtered", NULL, NULL, true,
		                   true, "sets=1&region=kept-region|other-kept-region" };
	char *svg = NULL;
	plumb_status st;
	cr_assert_eq(report_chart_svg(t, &chart, &svg, &st), 0, "%s", st.message);
	cr_assert(strstr(svg, "other-kept-region"), "the wanted series are drawn");
	cr_assert_null(strstr(svg, "dropped-region"), "the second condition is not applied");
	cr_assert_null(strstr(svg, "only-set-associative"), "the first condition is not applied");
	free(svg);
	/* one condition, as before */
	chart.where = "sets=1";
	cr_assert_eq(report_chart_svg(t, &chart, &svg, &st), 0, "%s", st.message);
	cr_assert(strstr(svg, "dropped-region"));
	cr_assert_null(strstr(svg, "only-set-associative"));
	free(svg);
	output_report_free(r);
}
