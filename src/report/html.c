/* The HTML report: one self-contained file (inline CSS and SVG), so it can
 * be mailed or attached to a bug report as is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/escape.h"
#include "report/report.h"
#include "core/tempdir.h"

const char *report_section_title(const char *command)
{
	const report_section *section = report_section_find(command);
	return section ? section->title : command;
}

static const char *section_intro(const char *command)
{
	const report_section *section = report_section_find(command);
	return section ? section->intro : "";
}

/* Escapes text for HTML.  The user's home directory shows as "~" and a
 * temporary path as its base name, so a page passed around does not carry
 * the user's file paths. */
void report_html_text(FILE *f, const char *s)
{
	const char *home = secure_getenv("HOME");
	size_t home_length = home && home[0] == '/' && home[1] ? strlen(home) : 0;
	/* plumb's temporary folder ($TMPDIR, plumb/tempdir.h), and /tmp */
	const char *tmp = temp_dir();
	size_t tmp_length = strlen(tmp);
	while (tmp_length > 1 && tmp[tmp_length - 1] == '/')
		tmp_length--;
	for (; s && *s; s++) {
		size_t prefix = !strncmp(s, "/tmp/", 5) ? 5
		                : tmp_length > 1 && !strncmp(s, tmp, tmp_length) && s[tmp_length] == '/' ? tmp_length + 1
		                                                                                          : 0;
		if (!prefix && home_length && !strncmp(s, home, home_length) && (s[home_length] == '/' || !s[home_length])) {
			fputc('~', f);
			s += home_length - 1;
			continue;
		}
		if (prefix) {
			const char *end = s + prefix, *base = s + prefix;
			while (*end && *end != ' ' && *end != '\'' && *end != '"' && *end != ')' && *end != ',' && *end != ';') {
				if (*end == '/')
					base = end + 1;
				end++;
			}
			if (base < end) {
				escape_html_span(f, base, (size_t)(end - base));
				s = end - 1;
				continue;
			}
		}
		escape_html_span(f, s, 1);
	}
}

static void html_text(FILE *f, const char *s)
{
	report_html_text(f, s);
}

/* A column or key name for people: words, not identifiers ("gbps_median"
 * shows as "gbps median"). */
static void html_name(FILE *f, const char *s)
{
	char buffer[256];
	size_t n = 0;
	for (; s && *s && n + 1 < sizeof buffer; s++)
		buffer[n++] = *s == '_' ? ' ' : *s;
	buffer[n] = 0;
	html_text(f, buffer);
}

/* A column's header: its name as words, without a last word that repeats
 * the unit shown beside it ("latency_ns" in ns read "latency ns ns"). */
static void html_header_name(FILE *f, const char *name, const char *unit)
{
	static const struct { const char *suffix, *unit; } repeats[] = {
		{ "_ns", "ns" }, { "_bytes", "bytes" }, { "_gbps", "GB/s" }, { "_mbps", "MB/s" }, { "_cycles", "cycles" },
		{ "_lines", "lines" }, { "_seconds", "s" }, { "_percent", "%" },
	};
	size_t n = strlen(name ? name : "");
	for (size_t i = 0; unit && i < sizeof repeats / sizeof repeats[0]; i++) {
		size_t k = strlen(repeats[i].suffix);
		if (n > k && !strcmp(name + n - k, repeats[i].suffix) && !strcmp(unit, repeats[i].unit)) {
			char buffer[256];
			snprintf(buffer, sizeof buffer, "%.*s", (int)(n - k), name);
			html_name(f, buffer);
			return;
		}
	}
	html_name(f, name);
}

/* Reasons a table shows on hover (title=) are also footnotes under it,
 * numbered in the order they first appear, each once, so they survive
 * print and PDF where nothing hovers. */
typedef struct footnotes {
	const char **text;
	size_t count, capacity;
} footnotes;

/* A reason's number (from 1), written as a superscript after the cell's text. */
static void footnote_mark(FILE *f, footnotes *notes, const char *reason)
{
	if (!reason || !*reason)
		return;
	size_t i = 0;
	while (i < notes->count && strcmp(notes->text[i], reason))
		i++;
	if (i == notes->count) {
		if (notes->count == notes->capacity) {
			size_t capacity = notes->capacity ? 2 * notes->capacity : 8;
			const char **grown = realloc(notes->text, capacity * sizeof *grown);
			if (!grown)
				return;   /* out of memory: the hover still says it */
			notes->text = grown;
			notes->capacity = capacity;
		}
		notes->text[notes->count++] = reason;
	}
	fprintf(f, "<sup class=fn>%zu</sup>", i + 1);
}

/* The footnotes under the table, then the list is emptied. */
static void footnotes_write(FILE *f, footnotes *notes)
{
	if (notes->count) {
		fputs("<ol class=footnotes>\n", f);
		for (size_t i = 0; i < notes->count; i++) {
			fputs("<li>", f);
			html_text(f, notes->text[i]);
			fputs("</li>\n", f);
		}
		fputs("</ol>\n", f);
	}
	free(notes->text);
	*notes = (footnotes){ 0 };
}

/* A section's note for people: a column name it mentions ("gbps_with_allocate
 * adds ...") reads as words, as the table's headers do.  Names a reader
 * types as they are (perf_event, libpfm4's pmu::EVENT, PAPI_L1_DCM) stay. */
static void html_prose(FILE *f, const char *s)
{
	size_t n = strlen(s ? s : "");
	char *copy = malloc(n + 1);
	if (!copy) {
		html_text(f, s);
		return;
	}
	memcpy(copy, s ? s : "", n + 1);
	for (size_t i = 1; i + 1 < n; i++) {
		if (copy[i] != '_' || !(copy[i - 1] >= 'a' && copy[i - 1] <= 'z') || !(copy[i + 1] >= 'a' && copy[i + 1] <= 'z'))
			continue;
		size_t start = i, end = i;
		while (start > 0 && (copy[start - 1] == '_' || (copy[start - 1] >= 'a' && copy[start - 1] <= 'z') ||
		                     (copy[start - 1] >= '0' && copy[start - 1] <= '9') || (copy[start - 1] >= 'A' && copy[start - 1] <= 'Z')))
			start--;
		while (end < n && (copy[end] == '_' || (copy[end] >= 'a' && copy[end] <= 'z') || (copy[end] >= '0' && copy[end] <= '9') ||
		                   (copy[end] >= 'A' && copy[end] <= 'Z')))
			end++;
		if (!strncmp(copy + start, "perf_", 5) || !strncmp(copy + end, "::", 2) || (copy[start] >= 'A' && copy[start] <= 'Z'))
			continue;
		copy[i] = ' ';
	}
	html_text(f, copy);
	free(copy);
}

/* Raw-data tables (every run of every case) would make the page megabytes
 * long; past this many rows the page says where the data is instead. */
#define REPORT_MAX_TABLE_ROWS 400

void report_html_table(FILE *f, const output_table *t, bool collapsed)
{
	char buffer[512];
	if (collapsed) {
		fputs("<details><summary>", f);
		html_text(f, output_table_title(t));
		fprintf(f, " (%zu row%s)</summary>\n", output_row_count(t), output_row_count(t) == 1 ? "" : "s");
	} else {
		fputs("<h3>", f);
		html_text(f, output_table_title(t));
		fputs("</h3>\n", f);
	}
	if (output_row_count(t) > REPORT_MAX_TABLE_ROWS) {
		fprintf(f, "<p class=note>%zu rows: too many to show here; they are in report.json beside this page (this section's table \"", output_row_count(t));
		html_text(f, output_table_title(t));
		fputs("\").</p>\n", f);
		if (collapsed)
			fputs("</details>\n", f);
		return;
	}
	fputs("<div class=scroll><table>\n<tr>", f);
	for (size_t j = 0; j < output_column_count(t); j++) {
		fputs("<th>", f);
		html_header_name(f, output_column_name(t, j), output_column_unit(t, j));
		if (output_column_unit(t, j)) {
			fputs(" <span class=unit>", f);
			html_text(f, output_column_unit(t, j));
			fputs("</span>", f);
		}
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	footnotes notes = { 0 };
	for (size_t r = 0; r < output_row_count(t); r++) {
		fputs("<tr>", f);
		for (size_t j = 0; j < output_column_count(t); j++) {
			cell_kind k = output_cell_kind(t, r, j);
			output_cell_format(t, r, j, buffer, sizeof buffer);
			if (k == CELL_STATUS) {
				/* The reason on hover, and as a numbered footnote
				 * under the table for print and PDF. */
				fputs("<td class=status title=\"", f);
				html_text(f, output_cell_reason(t, r, j));
				fputs("\">", f);
				html_text(f, buffer);
				footnote_mark(f, &notes, output_cell_reason(t, r, j));
			} else {
				fputs(k == CELL_INTEGER || k == CELL_REAL ? "<td class=num>" : "<td>", f);
				html_text(f, buffer);
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
	footnotes_write(f, &notes);
	if (collapsed)
		fputs("</details>\n", f);
}

/* Marks on the size charts: the sysfs size of each cache (dashed) and where
 * the measurements saw the level end (solid), from the summary; without one,
 * the caches a section names in its table "caches" (level, size_bytes:
 * plumb explain's simulated caches), dashed. */
static size_t size_marks(const output_report *summary, const output_report *section, report_chart_mark *marks,
                         char labels[][48], size_t max)
{
	const output_table *own = !summary && section ? output_table_find(section, "caches") : NULL;
	if (own) {
		int lc = output_column_index(own, "level"), sc = output_column_index(own, "size_bytes");
		size_t n = 0;
		char size[32];
		for (size_t r = 0; lc >= 0 && sc >= 0 && r < output_row_count(own) && n < max; r++) {
			const char *level = output_cell_string(own, r, (size_t)lc);
			double bytes = output_cell_number(own, r, (size_t)sc);
			if (!isfinite(bytes) || bytes <= 0)
				continue;
			snprintf(labels[n], 48, "%s %s", level ? level : "", report_format_bytes(bytes, size, sizeof size));
			marks[n] = (report_chart_mark){ bytes, labels[n], true };
			n++;
		}
		return n;
	}
	const output_table *h = summary ? output_table_find(summary, "hierarchy") : NULL;
	int lc = h ? output_column_index(h, "level") : -1, sc = h ? output_column_index(h, "sysfs_size") : -1;
	int mc = h ? output_column_index(h, "measured_size") : -1;
	size_t n = 0;
	char size[32];
	for (size_t r = 0; lc >= 0 && r < output_row_count(h); r++) {
		const char *level = output_cell_string(h, r, (size_t)lc);
		double claimed = sc >= 0 ? output_cell_number(h, r, (size_t)sc) : NAN;
		double measured = mc >= 0 ? output_cell_number(h, r, (size_t)mc) : NAN;
		if (isfinite(claimed) && claimed > 0 && n < max) {
			snprintf(labels[n], 48, "%s %s (sysfs)", level ? level : "", report_format_bytes(claimed, size, sizeof size));
			marks[n] = (report_chart_mark){ claimed, labels[n], true };
			n++;
		}
		if (isfinite(measured) && measured > 0 && n < max && !(isfinite(claimed) && fabs(measured / claimed - 1) < 0.1)) {
			snprintf(labels[n], 48, "%s ends (measured)", level ? level : "");
			marks[n] = (report_chart_mark){ measured, labels[n], false };
			n++;
		}
	}
	return n;
}

static void write_section(FILE *f, const char *command, const output_report *r, const char *failure,
                          const output_report *summary)
{
	fputs("<section id=\"", f);
	html_text(f, command);
	fputs("\">\n<h2>", f);
	html_text(f, report_section_title(command));
	fputs("</h2>\n<p class=intro>", f);
	html_text(f, section_intro(command));
	fputs("</p>\n", f);
	if (failure) {
		fputs("<p class=failure>Not measured: ", f);
		html_text(f, failure);
		fputs("</p>\n</section>\n", f);
		return;
	}
	const report_section *record = report_section_find(command);
	const report_chart *charts = record ? record->charts : NULL;
	size_t chart_count = record ? record->chart_count : 0;
	report_chart_mark marks[16];
	char labels[16][48];
	for (size_t i = 0; i < chart_count; i++) {
		const output_table *t = output_table_find(r, charts[i].table);
		if (!t)
			continue;
		char *svg = NULL;
		plumb_status st;
		size_t mark_count = charts[i].size_x ? size_marks(summary, r, marks, labels, 16) : 0;
		if (report_chart_svg_marked(t, &charts[i], marks, mark_count, &svg, &st) == 0) {
			fputs("<figure>", f);
			fputs(svg, f);
			fputs("</figure>\n", f);
			free(svg);
		} else {
			fputs("<p class=failure>Chart omitted: ", f);
			html_text(f, st.message);
			fputs("</p>\n", f);
		}
	}
	for (size_t i = 0; i < output_note_count(r); i++) {
		fputs("<p class=note>", f);
		html_prose(f, output_note_at(r, i));
		fputs("</p>\n", f);
	}
	/* With a summary on top the tables are details, collapsed; a page
	 * without one (report_write_html, plumb explain) shows them open. */
	for (size_t i = 0; i < output_table_count(r); i++)
		report_html_table(f, output_table_at(r, i), summary != NULL);
	if (output_meta_count(r)) {
		fputs("<details><summary>Run details</summary><table>\n", f);
		char buffer[512];
		for (size_t i = 0; i < output_meta_count(r); i++) {
			output_meta_format(r, i, buffer, sizeof buffer);
			fputs("<tr><td>", f);
			html_name(f, output_meta_key(r, i));
			fputs("</td><td>", f);
			html_text(f, buffer);
			fputs("</td></tr>\n", f);
		}
		fputs("</table></details>\n", f);
	}
	fputs("</section>\n", f);
}

/* Summary helpers: a cell's number or "-" with the reason as a tooltip. */
static double cell_value(const output_table *t, size_t row, const char *column)
{
	int c = output_column_index(t, column);
	return c < 0 ? NAN : output_cell_number(t, row, (size_t)c);
}

static const char *cell_text(const output_table *t, size_t row, const char *column)
{
	int c = output_column_index(t, column);
	return c < 0 ? NULL : output_cell_string(t, row, (size_t)c);
}

static void number_cell(FILE *f, const output_table *t, size_t row, const char *column, const char *format,
                        footnotes *notes)
{
	double v = cell_value(t, row, column);
	if (isfinite(v)) {
		fputs("<td class=num>", f);
		fprintf(f, format, v);
	} else {
		int c = output_column_index(t, column);
		const char *why = c >= 0 ? output_cell_reason(t, row, (size_t)c) : NULL;
		fputs("<td class=num title=\"", f);
		html_text(f, why ? why : "not measured");
		fputs("\">-", f);
		footnote_mark(f, notes, why ? why : "not measured");
	}
	fputs("</td>", f);
}

static void bandwidth_cell(FILE *f, const output_table *t, size_t row, const char *column, footnotes *notes)
{
	double v = cell_value(t, row, column);
	number_cell(f, t, row, column, isfinite(v) && v >= 100 ? "%.0f" : "%.1f", notes);
}

static void write_summary(FILE *f, const output_report *s)
{
	char buffer[1024], a[32], b[32], c[32];
	fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<p class=machine>", f);
	const char *keys[] = { "cpu", "cpus", "virtualised", "core_clock_ghz", "core_clock_ghz_low", "core_clock_ghz_high",
		               "generation" };
	char values[7][256] = { "", "", "", "", "", "", "" };
	for (size_t i = 0; i < output_meta_count(s); i++)
		for (size_t k = 0; k < 7; k++)
			if (!strcmp(output_meta_key(s, i), keys[k]))
				output_meta_format(s, i, values[k], sizeof values[k]);
	html_text(f, values[0][0] ? values[0] : "This machine");
	if (values[6][0]) {
		fputs(" (", f);
		html_text(f, values[6]);
		fputs(")", f);
	}
	if (values[1][0])
	{
		fputs(", ", f);
		html_text(f, values[1]);
		fputs(" CPUs", f);
	}
	if (!strcmp(values[2], "yes"))
		fputs(", a virtual machine", f);
	if (values[3][0] && values[4][0] && values[5][0] && strtod(values[5], NULL) - strtod(values[4], NULL) >= 0.005)
		fprintf(f, "; the cores ran at about %.2f GHz (%.2f-%.2f over the clock's samples; core cycles below use %.2f)",
		        strtod(values[3], NULL), strtod(values[4], NULL), strtod(values[5], NULL), strtod(values[3], NULL));
	else if (values[3][0])
		fprintf(f, "; the cores ran at about %.2f GHz (core cycles below use this clock)", strtod(values[3], NULL));
	fputs(".</p>\n", f);
	const output_table *h = output_table_find(s, "hierarchy");
	if (h) {
		const char *threads = "all threads";
		if (values[1][0]) {
			snprintf(buffer, sizeof buffer, "%s threads", values[1]);
			threads = buffer;
		}
		fputs("<table class=summary>\n<tr><th rowspan=2>Level</th><th colspan=2>Size</th><th colspan=2>Latency</th>"
		      "<th colspan=2>Read <span class=unit>GB/s</span></th><th colspan=2>Write <span class=unit>GB/s</span></th>"
		      "<th rowspan=2>Bandwidth spread <span class=unit>(CV)</span></th>", f);
		/* with --program: where its working set lands */
		bool program = output_column_index(h, "program_knee") >= 0;
		if (program)
			fputs("<th rowspan=2>Your program's working set <span class=unit>(knee of its curve / what the level "
			      "holds)</span></th>", f);
		fputs("</tr>\n<tr><th>sysfs</th><th>measured (range)</th><th>ns (range)</th><th>core cycles</th>", f);
		fputs("<th>1 thread</th><th>", f);
		html_text(f, threads);
		fputs("</th><th>1 thread</th><th>", f);
		html_text(f, threads);
		fputs("</th></tr>\n", f);
		footnotes notes = { 0 };
		for (size_t r = 0; r < output_row_count(h); r++) {
			fputs("<tr><th>", f);
			html_text(f, cell_text(h, r, "level"));
			fputs("</th>", f);
			double claimed = cell_value(h, r, "sysfs_size"), m = cell_value(h, r, "measured_size");
			fprintf(f, "<td class=num>%s</td>", isfinite(claimed) ? report_format_bytes(claimed, a, sizeof a) : "-");
			if (isfinite(m)) {
				double lo = cell_value(h, r, "measured_size_low"), hi = cell_value(h, r, "measured_size_high");
				fprintf(f, "<td class=num>%s", report_format_bytes(m, a, sizeof a));
				if (lo != hi)
					fprintf(f, " <span class=range>(%s-%s)</span>", report_format_bytes(lo, b, sizeof b), report_format_bytes(hi, c, sizeof c));
				fputs("<div class=src>", f);
				html_text(f, cell_text(h, r, "size_source"));
				fputs("</div></td>", f);
			} else {
				fputs("<td class=num>-</td>", f);
			}
			double l = cell_value(h, r, "latency");
			if (isfinite(l)) {
				double lo = cell_value(h, r, "latency_low"), hi = cell_value(h, r, "latency_high");
				fprintf(f, "<td class=num>%.3g", l);
				if (lo != hi)
					fprintf(f, " <span class=range>(%.3g-%.3g)</span>", lo, hi);
				fputs("<div class=src>", f);
				html_text(f, cell_text(h, r, "latency_source"));
				fputs("</div></td>", f);
			} else {
				fputs("<td class=num>-</td>", f);
			}
			number_cell(f, h, r, "latency_cycles", "%.0f", &notes);
			bandwidth_cell(f, h, r, "read_1", &notes);
			bandwidth_cell(f, h, r, "read_all", &notes);
			bandwidth_cell(f, h, r, "write_1", &notes);
			bandwidth_cell(f, h, r, "write_all", &notes);
			number_cell(f, h, r, "bandwidth_cv", cell_value(h, r, "bandwidth_cv") < 1 ? "&plusmn;%.1f%%" : "&plusmn;%.0f%%",
			            &notes);
			if (program) {
				double knee = cell_value(h, r, "program_knee"), holds = cell_value(h, r, "program_capacity");
				const char *lands = cell_text(h, r, "program_lands");
				bool here = lands && !strcmp(lands, "yes");
				fputs(here ? "<td class=num><b>" : "<td class=num>", f);
				if (isfinite(knee))
					fprintf(f, "%s / %s", report_format_bytes(knee, a, sizeof a),
					        isfinite(holds) ? report_format_bytes(holds, b, sizeof b) : "-");
				else
					fputs("-", f);
				fputs(here ? (isfinite(knee) ? ": lands here</b>" : "lands here</b>") : "", f);
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
		footnotes_write(f, &notes);
		for (size_t r = 0; r < output_row_count(h); r++) {
			const char *note = cell_text(h, r, "note");
			if (note && note[0]) {
				fputs("<p class=note><b>", f);
				html_text(f, cell_text(h, r, "level"));
				fputs(":</b> ", f);
				html_text(f, note);
				fputs("</p>\n", f);
			}
		}
		const char *meta_keys[] = { "working_set" };
		for (size_t i = 0; i < output_meta_count(s); i++)
			if (!strcmp(output_meta_key(s, i), meta_keys[0])) {
				output_meta_format(s, i, buffer, sizeof buffer);
				fputs("<p class=note><b>Your program:</b> ", f);
				html_text(f, buffer);
				fputs("</p>\n", f);
			}
		fputs("<p class=note>Latency is the plateau of dependent loads over a random chain (10th percentile; range: spread over "
		      "the sweep points and the other sweep). Bandwidth is the best sample per size, median over the sizes in the level; "
		      "the spread is the median coefficient of variation of the one-thread read samples.</p>\n", f);
	}
	const output_table *fig = output_table_find(s, "figures");
	if (fig && output_row_count(fig)) {
		fputs("<ul class=figures>\n", f);
		for (size_t r = 0; r < output_row_count(fig); r++) {
			const char *q = cell_text(fig, r, "quantity"), *u = cell_text(fig, r, "unit"), *d = cell_text(fig, r, "detail");
			double v = cell_value(fig, r, "value");
			fputs("<li><b>", f);
			if (q) {
				snprintf(buffer, sizeof buffer, "%s", q);
				buffer[0] = (char)(buffer[0] >= 'a' && buffer[0] <= 'z' ? buffer[0] - 32 : buffer[0]);
				html_text(f, buffer);
			}
			fputs(":</b> ", f);
			if (isfinite(v)) {
				fprintf(f, v >= 100 ? "%.0f " : "%.3g ", v);
				html_text(f, u);
				if (d && d[0]) {
					fputs(" <span class=detail>(", f);
					html_text(f, d);
					fputs(")</span>", f);
				}
			} else {
				int vc = output_column_index(fig, "value");
				const char *status = vc >= 0 ? output_cell_string(fig, r, (size_t)vc) : NULL;
				fputs(status && !strcmp(status, "flagged") ? "flagged, not shown: " : "not measured: ", f);
				html_text(f, vc >= 0 ? output_cell_reason(fig, r, (size_t)vc) : "");
			}
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	/* Every figure against the physical limits that apply to it: the
	 * flagged ones, with the reason. */
	const output_table *checks = output_table_find(s, "checks");
	if (checks && output_row_count(checks)) {
		size_t flagged = 0, rows = output_row_count(checks);
		for (size_t r = 0; r < rows; r++) {
			const char *verdict = cell_text(checks, r, "verdict");
			flagged += verdict && !strcmp(verdict, "flagged");
		}
		if (!flagged)
			fprintf(f, "<p class=note><b>Physics:</b> all %zu figures are within the limits that apply to them (table "
			        "<code>checks</code> in report.json).</p>\n", rows);
		else {
			fprintf(f, "<p class=note><b>Physics:</b> %zu of %zu figures break a limit that applies to them:</p>\n<ul class=figures>\n",
			        flagged, rows);
			for (size_t r = 0; r < rows; r++) {
				const char *verdict = cell_text(checks, r, "verdict");
				if (!verdict || strcmp(verdict, "flagged"))
					continue;
				fputs("<li><b>", f);
				html_text(f, cell_text(checks, r, "figure"));
				fprintf(f, ":</b> %.4g ", cell_value(checks, r, "value"));
				html_text(f, cell_text(checks, r, "unit"));
				fputs(" is ", f);
				html_text(f, cell_text(checks, r, "rule"));
				fputs("</li>\n", f);
			}
			fputs("</ul>\n", f);
		}
	}
	fputs("<h3>Can I trust my counters?</h3>\n", f);
	buffer[0] = 0;
	for (size_t i = 0; i < output_meta_count(s); i++)
		if (!strcmp(output_meta_key(s, i), "counters"))
			output_meta_format(s, i, buffer, sizeof buffer);
	fputs("<p class=trust>", f);
	html_text(f, buffer[0] ? buffer : "The counter validation did not run.");
	fputs("</p>\n", f);
	const output_table *grid = output_table_find(s, "counters");
	if (grid) {
		fputs("<table class=grid>\n<tr><th>Event</th><th>Predicted (benchmarks with a closed form)</th><th>perf_event</th><th>PAPI</th>"
		      "<th>Simulator</th><th>Instrumented (Valgrind)</th></tr>\n", f);
		for (size_t r = 0; r < output_row_count(grid); r++) {
			fputs("<tr>", f);
			for (size_t j = 0; j < output_column_count(grid); j++) {
				const char *text = output_cell_string(grid, r, j);
				const char *cls = !text ? "" : !strncmp(text, "unsupported", 11) ? " class=no"
				                  : (strstr(text, "exact") || strstr(text, "accurate")) && !strstr(text, "random") && !strstr(text, "bias") &&
				                    !strstr(text, "multiplicative") && !strstr(text, "unknown") ? " class=ok"
				                  : j >= 2 && strcmp(text, "-") ? " class=warn" : "";
				fprintf(f, j == 0 ? "<th>" : "<td%s>", cls);
				html_text(f, text);
				fputs(j == 0 ? "</th>" : "</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
		fputs("<p class=note>exact: every case equals the prediction; accurate: within 1%; bias, multiplicative, random: "
		      "the error's form (see the counter validation below); unsupported [n]: the source cannot count the event, for reason n.</p>\n", f);
	}
	const output_table *reasons = output_table_find(s, "unsupported_reasons");
	if (reasons && output_row_count(reasons)) {
		fputs("<ol class=reasons>\n", f);
		for (size_t r = 0; r < output_row_count(reasons); r++) {
			fputs("<li>", f);
			html_text(f, cell_text(reasons, r, "reason"));
			fputs("</li>\n", f);
		}
		fputs("</ol>\n", f);
	}
	fputs("</section>\n", f);
}

/* The simulator's view of this machine, from the summary's "simulated"
 * table (validate's own streams through the host preset). */
static void write_simulated(FILE *f, const output_report *s)
{
	const output_table *t = s ? output_table_find(s, "simulated") : NULL;
	if (!t || !output_row_count(t))
		return;
	char machine[768] = "";
	for (size_t i = 0; i < output_meta_count(s); i++)
		if (!strcmp(output_meta_key(s, i), "simulated_machine"))
			output_meta_format(s, i, machine, sizeof machine);
	fputs("<section id=\"simulator\">\n<h2>The simulator's view of this machine</h2>\n<p class=intro>plumb's cache simulator, "
	      "configured as this machine (", f);
	html_text(f, machine);
	fputs("), runs each validation microbenchmark's exact reference stream. Its misses stand beside the closed-form prediction "
	      "and what each counter source measured, at the largest case inside the benchmark's validity domain. Where no counter "
	      "can measure (no PMU), the simulator and the prediction are the figures to trust.</p>\n", f);
	fputs("<table class=grid>\n<tr><th>Benchmark</th><th>Event</th><th>Size</th><th>Predicted</th><th>Simulated</th>"
	      "<th>perf_event</th><th>PAPI</th><th>Instrumented</th></tr>\n", f);
	char buffer[128];
	footnotes notes = { 0 };
	for (size_t r = 0; r < output_row_count(t); r++) {
		fputs("<tr>", f);
		for (size_t j = 0; j < output_column_count(t); j++) {
			cell_kind k = output_cell_kind(t, r, j);
			if (k == CELL_REAL || k == CELL_INTEGER) {
				double v = output_cell_number(t, r, j);
				snprintf(buffer, sizeof buffer, v == floor(v) && fabs(v) < 1e15 ? "%.0f" : "%.1f", v);
				fputs("<td class=num>", f);
			} else {
				output_cell_format(t, r, j, buffer, sizeof buffer);
				fputs(k == CELL_STATUS ? "<td class=no title=\"" : "<td>", f);
				if (k == CELL_STATUS) {
					html_text(f, output_cell_reason(t, r, j));
					fputs("\">", f);
				}
			}
			html_text(f, buffer);
			if (k == CELL_STATUS)
				footnote_mark(f, &notes, output_cell_reason(t, r, j));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	footnotes_write(f, &notes);
	fputs("</section>\n", f);
}

void report_html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>", f);
	html_text(f, title);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;font-size:15px}\n"
	      "table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}\n"
	      "th{background:#f0f0f0;text-align:left}.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".status{color:#a40}.unit,.range,.src,.detail{color:#666;font-weight:normal}.src{font-size:.75em}\n"
	      ".failure{color:#a40}.intro{color:#444}section{border-top:2px solid #ddd;margin-top:1.5em}\n"
	      ".note{color:#444;font-size:.9em}.trust{font-weight:bold}\n"
	      ".grid td,.grid th{font-size:.85em}.grid .ok{background:#e6f4e6}.grid .no{background:#f4f4f4;color:#777}.grid .warn{background:#fbf0d9}\n"
	      ".reasons,.footnotes{font-size:.8em;color:#444}sup.fn{color:#666;font-size:.7em}details{margin:.3em 0}summary{cursor:pointer;color:#135}\n"
	      ".scroll{overflow-x:auto}figure{margin:.5em 0}figure svg{max-width:100%;height:auto}\n"
	      "nav a{margin-right:1em}\n"
	      "@media print{body{margin:0;max-width:none;font-size:11px}section{break-inside:auto}figure,table.summary,.grid{break-inside:avoid}"
	      "nav{display:none}figure svg{max-height:300px}}\n"
	      "</style></head><body>\n<h1>", f);
	html_text(f, title);
	fputs("</h1>\n", f);
}

void report_html_end(FILE *f)
{
	fputs("</body></html>\n", f);
}

int report_write_page(const char *path, const char *title, const output_report *summary, const char *json_name,
                      output_report *const *reports, const char *const *commands, const char *const *failures,
                      size_t count, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	FILE *f = file.stream;
	char when[64];
	time_t now = time(NULL);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	report_html_begin(f, title);
	fprintf(f, "<p>Generated by plumb %s on %s.", PLUMB_VERSION, when);
	if (json_name) {
		const char *base = strrchr(json_name, '/');
		base = base ? base + 1 : json_name;
		fputs(" Every figure on this page, with each section's raw rows: <a href=\"", f);
		html_text(f, base);
		fputs("\">", f);
		html_text(f, base);
		fputs("</a>.", f);
	}
	fputs("</p>\n<nav>", f);
	if (summary)
		fputs("<a href=\"#summary\">Summary</a>", f);
	for (size_t i = 0; i < count; i++) {
		fputs("<a href=\"#", f);
		html_text(f, commands[i]);
		fputs("\">", f);
		html_text(f, report_section_title(commands[i]));
		fputs("</a>", f);
	}
	if (summary && output_table_find(summary, "simulated"))
		fputs("<a href=\"#simulator\">The simulator's view</a>", f);
	fputs("</nav>\n", f);
	if (summary)
		write_summary(f, summary);
	for (size_t i = 0; i < count; i++)
		write_section(f, commands[i], reports[i], failures ? failures[i] : NULL, summary);
	write_simulated(f, summary);
	report_html_end(f);
	return output_file_commit(&file, status);
}

int report_write_html(const char *path, const char *title, output_report *const *reports,
                      const char *const *commands, const char *const *failures, size_t count,
                      plumb_status *status)
{
	return report_write_page(path, title, NULL, NULL, reports, commands, failures, count, status);
}
