/* Whole-file reads with a limit (src/core/read_file.c, issue 29): a file
 * that never ends or is too large fails with one line instead of filling
 * memory, and a byte-order mark is recognised. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "core/read_file.h"
#include "../temp_folder.h"

static char folder[300];

/* removed with what is in it when the test's process exits, skipped or not */
static void make_folder(void)
{
	snprintf(folder, sizeof folder, "%s", temp_folder("plumb-read-test"));
}

TestSuite(core_read_file, .init = make_folder);

static const char *write_bytes(const char *name, size_t n)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", folder, name);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	cr_assert_eq(fclose(f), 0);
	return path;
}

Test(core_read_file, reads_up_to_the_limit)
{
	char *text;
	size_t length;
	plumb_status st;
	const char *path = write_bytes("exact", 100000);
	cr_assert_eq(read_file_limited(path, 100000, &text, &length, &st), 0, "%s", st.message);
	cr_assert_eq(length, 100000);
	cr_assert_eq(text[0], 'a');
	cr_assert_eq(text[99999], 'a' + 99999 % 26);
	cr_assert_eq(text[100000], 0);
	free(text);
}

Test(core_read_file, one_byte_over_the_limit_fails)
{
	char *text = (char *)1;
	size_t length;
	plumb_status st;
	const char *path = write_bytes("over", 100001);
	cr_assert_eq(read_file_limited(path, 100000, &text, &length, &st), -1);
	cr_assert_null(text);
	cr_assert_eq(st.code, EFBIG);
	cr_assert(strstr(st.message, "larger than 100000 bytes"), "%s", st.message);
}

Test(core_read_file, an_empty_file_is_empty_text)
{
	char *text;
	size_t length = 99;
	plumb_status st;
	const char *path = write_bytes("empty", 0);
	cr_assert_eq(read_file_limited(path, 10, &text, &length, &st), 0);
	cr_assert_eq(length, 0);
	cr_assert_str_eq(text, "");
	free(text);
}

/* /dev/zero never ends: the read stops at the limit, with memory to match. */
Test(core_read_file, an_endless_file_stops_at_the_limit)
{
	char *text;
	size_t length;
	plumb_status st;
	cr_assert_eq(read_file_limited("/dev/zero", (size_t)8 << 20, &text, &length, &st), -1);
	cr_assert_eq(st.code, EFBIG);
	cr_assert_str_eq(st.message, "/dev/zero: larger than 8 MiB");
}

Test(core_read_file, a_missing_file_and_a_folder)
{
	char *text;
	size_t length;
	plumb_status st;
	cr_assert_eq(read_file_limited("/nonexistent/x", 10, &text, &length, &st), -1);
	cr_assert_str_eq(st.message, "cannot open '/nonexistent/x': No such file or directory");
	cr_assert_eq(read_file_limited(folder, 10, &text, &length, &st), -1);
	cr_assert(strstr(st.message, "Is a directory"), "%s", st.message);
}

/* Under `ulimit -v` memory runs out before the limit is reached: that is
 * reported (it once looped forever, appending to nothing). */
Test(core_read_file, running_out_of_memory_is_reported)
{
#if defined(__SANITIZE_ADDRESS__)
	cr_skip_test("AddressSanitizer reserves more address space than the limit allows");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	cr_skip_test("AddressSanitizer reserves more address space than the limit allows");
#endif
#endif
	struct rlimit limit, saved;
	cr_assert_eq(getrlimit(RLIMIT_AS, &saved), 0);
	limit = saved;
	limit.rlim_cur = (rlim_t)512 << 20;
	cr_assert_eq(setrlimit(RLIMIT_AS, &limit), 0);
	char *text;
	size_t length;
	plumb_status st;
	int rc = read_file_limited("/dev/zero", (size_t)4 << 30, &text, &length, &st);
	/* The limit goes before any assertion: Criterion's own reporting must
	 * not run short of address space. */
	setrlimit(RLIMIT_AS, &saved);
	cr_assert_eq(rc, -1);
	cr_assert_eq(st.code, ENOMEM, "%s", st.message);
	cr_assert(strstr(st.message, "/dev/zero: out of memory after reading "), "%s", st.message);
}

Test(core_read_file, byte_order_mark)
{
	cr_assert_eq(read_file_bom_length("\xEF\xBB\xBFsize,latency", 15), 3);
	cr_assert_eq(read_file_bom_length("size,latency", 12), 0);
	cr_assert_eq(read_file_bom_length("\xEF\xBB", 2), 0);
	cr_assert_eq(read_file_bom_length("", 0), 0);
}
