/* plumb stat's side of the stat agent (src/counters/stat_agent.c): finding
 * the library to preload, and reading what the agent sent back.  Kept apart
 * from the agent so that the plumb program does not carry its constructor. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "counters/stat_agent.h"

int stat_agent_collect(int fd, size_t n, counter_value *values, plumb_status *status)
{
	static char buffer[sizeof(stat_agent_header) + COUNTER_MAX_EVENTS * sizeof(counter_value)];
	size_t got = 0;
	int flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	for (;;) {
		ssize_t r = read(fd, buffer + got, sizeof buffer - got);
		if (r > 0 && (got += (size_t)r) < sizeof buffer)
			continue;
		if (r < 0 && errno == EINTR)
			continue;
		break;
	}
	stat_agent_header header;
	if (got == 0) {
		for (size_t i = 0; i < n; i++) {
			memset(&values[i], 0, sizeof values[i]);
			values[i].state = COUNTER_NOT_COUNTED;
			snprintf(values[i].reason, sizeof values[i].reason,
			         "the command did not report counts (statically linked, so libplumb.so "
			         "was not preloaded, or it left without running exit handlers)");
		}
		return 0;
	}
	if (got < sizeof header)
		return plumb_fail(status, EIO, "short message from the stat agent");
	memcpy(&header, buffer, sizeof header);
	if (header.magic != STAT_AGENT_MAGIC)
		return plumb_fail(status, EIO, "malformed message from the stat agent");
	if (header.failed) {
		header.message[sizeof header.message - 1] = '\0';
		for (size_t i = 0; i < n; i++)
			counter_value_unsupported(&values[i], "%s", header.message);
		return 0;
	}
	if (header.count != n || got != sizeof header + n * sizeof(counter_value))
		return plumb_fail(status, EIO, "the stat agent reported %u values for %zu events", header.count, n);
	memcpy(values, buffer + sizeof header, n * sizeof(counter_value));
	for (size_t i = 0; i < n; i++)
		values[i].reason[sizeof values[i].reason - 1] = '\0';
	return 0;
}

const char *stat_agent_library(char *buffer, size_t length, plumb_status *status)
{
	char program[4096];
	ssize_t size = readlink("/proc/self/exe", program, sizeof program - 1);
	if (size <= 0) {
		plumb_fail_errno(status, errno, "cannot find the plumb program (/proc/self/exe)");
		return NULL;
	}
	program[size] = '\0';
	char *slash = strrchr(program, '/');
	if (slash)
		*slash = '\0';
	const char *candidates[] = { "/libplumb.so", "/../lib/libplumb.so.0", "/../lib/libplumb.so" };
	for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
		snprintf(buffer, length, "%s%s", program, candidates[i]);
		struct stat info;
		if (stat(buffer, &info) == 0 && S_ISREG(info.st_mode))
			return buffer;
	}
	plumb_fail(status, ENOENT, "libplumb.so not found beside %s or in %s/../lib", program, program);
	return NULL;
}
