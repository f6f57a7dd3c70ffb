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
#include <sys/wait.h>
#include <unistd.h>
#include "plumb/interrupt.h"
#include "plumb/counters.h"
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
	validate_region region = { region_open, region_begin, region_end, &r };
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

/* Forks; the child runs fn(argument, buffer) and sends buffer back. */
static int in_child(void (*fn)(void *argument, void *buffer), void *argument, void *buffer,
                    size_t length, plumb_status *status)
{
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
		if (WIFSIGNALED(wait_status))
			return plumb_fail(status, EIO, "the run died of signal %d (%s)", WTERMSIG(wait_status),
			                  WTERMSIG(wait_status) == SIGALRM ? "timed out" : strsignal(WTERMSIG(wait_status)));
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
	if (in_child(run_in_child, &argument, &message, sizeof message, status) != 0) return -1;
	if (!message.ok) return plumb_fail(status, EIO, "%s: %s", benchmark->name, message.error);
	if (benchmark->expected_iterations && message.info.iterations != benchmark->expected_iterations(params))
		return plumb_fail(status, EIO, "%s: ran %llu iterations, the model expects %llu", benchmark->name,
		                  (unsigned long long)message.info.iterations,
		                  (unsigned long long)benchmark->expected_iterations(params));
	memcpy(values, message.values, sizeof message.values);
	if (states) memcpy(states, message.states, sizeof message.states);
	if (info) *info = message.info;
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
	if (in_child(probe_in_child, (void *)benchmark, &m, sizeof m, status) != 0) return -1;
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
