/* Charts through gnuplot: the project's one plotting path.  The data goes to
 * a temporary file, gnuplot writes SVG to a pipe, and the SVG is inlined in
 * the report so the HTML file stands alone. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/escape.h"
#include "core/tempdir.h"
#include "core/interrupt.h"
#include "report/report.h"
#include "core/spawn.h"

static int append_series(char ***names, size_t *count, const char *name)
{
	for (size_t i = 0; i < *count; i++)
		if (!strcmp((*names)[i], name))
			return 0;
	char **grown = realloc(*names, (*count + 1) * sizeof **names);
	char *copy = strdup(name);
	if (!grown || !copy) {
		free(copy);
		if (grown)
			*names = grown;
		return -1;
	}
	*names = grown;
	grown[(*count)++] = copy;
	return 0;
}

/* A row's series label from the series columns: "read, 2 threads". */
static void series_key(const output_table *t, size_t row, const int *columns, size_t n, const char *const *names,
                       char *out, size_t length)
{
	out[0] = 0;
	for (size_t i = 0, used = 0; i < n; i++) {
		char cell[128];
		if (columns[i] < 0)
			continue;
		double v = output_cell_number(t, row, (size_t)columns[i]);
		if (!strcmp(names[i], "threads") && isfinite(v))
			snprintf(cell, sizeof cell, "%g thread%s", v, v == 1 ? "" : "s");
		else
			output_cell_format(t, row, (size_t)columns[i], cell, sizeof cell);
		used += (size_t)snprintf(out + used, used < length ? length - used : 0, "%s%s", used ? ", " : "", cell);
		if (used >= length)
			break;
	}
}

/* "4 KiB", "64 KiB", "1 MiB" ticks at powers of four across [lo, hi]. */
static void size_tics(FILE *script, double lo, double hi)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	fputs("set xtics (", script);
	int first = 1;
	for (int e = 0; e <= 44; e += 2) {
		double x = ldexp(1, e);
		if (x < lo / 1.01 || x > hi * 1.01)
			continue;
		fprintf(script, "%s\"%d %s\" %.0f", first ? "" : ", ", 1 << (e % 10), units[e / 10], x);
		first = 0;
	}
	fputs(")\n", script);
}

static void column_label(const output_table *t, int column, const char *name, const char *given, char *out, size_t length)
{
	if (given) {
		snprintf(out, length, "%s", given);
		return;
	}
	const char *unit = output_column_unit(t, (size_t)column);
	/* "bytes (bytes)" says nothing twice: a unit equal to the name is dropped. */
	if (unit && !strcmp(unit, name))
		unit = NULL;
	char words[128];
	snprintf(words, sizeof words, "%s", name);
	for (char *p = words; *p; p++)
		if (*p == '_')
			*p = ' ';
	if (words[0] >= 'a' && words[0] <= 'z')
		words[0] = (char)(words[0] - 'a' + 'A');
	snprintf(out, length, "%s%s%s%s", words, unit ? " (" : "", unit ? unit : "", unit ? ")" : "");
}

/* Whether a row passes one "column=a|b" condition (text up to end). */
static bool condition_holds(const output_table *t, size_t row, const char *text, const char *end)
{
	const char *eq = memchr(text, '=', (size_t)(end - text));
	if (!eq)
		return true;
	char column[64];
	snprintf(column, sizeof column, "%.*s", (int)(eq - text), text);
	int c = output_column_index(t, column);
	if (c < 0)
		return true;
	char cell[128];
	output_cell_format(t, row, (size_t)c, cell, sizeof cell);
	size_t n = strlen(cell);
	for (const char *v = eq + 1; v < end;) {
		const char *bar = memchr(v, '|', (size_t)(end - v));
		size_t length = bar ? (size_t)(bar - v) : (size_t)(end - v);
		if (length == n && !strncmp(v, cell, n))
			return true;
		v += length + (bar != NULL);
	}
	return false;
}

/* Whether a row passes the chart's filter: "column=a|b" conditions joined by '&'. */
static bool row_wanted(const output_table *t, size_t row, const report_chart *chart)
{
	if (!chart->where)
		return true;
	for (const char *p = chart->where; *p;) {
		const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
		if (!condition_holds(t, row, p, end))
			return false;
		if (!amp)
			break;
		p = amp + 1;
	}
	return true;
}

/* Index of value in a small list of distinct values, appended if new. */
static int distinct_index(char values[][64], int *count, int max, const char *value)
{
	for (int i = 0; i < *count; i++)
		if (!strcmp(values[i], value))
			return i;
	if (*count == max)
		return max - 1;
	snprintf(values[*count], 64, "%s", value);
	return (*count)++;
}

int report_chart_svg(const output_table *t, const report_chart *chart, char **svg, plumb_status *status)
{
	return report_chart_svg_marked(t, chart, NULL, 0, svg, status);
}

int report_chart_svg_marked(const output_table *t, const report_chart *chart, const report_chart_mark *marks,
                            size_t mark_count, char **svg, plumb_status *status)
{
	*svg = NULL;
	int xi = output_column_index(t, chart->x), yi = output_column_index(t, chart->y);
	if (xi < 0 || yi < 0)
		return plumb_fail(status, EINVAL, "table '%s' has no column '%s' or '%s'", output_table_name(t), chart->x, chart->y);
	/* Series columns: "kernel,threads" draws one line per kernel and
	 * thread count, never one line through both. */
	char series_spec[128] = "";
	const char *series_names[4];
	int series_columns[4];
	size_t series_n = 0;
	if (chart->series) {
		snprintf(series_spec, sizeof series_spec, "%s", chart->series);
		for (char *save = NULL, *c = strtok_r(series_spec, ",", &save); c && series_n < 4; c = strtok_r(NULL, ",", &save)) {
			series_names[series_n] = c;
			series_columns[series_n++] = output_column_index(t, c);
		}
	}
	char data_path[4096], script_path[4096];
	if (temp_path(data_path, sizeof data_path, "plumb-chart-XXXXXX", status) != 0 ||
	    temp_path(script_path, sizeof script_path, "plumb-chart-XXXXXX", status) != 0)
		return -1;
	int fd = mkstemp(data_path);
	if (fd < 0)
		return plumb_fail_errno(status, errno, "cannot create a temporary file for the chart");
	interrupt_add_path(data_path, false);   /* a signal removes it (plumb/interrupt.h) */
	FILE *data = fdopen(fd, "w");
	char **series = NULL, key[256];
	size_t series_count = 0, points = 0;
	double xmin = INFINITY, xmax = -INFINITY;
	/* Colour by the first series column, dash by the second. */
	char firsts[16][64], seconds[8][64];
	int first_count = 0, second_count = 0, colour[64], dash[64];
	for (size_t r = 0; r < output_row_count(t); r++) {
		if (!row_wanted(t, r, chart))
			continue;
		series_key(t, r, series_columns, series_n, series_names, key, sizeof key);
		size_t before = series_count;
		if (append_series(&series, &series_count, key) != 0)
			break;
		if (series_count > before && before < 64) {
			char cell[64];
			colour[before] = (int)before;
			dash[before] = 0;
			if (series_n == 2 && series_columns[0] >= 0 && series_columns[1] >= 0) {
				output_cell_format(t, r, (size_t)series_columns[0], cell, sizeof cell);
				colour[before] = distinct_index(firsts, &first_count, 16, cell);
				output_cell_format(t, r, (size_t)series_columns[1], cell, sizeof cell);
				dash[before] = distinct_index(seconds, &second_count, 8, cell);
			}
		}
	}
	/* One gnuplot data block per series, separated by two blank lines. */
	for (size_t k = 0; k < series_count; k++) {
		for (size_t r = 0; r < output_row_count(t); r++) {
			if (!row_wanted(t, r, chart))
				continue;
			series_key(t, r, series_columns, series_n, series_names, key, sizeof key);
			if (strcmp(key, series[k]) != 0)
				continue;
			double x = output_cell_number(t, r, (size_t)xi), y = output_cell_number(t, r, (size_t)yi);
			if (!isfinite(x) || !isfinite(y) || (chart->log_x && x <= 0) || (chart->log_y && y <= 0))
				continue;
			fprintf(data, "%.17g %.17g\n", x, y);
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			points++;
		}
		fputs("\n\n", data);
	}
	fclose(data);
	if (points == 0) {
		unlink(data_path);
		interrupt_remove_path(data_path);
		for (size_t k = 0; k < series_count; k++)
			free(series[k]);
		free(series);
		return plumb_fail(status, ENODATA, "table '%s' has no numeric points to plot", output_table_name(t));
	}
	fd = mkstemp(script_path);
	if (fd >= 0)
		interrupt_add_path(script_path, false);
	if (fd < 0) {
		unlink(data_path);
		interrupt_remove_path(data_path);
		for (size_t k = 0; k < series_count; k++)
			free(series[k]);
		free(series);
		return plumb_fail_errno(status, errno, "cannot create a temporary file for the chart");
	}
	FILE *script = fdopen(fd, "w");
	char xl[192], yl[192];
	column_label(t, xi, chart->x, chart->x_label, xl, sizeof xl);
	column_label(t, yi, chart->y, chart->y_label, yl, sizeof yl);
	/* noenhanced: an underscore in a name is an underscore, not a subscript.
	 * Every text (titles, labels, series names: cells of a report that may
	 * come from someone else's file) is a single-quoted gnuplot string, in
	 * which gnuplot runs no `command` (plumb/escape.h). */
	fputs("set terminal svg size 760,400 dynamic font 'sans,11' noenhanced\nset title ", script);
	escape_gnuplot(script, chart->title);
	fputs("\nset xlabel ", script);
	escape_gnuplot(script, xl);
	fputs("\nset ylabel ", script);
	escape_gnuplot(script, yl);
	fprintf(script, "\nset grid\nset key %s\n",
	        series_count == 1 ? "off" : series_count > 6 ? "outside right top font ',9' spacing 0.9" : "inside top left box opaque");
	if (chart->log_x)
		fputs("set logscale x 2\n", script);
	if (chart->size_x && isfinite(xmin)) {
		double lo = xmin, hi = xmax;
		for (size_t m = 0; m < mark_count; m++)
			if (marks[m].x > 0) {
				lo = fmin(lo, marks[m].x);
				hi = fmax(hi, marks[m].x);
			}
		fprintf(script, "set xrange [%.17g:%.17g]\n", lo / 1.1, hi * 1.1);
		size_tics(script, lo / 1.1, hi * 1.1);
	}
	if (chart->log_y)
		fputs("set logscale y 10\n", script);
	else if (chart->y_from_zero)
		fputs("set yrange [0:*]\n", script);
	for (size_t m = 0; m < mark_count; m++) {
		if (!(marks[m].x > 0))
			continue;
		fprintf(script, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '%s' dt %d lw 1\n", marks[m].x, marks[m].x,
		        marks[m].dashed ? "#777777" : "#cc3300", marks[m].dashed ? 2 : 1);
		fputs("set label ", script);
		escape_gnuplot(script, marks[m].label ? marks[m].label : "");
		fprintf(script, " at %.17g, graph %s rotate by 90 right offset -0.4,0 font ',8' tc rgb '%s'\n", marks[m].x,
		        marks[m].dashed ? "0.98" : "0.55", marks[m].dashed ? "#555555" : "#cc3300");
	}
	fputs("plot ", script);
	for (size_t k = 0; k < series_count; k++) {
		fputs(k ? ", " : "", script);
		escape_gnuplot(script, data_path);
		fprintf(script, " index %zu using 1:2 with linespoints lc %d pt %d dt %d lw %s title ", k,
		        1 + (k < 64 ? colour[k] : (int)k) % 8, 1 + (k < 64 ? colour[k] : (int)k) % 13, 1 + (k < 64 ? dash[k] : 0),
		        k < 64 && dash[k] ? "1.2" : "1.6");
		escape_gnuplot(script, series[k][0] ? series[k] : yl);
		free(series[k]);
	}
	fputc('\n', script);
	fclose(script);
	free(series);

	/* gnuplot started with an argument vector, never through a shell. */
	char *argv[] = { "gnuplot", script_path, NULL };
	char *text = NULL;
	size_t length = 0;
	int wait_status = 0;
	int rc = spawn_capture(argv, false, &text, &length, &wait_status);
	int spawn_error = rc != 0 ? errno : 0;
	if (rc == 0 && !(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0))
		rc = -1;
	unlink(data_path);
	unlink(script_path);
	interrupt_remove_path(data_path);
	interrupt_remove_path(script_path);
	if (rc != 0 || !text || !strstr(text, "<svg")) {
		free(text);
		if (spawn_error == ENOENT)
			return plumb_fail(status, ENOENT, "gnuplot is not installed (apt-get install gnuplot-nox); charts omitted");
		return plumb_fail(status, EIO, "gnuplot failed to draw '%s'", chart->title);
	}
	/* Drop the XML prolog so the SVG can sit inline in HTML. */
	char *start = strstr(text, "<svg");
	memmove(text, start, strlen(start) + 1);
	/* gnuplot names each plot "gnuplot_plot_N" in a <title> (a tooltip
	 * that would show the identifier); the legend already names them. */
	for (char *g = strstr(text, "<title>gnuplot_plot_"); g; g = strstr(g, "<title>gnuplot_plot_")) {
		char *end = strstr(g, "</title>");
		if (!end)
			break;
		end += 8;
		memmove(g, end, strlen(end) + 1);
	}
	*svg = text;
	return 0;
}
