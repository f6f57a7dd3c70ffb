/* rdpmc: reading a counter costs a few ns in user space instead of a system
 * call.  The kernel publishes what the read needs in the event's mmap page
 * and bumps page->lock around updates; a read that saw the lock change is
 * retried, as in the example of perf_event_open(2). */
#include "counters/rdpmc.h"

static inline uint64_t read_pmc(uint32_t counter)
{
	uint32_t low, high;
	__asm__ __volatile__("rdpmc" : "=a"(low), "=d"(high) : "c"(counter));
	return (uint64_t)high << 32 | low;
}

static inline uint64_t read_tsc(void)
{
	uint32_t low, high;
	__asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
	return (uint64_t)high << 32 | low;
}

void rdpmc_compute(const rdpmc_snapshot *s, uint64_t pmc, uint64_t tsc,
                   uint64_t *count, uint64_t *enabled, uint64_t *running)
{
	int64_t value = s->offset;
	if (s->index && s->pmc_width > 0 && s->pmc_width <= 64) {
		/* Counters are pmc_width bits wide (48 on most x86): sign-extend, so
		 * the kernel's negative offset and the raw value add up. */
		unsigned shift = 64u - s->pmc_width;
		int64_t extended = (int64_t)(pmc << shift) >> shift;
		value += extended;
	}
	*count = (uint64_t)value;
	*enabled = s->time_enabled;
	*running = s->time_running;
	if (s->cap_user_time && s->time_shift < 64) {
		/* ns = time_offset + tsc * time_mult >> time_shift, split to avoid overflow. */
		uint64_t quotient = tsc >> s->time_shift;
		uint64_t remainder = tsc & (((uint64_t)1 << s->time_shift) - 1);
		uint64_t delta = s->time_offset + quotient * s->time_mult +
		                 ((remainder * s->time_mult) >> s->time_shift);
		*enabled += delta;
		if (s->index)
			*running += delta;
	}
}

bool rdpmc_read(volatile struct perf_event_mmap_page *page, uint64_t *count,
                uint64_t *enabled, uint64_t *running)
{
	rdpmc_snapshot s;
	uint64_t pmc, tsc;
	uint32_t sequence;
	do {
		sequence = page->lock;
		__asm__ __volatile__("" ::: "memory");
		s.index = page->index;
		s.cap_user_rdpmc = page->cap_user_rdpmc;
		if (!s.cap_user_rdpmc || s.index == 0)
			return false;
		s.offset = page->offset;
		s.time_enabled = page->time_enabled;
		s.time_running = page->time_running;
		s.pmc_width = page->pmc_width;
		s.cap_user_time = page->cap_user_time;
		s.time_shift = page->time_shift;
		s.time_mult = page->time_mult;
		s.time_offset = page->time_offset;
		tsc = s.cap_user_time ? read_tsc() : 0;
		pmc = read_pmc(s.index - 1);
		__asm__ __volatile__("" ::: "memory");
	} while (page->lock != sequence);
	rdpmc_compute(&s, pmc, tsc, count, enabled, running);
	return true;
}
