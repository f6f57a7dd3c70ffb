/* plumb stat --calibrate's report from the library: one row per backend
 * variant and event that could be calibrated, a note for each that could
 * not; whatever this machine's counters can do. */
#include <criterion/criterion.h>
#include <string.h>
#include "counters/counter_stat.h"

Test(counters_stat_calibration, a_backend_not_calibrated_has_no_rows)
{
	static const char *const events[] = { "page-faults" };
	counter_options options;
	memset(&options, 0, sizeof options);
	size_t calibrated = 99;
	output_report *report = counter_stat_calibration_report("none", events, 1, &options, 50, &calibrated);
	cr_assert_not_null(report);
	cr_expect_eq(calibrated, 0, "only perf and PAPI are calibrated");
	cr_assert_eq(output_table_count(report), 2);
	cr_expect_str_eq(output_table_name(output_table_at(report, 0)), "bias");
	cr_expect_str_eq(output_table_name(output_table_at(report, 1)), "cost");
	cr_expect_eq(output_row_count(output_table_find(report, "bias")), 0);
	cr_expect_eq(output_row_count(output_table_find(report, "cost")), 0);
	cr_expect_eq(output_note_count(report), 0);
	output_report_free(report);
}

Test(counters_stat_calibration, perf_gives_two_reading_ways_or_says_why_not)
{
	static const char *const events[] = { "page-faults", "task-clock" };
	counter_options options;
	memset(&options, 0, sizeof options);
	size_t calibrated;
	output_report *report = counter_stat_calibration_report("perf", events, 2, &options, 50, &calibrated);
	cr_assert_not_null(report);
	cr_expect_leq(calibrated, 2, "perf by rdpmc and by read()");
	const output_table *bias = output_table_find(report, "bias"), *cost = output_table_find(report, "cost");
	cr_expect_eq(output_row_count(bias), 2 * calibrated, "one row per event of each variant calibrated");
	cr_expect_eq(output_row_count(cost), calibrated);
	size_t unsupported = 0;
	for (size_t i = 0; i < output_note_count(report); i++)
		unsupported += strncmp(output_note_at(report, i), "perf", 4) == 0 &&
		               strstr(output_note_at(report, i), ": unsupported: ") != NULL;
	cr_expect_eq(unsupported, 2 - calibrated, "a note for each variant that could not be calibrated");
	if (calibrated) {
		cr_expect_str_eq(output_cell_string(bias, 0, 0), "perf");
		cr_expect_str_eq(output_cell_string(bias, 1, 1), "task-clock");
		cr_expect_eq(output_cell_number(cost, 0, (size_t)output_column_index(cost, "iterations")), 50);
	}
	output_report_free(report);
}
