/* SIGINT and SIGTERM stop every command cleanly: exit 128 + the signal, no
 * child left running, no temporary file left, and a trace being recorded or
 * converted finished so that it reads without --allow-truncated.
 * Readiness is polled (a child started, a temporary file grew), never slept
 * for blindly; every wait is bounded so a test stays well under 20 s. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "run.h"
#include "../capability.h"
#include "../temp_folder.h"

static char folder[300];

/* A folder per test, removed with what is in it when the test's process
 * exits (a .fini would not run after cr_skip_test). */
static void make_folder(void)
{
	snprintf(folder, sizeof folder, "%s", temp_folder("plumb-e2e-signals"));
}

TestSuite(signals_cli, .init = make_folder, .timeout = 40);

static const char *in_folder(const char *name)
{
	static char paths[8][PATH_MAX];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, PATH_MAX, "%s/%s", folder, name);
	return p;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pause_briefly(void)
{
	struct timespec t = { 0, 20 * 1000000L };
	nanosleep(&t, NULL);
}

/* Starts plumb with argv; stdout and stderr go to files in the folder and
 * TMPDIR is the folder, so the run's temporary files are visible here. */
static pid_t start_plumb(const char *const argv[])
{
	const char *program = getenv("PLUMB_BIN");
	cr_assert_not_null(program, "PLUMB_BIN is not set");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("TMPDIR", folder, 1);
		int null = open("/dev/null", O_RDONLY);
		int out = open(in_folder("stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open(in_folder("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(null, 0);
		dup2(out, 1);
		dup2(err, 2);
		/* Whatever the test runner ignores, plumb sees the signals as a shell would give them. */
		static const int defaults[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE,
		                                SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ };
		for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
			signal(defaults[i], SIG_DFL);
		const char *args[64] = { program };
		for (int i = 0; argv[i] && i < 62; i++)
			args[i + 1] = argv[i];
		execv(program, (char *const *)args);
		_exit(127);
	}
	return pid;
}

/* What plumb wrote on stderr, for a failure message ("" if nothing).  Only
 * a failing assertion formats its message, so the copy lives until the test
 * ends. */
static const char *stderr_text(void)
{
	char *text = cli_read_file(in_folder("stderr"), NULL);
	return text ? text : "";
}

/* How long plumb may take to reach a point a test waits for (a child
 * started, a file opened): a bound for a run that hangs, never the time the
 * work is expected to take.  Every wait returns as soon as the point is
 * reached or plumb ends, so a long bound costs nothing when all is well.
 * The work before the point depends on the machine and its load: explain
 * measures the machine before it starts the program, which took 11.5 s on a
 * quiet Intel VM where a bound of 10 s failed every run. */
#define START_BOUND_SECONDS 300

/* The first child of pid whose command name is comm (any child if NULL),
 * or 0 if none appears within the seconds given. */
static pid_t wait_for_child(pid_t pid, const char *comm, double seconds)
{
	double deadline = now() + seconds;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	while (now() < deadline) {
		FILE *f = fopen(path, "r");
		int child;
		while (f && fscanf(f, "%d", &child) == 1) {
			char comm_path[64], name[64] = "";
			snprintf(comm_path, sizeof comm_path, "/proc/%d/comm", child);
			FILE *c = fopen(comm_path, "r");
			if (c) {
				if (fgets(name, sizeof name, c))
					name[strcspn(name, "\n")] = 0;
				fclose(c);
			}
			if (!comm || strcmp(name, comm) == 0) {
				fclose(f);
				return child;
			}
		}
		if (f)
			fclose(f);
		int wait_status;
		cr_assert_eq(waitpid(pid, &wait_status, WNOHANG), 0, "plumb ended before it started a child: %s",
		             stderr_text());
		pause_briefly();
	}
	return 0;
}

/* Sends sig to plumb and returns its exit code (128 + signal if it was killed). */
static int signal_and_wait(pid_t pid, int sig)
{
	cr_assert_eq(kill(pid, sig), 0);
	double deadline = now() + 15;
	int wait_status;
	pid_t r;
	while ((r = waitpid(pid, &wait_status, WNOHANG)) == 0 && now() < deadline)
		pause_briefly();
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &wait_status, 0);
		cr_assert_fail("plumb did not stop within 15 s of signal %d", sig);
	}
	return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

/* A process that is gone: no such pid, or only a zombie nobody reaped
 * would still count as a leak, so any /proc entry fails. */
static void assert_gone(pid_t pid, const char *what)
{
	errno = 0;
	int alive = kill(pid, 0) == 0;
	if (alive) {
		kill(pid, SIGKILL);
		cr_assert_fail("%s (pid %d) still exists after plumb exited", what, (int)pid);
	}
	cr_assert_eq(errno, ESRCH);
}

static void assert_group_gone(pid_t group, const char *what)
{
	if (kill(-group, 0) == 0) {
		kill(-group, SIGKILL);
		cr_assert_fail("process group %d of %s still has members after plumb exited", (int)group, what);
	}
}

/* Entries of the folder whose names contain text. */
static int entries_containing(const char *text)
{
	DIR *d = opendir(folder);
	cr_assert_not_null(d);
	int count = 0;
	for (struct dirent *e; (e = readdir(d));)
		count += strstr(e->d_name, text) != NULL;
	closedir(d);
	return count;
}

static void stat_is_stopped_by(int sig)
{
	const char *argv[] = { "stat", "--", "sleep", "30", NULL };
	pid_t plumb = start_plumb(argv);
	pid_t sleeper = wait_for_child(plumb, "sleep", START_BOUND_SECONDS);
	cr_assert_neq(sleeper, 0, "plumb stat started no 'sleep'");
	int code = signal_and_wait(plumb, sig);
	cr_assert_eq(code, 128 + sig, "exit %d, stderr: %s", code, stderr_text());
	assert_gone(sleeper, "the counted command");
}

Test(signals_cli, stat_sigint_stops_and_reaps_the_command)
{
	stat_is_stopped_by(SIGINT);
}

Test(signals_cli, stat_sigterm_stops_and_reaps_the_command)
{
	stat_is_stopped_by(SIGTERM);
}

/* A closed terminal or ssh session: SIGHUP, exit 129, the command reaped. */
Test(signals_cli, stat_sighup_stops_and_reaps_the_command)
{
	stat_is_stopped_by(SIGHUP);
}

Test(signals_cli, report_sigint_stops_its_section_and_writes_nothing)
{
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s", in_folder("report.html"));
	const char *argv[] = { "report", "--sections", "lat", "-o", out, NULL };
	pid_t plumb = start_plumb(argv);
	pid_t section = wait_for_child(plumb, "plumb", START_BOUND_SECONDS);
	cr_assert_neq(section, 0, "plumb report started no section");
	int code = signal_and_wait(plumb, SIGINT);
	cr_assert_eq(code, 130, "exit %d, stderr: %s", code, stderr_text());
	assert_gone(section, "the section 'plumb lat'");
	assert_group_gone(section, "the section");
	cr_assert_eq(access(out, F_OK), -1, "an interrupted report must not look complete");
	cr_assert_eq(entries_containing(".tmp."), 0);
}

Test(signals_cli, validate_sigterm_stops_valgrind_and_removes_its_folder)
{
	REQUIRE_NO_ASAN("valgrind cannot run a plumb built with AddressSanitizer");
	const char *argv[] = { "validate", "--backend", "instrumented", NULL };
	pid_t plumb = start_plumb(argv);
	/* valgrind runs under the name of its tool's launcher. */
	pid_t worker = wait_for_child(plumb, NULL, START_BOUND_SECONDS);
	cr_assert_neq(worker, 0, "plumb validate started no worker");
	double deadline = now() + START_BOUND_SECONDS;
	while (entries_containing("plumb-validate-") == 0 && now() < deadline)
		pause_briefly();
	if (entries_containing("plumb-validate-") == 0) {
		signal_and_wait(plumb, SIGKILL);
		cr_skip_test("plumb validate made no valgrind folder (is valgrind installed?): %s",
		             stderr_text());
	}
	worker = wait_for_child(plumb, NULL, START_BOUND_SECONDS);
	cr_assert_neq(worker, 0, "plumb validate started no valgrind");
	int code = signal_and_wait(plumb, SIGTERM);
	cr_assert_eq(code, 143, "exit %d, stderr: %s", code, stderr_text());
	assert_gone(worker, "valgrind");
	assert_group_gone(worker, "valgrind");
	cr_assert_eq(entries_containing("plumb-validate-"), 0, "the valgrind work folder was left behind");
}

Test(signals_cli, validate_sigint_stops_its_counted_runs)
{
	const char *argv[] = { "validate", "--backend", "perf", "--runs", "100000", NULL };
	pid_t plumb = start_plumb(argv);
	pid_t worker = wait_for_child(plumb, NULL, START_BOUND_SECONDS);
	cr_assert_neq(worker, 0, "plumb validate started no run");
	int code = signal_and_wait(plumb, SIGINT);
	cr_assert_eq(code, 130, "exit %d, stderr: %s", code, stderr_text());
	assert_gone(worker, "the run");
}

/* The trace reads, complete, without --allow-truncated; its record count. */
static long long trace_records(const char *path)
{
	cli_run r = cli_run_plumbv(NULL, "trace", "stats", path, "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "the interrupted trace does not read: %s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	json_object *rows = cli_json_rows(root, "kinds"), *total = json_object_array_get_idx(rows, 4), *v;
	cr_assert(json_object_object_get_ex(total, "references", &v));
	long long records = json_object_get_int64(v);
	json_object_put(root);
	cli_run_free(&r);
	return records;
}

/* The size of the first entry whose name starts with prefix, -1 if none. */
static long long size_of_entry(const char *prefix)
{
	DIR *d = opendir(folder);
	cr_assert_not_null(d);
	long long size = -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			struct stat info;
			if (stat(in_folder(e->d_name), &info) == 0)
				size = info.st_size;
			break;
		}
	closedir(d);
	return size;
}

Test(signals_cli, trace_record_sigint_finishes_the_trace)
{
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s", in_folder("record.ptrace"));
	const char *argv[] = { "trace", "record", out, "--", "sh", "-c", "while :; do :; done", NULL };
	pid_t plumb = start_plumb(argv);
	pid_t valgrind = wait_for_child(plumb, NULL, START_BOUND_SECONDS);
	cr_assert_neq(valgrind, 0, "plumb trace record started no valgrind");
	/* Ready when the first block is written (the file header is 16 bytes). */
	double deadline = now() + 15;
	while (size_of_entry("record.ptrace.tmp.") <= 16 && now() < deadline) {
		int wait_status;
		if (waitpid(plumb, &wait_status, WNOHANG) == plumb)
			cr_skip_test("plumb trace record ended early (is valgrind installed?): %s", stderr_text());
		pause_briefly();
	}
	cr_assert_gt(size_of_entry("record.ptrace.tmp."), 16, "no block written in 15 s");
	int code = signal_and_wait(plumb, SIGINT);
	cr_assert_eq(code, 130, "exit %d, stderr: %s", code, stderr_text());
	char *text = cli_read_file(in_folder("stderr"), NULL);
	cr_assert(text && strstr(text, "interrupted by signal 2"), "%s", text ? text : "no stderr");
	free(text);
	assert_gone(valgrind, "valgrind");
	cr_assert_eq(entries_containing(".tmp."), 0, "the temporary trace was left behind");
	cr_assert_gt(trace_records(out), 0);
}

Test(signals_cli, trace_convert_sigterm_finishes_the_trace)
{
	/* A lackey trace through a FIFO whose writer stays open: plumb has read
	 * what was written and waits for more when the signal comes. */
	char fifo[PATH_MAX], out[PATH_MAX];
	snprintf(fifo, sizeof fifo, "%s", in_folder("input.lackey"));
	snprintf(out, sizeof out, "%s", in_folder("converted.ptrace"));
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	enum { LINES = 1000 };
	pid_t writer = fork();
	cr_assert_geq(writer, 0);
	if (writer == 0) {
		FILE *f = fopen(fifo, "w");
		if (!f)
			_exit(1);
		for (int i = 0; i < LINES; i++)
			fprintf(f, " L %08x,8\n", 0x10000 + 64 * i);
		fflush(f);
		pause();
		_exit(0);
	}
	const char *argv[] = { "trace", "convert", fifo, out, NULL };
	pid_t plumb = start_plumb(argv);
	double deadline = now() + START_BOUND_SECONDS;
	while (size_of_entry("converted.ptrace.tmp.") < 0 && now() < deadline)
		pause_briefly();
	cr_assert_geq(size_of_entry("converted.ptrace.tmp."), 0, "plumb trace convert opened no output");
	/* Give the reader a moment to take what the FIFO holds; the count below
	 * is bounded either way. */
	for (int i = 0; i < 10; i++)
		pause_briefly();
	int code = signal_and_wait(plumb, SIGTERM);
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	cr_assert_eq(code, 143, "exit %d, stderr: %s", code, stderr_text());
	cr_assert_eq(entries_containing(".tmp."), 0, "the temporary trace was left behind");
	long long records = trace_records(out);
	cr_assert_leq(records, LINES);
}

/* explain measures the machine before it starts the program: that took
 * 11.5 s on a quiet Intel VM and over 40 s with both CPUs busy, so this
 * test gets the start bound, not the suite's 40 s. */
Test(signals_cli, explain_sigint_stops_the_program_and_removes_its_folder, .timeout = START_BOUND_SECONDS + 60)
{
	const char *argv[] = { "explain", "--", "sleep", "30", NULL };
	pid_t plumb = start_plumb(argv);
	pid_t sleeper = wait_for_child(plumb, "sleep", START_BOUND_SECONDS);
	cr_assert_neq(sleeper, 0, "plumb explain started no 'sleep': %s", stderr_text());
	cr_assert_eq(entries_containing("plumb-explain."), 1, "plumb explain made no folder in TMPDIR");
	int code = signal_and_wait(plumb, SIGINT);
	cr_assert_eq(code, 130, "exit %d, stderr: %s", code, stderr_text());
	assert_gone(sleeper, "the explained program");
	cr_assert_eq(entries_containing("plumb-explain."), 0, "the temporary folder was left behind");
}

/* ---- issue 29: every fatal signal, grandchildren, the file size limit ---- */

/* plumb trace convert reading a FIFO whose writer stays open, stopped by
 * sig: exit 128 + sig, and its FILE.tmp.PID gone (renamed into the trace it
 * finished).  SIGQUIT, SIGUSR1 and SIGXFSZ once killed plumb outright and
 * left the temporary file behind. */
static void convert_is_stopped_by(int sig)
{
	char fifo[PATH_MAX], out[PATH_MAX];
	snprintf(fifo, sizeof fifo, "%s", in_folder("input.lackey"));
	snprintf(out, sizeof out, "%s", in_folder("converted.ptrace"));
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	pid_t writer = fork();
	cr_assert_geq(writer, 0);
	if (writer == 0) {
		FILE *f = fopen(fifo, "w");
		if (!f)
			_exit(1);
		for (int i = 0; i < 100; i++)
			fprintf(f, " L %08x,8\n", 0x10000 + 64 * i);
		fflush(f);
		pause();
		_exit(0);
	}
	const char *argv[] = { "trace", "convert", fifo, out, NULL };
	pid_t plumb = start_plumb(argv);
	double deadline = now() + 10;
	while (size_of_entry("converted.ptrace.tmp.") < 0 && now() < deadline)
		pause_briefly();
	cr_assert_geq(size_of_entry("converted.ptrace.tmp."), 0, "plumb trace convert opened no output");
	int code = signal_and_wait(plumb, sig);
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	cr_assert_eq(code, 128 + sig, "exit %d, stderr: %s", code, stderr_text());
	cr_assert_eq(entries_containing(".tmp."), 0, "the temporary trace was left behind after signal %d", sig);
}

Test(signals_cli, trace_convert_sigquit_removes_its_temporary_file)
{
	convert_is_stopped_by(SIGQUIT);
}

Test(signals_cli, trace_convert_sigusr1_removes_its_temporary_file)
{
	convert_is_stopped_by(SIGUSR1);
}

/* SIGXFSZ sent by another program is a stop like the others (the one the
 * kernel sends for plumb's own write is an error: file_size_limit below). */
Test(signals_cli, trace_convert_sigxfsz_removes_its_temporary_file)
{
	convert_is_stopped_by(SIGXFSZ);
}

/* The rest of the signals whose default action ends a program: each stops
 * plumb stat with 128 + N and the command reaped. */
Test(signals_cli, stat_is_stopped_cleanly_by_every_fatal_signal)
{
	static const int others[] = { SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU };
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		stat_is_stopped_by(others[i]);
}

Test(signals_cli, validate_sigquit_stops_valgrind_and_removes_its_folder)
{
	REQUIRE_NO_ASAN("valgrind cannot run a plumb built with AddressSanitizer");
	const char *argv[] = { "validate", "--backend", "instrumented", NULL };
	pid_t plumb = start_plumb(argv);
	double deadline = now() + 10;
	while (entries_containing("plumb-validate-") == 0 && now() < deadline)
		pause_briefly();
	if (entries_containing("plumb-validate-") == 0) {
		signal_and_wait(plumb, SIGKILL);
		cr_skip_test("plumb validate made no valgrind folder (is valgrind installed?): %s", stderr_text());
	}
	pid_t worker = wait_for_child(plumb, NULL, 10);
	cr_assert_neq(worker, 0, "plumb validate started no valgrind");
	int code = signal_and_wait(plumb, SIGQUIT);
	cr_assert_eq(code, 128 + SIGQUIT, "exit %d, stderr: %s", code, stderr_text());
	assert_gone(worker, "valgrind");
	cr_assert_eq(entries_containing("plumb-validate-"), 0, "the valgrind work folder was left behind");
}

/* Processes whose command line is exactly "sleep ARGUMENT". */
static int sleeps_with(const char *argument)
{
	DIR *d = opendir("/proc");
	cr_assert_not_null(d);
	int count = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char path[300], line[256];
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(line, 1, sizeof line - 1, f);
		fclose(f);
		line[n] = 0;
		/* "sleep\0ARGUMENT\0": the name, then the argument after its NUL. */
		if (n > 6 && !strcmp(line, "sleep") && !strcmp(line + 6, argument)) {
			count++;
			int state_ok = 0;
			char stat_path[300], state[512] = "";
			snprintf(stat_path, sizeof stat_path, "/proc/%s/stat", e->d_name);
			FILE *st = fopen(stat_path, "r");
			if (st) {
				state_ok = fgets(state, sizeof state, st) != NULL;
				fclose(st);
			}
			/* A zombie waiting for its reaper is gone already. */
			char *close_paren = state_ok ? strrchr(state, ')') : NULL;
			if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z')
				count--;
		}
	}
	closedir(d);
	return count;
}

static void kill_sleeps_with(const char *argument)
{
	char pattern[64];
	snprintf(pattern, sizeof pattern, "^sleep %s$", argument);
	pid_t killer = fork();
	if (killer == 0) {
		execlp("pkill", "pkill", "-KILL", "-x", "-f", pattern, (char *)NULL);
		_exit(127);
	}
	if (killer > 0)
		waitpid(killer, NULL, 0);
}

/* How many of the two sleeps are still running once plumb has ended (the
 * grandchildren are re-parented to init, which reaps them: a little wait);
 * those left are killed, so a failing test leaves nothing behind. */
static int sleeps_left(const char *background, const char *foreground)
{
	double deadline = now() + 5;
	while ((sleeps_with(background) || sleeps_with(foreground)) && now() < deadline)
		pause_briefly();
	int left = sleeps_with(background) + sleeps_with(foreground);
	if (left) {
		kill_sleeps_with(background);
		kill_sleeps_with(foreground);
	}
	return left;
}

/* Starts plumb with argv_before (the command, up to and including "--")
 * and `sh -c 'sleep A & sleep B'`, the sleeps' arguments ones no other
 * process on the machine has, waits until both sleeps run (skipping the
 * test if plumb ends first: valgrind missing), interrupts plumb with SIGINT
 * and asserts that it exits 130 and that neither sleep outlives it.  The
 * background sleep ignores SIGINT, as a non-interactive shell's background
 * jobs do: only a signal to the whole group takes it. */
static void sigint_stops_both_sleeps(const char *const argv_before[], char tag, double start_bound)
{
	char background[32], foreground[32], script[128];
	snprintf(background, sizeof background, "40.%d%c", (int)getpid(), tag);
	snprintf(foreground, sizeof foreground, "30.%d%c", (int)getpid(), tag);
	snprintf(script, sizeof script, "sleep %s & sleep %s", background, foreground);
	const char *argv[16];
	size_t n = 0;
	while (argv_before[n] && n < 12) {
		argv[n] = argv_before[n];
		n++;
	}
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n] = NULL;
	pid_t plumb = start_plumb(argv);
	double deadline = now() + start_bound;
	while ((sleeps_with(background) < 1 || sleeps_with(foreground) < 1) && now() < deadline) {
		int wait_status;
		if (waitpid(plumb, &wait_status, WNOHANG) == plumb)
			cr_skip_test("plumb %s ended early (is valgrind installed?): %s", argv[0], stderr_text());
		pause_briefly();
	}
	cr_assert(sleeps_with(background) == 1 && sleeps_with(foreground) == 1,
	          "the command did not start both sleeps: %s", stderr_text());
	int code = signal_and_wait(plumb, SIGINT);
	int left = sleeps_left(background, foreground);
	cr_assert_eq(code, 130, "exit %d, stderr: %s", code, stderr_text());
	cr_assert_eq(left, 0, "%d of the command's sleeps outlived the interrupted run", left);
}

/* The counted command's own children die with an interrupted run: the
 * command is in a process group of its own, which plumb signals whole.
 * It once signalled only the shell, and both sleeps went on running. */
Test(signals_cli, stat_sigint_stops_the_commands_children_too)
{
	const char *argv[] = { "stat", "-e", "task-clock", "--", NULL };
	sigint_stops_both_sleeps(argv, '1', 10);
}

/* The same for a traced program: the trace's reader reaps valgrind before
 * the cleanup runs, and it once let the shell's background sleep go on
 * running.  Found by tests/hostile-sweep.sh. */
Test(signals_cli, trace_record_sigint_stops_the_programs_children_too, .timeout = START_BOUND_SECONDS + 40)
{
	const char *argv[] = { "trace", "record", in_folder("record.ptrace"), "--", NULL };
	sigint_stops_both_sleeps(argv, '2', START_BOUND_SECONDS);
}

/* A trace that stops early takes the program's children with it: with
 * lackey (PLUMB_TRACE_LACKEY, or where plumbgrind is not installed) a
 * forked child is traced into the same pipe, and the reader stops at its
 * first line with an error; the shell's background sleep, under valgrind in
 * valgrind's group, went on running after plumb had exited.  Found by the
 * hostile-input sweep. */
Test(signals_cli, a_trace_stopped_early_takes_the_programs_children_too, .timeout = START_BOUND_SECONDS + 40)
{
	if (system("command -v valgrind > /dev/null 2>&1") != 0)
		cr_skip_test("needs valgrind");
	setenv("PLUMB_TRACE_LACKEY", "1", 1);
	char background[32], foreground[32], script[128];
	snprintf(background, sizeof background, "40.%d3", (int)getpid());
	snprintf(foreground, sizeof foreground, "30.%d3", (int)getpid());
	/* SIGPIPE ignored: a child still under valgrind when plumb closes the
	 * pipe would otherwise die writing its next line, and whether it had
	 * reached its sleep first would be a race */
	snprintf(script, sizeof script, "trap '' PIPE; sleep %s & sleep %s", background, foreground);
	const char *argv[] = { "trace", "record", in_folder("record.lackey"), "--", "sh", "-c", script, NULL };
	pid_t plumb = start_plumb(argv);
	int wait_status = 0;
	double deadline = now() + START_BOUND_SECONDS;
	pid_t reaped = 0;
	while ((reaped = waitpid(plumb, &wait_status, WNOHANG)) == 0 && now() < deadline)
		pause_briefly();
	if (reaped != plumb) {
		signal_and_wait(plumb, SIGKILL);
		kill_sleeps_with(background);
		kill_sleeps_with(foreground);
		cr_assert_fail("plumb trace record did not end: %s", stderr_text());
	}
	int left = sleeps_left(background, foreground);
	cr_assert(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 1, "status %d, stderr: %s", wait_status,
	          stderr_text());
	cr_assert(strstr(stderr_text(), "a second process"), "%s", stderr_text());
	cr_assert_eq(left, 0, "%d of the program's sleeps outlived the stopped trace", left);
}

/* `ulimit -f`: plumb's own write past the limit is an error line and exit
 * 1, with no temporary file left; it once died of SIGXFSZ. */
Test(signals_cli, file_size_limit_is_an_error_not_a_death)
{
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s", in_folder("machine.json"));
	char text[1024];
	const char *const argv[] = { "topo", "--json", "-o", out, NULL };
	int wait_status = cli_run_plumb_file_limited(512, text, sizeof text, argv);
	size_t used = strlen(text);
	cr_assert(WIFEXITED(wait_status), "plumb died of signal %d", WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
	cr_assert_eq(WEXITSTATUS(wait_status), 1, "exit %d: %s", WEXITSTATUS(wait_status), text);
	cr_assert(strstr(text, "file size limit reached"), "%s", text);
	cr_assert(strchr(text, '\n') == text + used - 1, "not one line: %s", text);
	cr_assert_eq(entries_containing(".tmp."), 0, "the temporary file was left behind");
	cr_assert_eq(access(out, F_OK), -1, "a cut-short output was left in place");
}

/* The file of explain's LLVM folder (plumb-explain-XXXXXX, beside the
 * measured runs' plumb-explain.XXXXXX) whose name is file, if it exists. */
static bool llvm_folder_holds(const char *file)
{
	DIR *d = opendir(folder);
	cr_assert_not_null(d);
	bool found = false;
	for (struct dirent *e; !found && (e = readdir(d));) {
		if (strncmp(e->d_name, "plumb-explain-", 14) != 0)
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s/%s", folder, e->d_name, file);
		found = access(path, F_OK) == 0;
	}
	closedir(d);
	return found;
}

/* explain prices the program's hot blocks with llvm-mc and llvm-mca in a
 * folder of its own, which the pricing fills (blocks.hex, blocks.mca.s ...).
 * A signal then left the folder and its files in TMPDIR: the handler only
 * rmdirs a folder, and its files were never registered.  Found by issue
 * 29's sweep (7 of 18 signals at random moments during explain). */
Test(signals_cli, explain_signal_while_pricing_removes_the_llvm_folder, .timeout = START_BOUND_SECONDS + 60)
{
	char machine[PATH_MAX];
	snprintf(machine, sizeof machine, "%s/tests/data/report_vm_xeon/lat.json", cli_source_dir());
	const char *argv[] = { "explain", "--machine", machine, "-r", "1", "--", "/bin/ls", "/", NULL };
	pid_t plumb = start_plumb(argv);
	double deadline = now() + START_BOUND_SECONDS;
	int wait_status;
	while (!llvm_folder_holds("blocks.hex") && now() < deadline) {
		if (waitpid(plumb, &wait_status, WNOHANG) == plumb)
			cr_skip_test("explain ended before its blocks were priced (llvm-mca or plumbgrind missing?): %s",
			             stderr_text());
		pause_briefly();
	}
	cr_assert(llvm_folder_holds("blocks.hex"), "explain never priced a block: %s", stderr_text());
	int code = signal_and_wait(plumb, SIGTERM);
	cr_assert_eq(code, 143, "exit %d, stderr: %s", code, stderr_text());
	cr_assert_eq(entries_containing("plumb-explain-"), 0, "explain's LLVM folder was left behind");
}
