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
#include "counters/stat_agent.h"

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
	const char *fd_text = secure_getenv(STAT_AGENT_FD_ENV);
	if (!fd_text)
		return;
	char *end;
	long fd = strtol(fd_text, &end, 10);
	const char *events = secure_getenv(STAT_AGENT_EVENTS_ENV);
	const char *backend = secure_getenv(STAT_AGENT_BACKEND_ENV);
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
