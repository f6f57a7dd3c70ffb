/* The trace's threads on the simulated cores: each thread's slot (its
 * statistics) and its core, and the accessors of the threads seen. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_state.h"

#define MAX_THREAD_ID (1u << 20)

/* Thread -> core: in order of first appearance, then round-robin (or an
 * error, as in the thesis). */
int sim_thread_enter(sim *s, uint32_t thread, uint32_t *core, plumb_status *status)
{
	if (thread >= s->thread_capacity) {
		if (thread >= MAX_THREAD_ID)
			return plumb_fail(status, EINVAL, "thread id %u is too large (at most %u)", thread,
			                  MAX_THREAD_ID - 1);
		size_t capacity = s->thread_capacity ? s->thread_capacity : 16;
		while (capacity <= thread)
			capacity *= 2;
		sim_thread_slot *threads = realloc(s->threads, capacity * sizeof *threads);
		if (!threads)
			return plumb_fail_errno(status, ENOMEM, "thread table");
		memset(threads + s->thread_capacity, 0, (capacity - s->thread_capacity) * sizeof *threads);
		s->threads = threads;
		s->thread_capacity = capacity;
	}
	sim_thread_slot *slot = &s->threads[thread];
	if (!slot->used) {
		if (s->next_core >= s->config.cores && s->config.thread_map == SIM_MAP_ERROR)
			return plumb_fail(status, ERANGE, "thread %u is thread number %u, but the simulator has %u cores "
			                  "(thread_map = modulo folds them)", thread, s->next_core + 1, s->config.cores);
		slot->used = true;
		slot->stats.thread = thread;
		slot->stats.core = s->next_core % s->config.cores;
		s->next_core++;
	}
	*core = slot->stats.core;
	s->current_thread = &slot->stats;
	return 0;
}

size_t sim_thread_count(const sim *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->thread_capacity; i++)
		n += s->threads[i].used;
	return n;
}

const sim_thread_stats *sim_thread(const sim *s, size_t index)
{
	for (size_t i = 0; i < s->thread_capacity; i++) {
		if (!s->threads[i].used)
			continue;
		if (index-- == 0)
			return &s->threads[i].stats;
	}
	return NULL;
}
