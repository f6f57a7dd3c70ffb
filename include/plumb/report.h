/* The machine characterisation report: sections (each a command's output
 * report) rendered into one self-contained HTML file with charts. */
#ifndef PLUMB_REPORT_H
#define PLUMB_REPORT_H

#include <stdbool.h>
#include "plumb/output.h"
#include "plumb/status.h"

/* A chart of one table: y against x, one line per distinct value of the
 * series column (or one line if series is NULL). */
typedef struct report_chart {
	const char *command;   /* the section's command ("lat") */
	const char *table;     /* table name */
	const char *x, *y, *series;
	bool log_x, log_y;
	const char *title;
} report_chart;

/* Charts plumb knows how to draw for its own commands' tables. */
const report_chart *report_known_charts(size_t *count);

/* Renders a chart as an SVG document through gnuplot.  Fails with a clear
 * message when gnuplot is missing or the table lacks the columns. */
int report_chart_svg(const output_table *table, const report_chart *chart, char **svg, plumb_status *status);

/* A section's heading for a command ("validate" -> "Can I trust my counters?"). */
const char *report_section_title(const char *command);

/* Writes the HTML report atomically.  failures[i], if non-NULL, is a
 * one-line reason why section i could not be produced; its report may be NULL. */
int report_write_html(const char *path, const char *title, output_report *const *sections,
                      const char *const *commands, const char *const *failures, size_t count,
                      plumb_status *status);

/* Runs `program COMMAND ARGS... --json` and parses its report.  Sections run
 * as separate processes so one section's crash, memory or pinned threads
 * cannot disturb the next.  On failure *out is NULL and status says why
 * (the child's last stderr line when it has one).  If save_path is non-NULL
 * the JSON is also written there atomically. */
int report_run_section(const char *program, const char *command, const char *const *arguments,
                       const char *save_path, output_report **out, plumb_status *status);
/* Reads a JSON report from a file ("-" = stdin). */
int report_read_file(const char *path, output_report **out, plumb_status *status);
#endif
