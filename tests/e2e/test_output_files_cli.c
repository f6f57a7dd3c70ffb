/* -o FILE as every command takes it: a device or FIFO is written in place, a
 * symlink's target is replaced, a full device is an error with its cause. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run.h"
#include "../temp_folder.h"

static char folder[300];

/* A folder per test, removed with what is in it when the test's process
 * exits (a .fini would not run after cr_skip_test). */
static void make_folder(void)
{
	snprintf(folder, sizeof folder, "%s", temp_folder("plumb-e2e-files"));
}

TestSuite(output_files_cli, .init = make_folder, .timeout = 30);

static void in_folder(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s", folder, name);
}

static int temporaries_in(const char *path)
{
	DIR *d = opendir(path);
	cr_assert_not_null(d);
	int count = 0;
	for (struct dirent *e; (e = readdir(d));)
		count += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return count;
}

Test(output_files_cli, dev_null_stays_a_character_device)
{
	cli_run r = cli_run_plumbv(NULL, "topo", "-o", "/dev/null", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	cli_run_free(&r);
	struct stat info;
	cr_assert_eq(stat("/dev/null", &info), 0);
	cr_assert(S_ISCHR(info.st_mode), "plumb topo -o /dev/null replaced /dev/null");
}

Test(output_files_cli, fifo_receives_the_report)
{
	char fifo[PATH_MAX];
	in_folder(fifo, sizeof fifo, "report.fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	int channel[2];
	cr_assert_eq(pipe(channel), 0);
	pid_t reader = fork();
	cr_assert_geq(reader, 0);
	if (reader == 0) {
		/* Copies what arrives through the FIFO back to the test. */
		close(channel[0]);
		int fd = open(fifo, O_RDONLY);
		char buffer[4096];
		ssize_t n;
		while (fd >= 0 && (n = read(fd, buffer, sizeof buffer)) > 0)
			if (write(channel[1], buffer, (size_t)n) != n)
				_exit(1);
		_exit(fd >= 0 ? 0 : 1);
	}
	close(channel[1]);
	cli_run r = cli_run_plumbv(NULL, "topo", "--json", "-o", fifo, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	char received[65536];
	size_t length = 0;
	ssize_t n;
	while ((n = read(channel[0], received + length, sizeof received - 1 - length)) > 0)
		length += (size_t)n;
	received[length] = 0;
	close(channel[0]);
	int wait_status;
	waitpid(reader, &wait_status, 0);
	cr_assert(strstr(received, "\"schema\": \"plumb-report\""), "the FIFO's reader got: %.200s", received);
	struct stat info;
	cr_assert_eq(lstat(fifo, &info), 0);
	cr_assert(S_ISFIFO(info.st_mode), "the FIFO was replaced by a regular file");
	cr_assert_eq(temporaries_in(folder), 0);
}

Test(output_files_cli, symlink_keeps_pointing_at_the_new_report)
{
	char target[PATH_MAX], link[PATH_MAX];
	in_folder(target, sizeof target, "real.csv");
	in_folder(link, sizeof link, "link.csv");
	FILE *f = fopen(target, "w");
	cr_assert_not_null(f);
	fputs("old\n", f);
	fclose(f);
	cr_assert_eq(symlink("real.csv", link), 0);
	cli_run r = cli_run_plumbv(NULL, "topo", "--csv", "-o", link, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	struct stat info;
	cr_assert_eq(lstat(link, &info), 0);
	cr_assert(S_ISLNK(info.st_mode), "the symlink was replaced by a regular file");
	char text[64] = "";
	f = fopen(target, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(text, sizeof text, f));
	fclose(f);
	cr_assert_str_neq(text, "old\n", "the link's target was not replaced");
	cr_assert_eq(temporaries_in(folder), 0);
}

Test(output_files_cli, full_device_is_an_error_with_its_cause)
{
	char full[PATH_MAX];
	in_folder(full, sizeof full, "full");
	if (mknod(full, S_IFCHR | 0666, makedev(1, 7)) != 0) {
		struct stat info;
		if (stat("/dev/full", &info) != 0 || !S_ISCHR(info.st_mode) || info.st_rdev != makedev(1, 7))
			cr_skip_test("needs a full device: mknod failed (%s) and /dev/full is not the device 1,7",
			             strerror(errno));
		snprintf(full, sizeof full, "/dev/full");
	}
	cli_run r = cli_run_plumbv(NULL, "topo", "-o", full, NULL);
	cr_assert_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err);
	cr_assert(strstr(r.err, "No space left on device"), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one error line: %s", r.err);
	cli_run_free(&r);
	struct stat info;
	cr_assert_eq(stat(full, &info), 0);
	cr_assert(S_ISCHR(info.st_mode), "the full device was replaced");
}

/* plumb instrument --trace FILE: plumbgrind writes the trace through a
 * descriptor plumb opened the same way, so the same rules hold. */

Test(output_files_cli, instrument_trace_through_a_symlink_keeps_the_link)
{
	cli_need_plumbgrind();
	char target[PATH_MAX], link[PATH_MAX];
	in_folder(target, sizeof target, "real.lackey");
	in_folder(link, sizeof link, "link.lackey");
	FILE *f = fopen(target, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(symlink("real.lackey", link), 0);
	cli_run r = cli_run_plumbv(NULL, "instrument", "--trace", link, "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	struct stat info;
	cr_assert_eq(lstat(link, &info), 0);
	cr_assert(S_ISLNK(info.st_mode), "the symlink was replaced");
	cr_assert_eq(stat(target, &info), 0);
	cr_assert_gt(info.st_size, 0, "the link's target holds no trace");
	cr_assert_eq(temporaries_in(folder), 0);
}

Test(output_files_cli, instrument_trace_to_a_full_device_is_an_error)
{
	cli_need_plumbgrind();
	char full[PATH_MAX];
	in_folder(full, sizeof full, "full");
	if (mknod(full, S_IFCHR | 0666, makedev(1, 7)) != 0)
		cr_skip_test("needs a full device: mknod failed (%s)", strerror(errno));
	cli_run r = cli_run_plumbv(NULL, "instrument", "--trace", full, "--", "/bin/true", NULL);
	cr_assert_eq(r.exit_code, 1, "exit %d: %s", r.exit_code, r.err);
	cr_assert(strstr(r.err, "plumb instrument: cannot write the trace file"), "%s", r.err);
	cr_assert(strstr(r.err, "No space left on device"), "%s", r.err);
	cli_run_free(&r);
}

/* /dev/stdout leads to a descriptor link in /proc: the report goes to the
 * descriptor, whatever it is, and /dev/stdout stays a link. */
Test(output_files_cli, dev_stdout_reaches_standard_output)
{
	cli_run r = cli_run_plumbv(NULL, "topo", "--json", "-o", "/dev/stdout", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"schema\": \"plumb-report\""), "stdout: %.200s", r.out);
	cli_run_free(&r);
	struct stat info;
	cr_assert_eq(lstat("/dev/stdout", &info), 0);
	cr_assert(S_ISLNK(info.st_mode), "/dev/stdout is no longer a symlink");
}
