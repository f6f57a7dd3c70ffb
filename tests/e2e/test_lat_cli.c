/* plumb lat end to end: help, short JSON runs parsed with json-c, bad
 * arguments, and a check of the generated chase loops in the program. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

Test(lat_cli, help)
{
	cli_run r = cli_run_plumbv(NULL, "lat", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb lat"));
	cr_assert(strstr(r.out, "--restart"));
	cr_assert(strstr(r.out, "--mlp"));
	cr_assert_str_eq(r.err, "");
	cli_run_free(&r);
}

Test(lat_cli, bad_arguments_give_one_line_and_exit_2)
{
	const char *cases[][4] = {
		{ "lat", "--min", "12Q", NULL },
		{ "lat", "--max", "", NULL },
		{ "lat", "--points-per-octave", "0", NULL },
		{ "lat", "--points-per-octave", "x", NULL },
		{ "lat", "--pattern", "spiral", NULL },
		{ "lat", "--pages", "giant", NULL },
		{ "lat", "--line", "48", NULL },
		{ "lat", "--max-chains", "33", NULL },
		{ "lat", "--ci", "0", NULL },
		{ "lat", "--time-cap", "-5", NULL },
		{ "lat", "--cpu", "-1", NULL },
		{ "lat", "--max", "1K", NULL },
		{ "lat", "--bogus", NULL, NULL },
		{ "lat", "--min", NULL, NULL },
		{ "lat", "extra", NULL, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cli_run r = cli_run_plumb(NULL, cases[i]);
		cli_assert_usage_error(&r, "lat");
		cli_run_free(&r);
	}
}

/* --stride 0 once ran with a 64-byte stride, --page-group 0 with the page size. */
Test(lat_cli, a_zero_stride_or_page_group_is_refused_not_replaced)
{
	cli_run r = cli_run_plumbv(NULL, "lat", "--pattern", "strided", "--stride", "0", NULL);
	cli_assert_usage_error(&r, "lat");
	cr_assert_str_eq(r.err, "plumb lat: --stride: 0 bytes is not a stride; give a positive size such as 64 or 4K "
	                        "(see 'plumb lat --help')\n");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "lat", "--pattern", "page", "--page-group", "0", NULL);
	cli_assert_usage_error(&r, "lat");
	cr_assert_str_eq(r.err, "plumb lat: --page-group: 0 bytes is not a group size; give a positive size such as 4K "
	                        "(see 'plumb lat --help')\n");
	cli_run_free(&r);
}

Test(lat_cli, layouts_that_cannot_be_built_fail_with_one_line)
{
	/* A page group that is not a whole number of lines: a failure of the
	 * run (exit 1), reported in one line. */
	cli_run r = cli_run_plumbv(NULL, "lat", "--pattern", "page", "--page-group", "100", "--max", "64K", NULL);
	cr_assert_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err);
	cr_assert(strncmp(r.err, "plumb lat: ", 11) == 0, "%s", r.err);
	cr_assert_str_eq(strchr(r.err, '\n') + 1, "");
	cli_run_free(&r);
}

Test(lat_cli, hugetlb_without_a_pool_fails_cleanly, .timeout = 60)
{
	/* With no huge pages reserved this must be one error line and exit 1
	 * (it used to die of SIGBUS on the first touch); with a pool, a run. */
	cli_run r = cli_run_plumbv(NULL, "lat", "--pages", "hugetlb", "--max", "64K", "--time-cap", "10", NULL);
	cr_assert(r.exit_code == 0 || r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
	if (r.exit_code == 1) {
		cr_assert(strstr(r.err, "hugetlb"), "%s", r.err);
		cr_assert_str_eq(strchr(r.err, '\n') + 1, "");
	}
	cli_run_free(&r);
}

static double number(json_object *row, const char *key)
{
	json_object *v;
	cr_assert(json_object_object_get_ex(row, key, &v), "no %s", key);
	cr_assert(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int), "%s: %s", key,
	          json_object_to_json_string(v));
	return json_object_get_double(v);
}

Test(lat_cli, short_json_run, .timeout = 60)
{
	cli_run r = cli_run_plumbv(NULL, "lat", "--min", "4K", "--max", "256K", "--time-cap", "20", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "not JSON: %s", r.out);
	json_object *v, *meta;
	cr_assert(json_object_object_get_ex(root, "command", &v));
	cr_assert_str_eq(json_object_get_string(v), "lat");
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert_gt(number(meta, "timer_ticks_per_ns"), 0);
	cr_assert(json_object_object_get_ex(meta, "pages_obtained", &v));
	json_object *sweep = cli_json_rows(root, "sweep");
	cr_assert_eq(json_object_array_length(sweep), 25, "4K..256K at 4 per octave");
	double previous = 0;
	for (size_t i = 0; i < json_object_array_length(sweep); i++) {
		json_object *row = json_object_array_get_idx(sweep, i);
		double bytes = number(row, "bytes");
		cr_assert_gt(bytes, previous);
		previous = bytes;
		cr_assert_gt(number(row, "latency"), 0);
		cr_assert_gt(number(row, "tsc_cycles"), 0);
		cr_assert_geq(number(row, "cv"), 0);
		cr_assert_gt(number(row, "samples"), 0);
		cr_assert(json_object_object_get_ex(row, "label", &v));
		cr_assert(!strcmp(json_object_get_string(v), "ok") || !strcmp(json_object_get_string(v), "noisy"));
	}
	json_object *levels = cli_json_rows(root, "levels");
	cr_assert_geq(json_object_array_length(levels), 1);
	double last = 0;
	for (size_t i = 0; i < json_object_array_length(levels); i++) {
		double ns = number(json_object_array_get_idx(levels, i), "latency");
		cr_assert_gt(ns, last, "levels come out in increasing latency");
		last = ns;
	}
	json_object_put(root);
	cli_run_free(&r);
}

static const char *meta_text(json_object *meta, const char *key)
{
	json_object *v;
	cr_assert(json_object_object_get_ex(meta, key, &v), "no meta %s", key);
	return json_object_get_string(v);
}

/* Another tool's pattern brings its slot, block and pages; an option the
 * user gives wins, wherever it stands on the line. */
Test(lat_cli, named_patterns_of_other_tools, .timeout = 60)
{
	cli_run r = cli_run_plumbv(NULL, "lat", "--pattern", "multichase", "--min-size", "1M", "--max-size", "1M",
	                           "--single-pass", "--time-cap", "20", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out), *meta;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_expect_str_eq(meta_text(meta, "pattern"), "multichase");
	cr_expect_eq(number(meta, "line_bytes"), 256);
	cr_expect_eq(number(meta, "page_group_bytes"), 262144);
	cr_expect_str_eq(meta_text(meta, "pages_requested"), "small");
	json_object_put(root);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "lat", "--pages", "thp", "--line-size", "128", "--pattern", "lmbench-thrash", "--min-size",
	                   "1M", "--max-size", "1M", "--single-pass", "--time-cap", "20", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	root = json_tokener_parse(r.out);
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_expect_str_eq(meta_text(meta, "pattern"), "lmbench-thrash");
	cr_expect_eq(number(meta, "line_bytes"), 128, "lmbench's stride is --line-size");
	cr_expect_eq(number(meta, "page_group_bytes"), 4096);
	cr_expect_str_eq(meta_text(meta, "pages_requested"), "thp");
	json_object_put(root);
	cli_run_free(&r);

	/* lat_mem_rd's default: a forward walk, no page group. */
	r = cli_run_plumbv(NULL, "lat", "--pattern", "lmbench", "--min-size", "1M", "--max-size", "1M", "--single-pass",
	                   "--time-cap", "20", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	root = json_tokener_parse(r.out);
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_expect_str_eq(meta_text(meta, "pattern"), "lmbench");
	cr_expect_eq(number(meta, "line_bytes"), 64);
	cr_expect_str_eq(meta_text(meta, "pages_requested"), "default");
	json_object_put(root);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "lat", "--pattern", "stream", NULL);
	cr_expect_eq(r.exit_code, 2);
	cr_expect(strstr(r.err, "lmbench, lmbench-thrash, lmbench-line, lmbench2, multichase") != NULL, "%s", r.err);
	cli_run_free(&r);
}

/* What lat measures independently must agree within generous ratios; a
 * neighbour can still disturb one whole probe (a landing under load 16 saw
 * back-to-back 3.41 ns against an L1 plateau of 0.95 ns), so the ratios get
 * three runs, as the unit tests' orderings do.  The structure is asserted
 * on every run. */
static bool restart_and_mlp_agree(json_object *root, char *why, size_t length)
{
	json_object *levels = cli_json_rows(root, "levels");
	size_t n = json_object_array_length(levels);
	cr_assert_geq(n, 1);
	json_object *restart = cli_json_rows(root, "restart"), *mlp = cli_json_rows(root, "mlp");
	cr_assert_eq(json_object_array_length(restart), n);
	cr_assert_eq(json_object_array_length(mlp), n);
	cr_assert_eq(json_object_array_length(cli_json_rows(root, "mlp_curve")), 4 * n);
	/* restart + fill == back-to-back holds by construction; each probe lies
	 * on its level's plateau, the restart sweep's back-to-back latency and
	 * the MLP sweep's one-chain latency are the level's latency measured
	 * again, and the slope fitted to t(k) is the separately calibrated cost
	 * of a work unit. */
	for (size_t i = 0; i < n; i++) {
		json_object *level = json_object_array_get_idx(levels, i), *row = json_object_array_get_idx(restart, i),
		            *parallel = json_object_array_get_idx(mlp, i);
		double latency = number(level, "latency"), probe = number(row, "probe");
		cr_assert(probe >= number(level, "plateau_from") && probe <= number(level, "plateau_to"), "level %zu: probe %g",
		          i, probe);
		cr_assert_eq(number(parallel, "probe"), probe);
		double b2b = number(row, "back_to_back"), restart_ns = number(row, "restart"), fill = number(row, "fill");
		cr_assert_geq(fill, 0);
		cr_assert_leq(restart_ns, b2b);
		cr_assert_float_eq(restart_ns + fill, b2b, 1e-6 * b2b);
		cr_assert_gt(number(parallel, "peak"), 0);
		double slope = number(row, "slope"), unit = number(row, "work_unit");
		double one_chain = number(parallel, "one_chain"), outstanding = number(parallel, "outstanding");
		if (!(b2b > latency / 2 && b2b < latency * 2))
			snprintf(why, length, "level %zu: back-to-back %g ns, plateau %g ns", i, b2b, latency);
		else if (!(slope > unit / 2 && slope < unit * 2))
			snprintf(why, length, "level %zu: slope %g ns, work unit %g ns", i, slope, unit);
		else if (!(one_chain > latency / 2 && one_chain < latency * 2))
			snprintf(why, length, "level %zu: one chain %g ns, plateau %g ns", i, one_chain, latency);
		else if (!(outstanding >= 0.5 && outstanding <= 4.5))
			snprintf(why, length, "level %zu: %g outstanding with 4 chains", i, outstanding);
		else
			continue;
		return false;
	}
	return true;
}

Test(lat_cli, restart_and_mlp_run, .timeout = 240)
{
	char why[200] = "";
	bool agree = false;
	for (int attempt = 0; attempt < 3 && !agree; attempt++) {
		cli_run r = cli_run_plumbv(NULL, "lat", "--min", "4K", "--max", "128K", "--points-per-octave", "2",
		                           "--restart", "--mlp", "--max-chains", "4", "--time-cap", "10", "--json", NULL);
		cr_assert_eq(r.exit_code, 0, "%s", r.err);
		json_object *root = json_tokener_parse(r.out);
		cr_assert_not_null(root, "not JSON: %s", r.out);
		agree = restart_and_mlp_agree(root, why, sizeof why);
		json_object_put(root);
		cli_run_free(&r);
	}
	cr_assert(agree, "%s (three runs)", why);
}

Test(lat_cli, csv_and_table_formats, .timeout = 60)
{
	cli_run r = cli_run_plumbv(NULL, "lat", "--min", "4K", "--max", "16K", "--time-cap", "10", "--table", "sweep", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_null(strstr(r.out, "# "));
	cr_assert(strstr(r.out, "latency[ns]"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "lat", "--min", "4K", "--max", "16K", "--time-cap", "10", "--pattern", "strided", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "pattern: strided"));
	cli_run_free(&r);
}

/* In a sanitizer build (of the tests and so of the program) every load
 * carries a shadow-memory check, so the code check does not apply and is
 * not compiled. */
#if defined(__SANITIZE_ADDRESS__)
#define LAT_CODE_CHECK_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAT_CODE_CHECK_DISABLED 1
#endif
#endif
#ifndef LAT_CODE_CHECK_DISABLED
#define LAT_CODE_CHECK_DISABLED 0
#endif

#if !LAT_CODE_CHECK_DISABLED
/* The chase loop must be what docs/latency.md says: each step one load
 * whose address register is its destination (true dependence), 16 per
 * iteration; the restart kernel has exactly k adds per load. */
static char *disassemble(const char *symbol)
{
	char command[1024];
	snprintf(command, sizeof command, "objdump -d --no-show-raw-insn --disassemble=%s '%s' 2>/dev/null", symbol,
	         getenv("PLUMB_BIN"));
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	size_t capacity = 1 << 16, length = 0, n;
	char *text = malloc(capacity);
	while ((n = fread(text + length, 1, capacity - length - 1, pipe)) > 0) {
		length += n;
		if (capacity - length < 2) {
			capacity *= 2;
			text = realloc(text, capacity);
		}
	}
	text[length] = 0;
	pclose(pipe);
	return text;
}

typedef struct code_counts {
	int loads, dependent_loads, longest_run, register_adds;
} code_counts;

static code_counts count_code(const char *code)
{
	code_counts c = { 0, 0, 0, 0 };
	int run = 0;
	for (const char *line = code; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char instruction[256];
		size_t length = strcspn(line, "\n");
		if (length >= sizeof instruction)
			length = sizeof instruction - 1;
		memcpy(instruction, line, length);
		instruction[length] = 0;
		char *tab = strchr(instruction, '\t');
		if (!tab || !strchr(instruction, ':'))
			continue;
		char source[16], destination[16];
		if (sscanf(tab + 1, "mov (%%%15[a-z0-9]),%%%15[a-z0-9]", source, destination) == 2) {
			c.loads++;
			if (strcmp(source, destination) == 0) {
				c.dependent_loads++;
				if (++run > c.longest_run)
					c.longest_run = run;
			}
			continue;
		}
		if (sscanf(tab + 1, "add %%%15[a-z0-9],%%%15[a-z0-9]", source, destination) == 2)
			c.register_adds++;
		/* Any other memory access fails the test (nop and lea only look
		 * like one). */
		if (strchr(tab + 1, '(') && !strstr(tab + 1, "nop") && strncmp(tab + 1, "lea", 3) != 0)
			c.loads += 1000;
		run = 0;
	}
	return c;
}

Test(lat_cli, chase_loops_compile_to_dependent_loads)
{
	if (system("objdump --version >/dev/null 2>&1") != 0)
		cr_skip_test("objdump is not installed");
	char *code = disassemble("chase_run");
	cr_assert(strstr(code, "ret"), "chase_run not found in the program");
	code_counts c = count_code(code);
	cr_assert_eq(c.loads, c.dependent_loads, "chase_run has loads that are not p = *p:\n%s", code);
	cr_assert_geq(c.longest_run, 16, "the unrolled body is not 16 back-to-back dependent loads:\n%s", code);
	free(code);
	code = disassemble("chase_work_8");
	cr_assert(strstr(code, "ret"), "chase_work_8 not found in the program");
	c = count_code(code);
	cr_assert_gt(c.loads, 0);
	cr_assert_eq(c.register_adds, 8 * c.loads, "chase_work_8: %d loads, %d adds:\n%s", c.loads, c.register_adds, code);
	free(code);
}
#endif
