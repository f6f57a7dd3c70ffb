/* What `plumb trace convert/filter/stats` ask of the library: the copy with
 * its losses counted exactly, thread folding and filtering, its notes and
 * report, and a whole trace read into its statistics and report. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace/trace_copy.h"
#include "trace/trace_stats.h"
#include "../temp_folder.h"

/* Five references of threads 0 and 1: a fetch (its own address as its
 * instruction, as the lackey reader gives it), a read it made, a timed
 * write, a modify, a read whose instruction is not the fetch before it,
 * and a region marker around the lot. */
static size_t sample(trace_record *r)
{
	size_t n = 0;
	trace_region_marker(&r[n++], 1, 0, "work");
	r[n++] = (trace_record){ .address = 0x400000, .size = 4, .kind = TRACE_INSTRUCTION, .instruction_address = 0x400000,
		                     .flags = TRACE_HAS_INSTRUCTION_ADDRESS };
	r[n++] = (trace_record){ .address = 0x1000, .size = 8, .kind = TRACE_READ, .instruction_address = 0x400000,
		                     .flags = TRACE_HAS_INSTRUCTION_ADDRESS };
	r[n++] = (trace_record){ .address = 0x1040, .size = 8, .kind = TRACE_WRITE, .thread = 1, .time = 7,
		                     .flags = TRACE_HAS_TIME };
	r[n++] = (trace_record){ .address = 0x2000, .size = 4, .kind = TRACE_MODIFY, .thread = 1 };
	r[n++] = (trace_record){ .address = 0x3000, .size = 8, .kind = TRACE_READ, .instruction_address = 0x500000,
		                     .flags = TRACE_HAS_INSTRUCTION_ADDRESS };
	trace_region_marker(&r[n++], 0, 0, "work");
	return n;
}

Test(trace_copy, losses_are_counted_exactly_for_each_target)
{
	trace_record r[8];
	size_t n = sample(r);
	trace_losses din = { 0 }, lackey = { 0 }, native = { 0 };
	trace_losses_count(&din, TRACE_FORMAT_DIN, r, n);
	cr_expect_eq(din.times, 1);
	cr_expect_eq(din.instruction_addresses, 3);
	cr_expect_eq(din.modifies_split, 1);
	cr_expect_eq(din.markers_dropped, 2);
	trace_losses_count(&lackey, TRACE_FORMAT_LACKEY, r, n);
	cr_expect_eq(lackey.times, 1);
	/* lackey keeps the read's instruction (the fetch before it), not the
	 * last read's, and the thread-1 records have none to lose */
	cr_expect_eq(lackey.instruction_addresses, 1);
	cr_expect_eq(lackey.modifies_split, 0);
	cr_expect_eq(lackey.markers_dropped, 0);
	trace_losses_count(&native, TRACE_FORMAT_NATIVE, r, n);
	cr_expect_eq(native.times + native.instruction_addresses + native.markers_dropped, 0);
}

static char directory[300];

static void make_native(const char *path)
{
	trace_record r[8];
	size_t n = sample(r);
	trace_writer *writer;
	plumb_status status;
	cr_assert_eq(trace_writer_open(&writer, path, TRACE_FORMAT_NATIVE, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_write(writer, r, n, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_close(writer, &status), 0, "%s", status.message);
}

static void setup(void)
{
	/* removed with its files when the test's process exits */
	snprintf(directory, sizeof directory, "%s", temp_folder("plumb-trace-copy"));
}

static char *path_in(const char *name)
{
	static char paths[4][600];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, 600, "%s/%s", directory, name);
	return p;
}

Test(trace_copy, native_to_din_folds_threads_and_says_what_it_lost, .init = setup)
{
	const char *in = path_in("t.ptrace"), *out = path_in("t.din");
	make_native(in);
	plumb_status status;
	trace_reader *reader;
	trace_writer *writer;
	cr_assert_eq(trace_reader_open(&reader, in, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_open(&writer, out, TRACE_FORMAT_DIN, &status), 0, "%s", status.message);
	trace_copy_options options = { .fold_threads = true };
	trace_copy_result result;
	cr_assert_eq(trace_copy(reader, writer, out, TRACE_FORMAT_DIN, &options, &result, &status), 0, "%s",
	             status.message);
	cr_expect(!result.interrupted);
	cr_expect_eq(result.from, TRACE_FORMAT_NATIVE);
	cr_expect_eq(result.to, TRACE_FORMAT_DIN);
	cr_expect_eq(result.records, 7);
	cr_expect_eq(result.losses.threads_folded, 2);
	cr_expect_eq(result.losses.modifies_split, 1);
	cr_expect_eq(result.losses.markers_dropped, 2);

	char *text = NULL;
	size_t length = 0;
	FILE *stream = open_memstream(&text, &length);
	trace_copy_write_notes(&result, "plumb trace convert", stream);
	fclose(stream);
	cr_expect(strstr(text, "plumb trace convert: note: din has no time field: 1 records' times were dropped\n"));
	cr_expect(strstr(text, "plumb trace convert: note: din has no modify: 1 modify records were written as a "
	                       "read and a write\n"));
	cr_expect(strstr(text, "plumb trace convert: note: din has no region markers: 2 markers were dropped\n"));
	cr_expect(strstr(text, "plumb trace convert: note: 2 records of threads other than 0 were written as "
	                       "thread 0\n"));
	free(text);

	output_report *report = trace_copy_report("trace convert", in, out, &options, &result);
	cr_assert_eq(output_table_count(report), 1, "no buffer, no filter: the conversion table only");
	const output_table *t = output_table_find(report, "conversion");
	cr_expect_str_eq(output_cell_string(t, 0, (size_t)output_column_index(t, "from")), "native");
	cr_expect_str_eq(output_cell_string(t, 0, (size_t)output_column_index(t, "to")), "din");
	cr_expect_eq(output_cell_number(t, 0, (size_t)output_column_index(t, "records")), 7);
	output_report_free(report);

	/* the din file: the modify as a read and a write, every record thread 0 */
	cr_assert_eq(trace_reader_open(&reader, out, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	trace_record back[16];
	long got = trace_reader_read(reader, back, 16, &status);
	cr_expect_eq(got, 6);
	for (long i = 0; i < got; i++)
		cr_expect_eq(back[i].thread, 0);
	trace_reader_close(reader, NULL);
}

Test(trace_copy, a_filter_removes_a_range_and_counts_it, .init = setup)
{
	const char *in = path_in("t.ptrace"), *out = path_in("kept.ptrace");
	make_native(in);
	plumb_status status;
	trace_filter filter;
	memset(&filter, 0, sizeof filter);
	cr_assert_eq(trace_filter_add_range(&filter, "0x1000-0x1fff", &status), 0, "%s", status.message);
	trace_reader *reader;
	trace_writer *writer;
	cr_assert_eq(trace_reader_open(&reader, in, TRACE_FORMAT_AUTO, &status), 0);
	cr_assert_eq(trace_writer_open(&writer, out, TRACE_FORMAT_NATIVE, &status), 0);
	trace_copy_options options = { .filter = &filter };
	trace_copy_result result;
	cr_assert_eq(trace_copy(reader, writer, out, TRACE_FORMAT_NATIVE, &options, &result, &status), 0, "%s",
	             status.message);
	cr_expect_eq(result.filtered.references_dropped, 2);
	cr_expect_eq(result.records, 5);
	cr_expect_eq(result.losses.times + result.losses.markers_dropped, 0, "native keeps everything");
	output_report *report = trace_copy_report("trace filter", in, out, &options, &result);
	const output_table *t = output_table_find(report, "filter");
	cr_assert_not_null(t);
	cr_expect_eq(output_cell_number(t, 0, (size_t)output_column_index(t, "references_removed")), 2);
	output_report_free(report);
}

Test(trace_copy, a_copy_that_cannot_read_aborts_the_output, .init = setup)
{
	const char *in = path_in("bad.lackey"), *out = path_in("never.ptrace");
	FILE *f = fopen(in, "w");
	cr_assert_not_null(f);
	fputs("I  00400000,4\nthis is not lackey\n", f);
	fclose(f);
	plumb_status status;
	trace_reader *reader;
	trace_writer *writer;
	cr_assert_eq(trace_reader_open(&reader, in, TRACE_FORMAT_LACKEY, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_open(&writer, out, TRACE_FORMAT_NATIVE, &status), 0);
	trace_copy_options options = { 0 };
	trace_copy_result result;
	cr_expect_eq(trace_copy(reader, writer, out, TRACE_FORMAT_NATIVE, &options, &result, &status), -1);
	cr_expect_neq(access(out, F_OK), 0, "an aborted output is never put in place");
}

Test(trace_copy, stats_read_a_whole_trace_into_their_report, .init = setup)
{
	const char *in = path_in("t.ptrace");
	make_native(in);
	plumb_status status;
	trace_stats stats;
	cr_assert_eq(trace_stats_init(&stats, 64, 4096, 1000, &status), 0);
	trace_stats_reading reading;
	cr_assert_eq(trace_stats_read(&stats, in, TRACE_FORMAT_AUTO, false, &reading, &status), 0, "%s", status.message);
	cr_expect_eq(reading.format, TRACE_FORMAT_NATIVE);
	cr_expect_eq(stats.records, 5);
	cr_expect_eq(stats.region_markers, 2);
	output_report *report = trace_stats_report(in, &stats, &reading);
	static const char *const names[] = { "kinds", "threads", "footprint", "ranges", "sizes", "input" };
	cr_assert_eq(output_table_count(report), 6);
	for (size_t i = 0; i < 6; i++)
		cr_expect_str_eq(output_table_name(output_table_at(report, i)), names[i]);
	const output_table *kinds = output_table_find(report, "kinds");
	cr_assert_eq(output_row_count(kinds), 5);
	cr_expect_str_eq(output_cell_string(kinds, 4, 0), "total");
	cr_expect_eq(output_cell_number(kinds, 4, 1), 5);
	cr_expect_eq(output_cell_number(kinds, 1, 1), 2, "two reads");
	const output_table *threads = output_table_find(report, "threads");
	cr_expect_eq(output_row_count(threads), 2);
	const output_table *footprint = output_table_find(report, "footprint");
	cr_expect_eq(output_cell_number(footprint, 0, (size_t)output_column_index(footprint, "size")), 64);
	cr_expect_eq(output_cell_number(footprint, 1, (size_t)output_column_index(footprint, "size")), 4096);
	output_report_free(report);
	trace_stats_free(&stats);

	cr_assert_eq(trace_stats_init(&stats, 64, 4096, 1000, &status), 0);
	cr_expect_eq(trace_stats_read(&stats, path_in("missing.ptrace"), TRACE_FORMAT_AUTO, false, &reading, &status),
	             -1);
	trace_stats_free(&stats);
}
