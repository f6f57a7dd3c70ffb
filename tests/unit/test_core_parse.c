#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "core/parse.h"

Test(core_parse, sizes)
{
	uint64_t v;
	plumb_status st;
	cr_assert_eq(parse_size("4096", &v, &st), 0); cr_assert_eq(v, 4096);
	cr_assert_eq(parse_size("4K", &v, &st), 0); cr_assert_eq(v, 4096);
	cr_assert_eq(parse_size("32KiB", &v, &st), 0); cr_assert_eq(v, 32768);
	cr_assert_eq(parse_size("1.5M", &v, &st), 0); cr_assert_eq(v, 1572864);
	cr_assert_eq(parse_size("2g", &v, &st), 0); cr_assert_eq(v, 2147483648u);
	cr_assert_eq(parse_size("64mib", &v, &st), 0); cr_assert_eq(v, 64u << 20);
	cr_assert_eq(parse_size("1GiB", &v, &st), 0); cr_assert_eq(v, 1u << 30);
	cr_assert_eq(parse_size("3k", &v, &st), 0); cr_assert_eq(v, 3072);
	cr_assert_eq(parse_size("010K", &v, &st), 0); cr_assert_eq(v, 10240);
}

/* Issue 29: a suffix is K or KiB (or all lower case), nothing else: "64Kb"
 * once meant 64 KiB, "KB" is 1000 or 1024 depending on who reads it. */
Test(core_parse, size_suffixes_are_exact)
{
	uint64_t v;
	plumb_status st;
	const char *bad[] = { "64Kb", "64KB", "64kB", "64MB", "1GB", "4Kib", "4KIB", "4kiB", "2Gb", "1b", "4 KiB" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(parse_size(bad[i], &v, &st), -1, "accepted '%s' as %llu", bad[i], (unsigned long long)v);
		cr_assert(strstr(st.message, "unknown unit") || strstr(st.message, "not a size"), "%s", st.message);
	}
}

Test(core_parse, bad_sizes)
{
	uint64_t v;
	plumb_status st;
	const char *bad[] = { "", "-1", "K", "4Q", "1.5", "1e30T", "nan", "inf", "4 K",
	                      /* found by the fuzzer: a sign after white space */
	                      " -8K", "\r\r-8K", "\t+4K" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(parse_size(bad[i], &v, &st), -1, "accepted '%s'", bad[i]);
		cr_assert(strlen(st.message) > 0);
		cr_assert_null(strchr(st.message, '\n'));
	}
}

Test(core_parse, integers)
{
	uint64_t u;
	long l;
	double d;
	plumb_status st;
	cr_assert_eq(parse_u64("10", 1, 100, &u, &st), 0); cr_assert_eq(u, 10);
	cr_assert_eq(parse_u64("0", 1, 100, &u, &st), -1);
	cr_assert_eq(parse_u64("-3", 0, 100, &u, &st), -1);
	cr_assert_eq(parse_u64("12x", 0, 100, &u, &st), -1);
	cr_assert_eq(parse_u64("99999999999999999999999", 0, UINT64_MAX, &u, &st), -1);
	cr_assert_eq(parse_int("-5", -10, 10, &l, &st), 0); cr_assert_eq(l, -5);
	cr_assert_eq(parse_int("11", -10, 10, &l, &st), -1);
	cr_assert_eq(parse_double("0.25", 0, 1, &d, &st), 0); cr_assert_float_eq(d, 0.25, 1e-12);
	cr_assert_eq(parse_double("nan", 0, 1, &d, &st), -1);
	cr_assert_eq(parse_double("2", 0, 1, &d, &st), -1);
}

/* Issue 29: numbers are decimal unless written 0x ("010" once meant 8:
 * `stat -r 010` did 8 runs), and a sign after leading white space is still
 * a sign (" -1" once became 2^64 - 1). */
Test(core_parse, integers_are_decimal_unless_0x)
{
	uint64_t u;
	long l;
	plumb_status st;
	cr_assert_eq(parse_u64("010", 0, 100, &u, &st), 0); cr_assert_eq(u, 10);
	cr_assert_eq(parse_u64("0x10", 0, 100, &u, &st), 0); cr_assert_eq(u, 16);
	cr_assert_eq(parse_u64("0X1f", 0, 100, &u, &st), 0); cr_assert_eq(u, 31);
	cr_assert_eq(parse_u64("08", 0, 100, &u, &st), 0); cr_assert_eq(u, 8);
	cr_assert_eq(parse_u64("0", 0, 100, &u, &st), 0); cr_assert_eq(u, 0);
	cr_assert_eq(parse_int("010", -100, 100, &l, &st), 0); cr_assert_eq(l, 10);
	cr_assert_eq(parse_int("-010", -100, 100, &l, &st), 0); cr_assert_eq(l, -10);
	cr_assert_eq(parse_int("-0x10", -100, 100, &l, &st), 0); cr_assert_eq(l, -16);
	cr_assert_eq(parse_int("0x", -100, 100, &l, &st), -1);
	cr_assert_eq(parse_u64("0x", 0, 100, &u, &st), -1);
	cr_assert_eq(parse_u64("0x-5", 0, 100, &u, &st), -1);
}

/* A count parsed as a signed integer with a non-negative range (points per
 * octave, repeats, time caps) took "+5" and "-0": found by
 * tests/hostile-sweep.sh. */
Test(core_parse, a_non_negative_int_refuses_any_sign)
{
	long l = 12345;
	plumb_status st;
	const char *bad[] = { "+5", "-0", " +5", " -0", "-1", "+0x10" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(parse_int(bad[i], 0, 100, &l, &st), -1, "accepted '%s' as %ld", bad[i], l);
	cr_assert_eq(parse_int("5", 1, 100, &l, &st), 0);
	cr_assert_eq(l, 5);
	cr_assert_eq(parse_int("-5", -10, 10, &l, &st), 0, "a signed range still takes a sign");
	cr_assert_eq(parse_int("+5", -10, 10, &l, &st), 0);
}

Test(core_parse, unsigned_refuses_any_sign)
{
	uint64_t u = 12345;
	plumb_status st;
	const char *bad[] = { "-1", " -1", "\t-1", "\r\n-1", "+1", " +1", "- 1", "1-", "0x-1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(parse_u64(bad[i], 0, UINT64_MAX, &u, &st), -1, "accepted '%s' as %llu", bad[i],
		             (unsigned long long)u);
		cr_assert_null(strchr(st.message, '\n'));
	}
	cr_assert_eq(u, 12345, "a refused number was stored");
}

/* Lists split with strtok_r passed over an empty item, so "32K,,8,64" was
 * the L1D 32K,8,64 (the next field took the empty one's place), and lists
 * copied into a fixed buffer were cut ("000...00012" read as 1): found by
 * tests/hostile-sweep.sh. */
Test(core_parse, a_list_with_an_empty_item_or_too_long_is_refused)
{
	plumb_status st;
	const char *bad[] = { "", ",", ",,", ",16K", "16K,", "16K,,32K", "32K,,8,64", "1,2,,", ",1,2" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(parse_list_check(bad[i], 0, &st), -1, "accepted '%s'", bad[i]);
		cr_assert_null(strchr(st.message, '\n'));
	}
	const char *good[] = { "16K", "16K,32K", "32K,8,64", "a, b", "1-3,5" };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		cr_assert_eq(parse_list_check(good[i], 0, &st), 0, "refused '%s': %s", good[i], st.message);
	char longer[300];
	memset(longer, '0', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	cr_assert_eq(parse_list_check(longer, 255, &st), -1);
	cr_assert(strstr(st.message, "longer than 255 characters"), "%s", st.message);
	cr_assert_lt(strlen(st.message), 120, "the message quotes the whole list: %s", st.message);
	longer[255] = '\0';
	cr_assert_eq(parse_list_check(longer, 255, &st), 0);
}

Test(core_parse, cpu_lists)
{
	int cpus[16], n;
	plumb_status st;
	cr_assert_eq(parse_cpu_list("0-3,6,8-9", cpus, 16, &n, &st), 0);
	cr_assert_eq(n, 7);
	cr_assert_eq(cpus[4], 6);
	cr_assert_eq(cpus[6], 9);
	cr_assert_eq(parse_cpu_list("3-1", cpus, 16, &n, &st), -1);
	cr_assert_eq(parse_cpu_list("1,1", cpus, 16, &n, &st), -1);
	cr_assert_eq(parse_cpu_list("1,", cpus, 16, &n, &st), -1);
	cr_assert_eq(parse_cpu_list("a", cpus, 16, &n, &st), -1);
	cr_assert_eq(parse_cpu_list("0-20", cpus, 16, &n, &st), -1);
}

/* Sizes in prose and in tables read alike: a space before the unit (topo
 * printed "memory 23.5GiB" under a table of "48 KiB"), and never an
 * exponent (1023.4 KiB printed as "1.02e+03KiB"). */
Test(core_parse, format_size)
{
	char b[32];
	cr_assert_str_eq(format_size(32768, b, sizeof b), "32 KiB");
	cr_assert_str_eq(format_size(1 << 20, b, sizeof b), "1 MiB");
	cr_assert_str_eq(format_size(1572864, b, sizeof b), "1.5 MiB");
	cr_assert_str_eq(format_size(100, b, sizeof b), "100 B");
	cr_assert_str_eq(format_size(25232932864ull, b, sizeof b), "23.5 GiB");
	cr_assert_str_eq(format_size(1047999, b, sizeof b), "1023 KiB");
	cr_assert_str_eq(format_size(272629760, b, sizeof b), "260 MiB");
}

/* Found by the core_parse fuzz target: strtol took "+1" and " 1" as CPU 1. */
Test(core_parse, a_cpu_list_is_digits_only)
{
	int cpus[8], n = 0;
	plumb_status status;
	const char *bad[] = { "+1", " 1", "1-+2", "1- 2", "-1", "0,+1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_neq(parse_cpu_list(bad[i], cpus, 8, &n, &status), 0, "'%s' was taken", bad[i]);
	cr_assert_eq(parse_cpu_list("0-2,5", cpus, 8, &n, &status), 0, "%s", status.message);
	cr_assert_eq(n, 4);
}

/* plumb report --program 'PROGRAM ARGS': words as a shell quotes them,
 * nothing expanded, and what a shell would expand refused (issue 29: no
 * command runs what a string says). */
static void words_are(const char *text, const char *const *expected)
{
	char **argv;
	size_t argc;
	plumb_status status;
	cr_assert_eq(parse_command_line(text, &argv, &argc, &status), 0, "%s: %s", text, status.message);
	size_t n = 0;
	while (expected[n])
		n++;
	cr_assert_eq(argc, n, "%s: %zu words", text, argc);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(argv[i], expected[i], "%s: word %zu", text, i);
	cr_assert_null(argv[n]);
	free(argv);
}

static void refused(const char *text, const char *said)
{
	char **argv = (char **)1;
	size_t argc = 7;
	plumb_status status;
	cr_assert_eq(parse_command_line(text, &argv, &argc, &status), -1, "%s", text);
	cr_assert_null(argv);
	cr_assert_eq(argc, 0);
	cr_assert(strstr(status.message, said), "%s: %s", text, status.message);
}

Test(core_parse, command_line_words)
{
	words_are("./prog 24576 64 200", (const char *const[]){ "./prog", "24576", "64", "200", NULL });
	words_are("  prog\t a  \n b ", (const char *const[]){ "prog", "a", "b", NULL });
	words_are("prog 'a b' \"c d\" e\\ f", (const char *const[]){ "prog", "a b", "c d", "e f", NULL });
	words_are("prog '$(touch x)' '`id`' ';' '|' '*' '~' '#'",
	          (const char *const[]){ "prog", "$(touch x)", "`id`", ";", "|", "*", "~", "#", NULL });
	words_are("prog \"a\\\"b\\\\c\" x'y'\"z\" ''", (const char *const[]){ "prog", "a\"b\\c", "xyz", "", NULL });
	words_are("prog \\$HOME a~b c#d", (const char *const[]){ "prog", "$HOME", "a~b", "c#d", NULL });
	words_are("x", (const char *const[]){ "x", NULL });
}

Test(core_parse, command_line_refuses_what_a_shell_would_expand)
{
	refused("", "empty");
	refused("   ", "empty");
	refused("prog 'a", "not closed");
	refused("prog \"a", "not closed");
	refused("prog a\\", "ends it");
	refused("prog; touch x", ";");
	refused("prog | cat", "|");
	refused("prog && x", "&");
	refused("prog > out", ">");
	refused("prog $(id)", "$");
	refused("prog `id`", "`");
	refused("prog $HOME", "$");
	refused("prog \"$HOME\"", "$");
	refused("prog \"`id`\"", "`");
	refused("prog *.c", "*");
	refused("prog ~/x", "~");
	refused("prog #comment", "#");
}
