/* Ping-pong: A writes an odd number into a flag line, B waits for it and
 * answers with the next even number, A waits for that.  Each round trip
 * moves the line twice, each time Modified from one core to the other.
 * Waits are bounded so a descheduled partner gives an error, not a hang. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "coherence/c2c.h"
#include "core/cpu.h"
#include "core/stats.h"

typedef struct pingpong_shared {
	_Alignas(128) _Atomic uint64_t flag;
	_Alignas(128) _Atomic int abort;
	_Atomic int ready;
	int cpu_b;
	size_t round_trips;
	int rounds;
	uint64_t timeout_ns;
	char error[PLUMB_MESSAGE_MAX];
} pingpong_shared;

static uint64_t elapsed_ns(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - start->tv_sec) * 1000000000u + (uint64_t)(now.tv_nsec - start->tv_nsec);
}

/* Waits for flag == want; checks the clock only every 1024 spins so the
 * fast path stays a tight load loop. */
static int wait_for(pingpong_shared *shared, uint64_t want)
{
	struct timespec start;
	bool started = false;
	for (unsigned spins = 1;; spins++) {
		if (atomic_load_explicit(&shared->flag, memory_order_acquire) == want)
			return 0;
		cpu_relax();
		if (spins % 1024)
			continue;
		if (atomic_load_explicit(&shared->abort, memory_order_relaxed))
			return -1;
		if (!started) {
			clock_gettime(CLOCK_MONOTONIC, &start);
			started = true;
		} else if (elapsed_ns(&start) > shared->timeout_ns) {
			atomic_store(&shared->abort, 1);
			return -1;
		}
		if (spins > 1u << 20)
			sched_yield();   /* the partner may share our CPU for now */
	}
}

static void *partner_main(void *argument)
{
	pingpong_shared *shared = argument;
	plumb_status status;
	if (cpu_pin_self(shared->cpu_b, &status) != 0) {
		snprintf(shared->error, sizeof shared->error, "%s", status.message);
		atomic_store(&shared->abort, 1);
		return NULL;
	}
	atomic_store(&shared->ready, 1);
	uint64_t value = 0;
	for (int round = 0; round < shared->rounds; round++)
		for (size_t i = 0; i < shared->round_trips; i++) {
			value += 2;
			if (wait_for(shared, value - 1) != 0)
				return NULL;
			atomic_store_explicit(&shared->flag, value, memory_order_release);
		}
	return NULL;
}

int c2c_pingpong(int cpu_a, int cpu_b, size_t round_trips, int trials, uint64_t timeout_ns,
                 c2c_pingpong_result *out, plumb_status *status)
{
	if (cpu_a == cpu_b)
		return plumb_fail(status, EINVAL, "ping-pong needs two different CPUs");
	if (round_trips < 1 || trials < 1)
		return plumb_fail(status, EINVAL, "ping-pong: round trips and trials must be positive");
	pingpong_shared *shared = aligned_alloc(128, sizeof *shared);
	double *samples = malloc((size_t)(trials + 1) * sizeof *samples);
	if (!shared || !samples) {
		free(shared);
		free(samples);
		return plumb_fail(status, ENOMEM, "ping-pong: out of memory");
	}
	*shared = (pingpong_shared){ .cpu_b = cpu_b, .round_trips = round_trips, .rounds = trials + 1,
	                             .timeout_ns = timeout_ns };
	cpu_set_t saved;
	bool restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
	int rc = cpu_pin_self(cpu_a, status);
	pthread_t partner;
	if (rc == 0 && (rc = pthread_create(&partner, NULL, partner_main, shared)) != 0) {
		rc = plumb_fail_errno(status, rc, "ping-pong: cannot start the partner thread");
	} else if (rc == 0) {
		uint64_t value = 0;
		/* Round 0 warms up and is dropped. */
		for (int round = 0; round <= trials && rc == 0; round++) {
			struct timespec start;
			clock_gettime(CLOCK_MONOTONIC, &start);
			for (size_t i = 0; i < round_trips; i++) {
				value += 2;
				atomic_store_explicit(&shared->flag, value - 1, memory_order_release);
				if (wait_for(shared, value) != 0) {
					rc = shared->error[0]
					     ? plumb_fail(status, EINVAL, "ping-pong: %s", shared->error)
					     : plumb_fail(status, ETIMEDOUT, "ping-pong: CPU %d did not answer within %.0f ms "
					                  "(machine too busy?)", cpu_b, timeout_ns / 1e6);
					break;
				}
			}
			if (round > 0)
				samples[round - 1] = (double)elapsed_ns(&start) / (double)round_trips;
		}
		atomic_store(&shared->abort, 1);
		pthread_join(partner, NULL);
	}
	if (restore)
		pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
	if (rc == 0) {
		stats_summary summary;
		stats_summarize(samples, (size_t)trials, &summary);
		*out = (c2c_pingpong_result){ .median_ns = summary.median, .min_ns = summary.min, .trials = trials };
	}
	free(shared);
	free(samples);
	return rc == 0 ? 0 : -1;
}
