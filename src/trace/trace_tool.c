/* Where plumbgrind, plumb's Valgrind tool, is: the trace readers that run a
 * program (trace_command.c) start it when it is built, and plumb instrument
 * (src/instrument, instrument_find_tool) always does.  Here, in the lower of
 * the two folders, so src/trace never calls src/instrument.
 *
 * Valgrind finds a tool in the folder named by VALGRIND_LIB; plumbgrind's
 * folder holds the tool beside links to the stock tools' files
 * (vg/Makefile.inc).  Looked for in PLUMB_VALGRIND_LIB, then beside the
 * running program (its build tree or PREFIX/lib/plumb/valgrind), then in
 * an inherited VALGRIND_LIB. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/status.h"
#include "trace/trace_internal.h"

bool trace_tool_present(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/" TRACE_TOOL_FILE, dir) >= (int)sizeof path || access(path, X_OK) != 0)
		return false;
	/* Valgrind also needs the stock preload objects beside it. */
	if (snprintf(path, sizeof path, "%s/vgpreload_core-amd64-linux.so", dir) >= (int)sizeof path)
		return false;
	return access(path, R_OK) == 0;
}

int trace_tool_find(char *dir, size_t size, plumb_status *status)
{
	const char *forced = secure_getenv("PLUMB_VALGRIND_LIB");
	if (forced && forced[0]) {
		if (!trace_tool_present(forced))
			return plumb_fail(status, ENOENT, "PLUMB_VALGRIND_LIB=%s holds no " TRACE_TOOL_FILE
			                  " with valgrind's files beside it", forced);
		if (snprintf(dir, size, "%s", forced) >= (int)size)
			return plumb_fail(status, ENAMETOOLONG, "PLUMB_VALGRIND_LIB is too long");
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return plumb_fail_errno(status, errno, "cannot find the running program (/proc/self/exe)");
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	/* build/plumb -> build/vg/lib; build/tests/x -> build/vg/lib; PREFIX/bin/plumb -> PREFIX/lib/plumb/valgrind */
	static const char *const relative[] = { "vg/lib", "../vg/lib", "../lib/plumb/valgrind" };
	for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
		char candidate[PATH_MAX];
		if (snprintf(candidate, sizeof candidate, "%s/%s", self, relative[i]) >= (int)sizeof candidate)
			continue;
		if (trace_tool_present(candidate)) {
			char resolved[PATH_MAX];
			const char *use = realpath(candidate, resolved) ? resolved : candidate;
			if (snprintf(dir, size, "%s", use) >= (int)size)
				return plumb_fail(status, ENAMETOOLONG, "the tool's folder name is too long");
			return 0;
		}
	}
	/* A program copied out of its build tree (or installed elsewhere) with
	 * VALGRIND_LIB naming plumbgrind's folder, as valgrind itself reads it. */
	const char *inherited = secure_getenv("VALGRIND_LIB");
	if (inherited && inherited[0] && trace_tool_present(inherited)) {
		if (snprintf(dir, size, "%s", inherited) >= (int)size)
			return plumb_fail(status, ENAMETOOLONG, "VALGRIND_LIB is too long");
		return 0;
	}
	if (inherited && inherited[0])
		/* each folder named once, the advice short: a status line holds
		 * PLUMB_MESSAGE_MAX bytes, and a long folder written three times
		 * cut the line before VALGRIND_LIB's part */
		return plumb_fail(status, ENOENT, "plumbgrind is not built or installed (looked in VALGRIND_LIB=%s and in vg/lib, "
		                  "../vg/lib and ../lib/plumb/valgrind from %s): build it with make or set PLUMB_VALGRIND_LIB",
		                  inherited, self);
	return plumb_fail(status, ENOENT, "plumbgrind is not built or installed (looked in vg/lib, ../vg/lib and "
	                  "../lib/plumb/valgrind from %s): build it with make (it needs the valgrind package's tool "
	                  "headers) or set PLUMB_VALGRIND_LIB", self);
}
