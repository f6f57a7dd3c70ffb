/* Output files (src/core/output.c): a regular file is replaced atomically,
 * a symlink's target is replaced and the link kept, a device or FIFO is
 * written in place, and a write error is reported with its cause. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/output.h"
#include "../temp_folder.h"

static char folder[300];

/* A folder per test, removed with what is in it when the test's process
 * exits (a .fini would not run after cr_skip_test). */
static void make_folder(void)
{
	snprintf(folder, sizeof folder, "%s", temp_folder("plumb-files-test"));
}

TestSuite(core_files, .init = make_folder);

static const char *in_folder(const char *name)
{
	static char paths[4][PATH_MAX];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, PATH_MAX, "%s/%s", folder, name);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static char *read_text(const char *path)
{
	static char buffer[4096];
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	size_t n = fread(buffer, 1, sizeof buffer - 1, f);
	buffer[n] = 0;
	fclose(f);
	return buffer;
}

/* Entries of a folder whose names contain ".tmp." */
static int temporaries_in(const char *path)
{
	DIR *d = opendir(path);
	cr_assert_not_null(d);
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp."))
			count++;
	closedir(d);
	return count;
}

static int write_file(const char *path, const char *text, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	fputs(text, file.stream);
	return output_file_commit(&file, status);
}

Test(core_files, regular_file_is_replaced_and_keeps_its_mode)
{
	const char *path = in_folder("out.txt");
	write_text(path, "old contents\n");
	cr_assert_eq(chmod(path, 0640), 0);
	struct stat before;
	cr_assert_eq(stat(path, &before), 0);
	output_file file;
	cr_assert_eq(output_file_open(&file, path, NULL), 0);
	fputs("new\n", file.stream);
	cr_assert_str_eq(read_text(path), "old contents\n", "the old file stays until commit");
	cr_assert_eq(output_file_commit(&file, NULL), 0);
	cr_assert_str_eq(read_text(path), "new\n");
	struct stat after;
	cr_assert_eq(stat(path, &after), 0);
	cr_assert(S_ISREG(after.st_mode));
	cr_assert_neq(after.st_ino, before.st_ino, "replaced by rename, not rewritten");
	cr_assert_eq(after.st_mode & 07777, 0640);
	cr_assert_eq(temporaries_in(folder), 0);
}

Test(core_files, symlink_target_is_replaced_and_the_link_kept)
{
	/* The link and its target in different folders: the temporary must go
	 * beside the target, or the rename would replace the link. */
	const char *targets = in_folder("targets");
	cr_assert_eq(mkdir(targets, 0755), 0);
	const char *target = in_folder("targets/report.json");
	write_text(target, "old\n");
	const char *link = in_folder("link.json");
	cr_assert_eq(symlink("targets/report.json", link), 0);
	output_file file;
	cr_assert_eq(output_file_open(&file, link, NULL), 0);
	cr_assert_not_null(file.temporary);
	cr_assert(strncmp(file.temporary, target, strlen(target)) == 0, "temporary %s is not beside %s",
	          file.temporary, target);
	fputs("new\n", file.stream);
	cr_assert_eq(output_file_commit(&file, NULL), 0);
	struct stat info;
	cr_assert_eq(lstat(link, &info), 0);
	cr_assert(S_ISLNK(info.st_mode), "the link was replaced by a regular file");
	cr_assert_str_eq(read_text(target), "new\n");
	cr_assert_eq(temporaries_in(folder), 0);
	cr_assert_eq(temporaries_in(targets), 0);
}

Test(core_files, dangling_symlink_creates_its_target)
{
	const char *link = in_folder("dangling");
	cr_assert_eq(symlink("created.txt", link), 0);
	plumb_status status;
	cr_assert_eq(write_file(link, "made\n", &status), 0, "%s", status.message);
	struct stat info;
	cr_assert_eq(lstat(link, &info), 0);
	cr_assert(S_ISLNK(info.st_mode));
	cr_assert_str_eq(read_text(in_folder("created.txt")), "made\n");
}

typedef struct fifo_reader {
	const char *path;
	char text[256];
} fifo_reader;

static void *read_fifo(void *argument)
{
	fifo_reader *r = argument;
	int fd = open(r->path, O_RDONLY);
	size_t length = 0;
	ssize_t n;
	while (fd >= 0 && (n = read(fd, r->text + length, sizeof r->text - 1 - length)) > 0)
		length += (size_t)n;
	r->text[length] = 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

Test(core_files, fifo_is_written_in_place, .timeout = 10)
{
	const char *path = in_folder("pipe");
	cr_assert_eq(mkfifo(path, 0600), 0);
	fifo_reader reader = { .path = path };
	pthread_t thread;
	cr_assert_eq(pthread_create(&thread, NULL, read_fifo, &reader), 0);
	plumb_status status;
	cr_assert_eq(write_file(path, "through the fifo\n", &status), 0, "%s", status.message);
	pthread_join(thread, NULL);
	cr_assert_str_eq(reader.text, "through the fifo\n");
	struct stat info;
	cr_assert_eq(lstat(path, &info), 0);
	cr_assert(S_ISFIFO(info.st_mode), "the FIFO was replaced");
	cr_assert_eq(temporaries_in(folder), 0);
}

Test(core_files, dev_null_stays_a_character_device)
{
	plumb_status status;
	cr_assert_eq(write_file("/dev/null", "discarded\n", &status), 0, "%s", status.message);
	struct stat info;
	cr_assert_eq(stat("/dev/null", &info), 0);
	cr_assert(S_ISCHR(info.st_mode), "/dev/null is no longer a character device");
	cr_assert_eq(access("/dev/null.tmp", F_OK), -1);
}

/* A full device: a copy of /dev/full made here when we may (root), else
 * /dev/full itself when it is the real device. */
static const char *full_device(void)
{
	const char *copy = in_folder("full");
	if (mknod(copy, S_IFCHR | 0666, makedev(1, 7)) == 0)
		return copy;
	struct stat info;
	if (stat("/dev/full", &info) == 0 && S_ISCHR(info.st_mode) && info.st_rdev == makedev(1, 7))
		return "/dev/full";
	cr_skip_test("needs a full device: cannot create one (%s) and /dev/full is not the character device 1,7",
	             strerror(errno));
	return NULL;
}

Test(core_files, full_device_fails_with_its_cause)
{
	const char *full = full_device();
	plumb_status status;
	cr_assert_eq(write_file(full, "x\n", &status), -1, "writing to a full device must fail");
	cr_assert(strstr(status.message, "No space left on device"), "%s", status.message);
	cr_assert(strstr(status.message, full), "%s", status.message);
	/* A report larger than any stdio buffer fails the same way. */
	output_report *report = output_report_new("test");
	output_table *table = output_table_add(report, "t", "T");
	output_column(table, "n", NULL, 0);
	for (int i = 0; i < 20000; i++) {
		output_row(table);
		output_cell_integer(table, i);
	}
	cr_assert_eq(output_write_file(report, OUTPUT_CSV, full, &status), -1);
	cr_assert(strstr(status.message, "No space left on device"), "%s", status.message);
	output_report_free(report);
	struct stat info;
	cr_assert_eq(stat(full, &info), 0);
	cr_assert(S_ISCHR(info.st_mode));
}

Test(core_files, directory_is_refused)
{
	plumb_status status;
	cr_assert_eq(write_file(folder, "x", &status), -1);
	cr_assert(strstr(status.message, "Is a directory"), "%s", status.message);
}

Test(core_files, abort_leaves_no_temporary)
{
	const char *path = in_folder("aborted.txt");
	output_file file;
	cr_assert_eq(output_file_open(&file, path, NULL), 0);
	fputs("partial", file.stream);
	output_file_abort(&file);
	cr_assert_eq(access(path, F_OK), -1);
	cr_assert_eq(temporaries_in(folder), 0);
}

/* The temporary's name was TARGET.tmp.PID, opened with O_CREAT|O_TRUNC:
 * whatever someone planted there (a FIFO, which hung plumb; a hard link,
 * whose target was overwritten) was written through.  Planted here under
 * this process's pid, the name the old writer would have used. */
Test(core_files, things_planted_at_the_old_temporary_name_are_left_alone)
{
	const char *target = in_folder("planted.txt");
	char fifo[PATH_MAX], hard[PATH_MAX];
	snprintf(fifo, sizeof fifo, "%s.tmp.%ld", target, (long)getpid());
	cr_assert_eq(mkfifo(fifo, 0666), 0);
	cr_assert_eq(write_file(target, "report\n", NULL), 0);
	cr_assert_str_eq(read_text(target), "report\n");
	struct stat info;
	cr_assert_eq(lstat(fifo, &info), 0);
	cr_assert(S_ISFIFO(info.st_mode));
	cr_assert_eq(unlink(fifo), 0);

	const char *precious = in_folder("precious.txt");
	write_text(precious, "keep\n");
	snprintf(hard, sizeof hard, "%s.tmp.%ld", target, (long)getpid());
	cr_assert_eq(link(precious, hard), 0);
	cr_assert_eq(write_file(target, "again\n", NULL), 0);
	cr_assert_str_eq(read_text(precious), "keep\n", "the hard link's target was written");
	cr_assert_str_eq(read_text(target), "again\n");
	cr_assert_eq(unlink(hard), 0);
}

/* Unpredictable: two temporaries of one target in one process differ, and
 * neither is named after the pid. */
Test(core_files, temporary_names_are_unpredictable_and_honour_the_umask)
{
	const char *target = in_folder("random.txt");
	output_file a, b;
	mode_t old = umask(077);
	cr_assert_eq(output_file_open(&a, target, NULL), 0);
	cr_assert_eq(output_file_open(&b, target, NULL), 0);
	umask(old);
	cr_assert_str_neq(a.temporary, b.temporary);
	char pid[32];
	snprintf(pid, sizeof pid, ".tmp.%ld", (long)getpid());
	cr_assert(!strstr(a.temporary, pid) || strlen(strstr(a.temporary, pid)) != strlen(pid), "%s", a.temporary);
	struct stat info;
	cr_assert_eq(stat(a.temporary, &info), 0);
	cr_assert_eq(info.st_mode & 0777, 0600, "mode %o under umask 077", (unsigned)(info.st_mode & 0777));
	output_file_abort(&b);
	fputs("a\n", a.stream);
	cr_assert_eq(output_file_commit(&a, NULL), 0);
	cr_assert_eq(stat(target, &info), 0);
	cr_assert_eq(info.st_mode & 0777, 0600);
	cr_assert_eq(temporaries_in(folder), 0);
}

/* A symlink plumb would follow must be one the kernel follows too: a loop
 * is refused with the kernel's ELOOP, not followed in user space. */
Test(core_files, a_symlink_loop_is_refused)
{
	const char *a = in_folder("loop-a"), *b = in_folder("loop-b");
	cr_assert_eq(symlink("loop-b", a), 0);
	cr_assert_eq(symlink("loop-a", b), 0);
	plumb_status status;
	cr_assert_eq(write_file(a, "x\n", &status), -1);
	cr_assert(strstr(status.message, "cannot create"), "%s", status.message);
	cr_assert_eq(temporaries_in(folder), 0);
}

/* Files beside an output (PATH-NAME.csv, report.json, TRACE.code) only
 * beside a regular file or a new name. */
Test(core_files, siblings_only_beside_regular_files)
{
	cr_assert(output_path_takes_siblings(in_folder("new.csv")));
	write_text(in_folder("old.csv"), "x\n");
	cr_assert(output_path_takes_siblings(in_folder("old.csv")));
	cr_assert_not(output_path_takes_siblings("/dev/null"));
	cr_assert_not(output_path_takes_siblings("-"));
	cr_assert_not(output_path_takes_siblings(folder));
	const char *fifo = in_folder("pipe");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_not(output_path_takes_siblings(fifo));
	const char *link = in_folder("to-null");
	cr_assert_eq(symlink("/dev/null", link), 0);
	cr_assert_not(output_path_takes_siblings(link));
}
