/* The stat agent: how plumb stat counts a command through PAPI.
 *
 * PAPI counts a process from inside it (PAPI_start ... PAPI_stop), or by
 * attaching to it; PAPI 7.0's attach fails on machines without a PMU (its
 * permission probe opens a hardware event), and counting from inside is
 * what the validation seeds did anyway.  So plumb stat preloads libplumb.so
 * into the command (LD_PRELOAD) with three environment variables; this
 * constructor, which does nothing without them, opens the events on the
 * backend they name and starts them, and an exit handler stops, reads and
 * writes the values to the inherited pipe.
 *
 * What it counts: the command's main thread, from this constructor (after
 * the dynamic loader and the constructors of the libraries it depends on) to
 * its exit handlers.  A statically linked command, or one that leaves with
 * _exit or a signal, writes nothing, and plumb stat reports "not-counted".
 *
 * The agent's state is process-wide by nature (a constructor and an exit
 * handler share it): the struct below, used only in a process that was
 * started with the agent's variables. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "counters/stat_agent.h"

#define STAT_AGENT_MAGIC 0x706c6d62u   /* "plmb" */

typedef struct stat_agent_header {
	uint32_t magic;
	uint32_t count;
	int32_t failed;                    /* 1: opening failed, message says why */
	char message[PLUMB_MESSAGE_MAX];
} stat_agent_header;

static struct {
	int fd;
	counter_set *set;
	size_t n;
	char storage[4096];
	const char *events[COUNTER_MAX_EVENTS];
} agent = { .fd = -1 };

static void agent_write(const void *data, size_t length)
{
	const char *p = data;
	while (length > 0) {
		ssize_t written = write(agent.fd, p, length);
		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return;
		p += written;
		length -= (size_t)written;
	}
}

static void agent_fail(const char *message)
{
	stat_agent_header header;
	memset(&header, 0, sizeof header);
	header.magic = STAT_AGENT_MAGIC;
	header.failed = 1;
	snprintf(header.message, sizeof header.message, "%s", message);
	agent_write(&header, sizeof header);
	close(agent.fd);
	agent.fd = -1;
}

static void agent_finish(void)
{
	if (agent.fd < 0 || !agent.set)
		return;
	counter_value values[COUNTER_MAX_EVENTS];
	plumb_status status;
	if (counter_stop(agent.set, &status) != 0 || counter_read(agent.set, values, &status) != 0) {
		agent_fail(status.message);
		return;
	}
	stat_agent_header header;
	memset(&header, 0, sizeof header);
	header.magic = STAT_AGENT_MAGIC;
	header.count = (uint32_t)agent.n;
	agent_write(&header, sizeof header);
	agent_write(values, agent.n * sizeof values[0]);
	close(agent.fd);
	agent.fd = -1;
}

__attribute__((constructor))
static void agent_start(void)
{
	const char *fd_text = getenv(STAT_AGENT_FD_ENV);
	if (!fd_text)
		return;
	char *end;
	long fd = strtol(fd_text, &end, 10);
	const char *events = getenv(STAT_AGENT_EVENTS_ENV);
	const char *backend = getenv(STAT_AGENT_BACKEND_ENV);
	if (*end || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0)
		return;
	agent.fd = (int)fd;
	/* Only this process: children the command starts are not agents. */
	fcntl(agent.fd, F_SETFD, FD_CLOEXEC);
	plumb_status status;
	if (!events || !backend ||
	    counter_event_list_parse(events, agent.storage, sizeof agent.storage, agent.events, &agent.n, &status) != 0) {
		agent_fail("the stat agent was started without a valid event list");
		return;
	}
	char backend_name[16];
	snprintf(backend_name, sizeof backend_name, "%s", backend);
	unsetenv(STAT_AGENT_FD_ENV);
	unsetenv(STAT_AGENT_EVENTS_ENV);
	unsetenv(STAT_AGENT_BACKEND_ENV);
	if (counter_set_open(&agent.set, backend_name, agent.events, agent.n, NULL, &status) != 0 ||
	    counter_start(agent.set, &status) != 0) {
		agent_fail(status.message);
		return;
	}
	atexit(agent_finish);
}

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
