/* Visit orders for pointer-chase chains.
 *
 * A visit order is an array order[0..count-1] holding every slot index
 * 0..count-1 exactly once; a chain built from it links order[i] to
 * order[i+1] and the last back to the first, so it is one cycle through
 * every slot (no short cycles that would shrink the working set).
 *
 * - random: a uniformly random order (Fisher-Yates), so neither a stride
 *   nor a stream prefetcher can guess the next line;
 * - page-grouped: pages in random order, and all slots of a page, in random
 *   order, before the next page: one TLB miss per page at most, so cache
 *   misses can be told from TLB misses;
 * - strided: 0, s, 2s, ... then 1, 1+s, ...: a constant stride that the
 *   prefetchers can follow, to expose them.
 *
 * Orders are deterministic functions of (count, parameters, seed). */
#ifndef PLUMB_PERMUTATION_H
#define PLUMB_PERMUTATION_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "plumb/status.h"

/* Largest count an order can hold (indexes are 32-bit to halve the memory
 * of large orders). */
#define PERMUTATION_MAX_COUNT ((size_t)UINT32_MAX)

/* A small seeded generator (splitmix64): fast, and the same sequence on
 * every machine for a given seed. */
typedef struct permutation_rng {
	uint64_t state;
} permutation_rng;

void permutation_rng_seed(permutation_rng *rng, uint64_t seed);
uint64_t permutation_rng_next(permutation_rng *rng);
/* Uniform in [0, bound), bound >= 1, without modulo bias. */
uint64_t permutation_rng_below(permutation_rng *rng, uint64_t bound);

/* Each fills order[0..count-1]; count >= 1.  Return 0, or -1 with status. */
int permutation_random(uint32_t *order, size_t count, uint64_t seed, plumb_status *status);
/* slots_per_page >= 1; the last page may be partial. */
int permutation_page_grouped(uint32_t *order, size_t count, size_t slots_per_page, uint64_t seed,
                             plumb_status *status);
/* stride_slots >= 1; stride 1 is sequential. */
int permutation_strided(uint32_t *order, size_t count, size_t stride_slots, plumb_status *status);

/* True when order holds every index 0..count-1 exactly once. */
bool permutation_is_complete(const uint32_t *order, size_t count);

#endif
