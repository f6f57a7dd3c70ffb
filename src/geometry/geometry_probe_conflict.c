/* Associativity: count lines spaced `stride` bytes apart, where stride is
 * a multiple of the level's way size (its capacity will do), so every one
 * of them maps to the same set of that level, and of every smaller level
 * whose way size divides the stride.  Walked as a random cycle: while
 * count <= ways they all stay cached; one more and each load misses that
 * level (with LRU-like replacement).  2 MiB pages keep the set-index bits
 * of physical and virtual addresses equal up to 2 MiB strides, and keep
 * the few pages in the TLB. */
#include <errno.h>
#include <stdlib.h>
#include "core/arena.h"
#include "chase/permutation.h"
#include "geometry/geometry_chain.h"

int geometry_probe_conflict(const geometry_options *options, uint64_t stride, unsigned max_count,
                            geometry_curve *curve, plumb_status *status)
{
	if (stride < 64 || stride % 64 != 0 || max_count < 2 || max_count > 4096)
		return plumb_fail(status, EINVAL, "conflict probe: stride %llu, count %u not supported",
		                  (unsigned long long)stride, max_count);
	if (geometry_curve_init(curve, max_count, status) != 0)
		return -1;
	arena buffer;
	/* Only max_count lines are ever touched, one 2 MiB page each: a
	 * stride of a 260 MiB L3's 512 MiB spans 20 GiB of address space, which
	 * the kernel reserves nothing for (MAP_NORESERVE), and was refused as
	 * if it had to be resident. */
	arena_request request = { .size = stride * max_count, .pages = ARENA_PAGES_THP,
	                          .fault = ARENA_FAULT_FIRST_TOUCH, .alignment = 2u << 20,
	                          .touched = (size_t)max_count * (2u << 20) };
	uint32_t *order = malloc(max_count * sizeof *order);
	void ***slots = malloc(max_count * sizeof *slots);
	if (!order || !slots || arena_create(&buffer, &request, status) != 0) {
		free(order);
		free(slots);
		geometry_curve_free(curve);
		return order && slots ? -1 : plumb_fail(status, ENOMEM, "out of memory");
	}
	int rc = 0;
	for (unsigned count = 1; count <= max_count && rc == 0; count++) {
		curve->x[count - 1] = count;
		rc = permutation_random(order, count, options->seed + count, status);
		if (rc != 0)
			break;
		for (unsigned k = 0; k < count; k++)
			slots[k] = (void **)((char *)buffer.base + (size_t)k * stride);
		void *start = geometry_link((void **const *)slots, order, count);
		rc = geometry_measure_chain(options, start, count, 64 * (size_t)count, curve, count - 1, status);
	}
	arena_destroy(&buffer);
	free(order);
	free(slots);
	if (rc != 0)
		geometry_curve_free(curve);
	return rc;
}
