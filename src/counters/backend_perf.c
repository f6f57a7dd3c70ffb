/* The perf_event backend: perf_event_open(2) per event, grouped so that all
 * events of a set are scheduled on the PMU together and read in one read()
 * (PERF_FORMAT_GROUP).  An event the kernel refuses in the group is retried
 * on its own (different PMUs cannot share a group); an event it refuses
 * outright is unsupported with the errno explained.
 *
 * Counting is user space only by default (exclude_kernel, exclude_hv), the
 * domain PAPI uses, and the only one perf_event_paranoid 2 allows without
 * CAP_PERFMON. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "counters/perf_events.h"
#include "counters/rdpmc.h"
#include "counters/counters.h"

typedef struct perf_slot {
	int fd;                 /* -1 when unsupported */
	size_t leader;          /* slot index of this event's group leader */
	uint64_t id;            /* PERF_FORMAT_ID, to find the value in a group read */
	volatile struct perf_event_mmap_page *page;   /* for rdpmc; NULL if not mapped */
	counter_value opened;
	/* duration_time, perf's tool event: wall time while the set is
	 * enabled, from the monotonic clock (no file descriptor). */
	bool tool, tool_running;
	uint64_t tool_ns, tool_since;
} perf_slot;

typedef struct perf_instance {
	size_t n;
	counter_options options;
	bool use_rdpmc;
	const char *method;
	perf_slot slot[];
} perf_instance;

static uint64_t monotonic_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);   /* async-signal-safe: pause and resume call it */
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void tools_switch(perf_instance *instance, bool on, bool reset);

static long perf_event_open_call(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                                 unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static const uint64_t read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
                                    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

static int open_one(perf_event_spec *spec, const counter_options *options, int group_fd)
{
	struct perf_event_attr attr = spec->attr;
	attr.size = sizeof attr;
	/* The leader starts disabled and members follow it.  A member opened
	 * disabled stays off even after PERF_EVENT_IOC_ENABLE with
	 * PERF_IOC_FLAG_GROUP when the leader is task-clock or cpu-clock
	 * (measured on Linux 6.18), so members are opened enabled, as perf does. */
	attr.disabled = group_fd < 0;
	attr.read_format = read_format;
	attr.exclude_kernel = options->domain == COUNTER_DOMAIN_USER;
	attr.exclude_hv = options->domain == COUNTER_DOMAIN_USER;
	attr.inherit = options->inherit;
	attr.enable_on_exec = options->enable_on_exec && group_fd < 0;
	long fd = perf_event_open_call(&attr, options->pid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static void map_for_rdpmc(perf_slot *slot)
{
	long page_size = sysconf(_SC_PAGESIZE);
	void *page = mmap(NULL, (size_t)page_size, PROT_READ, MAP_SHARED, slot->fd, 0);
	slot->page = page == MAP_FAILED ? NULL : page;
}

static int perf_open(void **out, const char *const *events, size_t n, const counter_options *options,
                     counter_value *opened, plumb_status *status)
{
	perf_instance *instance = calloc(1, sizeof *instance + n * sizeof instance->slot[0]);
	if (!instance)
		return plumb_fail(status, ENOMEM, "out of memory");
	instance->n = n;
	instance->options = *options;
	/* rdpmc reads the counter of the CPU it runs on, so it is only right for
	 * the calling thread's own, non-inherited events. */
	instance->use_rdpmc = !options->no_rdpmc && options->pid == 0 && !options->inherit;
	instance->method = "read()";
	counter_environment environment;
	counter_environment_read(&environment);
	size_t leader = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		perf_slot *slot = &instance->slot[i];
		slot->fd = -1;
		memset(&slot->opened, 0, sizeof slot->opened);
		perf_event_spec spec;
		char reason[COUNTER_REASON_MAX];
		if (perf_event_resolve(events[i], &spec, reason, sizeof reason) != 0) {
			counter_value_unsupported(&slot->opened, "%s", reason);
			opened[i] = slot->opened;
			continue;
		}
		if (spec.kind == PERF_EVENT_KIND_TOOL) {
			slot->tool = true;
			slot->opened.state = COUNTER_OK;
			slot->opened.value = 0;
			opened[i] = slot->opened;
			continue;
		}
		int fd = -ENOENT;
		if (!options->no_group && leader != SIZE_MAX) {
			fd = open_one(&spec, options, instance->slot[leader].fd);
			if (fd >= 0)
				slot->leader = leader;
		}
		if (fd < 0) {
			fd = open_one(&spec, options, -1);
			if (fd >= 0) {
				slot->leader = i;
				if (leader == SIZE_MAX && !options->no_group)
					leader = i;
			}
		}
		if (fd < 0) {
			counter_explain_errno(-fd, &environment, reason, sizeof reason);
			counter_value_unsupported(&slot->opened, "%s", reason);
			opened[i] = slot->opened;
			continue;
		}
		slot->fd = fd;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &slot->id) != 0) {
			int err = errno;
			close(fd);
			slot->fd = -1;
			counter_value_unsupported(&slot->opened, "PERF_EVENT_IOC_ID: %s", strerror(err));
			opened[i] = slot->opened;
			continue;
		}
		if (instance->use_rdpmc && spec.kind != PERF_EVENT_KIND_SOFTWARE)
			map_for_rdpmc(slot);
		slot->opened.state = COUNTER_OK;
		slot->opened.value = 0;
		opened[i] = slot->opened;
	}
	*out = instance;
	return 0;
}

/* Applies request to every group leader.  Enable and disable switch the
 * leader alone, without PERF_IOC_FLAG_GROUP: a group counts only while its
 * leader is on, so that stops and starts the members too.  A group
 * disabled and enabled again with the flag left its members inactive until
 * the thread's next context switch (measured on Linux 6.18: page faults
 * after a second start went uncounted; perf_start_after_stop_counts_again
 * and perf_pause_resume_counts_again check it).  Reset does take the flag:
 * it clears every member's count. */
static int group_ioctl(perf_instance *instance, unsigned long request, const char *what,
                       plumb_status *status)
{
	unsigned long flags = request == PERF_EVENT_IOC_RESET ? PERF_IOC_FLAG_GROUP : 0;
	for (size_t i = 0; i < instance->n; i++) {
		perf_slot *slot = &instance->slot[i];
		if (slot->fd < 0 || slot->leader != i)
			continue;
		if (ioctl(slot->fd, request, flags) != 0)
			return plumb_fail_errno(status, errno, "perf_event %s", what);
	}
	return 0;
}

static void tools_switch(perf_instance *instance, bool on, bool reset)
{
	uint64_t now = monotonic_ns();
	for (size_t i = 0; i < instance->n; i++) {
		perf_slot *slot = &instance->slot[i];
		if (!slot->tool)
			continue;
		if (reset)
			slot->tool_ns = 0;
		if (slot->tool_running && !on)
			slot->tool_ns += now - slot->tool_since;
		else if (!slot->tool_running && on)
			slot->tool_since = now;
		slot->tool_running = on;
	}
}

static int perf_start(void *opaque, plumb_status *status)
{
	perf_instance *instance = opaque;
	if (group_ioctl(instance, PERF_EVENT_IOC_RESET, "reset", status) != 0)
		return -1;
	/* duration_time runs from here, also with enable_on_exec: perf's runs
	 * from the start of the command as well. */
	tools_switch(instance, true, true);
	/* With enable_on_exec the kernel enables the events at the target's exec. */
	if (instance->options.enable_on_exec)
		return 0;
	return group_ioctl(instance, PERF_EVENT_IOC_ENABLE, "enable", status);
}

static int perf_stop(void *opaque, plumb_status *status)
{
	tools_switch(opaque, false, false);
	return group_ioctl(opaque, PERF_EVENT_IOC_DISABLE, "disable", status);
}

/* For a halt handler: ioctl only, nothing that is not async-signal-safe,
 * and no status.  Leaders only, as group_ioctl explains. */
static int group_ioctl_quiet(perf_instance *instance, unsigned long request)
{
	int rc = 0;
	for (size_t i = 0; i < instance->n; i++) {
		perf_slot *slot = &instance->slot[i];
		if (slot->fd >= 0 && slot->leader == i && ioctl(slot->fd, request, 0) != 0)
			rc = -1;
	}
	return rc;
}

static int perf_pause(void *opaque)
{
	tools_switch(opaque, false, false);
	return group_ioctl_quiet(opaque, PERF_EVENT_IOC_DISABLE);
}

static int perf_resume(void *opaque)
{
	tools_switch(opaque, true, false);
	return group_ioctl_quiet(opaque, PERF_EVENT_IOC_ENABLE);
}

static void finish_value(counter_value *value)
{
	if (value->time_enabled == 0) {
		value->state = COUNTER_NOT_COUNTED;
		value->value = NAN;
		snprintf(value->reason, sizeof value->reason, "never enabled (not started, or the command never ran)");
		return;
	}
	counter_value_scale(value);
}

static bool read_with_rdpmc(perf_instance *instance, counter_value *values)
{
	if (!instance->use_rdpmc)
		return false;
	bool any = false;
	for (size_t i = 0; i < instance->n; i++) {
		perf_slot *slot = &instance->slot[i];
		if (slot->fd < 0)
			continue;
		if (!slot->page)
			return false;
		any = true;
	}
	if (!any)
		return false;
	for (size_t i = 0; i < instance->n; i++) {
		perf_slot *slot = &instance->slot[i];
		if (slot->fd < 0)
			continue;
		counter_value *v = &values[i];
		if (!rdpmc_read(slot->page, &v->raw, &v->time_enabled, &v->time_running))
			return false;
	}
	return true;
}

static int read_group(perf_instance *instance, size_t leader, counter_value *values, plumb_status *status)
{
	uint64_t buffer[3 + 2 * COUNTER_MAX_EVENTS];
	ssize_t got = read(instance->slot[leader].fd, buffer, sizeof buffer);
	if (got < (ssize_t)(3 * sizeof(uint64_t)))
		return plumb_fail_errno(status, got < 0 ? errno : EIO, "reading perf_event group");
	uint64_t members = buffer[0];
	if (members > COUNTER_MAX_EVENTS || (size_t)got < (3 + 2 * members) * sizeof(uint64_t))
		return plumb_fail(status, EIO, "short perf_event group read");
	for (uint64_t m = 0; m < members; m++) {
		uint64_t count = buffer[3 + 2 * m], id = buffer[4 + 2 * m];
		for (size_t i = 0; i < instance->n; i++)
			if (instance->slot[i].fd >= 0 && instance->slot[i].id == id) {
				values[i].raw = count;
				values[i].time_enabled = buffer[1];
				values[i].time_running = buffer[2];
			}
	}
	return 0;
}

static int perf_read(void *opaque, counter_value *values, plumb_status *status)
{
	perf_instance *instance = opaque;
	for (size_t i = 0; i < instance->n; i++) {
		values[i] = instance->slot[i].opened;
		values[i].raw = 0;
		values[i].time_enabled = values[i].time_running = 0;
	}
	if (read_with_rdpmc(instance, values)) {
		instance->method = "rdpmc";
	} else {
		instance->method = "read()";
		for (size_t i = 0; i < instance->n; i++)
			if (instance->slot[i].fd >= 0 && instance->slot[i].leader == i &&
			    read_group(instance, i, values, status) != 0)
				return -1;
	}
	uint64_t now = monotonic_ns();
	for (size_t i = 0; i < instance->n; i++) {
		const perf_slot *slot = &instance->slot[i];
		if (slot->tool) {
			uint64_t ns = slot->tool_ns + (slot->tool_running ? now - slot->tool_since : 0);
			values[i].raw = ns;
			values[i].time_enabled = values[i].time_running = ns;
		}
		if (slot->fd >= 0 || slot->tool)
			finish_value(&values[i]);
	}
	return 0;
}

static void perf_close(void *opaque)
{
	perf_instance *instance = opaque;
	if (!instance)
		return;
	long page_size = sysconf(_SC_PAGESIZE);
	/* Members before leaders: closing a leader first would orphan them into
	 * groups of their own for a moment. */
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < instance->n; i++) {
			perf_slot *slot = &instance->slot[i];
			if (slot->fd < 0 || (pass == 0) != (slot->leader != i))
				continue;
			if (slot->page)
				munmap((void *)slot->page, (size_t)page_size);
			close(slot->fd);
			slot->fd = -1;
		}
	free(instance);
}

static int perf_list(void *context, counter_list_fn emit, void *argument, plumb_status *status)
{
	(void)context;
	(void)status;
	perf_event_list(emit, argument, true);
	return 0;
}

static const char *perf_read_method(void *opaque)
{
	return ((perf_instance *)opaque)->method;
}

const counter_backend counter_backend_perf = {
	.name = "perf",
	.description = "Linux perf_event_open(2); natives encoded by libpfm4",
	.open = perf_open,
	.start = perf_start,
	.stop = perf_stop,
	.read = perf_read,
	.close = perf_close,
	.list = perf_list,
	.read_method = perf_read_method,
	.pause = perf_pause,
	.resume = perf_resume,
};
