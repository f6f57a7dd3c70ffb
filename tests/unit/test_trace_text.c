/* lackey and din: parsing, errors, writers, round trips across formats. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace_test_util.h"

static const char lackey_sample[] =
	"==5335== Lackey, an example Valgrind tool\n"
	"==5335== Command: ./t\n"
	"--5335--   SCHED[1]:  acquired lock (thread_wrapper(starting new thread))\n"
	"I  0401ab70,3\n"
	" S 1ffefffe48,8\n"
	"I  0401ab73,5\n"
	" L 04032e40,8\n"
	" M 04033e06,1\n"
	"--5335--   SCHED[1]: releasing lock (VG_(client_syscall)[async]) -> VgTs_WaitSys\n"
	"--5335--   SCHED[2]:  acquired lock (thread_wrapper(starting new thread))\n"
	" L 10c02c,4\n"
	"I  0401b770,1\n"
	" S 0010c02c,4\n"
	"\n"
	"==5335== Exit code:       0\n";

Test(trace_lackey, parses_records_threads_and_instruction_addresses)
{
	trace_record r[16];
	char error[256];
	long n = trace_test_read_memory(lackey_sample, strlen(lackey_sample), TRACE_FORMAT_AUTO, r, 16, error, sizeof error);
	cr_assert_eq(n, 8, "%ld: %s", n, error);
	const trace_record expect[8] = {
		{ 0x401ab70, 0x401ab70, 0, 0, 3, TRACE_INSTRUCTION, TRACE_HAS_INSTRUCTION_ADDRESS },
		{ 0x1ffefffe48, 0x401ab70, 0, 0, 8, TRACE_WRITE, TRACE_HAS_INSTRUCTION_ADDRESS },
		{ 0x401ab73, 0x401ab73, 0, 0, 5, TRACE_INSTRUCTION, TRACE_HAS_INSTRUCTION_ADDRESS },
		{ 0x4032e40, 0x401ab73, 0, 0, 8, TRACE_READ, TRACE_HAS_INSTRUCTION_ADDRESS },
		{ 0x4033e06, 0x401ab73, 0, 0, 1, TRACE_MODIFY, TRACE_HAS_INSTRUCTION_ADDRESS },
		/* After the switch to thread 2 no I line came yet: no instruction address. */
		{ 0x10c02c, 0, 0, 1, 4, TRACE_READ, 0 },
		{ 0x401b770, 0x401b770, 0, 1, 1, TRACE_INSTRUCTION, TRACE_HAS_INSTRUCTION_ADDRESS },
		{ 0x10c02c, 0x401b770, 0, 1, 4, TRACE_WRITE, TRACE_HAS_INSTRUCTION_ADDRESS },
	};
	for (int i = 0; i < 8; i++)
		cr_assert(trace_test_records_equal(&r[i], &expect[i]), "record %d: %lx %lx t%u k%u s%u f%u", i,
		          (unsigned long)r[i].address, (unsigned long)r[i].instruction_address, r[i].thread, r[i].kind,
		          r[i].size, r[i].flags);
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_memory(&reader, lackey_sample, strlen(lackey_sample), TRACE_FORMAT_AUTO, &status), 0);
	cr_assert_eq(trace_reader_format(reader), TRACE_FORMAT_LACKEY);
	cr_assert_eq(trace_reader_read(reader, r, 16, &status), 8);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	cr_assert_eq(info.thread_switches, 1);
	cr_assert_eq(info.lines, 15);
	trace_reader_close(reader, &status);
}

static void lackey_error(const char *text, long records_before, const char *message)
{
	trace_record r[8];
	char error[256];
	long n = trace_test_read_memory(text, strlen(text), TRACE_FORMAT_LACKEY, r, 8, error, sizeof error);
	cr_assert_lt(n, 0, "no error for %s", text);
	cr_assert_eq(-1 - n, records_before);
	cr_assert_str_eq(error, message);
}

Test(trace_lackey, errors_name_the_line)
{
	lackey_error("I  0401ab70,3\n L 12zz,8\n", 1, "memory: lackey line 2: bad address: ' L 12zz,8'");
	lackey_error(" L 1234,0\n", 0, "memory: lackey line 1: bad size (want 1..65535 and nothing after it): ' L 1234,0'");
	lackey_error(" L 1234,70000\n", 0,
	             "memory: lackey line 1: bad size (want 1..65535 and nothing after it): ' L 1234,70000'");
	lackey_error(" L 12345678901234567,8\n", 0, "memory: lackey line 1: bad address: ' L 12345678901234567,8'");
	lackey_error("I  1,1\nhello world\n", 1,
	             "memory: lackey line 2: not a lackey trace line (log the trace with --log-file or --log-fd): 'hello world'");
	lackey_error("--1--   SCHED[0]:  acquired lock\n", 0,
	             "memory: lackey line 1: bad SCHED thread number: '--1--   SCHED[0]:  acquired lock'");
	lackey_error("==10== Lackey\nI  1,1\n--11--   SCHED[1]: x\n", 1,
	             "memory: lackey line 3: a second process (PID 11 after 10) writes to this trace; a forked child's "
	             "references cannot be told from its parent's: '--11--   SCHED[1]: x'");
	lackey_error(" L 1,8\x01\n", 0,
	             "memory: lackey line 1: bad size (want 1..65535 and nothing after it): ' L 1,8\\x01'");
}

Test(trace_lackey, last_line_without_newline_and_crlf)
{
	static const char text[] = "I  10,4\r\n L 20,8";
	trace_record r[4];
	char error[256];
	cr_assert_eq(trace_test_read_memory(text, strlen(text), TRACE_FORMAT_AUTO, r, 4, error, sizeof error), 2, "%s", error);
	cr_assert_eq(r[1].address, 0x20);
	cr_assert_eq(r[1].size, 8);
}

static const char din_sample[] =
	"2 0\n"
	"0 1000\n"
	"  0 70f60888 this is a comment\n"
	"1 0x70f60890 8\n"
	"\n"
	"3 44 2\n"
	"4 0\n"
	"1\t70f6088c\t16 comment 7\n";

Test(trace_din, parses_labels_sizes_and_escapes)
{
	trace_record r[16];
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_memory(&reader, din_sample, strlen(din_sample), TRACE_FORMAT_AUTO, &status), 0,
	             "%s", status.message);
	cr_assert_eq(trace_reader_format(reader), TRACE_FORMAT_DIN);
	cr_assert_eq(trace_reader_read(reader, r, 16, &status), 6, "%s", status.message);
	cr_assert_eq(trace_reader_read(reader, r + 6, 10, &status), 0);
	const trace_record expect[6] = {
		{ 0, 0, 0, 0, 4, TRACE_INSTRUCTION, 0 },
		{ 0x1000, 0, 0, 0, 4, TRACE_READ, 0 },
		{ 0x70f60888, 0, 0, 0, 4, TRACE_READ, 0 },
		{ 0x70f60890, 0, 0, 0, 8, TRACE_WRITE, 0 },
		{ 0x44, 0, 0, 0, 2, TRACE_READ, 0 },
		{ 0x70f6088c, 0, 0, 0, 16, TRACE_WRITE, 0 },
	};
	for (int i = 0; i < 6; i++)
		cr_assert(trace_test_records_equal(&r[i], &expect[i]), "record %d", i);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	cr_assert_eq(info.skipped, 1);
	cr_assert_eq(info.unknown_as_read, 1);
	trace_reader_close(reader, &status);
}

/* An access wrapping past 2^64 was once taken and simulated as one line. */
Test(trace_lackey, an_access_past_the_end_of_the_address_space_is_refused)
{
	lackey_error("I  1,1\n L ffffffffffffffff,2\n", 1, "memory: lackey line 2: the access runs past the end of the "
	             "64-bit address space: ' L ffffffffffffffff,2'");
	lackey_error(" S fffffffffffffff9,8\n", 0, "memory: lackey line 1: the access runs past the end of the 64-bit "
	             "address space: ' S fffffffffffffff9,8'");
	trace_record r[4];
	char error[256] = "";
	static const char last_bytes[] = " L ffffffffffffffff,1\n S fffffffffffffff8,8\n";
	cr_assert_eq(trace_test_read_memory(last_bytes, strlen(last_bytes), TRACE_FORMAT_LACKEY, r, 4, error,
	                                    sizeof error), 2, "%s", error);
	static const char din_wrap[] = "0 fffffffffffffffe 4\n";
	cr_assert_eq(trace_test_read_memory(din_wrap, strlen(din_wrap), TRACE_FORMAT_DIN, r, 4, error, sizeof error), -1, "%s", error);
	cr_assert_str_eq(error, "memory: din line 1: the access runs past the end of the 64-bit address space: "
	                 "'0 fffffffffffffffe 4'");
	static const char din_flush[] = "4 ffffffffffffffff\n0 fffffffffffffffc\n";
	cr_assert_eq(trace_test_read_memory(din_flush, strlen(din_flush), TRACE_FORMAT_DIN, r, 4, error, sizeof error),
	             1, "%s", error);
}

Test(trace_din, errors_name_the_line)
{
	trace_record r[4];
	char error[256];
	static const char bad_label[] = "0 10\n9 20\n";
	cr_assert_eq(trace_test_read_memory(bad_label, strlen(bad_label), TRACE_FORMAT_DIN, r, 4, error, sizeof error), -2);
	cr_assert_str_eq(error, "memory: din line 2: label is not a din access type "
	                 "(0 read, 1 write, 2 fetch, 3 unknown, 4 flush): '9 20'");
	static const char bad_address[] = "0 10g\n";
	cr_assert_eq(trace_test_read_memory(bad_address, strlen(bad_address), TRACE_FORMAT_DIN, r, 4, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: din line 1: bad address (want at most 16 hex digits): '0 10g'");
	static const char short_line[] = "0\n";
	cr_assert_eq(trace_test_read_memory(short_line, strlen(short_line), TRACE_FORMAT_DIN, r, 4, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: din line 1: bad label (want a hex label, then the address): '0'");
	static const char bad_size[] = "0 10 0\n";
	cr_assert_eq(trace_test_read_memory(bad_size, strlen(bad_size), TRACE_FORMAT_DIN, r, 4, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: din line 1: bad size (want 1..65535): '0 10 0'");
}

Test(trace_detect, formats_and_failures)
{
	trace_record r[2];
	char error[256];
	cr_assert_eq(trace_test_read_memory("", 0, TRACE_FORMAT_AUTO, r, 2, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: empty input: cannot detect the trace format");
	static const char text[] = "hello\n";
	cr_assert_eq(trace_test_read_memory(text, strlen(text), TRACE_FORMAT_AUTO, r, 2, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: cannot detect the trace format: 'hello' is neither a lackey nor a din line, "
	                 "and the input has no native trace magic");
	static const char blank[] = "\n\n  \n";
	cr_assert_eq(trace_test_read_memory(blank, strlen(blank), TRACE_FORMAT_AUTO, r, 2, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: cannot detect the trace format: no trace lines");
	plumb_status status;
	trace_format f;
	cr_assert_eq(trace_format_parse("din", &f, &status), 0);
	cr_assert_eq(f, TRACE_FORMAT_DIN);
	cr_assert_eq(trace_format_parse("pin", &f, &status), -1);
	cr_assert_str_eq(status.message, "unknown trace format 'pin' (want auto, native, lackey or din)");
}

/* lackey text -> records -> native -> records -> lackey text: identical. */
Test(trace_round_trip, lackey_native_lackey)
{
	static const char text[] =
		"I  0401ab70,3\n S 1ffefffe48,8\nI  0401ab73,5\n L 04032e40,8\n M 04033e06,1\n"
		"--0--   SCHED[3]:  acquired lock (plumb)\nI  0401b770,1\n S 0010c02c,4\n"
		"--0--   SCHED[1]:  acquired lock (plumb)\nI  ffffffffff600000,15\n L 00000000,64\n";
	const char *lackey_path = trace_test_path("a.lackey");
	trace_test_spit(lackey_path, text, strlen(text));
	trace_record a[32], b[32];
	char error[256];
	long n = trace_test_read_all(lackey_path, TRACE_FORMAT_AUTO, a, 32, error, sizeof error);
	cr_assert_eq(n, 9, "%s", error);
	cr_assert_eq(a[5].thread, 2);
	cr_assert_eq(a[7].thread, 0);
	char native_path[256];
	snprintf(native_path, sizeof native_path, "%s", trace_test_path("a.ptrace"));
	cr_assert_eq(trace_test_write(native_path, TRACE_FORMAT_AUTO, a, 9), 0);
	cr_assert_eq(trace_test_read_all(native_path, TRACE_FORMAT_AUTO, b, 32, error, sizeof error), 9, "%s", error);
	for (int i = 0; i < 9; i++)
		cr_assert(trace_test_records_equal(&a[i], &b[i]), "record %d", i);
	char back_path[256];
	snprintf(back_path, sizeof back_path, "%s", trace_test_path("b.lackey"));
	cr_assert_eq(trace_test_write(back_path, TRACE_FORMAT_LACKEY, b, 9), 0);
	size_t size;
	char *back = trace_test_slurp(back_path, &size);
	cr_assert_str_eq(back, text);
	free(back);
}

/* din text -> records -> native -> din text: identical (din's own subset). */
Test(trace_round_trip, din_native_din)
{
	static const char text[] = "2 400000 4\n0 1000 8\n1 ffffffffffffffff 1\n0 0 65535\n2 10 3\n";
	trace_record a[16], b[16];
	char error[256];
	long n = trace_test_read_memory(text, strlen(text), TRACE_FORMAT_AUTO, a, 16, error, sizeof error);
	cr_assert_eq(n, 5, "%s", error);
	char native_path[256];
	snprintf(native_path, sizeof native_path, "%s", trace_test_path("d.ptrace"));
	cr_assert_eq(trace_test_write(native_path, TRACE_FORMAT_NATIVE, a, 5), 0);
	cr_assert_eq(trace_test_read_all(native_path, TRACE_FORMAT_AUTO, b, 16, error, sizeof error), 5, "%s", error);
	const char *din_path = trace_test_path("d.din");
	cr_assert_eq(trace_test_write(din_path, TRACE_FORMAT_AUTO, b, 5), 0);
	size_t size;
	char *back = trace_test_slurp(din_path, &size);
	cr_assert_str_eq(back, text);
	free(back);
}

/* native -> lackey -> din -> native keeps what all three carry. */
Test(trace_round_trip, native_lackey_din_native)
{
	enum { N = 5000 };
	trace_record *in = calloc(N, sizeof *in), *out = calloc(2 * N, sizeof *out);
	trace_test_records(in, N, 99);
	for (int i = 0; i < N; i++) {   /* the common subset: thread 0, no modify, no time, no instruction address */
		in[i].thread = 0;
		in[i].flags = 0;
		in[i].time = in[i].instruction_address = 0;
		if (in[i].kind == TRACE_MODIFY)
			in[i].kind = TRACE_READ;
	}
	char p1[256], p2[256], p3[256];
	snprintf(p1, sizeof p1, "%s", trace_test_path("c1.lackey"));
	snprintf(p2, sizeof p2, "%s", trace_test_path("c2.din"));
	snprintf(p3, sizeof p3, "%s", trace_test_path("c3.ptrace"));
	char error[256];
	cr_assert_eq(trace_test_write(p1, TRACE_FORMAT_AUTO, in, N), 0);
	cr_assert_eq(trace_test_read_all(p1, TRACE_FORMAT_AUTO, out, 2 * N, error, sizeof error), N, "%s", error);
	for (int i = 0; i < N; i++) {   /* lackey adds instruction addresses from its I lines: drop them again */
		out[i].flags = 0;
		out[i].instruction_address = 0;
	}
	cr_assert_eq(trace_test_write(p2, TRACE_FORMAT_AUTO, out, N), 0);
	cr_assert_eq(trace_test_read_all(p2, TRACE_FORMAT_AUTO, out, 2 * N, error, sizeof error), N, "%s", error);
	cr_assert_eq(trace_test_write(p3, TRACE_FORMAT_AUTO, out, N), 0);
	cr_assert_eq(trace_test_read_all(p3, TRACE_FORMAT_AUTO, out, 2 * N, error, sizeof error), N, "%s", error);
	for (int i = 0; i < N; i++)
		cr_assert(trace_test_records_equal(&in[i], &out[i]), "record %d", i);
	free(in);
	free(out);
}

Test(trace_din, writer_splits_modify_and_refuses_threads)
{
	trace_record r[2] = { { 0x40, 0, 0, 0, 4, TRACE_MODIFY, 0 }, { 0x80, 0, 0, 2, 4, TRACE_READ, 0 } };
	const char *path = trace_test_path("m.din");
	plumb_status status;
	trace_writer *writer;
	cr_assert_eq(trace_writer_open(&writer, path, TRACE_FORMAT_AUTO, &status), 0);
	cr_assert_eq(trace_writer_write(writer, r, 1, &status), 0);
	cr_assert_eq(trace_writer_write(writer, r + 1, 1, &status), -1);
	cr_assert_str_eq(status.message, "din has no thread field, and record 1 is of thread 2 (fold the threads into one first)");
	cr_assert_eq(trace_writer_close(writer, &status), 0);
	size_t size;
	char *text = trace_test_slurp(path, &size);
	cr_assert_str_eq(text, "0 40 4\n1 40 4\n");
	free(text);
}
