/* End-to-end: plumb validate through the built program. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run.h"
#include "../capability.h"

/* The verdict rows of a JSON report. */
static const char *text(json_object *row, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(row, key, &v) || !v) return "";
	if (json_object_is_type(v, json_type_object)) {
		json_object *status;
		if (json_object_object_get_ex(v, "status", &status)) return json_object_get_string(status);
	}
	return json_object_get_string(v);
}

Test(validate_cli, help_and_list)
{
	cli_run r = cli_run_plumbv(NULL, "validate", "--help", NULL);
	cr_expect_eq(r.exit_code, 0);
	cr_expect(strstr(r.out, "usage: plumb validate") != NULL);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "--list", NULL);
	cr_expect_eq(r.exit_code, 0);
	cr_expect(strstr(r.out, "page-faults") && strstr(r.out, "PAPI_CA_ITV") && strstr(r.out, "icache"));
	/* Aguilera et al.'s (2005) remaining cases: issued instructions, the L2
	 * instruction cache, single precision, divides. */
	const char *const later[] = { "issued", "PAPI_TOT_IIS", "icache-l2", "PAPI_L2_ICM", "fp-single",
	                              "PAPI_SP_OPS", "fp-div", "PAPI_FDV_INS" };
	for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
		cr_expect(strstr(r.out, later[i]) != NULL, "--list lacks %s", later[i]);
	cli_run_free(&r);
}

/* Every counted case first runs its kernel once with the loop's trips
 * counted by execute breakpoints: the iterations table shows what was
 * counted, never the model's formula again. */
Test(validate_cli, counted_cases_check_the_trips_their_loop_ran)
{
	REQUIRE_COUNTER_BACKEND("perf");
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "2", "--sizes",
	                           "1,10,100", "--no-record", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	json_object *rows = cli_json_rows(root, "iterations");
	cr_assert_not_null(rows);
	cr_assert_eq(json_object_array_length(rows), 3);
	static const long long expected[] = { 1, 10, 100 };
	for (size_t i = 0; i < 3; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		cr_expect_str_eq(text(row, "benchmark"), "page-faults");
		if (!strcmp(text(row, "status"), "unsupported")) {
			cr_expect(strstr(text(row, "detail"), "breakpoint") != NULL, "%s", text(row, "detail"));
			continue;
		}
		cr_expect_str_eq(text(row, "status"), "ok", "%s", text(row, "detail"));
		json_object *v;
		cr_assert(json_object_object_get_ex(row, "counted", &v));
		cr_expect_eq(json_object_get_int64(v), expected[i]);
		cr_assert(json_object_object_get_ex(row, "expected", &v));
		cr_expect_eq(json_object_get_int64(v), expected[i]);
	}
	json_object_put(root);
	cli_run_free(&r);
	/* Above --check-trips a case is not checked, and says why. */
	r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "1", "--sizes", "10,1000",
	                   "--check-trips", "100", "--no-record", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	root = json_tokener_parse(r.out);
	rows = cli_json_rows(root, "iterations");
	cr_assert_eq(json_object_array_length(rows), 2);
	json_object *big = json_object_array_get_idx(rows, 1);
	cr_expect_str_eq(text(big, "status"), "not-checked");
	cr_expect(strstr(text(big, "detail"), "1000 trips exceed the 100") != NULL, "%s", text(big, "detail"));
	json_object_put(root);
	cli_run_free(&r);
}

Test(validate_cli, bad_input_is_one_line_and_exit_2)
{
	const char *const cases[][4] = {
		{ "validate", "--runs", "0", NULL },
		{ "validate", "no-such-event", NULL, NULL },
		{ "validate", "--backend", "oracle", NULL },
		{ "validate", "--sizes", "1,x", NULL },
		{ "validate", "--plot-format", "gif", NULL },
		{ "validate", "--bogus", NULL, NULL },
		{ "validate", "--sim-set", "prefetch=psychic", NULL },
		{ "validate", "--sim-set", "l1d.size", NULL },
		{ "validate", "--check-trips", "x", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cli_run r = cli_run_plumb(NULL, cases[i]);
		cr_expect_eq(r.exit_code, 2, "%s %s: exit %d", cases[i][1], cases[i][2] ? cases[i][2] : "", r.exit_code);
		cr_expect(strncmp(r.err, "plumb validate: ", 16) == 0, "stderr: %s", r.err);
		cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
		cli_run_free(&r);
	}
}

Test(validate_cli, page_faults_validate_exactly_through_perf_and_papi)
{
	REQUIRE_COUNTER_BACKEND("perf");
	REQUIRE_COUNTER_BACKEND("papi");
	cli_run r = cli_run_plumbv(NULL, "validate", "minor-faults", "--backend", "perf,papi", "--runs", "3",
	                           "--sizes", "1,10,100,1000", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	json_object *rows = cli_json_rows(root, "verdict");
	size_t exact = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		cr_expect_str_eq(text(row, "class"), "exact", "%s %s", text(row, "benchmark"), text(row, "source"));
		exact++;
	}
	cr_expect_eq(exact, 8);   /* page-faults, dtlb, padding, padding-misaligned x perf, PAPI */
	json_object_put(root);
	cli_run_free(&r);
}

Test(validate_cli, hardware_events_are_unsupported_with_a_reason)
{
	cli_run r = cli_run_plumbv(NULL, "validate", "PAPI_L1_DCM", "--backend", "perf,papi", "--runs", "2",
	                           "--sizes", "1,10", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "verdict");
	cr_assert_gt(json_object_array_length(rows), 0);
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		/* This machine has no PMU; where one exists the rows carry classes. */
		if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0) {
			cr_expect_str_eq(text(row, "status"), "unsupported");
			cr_expect_str_eq(text(row, "class"), "unsupported");
			cr_expect_gt(strlen(text(row, "detail")), 10);
		}
	}
	json_object_put(root);
	cli_run_free(&r);
}

Test(validate_cli, instrumented_counts_are_exact_for_the_instruction_kernels, .timeout = 120)
{
	cli_run v = cli_run_plumbv(NULL, "validate", "--help", NULL);
	cli_run_free(&v);
	if (system("valgrind --version >/dev/null 2>&1") != 0) cr_skip_test("valgrind is not installed");
	/* "instructions" names the benchmark and the event, which issued counts
	 * too: loads, stores, instructions, and issued's two events. */
	cli_run r = cli_run_plumbv(NULL, "validate", "loads,stores,instructions,issued", "--backend", "instrumented",
	                           "--sizes", "1,100,10000", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "verdict");
	cr_assert_eq(json_object_array_length(rows), 5);
	for (size_t i = 0; i < 5; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		if (!strcmp(text(row, "status"), "unsupported") && strstr(text(row, "detail"), "valgrind")) {
			cr_skip_test("%s", text(row, "detail"));   /* e.g. the ASan build */
			break;
		}
		if (!strcmp(text(row, "event"), "PAPI_TOT_IIS")) {   /* issued micro-ops: no Valgrind tool */
			cr_expect_str_eq(text(row, "status"), "unsupported");
			continue;
		}
		cr_expect_str_eq(text(row, "class"), "exact", "%s: %s", text(row, "benchmark"), text(row, "detail"));
	}
	json_object_put(root);
	cli_run_free(&r);
}

/* The emitter check traces one size of each benchmark under plumbgrind:
 * 100 elements, but 10 for inv, whose every round hands the line to the
 * other thread and so, under Valgrind's one thread at a time, waits out a
 * time slice (100 rounds took 11-18 s of a 2-3 minute validate). */
Test(validate_cli, the_emitter_check_of_a_ping_pong_traces_ten_rounds, .timeout = 120)
{
	cli_need_plumbgrind();
	if (system("valgrind --version >/dev/null 2>&1") != 0) cr_skip_test("valgrind is not installed");
	cli_run r = cli_run_plumbv(NULL, "validate", "inv,shr", "--backend", "sim,instrumented", "--sizes", "1,10,100",
	                           NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	if (strstr(r.out, "emitter check: not run"))
		cr_skip_test("%s", strstr(r.out, "emitter check: not run"));   /* e.g. the ASan build */
	cr_expect(strstr(r.out, "emitter check, inv at 10: agrees"), "%s", r.out);
	cr_expect(strstr(r.out, "emitter check, shr at 100: agrees"), "%s", r.out);
	cli_run_free(&r);
}

Test(validate_cli, output_directory_has_raw_runs_and_a_plot)
{
	const char *dir = cli_temp_path("validate-out");
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "4", "--sizes",
	                           "1,10,100", "-d", dir, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	char path[1024];
	snprintf(path, sizeof path, "%s/validate.json", dir);
	json_object *root = json_object_from_file(path);
	cr_assert_not_null(root, "%s", path);
	json_object *tables;
	json_object_object_get_ex(root, "tables", &tables);
	size_t raw_rows = 0;
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		json_object *t = json_object_array_get_idx(tables, i), *name, *rows;
		json_object_object_get_ex(t, "name", &name);
		if (!strcmp(json_object_get_string(name), "runs") && json_object_object_get_ex(t, "rows", &rows))
			raw_rows = json_object_array_length(rows);
	}
	cr_expect_eq(raw_rows, 12, "3 sizes x 4 runs, got %zu", raw_rows);
	json_object_put(root);
	snprintf(path, sizeof path, "%s/validate.csv", dir);
	cr_expect_eq(access(path, R_OK), 0);
	snprintf(path, sizeof path, "%s/validate-plot.gp", dir);
	cr_expect_eq(access(path, R_OK), 0);
	if (system("gnuplot --version >/dev/null 2>&1") == 0) {
		snprintf(path, sizeof path, "%s/validate.png", dir);
		struct stat st;
		cr_expect(stat(path, &st) == 0 && st.st_size > 1000, "%s", r.err);
	} else {
		cr_expect(strstr(r.err, "gnuplot") != NULL);
	}
	cli_run_free(&r);
}

Test(validate_cli, padding_sweep_finds_the_page_start, .timeout = 120)
{
	/* An array 16 bytes past a page (glibc's malloc header): the pad that
	 * halves the faults is 4076 (notes 000 section 8.2); at 688 it is 3404. */
	cli_run r = cli_run_plumbv(NULL, "validate", "--find-padding", "--pairs", "4", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"found_pad\":4076") || strstr(r.out, "\"found_pad\": 4076"), "%s", r.out);
	cr_expect(strstr(r.out, "\"agrees\":\"yes\"") || strstr(r.out, "\"agrees\": \"yes\""));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "--find-padding", "--base-offset", "688", "--pairs", "2", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "3404") != NULL);
	cli_run_free(&r);
}

/* --sim-set reaches the simulated column: the stride control's L1D misses
 * fall to one per run with stream buffers, whatever the size: no relation
 * to the prediction left, so unknown (it was called multiplicative with
 * b = 0 before the flat rule). */
Test(validate_cli, sim_settings_reach_the_simulator)
{
	cli_run r = cli_run_plumbv(NULL, "validate", "stride", "--backend", "sim", "--sizes", "10,100,1000", "--sim-set",
	                           "prefetch=stream", "--cases", "--no-progress", "--csv", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "PAPI_L1_DCM,stride,simulator,unknown"), "%s", r.out);
	cr_expect(strstr(r.out, "does not grow with the prediction"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "stride", "--backend", "sim", "--sizes", "10,100,1000", "--set",
	                   "prefetch=stream", "--no-progress", "--table", "meta", NULL);
	cr_expect(strstr(r.out, "preset host, prefetch=stream"), "%s", r.out);
	cli_run_free(&r);
}

/* An unknown preset once gave exit 0 and "failed: unknown preset" in every simulator row. */
Test(validate_cli, an_unknown_preset_is_a_usage_error)
{
	cli_run r = cli_run_plumbv(NULL, "validate", "--preset", "nosuch", "--backend", "sim", NULL);
	cli_assert_usage_error(&r, "validate");
	cr_assert_str_eq(r.err, "plumb validate: --preset: unknown preset 'nosuch' (host, host-nominal, origin2000, power3, "
	                        "itanium, zen4, intel, cachegrind, franz08, default) (see 'plumb validate --help')\n");
	cli_run_free(&r);
}

/* --verification FILE once appended text records to a binary file. */
Test(validate_cli, a_verification_file_that_is_not_one_is_left_untouched)
{
	const char *path = cli_temp_path("program.bin");
	const unsigned char binary[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0xff, '\n', 0, 0x90, 0xc3 };
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	fwrite(binary, 1, sizeof binary, f);
	fclose(f);
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "3", "--sizes",
	                           "1,10,100", "--no-progress", "--verification", path, NULL);
	cr_assert_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err);
	char expected[1024];
	snprintf(expected, sizeof expected, "plumb validate: %s: not a verification file (no records of event, cpu, "
	         "name, verdict); nothing appended\n", path);
	cr_assert_str_eq(r.err, expected);
	cr_assert_str_eq(r.out, "");
	cli_run_free(&r);
	size_t got;
	char *back = cli_read_file(path, &got);
	cr_assert_not_null(back, "cannot read %s", path);
	cr_assert_eq(got, sizeof binary);
	cr_assert_eq(memcmp(back, binary, sizeof binary), 0, "the file changed");
	free(back);
}

/* The synthetic source puts a known error through the classifier: each
 * kind is named as injected, it is never part of "all", and a kind that
 * does not exist is a usage error. */
Test(validate_cli, synthetic_errors_are_classified_as_injected)
{
	static const char *const kinds[] = { "exact", "bias", "multiplicative", "random", "unknown" };
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		char backend[64], expected[128];
		snprintf(backend, sizeof backend, "synthetic:%s", kinds[k]);
		cli_run r = cli_run_plumbv(NULL, "validate", "stride", "--backend", backend, "--sizes", "1,10,100,1000,10000",
		                           "--runs", "20", "--seed", "7", "--no-record", "--no-progress", "--csv", NULL);
		cr_assert_eq(r.exit_code, 0, "%s", r.err);
		snprintf(expected, sizeof expected, "PAPI_L1_DCM,stride,synthetic,%s,", kinds[k]);
		cr_expect(strstr(r.out, expected), "%s: %s", expected, r.out);
		cli_run_free(&r);
	}
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "all", "--sizes", "1", "--runs", "1",
	                           "--no-record", "--no-progress", "--csv", "--cases", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "synthetic"), "all never includes the synthetic source: %s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "--backend", "synthetic:noise", NULL);
	cli_assert_usage_error(&r, "validate");
	cr_expect(strstr(r.err, "synthetic error 'noise' is not exact, bias, multiplicative, random or unknown"), "%s", r.err);
	cli_run_free(&r);
}

/* So that the time left learns every kind of step in validate's first half
 * minute, shared's simulations and stride's cachegrind runs run right after
 * the first benchmark, ahead of their turn (src/validate/runner.c): each
 * case still runs once, and the tables keep the list's order. */
Test(validate_cli, runs_ahead_of_their_turn_keep_their_places, .timeout = 120)
{
	if (system("valgrind --version >/dev/null 2>&1") != 0) cr_skip_test("valgrind is not installed");
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults,dtlb,stride,shared", "--backend", "sim,instrumented",
	                           "--sizes", "10,100", "--no-record", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "cases");
	static const char *const order[] = { "page-faults", "dtlb", "stride", "shared" };
	size_t at = 0, stride_traced = 0, shared_simulated = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		const char *benchmark = text(row, "benchmark"), *source = text(row, "source");
		while (at < 4 && strcmp(benchmark, order[at]))
			at++;
		cr_assert_lt(at, 4, "row %zu: %s out of the list's order", i, benchmark);
		json_object *runs;
		bool ran = json_object_object_get_ex(row, "runs", &runs) && json_object_get_int(runs) == 1;
		if (!strcmp(benchmark, "stride") && !strcmp(source, "instrumented") && ran)
			stride_traced++;
		if (!strcmp(benchmark, "shared") && !strcmp(source, "simulator") && ran)
			shared_simulated++;
	}
	cr_expect_eq(shared_simulated, 4, "shared: 2 events x 2 sizes simulated once each, %zu", shared_simulated);
	/* stride under cachegrind, unless this build's Valgrind cannot run it (e.g. the ASan build) */
	bool cachegrind = true;
	json_object *verdicts = cli_json_rows(root, "verdict");
	for (size_t i = 0; i < json_object_array_length(verdicts); i++) {
		json_object *row = json_object_array_get_idx(verdicts, i);
		if (!strcmp(text(row, "benchmark"), "stride") && !strcmp(text(row, "source"), "instrumented") &&
		    !strcmp(text(row, "status"), "unsupported"))
			cachegrind = false;
	}
	if (cachegrind)
		cr_expect_eq(stride_traced, 4, "stride: 2 events x 2 sizes under cachegrind once each, %zu", stride_traced);
	json_object_put(root);
	cli_run_free(&r);
}
