/* A temporary folder a test process makes once and removes, with everything
 * in it, when the process exits (Criterion runs each test in its own
 * process, which returns through exit(), so atexit handlers run; a test
 * killed by its timeout leaves its folder, as a crash should leave evidence).
 * Unit and end-to-end helpers both use it: the suites once left about 40
 * folders in /tmp per run.  Folders go in $TMPDIR (tests/run-suite.sh gives
 * each suite a fresh one and fails the suite if anything is left in it), else
 * /tmp.  A suite's .fini does not run after cr_skip_test, so a folder made
 * in .init and removed in .fini is left by every skipped test: suites make
 * theirs here instead. */
#ifndef PLUMB_TESTS_TEMP_FOLDER_H
#define PLUMB_TESTS_TEMP_FOLDER_H

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char temp_folder_path[256];
static pid_t temp_folder_owner;

static int temp_folder_remove_entry(const char *path, const struct stat *info, int type, struct FTW *walk)
{
	(void)info; (void)type; (void)walk;
	remove(path);
	return 0;
}

static void temp_folder_remove(void)
{
	/* only the process that made it: a forked child (a test's helper process)
	 * exiting must not take the folder from under its parent */
	if (temp_folder_path[0] && getpid() == temp_folder_owner)
		nftw(temp_folder_path, temp_folder_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* $TMPDIR, or /tmp. */
static inline const char *temp_root(void)
{
	const char *root = getenv("TMPDIR");
	return root && root[0] == '/' ? root : "/tmp";
}

/* Room for a temporary path: TMPDIR, a name, and what a test appends
 * still fit its other buffers (a longer TMPDIR fails temp_template's check). */
#define TEMP_PATH_SIZE 160

/* A mkstemp/mkdtemp template in temp_root() (name ends in XXXXXX, or in
 * XXXXXX and a suffix for mkstemps); the caller removes what it makes. */
static inline char *temp_template(char *out, size_t size, const char *name)
{
	int n = snprintf(out, size, "%s/%s", temp_root(), name);
	cr_assert(n > 0 && (size_t)n < size, "temporary path too long: %s/%s", temp_root(), name);
	return out;
}

/* The folder (made on first use, named e.g. "plumb-e2e-XXXXXX" in temp_root()). */
static inline const char *temp_folder(const char *prefix)
{
	if (!temp_folder_path[0] || temp_folder_owner != getpid()) {
		snprintf(temp_folder_path, sizeof temp_folder_path, "%s/%s-XXXXXX", temp_root(), prefix);
		cr_assert(mkdtemp(temp_folder_path) != NULL, "mkdtemp: %s", strerror(errno));
		if (!temp_folder_owner)
			atexit(temp_folder_remove);
		temp_folder_owner = getpid();
	}
	return temp_folder_path;
}

#endif
