/* The end of a reader over a program's run (trace_command.c starts it):
 * waiting for valgrind, and removing plumbgrind's code file.  The reader
 * calls these when it is closed, so they sit below it; trace_command.c,
 * which opens the reader, sits above it. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/interrupt.h"
#include "core/status.h"
#include "trace/trace_internal.h"

int trace_command_finish(trace_reader *reader, plumb_status *status)
{
	return trace_command_finish_image(reader, true, NULL, status);
}

int trace_command_exec_refusal(const char *program, const char *exec_name, int code, plumb_status *status)
{
	if (exec_name)
		return plumb_fail(status, code, "'%s' exec'd %s, which Valgrind does not follow: the trace stopped there; "
		                  "plumb follows one program image: run plumb on %s directly", program, exec_name, exec_name);
	return plumb_fail(status, code, "'%s' exec'd another program (a wrapper script?), which Valgrind does not "
	                  "follow: the trace stopped there; plumb follows one program image: give plumb the program "
	                  "itself", program);
}

int trace_command_finish_image(trace_reader *reader, bool image_ended, const char *exec_name, plumb_status *status)
{
	trace_command_state *c = &reader->command;
	/* Closed before the end (the caller had enough, or the trace was bad):
	 * stop the run rather than wait for a program lackey slows a
	 * thousandfold -- and that could block forever on a full pipe nobody
	 * reads.  The caller already has any parse error from trace_reader_read. */
	bool early = !reader->input.at_eof;
	if (early) {
		kill(c->pid, SIGKILL);
		/* and what the program forked: a shell's background job runs
		 * under valgrind too, in valgrind's group where it leads one
		 * (lackey's reader stops at a second process's first line, and
		 * the job once went on running after plumb had exited) */
		kill(-c->pid, SIGKILL);
	}
	int wait_status;
	pid_t r;
	r = interrupt_waitpid(c->pid, &wait_status);
	c->running = false;
	if (r < 0)
		return plumb_fail_errno(status, errno, "waiting for valgrind");
	if (early)
		return 0;
	if (c->exit) {
		c->exit->ended = WIFEXITED(wait_status) || WIFSIGNALED(wait_status);
		c->exit->signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
		c->exit->code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + c->exit->signal;
		c->exit->exec_failed = WIFEXITED(wait_status) && (c->exit->code == 126 || c->exit->code == 127);
	}
	if (WIFEXITED(wait_status)) {
		int code = WEXITSTATUS(wait_status);
		if (!image_ended && code != 126 && code != 127)
			return trace_command_exec_refusal(c->program, exec_name, EXDEV, status);
		if (code == 0)
			return 0;
		if (code == 127 || code == 126)
			return plumb_fail(status, ECHILD, "valgrind could not start '%s' (exit status %d)", c->program, code);
		return plumb_fail(status, ECHILD, "the traced program '%s' exited with status %d", c->program, code);
	}
	if (WIFSIGNALED(wait_status))
		return plumb_fail(status, ECHILD, "the traced program '%s' was killed by signal %d (%s)", c->program,
		                  WTERMSIG(wait_status), strsignal(WTERMSIG(wait_status)));
	return plumb_fail(status, ECHILD, "valgrind ended abnormally tracing '%s'", c->program);
}

/* Removes plumbgrind's code file and its directory (at close). */
void trace_command_forget_code(trace_reader *reader)
{
	char *path = reader->command.code_path;
	if (!path)
		return;
	char *slash = strrchr(path, '/');
	if (slash) {
		/* the file, or a temporary one of a run stopped before it renamed it */
		*slash = 0;
		DIR *directory = opendir(path);
		struct dirent *entry;
		while (directory && (entry = readdir(directory)))
			if (!strncmp(entry->d_name, "code", 4))
				unlinkat(dirfd(directory), entry->d_name, 0);
		if (directory)
			closedir(directory);
		rmdir(path);
		interrupt_remove_path(path);
		*slash = '/';
		interrupt_remove_path(path);
	}
	free(path);
	reader->command.code_path = NULL;
}
