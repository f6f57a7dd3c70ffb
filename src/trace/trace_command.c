/* Runs a program under Valgrind's lackey (or plumbgrind, plumb's faster tool
 * with the same output, when it is built) and streams its references through
 * a pipe (never a temporary file: a lackey trace grows by ~14 bytes per
 * reference and lackey itself is the bottleneck, notes 002 section 8.3).
 *
 * valgrind --tool=lackey --trace-mem=yes --trace-sched=yes --log-fd=N PROG ARGS
 * writes the trace, Valgrind's messages and the SCHED lines that attribute
 * references to threads to the pipe N; the program's own stdout goes to
 * plumb's stderr so plumb's stdout stays a clean report.  PLUMB_VALGRIND
 * names another valgrind binary. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/tempdir.h"
#include "core/interrupt.h"
#include "core/status.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

/* 0 if name can be executed (directly if it has a '/', else through PATH). */
static int find_executable(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? 0 : -1;
	const char *path = secure_getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t length = colon ? (size_t)(colon - path) : strlen(path);
		char candidate[PATH_MAX];
		if (length + strlen(name) + 2 < sizeof candidate) {
			snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, length ? path : ".", name);
			if (access(candidate, X_OK) == 0)
				return 0;
		}
		path += length + (colon ? 1 : 0);
	}
	errno = ENOENT;
	return -1;
}

int trace_reader_open_command(trace_reader **out, char *const argv[], plumb_status *status)
{
	return trace_reader_open_command_options(out, argv, NULL, status);
}

int trace_reader_open_command_options(trace_reader **out, char *const argv[], const char *const valgrind_options[],
                                      plumb_status *status)
{
	return trace_reader_open_command_blocks(out, argv, valgrind_options, 0, 0, status);
}

int trace_reader_open_command_blocks(trace_reader **out, char *const argv[], const char *const valgrind_options[],
                                     size_t ring_blocks, size_t ring_block_bytes, plumb_status *status)
{
	trace_launch launch;
	trace_launch_init(&launch);
	launch.valgrind_options = valgrind_options;
	launch.ring_blocks = ring_blocks;
	launch.ring_block_bytes = ring_block_bytes;
	return trace_reader_open_launch(out, argv, &launch, status);
}

void trace_launch_init(trace_launch *launch)
{
	memset(launch, 0, sizeof *launch);
	launch->program_stdout = -1;
}

int trace_reader_open_launch(trace_reader **out, char *const argv[], const trace_launch *launch,
                             plumb_status *status)
{
	*out = NULL;
	const char *const *valgrind_options = launch->valgrind_options;
	size_t ring_blocks = launch->ring_blocks, ring_block_bytes = launch->ring_block_bytes;
	if (ring_blocks == 0)
		ring_blocks = TRACE_RING_BLOCKS;
	if (ring_block_bytes == 0)
		ring_block_bytes = TRACE_RING_BLOCK_BYTES;
	if (ring_blocks < 2 || ring_blocks > TRACE_RING_BLOCKS)
		return plumb_fail(status, EINVAL, "a trace ring of %zu blocks: want 2 to %d", ring_blocks, TRACE_RING_BLOCKS);
	if (ring_block_bytes < 4096 || ring_block_bytes > TRACE_RING_BLOCK_BYTES || ring_block_bytes % 4096)
		return plumb_fail(status, EINVAL, "a trace ring block of %zu bytes: want a multiple of 4 KiB up to 512 KiB",
		                  ring_block_bytes);
	if (!argv || !argv[0] || !argv[0][0])
		return plumb_fail(status, EINVAL, "no program to trace");
	const char *valgrind = launch->valgrind;
	if (!valgrind || !valgrind[0])
		valgrind = secure_getenv("PLUMB_VALGRIND");
	if (!valgrind || !valgrind[0])
		valgrind = "valgrind";
	if (find_executable(valgrind) < 0)
		return plumb_fail(status, ENOENT, "valgrind is not installed ('%s' not found): tracing a program needs "
		                  "Valgrind's lackey tool (Debian package valgrind)", valgrind);
	if (find_executable(argv[0]) < 0)
		return plumb_fail_errno(status, errno, "cannot run '%s'", argv[0]);
	size_t option_count = 0;
	while (valgrind_options && valgrind_options[option_count])
		option_count++;
	/* the options before the caller's: at most 5 of the tool's own */
	const char **options = calloc(option_count + 8, sizeof *options);
	int trace_pipe[2] = { -1, -1 };
	if (!options)
		return plumb_fail(status, ENOMEM, "out of memory");
	if (pipe2(trace_pipe, O_CLOEXEC) < 0) {
		int error = errno;
		free(options);
		return plumb_fail_errno(status, error, "pipe");
	}
	char log_fd[32];
	/* plumbgrind, plumb's own Valgrind tool (docs/valgrind-tool.md), writes the
	 * same lackey text with the same references and SCHED lines about 40
	 * times faster; lackey remains when the tool is not built or installed,
	 * or when PLUMB_TRACE_LACKEY is set. */
	char tool_dir[PATH_MAX];
	const char *force_lackey = secure_getenv("PLUMB_TRACE_LACKEY");
	bool plumbgrind;
	if (launch->tool_dir) {
		if (!trace_tool_present(launch->tool_dir) ||
		    snprintf(tool_dir, sizeof tool_dir, "%s", launch->tool_dir) >= (int)sizeof tool_dir) {
			free(options);
			close(trace_pipe[0]); close(trace_pipe[1]);
			return plumb_fail(status, ENOENT, "%s holds no " TRACE_TOOL_FILE " with valgrind's files beside it",
			                  launch->tool_dir);
		}
		plumbgrind = true;
	} else {
		plumbgrind = !(force_lackey && force_lackey[0]) && trace_tool_find(tool_dir, sizeof tool_dir, NULL) == 0;
	}
	char out_option[PATH_MAX + 16];
	if ((launch->summary_path && !plumbgrind) ||
	    (launch->summary_path &&
	     snprintf(out_option, sizeof out_option, "--plumb-out=%s", launch->summary_path) >= (int)sizeof out_option)) {
		free(options);
		close(trace_pipe[0]); close(trace_pipe[1]);
		if (!plumbgrind)
			return plumb_fail(status, ENOENT, "the exact counts need plumbgrind, plumb's Valgrind tool, which was not "
			                  "found%s (build/vg/lib, PREFIX/lib/plumb/valgrind, VALGRIND_LIB or PLUMB_VALGRIND_LIB)",
			                  force_lackey && force_lackey[0] ? " or was set aside by PLUMB_TRACE_LACKEY" : "");
		return plumb_fail(status, ENAMETOOLONG, "the summary's path is too long");
	}
	/* plumbgrind also names every instruction's function, file and line
	 * (trace_reader_code_map), in a file of a private directory. */
	char code_dir[PATH_MAX - 64], code_path[sizeof code_dir + 16], code_option[sizeof code_path + 16];
	if (temp_path(code_dir, sizeof code_dir, "plumb-code-XXXXXX", status) != 0) {
		free(options);
		close(trace_pipe[0]); close(trace_pipe[1]);
		return -1;
	}
	/* Made whether or not the code map is wanted: Valgrind itself writes
	 * its files in the same $TMPDIR, and when it cannot it gives up before
	 * the program starts, which read as "the program exec'd another". */
	if (!mkdtemp(code_dir)) {
		int error = errno;
		free(options);
		close(trace_pipe[0]); close(trace_pipe[1]);
		return plumb_fail_errno(status, error, "cannot create a temporary folder in %s (Valgrind needs one too: "
		                        "set TMPDIR to a folder you can write)", temp_dir());
	}
	interrupt_add_path(code_dir, true);   /* a signal removes it (plumb/interrupt.h) */
	/* By default plumbgrind writes binary records into a ring of shared
	 * memory that the reader lends to the caller in place (trace_ring.c,
	 * vg/pg_ring.c); PLUMB_TRACE_TEXT keeps the lackey text through the pipe. */
	const char *force_text = secure_getenv("PLUMB_TRACE_TEXT");
	/* Without a code map the ring's last word tells an exit from an exec;
	 * without the ring, only the code map's file does. */
	bool skip_code = false;
	for (size_t i = 0; i < option_count; i++)
		skip_code = skip_code || strcmp(valgrind_options[i], TRACE_NO_CODE_MAP) == 0;
	skip_code = skip_code && plumbgrind && !(force_text && force_text[0]);
	trace_ring *ring = NULL;
	char ring_option[128];
	size_t k = 0;
	if (!plumbgrind || skip_code) {
		rmdir(code_dir);
		interrupt_remove_path(code_dir);
		code_dir[0] = 0;
	}
	if (plumbgrind) {
		snprintf(log_fd, sizeof log_fd, "--plumb-trace-fd=%d", trace_pipe[1]);
		options[k++] = "-q";
		options[k++] = launch->summary_path ? out_option : "--plumb-out=none";
		if (!(force_text && force_text[0])) {
			if (trace_ring_new(&ring, ring_blocks, ring_block_bytes, status) < 0 ||
			    trace_ring_tool_option(ring, ring_option, sizeof ring_option) < 0) {
				trace_ring_free(ring);
				free(options);
				close(trace_pipe[0]); close(trace_pipe[1]);
				if (code_dir[0]) {
					rmdir(code_dir);
					interrupt_remove_path(code_dir);
				}
				return ring ? plumb_fail(status, EINVAL, "the trace ring's option is too long") : -1;
			}
			options[k++] = ring_option;
		} else {
			options[k++] = log_fd;
		}
		if (code_dir[0]) {
			snprintf(code_path, sizeof code_path, "%s/code", code_dir);
			snprintf(code_option, sizeof code_option, "--plumb-code=%s", code_path);
			/* A signal removes both (plumb/interrupt.h). */
			interrupt_add_path(code_path, false);
			options[k++] = code_option;
		}
	} else {
		snprintf(log_fd, sizeof log_fd, "--log-fd=%d", trace_pipe[1]);
		options[k++] = "--trace-mem=yes";
		options[k++] = "--trace-sched=yes";
		options[k++] = log_fd;
	}
	/* Options of plumbgrind's own (--plumb-...) are dropped when lackey runs;
	 * the L1 filter (sim_filter_option) needs the ring, and the ring then
	 * carries the filter's entries. */
	for (size_t i = 0; i < option_count; i++) {
		if (strcmp(valgrind_options[i], TRACE_NO_CODE_MAP) == 0)
			continue;
		bool filter = strncmp(valgrind_options[i], "--plumb-filter=", 15) == 0;
		if (filter && !ring)
			continue;
		if (filter)
			trace_ring_set_filtered(ring);
		if (plumbgrind || strncmp(valgrind_options[i], "--plumb-", 8) != 0)
			options[k++] = valgrind_options[i];
	}
	options[k] = NULL;
	/* The log descriptor must survive exec (the ring keeps its own); the
	 * program's stdout goes to stderr. */
	trace_valgrind run = {
		.valgrind = valgrind, .tool = plumbgrind ? "plumbgrind" : "lackey", .tool_dir = plumbgrind ? tool_dir : NULL,
		.options = options, .argv = argv, .environment = launch->environment,
		.program_stdout = launch->program_stdout >= 0 ? launch->program_stdout : STDERR_FILENO,
		.keep = ring ? NULL : &trace_pipe[1], .keep_count = ring ? 0 : 1, .ring = ring,
	};
	pid_t pid;
	int started = trace_valgrind_start(&run, &pid, status);
	free(options);
	close(trace_pipe[1]);
	if (started == 0 && ring) {
		trace_ring_parent_started(ring);
		close(trace_pipe[0]);
	}
	if (started != 0) {
		if (ring)
			trace_ring_free(ring);
		else
			close(trace_pipe[0]);
		if (plumbgrind && code_dir[0]) {
			rmdir(code_dir);
			interrupt_remove_path(code_path);
			interrupt_remove_path(code_dir);
		}
		return -1;
	}
	trace_reader *reader;
	if ((ring ? trace_reader_open_ring(&reader, ring, argv[0], status)
	          : trace_reader_open_pipe(&reader, trace_pipe[0], argv[0], status)) < 0) {
		kill(pid, SIGKILL);
		interrupt_waitpid(pid, NULL);
		if (plumbgrind && code_dir[0]) {
			unlink(code_path);
			rmdir(code_dir);
			interrupt_remove_path(code_path);
			interrupt_remove_path(code_dir);
		}
		return -1;
	}
	if (plumbgrind && code_dir[0])
		reader->command.code_path = strdup(code_path);
	reader->command.code_skipped = skip_code;
	reader->command.lackey = !plumbgrind;
	const char *inherited_lib = secure_getenv("VALGRIND_LIB");
	if (!plumbgrind && !(force_lackey && force_lackey[0]) && inherited_lib && inherited_lib[0]) {
		/* lackey then comes from that folder too: say which tool and why */
		snprintf(reader->command.tool_note_text, sizeof reader->command.tool_note_text,
		         "plumbgrind, plumb's Valgrind tool, is neither beside this program (build/vg/lib, "
		         "PREFIX/lib/plumb/valgrind) nor in VALGRIND_LIB=%s: tracing with that folder's lackey, about 40 "
		         "times slower and without source lines (PLUMB_VALGRIND_LIB names plumbgrind's folder)",
		         inherited_lib);
		reader->command.tool_note = reader->command.tool_note_text;
	} else if (!plumbgrind && !(force_lackey && force_lackey[0])) {
		reader->command.tool_note = "plumbgrind, plumb's Valgrind tool, was not found beside this program "
		                            "(build/vg/lib, PREFIX/lib/plumb/valgrind, VALGRIND_LIB or PLUMB_VALGRIND_LIB): "
		                            "tracing with Valgrind's lackey, about 40 times slower and without source lines";
	}
	reader->command.pid = pid;
	reader->command.running = true;
	reader->command.exit = launch->exit;
	if (launch->exit)
		memset(launch->exit, 0, sizeof *launch->exit);
	*out = reader;
	return 0;
}

const char *trace_reader_tool_note(const trace_reader *reader)
{
	return reader ? reader->command.tool_note : NULL;
}

int trace_reader_code_map(trace_reader *reader, trace_code_map **out, plumb_status *status)
{
	*out = NULL;
	if (!reader || (!reader->command.code_path && !reader->command.code_skipped))
		return 0;
	/* plumbgrind writes the file before it closes the trace, so at the
	 * trace's end it is complete */
	if (!reader->input.at_eof)
		return plumb_fail(status, EINVAL, "the code map is complete only after the trace has ended");
	/* plumbgrind writes it, and the ring's last word, when the program
	 * exits; a program that exec'd another (a wrapper script, pyenv's
	 * python3) never exits under it: Valgrind does not follow an exec, and
	 * the trace ended there. */
	struct stat info;
	if (reader->command.code_skipped ? !trace_ring_program_exited(reader)
	                                 : stat(reader->command.code_path, &info) != 0 && errno == ENOENT)
		return trace_command_exec_refusal(reader->command.program, trace_ring_exec_name(reader), ENOENT, status);
	if (reader->command.code_skipped)
		return 0;
	return trace_code_map_load(out, reader->command.code_path, status);
}

int trace_reader_pause_program(trace_reader *reader, int stop, plumb_status *status)
{
	if (!reader || !reader->command.running)
		return plumb_fail(status, EINVAL, "this trace does not come from a running program: nothing to stop");
	/* The program is Valgrind's process: SIGSTOP stops all its threads at
	 * once, wherever they are (a logic analyzer's halt, not a cooperative
	 * one), and SIGCONT resumes them. */
	if (kill(reader->command.pid, stop ? SIGSTOP : SIGCONT) < 0 && errno != ESRCH)
		return plumb_fail_errno(status, errno, "cannot %s the traced program", stop ? "stop" : "resume");
	return 0;
}
