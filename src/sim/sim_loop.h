/* The loops that feed references to the engine (sim_engine.c).  Each
 * variant lives in a file of its own; sim_loop_choose (sim.c) picks one for
 * records and one for plumbgrind's entries when the simulator is made, from
 * its configuration alone, and sim_access_batch and sim_access_compact call
 * the chosen ones.  Every variant counts exactly what the general loop
 * (sim_loop_general.c) counts; tests/unit/test_sim_fastpath.c and
 * test_sim_compact.c compare each with it.
 *
 *   records:  sim_loop_mru.c      LRU L1s with power-of-two sets, no classes or TLBs
 *             sim_loop_hint.c     TLBs, classification, other L1 policies
 *             sim_loop_general.c  --check, annotation
 *   entries:  sim_loop_compact.c  the same L1s as sim_loop_mru.c, no classes
 *             sim_loop_classify.c the same with classification
 *             sim_loop_general.c  everything else, expanded into records
 *
 * A new variant: a file of its own with a function of sim_batch_loop's or
 * sim_compact_loop's type, declared here, and a line in sim_loop_choose.
 *
 * sim_loop_choose also decides, once, which path the references the loops
 * leave to the engine take: with classification on one core without an L2
 * (cachegrind's machine), one-line references take sim_engine.c's
 * reference_single (s->single); tests/unit/test_sim_fastpath.c and
 * test_sim_compact.c compare it with the general path. */
#ifndef PLUMB_SIM_LOOP_H
#define PLUMB_SIM_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim_engine.h"
#include "sim/sim_state.h"

/* Picks s->batch_loop and s->compact_loop for the configuration (and for
 * annotation and s->narrow_sets: their setters call it again). */
void sim_loop_choose(sim *s);

/* sim_loop_general.c: every record through sim_reference (--check,
 * annotation); and plumbgrind's entries expanded into records. */
int sim_loop_general(sim *s, const trace_record *records, size_t n, plumb_status *status);
int sim_compact_expanded(sim *s, trace_compact *c, plumb_status *status);
/* sim_loop_hint.c: the last-way hint, with TLBs or classification or L1s
 * that are not LRU with power-of-two sets. */
int sim_loop_hint_plain(sim *s, const trace_record *records, size_t n, plumb_status *status);
int sim_loop_hint_tlb(sim *s, const trace_record *records, size_t n, plumb_status *status);
int sim_loop_hint_classify(sim *s, const trace_record *records, size_t n, plumb_status *status);
/* sim_loop_mru.c: LRU L1s with power-of-two sets, no classification or TLB;
 * _cut: with max_access_size. */
int sim_loop_mru(sim *s, const trace_record *records, size_t n, plumb_status *status);
int sim_loop_mru_cut(sim *s, const trace_record *records, size_t n, plumb_status *status);
/* sim_loop_compact.c and sim_loop_classify.c: plumbgrind's entries walked as
 * they are (the definitions made into ops, sim_program.c); _wide: 8-way L1
 * sets searched with AVX-512. */
int sim_compact_mru_narrow(sim *s, trace_compact *c, plumb_status *status);
int sim_compact_mru_wide(sim *s, trace_compact *c, plumb_status *status);
int sim_compact_classify_narrow(sim *s, trace_compact *c, plumb_status *status);
int sim_compact_classify_wide(sim *s, trace_compact *c, plumb_status *status);

/* A hit of an access of this kind in an LRU L1 needs (meta & need) == want
 * and sets dirty (the MRU loops' and plumbgrind's L1 filter's rule). */
void sim_mru_masks(sim_access_kind kind, bool write_back, uint8_t *need, uint8_t *want, uint8_t *dirty);
void sim_program_free(struct sim_program *p);

/* With several cores and Franz's ESI every write takes the general path. */
static inline bool sim_every_write_general(const sim *s)
{
	return s->config.cores > 1 && s->config.protocol == SIM_ESI;
}

/* The hit fast path: one line, in the L1, needing nothing else (a read of a
 * valid line, a write of a line held in M in a write-back L1).  The way of
 * the last hit is tried first: consecutive references mostly fall in the
 * same line, and the tag array stays the only truth (a reused way simply
 * fails the compare).  Everything else, and every reference when
 * classification or a TLB is on, takes sim_reference. */
static inline __attribute__((always_inline)) bool sim_fast_hit(sim *s, uint32_t core, sim_access_kind kind,
                                                               uint64_t address, uint32_t size)
{
	sim_level level = kind == SIM_IFETCH ? SIM_L1I : SIM_L1D;
	sim_cache *c = &s->core[core].cache[level];
	uint64_t line = address >> c->line_bits;
	if (((address + size - 1) >> c->line_bits) != line)
		return false;
	size_t w = c->last_way;
	bool hinted = c->tags[w] == line;
	if (!hinted) {
		long found = sim_cache_find(c, line);
		if (found < 0)
			return false;
		w = (size_t)found;
	}
	uint8_t meta = c->meta[w];
	if (kind == SIM_WRITE) {
		if ((meta & (META_STATE | META_PREFETCHED)) != SIM_STATE_M || !s->config.cache[SIM_L1D].write_back)
			return false;
		c->meta[w] = meta | META_DIRTY;
	} else if (meta & META_PREFETCHED) {
		return false;
	}
	/* an LRU hint is the front of its set already: nothing to move */
	if (!hinted || c->replacement != SIM_LRU)
		c->last_way = sim_cache_touch(c, w);
	s->stats.core[core].cache[level].accesses[kind]++;
	return true;
}

static inline __attribute__((always_inline)) void sim_one_reference(sim *s, uint32_t core, sim_access_kind kind,
                                                                uint64_t address, uint32_t size)
{
	s->stats.core[core].references[kind]++;
	if (s->current_thread)
		s->current_thread->references[kind]++;
	if (s->fast && size != 0 && sim_fast_hit(s, core, kind, address, size))
		return;
	sim_reference(s, core, kind, address, size);
}

#endif
