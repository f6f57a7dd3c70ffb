/* Line size: a random chain through 512-byte blocks, making two loads in
 * each block, d bytes apart.  The first load of a block misses L1: the
 * block starts are 512 bytes apart, so they all fall into 8 of the 64 L1
 * sets, far more lines than those sets hold.  The second load hits the
 * line the first brought in while d is below the line size, and misses
 * too from the line size on.  Blocks are visited in random order (no
 * stride for a prefetcher), and the whole span (blocks x 512 bytes) stays
 * within the first-level TLB's reach (64 x 4 KiB pages by default), so TLB
 * misses, which a VM's host pages cause whatever the guest maps, do not
 * blur the step. */
#include <errno.h>
#include <stdlib.h>
#include "core/arena.h"
#include "chase/permutation.h"
#include "geometry/geometry_chain.h"

#define BLOCK 512u

int geometry_probe_line(const geometry_options *options, uint64_t footprint, unsigned max_distance,
                        geometry_curve *curve, plumb_status *status)
{
	if (max_distance < 16 || max_distance > BLOCK / 2)
		return plumb_fail(status, EINVAL, "line probe: distance up to %u is not supported", max_distance);
	size_t blocks = footprint / BLOCK;
	if (blocks < 64)
		return plumb_fail(status, EINVAL, "line probe: a %llu-byte working set is too small",
		                  (unsigned long long)footprint);
	size_t n = 0;
	for (unsigned d = 8; d <= max_distance; d *= 2)
		n++;
	if (geometry_curve_init(curve, n, status) != 0)
		return -1;
	arena buffer;
	arena_request request = { .size = blocks * BLOCK, .pages = ARENA_PAGES_THP, .fault = ARENA_FAULT_PREFAULT,
	                          .alignment = 2u << 20 };
	uint32_t *order = malloc(blocks * sizeof *order);
	void ***slots = malloc(2 * blocks * sizeof *slots);
	if (!order || !slots || arena_create(&buffer, &request, status) != 0) {
		free(order);
		free(slots);
		geometry_curve_free(curve);
		return order && slots ? -1 : plumb_fail(status, ENOMEM, "out of memory");
	}
	int rc = 0;
	size_t i = 0;
	for (unsigned d = 8; d <= max_distance && rc == 0; d *= 2, i++) {
		curve->x[i] = d;
		rc = permutation_random(order, blocks, options->seed + d, status);
		if (rc != 0)
			break;
		/* The chain: block order[0] first load, its second load, then
		 * block order[1]'s first load, ... */
		char *base = buffer.base;
		for (size_t k = 0; k < blocks; k++) {
			char *first = base + (size_t)order[k] * BLOCK;
			slots[2 * k] = (void **)first;
			slots[2 * k + 1] = (void **)(first + d);
		}
		void *start = geometry_link((void **const *)slots, NULL, 2 * blocks);
		rc = geometry_measure_chain(options, start, 2 * blocks, 2 * blocks, curve, i, status);
	}
	arena_destroy(&buffer);
	free(order);
	free(slots);
	if (rc != 0)
		geometry_curve_free(curve);
	return rc;
}
