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

/* The terminal fits: plumb sim -- ls in an 80-column tmux window, captured
 * as a person sees it.  Its tables were about 330 columns wide; now the
 * columns that do not fit are left out, named, and --wide brings them back. */
Test(progress_cli, sim_fits_an_80_column_terminal)
{
	if (system("command -v tmux > /dev/null 2>&1") != 0)
		cr_skip_test("tmux is not installed (make deps installs it)");
	const char *bin = getenv("PLUMB_BIN");
	char socket[64], command[2048], capture[128];
	snprintf(socket, sizeof socket, "plumb-test-%ld", (long)getpid());
	snprintf(capture, sizeof capture, "%s/capture.txt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	/* A tall window and a finished pane kept open, then the whole history. */
	snprintf(command, sizeof command,
	         "tmux -L %s new-session -d -x 80 -y 500 \"env -u COLUMNS '%s' sim -- ls /; echo PLUMB-DONE; sleep 600\" && "
	         "for i in $(seq 1 600); do tmux -L %s capture-pane -p -S - -E - | grep -q PLUMB-DONE && break; sleep 0.2; "
	         "done; tmux -L %s capture-pane -p -J -S - -E - > '%s'; tmux -L %s kill-server",
	         socket, bin, socket, socket, capture, socket);
	cr_assert_eq(system(command), 0, "%s", command);
	char *text = cli_read_file(capture, NULL);
	cr_assert_not_null(text);
	cr_assert(strstr(text, "PLUMB-DONE"), "plumb sim did not finish in the window: %s", text);
	cr_assert(strstr(text, "Summary") && strstr(text, "left out to fit 80 columns"), "%s", text);
	for (const char *line = text; *line;) {
		size_t length = strcspn(line, "\n");
		cr_assert_leq(length, 80, "a line of %zu columns: %.*s", length, (int)length, line);
		line += length + (line[length] == '\n');
	}
	free(text);
	unlink(capture);
}
