/* plumb trace convert / record / stats, run as a user would. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/output.h"
#include "run.h"

static const char din_text[] = "2 400000 4\n0 1000 8\n1 2000 8\n0 1040 4\n3 44\n4 0\n2 400004 3\n";

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* The cell in column `column` of the row whose first cell is `key`. */
static double cell(const output_report *report, const char *table_name, const char *key, const char *column)
{
	const output_table *t = output_table_find(report, table_name);
	cr_assert_not_null(t, "no table %s", table_name);
	int c = output_column_index(t, column);
	cr_assert_geq(c, 0, "no column %s in %s", column, table_name);
	for (size_t row = 0; row < output_row_count(t); row++) {
		char first[64];
		output_cell_format(t, row, 0, first, sizeof first);
		if (strcmp(first, key) == 0)
			return output_cell_number(t, row, (size_t)c);
	}
	cr_assert_fail("no row %s in %s", key, table_name);
	return NAN;
}

static output_report *parse(const cli_run *r)
{
	output_report *report;
	plumb_status status;
	cr_assert_eq(output_report_parse_json(r->out, &report, &status), 0, "%s", status.message);
	return report;
}

Test(trace_cli, help)
{
	cli_run r = cli_run_plumbv(NULL, "trace", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "plumb trace convert IN OUT"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "stats", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cli_run_free(&r);
}

Test(trace_cli, usage_errors)
{
	cli_run r = cli_run_plumbv(NULL, "trace", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert_str_eq(r.err, "plumb trace: want a subcommand: convert, filter, record or stats (see 'plumb trace --help')\n");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "frob", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "convert", "only-one", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert_str_eq(r.err, "plumb trace convert: want an input and an output trace (see 'plumb trace convert --help')\n");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "convert", "a.din", "b.txt", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "cannot tell a trace format from the name 'b.txt'"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "stats", "x", "--from", "pin", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "unknown trace format 'pin'"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "stats", "x", "--line-size", "48", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "stats", "/nonexistent/t.ptrace", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert_str_eq(r.err, "plumb trace stats: cannot open trace '/nonexistent/t.ptrace': No such file or directory\n");
	cli_run_free(&r);
}

/* din on stdin -> native file -> din on stdout: the same text back. */
Test(trace_cli, convert_round_trip_through_stdin_and_stdout)
{
	char native[512];
	snprintf(native, sizeof native, "%s", cli_temp_path("t.ptrace"));
	cli_run r = cli_run_plumbv(din_text, "trace", "convert", "-", native, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "plumb trace convert: note: 1 din flush records (label 4) were skipped\n");
	output_report *report = parse(&r);
	cr_assert_eq(cell(report, "conversion", "din", "records"), 6);
	output_report_free(report);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "convert", native, "-", "--to", "din", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	/* Label 3 became a read, the flush is gone, sizes are explicit. */
	cr_assert_str_eq(r.out, "2 400000 4\n0 1000 8\n1 2000 8\n0 1040 4\n0 44 4\n2 400004 3\n");
	cli_run_free(&r);
}

static const char lackey_two_threads[] =
	"==1== Lackey\n"
	"I  0401000,4\n L 7ff000,8\n"
	"--1--   SCHED[2]:  acquired lock (x)\n"
	"I  0402000,3\n M 601040,4\n S 601080,8\n"
	"--1--   SCHED[1]:  acquired lock (x)\n"
	"I  0401004,7\n";

Test(trace_cli, threads_and_notes_going_to_din)
{
	char in[512], out[512];
	snprintf(in, sizeof in, "%s", cli_temp_path("two.lackey"));
	snprintf(out, sizeof out, "%s", cli_temp_path("two.din"));
	spit(in, lackey_two_threads);
	cli_run r = cli_run_plumbv(NULL, "trace", "convert", in, out, NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert_str_eq(r.err, "plumb trace convert: din has no thread field, and record 2 is of thread 1 "
	                 "(fold the threads into one first)\n");
	cr_assert_null(fopen(out, "r"), "a failed conversion must leave no file");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "convert", in, out, "--fold-threads", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.err,
	                 "plumb trace convert: note: din could not keep the instruction address of 6 records\n"
	                 "plumb trace convert: note: din has no modify: 1 modify records were written as a read and a write\n"
	                 "plumb trace convert: note: 3 records of threads other than 0 were written as thread 0\n");
	cli_run_free(&r);
	char *text = cli_read_file(out, NULL);
	cr_assert_not_null(text, "cannot read %s: %s", out, strerror(errno));
	cr_assert_str_eq(text, "2 401000 4\n0 7ff000 8\n2 402000 3\n0 601040 4\n1 601040 4\n1 601080 8\n2 401004 7\n");
	free(text);
}

Test(trace_cli, stats_counts_exactly)
{
	char in[512];
	snprintf(in, sizeof in, "%s", cli_temp_path("stats.lackey"));
	spit(in, lackey_two_threads);
	cli_run r = cli_run_plumbv(NULL, "trace", "stats", in, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	output_report *report = parse(&r);
	cr_assert_eq(cell(report, "kinds", "instruction", "references"), 3);
	cr_assert_eq(cell(report, "kinds", "instruction", "bytes"), 14);
	cr_assert_eq(cell(report, "kinds", "read", "references"), 1);
	cr_assert_eq(cell(report, "kinds", "write", "references"), 1);
	cr_assert_eq(cell(report, "kinds", "modify", "references"), 1);
	cr_assert_eq(cell(report, "kinds", "total", "references"), 6);
	cr_assert_eq(cell(report, "threads", "0", "total"), 3);
	cr_assert_eq(cell(report, "threads", "1", "instruction"), 1);
	cr_assert_eq(cell(report, "threads", "1", "total"), 3);
	/* Lines: 0x401000 (fetches at 401000 and 401004..40100a), 0x402000,
	 * 0x7ff000, 0x601040, 0x601080: five.  Pages: 401, 402, 7ff, 601: four. */
	cr_assert_eq(cell(report, "footprint", "line", "distinct"), 5);
	cr_assert_eq(cell(report, "footprint", "page", "distinct"), 4);
	cr_assert_eq(cell(report, "ranges", "data", "span"), 0x7ff008 - 0x601040);
	cr_assert_eq(cell(report, "sizes", "4", "references"), 2);
	cr_assert_eq(cell(report, "sizes", "8", "references"), 2);
	cr_assert_eq(cell(report, "sizes", "other", "references"), 2);
	output_report_free(report);
	cli_run_free(&r);
}

Test(trace_cli, truncated_native_trace)
{
	/* 200000 records: four blocks (65536 records each at most). */
	char din[512], native[512];
	snprintf(din, sizeof din, "%s", cli_temp_path("big.din"));
	snprintf(native, sizeof native, "%s", cli_temp_path("big.ptrace"));
	FILE *f = fopen(din, "w");
	cr_assert(f != NULL);
	/* Scattered addresses, so that every block is thousands of bytes long. */
	uint64_t x = 1;
	for (int i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		fprintf(f, "%d %llx\n", i % 3, (unsigned long long)(x >> 20));
	}
	fclose(f);
	cli_run r = cli_run_plumbv(NULL, "trace", "convert", din, native, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	size_t size;
	char *data = cli_read_file(native, &size);
	cr_assert_not_null(data, "cannot read %s: %s", native, strerror(errno));
	f = fopen(native, "wb");
	fwrite(data, 1, size - 1000, f);   /* cut inside the last block */
	fclose(f);
	free(data);
	r = cli_run_plumbv(NULL, "trace", "stats", native, NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "trace cut short: block 3 at offset"), "%s", r.err);
	cr_assert(strstr(r.err, "196608 records of complete blocks were read"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "stats", native, "--allow-truncated", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	output_report *report = parse(&r);
	cr_assert_eq(cell(report, "kinds", "total", "references"), 196608);
	bool noted = false;
	for (size_t i = 0; i < output_note_count(report); i++)
		noted |= strstr(output_note_at(report, i), "the trace was cut short") != NULL;
	cr_assert(noted);
	output_report_free(report);
	cli_run_free(&r);
}

Test(trace_cli, corrupt_native_trace)
{
	char native[512];
	snprintf(native, sizeof native, "%s", cli_temp_path("bad.ptrace"));
	spit(native, "\x89PLUMBTR\x07");
	cli_run r = cli_run_plumbv(NULL, "trace", "stats", native, NULL);
	cr_assert_eq(r.exit_code, 1);
	char expect[1024];
	snprintf(expect, sizeof expect, "plumb trace stats: %s: native trace header cut short (9 of 16 bytes)\n", native);
	cr_assert_str_eq(r.err, expect);
	cli_run_free(&r);
	r = cli_run_plumbv("not a trace\n", "trace", "stats", "-", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert_str_eq(r.err, "plumb trace stats: standard input: cannot detect the trace format: 'not a trace' is "
	                 "neither a lackey nor a din line, and the input has no native trace magic\n");
	cli_run_free(&r);
}

Test(trace_cli, record_a_program, .timeout = 120)
{
	char out[512];
	snprintf(out, sizeof out, "%s", cli_temp_path("true.ptrace"));
	cli_run r = cli_run_plumbv(NULL, "trace", "record", out, "--", "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "stats", out, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	output_report *report = parse(&r);
	cr_assert_gt(cell(report, "kinds", "instruction", "references"), 10000);
	output_report_free(report);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "trace", "record", out, "--", "false", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert_str_eq(r.err, "plumb trace record: the traced program 'false' exited with status 1\n");
	cli_run_free(&r);
}

/* ---- A bounded buffer between the program and the trace (--buffer) ----
 * `true` under Valgrind makes the same references every run (the test
 * record_a_program's trace is byte for byte the same twice), so a recording
 * without a buffer is the oracle of one with a buffer. */

static double meta(const output_report *report, const char *key)
{
	for (size_t i = 0; i < output_meta_count(report); i++)
		if (!strcmp(output_meta_key(report, i), key)) {
			char text[64];
			output_meta_format(report, i, text, sizeof text);
			return strtod(text, NULL);
		}
	cr_assert_fail("no meta %s", key);
	return NAN;
}

static output_report *stats_of(const char *path)
{
	cli_run r = cli_run_plumbv(NULL, "trace", "stats", path, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	output_report *report = parse(&r);
	cli_run_free(&r);
	return report;
}

static void record_true(const char *path, const char *const *options)
{
	const char *argv[16] = { "trace", "record" };
	size_t n = 2;
	while (options && *options)
		argv[n++] = *options++;
	argv[n++] = path;
	argv[n++] = "--";
	argv[n++] = "true";
	argv[n] = NULL;
	cli_run r = cli_run_plumb(NULL, argv);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
}

static char *as_lackey(const char *native, const char *name)
{
	char out[512];
	snprintf(out, sizeof out, "%s", cli_temp_path(name));
	cli_run r = cli_run_plumbv(NULL, "trace", "convert", native, out, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	char *text = cli_read_file(out, NULL);
	cr_assert_not_null(text, "cannot read %s: %s", out, strerror(errno));
	return text;
}

/* The same references in the same order: every line of two lackey texts
 * alike, but for the addresses of data references, which may differ between
 * two runs of one program under this test harness (two recordings of `true`
 * made here read its environment strings at other stack addresses; from a
 * shell they are byte for byte the same). */
static void same_references(const char *a, const char *b)
{
	size_t line = 1;
	while (*a && *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		cr_assert(ea && eb);
		bool data = a[0] == ' ';
		if (data) {
			const char *ca = memchr(a, ',', (size_t)(ea - a)), *cb = memchr(b, ',', (size_t)(eb - b));
			cr_assert(ca && cb && !strncmp(a, b, 3) && ea - ca == eb - cb && !strncmp(ca, cb, (size_t)(ea - ca)),
			          "line %zu: %.*s | %.*s", line, (int)(ea - a), a, (int)(eb - b), b);
		} else {
			cr_assert(ea - a == eb - b && !strncmp(a, b, (size_t)(ea - a)), "line %zu: %.*s | %.*s", line,
			          (int)(ea - a), a, (int)(eb - b), b);
		}
		a = ea + 1;
		b = eb + 1;
		line++;
	}
	cr_assert(!*a && !*b, "one trace is longer, after line %zu", line);
}

Test(trace_cli, record_with_a_halting_buffer_loses_nothing, .timeout = 180)
{
	char unbounded[512], halted[512], filtered[512];
	snprintf(unbounded, sizeof unbounded, "%s", cli_temp_path("unbounded.ptrace"));
	snprintf(halted, sizeof halted, "%s", cli_temp_path("halted.ptrace"));
	snprintf(filtered, sizeof filtered, "%s", cli_temp_path("filtered.ptrace"));
	record_true(unbounded, NULL);
	record_true(halted, (const char *const[]){ "--buffer", "20000", "--when-full", "halt", NULL });
	output_report *u = stats_of(unbounded), *h = stats_of(halted);
	double records = meta(u, "records");
	cr_assert_gt(records, 40000);
	cr_assert_eq(meta(h, "records"), records, "a halting buffer loses nothing");
	cr_assert_eq(meta(h, "halts"), floor(records / 20000), "a halt at every full buffer");
	cr_assert_eq(meta(h, "dropped"), 0);
	cr_assert_eq(meta(h, "references_per_buffer"), 20000);
	cr_assert_eq(meta(u, "halts"), 0);
	for (int k = 0; k < 4; k++) {
		static const char *const kinds[] = { "instruction", "read", "write", "modify" };
		cr_assert_eq(cell(h, "kinds", kinds[k], "references"), cell(u, "kinds", kinds[k], "references"));
	}
	output_report_free(u);
	output_report_free(h);
	/* without the collector's markers, the very same references */
	cli_run r = cli_run_plumbv(NULL, "trace", "filter", "--drop-collector", halted, filtered, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	output_report *f = parse(&r);
	const output_table *removed = output_table_find(f, "filter");
	cr_assert_not_null(removed);
	cr_assert_eq(output_cell_number(removed, 0, (size_t)output_column_index(removed, "markers_removed")),
	             floor(records / 20000));
	output_report_free(f);
	cli_run_free(&r);
	char *a = as_lackey(unbounded, "unbounded.lackey"), *b = as_lackey(filtered, "filtered.lackey");
	same_references(a, b);
	free(a);
	free(b);
}

Test(trace_cli, record_with_a_dropping_buffer_counts_what_it_loses, .timeout = 180)
{
	char unbounded[512], dropped[512];
	snprintf(unbounded, sizeof unbounded, "%s", cli_temp_path("unbounded.ptrace"));
	snprintf(dropped, sizeof dropped, "%s", cli_temp_path("dropped.ptrace"));
	record_true(unbounded, NULL);
	/* 1000 references a second: `true` makes over 40000 in well under 40 s */
	record_true(dropped, (const char *const[]){ "--buffer", "1000", "--when-full", "drop", "--drain-rate", "1000", NULL });
	output_report *u = stats_of(unbounded), *d = stats_of(dropped);
	cr_assert_gt(meta(d, "dropped"), 0);
	cr_assert_eq(meta(d, "records") + meta(d, "dropped"), meta(u, "records"));
	cr_assert_eq(meta(d, "halts"), 0);
	output_report_free(u);
	output_report_free(d);
}

Test(trace_cli, record_with_a_wrapping_buffer_keeps_the_last_n, .timeout = 180)
{
	char unbounded[512], wrapped[512];
	snprintf(unbounded, sizeof unbounded, "%s", cli_temp_path("unbounded.ptrace"));
	snprintf(wrapped, sizeof wrapped, "%s", cli_temp_path("wrapped.ptrace"));
	record_true(unbounded, NULL);
	record_true(wrapped, (const char *const[]){ "--buffer", "1000", "--when-full", "wrap", NULL });
	output_report *u = stats_of(unbounded), *w = stats_of(wrapped);
	cr_assert_eq(meta(w, "records"), 1000);
	cr_assert_eq(meta(w, "dropped"), meta(u, "records") - 1000);
	output_report_free(u);
	output_report_free(w);
	char *a = as_lackey(unbounded, "unbounded.lackey"), *b = as_lackey(wrapped, "wrapped.lackey");
	size_t la = strlen(a), lb = strlen(b);
	cr_assert_gt(lb, 1000 * 4);
	cr_assert_gt(la, lb);
	/* the last lines of the unbounded trace: as many as the wrapped one has */
	size_t lines = 0;
	for (const char *p = b; *p; p++)
		lines += *p == '\n';
	const char *tail = a + la;
	for (size_t n = 0; n <= lines; n++)
		while (tail > a && *--tail != '\n')
			;
	same_references(tail + 1, b);
	free(a);
	free(b);
}

/* ---- plumbgrind's entries kept in the file (format 1.3, entry blocks) ----
 * `plumb trace record` keeps the tool's entries; `plumb trace convert` of that
 * file writes records blocks of the same references.  Every table of
 * `plumb sim` and of `plumb trace stats` is the same from both, but for the
 * stats' bytes and time (the files differ in size), and both convert to the
 * same lackey text. */

static void same_tables(const output_report *a, const output_report *b, const char *skip_table)
{
	cr_assert_eq(output_table_count(a), output_table_count(b));
	for (size_t t = 0; t < output_table_count(a); t++) {
		const output_table *x = output_table_at(a, t), *y = output_table_at(b, t);
		cr_assert_str_eq(output_table_name(x), output_table_name(y));
		if (skip_table && !strcmp(output_table_name(x), skip_table))
			continue;
		cr_assert_eq(output_row_count(x), output_row_count(y), "%s", output_table_name(x));
		cr_assert_eq(output_column_count(x), output_column_count(y), "%s", output_table_name(x));
		for (size_t row = 0; row < output_row_count(x); row++)
			for (size_t c = 0; c < output_column_count(x); c++) {
				char u[256], v[256];
				output_cell_format(x, row, c, u, sizeof u);
				output_cell_format(y, row, c, v, sizeof v);
				cr_assert_str_eq(u, v, "%s row %zu column %zu", output_table_name(x), row, c);
			}
	}
}

static void copy_whole_file(const char *from, const char *to)
{
	size_t length;
	char *data = cli_read_file(from, &length);
	cr_assert_not_null(data, "%s", from);
	FILE *f = fopen(to, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, length, f), length);
	fclose(f);
	free(data);
}

Test(trace_cli, recorded_entries_read_as_their_records, .timeout = 180)
{
	char entries[512], records[512], code_a[600], code_b[600];
	snprintf(entries, sizeof entries, "%s", cli_temp_path("entries.ptrace"));
	snprintf(records, sizeof records, "%s", cli_temp_path("records.ptrace"));
	record_true(entries, NULL);
	cli_run r = cli_run_plumbv(NULL, "trace", "convert", entries, records, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	size_t length;
	char *bytes = cli_read_file(entries, &length);
	cr_assert(length > 20 && bytes[10] == 3 && !memcmp(bytes + 16, "TCMP", 4), "an entry block first");
	free(bytes);
	bytes = cli_read_file(records, &length);
	cr_assert(length > 20 && !memcmp(bytes + 16, "TBLK", 4), "a records block first");
	free(bytes);
	/* the same names for the code of both */
	snprintf(code_a, sizeof code_a, "%s.code", entries);
	snprintf(code_b, sizeof code_b, "%s.code", records);
	copy_whole_file(code_a, code_b);

	output_report *a = stats_of(entries), *b = stats_of(records);
	cr_assert_gt(meta(a, "records"), 10000);
	cr_assert_eq(meta(a, "records"), meta(b, "records"));
	same_tables(a, b, "input");
	output_report_free(a);
	output_report_free(b);

	const char *machines[][3] = { { "--preset", "cachegrind", NULL }, { "--cores", "2", NULL } };
	for (size_t m = 0; m < 2; m++) {
		cli_run x = cli_run_plumbv(NULL, "sim", machines[m][0], machines[m][1], "--json", entries, NULL);
		cli_run y = cli_run_plumbv(NULL, "sim", machines[m][0], machines[m][1], "--json", records, NULL);
		cr_assert_eq(x.exit_code, 0, "%s", x.err);
		cr_assert_eq(y.exit_code, 0, "%s", y.err);
		output_report *p = parse(&x), *q = parse(&y);
		same_tables(p, q, NULL);
		output_report_free(p);
		output_report_free(q);
		cli_run_free(&x);
		cli_run_free(&y);
	}

	char *la = as_lackey(entries, "entries.lackey"), *lb = as_lackey(records, "records.lackey");
	cr_assert_str_eq(la, lb, "the same lackey text");
	free(la);
	free(lb);
	unlink(code_a);
	unlink(code_b);
}

/* Issue 29: a text trace saved with a UTF-8 byte-order mark reads like one
 * without; its first line was refused as neither lackey nor din. */
Test(trace_cli, a_byte_order_mark_is_skipped)
{
	const char *path = cli_temp_path("marked.lackey");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("\xEF\xBB\xBF L 1000,8\n S 2000,8\n", f);
	fclose(f);
	cli_run r = cli_run_plumbv(NULL, "trace", "stats", path, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "format: lackey") && strstr(r.out, "records: 2\n"), "%s", r.out);
	cli_run_free(&r);
}
