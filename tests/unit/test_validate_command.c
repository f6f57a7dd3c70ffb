/* What `plumb validate` asks of the library besides the runs: the padding
 * sweep's report, thresholds by name, which tables a report has, its
 * notes, the output folder, and running one kernel for Valgrind. */
#include <criterion/criterion.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "validate/validate.h"
#include "../temp_folder.h"

/* Eight pads of a 32-byte page, the array 16 bytes past it, 4 pairs: the
 * pad 12 starts the first page and halves the faults; the last pad counts
 * one fault more than the model. */
static void padding_points(validate_padding_point points[8])
{
	for (size_t i = 0; i < 8; i++) {
		points[i].pad = 4 * i;
		points[i].faults = points[i].predicted = i == 3 ? 4 : 8;
	}
	points[7].faults = 9;
}

static void expect_pads(const output_table *sweep, const uint64_t *pads, size_t count)
{
	cr_assert_eq(output_row_count(sweep), count);
	int column = output_column_index(sweep, "pad");
	for (size_t i = 0; i < count; i++)
		cr_expect_eq(output_cell_number(sweep, i, (size_t)column), (double)pads[i], "row %zu", i);
}

Test(validate_command, padding_report_finds_the_pad_and_keeps_the_rows_asked_for)
{
	validate_padding_point points[8];
	padding_points(points);
	cr_assert_eq(validate_padding_aligned(16, 32), 12);
	output_report *report = output_report_new("validate");
	validate_padding_report(report, 32, 16, 4, points, 8, 12, false);
	const output_table *found = output_table_find(report, "padding_found");
	cr_assert_not_null(found);
	cr_expect_eq(output_cell_number(found, 0, (size_t)output_column_index(found, "found_pad")), 12);
	cr_expect_eq(output_cell_number(found, 0, (size_t)output_column_index(found, "start_index")), 4);
	cr_expect_eq(output_cell_number(found, 0, (size_t)output_column_index(found, "faults_at_found")), 4);
	cr_expect_eq(output_cell_number(found, 0, (size_t)output_column_index(found, "expected_pad")), 12);
	cr_expect_str_eq(output_cell_string(found, 0, (size_t)output_column_index(found, "agrees")), "yes");
	/* a terminal's table leaves out the plateaus that agree with the model */
	static const uint64_t interesting[] = { 8, 12, 16, 24, 28 };
	expect_pads(output_table_find(report, "padding_sweep"), interesting, 5);
	cr_assert_eq(output_note_count(report), 1);
	cr_expect_str_eq(output_note_at(report, 0),
	                 "8 pads swept, 1 differ from the model (pairs if aligned, else 2 x pairs)");
	output_report_free(report);

	report = output_report_new("validate");
	validate_padding_report(report, 32, 16, 4, points, 8, 16, true);
	static const uint64_t every[] = { 0, 4, 8, 12, 16, 20, 24, 28 };
	expect_pads(output_table_find(report, "padding_sweep"), every, 8);
	found = output_table_find(report, "padding_found");
	cr_expect_str_eq(output_cell_string(found, 0, (size_t)output_column_index(found, "agrees")), "no");
	cr_expect_eq(output_cell_number(found, 0, (size_t)output_column_index(found, "faults_at_found")), 8);
	output_report_free(report);
}

Test(validate_command, thresholds_are_set_by_name_in_percent_or_events)
{
	validate_thresholds t;
	validate_thresholds_default(&t);
	plumb_status status;
	cr_assert_eq(validate_threshold_assign(&t, "accurate=2", &status), 0);
	cr_expect_float_eq(t.accurate_tolerance, 0.02, 1e-12);
	cr_assert_eq(validate_threshold_assign(&t, "bias=3", &status), 0);
	cr_expect_float_eq(t.bias_min_events, 3, 1e-12);
	cr_assert_eq(validate_threshold_assign(&t, "min-r2=0.5", &status), 0);
	cr_expect_float_eq(t.min_r2, 0.5, 1e-12);
	cr_assert_eq(validate_threshold_assign(&t, "min-cases=7", &status), 0);
	cr_expect_eq(t.min_cases, 7);

	cr_expect_eq(validate_threshold_assign(&t, "nosuch=1", &status), -1);
	cr_expect_eq(status.code, ENOENT);
	cr_expect(strncmp(status.message, "unknown name 'nosuch' (", 23) == 0, "%s", status.message);
	cr_expect_eq(validate_threshold_assign(&t, "accurate", &status), -1);
	cr_expect_str_eq(status.message, "wants NAME=VALUE, not 'accurate'");
	cr_expect_eq(validate_threshold_assign(&t, "slope=x", &status), -1);
	cr_expect(strncmp(status.message, "slope: ", 7) == 0, "%s", status.message);
	cr_expect_eq(validate_threshold_assign(&t, "min-cases=1", &status), -1);
	cr_expect(strncmp(status.message, "min-cases: ", 11) == 0, "%s", status.message);
	cr_expect_eq(t.min_cases, 7, "a refused value changes nothing");
}

/* One exact perf series of the page-fault benchmark, three cases of two runs. */
static void one_series(validate_results *r, double *values)
{
	memset(r, 0, sizeof *r);
	validate_machine_default(&r->machine);
	r->series_count = 1;
	r->series = calloc(1, sizeof *r->series);
	validate_series *series = &r->series[0];
	series->benchmark = validate_benchmark_find("page-faults");
	series->source = VALIDATE_SOURCE_PERF;
	series->supported = true;
	series->case_count = 3;
	series->cases = calloc(3, sizeof *series->cases);
	for (size_t k = 0; k < 3; k++) {
		validate_case *c = &series->cases[k];
		c->size = (uint64_t)pow(10, (double)k + 1);
		c->predicted = (double)c->size;
		c->in_domain = true;
		c->runs = 2;
		c->values = &values[2 * k];
		c->values[0] = c->values[1] = c->predicted;
		validate_case_summarize(c);
	}
	validate_thresholds t;
	validate_thresholds_default(&t);
	validate_classify(series->cases, 3, &t, &series->verdict);
	r->total_runs = 6;
	r->seconds = 1.25;
	snprintf(r->notes[0], sizeof r->notes[0], "a note of the runner");
	r->note_count = 1;
	r->notes_dropped = 2;
}

static void expect_tables(const output_report *report, const char *const *names, size_t count)
{
	cr_assert_eq(output_table_count(report), count);
	for (size_t i = 0; i < count; i++)
		cr_expect_str_eq(output_table_name(output_table_at(report, i)), names[i]);
}

Test(validate_command, a_report_has_the_tables_asked_for_in_order)
{
	double values[6];
	validate_results r;
	one_series(&r, values);
	validate_options o;
	validate_options_default(&o);
	output_report *report = validate_report(&r, &o, false, false);
	static const char *const verdicts[] = { "verdict" };
	expect_tables(report, verdicts, 1);
	output_report_free(report);
	report = validate_report(&r, &o, true, false);
	static const char *const cases[] = { "verdict", "sources" };
	expect_tables(report, cases, 2);
	output_report_free(report);
	report = validate_report(&r, &o, false, true);
	static const char *const complete[] = { "verdict", "sources", "cases", "runs" };
	expect_tables(report, complete, 4);

	validate_report_notes(report, &r);
	cr_assert_eq(output_note_count(report), 3);
	cr_expect_str_eq(output_note_at(report, 0), "a note of the runner");
	cr_expect_str_eq(output_note_at(report, 1), "2 more notes not shown");
	cr_expect_str_eq(output_note_at(report, 2), "6 process runs in 1.2 s");
	output_report_free(report);
	free(r.series[0].cases);
	free(r.series);
}

Test(validate_command, the_output_folder_is_made_once_and_never_over_a_file)
{
	char directory[TEMP_PATH_SIZE];
	temp_template(directory, sizeof directory, "plumb-validate-folder-XXXXXX");
	cr_assert_not_null(mkdtemp(directory));
	char folder[600], file[600];
	snprintf(folder, sizeof folder, "%s/new", directory);
	snprintf(file, sizeof file, "%s/file", directory);
	plumb_status status;
	bool made = false;
	cr_assert_eq(validate_make_folder(folder, &made, &status), 0);
	cr_expect(made);
	cr_assert_eq(validate_make_folder(folder, &made, &status), 0);
	cr_expect(!made, "an existing folder is used, not made");
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_expect_eq(validate_make_folder(file, &made, &status), -1);
	cr_expect(strstr(status.message, "Not a directory") != NULL, "%s", status.message);
	unlink(file);
	rmdir(folder);
	rmdir(directory);
}

Test(validate_command, the_folder_gets_every_table_and_a_plot_or_why_not)
{
	double values[6];
	validate_results r;
	one_series(&r, values);
	validate_options o;
	validate_options_default(&o);
	char directory[TEMP_PATH_SIZE];
	temp_template(directory, sizeof directory, "plumb-validate-files-XXXXXX");
	cr_assert_not_null(mkdtemp(directory));
	char image[600];
	plumb_status status, plot_status;
	cr_assert_eq(validate_write_folder(directory, &r, &o, "svg", image, sizeof image, &plot_status, &status), 0,
	             "%s", status.message);
	cr_expect(image[0] || plot_status.message[0], "a plot or the reason there is none");
	static const char *const names[] = { "validate.json", "validate.csv", "validate-sources.csv",
		                                 "validate-cases.csv", "validate-runs.csv", "validate-plot.dat",
		                                 "validate-plot.gp", "validate.svg" };
	char path[700];
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", directory, names[i]);
		if (i + 1 < sizeof names / sizeof names[0] || image[0])
			cr_expect_eq(access(path, R_OK), 0, "%s", names[i]);
		unlink(path);
	}
	rmdir(directory);
	free(r.series[0].cases);
	free(r.series);
}

Test(validate_command, a_kernel_runs_once_uncounted_for_valgrind)
{
	const validate_benchmark *b = validate_benchmark_find("page-faults");
	cr_assert_not_null(b);
	validate_exec_request request;
	validate_exec_request_default(&request);
	cr_expect_eq(request.size, 1);
	cr_expect_eq(request.inner_trips, 10);
	request.size = 10;
	plumb_status status;
	cr_expect_eq(validate_exec(b, &request, &status), 0, "%s", status.message);
	const validate_benchmark *branch = validate_benchmark_find("branch");
	cr_assert_not_null(branch);
	request.inner_trips = 3;
	cr_expect_eq(validate_exec(branch, &request, &status), 0, "%s", status.message);
}
