#include <criterion/criterion.h>
#include <stdio.h>
#include <json-c/json.h>
#include <string.h>
#include "run.h"

Test(core_cli, help_and_version)
{
	cli_run r = cli_run_plumbv(NULL, "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "topo"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "--version", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strncmp(r.out, "plumb ", 6) == 0);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
}

Test(core_cli, unknown_command_one_line)
{
	cli_run r = cli_run_plumbv(NULL, "frobnicate", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert_str_eq(strchr(r.err, '\n') + 1, "", "one error line expected: %s", r.err);
	cli_run_free(&r);
}

Test(core_cli, topo_formats)
{
	cli_run r = cli_run_plumbv(NULL, "topo", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "Caches"));
	cr_assert(strstr(r.out, "L1"));
	cr_assert(strstr(r.out, "hardware_counters"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "--json", NULL);
	cr_assert_eq(r.exit_code, 0);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	json_object *tables;
	cr_assert(json_object_object_get_ex(root, "tables", &tables));
	cr_assert_geq(json_object_array_length(tables), 4);
	json_object_put(root);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "--table", "caches", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strncmp(r.out, "level,type,size[bytes]", 22) == 0, "%s", r.out);
	cli_run_free(&r);
}

Test(core_cli, topo_bad_args)
{
	cli_run r = cli_run_plumbv(NULL, "topo", "--bogus", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "--bogus"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "extra", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "-o", "/nonexistent-dir/t.txt", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "nonexistent"));
	cli_run_free(&r);
}

Test(core_cli, topo_help)
{
	cli_run r = cli_run_plumbv(NULL, "topo", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb topo"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "help", "topo", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb topo"));
	cli_run_free(&r);
}

Test(core_cli, report_from_sections_and_saved_json)
{
	char html[512], dir[512];
	snprintf(html, sizeof html, "%s", cli_temp_path("r.html"));
	snprintf(dir, sizeof dir, "%s", cli_temp_path("saved"));
	cli_run r = cli_run_plumbv(NULL, "report", "--sections", "topo", "-o", html, "--save-dir", dir, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "(1 section)"), "%s", r.out);
	cli_run_free(&r);
	char saved[600];
	snprintf(saved, sizeof saved, "%s/topo.json", dir);
	r = cli_run_plumbv(NULL, "report", "-o", html, "--from", saved, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	char *page = cli_read_file(html, NULL);
	cr_assert_not_null(page, "cannot read %s", html);
	cr_assert(strstr(page, "The machine"));
	cr_assert(strstr(page, "hardware_counters"));
	free(page);
	r = cli_run_plumbv(NULL, "report", "--sections", "bogus", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "report", "--from", "/etc/hostname", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "/etc/hostname"));
	cli_run_free(&r);
}

static void option_error_is(const char *expected, const char *const argv[])
{
	cli_run r = cli_run_plumb(NULL, argv);
	cli_assert_usage_error(&r, argv[0][0] == 't' && !strcmp(argv[0], "trace") ? "trace record" : argv[0]);
	cr_assert_str_eq(r.err, expected);
	cli_run_free(&r);
}

#define OPTION_ERROR_IS(expected, ...) option_error_is(expected, (const char *const[]){ __VA_ARGS__, NULL })

/* A long option without its value was reported as "-\001" (lat --min), "-s" (sim --set)
 * or "-f" (model --from): getopt's internal code printed as a letter. */
Test(core_cli, an_option_error_names_the_option_as_typed)
{
	OPTION_ERROR_IS("plumb lat: option '--min' needs a value (see 'plumb lat --help')\n", "lat", "--min");
	OPTION_ERROR_IS("plumb sim: option '--set' needs a value (see 'plumb sim --help')\n", "sim", "--set");
	OPTION_ERROR_IS("plumb bw: option '-s' needs a value (see 'plumb bw --help')\n", "bw", "-s");
	OPTION_ERROR_IS("plumb model: option '--from' needs a value (see 'plumb model --help')\n", "model", "--from");
	OPTION_ERROR_IS("plumb bw: option '--cpu' needs a value (see 'plumb bw --help')\n", "bw", "--cpu");
	OPTION_ERROR_IS("plumb validate: option '--set' needs a value (see 'plumb validate --help')\n", "validate",
	                "--set");
	OPTION_ERROR_IS("plumb stat: option '--event' needs a value (see 'plumb stat --help')\n", "stat", "--event");
	OPTION_ERROR_IS("plumb topo: option '--output' needs a value (see 'plumb topo --help')\n", "topo", "--output");
	OPTION_ERROR_IS("plumb trace record: option '--output' needs a value (see 'plumb trace record --help')\n", "trace",
	                "record", "--output");
	OPTION_ERROR_IS("plumb lat: unknown option '--bogus' (see 'plumb lat --help')\n", "lat", "--bogus=1");
	OPTION_ERROR_IS("plumb lat: unknown option '-Q' (see 'plumb lat --help')\n", "lat", "-Q");
	OPTION_ERROR_IS("plumb lat: option '--help' does not take a value (see 'plumb lat --help')\n", "lat", "--help=3");
}
