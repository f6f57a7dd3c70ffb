/* False sharing: two threads each increment their own counter with an
 * atomic add (as shared statistics counters are), which must own the line
 * at that instant: plain increments would be absorbed by the store buffer
 * and store-to-load forwarding, hiding most of the effect.  When the
 * counters share a line, every increment needs the line Modified in its
 * core, so the line bounces between the cores; padded 256 bytes apart
 * (beyond the adjacent-line prefetch pair), each stays in its own L1.
 * Both threads run for the same wall-clock window; the stop flag sits on a
 * line of its own that is only read until the end. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "plumb/c2c.h"
#include "plumb/cpu.h"
#include "plumb/stats.h"

typedef struct sharing_area {
	_Alignas(256) _Atomic uint64_t counters[64];   /* [0] and [1] share a line; [0] and [32] do not */
	_Alignas(256) _Atomic int go;
	_Alignas(256) _Atomic int stop;
	_Alignas(256) _Atomic int ready;
} sharing_area;

typedef struct worker {
	sharing_area *area;
	int cpu, index;
	uint64_t updates;
	int failed;
	char error[PLUMB_MESSAGE_MAX];
} worker;

static void *worker_main(void *argument)
{
	worker *w = argument;
	plumb_status status;
	if (cpu_pin_self(w->cpu, &status) != 0) {
		snprintf(w->error, sizeof w->error, "%s", status.message);
		w->failed = 1;
		atomic_fetch_add(&w->area->ready, 1);
		return NULL;
	}
	atomic_fetch_add(&w->area->ready, 1);
	while (!atomic_load_explicit(&w->area->go, memory_order_acquire))
		if (atomic_load_explicit(&w->area->stop, memory_order_relaxed))
			return NULL;
		else
			sched_yield();
	_Atomic uint64_t *counter = &w->area->counters[w->index];
	uint64_t updates = 0;
	while (!atomic_load_explicit(&w->area->stop, memory_order_relaxed)) {
		/* 16 read-modify-writes of the counter per check of the flag. */
		for (int i = 0; i < 16; i++)
			atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
		updates += 16;
	}
	w->updates = updates;
	return NULL;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One window; returns ns per update per thread, or NaN with status. */
static double run_window(int cpu_a, int cpu_b, int second_index, uint64_t duration_ns, uint64_t timeout_ns,
                         uint64_t *total_updates, plumb_status *status)
{
	sharing_area *area = aligned_alloc(256, sizeof *area);
	if (!area) {
		plumb_fail(status, ENOMEM, "false sharing: out of memory");
		return NAN;
	}
	*area = (sharing_area){ 0 };
	worker workers[2] = { { .area = area, .cpu = cpu_a, .index = 0 },
	                      { .area = area, .cpu = cpu_b, .index = second_index } };
	pthread_t threads[2];
	int started = 0;
	double result = NAN;
	for (; started < 2; started++) {
		int rc = pthread_create(&threads[started], NULL, worker_main, &workers[started]);
		if (rc != 0) {
			plumb_fail_errno(status, rc, "false sharing: cannot start a thread");
			break;
		}
	}
	double begin_wait = now_s();
	while (started == 2 && atomic_load(&area->ready) < 2) {
		if ((now_s() - begin_wait) * 1e9 > (double)timeout_ns) {
			plumb_fail(status, ETIMEDOUT, "false sharing: threads did not start within %.0f ms", timeout_ns / 1e6);
			started = -started;
			break;
		}
		sched_yield();
	}
	if (started == 2 && !workers[0].failed && !workers[1].failed) {
		double begin = now_s();
		atomic_store_explicit(&area->go, 1, memory_order_release);
		struct timespec pause = { (time_t)(duration_ns / 1000000000u), (long)(duration_ns % 1000000000u) };
		nanosleep(&pause, NULL);
		atomic_store(&area->stop, 1);
		double elapsed = now_s() - begin;
		for (int i = 0; i < 2; i++)
			pthread_join(threads[i], NULL);
		started = 0;
		uint64_t total = workers[0].updates + workers[1].updates;
		*total_updates = total;
		if (total == 0)
			plumb_fail(status, ETIMEDOUT, "false sharing: the threads never ran (machine too busy?)");
		else
			result = elapsed * 1e9 / ((double)total / 2.0);
	} else if (started == 2) {
		plumb_fail(status, EINVAL, "false sharing: %s", workers[0].failed ? workers[0].error : workers[1].error);
	}
	atomic_store(&area->stop, 1);
	for (int i = 0; i < (started < 0 ? -started : started); i++)
		pthread_join(threads[i], NULL);
	free(area);
	return result;
}

int c2c_false_sharing(int cpu_a, int cpu_b, uint64_t duration_ns, int repeats, uint64_t timeout_ns,
                      c2c_false_sharing_result *out, plumb_status *status)
{
	if (cpu_a == cpu_b)
		return plumb_fail(status, EINVAL, "false sharing needs two different CPUs");
	if (repeats < 1 || repeats > 64 || duration_ns < 1000000)
		return plumb_fail(status, EINVAL, "false sharing: 1..64 repeats of at least 1 ms");
	double shared[64], padded[64];
	uint64_t shared_updates = 0, padded_updates = 0;
	/* Alternate the layouts so a burst of load from other programs hits both. */
	for (int r = 0; r < repeats; r++) {
		uint64_t n;
		shared[r] = run_window(cpu_a, cpu_b, 1, duration_ns, timeout_ns, &n, status);
		if (isnan(shared[r]))
			return -1;
		shared_updates += n;
		padded[r] = run_window(cpu_a, cpu_b, 32, duration_ns, timeout_ns, &n, status);
		if (isnan(padded[r]))
			return -1;
		padded_updates += n;
	}
	double shared_ns = stats_median(shared, (size_t)repeats), padded_ns = stats_median(padded, (size_t)repeats);
	*out = (c2c_false_sharing_result){ .shared_ns_per_update = shared_ns, .padded_ns_per_update = padded_ns,
	                                   .slowdown = shared_ns / padded_ns, .shared_updates = shared_updates,
	                                   .padded_updates = padded_updates, .repeats = repeats };
	return 0;
}
