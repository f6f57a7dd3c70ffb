/* plumb explain's Valgrind run (issues 25, 27, 29, 30): the one launcher
 * and binary ring it shares with plumb sim, so that its exact counts equal
 * plumb instrument's and its simulated misses plumb sim's; threads that
 * share a line (true and false sharing, the variable named); a program that
 * exec's another, refused by explain, sim and trace record alike, with
 * plumbgrind and with lackey; a handled signal under lackey. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run.h"

static void need_plumbgrind_and_library(void)
{
	char library[4200];
	cli_need_plumbgrind();
	snprintf(library, sizeof library, "%s/libplumb.so", cli_build_dir());
	size_t size;
	char *text = cli_read_file(library, &size);
	bool sanitized = text && memmem(text, size, "__asan_init", 11) != NULL;
	free(text);
	if (sanitized)
		cr_skip_test("the sanitizer build's library cannot run under Valgrind");
}

/* tests/data/NAME.c compiled against the built library into the test's folder. */
static const char *compile(const char *name)
{
	static char program[4200];
	char dir[4096], command[32768], library[4200];
	/* The sanitizer build makes no shared library (make sanitize). */
	snprintf(library, sizeof library, "%s/libplumb.so", cli_build_dir());
	if (access(library, R_OK) != 0)
		cr_skip_test("this build has no libplumb.so to link the test program with");
	snprintf(dir, sizeof dir, "%s", cli_temp_path("programs"));
	snprintf(program, sizeof program, "%s/%s", dir, name);
	snprintf(command, sizeof command,
	         "mkdir -p %s && ln -sf %s/libplumb.so %s/libplumb.so.0 && "
	         "cc -O2 -pthread -I%s/include -o %s %s/tests/data/%s.c %s/libplumb.so -Wl,-rpath,%s",
	         dir, cli_build_dir(), dir, cli_source_dir(), program, cli_source_dir(), name, cli_build_dir(), dir);
	cr_assert_eq(system(command), 0, "%s", command);
	return program;
}

/* A machine of no figures: no probe (the predictions say why they are missing). */
static const char *machine_file(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s", cli_temp_path("machine.json"));
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"bw\", \"tables\": []}\n", f);
	fclose(f);
	return path;
}

static json_object *parse(const char *text)
{
	json_object *root = json_tokener_parse(text);
	cr_assert_not_null(root, "not JSON: %.500s", text);
	return root;
}

static json_object *row_where(json_object *rows, const char *column, const char *value)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (json_object_object_get_ex(row, column, &cell) && !strcmp(json_object_get_string(cell), value))
			return row;
	}
	return NULL;
}

static int64_t count(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	cr_assert(json_object_is_type(cell, json_type_int), "%s is not a count: %s", column,
	          json_object_to_json_string(cell));
	return json_object_get_int64(cell);
}

static bool notes_hold(json_object *root, const char *text)
{
	json_object *notes;
	if (!json_object_object_get_ex(root, "notes", &notes))
		return false;
	for (size_t i = 0; i < json_object_array_length(notes); i++)
		if (strstr(json_object_get_string(json_object_array_get_idx(notes, i)), text))
			return true;
	return false;
}

/* The environment explain gives the program under Valgrind, so that plumb
 * instrument and plumb sim run exactly the same references. */
static void explain_environment(void)
{
	setenv("LD_BIND_NOW", "1", 1);
	setenv("PLUMB_BACKEND", "none", 1);
	setenv("PLUMB_REGION_QUIET", "1", 1);
	unsetenv("PLUMB_REGION_JSON");
}

Test(explain_valgrind, counts_equal_instrument_and_misses_equal_sim, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *program = compile("explain_target");
	const char *machine = machine_file();
	/* a sweep of 1 MiB, a chase of 256 KiB walked once, 10^4 multiply-adds */
	cli_run e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine, "--json", "--", program,
	                           "1048576", "262144", "1", "10000", NULL);
	cr_assert_eq(e.exit_code, 0, "%s", e.err);
	explain_environment();
	cli_run s = cli_run_plumbv(NULL, "sim", "--json", "--", program, "1048576", "262144", "1", "10000", NULL);
	cli_run i = cli_run_plumbv(NULL, "instrument", "--json", "--", program, "1048576", "262144", "1", "10000",
	                           NULL);
	cr_assert_eq(s.exit_code, 0, "%s", s.err);
	cr_assert_eq(i.exit_code, 0, "%s", i.err);
	json_object *er = parse(e.out), *sr = parse(s.out), *ir = parse(i.out);
	json_object *regions = cli_json_rows(er, "regions"), *simulated = cli_json_rows(er, "simulated");
	json_object *sim_regions = cli_json_rows(sr, "regions"), *counted = cli_json_rows(ir, "regions");
	static const char *const names[] = { "sweep", "chase", "compute" };
	for (int k = 0; k < 3; k++) {
		json_object *mine = row_where(regions, "region", names[k]), *ins = row_where(counted, "region", names[k]);
		json_object *sim_mine = row_where(simulated, "region", names[k]);
		json_object *sims = row_where(sim_regions, "region", names[k]);
		cr_assert(mine && ins && sim_mine && sims, "region %s missing", names[k]);
		/* exact: plumbgrind's summary, as plumb instrument gives it */
		cr_expect_eq(count(mine, "instructions"), count(ins, "instructions"), "%s", names[k]);
		cr_expect_eq(count(mine, "loads"), count(ins, "loads"), "%s", names[k]);
		cr_expect_eq(count(mine, "stores"), count(ins, "stores"), "%s", names[k]);
		/* simulated: the same references through the same caches as plumb sim */
		cr_expect_eq(count(sim_mine, "l1d_misses"), count(sims, "l1d_misses"), "%s", names[k]);
		cr_expect_eq(count(sim_mine, "l2_misses"), count(sims, "l2_misses"), "%s", names[k]);
		cr_expect_eq(count(sim_mine, "l1i_misses"), count(sims, "l1i_misses"), "%s", names[k]);
		int64_t llc = count(sims, "l3_accesses") > 0 ? count(sims, "l3_misses") : count(sims, "l2_misses");
		cr_expect_eq(count(sim_mine, "llc_misses"), llc, "%s", names[k]);
	}
	json_object *all = row_where(cli_json_rows(ir, "threads"), "thread", "all");
	cr_assert_not_null(all);
	cr_expect_eq(count(row_where(regions, "region", "(program)"), "instructions"), count(all, "instructions"));
	json_object_put(er);
	json_object_put(sr);
	json_object_put(ir);
	cli_run_free(&e);
	cli_run_free(&s);
	cli_run_free(&i);
}

/* Two threads adding into two counters of one struct (false sharing), or
 * into one counter (true sharing): the simulation interleaves them finely by
 * default, counts the sharing in the region, and names the variable. */
static void sharing(const char *mode, const char *kind, const char *variable)
{
	need_plumbgrind_and_library();
	const char *program = compile("explain_sharing");
	cli_run r = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine_file(), "--json", "--", program,
	                           mode, "5000", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = parse(r.out);
	json_object *work = row_where(cli_json_rows(root, "simulated"), "region", "work");
	cr_assert_not_null(work);
	int64_t wanted = count(work, kind), other = count(work, !strcmp(kind, "true_sharing") ? "false_sharing"
	                                                                                        : "true_sharing");
	/* each add of one thread finds the line taken by the other's: about one
	 * miss per add of either thread; half is plenty */
	cr_expect_geq(wanted, 5000, "%s: %lld", kind, (long long)wanted);
	cr_expect_lt(other, wanted / 10, "the other kind: %lld", (long long)other);
	char expected[256];
	snprintf(expected, sizeof expected, "the hottest shared line: 0x");
	cr_expect(notes_hold(root, expected), "%s", r.out);
	cr_expect(notes_hold(root, variable), "no note names %s: %s", variable, r.out);
	cr_expect(notes_hold(root, "interleaved 1 of each in turn"), "%s", r.out);
	json_object_put(root);
	cli_run_free(&r);
}

Test(explain_valgrind, false_sharing_is_found_and_its_variable_named, .timeout = 300)
{
	sharing("false", "false_sharing", "pair (16 bytes, at byte 0 of the line)");
}

Test(explain_valgrind, true_sharing_is_found_and_its_variable_named, .timeout = 300)
{
	sharing("true", "true_sharing", "shared_total (8 bytes, at byte 0 of the line)");
}

/* A machine of made-up figures, enough for a prediction (its clock turns
 * the block model's cycles into compute_ns). */
static const char *priced_machine_file(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s", cli_temp_path("priced-machine.json"));
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"explain\", \"meta\": "
	      "{\"clock_ghz\": 3.0, \"line_bytes\": 64}, \"tables\": [{\"name\": \"machine\", \"columns\": "
	      "[{\"name\": \"level\"}, {\"name\": \"size_bytes\"}, {\"name\": \"latency_ns\"}, {\"name\": "
	      "\"bandwidth_gbps\"}, {\"name\": \"mlp\"}], \"rows\": ["
	      "{\"level\": \"L1\", \"size_bytes\": 49152, \"latency_ns\": 1.5, \"bandwidth_gbps\": 200, \"mlp\": null}, "
	      "{\"level\": \"L2\", \"size_bytes\": 2097152, \"latency_ns\": 5, \"bandwidth_gbps\": 100, \"mlp\": 10}, "
	      "{\"level\": \"L3\", \"size_bytes\": 33554432, \"latency_ns\": 30, \"bandwidth_gbps\": 40, \"mlp\": 10}, "
	      "{\"level\": \"memory\", \"size_bytes\": null, \"latency_ns\": 100, \"bandwidth_gbps\": 10, \"mlp\": 10}]}]}\n",
	      f);
	fclose(f);
	return path;
}

static double real(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	cr_assert(json_object_is_type(cell, json_type_double) || json_object_is_type(cell, json_type_int),
	          "%s is not a number: %s", column, json_object_to_json_string(cell));
	return json_object_get_double(cell);
}

/* plumb explain --runs 1 --machine MACHINE --json -- PROGRAM... as JSON
 * (the caller frees the root and the run), its in-core line in core; the
 * test is skipped when LLVM's tools cannot price blocks here, and fails
 * for any other reason the blocks went unpriced. */
static json_object *explain_priced(cli_run *r, const char *machine, const char *const program[], char *core,
                                   size_t core_size)
{
	const char *argv[16] = { "explain", "--runs", "1", "--machine", machine, "--json", "--" };
	size_t n = 7;
	for (size_t i = 0; program[i]; i++) {
		cr_assert(n < 15, "too many arguments");
		argv[n++] = program[i];
	}
	argv[n] = NULL;
	*r = cli_run_plumb(NULL, argv);
	cr_assert_eq(r->exit_code, 0, "%s", r->err);
	json_object *root = parse(r->out), *meta = NULL, *in_core = NULL;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, "in_core", &in_core));
	snprintf(core, core_size, "%s", json_object_get_string(in_core));
	if (strstr(core, "was not found") || strstr(core, "knows none of the CPU names")) {
		json_object_put(root);
		cli_run_free(r);
		cr_skip_test("LLVM's tools cannot price blocks here: %s", core);
	}
	cr_assert(strstr(core, "llvm-mca"), "%s: the blocks were not priced: %s", program[0], core);
	return root;
}

/* The block model's instructions in region (IPC x in-core time x clock)
 * equal plumbgrind's exact count; its prediction row, which the caller
 * may check further. */
static json_object *expect_block_model_counts(json_object *root, const char *region, const char *core)
{
	json_object *meta = NULL;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	double clock = real(meta, "clock_ghz");
	json_object *measured = row_where(cli_json_rows(root, "regions"), "region", region);
	json_object *term = row_where(cli_json_rows(root, "prediction"), "region", region);
	cr_assert(measured && term, "region %s missing", region);
	double exact = (double)count(measured, "instructions");
	double modelled = real(term, "ipc") * real(term, "compute_ns") * clock;
	cr_expect(exact > 0 && modelled > exact - 0.5 - 1e-9 * exact && modelled < exact + 0.5 + 1e-9 * exact,
	          "%s: the block model ran %.1f instructions, plumbgrind counted %.0f (in_core: %s)", region, modelled,
	          exact, core);
	return term;
}

/* The block model (llvm-mca's cycles per executed block) counts every
 * instruction the region ran, from plumbgrind's compact runs (uses of
 * superblock definitions, no fetch records) as from expanded records: its
 * instructions (IPC x in-core cycles) equal the exact instrumented count,
 * region by region, for one thread and for two interleaved. */
Test(explain_valgrind, the_block_model_counts_every_executed_instruction, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *machine = priced_machine_file();
	static const char *const one[] = { "sweep", "chase", "compute", NULL }, *const two[] = { "work", NULL };
	for (int k = 0; k < 2; k++) {
		const char *program = compile(k == 0 ? "explain_target" : "explain_sharing");
		const char *const first[] = { program, "1048576", "262144", "1", "10000", NULL };
		const char *const second[] = { program, "false", "5000", NULL };
		cli_run r;
		char core[512];
		json_object *root = explain_priced(&r, machine, k == 0 ? first : second, core, sizeof core);
		for (const char *const *name = k == 0 ? one : two; *name; name++)
			expect_block_model_counts(root, *name, core);
		json_object_put(root);
		cli_run_free(&r);
	}
}

/* Valgrind does not follow an exec: explain refuses instead of presenting
 * the part before the exec as the whole program, as sim and trace record
 * do, with plumbgrind and with lackey. */
Test(explain_valgrind, a_program_that_execs_is_refused_everywhere, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *machine = machine_file();
	char trace[4200];
	snprintf(trace, sizeof trace, "%s", cli_temp_path("exec.ptrace"));
	for (int lackey = 0; lackey < 2; lackey++) {
		if (lackey)
			setenv("PLUMB_TRACE_LACKEY", "1", 1);
		cli_run runs[3] = {
			cli_run_plumbv(NULL, "sim", "--", "sh", "-c", "exec /bin/true", NULL),
			cli_run_plumbv(NULL, "trace", "record", trace, "--", "sh", "-c", "exec /bin/true", NULL),
			lackey ? cli_run_plumbv(NULL, "--version", NULL)
			       : cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine, "--", "sh", "-c",
			                        "exec /bin/true", NULL),
		};
		for (int k = 0; k < (lackey ? 2 : 3); k++) {
			cr_expect_eq(runs[k].exit_code, 1, "lackey %d, run %d: %s", lackey, k, runs[k].err);
			/* plumbgrind's ring names the program exec'd; lackey cannot */
			cr_expect(strstr(runs[k].err, lackey ? "'sh' exec'd another program"
			                                     : "'sh' exec'd /bin/true, which Valgrind does not follow"),
			          "lackey %d, run %d: %s", lackey, k, runs[k].err);
			if (!lackey)
				cr_expect(strstr(runs[k].err, "run plumb on /bin/true directly"), "%s", runs[k].err);
			cr_expect(strstr(runs[k].err, "plumb follows one program image"), "%s", runs[k].err);
			cr_expect_str_eq(runs[k].out, "", "no report of half a program");
		}
		for (int k = 0; k < 3; k++)
			cli_run_free(&runs[k]);
		unsetenv("PLUMB_TRACE_LACKEY");
	}
	cr_expect_neq(access(trace, F_OK), 0, "a trace of half a program was kept");
}

/* A signal delivered under lackey with --trace-sched=yes prints a line
 * without the --PID-- prefix; the trace goes on past it. */
Test(explain_valgrind, lackey_takes_a_handled_signal, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *program = compile("raise_handled");
	setenv("PLUMB_TRACE_LACKEY", "1", 1);
	cli_run r = cli_run_plumbv(NULL, "sim", "--csv", "--", program, NULL);
	unsetenv("PLUMB_TRACE_LACKEY");
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_null(strstr(r.err, "not a lackey trace line"), "%s", r.err);
	cli_run_free(&r);
}

/* Issue 28: a program of two working sets, 24 KiB and 3 MiB, each reread 16
 * times: explain --curve puts each region's knee at the smallest capacity of
 * the grid that holds its set (32 KiB and 4 MiB: the grid's sizes are powers
 * of two), whatever this machine's caches, and every point of its curve
 * equals plumb sim --curve's on the same program. */
Test(explain_valgrind, curve_knees_sit_at_the_working_sets, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *program = compile("working_sets");
	char html[4200];
	snprintf(html, sizeof html, "%s", cli_temp_path("curve.html"));
	cli_run e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine_file(), "--curve", "l1d",
	                           "--html", html, "--json", "--", program, "24576", "3145728", "16", NULL);
	cr_assert_eq(e.exit_code, 0, "%s", e.err);
	/* the HTML's chart of the curves, the simulated caches marked */
	size_t size;
	char *page = cli_read_file(html, &size);
	cr_assert_not_null(page);
	if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
		const char *chart = strstr(page, "Miss-ratio curve per region, fully associative");
		cr_expect(chart && strstr(page, "<svg"), "no curve chart in the HTML");
		cr_expect(strstr(page, "L1d "), "the L1D's size is not marked");
	}
	free(page);
	explain_environment();
	cli_run s = cli_run_plumbv(NULL, "sim", "--curve", "l1d", "--json", "--", program, "24576", "3145728", "16",
	                           NULL);
	cr_assert_eq(s.exit_code, 0, "%s", s.err);
	json_object *er = parse(e.out), *sr = parse(s.out);
	json_object *knees = cli_json_rows(er, "knees");
	json_object *small = row_where(knees, "region", "small"), *large = row_where(knees, "region", "large");
	cr_assert(small && large, "no knee per region: %.2000s", e.out);
	cr_expect_eq(count(small, "knee_bytes"), 32768);
	cr_expect_eq(count(large, "knee_bytes"), 4194304);
	/* one table, built once: plumb sim's knees have the same columns and,
	 * region by region, the same figures */
	json_object *sim_knees = cli_json_rows(sr, "knees");
	static const char *const knee_columns[] = { "region", "thread", "level", "references", "misses_one_line",
	                                           "misses_largest", "knee_bytes" };
	for (size_t i = 0; i < sizeof knee_columns / sizeof knee_columns[0]; i++) {
		cr_expect(json_object_object_get_ex(small, knee_columns[i], NULL), "explain's knees lack %s", knee_columns[i]);
		cr_expect(json_object_object_get_ex(json_object_array_get_idx(sim_knees, 0), knee_columns[i], NULL),
		          "sim's knees lack %s", knee_columns[i]);
	}
	cr_expect_eq(json_object_object_length(small), json_object_object_length(json_object_array_get_idx(sim_knees, 0)));
	json_object *regions[2] = { small, large };
	for (size_t i = 0; i < 2; i++) {
		const char *name = json_object_get_string(json_object_object_get(regions[i], "region"));
		json_object *theirs = row_where(sim_knees, "region", name);
		cr_assert(theirs, "plumb sim has no knee for %s", name);
		static const char *const figures[] = { "thread", "references", "misses_one_line", "misses_largest", "knee_bytes" };
		for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++)
			cr_expect_eq(count(regions[i], figures[f]), count(theirs, figures[f]), "%s: %s", name, figures[f]);
		cr_expect_str_eq(json_object_get_string(json_object_object_get(regions[i], "level")),
		                 json_object_get_string(json_object_object_get(theirs, "level")));
	}
	/* the curve table too: the same columns (names and units), and region
	 * by region the same rows in the same order with the same figures (the
	 * whole program is "(program)" in explain, "(all)" in sim; its misses
	 * are two runs' of the program, start-up included, so only its grid is
	 * compared) */
	json_object *my_columns, *their_columns;
	cr_assert(json_object_object_get_ex(cli_json_table(er, "curve"), "columns", &my_columns) &&
	          json_object_object_get_ex(cli_json_table(sr, "curve"), "columns", &their_columns));
	cr_expect_str_eq(json_object_to_json_string(my_columns), json_object_to_json_string(their_columns));
	json_object *mine = cli_json_rows(er, "curve"), *theirs = cli_json_rows(sr, "curve");
	size_t compared = 0, next = 0;
	const char *region_before = "";
	for (size_t i = 0; i < json_object_array_length(mine); i++) {
		json_object *row = json_object_array_get_idx(mine, i);
		const char *region = json_object_get_string(json_object_object_get(row, "region"));
		const char *their_region = strcmp(region, "(program)") ? region : "(all)";
		if (strcmp(region, region_before)) {
			/* a region's first row: where sim's rows of that region begin */
			for (next = 0; next < json_object_array_length(theirs); next++)
				if (!strcmp(json_object_get_string(json_object_object_get(json_object_array_get_idx(theirs, next),
				                                                         "region")), their_region))
					break;
			region_before = region;
		}
		cr_assert_lt(next, json_object_array_length(theirs), "sim has no row %zu of %s", i, region);
		json_object *other = json_object_array_get_idx(theirs, next++);
		cr_assert_str_eq(json_object_get_string(json_object_object_get(other, "region")), their_region);
		bool whole = !strcmp(region, "(program)");
		static const char *const columns[] = { "size_bytes", "ways", "sets", "misses" };
		for (size_t c = 0; c < sizeof columns / sizeof columns[0] - whole; c++)
			cr_expect_eq(count(row, columns[c]), count(other, columns[c]), "%s row %zu: %s", region, i, columns[c]);
		cr_expect_str_eq(json_object_get_string(json_object_object_get(row, "level")),
		                 json_object_get_string(json_object_object_get(other, "level")));
		if (!whole)
			cr_expect_str_eq(json_object_to_json_string(json_object_object_get(row, "miss_ratio")),
			                 json_object_to_json_string(json_object_object_get(other, "miss_ratio")), "%s row %zu",
			                 region, i);
		compared++;
	}
	cr_expect_eq(compared, json_object_array_length(theirs), "explain has %zu curve rows, sim %zu", compared,
	             json_object_array_length(theirs));
	cr_expect_gt(compared, 100, "only %zu points compared", compared);
	json_object_put(er);
	json_object_put(sr);
	cli_run_free(&e);
	cli_run_free(&s);
}

Test(explain_valgrind, curve_level_is_checked_before_the_run)
{
	cli_run r = cli_run_plumbv(NULL, "explain", "--curve", "l4", "--", "true", NULL);
	cr_expect_eq(r.exit_code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "--curve"), "%s", r.err);
	cli_run_free(&r);
}

/* A report.json of a machine B made from this machine's own topo section
 * with the L2 halved, and a machine model of round figures (clock,
 * latencies, bandwidths, MLP): what plumb report writes, the sizes taken
 * from here so that the test holds on any machine.  *l2 gets this
 * machine's L2 size (0: it has none). */
static const char *half_l2_report_of(uint64_t *l2, const char *vendor, const char *family_model_stepping)
{
	static char path[4200];
	cli_run topo = cli_run_plumbv(NULL, "topo", "--json", NULL);
	cr_assert_eq(topo.exit_code, 0, "%s", topo.err);
	json_object *root = parse(topo.out), *caches = cli_json_rows(root, "caches");
	json_object *properties = cli_json_rows(root, "machine");
	for (size_t i = 0; vendor && properties && i < json_object_array_length(properties); i++) {
		json_object *row = json_object_array_get_idx(properties, i);
		const char *name = json_object_get_string(json_object_object_get(row, "property"));
		if (name && !strcmp(name, "vendor"))
			json_object_object_add(row, "value", json_object_new_string(vendor));
		else if (name && !strcmp(name, "family/model/stepping"))
			json_object_object_add(row, "value", json_object_new_string(family_model_stepping));
		else if (name && !strcmp(name, "core_model")) {
			/* B's cores are its model's (this machine's may be corrected: cpu.h) */
			unsigned model = 0;
			cr_assert_eq(sscanf(family_model_stepping, "%*u/%u", &model), 1);
			char text[16];
			snprintf(text, sizeof text, "%u", model);
			json_object_object_add(row, "value", json_object_new_string(text));
		}
	}
	*l2 = 0;
	for (size_t i = 0; caches && i < json_object_array_length(caches); i++) {
		json_object *row = json_object_array_get_idx(caches, i);
		if (strcmp(json_object_get_string(json_object_object_get(row, "level")), "L2"))
			continue;
		*l2 = (uint64_t)count(row, "size");
		json_object_object_add(row, "size", json_object_new_int64((int64_t)(*l2 / 2)));
	}
	static const char summary[] =
	    "{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"summary\","
	    " \"meta\": {\"machine_clock_ghz\": 3.0, \"machine_line_bytes\": 64}, \"tables\": [{\"name\": \"machine\","
	    " \"title\": \"machine\", \"columns\": [{\"name\": \"level\"}, {\"name\": \"cache_level\"}, {\"name\": \"state\"},"
	    " {\"name\": \"nominal_bytes\"}, {\"name\": \"usable_bytes\"}, {\"name\": \"latency\"}, {\"name\": \"read_1\"},"
	    " {\"name\": \"mlp\"}], \"rows\": ["
	    "{\"level\": \"L1\", \"cache_level\": 1, \"state\": \"private\", \"nominal_bytes\": null, \"usable_bytes\": null,"
	    " \"latency\": 1.5, \"read_1\": 200.0, \"mlp\": 10.0},"
	    "{\"level\": \"L2\", \"cache_level\": 2, \"state\": \"private\", \"nominal_bytes\": null, \"usable_bytes\": null,"
	    " \"latency\": 5.0, \"read_1\": 100.0, \"mlp\": 10.0},"
	    "{\"level\": \"L3\", \"cache_level\": 3, \"state\": \"shared\", \"nominal_bytes\": null, \"usable_bytes\": null,"
	    " \"latency\": 20.0, \"read_1\": 50.0, \"mlp\": 10.0},"
	    "{\"level\": \"DRAM\", \"cache_level\": 0, \"state\": \"memory\", \"nominal_bytes\": null, \"usable_bytes\": null,"
	    " \"latency\": 100.0, \"read_1\": 10.0, \"mlp\": 10.0}]}]}";
	json_object *report = json_object_new_object(), *sections = json_object_new_array(), *section = json_object_new_object();
	json_object_object_add(report, "schema", json_object_new_string("plumb-machine-report"));
	json_object_object_add(report, "schema_version", json_object_new_int(1));
	json_object_object_add(report, "summary", parse(summary));
	json_object_object_add(section, "command", json_object_new_string("topo"));
	json_object_object_add(section, "status", json_object_new_string("ok"));
	json_object_object_add(section, "report", root);
	json_object_array_add(sections, section);
	json_object_object_add(report, "sections", sections);
	snprintf(path, sizeof path, "%s", cli_temp_path("b-report.json"));
	cr_assert_eq(json_object_to_file(path, report), 0);
	json_object_put(report);
	cli_run_free(&topo);
	return path;
}

static const char *half_l2_report(uint64_t *l2)
{
	return half_l2_report_of(l2, NULL, NULL);
}

/* A core that is not this machine's, for a machine B of another model: a
 * Zen 4 (AuthenticAMD family 25 model 97, llvm-mca's znver4), or on an AMD
 * machine a Sapphire Rapids (GenuineIntel family 6 model 143), so that B is
 * another model whichever of the two this machine is. */
typedef struct other_core {
	const char *vendor, *family_model_stepping, *mcpu;   /* mcpu: how the -mcpu LLVM chooses begins */
} other_core;

static other_core other_core_than_this(void)
{
	size_t size;
	char *cpuinfo = cli_read_file("/proc/cpuinfo", &size);
	bool amd = cpuinfo && strstr(cpuinfo, "AuthenticAMD");
	free(cpuinfo);
	return amd ? (other_core){ "GenuineIntel", "6/143/8", "" } : (other_core){ "AuthenticAMD", "25/97/2", "znver" };
}

/* plumb explain --runs 1 --on B (B: machine b's report, whose core is
 * other's) of program with one or more arguments, as JSON, and its in-core
 * line in *core; the test is skipped when LLVM's tools cannot price blocks
 * here.  The caller frees the root and the run. */
static json_object *explain_on(cli_run *e, const char *b, const char *program, const char *first, const char *second,
                               const char *third, const char *fourth, const char **core)
{
	*e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", b, "--on", b, "--json", "--", program, first,
	                    second, third, fourth, NULL);
	cr_assert_eq(e->exit_code, 0, "%s", e->err);
	json_object *root = parse(e->out), *meta = NULL, *in_core = NULL;
	cr_assert(json_object_object_get_ex(root, "meta", &meta) && json_object_object_get_ex(meta, "in_core", &in_core));
	*core = json_object_get_string(in_core);
	if (strstr(*core, "was not found") || strstr(*core, "knows none of the CPU names")) {
		char why[600];
		snprintf(why, sizeof why, "%s", *core);
		json_object_put(root);
		cli_run_free(e);
		cr_skip_test("LLVM's tools cannot price blocks here: %s", why);
	}
	return root;
}

/* Machine B with another core: the region's blocks are priced again with
 * llvm-mca for that core, and the result says so; on a B with this
 * machine's own core, no second pricing. */
Test(explain_valgrind, on_another_core_its_blocks_are_priced_for_it, .timeout = 300)
{
	need_plumbgrind_and_library();
	uint64_t l2;
	other_core other_cpu = other_core_than_this();
	const char *b = half_l2_report_of(&l2, other_cpu.vendor, other_cpu.family_model_stepping);
	const char *program = compile("explain_target"), *core;
	cli_run e;
	json_object *root = explain_on(&e, b, program, "1048576", "262144", "1", "10000", &core);
	char expected[128];
	snprintf(expected, sizeof expected, "on the other machine: its core's cycles from llvm-mca -mcpu=%s", other_cpu.mcpu);
	cr_expect(notes_hold(root, expected), "%.4000s", e.out);
	json_object *row = row_where(cli_json_rows(root, "other_machine"), "region", "compute"), *other;
	cr_assert(row && json_object_object_get_ex(row, "other_predicted_ns", &other), "%.3000s", e.out);
	cr_expect(json_object_is_type(other, json_type_double), "%s", json_object_to_json_string(other));
	json_object_put(root);
	cli_run_free(&e);
	/* this machine's own core: one pricing, no note */
	b = half_l2_report(&l2);
	e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", b, "--on", b, "--json", "--", program, "1048576",
	                   "262144", "1", "10000", NULL);
	cr_assert_eq(e.exit_code, 0, "%s", e.err);
	root = parse(e.out);
	cr_expect_not(notes_hold(root, "on the other machine: its core"), "%.4000s", e.out);
	json_object_put(root);
	cli_run_free(&e);
}

/* The text after "; " that names how many two-block loops were priced as
 * one, in a note or the in-core line: -1 when it names none. */
static int two_block_loops(const char *text)
{
	const char *at = text ? strstr(text, " two-block loop") : NULL;
	if (!at)
		return -1;
	while (at > text && at[-1] != ' ')
		at--;
	return atoi(at);
}

/* The other core's pricing pairs the same blocks into loops as this
 * machine's: the blocks this CPU's pass paired, hot or only a hot block's
 * neighbour, are free to pair again (a forward substitution, whose
 * program start-up has loops of a hot and a cooler block: 11 two-block
 * loops here, once 7 for the other core). */
Test(explain_valgrind, on_another_core_the_same_loops_are_paired, .timeout = 300)
{
	need_plumbgrind_and_library();
	uint64_t l2;
	other_core core = other_core_than_this();
	const char *b = half_l2_report_of(&l2, core.vendor, core.family_model_stepping);
	const char *program = compile("triangular"), *core_line;
	cli_run e;
	json_object *root = explain_on(&e, b, program, "400", NULL, NULL, NULL, &core_line), *notes = NULL;
	const char *other = NULL;
	cr_assert(json_object_object_get_ex(root, "notes", &notes));
	for (size_t i = 0; i < json_object_array_length(notes); i++) {
		const char *note = json_object_get_string(json_object_array_get_idx(notes, i));
		if (note && strstr(note, "on the other machine: its core's cycles from"))
			other = note;
	}
	/* Once (one full make check of five on a 2-vCPU guest, not again in
	 * eight runs of it here) the note was missing and this machine's
	 * pricing said "no block could be disassembled": what explain said is
	 * printed whole, not cut in its JSON's first lines. */
	cr_assert(other, "no note on the other machine's core; in_core: %s; notes: %s; stderr: %.2000s", core_line,
	          json_object_to_json_string_ext(notes, JSON_C_TO_STRING_PLAIN), e.err);
	int here = two_block_loops(core_line), there = two_block_loops(other);
	cr_expect_geq(here, 0, "%s", core_line);
	cr_expect_eq(there, here, "this core: %s\nthe other: %s", core_line, other);
	json_object_put(root);
	cli_run_free(&e);
}

/* A wrapper for LLVM's tool NAME (llvm-mca or llvm-mc) that logs each run's
 * arguments, a line each, into LOG and runs the tool explain would have
 * found (the newest on PATH); made once per test. */
static const char *tool_logger(const char *name, const char *log)
{
	static char paths[2][4200];
	char *path = paths[!strcmp(name, "llvm-mc")];
	snprintf(path, 4200, "%s", cli_temp_path(name));
	if (access(path, X_OK) == 0)
		return path;   /* the same file: the same tool to the cache (its identity is its file's) */
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\necho \"$*\" >> '%s'\n"
	           "for t in %s-19 %s-18 %s-17 %s-16 %s %s-15 %s-14; do\n"
	           "\tp=$(command -v $t) && exec \"$p\" \"$@\"\ndone\nexit 127\n",
	        log, name, name, name, name, name, name, name);
	fclose(f);
	cr_assert_eq(chmod(path, 0700), 0);
	return path;
}

/* The runs of LLVM's tools one explain made, from the loggers' files
 * (removed): llvm-mc's; llvm-mca's asking its version, pricing blocks
 * (-retire-stats), and probing a CPU name (each name probed at most once). */
typedef struct tool_runs {
	int mc, version, pricing, probes;
} tool_runs;

static tool_runs tool_runs_logged(const char *mc_log, const char *mca_log)
{
	tool_runs runs = { 0 };
	size_t size;
	char *mc = cli_read_file(mc_log, &size), *mca = cli_read_file(mca_log, &size);
	for (const char *p = mc; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		runs.mc++;
	char probed[16][128];
	for (char *line = mca ? strtok(mca, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		if (strstr(line, "--version"))
			runs.version++;
		else if (strstr(line, "-retire-stats"))
			runs.pricing++;
		else {
			const char *cpu = strstr(line, "-mcpu=");
			cr_assert(cpu, "an llvm-mca run of no CPU: %s", line);
			size_t length = strcspn(cpu, " ");
			for (int k = 0; k < runs.probes; k++)
				cr_expect(strncmp(probed[k], cpu, length) || probed[k][length], "%.*s probed twice", (int)length, cpu);
			cr_assert_lt(runs.probes, 16);
			snprintf(probed[runs.probes++], sizeof probed[0], "%.*s", (int)length, cpu);
		}
	}
	free(mc);
	free(mca);
	unlink(mc_log);
	unlink(mca_log);
	return runs;
}

/* explain of explain_target on machine b, also --on b, with LLVM's tools
 * logged; its in-core line into core, whether the other core was priced
 * into *other, and region compute's in-core time into *compute_ns. */
static tool_runs explain_logged(const char *b, const char *program, char *core, size_t core_size, bool *other,
                                double *compute_ns)
{
	char mca_log[4200], mc_log[4200];
	snprintf(mca_log, sizeof mca_log, "%s", cli_temp_path("mca.log"));
	snprintf(mc_log, sizeof mc_log, "%s", cli_temp_path("mc.log"));
	unlink(mca_log);
	unlink(mc_log);
	setenv("PLUMB_LLVM_MCA", tool_logger("llvm-mca", mca_log), 1);
	setenv("PLUMB_LLVM_MC", tool_logger("llvm-mc", mc_log), 1);
	cli_run e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", b, "--on", b, "--json", "--", program,
	                           "1048576", "262144", "1", "10000", NULL);
	unsetenv("PLUMB_LLVM_MCA");
	unsetenv("PLUMB_LLVM_MC");
	cr_assert_eq(e.exit_code, 0, "%s", e.err);
	json_object *root = parse(e.out), *meta = NULL, *in_core = NULL;
	cr_assert(json_object_object_get_ex(root, "meta", &meta) && json_object_object_get_ex(meta, "in_core", &in_core));
	snprintf(core, core_size, "%s", json_object_get_string(in_core));
	*other = notes_hold(root, "on the other machine: its core's cycles from llvm-mca");
	json_object *term = row_where(cli_json_rows(root, "prediction"), "region", "compute");
	cr_assert(term, "%.3000s", e.out);
	*compute_ns = real(term, "compute_ns");
	json_object_put(root);
	cli_run_free(&e);
	return tool_runs_logged(mc_log, mca_log);
}

/* Issue 25's fast path: pricing the blocks costs a fixed few runs of
 * LLVM's tools, however many passes read their figures.  One llvm-mc run
 * disassembles the hot blocks and their neighbours; per core priced (this
 * one, and another with --on), one llvm-mca run prices every block, its FP
 * adds' twins and the two-block loops; each CPU name is probed once (whether
 * llvm-mca knows it, its FP add's and loads' latencies), and LLVM's version
 * asked at most once.  Before, each pass and each probe was a run of its
 * own, and the probes were asked again for each core.  Explained again, the
 * same program runs no tool at all: their answers are kept in the user's
 * cache folder ($XDG_CACHE_HOME/plumb/llvm), and give the same figures;
 * unless that folder is one others may write, which is not read. */
Test(explain_valgrind, the_blocks_are_priced_in_few_tool_runs, .timeout = 300)
{
	need_plumbgrind_and_library();
	uint64_t l2;
	other_core other_cpu = other_core_than_this();
	const char *b = half_l2_report_of(&l2, other_cpu.vendor, other_cpu.family_model_stepping);
	const char *program = compile("explain_target");
	char cache[4200], folder[4300], command[8800];
	snprintf(cache, sizeof cache, "%s", cli_temp_path("cache"));
	snprintf(command, sizeof command, "rm -rf '%s'", cache);
	cr_assert_eq(system(command), 0);
	setenv("XDG_CACHE_HOME", cache, 1);
	char core[600], warm_core[600];
	bool other, warm_other;
	double compute_ns, warm_ns;
	tool_runs cold = explain_logged(b, program, core, sizeof core, &other, &compute_ns);
	if (!strstr(core, "llvm-mca -mcpu=")) {
		unsetenv("XDG_CACHE_HOME");
		cr_skip_test("LLVM's tools cannot price blocks here: %s", core);
	}
	cr_expect_eq(cold.mc, 1, "llvm-mc ran %d times", cold.mc);
	cr_expect_leq(cold.version, 1, "LLVM's version asked %d times", cold.version);
	cr_expect_eq(cold.pricing, other ? 2 : 1, "%d pricing runs of llvm-mca for %d core(s)", cold.pricing,
	             other ? 2 : 1);
	/* again: the kept answers, the same figures */
	tool_runs warm = explain_logged(b, program, warm_core, sizeof warm_core, &warm_other, &warm_ns);
	cr_expect_eq(warm.mc + warm.version + warm.pricing + warm.probes, 0,
	             "explained again, LLVM's tools ran: llvm-mc %d, version %d, pricing %d, probes %d", warm.mc,
	             warm.version, warm.pricing, warm.probes);
	cr_expect_str_eq(warm_core, core);
	cr_expect(warm_other == other);
	cr_expect(warm_ns == compute_ns, "in-core time %.17g ns from the kept answers, %.17g ns from the tools", warm_ns,
	          compute_ns);
	/* a folder others may write is never read (nor written) */
	snprintf(folder, sizeof folder, "%s/plumb/llvm", cache);
	cr_assert_eq(chmod(folder, 0777), 0);
	tool_runs open_folder = explain_logged(b, program, warm_core, sizeof warm_core, &warm_other, &warm_ns);
	cr_expect_eq(open_folder.pricing, other ? 2 : 1, "a folder others may write was read: %d pricing runs",
	             open_folder.pricing);
	cr_expect(warm_ns == compute_ns);
	unsetenv("XDG_CACHE_HOME");
}

/* Issue 28's proof: a region whose working set is three quarters of this
 * machine's L2, reread: on a machine B with half the L2 (its report.json),
 * explain --on predicts its L2 misses rising (and its time), and B's misses
 * are plumb sim's on B's configuration. */
Test(explain_valgrind, on_a_machine_with_half_the_l2_misses_rise_as_sim_says, .timeout = 300)
{
	need_plumbgrind_and_library();
	uint64_t l2;
	const char *b = half_l2_report(&l2);
	if (l2 < 64 * 1024)
		cr_skip_test("this machine's topo lists no L2 (or one under 64 KiB)");
	const char *program = compile("working_sets");
	char large[32], half[32];
	snprintf(large, sizeof large, "%llu", (unsigned long long)(l2 / 4 * 3 / 64 * 64));
	snprintf(half, sizeof half, "l2.size=%llu", (unsigned long long)(l2 / 2));
	/* B's figures price both columns, so that only the caches differ */
	cli_run e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", b, "--on", b, "--json", "--", program,
	                           "24576", large, "16", NULL);
	cr_assert_eq(e.exit_code, 0, "%s", e.err);
	explain_environment();
	cli_run s = cli_run_plumbv(NULL, "sim", "--set", half, "--json", "--", program, "24576", large, "16", NULL);
	cli_run here = cli_run_plumbv(NULL, "sim", "--json", "--", program, "24576", large, "16", NULL);
	cr_assert_eq(s.exit_code, 0, "%s", s.err);
	cr_assert_eq(here.exit_code, 0, "%s", here.err);
	json_object *er = parse(e.out), *sr = parse(s.out), *hr = parse(here.out);
	json_object *mine = row_where(cli_json_rows(er, "other_machine"), "region", "large");
	json_object *theirs = row_where(cli_json_rows(sr, "regions"), "region", "large");
	json_object *ours = row_where(cli_json_rows(hr, "regions"), "region", "large");
	cr_assert(mine && theirs && ours, "region large missing: %.3000s", e.out);
	/* rising: the set fits this L2, not B's */
	cr_expect_gt(count(mine, "other_l2_misses"), 4 * count(mine, "l2_misses"));
	/* B's misses are plumb sim's of B's configuration, this machine's plumb sim's of its own */
	cr_expect_eq(count(mine, "other_l1d_misses"), count(theirs, "l1d_misses"));
	cr_expect_eq(count(mine, "other_l2_misses"), count(theirs, "l2_misses"));
	cr_expect_eq(count(mine, "l2_misses"), count(ours, "l2_misses"));
	json_object *predicted, *other;
	cr_assert(json_object_object_get_ex(mine, "predicted_ns", &predicted) &&
	          json_object_object_get_ex(mine, "other_predicted_ns", &other));
	cr_expect(json_object_is_type(other, json_type_double) && json_object_is_type(predicted, json_type_double) &&
	          json_object_get_double(other) > json_object_get_double(predicted),
	          "B's time does not rise: %s against %s", json_object_to_json_string(other),
	          json_object_to_json_string(predicted));
	json_object_put(er);
	json_object_put(sr);
	json_object_put(hr);
	cli_run_free(&e);
	cli_run_free(&s);
	cli_run_free(&here);
}

Test(explain_valgrind, on_refuses_a_file_that_is_not_a_report)
{
	const char *machine = machine_file();
	cli_run r = cli_run_plumbv(NULL, "explain", "--no-valgrind", "--runs", "1", "--on", machine, "--", "true", NULL);
	cr_expect_neq(r.exit_code, 0);
	cr_expect(strstr(r.err, "--on"), "%s", r.err);
	cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "not one line: %s", r.err);
	cli_run_free(&r);
}

/* A machine of another instruction set runs other instructions: no column,
 * and the note says why. */
Test(explain_valgrind, on_another_instruction_set_is_said_not_guessed)
{
	char path[4200];
	snprintf(path, sizeof path, "%s", cli_temp_path("arm-report.json"));
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"schema\": \"plumb-machine-report\", \"schema_version\": 1, \"summary\": null, \"sections\": ["
	      "{\"command\": \"topo\", \"status\": \"ok\", \"report\": {\"schema\": \"plumb-report\", \"schema_version\": 1,"
	      " \"command\": \"topo\", \"tables\": [{\"name\": \"machine\", \"columns\": [{\"name\": \"property\"},"
	      " {\"name\": \"value\"}], \"rows\": [{\"property\": \"isa\", \"value\": \"aarch64\"}]}]}}]}\n", f);
	fclose(f);
	cli_run r = cli_run_plumbv(NULL, "explain", "--no-valgrind", "--runs", "1", "--on", path, "--json", "--", "true",
	                           NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = parse(r.out);
	cr_expect(notes_hold(root, "is aarch64"), "%.2000s", r.out);
	cr_expect_null(strstr(r.out, "\"other_machine\""), "a column for a machine of another instruction set");
	json_object_put(root);
	cli_run_free(&r);
}

/* man plumb-explain's example saves plumb lat --mlp --json and gives it to
 * --machine: a lat report has latencies and MLP but no bandwidth, and every
 * prediction read "the L2 bandwidth of this machine is not known".  The
 * bandwidths it lacks are measured now (1-3 s), and the source says so. */
Test(explain_valgrind, a_saved_lat_report_gets_its_bandwidths_measured, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *program = compile("explain_target");
	char lat[4200];
	snprintf(lat, sizeof lat, "%s/tests/data/lat_vm_xeon_run1.json", cli_source_dir());
	cli_run r = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", lat, "--json", "--", program, "1048576",
	                           "262144", "1", "10000", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = parse(r.out);
	json_object *machine = cli_json_rows(root, "machine");
	json_object *memory = row_where(machine, "level", "memory");
	cr_assert_not_null(memory, "%s", r.out);
	cr_expect(real(memory, "bandwidth_gbps") > 0, "%s", r.out);
	json_object *sweep = row_where(cli_json_rows(root, "regions"), "region", "sweep");
	cr_assert_not_null(sweep);
	cr_expect(real(sweep, "predicted_ns") > 0, "the sweep was not predicted: %s", r.out);
	json_object *meta, *source;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, "machine", &source));
	cr_expect(strstr(json_object_get_string(source), "read bandwidths measured now"), "%s",
	          json_object_get_string(source));
	json_object_put(root);
	cli_run_free(&r);
}

/* A failing llvm-mc is named with its exit status and first line: its empty
 * output once read as "no block could be disassembled", which names no
 * cause (the pricing found no text to run). */
Test(explain_valgrind, a_failing_disassembler_is_named_with_its_message, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *program = compile("triangular");
	char tool[4200];
	snprintf(tool, sizeof tool, "%s", cli_temp_path("failing-llvm-mc"));
	FILE *f = fopen(tool, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\necho 'failing-llvm-mc: cannot read its input' >&2\nexit 3\n", f);
	fclose(f);
	cr_assert_eq(chmod(tool, 0700), 0);
	setenv("PLUMB_LLVM_MC", tool, 1);
	setenv("PLUMB_EXPLAIN_CACHE", "0", 1);
	cli_run e = cli_run_plumbv(NULL, "explain", "--runs", "1", "--json", "--", program, "400", NULL);
	unsetenv("PLUMB_LLVM_MC");
	unsetenv("PLUMB_EXPLAIN_CACHE");
	cr_assert_eq(e.exit_code, 0, "%s", e.err);
	json_object *root = parse(e.out), *meta = NULL, *in_core = NULL;
	cr_assert(json_object_object_get_ex(root, "meta", &meta) && json_object_object_get_ex(meta, "in_core", &in_core));
	const char *line = json_object_get_string(in_core);
	if (strstr(line, "llvm-mca was not found"))
		cr_skip_test("%s", line);
	cr_assert(strstr(line, "--disassemble failed (exit status 3): failing-llvm-mc: cannot read its input"), "%s", line);
	json_object_put(root);
	cli_run_free(&e);
}

/* A region whose code lives in a library the program unloads before it
 * ends: its blocks are still read and priced (the column `priced`: the
 * share of its instructions in priced blocks), from the files plumbgrind's
 * code map names as the code is first run, and the block model counts
 * every instruction the region ran.  (explain once read the files from
 * /proc/PID/maps of Valgrind's process while the program ran; a reader
 * that came after the dlclose, or after a short program's end, found
 * nothing to read, and the region's instructions went at 1.00 per cycle
 * without a word.) */
Test(explain_valgrind, code_of_an_unloaded_library_is_still_priced, .timeout = 300)
{
	need_plumbgrind_and_library();
	const char *program = compile("explain_unloaded");
	char library[4200], command[16384];
	snprintf(library, sizeof library, "%s", cli_temp_path("programs/libexplain_unloaded.so"));
	snprintf(command, sizeof command, "cc -O2 -shared -fPIC -o %s %s/tests/data/explain_unloaded_lib.c", library,
	         cli_source_dir());
	cr_assert_eq(system(command), 0, "%s", command);
	const char *machine = priced_machine_file();
	const char *const run[] = { program, library, "2000", "200000", NULL };
	cli_run r;
	char core[512];
	json_object *root = explain_priced(&r, machine, run, core, sizeof core);
	static const char *const names[] = { "plugin", "after" };
	for (size_t i = 0; i < 2; i++) {
		json_object *term = expect_block_model_counts(root, names[i], core);
		/* its loop is one block run thousands of times: priced, not left at the average */
		cr_expect(real(term, "priced") > 0.9, "%s: only %.3f of its instructions in priced blocks (in_core: %s)",
		          names[i], real(term, "priced"), core);
	}
	json_object_put(root);
	cli_run_free(&r);
}
