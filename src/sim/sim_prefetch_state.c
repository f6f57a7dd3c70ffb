/* The prefetchers' state: the stride trackers and stream buffers each core
 * owns (sim_prefetch_init, sim_prefetch_free), and the lookups the engine
 * makes of the buffers when coherence or the L2 takes a line away.  Below
 * both the engine and the prefetchers (sim_prefetch.c): nothing here calls
 * either. */
#include <stdlib.h>
#include "sim/sim_state.h"

int sim_prefetch_init(sim *s, sim_core *core)
{
	const sim_prefetch_config *p = &s->config.prefetch;
	if (p->kind != SIM_PREFETCH_STRIDE && p->kind != SIM_PREFETCH_STREAM)
		return 0;
	core->streams = calloc(p->streams, sizeof *core->streams);
	if (!core->streams)
		return -1;
	if (p->kind != SIM_PREFETCH_STREAM)
		return 0;
	size_t slots = (size_t)p->streams * p->depth;
	core->buffers = calloc(p->streams, sizeof *core->buffers);
	core->buffer_lines = malloc(slots * sizeof *core->buffer_lines);
	core->buffer_states = calloc(slots, 1);
	if (!core->buffers || !core->buffer_lines || !core->buffer_states)
		return -1;
	for (size_t i = 0; i < slots; i++)
		core->buffer_lines[i] = SIM_NO_TAG;
	for (uint32_t b = 0; b < p->streams; b++) {
		core->buffers[b].line = core->buffer_lines + (size_t)b * p->depth;
		core->buffers[b].state = core->buffer_states + (size_t)b * p->depth;
	}
	return 0;
}

void sim_prefetch_free(sim_core *core)
{
	free(core->streams);
	free(core->buffers);
	free(core->buffer_lines);
	free(core->buffer_states);
	core->streams = NULL;
	core->buffers = NULL;
	core->buffer_lines = NULL;
	core->buffer_states = NULL;
}

long sim_stream_slot(const sim *s, const sim_core *k, uint64_t line)
{
	if (!k->buffered)
		return -1;
	/* slots outside every buffer's [head, head + count) hold SIM_NO_TAG,
	 * so the flat array can be scanned whatever the rings' positions */
	size_t slots = (size_t)s->config.prefetch.streams * s->config.prefetch.depth;
	for (size_t i = 0; i < slots; i++)
		if (k->buffer_lines[i] == line)
			return (long)i;
	return -1;
}

unsigned sim_stream_state(const sim *s, const sim_core *k, uint64_t line)
{
	long slot = sim_stream_slot(s, k, line);
	return slot >= 0 ? k->buffer_states[slot] : SIM_STATE_I;
}

void sim_stream_remove_granule(sim *s, uint32_t core, uint64_t granule)
{
	sim_core *k = &s->core[core];
	if (!k->buffered)
		return;
	unsigned shift = s->granule_bits - k->cache[SIM_L1D].line_bits;
	size_t slots = (size_t)s->config.prefetch.streams * s->config.prefetch.depth;
	for (size_t i = 0; i < slots; i++)
		if (k->buffer_lines[i] != SIM_NO_TAG && (k->buffer_lines[i] >> shift) == granule) {
			k->buffer_lines[i] = SIM_NO_TAG;
			k->buffered--;
			s->stats.core[core].prefetch.dropped_invalidated++;
		}
}
