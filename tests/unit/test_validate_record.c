/* The rules that decide which validation verdicts become verification
 * records, the records' fields, and the file format they travel in. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "validate/validate.h"
#include "../temp_folder.h"

static double predict_size(const validate_params *p) { return (double)p->size; }

static const validate_benchmark fake = {
	.name = "fake-faults",
	.title = "test",
	.threads = 1,
	.event_count = 2,
	.events = { { .name = "minor-faults", .perf_name = "minor-faults", .papi_name = "perf::MINOR-FAULTS",
	              .predict = predict_size },
	            { .name = "task-clock", .perf_name = "task-clock", .papi_name = "perf::TASK-CLOCK",
	              .companion = true } },
};

typedef struct fixture {
	validate_series series;
	validate_case cases[4];
	double values[4][5];
} fixture;

/* A suite of `count` in-domain cases of `runs` runs, classified cls. */
static void make(fixture *f, validate_source source, size_t count, size_t runs, validate_class cls)
{
	memset(f, 0, sizeof *f);
	for (size_t i = 0; i < count; i++) {
		validate_case *c = &f->cases[i];
		c->size = (uint64_t)pow(10, (double)i);
		c->predicted = (double)c->size;
		c->in_domain = true;
		c->runs = runs;
		c->values = f->values[i];
		for (size_t r = 0; r < runs; r++) f->values[i][r] = c->predicted;
		validate_case_summarize(c);
	}
	f->series.benchmark = &fake;
	f->series.source = source;
	f->series.supported = true;
	f->series.case_count = count;
	f->series.cases = f->cases;
	f->series.verdict.cls = cls;
	f->series.verdict.cases_used = count;
	f->series.verdict.a = 0;
	f->series.verdict.b = 1;
	f->series.verdict.r2 = 1;
}

static bool rule(const fixture *f, counter_verdict *verdict)
{
	validate_thresholds t;
	validate_thresholds_default(&t);
	char why[128];
	return validate_record_rule(&f->series, &t, verdict, why, sizeof why);
}

Test(validate_record, exact_and_accurate_verify)
{
	fixture f;
	counter_verdict v;
	make(&f, VALIDATE_SOURCE_PERF, 3, 3, VALIDATE_CLASS_EXACT);
	cr_assert(rule(&f, &v));
	cr_assert_eq(v, COUNTER_VERIFIED);
	make(&f, VALIDATE_SOURCE_PAPI, 4, 5, VALIDATE_CLASS_ACCURATE);
	cr_assert(rule(&f, &v));
	cr_assert_eq(v, COUNTER_VERIFIED);
}

Test(validate_record, other_classes_are_checked_not_trusted)
{
	validate_class classes[] = { VALIDATE_CLASS_BIAS, VALIDATE_CLASS_MULTIPLICATIVE, VALIDATE_CLASS_RANDOM,
	                             VALIDATE_CLASS_UNKNOWN };
	for (size_t i = 0; i < 4; i++) {
		fixture f;
		counter_verdict v;
		make(&f, VALIDATE_SOURCE_PERF, 3, 3, classes[i]);
		cr_assert(rule(&f, &v), "%s", validate_class_name(classes[i]));
		cr_assert_eq(v, COUNTER_CHECKED);
	}
}

Test(validate_record, nothing_without_enough_evidence)
{
	fixture f;
	counter_verdict v;
	make(&f, VALIDATE_SOURCE_PERF, 2, 5, VALIDATE_CLASS_EXACT);   /* too few cases */
	cr_assert_not(rule(&f, &v));
	cr_assert_eq(v, COUNTER_UNVERIFIED);
	make(&f, VALIDATE_SOURCE_PERF, 4, 2, VALIDATE_CLASS_EXACT);   /* too few runs */
	cr_assert_not(rule(&f, &v));
	make(&f, VALIDATE_SOURCE_PERF, 4, 3, VALIDATE_CLASS_EXACT);
	f.cases[0].in_domain = f.cases[1].in_domain = false;          /* out of the validity domain */
	cr_assert_not(rule(&f, &v));
	make(&f, VALIDATE_SOURCE_PERF, 4, 3, VALIDATE_CLASS_EXACT);
	f.series.supported = false;                                   /* unsupported */
	cr_assert_not(rule(&f, &v));
	make(&f, VALIDATE_SOURCE_PERF, 4, 3, VALIDATE_CLASS_EXACT);
	f.series.failed = true;
	cr_assert_not(rule(&f, &v));
	make(&f, VALIDATE_SOURCE_PERF, 4, 3, VALIDATE_CLASS_EXACT);
	f.series.event_index = 1;                                     /* companion: no prediction */
	cr_assert_not(rule(&f, &v));
}

Test(validate_record, simulator_and_instrumented_prove_nothing_about_counters)
{
	fixture f;
	counter_verdict v;
	make(&f, VALIDATE_SOURCE_SIMULATOR, 4, 3, VALIDATE_CLASS_EXACT);
	cr_assert_not(rule(&f, &v));
	make(&f, VALIDATE_SOURCE_INSTRUMENTED, 4, 3, VALIDATE_CLASS_EXACT);
	cr_assert_not(rule(&f, &v));
}

Test(validate_record, min_cases_threshold_raises_the_bar)
{
	fixture f;
	counter_verdict v;
	make(&f, VALIDATE_SOURCE_PERF, 4, 3, VALIDATE_CLASS_EXACT);
	validate_thresholds t;
	validate_thresholds_default(&t);
	t.min_cases = 5;
	cr_assert_not(validate_record_rule(&f.series, &t, &v, NULL, 0));
}

Test(validate_record, fill_names_backend_encoding_class_and_date)
{
	fixture f;
	make(&f, VALIDATE_SOURCE_PERF, 3, 3, VALIDATE_CLASS_EXACT);
	counter_verification r;
	validate_record_fill(&f.series, COUNTER_VERIFIED, "AuthenticAMD:25:17", 1795305600, &r);
	cr_assert_str_eq(r.event, "minor-faults");
	cr_assert_str_eq(r.native, "minor-faults");
	cr_assert_str_eq(r.backend, "perf");
	cr_assert_str_eq(r.encoding, "perf-software");
	cr_assert_str_eq(r.cls, "exact");
	cr_assert_str_eq(r.date, "2026-11-22T00:00:00Z");
	cr_assert(strstr(r.evidence, "fake-faults") && !strpbrk(r.evidence, "\t\n"), "%s", r.evidence);
	make(&f, VALIDATE_SOURCE_PAPI, 3, 3, VALIDATE_CLASS_BIAS);
	validate_record_fill(&f.series, COUNTER_CHECKED, "AuthenticAMD:25:17", 0, &r);
	cr_assert_str_eq(r.native, "perf::MINOR-FAULTS");
	cr_assert_str_eq(r.backend, "papi");
	cr_assert_str_eq(r.encoding, "native");
	cr_assert_str_eq(r.cls, "bias");
}

Test(validate_record, results_are_appended_and_read_back)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-record-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	unlink(path);
	fixture a, b, c;
	make(&a, VALIDATE_SOURCE_PERF, 3, 3, VALIDATE_CLASS_EXACT);
	make(&b, VALIDATE_SOURCE_PAPI, 3, 3, VALIDATE_CLASS_MULTIPLICATIVE);
	make(&c, VALIDATE_SOURCE_SIMULATOR, 3, 3, VALIDATE_CLASS_EXACT);
	validate_series series[3] = { a.series, b.series, c.series };
	validate_results results;
	memset(&results, 0, sizeof results);
	results.series = series;
	results.series_count = 3;
	validate_thresholds t;
	validate_thresholds_default(&t);
	size_t recorded;
	plumb_status status;
	cr_assert_eq(validate_record_results(&results, &t, path, "AuthenticAMD:25:17", 1795305600, &recorded,
	                                     &status), 0, "%s", status.message);
	cr_assert_eq(recorded, 2);
	counter_verification *records;
	size_t n;
	cr_assert_eq(counter_verification_load(path, &records, &n, &status), 0, "%s", status.message);
	cr_assert_eq(n, 2);
	const counter_verification *perf = counter_verification_find(records, n, "minor-faults", "AuthenticAMD:25:17",
	                                                             "minor-faults");
	cr_assert(perf);
	char text[160];
	counter_verification_describe(perf, text, sizeof text);
	cr_assert_str_eq(text, "verified on this CPU (2026-11-22, exact)");
	counter_verification_describe(counter_verification_find(records, n, "minor-faults", "AuthenticAMD:25:17",
	                                                        "perf::MINOR-FAULTS"), text, sizeof text);
	cr_assert_str_eq(text, "checked: multiplicative (2026-11-22), not trusted");
	counter_verification_describe(counter_verification_find(records, n, "minor-faults", "GenuineIntel:6:106",
	                                                        "minor-faults"), text, sizeof text);
	cr_assert_str_eq(text, "unverified");
	free(records);
	unlink(path);
}

Test(validate_record, a_checked_benchmark_outweighs_a_verified_one_in_the_same_run)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-record-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	fixture a, b;
	make(&a, VALIDATE_SOURCE_PERF, 3, 3, VALIDATE_CLASS_BIAS);   /* first in suite order */
	make(&b, VALIDATE_SOURCE_PERF, 3, 3, VALIDATE_CLASS_EXACT);
	validate_series series[2] = { a.series, b.series };
	validate_results results;
	memset(&results, 0, sizeof results);
	results.series = series;
	results.series_count = 2;
	size_t recorded;
	plumb_status status;
	cr_assert_eq(validate_record_results(&results, NULL, path, "AuthenticAMD:25:17", 0, &recorded, &status), 0);
	cr_assert_eq(recorded, 2);
	counter_verification *records;
	size_t n;
	cr_assert_eq(counter_verification_load(path, &records, &n, &status), 0, "%s", status.message);
	cr_assert_eq(counter_verification_lookup(records, n, "minor-faults", "AuthenticAMD:25:17", "minor-faults"),
	             COUNTER_CHECKED);
	free(records);
	unlink(path);
}

Test(validate_record, concurrent_appends_never_tear_lines)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-record-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	enum { WRITERS = 4, EACH = 200 };
	for (int w = 0; w < WRITERS; w++) {
		pid_t pid = fork();
		cr_assert(pid >= 0);
		if (pid == 0) {
			counter_verification r;
			memset(&r, 0, sizeof r);
			snprintf(r.cpu_identity, sizeof r.cpu_identity, "AuthenticAMD:25:17");
			snprintf(r.native, sizeof r.native, "minor-faults");
			snprintf(r.evidence, sizeof r.evidence, "%0200d", w);   /* long lines tear first */
			r.verdict = COUNTER_VERIFIED;
			plumb_status status;
			for (int i = 0; i < EACH; i++) {
				snprintf(r.event, sizeof r.event, "writer%d-%d", w, i);
				if (counter_verification_append(path, &r, &status) != 0) _exit(1);
			}
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int code;
		cr_assert(wait(&code) > 0);
		cr_assert(WIFEXITED(code) && WEXITSTATUS(code) == 0);
	}
	counter_verification *records;
	size_t n;
	plumb_status status;
	cr_assert_eq(counter_verification_load(path, &records, &n, &status), 0, "%s", status.message);
	cr_assert_eq(n, WRITERS * EACH);
	free(records);
	unlink(path);
}

Test(validate_record, file_format_edges)
{
	counter_verification *records;
	size_t n;
	plumb_status status;
	const char *nine = "e\tc\tn\tchecked\tev\tperf\traw\tbias\t2026-11-22T00:00:00Z\n";
	cr_assert_eq(counter_verification_parse(nine, strlen(nine), "t", &records, &n, &status), 0, "%s",
	             status.message);
	cr_assert_eq(n, 1);
	cr_assert_eq(records[0].verdict, COUNTER_CHECKED);
	cr_assert_str_eq(records[0].encoding, "raw");
	free(records);
	const char *bad[] = { "e\tc\tn\tchecked\tev\tperf\traw\tbias\tdate\textra\n",   /* ten fields */
	                      "e\tc\tn\tchecked\tev\tperf\traw\n",                      /* seven */
	                      "e\tc\tn\tmaybe\tev\n" };                                /* unknown verdict */
	for (size_t i = 0; i < 3; i++)
		cr_assert_neq(counter_verification_parse(bad[i], strlen(bad[i]), "t", &records, &n, &status), 0,
		              "%s", bad[i]);
}

Test(validate_record, encodings)
{
	cr_assert_str_eq(counter_event_encoding("perf", "minor-faults"), "perf-software");
	cr_assert_str_eq(counter_event_encoding("perf", "dTLB-store-misses"), "perf-generic");
	cr_assert_str_eq(counter_event_encoding("perf", "instructions"), "perf-generic");
	cr_assert_str_eq(counter_event_encoding("perf", "r00c0"), "raw");
	cr_assert_str_eq(counter_event_encoding("perf", "PAPI_TOT_INS"), "papi-preset");
	cr_assert_str_eq(counter_event_encoding("papi", "PAPI_TLB_DM"), "papi-preset");
	cr_assert_str_eq(counter_event_encoding("papi", "perf::MINOR-FAULTS"), "native");
	cr_assert_str_eq(counter_event_encoding("perf", "no-such-event-anywhere"), "unknown");
	cr_assert_str_eq(counter_event_encoding("sim", "minor-faults"), "unknown");
}

/* Records go only where the user said: a validation run once appended to
 * ~/.local/share/plumb/verification.tsv on every run, unasked. */
Test(validate_record, records_go_only_where_the_user_said)
{
	char path[4096];
	plumb_status status;
	unsetenv("PLUMB_VERIFICATION");
	setenv("XDG_DATA_HOME", "/data", 1);
	setenv("HOME", "/home/u", 1);
	cr_assert_neq(counter_verification_default_path(path, sizeof path, &status), 0);
	cr_assert(strstr(status.message, "PLUMB_VERIFICATION") && strstr(status.message, "--verification"), "%s",
	          status.message);
	setenv("PLUMB_VERIFICATION", "", 1);
	cr_assert_neq(counter_verification_default_path(path, sizeof path, &status), 0);
	setenv("PLUMB_VERIFICATION", "/x.tsv", 1);
	cr_assert_eq(counter_verification_default_path(path, sizeof path, &status), 0);
	cr_assert_str_eq(path, "/x.tsv");
	unsetenv("PLUMB_VERIFICATION");
	unsetenv("XDG_DATA_HOME");
	unsetenv("HOME");
}

/* validate --verification FILE once appended text records to whatever FILE was. */
Test(validate_record, a_file_that_is_not_a_verification_file_is_never_appended_to)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-record-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	const unsigned char binary[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, '\n', 0xff, 0xfe, '\t', '\n' };
	cr_assert_eq(write(fd, binary, sizeof binary), (ssize_t)sizeof binary);
	close(fd);
	counter_verification record;
	memset(&record, 0, sizeof record);
	snprintf(record.event, sizeof record.event, "minor-faults");
	snprintf(record.cpu_identity, sizeof record.cpu_identity, "AuthenticAMD:25:17");
	snprintf(record.native, sizeof record.native, "minor-faults");
	record.verdict = COUNTER_VERIFIED;
	plumb_status status;
	cr_assert_eq(counter_verification_check(path, &status), -1);
	char expected[512];
	snprintf(expected, sizeof expected,
	         "%s: not a verification file (no records of event, cpu, name, verdict); nothing appended", path);
	cr_assert_str_eq(status.message, expected);
	cr_assert_eq(counter_verification_append(path, &record, &status), -1);
	cr_assert_str_eq(status.message, expected);
	unsigned char back[64];
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	size_t got = fread(back, 1, sizeof back, f);
	fclose(f);
	cr_assert_eq(got, sizeof binary, "the file grew to %zu bytes", got);
	cr_assert_eq(memcmp(back, binary, sizeof binary), 0);

	/* A real verification file, an empty one and a missing one are appended to. */
	f = fopen(path, "w");
	fputs("# notes\nminor-faults\tAuthenticAMD:25:17\tminor-faults\tverified\texact\n", f);
	fclose(f);
	cr_assert_eq(counter_verification_check(path, &status), 0, "%s", status.message);
	cr_assert_eq(counter_verification_append(path, &record, &status), 0, "%s", status.message);
	counter_verification *records;
	size_t n;
	cr_assert_eq(counter_verification_load(path, &records, &n, &status), 0, "%s", status.message);
	cr_assert_eq(n, 2);
	free(records);
	unlink(path);
	cr_assert_eq(counter_verification_check(path, &status), 0);
	cr_assert_eq(counter_verification_append(path, &record, &status), 0, "%s", status.message);
	unlink(path);
}

/* The iteration-check tally moved out of cmd_validate.c: counts per state
 * and the first reason each state gave. */
Test(validate_trip_tally, counts_and_first_reasons)
{
	validate_trip_check checks[4] = {
		{ .state = VALIDATE_TRIPS_OK },
		{ .state = VALIDATE_TRIPS_UNSUPPORTED, .reason = "no breakpoints" },
		{ .state = VALIDATE_TRIPS_UNSUPPORTED, .reason = "second" },
		{ .state = VALIDATE_TRIPS_NOT_CHECKED, .reason = "too many trips" },
	};
	validate_results results = { .trip_checks = checks, .trip_check_count = 4 };
	validate_trip_tally t;
	validate_trip_tally_of(&results, &t);
	cr_assert_eq(t.total, 4);
	cr_assert_eq(t.count[VALIDATE_TRIPS_OK], 1);
	cr_assert_eq(t.count[VALIDATE_TRIPS_MISMATCH], 0);
	cr_assert_eq(t.count[VALIDATE_TRIPS_UNSUPPORTED], 2);
	cr_assert_eq(t.count[VALIDATE_TRIPS_NOT_CHECKED], 1);
	cr_assert_str_eq(t.first_reason[VALIDATE_TRIPS_UNSUPPORTED], "no breakpoints");
	cr_assert_str_eq(t.first_reason[VALIDATE_TRIPS_NOT_CHECKED], "too many trips");
	cr_assert_null(t.first_reason[VALIDATE_TRIPS_MISMATCH]);
}
