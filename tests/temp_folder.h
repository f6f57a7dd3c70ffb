/* A temporary folder a test process makes once and removes, with everything
 * in it, when the process exits (Criterion runs each test in its own
 * process, which returns through exit(), so atexit handlers run; a test
 * killed by its timeout leaves its folder, as a crash should leave evidence).
 * Unit and end-to-end helpers both use it: the suites once left about 40
 * folders in /tmp per run. */
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

/* The folder (made on first use from prefix, e.g. "/tmp/plumb-e2e"). */
static inline const char *temp_folder(const char *prefix)
{
	if (!temp_folder_path[0] || temp_folder_owner != getpid()) {
		snprintf(temp_folder_path, sizeof temp_folder_path, "%s-XXXXXX", prefix);
		cr_assert(mkdtemp(temp_folder_path) != NULL, "mkdtemp: %s", strerror(errno));
		if (!temp_folder_owner)
			atexit(temp_folder_remove);
		temp_folder_owner = getpid();
	}
	return temp_folder_path;
}

#endif
