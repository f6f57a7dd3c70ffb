/* Running a command under plumbgrind.
 *
 * Valgrind finds a tool in the folder named by VALGRIND_LIB; plumbgrind's
 * folder holds the tool beside links to the stock tools' files (vg/Makefile.inc).
 * The summary goes to a fresh private temporary folder, so two runs never
 * share a file and nothing of a failed run is mistaken for a result. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/tempdir.h"
#include "core/interrupt.h"
#include "core/output.h"
#include "instrument/instrument.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

void instrument_options_init(instrument_options *options)
{
	memset(options, 0, sizeof *options);
	options->trace_fd = -1;
	options->program_stdout = -1;
	options->collect_at_start = 1;
	options->quiet = 1;
}

int instrument_find_tool(char *dir, size_t size, plumb_status *status)
{
	return trace_tool_find(dir, size, status);
}

/* 0 if the program can be executed (directly if NAME has a '/', else through
 * PATH, as execvp would), else -1 with errno: checked before valgrind starts,
 * so a missing program is one line of plumb's, not valgrind's message and
 * then plumb's. */
static int program_runnable(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? 0 : -1;
	const char *path = secure_getenv("PATH");
	if (!path || !path[0])
		path = "/usr/local/bin:/usr/bin:/bin";
	int error = ENOENT;
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t length = colon ? (size_t)(colon - path) : strlen(path);
		char candidate[PATH_MAX];
		if (snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, length ? path : ".", name) <
		    (int)sizeof candidate) {
			if (access(candidate, X_OK) == 0)
				return 0;
			if (errno == EACCES)
				error = EACCES;
		}
		path += length + (colon ? 1 : 0);
	}
	errno = error;
	return -1;
}

int instrument_find_valgrind(const char *name, char *out, size_t size, plumb_status *status)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK) != 0)
			return plumb_fail_errno(status, errno, "cannot run valgrind '%s'", name);
		snprintf(out, size, "%s", name);
		return 0;
	}
	const char *path = secure_getenv("PATH");
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
	unlink(summary);
	rmdir(folder);
	interrupt_remove_path(summary);
	interrupt_remove_path(folder);
}

static void process_clear(instrument_process *process)
{
	free(process->folder);
	free(process->summary);
	memset(process, 0, sizeof *process);
	process->pid = -1;
	process->trace_fd = -1;
}

int instrument_start(char *const argv[], const instrument_options *options, int trace_pipe,
                     instrument_process *process, plumb_status *status)
{
	memset(process, 0, sizeof *process);
	process->pid = -1;
	process->trace_fd = -1;
	instrument_options defaults;
	if (!options) {
		instrument_options_init(&defaults);
		options = &defaults;
	}
	if (!argv || !argv[0] || !argv[0][0])
		return plumb_fail(status, EINVAL, "no command to run under plumbgrind");
	if (program_runnable(argv[0]) != 0)
		return plumb_fail_errno(status, errno, "cannot run '%s'", argv[0]);
	if (trace_pipe && (options->trace_path || options->trace_fd >= 0))
		return plumb_fail(status, EINVAL, "a trace pipe and a trace file or descriptor exclude each other");
	char valgrind[PATH_MAX], tool_dir[PATH_MAX];
	if (instrument_find_valgrind(options->valgrind ? options->valgrind : "valgrind", valgrind, sizeof valgrind, status) < 0)
		return -1;
	if (options->tool_dir) {
		if (!trace_tool_present(options->tool_dir))
			return plumb_fail(status, ENOENT, "%s holds no " TRACE_TOOL_FILE " with valgrind's files beside it",
			                  options->tool_dir);
		snprintf(tool_dir, sizeof tool_dir, "%s", options->tool_dir);
	} else if (instrument_find_tool(tool_dir, sizeof tool_dir, status) < 0) {
		return -1;
	}
	char folder[PATH_MAX];
	if (temp_folder(folder, sizeof folder, "plumbgrind.XXXXXX", status) != 0)
		return -1;
	process->folder = strdup(folder);
	process->summary = malloc(strlen(folder) + 16);
	if (!process->folder || !process->summary) {
		rmdir(folder);
		interrupt_remove_path(folder);
		process_clear(process);
		return plumb_fail(status, ENOMEM, "out of memory starting valgrind");
	}
	sprintf(process->summary, "%s/summary", folder);
	/* A signal removes both (plumb/interrupt.h; the folder is registered). */
	interrupt_add_path(process->summary, false);

	/* The pipe's write end must survive valgrind's own exec of the tool, so
	 * it is inheritable; the read end is not. */
	int pipe_fds[2] = { -1, -1 };
	int trace_fd = options->trace_fd;
	if (trace_pipe) {
		if (pipe(pipe_fds) != 0 || fcntl(pipe_fds[0], F_SETFD, FD_CLOEXEC) != 0) {
			int error = errno;
			if (pipe_fds[0] >= 0) {
				close(pipe_fds[0]);
				close(pipe_fds[1]);
			}
			remove_folder(process->folder, process->summary);
			process_clear(process);
			return plumb_fail_errno(status, error, "cannot create the trace pipe");
		}
		trace_fd = pipe_fds[1];
	}

	size_t extra = 0;
	while (options->extra_arguments && options->extra_arguments[extra])
		extra++;
	const char **arguments = calloc(extra + 8, sizeof *arguments);
	char *out_option = malloc(strlen(process->summary) + 16);
	char *trace_option = NULL;
	if (options->trace_path) {
		trace_option = malloc(strlen(options->trace_path) + 16);
		if (trace_option)
			sprintf(trace_option, "--plumb-trace=%s", options->trace_path);
	} else if (trace_fd >= 0) {
		trace_option = malloc(40);
		if (trace_option)
			sprintf(trace_option, "--plumb-trace-fd=%d", trace_fd);
	}
	if (!arguments || !out_option || ((options->trace_path || trace_fd >= 0) && !trace_option)) {
		free(arguments);
		free(out_option);
		free(trace_option);
		if (trace_pipe) {
			close(pipe_fds[0]);
			close(pipe_fds[1]);
		}
		remove_folder(process->folder, process->summary);
		process_clear(process);
		return plumb_fail(status, ENOMEM, "out of memory starting valgrind");
	}
	sprintf(out_option, "--plumb-out=%s", process->summary);
	size_t k = 0;
	if (options->quiet)
		arguments[k++] = "-q";
	arguments[k++] = out_option;
	if (trace_option)
		arguments[k++] = trace_option;
	if (!options->collect_at_start)
		arguments[k++] = "--plumb-collect=no";
	for (size_t i = 0; i < extra; i++)
		arguments[k++] = options->extra_arguments[i];
	arguments[k] = NULL;

	/* The one launcher (trace_valgrind_start); the trace's descriptor
	 * survives valgrind's own exec of the tool. */
	trace_valgrind run = {
		.valgrind = valgrind, .tool = "plumbgrind", .tool_dir = tool_dir, .options = arguments, .argv = argv,
		.program_stdout = options->program_stdout, .keep = &trace_fd, .keep_count = trace_fd >= 0 ? 1 : 0,
	};
	pid_t child;
	int started = trace_valgrind_start(&run, &child, status);
	free(arguments);
	free(out_option);
	free(trace_option);
	if (trace_pipe)
		close(pipe_fds[1]);   /* so the reader sees the end when valgrind exits */
	if (started != 0) {
		if (trace_pipe)
			close(pipe_fds[0]);
		remove_folder(process->folder, process->summary);
		process_clear(process);
		return -1;
	}
	process->pid = child;
	process->trace_fd = trace_pipe ? pipe_fds[0] : -1;
	return 0;
}


/* No summary from plumbgrind.  Valgrind's status 0 without one means the
 * program's image ended without exiting: it exec'd another program, which
 * Valgrind does not follow (plumb sim, trace record and explain say the
 * same, with the new program's name, from the ring). */
static int no_summary(plumb_status *status, int valgrind_code)
{
	if (valgrind_code == 0)
		return plumb_fail(status, EXDEV, "plumbgrind wrote no summary: the program exec'd another program (a "
		                  "wrapper script?), which Valgrind does not follow; plumb follows one program image: "
		                  "give plumb the program itself");
	return plumb_fail(status, EIO, "plumbgrind wrote no summary (valgrind exited with status %d: the program "
	                  "could not be started, or valgrind failed; see its message above)", valgrind_code);
}

int instrument_finish(instrument_process *process, instrument_summary *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	if (!process || process->pid <= 0)
		return plumb_fail(status, EINVAL, "no plumbgrind process to finish");
	/* The trace may not have been read to its end: let valgrind finish. */
	if (process->trace_fd >= 0) {
		close(process->trace_fd);
		process->trace_fd = -1;
	}
	int wait_status;
	if (interrupt_waitpid(process->pid, &wait_status) < 0) {
			int error = errno;
			remove_folder(process->folder, process->summary);
			process_clear(process);
			return plumb_fail_errno(status, error, "waiting for valgrind");
		}
	int result;
	if (access(process->summary, F_OK) != 0) {
		if (WIFSIGNALED(wait_status))
			result = plumb_fail(status, EIO, "valgrind died of signal %d before writing the summary",
			                    WTERMSIG(wait_status));
		else
			result = no_summary(status, WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
	} else {
		result = instrument_summary_read(out, process->summary, status);
		if (result == 0) {
			out->exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
			out->exit_signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
		}
	}
	remove_folder(process->folder, process->summary);
	process_clear(process);
	return result;
}

/* A trace file named .ptrace is written in plumb's native format: plumbgrind
 * sends binary entries through the shared ring (src/trace/trace_ring.c) and
 * plumb encodes them while the program runs, instead of the tool writing
 * lackey text. */
static bool native_trace(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	return n > 7 && strcmp(path + n - 7, ".ptrace") == 0;
}

static int run_native_trace(char *const argv[], const instrument_options *options, instrument_summary *out,
                            plumb_status *status)
{
	/* checked as instrument_start checks them, for the same messages */
	if (!argv || !argv[0] || !argv[0][0])
		return plumb_fail(status, EINVAL, "no command to run under plumbgrind");
	if (program_runnable(argv[0]) != 0)
		return plumb_fail_errno(status, errno, "cannot run '%s'", argv[0]);
	char valgrind[PATH_MAX];
	if (instrument_find_valgrind(options->valgrind ? options->valgrind : "valgrind", valgrind, sizeof valgrind, status) < 0)
		return -1;
	char folder[PATH_MAX - 16], summary[PATH_MAX];
	if (temp_folder(folder, sizeof folder, "plumbgrind.XXXXXX", status) != 0)
		return -1;
	snprintf(summary, sizeof summary, "%s/summary", folder);
	/* A signal removes both (plumb/interrupt.h; the folder is registered). */
	interrupt_add_path(summary, false);
	size_t extra = 0;
	while (options->extra_arguments && options->extra_arguments[extra])
		extra++;
	const char **valgrind_options = calloc(extra + 3, sizeof *valgrind_options);
	if (!valgrind_options) {
		remove_folder(folder, summary);
		return plumb_fail(status, ENOMEM, "out of memory starting valgrind");
	}
	/* plumbgrind's entries as they are, without a code map, as before */
	size_t n = 0;
	valgrind_options[n++] = TRACE_NO_CODE_MAP;
	if (!options->collect_at_start)
		valgrind_options[n++] = "--plumb-collect=no";
	for (size_t i = 0; i < extra; i++)
		valgrind_options[n++] = options->extra_arguments[i];
	valgrind_options[n] = NULL;
	/* The one launcher (trace_reader_open_launch): plumbgrind writes the ring
	 * (src/trace/trace_ring.c) and its summary of exact counts. */
	trace_launch_exit exit_info = { 0 };
	trace_launch launch;
	trace_launch_init(&launch);
	launch.valgrind_options = valgrind_options;
	launch.valgrind = valgrind;
	launch.summary_path = summary;
	launch.tool_dir = options->tool_dir;
	launch.program_stdout = options->program_stdout >= 0 ? options->program_stdout : STDOUT_FILENO;
	launch.exit = &exit_info;
	trace_writer *writer;
	if (trace_writer_open(&writer, options->trace_path, TRACE_FORMAT_NATIVE, status) < 0) {
		free(valgrind_options);
		remove_folder(folder, summary);
		return -1;
	}
	trace_reader *reader;
	int rc = trace_reader_open_launch(&reader, argv, &launch, status);
	free(valgrind_options);
	if (rc != 0) {
		trace_writer_abort(writer);
		remove_folder(folder, summary);
		return -1;
	}
	/* plumbgrind's entries as they are (format 1.3, "Entry blocks") */
	long taken;
	while ((taken = trace_writer_take_entries(writer, reader, status)) > 0)
		;
	rc = taken < 0 ? -1 : 0;
	plumb_status close_status;
	int closed = trace_reader_close(reader, &close_status);
	/* The program's own exit status is the summary's, not a failure. */
	if (rc == 0 && closed != 0 && (!exit_info.ended || close_status.code == EXDEV)) {
		*status = close_status;
		rc = -1;
	}
	if (rc == 0 && access(summary, F_OK) != 0) {
		if (exit_info.signal)
			rc = plumb_fail(status, EIO, "valgrind died of signal %d before writing the summary", exit_info.signal);
		else
			rc = no_summary(status, exit_info.ended ? exit_info.code : -1);
	} else if (rc == 0) {
		rc = instrument_summary_read(out, summary, status);
		if (rc == 0) {
			out->exit_code = exit_info.code;
			out->exit_signal = exit_info.signal;
		}
	}
	remove_folder(folder, summary);
	if (rc == 0)
		rc = trace_writer_close(writer, status);
	else
		trace_writer_abort(writer);
	return rc;
}

/* A trace file the user named is opened here, as every output file is
 * (output_file_open: atomic for a regular file, in place for a device or
 * FIFO, a symlink's target replaced), and plumbgrind writes it through an
 * inherited descriptor; it is committed only when the run and the trace
 * are whole.  A wrong path is one clear error before anything runs, not a
 * full set of counts with no trace behind them (valgrind would report a
 * file it cannot create and still run the program). */
int instrument_run(char *const argv[], const instrument_options *options, instrument_summary *out,
                   plumb_status *status)
{
	memset(out, 0, sizeof *out);
	if (options && native_trace(options->trace_path) && options->trace_fd < 0)
		return run_native_trace(argv, options, out, status);
	instrument_process process;
	instrument_options traced;
	output_file trace_file;
	const char *trace_path = options ? options->trace_path : NULL;
	int inherited = -1;
	if (trace_path) {
		if (argv && argv[0] && argv[0][0] && program_runnable(argv[0]) != 0)
			return plumb_fail_errno(status, errno, "cannot run '%s'", argv[0]);
		plumb_status open_status;
		if (output_file_open(&trace_file, trace_path, &open_status) != 0)
			return open_status.code == EISDIR
			       ? plumb_fail(status, EISDIR, "cannot create the trace file %s: it is a directory", trace_path)
			       : plumb_fail_errno(status, open_status.code, "cannot create the trace file %s", trace_path);
		/* Without close-on-exec, so valgrind and the tool inherit it. */
		inherited = fcntl(output_file_descriptor(&trace_file), F_DUPFD, 3);
		if (inherited < 0) {
			int error = errno;
			output_file_abort(&trace_file);
			return plumb_fail_errno(status, error, "cannot pass the trace file %s to valgrind", trace_path);
		}
		traced = *options;
		traced.trace_path = NULL;
		traced.trace_fd = inherited;
		options = &traced;
	}
	int result = instrument_start(argv, options, 0, &process, status);
	if (inherited >= 0)
		close(inherited);
	if (result == 0)
		result = instrument_finish(&process, out, status);
	if (!trace_path)
		return result;
	/* On failure the caller gets no summary to free: the one read is freed here. */
	bool have_summary = result == 0;
	if (result == 0 && out->trace_error)
		result = plumb_fail(status, EIO, "cannot write the trace file %s: %s", trace_path, out->trace_error);
	else if (result == 0 && !out->traced)
		result = plumb_fail(status, EIO, "plumbgrind wrote no trace to %s", trace_path);
	if (result == 0)
		result = output_file_commit(&trace_file, status);
	else
		output_file_abort(&trace_file);
	if (result != 0 && have_summary)
		instrument_summary_free(out);
	return result;
}
