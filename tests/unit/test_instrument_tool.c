/* plumbgrind against references known exactly: tests/data/instrument_target
 * runs loops written in inline asm (per iteration 5 instructions, 2 loads,
 * 1 store of 8 bytes), so every region count is a closed form; whole-program
 * counts are checked against the lines of a lackey trace of the same run.
 * Each test starts Valgrind once or twice (about a second each here). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "instrument/instrument.h"
#include "trace/trace.h"
#include "instrument_target.h"
#include "../temp_folder.h"

static char target[PATH_MAX + 64];
static char tool_dir[PATH_MAX];

static void find_target_and_tool(void)
{
	instrument_target_find(target, sizeof target, tool_dir, sizeof tool_dir);
}

static void run(instrument_summary *s, const instrument_options *options, const char *a1, const char *a2,
                const char *a3)
{
	char *argv[] = { target, (char *)a1, (char *)a2, (char *)a3, NULL };
	plumb_status status;
	cr_assert_eq(instrument_run(argv, options, s, &status), 0, "%s", status.message);
}

static void expect_loop(const instrument_counts *counts, uint64_t iterations, const char *what)
{
	cr_expect_eq(counts->value[INSTRUMENT_INSTRUCTIONS], 5 * iterations, "%s instructions %llu", what,
	             (unsigned long long)counts->value[INSTRUMENT_INSTRUCTIONS]);
	cr_expect_eq(counts->value[INSTRUMENT_LOADS], 2 * iterations, "%s loads", what);
	cr_expect_eq(counts->value[INSTRUMENT_STORES], iterations, "%s stores", what);
	cr_expect_eq(counts->value[INSTRUMENT_MODIFIES], 0, "%s modifies", what);
	cr_expect_eq(counts->value[INSTRUMENT_BYTES_READ], 16 * iterations, "%s bytes read", what);
	cr_expect_eq(counts->value[INSTRUMENT_BYTES_WRITTEN], 8 * iterations, "%s bytes written", what);
}

Test(instrument_tool, region_counts_are_exact, .init = find_target_and_tool, .timeout = 120)
{
	instrument_summary s;
	run(&s, NULL, "loop", "1000", "3");
	const instrument_region *r = instrument_summary_region(&s, "loop", 0);
	cr_assert_not_null(r);
	cr_expect_eq(r->entries, 3);
	expect_loop(&r->counts, 3000, "loop");
	cr_expect_eq(s.region_count, 1);
	cr_expect_eq(s.warning_count, 0);
	cr_expect_eq(s.exit_code, 0);
	cr_expect_gt(s.total.value[INSTRUMENT_INSTRUCTIONS], 15000);
	instrument_summary_free(&s);
}

Test(instrument_tool, nested_regions_are_inclusive_and_exact, .init = find_target_and_tool, .timeout = 120)
{
	instrument_summary s;
	run(&s, NULL, "nested", "100", "250");
	const instrument_region *inner = instrument_summary_region(&s, "inner", 0);
	const instrument_region *outer = instrument_summary_region(&s, "outer", 0);
	cr_assert(inner && outer);
	expect_loop(&inner->counts, 100, "inner");
	/* The inner region's markers count for neither region. */
	expect_loop(&outer->counts, 350, "outer");
	instrument_summary_free(&s);
}

Test(instrument_tool, regions_are_per_thread, .init = find_target_and_tool, .timeout = 120)
{
	instrument_summary s;
	run(&s, NULL, "threads", "3", "200");
	cr_assert_eq(s.thread_count, 4);
	for (uint32_t t = 1; t <= 3; t++) {
		const instrument_region *r = instrument_summary_region(&s, "worker", t);
		cr_assert_not_null(r, "thread %u", t);
		cr_expect_eq(r->entries, 1);
		expect_loop(&r->counts, 200 * t, "worker");
		cr_expect_gt(s.threads[t].lwp, 0);
	}
	cr_expect_null(instrument_summary_region(&s, "worker", 0));
	const instrument_region *main_region = instrument_summary_region(&s, "main", 0);
	cr_assert_not_null(main_region);
	expect_loop(&main_region->counts, 200, "main");
	uint64_t sum = 0;
	for (size_t i = 0; i < s.thread_count; i++)
		sum += s.threads[i].total.value[INSTRUMENT_LOADS];
	cr_expect_eq(sum, s.total.value[INSTRUMENT_LOADS]);
	instrument_summary_free(&s);
}

Test(instrument_tool, collection_switch_counts_only_between_start_and_stop, .init = find_target_and_tool,
     .timeout = 120)
{
	instrument_options options;
	instrument_options_init(&options);
	options.collect_at_start = 0;
	instrument_summary s;
	run(&s, &options, "collect", "777", NULL);
	expect_loop(&s.threads[0].collected, 777, "collected");
	cr_expect_gt(s.threads[0].total.value[INSTRUMENT_INSTRUCTIONS], 5 * 777);
	instrument_summary_free(&s);
}

Test(instrument_tool, misuse_is_reported_not_counted, .init = find_target_and_tool, .timeout = 120)
{
	instrument_summary s;
	run(&s, NULL, "misuse", NULL, NULL);
	const instrument_region *a = instrument_summary_region(&s, "a", 0);
	cr_assert_not_null(a);
	cr_expect_eq(a->entries, 1);
	/* Only the (ignored) END("b") marker ran inside "a", and markers cost nothing. */
	cr_expect_eq(a->counts.value[INSTRUMENT_INSTRUCTIONS], 0);
	cr_expect_null(instrument_summary_region(&s, "left open", 0));
	cr_assert_eq(s.warning_count, 4);
	cr_expect(strstr(s.warnings[0], "region end \"b\" while \"a\" is the innermost"), "%s", s.warnings[0]);
	cr_expect(strstr(s.warnings[1], "\"never-begun\" without a begin"), "%s", s.warnings[1]);
	cr_expect(strstr(s.warnings[2], "empty name"), "%s", s.warnings[2]);
	cr_expect(strstr(s.warnings[3], "\"left open\" still open at exit"), "%s", s.warnings[3]);
	instrument_summary_free(&s);
}

Test(instrument_tool, exit_status_and_running_request, .init = find_target_and_tool, .timeout = 120)
{
	instrument_summary s;
	run(&s, NULL, "exit", "3", NULL);
	cr_expect_eq(s.exit_code, 3);
	const instrument_region *r = instrument_summary_region(&s, "loop", 0);
	cr_assert_not_null(r);
	expect_loop(&r->counts, 10, "loop");
	instrument_summary_free(&s);

	/* Killed by a signal: the summary is still written, and says how it ended. */
	run(&s, NULL, "abort", NULL, NULL);
	cr_expect_eq(s.exit_signal, 6);
	cr_expect_eq(s.exit_code, 128 + 6);
	r = instrument_summary_region(&s, "loop", 0);
	cr_assert_not_null(r);
	expect_loop(&r->counts, 20, "loop");
	instrument_summary_free(&s);

	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-running-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	instrument_options options;
	instrument_options_init(&options);
	options.program_stdout = fd;
	run(&s, &options, "running", NULL, NULL);
	instrument_summary_free(&s);
	char text[16] = { 0 };
	cr_assert(pread(fd, text, sizeof text - 1, 0) > 0);
	close(fd);
	unlink(path);
	cr_expect_str_eq(text, "1\n");
	/* Natively the request is a no-op that answers 0. */
	char command[sizeof target + 32];
	snprintf(command, sizeof command, "%s running", target);
	FILE *p = popen(command, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(text, sizeof text, p));
	pclose(p);
	cr_expect_str_eq(text, "0\n");
}

/* Counts the kinds of lines of a lackey-format trace, per thread (from the
 * SCHED lines, as plumb's lackey reader attributes them). */
typedef struct trace_tally {
	uint64_t kind[8][4];   /* [thread][I, L, S, M] */
	uint64_t records, sched, bad;
	uint64_t markers[8];   /* region marker lines per thread */
} trace_tally;

static void tally_trace(const char *path, trace_tally *tally)
{
	memset(tally, 0, sizeof *tally);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char line[256];
	unsigned thread = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long address;
		unsigned size;
		char end;
		int kind = -1;
		if (!strncmp(line, "I  ", 3))
			kind = 0;
		else if (!strncmp(line, " L ", 3))
			kind = 1;
		else if (!strncmp(line, " S ", 3))
			kind = 2;
		else if (!strncmp(line, " M ", 3))
			kind = 3;
		if (kind >= 0) {
			if (sscanf(line + 3, "%llx,%u%c", &address, &size, &end) != 3 || end != '\n' || size == 0 ||
			    strlen(line + 3) < 8 + 3 || thread >= 8)
				tally->bad++;
			else
				tally->kind[thread][kind]++;
			tally->records++;
			continue;
		}
		if (!strncmp(line, "==", 2))
			continue;   /* Valgrind's own messages (lackey's summary) */
		unsigned n;
		if (!strncmp(line, "--", 2) && (strstr(line, "--   REGION[begin]: ") || strstr(line, "--   REGION[end]: "))) {
			if (thread < 8)
				tally->markers[thread]++;
			continue;
		}
		const char *sched = strstr(line, "SCHED[");
		if (!strncmp(line, "--", 2) && sched && sscanf(sched, "SCHED[%u]", &n) == 1 && n >= 1) {
			thread = n - 1;
			tally->sched++;
			continue;
		}
		tally->bad++;
	}
	fclose(f);
}

Test(instrument_tool, trace_matches_the_counts_per_thread, .init = find_target_and_tool, .timeout = 120)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-trace-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	instrument_options options;
	instrument_options_init(&options);
	options.trace_path = path;
	instrument_summary s;
	run(&s, &options, "threads", "2", "300");
	trace_tally tally;
	tally_trace(path, &tally);
	unlink(path);
	cr_expect_eq(tally.bad, 0);
	cr_expect_geq(tally.sched, 2, "SCHED lines for the workers");
	/* each thread's region: one BEGIN and one END, in that thread */
	for (int t = 0; t < 3; t++)
		cr_expect_eq(tally.markers[t], 2, "thread %d markers", t);
	cr_expect_eq(tally.records, s.trace_records);
	cr_assert_eq(s.thread_count, 3);
	for (size_t t = 0; t < s.thread_count; t++) {
		const instrument_counts *c = &s.threads[t].total;
		cr_expect_eq(tally.kind[t][0], c->value[INSTRUMENT_INSTRUCTIONS], "thread %zu I", t);
		cr_expect_eq(tally.kind[t][1], c->value[INSTRUMENT_LOADS], "thread %zu L", t);
		cr_expect_eq(tally.kind[t][2], c->value[INSTRUMENT_STORES], "thread %zu S", t);
		cr_expect_eq(tally.kind[t][3], c->value[INSTRUMENT_MODIFIES], "thread %zu M", t);
	}
	instrument_summary_free(&s);
}

/* Whole-program counts equal the lines of lackey's trace of the same run
 * (same environment, so the dynamic loader and libc do the same work). */
Test(instrument_tool, whole_program_counts_equal_lackey, .init = find_target_and_tool, .timeout = 180)
{
	instrument_summary s;
	run(&s, NULL, "loop", "2000", "2");
	char log[TEMP_PATH_SIZE];
	temp_template(log, sizeof log, "plumb-lackey-XXXXXX");
	int fd = mkstemp(log);
	cr_assert(fd >= 0);
	close(fd);
	char log_option[PATH_MAX + 16];
	snprintf(log_option, sizeof log_option, "--log-file=%s", log);
	pid_t child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		setenv("VALGRIND_LIB", tool_dir, 1);
		execlp("valgrind", "valgrind", "--tool=lackey", "-q", "--trace-mem=yes", log_option, "--", target, "loop",
		       "2000", "2", (char *)NULL);
		_exit(127);
	}
	int wait_status;
	cr_assert_eq(waitpid(child, &wait_status, 0), child);
	cr_assert(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
	trace_tally tally;
	tally_trace(log, &tally);
	unlink(log);
	cr_expect_eq(tally.bad, 0);
	cr_expect_eq(tally.kind[0][0], s.total.value[INSTRUMENT_INSTRUCTIONS], "lackey I lines %llu, plumbgrind %llu",
	             (unsigned long long)tally.kind[0][0], (unsigned long long)s.total.value[INSTRUMENT_INSTRUCTIONS]);
	cr_expect_eq(tally.kind[0][1], s.total.value[INSTRUMENT_LOADS]);
	cr_expect_eq(tally.kind[0][2], s.total.value[INSTRUMENT_STORES]);
	cr_expect_eq(tally.kind[0][3], s.total.value[INSTRUMENT_MODIFIES]);
	instrument_summary_free(&s);
}

Test(instrument_tool, missing_valgrind_or_tool_is_a_clear_error)
{
	char *argv[] = { "/bin/true", NULL };
	instrument_options options;
	instrument_options_init(&options);
	instrument_summary s;
	plumb_status status;
	options.valgrind = "/nonexistent/valgrind";
	cr_assert_eq(instrument_run(argv, &options, &s, &status), -1);
	cr_expect(strstr(status.message, "/nonexistent/valgrind"), "%s", status.message);
	options.valgrind = "plumb-no-such-valgrind";
	cr_assert_eq(instrument_run(argv, &options, &s, &status), -1);
	cr_expect(strstr(status.message, "valgrind is not installed"), "%s", status.message);
	options.valgrind = NULL;
	options.tool_dir = "/nonexistent";
	cr_assert_eq(instrument_run(argv, &options, &s, &status), -1);
	cr_expect(strstr(status.message, "/nonexistent holds no plumbgrind"), "%s", status.message);
	setenv("PLUMB_VALGRIND_LIB", "/nonexistent/lib", 1);
	char dir[PATH_MAX];
	cr_assert_eq(instrument_find_tool(dir, sizeof dir, &status), -1);
	cr_expect(strstr(status.message, "PLUMB_VALGRIND_LIB=/nonexistent/lib"), "%s", status.message);
	char *empty[] = { NULL };
	cr_assert_eq(instrument_run(empty, NULL, &s, &status), -1);
	cr_expect(strstr(status.message, "no command"), "%s", status.message);
}

/* The streaming path (plumb sim -- ./prog): the trace arrives on a pipe
 * while the program runs, and the summary afterwards agrees with it. */
Test(instrument_tool, trace_pipe_streams_every_reference, .init = find_target_and_tool, .timeout = 120)
{
	char *argv[] = { target, "loop", "3000", "1", NULL };
	instrument_process process;
	plumb_status status;
	cr_assert_eq(instrument_start(argv, NULL, 1, &process, &status), 0, "%s", status.message);
	cr_assert_geq(process.trace_fd, 0);
	FILE *f = fdopen(dup(process.trace_fd), "r");
	cr_assert_not_null(f);
	char line[256];
	uint64_t kinds[4] = { 0 }, other = 0, markers = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "--   REGION[begin]: loop\n") || strstr(line, "--   REGION[end]: loop\n"))
			markers++;
		else if (!strncmp(line, "I  ", 3))
			kinds[0]++;
		else if (!strncmp(line, " L ", 3))
			kinds[1]++;
		else if (!strncmp(line, " S ", 3))
			kinds[2]++;
		else if (!strncmp(line, " M ", 3))
			kinds[3]++;
		else
			other++;
	}
	fclose(f);
	instrument_summary s;
	cr_assert_eq(instrument_finish(&process, &s, &status), 0, "%s", status.message);
	cr_expect_eq(other, 0);
	cr_expect_eq(markers, 2);
	cr_expect_eq(kinds[0], s.total.value[INSTRUMENT_INSTRUCTIONS]);
	cr_expect_eq(kinds[1], s.total.value[INSTRUMENT_LOADS]);
	cr_expect_eq(kinds[2], s.total.value[INSTRUMENT_STORES]);
	cr_expect_eq(kinds[3], s.total.value[INSTRUMENT_MODIFIES]);
	cr_expect_eq(kinds[0] + kinds[1] + kinds[2] + kinds[3], s.trace_records);
	expect_loop(&instrument_summary_region(&s, "loop", 0)->counts, 3000, "loop");
	instrument_summary_free(&s);
}

/* plumb's own lackey reader reads plumbgrind's trace unchanged and gives
 * every reference to the thread that made it. */
Test(instrument_tool, trace_reads_through_plumbs_lackey_reader, .init = find_target_and_tool, .timeout = 120)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-trace-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	instrument_options options;
	instrument_options_init(&options);
	options.trace_path = path;
	instrument_summary s;
	run(&s, &options, "threads", "3", "100");
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	cr_expect_eq(trace_reader_format(reader), TRACE_FORMAT_LACKEY);
	static trace_record records[4096];
	uint64_t kinds[8][4] = { { 0 } }, markers[8] = { 0 }, marker_count = 0;
	long n;
	while ((n = trace_reader_read(reader, records, 4096, &status)) > 0)
		for (long i = 0; i < n; i++) {
			cr_assert_lt(records[i].thread, 8);
			if (trace_is_marker(&records[i])) {
				markers[records[i].thread]++;
				marker_count++;
				continue;
			}
			kinds[records[i].thread][records[i].kind]++;
		}
	cr_assert_eq(n, 0, "%s", status.message);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	unlink(path);
	cr_expect_eq(info.records, s.trace_records + marker_count);
	cr_expect_geq(info.thread_switches, 3);
	for (int t = 0; t < 4; t++)
		cr_expect_eq(markers[t], 2, "thread %d: a BEGIN and an END", t);
	cr_assert_eq(s.thread_count, 4);
	for (size_t t = 0; t < s.thread_count; t++) {
		const instrument_counts *c = &s.threads[t].total;
		cr_expect_eq(kinds[t][TRACE_INSTRUCTION], c->value[INSTRUMENT_INSTRUCTIONS], "thread %zu", t);
		cr_expect_eq(kinds[t][TRACE_READ], c->value[INSTRUMENT_LOADS], "thread %zu", t);
		cr_expect_eq(kinds[t][TRACE_WRITE], c->value[INSTRUMENT_STORES], "thread %zu", t);
		cr_expect_eq(kinds[t][TRACE_MODIFY], c->value[INSTRUMENT_MODIFIES], "thread %zu", t);
	}
	instrument_summary_free(&s);
}

/* plumb sim -- PROG and plumb trace record take plumbgrind's trace when the
 * tool is built: trace_reader_open_command streams the same references. */
Test(instrument_tool, command_reader_uses_plumbgrind, .init = find_target_and_tool, .timeout = 120)
{
	char *argv[] = { target, "loop", "500", "1", NULL };
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_command(&reader, argv, &status), 0, "%s", status.message);
	static trace_record records[4096];
	uint64_t kinds[TRACE_REGION_END + 1] = { 0 };
	long n;
	while ((n = trace_reader_read(reader, records, 4096, &status)) > 0)
		for (long i = 0; i < n; i++) {
			cr_assert_leq(records[i].kind, TRACE_REGION_END);
			kinds[records[i].kind]++;
		}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	/* The same program under plumbgrind's counter, same environment. */
	instrument_summary s;
	run(&s, NULL, "loop", "500", "1");
	cr_expect_eq(kinds[TRACE_INSTRUCTION], s.total.value[INSTRUMENT_INSTRUCTIONS]);
	cr_expect_eq(kinds[TRACE_READ], s.total.value[INSTRUMENT_LOADS]);
	cr_expect_eq(kinds[TRACE_WRITE], s.total.value[INSTRUMENT_STORES]);
	cr_expect_eq(kinds[TRACE_MODIFY], s.total.value[INSTRUMENT_MODIFIES]);
	cr_expect_eq(kinds[TRACE_REGION_BEGIN], 1);
	cr_expect_eq(kinds[TRACE_REGION_END], 1);
	instrument_summary_free(&s);
}

/* A .ptrace file is written through the one launcher (trace_reader_open_launch,
 * as plumb sim -- and plumb explain run plumbgrind): the summary's exact
 * counts and the program's exit status come with it, --tool-dir is honoured,
 * and a folder without the tool is one clear error with no file left. */
Test(instrument_tool, native_trace_goes_through_the_launcher, .init = find_target_and_tool, .timeout = 120)
{
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-native-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/run.ptrace", dir);
	instrument_options options;
	instrument_options_init(&options);
	options.trace_path = path;
	options.tool_dir = tool_dir;
	instrument_summary s;
	run(&s, &options, "exit", "3", NULL);
	cr_expect_eq(s.exit_code, 3, "the program's status is the summary's, not a failure");
	cr_expect_gt(s.total.value[INSTRUMENT_INSTRUCTIONS], 0);
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_NATIVE, &status), 0, "%s", status.message);
	trace_record records[4096];
	uint64_t instructions = 0;
	long n;
	while ((n = trace_reader_read(reader, records, 4096, &status)) > 0)
		for (long i = 0; i < n; i++)
			instructions += records[i].kind == TRACE_INSTRUCTION;
	cr_expect_eq(n, 0, "%s", status.message);
	trace_reader_close(reader, NULL);
	cr_expect_eq(instructions, s.total.value[INSTRUMENT_INSTRUCTIONS], "every instruction of the summary is in the file");
	instrument_summary_free(&s);
	unlink(path);

	options.tool_dir = "/nonexistent";
	char *argv[] = { target, "exit", "0", NULL };
	cr_assert_eq(instrument_run(argv, &options, &s, &status), -1);
	cr_expect(strstr(status.message, "/nonexistent holds no plumbgrind"), "%s", status.message);
	cr_expect_neq(access(path, F_OK), 0, "no trace file from a run that did not start");
	rmdir(dir);
}

/* plumb explain's run: the ring with a summary whose tool does not reread
 * the blocks to count them (--plumb-count-records=no).  The summary says
 * so instead of giving a count, and its exact counts are the same as the
 * references that came through the ring. */
Test(instrument_tool, ring_with_uncounted_records_keeps_exact_counts, .init = find_target_and_tool, .timeout = 120)
{
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-uncounted-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char summary_path[PATH_MAX];
	snprintf(summary_path, sizeof summary_path, "%s/summary", dir);
	const char *valgrind_options[] = { "--plumb-count-records=no", NULL };
	trace_launch launch;
	trace_launch_init(&launch);
	launch.valgrind_options = valgrind_options;
	launch.summary_path = summary_path;
	launch.tool_dir = tool_dir;
	char *argv[] = { target, "loop", "700", "2", NULL };
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_launch(&reader, argv, &launch, &status), 0, "%s", status.message);
	static trace_record records[4096];
	uint64_t kinds[TRACE_REGION_END + 1] = { 0 };
	long n;
	while ((n = trace_reader_read(reader, records, 4096, &status)) > 0)
		for (long i = 0; i < n; i++) {
			cr_assert_leq(records[i].kind, TRACE_REGION_END);
			kinds[records[i].kind]++;
		}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	instrument_summary s;
	cr_assert_eq(instrument_summary_read(&s, summary_path, &status), 0, "%s", status.message);
	cr_expect_eq(s.traced, 1);
	cr_expect_eq(s.trace_uncounted, 1, "the summary says the references were not counted");
	cr_expect_eq(kinds[TRACE_INSTRUCTION], s.total.value[INSTRUMENT_INSTRUCTIONS]);
	cr_expect_eq(kinds[TRACE_READ], s.total.value[INSTRUMENT_LOADS]);
	cr_expect_eq(kinds[TRACE_WRITE], s.total.value[INSTRUMENT_STORES]);
	cr_expect_eq(kinds[TRACE_MODIFY], s.total.value[INSTRUMENT_MODIFIES]);
	const instrument_region *r = instrument_summary_region(&s, "loop", 0);
	cr_assert_not_null(r);
	expect_loop(&r->counts, 1400, "loop");
	instrument_summary_free(&s);
	unlink(summary_path);
	rmdir(dir);
}
