/* The private copies of a coherence line ("granule"): which ways hold it
 * and the core's coherence state for it.  The engine reads the state on
 * every write and miss, and the invariant checks (sim_check.c) read it too;
 * the checks sit below the engine (the engine calls sim_check_line), so the
 * state lookup sits below both, here.  It is inline, as it was inside
 * sim_engine.c, so the engine's calls stay inlined. */
#ifndef PLUMB_SIM_CORE_STATE_H
#define PLUMB_SIM_CORE_STATE_H

#include "sim/sim_state.h"
#include "sim/sim_prefetch.h"

/* Calls fn on each way of cache c holding a line inside the granule. */
#define FOR_LINES_IN_GRANULE(s, c, granule, way, body) do { \
		uint64_t first_ = ((granule) << (s)->granule_bits) >> (c)->line_bits; \
		uint64_t last_ = ((((granule) + 1) << (s)->granule_bits) - 1) >> (c)->line_bits; \
		for (uint64_t line_ = first_; line_ <= last_; line_++) { \
			long way = sim_cache_find((c), line_); \
			if (way >= 0) { body } \
		} \
	} while (0)

/* The core's coherence state for a granule (I when it holds no copy). */
static inline unsigned sim_core_state(const sim *s, uint32_t core, uint64_t granule)
{
	const sim_core *k = &s->core[core];
	if (s->has_l2) {
		long w = sim_cache_find(&k->cache[SIM_L2], granule);
		return w >= 0 ? (k->cache[SIM_L2].meta[w] & META_STATE) : SIM_STATE_I;
	}
	unsigned state = SIM_STATE_I;
	FOR_LINES_IN_GRANULE(s, &k->cache[SIM_L1D], granule, w, { state = (k->cache[SIM_L1D].meta[w] & META_STATE); });
	if (state != SIM_STATE_I)
		return state;
	FOR_LINES_IN_GRANULE(s, &k->cache[SIM_L1I], granule, w, { state = (k->cache[SIM_L1I].meta[w] & META_STATE); });
	if (state != SIM_STATE_I || !k->buffered)
		return state;
	return sim_stream_state(s, k, granule);   /* without an L2 the granule is one L1D line */
}

#endif
