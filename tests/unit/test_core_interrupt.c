/* The interrupt module (src/core/interrupt.c): a signal stops the registered
 * children, removes the registered paths and exits 128 + signal; a polling
 * loop gets the signal and decides itself. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/interrupt.h"
#include "../temp_folder.h"

typedef struct started {
	pid_t program;      /* the process that installed the state */
	pid_t group_child;  /* a child in its own process group */
	pid_t grandchild;   /* started by group_child, in its group */
	pid_t plain_child;  /* a child in the program's group */
} started;

static char folder[300];

/* A folder per test, removed with what is in it when the test's process
 * exits (a .fini would not run after cr_skip_test). */
static void make_folder(void)
{
	snprintf(folder, sizeof folder, "%s", temp_folder("plumb-interrupt-test"));
}

TestSuite(core_interrupt, .init = make_folder, .timeout = 20);

/* Forks a program that installs the state, registers a file, a folder with
 * a file in it and three processes, reports their pids and waits. */
static started start_program(int polling)
{
	int report[2];
	cr_assert_eq(pipe(report), 0);
	pid_t program = fork();
	cr_assert_geq(program, 0);
	if (program == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		close(report[0]);
		interrupt_state state;
		interrupt_install(&state);
		char path[512];
		snprintf(path, sizeof path, "%s/file", folder);
		close(open(path, O_WRONLY | O_CREAT, 0600));
		interrupt_add_path(path, false);
		snprintf(path, sizeof path, "%s/sub", folder);
		mkdir(path, 0700);
		interrupt_add_path(path, true);
		snprintf(path, sizeof path, "%s/sub/file", folder);
		close(open(path, O_WRONLY | O_CREAT, 0600));
		interrupt_add_path(path, false);
		started s = { getpid(), 0, 0, 0 };
		int inner[2];
		if (pipe(inner) != 0)
			_exit(1);
		s.group_child = interrupt_fork(true);
		if (s.group_child == 0) {
			pid_t grandchild = fork();
			if (grandchild == 0) {
				pause();
				_exit(0);
			}
			if (write(inner[1], &grandchild, sizeof grandchild) != sizeof grandchild)
				_exit(1);
			pause();
			_exit(0);
		}
		if (read(inner[0], &s.grandchild, sizeof s.grandchild) != sizeof s.grandchild)
			_exit(1);
		s.plain_child = interrupt_fork(false);
		if (s.plain_child == 0) {
			pause();
			_exit(0);
		}
		if (polling)
			interrupt_poll_begin();
		if (write(report[1], &s, sizeof s) != sizeof s)
			_exit(1);
		while (!interrupt_pending())
			pause();
		/* Polling: the loop stopped at its safe point; clean up as main() does. */
		interrupt_cleanup();
		_exit(interrupt_exit_code() + 100);
	}
	close(report[1]);
	started s;
	cr_assert_eq(read(report[0], &s, sizeof s), (ssize_t)sizeof s);
	close(report[0]);
	return s;
}

static int exit_code_of(pid_t pid)
{
	int wait_status;
	cr_assert_eq(waitpid(pid, &wait_status, 0), pid);
	cr_assert(WIFEXITED(wait_status), "killed by signal %d", WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
	return WEXITSTATUS(wait_status);
}

static void assert_gone(pid_t pid, const char *what)
{
	/* Orphans are reparented, not reaped at once: allow a moment for a
	 * SIGKILLed grandchild to disappear. */
	for (int i = 0; i < 100 && kill(pid, 0) == 0; i++) {
		char path[64], state = 0;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (f && fscanf(f, "%*d %*s %c", &state) == 1 && state == 'Z') {
			fclose(f);
			return;   /* dead; its new parent will reap it */
		}
		if (f)
			fclose(f);
		struct timespec t = { 0, 10 * 1000000L };
		nanosleep(&t, NULL);
	}
	if (kill(pid, 0) == 0) {
		kill(pid, SIGKILL);
		cr_assert_fail("%s (pid %d) survived", what, (int)pid);
	}
}

static void assert_cleaned(const started *s)
{
	assert_gone(s->group_child, "the child in its own group");
	assert_gone(s->grandchild, "the grandchild in that group");
	assert_gone(s->plain_child, "the child in the program's group");
	char path[512];
	snprintf(path, sizeof path, "%s/file", folder);
	cr_assert_eq(access(path, F_OK), -1, "the registered file is left");
	snprintf(path, sizeof path, "%s/sub", folder);
	cr_assert_eq(access(path, F_OK), -1, "the registered folder is left");
}

Test(core_interrupt, sigterm_stops_children_removes_paths_exits_143)
{
	started s = start_program(0);
	cr_assert_eq(kill(s.program, SIGTERM), 0);
	cr_assert_eq(exit_code_of(s.program), 143);
	assert_cleaned(&s);
}

Test(core_interrupt, a_polling_loop_sees_the_signal_and_cleans_up_itself)
{
	started s = start_program(1);
	cr_assert_eq(kill(s.program, SIGINT), 0);
	cr_assert_eq(exit_code_of(s.program), 130 + 100, "the loop must see SIGINT and run on to its own exit");
	assert_cleaned(&s);
}

Test(core_interrupt, nothing_installed_is_a_no_op)
{
	cr_assert_eq(interrupt_signal(), 0);
	cr_assert_eq(interrupt_exit_code(), 0);
	cr_assert_eq(interrupt_add_path("/tmp/whatever", false), -1);
	interrupt_remove_path("/tmp/whatever");
	interrupt_cleanup();
	pid_t child = interrupt_fork(true);
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(7);
	int wait_status;
	cr_assert_eq(interrupt_waitpid(child, &wait_status), child);
	cr_assert_eq(WEXITSTATUS(wait_status), 7);
}
