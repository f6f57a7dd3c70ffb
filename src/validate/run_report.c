/* The report of a validation run, as `plumb validate` prints it and writes
 * it to a folder: what the counts depend on besides the benchmark (the
 * machine's meta), which tables, the verdicts recorded, and the notes. */
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include "machine/topology.h"
#include "validate/validate.h"

output_table *validate_benchmarks_table(output_report *report)
{
	size_t count;
	const validate_benchmark *const *all = validate_benchmarks(&count);
	output_table *t = output_table_add(report, "benchmarks", "Validation benchmarks");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "events", NULL, 0);
	output_column(t, "threads", NULL, 0);
	output_column(t, "max_size", NULL, 0);
	output_column(t, "description", NULL, 0);
	output_column(t, "defeats", NULL, 0);
	for (size_t i = 0; i < count; i++) {
		char events[256] = "";
		for (int e = 0; e < all[i]->event_count; e++) {
			size_t used = strlen(events);
			snprintf(events + used, sizeof events - used, "%s%s%s", e ? "," : "", all[i]->events[e].name,
			         all[i]->events[e].companion ? "(companion)" : "");
		}
		output_row(t);
		output_cell_text(t, all[i]->name);
		output_cell_text(t, events);
		output_cell_integer(t, all[i]->threads);
		output_cell_integer(t, (int64_t)all[i]->default_max_size);
		output_cell_text(t, all[i]->title);
		output_cell_text(t, all[i]->defeats);
	}
	return t;
}

void validate_report_meta(output_report *r, const validate_results *results, const validate_options *o)
{
	const validate_machine *m = &results->machine;
	/* What the counts depend on besides the benchmark (notes 000 §7.6 R2). */
	struct utsname uts;
	if (uname(&uts) == 0) output_meta_text(r, "kernel", uts.release);
	output_meta_text(r, "glibc", gnu_get_libc_version());
	output_meta_text(r, "compiler", __VERSION__);
	topology machine_topology;
	plumb_status status;
	if (topology_read(&machine_topology, &status) == 0) {
		output_meta_text(r, "cpu_model", machine_topology.cpu_model);
		output_meta_text(r, "thp", machine_topology.thp_mode);
		output_meta_text(r, "virtualised", machine_topology.hypervisor ? "yes" : "no");
	}
	output_meta_text(r, "memory", "fresh mmap per run, MADV_NOHUGEPAGE, prefaulted by writing where the "
	                              "benchmark needs no faults; lines made uncached by clflush");
	output_meta_integer(r, "page_size", (int64_t)m->page_size);
	output_meta_integer(r, "l1d_size", (int64_t)m->l1d_size);
	output_meta_integer(r, "l1d_line", m->l1d_line);
	output_meta_integer(r, "l2_size", (int64_t)m->l2_size);
	output_meta_integer(r, "l1i_size", (int64_t)m->l1i_size);
	output_meta_integer(r, "counted_cpu", m->cpus[0]);
	output_meta_integer(r, "partner_cpu", m->cpus[1]);
	output_meta_integer(r, "runs", (int64_t)o->runs);
	output_meta_real(r, "seconds", results->seconds);
	output_meta_integer(r, "process_runs", (int64_t)results->total_runs);
	output_meta_text(r, "sim_preset", o->sim_preset ? o->sim_preset : "host");
	char settings[512];
	validate_sim_detail(o, settings, sizeof settings);
	output_meta_text(r, "simulator", settings);
	const validate_thresholds *t = &o->thresholds;
	char rules[512];
	snprintf(rules, sizeof rules,
	         "accurate |diff|<=%g%%; multiplicative |b-1|>%g%%; bias |a|>=%g with b~1; random: CV>%g%% and "
	         "stddev>%g and variance>mean in some case; unknown: <%zu cases, a flat count (b within 3 standard "
	         "errors of 0) or R^2<%g; reliable from: every "
	         "larger case within %g%%", t->accurate_tolerance * 100, t->slope_tolerance * 100, t->bias_min_events,
	         t->random_cv * 100, t->random_min_stddev, t->min_cases, t->min_r2, t->reliable_tolerance * 100);
	output_meta_text(r, "thresholds", rules);
}

/* The tables in the order every report has them; a folder's report has
 * every table but the iteration check (its run is not a counted run). */
static void add_tables(output_report *r, const validate_results *results, bool cases, bool trips, bool complete)
{
	validate_verdict_table(r, results);
	if (cases) validate_side_by_side_table(r, results);
	if (trips && results->trip_check_count) validate_trips_table(r, results);
	if (complete) validate_case_table(r, results);
	if (complete) validate_raw_table(r, results);
}

output_report *validate_report(const validate_results *results, const validate_options *o, bool cases, bool complete)
{
	output_report *r = output_report_new("validate");
	validate_report_meta(r, results, o);
	add_tables(r, results, cases || complete, cases || complete, complete);
	return r;
}

int validate_report_record(output_report *r, const validate_results *results, const validate_thresholds *thresholds,
                           const char *path, plumb_status *status)
{
	char default_path[4096];
	if (!path) {
		plumb_status none;
		if (counter_verification_default_path(default_path, sizeof default_path, &none) != 0) {
			output_note(r, "verdicts not recorded: %s", none.message);
			return 0;
		}
		path = default_path;
	}
	counter_environment environment;
	counter_environment_read(&environment);
	size_t recorded = 0;
	if (validate_record_results(results, thresholds, path, environment.cpu_identity, time(NULL), &recorded,
	                            status) != 0)
		return -1;
	if (recorded)
		output_note(r, "%zu verdicts for %s recorded in %s (plumb events shows them)", recorded,
		            environment.cpu_identity, path);
	else
		output_note(r, "no verdict recorded: none came from perf/PAPI with %d+ cases of %d+ runs",
		            VALIDATE_RECORD_MIN_CASES, VALIDATE_RECORD_MIN_RUNS);
	return 0;
}

/* One line on the iteration checks: how many cases ran the trips their
 * model expects, and why the others could not be checked. */
static void trips_note(output_report *r, const validate_results *results)
{
	validate_trip_tally tally;
	validate_trip_tally_of(results, &tally);
	const size_t *n = tally.count;
	const char *const *why = tally.first_reason;
	if (!tally.total) return;
	output_note(r, "iteration check: %zu of %zu counted cases ran the loop trips their model expects "
	            "(execute breakpoints)%s", n[VALIDATE_TRIPS_OK], results->trip_check_count,
	            n[VALIDATE_TRIPS_MISMATCH] ? "; a mismatch fails its case" : "");
	if (n[VALIDATE_TRIPS_UNSUPPORTED])
		output_note(r, "iteration check unsupported in %zu %s: %s", n[VALIDATE_TRIPS_UNSUPPORTED],
		            n[VALIDATE_TRIPS_UNSUPPORTED] == 1 ? "case" : "cases", why[VALIDATE_TRIPS_UNSUPPORTED]);
	if (n[VALIDATE_TRIPS_NOT_CHECKED])
		output_note(r, "iteration check not run in %zu %s: %s", n[VALIDATE_TRIPS_NOT_CHECKED],
		            n[VALIDATE_TRIPS_NOT_CHECKED] == 1 ? "case" : "cases", why[VALIDATE_TRIPS_NOT_CHECKED]);
}

void validate_report_notes(output_report *r, const validate_results *results)
{
	trips_note(r, results);
	for (size_t i = 0; i < results->note_count; i++) output_note(r, "%s", results->notes[i]);
	if (results->notes_dropped) output_note(r, "%zu more notes not shown", results->notes_dropped);
	output_note(r, "%zu process runs in %.1f s", results->total_runs, results->seconds);
}

int validate_make_folder(const char *directory, bool *made, plumb_status *status)
{
	struct stat folder;
	*made = false;
	if (mkdir(directory, 0777) == 0) {
		*made = true;
		return 0;
	}
	if (errno != EEXIST) return plumb_fail_errno(status, errno, "cannot create %s", directory);
	if (stat(directory, &folder) != 0 || !S_ISDIR(folder.st_mode))
		return plumb_fail_errno(status, ENOTDIR, "cannot create %s", directory);
	return 0;
}

int validate_write_folder(const char *directory, const validate_results *results, const validate_options *o,
                          const char *plot_format, char *image, size_t image_length, plumb_status *plot_status,
                          plumb_status *status)
{
	if (image_length) image[0] = 0;
	if (mkdir(directory, 0777) != 0 && errno != EEXIST)
		return plumb_fail_errno(status, errno, "cannot create %s", directory);
	output_report *r = output_report_new("validate");
	validate_report_meta(r, results, o);
	add_tables(r, results, true, false, true);
	char path[4096];
	int rc = 0;
	snprintf(path, sizeof path, "%s/validate.json", directory);
	if (output_write_file(r, OUTPUT_JSON, path, status) != 0) rc = -1;
	snprintf(path, sizeof path, "%s/validate.csv", directory);
	if (rc == 0 && output_write_csv_tables(r, path, status) != 0) rc = -1;
	output_report_free(r);
	if (rc != 0) return -1;
	if (validate_plot(results, directory, plot_format, NULL, image, image_length, plot_status) != 0 && image_length)
		image[0] = 0;
	return 0;
}
