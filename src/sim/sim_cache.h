/* One simulated cache (sim_cache.c), kept plain like cachegrind's: tags are
 * line addresses in one array per cache (set-major), with parallel arrays of
 * per-way metadata, so a hit is a short scan and a store. */
#ifndef PLUMB_SIM_CACHE_H
#define PLUMB_SIM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "sim/sim.h"
#include "sim/sim_shadow.h"

/* Per-way metadata byte: the coherence state in the low bits, then flags. */
#define META_STATE 0x07u
#define META_DIRTY 0x08u
#define META_PREFETCHED 0x10u

/* ----------------------------------------------------------------- cache */

/* LRU and FIFO keep each set's ways in order, most recent first, as
 * cachegrind does: a hit at the front costs one compare, the victim is the
 * last way, and no per-way stamps are needed (fewer host cache lines per
 * simulated set, which is what a big simulated L3 costs).  LRU moves a hit
 * to the front; FIFO only moves fills there.  Invalidated ways go to the
 * back, so they are filled first.  The other policies keep fixed ways.
 * Way indexes therefore change on touch and fill: both return the new one. */
typedef struct sim_cache {
	uint64_t *tags;         /* sets * assoc line addresses, SIM_NO_TAG = invalid */
	uint8_t *meta;          /* state | flags */
	uint8_t *rrpv;          /* SRRIP */
	uint64_t *plru;         /* tree bits per set */
	uint64_t sets, set_mask;
	uint32_t assoc;
	uint32_t line_bits;
	uint32_t assoc_bits;    /* log2(assoc) when assoc is a power of two, else 0 */
	bool assoc_power_of_two;
	bool sets_power_of_two;
	bool ordered;           /* LRU or FIFO: ways kept in recency / fill order */
	sim_replacement replacement;
	uint64_t random_state;
	size_t last_way;        /* the fast path's hint: the way of the last hit */
	bool present;
	/* classification (classify on) */
	bool classify;
	sim_shadow shadow;
	sim_lineset seen;       /* lines ever missed: compulsory misses */
} sim_cache;

int sim_cache_init(sim_cache *c, uint64_t size, uint32_t line, uint32_t assoc,
                   sim_replacement replacement, uint64_t seed, bool classify);
void sim_cache_free(sim_cache *c);

static inline uint64_t sim_cache_set(const sim_cache *c, uint64_t line)
{
	return c->sets_power_of_two ? (line & c->set_mask) : (line % c->sets);
}

/* Way index (absolute: set * assoc + way) or -1.  The scan exits early:
 * with LRU sets kept in recency order, a hit is usually in the first ways. */
static inline long sim_cache_find(const sim_cache *c, uint64_t line)
{
	size_t base = (size_t)sim_cache_set(c, line) * c->assoc;
	const uint64_t *tags = c->tags + base;
	for (uint32_t w = 0; w < c->assoc; w++)
		if (tags[w] == line)
			return (long)(base + w);
	return -1;
}

/* The first way of way's set (no division for power-of-two associativity). */
static inline size_t sim_cache_base(const sim_cache *c, size_t way)
{
	return c->assoc_power_of_two ? (way >> c->assoc_bits) << c->assoc_bits : way - way % c->assoc;
}

/* Moves way to the front of its set, keeping the order of the others. */
static inline size_t sim_cache_move_to_front(sim_cache *c, size_t way)
{
	size_t base = sim_cache_base(c, way);
	if (way == base)
		return way;
	uint64_t tag = c->tags[way];
	uint8_t meta = c->meta[way];
	if (way - base >= 4) {
		/* a fill at the back of a set (or a deep hit): one block copy each
		 * instead of a loop of unpredictable length */
		memmove(&c->tags[base + 1], &c->tags[base], (way - base) * sizeof *c->tags);
		memmove(&c->meta[base + 1], &c->meta[base], way - base);
	} else {
		for (size_t i = way; i > base; i--) {
			c->tags[i] = c->tags[i - 1];
			c->meta[i] = c->meta[i - 1];
		}
	}
	c->tags[base] = tag;
	c->meta[base] = meta;
	return base;
}

void sim_cache_touch_slow(sim_cache *c, size_t way);

/* A hit: updates the replacement state; returns the way's new index. */
static inline size_t sim_cache_touch(sim_cache *c, size_t way)
{
	if (c->replacement == SIM_LRU)
		return sim_cache_move_to_front(c, way);
	if (c->replacement == SIM_PLRU || c->replacement == SIM_SRRIP)
		sim_cache_touch_slow(c, way);
	return way;
}

/* Chooses the way to fill for line (an invalid one first); the caller
 * handles the victim in tags[way] (SIM_NO_TAG when none), then calls
 * sim_cache_fill, which returns the filled way's index.  LRU and FIFO (the
 * ordered sets, every preset) are decided here, inline, since every miss
 * at every level passes through; the other policies in sim_cache.c. */
size_t sim_cache_victim_unordered(sim_cache *c, uint64_t line);
void sim_cache_fill_unordered(sim_cache *c, size_t way);

static inline size_t sim_cache_victim(sim_cache *c, uint64_t line)
{
	if (c->ordered)   /* the back: invalid ways, else the oldest */
		return (size_t)sim_cache_set(c, line) * c->assoc + c->assoc - 1;
	return sim_cache_victim_unordered(c, line);
}

static inline size_t sim_cache_fill(sim_cache *c, size_t way, uint64_t line, uint8_t meta)
{
	c->tags[way] = line;
	c->meta[way] = meta;
	if (c->ordered)
		return sim_cache_move_to_front(c, way);
	sim_cache_fill_unordered(c, way);
	return way;
}

static inline void sim_cache_invalidate(sim_cache *c, size_t way)
{
	if (c->ordered) {
		/* to the back, so the next fill of the set takes it */
		size_t last = sim_cache_base(c, way) + c->assoc - 1;
		for (size_t i = way; i < last; i++) {
			c->tags[i] = c->tags[i + 1];
			c->meta[i] = c->meta[i + 1];
		}
		way = last;
	}
	c->tags[way] = SIM_NO_TAG;
	c->meta[way] = 0;
}

#endif
