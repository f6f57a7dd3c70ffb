/* plumb report --program (issue 28): a program of one known working set,
 * run once under plumb's simulator, lands in the level that holds it,
 * which this machine's own L1D size (sysfs) decides; report --from shows the
 * same row from the saved report.json without running anything; the
 * program's words never reach a shell (issue 29). */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run.h"

/* tests/data/reread.c, compiled into the test's folder as "re read" (a
 * blank in its path, which --program's quotes keep); it links nothing of plumb's. */
static const char *compile_reread(void)
{
	static char program[4200];
	char command[16384];
	snprintf(program, sizeof program, "%s", cli_temp_path("re read"));
	snprintf(command, sizeof command, "cc -O2 -o '%s' '%s/tests/data/reread.c'", program, cli_source_dir());
	cr_assert_eq(system(command), 0, "%s", command);
	return program;
}

/* The L1 data cache's size in sysfs (bytes), 0 when it does not say. */
static long l1d_bytes(void)
{
	for (int i = 0; i < 16; i++) {
		char path[128], level[16] = "", type[32] = "", size[32] = "";
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		FILE *f = fopen(path, "r");
		if (!f)
			break;
		bool got = fgets(level, sizeof level, f) != NULL;
		fclose(f);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if (got && (f = fopen(path, "r"))) {
			got = fgets(type, sizeof type, f) != NULL;
			fclose(f);
		}
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (got && (f = fopen(path, "r"))) {
			got = fgets(size, sizeof size, f) != NULL;
			fclose(f);
		}
		if (got && atoi(level) == 1 && !strncmp(type, "Data", 4)) {
			char *end;
			long v = strtol(size, &end, 10);
			return *end == 'K' ? v * 1024 : *end == 'M' ? v * 1024 * 1024 : v;
		}
	}
	return 0;
}

static json_object *hierarchy_row(json_object *report, const char *level)
{
	json_object *summary;
	cr_assert(json_object_object_get_ex(report, "summary", &summary), "report.json has no summary");
	json_object *rows = cli_json_rows(summary, "hierarchy");
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *name;
		if (json_object_object_get_ex(row, "level", &name) && !strcmp(json_object_get_string(name), level))
			return row;
	}
	cr_assert_fail("no hierarchy row %s", level);
	return NULL;
}

static const char *text_of(json_object *row, const char *column)
{
	json_object *v;
	cr_assert(json_object_object_get_ex(row, column, &v), "no column %s", column);
	return json_object_get_string(v);
}

static double number_of(json_object *row, const char *column)
{
	json_object *v;
	cr_assert(json_object_object_get_ex(row, column, &v), "no column %s", column);
	return json_object_get_double(v);
}

/* 24 KiB reread 1000 times: the knee of its L1D curve is 32 KiB (the
 * grid's sizes are powers of two), so it lands in the L1 where the L1D
 * holds 32 KiB or more and in the L2 otherwise. */
Test(report_program, working_set_lands_in_the_level_that_holds_it, .timeout = 300)
{
	cli_need_plumbgrind();
	long l1d = l1d_bytes();
	if (l1d <= 0)
		cr_skip_test("sysfs gives no L1D size here");
	const char *program = compile_reread();
	char page[4200], json[4200], line[8400];
	snprintf(page, sizeof page, "%s", cli_temp_path("program.html"));
	snprintf(json, sizeof json, "%s", cli_temp_path("program.json"));
	/* the path's blank quoted as a shell would */
	snprintf(line, sizeof line, "'%s' 24576 1000", program);
	char saved[4200];
	snprintf(saved, sizeof saved, "%s", cli_temp_path("sections"));
	cli_run r = cli_run_plumbv(NULL, "report", "--sections", "topo", "--program", line, "-o", page, "-d", saved, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	const char *here = 32768 <= l1d ? "L1" : "L2";
	char *text = cli_read_file(json, NULL);
	cr_assert_not_null(text);
	json_object *report = json_tokener_parse(text);
	free(text);
	cr_assert_not_null(report);
	json_object *l1 = hierarchy_row(report, "L1");
	cr_expect_eq(number_of(l1, "program_knee"), 32768);
	cr_expect_eq(number_of(l1, "program_capacity"), (double)l1d, "the L1D's size from sysfs");
	cr_expect_str_eq(text_of(l1, "program_lands"), 32768 <= l1d ? "yes" : "no");
	cr_expect_str_eq(text_of(hierarchy_row(report, here), "program_lands"), "yes");
	cr_expect_str_eq(text_of(hierarchy_row(report, "DRAM"), "program_lands"), "no");
	/* the terminal's summary and the page say it too */
	char expected[128];
	snprintf(expected, sizeof expected, "lands in the %s", here);
	cr_expect(strstr(r.out, expected), "%s", r.out);
	cr_expect(strstr(r.out, "knee 32 KiB"), "%s", r.out);
	char *html = cli_read_file(page, NULL);
	cr_assert_not_null(html);
	cr_expect(strstr(html, "Your program&#39;s working set") || strstr(html, "Your program's working set"));
	cr_expect(strstr(html, expected), "the page does not say where it lands");
	if (system("command -v gnuplot >/dev/null 2>&1") == 0)
		cr_expect(strstr(html, "Your program&#39;s miss-ratio curve per level") ||
		          strstr(html, "Your program's miss-ratio curve per level"), "no chart of the curve");
	free(html);
	cli_run_free(&r);

	/* --from: the same row from report.json, with the program gone, so
	 * that nothing could run it again */
	cr_assert_eq(unlink(program), 0);
	char again[4200];
	snprintf(again, sizeof again, "%s", cli_temp_path("again.html"));
	r = cli_run_plumbv(NULL, "report", "--from", json, "-o", again, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, expected), "%s", r.out);
	cr_expect(strstr(r.out, "knee 32 KiB"), "%s", r.out);
	cr_expect_str_eq(r.err, "", "nothing ran, nothing said");
	char again_json[4200];
	snprintf(again_json, sizeof again_json, "%s", cli_temp_path("again.json"));
	text = cli_read_file(again_json, NULL);
	cr_assert_not_null(text);
	json_object *rebuilt = json_tokener_parse(text);
	free(text);
	cr_assert_not_null(rebuilt);
	cr_expect_str_eq(text_of(hierarchy_row(rebuilt, here), "program_lands"), "yes");
	json_object_put(rebuilt);
	cli_run_free(&r);

	/* and from the sections' own files (-d): program.json is a plumb sim
	 * report, which the report knows as the program's section by its table
	 * of knees */
	char topo_file[4300], program_file[4300];
	snprintf(topo_file, sizeof topo_file, "%s/topo.json", saved);
	snprintf(program_file, sizeof program_file, "%s/program.json", saved);
	r = cli_run_plumbv(NULL, "report", "--from", topo_file, program_file, "-o", again, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, expected), "%s", r.out);
	json_object_put(report);
	cli_run_free(&r);
}

/* The program's words are never a shell's: what a shell would expand is
 * refused before anything runs, and --program does not go with --from. */
Test(report_program, a_shell_string_is_refused)
{
	char planted[4200], line[8600];
	snprintf(planted, sizeof planted, "%s", cli_temp_path("INJECTED"));
	snprintf(line, sizeof line, "true; touch %s", planted);
	cli_run r = cli_run_plumbv(NULL, "report", "--sections", "topo", "--program", line, "-o",
	                           cli_temp_path("x.html"), NULL);
	cli_assert_usage_error(&r, "report");
	cr_expect(strstr(r.err, "no shell runs this command"), "%s", r.err);
	cr_expect_neq(access(planted, F_OK), 0, "the shell string ran");
	cli_run_free(&r);
	snprintf(line, sizeof line, "true $(touch %s)", planted);
	r = cli_run_plumbv(NULL, "report", "--program", line, NULL);
	cli_assert_usage_error(&r, "report");
	cr_expect_neq(access(planted, F_OK), 0, "the shell string ran");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "report", "--program", "'unclosed", NULL);
	cli_assert_usage_error(&r, "report");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "report", "--program", "true", "--from", "x.json", NULL);
	cli_assert_usage_error(&r, "report");
	cr_expect(strstr(r.err, "--from"), "%s", r.err);
	cli_run_free(&r);
}
