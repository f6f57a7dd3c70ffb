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
 *   prefetchers can follow, to expose them;
 * - lmbench: lmbench 3's lat_mem_rd (lib_mem.c, line_initialize): pages in
 *   random order, and inside every page the slots in the bit-reversed order
 *   of their index (0, P/2, P/4, 3P/4, ...: lmbench's words_initialize),
 *   the same order in every page;
 * - backward: lmbench 2's lat_mem_rd: count-1, count-2, ..., 0, a constant
 *   backward stride (written "to defeat HP's fetch ahead");
 * - multichase's default (permutation.c, generate_chase) is page-grouped
 *   with 256 KiB groups of 256-byte slots, plus a word mixer that puts each
 *   slot's pointer at a random 8-byte word of the slot
 *   (permutation_word_mixer).
 *
 * Orders are deterministic functions of (count, parameters, seed). */
#ifndef PLUMB_PERMUTATION_H
#define PLUMB_PERMUTATION_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

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

/* slots_per_page a power of two; the last page may be partial (its slots
 * in the same bit-reversed order, skipping those past the end). */
int permutation_lmbench(uint32_t *order, size_t count, size_t slots_per_page, uint64_t seed, plumb_status *status);
/* count-1 down to 0. */
int permutation_backward(uint32_t *order, size_t count, plumb_status *status);
/* lmbench 3.0's thrash_initialize (lat_mem_rd -t): with P pages in random
 * order and n = slots_per_page (a power of two), round r = 0..n-1 visits
 * every page i = 0..P-1 at slot bit_reverse((i + r) mod n): each step on
 * another page.  A working set that is not whole pages is one bit-reversed
 * run over all its slots, as lmbench does, and needs a power-of-two count. */
int permutation_lmbench_thrash(uint32_t *order, size_t count, size_t slots_per_page, uint64_t seed,
                               plumb_status *status);
/* lmbench's words_initialize: the bits of index (below 2^bits) reversed. */
size_t permutation_bit_reverse(size_t index, unsigned bits);

/* multichase's mixer for one thread: the pointer of slot x sits at word
 * mixer[x % PERMUTATION_MIXER_SLOTS] of the slot, each entry uniform in
 * [0, words_per_slot) (multichase: the first index of 64 random
 * permutations of the slot's words).  Seeded from seed (decorrelated from
 * an order built with the same seed). */
#define PERMUTATION_MIXER_SLOTS 64
int permutation_word_mixer(uint32_t *mixer, size_t words_per_slot, uint64_t seed, plumb_status *status);

/* True when order holds every index 0..count-1 exactly once. */
bool permutation_is_complete(const uint32_t *order, size_t count);

#endif
