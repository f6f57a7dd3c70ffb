/* End-to-end: plumb c2c, loaded and model as a user runs them. */
#include <criterion/criterion.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "run.h"

static json_object *parse_json(const cli_run *run)
{
	json_object *root = json_tokener_parse(run->out);
	cr_assert_not_null(root, "not JSON: %.300s", run->out);
	return root;
}

static json_object *cell(json_object *row, const char *column)
{
	json_object *c = NULL;
	cr_assert(json_object_object_get_ex(row, column, &c), "no column %s", column);
	return c;
}

static bool is_skipped(json_object *c)
{
	json_object *s;
	return json_object_is_type(c, json_type_object) && json_object_object_get_ex(c, "status", &s)
	       && !strcmp(json_object_get_string(s), "skipped");
}

static bool is_unsupported(json_object *c)
{
	json_object *s;
	return json_object_is_type(c, json_type_object) && json_object_object_get_ex(c, "status", &s)
	       && !strcmp(json_object_get_string(s), "unsupported");
}

static int allowed_cpus(void)
{
	cpu_set_t set;
	sched_getaffinity(0, sizeof set, &set);
	return CPU_COUNT(&set);
}

static void only_cpu0(void)
{
	/* Inherited by the plumb child: the same as running under taskset -c 0. */
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof set, &set), 0);
}

Test(mp_cli, help)
{
	const char *commands[] = { "c2c", "loaded", "model" };
	for (int i = 0; i < 3; i++) {
		cli_run run = cli_run_plumbv(NULL, commands[i], "--help", NULL);
		cr_expect_eq(run.exit_code, 0, "%s --help", commands[i]);
		char expected[64];
		snprintf(expected, sizeof expected, "usage: plumb %s", commands[i]);
		cr_expect(strstr(run.out, expected) != NULL, "%s", run.out);
		cli_run_free(&run);
	}
}

Test(mp_cli, bad_arguments)
{
	const char *cases[][6] = {
		{ "c2c", "--lines", "1", NULL },
		{ "c2c", "--only", "bogus", NULL },
		{ "c2c", "--pair", "0,0", NULL },
		{ "c2c", "--spacing", "100", NULL },
		{ "c2c", "--cpus", "9999", NULL },
		{ "c2c", "extra", NULL },
		{ "c2c", "--frobnicate", NULL },
		{ "loaded", "--pattern", "copy", NULL },
		{ "loaded", "--delays", "1,x", NULL },
		{ "loaded", "--size", "12", NULL },
		{ "loaded", "--cpus", "0,0", NULL },
		{ "model", NULL },
		{ "model", "--service", "195", NULL },
		{ "model", "--at", "5,abc", "--service", "1", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cli_run run = cli_run_plumb(NULL, cases[i]);
		cr_expect_eq(run.exit_code, 2, "%s %s: exit %d", cases[i][0], cases[i][1] ? cases[i][1] : "",
		             run.exit_code);
		cr_expect(strstr(run.err, "plumb ") != NULL && strchr(run.err, '\n') == run.err + strlen(run.err) - 1,
		          "one line on stderr: '%s'", run.err);
		cli_run_free(&run);
	}
}

Test(mp_cli, c2c_short_json, .timeout = 120)
{
	cli_run run = cli_run_plumbv(NULL, "c2c", "--lines", "256", "--trials", "3", "--round-trips", "300",
	                             "--duration", "5", "--json", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = parse_json(&run);
	json_object *states = cli_json_rows(root, "states");
	cr_expect_eq(json_object_array_length(states), 5);
	json_object *local = json_object_array_get_idx(states, 0);
	cr_expect_str_eq(json_object_get_string(cell(local, "state")), "local");
	cr_expect(json_object_is_type(cell(local, "load"), json_type_double));
	cli_json_table(root, "pairs");
	cli_json_table(root, "invalidate");
	cli_json_table(root, "false_sharing");
	if (allowed_cpus() >= 2) {
		json_object *m = json_object_array_get_idx(states, 1);
		cr_expect(json_object_get_double(cell(m, "load")) > 0);
	}
	json_object_put(root);
	cli_run_free(&run);
}

Test(mp_cli, c2c_matrix_csv, .timeout = 120)
{
	cli_run run = cli_run_plumbv(NULL, "c2c", "--matrix", "--only", "pairs", "--lines", "128", "--trials", "2",
	                             "--round-trips", "200", "--table", "matrix", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	cr_expect(strstr(run.out, "load_from_modified[ns]") != NULL);
	cli_run_free(&run);
}

Test(mp_cli, c2c_one_cpu_skips_with_reason, .timeout = 120)
{
	only_cpu0();
	cli_run run = cli_run_plumbv(NULL, "c2c", "--lines", "128", "--trials", "2", "--json", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = parse_json(&run);
	json_object *states = cli_json_rows(root, "states");
	json_object *local = json_object_array_get_idx(states, 0);
	cr_expect(json_object_is_type(cell(local, "load"), json_type_double), "local still measured");
	for (size_t i = 1; i < json_object_array_length(states); i++) {
		json_object *c = cell(json_object_array_get_idx(states, i), "load");
		cr_expect(is_skipped(c), "state row %zu not skipped", i);
		json_object *reason;
		cr_expect(json_object_object_get_ex(c, "reason", &reason)
		          && strstr(json_object_get_string(reason), "needs") != NULL);
	}
	json_object *fs = json_object_array_get_idx(cli_json_rows(root, "false_sharing"), 0);
	cr_expect(is_skipped(cell(fs, "slowdown")));
	json_object *inv = json_object_array_get_idx(cli_json_rows(root, "invalidate"), 0);
	cr_expect(is_skipped(cell(inv, "store")));
	json_object_put(root);
	cli_run_free(&run);
}

static const char *loaded_short[] = { "loaded", "--size", "1M", "--generator-size", "2M", "--loads", "20000",
                                      "--samples", "2", "--delays", "64,0", "--json", NULL };

Test(mp_cli, loaded_short_json_then_model, .timeout = 120)
{
	/* A generator that another program keeps off its CPU for the whole
	 * (short) measurement rightly counts 0 bytes; retry a few times. */
	cli_run run = { 0 };
	for (int attempt = 0; attempt < 5; attempt++) {
		if (attempt)
			cli_run_free(&run);
		/* Each retry samples 4x longer: a sample shorter than a scheduler
		 * slice can fall entirely in a time the generator is off its CPU. */
		static const char *const loads[] = { "20000", "80000", "320000", "1280000", "5120000" };
		const char *argv[sizeof loaded_short / sizeof loaded_short[0]];
		memcpy(argv, loaded_short, sizeof argv);
		argv[6] = loads[attempt];
		run = cli_run_plumb(NULL, argv);
		cr_assert_eq(run.exit_code, 0, "%s", run.err);
		json_object *root = parse_json(&run);
		json_object *r = cli_json_rows(root, "loaded");
		json_object *idle = json_object_array_get_idx(r, 0);
		cr_expect_str_eq(json_object_get_string(cell(idle, "delay")), "idle");
		cr_expect_eq(json_object_get_double(cell(idle, "generator_bandwidth")), 0);
		/* The idle check: lat's loop on the same chain, and its verdict. */
		json_object *checks = cli_json_rows(root, "checks");
		json_object *idle_check = json_object_array_get_idx(checks, 0);
		cr_expect_str_eq(json_object_get_string(cell(idle_check, "check")), "idle");
		const char *verdict = json_object_get_string(cell(idle_check, "verdict"));
		cr_expect(!strcmp(verdict, "agrees") || !strcmp(verdict, "disagrees"), "%s", verdict);
		cr_expect(json_object_get_double(cell(idle_check, "reference")) > 0);
		cr_expect_eq(json_object_get_double(cell(idle_check, "measured")),
		             json_object_get_double(cell(idle, "latency")), "the idle point's own latency");
		json_object *queueing = json_object_array_get_idx(checks, 1);
		cr_expect_str_eq(json_object_get_string(cell(queueing, "check")), "queueing");
		bool counted = true;
		if (allowed_cpus() >= 2) {
			verdict = json_object_get_string(cell(queueing, "verdict"));
			cr_expect(!strcmp(verdict, "consistent") || !strcmp(verdict, "step-not-queueing"), "%s", verdict);
			cr_assert_eq(json_object_array_length(r), 3);
			counted = json_object_get_double(cell(json_object_array_get_idx(r, 2), "generator_bandwidth")) > 0;
		}
		json_object_put(root);
		if (counted)
			break;
		cr_expect_lt(attempt, 4, "the generators never counted a byte in 5 runs");
	}
	const char *path = cli_temp_path("loaded.json");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(run.out, f);
	fclose(f);
	cli_run_free(&run);
	if (allowed_cpus() < 2)
		return;
	cli_run model = cli_run_plumbv(NULL, "model", "--from", path, "--json", NULL);
	cr_assert_eq(model.exit_code, 0, "%s", model.err);
	json_object *m = parse_json(&model);
	json_object *fit = json_object_array_get_idx(cli_json_rows(m, "fit"), 0);
	/* a curve that did not rise (two CPUs seldom load memory enough)
	 * determines no S: the cell says why instead of a number */
	json_object *service = cell(fit, "service_time"), *why;
	if (!strcmp(json_object_get_string(cell(fit, "shape")), "flat"))
		cr_expect(json_object_is_type(service, json_type_object) && json_object_object_get_ex(service, "reason", &why) &&
		          strstr(json_object_get_string(why), "does not rise"), "%s", json_object_get_string(service));
	else
		cr_expect(json_object_get_double(service) > 0);
	cr_expect_eq(json_object_get_int(cell(fit, "line")), 64, "line size read from the loaded metadata");
	json_object_put(m);
	cli_run_free(&model);
}

Test(mp_cli, loaded_one_cpu_idle_only, .timeout = 120)
{
	only_cpu0();
	cli_run run = cli_run_plumb(NULL, loaded_short);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = parse_json(&run);
	json_object *r = cli_json_rows(root, "loaded");
	cr_assert_eq(json_object_array_length(r), 2);
	cr_expect(json_object_get_double(cell(json_object_array_get_idx(r, 0), "latency")) > 0);
	json_object *skipped = cell(json_object_array_get_idx(r, 1), "latency");
	cr_expect(is_skipped(skipped));
	json_object *reason;
	cr_expect(json_object_object_get_ex(skipped, "reason", &reason)
	          && strstr(json_object_get_string(reason), "needs 2 CPUs") != NULL);
	/* One CPU: the idle check still runs; the queueing check says why not. */
	json_object *checks = cli_json_rows(root, "checks");
	const char *verdict = json_object_get_string(cell(json_object_array_get_idx(checks, 0), "verdict"));
	cr_expect(!strcmp(verdict, "agrees") || !strcmp(verdict, "disagrees"), "%s", verdict);
	json_object *q = cell(json_object_array_get_idx(checks, 1), "verdict");
	cr_expect(is_unsupported(q));
	cr_expect(json_object_object_get_ex(q, "reason", &reason)
	          && !strcmp(json_object_get_string(reason), "no loaded point"));
	json_object_put(root);
	cli_run_free(&run);
}

Test(mp_cli, model_thesis_oracle)
{
	cli_run run = cli_run_plumbv(NULL, "model", "--service", "195", "--l0", "338", "--line", "128", "--at",
	                             "41,121,233,336,484,538", "--json", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = parse_json(&run);
	json_object *r = cli_json_rows(root, "predict_contention");
	const double at[] = { 41, 121, 233, 336, 484, 538 }, expected[] = { 354, 394, 482, 623, 1133, 1639 };
	size_t n = json_object_array_length(r), found = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *row = json_object_array_get_idx(r, i);
		double c = json_object_get_double(cell(row, "contention"));
		for (int k = 0; k < 6; k++)
			if (c == at[k]) {
				cr_expect(fabs(json_object_get_double(cell(row, "latency")) - expected[k]) <= 1.0);
				found++;
			}
	}
	cr_expect_eq(found, 6);
	json_object_put(root);
	cli_run_free(&run);
}

Test(mp_cli, model_from_csv_and_bad_files)
{
	const char *good = cli_temp_path("points.csv");
	FILE *f = fopen(good, "w");
	fputs("# Table 5.1\nbandwidth,latency\n0,338\n41,371\n121,421\n233,483\n336,572\n484,915\n538,1462\n", f);
	fclose(f);
	cli_run run = cli_run_plumbv(NULL, "model", "--from", good, "--line", "128", "--table", "fit", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	cr_expect(strstr(run.out, "189.") != NULL, "S near 189: %s", run.out);
	cli_run_free(&run);

	const char *bad = cli_temp_path("bad.csv");
	f = fopen(bad, "w");
	fputs("0,100\n5,oops\n", f);
	fclose(f);
	run = cli_run_plumbv(NULL, "model", "--from", bad, NULL);
	cr_expect_eq(run.exit_code, 1);
	cr_expect(strstr(run.err, "bad.csv:2: latency 'oops' is not a number") != NULL, "%s", run.err);
	cli_run_free(&run);

	run = cli_run_plumbv(NULL, "model", "--from", "/nonexistent/x.csv", NULL);
	cr_expect_eq(run.exit_code, 1);
	cr_expect(strstr(run.err, "/nonexistent/x.csv") != NULL);
	cli_run_free(&run);

	run = cli_run_plumbv("{\"tables\": [", "model", "--from", "-", NULL);
	cr_expect_eq(run.exit_code, 1);
	cr_expect(strstr(run.err, "not valid JSON") != NULL, "%s", run.err);
	cli_run_free(&run);
}

Test(mp_cli, loaded_write_and_mixed_patterns, .timeout = 120)
{
	const char *patterns[] = { "write", "mixed" };
	for (int i = 0; i < 2; i++) {
		cli_run run = cli_run_plumbv(NULL, "loaded", "--pattern", patterns[i], "--size", "1M", "--generator-size",
		                             "1M", "--loads", "2000", "--samples", "1", "--delays", "0", "--table", "meta", NULL);
		cr_assert_eq(run.exit_code, 0, "%s: %s", patterns[i], run.err);
		char meta[64];
		snprintf(meta, sizeof meta, "\npattern,%s\n", patterns[i]);
		cr_expect(strstr(run.out, meta) != NULL, "%s", run.out);
		cli_run_free(&run);
	}
}

Test(mp_cli, c2c_pair_matrix_json, .timeout = 120)
{
	if (allowed_cpus() < 2)
		cr_skip_test("needs 2 CPUs");
	cli_run run = cli_run_plumbv(NULL, "c2c", "--matrix", "--only", "pairs", "--lines", "128", "--trials", "2",
	                             "--round-trips", "200", "--json", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = parse_json(&run);
	json_object *r = cli_json_rows(root, "matrix");
	int n = allowed_cpus();
	cr_expect_eq((int)json_object_array_length(r), n * (n - 1), "every ordered pair");
	json_object *first = json_object_array_get_idx(r, 0);
	cr_expect_neq(json_object_get_int(cell(first, "cpu_a")), json_object_get_int(cell(first, "cpu_b")));
	cr_expect(json_object_get_double(cell(first, "pingpong_round_trip")) > 0);
	json_object_put(root);
	cli_run_free(&run);
}

/* --trials governs the ping-pong too (it used to run 7 whatever the option). */
Test(mp_cli, c2c_pingpong_honours_trials, .timeout = 120)
{
	if (allowed_cpus() < 2)
		cr_skip_test("needs 2 CPUs");
	cli_run run = cli_run_plumbv(NULL, "c2c", "--only", "pairs", "--lines", "64", "--trials", "3",
	                             "--round-trips", "100", "--json", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = parse_json(&run);
	json_object *rows = cli_json_rows(root, "pairs");
	int measured = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *c = cell(json_object_array_get_idx(rows, i), "pingpong_trials");
		cr_assert(c != NULL, "pairs has a pingpong_trials column");
		if (json_object_is_type(c, json_type_int)) {
			cr_expect_eq(json_object_get_int(c), 3, "row %zu ran the ping-pong --trials times", i);
			measured++;
		}
	}
	cr_expect(measured > 0, "at least one pair was measured");
	json_object_put(root);
	cli_run_free(&run);
}

/* The coherence kernels are what they claim: the built program's
 * coherence_time_access holds a locked xadd, a locked cmpxchg and an
 * mfence (inline assembly the compiler cannot turn into plain loads). */
Test(mp_cli, coherence_kernels_disassemble_as_claimed)
{
	if (system("objdump --version >/dev/null 2>&1") != 0)
		cr_skip_test("objdump is not installed");
	char command[1024];
	snprintf(command, sizeof command,
	         "objdump -d --no-show-raw-insn --disassemble=coherence_time_access '%s' 2>/dev/null", getenv("PLUMB_BIN"));
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	char line[512];
	bool xadd = false, cmpxchg = false, mfence = false;
	while (fgets(line, sizeof line, pipe)) {
		xadd |= strstr(line, "lock xadd") != NULL;
		cmpxchg |= strstr(line, "lock cmpxchg") != NULL;
		mfence |= strstr(line, "mfence") != NULL;
	}
	pclose(pipe);
	cr_expect(xadd, "no lock xadd in coherence_time_access");
	cr_expect(cmpxchg, "no lock cmpxchg in coherence_time_access");
	cr_expect(mfence, "no mfence in coherence_time_access");
}

/* Issue 29: a UTF-8 byte-order mark (what spreadsheets put before a saved
 * CSV) is skipped.  It made the first row's number unreadable, and that row
 * was taken for a header and dropped: the fit then used one point less. */
Test(mp_cli, model_csv_with_a_byte_order_mark)
{
	const char *rows = "0,338\n41,371\n121,421\n233,483\n336,572\n484,915\n538,1462\n";
	const char *plain = cli_temp_path("plain.csv"), *marked = cli_temp_path("marked.csv");
	FILE *f = fopen(plain, "w");
	fputs(rows, f);
	fclose(f);
	f = fopen(marked, "w");
	fputs("\xEF\xBB\xBF", f);
	fputs(rows, f);
	fclose(f);
	cli_run a = cli_run_plumbv(NULL, "model", "--from", plain, "--line", "128", "--csv", "--table", "points", NULL);
	cli_run b = cli_run_plumbv(NULL, "model", "--from", marked, "--line", "128", "--csv", "--table", "points", NULL);
	cr_assert_eq(a.exit_code, 0, "%s", a.err);
	cr_assert_eq(b.exit_code, 0, "%s", b.err);
	cr_assert_str_eq(b.out, a.out, "with the mark:\n%s\nwithout:\n%s", b.out, a.out);
	cr_assert(strstr(a.out, "338") != NULL, "%s", a.out);
	cli_run_free(&a);
	cli_run_free(&b);
}

/* --peak-at-least: the thesis's table 5.1 fits S near 189 ns (a peak of
 * 677 MB/s at 128-byte lines); a memory known to move 1000 MB/s holds S to
 * 128 ns, said in the fit's shape and its note, with the free S beside it. */
Test(mp_cli, model_peak_at_least_holds_the_fit_to_a_measured_bandwidth)
{
	const char *points = cli_temp_path("table51.csv");
	FILE *f = fopen(points, "w");
	fputs("0,338\n41,371\n121,421\n233,483\n336,572\n484,915\n538,1462\n", f);
	fclose(f);
	cli_run run = cli_run_plumbv(NULL, "model", "--from", points, "--line-size", "128", "--peak-at-least", "1000",
	                             "--json", NULL);
	cr_assert_eq(run.exit_code, 0, "%s", run.err);
	json_object *root = json_tokener_parse(run.out), *tables, *t, *rows, *row, *v;
	cr_assert_not_null(root, "%s", run.out);
	cr_assert(json_object_object_get_ex(root, "tables", &tables));
	bool seen = false;
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		t = json_object_array_get_idx(tables, i);
		if (!json_object_object_get_ex(t, "name", &v) || strcmp(json_object_get_string(v), "fit"))
			continue;
		cr_assert(json_object_object_get_ex(t, "rows", &rows));
		row = json_object_array_get_idx(rows, 0);
		cr_assert(json_object_object_get_ex(row, "service_time", &v));
		cr_expect(fabs(json_object_get_double(v) - 128) < 0.01, "S %g", json_object_get_double(v));
		cr_assert(json_object_object_get_ex(row, "free_service_time", &v));
		cr_expect(fabs(json_object_get_double(v) - 189.2) < 0.6, "free S %g", json_object_get_double(v));
		cr_assert(json_object_object_get_ex(row, "shape", &v));
		cr_expect_str_eq(json_object_get_string(v), "at the measured bandwidth");
		seen = true;
	}
	cr_expect(seen, "%s", run.out);
	cr_expect(strstr(run.out, "S is held to line / 1000 MB/s") != NULL, "%s", run.out);
	json_object_put(root);
	cli_run_free(&run);
	/* bad values, and a bound with nothing to fit */
	const char *bad[] = { "0", "-5", "lots", "1e13" };
	for (size_t i = 0; i < 4; i++) {
		run = cli_run_plumbv(NULL, "model", "--from", points, "--peak-at-least", bad[i], NULL);
		cr_expect_eq(run.exit_code, 2, "%s: %s", bad[i], run.err);
		cr_expect(strstr(run.err, "--peak-at-least") != NULL, "%s", run.err);
		cli_run_free(&run);
	}
	run = cli_run_plumbv(NULL, "model", "--service", "10", "--l0", "100", "--peak-at-least", "1000", NULL);
	cr_expect_eq(run.exit_code, 2, "%s", run.err);
	cr_expect(strstr(run.err, "--peak-at-least bounds a fit") != NULL, "%s", run.err);
	cli_run_free(&run);
}
