/* plumb instrument end to end: options, bad input, and exact counts of the
 * inline-asm test program through the JSON output. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run.h"

/* Built beside the plumb program by vg/Makefile.inc; absent without valgrind. */
static const char *built(const char *relative)
{
	static char path[2][4096];
	static int which;
	char copy[4096];
	snprintf(copy, sizeof copy, "%s", getenv("PLUMB_BIN"));
	char *p = path[which++ & 1];
	snprintf(p, 4096, "%s/%s", dirname(copy), relative);
	return p;
}

static const char *target(void)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s", built("tests/data/instrument_target"));
	cli_need_plumbgrind();
	if (access(path, X_OK) != 0)
		cr_skip_test("the plumbgrind test program is not built here");
	return path;
}

static int64_t integer(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	cr_assert(json_object_is_type(cell, json_type_int), "%s is not an integer", column);
	return json_object_get_int64(cell);
}

static json_object *region_row(json_object *rows, const char *name, int64_t thread)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (json_object_object_get_ex(row, "region", &cell) && !strcmp(json_object_get_string(cell), name) &&
		    integer(row, "thread") == thread)
			return row;
	}
	return NULL;
}

Test(instrument_cli, help_and_bad_input)
{
	cli_run r = cli_run_plumbv(NULL, "instrument", "--help", NULL);
	cr_expect_eq(r.exit_code, 0);
	cr_expect(strstr(r.out, "usage: plumb instrument"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "instrument", NULL);
	cr_expect_eq(r.exit_code, 2);
	cr_expect(strstr(r.err, "no command"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "instrument", "--bogus", "--", "/bin/true", NULL);
	cr_expect_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "instrument", "--summary", "x", "/bin/true", NULL);
	cr_expect_eq(r.exit_code, 2);
	cr_expect(strstr(r.err, "takes no command"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "instrument", "--summary", "/nonexistent/summary", NULL);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.err, "/nonexistent/summary"), "%s", r.err);
	cli_run_free(&r);
	const char *bad = cli_temp_path("bad.summary");
	FILE *f = fopen(bad, "w");
	fputs("plumbgrind 1\nfields instructions loads stores modifies bytes_read bytes_written\ntotal 1 2\n", f);
	fclose(f);
	r = cli_run_plumbv(NULL, "instrument", "--summary", bad, NULL);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.err, "line 3: bad or missing count"), "%s", r.err);
	cli_run_free(&r);
}

Test(instrument_cli, json_counts_are_exact, .timeout = 120)
{
	const char *program = target();
	cli_run r = cli_run_plumbv(NULL, "instrument", "--json", "--", program, "loop", "400", "2", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "not JSON: %s", r.out);
	json_object *row = region_row(cli_json_rows(root, "regions"), "loop", 0);
	cr_assert_not_null(row);
	cr_expect_eq(integer(row, "entries"), 2);
	cr_expect_eq(integer(row, "instructions"), 4000);
	cr_expect_eq(integer(row, "loads"), 1600);
	cr_expect_eq(integer(row, "stores"), 800);
	cr_expect_eq(integer(row, "modifies"), 0);
	cr_expect_eq(integer(row, "bytes_read"), 12800);
	cr_expect_eq(integer(row, "bytes_written"), 6400);
	json_object *threads = cli_json_rows(root, "threads");
	cr_expect_eq(json_object_array_length(threads), 2, "thread 0 and the 'all' row");
	json_object_put(root);
	cli_run_free(&r);
}

Test(instrument_cli, trace_csv_and_saved_summary, .timeout = 120)
{
	const char *program = target();
	const char *trace = cli_temp_path("run.lackey");
	cli_run r = cli_run_plumbv(NULL, "instrument", "--table", "regions", "--trace", trace, "--", program, "threads",
	                           "2", "50", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "worker"), "%s", r.out);
	cli_run_free(&r);
	FILE *f = fopen(trace, "r");
	cr_assert_not_null(f);
	char line[128];
	cr_assert_not_null(fgets(line, sizeof line, f));
	cr_expect_eq(strncmp(line, "I  ", 3), 0, "%s", line);
	fclose(f);

	/* A summary written by valgrind directly reads back through --summary. */
	const char *summary = cli_temp_path("plumbgrind.out");
	char option[4200], command[9000];
	snprintf(option, sizeof option, "--plumb-out=%s", summary);
	snprintf(command, sizeof command, "VALGRIND_LIB=%s valgrind -q --tool=plumbgrind %s %s exit 5",
	         built("vg/lib"), option, program);
	cr_assert_eq(WEXITSTATUS(system(command)), 5);
	r = cli_run_plumbv(NULL, "instrument", "--json", "--summary", summary, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	json_object *row = region_row(cli_json_rows(root, "regions"), "loop", 0);
	cr_assert_not_null(row);
	cr_expect_eq(integer(row, "instructions"), 50);
	json_object_put(root);
	cli_run_free(&r);
}

/* plumb_region_begin/end (the counters' region API) mark plumbgrind regions too. */
Test(instrument_cli, counter_regions_are_instrumented, .timeout = 120)
{
	target();
	const char *example = built("examples/region_example");
	if (access(example, X_OK) != 0)
		cr_skip_test("%s is not built (make all builds the examples)", example);
	setenv("PLUMB_REGION_QUIET", "1", 1);
	setenv("PLUMB_BACKEND", "none", 1);
	cli_run r = cli_run_plumbv(NULL, "instrument", "--json", "--", example, "64", "1", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	json_object *rows = cli_json_rows(root, "regions");
	json_object *touch = region_row(rows, "touch", 1), *sum = region_row(rows, "sum", 1);
	json_object *outer = region_row(rows, "thread", 1);
	cr_assert(touch && sum && outer, "%s", r.out);
	/* One store per page touched, one load per page summed, at least. */
	cr_expect_geq(integer(touch, "stores"), 64);
	cr_expect_geq(integer(sum, "loads"), 64);
	cr_expect_geq(integer(outer, "instructions"), integer(touch, "instructions") + integer(sum, "instructions"));
	json_object_put(root);
	cli_run_free(&r);
}

/* --trace to a place that cannot hold a file once gave exit 0 and full counts with no trace. */
Test(instrument_cli, a_trace_that_cannot_be_written_is_an_error, .timeout = 120)
{
	target();
	cli_run r = cli_run_plumbv(NULL, "instrument", "--trace", "/nonexistent/t.lackey", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err);
	cr_assert_str_eq(r.err, "plumb instrument: cannot create the trace file /nonexistent/t.lackey: No such file or "
	                        "directory\n");
	cr_assert_str_eq(r.out, "");
	cli_run_free(&r);
	const char *directory = cli_temp_path("");
	r = cli_run_plumbv(NULL, "instrument", "--trace", directory, "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err);
	cr_assert(strstr(r.err, "it is a directory") && !strchr(r.err, '\n')[1], "%s", r.err);
	cli_run_free(&r);
}

/* A program that execs: Valgrind does not follow it, plumbgrind's summary
 * never comes, and instrument said "the program could not be started".  It
 * names the exec now, as sim, trace record and explain do; with --trace
 * too (the other path).  Found by tests/hostile-sweep.sh. */
Test(instrument_cli, a_program_that_execs_is_named_as_such, .timeout = 120)
{
	target();
	const char *trace = cli_temp_path("exec.lackey");
	cli_run runs[2] = {
		cli_run_plumbv(NULL, "instrument", "--", "sh", "-c", "exec /bin/true", NULL),
		cli_run_plumbv(NULL, "instrument", "--trace", trace, "--", "sh", "-c", "exec /bin/true", NULL),
	};
	for (int k = 0; k < 2; k++) {
		cr_expect_eq(runs[k].exit_code, 1, "run %d: %s", k, runs[k].err);
		cr_expect(strstr(runs[k].err, "the program exec'd another program"), "run %d: %s", k, runs[k].err);
		cr_expect(strstr(runs[k].err, "plumb follows one program image"), "run %d: %s", k, runs[k].err);
		cr_expect_null(strstr(runs[k].err, "could not be started"), "run %d: %s", k, runs[k].err);
		cr_expect_str_eq(runs[k].out, "", "no counts of half a program");
		cli_run_free(&runs[k]);
	}
}

/* Region markers reach the simulator: plumb sim -- PROG reports each
 * region with exactly the references plumbgrind counts in it (the loop's 5K
 * instructions, 2K loads and K stores per entry), in JSON and CSV, and the
 * same from a recorded native trace. */
Test(instrument_cli, sim_reports_regions_with_plumbgrind_counts)
{
	const char *program = target();
	cli_run r = cli_run_plumbv(NULL, "sim", "--basic", "--json", "--", program, "loop", "1000", "3", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	json_object *row = region_row(cli_json_rows(root, "regions"), "loop", 0);
	cr_assert_not_null(row);
	cr_expect_eq(integer(row, "entries"), 3);
	cr_expect_eq(integer(row, "ifetch"), 15000);
	cr_expect_eq(integer(row, "reads"), 6000);
	cr_expect_eq(integer(row, "writes"), 3000);
	cr_expect_eq(integer(row, "l1i_accesses"), 15000);
	cr_expect_eq(integer(row, "l1d_accesses"), 9000);
	json_object_put(root);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "sim", "--basic", "--table", "regions", "--", program, "nested", "100", "200", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\n0,inner,0,1,500,200,100,"), "%s", r.out);
	cli_run_free(&r);

	const char *trace = cli_temp_path("regions.ptrace");
	r = cli_run_plumbv(NULL, "trace", "record", trace, "--", program, "threads", "2", "100", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--cores", "3", "--json", trace, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	root = json_tokener_parse(r.out);
	json_object *rows = cli_json_rows(root, "regions");
	json_object *main_row = region_row(rows, "main", 0);
	cr_assert_not_null(main_row);
	cr_expect_eq(integer(main_row, "ifetch"), 500);
	int64_t workers = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *cell, *x = json_object_array_get_idx(rows, i);
		if (json_object_object_get_ex(x, "region", &cell) && !strcmp(json_object_get_string(cell), "worker")) {
			workers++;
			cr_expect_eq(integer(x, "reads"), 200 * integer(x, "thread"));   /* plumb thread i (1, 2) runs K*i */
		}
	}
	cr_expect_eq(workers, 2);
	json_object_put(root);
	cli_run_free(&r);
}

/* Source attribution: the code table names the function, file and line of
 * each address from Valgrind's debug information.  The hottest address of
 * tests/data/hot_line.c (built with -g) is in walk(), on the line marked
 * "HOT LINE" (found in the source, not written here), in JSON, CSV and text. */
static long marked_line(const char *path, const char *marker)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char text[512];
	long number = 0, found = -1;
	while (fgets(text, sizeof text, f)) {
		number++;
		if (strstr(text, marker) && !strstr(text, "marker comment"))
			found = number;
	}
	fclose(f);
	cr_assert_gt(found, 0, "no %s in %s", marker, path);
	return found;
}

Test(instrument_cli, code_table_names_the_hottest_function_and_line, .timeout = 120)
{
	target();
	const char *program = built("tests/data/hot_line");
	cr_assert_eq(access(program, X_OK), 0, "%s is not built", program);
	char source[4096];
	snprintf(source, sizeof source, "%s/tests/data/hot_line.c", cli_source_dir());
	long line = marked_line(source, "/* HOT LINE */");
	cli_run r = cli_run_plumbv(NULL, "sim", "--preset", "default", "--json", "--", program, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out), *cell;
	json_object *hottest = json_object_array_get_idx(cli_json_rows(root, "code"), 0);
	cr_assert_not_null(hottest);
	cr_assert(json_object_object_get_ex(hottest, "function", &cell));
	cr_expect_str_eq(json_object_get_string(cell), "walk");
	cr_assert(json_object_object_get_ex(hottest, "file", &cell));
	const char *file = json_object_get_string(cell);
	cr_expect(strlen(file) >= 10 && !strcmp(file + strlen(file) - 10, "hot_line.c"), "file %s", file);
	cr_expect_eq(integer(hottest, "line"), line);
	cr_expect_geq(integer(hottest, "l1_misses"), 20000);
	json_object_put(root);
	cli_run_free(&r);
	char expected[128];
	snprintf(expected, sizeof expected, ",walk,");
	r = cli_run_plumbv(NULL, "sim", "--preset", "default", "--table", "code", "--", program, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	const char *table = strstr(r.out, "address,function,file,line,");
	cr_assert_not_null(table, "%s", r.out);
	const char *row = strchr(table, '\n') + 1;
	snprintf(expected, sizeof expected, "hot_line.c,%ld,", line);
	cr_expect(strstr(row, ",walk,") == strchr(row, ',') && strstr(row, expected) < strchr(row, '\n'), "%.200s", row);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--preset", "default", "--", program, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "  walk  "), "%s", r.out);
	cli_run_free(&r);
	/* a recorded trace keeps the names beside it (TRACE.code) */
	const char *trace = cli_temp_path("hot.ptrace");
	r = cli_run_plumbv(NULL, "trace", "record", trace, "--", program, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--preset", "default", "--table", "code", trace, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	table = strstr(r.out, "address,function,file,line,");
	cr_assert_not_null(table, "%s", r.out);
	row = strchr(table, '\n') + 1;
	cr_expect(strstr(row, ",walk,") == strchr(row, ',') && strstr(row, expected) < strchr(row, '\n'), "%.200s", row);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--preset", "default", "--table", "meta", trace, NULL);
	cr_expect(strstr(r.out, "\ncode_map,"), "%.300s", r.out);
	cli_run_free(&r);
}

/* --cachegrind-out: for a one-core cachegrind-like configuration,
 * cg_annotate prints exactly the figures of cachegrind's own file of the
 * same program (the function table and the annotated source, each line
 * equal; lines of equal cost may come in another order, so they are
 * compared sorted).  Both run in the same environment (env -i with PATH and
 * the VALGRIND_LIB plumb sets): the program's stack and the strings libc
 * scans at start-up depend on it.  callgrind_annotate reads --callgrind-out. */
static char *slurp_command(const char *command)
{
	FILE *p = popen(command, "r");
	cr_assert_not_null(p, "%s", command);
	size_t capacity = 1 << 16, used = 0;
	char *text = malloc(capacity);
	size_t n;
	while ((n = fread(text + used, 1, capacity - used - 1, p)) > 0) {
		used += n;
		if (used + 1 == capacity)
			text = realloc(text, capacity *= 2);
	}
	text[used] = 0;
	cr_assert_eq(pclose(p), 0, "%s", command);
	return text;
}

static int compare_text_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines from "PROGRAM TOTALS" on, sorted, joined. */
static char *figures(char *annotated)
{
	char *start = strstr(annotated, "PROGRAM TOTALS");
	cr_assert_not_null(start, "%s", annotated);
	while (start > annotated && start[-1] != '\n')
		start--;
	size_t count = 0, capacity = 1024;
	char **lines = malloc(capacity * sizeof *lines);
	for (char *save = NULL, *line = strtok_r(start, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (count == capacity)
			lines = realloc(lines, (capacity *= 2) * sizeof *lines);
		lines[count++] = line;
	}
	qsort(lines, count, sizeof *lines, compare_text_lines);
	size_t length = 1;
	for (size_t i = 0; i < count; i++)
		length += strlen(lines[i]) + 1;
	char *joined = malloc(length), *at = joined;
	for (size_t i = 0; i < count; i++)
		at += sprintf(at, "%s\n", lines[i]);
	*at = 0;
	free(lines);
	return joined;
}

Test(instrument_cli, cachegrind_out_equals_cachegrinds_file, .timeout = 240)
{
	target();
	if (system("command -v cg_annotate > /dev/null && command -v callgrind_annotate > /dev/null") != 0)
		cr_skip_test("cg_annotate and callgrind_annotate are not installed");
	const char *program = built("tests/data/hot_line");
	char lib[4096], ours[4096], theirs[4096], command[16384];
	snprintf(lib, sizeof lib, "%s", built("vg/lib"));
	snprintf(ours, sizeof ours, "%s", cli_temp_path("plumb.cg.out"));
	snprintf(theirs, sizeof theirs, "%s", cli_temp_path("cachegrind.out"));
	static const char geometry_cg[] = "--I1=32768,8,64 --D1=16384,4,64 --LL=1048576,16,64";
	static const char geometry_plumb[] = "--l1i 32768,8,64 --l1d 16384,4,64 --l3 1048576,16,64";
	snprintf(command, sizeof command,
	         "env -i PATH=\"$PATH\" VALGRIND_LIB='%s' valgrind --tool=cachegrind -q --cachegrind-out-file='%s' %s "
	         "'%s' 3000 > /dev/null 2>&1", lib, theirs, geometry_cg, program);
	cr_assert_eq(system(command), 0, "%s", command);
	snprintf(command, sizeof command,
	         "env -i PATH=\"$PATH\" VALGRIND_LIB='%s' '%s' sim --preset cachegrind %s --cachegrind-out '%s' "
	         "-- '%s' 3000 > /dev/null 2>&1", lib, getenv("PLUMB_BIN"), geometry_plumb, ours, program);
	cr_assert_eq(system(command), 0, "%s", command);
	static const char show[] = "--show=Ir,I1mr,ILmr,Dr,D1mr,DLmr,Dw,D1mw,DLmw --threshold=0 --auto=yes";
	snprintf(command, sizeof command, "cg_annotate %s '%s' 2>&1", show, theirs);
	char *a = slurp_command(command);
	snprintf(command, sizeof command, "cg_annotate %s '%s' 2>&1", show, ours);
	char *b = slurp_command(command);
	cr_expect(strstr(b, "hot_line.c:walk"), "%s", b);
	char *fa = figures(a), *fb = figures(b);
	cr_expect_str_eq(fb, fa, "cg_annotate's figures differ");
	/* plumb's own events are extra columns of the same file */
	snprintf(command, sizeof command, "head -8 '%s'", ours);
	char *head = slurp_command(command);
	cr_expect(strstr(head, "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw CohM TrueSh FalseSh InvSent InvRecv\n"),
	          "%s", head);
	free(a);
	free(b);
	free(fa);
	free(fb);
	free(head);
}

/* The Ir figure callgrind_annotate prints for call_tree.c's function `name`
 * in its function list (not a call line "=>", not a tree line). */
static long long listed_ir(const char *output, const char *name)
{
	char wanted[64];
	snprintf(wanted, sizeof wanted, "call_tree.c:%s", name);
	for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *eol = strchr(line, '\n');
		size_t length = eol ? (size_t)(eol - line) : strlen(line);
		char text[1024];
		if (length >= sizeof text)
			continue;
		memcpy(text, line, length);
		text[length] = 0;
		char *at = strstr(text, wanted);
		if (!at || strstr(text, "=>") || (at[strlen(wanted)] != 0 && at[strlen(wanted)] != ' '))
			continue;
		const char *p = text;
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		long long v = 0;
		for (; (*p >= '0' && *p <= '9') || *p == ','; p++)
			if (*p != ',')
				v = v * 10 + (*p - '0');
		return v;
	}
	return -1;
}

/* tests/data/call_tree.c: main calls f 3 times, f calls g, g reads 1000
 * words; main calls depth(50), which recurses 49 times.  The callgrind file
 * holds the calls with their exact counts, each call's cost is its callee's
 * self cost plus its callees' (callgrind_annotate --inclusive=yes), recursion
 * counts once, and the Ir figures equal callgrind's own (--cache-sim=yes,
 * the same geometry, the same environment); the same run's cachegrind file
 * equals cachegrind's with --vex-guest-chase=no, the setting both callgrind
 * and --callgrind-out need. */
Test(instrument_cli, callgrind_out_follows_calls, .timeout = 240)
{
	target();
	if (system("command -v cg_annotate > /dev/null && command -v callgrind_annotate > /dev/null") != 0)
		cr_skip_test("cg_annotate and callgrind_annotate are not installed");
	const char *program = built("tests/data/call_tree");
	char lib[4096], ours[4096], theirs[4096], cg_ours[4096], cg_theirs[4096], command[16384];
	snprintf(lib, sizeof lib, "%s", built("vg/lib"));
	snprintf(ours, sizeof ours, "%s", cli_temp_path("plumb.callgrind.out"));
	snprintf(theirs, sizeof theirs, "%s", cli_temp_path("callgrind.out"));
	snprintf(cg_ours, sizeof cg_ours, "%s", cli_temp_path("plumb.calls.cg.out"));
	snprintf(cg_theirs, sizeof cg_theirs, "%s", cli_temp_path("cachegrind.nochase.out"));
	static const char geometry_cg[] = "--I1=32768,8,64 --D1=16384,4,64 --LL=1048576,16,64";
	static const char geometry_plumb[] = "--l1i 32768,8,64 --l1d 16384,4,64 --l3 1048576,16,64";
	snprintf(command, sizeof command,
	         "env -i PATH=\"$PATH\" VALGRIND_LIB='%s' '%s' sim --preset cachegrind %s --callgrind-out '%s' "
	         "--cachegrind-out '%s' -- '%s' > /dev/null 2>&1", lib, getenv("PLUMB_BIN"), geometry_plumb, ours, cg_ours,
	         program);
	cr_assert_eq(system(command), 0, "%s", command);
	snprintf(command, sizeof command,
	         "env -i PATH=\"$PATH\" VALGRIND_LIB='%s' valgrind --tool=callgrind -q --cache-sim=yes "
	         "--callgrind-out-file='%s' %s '%s' > /dev/null 2>&1", lib, theirs, geometry_cg, program);
	cr_assert_eq(system(command), 0, "%s", command);
	snprintf(command, sizeof command,
	         "env -i PATH=\"$PATH\" VALGRIND_LIB='%s' valgrind --tool=cachegrind -q --vex-guest-chase=no "
	         "--cachegrind-out-file='%s' %s '%s' > /dev/null 2>&1", lib, cg_theirs, geometry_cg, program);
	cr_assert_eq(system(command), 0, "%s", command);

	snprintf(command, sizeof command, "callgrind_annotate --inclusive=yes --auto=no --threshold=100 '%s' 2>&1", ours);
	char *inclusive = slurp_command(command);
	snprintf(command, sizeof command, "callgrind_annotate --inclusive=no --auto=no --threshold=100 '%s' 2>&1", ours);
	char *self = slurp_command(command);
	long long inc_main = listed_ir(inclusive, "main"), inc_f = listed_ir(inclusive, "f"),
	          inc_g = listed_ir(inclusive, "g"), inc_depth = listed_ir(inclusive, "depth");
	long long self_main = listed_ir(self, "main"), self_f = listed_ir(self, "f"), self_g = listed_ir(self, "g"),
	          self_depth = listed_ir(self, "depth");
	cr_assert(inc_main > 0 && inc_f > 0 && inc_g > 0 && inc_depth > 0 && self_f > 0 && self_g > 0 && self_depth > 0,
	          "%s\n%s", inclusive, self);
	cr_expect_eq(inc_g, self_g, "g calls nothing: %lld %lld", inc_g, self_g);
	cr_expect_eq(inc_f, self_f + inc_g, "f = f's self + g's: %lld %lld %lld", inc_f, self_f, inc_g);
	cr_expect_eq(inc_depth, self_depth, "recursion counted once: %lld %lld", inc_depth, self_depth);
	cr_expect_gt(inc_main, self_main + inc_f + inc_depth);   /* and printf */
	/* g's 3000 reads of the table, plus i and sum each turn, at -O0 */
	cr_expect_geq(self_g, 3 * 1000 * 4, "%lld", self_g);
	/* the calls and their counts, in the file */
	snprintf(command, sizeof command, "tr '\\n' ' ' < '%s'", ours);
	char *file = slurp_command(command);
	cr_expect(strstr(file, "cfn=f calls=3 "), "main calls f 3 times");
	cr_expect(strstr(file, "cfn=g calls=3 "), "f calls g 3 times");
	cr_expect(strstr(file, "cfn=depth calls=1 "), "main calls depth once");
	cr_expect(strstr(file, "cfn=depth calls=49 "), "depth calls itself 49 times");
	/* main's calls add up to its inclusive cost */
	snprintf(command, sizeof command,
	         "callgrind_annotate --inclusive=yes --tree=calling --auto=no --threshold=100 '%s' 2>&1 | "
	         "sed -n '/\\* .*call_tree.c:main$/,/^$/p' | grep '^ *[0-9].* > ' | "
	         "awk '{ gsub(\",\", \"\", $1); sum += $1 } END { print sum }'", ours);
	char *called = slurp_command(command);
	cr_expect_eq(self_main + atoll(called), inc_main, "main: self %lld + calls %s", self_main, called);
	/* callgrind's own Ir figures for the same run */
	snprintf(command, sizeof command, "callgrind_annotate --inclusive=yes --auto=no --threshold=100 '%s' 2>&1", theirs);
	char *callgrind = slurp_command(command);
	cr_expect_eq(listed_ir(callgrind, "f"), inc_f, "%s", callgrind);
	cr_expect_eq(listed_ir(callgrind, "g"), inc_g, "%s", callgrind);
	cr_expect_eq(listed_ir(callgrind, "depth"), inc_depth, "%s", callgrind);
	/* the same run's cachegrind file equals cachegrind's without chasing */
	static const char show[] = "--show=Ir,I1mr,ILmr,Dr,D1mr,DLmr,Dw,D1mw,DLmw --threshold=0 --auto=no";
	snprintf(command, sizeof command, "cg_annotate %s '%s' 2>&1", show, cg_theirs);
	char *a = slurp_command(command);
	snprintf(command, sizeof command, "cg_annotate %s '%s' 2>&1", show, cg_ours);
	char *b = slurp_command(command);
	char *fa = figures(a), *fb = figures(b);
	cr_expect_str_eq(fb, fa, "cg_annotate's figures differ");
	free(inclusive);
	free(self);
	free(file);
	free(called);
	free(callgrind);
	free(a);
	free(b);
	free(fa);
	free(fb);
}
