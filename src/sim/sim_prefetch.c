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
 * takes it out of the buffer (dropped_invalidated).
 *
 * The prefetchers issue their prefetches through the engine
 * (sim_prefetch_line, sim_prefetch_fetch), so they sit above it; the engine
 * calls them back only through s->prefetcher (sim_prefetch_hooks), which
 * sim.c points at sim_prefetch_policy.  The buffers' storage and the
 * lookups the engine makes of it are below the engine, in
 * sim_prefetch_state.c. */
#include "sim/sim_core_state.h"
#include "sim/sim_engine.h"

/* ------------------------------------------------------------- streams */

/* A miss near a stream's last line (within 8 lines) retrains its stride. */
#define TRAIN_DISTANCE 8

/* The stream a demand miss on line belongs to: the nearest one whose last
 * line is within TRAIN_DISTANCE (*stride = the distance, 0 for the same
 * line), else (*fresh) a free one or the least recently used, for a new
 * stream at stride 1 that its next miss corrects. */
static uint32_t stream_choose(const sim *s, const sim_core *k, uint64_t line, int64_t *stride, bool *fresh)
{
	uint32_t near = UINT32_MAX, victim = 0;
	int64_t best = TRAIN_DISTANCE + 1;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		const sim_stream_position *p = &k->streams[i];
		if (!p->valid) {
			if (k->streams[victim].valid)
				victim = i;
			continue;
		}
		if (k->streams[victim].valid && p->last_use < k->streams[victim].last_use)
			victim = i;
		int64_t delta = (int64_t)(line - p->last_line);
		int64_t distance = delta < 0 ? -delta : delta;
		if (distance <= TRAIN_DISTANCE && distance < best) {
			best = distance;
			near = i;
			*stride = delta;
		}
	}
	*fresh = near == UINT32_MAX;
	if (!*fresh)
		return near;
	*stride = 1;
	return victim;
}

/* The next position to prefetch while the stream is less than `depth`
 * strides ahead of its last demand line. */
static bool stream_next(const sim *s, sim_stream_position *p, uint64_t *line)
{
	int64_t distance = ((int64_t)(p->ahead - p->last_line)) / p->stride;
	if (distance >= (int64_t)s->config.prefetch.depth)
		return false;
	p->ahead += (uint64_t)p->stride;
	*line = p->ahead;
	return true;
}

/* --------------------------------------------- the stride prefetcher */

static void tracker_advance(sim *s, uint32_t core, sim_stream_position *p, uint64_t line)
{
	p->last_line = line;
	p->last_use = ++s->core[core].stream_clock;
	/* restart the window when it is behind the demand stream or off its
	 * stride (after the stride changed) */
	int64_t offset = (int64_t)(p->ahead - line);
	if (offset / p->stride <= 0 || offset % p->stride != 0)
		p->ahead = line;
	uint64_t next;
	while (stream_next(s, p, &next))
		sim_prefetch_line(s, core, next);
}

static void tracker_after_miss(sim *s, uint32_t core, uint64_t line)
{
	int64_t stride;
	bool fresh;
	sim_stream_position *p = &s->core[core].streams[stream_choose(s, &s->core[core], line, &stride, &fresh)];
	if (fresh) {
		p->valid = true;
		p->ahead = line;
	}
	if (stride != 0)
		p->stride = stride;
	tracker_advance(s, core, p, line);
}

/* The tracker whose window (last_line, last_line + (depth + 1) strides]
 * holds line: its first use of a prefetched line moves it on. */
static void tracker_after_prefetched_hit(sim *s, uint32_t core, uint64_t line)
{
	sim_core *k = &s->core[core];
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream_position *p = &k->streams[i];
		if (!p->valid)
			continue;
		int64_t offset = (int64_t)(line - p->last_line);
		if (offset % p->stride == 0 && offset / p->stride >= 1 &&
		    offset / p->stride <= (int64_t)s->config.prefetch.depth + 1) {
			tracker_advance(s, core, p, line);
			return;
		}
	}
}

/* -------------------------------------------------------- stream buffers */

static inline uint32_t slot_at(const sim *s, const sim_stream_buffer *b, uint32_t i)
{
	uint32_t x = b->head + i, depth = s->config.prefetch.depth;
	return x >= depth ? x - depth : x;
}

/* Empties the head slot of b, whose line (if any) leaves unused. */
static void buffer_pop(sim *s, uint32_t core, sim_stream_buffer *b)
{
	uint64_t line = b->line[b->head];
	if (line != SIM_NO_TAG) {
		b->line[b->head] = SIM_NO_TAG;
		s->core[core].buffered--;
		s->stats.core[core].prefetch.dropped_unused++;
		sim_stream_release(s, core, line, b->state[b->head]);
	}
	b->head = slot_at(s, b, 1);
	b->count--;
}

/* Keeps the buffer `depth` positions ahead of its stream: each new position
 * is fetched unless the L1D or a buffer has it already (or unshared_only
 * skips it). */
static void buffer_top_up(sim *s, uint32_t core, uint32_t i)
{
	sim_core *k = &s->core[core];
	sim_stream_buffer *b = &k->buffers[i];
	uint64_t line;
	while (stream_next(s, &k->streams[i], &line)) {
		unsigned state;
		if (sim_stream_slot(s, k, line) >= 0 || !sim_prefetch_fetch(s, core, line, &state))
			continue;
		if (b->count == s->config.prefetch.depth)
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
		while (b->count && b->line[b->head] == SIM_NO_TAG)
			buffer_pop(s, core, b);
		uint32_t n = any ? b->count : (b->count ? 1 : 0), j = 0;
		while (j < n && b->line[slot_at(s, b, j)] != line)
			j++;
		if (j == n)
			continue;
		while (j--)
			buffer_pop(s, core, b);   /* passed over: the stream skipped them */
		*state = s->has_l2 ? sim_core_state(s, core, line >> (s->granule_bits - k->cache[SIM_L1D].line_bits))
		                   : b->state[b->head];
		b->line[b->head] = SIM_NO_TAG;   /* taken, not dropped: the L1D gets it */
		k->buffered--;
		buffer_pop(s, core, b);
		k->streams[i].last_line = line;
		k->streams[i].last_use = ++k->stream_clock;
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
	uint32_t latest = UINT32_MAX;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		const sim_stream_position *p = &k->streams[i];
		if (p->valid && p->last_line == line && (latest == UINT32_MAX || p->last_use > k->streams[latest].last_use))
			latest = i;
	}
	if (latest != UINT32_MAX)
		buffer_top_up(s, core, latest);
}

/* A demand miss no buffer served restarts the buffer of its stream (the
 * one it continues, retrained, or the least recently used at stride 1):
 * Jouppi's allocation on a miss. */
static void stream_after_miss(sim *s, uint32_t core, uint64_t line)
{
	sim_core *k = &s->core[core];
	/* with head-only lookup a buffer may hold the line further back: the
	 * L1D has it now, so the buffered copy goes (one copy per line) */
	long slot = sim_stream_slot(s, k, line);
	if (slot >= 0) {
		k->buffer_lines[slot] = SIM_NO_TAG;
		k->buffered--;
		s->stats.core[core].prefetch.dropped_unused++;
	}
	int64_t stride;
	bool fresh;
	uint32_t i = stream_choose(s, k, line, &stride, &fresh);
	sim_stream_buffer *b = &k->buffers[i];
	sim_stream_position *p = &k->streams[i];
	while (b->count)
		buffer_pop(s, core, b);
	b->head = 0;
	if (stride != 0)
		p->stride = stride;   /* the same line again keeps the stride */
	p->valid = true;
	p->last_line = line;
	p->ahead = line;
	p->last_use = ++k->stream_clock;
	s->stats.core[core].prefetch.allocations++;
	buffer_top_up(s, core, i);
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
	if (s->config.prefetch.kind == SIM_PREFETCH_NEXT_LINE)
		sim_prefetch_line(s, core, line + 1);
	else
		tracker_after_prefetched_hit(s, core, line);
}

const sim_prefetch_hooks sim_prefetch_policy = {
	.after_miss = sim_prefetch_after_miss,
	.after_prefetched_hit = sim_prefetch_after_prefetched_hit,
	.stream_take = sim_stream_take,
	.stream_after_hit = sim_stream_after_hit,
};
