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
#include "plumb/interrupt.h"
#include "plumb/report.h"

static const report_chart known_charts[] = {
	{ "lat", "sweep", "bytes", "latency", NULL, true, true, "Dependent-load latency against working-set size" },
	{ "lat", "mlp_curve", "chains", "bandwidth", "level", false, false, "Memory-level parallelism: bandwidth against interleaved chains" },
	{ "lat", "restart_curve", "work", "latency", "level", false, false, "Restart latency: time per load against dependent work after it" },
	{ "bw", "bandwidth", "footprint_per_thread", "gbps_median", "kernel", true, false, "Bandwidth against working-set size" },
	{ "loaded", "loaded", "total_bandwidth", "latency", NULL, false, false, "Latency under load (against achieved bandwidth)" },
	{ "model", "predict_contention", "contention", "latency", NULL, false, false, "Queueing model: predicted latency against contention" },
	{ "validate", "cases", "predicted", "difference", "series", true, false, "Percent difference against predicted count" },
};

const report_chart *report_known_charts(size_t *count)
{
	*count = sizeof known_charts / sizeof known_charts[0];
	return known_charts;
}

/* gnuplot's data files are whitespace-separated; series names are quoted. */
static void write_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fputc(*s == '"' || *s == '\n' ? '\'' : *s, f);
	fputc('"', f);
}

static void escape_gnuplot_string(char *out, size_t length, const char *in)
{
	size_t n = 0;
	for (; *in && n + 2 < length; in++)
		if (*in != '"' && *in != '\\' && *in != '\n')
			out[n++] = *in;
	out[n] = 0;
}

static int append_series(char ***names, size_t *count, const char *name)
{
	for (size_t i = 0; i < *count; i++)
		if (!strcmp((*names)[i], name))
			return 0;
	char **grown = realloc(*names, (*count + 1) * sizeof **names);
	if (!grown)
		return -1;
	*names = grown;
	grown[(*count)++] = (char *)name;
	return 0;
}

int report_chart_svg(const output_table *t, const report_chart *chart, char **svg, plumb_status *status)
{
	*svg = NULL;
	int xi = output_column_index(t, chart->x), yi = output_column_index(t, chart->y);
	int si = chart->series ? output_column_index(t, chart->series) : -1;
	if (xi < 0 || yi < 0)
		return plumb_fail(status, EINVAL, "table '%s' has no column '%s' or '%s'", output_table_name(t), chart->x, chart->y);
	char data_path[] = "/tmp/plumb-chart-XXXXXX";
	int fd = mkstemp(data_path);
	if (fd < 0)
		return plumb_fail_errno(status, errno, "cannot create a temporary file for the chart");
	interrupt_add_path(data_path, false);   /* a signal removes it (plumb/interrupt.h) */
	FILE *data = fdopen(fd, "w");
	char **series = NULL;
	size_t series_count = 0, points = 0;
	for (size_t r = 0; r < output_row_count(t); r++) {
		const char *s = si >= 0 ? output_cell_string(t, r, (size_t)si) : "";
		if (append_series(&series, &series_count, s ? s : "") != 0)
			break;
	}
	/* One gnuplot data block per series, separated by two blank lines. */
	for (size_t k = 0; k < series_count; k++) {
		for (size_t r = 0; r < output_row_count(t); r++) {
			const char *s = si >= 0 ? output_cell_string(t, r, (size_t)si) : "";
			if (strcmp(s ? s : "", series[k]) != 0)
				continue;
			double x = output_cell_number(t, r, (size_t)xi), y = output_cell_number(t, r, (size_t)yi);
			if (!isfinite(x) || !isfinite(y) || (chart->log_x && x <= 0) || (chart->log_y && y <= 0))
				continue;
			fprintf(data, "%.17g %.17g\n", x, y);
			points++;
		}
		fputs("\n\n", data);
	}
	fclose(data);
	if (points == 0) {
		unlink(data_path);
		interrupt_remove_path(data_path);
		free(series);
		return plumb_fail(status, ENODATA, "table '%s' has no numeric points to plot", output_table_name(t));
	}
	char script_path[] = "/tmp/plumb-chart-XXXXXX";
	fd = mkstemp(script_path);
	if (fd >= 0)
		interrupt_add_path(script_path, false);
	if (fd < 0) {
		unlink(data_path);
		interrupt_remove_path(data_path);
		free(series);
		return plumb_fail_errno(status, errno, "cannot create a temporary file for the chart");
	}
	FILE *script = fdopen(fd, "w");
	char title[256], xl[128], yl[128];
	const char *xu = output_column_unit(t, (size_t)xi), *yu = output_column_unit(t, (size_t)yi);
	escape_gnuplot_string(title, sizeof title, chart->title);
	/* "bytes (bytes)" says nothing twice: a unit equal to the name is dropped. */
	if (xu && !strcmp(xu, chart->x))
		xu = NULL;
	if (yu && !strcmp(yu, chart->y))
		yu = NULL;
	snprintf(xl, sizeof xl, "%s%s%s%s", chart->x, xu ? " (" : "", xu ? xu : "", xu ? ")" : "");
	snprintf(yl, sizeof yl, "%s%s%s%s", chart->y, yu ? " (" : "", yu ? yu : "", yu ? ")" : "");
	fprintf(script, "set terminal svg size 760,420 dynamic font 'sans,11'\n"
	                "set title \"%s\"\nset xlabel \"%s\"\nset ylabel \"%s\"\n"
	                "set grid\nset key outside right top\n", title, xl, yl);
	if (chart->log_x)
		fputs("set logscale x 2\nset format x '2^{%L}'\n", script);
	if (chart->log_y)
		fputs("set logscale y 10\n", script);
	fputs("plot ", script);
	for (size_t k = 0; k < series_count; k++) {
		fprintf(script, "%s'%s' index %zu using 1:2 with linespoints title ", k ? ", " : "", data_path, k);
		write_escaped(script, series[k][0] ? series[k] : chart->y);
	}
	fputc('\n', script);
	fclose(script);
	free(series);

	char command[512];
	snprintf(command, sizeof command, "gnuplot %s 2>/dev/null", script_path);
	FILE *pipe = popen(command, "r");
	char *text = NULL;
	size_t length = 0;
	FILE *sink = open_memstream(&text, &length);
	if (pipe && sink) {
		char chunk[8192];
		size_t n;
		while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0)
			fwrite(chunk, 1, n, sink);
	}
	int rc = pipe ? pclose(pipe) : -1;
	if (sink)
		fclose(sink);
	unlink(data_path);
	unlink(script_path);
	interrupt_remove_path(data_path);
	interrupt_remove_path(script_path);
	if (rc != 0 || !text || !strstr(text, "<svg")) {
		free(text);
		if (rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 127)
			return plumb_fail(status, ENOENT, "gnuplot is not installed (apt-get install gnuplot-nox); charts omitted");
		return plumb_fail(status, EIO, "gnuplot failed to draw '%s'", chart->title);
	}
	/* Drop the XML prolog so the SVG can sit inline in HTML. */
	char *start = strstr(text, "<svg");
	memmove(text, start, strlen(start) + 1);
	*svg = text;
	return 0;
}
