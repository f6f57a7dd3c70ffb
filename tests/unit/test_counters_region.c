#include <criterion/criterion.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "core/output.h"
#include "plumb/region.h"
#include "counters_test_pages.h"
#include "../capability.h"
#include "../temp_folder.h"

/* Criterion runs each test in its own process, so each test starts with a
 * fresh region runtime and may set the environment before its first marker. */

static char json_path[PATH_MAX];   /* the child appends ".child" */

static void configure(const char *events)
{
	snprintf(json_path, sizeof json_path, "%s/plumb-region-%d.json", temp_root(), (int)getpid());
	setenv("PLUMB_EVENTS", events, 1);
	setenv("PLUMB_REGION_JSON", json_path, 1);
	setenv("PLUMB_REGION_QUIET", "1", 1);
}

static output_report *report_from_path(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no summary written to %s", path);
	static char text[1 << 16];
	size_t length = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[length] = '\0';
	unlink(path);
	output_report *report;
	plumb_status status;
	cr_assert_eq(output_report_parse_json(text, &report, &status), 0, "%s", status.message);
	return report;
}

static output_report *report_now(void)
{
	plumb_region_report();
	return report_from_path(json_path);
}

static size_t find_row(const output_table *table, int thread, const char *region)
{
	int t = output_column_index(table, "thread"), r = output_column_index(table, "region");
	for (size_t row = 0; row < output_row_count(table); row++)
		if ((int)output_cell_number(table, row, (size_t)t) == thread &&
		    !strcmp(output_cell_string(table, row, (size_t)r), region))
			return row;
	cr_assert_fail("no row for thread %d region %s", thread, region);
	return 0;
}

static double cell(const output_table *table, size_t row, const char *column)
{
	int c = output_column_index(table, column);
	cr_assert_geq(c, 0, "no column %s", column);
	return output_cell_number(table, row, (size_t)c);
}

Test(counters_region, nested_regions_count_inclusively_and_exactly)
{
	configure("page-faults,minor-faults,cycles");
	char *base = counters_test_map(400);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	plumb_region_begin("outer");
	counters_test_touch(base, 100);
	plumb_region_begin("inner");
	counters_test_touch(base + 100 * page, 50);
	plumb_region_end("inner");
	plumb_region_end("outer");
	plumb_region_begin("inner");
	counters_test_touch(base + 150 * page, 10);
	plumb_region_end("inner");
	output_report *report = report_now();
	const output_table *table = output_table_find(report, "regions");
	cr_assert_not_null(table);
	size_t outer = find_row(table, 0, "outer"), inner = find_row(table, 0, "inner");
	cr_assert_eq(cell(table, outer, "entries"), 1);
	cr_assert_eq(cell(table, outer, "page-faults"), 150);
	cr_assert_eq(cell(table, outer, "minor-faults"), 150);
	cr_assert_eq(cell(table, inner, "entries"), 2);
	cr_assert_eq(cell(table, inner, "page-faults"), 60);
	/* Wall time: an outer region lasts at least as long as the inner entry it holds. */
	cr_assert_gt(cell(table, outer, "wall_ns"), 0);
	cr_assert_gt(cell(table, inner, "wall_ns"), 0);
	int cycles = output_column_index(table, "cycles");
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0) {
		cr_assert_eq(output_cell_kind(table, outer, (size_t)cycles), CELL_STATUS);
		cr_assert_str_eq(output_cell_string(table, outer, (size_t)cycles), "unsupported");
		cr_assert(strstr(output_cell_reason(table, outer, (size_t)cycles), "no PMU"));
	}
	output_report_free(report);
	counters_test_unmap(base, 400);
}

static void *thread_work(void *argument)
{
	size_t pages = (size_t)argument;
	char *base = counters_test_map(pages);
	plumb_region_begin("work");
	counters_test_touch(base, pages);
	plumb_region_end("work");
	counters_test_unmap(base, pages);
	return NULL;
}

Test(counters_region, each_thread_counts_only_itself)
{
	configure("page-faults");
	/* The main thread marks first, so it is thread 0; the workers run one
	 * after the other, so their numbers are known too. */
	plumb_region_begin("main");
	plumb_region_end("main");
	pthread_t worker;
	pthread_create(&worker, NULL, thread_work, (void *)(size_t)30);
	pthread_join(worker, NULL);
	pthread_create(&worker, NULL, thread_work, (void *)(size_t)70);
	pthread_join(worker, NULL);
	output_report *report = report_now();
	const output_table *table = output_table_find(report, "regions");
	cr_assert_eq(cell(table, find_row(table, 1, "work"), "page-faults"), 30);
	cr_assert_eq(cell(table, find_row(table, 2, "work"), "page-faults"), 70);
	cr_assert_eq(cell(table, find_row(table, 0, "main"), "page-faults"), 0);
	const output_table *totals = output_table_find(report, "region_totals");
	cr_assert_not_null(totals);
	int region = output_column_index(totals, "region");
	bool found = false;
	for (size_t row = 0; row < output_row_count(totals); row++)
		if (!strcmp(output_cell_string(totals, row, (size_t)region), "work")) {
			found = true;
			cr_assert_eq(cell(totals, row, "threads"), 2);
			cr_assert_eq(cell(totals, row, "entries"), 2);
			cr_assert_eq(cell(totals, row, "page-faults"), 100);
		}
	cr_assert(found, "no totals row for work");
	output_report_free(report);
}

Test(counters_region, mismatched_markers_are_reported_not_fatal)
{
	configure("page-faults");
	plumb_region_end("never-begun");
	plumb_region_begin("a");
	plumb_region_end("b");
	plumb_region_end("a");
	output_report *report = report_now();
	bool found = false;
	for (size_t i = 0; i < output_note_count(report); i++)
		if (strstr(output_note_at(report, i), "2 marker error(s)") &&
		    strstr(output_note_at(report, i), "never-begun"))
			found = true;
	cr_assert(found, "no note about the marker errors");
	const output_table *table = output_table_find(report, "regions");
	cr_assert_eq(cell(table, find_row(table, 0, "a"), "entries"), 1);
	output_report_free(report);
}

Test(counters_region, bad_configuration_reports_unsupported_not_zero)
{
	configure("page-faults,,cycles");
	plumb_region_begin("r");
	plumb_region_end("r");
	output_report *report = report_now();
	bool found = false;
	for (size_t i = 0; i < output_note_count(report); i++)
		if (strstr(output_note_at(report, i), "PLUMB_EVENTS"))
			found = true;
	cr_assert(found, "the bad PLUMB_EVENTS is not explained");
	const output_table *table = output_table_find(report, "regions");
	cr_assert_eq(output_column_index(table, "page-faults"), -1, "a count column for a bad configuration");
	output_report_free(report);
}

Test(counters_region, unknown_backend_is_explained)
{
	configure("page-faults");
	setenv("PLUMB_BACKEND", "bogus", 1);
	plumb_region_begin("r");
	plumb_region_end("r");
	output_report *report = report_now();
	bool found = false;
	for (size_t i = 0; i < output_note_count(report); i++)
		if (strstr(output_note_at(report, i), "PLUMB_BACKEND"))
			found = true;
	cr_assert(found);
	output_report_free(report);
}

#ifdef PLUMB_HAVE_PAPI
Test(counters_region, papi_backend_counts_the_same)
{
	REQUIRE_COUNTER_BACKEND("papi");
	configure("perf::PAGE-FAULTS,minor-faults");
	setenv("PLUMB_BACKEND", "papi", 1);
	char *base = counters_test_map(123);
	plumb_region_begin("r");
	counters_test_touch(base, 123);
	plumb_region_end("r");
	output_report *report = report_now();
	const output_table *table = output_table_find(report, "regions");
	size_t row = find_row(table, 0, "r");
	cr_assert_eq(cell(table, row, "perf::PAGE-FAULTS"), 123);
	cr_assert_eq(cell(table, row, "minor-faults"), 123);
	output_report_free(report);
	counters_test_unmap(base, 123);
}
#endif

Test(counters_region, a_forked_child_counts_itself_not_its_parent)
{
	configure("page-faults");
	plumb_region_begin("parent");
	plumb_region_end("parent");
	pid_t child = fork();
	if (child == 0) {
		/* The child's own summary, to a file of its own. */
		char path[PATH_MAX + 16];
		snprintf(path, sizeof path, "%s.child", json_path);
		setenv("PLUMB_REGION_JSON", path, 1);
		char *base = counters_test_map(40);
		plumb_region_begin("child");
		counters_test_touch(base, 40);
		plumb_region_end("child");
		plumb_region_report();
		_exit(0);
	}
	int wstatus;
	waitpid(child, &wstatus, 0);
	cr_assert(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	/* The child's report has only its own region, counted on itself. */
	char child_path[PATH_MAX + 16];
	snprintf(child_path, sizeof child_path, "%s.child", json_path);
	output_report *report = report_from_path(child_path);
	const output_table *table = output_table_find(report, "regions");
	cr_assert_eq(output_row_count(table), 1);
	cr_assert_eq(cell(table, find_row(table, 0, "child"), "page-faults"), 40);
	output_report_free(report);
	/* The parent's report still has its own region only. */
	report = report_now();
	table = output_table_find(report, "regions");
	cr_assert_eq(output_row_count(table), 1);
	find_row(table, 0, "parent");
	output_report_free(report);
}
