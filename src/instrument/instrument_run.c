/* Running a command under plumbgrind.
 *
 * Valgrind finds a tool in the folder named by VALGRIND_LIB; plumbgrind's
 * folder holds the tool beside links to the stock tools' files (vg/Makefile.inc).
 * The summary goes to a fresh private temporary folder, so two runs never
 * share a file and nothing of a failed run is mistaken for a result. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "plumb/instrument.h"

#define TOOL_FILE "plumbgrind-amd64-linux"

void instrument_options_init(instrument_options *options)
{
	memset(options, 0, sizeof *options);
	options->trace_fd = -1;
	options->program_stdout = -1;
	options->collect_at_start = 1;
	options->quiet = 1;
}

static int has_tool(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/" TOOL_FILE, dir) >= (int)sizeof path || access(path, X_OK) != 0)
		return 0;
	/* Valgrind also needs the stock preload objects beside it. */
	if (snprintf(path, sizeof path, "%s/vgpreload_core-amd64-linux.so", dir) >= (int)sizeof path)
		return 0;
	return access(path, R_OK) == 0;
}

int instrument_find_tool(char *dir, size_t size, plumb_status *status)
{
	const char *forced = getenv("PLUMB_VALGRIND_LIB");
	if (forced && forced[0]) {
		if (!has_tool(forced))
			return plumb_fail(status, ENOENT, "PLUMB_VALGRIND_LIB=%s holds no " TOOL_FILE
			                  " with valgrind's files beside it", forced);
		if (snprintf(dir, size, "%s", forced) >= (int)size)
			return plumb_fail(status, ENAMETOOLONG, "PLUMB_VALGRIND_LIB is too long");
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return plumb_fail_errno(status, errno, "cannot find the running program (/proc/self/exe)");
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	/* build/plumb -> build/vg/lib; build/tests/x -> build/vg/lib; PREFIX/bin/plumb -> PREFIX/lib/plumb/valgrind */
	static const char *const relative[] = { "vg/lib", "../vg/lib", "../lib/plumb/valgrind" };
	for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
		char candidate[PATH_MAX];
		if (snprintf(candidate, sizeof candidate, "%s/%s", self, relative[i]) >= (int)sizeof candidate)
			continue;
		if (has_tool(candidate)) {
			char resolved[PATH_MAX];
			const char *use = realpath(candidate, resolved) ? resolved : candidate;
			if (snprintf(dir, size, "%s", use) >= (int)size)
				return plumb_fail(status, ENAMETOOLONG, "the tool's folder name is too long");
			return 0;
		}
	}
	return plumb_fail(status, ENOENT, "the Valgrind tool plumbgrind is not built or installed (looked in %s/vg/lib, "
	                  "%s/../vg/lib and %s/../lib/plumb/valgrind; build it with make, which needs the valgrind "
	                  "package's tool headers and libraries, or set PLUMB_VALGRIND_LIB)", self, self, self);
}

/* The valgrind program, found on PATH as execvp would. */
static int find_valgrind(const char *name, char *out, size_t size, plumb_status *status)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK) != 0)
			return plumb_fail_errno(status, errno, "cannot run valgrind '%s'", name);
		snprintf(out, size, "%s", name);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path || !path[0])
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t length = colon ? (size_t)(colon - path) : strlen(path);
		if (length > 0 && snprintf(out, size, "%.*s/%s", (int)length, path, name) < (int)size &&
		    access(out, X_OK) == 0)
			return 0;
		path += length + (colon ? 1 : 0);
	}
	return plumb_fail(status, ENOENT, "valgrind is not installed ('%s' is not on PATH; Debian package valgrind)",
	                  name);
}

static void remove_folder(const char *folder, const char *summary)
{
	char path[PATH_MAX];
	unlink(summary);
	/* A summary left half-written under its temporary name by a killed run. */
	snprintf(path, sizeof path, "%s", folder);
	rmdir(path);
}

int instrument_run(char *const argv[], const instrument_options *options, instrument_summary *out,
                   plumb_status *status)
{
	memset(out, 0, sizeof *out);
	instrument_options defaults;
	if (!options) {
		instrument_options_init(&defaults);
		options = &defaults;
	}
	if (!argv || !argv[0] || !argv[0][0])
		return plumb_fail(status, EINVAL, "no command to run under plumbgrind");
	char valgrind[PATH_MAX], tool_dir[PATH_MAX];
	if (find_valgrind(options->valgrind ? options->valgrind : "valgrind", valgrind, sizeof valgrind, status) < 0)
		return -1;
	if (options->tool_dir) {
		if (!has_tool(options->tool_dir))
			return plumb_fail(status, ENOENT, "%s holds no " TOOL_FILE " with valgrind's files beside it",
			                  options->tool_dir);
		snprintf(tool_dir, sizeof tool_dir, "%s", options->tool_dir);
	} else if (instrument_find_tool(tool_dir, sizeof tool_dir, status) < 0) {
		return -1;
	}
	const char *tmp = getenv("TMPDIR");
	char folder[PATH_MAX], summary[PATH_MAX + 32];
	snprintf(folder, sizeof folder, "%s/plumbgrind.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(folder))
		return plumb_fail_errno(status, errno, "cannot create a temporary folder for the summary in %s",
		                        tmp && tmp[0] ? tmp : "/tmp");
	snprintf(summary, sizeof summary, "%s/summary", folder);

	size_t count = 0, extra = 0;
	while (argv[count])
		count++;
	while (options->extra_arguments && options->extra_arguments[extra])
		extra++;
	char **arguments = calloc(count + extra + 12, sizeof *arguments);
	char *out_option = malloc(strlen(summary) + 16);
	char *trace_option = NULL;
	if (options->trace_path) {
		trace_option = malloc(strlen(options->trace_path) + 16);
		if (trace_option)
			sprintf(trace_option, "--plumb-trace=%s", options->trace_path);
	} else if (options->trace_fd >= 0) {
		trace_option = malloc(40);
		if (trace_option)
			sprintf(trace_option, "--plumb-trace-fd=%d", options->trace_fd);
	}
	if (!arguments || !out_option || ((options->trace_path || options->trace_fd >= 0) && !trace_option)) {
		free(arguments);
		free(out_option);
		free(trace_option);
		rmdir(folder);
		return plumb_fail(status, ENOMEM, "out of memory starting valgrind");
	}
	sprintf(out_option, "--plumb-out=%s", summary);
	size_t k = 0;
	arguments[k++] = valgrind;
	arguments[k++] = "--tool=plumbgrind";
	if (options->quiet)
		arguments[k++] = "-q";
	arguments[k++] = out_option;
	if (trace_option)
		arguments[k++] = trace_option;
	if (!options->collect_at_start)
		arguments[k++] = "--plumb-collect=no";
	for (size_t i = 0; i < extra; i++)
		arguments[k++] = options->extra_arguments[i];
	arguments[k++] = "--";
	for (size_t i = 0; i < count; i++)
		arguments[k++] = argv[i];
	arguments[k] = NULL;

	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		int error = errno;
		free(arguments);
		free(out_option);
		free(trace_option);
		rmdir(folder);
		return plumb_fail_errno(status, error, "fork");
	}
	if (child == 0) {
		setenv("VALGRIND_LIB", tool_dir, 1);
		if (options->program_stdout >= 0 && options->program_stdout != STDOUT_FILENO &&
		    dup2(options->program_stdout, STDOUT_FILENO) < 0)
			_exit(127);
		execv(valgrind, arguments);
		fprintf(stderr, "plumb: cannot run %s: %s\n", valgrind, strerror(errno));
		_exit(127);
	}
	free(arguments);
	free(out_option);
	free(trace_option);
	int wait_status;
	while (waitpid(child, &wait_status, 0) < 0)
		if (errno != EINTR) {
			int error = errno;
			remove_folder(folder, summary);
			return plumb_fail_errno(status, error, "waiting for valgrind");
		}
	if (access(summary, F_OK) != 0) {
		remove_folder(folder, summary);
		if (WIFSIGNALED(wait_status))
			return plumb_fail(status, EIO, "valgrind died of signal %d before writing the summary",
			                  WTERMSIG(wait_status));
		return plumb_fail(status, EIO, "plumbgrind wrote no summary (valgrind exited with status %d: the program "
		                  "could not be started, or valgrind failed; see its message above)",
		                  WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
	}
	int result = instrument_summary_read(out, summary, status);
	remove_folder(folder, summary);
	if (result == 0)
		out->exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
	return result;
}
