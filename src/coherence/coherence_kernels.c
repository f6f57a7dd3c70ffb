/* The timed accesses of `plumb c2c`.  Each one's latency must be exposed,
 * not overlapped:
 * - load, atomic add and CAS chain through the lines themselves: the value
 *   each returns is the next line's address, so the next access cannot start
 *   before this one completes (lock xadd of 0 and a lock cmpxchg that fails
 *   both return the old value, i.e. the pointer, and both take the line
 *   exclusively: a failed lock cmpxchg still writes the old value back);
 * - a store returns nothing to chain on, so each store is followed by
 *   mfence, which waits until the store is globally visible: its RFO and
 *   any invalidations have completed.  The addresses come from a list read
 *   sequentially from A's own cache (the list is in the visit order, so the
 *   lines themselves are still visited randomly).
 * Inline assembly pins the exact instructions; the compiler can neither
 * drop them nor turn the atomic of 0 into a plain load. */
#include "chase/chase.h"
#include "core/cpu.h"
#include "coherence/coherence.h"

static void *run_atomic_add(void *p, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		uintptr_t value = 0;
		__asm__ __volatile__("lock xaddq %0, (%1)" : "+r"(value) : "r"(p) : "memory");
		p = (void *)value;
	}
	return p;
}

static void *run_cas(void *p, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		/* expected = 0 never matches a pointer, so the CAS fails and loads
		 * the current value (the next pointer) into rax. */
		uintptr_t expected = 0, desired = 0;
		__asm__ __volatile__("lock cmpxchgq %2, (%1)" : "+a"(expected) : "r"(p), "r"(desired) : "memory", "cc");
		p = (void *)expected;
	}
	return p;
}

static void run_store(void *const *addresses, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		uintptr_t value = i;
		__asm__ __volatile__("movq %0, 8(%1)\n\tmfence" :: "r"(value), "r"(addresses[i]) : "memory");
	}
}

uint64_t coherence_time_access(const timer_calibration *timer, coherence_access access, void *start,
                               void *const *addresses, size_t count)
{
	void *p = start;
	uint64_t begin = timer_begin(timer);
	switch (access) {
	case COHERENCE_ACCESS_LOAD: p = chase_run(p, count); break;
	case COHERENCE_ACCESS_STORE: run_store(addresses, count); break;
	case COHERENCE_ACCESS_ATOMIC_ADD: p = run_atomic_add(p, count); break;
	case COHERENCE_ACCESS_CAS: p = run_cas(p, count); break;
	}
	uint64_t end = timer_end(timer);
	cpu_keep(p);
	return end - begin;
}
