/* The engine (sim_engine.c): one reference through the caches, coherence
 * and the TLBs, the general path every loop variant ends in; and the
 * invariant checks it calls (sim_check.c). */
#ifndef PLUMB_SIM_ENGINE_H
#define PLUMB_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim_state.h"

void sim_reference(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size);
/* The two halves of sim_reference: the TLB lookups, then the caches. */
void sim_tlb_reference(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size);
void sim_reference_caches(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size);
/* A one-line write hit of a line in M, classify on, several cores: the
 * words written, for true and false sharing. */
void sim_write_hit_words(sim *s, uint32_t core, uint64_t address, uint32_t size);
/* Whether a core other than core holds an invalidation record (classify
 * on): only then can a write be remembered for true and false sharing.
 * A single-threaded program never has one, so its write hits skip the
 * directory lookup. */
static inline bool sim_others_recorded(const sim *s, uint32_t core)
{
	for (uint32_t o = 0; o < s->config.cores; o++)
		if (o != core && s->core[o].invalidated.count)
			return true;
	return false;
}
/* sim_check.c: checks one line after a transaction (check on). */
void sim_check_line(sim *s, uint64_t granule);

#endif
