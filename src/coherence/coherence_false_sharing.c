/* False sharing: two threads each increment their own counter with an
 * atomic add (as shared statistics counters are), which must own the line
 * at that instant: plain increments would be absorbed by the store buffer
 * and store-to-load forwarding, hiding most of the effect.  When the
 * counters share a line, every increment needs the line Modified in its
 * core, so the line bounces between the cores; padded 256 bytes apart
 * (beyond the adjacent-line prefetch pair), each stays in its own L1.
 * Both threads run for the same wall-clock window; the stop flag sits on a
 * line of its own that is only read until the end.
 *
 * On a busy machine the two threads are often not running at the same
 * time, and then there is nothing to bounce: a plain rate would drift
 * towards "no slowdown".  So each thread updates in bursts and counts a
 * burst only if the other thread finished a burst meanwhile (its progress
 * counter moved), i.e. only time when both were really running, and takes
 * the median burst, so a burst stretched by a preemption does not count. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "coherence/c2c.h"
#include "core/cpu.h"
#include "core/stats.h"

typedef struct sharing_area {
	_Alignas(256) _Atomic uint64_t counters[64];   /* [0] and [1] share a line; [0] and [32] do not */
	_Alignas(256) _Atomic int go;
	_Alignas(256) _Atomic int stop;
	_Alignas(256) _Atomic int ready;
	_Alignas(256) _Atomic uint64_t progress[2][32];   /* [i][0]: bursts done by thread i, own line */
} sharing_area;

#define BURST 256

typedef struct worker {
	sharing_area *area;
	int cpu, index;
	uint64_t updates;               /* all */
	uint64_t overlapped_updates;    /* in bursts while the other thread ran */
	uint32_t *bursts_ns;            /* durations of the overlapped bursts */
	size_t burst_count, burst_capacity;
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
	_Atomic uint64_t *mine = &w->area->progress[w->index != 0][0];
	_Atomic uint64_t *other = &w->area->progress[w->index == 0][0];
	uint64_t updates = 0, overlapped = 0;
	while (!atomic_load_explicit(&w->area->stop, memory_order_relaxed)) {
		uint64_t other_before = atomic_load_explicit(other, memory_order_relaxed);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < BURST; i++)
			atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		atomic_fetch_add_explicit(mine, 1, memory_order_relaxed);
		updates += BURST;
		if (atomic_load_explicit(other, memory_order_relaxed) != other_before) {
			overlapped += BURST;
			int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
			if (w->burst_count < w->burst_capacity)
				w->bursts_ns[w->burst_count++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
		}
	}
	w->updates = updates;
	w->overlapped_updates = overlapped;
	return NULL;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
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
	enum { CAPACITY = 1 << 18 };
	worker workers[2] = { { .area = area, .cpu = cpu_a, .index = 0, .burst_capacity = CAPACITY },
	                      { .area = area, .cpu = cpu_b, .index = second_index, .burst_capacity = CAPACITY } };
	uint32_t *bursts = malloc(sizeof(uint32_t) * 2 * CAPACITY);
	if (!bursts) {
		free(area);
		plumb_fail(status, ENOMEM, "false sharing: out of memory");
		return NAN;
	}
	workers[0].bursts_ns = bursts;
	workers[1].bursts_ns = bursts + CAPACITY;
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
		atomic_store_explicit(&area->go, 1, memory_order_release);
		struct timespec pause = { (time_t)(duration_ns / 1000000000u), (long)(duration_ns % 1000000000u) };
		nanosleep(&pause, NULL);
		atomic_store(&area->stop, 1);
		for (int i = 0; i < 2; i++)
			pthread_join(threads[i], NULL);
		started = 0;
		*total_updates = workers[0].updates + workers[1].updates;
		/* Both threads' overlapped bursts, side by side, for one median. */
		memmove(bursts + workers[0].burst_count, workers[1].bursts_ns, sizeof(uint32_t) * workers[1].burst_count);
		size_t n = workers[0].burst_count + workers[1].burst_count;
		if (n == 0) {
			plumb_fail(status, ETIMEDOUT, "false sharing: the two threads never ran at the same time "
			           "(machine too busy?)");
		} else {
			qsort(bursts, n, sizeof *bursts, compare_u32);
			result = (double)bursts[n / 2] / BURST;
		}
	} else if (started == 2) {
		plumb_fail(status, EINVAL, "false sharing: %s", workers[0].failed ? workers[0].error : workers[1].error);
	}
	atomic_store(&area->stop, 1);
	for (int i = 0; i < (started < 0 ? -started : started); i++)
		pthread_join(threads[i], NULL);
	free(bursts);
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
