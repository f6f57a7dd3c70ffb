/* User-space counter reads (rdpmc) through the perf mmap page. */
#ifndef PLUMB_COUNTERS_RDPMC_H
#define PLUMB_COUNTERS_RDPMC_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* One consistent copy of the fields of struct perf_event_mmap_page that a
 * read needs, taken under its seqlock. */
typedef struct rdpmc_snapshot {
	uint32_t index;          /* hardware counter + 1; 0: not on a counter now */
	int64_t offset;
	uint64_t time_enabled, time_running;
	uint16_t pmc_width;
	bool cap_user_rdpmc, cap_user_time;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_offset;
} rdpmc_snapshot;

/* The count and times the kernel would report, given the snapshot, the raw
 * value rdpmc returned and the TSC at the read.  Pure arithmetic (sign
 * extension of a pmc_width-bit counter; TSC to ns) so it is unit-tested on
 * a machine without a PMU. */
void rdpmc_compute(const rdpmc_snapshot *snapshot, uint64_t pmc, uint64_t tsc,
                   uint64_t *count, uint64_t *enabled, uint64_t *running);

/* Reads a counter from its mmap page.  Returns false (and reads nothing
 * else) when rdpmc cannot be used: the kernel does not allow it
 * (cap_user_rdpmc 0, /sys/bus/event_source/devices/cpu/rdpmc = 0) or the
 * event is not on a hardware counter (index 0: software events, or a
 * descheduled event). */
bool rdpmc_read(volatile struct perf_event_mmap_page *page, uint64_t *count,
                uint64_t *enabled, uint64_t *running);

#endif
