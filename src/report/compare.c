/* plumb report --compare: two runs or two machines side by side, from the
 * summaries in their report.json files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"

/* A figure without its own spread (one measurement) is flagged past this. */
#define COMPARE_DEFAULT_SPREAD 0.05

static double value(const output_table *t, long row, const char *column)
{
	int c = t && row >= 0 ? output_column_index(t, column) : -1;
	return c < 0 ? NAN : output_cell_number(t, (size_t)row, (size_t)c);
}

static long row_of(const output_table *t, const char *key, const char *name)
{
	int c = t ? output_column_index(t, key) : -1;
	for (size_t r = 0; c >= 0 && r < output_row_count(t); r++) {
		const char *s = output_cell_string(t, r, (size_t)c);
		if (s && !strcmp(s, name))
			return (long)r;
	}
	return -1;
}

static void add(output_table *t, const char *quantity, const char *unit, double a, double b, double spread_a, double spread_b)
{
	if (!isfinite(a) && !isfinite(b))
		return;
	output_row(t);
	output_cell_text(t, quantity);
	output_cell_text(t, unit);
	if (isfinite(a))
		output_cell_real(t, a);
	else
		output_cell_status(t, "unsupported", "not in the first report");
	if (isfinite(b))
		output_cell_real(t, b);
	else
		output_cell_status(t, "unsupported", "not in the second report");
	if (!isfinite(a) || !isfinite(b) || a == 0) {
		output_cell_status(t, "n/a", "a figure is missing from one report");
		output_cell_status(t, "n/a", "a figure is missing from one report");
		output_cell_text(t, "-");
		return;
	}
	double difference = (b - a) / a;
	double spread = fmax(isfinite(spread_a) ? spread_a : COMPARE_DEFAULT_SPREAD, isfinite(spread_b) ? spread_b : COMPARE_DEFAULT_SPREAD);
	output_cell_real(t, 100 * difference);
	output_cell_real(t, 100 * spread);
	output_cell_text(t, fabs(difference) > spread ? "yes" : "no");
}

/* Half the range relative to the value. */
static double half_range(const output_table *t, long row, const char *v, const char *lo, const char *hi)
{
	double x = value(t, row, v), l = value(t, row, lo), h = value(t, row, hi);
	return x > 0 && isfinite(l) && isfinite(h) ? (h - l) / 2 / x : NAN;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

output_report *report_compare(const output_report *a, const output_report *b, const char *name_a, const char *name_b)
{
	output_report *r = output_report_new("report-compare");
	if (!r)
		return NULL;
	output_meta_text(r, "a", base_name(name_a));
	output_meta_text(r, "b", base_name(name_b));
	char buffer[256];
	for (int k = 0; k < 2; k++) {
		const output_report *s = k ? b : a;
		for (size_t i = 0; s && i < output_meta_count(s); i++)
			if (!strcmp(output_meta_key(s, i), "cpu")) {
				output_meta_format(s, i, buffer, sizeof buffer);
				output_meta_text(r, k ? "b_cpu" : "a_cpu", buffer);
			}
	}
	output_table *t = output_table_add(r, "compare", "Two reports side by side (difference = (B - A) / A)");
	output_column(t, "quantity", NULL, 0);
	output_column(t, "unit", NULL, 0);
	output_column(t, "a", NULL, 3);
	output_column(t, "b", NULL, 3);
	output_column(t, "difference", "%", 1);
	output_column(t, "spread", "%", 1);
	output_column(t, "beyond_spread", NULL, 0);
	const output_table *ha = a ? output_table_find(a, "hierarchy") : NULL, *hb = b ? output_table_find(b, "hierarchy") : NULL;
	static const char *const levels[] = { "L1", "L2", "L3", "DRAM" };
	for (size_t i = 0; i < 4; i++) {
		long ra = row_of(ha, "level", levels[i]), rb = row_of(hb, "level", levels[i]);
		if (ra < 0 && rb < 0)
			continue;
		char q[64];
		snprintf(q, sizeof q, "%s size (measured)", levels[i]);
		add(t, q, "bytes", value(ha, ra, "measured_size"), value(hb, rb, "measured_size"),
		    half_range(ha, ra, "measured_size", "measured_size_low", "measured_size_high"),
		    half_range(hb, rb, "measured_size", "measured_size_low", "measured_size_high"));
		snprintf(q, sizeof q, "%s latency", levels[i]);
		add(t, q, "ns", value(ha, ra, "latency"), value(hb, rb, "latency"), half_range(ha, ra, "latency", "latency_low", "latency_high"),
		    half_range(hb, rb, "latency", "latency_low", "latency_high"));
		double cva = value(ha, ra, "bandwidth_cv") / 100, cvb = value(hb, rb, "bandwidth_cv") / 100;
		static const char *const bw[][2] = { { "read_1", "read, 1 thread" }, { "read_all", "read, all threads" },
		                                     { "write_1", "write, 1 thread" }, { "write_all", "write, all threads" } };
		for (size_t k = 0; k < 4; k++) {
			snprintf(q, sizeof q, "%s %s", levels[i], bw[k][1]);
			add(t, q, "GB/s", value(ha, ra, bw[k][0]), value(hb, rb, bw[k][0]), cva, cvb);
		}
	}
	const output_table *fa = a ? output_table_find(a, "figures") : NULL, *fb = b ? output_table_find(b, "figures") : NULL;
	for (int k = 0; k < 2; k++) {
		const output_table *f = k ? fb : fa;
		int qc = f ? output_column_index(f, "quantity") : -1;
		for (size_t row = 0; qc >= 0 && row < output_row_count(f); row++) {
			const char *q = output_cell_string(f, row, (size_t)qc);
			if (!q || (k == 1 && row_of(fa, "quantity", q) >= 0))
				continue;
			int uc = output_column_index(f, "unit");
			const char *unit = uc >= 0 ? output_cell_string(f, row, (size_t)uc) : NULL;
			add(t, q, unit ? unit : "", value(fa, row_of(fa, "quantity", q), "value"), value(fb, row_of(fb, "quantity", q), "value"), NAN, NAN);
		}
	}
	output_note(r, "spread: half the measured range of either run (sizes, latencies), or its bandwidth coefficient of variation; "
	               "figures measured once use %.0f%%; beyond_spread = the difference exceeds the larger spread", 100 * COMPARE_DEFAULT_SPREAD);
	return r;
}

int report_write_compare_html(const char *path, const output_report *compare, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	FILE *f = file.stream;
	report_html_begin(f, "plumb: two reports compared");
	char buffer[512];
	fputs("<p>", f);
	for (size_t i = 0; i < output_meta_count(compare); i++) {
		output_meta_format(compare, i, buffer, sizeof buffer);
		const char *key = output_meta_key(compare, i);
		fputs(!strcmp(key, "a") ? "A: " : !strcmp(key, "b") ? "<br>B: " : " (", f);
		report_html_text(f, buffer);
		if (strcmp(key, "a") && strcmp(key, "b"))
			fputs(")", f);
	}
	fputs("</p>\n", f);
	const output_table *t = output_table_find(compare, "compare");
	int flag = t ? output_column_index(t, "beyond_spread") : -1;
	if (t) {
		fputs("<table class=grid>\n<tr><th>Quantity</th><th>Unit</th><th>A</th><th>B</th><th>Difference <span class=unit>%</span></th>"
		      "<th>Spread <span class=unit>%</span></th><th>Beyond the spread</th></tr>\n", f);
		for (size_t r = 0; r < output_row_count(t); r++) {
			const char *flagged = flag >= 0 ? output_cell_string(t, r, (size_t)flag) : NULL;
			fputs(flagged && !strcmp(flagged, "yes") ? "<tr class=flag>" : "<tr>", f);
			for (size_t j = 0; j < output_column_count(t); j++) {
				output_cell_format(t, r, j, buffer, sizeof buffer);
				cell_kind k = output_cell_kind(t, r, j);
				fputs(k == CELL_REAL || k == CELL_INTEGER ? "<td class=num>" : "<td>", f);
				report_html_text(f, buffer);
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	for (size_t i = 0; i < output_note_count(compare); i++) {
		fputs("<p class=note>", f);
		report_html_text(f, output_note_at(compare, i));
		fputs("</p>\n", f);
	}
	report_html_end(f);
	return output_file_commit(&file, status);
}
