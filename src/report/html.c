/* The HTML report: one self-contained file (inline CSS and SVG), so it can
 * be mailed or attached to a bug report as is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "plumb/report.h"

static const struct { const char *command, *title, *intro; } sections[] = {
	{ "topo", "The machine", "What the system reports: CPUs, caches (from sysfs and CPUID through hwloc), pages, the timer and whether hardware counters open." },
	{ "lat", "Latency", "Dependent loads over random cyclic chains, so neither prefetchers nor out-of-order execution can hide the latency. Plateaus are the levels the program can really use." },
	{ "bw", "Bandwidth", "Read, write, copy and triad kernels per working-set size." },
	{ "geometry", "Geometry inferred from timing", "Line size, capacities, associativity and TLB reach from timing alone, beside what the system claims." },
	{ "c2c", "Coherence costs between cores", "What an access costs when another core holds the line in each state." },
	{ "loaded", "Latency under load", "Pointer-chase latency while other cores generate traffic at increasing rates." },
	{ "model", "Queueing model", "Seed 001's closed M/D/1 model fitted to the loaded-latency curve." },
	{ "validate", "Can I trust my counters?", "Microbenchmarks with predicted counts, read through each counter source; each event's error class and the region size from which it is reliable." },
	{ "stat", "Counts", "" },
	{ "sim", "Simulation", "" },
	{ "explain", "Your program's regions: four sources", "Per marked region: wall time and counters measured over several runs, exact counts from plumbgrind, misses simulated on this machine's caches, and a time predicted from them and this machine's latencies and bandwidths (docs/explain.md)." },
};

const char *report_section_title(const char *command)
{
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		if (!strcmp(sections[i].command, command))
			return sections[i].title;
	return command;
}

static const char *section_intro(const char *command)
{
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		if (!strcmp(sections[i].command, command))
			return sections[i].intro;
	return "";
}

static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* Raw-data tables (every run of every case) would make the page megabytes
 * long; past this many rows the page says where the data is instead. */
#define REPORT_MAX_TABLE_ROWS 400

static void write_table(FILE *f, const output_table *t)
{
	char buffer[512];
	fputs("<h3>", f);
	html_text(f, output_table_title(t));
	fputs("</h3>\n", f);
	if (output_row_count(t) > REPORT_MAX_TABLE_ROWS) {
		fprintf(f, "<p class=note>%zu rows: too many to show here; they are in the section's JSON or CSV output (table \"", output_row_count(t));
		html_text(f, output_table_name(t));
		fputs("\").</p>\n", f);
		return;
	}
	fputs("<table>\n<tr>", f);
	for (size_t j = 0; j < output_column_count(t); j++) {
		fputs("<th>", f);
		html_text(f, output_column_name(t, j));
		if (output_column_unit(t, j)) {
			fputs(" <span class=unit>", f);
			html_text(f, output_column_unit(t, j));
			fputs("</span>", f);
		}
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t r = 0; r < output_row_count(t); r++) {
		fputs("<tr>", f);
		for (size_t j = 0; j < output_column_count(t); j++) {
			cell_kind k = output_cell_kind(t, r, j);
			output_cell_format(t, r, j, buffer, sizeof buffer);
			if (k == CELL_STATUS) {
				fputs("<td class=status title=\"", f);
				html_text(f, output_cell_reason(t, r, j));
				fputs("\">", f);
				html_text(f, buffer);
				fputs("<div class=reason>", f);
				html_text(f, output_cell_reason(t, r, j));
				fputs("</div>", f);
			} else {
				fputs(k == CELL_INTEGER || k == CELL_REAL ? "<td class=num>" : "<td>", f);
				html_text(f, buffer);
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void write_section(FILE *f, const char *command, const output_report *r, const char *failure)
{
	fprintf(f, "<section id=\"%s\">\n<h2>", command);
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
	size_t chart_count;
	const report_chart *charts = report_known_charts(&chart_count);
	for (size_t i = 0; i < chart_count; i++) {
		if (strcmp(charts[i].command, command) != 0)
			continue;
		const output_table *t = output_table_find(r, charts[i].table);
		if (!t)
			continue;
		char *svg = NULL;
		plumb_status st;
		if (report_chart_svg(t, &charts[i], &svg, &st) == 0) {
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
	for (size_t i = 0; i < output_table_count(r); i++)
		write_table(f, output_table_at(r, i));
	if (output_meta_count(r)) {
		fputs("<details><summary>Run details</summary><table>\n", f);
		char buffer[512];
		for (size_t i = 0; i < output_meta_count(r); i++) {
			output_meta_format(r, i, buffer, sizeof buffer);
			fputs("<tr><td>", f);
			html_text(f, output_meta_key(r, i));
			fputs("</td><td>", f);
			html_text(f, buffer);
			fputs("</td></tr>\n", f);
		}
		fputs("</table></details>\n", f);
	}
	for (size_t i = 0; i < output_note_count(r); i++) {
		fputs("<p class=note>", f);
		html_text(f, output_note_at(r, i));
		fputs("</p>\n", f);
	}
	fputs("</section>\n", f);
}

int report_write_html(const char *path, const char *title, output_report *const *reports,
                      const char *const *commands, const char *const *failures, size_t count,
                      plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	FILE *f = file.stream;
	char when[64];
	time_t now = time(NULL);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>", f);
	html_text(f, title);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n"
	      "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .6em}\n"
	      "th{background:#f0f0f0;text-align:left}.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".status{color:#a40}.reason{font-size:.8em;color:#666}.unit{color:#666;font-weight:normal}\n"
	      ".failure{color:#a40}.intro{color:#444}section{border-top:2px solid #ddd;margin-top:2em}\n"
	      "nav a{margin-right:1em}\n</style></head><body>\n<h1>", f);
	html_text(f, title);
	fprintf(f, "</h1>\n<p>Generated by plumb %s on %s.</p>\n<nav>", PLUMB_VERSION, when);
	for (size_t i = 0; i < count; i++) {
		fprintf(f, "<a href=\"#%s\">", commands[i]);
		html_text(f, report_section_title(commands[i]));
		fputs("</a>", f);
	}
	fputs("</nav>\n", f);
	for (size_t i = 0; i < count; i++)
		write_section(f, commands[i], reports[i], failures ? failures[i] : NULL);
	fputs("</body></html>\n", f);
	return output_file_commit(&file, status);
}
