/* Capacity sweep: chains of one pointer per line over growing working
 * sets.  The order is random inside 64 KiB groups and the groups come in
 * random order: as random as a full random chain for any prefetcher, but
 * a group's 16 pages stay in the first-level TLB while it is walked, so
 * TLB misses (which a VM's 4 KiB host pages cause whatever the guest maps)
 * add at most one per 64 loads and do not blur the cache steps.  The
 * dependence defeats out-of-order overlap, and 2 MiB pages keep the
 * guest's own page walks short.  Each latency step is a cache level
 * running out. */
#include <errno.h>
#include <math.h>
#include "plumb/arena.h"
#include "plumb/chase.h"
#include "probe/geometry_chain.h"

int geometry_probe_capacity(const geometry_options *options, uint64_t from, uint64_t to, int points_per_octave,
                            unsigned line, geometry_curve *curve, plumb_status *status)
{
	if (from < line || to < from || points_per_octave < 1 || line < sizeof(void *))
		return plumb_fail(status, EINVAL, "capacity sweep: need line <= from <= to and >= 1 point per octave");
	size_t n = (size_t)floor(log2((double)to / (double)from) * points_per_octave + 1e-9) + 1;
	if (geometry_curve_init(curve, n, status) != 0)
		return -1;
	arena buffer;
	arena_request request = { .size = to, .pages = ARENA_PAGES_THP, .fault = ARENA_FAULT_PREFAULT, .alignment = 2u << 20 };
	if (arena_create(&buffer, &request, status) != 0) {
		geometry_curve_free(curve);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t bytes = (uint64_t)llround((double)from * pow(2.0, (double)i / points_per_octave));
		bytes -= bytes % line;
		curve->x[i] = (double)bytes;
		chase_chain chain;
		chase_layout layout = { .pattern = CHASE_PAGE_GROUPED, .bytes = bytes, .slot_bytes = line, .page_bytes = 65536,
		                        .seed = options->seed + i };
		rc = chase_build_layout(&chain, buffer.base, buffer.size, &layout, status);
		if (rc == 0)
			rc = geometry_measure_chain(options, chain.start, chain.length, 1u << 18, curve, i, status);
	}
	arena_destroy(&buffer);
	if (rc != 0)
		geometry_curve_free(curve);
	return rc;
}
