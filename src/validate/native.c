/* Native runs: one benchmark run per fresh child process, counted through
 * the counter layer (perf_event and PAPI in the same run, so the two
 * sources see the same execution).  A fresh process per run is the
 * thesis's rule: a loop around the benchmark would reuse warm caches, TLB
 * entries, pages and counter-library state and change the counts. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include "core/interrupt.h"
#include "counters/counters.h"
#include "validate/native.h"

/* A run that takes longer is stuck (e.g. a spinning partner thread that
 * never got a CPU); the child is killed and the run reported as failed. */
#define RUN_TIMEOUT_SECONDS 300

const char *validate_native_event_name(const validate_event *event, int source)
{
	if (source == 0) return event->perf_name ? event->perf_name : event->name;
	return event->papi_name ? event->papi_name : event->name;
}

typedef struct native_region {
	const validate_benchmark *benchmark;
	bool want[2];
	counter_set *set[2];
} native_region;

static int region_open(void *context, plumb_status *status)
{
	native_region *r = context;
	static const char *const backends[2] = { "perf", "papi" };
	for (int s = 0; s < 2; s++) {
		if (!r->want[s]) continue;
		const char *names[VALIDATE_MAX_EVENTS];
		for (int e = 0; e < r->benchmark->event_count; e++)
			names[e] = validate_native_event_name(&r->benchmark->events[e], s);
		if (counter_set_open(&r->set[s], backends[s], names, (size_t)r->benchmark->event_count, NULL,
		                     status) != 0)
			return -1;
		/* Warm up outside the region: the first start/stop faults in the
		 * counter library's own code and data (and resolves its PLT
		 * entries), which would otherwise be counted as page faults. */
		counter_value scratch[VALIDATE_MAX_EVENTS];
		for (int i = 0; i < 3; i++) {
			counter_start(r->set[s], NULL);
			counter_stop(r->set[s], NULL);
			counter_read(r->set[s], scratch, NULL);
		}
	}
	return 0;
}

/* PAPI starts first and stops last, so the perf region is the tighter one. */
static void region_begin(void *context)
{
	native_region *r = context;
	if (r->set[1]) counter_start(r->set[1], NULL);
	if (r->set[0]) counter_start(r->set[0], NULL);
}

static void region_end(void *context)
{
	native_region *r = context;
	if (r->set[0]) counter_stop(r->set[0], NULL);
	if (r->set[1]) counter_stop(r->set[1], NULL);
}

typedef struct run_message {
	int ok;
	double values[2][VALIDATE_MAX_EVENTS];
	int states[2][VALIDATE_MAX_EVENTS];
	validate_run_info info;
	char error[PLUMB_MESSAGE_MAX];
} run_message;

static void child_run(const validate_benchmark *benchmark, const validate_params *params,
                      const bool sources[2], run_message *message)
{
	native_region r = { .benchmark = benchmark, .want = { sources[0], sources[1] } };
	validate_region region = { .open = region_open, .begin = region_begin, .end = region_end, .context = &r };
	plumb_status status;
	plumb_status_clear(&status);
	if (benchmark->threads == 1) {
		/* One CPU for the whole run, so a migration cannot split it (two-
		 * thread benchmarks pin both roles themselves). */
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(params->machine->cpus[0], &one);
		(void)sched_setaffinity(0, sizeof one, &one);
	}
	for (int s = 0; s < 2; s++)
		for (int e = 0; e < VALIDATE_MAX_EVENTS; e++) {
			message->values[s][e] = NAN;
			message->states[s][e] = COUNTER_UNSUPPORTED;
		}
	if (benchmark->run(params, &region, &message->info, &status) != 0) {
		snprintf(message->error, sizeof message->error, "%s", status.message);
		goto done;
	}
	for (int s = 0; s < 2; s++) {
		if (!r.set[s]) continue;
		counter_value values[VALIDATE_MAX_EVENTS];
		if (counter_read(r.set[s], values, &status) != 0) {
			snprintf(message->error, sizeof message->error, "%s", status.message);
			goto done;
		}
		for (int e = 0; e < benchmark->event_count; e++) {
			message->states[s][e] = values[e].state;
			if (counter_value_usable(&values[e])) message->values[s][e] = values[e].value;
		}
	}
	message->ok = 1;
done:
	for (int s = 0; s < 2; s++)
		if (r.set[s]) counter_close(r.set[s]);
}

static int read_full(int fd, void *buffer, size_t length)
{
	size_t done = 0;
	while (done < length) {
		ssize_t got = read(fd, (char *)buffer + done, length - done);
		if (got < 0 && errno == EINTR) continue;
		if (got <= 0) return -1;
		done += (size_t)got;
	}
	return 0;
}

static void write_full(int fd, const void *buffer, size_t length)
{
	size_t done = 0;
	while (done < length) {
		ssize_t put = write(fd, (const char *)buffer + done, length - done);
		if (put < 0 && errno == EINTR) continue;
		if (put <= 0) return;
		done += (size_t)put;
	}
}

/* Forks; the child runs fn(argument, buffer) and sends buffer back (length
 * bytes).  *died_of (when not NULL): the signal that ended the child before
 * it answered, 0 otherwise. */
static int in_child(void (*fn)(void *argument, void *buffer), void *argument, void *buffer,
                    size_t length, int *died_of, plumb_status *status)
{
	if (died_of)
		*died_of = 0;
	int pipe_fds[2];
	if (pipe(pipe_fds) != 0) return plumb_fail_errno(status, errno, "pipe");
	fflush(NULL);
	pid_t pid = interrupt_fork(true);
	if (pid < 0) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return plumb_fail_errno(status, errno, "fork");
	}
	if (pid == 0) {
		close(pipe_fds[0]);
		alarm(RUN_TIMEOUT_SECONDS);
		memset(buffer, 0, length);
		fn(argument, buffer);
		write_full(pipe_fds[1], buffer, length);
		_exit(0);
	}
	close(pipe_fds[1]);
	int got = read_full(pipe_fds[0], buffer, length);
	close(pipe_fds[0]);
	int wait_status = 0;
	interrupt_waitpid(pid, &wait_status);
	if (got != 0) {
		if (WIFSIGNALED(wait_status)) {
			if (died_of)
				*died_of = WTERMSIG(wait_status);
			return plumb_fail(status, EIO, "the run died of signal %d (%s)", WTERMSIG(wait_status),
			                  WTERMSIG(wait_status) == SIGALRM ? "timed out" : strsignal(WTERMSIG(wait_status)));
		}
		return plumb_fail(status, EIO, "the run exited without a result (status %d)", wait_status);
	}
	return 0;
}

typedef struct run_argument {
	const validate_benchmark *benchmark;
	const validate_params *params;
	const bool *sources;
} run_argument;

static void run_in_child(void *argument, void *buffer)
{
	run_argument *a = argument;
	child_run(a->benchmark, a->params, a->sources, buffer);
}

int validate_run_once(const validate_benchmark *benchmark, const validate_params *params,
                      const bool sources[2], double values[2][VALIDATE_MAX_EVENTS],
                      int states[2][VALIDATE_MAX_EVENTS], validate_run_info *info, plumb_status *status)
{
	run_message message;
	run_argument argument = { benchmark, params, sources };
	if (in_child(run_in_child, &argument, &message, sizeof message, NULL, status) != 0) return -1;
	if (!message.ok) return plumb_fail(status, EIO, "%s: %s", benchmark->name, message.error);
	memcpy(values, message.values, sizeof message.values);
	if (states) memcpy(states, message.states, sizeof message.states);
	if (info) *info = message.info;
	return 0;
}

/* ---- the iteration check: trips counted by execute breakpoints ---- */

/* Why execute breakpoints and not a trip counter in the kernel: a counter
 * the kernel keeps would add an instruction to every trip and change the
 * very counts the instruction benchmarks predict, and one the wrapper
 * computes is the model's own formula.  A breakpoint counts the
 * instruction that closes the loop where it runs, without changing the
 * code; its trap per trip would disturb the hardware counts, so the check
 * is a run of its own, never a counted one.  It needs no PMU (the debug
 * registers), and works under KVM. */

const char *validate_trip_state_name(validate_trip_state state)
{
	switch (state) {
	case VALIDATE_TRIPS_OK: return "ok";
	case VALIDATE_TRIPS_MISMATCH: return "mismatch";
	case VALIDATE_TRIPS_UNSUPPORTED: return "unsupported";
	case VALIDATE_TRIPS_NOT_CHECKED: return "not-checked";
	}
	return "?";
}

typedef struct trip_region {
	validate_trip_points points;
	int fds[VALIDATE_TRIP_POINTS];
	int opened;
	int threads_before;
	bool unsupported;           /* the breakpoints could not be opened */
	char why[PLUMB_MESSAGE_MAX];
} trip_region;

/* The threads of this process now (/proc/self/status), -1 if unknown. */
static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int threads = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &threads) == 1) break;
	if (f) fclose(f);
	return threads;
}

static int trip_watch(void *context, const validate_trip_points *points, plumb_status *status)
{
	trip_region *t = context;
	if (t->opened) return plumb_fail(status, EINVAL, "the kernel named its loop twice");
	if (points->count < 1 || points->count > VALIDATE_TRIP_POINTS)
		return plumb_fail(status, EINVAL, "%d trip points (1 to %d)", points->count, VALIDATE_TRIP_POINTS);
	t->points = *points;
	t->threads_before = thread_count();
	for (int i = 0; i < points->count; i++) {
		struct perf_event_attr attr;
		memset(&attr, 0, sizeof attr);
		attr.type = PERF_TYPE_BREAKPOINT;
		attr.size = sizeof attr;
		attr.bp_type = HW_BREAKPOINT_X;
		attr.bp_addr = (uint64_t)(uintptr_t)points->address[i];
		attr.bp_len = sizeof(long);
		attr.disabled = 1;
		attr.inherit = points->partner_thread;   /* the threads the counted one starts */
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0) {
			t->unsupported = true;
			snprintf(t->why, sizeof t->why, "an execute breakpoint cannot be opened here (perf_event_open: %s)",
			         strerror(errno));
			return plumb_fail(status, errno, "%s", t->why);
		}
		t->fds[t->opened++] = fd;
	}
	return 0;
}

static void trip_begin(void *context)
{
	trip_region *t = context;
	for (int i = 0; i < t->opened; i++) {
		ioctl(t->fds[i], PERF_EVENT_IOC_RESET, 0);
		ioctl(t->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	}
}

static void trip_end(void *context)
{
	trip_region *t = context;
	for (int i = 0; i < t->opened; i++) ioctl(t->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

typedef struct trip_message {
	int ran;                    /* the run completed */
	int unsupported;
	int counted_ok;             /* counted holds the trips */
	uint64_t counted;
	char why[PLUMB_MESSAGE_MAX];
} trip_message;

static void trips_in_child(void *argument, void *buffer)
{
	run_argument *a = argument;
	trip_message *m = buffer;
	trip_region t;
	memset(&t, 0, sizeof t);
	validate_region region = { NULL, trip_begin, trip_end, &t, trip_watch };
	if (a->benchmark->threads == 1) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(a->params->machine->cpus[0], &one);
		(void)sched_setaffinity(0, sizeof one, &one);
	}
	validate_run_info info;
	memset(&info, 0, sizeof info);
	plumb_status status;
	plumb_status_clear(&status);
	if (a->benchmark->run(a->params, &region, &info, &status) != 0) {
		m->unsupported = t.unsupported;
		snprintf(m->why, sizeof m->why, "%s", t.unsupported ? t.why : status.message);
		goto done;
	}
	m->ran = 1;
	if (!t.opened) {
		m->unsupported = 1;
		snprintf(m->why, sizeof m->why, "%s names no loop to count", a->benchmark->name);
		goto done;
	}
	/* An inherited count joins the event when its thread has left the
	 * kernel, a moment after pthread_join returns (which waits only for the
	 * thread's stack): wait for the thread to be gone (at most 2 s). */
	if (t.points.partner_thread && t.threads_before > 0)
		for (int wait = 0; wait < 20000 && thread_count() > t.threads_before; wait++) usleep(100);
	uint64_t executions[VALIDATE_TRIP_POINTS] = { 0 };
	for (int i = 0; i < t.opened; i++)
		if (read(t.fds[i], &executions[i], sizeof executions[i]) != (ssize_t)sizeof executions[i]) {
			snprintf(m->why, sizeof m->why, "cannot read the breakpoint count: %s", strerror(errno));
			goto done;
		}
	if (t.points.trips) {
		m->counted_ok = t.points.trips(executions, t.points.parameters, &m->counted, m->why, sizeof m->why);
	} else {
		m->counted = executions[0];
		m->counted_ok = 1;
	}
done:
	for (int i = 0; i < t.opened; i++) close(t.fds[i]);
	(void)info;
}

int validate_check_trips(const validate_benchmark *benchmark, const validate_params *params,
                         uint64_t max_trips, validate_trip_check *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	out->benchmark = benchmark;
	out->size = params->size;
	if (!benchmark->expected_iterations) {
		out->state = VALIDATE_TRIPS_NOT_CHECKED;
		snprintf(out->reason, sizeof out->reason, "%s has no iteration model", benchmark->name);
		return 0;
	}
	out->expected = benchmark->expected_iterations(params);
	if (max_trips == 0) {
		out->state = VALIDATE_TRIPS_NOT_CHECKED;
		snprintf(out->reason, sizeof out->reason, "the iteration check is off (--check-trips 0)");
		return 0;
	}
	if (out->expected > max_trips) {
		out->state = VALIDATE_TRIPS_NOT_CHECKED;
		snprintf(out->reason, sizeof out->reason,
		         "%llu trips exceed the %llu the check counts (each trip traps into the kernel; "
		         "--check-trips raises it)", (unsigned long long)out->expected, (unsigned long long)max_trips);
		return 0;
	}
	trip_message m;
	run_argument argument = { benchmark, params, NULL };
	/* A breakpoint trap that the kernel's breakpoint handler does not
	 * claim reaches the program as SIGTRAP and ends the run: seen once in
	 * a full test run on a 2-vCPU KVM guest, with other processes'
	 * breakpoints switching in and out beside it, and not again in 70
	 * runs of the check.  The check is a run of its own, never a counted
	 * one: it is run again (three tries in all) rather than failed for a
	 * trap the loop did not cause. */
	for (int tries = 1;; tries++) {
		int died_of;
		if (in_child(trips_in_child, &argument, &m, sizeof m, &died_of, status) == 0)
			break;
		if (died_of != SIGTRAP || tries == VALIDATE_TRIP_TRIES)
			return -1;
	}
	if (m.unsupported) {
		out->state = VALIDATE_TRIPS_UNSUPPORTED;
		snprintf(out->reason, sizeof out->reason, "%s", m.why);
		return 0;
	}
	if (!m.ran) return plumb_fail(status, EIO, "%s: %s", benchmark->name, m.why);
	if (!m.counted_ok) {
		out->state = VALIDATE_TRIPS_MISMATCH;
		snprintf(out->reason, sizeof out->reason, "%s", m.why);
		return 0;
	}
	out->counted = m.counted;
	out->state = m.counted == out->expected ? VALIDATE_TRIPS_OK : VALIDATE_TRIPS_MISMATCH;
	if (out->state == VALIDATE_TRIPS_OK)
		snprintf(out->reason, sizeof out->reason, "counted by execute breakpoints in the kernel's loop");
	else
		snprintf(out->reason, sizeof out->reason, "the loop ran %llu trips, the model expects %llu",
		         (unsigned long long)m.counted, (unsigned long long)out->expected);
	return 0;
}

/* ---- probe: which events each source can count, and its empty-region bias ---- */

typedef struct probe_message {
	int opened[2];
	char backend_error[2][PLUMB_MESSAGE_MAX];
	int supported[2][VALIDATE_MAX_EVENTS];
	char reason[2][VALIDATE_MAX_EVENTS][COUNTER_REASON_MAX];
	double bias[2][VALIDATE_MAX_EVENTS];
} probe_message;

static void probe_in_child(void *argument, void *buffer)
{
	const validate_benchmark *benchmark = argument;
	probe_message *m = buffer;
	static const char *const backends[2] = { "perf", "papi" };
	for (int s = 0; s < 2; s++) {
		const char *names[VALIDATE_MAX_EVENTS];
		size_t n = (size_t)benchmark->event_count;
		for (size_t e = 0; e < n; e++) {
			names[e] = validate_native_event_name(&benchmark->events[e], s);
			m->bias[s][e] = NAN;
		}
		counter_set *set;
		plumb_status status;
		plumb_status_clear(&status);
		if (counter_set_open(&set, backends[s], names, n, NULL, &status) != 0) {
			snprintf(m->backend_error[s], sizeof m->backend_error[s], "%s", status.message);
			continue;
		}
		m->opened[s] = 1;
		bool any = false;
		for (size_t e = 0; e < n; e++) {
			const counter_value *opened = counter_set_opened(set, e);
			m->supported[s][e] = opened->state != COUNTER_UNSUPPORTED;
			any |= m->supported[s][e];
			snprintf(m->reason[s][e], sizeof m->reason[s][e], "%s", opened->reason);
		}
		counter_close(set);
		/* The interface's own bias: an empty region, 100 times. */
		counter_calibration calibration;
		if (any && counter_calibrate(backends[s], names, n, NULL, 100, &calibration, &status) == 0)
			for (size_t e = 0; e < n; e++)
				if (calibration.bias[e].state == COUNTER_OK) m->bias[s][e] = calibration.bias[e].mean;
	}
}

int validate_native_probe(const validate_benchmark *benchmark, validate_native_support *out,
                          plumb_status *status)
{
	probe_message m;
	if (in_child(probe_in_child, (void *)benchmark, &m, sizeof m, NULL, status) != 0) return -1;
	memset(out, 0, sizeof *out);
	for (int s = 0; s < 2; s++)
		for (int e = 0; e < benchmark->event_count; e++) {
			out->bias[s][e] = m.bias[s][e];
			if (!m.opened[s]) {
				snprintf(out->reason[s][e], sizeof out->reason[s][e], "%s", m.backend_error[s]);
				continue;
			}
			out->supported[s][e] = m.supported[s][e] != 0;
			snprintf(out->reason[s][e], sizeof out->reason[s][e], "%s", m.reason[s][e]);
		}
	return 0;
}
