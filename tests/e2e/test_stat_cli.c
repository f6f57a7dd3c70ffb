/* plumb stat behaves like perf stat: the table on stderr (the command's own
 * stdout untouched), clocks in msec with "CPUs utilized", counts with their
 * rate per second, "+- x%" over runs, perf's default domain for this user, a
 * note where a kernel-side event is counted in user space only, and the
 * default event list not being a request (exit 0 with <not supported>). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run.h"

static json_object *row_where(json_object *rows, const char *event)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *cell;
		if (json_object_object_get_ex(row, "event", &cell) && !strcmp(json_object_get_string(cell), event))
			return row;
	}
	cr_assert_fail("no row for %s", event);
	return NULL;
}

static json_object *field(json_object *row, const char *column)
{
	json_object *cell;
	cr_assert(json_object_object_get_ex(row, column, &cell), "no column %s", column);
	return cell;
}

static const char *meta_text(json_object *root, const char *key)
{
	json_object *meta, *value;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, key, &value), "no meta %s", key);
	return json_object_get_string(value);
}

/* perf stat groups a count's digits in a person's locale; so does plumb
 * stat (a sleep of 10 ms lasts more than 10,000,000 ns). */
Test(stat_cli, counts_are_grouped_by_thousands)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-e", "duration_time", "--", "sleep", "0.01", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	const char *at = strstr(r.err, " ns   duration_time");
	cr_assert(at, "%s", r.err);
	const char *start = at;
	while (start > r.err && start[-1] != ' ')
		start--;
	size_t digits = (size_t)(at - start);
	cr_assert_geq(digits, 10, "'%.*s' is not a grouped count of 10 ms or more", (int)digits, start);
	for (size_t i = 0; i < digits; i++)
		cr_expect((digits - i) % 4 == 0 ? start[i] == ',' : start[i] >= '0' && start[i] <= '9', "'%.*s'", (int)digits,
		          start);
	cli_run_free(&r);
}

Test(stat_cli, the_table_goes_to_stderr_and_the_commands_stdout_is_untouched)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-e", "task-clock,page-faults", "--", "sh", "-c",
	                           "echo hello; echo world", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "hello\nworld\n");
	cr_assert(strstr(r.err, " Performance counter stats for 'sh -c echo hello; echo world'"), "%s", r.err);
	cr_assert(strstr(r.err, " msec task-clock"), "%s", r.err);
	cr_assert(strstr(r.err, "CPUs utilized"), "%s", r.err);
	cr_assert(strstr(r.err, "/sec"), "%s", r.err);
	cr_assert(strstr(r.err, " seconds time elapsed"), "%s", r.err);
	cli_run_free(&r);

	/* JSON too: on stderr, whole, and nothing on stdout but the command's. */
	r = cli_run_plumbv(NULL, "stat", "--json", "-e", "page-faults", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	json_object *root = json_tokener_parse(r.err);
	cr_assert_not_null(root, "%s", r.err);
	json_object_put(root);
	cli_run_free(&r);

	/* CSV too, one table: --table picks it */
	r = cli_run_plumbv(NULL, "stat", "--per-run", "--table", "runs", "-e", "page-faults", "--", "echo", "out", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "out\n");
	cr_assert(strncmp(r.err, "run,event,value,raw,", 20) == 0, "%s", r.err);
	cli_run_free(&r);
}

Test(stat_cli, runs_give_plus_minus_and_rates_follow_perf)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-r", "3", "-e", "task-clock,page-faults", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "'true' (3 runs)"), "%s", r.err);
	cr_assert(strstr(r.err, "( +- "), "%s", r.err);
	cr_assert(strstr(r.err, " +- "), "%s", r.err);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "stat", "-o", "-", "--json", "-r", "3", "-e", "task-clock,page-faults,minor-faults",
	                   "--", "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	json_object *rows = cli_json_rows(root, "counts");
	json_object *clock = row_where(rows, "task-clock"), *faults = row_where(rows, "page-faults");
	cr_assert_str_eq(json_object_get_string(field(clock, "rate_unit")), "CPUs utilized");
	cr_assert_str_eq(json_object_get_string(field(faults, "rate_unit")), "/sec");
	double clock_ns = json_object_get_double(field(clock, "mean"));
	double fault_count = json_object_get_double(field(faults, "mean"));
	double rate = json_object_get_double(field(faults, "rate"));
	/* per second of task-clock, exactly as computed from the two means */
	cr_assert(fabs(rate - fault_count / (clock_ns / 1e9)) <= 1e-6 * rate, "rate %g", rate);
	json_object *meta, *elapsed;
	cr_assert(json_object_object_get_ex(root, "meta", &meta));
	cr_assert(json_object_object_get_ex(meta, "elapsed_ns_mean", &elapsed));
	double cpus = json_object_get_double(field(clock, "rate"));
	cr_assert(fabs(cpus - clock_ns / (double)json_object_get_int64(elapsed)) <= 1e-3 * cpus + 1e-9, "%g", cpus);
	/* a program in the page cache takes every fault minor: the two counts are the same events */
	cr_assert_eq(fault_count, json_object_get_double(field(row_where(rows, "minor-faults"), "mean")));
	cr_assert(json_object_is_type(field(faults, "mean_error"), json_type_double) ||
	          json_object_is_type(field(faults, "mean_error"), json_type_int));
	json_object_put(root);
	cli_run_free(&r);
}

/* perf stat's rule: kernel events too when the kernel allows this user. */
static bool kernel_allowed(void)
{
	if (geteuid() == 0)
		return true;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 2;
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (paranoid <= 1)
		return true;
	f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long caps = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (f)
		fclose(f);
	return caps & ((1ull << 21) | (1ull << 38));
}

Test(stat_cli, the_default_domain_is_perfs_and_user_only_kernel_events_say_so)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "--json", "-e", "page-faults,context-switches", "--",
	                           "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "%s", r.out);
	cr_assert_str_eq(meta_text(root, "domain"), kernel_allowed() ? "user+kernel" : "user");
	json_object_put(root);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "stat", "-o", "-", "--json", "--user-only", "-e", "page-faults,context-switches", "--",
	                   "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	root = json_tokener_parse(r.out);
	cr_assert_str_eq(meta_text(root, "domain"), "user");
	json_object *rows = cli_json_rows(root, "counts");
	cr_assert_str_eq(json_object_get_string(field(row_where(rows, "context-switches"), "status")), "user-space-only");
	cr_assert_str_eq(json_object_get_string(field(row_where(rows, "page-faults"), "status")), "ok");
	json_object *notes;
	cr_assert(json_object_object_get_ex(root, "notes", &notes));
	bool noted = false;
	for (size_t i = 0; i < json_object_array_length(notes); i++)
		noted |= strstr(json_object_get_string(json_object_array_get_idx(notes, i)), "happen in the kernel") != NULL;
	cr_assert(noted, "no note on the user-space-only count");
	json_object_put(root);
	cli_run_free(&r);

	r = cli_run_plumbv(NULL, "stat", "--user-only", "-e", "context-switches", "--", "true", NULL);
	cr_assert(strstr(r.err, "context-switches") && strstr(r.err, "(user space only)"), "%s", r.err);
	cli_run_free(&r);
}

Test(stat_cli, the_default_list_is_not_a_request)
{
	/* Without -e, an event this machine cannot count shows <not supported>
	 * and the exit status is 0, as with perf stat; named with -e it is 3. */
	cli_run r = cli_run_plumbv(NULL, "stat", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0)
		cr_assert(strstr(r.err, "<not supported>      cycles"), "%s", r.err);
	cli_run_free(&r);
	if (access("/sys/bus/event_source/devices/cpu", F_OK) == 0)
		return;
	r = cli_run_plumbv(NULL, "stat", "-e", "cycles", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 3, "%s", r.err);
	cli_run_free(&r);
}

/* Issue 29: "-r 010" is ten runs.  Numbers were read with base 0, so a
 * leading zero made octal and this ran the command 8 times.  The command
 * counts its own runs by appending a line to a file. */
Test(stat_cli, a_leading_zero_is_decimal)
{
	const char *tally = cli_temp_path("runs");
	char script[PATH_MAX + 32];
	snprintf(script, sizeof script, "echo run >> '%s'", tally);
	cli_run r = cli_run_plumbv(NULL, "stat", "-r", "010", "-e", "task-clock", "--json", "-o", "-", "--", "sh", "-c", script, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	char *text = cli_read_file(tally, NULL);
	cr_assert_not_null(text);
	int lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 10, "the command ran %d times for -r 010", lines);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	cr_assert_str_eq(meta_text(root, "runs"), "10");
	json_object_put(root);
	free(text);
	cli_run_free(&r);
}

/* The counted command runs in a process group of its own (so that an
 * interrupted run stops what it started too), except when plumb is the
 * foreground job of a terminal: then, as under perf stat, it stays in
 * plumb's group and can read the terminal.  In a group of its own it would
 * be stopped (SIGTTIN) at its first read and the run would hang.  Here
 * plumb runs on a pseudo-terminal of its own, in its foreground. */
Test(stat_cli, a_command_reading_the_terminal_still_reads_it, .timeout = 60)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	cr_assert_geq(master, 0);
	cr_assert_eq(grantpt(master), 0);
	cr_assert_eq(unlockpt(master), 0);
	char slave_name[128];
	cr_assert_eq(ptsname_r(master, slave_name, sizeof slave_name), 0);
	const char *program = getenv("PLUMB_BIN");
	cr_assert_not_null(program);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setsid();
		int slave = open(slave_name, O_RDWR);
		if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) != 0)
			_exit(125);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		close(master);
		signal(SIGTTIN, SIG_DFL);
		signal(SIGTTOU, SIG_DFL);
		execl(program, program, "stat", "-e", "task-clock", "--", "sh", "-c", "read word; echo got-$word",
		      (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(write(master, "hello\n", 6), 6);
	char text[8192];
	size_t used = 0;
	for (;;) {
		struct pollfd p = { master, POLLIN, 0 };
		if (poll(&p, 1, 20000) <= 0)
			break;
		ssize_t n = read(master, text + used, sizeof text - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		text[used] = 0;
		if (used >= sizeof text - 1)
			break;
	}
	text[used] = 0;
	/* The terminal's end (EIO) can come before plumb has exited: wait for it,
	 * with a bound for a hang, not a guess of how fast it exits. */
	int status;
	pid_t r = 0;
	for (int i = 0; i < 6000 && (r = waitpid(pid, &status, WNOHANG)) == 0; i++)
		usleep(10000);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(master);
	cr_assert(strstr(text, "got-hello") != NULL, "the command did not read the terminal: %s", text);
	cr_assert(r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "plumb stat did not finish: %s", text);
}
