/* End to end: plumb validate records what it proved about a counter mapping
 * on this CPU, and plumb events shows it.  The page-fault benchmark counts
 * minor faults exactly on any Linux machine, VM or not, so its verdict is a
 * real proof here. */
#include <criterion/criterion.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "run.h"
#include "../temp_folder.h"

/* Every e2e test runs plumb; without this, validate runs of any test would
 * record into the user's ~/.local/share/plumb.  Set once for the whole e2e
 * binary (its test workers inherit the environment) unless the caller chose
 * a file.  Nothing is created here: the file appears only if a run records,
 * and the process that named it removes it at exit. */
static char private_path[PATH_MAX];
static pid_t private_owner;

__attribute__((constructor)) static void private_verification_file(void)
{
	if (getenv("PLUMB_VERIFICATION")) return;
	private_owner = getpid();
	snprintf(private_path, sizeof private_path, "%s/plumb-e2e-verification-%ld.tsv", temp_root(), (long)private_owner);
	setenv("PLUMB_VERIFICATION", private_path, 1);
}

__attribute__((destructor)) static void remove_private_verification_file(void)
{
	if (private_path[0] && getpid() == private_owner) unlink(private_path);
}

/* The first row whose columns a and b have these values (b may be NULL). */
static json_object *find_row(json_object *rows, const char *a, const char *va, const char *b, const char *vb)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (!json_object_object_get_ex(row, a, &cell) || !json_object_is_type(cell, json_type_string) ||
		    strcmp(json_object_get_string(cell), va))
			continue;
		if (b && (!json_object_object_get_ex(row, b, &cell) || !json_object_is_type(cell, json_type_string) ||
		          strcmp(json_object_get_string(cell), vb)))
			continue;
		return row;
	}
	return NULL;
}

static const char *text_of(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	return json_object_is_type(cell, json_type_string) ? json_object_get_string(cell) : "";
}

static size_t lines(const char *text)
{
	size_t n = 0;
	for (; *text; text++) n += *text == '\n';
	return n;
}

static json_object *events_catalogue(const char *path, cli_run *r)
{
	*r = cli_run_plumbv(NULL, "events", "--catalogue", "--verification", path, "--json", NULL);
	cr_assert_eq(r->exit_code, 0, "stderr: %s", r->err);
	json_object *root = json_tokener_parse(r->out);
	cr_assert(root, "not JSON: %s", r->out);
	return root;
}

Test(counters_verification_cli, page_fault_validation_is_recorded_and_shown)
{
	const char *path = cli_temp_path("records/verification.tsv");   /* parent made on demand */
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf,papi", "--runs", "3",
	                           "--sizes", "1,10,100", "--verification", path, "--no-progress", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert(root);
	json_object *verdicts = cli_json_rows(root, "verdict");
	json_object *perf = find_row(verdicts, "source", "perf_event", "event", "minor-faults");
	cr_assert(perf, "no perf_event verdict: %s", r.out);
	cr_assert_str_eq(text_of(perf, "class"), "exact");
	json_object *papi = find_row(verdicts, "source", "papi", "event", "minor-faults");
	bool papi_exact = papi && !strcmp(text_of(papi, "class"), "exact");
	json_object_put(root);
	cli_run_free(&r);

	char *text = cli_read_file(path, NULL);
	cr_assert(text, "no records file %s", path);
	cr_assert(strstr(text, "minor-faults\t"), "%s", text);
	cr_assert(strstr(text, "\tminor-faults\tverified\t"), "%s", text);
	cr_assert(strstr(text, "\tperf\tperf-software\texact\t"), "%s", text);
	free(text);

	root = events_catalogue(path, &r);
	json_object *row = find_row(cli_json_rows(root, "catalogue"), "preset", "minor-faults", NULL, NULL);
	cr_assert(row, "minor-faults not in the catalogue");
	cr_assert_str_eq(text_of(row, "kind"), "software");
	const char *state = text_of(row, "perf_verification");
	cr_assert(!strncmp(state, "verified on this CPU (", 22) && strstr(state, "exact"), "%s", state);
	if (papi_exact)
		cr_assert(!strncmp(text_of(row, "papi_verification"), "verified on this CPU (", 22));
	/* Events no run checked stay unverified. */
	row = find_row(cli_json_rows(root, "catalogue"), "preset", "major-faults", NULL, NULL);
	cr_assert_str_eq(text_of(row, "perf_verification"), "unverified");
	row = find_row(cli_json_rows(root, "verification"), "event", "minor-faults", "backend", "perf");
	cr_assert(row);
	cr_assert_str_eq(text_of(row, "encoding"), "perf-software");
	cr_assert_str_eq(text_of(row, "class"), "exact");
	json_object_put(root);
	cli_run_free(&r);
}

Test(counters_verification_cli, environment_names_the_default_file)
{
	const char *path = cli_temp_path("from-env.tsv");
	setenv("PLUMB_VERIFICATION", path, 1);
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "3", "--sizes",
	                           "1,10,100", "--no-progress", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, path), "the note names the file: %s", r.out);
	cli_run_free(&r);
	char *text = cli_read_file(path, NULL);
	cr_assert(text && strstr(text, "\tverified\t"));
	free(text);
	r = cli_run_plumbv(NULL, "events", "--catalogue", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "verified on this CPU ("), "%s", r.out);
	cli_run_free(&r);
}

Test(counters_verification_cli, no_record_and_too_few_cases_write_nothing)
{
	const char *path = cli_temp_path("none.tsv");
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "3", "--sizes",
	                           "1,10,100", "--verification", path, "--no-record", "--no-progress", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	cli_run_free(&r);
	cr_assert_eq(access(path, F_OK), -1, "--no-record wrote %s", path);
	/* Two cases, or two runs: a class from too little data is not recorded. */
	r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "3", "--sizes", "1,10",
	                   "--verification", path, "--no-progress", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, "no verdict recorded"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "2", "--sizes",
	                   "1,10,100", "--verification", path, "--no-progress", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	cli_run_free(&r);
	cr_assert_eq(access(path, F_OK), -1, "recorded from too little data");
}

Test(counters_verification_cli, unsupported_events_record_nothing)
{
	const char *path = cli_temp_path("unsupported.tsv");
	cli_run r = cli_run_plumbv(NULL, "validate", "PAPI_TOT_INS", "--backend", "perf,papi", "--runs", "3",
	                           "--sizes", "1,10,100", "--verification", path, "--no-progress", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert(root);
	json_object *verdicts = cli_json_rows(root, "verdict");
	bool any_supported = false;
	for (size_t i = 0; i < json_object_array_length(verdicts); i++) {
		json_object *status = NULL, *cell = json_object_array_get_idx(verdicts, i);
		json_object_object_get_ex(cell, "status", &status);
		const char *text = status ? json_object_to_json_string(status) : "";
		any_supported |= !strstr(text, "unsupported");
	}
	json_object_put(root);
	cli_run_free(&r);
	if (!any_supported)   /* this machine: no PMU */
		cr_assert_eq(access(path, F_OK), -1, "an unsupported suite was recorded");
}

Test(counters_verification_cli, damaged_records_warn_once_and_show_unverified)
{
	const char *path = cli_temp_path("damaged.tsv");
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs("minor-faults\tAuthenticAMD:25:17\tminor-faults\tverified\n", f);   /* four fields */
	fwrite("\0\xff\t\t\n", 1, 5, f);
	fclose(f);
	cli_run r;
	json_object *root = events_catalogue(path, &r);
	cr_assert_eq(lines(r.err), 1, "one warning line: %s", r.err);
	cr_assert(strstr(r.err, "verification records ignored") && strstr(r.err, ":1:"), "%s", r.err);
	json_object *row = find_row(cli_json_rows(root, "catalogue"), "preset", "minor-faults", NULL, NULL);
	cr_assert_str_eq(text_of(row, "perf_verification"), "unverified");
	json_object_put(root);
	cli_run_free(&r);

	/* A directory instead of a file: the same, one line and exit 0. */
	const char *directory = cli_temp_path("a-directory");
	cr_assert_eq(mkdir(directory, 0700), 0);
	root = events_catalogue(directory, &r);
	cr_assert_eq(lines(r.err), 1, "%s", r.err);
	json_object_put(root);
	cli_run_free(&r);
}

Test(counters_verification_cli, unwritable_records_warn_and_keep_the_table)
{
	const char *blocker = cli_temp_path("not-a-directory");
	FILE *f = fopen(blocker, "w");
	cr_assert(f);
	fclose(f);
	char path[4096];
	snprintf(path, sizeof path, "%s/verification.tsv", blocker);
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "3", "--sizes",
	                           "1,10,100", "--verification", path, "--no-progress", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, "Can I trust my counters?"));
	cr_assert_eq(lines(r.err), 1, "%s", r.err);
	cr_assert(strstr(r.err, "verdicts not recorded"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "--verification", "", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
}

/* A validation run writes no history unless asked: it used to append to
 * ~/.local/share/plumb/verification.tsv on every run, and the report then
 * printed that file's path. */
Test(counters_verification_cli, nothing_is_recorded_unless_asked)
{
	const char *home = cli_temp_path("home");
	cr_assert_eq(mkdir(home, 0700), 0);
	setenv("HOME", home, 1);
	setenv("XDG_DATA_HOME", home, 1);
	unsetenv("PLUMB_VERIFICATION");
	cli_run r = cli_run_plumbv(NULL, "validate", "page-faults", "--backend", "perf", "--runs", "3", "--sizes",
	                           "1,10,100", "--no-progress", NULL);
	cr_assert_eq(r.exit_code, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, "verdicts not recorded") && strstr(r.out, "--verification"), "%s", r.out);
	struct stat st;
	char path[4096];
	snprintf(path, sizeof path, "%s/.local", home);
	cr_assert_neq(stat(path, &st), 0, "validate wrote under HOME");
	snprintf(path, sizeof path, "%s/plumb", home);
	cr_assert_neq(stat(path, &st), 0, "validate wrote under XDG_DATA_HOME");
	cli_run_free(&r);
}
