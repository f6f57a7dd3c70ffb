/* plumbgrind's summary reader: good files parse to the numbers written,
 * bad ones fail with the line and the reason, never a silently wrong count. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "instrument/instrument.h"
#include "core/output.h"
#include "../temp_folder.h"

#define HEAD "plumbgrind 1\ncommand ./a.out x y\npid 42\n" \
             "fields instructions loads stores modifies bytes_read bytes_written\n"
#define GOOD HEAD "total 30 12 6 2 100 60\n" \
             "thread 0 42 10 4 2 1 40 20\n" \
             "thread 1 43 20 8 4 1 60 40\n" \
             "collected 0 9 4 1 1 38 12\n" \
             "collected 1 20 8 4 1 60 40\n" \
             "region 0 3 5 2 1 0 16 8 solve step\n" \
             "region 1 1 7 3 1 0 24 8 solve step\n" \
             "trace records 48\n" \
             "warning thread 0: region end \"b\" without a begin\n" \
             "end\n"

static int parse(const char *text, instrument_summary *s, plumb_status *status)
{
	return instrument_summary_parse(s, text, strlen(text), "test", status);
}

Test(instrument_summary, good_file_parses_exactly)
{
	instrument_summary s;
	plumb_status status;
	cr_assert_eq(parse(GOOD, &s, &status), 0, "%s", status.message);
	cr_assert_str_eq(s.command, "./a.out x y");
	cr_assert_eq(s.pid, 42);
	cr_assert_eq(s.thread_count, 2);
	cr_assert_eq(s.total.value[INSTRUMENT_INSTRUCTIONS], 30);
	cr_assert_eq(s.threads[1].lwp, 43);
	cr_assert_eq(s.threads[1].total.value[INSTRUMENT_BYTES_WRITTEN], 40);
	cr_assert_eq(s.threads[0].collected.value[INSTRUMENT_INSTRUCTIONS], 9);
	cr_assert_eq(s.region_count, 2);
	const instrument_region *r = instrument_summary_region(&s, "solve step", 1);
	cr_assert_not_null(r);
	cr_assert_eq(r->entries, 1);
	cr_assert_eq(r->counts.value[INSTRUMENT_LOADS], 3);
	cr_assert_null(instrument_summary_region(&s, "solve step", 2));
	cr_assert_eq(s.traced, 1);
	cr_assert_eq(s.trace_records, 48);
	cr_assert_eq(s.warning_count, 1);
	cr_assert(strstr(s.warnings[0], "without a begin"));
	instrument_summary_free(&s);
}

Test(instrument_summary, counter_names)
{
	cr_assert_str_eq(instrument_counter_name(INSTRUMENT_INSTRUCTIONS), "instructions");
	cr_assert_str_eq(instrument_counter_name(INSTRUMENT_BYTES_WRITTEN), "bytes_written");
	cr_assert_str_eq(instrument_counter_name(INSTRUMENT_COUNTERS), "unknown");
}

static void expect_error(const char *text, const char *fragment)
{
	instrument_summary s;
	plumb_status status;
	memset(&status, 0, sizeof status);
	cr_assert_eq(parse(text, &s, &status), -1, "accepted: %s", text);
	cr_assert(strstr(status.message, fragment), "message '%s' lacks '%s'", status.message, fragment);
	cr_assert_eq(s.thread_count, 0);
	cr_assert_null(s.threads);
}

Test(instrument_summary, bad_files_fail_clearly)
{
	expect_error("", "empty summary");
	expect_error("hello\n", "not a plumbgrind summary");
	expect_error("plumbgrind 2\nend\n", "version 2 is not supported");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\n", "cut short");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\nbogus 3\nend\n", "line 7: unknown record");
	expect_error(HEAD "total 1 1 1 1 1\nend\n", "bad or missing count");
	expect_error(HEAD "total 1 1 1 1 1 x\nend\n", "bad or missing count");
	expect_error(HEAD "total 1 1 1 1 1 1 7\nend\n", "unexpected text");
	expect_error(HEAD "total 99999999999999999999 1 1 1 1 1\nend\n", "bad or missing count");
	expect_error(HEAD "total 2 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\nend\n", "total instructions 2 is not the sum");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\nthread 0 1 0 0 0 0 0 0\nend\n",
	             "thread listed twice");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\ncollected 5 1 1 1 1 1 1\nend\n",
	             "not listed before");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\nregion 0 1 1 1 1 1 1 1\nend\n", "missing text");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\nregion 0 1 1 1 1 1 1 1 a\n"
	                  "region 0 1 1 1 1 1 1 1 a\nend\n", "region listed twice");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\ntrace maybe\nend\n", "unknown trace record");
	expect_error(HEAD "total 1 1 1 1 1 1\nthread 0 1 1 1 1 1 1 1\nend\nmore\n", "text after 'end'");
	expect_error(HEAD "end\n", "without a 'total' line");
	expect_error(HEAD "total 0 0 0 0 0 0\nend\n", "without threads");
	expect_error("plumbgrind 1\nfields instructions loads\nend\n", "not the ones this plumb knows");
	expect_error("plumbgrind 1\ntotal 1 1 1 1 1 1\nend\n", "before the 'fields' line");
	expect_error("plumbgrind 1\npid x\nend\n", "bad pid");
	/* Found by 30 minutes of fuzzing: the second error leaked the first. */
	expect_error(HEAD "trace error disk full\ntrace error again\n", "a second trace error");
}

Test(instrument_summary, nul_byte_is_an_error)
{
	static const char text[] = "plumbgrind 1\ncommand a\0b\nend\n";
	instrument_summary s;
	plumb_status status;
	cr_assert_eq(instrument_summary_parse(&s, text, sizeof text - 1, "test", &status), -1);
	cr_assert(strstr(status.message, "NUL"), "%s", status.message);
}

Test(instrument_summary, read_missing_file_says_so)
{
	instrument_summary s;
	plumb_status status;
	cr_assert_eq(instrument_summary_read(&s, "/nonexistent/plumbgrind.out", &status), -1);
	cr_assert(strstr(status.message, "/nonexistent/plumbgrind.out"), "%s", status.message);
}

Test(instrument_summary, read_file_round_trip)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-summary-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(GOOD, f);
	fclose(f);
	instrument_summary s;
	plumb_status status;
	int rc = instrument_summary_read(&s, path, &status);
	unlink(path);
	cr_assert_eq(rc, 0, "%s", status.message);
	cr_assert_eq(s.total.value[INSTRUMENT_BYTES_READ], 100);
	instrument_summary_free(&s);
}

static bool has_note(const output_report *report, const char *text)
{
	for (size_t i = 0; i < output_note_count(report); i++)
		if (strstr(output_note_at(report, i), text))
			return true;
	return false;
}

/* plumb instrument's report from the library, from a summary as read. */
Test(instrument_summary, the_report_has_every_thread_region_and_warning)
{
	instrument_summary s;
	plumb_status status;
	cr_assert_eq(parse(GOOD, &s, &status), 0, "%s", status.message);
	s.exit_code = 3;
	output_report *report = instrument_report(&s, "s.txt", true);
	cr_assert_eq(output_table_count(report), 3);
	const output_table *threads = output_table_find(report, "threads");
	cr_assert_eq(output_row_count(threads), 3, "two threads and all");
	cr_expect_str_eq(output_cell_string(threads, 2, 0), "all");
	cr_expect_eq(output_cell_number(threads, 2, (size_t)output_column_index(threads, "instructions")), 30);
	const output_table *regions = output_table_find(report, "regions");
	cr_assert_eq(output_row_count(regions), 2);
	cr_expect_str_eq(output_cell_string(regions, 0, 0), "solve step");
	cr_expect(has_note(report, "plumbgrind: thread 0: region end"));
	cr_expect(has_note(report, "the command exited with status 3"));
	output_report_free(report);
	/* read from a file, not run: no word on how a command ended */
	report = instrument_report(&s, "s.txt", false);
	cr_expect(!has_note(report, "exited"));
	output_report_free(report);
	instrument_summary_free(&s);
}

/* A summary whose tool did not count the ring's references
 * (--plumb-count-records=no, as plumb explain runs it): traced, no count,
 * and the report gives no trace_records rather than a 0. */
Test(instrument_summary, an_uncounted_trace_has_no_record_count)
{
	static const char text[] = HEAD "total 30 12 6 2 100 60\n"
	                           "thread 0 42 30 12 6 2 100 60\n"
	                           "trace uncounted\n"
	                           "end\n";
	instrument_summary s;
	plumb_status status;
	cr_assert_eq(parse(text, &s, &status), 0, "%s", status.message);
	cr_expect_eq(s.traced, 1);
	cr_expect_eq(s.trace_uncounted, 1);
	cr_expect_eq(s.trace_records, 0);
	output_report *report = instrument_report(&s, "s.txt", false);
	cr_expect(isnan(output_meta_number_of(report, "trace_records")), "no trace_records for an uncounted trace");
	cr_expect_eq(output_meta_number_of(report, "threads"), 1);
	output_report_free(report);
	instrument_summary_free(&s);
	cr_assert_eq(parse(GOOD, &s, &status), 0, "%s", status.message);
	cr_expect_eq(s.trace_uncounted, 0);
	report = instrument_report(&s, "s.txt", false);
	cr_expect_eq(output_meta_number_of(report, "trace_records"), 48);
	output_report_free(report);
	instrument_summary_free(&s);
}
