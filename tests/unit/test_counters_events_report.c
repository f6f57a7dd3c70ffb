/* plumb events's report from the library: an event probed by opening it,
 * the tables asked for, and a damaged verification file that leaves the
 * catalogue whole with a warning. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "counters/counters.h"
#include "core/output.h"
#include "../temp_folder.h"

Test(counters_events_report, an_event_that_does_not_exist_does_not_work_and_says_why)
{
	char state[32], reason[COUNTER_REASON_MAX + 64];
	cr_expect(!counter_event_probe("perf", "no-such-event", state, sizeof state, reason, sizeof reason));
	cr_expect_str_eq(state, "unsupported");
	cr_expect_neq(reason[0], 0);
	/* a software event works wherever perf_event does; else it says why */
	bool works = counter_event_probe("perf", "task-clock", state, sizeof state, reason, sizeof reason);
	cr_expect_eq(works, strcmp(state, "works") == 0);
	if (!works)
		cr_expect_neq(reason[0], 0);
}

Test(counters_events_report, the_catalogue_survives_a_damaged_verification_file)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-events-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "this is not a verification file\n", 33), 33);
	close(fd);
	counter_events_request request = { .catalogue_only = true, .verification_path = path };
	char warning[512];
	output_report *report = counter_events_report(&request, warning, sizeof warning);
	cr_assert_not_null(report);
	cr_expect(strstr(warning, "verification records ignored: ") == warning, "%s", warning);
	cr_assert_eq(output_table_count(report), 3);
	cr_expect_str_eq(output_table_name(output_table_at(report, 0)), "catalogue");
	cr_expect_str_eq(output_table_name(output_table_at(report, 1)), "verification");
	cr_expect_str_eq(output_table_name(output_table_at(report, 2)), "natives");
	const output_table *catalogue = output_table_find(report, "catalogue");
	cr_expect_gt(output_row_count(catalogue), 10);
	int column = output_column_index(catalogue, "perf_verification");
	for (size_t row = 0; row < output_row_count(catalogue); row++) {
		const char *text = output_cell_string(catalogue, row, (size_t)column);
		if (text)
			cr_expect_str_eq(text, "unverified", "row %zu", row);
	}
	cr_expect_eq(output_row_count(output_table_find(report, "verification")), 0);
	output_report_free(report);
	unlink(path);
}

Test(counters_events_report, one_backend_listed_without_probing)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-events-empty-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	counter_events_request request = { .backend = "perf", .probe = false, .verification_path = path };
	char warning[512];
	output_report *report = counter_events_report(&request, warning, sizeof warning);
	cr_assert_not_null(report);
	cr_expect_str_eq(output_table_name(output_table_at(report, 0)), "events");
	const output_table *events = output_table_find(report, "events");
	int backend = output_column_index(events, "backend"), here = output_column_index(events, "here");
	for (size_t row = 0; row < output_row_count(events); row++) {
		cr_expect_str_eq(output_cell_string(events, row, (size_t)backend), "perf");
		cr_expect_eq(output_cell_kind(events, row, (size_t)here), CELL_EMPTY, "not probed");
	}
	output_report_free(report);
	unlink(path);
}
