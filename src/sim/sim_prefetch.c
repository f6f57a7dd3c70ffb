/* Data prefetchers of the L1D.
 * - next-line: a demand miss on line X, or the first use of a prefetched X,
 *   prefetches X + 1 into the L1D (tagged prefetching, Smith 1982);
 * - stride: `streams` trackers, each following a demand stream with its
 *   stride and keeping `depth` lines ahead of it in the L1D (what today's L1
 *   stride prefetchers do);
 * - stream: Jouppi's stream buffers (1990), generalised to strides as
 *   Palacharla and Kessler did (1994).  `streams` FIFOs of `depth` lines sit
 *   beside the L1D.  An L1D miss is compared with each buffer's head (or
 *   every entry, lookup = any); a match moves the line into the L1D, is not
 *   an L1D miss, and the buffer fetches one more line at its tail.  A miss
 *   no buffer holds restarts a buffer: the one whose stream it continues
 *   (within 8 lines; its stride is retrained), else the least recently
 *   used one, at stride 1.
 * Prefetched lines come through the normal read path below the L1 (bus
 * reads; they may downgrade another core's copy, which is what seed 000's
 * "shared data is not prefetched" hypothesis is about).  A buffered line is
 * a private copy for coherence: another core's write or the L2 losing it
 * takes it out of the buffer (dropped_invalidated). */
#include <stdlib.h>
#include "sim/sim_internal.h"

int sim_prefetch_init(sim *s, sim_core *core)
{
	const sim_prefetch_config *p = &s->config.prefetch;
	if (p->kind == SIM_PREFETCH_STRIDE) {
		core->trackers = calloc(p->streams, sizeof *core->trackers);
		return core->trackers ? 0 : -1;
	}
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
	free(core->trackers);
	free(core->buffers);
	free(core->buffer_lines);
	free(core->buffer_states);
	core->trackers = NULL;
	core->buffers = NULL;
	core->buffer_lines = NULL;
	core->buffer_states = NULL;
}

/* ------------------------------------------------------ stride trackers */

static void tracker_top_up(sim *s, uint32_t core, sim_stride_tracker *t)
{
	int64_t depth = s->config.prefetch.depth;
	for (;;) {
		int64_t distance = ((int64_t)(t->ahead - t->last_line)) / t->stride;
		if (distance >= depth)
			break;
		t->ahead += (uint64_t)t->stride;
		sim_prefetch_line(s, core, t->ahead);
	}
}

/* The tracker whose window (last_line, ahead] holds line, or NULL. */
static sim_stride_tracker *tracker_find(sim *s, sim_core *k, uint64_t line)
{
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stride_tracker *t = &k->trackers[i];
		if (!t->valid)
			continue;
		int64_t offset = (int64_t)(line - t->last_line);
		if (t->stride != 0 && offset % t->stride == 0 && offset / t->stride >= 1 &&
		    offset / t->stride <= (int64_t)s->config.prefetch.depth + 1)
			return t;
	}
	return NULL;
}

static void tracker_advance(sim *s, uint32_t core, sim_stride_tracker *t, uint64_t line)
{
	t->last_line = line;
	t->last_use = ++s->core[core].stream_clock;
	/* restart the window when it is behind the demand stream or off its
	 * stride (after the stride changed) */
	int64_t offset = (int64_t)(t->ahead - line);
	if (offset / t->stride <= 0 || offset % t->stride != 0)
		t->ahead = line;
	tracker_top_up(s, core, t);
}

/* A miss near a stream's last line (within 8 lines) retrains the stride of
 * the tracker or buffer following it. */
#define TRAIN_DISTANCE 8

static void tracker_after_miss(sim *s, uint32_t core, uint64_t line)
{
	sim_core *k = &s->core[core];
	sim_stride_tracker *near = NULL;
	int64_t best = TRAIN_DISTANCE + 1;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stride_tracker *t = &k->trackers[i];
		if (!t->valid)
			continue;
		int64_t delta = (int64_t)(line - t->last_line);
		int64_t distance = delta < 0 ? -delta : delta;
		if (distance <= TRAIN_DISTANCE && distance < best) {
			best = distance;
			near = t;
		}
	}
	if (near) {
		int64_t delta = (int64_t)(line - near->last_line);
		if (delta != 0)
			near->stride = delta;
		tracker_advance(s, core, near, line);
		return;
	}
	sim_stride_tracker *victim = &k->trackers[0];
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stride_tracker *t = &k->trackers[i];
		if (!t->valid) {
			victim = t;
			break;
		}
		if (t->last_use < victim->last_use)
			victim = t;
	}
	victim->valid = true;
	victim->stride = 1;
	victim->ahead = line;
	tracker_advance(s, core, victim, line);
}

/* -------------------------------------------------------- stream buffers */

static inline uint32_t slot_at(const sim *s, const sim_stream_buffer *b, uint32_t i)
{
	uint32_t x = b->head + i, depth = s->config.prefetch.depth;
	return x >= depth ? x - depth : x;
}

uint64_t *sim_stream_find(const sim *s, sim_core *k, uint64_t line, uint8_t **state)
{
	if (!k->buffered)
		return NULL;
	/* slots outside every buffer's [head, head + count) hold SIM_NO_TAG,
	 * so the flat array can be scanned whatever the rings' positions */
	size_t slots = (size_t)s->config.prefetch.streams * s->config.prefetch.depth;
	for (size_t i = 0; i < slots; i++)
		if (k->buffer_lines[i] == line) {
			if (state)
				*state = &k->buffer_states[i];
			return &k->buffer_lines[i];
		}
	return NULL;
}

unsigned sim_stream_state(const sim *s, const sim_core *k, uint64_t line)
{
	if (!k->buffered)
		return SIM_STATE_I;
	size_t slots = (size_t)s->config.prefetch.streams * s->config.prefetch.depth;
	for (size_t i = 0; i < slots; i++)
		if (k->buffer_lines[i] == line)
			return k->buffer_states[i];
	return SIM_STATE_I;
}

/* Empties slot i (a ring position) of b; the line leaves unused. */
static void slot_discard(sim *s, uint32_t core, sim_stream_buffer *b, uint32_t slot)
{
	uint64_t line = b->line[slot];
	if (line == SIM_NO_TAG)
		return;
	b->line[slot] = SIM_NO_TAG;
	s->core[core].buffered--;
	s->stats.core[core].prefetch.dropped_unused++;
	sim_stream_release(s, core, line, b->state[slot]);
}

static void buffer_pop(sim *s, uint32_t core, sim_stream_buffer *b)
{
	slot_discard(s, core, b, b->head);
	b->head = slot_at(s, b, 1);
	b->count--;
}

/* Keeps the buffer `depth` positions ahead of its stream: each new position
 * is fetched unless the L1D or a buffer has it already (or unshared_only
 * skips it). */
static void buffer_top_up(sim *s, uint32_t core, sim_stream_buffer *b)
{
	sim_core *k = &s->core[core];
	int64_t depth = s->config.prefetch.depth;
	for (;;) {
		int64_t distance = ((int64_t)(b->ahead - b->last_line)) / b->stride;
		if (distance >= depth)
			break;
		b->ahead += (uint64_t)b->stride;
		uint64_t line = b->ahead;
		unsigned state;
		if (sim_stream_find(s, k, line, NULL) || !sim_prefetch_fetch(s, core, line, &state))
			continue;
		if (b->count == (uint32_t)depth)
			buffer_pop(s, core, b);
		uint32_t slot = slot_at(s, b, b->count);
		b->line[slot] = line;
		b->state[slot] = (uint8_t)state;
		b->count++;
		k->buffered++;
		if (s->config.check)
			sim_check_line(s, line >> (s->granule_bits - k->cache[SIM_L1D].line_bits));
	}
}

static void buffer_restart(sim *s, uint32_t core, sim_stream_buffer *b, uint64_t line, int64_t stride)
{
	while (b->count)
		buffer_pop(s, core, b);
	b->head = 0;
	b->valid = true;
	b->stride = stride;
	b->last_line = line;
	b->ahead = line;
	b->last_use = ++s->core[core].stream_clock;
	s->stats.core[core].prefetch.allocations++;
	buffer_top_up(s, core, b);
}

bool sim_stream_take(sim *s, uint32_t core, uint64_t line, unsigned *state)
{
	sim_core *k = &s->core[core];
	if (!k->buffered)
		return false;
	bool any = s->config.prefetch.lookup == SIM_LOOKUP_ANY;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream_buffer *b = &k->buffers[i];
		/* holes at the head (lines taken away by coherence) are skipped,
		 * so the head is the oldest line still there */
		while (b->count && b->line[b->head] == SIM_NO_TAG) {
			b->head = slot_at(s, b, 1);
			b->count--;
		}
		uint32_t n = any ? b->count : (b->count ? 1 : 0), j = 0;
		while (j < n && b->line[slot_at(s, b, j)] != line)
			j++;
		if (j == n)
			continue;
		while (j--)
			buffer_pop(s, core, b);   /* passed over: the stream skipped them */
		uint32_t slot = b->head;
		*state = s->has_l2 ? sim_core_state(s, core, line >> (s->granule_bits - k->cache[SIM_L1D].line_bits))
		                   : b->state[slot];
		b->line[slot] = SIM_NO_TAG;
		b->head = slot_at(s, b, 1);
		b->count--;
		k->buffered--;
		b->last_line = line;
		b->last_use = ++k->stream_clock;
		sim_prefetch_stats *ps = &s->stats.core[core].prefetch;
		ps->stream_hits++;
		ps->useful++;
		return true;
	}
	return false;
}

void sim_stream_after_hit(sim *s, uint32_t core, uint64_t line)
{
	sim_core *k = &s->core[core];
	sim_stream_buffer *latest = NULL;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream_buffer *b = &k->buffers[i];
		if (b->valid && b->last_line == line && (!latest || b->last_use > latest->last_use))
			latest = b;
	}
	if (latest)
		buffer_top_up(s, core, latest);
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

static void stream_after_miss(sim *s, uint32_t core, uint64_t line)
{
	sim_core *k = &s->core[core];
	/* with head-only lookup a buffer may hold the line further back: the
	 * L1D has it now, so the buffered copy goes (one copy per line) */
	uint8_t *state;
	uint64_t *slot = sim_stream_find(s, k, line, &state);
	if (slot) {
		*slot = SIM_NO_TAG;
		k->buffered--;
		s->stats.core[core].prefetch.dropped_unused++;
	}
	sim_stream_buffer *near = NULL;
	int64_t best = TRAIN_DISTANCE + 1;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream_buffer *b = &k->buffers[i];
		if (!b->valid)
			continue;
		int64_t delta = (int64_t)(line - b->last_line);
		int64_t distance = delta < 0 ? -delta : delta;
		if (distance != 0 && distance <= TRAIN_DISTANCE && distance < best) {
			best = distance;
			near = b;
		}
	}
	if (near) {
		buffer_restart(s, core, near, line, (int64_t)(line - near->last_line));
		return;
	}
	sim_stream_buffer *victim = &k->buffers[0];
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream_buffer *b = &k->buffers[i];
		if (!b->valid) {
			victim = b;
			break;
		}
		if (b->last_use < victim->last_use)
			victim = b;
	}
	buffer_restart(s, core, victim, line, 1);
}

/* ------------------------------------------------------------ dispatch */

void sim_prefetch_after_miss(sim *s, uint32_t core, uint64_t line)
{
	switch (s->config.prefetch.kind) {
	case SIM_PREFETCH_NEXT_LINE: sim_prefetch_line(s, core, line + 1); break;
	case SIM_PREFETCH_STRIDE: tracker_after_miss(s, core, line); break;
	case SIM_PREFETCH_STREAM: stream_after_miss(s, core, line); break;
	default: break;
	}
}

void sim_prefetch_after_prefetched_hit(sim *s, uint32_t core, uint64_t line)
{
	if (s->config.prefetch.kind == SIM_PREFETCH_NEXT_LINE) {
		sim_prefetch_line(s, core, line + 1);
		return;
	}
	sim_stride_tracker *t = tracker_find(s, &s->core[core], line);
	if (t)
		tracker_advance(s, core, t, line);
}
