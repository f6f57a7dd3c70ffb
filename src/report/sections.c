/* Running the report's sections one after another: each section's command
 * as its own process with the report's arguments, the model fed loaded's
 * measurements.  plumb report and plumb cluster (on every node) both run
 * their sections here, so a node's figures come from the same runs as a
 * report's. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/progress.h"
#include "plumb/report.h"

/* --quick: shorter time caps, so a whole quick report (or a cluster node's
 * quick run) stays near half a minute on two cores. */
static const char *const quick_lat[] = { "--time-cap", "40", NULL };
static const char *const quick_bw[] = { "--time-cap", "40", NULL };
static const char *const quick_loaded[] = { "--samples", "3", "--loads", "50000", NULL };

const char *const *report_section_arguments_for(const char *command, bool quick)
{
	if (quick && !strcmp(command, "lat"))
		return quick_lat;
	if (quick && !strcmp(command, "bw"))
		return quick_bw;
	if (quick && !strcmp(command, "loaded"))
		return quick_loaded;
	return report_section_arguments(command);
}

/* Seconds each section took on a 2-CPU Intel VM (Emerald Rapids guest)
 * under ordinary load, whole report runs of 2026-11-28 (docs/PERFORMANCE.md,
 * "The report's sections"); only their ratios matter to the progress line. */
static const struct section_cost {
	const char *command;
	double seconds, quick_seconds;
} section_costs[] = {
	{ "topo", 0.5, 0.5 }, { "lat", 14, 5 }, { "bw", 10, 4 }, { "geometry", 9, 9 }, { "c2c", 3, 3 },
	{ "loaded", 5, 2 }, { "model", 0.5, 0.5 }, { "validate", 60, 60 }, { "perturb", 3, 3 },
};

double report_section_expected_seconds(const char *command, bool quick)
{
	for (size_t i = 0; i < sizeof section_costs / sizeof section_costs[0]; i++)
		if (!strcmp(section_costs[i].command, command))
			return quick ? section_costs[i].quick_seconds : section_costs[i].seconds;
	return 5;   /* a section this table does not know yet */
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

size_t report_run_sections(const char *program, const char *who, const char *const *names, size_t count, bool quick,
                           const char *save_dir, output_report **reports, char (*failures)[PLUMB_MESSAGE_MAX])
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
	for (size_t i = 0; i < count; i++) {
		reports[i] = NULL;
		failures[i][0] = 0;
		progress_step(&p, i);
		if (p.enabled)
			fprintf(stderr, "\r%s: section %zu/%zu: plumb %s\033[K\n", label, i + 1, count, names[i]);
		char save_path[PATH_MAX], *save = NULL;
		if (save_dir) {
			snprintf(save_path, sizeof save_path, "%s/%s.json", save_dir, names[i]);
			save = save_path;
		}
		plumb_status status = { 0 };
		int rc;
		if (!strcmp(names[i], "model")) {
			static const char *const model_arguments[] = { "--from", "-", NULL };
			const output_report *loaded = NULL;
			for (size_t k = 0; k < i; k++)
				if (!strcmp(names[k], "loaded"))
					loaded = reports[k];
			char *input = NULL;
			size_t input_length = 0;
			FILE *m = loaded ? open_memstream(&input, &input_length) : NULL;
			if (m) {
				output_write(loaded, OUTPUT_JSON, m, &status);
				fclose(m);
			}
			if (!input) {
				snprintf(status.message, sizeof status.message, "the loaded section did not run, and the model is fitted to its measurements");
				rc = -1;
			} else {
				rc = report_run_section_input(program, names[i], model_arguments, input, save, &reports[i], &status);
			}
			free(input);
		} else if (!strcmp(names[i], "geometry") && section_before(names, reports, i, "lat")) {
			/* One measurement for capacities and level latencies:
			 * geometry takes lat's instead of sweeping again, so
			 * the two sections and the summary give one figure. */
			static const char *const geometry_arguments[] = { "--levels-from", "-", NULL };
			char *input = NULL;
			size_t input_length = 0;
			FILE *m = open_memstream(&input, &input_length);
			if (m) {
				output_write(section_before(names, reports, i, "lat"), OUTPUT_JSON, m, &status);
				fclose(m);
			}
			rc = input ? report_run_section_input(program, names[i], geometry_arguments, input, save, &reports[i], &status)
			           : report_run_section(program, names[i], report_section_arguments_for(names[i], quick), save, &reports[i], &status);
			free(input);
		} else if (!strcmp(names[i], "perturb")) {
			/* recorded once for its reference rate, then halted */
			rc = report_run_perturb_section(program, save, &reports[i], &status);
		} else {
			rc = report_run_section(program, names[i], report_section_arguments_for(names[i], quick), save, &reports[i], &status);
		}
		if (rc != 0) {
			snprintf(failures[i], PLUMB_MESSAGE_MAX, "%s", status.message[0] ? status.message : "the section failed");
			fprintf(stderr, "plumb %s: section %s: %s\n", who, names[i], failures[i]);
			failed++;
		}
	}
	progress_step(&p, count);
	progress_end(&p);
	free(weights);
	return failed;
}
