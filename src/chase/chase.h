/* Pointer-chase chains and the timed dependent-load loops that walk them.
 *
 * A chain is laid out in caller-owned memory (an arena): one pointer per
 * slot (normally one cache line), each pointing at the next slot in a
 * visit order from plumb/permutation.h, the last back to the first.
 *
 * What the loops defeat:
 * - out-of-order overlap: every load's address is the value of the
 *   previous load (true data dependence), so at most one of them is in
 *   flight, and a load's full latency is on the critical path;
 * - the compiler: the loops are in their own translation unit, return the
 *   final pointer (so they cannot be removed), and each step is exactly one
 *   `mov (reg),reg`; the body is unrolled 16 times so the loop counter and
 *   branch (which do not depend on the chain) cost nothing next to the load
 *   latency.  The generated code is checked with objdump (docs/latency.md);
 * - prefetchers: by the visit order (random), not by the loop.
 *
 * chase_run_work() inserts k dependent ALU operations after each load
 * (restart latency, seed 001 section 3.3); chase_run_parallel() walks k
 * independent chains interleaved in one thread (memory-level parallelism). */
#ifndef PLUMB_CHASE_H
#define PLUMB_CHASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"
#include "core/timer.h"

typedef struct chase_chain {
	void *start;        /* address of the first pointer of the cycle */
	size_t length;      /* pointers (loads) in one lap */
	size_t slot_bytes;  /* distance between slots */
	size_t offset;      /* byte offset of the pointer inside its slot */
	size_t footprint;   /* bytes from the base the slots span: length * slot_bytes */
} chase_chain;

/* Lays out a chain over count slots of slot_bytes at base (capacity bytes),
 * in the given visit order; the pointer sits offset bytes into its slot.
 * slot_bytes >= sizeof(void *), offset + sizeof(void *) <= slot_bytes,
 * offset aligned to sizeof(void *), count * slot_bytes <= capacity. */
int chase_build(chase_chain *chain, void *base, size_t capacity, size_t slot_bytes, size_t offset,
                const uint32_t *order, size_t count, plumb_status *status);

typedef enum chase_pattern {
	CHASE_RANDOM,        /* random single cycle over all slots */
	CHASE_PAGE_GROUPED,  /* random pages; all slots of a page (random order) before the next */
	CHASE_STRIDED,       /* constant stride: exposes the prefetchers */
	CHASE_LMBENCH,       /* lmbench's line_initialize (its line-size probe): random pages, the
	                        slots of a page in bit-reversed order before the next page */
	CHASE_BACKWARD,      /* lmbench 2's lat_mem_rd: a backward walk, one slot (its stride) at a time */
	CHASE_MULTICHASE,    /* multichase's default: page-grouped (page_bytes = its 256 KiB "TLB
	                        locality"), the pointer at a random word of each slot (its mixer) */
	CHASE_FORWARD,       /* lmbench 3.0's lat_mem_rd: a forward walk, one slot (its stride) at a time */
	CHASE_LMBENCH_THRASH /* lmbench 3.0's lat_mem_rd -t: a new random page at every step, round
	                        after round, the slot in each page turning through bit-reversed order */
} chase_pattern;

typedef struct chase_layout {
	chase_pattern pattern;
	size_t bytes;         /* working set: the chain spans bytes / slot_bytes slots */
	size_t slot_bytes;    /* usually the cache line size */
	size_t offset;        /* pointer offset inside its slot (0 = first word) */
	size_t page_bytes;    /* CHASE_PAGE_GROUPED, CHASE_LMBENCH, CHASE_LMBENCH_THRASH, CHASE_MULTICHASE:
	                       * the page (group) */
	size_t stride_bytes;  /* CHASE_STRIDED: a multiple of slot_bytes */
	uint64_t seed;        /* random patterns */
} chase_layout;

/* Builds the visit order for the layout (temporary memory) and the chain.
 * CHASE_MULTICHASE ignores offset: slot x's pointer sits at word
 * mixer[x % 64] of the slot (permutation_word_mixer with the layout's
 * seed); chain->offset is then the first slot's. */
int chase_build_layout(chase_chain *chain, void *base, size_t capacity, const chase_layout *layout,
                       plumb_status *status);
const char *chase_pattern_name(chase_pattern pattern);

/* Follows the chain from its start until it returns there, at most
 * limit steps; returns the number of steps (the cycle length), or 0 if it
 * did not return within limit steps.  A correct chain gives chain->length. */
size_t chase_cycle_length(const chase_chain *chain, size_t limit);

/* The dependent-load loop: `loads` loads starting at position; returns
 * where it stopped (pass it back in to continue along the chain). */
void *chase_run(void *position, size_t loads);

/* Times `loads` dependent loads from *position (advancing it) and returns
 * the elapsed time in timer ticks (TSC ticks or ns, as calibrated),
 * including the timer's own overhead. */
uint64_t chase_time_ticks(const timer_calibration *timer, void **position, size_t loads);

/* Restart-latency kernel: after each load, `work` dependent adds of an
 * opaque zero (`zero` must be 0 at run time; the compiler cannot know)
 * to the loaded pointer, so the next load's address depends on the work.
 * Only the work counts listed by chase_work_counts() are compiled in. */
void *chase_run_work(void *position, size_t loads, unsigned work, uintptr_t zero);
/* The compiled work counts, ascending; *count receives their number. */
const unsigned *chase_work_counts(size_t *count);
bool chase_work_supported(unsigned work);
/* A chain of `adds` dependent adds with no loads, for calibrating the cost
 * of one work unit (one ALU latency, so one core clock on current CPUs). */
uintptr_t chase_run_adds(uintptr_t value, size_t adds, uintptr_t zero);

/* Memory-level parallelism: walks `chains` independent chains at once,
 * advancing positions[0..chains-1] by `steps` loads each (chains * steps
 * loads in all).  1 <= chains <= CHASE_MAX_PARALLEL. */
#define CHASE_MAX_PARALLEL 32
int chase_run_parallel(void **positions, unsigned chains, size_t steps);
/* Spreads `count` positions evenly along one chain (which must be at
 * least `count` long): positions[j] is (length / count) * j loads from the
 * start.  Walks the chain once. */
int chase_spread_positions(const chase_chain *chain, void **positions, size_t count, plumb_status *status);

#endif
