/* Long commands draw one progress format on stderr when it is a terminal,
 * with an honest total that reaches 100%, and nothing when it is not (a log,
 * a pipe).  The terminal is a pseudo-terminal (openpty), as script(1) gives. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "run.h"
#include "../temp_folder.h"

/* Runs plumb ARGV with stderr on a pseudo-terminal and stdout to /dev/null;
 * returns what the terminal received (malloc'd). */
static char *run_on_terminal(const char *const argv[], int *exit_code)
{
	int master, slave;
	cr_assert_eq(openpty(&master, &slave, NULL, NULL, NULL), 0, "openpty: %s", strerror(errno));
	const char *bin = getenv("PLUMB_BIN");
	cr_assert_not_null(bin);
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(slave, STDERR_FILENO);
		close(master);
		const char *args[32];
		int n = 0;
		args[n++] = bin;
		for (int i = 0; argv[i] && n < 31; i++)
			args[n++] = argv[i];
		args[n] = NULL;
		execv(bin, (char *const *)args);
		_exit(127);
	}
	close(slave);
	size_t size = 1 << 16, used = 0;
	char *text = malloc(size);
	cr_assert_not_null(text);
	for (;;) {
		if (used + 4096 > size) {
			size *= 2;
			text = realloc(text, size);
			cr_assert_not_null(text);
		}
		ssize_t got = read(master, text + used, 4096);
		if (got > 0) {
			used += (size_t)got;
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		break;   /* EIO once the child and every holder of the slave are gone */
	}
	close(master);
	int status = 0;
	cr_assert_eq(waitpid(child, &status, 0), child);
	*exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	text[used] = '\0';
	return text;
}

/* Every frame ("\r...\033[K") of LABEL matches the one format; returns the last. */
static void assert_frames(const char *text, const char *label, char *last, size_t length)
{
	regex_t format;
	char pattern[512];
	snprintf(pattern, sizeof pattern,
	         "^%s: ([0-9]+/[0-9]+ \\([0-9]+%%\\)|[0-9]+ done), [0-9]+:[0-9][0-9] elapsed(, about [0-9:]+ left)?$",
	         label);
	cr_assert_eq(regcomp(&format, pattern, REG_EXTENDED | REG_NOSUB), 0);
	int frames = 0;
	last[0] = '\0';
	for (const char *p = strchr(text, '\r'); p; p = strchr(p + 1, '\r')) {
		const char *end = strstr(p, "\033[K");
		if (!end || end == p + 1)
			continue;   /* the clearing at the end */
		char frame[512];
		snprintf(frame, sizeof frame, "%.*s", (int)(end - p - 1), p + 1);
		if (strncmp(frame, label, strlen(label)) != 0 || frame[strlen(label)] != ':')
			continue;
		cr_expect_eq(regexec(&format, frame, 0, NULL, 0), 0, "frame \"%s\" is not in the format", frame);
		snprintf(last, length, "%s", frame);
		frames++;
	}
	regfree(&format);
	cr_assert_gt(frames, 0, "no progress of %s on the terminal: %s", label, text);
}

Test(progress_cli, validate_draws_the_format_and_reaches_100_percent)
{
	/* The simulator alone: the perf, PAPI and Valgrind steps are not in the
	 * total (it once finished at 2181/16422, 13%). */
	int code;
	char *text = run_on_terminal((const char *const[]){ "validate", "itv", "--backend", "sim", "--sizes", "10,100",
	                                                    NULL }, &code);
	cr_assert_eq(code, 0, "%s", text);
	char last[512];
	assert_frames(text, "plumb validate", last, sizeof last);
	cr_assert(strncmp(last, "plumb validate: 2/2 (100%)", 26) == 0, "last frame: %s", last);
	/* the line is cleared at the end */
	cr_assert(strstr(text, "\r\033[K"), "%s", text);
	free(text);
}

Test(progress_cli, lat_draws_the_format_and_reaches_100_percent)
{
	int code;
	char *text = run_on_terminal((const char *const[]){ "lat", "--min-size", "4K", "--max-size", "64K",
	                                                    "--points-per-octave", "1", "--time-cap", "5",
	                                                    "--single-pass", NULL }, &code);
	cr_assert_eq(code, 0, "%s", text);
	char last[512];
	assert_frames(text, "plumb lat: sweep", last, sizeof last);
	cr_assert(strstr(last, "(100%)"), "last frame: %s", last);
	free(text);
}

Test(progress_cli, nothing_is_drawn_when_stderr_is_not_a_terminal)
{
	cli_run r = cli_run_plumbv(NULL, "validate", "itv", "--backend", "sim", "--sizes", "10,100", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	cr_assert_null(strchr(r.out, '\r'));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "lat", "--min-size", "4K", "--max-size", "64K", "--points-per-octave", "1", "--time-cap",
	                   "5", "--single-pass", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	cr_assert_null(strchr(r.out, '\r'));
	cli_run_free(&r);
}

/* COMMAND run in an 80-column tmux window from TMPDIR, its whole history captured as a
 * person sees it (a tall window and a finished pane kept open); the text,
 * which the caller frees, or NULL with the test skipped without tmux. */
static char *capture_80_columns(const char *command_line)
{
	if (system("command -v tmux > /dev/null 2>&1") != 0)
		cr_skip_test("tmux is not installed (make deps installs it)");
	char socket[64], command[4096], capture[128];
	snprintf(socket, sizeof socket, "plumb-test-%ld", (long)getpid());
	snprintf(capture, sizeof capture, "%s/capture-%ld.txt", temp_root(), (long)getpid());
	snprintf(command, sizeof command,
	         "tmux -L %s new-session -d -x 80 -y 500 \"cd '%s' && env -u COLUMNS %s; echo PLUMB-DONE; sleep 600\" && "
	         "for i in $(seq 1 600); do tmux -L %s capture-pane -p -S - -E - | grep -q PLUMB-DONE && break; sleep 0.2; "
	         "done; tmux -L %s capture-pane -p -J -S - -E - > '%s'; tmux -L %s kill-server",
	         socket, temp_root(), command_line, socket, socket, capture, socket);
	cr_assert_eq(system(command), 0, "%s", command);
	char *text = cli_read_file(capture, NULL);
	cr_assert_not_null(text);
	unlink(capture);
	cr_assert(strstr(text, "PLUMB-DONE"), "the command did not finish in the window: %s", text);
	return text;
}

static void assert_fits_80_columns(const char *text)
{
	for (const char *line = text; *line;) {
		size_t length = strcspn(line, "\n");
		cr_assert_leq(length, 80, "a line of %zu columns: %.*s", length, (int)length, line);
		line += length + (line[length] == '\n');
	}
}

/* The terminal fits: plumb sim -- ls in an 80-column tmux window, captured
 * as a person sees it.  Its tables were about 330 columns wide; now the
 * columns that do not fit are left out, named, and --wide brings them back. */
Test(progress_cli, sim_fits_an_80_column_terminal)
{
	char command[1024];
	snprintf(command, sizeof command, "'%s' sim -- ls /", getenv("PLUMB_BIN"));
	char *text = capture_80_columns(command);
	cr_assert(strstr(text, "Summary") && strstr(text, "left out to fit 80 columns"), "%s", text);
	assert_fits_80_columns(text);
	free(text);
}

/* The report's summary was hand-formatted about 140 columns wide; on an
 * 80-column terminal its hierarchy goes through the fitted tables (size,
 * latency and read bandwidth kept, the rest named) and its sentences wrap.
 * Built from saved sections (--from), so no measurement runs. */
Test(progress_cli, report_summary_fits_an_80_column_terminal)
{
	char command[8192], dir[1024], page[256];
	snprintf(dir, sizeof dir, "%s/tests/data/report_vm_xeon", cli_source_dir());
	/* written from TMPDIR under a short name: the summary names its files,
	 * and a long folder's name alone would pass 80 columns */
	snprintf(page, sizeof page, "%s/summary-%ld.html", temp_root(), (long)getpid());
	snprintf(command, sizeof command, "'%s' report -o '%s' --from '%s'/topo.json '%s'/lat.json '%s'/bw.json "
	         "'%s'/loaded.json '%s'/model.json", getenv("PLUMB_BIN"), strrchr(page, '/') + 1, dir, dir, dir, dir, dir);
	char *text = capture_80_columns(command);
	cr_assert(strstr(text, "Summary:") && strstr(text, "The hierarchy"), "%s", text);
	cr_assert(strstr(text, "read_1[GB/s]") && strstr(text, "left out to fit 80 columns"), "%s", text);
	cr_assert(strstr(text, "Can I trust my counters?") || strstr(text, "queueing model"), "%s", text);
	assert_fits_80_columns(text);
	free(text);
	/* A pipe (and a file, and --wide) gets every column, as before. */
	char files[5][1100];
	const char *names[] = { "topo", "lat", "bw", "loaded", "model" };
	for (int i = 0; i < 5; i++)
		snprintf(files[i], sizeof files[i], "%s/%s.json", dir, names[i]);
	cli_run r = cli_run_plumbv(NULL, "report", "-o", page, "--from", files[0], files[1], files[2], files[3], files[4], NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "bandwidth_cv") && strstr(r.out, "write_all[GB/s]"), "%s", r.out);
	cr_assert_null(strstr(r.out, "left out to fit"), "%s", r.out);
	cli_run_free(&r);
	unlink(page);
	char json[300];
	snprintf(json, sizeof json, "%.*s.json", (int)(strlen(page) - 5), page);
	unlink(json);
}
