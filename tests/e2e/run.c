#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run.h"
#include "../temp_folder.h"

typedef struct buffer { char *data; size_t length, capacity; } buffer;

static void buffer_append(buffer *b, const char *data, size_t n)
{
	if (b->length + n + 1 > b->capacity) {
		size_t capacity = b->capacity ? b->capacity : 4096;
		while (capacity < b->length + n + 1)
			capacity *= 2;
		b->data = realloc(b->data, capacity);
		cr_assert(b->data != NULL, "out of memory");
		b->capacity = capacity;
	}
	memcpy(b->data + b->length, data, n);
	b->length += n;
	b->data[b->length] = 0;
}

const char *cli_plumb_program(void)
{
	const char *program = getenv("PLUMB_BIN");
	cr_assert(program != NULL, "PLUMB_BIN is not set (run through 'make test-e2e')");
	return program;
}

char **cli_plumb_argv(const char *const argv[])
{
	const char *program = cli_plumb_program();
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char **child_argv = calloc(argc + 2, sizeof *child_argv);
	cr_assert(child_argv != NULL);
	child_argv[0] = (char *)program;
	for (size_t i = 0; i < argc; i++)
		child_argv[i + 1] = (char *)argv[i];
	return child_argv;
}

cli_run cli_run_plumb(const char *stdin_text, const char *const argv[])
{
	int in[2], out[2], err[2];
	cr_assert(pipe(in) == 0 && pipe(out) == 0 && pipe(err) == 0);
	char **child_argv = cli_plumb_argv(argv);
	const char *program = child_argv[0];
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(in[0], 0); dup2(out[1], 1); dup2(err[1], 2);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]); close(err[0]); close(err[1]);
		execv(program, child_argv);
		_exit(127);
	}
	free(child_argv);
	close(in[0]); close(out[1]); close(err[1]);
	signal(SIGPIPE, SIG_IGN);
	if (stdin_text) {
		/* Small inputs only: a large one would need to interleave with reading. */
		size_t left = strlen(stdin_text);
		while (left) {
			ssize_t w = write(in[1], stdin_text, left);
			if (w <= 0)
				break;
			stdin_text += w; left -= (size_t)w;
		}
	}
	close(in[1]);
	buffer bo = { 0 }, be = { 0 };
	buffer_append(&bo, "", 0);
	buffer_append(&be, "", 0);
	struct pollfd fds[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	int open_count = 2;
	while (open_count) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[65536];
			ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
			if (n > 0) {
				buffer_append(i ? &be : &bo, chunk, (size_t)n);
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_count--;
			}
		}
	}
	int wstatus = 0;
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	cli_run run = { 0 };
	run.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	run.out = bo.data;
	run.err = be.data;
	return run;
}

cli_run cli_run_plumbv(const char *stdin_text, ...)
{
	const char *argv[64];
	size_t n = 0;
	va_list ap;
	va_start(ap, stdin_text);
	for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
		cr_assert(n < 63, "too many arguments");
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;
	return cli_run_plumb(stdin_text, argv);
}

void cli_run_free(cli_run *run)
{
	free(run->out);
	free(run->err);
	run->out = run->err = NULL;
}

const char *cli_temp_path(const char *name)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", temp_folder("plumb-e2e"), name);
	return path;
}

const char *cli_build_dir(void)
{
	static char dir[4096];
	char copy[4096];
	snprintf(copy, sizeof copy, "%s", cli_plumb_program());
	snprintf(dir, sizeof dir, "%s", dirname(copy));
	return dir;
}

bool cli_plumbgrind_built(void)
{
	char tool[4200];
	snprintf(tool, sizeof tool, "%s/vg/lib/plumbgrind-amd64-linux", cli_build_dir());
	return access(tool, X_OK) == 0;
}

void cli_need_plumbgrind(void)
{
	if (!cli_plumbgrind_built())
		cr_skip_test("plumbgrind is not built here (needs valgrind's tool libraries)");
}

const char *cli_source_dir(void)
{
	const char *s = getenv("PLUMB_SRCDIR");
	return s ? s : ".";
}

char *cli_read_file(const char *path, size_t *length)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *data = NULL;
	size_t used = 0, capacity = 0;
	for (;;) {
		if (used + 65536 + 1 > capacity) {
			size_t grown = capacity ? capacity * 2 : 65536 * 2;
			char *bigger = realloc(data, grown);
			if (!bigger) {
				free(data);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			data = bigger;
			capacity = grown;
		}
		ssize_t n = read(fd, data + used, capacity - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			free(data);
			close(fd);
			errno = saved;
			return NULL;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	data[used] = 0;
	if (length)
		*length = used;
	return data;
}

json_object *cli_json_table(json_object *root, const char *name)
{
	json_object *tables;
	cr_assert(json_object_object_get_ex(root, "tables", &tables), "not a plumb report");
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		json_object *t = json_object_array_get_idx(tables, i), *n;
		if (json_object_object_get_ex(t, "name", &n) && !strcmp(json_object_get_string(n), name))
			return t;
	}
	cr_assert_fail("no table '%s'", name);
	return NULL;
}

json_object *cli_json_rows(json_object *root, const char *name)
{
	json_object *rows;
	cr_assert(json_object_object_get_ex(cli_json_table(root, name), "rows", &rows), "table '%s' has no rows", name);
	return rows;
}

void cli_assert_usage_error(const cli_run *run, const char *command)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "plumb %s: ", command);
	cr_assert_eq(run->exit_code, 2, "exit %d, stderr: %s", run->exit_code, run->err);
	cr_assert(strncmp(run->err, prefix, strlen(prefix)) == 0, "%s", run->err);
	cr_assert_str_eq(strchr(run->err, '\n') + 1, "", "one error line expected: %s", run->err);
	cr_assert_str_eq(run->out, "");
}

int cli_run_plumb_file_limited(unsigned long bytes, char *text, size_t length, const char *const argv[])
{
	char **full = cli_plumb_argv(argv);
	int err[2];
	cr_assert_eq(pipe(err), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_DFL);
		dup2(err[1], 2);
		close(err[0]);
		struct rlimit limit = { bytes, bytes };
		if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
			_exit(125);
		execv(full[0], full);
		_exit(127);
	}
	free(full);
	close(err[1]);
	size_t used = 0;
	ssize_t n;
	while (used < length - 1 && (n = read(err[0], text + used, length - 1 - used)) > 0)
		used += (size_t)n;
	text[used] = 0;
	close(err[0]);
	int wait_status;
	cr_assert_eq(waitpid(pid, &wait_status, 0), pid);
	return wait_status;
}
