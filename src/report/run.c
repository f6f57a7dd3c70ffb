#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/tempdir.h"
#include "core/interrupt.h"
#include "core/progress.h"
#include "core/read_file.h"
#include "core/timer.h"
#include "report/report.h"

typedef struct text { char *data; size_t length; } text;

static int text_append(text *t, const char *data, size_t n)
{
	char *grown = realloc(t->data, t->length + n + 1);
	if (!grown)
		return -1;
	memcpy(grown + t->length, data, n);
	t->data = grown;
	t->length += n;
	grown[t->length] = 0;
	return 0;
}

static void last_line(const char *s, char *out, size_t length)
{
	out[0] = 0;
	if (!s)
		return;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	size_t start = n;
	while (start && s[start - 1] != '\n' && s[start - 1] != '\r')
		start--;
	snprintf(out, length, "%.*s", (int)(n - start), s + start);
}

static int save_json(const char *path, const char *json, plumb_status *status)
{
	output_file f;
	if (output_file_open(&f, path, status) != 0)
		return -1;
	fputs(json, f.stream);
	return output_file_commit(&f, status);
}

/* The input goes through an unlinked temporary file rather than a pipe: the
 * child may print before it reads, and no path of it can leak into the
 * child's report. */
static int input_file(const char *input, plumb_status *status)
{
	char path[4096];
	if (temp_path(path, sizeof path, "plumb-report-input-XXXXXX", status) != 0)
		return -1;
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return plumb_fail_errno(status, errno, "cannot create a temporary file for a section's input");
	unlink(path);
	size_t length = strlen(input), done = 0;
	while (done < length) {
		ssize_t n = write(fd, input + done, length - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = errno;
			close(fd);
			return plumb_fail_errno(status, err, "cannot write a section's input");
		}
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		int err = errno;
		close(fd);
		return plumb_fail_errno(status, err, "cannot rewind a section's input");
	}
	return fd;
}

int report_run_section(const char *program, const char *command, const char *const *arguments,
                       const char *save_path, output_report **out, plumb_status *status)
{
	return report_run_section_watched(program, command, arguments, NULL, save_path, NULL, out, status);
}

int report_run_section_input(const char *program, const char *command, const char *const *arguments,
                             const char *input, const char *save_path, output_report **out, plumb_status *status)
{
	return report_run_section_watched(program, command, arguments, input, save_path, NULL, out, status);
}

extern char **environ;

/* The child's environment: this one without any PLUMB_PROGRESS, plus the
 * channel's (core/progress.h), "FD:PID" with this process's PID.  The
 * strings are environ's own but for entry, which must outlive the exec. */
static char **channel_environment(int fd, char *entry, size_t length)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0, name = strlen(PROGRESS_CHANNEL_VARIABLE);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], PROGRESS_CHANNEL_VARIABLE, name) || environ[i][name] != '=')
			env[k++] = environ[i];
	snprintf(entry, length, "%s=%d:%ld", PROGRESS_CHANNEL_VARIABLE, fd, (long)getpid());
	env[k] = entry;
	return env;
}

/* Milliseconds to the next tick (-1: no ticks), ticking when it is due. */
static int tick_wait(const report_section_watch *watch, unsigned long long *next_ns)
{
	if (!watch || !watch->tick)
		return -1;
	unsigned long long now = timer_monotonic_ns();
	if (now >= *next_ns) {
		watch->tick(watch->context);
		*next_ns = now + 1000000000ull;
	}
	return (int)((*next_ns - now + 999999) / 1000000);
}

/* `program COMMAND ARGUMENTS... --json TAIL...`: the tail (NULL: none) is
 * what comes after --json, a user's program after "--". */
static int run_watched(const char *program, const char *command, const char *const *arguments,
                       char *const *tail, const char *input, const char *save_path,
                       const report_section_watch *watch, output_report **out, plumb_status *status)
{
	*out = NULL;
	int in = -1;
	if (input && (in = input_file(input, status)) < 0)
		return -1;
	size_t argc = 0, tailc = 0;
	while (arguments && arguments[argc])
		argc++;
	while (tail && tail[tailc])
		tailc++;
	char **argv = calloc(argc + tailc + 4, sizeof *argv);
	if (!argv) {
		if (in >= 0)
			close(in);
		return plumb_fail(status, ENOMEM, "out of memory");
	}
	argv[0] = (char *)program;
	argv[1] = (char *)command;
	for (size_t i = 0; i < argc; i++)
		argv[2 + i] = (char *)arguments[i];
	argv[2 + argc] = "--json";
	for (size_t i = 0; i < tailc; i++)
		argv[3 + argc + i] = tail[i];
	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, c[2] = { -1, -1 };
	char entry[64];
	char **env = NULL;
	bool pipes = pipe2(o, O_CLOEXEC) == 0 && pipe2(e, O_CLOEXEC) == 0;
	/* The progress channel: a pipe of its own, so that nothing the section
	 * prints can be taken for a record, nor a record for its output. */
	if (pipes && watch && watch->fraction) {
		pipes = pipe2(c, O_CLOEXEC) == 0;
		if (pipes && !(env = channel_environment(c[1], entry, sizeof entry))) {
			for (int i = 0; i < 2; i++) {
				close(o[i]);
				close(e[i]);
				close(c[i]);
			}
			free(argv);
			if (in >= 0)
				close(in);
			return plumb_fail(status, ENOMEM, "out of memory");
		}
	}
	if (!pipes) {
		int err = errno;
		for (int i = 0; i < 2; i++) {
			if (o[i] >= 0)
				close(o[i]);
			if (e[i] >= 0)
				close(e[i]);
			if (c[i] >= 0)
				close(c[i]);
		}
		errno = err;
		free(argv);
		if (in >= 0)
			close(in);
		return plumb_fail_errno(status, errno, "pipe");
	}
	pid_t pid = interrupt_fork(true);
	if (pid < 0) {
		int err = errno;
		free(argv);
		free(env);
		if (in >= 0)
			close(in);
		return plumb_fail_errno(status, err, "fork");
	}
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		int null = in >= 0 ? in : open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		if (env) {
			fcntl(c[1], F_SETFD, 0);   /* the channel stays open across exec */
			execve(program, argv, env);
		} else {
			execv(program, argv);
		}
		_exit(127);
	}
	free(argv);
	free(env);
	if (in >= 0)
		close(in);
	close(o[1]);
	close(e[1]);
	if (c[1] >= 0)
		close(c[1]);
	text so = { 0 }, se = { 0 };
	/* The section's stdout and stderr, and its progress channel: the run
	 * ends when the first two do (a grandchild left holding the channel
	 * cannot keep the report waiting).  poll wakes at least once a second
	 * for the watch's tick. */
	struct pollfd fds[3] = { { o[0], POLLIN, 0 }, { e[0], POLLIN, 0 }, { c[0], POLLIN, 0 } };
	progress_reader reader = { .used = 0 };
	unsigned long long next_tick = 0;
	int open_count = 2, oom = 0;
	while (open_count) {
		if (poll(fds, c[0] >= 0 ? 3 : 2, tick_wait(watch, &next_tick)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 3; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			char chunk[65536];
			ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
			if (n > 0 && i == 2) {
				double fraction;
				if (progress_reader_feed(&reader, chunk, (size_t)n, &fraction))
					watch->fraction(watch->context, fraction);
				if (reader.told_left && watch->left)
					watch->left(watch->context, reader.left);
			} else if (n > 0) {
				/* The child's stderr passes through: it carries warnings
				 * the user should see as they happen. */
				if (i == 1)
					fwrite(chunk, 1, (size_t)n, stderr);
				oom |= text_append(i ? &se : &so, chunk, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_count -= i < 2;
			}
		}
	}
	if (fds[2].fd >= 0)
		close(fds[2].fd);
	int wstatus = 0;
	interrupt_waitpid(pid, &wstatus);
	int rc = -1;
	char why[PLUMB_MESSAGE_MAX];
	last_line(se.data, why, sizeof why);
	if (oom) {
		plumb_fail(status, ENOMEM, "out of memory reading 'plumb %s'", command);
	} else if (WIFSIGNALED(wstatus)) {
		plumb_fail(status, EIO, "'plumb %s' died with signal %d", command, WTERMSIG(wstatus));
	} else if (WEXITSTATUS(wstatus) == 127 && !so.length) {
		plumb_fail(status, ENOENT, "cannot run '%s %s'", program, command);
	} else if (WEXITSTATUS(wstatus) != 0) {
		plumb_fail(status, EIO, "'plumb %s' failed (exit %d)%s%s", command, WEXITSTATUS(wstatus), why[0] ? ": " : "", why);
	} else if (!so.data) {
		plumb_fail(status, EIO, "'plumb %s' printed no report", command);
	} else if (output_report_parse_json(so.data, out, status) == 0) {
		rc = save_path ? save_json(save_path, so.data, status) : 0;
		if (rc != 0) {
			output_report_free(*out);
			*out = NULL;
		}
	}
	free(so.data);
	free(se.data);
	return rc;
}

int report_run_section_watched(const char *program, const char *command, const char *const *arguments,
                               const char *input, const char *save_path, const report_section_watch *watch,
                               output_report **out, plumb_status *status)
{
	return run_watched(program, command, arguments, NULL, input, save_path, watch, out, status);
}

int report_run_program_section(const char *program, const char *command, const char *const *arguments,
                               char *const *program_argv, const char *save_path, const report_section_watch *watch,
                               output_report **out, plumb_status *status)
{
	*out = NULL;
	size_t n = 0;
	while (program_argv && program_argv[n])
		n++;
	if (n == 0)
		return plumb_fail(status, EINVAL, "this section runs a program: give plumb report --program 'PROGRAM ARGS'");
	char **tail = calloc(n + 2, sizeof *tail);
	if (!tail)
		return plumb_fail(status, ENOMEM, "out of memory");
	tail[0] = "--";
	memcpy(tail + 1, program_argv, n * sizeof *tail);
	int rc = run_watched(program, command, arguments, tail, NULL, save_path, watch, out, status);
	free(tail);
	return rc;
}

const char *const *report_section_arguments(const char *command)
{
	static const char *const no_arguments[] = { NULL };
	const report_section *section = report_section_find(command);
	return section && section->arguments ? section->arguments : no_arguments;
}

int report_run_perturb_section(const char *program, const char *save_path, const report_section_watch *watch,
                               output_report **out, plumb_status *status)
{
	const char *const *design = report_section_arguments("perturb");
	size_t n = 0;
	while (design[n])
		n++;
	const char *arguments[32];
	if (n + 3 > sizeof arguments / sizeof arguments[0])
		return plumb_fail(status, EINVAL, "too many perturb arguments");
	memcpy(arguments, design, n * sizeof *arguments);
	arguments[n] = NULL;
	char directory[512], trace[600], code[620];
	plumb_status made_status;
	bool made = temp_folder(directory, sizeof directory, "plumb-report-XXXXXX", &made_status) == 0;
	if (made) {
		snprintf(trace, sizeof trace, "%s/workload.ptrace", directory);
		snprintf(code, sizeof code, "%s.code", trace);
		/* the workload alone, once, as the experiment runs it: its references per second */
		const char *record[] = { "record", "--json", trace, "--", program, "perturb", arguments[0], arguments[1], arguments[2],
		                         arguments[3], "--once", NULL };
		output_report *recorded = NULL;
		plumb_status ignored;
		if (report_run_section_watched(program, "trace", record, NULL, NULL, watch, &recorded, &ignored) == 0) {
			arguments[n++] = "--rate-trace";
			arguments[n++] = trace;
			arguments[n] = NULL;
		}
		output_report_free(recorded);
	}
	int rc = report_run_section_watched(program, "perturb", arguments, NULL, save_path, watch, out, status);
	if (made) {
		unlink(code);
		unlink(trace);
		rmdir(directory);
		interrupt_remove_path(directory);
	}
	return rc;
}

int report_read_file(const char *path, output_report **out, plumb_status *status)
{
	*out = NULL;
	char *data;
	size_t length;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &data, &length, status) != 0)
		return -1;
	if (!length) {
		free(data);
		return plumb_fail(status, EINVAL, "cannot read '%s': empty file", path);
	}
	text t = { .data = data, .length = length };
	int rc = output_report_parse_json(t.data, out, status);
	if (rc != 0) {
		char message[PLUMB_MESSAGE_MAX];
		snprintf(message, sizeof message, "%s", status ? status->message : "");
		plumb_fail(status, EINVAL, "%s: %s", path, message);
	}
	free(t.data);
	return rc;
}
