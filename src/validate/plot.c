/* Plots of % difference against predicted count (log x, as in the
 * seeds' figures), through gnuplot.  The data and the script are kept next
 * to the image, so a reader can re-plot or restyle them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <stdlib.h>
#include "core/escape.h"
#include "core/spawn.h"
#include "validate/validate.h"

/* Every path and title is a single-quoted gnuplot string (plumb/escape.h):
 * a folder named with a quote or a `command` stays a name. */
static void quoted(FILE *f, const char *s)
{
	escape_gnuplot(f, s);
}

int validate_plot(const validate_results *results, const char *directory, const char *format,
                  const char *gnuplot, char *written, size_t written_length, plumb_status *status)
{
	bool svg = format && !strcmp(format, "svg");
	if (format && strcmp(format, "svg") && strcmp(format, "png"))
		return plumb_fail(status, EINVAL, "plot format '%s': use png or svg", format);
	char data_path[4096], script_path[4096], image_path[4096];
	snprintf(data_path, sizeof data_path, "%s/validate-plot.dat", directory);
	snprintf(script_path, sizeof script_path, "%s/validate-plot.gp", directory);
	snprintf(image_path, sizeof image_path, "%s/validate.%s", directory, svg ? "svg" : "png");

	/* gnuplot strings cannot hold a line break or another control
	 * character: written as a space, the image would go to another folder */
	if (!escape_gnuplot_exact(directory))
		return plumb_fail(status, EINVAL, "the folder's name holds a control character, which gnuplot cannot "
		                  "be given; the data are in %s's validate.{json,csv}", directory);
	output_file data, script;
	if (output_file_open(&data, data_path, status) != 0) return -1;
	size_t blocks = 0;
	char titles[256][96];
	for (size_t i = 0; i < results->series_count && blocks < 256; i++) {
		const validate_series *s = &results->series[i];
		const validate_event *ev = &s->benchmark->events[s->event_index];
		if (!s->supported || ev->companion) continue;
		size_t points = 0;
		for (size_t k = 0; k < s->case_count; k++)
			points += s->cases[k].runs > 0 && isfinite(s->cases[k].percent_difference);
		if (!points) continue;
		snprintf(titles[blocks], sizeof titles[blocks], "%s %s (%s)", ev->name, s->benchmark->name,
		         validate_source_name(s->source));
		fprintf(data.stream, "# %s\n", titles[blocks]);
		for (size_t k = 0; k < s->case_count; k++) {
			const validate_case *c = &s->cases[k];
			if (c->runs > 0 && isfinite(c->percent_difference))
				fprintf(data.stream, "%.17g %.17g\n", c->predicted, c->percent_difference * 100);
		}
		fprintf(data.stream, "\n\n");
		blocks++;
	}
	if (output_file_commit(&data, status) != 0) return -1;
	if (blocks == 0) return plumb_fail(status, ENODATA, "nothing to plot: no source produced counts");

	if (output_file_open(&script, script_path, status) != 0) return -1;
	FILE *f = script.stream;
	fprintf(f, "# plumb validate: %% difference against predicted count\n");
	if (svg) fprintf(f, "set terminal svg size 1200,800 dynamic\n");
	else fprintf(f, "set terminal png size 1400,900\n");
	/* Event names have underscores: no enhanced-text subscripts. */
	fprintf(f, "set termoption noenhanced\n");
	fprintf(f, "set output ");
	quoted(f, image_path);
	fprintf(f, "\nset logscale x\nset xlabel \"predicted count (events)\"\n"
	           "set ylabel \"(reported - predicted) / predicted (%%)\"\n"
	           "set title \"Counter validation: %% difference against predicted count\"\n"
	           "set key outside right top font \",8\"\nset grid\nset yrange [*:*]\n"
	           "set style data linespoints\n");
	fprintf(f, "plot ");
	for (size_t b = 0; b < blocks; b++) {
		quoted(f, data_path);
		fprintf(f, " index %zu using 1:2 title ", b);
		quoted(f, titles[b]);
		fprintf(f, "%s", b + 1 < blocks ? ", \\\n     " : "\n");
	}
	if (output_file_commit(&script, status) != 0) return -1;

	/* gnuplot started with an argument vector, never through a shell: the
	 * folder's name reaches it as one argument, whatever it holds. */
	char *argv[] = { (char *)(gnuplot ? gnuplot : "gnuplot"), script_path, NULL };
	char *text = NULL;
	size_t length = 0;
	int rc = 0;
	if (spawn_capture(argv, true, &text, &length, &rc) != 0) {
		if (errno == ENOENT)
			return plumb_fail(status, ENOENT, "gnuplot is not installed (apt-get install gnuplot-nox); "
			                  "the data and script are in %s and %s", data_path, script_path);
		return plumb_fail_errno(status, errno, "cannot run gnuplot");
	}
	/* Its last line of output, for the message. */
	while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r'))
		text[--length] = 0;
	const char *last = strrchr(text, '\n');
	last = last ? last + 1 : text;
	if (!(WIFEXITED(rc) && WEXITSTATUS(rc) == 0)) {
		rc = plumb_fail(status, EIO, "gnuplot failed (%.400s); the script is %s", last[0] ? last : "no message", script_path);
		free(text);
		return rc;
	}
	free(text);
	snprintf(written, written_length, "%s", image_path);
	return 0;
}
