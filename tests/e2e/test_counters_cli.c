#include <criterion/criterion.h>
#include <limits.h>
#include <json-c/json.h>
#include <libgen.h>
#include <spawn.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include "run.h"
#include "../capability.h"
#include "../temp_folder.h"

extern char **environ;

static bool no_cpu_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) != 0;
}

/* The region example, built beside the plumb program. */
static const char *example_path(void)
{
	static char path[4096];
	char copy[4096];
	snprintf(copy, sizeof copy, "%s", getenv("PLUMB_BIN"));
	snprintf(path, sizeof path, "%s/examples/region_example", dirname(copy));
	/* 'make all' builds it; the sanitizer target builds only the tests. */
	if (access(path, X_OK) != 0)
		cr_skip_test("%s is not built (make all builds the examples)", path);
	return path;
}

static json_object *row_where(json_object *rows, const char *column, const char *value)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (json_object_object_get_ex(row, column, &cell) && json_object_is_type(cell, json_type_string) &&
		    !strcmp(json_object_get_string(cell), value))
			return row;
	}
	cr_assert_fail("no row with %s = %s", column, value);
	return NULL;
}

static json_object *field(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	return cell;
}

static const char *cell_status(json_object *cell)
{
	json_object *status;
	if (!json_object_is_type(cell, json_type_object) || !json_object_object_get_ex(cell, "status", &status))
		return NULL;
	return json_object_get_string(status);
}

static double stat_mean(const char *pages)
{
	setenv("PLUMB_REGION_QUIET", "1", 1);
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "page-faults,minor-faults", "-r", "3", "--json", "--",
	                           example_path(), pages, "1", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	json_object *row = row_where(cli_json_rows(root, "counts"), "event", "minor-faults");
	cr_assert_str_eq(json_object_get_string(field(row, "status")), "ok");
	double mean = json_object_get_double(field(row, "mean"));
	json_object_put(root);
	cli_run_free(&r);
	return mean;
}

Test(counters_cli, stat_counts_a_commands_page_faults)
{
	/* A command's own start-up faults vary by a page or two (ASLR); the
	 * difference between 1000 and 3000 touched pages is 2000. */
	double small = stat_mean("1000"), large = stat_mean("3000");
	cr_assert_geq(small, 1000);
	cr_assert_lt(small, 1000 + 1500);   /* dynamic linking and the markers' own records */
	cr_assert(large - small > 2000 - 5 && large - small < 2000 + 5, "difference %g", large - small);
}

Test(counters_cli, stat_table_marks_unsupported_in_every_format)
{
	if (!no_cpu_pmu())
		cr_skip_test("a cpu PMU is present here");
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "cycles,page-faults,PAPI_L1_DCM", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 3, "%s", r.err);
	cr_assert(strstr(r.err, "2 of 3 events cannot be counted here"), "%s", r.err);
	cr_assert(strstr(r.out, "unsupported"));
	cr_assert(strstr(r.out, "no PMU"));
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "cycles,page-faults,PAPI_L1_DCM", "--csv", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 3, "%s", r.err);
	cr_assert(strstr(r.err, "2 of 3 events cannot be counted here"), "%s", r.err);
	char *line = strstr(r.out, "\ncycles,");
	cr_assert_not_null(line, "%s", r.out);
	/* No number where the count should be: empty cells, the status and its
	 * reason in columns of their own. */
	cr_assert(strncmp(line, "\ncycles,,,,,,,", 14) == 0, "%s", line);
	cr_assert(strstr(line, ",unsupported,no PMU") || strstr(line, ",unsupported,\"no PMU"), "%s", line);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "cycles,page-faults,PAPI_L1_DCM", "--json", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 3, "%s", r.err);
	cr_assert(strstr(r.err, "2 of 3 events cannot be counted here"), "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "counts");
	const char *unsupported[] = { "cycles", "PAPI_L1_DCM" };
	for (int i = 0; i < 2; i++) {
		json_object *row = row_where(rows, "event", unsupported[i]);
		const char *columns[] = { "mean", "stddev", "cv", "min", "max" };
		for (int c = 0; c < 5; c++) {
			json_object *cell = field(row, columns[c]);
			cr_assert_str_eq(cell_status(cell), "unsupported", "%s %s", unsupported[i], columns[c]);
			json_object *reason;
			cr_assert(json_object_object_get_ex(cell, "reason", &reason));
			cr_assert(strlen(json_object_get_string(reason)) > 10);
		}
		cr_assert_str_eq(json_object_get_string(field(row, "status")), "unsupported");
	}
	json_object *ok = row_where(rows, "event", "page-faults");
	cr_assert(json_object_is_type(field(ok, "mean"), json_type_double) ||
	          json_object_is_type(field(ok, "mean"), json_type_int));
	json_object_put(root);
	cli_run_free(&r);
}

/* Through PAPI, plumb stat counts the command's main thread from inside it
 * (libplumb.so preloaded): the example's work in the main thread ("0"
 * threads) makes the difference of two sizes exact. */
static json_object *papi_stat(const char *pages)
{
	setenv("PLUMB_REGION_QUIET", "1", 1);
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "--backend", "papi", "-e", "page-faults,minor-faults,PAPI_TLB_DM",
	                           "-r", "2", "--json", "--", example_path(), pages, "0", NULL);
	/* PAPI_TLB_DM is unsupported without a PMU (exit 3), counted with one. */
	cr_assert(r.exit_code == 0 || (r.exit_code == 3 && strstr(r.out, "unsupported")), "%d %s", r.exit_code, r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	cli_run_free(&r);
	return root;
}

Test(counters_cli, stat_papi_counts_through_the_agent)
{
	json_object *small = papi_stat("1000"), *large = papi_stat("3000");
	json_object *rows = cli_json_rows(small, "counts");
	json_object *pf_small = row_where(rows, "event", "page-faults");
	json_object *pf_large = row_where(cli_json_rows(large, "counts"), "event", "page-faults");
	if (no_cpu_pmu())
		cr_assert_str_eq(cell_status(field(row_where(rows, "event", "PAPI_TLB_DM"), "mean")), "unsupported");
	const char *status = json_object_get_string(field(pf_small, "status"));
	if (strcmp(status, "ok")) {
		/* e.g. a sanitizer build without libplumb.so: it must say why. */
		json_object *reason;
		cr_assert(json_object_object_get_ex(field(pf_small, "mean"), "reason", &reason), "status %s", status);
		cr_skip_test("PAPI agent not usable here: %s", json_object_get_string(reason));
	}
	double difference = json_object_get_double(field(pf_large, "mean")) -
	                    json_object_get_double(field(pf_small, "mean"));
	cr_assert(difference > 2000 - 3 && difference < 2000 + 3, "PAPI page-faults difference %g", difference);
	json_object_put(small);
	json_object_put(large);
}

Test(counters_cli, stat_all_domains_counts_or_explains)
{
	/* Kernel counting: allowed to root here; otherwise refused with the
	 * paranoid level in the reason.  Never a silent 0. */
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "--all-domains", "-e", "page-faults,context-switches", "--json", "--",
	                           "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *meta, *domain;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, "domain", &domain));
	cr_assert_str_eq(json_object_get_string(domain), "user+kernel");
	json_object *pf = row_where(cli_json_rows(root, "counts"), "event", "page-faults");
	if (!strcmp(json_object_get_string(field(pf, "status")), "ok")) {
		cr_assert_gt(json_object_get_double(field(pf, "mean")), 10);
	} else {
		json_object *reason;
		cr_assert(json_object_object_get_ex(field(pf, "mean"), "reason", &reason));
		cr_assert(strstr(json_object_get_string(reason), "perf_event_paranoid"));
	}
	json_object_put(root);
	cli_run_free(&r);
}

Test(counters_cli, stat_per_run_table)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "--per-run", "-r", "3", "-e", "page-faults,cycles", "--json", "--",
	                           "true", NULL);
	cr_assert(r.exit_code == 0 || (r.exit_code == 3 && strstr(r.out, "unsupported")), "%d %s", r.exit_code, r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "runs");
	cr_assert_eq(json_object_array_length(rows), 6);
	for (size_t i = 0; i < 6; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		const char *event = json_object_get_string(field(row, "event"));
		if (!strcmp(event, "page-faults")) {
			cr_assert_gt(json_object_get_int64(field(row, "value")), 10);
			cr_assert_str_eq(json_object_get_string(field(row, "status")), "ok");
		} else if (no_cpu_pmu()) {
			cr_assert_str_eq(cell_status(field(row, "value")), "unsupported");
		}
	}
	json_object_put(root);
	cli_run_free(&r);
}

Test(counters_cli, stat_bad_input)
{
	const char *cases[][8] = {
		{ "stat", "-e", "page-faults", NULL },
		{ "stat", "-r", "0", "--", "true", NULL },
		{ "stat", "-r", "x", "--", "true", NULL },
		{ "stat", "--backend", "bogus", "--", "true", NULL },
		{ "stat", "-e", "a,,b", "--", "true", NULL },
		{ "stat", "--calibrate", "true", NULL },
		{ "stat", "--bogus", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cli_run r = cli_run_plumb(NULL, cases[i]);
		cr_assert_eq(r.exit_code, 2, "case %zu: exit %d: %s", i, r.exit_code, r.err);
		cr_assert_str_eq(strchr(r.err, '\n') + 1, "", "case %zu: one line expected: %s", i, r.err);
		cli_run_free(&r);
	}
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "page-faults", "--", "/nonexistent/program", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "cannot run"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "page-faults", "--", "false", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.out, "exited with status 1"), "%s", r.out);
	cli_run_free(&r);
	/* the command's own status, as perf stat gives it: 128 + 9 */
	r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "page-faults", "--", "sh", "-c", "kill -9 $$", NULL);
	cr_assert_eq(r.exit_code, 137);
	cr_assert(strstr(r.out, "killed by signal 9"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "no-such-event,page-faults", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 3);
	cr_assert(strstr(r.err, "1 of 2 events cannot be counted here"), "%s", r.err);
	cr_assert(strstr(r.out, "unknown event 'no-such-event'"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "stat", "-o", "-", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb stat"));
	cli_run_free(&r);
}

Test(counters_cli, calibrate_reports_bias_and_cost)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "--calibrate", "-n", "2000", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *bias = cli_json_rows(root, "bias");
	int page_faults_rows = 0;
	for (size_t i = 0; i < json_object_array_length(bias); i++) {
		json_object *row = json_object_array_get_idx(bias, i);
		const char *event = json_object_get_string(field(row, "event"));
		if (!strcmp(event, "page-faults")) {
			page_faults_rows++;
			/* Nothing happens between start and stop: no faults, ever. */
			cr_assert_eq(json_object_get_double(field(row, "max")), 0.0);
		}
		if (!strcmp(event, "cycles") && no_cpu_pmu())
			cr_assert_str_eq(cell_status(field(row, "mean")), "unsupported");
	}
	/* perf, perf/read() and papi; papi is a note where it cannot count. */
	plumb_status papi_status;
	const int backends = counter_backend_usable("papi", &papi_status) == 0 ? 3 : 2;
	cr_assert_eq(page_faults_rows, backends);
	json_object *cost = cli_json_rows(root, "cost");
	cr_assert_eq((int)json_object_array_length(cost), backends);
	json_object *perf = row_where(cost, "backend", "perf");
	/* page-faults opened, so each call is a system call: a positive cost */
	cr_assert(json_object_is_type(field(perf, "read"), json_type_double), "read: %s",
	          json_object_to_json_string(field(perf, "read")));
	cr_assert_gt(json_object_get_double(field(perf, "read")), 0.0);
	cr_assert_gt(json_object_get_double(field(perf, "start")), 0.0);
	json_object_put(root);
	cli_run_free(&r);
}

/* With no event open there is nothing to time: the costs were once 0 ns. */
Test(counters_cli, calibrate_with_nothing_opened_reports_no_cost)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "--calibrate", "-n", "200", "-e", "no-such-event", "--backend", "perf",
	                           "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	json_object *cost = cli_json_rows(root, "cost");
	cr_assert_eq(json_object_array_length(cost), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *row = json_object_array_get_idx(cost, i);
		const char *columns[] = { "start", "stop", "read" };
		for (int k = 0; k < 3; k++)
			cr_assert_str_eq(cell_status(field(row, columns[k])), "unsupported", "%s: %s", columns[k],
			                 json_object_to_json_string(row));
	}
	json_object_put(root);
	cli_run_free(&r);
}

Test(counters_cli, events_lists_and_probes)
{
	cli_run r = cli_run_plumbv(NULL, "events", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "events");
	json_object *pf = row_where(rows, "event", "page-faults");
	cr_assert_str_eq(json_object_get_string(field(pf, "here")), "works");
	plumb_status papi_status;
	if (counter_backend_usable("papi", &papi_status) == 0) {
		json_object *papi_pf = row_where(rows, "event", "perf::PAGE-FAULTS");
		cr_assert_str_eq(json_object_get_string(field(papi_pf, "backend")), "papi");
		cr_assert_str_eq(json_object_get_string(field(papi_pf, "here")), "works");
	} else {
		/* PAPI cannot count here: one note says why, no per-event rows. */
		cr_assert(strstr(r.out, papi_status.message), "no note '%s' in %s", papi_status.message, r.out);
	}
	if (no_cpu_pmu()) {
		json_object *cycles = row_where(rows, "event", "cycles");
		cr_assert_str_eq(cell_status(field(cycles, "here")), "unsupported");
	}
	json_object *catalogue = cli_json_rows(root, "catalogue");
	json_object *inv = row_where(catalogue, "preset", "PAPI_CA_INV");
	cr_assert(json_object_is_type(field(inv, "perf_event"), json_type_null));
	json_object *tlb = row_where(catalogue, "preset", "PAPI_TLB_DM");
	/* This CPU's candidate, from its own table, or none with the reason:
	 * never another vendor's (an Intel VM used to be offered Zen 4 events). */
	json_object *native = field(tlb, "native");
	char identity[64];
	counter_environment environment;
	counter_environment_read(&environment);
	snprintf(identity, sizeof identity, "%s", environment.cpu_identity);
	counter_cpu_table cpu_table;
	counter_cpu_native_table(identity, &cpu_table);
	if (cpu_table.known) {
		char prefix[64];
		snprintf(prefix, sizeof prefix, "%s::", cpu_table.pmu);
		cr_assert(!strncmp(json_object_get_string(native), prefix, strlen(prefix)), "%s on %s",
		          json_object_get_string(native), identity);
		cr_assert_str_eq(json_object_get_string(field(tlb, "native_verification")), "unverified");
	} else {
		cr_assert_str_eq(cell_status(native), "unsupported");
		cr_assert(strstr(r.out, "no native-event catalogue for this CPU"), "%s", r.out);
	}
	cr_assert(cli_json_rows(root, "natives"), "no natives table");
	json_object_put(root);
	cli_run_free(&r);
}

Test(counters_cli, events_reads_verification_records)
{
	cli_run r = cli_run_plumbv(NULL, "events", "--catalogue", "--json", NULL);
	json_object *root = json_tokener_parse(r.out);
	json_object *cpu;
	json_object *meta;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, "cpu", &cpu));
	char identity[64];
	snprintf(identity, sizeof identity, "%s", json_object_get_string(cpu));
	json_object_put(root);
	cli_run_free(&r);
	if (strncmp(identity, "AuthenticAMD:25:17", 18))
		cr_skip_test("records below are for the Zen 4 development machine");
	const char *path = cli_temp_path("verification.tsv");
	FILE *f = fopen(path, "w");
	fprintf(f, "# test\nPAPI_TLB_DM\t%s\tamd64_fam19h_zen4::L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:"
	           "TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS\tverified\ttest\n",
	        identity);
	fclose(f);
	r = cli_run_plumbv(NULL, "events", "--catalogue", "--verification", path, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	root = json_tokener_parse(r.out);
	json_object *tlb = row_where(cli_json_rows(root, "catalogue"), "preset", "PAPI_TLB_DM");
	cr_assert_str_eq(json_object_get_string(field(tlb, "native_verification")), "verified on this CPU");   /* a five-field record: no date or class */
	json_object_put(root);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "events", "--backend", "bogus", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
}

Test(counters_cli, region_example_counts_each_thread_exactly)
{
	const char *json = cli_temp_path("regions.json");
	char events[] = "PLUMB_EVENTS=page-faults,cycles";
	char output[4200];
	snprintf(output, sizeof output, "PLUMB_REGION_JSON=%s", json);
	char *env[] = { events, output, NULL };
	char *argv[] = { (char *)example_path(), "700", "2", NULL };
	pid_t pid;
	cr_assert_eq(posix_spawn(&pid, argv[0], NULL, NULL, argv, env), 0, "cannot run %s", argv[0]);
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	json_object *root = json_object_from_file(json);
	cr_assert_not_null(root, "no summary in %s", json);
	json_object *rows = cli_json_rows(root, "regions");
	int touch_rows = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		const char *region = json_object_get_string(field(row, "region"));
		int64_t faults = json_object_get_int64(field(row, "page-faults"));
		if (!strcmp(region, "touch")) {
			touch_rows++;
			cr_assert_eq(faults, 700);
		} else if (!strcmp(region, "sum")) {
			cr_assert_eq(faults, 0);
		} else if (!strcmp(region, "thread")) {
			cr_assert_eq(faults, 700);
		}
		if (no_cpu_pmu())
			cr_assert_str_eq(cell_status(field(row, "cycles")), "unsupported");
	}
	cr_assert_eq(touch_rows, 2);
	json_object_put(root);
}

/* perf's habits: duration_time, the kernel's msr PMU and tracepoints count
 * on a machine without a hardware PMU, as they do with perf stat (they were
 * "unknown event" in plumb).  Forks are counted exactly: two background
 * jobs are two sched_process_fork events in the shell's children. */
Test(counters_cli, stat_counts_perfs_tool_pmu_and_tracepoint_events)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "duration_time,task-clock", "--json", "--", "sleep",
	                           "0.05", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	json_object *row = row_where(cli_json_rows(root, "counts"), "event", "duration_time");
	cr_assert_str_eq(json_object_get_string(field(row, "status")), "ok");
	double ns = json_object_get_double(field(row, "mean"));
	cr_assert(ns >= 50e6 && ns < 60e9, "duration_time %g ns for sleep 0.05", ns);
	json_object_put(root);
	cli_run_free(&r);

	if (access("/sys/kernel/tracing/events/sched/sched_process_fork/id", R_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/events/sched/sched_process_fork/id", R_OK) != 0)
		cr_skip_test("tracefs is not mounted here (the unit tests check tracepoints on a recorded tree)");
	r = cli_run_plumbv(NULL, "stat", "-o", "-", "-e", "sched:sched_process_fork", "--json", "--", "sh", "-c",
	                   "true & true & wait", NULL);
	root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s %s", r.out, r.err);
	row = row_where(cli_json_rows(root, "counts"), "event", "sched:sched_process_fork");
	const char *status = json_object_get_string(field(row, "status"));
	if (strcmp(status, "ok")) {
		/* Tracepoints need perf_event_paranoid <= 1 or privileges without root. */
		json_object_put(root);
		cli_run_free(&r);
		cr_skip_test("tracepoints do not open here (%s)", r.err);
	}
	cr_assert_eq(json_object_get_double(field(row, "mean")), 2, "%s", r.err);
	json_object_put(root);
	cli_run_free(&r);
}

/* Runs program with the environment given, as root or, with as_nobody, as
 * user 65534 (a setuid-root program then runs with more privileges than its
 * caller: AT_SECURE).  Its exit status. */
static int run_program_as(const char *program, char *const env[], bool as_nobody)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (as_nobody && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
			_exit(125);
		char *argv[] = { (char *)program, "10", "1", NULL };
		execve(program, argv, env);
		_exit(127);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Issue 29: libplumb read PLUMB_REGION_JSON with getenv, so any user could
 * make a setuid-root program linked with it write a JSON report over a
 * root-owned file.  It reads its environment with secure_getenv now: the
 * same program and variable write the file when root runs it, and not when
 * an unprivileged user does. */
Test(counters_cli, a_setuid_program_ignores_plumb_variables)
{
	REQUIRE_NO_ASAN("AddressSanitizer's runtime does not run setuid");
	if (geteuid() != 0)
		cr_skip_test("making a setuid-root program needs root");
	/* in /tmp, not TMPDIR: user 65534 must reach the program, and the
	 * suite's TMPDIR is private (the folder is removed below) */
	char folder[] = "/tmp/plumb-setuid-XXXXXX";
	cr_assert_not_null(mkdtemp(folder));
	struct statvfs fs;
	if (statvfs(folder, &fs) == 0 && (fs.f_flag & ST_NOSUID)) {
		rmdir(folder);
		cr_skip_test("/tmp is mounted nosuid");
	}
	cr_assert_eq(chmod(folder, 0755), 0);
	char program[256], target[256], copy[4400];
	snprintf(program, sizeof program, "%s/region_example", folder);
	snprintf(target, sizeof target, "%s/root-owned.json", folder);
	snprintf(copy, sizeof copy, "cp '%s' '%s'", example_path(), program);
	cr_assert_eq(system(copy), 0);
	cr_assert_eq(chmod(program, 04755), 0);
	char variable[300];
	snprintf(variable, sizeof variable, "PLUMB_REGION_JSON=%s", target);
	char events[] = "PLUMB_EVENTS=page-faults";
	char *env[] = { variable, events, NULL };

	/* Root running it: the variable is honoured. */
	cr_assert_eq(run_program_as(program, env, false), 0);
	bool written_for_root = access(target, F_OK) == 0;
	unlink(target);
	/* An unprivileged user running it: the variable is ignored. */
	int code = run_program_as(program, env, true);
	bool written_for_nobody = access(target, F_OK) == 0;
	unlink(target);
	unlink(program);
	rmdir(folder);
	cr_assert(written_for_root, "root's run wrote no %s: the test shows nothing", target);
	cr_assert_eq(code, 0, "the setuid program failed (%d)", code);
	cr_assert(!written_for_nobody, "a setuid-root program wrote PLUMB_REGION_JSON's file for user 65534");
}
