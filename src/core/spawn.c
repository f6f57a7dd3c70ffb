/* Helper programs through fork and execvp, never a shell (plumb/spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/interrupt.h"
#include "core/spawn.h"

static void close_pair(int pair[2])
{
	if (pair[0] >= 0)
		close(pair[0]);
	if (pair[1] >= 0)
		close(pair[1]);
}

/* In the child: only async-signal-safe calls.  An exec that fails writes its
 * errno to the report pipe, which exec would otherwise close unread. */
static void run_child(char *const argv[], bool merge_stderr, int out, int report)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(merge_stderr ? out : null, STDERR_FILENO) < 0) {
		int e = errno;
		(void)!write(report, &e, sizeof e);
		_exit(127);
	}
	execvp(argv[0], argv);
	int e = errno;
	(void)!write(report, &e, sizeof e);
	_exit(127);
}

int spawn_capture(char *const argv[], bool merge_stderr, char **output, size_t *length, int *wait_status)
{
	*output = NULL;
	*length = 0;
	int out[2] = { -1, -1 }, report[2] = { -1, -1 };
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
		int e = errno;
		close_pair(out);
		close_pair(report);
		errno = e;
		return -1;
	}
	pid_t pid = interrupt_fork(true);
	if (pid < 0) {
		int e = errno;
		close_pair(out);
		close_pair(report);
		errno = e;
		return -1;
	}
	if (pid == 0)
		run_child(argv, merge_stderr, out[1], report[1]);
	close(out[1]);
	close(report[1]);
	char *text = NULL;
	size_t size = 0;
	FILE *sink = open_memstream(&text, &size);
	char chunk[8192];
	for (;;) {
		ssize_t n = read(out[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (sink)
			fwrite(chunk, 1, (size_t)n, sink);
	}
	close(out[0]);
	int exec_error = 0;
	ssize_t got;
	while ((got = read(report[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR)
		;
	close(report[0]);
	int status = 0;
	interrupt_waitpid(pid, &status);
	if (sink)
		fclose(sink);
	if (got == (ssize_t)sizeof exec_error || !sink || !text) {
		free(text);
		errno = got == (ssize_t)sizeof exec_error ? exec_error : ENOMEM;
		return -1;
	}
	*output = text;
	*length = size;
	*wait_status = status;
	return 0;
}
