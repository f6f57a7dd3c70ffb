/* plumb explain end to end, on tests/data/explain_target.c compiled here
 * against the built libplumb: a sequential sweep (one L1D miss per line), a
 * random chase past the L2 and a compute-bound loop, whose exact counts are
 * closed forms (inline asm) and whose predicted times must be within a
 * factor of 2 of the measured ones.  Sizes come from sysfs, never from
 * constants.  One explain run (3 measured runs and one Valgrind run, a few
 * seconds) serves every check. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run.h"

/* A cache's size from sysfs: level 2, or the last level (level 0). */
static uint64_t sysfs_cache(int level, unsigned *line)
{
	uint64_t best = 0;
	for (int index = 0; index < 16; index++) {
		char path[256], text[64] = "";
		int found_level = 0;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
		FILE *f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &found_level) != 1)
			found_level = 0;
		fclose(f);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
		if ((f = fopen(path, "r"))) {
			if (!fgets(text, sizeof text, f))
				text[0] = 0;
			fclose(f);
		}
		if (!strncmp(text, "Instruction", 11))
			continue;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
		unsigned long kib = 0;
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%luK", &kib) != 1)
				kib = 0;
			fclose(f);
		}
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/coherency_line_size", index);
		if (line && (f = fopen(path, "r"))) {
			if (fscanf(f, "%u", line) != 1)
				*line = 64;
			fclose(f);
		}
		if ((level == 0 || found_level == level) && kib * 1024 > best)
			best = kib * 1024;
	}
	return best;
}

static json_object *row_of(json_object *rows, const char *region)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (json_object_object_get_ex(row, "region", &cell) && !strcmp(json_object_get_string(cell), region))
			return row;
	}
	cr_assert_fail("no row for region %s", region);
	return NULL;
}

static json_object *row_of_level(json_object *rows, const char *level)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (json_object_object_get_ex(row, "level", &cell) && !strcmp(json_object_get_string(cell), level))
			return row;
	}
	cr_assert_fail("no machine row for %s", level);
	return NULL;
}

static double number(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	if (json_object_is_type(cell, json_type_object)) {
		json_object *reason = NULL;
		json_object_object_get_ex(cell, "reason", &reason);
		cr_assert_fail("%s is not a number: %s", column, reason ? json_object_get_string(reason) : "?");
	}
	return json_object_get_double(cell);
}

/* Whether the built library is the sanitizer build's: its code needs the
 * sanitizer runtime, which neither a plain program nor Valgrind provides. */
static bool library_is_sanitized(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/libplumb.so", cli_build_dir());
	size_t size;
	char *library = cli_read_file(path, &size);
	bool found = library && memmem(library, size, "__asan_init", 11) != NULL;
	free(library);
	return found;
}

Test(explain_cli, help_and_bad_input)
{
	cli_run r = cli_run_plumbv(NULL, "explain", "--help", NULL);
	cr_expect_eq(r.exit_code, 0);
	cr_expect(strstr(r.out, "usage: plumb explain"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "explain", NULL);
	cli_assert_usage_error(&r, "explain");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "explain", "--runs", "0", "--", "true", NULL);
	cli_assert_usage_error(&r, "explain");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "explain", "--backend", "nope", "--", "true", NULL);
	cli_assert_usage_error(&r, "explain");
	cli_run_free(&r);
	/* A program that is not there: one line, before anything is measured. */
	r = cli_run_plumbv(NULL, "explain", "--", "/nonexistent/program", NULL);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.err, "plumb explain: ") == r.err && strstr(r.err, "/nonexistent/program"), "%s", r.err);
	cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "more than one line: %s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "explain", "--machine", "/nonexistent.json", "--", "true", NULL);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.err, "--machine"), "%s", r.err);
	cli_run_free(&r);
}

Test(explain_cli, sweep_chase_and_compute_against_their_closed_forms, .timeout = 300)
{
	cli_need_plumbgrind();
	char library[4200];
	snprintf(library, sizeof library, "%s/libplumb.so", cli_build_dir());
	if (access(library, R_OK) != 0)
		cr_skip_test("this build has no libplumb.so to link the test program with");
	if (library_is_sanitized())
		cr_skip_test("the sanitizer build's libplumb.so needs the sanitizer runtime, which a test program run "
		             "under Valgrind cannot have");
	unsigned line = 64;
	uint64_t l2 = sysfs_cache(2, &line), llc = sysfs_cache(0, NULL);
	if (!l2 || !llc || llc <= l2)
		cr_skip_test("sysfs describes no L2 and larger last-level cache here");
	/* The program, against the built shared library (soname libplumb.so.0). */
	char dir[4096], command[32768];
	snprintf(dir, sizeof dir, "%s", cli_temp_path("explain"));
	snprintf(command, sizeof command,
	         "mkdir -p %s && ln -sf %s/libplumb.so %s/libplumb.so.0 && "
	         "cc -O2 -Wall -Wextra -Werror -I%s/include -o %s/target %s/tests/data/explain_target.c "
	         "%s/libplumb.so -Wl,-rpath,%s",
	         dir, cli_build_dir(), dir, cli_source_dir(), dir, cli_source_dir(), cli_build_dir(), dir);
	cr_assert_eq(system(command), 0, "%s", command);

	/* The sweep: the size of the last-level cache, read once; the chase: a
	 * single random cycle over 4x the L2, past it (and within the L3 that
	 * sysfs describes), walked twice. */
	uint64_t sweep = llc, chase = 4 * l2, laps = 2, iterations = 1000000;
	uint64_t sweep_lines = sweep / line, chase_steps = laps * (chase / line);
	char program[4200], a1[32], a2[32], a3[32], a4[32], a5[32];
	snprintf(program, sizeof program, "%s/target", dir);
	snprintf(a1, sizeof a1, "%llu", (unsigned long long)sweep);
	snprintf(a2, sizeof a2, "%llu", (unsigned long long)chase);
	snprintf(a3, sizeof a3, "%llu", (unsigned long long)laps);
	snprintf(a4, sizeof a4, "%llu", (unsigned long long)iterations);
	snprintf(a5, sizeof a5, "%llu", (unsigned long long)sweep);   /* the strided walk: as much as the sweep */
	char json[4200], html[4200];
	snprintf(json, sizeof json, "%s/explain.json", dir);
	snprintf(html, sizeof html, "%s/explain.html", dir);
	cli_run r = cli_run_plumbv(NULL, "explain", "--runs", "3", "--json", "-o", json, "--html", html, "--", program,
	                           a1, a2, a3, a4, a5, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	FILE *f = fopen(json, "r");
	cr_assert_not_null(f);
	fclose(f);
	json_object *root = json_object_from_file(json);
	cr_assert_not_null(root);
	json_object *rows = cli_json_rows(root, "regions");
	json_object *sweep_row = row_of(rows, "sweep"), *chase_row = row_of(rows, "chase");
	json_object *compute_row = row_of(rows, "compute");
	row_of(rows, "(program)");

	/* What the markers' own calls add to a region (their call, return and
	 * the compiler's moves around them): the compute loop has no load, so
	 * its loads are that and nothing else. */
	double overhead = number(compute_row, "loads");
	cr_expect_leq(overhead, 32, "the markers add %g loads", overhead);

	/* Instrumented: exact up to the markers' own few loads. */
	double loads = number(sweep_row, "loads");
	cr_expect(loads >= sweep_lines && loads <= sweep_lines + overhead + 4, "sweep: %g loads for %llu lines", loads,
	          (unsigned long long)sweep_lines);
	double instructions = number(sweep_row, "instructions");
	cr_expect(instructions >= 4.0 * sweep_lines && instructions <= 4.0 * sweep_lines + 128,
	          "sweep: %g instructions for %llu lines", instructions, (unsigned long long)sweep_lines);
	loads = number(chase_row, "loads");
	cr_expect(loads >= chase_steps && loads <= chase_steps + overhead + 4, "chase: %g loads for %llu steps", loads,
	          (unsigned long long)chase_steps);
	instructions = number(compute_row, "instructions");
	cr_expect(instructions >= 4.0 * iterations && instructions <= 4.0 * iterations + 128,
	          "compute: %g instructions", instructions);

	/* Simulated: one L1D miss per line of the sweep; a random chase over 4x
	 * the L2 misses the L1D and (an LRU L2 walked cyclically) the L2 at
	 * nearly every step; the compute loop misses nothing. */
	double misses = number(sweep_row, "l1d_misses");
	cr_expect(fabs(misses - (double)sweep_lines) <= 0.001 * (double)sweep_lines + 16,
	          "sweep: %g L1D misses for %llu lines", misses, (unsigned long long)sweep_lines);
	misses = number(chase_row, "l1d_misses");
	cr_expect(misses >= 0.95 * (double)chase_steps && misses <= chase_steps + 16, "chase: %g L1D misses for %llu steps",
	          misses, (unsigned long long)chase_steps);
	misses = number(chase_row, "l2_misses");
	cr_expect(misses >= 0.75 * (double)chase_steps, "chase: %g L2 misses for %llu steps", misses,
	          (unsigned long long)chase_steps);
	cr_expect_leq(number(compute_row, "l1d_misses"), 16);

	/* Predicted against measured (CPU time where counted): within a factor
	 * of 2 for the sweep and the compute loop.  The chase lives in the L3,
	 * which this machine shares with whatever runs on the other vCPU (and
	 * other guests): its steps took 12-127 ns in one session, the L3's
	 * latency to memory's, and the machine's probe of the L3 saw 13-101 ns
	 * (docs/explain.md, "Where they disagree").  So: each measured step lies
	 * between the L2's latency (it is past the L2) and twice memory's; and
	 * when the probe found the L3 quiet (within 5x the L2's latency: 3.4-3.7x
	 * when quiet here), the prediction is at most twice the measured time
	 * (the neighbour can only slow the program down). */
	json_object *machine = cli_json_rows(root, "machine");
	double l2_ns = number(row_of_level(machine, "L2"), "latency_ns");
	double l3_ns = number(row_of_level(machine, "L3"), "latency_ns");
	double memory_ns = number(row_of_level(machine, "memory"), "latency_ns");
	const char *names[3] = { "sweep", "chase", "compute" };
	json_object *measured[3] = { sweep_row, chase_row, compute_row };
	for (int i = 0; i < 3; i++) {
		double ratio = number(measured[i], "ratio");
		double predicted = number(measured[i], "predicted_ns"), cpu = number(measured[i], "cpu_ns");
		if (i == 0 && ratio > 2.0) {
			/* The sweep is priced at memory's bandwidth as the probe found
			 * it; if the sweep itself streamed faster than that, the probe
			 * ran while a neighbour held the memory bus (seen at load 18:
			 * ratio 2.9), and the ratio says nothing about the model. */
			double probe = number(row_of_level(machine, "memory"), "bandwidth_gbps");
			double achieved = (double)sweep_lines * line / cpu;
			if (achieved > probe) {
				cr_log_info("sweep: streamed %.1f GB/s, the probe found memory at %.1f GB/s: ratio %.2f not checked",
				            achieved, probe, ratio);
				continue;
			}
		}
		if (i != 1) {
			cr_expect(ratio >= 0.5 && ratio <= 2.0, "%s: predicted/measured %.2f (predicted %.0f ns, CPU %.0f ns)",
			          names[i], ratio, predicted, cpu);
			continue;
		}
		double per_step = cpu / (double)chase_steps;
		cr_expect(per_step >= l2_ns && per_step <= 2 * memory_ns,
		          "chase: %.1f ns a step, outside [L2 %.1f, memory %.1f x 2]", per_step, l2_ns, memory_ns);
		if (l3_ns <= 5 * l2_ns)
			cr_expect_leq(ratio, 2.0, "chase: predicted/measured %.2f (predicted %.0f ns, CPU %.0f ns; L3 %.1f ns)",
			              ratio, predicted, cpu, l3_ns);
		else
			cr_log_info("chase: the L3 was busy when probed (%.1f ns, L2 %.1f ns): ratio %.2f not checked", l3_ns,
			            l2_ns, ratio);
	}

	/* The model's own figures, from the programs' code: the compute loop's
	 * in-core rate (imul then add on the previous result: 4 instructions in
	 * about 4 cycles) from llvm-mca; the sweep prefetchable (constant stride
	 * per instruction), the 17-line strided walk within each page; the chase's load
	 * chained to itself, not prefetchable. */
	json_object *terms = cli_json_rows(root, "prediction"), *meta = NULL, *in_core = NULL;
	json_object_object_get_ex(root, "meta", &meta);
	if (meta)
		json_object_object_get_ex(meta, "in_core", &in_core);
	const char *core = in_core ? json_object_get_string(in_core) : "";
	json_object *stride_row = row_of(rows, "stride");
	cr_expect(number(row_of(terms, "sweep"), "sequential") >= 0.9, "sweep: sequential %.2f",
	          number(row_of(terms, "sweep"), "sequential"));
	/* the strided walk's lines are fetched ahead within a page, not across
	 * (a stride prefetcher stops at the page's end): of its 17-line steps,
	 * those that land on another page than the step before are not */
	double within_page = 1 - 17.0 * line / (double)sysconf(_SC_PAGESIZE);
	cr_expect(fabs(number(row_of(terms, "stride"), "sequential") - within_page) <= 0.1,
	          "stride: sequential %.2f, %.2f expected", number(row_of(terms, "stride"), "sequential"), within_page);
	cr_expect(number(row_of(terms, "chase"), "sequential") <= 0.2, "chase: sequential %.2f",
	          number(row_of(terms, "chase"), "sequential"));
	/* The strided walk's ratio is logged, not checked: its buffer reuses the
	 * sweep's addresses, which the host preset's L3 (sysfs's size, far more
	 * than a VM's share) still holds, while the machine serves them from
	 * memory (docs/explain.md, "Where they disagree"). */
	double ratio = number(stride_row, "ratio");
	cr_log_info("stride: predicted/measured %.2f (predicted %.0f ns, CPU %.0f ns)", ratio,
	            number(stride_row, "predicted_ns"), number(stride_row, "cpu_ns"));
	if (strstr(core, "llvm-mca")) {
		cr_expect(number(row_of(terms, "chase"), "chained") >= 0.9, "chase: chained %.2f",
		          number(row_of(terms, "chase"), "chained"));
		double ipc = number(row_of(terms, "compute"), "ipc");
		cr_expect(ipc >= 0.7 && ipc <= 1.4, "compute: llvm-mca's IPC %.2f, about 1 expected", ipc);
		/* CPU time of a loop without memory references: little for load to
		 * change, but a run the host held up (its vCPU taken away) counts
		 * longer, so the fastest of the runs (a 0.66 against the median once
		 * at load 5) */
		double best = number(compute_row, "cpu_best_ns");
		ratio = best > 0 ? number(compute_row, "predicted_ns") / best : number(compute_row, "ratio");
		cr_expect(ratio >= 0.75 && ratio <= 1.25, "compute: predicted/measured %.2f (the fastest run's CPU time)",
		          ratio);
	} else {
		cr_log_info("the blocks were not priced (%s): llvm-mca's figures not checked", core);
	}
	json_object_put(root);

	char *page = cli_read_file(html, NULL);
	cr_assert_not_null(page, "no HTML page");
	/* the report's HTML shows column names as words, the unit once ("predicted" in ns) */
	cr_expect(strstr(page, "<table") && strstr(page, "sweep") && strstr(page, "<th>predicted <span class=unit>ns</span>"),
	          "the page lacks the table");
	free(page);
}

/* Without llvm-mca the in-core time falls back to one instruction per cycle,
 * and the report says why instead of a silently different number. */
Test(explain_cli, without_llvm_mca_the_base_rate_and_the_reason, .timeout = 120)
{
	cli_need_plumbgrind();
	setenv("PLUMB_LLVM_MCA", "/nonexistent/llvm-mca", 1);
	char json[4200];
	snprintf(json, sizeof json, "%s", cli_temp_path("explain-no-mca.json"));
	cli_run r = cli_run_plumbv(NULL, "explain", "--runs", "1", "--json", "-o", json, "--", "/bin/true", NULL);
	unsetenv("PLUMB_LLVM_MCA");
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	json_object *root = json_object_from_file(json);
	cr_assert_not_null(root);
	json_object *meta = NULL, *in_core = NULL;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, "in_core", &in_core));
	const char *core = json_object_get_string(in_core);
	cr_expect(strstr(core, "1.00 per cycle") && strstr(core, "llvm-mca was not found"), "%s", core);
	json_object *terms = cli_json_rows(root, "prediction");
	json_object *program = row_of(terms, "(program)");
	json_object *ipc = NULL;
	if (json_object_object_get_ex(program, "ipc", &ipc) && json_object_is_type(ipc, json_type_double))
		cr_expect_float_eq(json_object_get_double(ipc), 1.0, 1e-9);
	json_object_put(root);
}

/* Under the host preset explain simulated the shared cache at sysfs's size
 * while it priced the misses with the usable size the machine figures
 * measured (a VM's guest used 8 MiB of a 260 MiB L3, and a 32 MiB chase
 * showed no LLC miss).  Now the simulators take the usable size and the
 * simulation's note says so. */
Test(explain_cli, the_simulated_shared_cache_has_the_usable_size, .timeout = 120)
{
	cli_need_plumbgrind();
	uint64_t l2 = sysfs_cache(2, NULL), l3 = sysfs_cache(3, NULL);
	if (!l3 || l3 < (4u << 20) || l3 <= l2)
		cr_skip_test("sysfs describes no L3 of 4 MiB or more here");
	char machine[4200];
	snprintf(machine, sizeof machine, "%s", cli_temp_path("explain-usable.json"));
	FILE *f = fopen(machine, "w");
	cr_assert_not_null(f);
	fputs("{\"schema\": \"plumb-report\", \"schema_version\": 1, \"plumb_version\": \"0.1.0\", \"command\": \"explain\",\n"
	      " \"meta\": {\"clock_ghz\": 3.0, \"line_bytes\": 64},\n"
	      " \"tables\": [{\"name\": \"machine\", \"title\": \"This machine\", \"columns\": [{\"name\": \"level\", \"unit\": null},"
	      " {\"name\": \"size_bytes\", \"unit\": \"bytes\"}, {\"name\": \"latency_ns\", \"unit\": \"ns\"}],\n"
	      " \"rows\": [{\"level\": \"L3\", \"size_bytes\": 1048576, \"latency_ns\": 30},"
	      " {\"level\": \"memory\", \"size_bytes\": 0, \"latency_ns\": 100}]}], \"notes\": []}\n", f);
	cr_assert_eq(fclose(f), 0);
	cli_run r = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine, "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "L3 at its usable 1.0 MiB of the nominal"), "%s", r.out);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine, "--preset", "host-nominal", "--", "/bin/true",
	                   NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_null(strstr(r.out, "at its usable"), "host-nominal keeps sysfs's size: %s", r.out);
	cli_run_free(&r);
	unlink(machine);
}
