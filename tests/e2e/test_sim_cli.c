/* plumb sim end to end: a lackey trace on stdin and in a file, the JSON and
 * CSV shapes, byte-identical reruns, configuration errors, a program run
 * under lackey, and --check. */
#include <criterion/criterion.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run.h"
#include "../temp_folder.h"

/* Two threads ping-ponging a shared word (lackey text with SCHED lines). */
static char *ping_pong_trace(int rounds)
{
	size_t capacity = 128 + (size_t)rounds * 400;
	char *text = malloc(capacity), *at = text;
	at += sprintf(at, "==1== Lackey, an example Valgrind tool\n");
	for (int i = 0; i < rounds; i++)
		for (int thread = 1; thread <= 2; thread++) {
			at += sprintf(at, "--1--   SCHED[%d]:  acquired lock (VG_(scheduler) timeslice)\n", thread);
			at += sprintf(at, "I  00400000,4\n L 10000000,4\n S 10000000,4\n");
		}
	return text;
}

Test(sim_cli, help_and_lists)
{
	cli_run r = cli_run_plumbv(NULL, "sim", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb sim"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--list-presets", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "origin2000") && strstr(r.out, "zen4") && strstr(r.out, "cachegrind"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--list-events", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "PAPI_CA_ITV"));
	cli_run_free(&r);
}

Test(sim_cli, ping_pong_from_stdin_as_json)
{
	char *trace = ping_pong_trace(50);
	cli_run r = cli_run_plumbv(trace, "sim", "--preset", "default", "--cores", "2", "--check", "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"invalidations_received\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"true sharing\""), "the hot line is truly shared: %s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--cores", "2", "--csv", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	/* 2K reads, all L1D misses: 2 cold + 98 coherence; 99 invalidations */
	cr_assert(strstr(r.out, "D1 misses,100,100,0"), "%s", r.out);
	cli_run_free(&r);
	free(trace);
}

/* Options after the trace, as trace stats, cachegrind's cg_annotate and
 * Dinero take them: "plumb sim t.lackey --json" said "unexpected argument
 * '--json'".  A program's own options still belong to it after '--'. */
Test(sim_cli, options_may_follow_the_trace)
{
	char *trace = ping_pong_trace(20);
	const char *path = cli_temp_path("pp.lackey");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(trace, f);
	fclose(f);
	free(trace);
	cli_run before = cli_run_plumbv(NULL, "sim", "--preset", "default", "--cores", "2", "--json", path, NULL);
	cli_run after = cli_run_plumbv(NULL, "sim", path, "--preset", "default", "--cores", "2", "--json", NULL);
	cr_assert_eq(before.exit_code, 0, "%s", before.err);
	cr_assert_eq(after.exit_code, 0, "%s", after.err);
	cr_assert_str_eq(after.out, before.out);
	cli_run_free(&before);
	cli_run_free(&after);
	cli_run two = cli_run_plumbv(NULL, "sim", path, path, NULL);
	cli_assert_usage_error(&two, "sim");
	cli_run_free(&two);
	/* after '--' an option is the program's: --json goes to echo */
	cli_run program = cli_run_plumbv(NULL, "sim", "--preset", "default", "--", "/bin/echo", "--json", NULL);
	if (program.exit_code == 0)
		cr_expect(strstr(program.err, "--json") && !strstr(program.out, "\"schema\""), "%s", program.out);
	cli_run_free(&program);
}

Test(sim_cli, same_input_same_bytes)
{
	char *trace = ping_pong_trace(40);
	const char *path = cli_temp_path("pp.lackey");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(trace, f);
	fclose(f);
	cli_run a = cli_run_plumbv(NULL, "sim", "--preset", "zen4", "--cores", "3", "--json", path, NULL);
	cli_run b = cli_run_plumbv(NULL, "sim", "--preset", "zen4", "--cores", "3", "--json", path, NULL);
	cr_assert_eq(a.exit_code, 0, "%s", a.err);
	cr_assert_str_eq(a.out, b.out);
	cli_run_free(&a);
	cli_run_free(&b);
	a = cli_run_plumbv(NULL, "sim", "--set", "l1d.replacement=random", path, NULL);
	b = cli_run_plumbv(NULL, "sim", "--set", "l1d.replacement=random", path, NULL);
	cr_assert_str_eq(a.out, b.out);
	cli_run_free(&a);
	cli_run_free(&b);
	free(trace);
}

Test(sim_cli, configuration_errors)
{
	cli_run r = cli_run_plumbv(NULL, "sim", "--l1d", "32K,7,64", "-", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "L1D"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--preset", "vax", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "unknown preset 'vax'"), "%s", r.err);
	cli_run_free(&r);
	const char *path = cli_temp_path("bad.conf");
	FILE *f = fopen(path, "w");
	fputs("cores = 2\n[l1d]\nsise = 4K\n", f);
	fclose(f);
	r = cli_run_plumbv(NULL, "sim", "--config", path, NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "line 3: unknown key 'l1d.sise'"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--set", "cores", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--cores", "2", "--print-config", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "cores = 2"), "%s", r.out);
	cli_run_free(&r);
}

Test(sim_cli, bad_trace_is_an_error)
{
	cli_run r = cli_run_plumbv("this is not a trace\n", "sim", "--format", "lackey", "-", NULL);
	cr_assert_eq(r.exit_code, 1, "%s", r.out);
	cr_assert_str_eq(r.err, "plumb sim: standard input: lackey line 1: not a lackey trace line (log the trace with "
	                        "--log-file or --log-fd): 'this is not a trace'\n");
	cr_assert_str_eq(r.out, "");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "/nonexistent/trace", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert_str_eq(r.err, "plumb sim: cannot open trace '/nonexistent/trace': No such file or directory\n");
	cli_run_free(&r);
}

Test(sim_cli, runs_a_program_under_lackey, .timeout = 120)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	cli_run r = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--csv", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	/* /bin/true's counts vary with the C library, but they must add up: at
	 * least a thousand instructions, misses never above references, the last
	 * level never missing more than the first */
	unsigned long long i_refs, i1_misses, lli_misses, d_refs, d_reads, d_writes, d1_misses, lld_misses;
	const char *at = strstr(r.out, "\nI refs,");
	cr_assert(at && sscanf(at, "\nI refs,%llu,", &i_refs) == 1, "%s", r.out);
	cr_assert(sscanf(strstr(r.out, "\nI1 misses,"), "\nI1 misses,%llu,", &i1_misses) == 1, "%s", r.out);
	cr_assert(sscanf(strstr(r.out, "\nLLi misses,"), "\nLLi misses,%llu,", &lli_misses) == 1, "%s", r.out);
	cr_assert(sscanf(strstr(r.out, "\nD refs,"), "\nD refs,%llu,%llu,%llu", &d_refs, &d_reads, &d_writes) == 3);
	cr_assert(sscanf(strstr(r.out, "\nD1 misses,"), "\nD1 misses,%llu,", &d1_misses) == 1, "%s", r.out);
	cr_assert(sscanf(strstr(r.out, "\nLLd misses,"), "\nLLd misses,%llu,", &lld_misses) == 1, "%s", r.out);
	cr_assert_geq(i_refs, 1000);
	cr_assert(i1_misses > 0 && i1_misses <= i_refs && lli_misses <= i1_misses, "%s", r.out);
	cr_assert_eq(d_refs, d_reads + d_writes);
	cr_assert(d_reads > 0 && d_writes > 0 && d1_misses > 0 && d1_misses <= d_refs && lld_misses <= d1_misses, "%s",
	          r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--", "/nonexistent/program", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "/nonexistent/program"), "%s", r.err);
	cli_run_free(&r);
}

/* A plumb without plumbgrind beside it once fell back to lackey without a
 * word, and ran some 40 times slower: it says so now, and still runs. */
Test(sim_cli, a_plumb_without_its_tool_says_lackey_traces, .timeout = 120)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	const char *copy = cli_temp_path("plumb");
	char command[4096];
	snprintf(command, sizeof command, "cp '%s' '%s'", getenv("PLUMB_BIN"), copy);
	cr_assert_eq(system(command), 0);
	setenv("PLUMB_BIN", copy, 1);
	unsetenv("PLUMB_VALGRIND_LIB");
	unsetenv("PLUMB_TRACE_LACKEY");
	unsetenv("VALGRIND_LIB");
	cli_run r = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--csv", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "plumb sim: note: plumbgrind, plumb's Valgrind tool, was not found") &&
	          strstr(r.err, "tracing with Valgrind's lackey"), "%s", r.err);
	cr_assert(strstr(r.out, "\nI refs,"), "%s", r.out);
	cli_run_free(&r);
	/* chosen on purpose: no note */
	setenv("PLUMB_TRACE_LACKEY", "1", 1);
	r = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--csv", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(!strstr(r.err, "note: plumbgrind"), "%s", r.err);
	cli_run_free(&r);
}

/* A plumb copied out of its build tree with VALGRIND_LIB naming
 * plumbgrind's folder (as valgrind reads it) and no PLUMB_VALGRIND_LIB fell
 * back to lackey, and plumb instrument refused to run: both find plumbgrind
 * there now.  With VALGRIND_LIB naming a folder without it (valgrind's own),
 * plumb sim says in one line which tool traces and why, naming the folder. */
Test(sim_cli, a_plumb_outside_its_tree_finds_plumbgrind_in_VALGRIND_LIB, .timeout = 180)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	char tool_dir[4096], binary[4096];
	snprintf(binary, sizeof binary, "%s", getenv("PLUMB_BIN"));
	char *slash = strrchr(binary, '/');
	snprintf(tool_dir, sizeof tool_dir, "%.*s/vg/lib", slash ? (int)(slash - binary) : 1, slash ? binary : ".");
	char tool[4200], lackey[4200], stock[4096];
	snprintf(tool, sizeof tool, "%s/plumbgrind-amd64-linux", tool_dir);
	snprintf(lackey, sizeof lackey, "%s/lackey-amd64-linux", tool_dir);
	if (access(tool, X_OK) != 0 || !realpath(lackey, stock))
		cr_skip_test("plumbgrind is not built here (needs valgrind's tool libraries)");
	*strrchr(stock, '/') = 0;   /* valgrind's own folder: lackey, no plumbgrind */
	const char *copy = cli_temp_path("plumb-outside");
	char command[8400];
	snprintf(command, sizeof command, "cp '%s' '%s'", binary, copy);
	cr_assert_eq(system(command), 0);
	setenv("PLUMB_BIN", copy, 1);
	unsetenv("PLUMB_VALGRIND_LIB");
	unsetenv("PLUMB_TRACE_LACKEY");
	setenv("VALGRIND_LIB", tool_dir, 1);
	cli_run r = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_null(strstr(r.err, "lackey"), "%s", r.err);
	cr_assert_null(strstr(r.out, "format: lackey"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "instrument", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	setenv("VALGRIND_LIB", stock, 1);
	r = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	char expected[4400];
	snprintf(expected, sizeof expected, "nor in VALGRIND_LIB=%s: tracing with that folder's lackey", stock);
	const char *note = strstr(r.err, "plumb sim: note: plumbgrind");
	cr_assert(note && strstr(note, expected), "%s", r.err);
	cr_assert(strchr(note, '\n') && !strstr(strchr(note, '\n'), "lackey"), "one line: %s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "instrument", "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "VALGRIND_LIB="), "%s", r.err);
	cli_run_free(&r);
	unsetenv("VALGRIND_LIB");
	unlink(copy);
}

/* A program that execs another (a wrapper script; pyenv's python3 is one)
 * never exits under Valgrind, which does not follow the exec: plumbgrind's
 * code map was never written and plumb said only "cannot read the code map
 * ...: No such file or directory".  It now says what happened and what to do. */
Test(sim_cli, a_program_that_execs_is_named_as_such, .timeout = 120)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	unsetenv("PLUMB_TRACE_LACKEY");
	/* --basic names no code: plumbgrind writes no code map, and the ring's
	 * last word tells an exit from an exec; a classified run has a code
	 * table and the code map's file tells them apart; PLUMB_TRACE_TEXT has
	 * no ring, so it keeps the code map even with --basic. */
	static const char *const basic[] = { "--basic", "--top=10", "--basic" };
	static const char *const text[] = { "", "", "1" };
	for (int i = 0; i < 3; i++) {
		setenv("PLUMB_TRACE_TEXT", text[i], 1);
		cli_run r = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", basic[i], "--csv", "--", "sh", "-c",
		                           "exec /bin/true", NULL);
		unsetenv("PLUMB_TRACE_TEXT");
		if (strstr(r.err, "note: plumbgrind")) {
			cli_run_free(&r);
			cr_skip_test("plumbgrind is not built (lackey traces, without a code map)");
		}
		cr_assert_eq(r.exit_code, 1, "%s: %s", basic[i], r.err);
		cr_assert_str_eq(r.out, "");
		/* through the ring the tool names the program exec'd; without it, not */
		cr_assert(strstr(r.err, text[i][0] ? "plumb sim: 'sh' exec'd another program (a wrapper script?), which "
		                                     "Valgrind does not follow"
		                                   : "plumb sim: 'sh' exec'd /bin/true, which Valgrind does not follow: the "
		                                     "trace stopped there; plumb follows one program image: run plumb on "
		                                     "/bin/true directly"), "%s: %s", basic[i], r.err);
		cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
		cli_run_free(&r);
	}
}

/* A run whose outputs name no code (--basic: no code table) asks plumbgrind
 * for no code map, which spares it the debug-information lookup of every
 * instruction; the program's exit still ends the run cleanly, with the same
 * figures. */
Test(sim_cli, a_run_without_a_code_table_asks_for_no_code_map, .timeout = 120)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	unsetenv("PLUMB_TRACE_LACKEY");
	char *const program = "/bin/true";
	char trace[TEMP_PATH_SIZE];
	temp_template(trace, sizeof trace, "plumb-sim-nocode-XXXXXX");
	int fd = mkstemp(trace);
	cr_assert(fd >= 0);
	close(fd);
	/* a wrapper for valgrind (PLUMB_VALGRIND) that notes its options */
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-sim-nocode-dir-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	const char *given = getenv("PLUMB_VALGRIND");
	char *real = strdup(given && given[0] ? given : "valgrind");
	char wrapper[512], script[1024];
	snprintf(wrapper, sizeof wrapper, "%s/valgrind", dir);
	snprintf(script, sizeof script, "#!/bin/sh\necho \"$@\" >> %s\nexec %s \"$@\"\n", trace, real);
	FILE *f = fopen(wrapper, "w");
	cr_assert_not_null(f);
	fputs(script, f);
	fclose(f);
	chmod(wrapper, 0755);
	setenv("PLUMB_VALGRIND", wrapper, 1);
	cli_run basic = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--basic", "--csv", "--", program, NULL);
	cli_run classified = cli_run_plumbv(NULL, "sim", "--preset", "cachegrind", "--csv", "--", program, NULL);
	if (given)
		setenv("PLUMB_VALGRIND", real, 1);
	else
		unsetenv("PLUMB_VALGRIND");
	free(real);
	if (strstr(basic.err, "note: plumbgrind")) {
		cli_run_free(&basic);
		cli_run_free(&classified);
		cr_skip_test("plumbgrind is not built");
	}
	cr_assert_eq(basic.exit_code, 0, "%s", basic.err);
	cr_assert_eq(classified.exit_code, 0, "%s", classified.err);
	char *options = NULL;
	size_t length = 0;
	FILE *log = fopen(trace, "r");
	cr_assert_not_null(log);
	cr_assert(getdelim(&options, &length, 0, log) > 0);
	fclose(log);
	/* two valgrind runs: the first (--basic) without --plumb-code, the second with */
	char *second = strchr(options, '\n');
	cr_assert_not_null(second, "%s", options);
	*second++ = 0;
	cr_assert(strstr(options, "--tool=plumbgrind"), "%s", options);
	cr_assert_null(strstr(options, "--plumb-code"), "%s", options);
	cr_assert(strstr(second, "--plumb-code=/"), "%s", second);
	/* the same references either way */
	const char *refs = strstr(basic.out, "I refs,"), *classified_refs = strstr(classified.out, "I refs,");
	cr_assert(refs && classified_refs, "%s", basic.out);
	cr_assert_eq(strncmp(refs, classified_refs, strcspn(refs, "\n")), 0, "%s\n%s", basic.out, classified.out);
	free(options);
	cli_run_free(&basic);
	cli_run_free(&classified);
	unlink(wrapper);
	rmdir(dir);
	unlink(trace);
}

Test(sim_cli, native_and_lackey_give_the_same_counts)
{
	char *trace = ping_pong_trace(30);
	const char *lackey = cli_temp_path("same.lackey"), *native = cli_temp_path("same.ptrace");
	FILE *f = fopen(lackey, "w");
	cr_assert_not_null(f);
	fputs(trace, f);
	fclose(f);
	cli_run r = cli_run_plumbv(NULL, "trace", "convert", lackey, native, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	/* every table is the same (the metadata names the trace and its format) */
	const char *tables[] = { "summary", "caches", "coherence", "threads" };
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		cli_run a = cli_run_plumbv(NULL, "sim", "--cores", "2", "--table", tables[t], lackey, NULL);
		cli_run b = cli_run_plumbv(NULL, "sim", "--cores", "2", "--table", tables[t], native, NULL);
		cr_assert_eq(a.exit_code, 0, "%s", a.err);
		cr_assert_eq(b.exit_code, 0, "%s", b.err);
		cr_assert_gt(strlen(a.out), 20);
		cr_assert_str_eq(a.out, b.out);
		cli_run_free(&a);
		cli_run_free(&b);
	}
	free(trace);
}

/* A sysfs cache attribute of CPU 0's level-1 data cache, or -1. */
static long l1d_attribute(const char *name, char *text, size_t size)
{
	for (int index = 0; index < 8; index++) {
		char path[128], type[32] = "", level[8] = "";
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
		FILE *f = fopen(path, "r");
		if (!f)
			return -1;
		if (!fgets(type, sizeof type, f))
			type[0] = 0;
		fclose(f);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
		f = fopen(path, "r");
		if (!f || !fgets(level, sizeof level, f))
			level[0] = 0;
		if (f)
			fclose(f);
		if (strncmp(type, "Data", 4) != 0 || atoi(level) != 1)
			continue;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, name);
		f = fopen(path, "r");
		if (!f || !fgets(text, (int)size, f)) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		text[strcspn(text, "\n")] = 0;
		return atol(text);
	}
	return -1;
}

/* The host preset is this machine's L1D as sysfs describes it. */
Test(sim_cli, host_preset)
{
	char size[32], line[32], ways[32];
	if (l1d_attribute("size", size, sizeof size) < 0 || l1d_attribute("coherency_line_size", line, sizeof line) < 0 ||
	    l1d_attribute("ways_of_associativity", ways, sizeof ways) < 0)
		cr_skip_test("sysfs does not describe CPU 0's L1 data cache here");
	cli_run r = cli_run_plumbv(NULL, "sim", "--preset", "host", "--print-config", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	char expected[160];
	snprintf(expected, sizeof expected, "[l1d]\nsize = %s\nline = %s\nassoc = %s\n", size, line, ways);
	cr_assert(strstr(r.out, expected), "'%s' not in: %s", expected, r.out);
	cli_run_free(&r);
}

/* Exact counts of a hand-built trace: three lines of one set of a 2-way,
 * 8-set L1D, read A B C A C, then B written.  LRU: A, B, C miss (C evicts A),
 * A misses again (evicting B), C hits, B misses (evicting C): 4 read and 1
 * write misses, 3 of them cold (the L2 misses) and 2 conflicts.  With 16
 * ways the same trace misses only cold. */
Test(sim_cli, exact_misses_of_a_hand_built_trace)
{
	static const char trace[] = " L 10000000,8\n L 10000200,8\n L 10000400,8\n L 10000000,8\n L 10000400,8\n"
	                            " S 10000200,8\n";
	cli_run r = cli_run_plumbv(trace, "sim", "--preset", "default", "--set", "l1d.size=1K", "--set", "l1d.assoc=2", "--set",
	                           "l1d.line=64", "--csv", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nD refs,6,5,1,,ok,\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\nD1 misses,5,4,1,"), "%s", r.out);
	cr_assert(strstr(r.out, "\nLLd misses,3,3,0,"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--set", "l1d.size=1K", "--set", "l1d.assoc=2", "--set",
	                   "l1d.line=64", "--table", "caches", "-", NULL);
	/* L1D: 5 reads, 1 write, 4 + 1 misses, 3 evictions, 3 compulsory, 0 capacity, 2 conflict */
	cr_assert(strstr(r.out, "\n0,L1D,0,5,1,0,4,1,83.3333333333333,3,0,3,0,2,"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--set", "l1d.size=1K", "--set", "l1d.assoc=16", "--set",
	                   "l1d.line=64", "--csv", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nD1 misses,3,3,0,"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--set", "l1d.size=1K", "--set", "l1d.assoc=16", "--set",
	                   "l1d.line=64", "--table", "caches", "-", NULL);
	cr_assert(strstr(r.out, "\n0,L1D,0,5,1,0,3,0,50,0,0,3,0,0,"), "%s", r.out);
	cli_run_free(&r);
}

/* Stream buffers from the command line: a walk over 200 new lines (lackey
 * text) misses once in the L1D with a stream buffer and 200 times without;
 * the JSON prefetch table says where the other 199 came from.  A bad lookup
 * name is a usage error. */
Test(sim_cli, stream_buffers)
{
	size_t capacity = 64 + 200 * 32;
	char *trace = malloc(capacity), *at = trace;
	for (int i = 0; i < 200; i++)
		at += sprintf(at, " L %08x,8\n", 0x10000000 + 64 * i);
	cli_run r = cli_run_plumbv(trace, "sim", "--preset", "default", "--prefetch", "stream", "--check", "--csv", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "D1 misses,1,1,0"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--csv", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "D1 misses,200,200,0"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--prefetch", "stream", "--set", "prefetch.lookup=any",
	                   "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out), *row = json_object_array_get_idx(cli_json_rows(root, "prefetch"), 0), *v;
	cr_assert(json_object_object_get_ex(row, "stream_hits", &v) && json_object_get_int64(v) == 199, "%s", r.out);
	cr_assert(json_object_object_get_ex(row, "allocations", &v) && json_object_get_int64(v) == 1, "%s", r.out);
	json_object_put(root);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--prefetch", "stream", "--set", "prefetch.lookup=sideways", "-", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "prefetch.lookup"), "%s", r.err);
	cli_run_free(&r);
	free(trace);
}

/* A bad number once printed "l1d.assoc: l1d.assoc: of range [1, 1048576]": the parse
 * error was formatted into its own buffer.  Each route names the key once. */
Test(sim_cli, a_bad_setting_names_its_key_once)
{
	cli_run r = cli_run_plumbv(NULL, "sim", "--set", "l1d.assoc=0", "-", NULL);
	cli_assert_usage_error(&r, "sim");
	cr_assert_str_eq(r.err, "plumb sim: l1d.assoc: '0' is out of range [1, 1048576] (see 'plumb sim --help')\n");
	cli_run_free(&r);
	const char *path = cli_temp_path("assoc.conf");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("[l1d]\nassoc = 0\n", f);
	fclose(f);
	r = cli_run_plumbv(NULL, "sim", "-c", path, "-", NULL);
	cli_assert_usage_error(&r, "sim");
	char expected[1024];
	snprintf(expected, sizeof expected,
	         "plumb sim: %s: line 2: l1d.assoc: '0' is out of range [1, 1048576] (see 'plumb sim --help')\n", path);
	cr_assert_str_eq(r.err, expected);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "--set", "seed=x", "-", NULL);
	cr_assert_str_eq(r.err, "plumb sim: seed: 'x' is not an integer (see 'plumb sim --help')\n");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "validate", "--backend", "sim", "--sim-set", "l1d.assoc=0", NULL);
	cli_assert_usage_error(&r, "validate");
	cr_assert_str_eq(r.err,
	                 "plumb validate: --set: l1d.assoc: '0' is out of range [1, 1048576] (see 'plumb validate --help')\n");
	cli_run_free(&r);
}

/* Without a configuration plumb sim simulates this machine: its meta says
 * "machine: host (hwloc: ...)" and its L1D is the one sysfs describes (read
 * here, never written into the test). */
static long sysfs_number(const char *index, const char *file)
{
	char path[256], text[64];
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/%s/%s", index, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long value = -1;
	if (fgets(text, sizeof text, f)) {
		char *end;
		value = strtol(text, &end, 10);
		if (*end == 'K')
			value *= 1024;
		else if (*end == 'M')
			value *= 1024 * 1024;
	}
	fclose(f);
	return value;
}

Test(sim_cli, default_machine_is_this_host)
{
	long size = -1, ways = -1, line = -1;
	for (int i = 0; i < 8 && size < 0; i++) {
		char index[16], path[256], type[32] = "";
		snprintf(index, sizeof index, "index%d", i);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/%s/type", index);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(type, sizeof type, f))
			type[0] = 0;
		fclose(f);
		if (sysfs_number(index, "level") == 1 && !strncmp(type, "Data", 4)) {
			size = sysfs_number(index, "size");
			ways = sysfs_number(index, "ways_of_associativity");
			line = sysfs_number(index, "coherency_line_size");
		}
	}
	if (size <= 0 || ways <= 0 || line <= 0)
		cr_skip_test("sysfs does not describe this machine's L1D");
	cli_run r = cli_run_plumbv(" L 00001000,8\n", "sim", "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out), *meta, *v;
	cr_assert(json_object_object_get_ex(root, "meta", &meta), "%s", r.out);
	cr_assert(json_object_object_get_ex(meta, "machine", &v), "%s", r.out);
	cr_expect(!strncmp(json_object_get_string(v), "host (hwloc: L1d ", 17), "%s", json_object_get_string(v));
	cr_assert(json_object_object_get_ex(meta, "L1D", &v), "%s", r.out);
	/* the size in the largest binary unit that divides it */
	char want[128];
	if (size % (1L << 20) == 0)
		snprintf(want, sizeof want, "%ld MiB, %ld-way, %ld B lines,", size >> 20, ways, line);
	else if (size % 1024 == 0)
		snprintf(want, sizeof want, "%ld KiB, %ld-way, %ld B lines,", size >> 10, ways, line);
	else
		snprintf(want, sizeof want, "%ld B, %ld-way, %ld B lines,", size, ways, line);
	cr_expect(!strncmp(json_object_get_string(v), want, strlen(want)), "L1D is '%s', sysfs says '%s'",
	          json_object_get_string(v), want);
	json_object_put(root);
	cli_run_free(&r);
	/* an explicit preset is not the host and says nothing of it */
	r = cli_run_plumbv(" L 00001000,8\n", "sim", "--preset", "cachegrind", "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(!strstr(r.out, "\"machine\""), "%s", r.out);
	cli_run_free(&r);
}

/* --interleave K: two threads' writes to adjacent counters of one line, by
 * turns as Valgrind runs them (one invalidation), and in lockstep (every write
 * after the first takes the line from the other core: 199).  Bad values and
 * --fair-sched without a program are usage errors. */
static long long invalidations_sent(const char *json)
{
	json_object *root = json_tokener_parse(json), *rows = cli_json_rows(root, "coherence"), *v;
	cr_assert_not_null(rows, "%s", json);
	long long total = 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(rows, i), "invalidations_sent", &v))
			total += json_object_get_int64(v);
	json_object_put(root);
	return total;
}

Test(sim_cli, interleave_threads)
{
	char *trace = malloc(100 * 2 * 16 + 64), *at = trace;
	for (int i = 0; i < 100; i++)
		at += sprintf(at, " S 00001000,8\n");
	at += sprintf(at, "--1--   SCHED[2]: t\n");
	for (int i = 0; i < 100; i++)
		at += sprintf(at, " S 00001008,8\n");
	cli_run r = cli_run_plumbv(trace, "sim", "--preset", "default", "--cores", "2", "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_eq(invalidations_sent(r.out), 1);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--cores", "2", "--interleave", "1", "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_eq(invalidations_sent(r.out), 199);
	cr_assert(strstr(r.out, "references of each thread in turn"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--preset", "default", "--cores", "2", "--interleave", "none", "--json", "-", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_eq(invalidations_sent(r.out), 1);
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--interleave", "0", "-", NULL);
	cli_assert_usage_error(&r, "sim");
	cli_run_free(&r);
	r = cli_run_plumbv(trace, "sim", "--fair-sched", "-", NULL);
	cli_assert_usage_error(&r, "sim");
	cli_run_free(&r);
	free(trace);
}

/* The misses of the caches table's L1D (or L3) row in a plumb sim --json report. */
static long long json_level_misses(const char *json, const char *level)
{
	json_object *root = json_tokener_parse(json);
	cr_assert_not_null(root, "%s", json);
	json_object *rows = cli_json_rows(root, "caches");
	long long misses = -1;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *v;
		if (!json_object_object_get_ex(row, "level", &v) || strcmp(json_object_get_string(v), level) != 0)
			continue;
		misses = 0;
		static const char *const kinds[] = { "ifetch_misses", "read_misses", "write_misses" };
		for (int k = 0; k < 3; k++)
			if (json_object_object_get_ex(row, kinds[k], &v))
				misses += json_object_get_int64(v);
	}
	json_object_put(root);
	return misses;
}

/* plumb sim --curve on a real program's trace: every point checked equals a
 * separate plumb sim run of that one configuration, in JSON and CSV, for the
 * L1D and for the LL below cachegrind's L1s. */
Test(sim_cli, curve_of_a_real_trace_equals_separate_runs, .timeout = 600)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	char *trace = strdup(cli_temp_path("sort.ptrace"));
	char *input = strdup(cli_temp_path("numbers"));
	FILE *f = fopen(input, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < 3000; i++)
		fprintf(f, "%d\n", (i * 7919) % 3001);
	fclose(f);
	cli_run r = cli_run_plumbv(NULL, "trace", "record", trace, "--", "/usr/bin/sort", "-n", input, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	cli_run curve = cli_run_plumbv(NULL, "sim", "-p", "default", "--l2", "none", "--curve", "l1d", "--curve-max", "1M",
	                               "--json", trace, NULL);
	cr_assert_eq(curve.exit_code, 0, "%s", curve.err);
	json_object *root = json_tokener_parse(curve.out);
	cr_assert_not_null(root, "%s", curve.out);
	json_object *rows = cli_json_rows(root, "curve");
	static const struct { long long size, ways; } points[] = { { 4096, 1 }, { 8192, 4 }, { 16384, 16 },
		                                                       { 32768, 8 }, { 65536, 1024 }, { 2048, 32 } };
	size_t checked = 0;
	for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
		long long misses = -1;
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			json_object *row = json_object_array_get_idx(rows, i), *v;
			json_object_object_get_ex(row, "region", &v);
			if (strcmp(json_object_get_string(v), "(all)") != 0)
				continue;
			json_object_object_get_ex(row, "size_bytes", &v);
			long long size = json_object_get_int64(v);
			json_object_object_get_ex(row, "ways", &v);
			long long ways = json_object_get_int64(v);
			if (size == points[p].size && ways == points[p].ways) {
				json_object_object_get_ex(row, "misses", &v);
				misses = json_object_get_int64(v);
			}
		}
		cr_assert_geq(misses, 0, "no row for %lld B %lld-way", points[p].size, points[p].ways);
		char geometry[64];
		snprintf(geometry, sizeof geometry, "%lld,%lld,64", points[p].size, points[p].ways);
		cli_run one = cli_run_plumbv(NULL, "sim", "-p", "default", "--l2", "none", "--l1d", geometry, "--basic",
		                             "--json", trace, NULL);
		cr_assert_eq(one.exit_code, 0, "%s", one.err);
		cr_assert_eq(json_level_misses(one.out, "L1D"), misses, "%s: curve %lld", geometry, misses);
		cli_run_free(&one);
		checked++;
	}
	cr_assert_eq(checked, 6);
	json_object_put(root);
	cli_run_free(&curve);
	/* the LL under cachegrind's L1s (non-inclusive): what missed them */
	curve = cli_run_plumbv(NULL, "sim", "-p", "cachegrind", "--curve", "l3", "--curve-max", "1M", "--csv", trace, NULL);
	cr_assert_eq(curve.exit_code, 0, "%s", curve.err);
	static const char *const l3_points[] = { "16384,4", "65536,16" };
	for (size_t p = 0; p < 2; p++) {
		char row[64];
		snprintf(row, sizeof row, "\n(all),l3,%s,", l3_points[p]);
		const char *at = strstr(curve.out, row);
		cr_assert_not_null(at, "%s", curve.out);
		long long sets, misses;
		cr_assert_eq(sscanf(at + strlen(row), "%lld,%lld,", &sets, &misses), 2);
		char geometry[64];
		snprintf(geometry, sizeof geometry, "%s,64", l3_points[p]);
		cli_run one = cli_run_plumbv(NULL, "sim", "-p", "cachegrind", "--l3", geometry, "--basic", "--json", trace, NULL);
		cr_assert_eq(one.exit_code, 0, "%s", one.err);
		cr_assert_eq(json_level_misses(one.out, "L3"), misses, "L3 %s: curve %lld", geometry, misses);
		cli_run_free(&one);
	}
	cli_run_free(&curve);
	/* the same table in CSV */
	curve = cli_run_plumbv(NULL, "sim", "-p", "default", "--l2", "none", "--curve", "l1d", "--curve-max", "1M",
	                       "--csv", trace, NULL);
	cr_assert_eq(curve.exit_code, 0, "%s", curve.err);
	cr_assert(strncmp(curve.out, "region,level,size_bytes[B],ways,sets,misses,miss_ratio\n(all),l1d,64,1,1,", 72) == 0,
	          "%s", curve.out);
	cli_run_free(&curve);
	free(trace);
	free(input);
}

/* plumb sim -- PROG: the program's standard output is plumb's when the
 * report goes to a file (-o), as under cachegrind, and plumb's standard
 * error when the report takes the standard output, which then holds the
 * report alone (here JSON that parses). */
Test(sim_cli, the_programs_output_goes_where_the_report_does_not, .timeout = 120)
{
	const char *file = cli_temp_path("report.json");
	cli_run r = cli_run_plumbv(NULL, "sim", "-p", "cachegrind", "--basic", "--json", "-o", file, "--", "/bin/echo",
	                           "the-programs-words", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "the-programs-words"), "stdout: %s", r.out);
	cr_assert_null(strstr(r.err, "the-programs-words"), "stderr: %s", r.err);
	size_t size;
	char *report = cli_read_file(file, &size);
	cr_assert(report && strstr(report, "\"schema\""), "the report file: %s", report ? report : "(none)");
	free(report);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "sim", "-p", "cachegrind", "--basic", "--json", "--", "/bin/echo", "the-programs-words",
	                   NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "the-programs-words"), "stderr: %s", r.err);
	cr_assert_null(strstr(r.out, "the-programs-words"), "stdout: %s", r.out);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "stdout is not the report alone: %.300s", r.out);
	json_object_put(root);
	cli_run_free(&r);
}
