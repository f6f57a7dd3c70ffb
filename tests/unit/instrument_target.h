/* The program the Valgrind tests run, build/tests/data/instrument_target
 * (built beside the unit tests), and plumbgrind's folder: a test that needs
 * them is skipped, with the reason, where they are not built. */
#ifndef PLUMB_TESTS_INSTRUMENT_TARGET_H
#define PLUMB_TESTS_INSTRUMENT_TARGET_H

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "instrument/instrument.h"

/* target gets the program's path, tool_dir the tool's folder.  The trace
 * command's switches to lackey or text are cleared, so the tests take the
 * path a user's plumb takes by default. */
static inline void instrument_target_find(char *target, size_t target_size, char *tool_dir, size_t tool_size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	cr_assert(n > 0);
	self[n] = 0;
	*strrchr(self, '/') = 0;
	snprintf(target, target_size, "%s/data/instrument_target", self);
	plumb_status status;
	if (access(target, X_OK) != 0 || instrument_find_tool(tool_dir, tool_size, &status) != 0)
		cr_skip_test("plumbgrind or its test program is not built here (needs valgrind's tool libraries)");
	unsetenv("PLUMB_TRACE_LACKEY");
	unsetenv("PLUMB_TRACE_TEXT");
}

#endif
