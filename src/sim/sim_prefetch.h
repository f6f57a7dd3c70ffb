/* The prefetchers: each core's streams and stream buffers
 * (sim_prefetch_state.c), the policies above the engine (sim_prefetch.c)
 * and the engine's side of a prefetch (sim_engine.c). */
#ifndef PLUMB_SIM_PREFETCH_H
#define PLUMB_SIM_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim.h"

typedef struct sim_core sim_core;

/* Where a prefetch stream is: the last demand line that followed it, its
 * stride, and the furthest position examined for prefetching.  The stride
 * prefetcher keeps `depth` lines ahead of last_line in the L1D; a stream
 * buffer keeps them in its ring. */
typedef struct sim_stream_position {
	uint64_t last_line;
	int64_t stride;         /* in lines */
	uint64_t ahead;
	uint64_t last_use;
	bool valid;
} sim_stream_position;

/* A Jouppi stream buffer's FIFO: `depth` slots holding the lines fetched
 * ahead of its stream (position i of the core goes with buffer i).  Slots
 * run from `head` for `count` (ring order is stream order); a slot whose
 * line was taken away by coherence or an eviction below holds SIM_NO_TAG (a
 * hole).  The line's coherence state is the L2's when there is an L2, else
 * the slot's own `state`. */
typedef struct sim_stream_buffer {
	uint64_t *line;         /* depth slots */
	uint8_t *state;
	uint32_t head, count;
} sim_stream_buffer;

/* The prefetchers' entry points as the engine calls them.  The prefetchers
 * (sim_prefetch.c) issue their prefetches through the engine, so they sit
 * above it; the engine reaches them only through this table, which sim.c
 * (above both) sets, so no file calls back into one above it. */
typedef struct sim_prefetch_hooks {
	void (*after_miss)(sim *s, uint32_t core, uint64_t line);
	void (*after_prefetched_hit)(sim *s, uint32_t core, uint64_t line);
	bool (*stream_take)(sim *s, uint32_t core, uint64_t line, unsigned *state);
	void (*stream_after_hit)(sim *s, uint32_t core, uint64_t line);
} sim_prefetch_hooks;

/* sim_prefetch_state.c: the prefetchers' state each core owns. */
int sim_prefetch_init(sim *s, sim_core *core);
void sim_prefetch_free(sim_core *core);
/* The slot holding line in one of core's buffers (an index into
 * buffer_lines), or -1. */
long sim_stream_slot(const sim *s, const sim_core *k, uint64_t line);
/* The state of line in core's buffers (I when none holds it). */
unsigned sim_stream_state(const sim *s, const sim_core *k, uint64_t line);
/* Coherence and the L2 took the granule away: its buffered lines go. */
void sim_stream_remove_granule(sim *s, uint32_t core, uint64_t granule);
/* sim_prefetch.c: the prefetchers, above the engine.  The engine calls
 * them through s->prefetcher only (sim_prefetch_hooks). */
/* After a demand L1D miss of line (an L1D line number) that went below. */
void sim_prefetch_after_miss(sim *s, uint32_t core, uint64_t line);
/* After the first demand use of a line prefetched into the L1D. */
void sim_prefetch_after_prefetched_hit(sim *s, uint32_t core, uint64_t line);
/* Stream buffers.  An L1D miss of line: when a buffer holds it (at its head,
 * or anywhere with lookup = any), takes it out and gives its state; the
 * caller installs it in the L1D and calls sim_stream_after_hit once the
 * reference is complete. */
bool sim_stream_take(sim *s, uint32_t core, uint64_t line, unsigned *state);
void sim_stream_after_hit(sim *s, uint32_t core, uint64_t line);
/* The four above, as sim.c gives them to the engine (s->prefetcher). */
extern const sim_prefetch_hooks sim_prefetch_policy;
/* sim_engine.c: brings line (L1D line number) into core's L1D as a prefetch. */
void sim_prefetch_line(sim *s, uint32_t core, uint64_t line);
/* Fetches line below the L1 for a stream buffer; false when it is not
 * fetched (in the L1D already, held elsewhere with unshared_only, out of the
 * address space).  *state is the state the buffered copy gets. */
bool sim_prefetch_fetch(sim *s, uint32_t core, uint64_t line, unsigned *state);
/* A buffered line that leaves unused: with no L2 it may be the core's last copy. */
void sim_stream_release(sim *s, uint32_t core, uint64_t line, unsigned state);
bool sim_line_held_elsewhere(const sim *s, uint32_t core, uint64_t granule);

#endif
