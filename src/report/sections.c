/* Running the report's sections one after another: each section's command
 * as its own process with the report's arguments, the model fed loaded's
 * measurements.  plumb report and plumb cluster (on every node) both run
 * their sections here, so a node's figures come from the same runs as a
 * report's. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/progress.h"
#include "core/timer.h"
#include "machine/machine_model.h"
#include "report/report.h"

const char *const *report_section_arguments_for(const char *command, bool quick)
{
	const report_section *section = report_section_find(command);
	if (quick && section && section->quick_arguments)
		return section->quick_arguments;
	return report_section_arguments(command);
}

double report_section_expected_seconds(const char *command, bool quick)
{
	const report_section *section = report_section_find(command);
	if (!section || section->seconds <= 0)
		return 5;   /* a section the table gives no cost yet */
	return quick ? section->quick_seconds : section->seconds;
}

/* A section's own arguments (the report's, or --quick's) then those that
 * read an earlier section's report on stdin, into out (NULL-terminated). */
static const char *const *with_input(const char *const *own, const char *const *input, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t k = 0; own && own[k] && n + 1 < max; k++)
		out[n++] = own[k];
	for (size_t k = 0; input && input[k] && n + 1 < max; k++)
		out[n++] = input[k];
	out[n] = NULL;
	return out;
}

/* The report of an earlier section that ran (NULL if none did). */
static const output_report *section_before(const char *const *names, output_report *const *reports, size_t i,
                                           const char *command)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(names[k], command) && reports[k])
			return reports[k];
	return NULL;
}

/* The DRAM bandwidth measured by the sections that ran before section i
 * (report_measured_memory_mb_s), 0 when there is none. */
static double measured_memory_bandwidth(const char *const *names, output_report *const *reports, size_t i)
{
	return report_measured_memory_mb_s(section_before(names, reports, i, "topo"), section_before(names, reports, i, "lat"),
	                                   section_before(names, reports, i, "bw"));
}

double report_measured_memory_mb_s(const output_report *topo, const output_report *lat, const output_report *bw)
{
	if (!bw)
		return 0;
	machine_model m;
	plumb_status ignored;
	if (machine_model_build(&m, topo, lat, bw, NULL, &ignored) != 0)
		return 0;
	double gb_s = machine_model_memory_bandwidth(&m);   /* the figure the physics check holds the peak to */
	return isfinite(gb_s) ? gb_s * 1000 : 0;
}

/* While a section runs, the report's progress line is redrawn every second
 * (drawn only when a section began, it said "about 6:57 left" through
 * validate's four minutes while the time left fell), and a section that
 * says how far it is over its progress channel moves the running step's
 * own fraction, so that the time left follows the section's own rate:
 * validate, most of a report's time, runs at a pace the sections before it
 * do not predict.  Both come from the loop that reads the section's output
 * (report_run_section_watched): no thread, no lock. */
static void section_fraction(void *context, double fraction)
{
	progress_step_part(context, fraction);
}

/* The section's own time left (validate learns each kind of step's rate as
 * it runs): the running step's time left follows it. */
static void section_left(void *context, double seconds)
{
	progress_step_left(context, seconds, timer_monotonic_ns());
}

static void section_tick(void *context)
{
	progress *p = context;
	progress_step(p, p->done);
}

size_t report_run_sections(const char *program, const char *who, const char *const *names, size_t count, bool quick,
                           const char *save_dir, output_report **reports, char (*failures)[PLUMB_MESSAGE_MAX])
{
	return report_run_sections_with(program, who, names, count, quick, save_dir, NULL, reports, failures);
}

size_t report_run_sections_with(const char *program, const char *who, const char *const *names, size_t count,
                                bool quick, const char *save_dir, char *const *program_argv, output_report **reports,
                                char (*failures)[PLUMB_MESSAGE_MAX])
{
	size_t failed = 0;
	char label[128];
	snprintf(label, sizeof label, "plumb %s", who);
	progress p;
	progress_begin(&p, label, count);
	/* Weighted by each section's expected cost: counted by sections, the
	 * line said "0:19 left" with validate's 4:55 still to go. */
	double *weights = calloc(count ? count : 1, sizeof *weights);
	for (size_t i = 0; weights && i < count; i++)
		weights[i] = report_section_expected_seconds(names[i], quick);
	if (weights)
		progress_set_weights(&p, weights);
	report_section_watch watch = { p.enabled ? section_fraction : NULL, p.enabled ? section_tick : NULL, &p,
	                               p.enabled ? section_left : NULL };
	for (size_t i = 0; i < count; i++) {
		reports[i] = NULL;
		failures[i][0] = 0;
		progress_step(&p, i);
		if (p.enabled)
			fprintf(stderr, "\r%s: section %zu/%zu: plumb %s\033[K\n", label, i + 1, count,
			        report_section_command(names[i]));
		char save_path[PATH_MAX], *save = NULL;
		if (save_dir) {
			snprintf(save_path, sizeof save_path, "%s/%s.json", save_dir, names[i]);
			save = save_path;
		}
		plumb_status status = { 0 };
		int rc;
		const report_section *section = report_section_find(names[i]);
		const output_report *input = section && section->input ? section_before(names, reports, i, section->input)
		                                                       : NULL;
		if (section && section->input && (input || section->input_required)) {
			/* fed an earlier section's report on stdin (the model fitted
			 * to loaded's; geometry taking lat's capacities and level
			 * latencies, so the two sections and the summary give one
			 * figure; bw sizing its working sets from lat's usable
			 * capacities), with its own arguments before */
			char *text = NULL;
			size_t text_length = 0;
			FILE *m = input ? open_memstream(&text, &text_length) : NULL;
			if (m) {
				output_write(input, OUTPUT_JSON, m, &status);
				fclose(m);
			}
			const char *arguments[32];
			with_input(report_section_arguments_for(names[i], quick), section->input_arguments, arguments, 30);
			char bound[32];
			double memory = section->bandwidth_bound ? measured_memory_bandwidth(names, reports, i) : 0;
			if (memory > 0) {
				size_t n = 0;
				while (arguments[n])
					n++;
				snprintf(bound, sizeof bound, "%.0f", memory);
				arguments[n++] = "--peak-at-least";
				arguments[n++] = bound;
				arguments[n] = NULL;
			}
			if (text)
				rc = report_run_section_watched(program, report_section_command(names[i]), arguments, text, save,
				                                &watch, &reports[i], &status);
			else if (section->input_required)
				rc = plumb_fail(&status, EINVAL, "%s", section->input_missing ? section->input_missing
				                                                              : "an earlier section did not run");
			else
				rc = report_run_section_watched(program, report_section_command(names[i]),
				                                report_section_arguments_for(names[i], quick), NULL, save, &watch,
				                                &reports[i], &status);
			free(text);
		} else if (section && section->program) {
			/* the user's program, its argument vector after "--" */
			rc = report_run_program_section(program, report_section_command(names[i]),
			                                report_section_arguments_for(names[i], quick), program_argv, save,
			                                &watch, &reports[i], &status);
		} else if (section && section->recorded) {
			/* recorded once for its reference rate, then halted */
			rc = report_run_perturb_section(program, save, &watch, &reports[i], &status);
		} else {
			rc = report_run_section_watched(program, report_section_command(names[i]),
			                                report_section_arguments_for(names[i], quick), NULL, save, &watch,
			                                &reports[i], &status);
		}
		if (rc != 0) {
			snprintf(failures[i], PLUMB_MESSAGE_MAX, "%s", status.message[0] ? status.message : "the section failed");
			fprintf(stderr, "%splumb %s: section %s: %s\n", p.enabled ? "\r\033[K" : "", who, names[i], failures[i]);
			failed++;
		}
	}
	progress_step(&p, count);
	progress_end(&p);
	free(weights);
	return failed;
}
