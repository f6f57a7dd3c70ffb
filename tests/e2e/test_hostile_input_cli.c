/* Hostile input (docs/bad-input.md, "Security"): reports, folders and
 * traces are passed between users, so each attack here is one anyone who can
 * hand a user a file or name a folder could make.  Each test makes the
 * attack and shows it fail: no command runs, no script reaches a page, no
 * planted file is written through, no file appears beside a device. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "run.h"
#include "../temp_folder.h"

static char folder[300];

/* A folder per test, removed with what is in it when the test's process
 * exits (a .fini would not run after cr_skip_test). */
static void make_folder(void)
{
	snprintf(folder, sizeof folder, "%s", temp_folder("plumb-e2e-hostile"));
}

TestSuite(hostile_input, .init = make_folder, .timeout = 60);

static const char *in_folder(const char *name)
{
	static char paths[4][4096];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, 4096, "%s/%s", folder, name);
	return p;
}

static bool exists(const char *path)
{
	struct stat info;
	return lstat(path, &info) == 0;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* gnuplot runs where plumb runs: the test runs plumb in the folder. */
static cli_run run_in_folder(const char *const argv[])
{
	char here[4096];
	cr_assert_not_null(getcwd(here, sizeof here));
	cr_assert_eq(chdir(folder), 0);
	cli_run r = cli_run_plumb(NULL, argv);
	cr_assert_eq(chdir(here), 0);
	return r;
}

/* 1. A folder name with shell quotes: it went into popen() as
 * "'gnuplot' 'DIR/validate-plot.gp'", so ' closed the quoting and the rest
 * ran as shell commands. */
Test(hostile_input, a_folder_name_with_shell_quotes_runs_nothing)
{
	const char *name = "v';touch INJECTED;'`touch INJECTED2`$(touch INJECTED3)";
	const char *dir = in_folder(name);
	const char *argv[] = { "validate", "--backend", "sim", "--sizes", "1,10,100", "-d", name, "itv", NULL };
	cli_run r = run_in_folder(argv);
	cr_assert(!exists(in_folder("INJECTED")) && !exists(in_folder("INJECTED2")) && !exists(in_folder("INJECTED3")),
	          "a command in the folder's name ran: %s", r.err);
	char path[4096];
	snprintf(path, sizeof path, "%s/validate.json", dir);
	cr_assert(exists(path), "validate wrote nothing into the folder (exit %d): %s", r.exit_code, r.err);
	cr_assert(!strstr(r.err, "gnuplot is not installed") || system("gnuplot --version >/dev/null 2>&1") != 0,
	          "the plot failed as if gnuplot were missing: %s", r.err);
	cli_run_free(&r);
}

/* 2 and 3. A report file whose cells hold a gnuplot `command` and an HTML
 * payload (under /tmp/, which the page shortens to a base name: that name
 * was printed unescaped). */
static const char *hostile_report(void)
{
	const char *path = in_folder("evil.json");
	char text[4096];
	const char *payload = "`touch PWNED`";
	snprintf(text, sizeof text,
	         "{\"schema\": \"plumb-report\", \"schema_version\": 1, \"plumb_version\": \"0.1.0\", \"command\": \"lat\",\n"
	         " \"meta\": {\"cpu\": \"/tmp/<img src=x onerror=alert(1)>\", \"cpus\": \"<b>2</b>\"},\n"
	         " \"tables\": [{\"name\": \"mlp_curve\", \"title\": \"/tmp/a/<script>alert(2)</script>\",\n"
	         "   \"columns\": [{\"name\": \"chains\", \"unit\": null}, {\"name\": \"bandwidth\", \"unit\": \"GB/s\"},\n"
	         "               {\"name\": \"level\", \"unit\": null}],\n"
	         "   \"rows\": [{\"chains\": 1, \"bandwidth\": 1.5, \"level\": \"%s\"},\n"
	         "            {\"chains\": 2, \"bandwidth\": 2.5, \"level\": \"%s\"},\n"
	         "            {\"chains\": 1, \"bandwidth\": 1.0, \"level\": \"it's ''q'' \\\" $(touch PWNED2)\\nsystem('touch PWNED3')\"},\n"
	         "            {\"chains\": 2, \"bandwidth\": 1.9, \"level\": \"it's ''q'' \\\" $(touch PWNED2)\\nsystem('touch PWNED3')\"}]}],\n"
	         " \"notes\": [\"see /tmp/<img src=y onerror=alert(3)>\"]}\n",
	         payload, payload);
	write_text(path, text);
	return path;
}

Test(hostile_input, backquotes_in_a_report_file_run_no_command)
{
	const char *evil = hostile_report();
	const char *argv[] = { "report", "--from", evil, "-o", in_folder("r.html"), NULL };
	cli_run r = run_in_folder(argv);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(!exists(in_folder("PWNED")) && !exists(in_folder("PWNED2")) && !exists(in_folder("PWNED3")),
	          "gnuplot ran a command from the report file");
	char *page = cli_read_file(in_folder("r.html"), NULL);
	cr_assert_not_null(page);
	if (system("gnuplot --version >/dev/null 2>&1") == 0) {
		/* The chart was drawn, with the cell as a series name. */
		cr_assert(strstr(page, "<svg"), "no chart in the page");
		cr_assert(strstr(page, "`touch PWNED`"), "the series name is not in the chart");
	}
	free(page);
	cli_run_free(&r);
}

Test(hostile_input, a_report_file_puts_no_script_in_the_page)
{
	const char *evil = hostile_report();
	const char *argv[] = { "report", "--from", evil, "-o", in_folder("r.html"), NULL };
	cli_run r = run_in_folder(argv);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	char *page = cli_read_file(in_folder("r.html"), NULL);
	cr_assert_not_null(page);
	cr_assert_null(strstr(page, "<img"), "an element from the report file is in the page");
	cr_assert_null(strstr(page, "<script"), "a script from the report file is in the page");
	cr_assert_null(strstr(page, "<b>2"), "markup from the report file is in the page");
	cr_assert(strstr(page, "&lt;img src=x onerror=alert(1)&gt;"), "the payload is not shown as text");
	cr_assert(strstr(page, "&lt;img src=y onerror=alert(3)&gt;"), "the note's payload is not shown as text");
	free(page);
	cli_run_free(&r);
}

/* 4. Files planted at the name the atomic writer used, TARGET.tmp.PID: the
 * pid of the plumb to come is known here, because plumb is exec'd in a
 * child that waits until everything is planted. */
typedef void (*planter)(const char *target, pid_t pid);

static int run_planted(const char *target, planter plant, char *err, size_t err_size)
{
	int go[2], errors[2];
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(errors), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char byte;
		close(go[1]);
		close(errors[0]);
		if (read(go[0], &byte, 1) != 1)
			_exit(126);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(errors[1], 2);
		execl(getenv("PLUMB_BIN"), "plumb", "topo", "-o", target, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(errors[1]);
	plant(target, pid);
	cr_assert_eq(write(go[1], "x", 1), 1);
	close(go[1]);
	/* The old writer blocked forever opening a FIFO: 20 s, then it is a hang. */
	int status = 0;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t done = waitpid(pid, &status, WNOHANG);
		if (done == pid)
			break;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 20) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(err, err_size, "plumb hung opening its output");
			close(errors[0]);
			return -1;
		}
		usleep(10000);
	}
	ssize_t n = read(errors[0], err, err_size - 1);
	err[n > 0 ? n : 0] = 0;
	close(errors[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void planted_name(char *out, size_t size, const char *target, pid_t pid)
{
	snprintf(out, size, "%s.tmp.%ld", target, (long)pid);
}

static void plant_fifo(const char *target, pid_t pid)
{
	char name[4096];
	planted_name(name, sizeof name, target, pid);
	cr_assert_eq(mkfifo(name, 0666), 0, "mkfifo: %s", strerror(errno));
}

static void plant_hard_link(const char *target, pid_t pid)
{
	char name[4096];
	planted_name(name, sizeof name, target, pid);
	cr_assert_eq(link(in_folder("precious"), name), 0, "link: %s", strerror(errno));
}

static void plant_foreign_file(const char *target, pid_t pid)
{
	char name[4096];
	planted_name(name, sizeof name, target, pid);
	write_text(name, "someone else's\n");
	cr_assert_eq(chmod(name, 0666), 0);
	cr_assert_eq(chown(name, 65534, 65534), 0, "chown: %s", strerror(errno));
}

static void assert_new_report(const char *target)
{
	struct stat info;
	cr_assert_eq(lstat(target, &info), 0, "no output");
	cr_assert(S_ISREG(info.st_mode), "the output is not a regular file");
	cr_assert_eq(info.st_uid, geteuid(), "the output belongs to uid %u", (unsigned)info.st_uid);
	cr_assert_eq(info.st_nlink, 1, "the output has %lu links", (unsigned long)info.st_nlink);
	char *text = cli_read_file(target, NULL);
	cr_assert(text && strstr(text, "Machine"), "the output is not the report: %.100s", text ? text : "");
	free(text);
}

Test(hostile_input, a_fifo_at_the_temporary_name_neither_hangs_nor_gets_the_output)
{
	const char *target = in_folder("out.txt");
	char err[4096];
	int rc = run_planted(target, plant_fifo, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	assert_new_report(target);
}

Test(hostile_input, a_hard_link_at_the_temporary_name_keeps_its_target)
{
	write_text(in_folder("precious"), "keep me\n");
	const char *target = in_folder("out.txt");
	char err[4096];
	int rc = run_planted(target, plant_hard_link, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	assert_new_report(target);
	char *text = cli_read_file(in_folder("precious"), NULL);
	cr_assert_str_eq(text, "keep me\n", "the hard link's target was written");
	free(text);
}

Test(hostile_input, another_users_file_at_the_temporary_name_does_not_become_the_output)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to make a file of another user's");
	cr_assert_eq(chmod(folder, 01777), 0);   /* a sticky shared folder, as /tmp */
	const char *target = in_folder("out.txt");
	char err[4096];
	int rc = run_planted(target, plant_foreign_file, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	assert_new_report(target);
}

/* The new temporaries honour the umask, as any file a program creates. */
Test(hostile_input, a_new_output_honours_the_umask)
{
	const char *target = in_folder("masked.txt");
	mode_t old = umask(027);
	cli_run r = cli_run_plumbv(NULL, "topo", "-o", target, NULL);
	umask(old);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	struct stat info;
	cr_assert_eq(stat(target, &info), 0);
	cr_assert_eq(info.st_mode & 0777, 0640, "mode %o", (unsigned)(info.st_mode & 0777));
	cli_run_free(&r);
}

/* 5. Targets that are devices: nothing may be made beside them.  Root gets
 * a null device of its own in the folder, so that a file made beside it is
 * seen (and /dev is left alone); anyone else uses /dev/null, where they
 * could not create anything anyway. */
static const char *null_device(void)
{
	const char *path = in_folder("null");
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0)
		return path;
	return "/dev/null";
}

/* Entries of the device's folder whose names start with the device's. */
static int beside(const char *device)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", device);
	char *slash = strrchr(dir, '/');
	const char *base = slash + 1;
	*slash = 0;
	size_t n = strlen(base);
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	int count = 0;
	for (struct dirent *e; (e = readdir(d));)
		count += !strncmp(e->d_name, base, n) && e->d_name[n];
	closedir(d);
	return count;
}

Test(hostile_input, csv_tables_are_not_made_beside_a_device)
{
	const char *device = null_device();
	cli_run r = cli_run_plumbv(NULL, "topo", "--csv", "-o", device, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "are not written beside it, as it is not a regular file"), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	cr_assert_eq(beside(device), 0, "a file was made beside %s", device);
	struct stat info;
	cr_assert_eq(stat(device, &info), 0);
	cr_assert(S_ISCHR(info.st_mode), "the device was replaced");
	cli_run_free(&r);
}

Test(hostile_input, report_json_is_not_made_beside_a_device)
{
	const char *device = null_device();
	const char *evil = hostile_report();
	const char *argv[] = { "report", "--from", evil, "-o", device, NULL };
	cli_run r = run_in_folder(argv);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(!exists(in_folder("PWNED")), "gnuplot ran a command from the report file");
	cr_assert(strstr(r.err, "is not written beside"), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	cr_assert_eq(beside(device), 0, "a file was made beside %s", device);
	cr_assert_null(strstr(r.out, "null.json"), "%s", r.out);
	cli_run_free(&r);
}

Test(hostile_input, a_code_map_is_not_made_beside_a_device)
{
	if (!cli_plumbgrind_built() || system("valgrind --version >/dev/null 2>&1") != 0)
		cr_skip_test("needs valgrind and plumbgrind (the code map is plumbgrind's)");
	const char *device = null_device();
	cli_run r = cli_run_plumbv(NULL, "trace", "record", "--to", "native", device, "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "the code map"), "%s", r.err);
	cr_assert_eq(beside(device), 0, "a file was made beside %s", device);
	cli_run_free(&r);
}

/* 1, for every program plumb starts: none through a shell.  The library
 * and the program are read for the calls that hand a string to /bin/sh. */
static int shell_calls;
static char shell_call_at[4096];

static int scan_source(const char *path, const struct stat *info, int flag, struct FTW *walk)
{
	(void)info, (void)walk;
	size_t n = strlen(path);
	if (flag != FTW_F || n < 2 || strcmp(path + n - 2, ".c"))
		return 0;
	char *text = cli_read_file(path, NULL);
	cr_assert_not_null(text, "%s", path);
	static const char *const calls[] = { "popen(", "system(", "execl(\"/bin/sh\"", "\"sh\", \"-c\"" };
	for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++)
		for (const char *p = strstr(text, calls[c]); p; p = strstr(p + 1, calls[c])) {
			/* a word of its own: not fpopen(, not "the system (" in prose */
			bool word = p == text || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'));
			if (word) {
				shell_calls++;
				snprintf(shell_call_at, sizeof shell_call_at, "%s: %s", path, calls[c]);
			}
		}
	free(text);
	return 0;
}

Test(hostile_input, no_source_file_starts_a_program_through_a_shell)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/src", cli_source_dir());
	cr_assert_eq(nftw(path, scan_source, 16, FTW_PHYS), 0);
	cr_assert_eq(shell_calls, 0, "%d calls through a shell, the last %s", shell_calls, shell_call_at);
}

/* A TMPDIR that cannot hold a folder (missing, a file, /proc): Valgrind
 * gives up before the program starts, and sim, sim --curve and trace record
 * said "'/bin/true' exec'd another program", sending the user after a
 * wrapper script that is not there.  They now name the folder and why, as
 * explain and instrument did, and leave nothing behind. */
Test(hostile_input, an_unusable_tmpdir_is_named_not_taken_for_an_exec)
{
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		cr_skip_test("valgrind is not installed");
	const char *file = in_folder("a-file");
	write_text(file, "");
	const char *tmpdirs[] = { in_folder("no/such/folder"), file };
	const char *trace = in_folder("out.ptrace");
	for (size_t t = 0; t < 2; t++) {
		setenv("TMPDIR", tmpdirs[t], 1);
		cli_run runs[] = {
			cli_run_plumbv(NULL, "sim", "--", "/bin/true", NULL),
			cli_run_plumbv(NULL, "sim", "--basic", "--", "/bin/true", NULL),
			cli_run_plumbv(NULL, "sim", "--curve", "l1d", "--", "/bin/true", NULL),
			cli_run_plumbv(NULL, "trace", "record", trace, "--", "/bin/true", NULL),
		};
		unsetenv("TMPDIR");
		for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
			cr_expect_eq(runs[k].exit_code, 1, "TMPDIR %s, run %zu: %s", tmpdirs[t], k, runs[k].err);
			cr_expect(strstr(runs[k].err, "cannot create a temporary folder in "), "run %zu: %s", k, runs[k].err);
			cr_expect(strstr(runs[k].err, tmpdirs[t]), "run %zu: %s", k, runs[k].err);
			cr_expect_null(strstr(runs[k].err, "exec'd"), "run %zu: %s", k, runs[k].err);
			cli_run_free(&runs[k]);
		}
		cr_expect(!exists(trace), "a trace was left");
	}
}

/* A folder name with a line break: gnuplot strings cannot hold one, so the
 * image's path was written with a space instead, and validate's plot went
 * into the folder "v x" beside it, which someone else may own.  plumb now
 * makes no plot for such a folder and says why. */
Test(hostile_input, a_line_break_in_a_folder_name_sends_no_plot_elsewhere)
{
	if (system("gnuplot --version > /dev/null 2>&1") != 0)
		cr_skip_test("gnuplot is not installed");
	const char *other = in_folder("v x");
	cr_assert_eq(mkdir(other, 0755), 0);
	char named[4200];
	snprintf(named, sizeof named, "%s", in_folder("v\nx"));
	const char *argv[] = { "validate", "--backend", "sim", "-d", named, "itv", NULL };
	cli_run r = run_in_folder(argv);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "control character"), "%s", r.err);
	char image[8400];
	snprintf(image, sizeof image, "%s/validate.png", other);
	cr_expect(!exists(image), "the plot was written into the folder 'v x'");
	snprintf(image, sizeof image, "%s/validate.json", named);
	cr_expect(exists(image), "validate.json is missing from the folder asked for");
	cli_run_free(&r);
}

/* 9, for the code added since: libplumb and the preloaded guard read their
 * environment only with secure_getenv, so a setuid program linked with
 * libplumb ignores PLUMB_* (and PATH, TMPDIR...) set by the user who runs
 * it.  explain's LLVM tools were found through getenv("PLUMB_LLVM_MCA")
 * and getenv("PATH"): a setuid-root program calling explain would have run
 * whatever program its caller named.  Only the command line (src/cli), whose
 * user is the one who typed it, may call getenv. */
static int getenv_calls;
static char getenv_call_at[4096];

static int scan_getenv(const char *path, const struct stat *info, int flag, struct FTW *walk)
{
	(void)info, (void)walk;
	size_t n = strlen(path);
	if (flag != FTW_F || n < 2 || (strcmp(path + n - 2, ".c") && strcmp(path + n - 2, ".h")) || strstr(path, "/src/cli/"))
		return 0;
	char *text = cli_read_file(path, NULL);
	cr_assert_not_null(text, "%s", path);
	for (const char *p = strstr(text, "getenv("); p; p = strstr(p + 1, "getenv(")) {
		bool secure = p - text >= 7 && !strncmp(p - 7, "secure_", 7);
		if (!secure) {
			getenv_calls++;
			snprintf(getenv_call_at, sizeof getenv_call_at, "%s", path);
		}
	}
	free(text);
	return 0;
}

Test(hostile_input, the_library_reads_its_environment_with_secure_getenv)
{
	static const char *const folders[] = { "src", "preload" };
	for (size_t f = 0; f < 2; f++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", cli_source_dir(), folders[f]);
		cr_assert_eq(nftw(path, scan_getenv, 16, FTW_PHYS), 0, "%s", path);
	}
	cr_assert_eq(getenv_calls, 0, "%d getenv calls outside src/cli, the last in %s", getenv_calls, getenv_call_at);
}

/* A file name or an option's value with escape sequences: printed in an
 * error line, it retitled the terminal (OSC 0), cleared it and moved the
 * cursor.  Now every error line, table, note and meta line shows it as text
 * (tests/unit/test_core_output.c has the tables). */
Test(hostile_input, escape_sequences_in_names_do_not_reach_the_terminal)
{
	const char *missing[] = { "sim", in_folder("no\x1b]0;PWNED\x07such"), NULL };
	cli_run r = run_in_folder(missing);
	cr_assert_neq(r.exit_code, 0);
	cr_assert(strstr(r.err, "no?]0;PWNED?such"), "%s", r.err);
	cr_assert_null(strchr(r.err, '\x1b'), "an escape sequence reached the terminal in the error line");
	cli_run_free(&r);
	const char *usage[] = { "lat", "--min-size", "4K\x1b[2J\x1b[H", NULL };
	r = run_in_folder(usage);
	cr_assert_neq(r.exit_code, 0);
	cr_assert(strstr(r.err, "?[2J?[H"), "%s", r.err);
	cr_assert_null(strchr(r.err, '\x1b'), "an escape sequence reached the terminal in the usage error");
	cli_run_free(&r);
	/* a trace's region name is refused, and named as text */
	const char *trace = in_folder("t.lackey");
	write_text(trace, "--77--   REGION[begin]: \x1b]0;PWNED\x07\n");
	const char *sim[] = { "sim", "--format", "lackey", trace, NULL };
	r = run_in_folder(sim);
	cr_assert_neq(r.exit_code, 0);
	cr_assert_null(strchr(r.err, '\x1b'));
	cr_assert_null(strchr(r.out, '\x1b'));
	cli_run_free(&r);
}
