/* The one launcher: every command that runs a program under Valgrind (plumb
 * sim -- PROG, trace record, instrument, explain, validate's plumbgrind and
 * cachegrind sources, perturb --simulate) starts it here, so one place
 * builds Valgrind's argument vector and the program's environment and says
 * where the tool is (VALGRIND_LIB, found by trace_tool_find).  The callers
 * make their temporary files with core/tempdir.h (TMPDIR). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/interrupt.h"
#include "trace/trace_internal.h"

/* In the child: the caller's changes to the environment. */
static void apply_environment(const char *const *environment)
{
	for (size_t i = 0; environment && environment[i]; i++) {
		const char *equals = strchr(environment[i], '=');
		if (!equals) {
			unsetenv(environment[i]);
			continue;
		}
		char name[256];
		size_t length = (size_t)(equals - environment[i]);
		if (length == 0 || length >= sizeof name)
			continue;
		memcpy(name, environment[i], length);
		name[length] = 0;
		setenv(name, equals + 1, 1);
	}
}

int trace_valgrind_start(const trace_valgrind *run, pid_t *pid_out, plumb_status *status)
{
	*pid_out = -1;
	const char *valgrind = run->valgrind;
	if (!valgrind || !valgrind[0])
		valgrind = secure_getenv("PLUMB_VALGRIND");
	if (!valgrind || !valgrind[0])
		valgrind = "valgrind";
	size_t argc = 0, option_count = 0;
	while (run->argv && run->argv[argc])
		argc++;
	while (run->options && run->options[option_count])
		option_count++;
	if (argc == 0)
		return plumb_fail(status, EINVAL, "no program to run under Valgrind");
	char tool_option[64];
	if (snprintf(tool_option, sizeof tool_option, "--tool=%s", run->tool) >= (int)sizeof tool_option)
		return plumb_fail(status, EINVAL, "a Valgrind tool name too long");
	/* valgrind --tool=TOOL --vgdb=no OPTIONS... -- PROGRAM ARGS...  No
	 * gdbserver: its FIFOs in TMPDIR would outlive a valgrind that is
	 * stopped with SIGKILL (an early close, a signal). */
	char **argv = calloc(argc + option_count + 5, sizeof *argv);
	if (!argv)
		return plumb_fail(status, ENOMEM, "out of memory starting valgrind");
	size_t k = 0;
	argv[k++] = (char *)valgrind;
	argv[k++] = tool_option;
	argv[k++] = "--vgdb=no";
	for (size_t i = 0; i < option_count; i++)
		argv[k++] = (char *)run->options[i];
	argv[k++] = "--";
	for (size_t i = 0; i < argc; i++)
		argv[k++] = run->argv[i];
	argv[k] = NULL;
	/* exec's errno comes back through a close-on-exec pipe: nothing read
	 * means valgrind started. */
	int exec_pipe[2];
	if (pipe2(exec_pipe, O_CLOEXEC) < 0) {
		int error = errno;
		free(argv);
		return plumb_fail_errno(status, error, "pipe");
	}
	fflush(NULL);
	pid_t pid = run->own_group ? interrupt_fork(true) : interrupt_fork_command();
	if (pid < 0) {
		int error = errno;
		free(argv);
		close(exec_pipe[0]);
		close(exec_pipe[1]);
		return plumb_fail_errno(status, error, "fork");
	}
	if (pid == 0) {
		for (size_t i = 0; i < run->keep_count; i++)
			fcntl(run->keep[i], F_SETFD, 0);
		if (run->ring)
			trace_ring_child_keep(run->ring);
		if (run->tool_dir)
			setenv("VALGRIND_LIB", run->tool_dir, 1);
		/* The program sees the same environment on every path, so every
		 * trace of it holds the same references. */
		unsetenv("PLUMB_TRACE_TEXT");
		unsetenv("PLUMB_SIM_NO_FILTER");
		apply_environment(run->environment);
		if (run->silent) {
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, STDIN_FILENO);
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
			}
		} else if (run->program_stdout >= 0 && run->program_stdout != STDOUT_FILENO) {
			dup2(run->program_stdout, STDOUT_FILENO);
		}
		signal(SIGPIPE, SIG_DFL);
		execvp(valgrind, argv);
		int error = errno;
		if (write(exec_pipe[1], &error, sizeof error) < 0)
			_exit(126);
		_exit(127);
	}
	free(argv);
	close(exec_pipe[1]);
	int exec_error = 0;
	ssize_t n;
	while ((n = read(exec_pipe[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR)
		;
	close(exec_pipe[0]);
	if (n == (ssize_t)sizeof exec_error) {
		interrupt_waitpid(pid, NULL);
		return plumb_fail_errno(status, exec_error, "cannot run %s", valgrind);
	}
	*pid_out = pid;
	return 0;
}
