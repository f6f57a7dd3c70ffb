/* Prefetchers of the L1D.  Prefetched lines go into the L1D through the
 * normal read path (so they cost bus reads and may downgrade another core's
 * copy, which is what seed 000's hypothesis is about) and are tagged until a
 * demand reference uses them.
 * - next-line: a demand miss on line X, or the first use of a prefetched X,
 *   prefetches X + 1 (tagged prefetching, Smith 1982);
 * - stream: `streams` trackers, each following a demand stream with its
 *   stride (the distance between consecutive misses, 1..8 lines, else 1) and
 *   keeping `depth` lines ahead of it, as Jouppi's stream buffers do; the
 *   prefetched lines are held in the L1D rather than in separate buffers. */
#include <stdlib.h>
#include "sim/sim_internal.h"

int sim_prefetch_init(sim *s, sim_core *core)
{
	if (s->config.prefetch.kind != SIM_PREFETCH_STREAM)
		return 0;
	core->streams = calloc(s->config.prefetch.streams, sizeof *core->streams);
	return core->streams ? 0 : -1;
}

void sim_prefetch_free(sim_core *core)
{
	free(core->streams);
	core->streams = NULL;
}

static void stream_top_up(sim *s, uint32_t core, sim_stream *st)
{
	int64_t depth = s->config.prefetch.depth;
	for (;;) {
		int64_t distance = ((int64_t)(st->ahead - st->last_line)) / st->stride;
		if (distance >= depth)
			break;
		st->ahead += (uint64_t)st->stride;
		sim_prefetch_line(s, core, st->ahead);
	}
}

/* The stream whose window (last_line, ahead] holds line, or NULL. */
static sim_stream *stream_find(sim *s, sim_core *k, uint64_t line)
{
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream *st = &k->streams[i];
		if (!st->valid)
			continue;
		int64_t offset = (int64_t)(line - st->last_line);
		if (st->stride != 0 && offset % st->stride == 0 && offset / st->stride >= 1 &&
		    offset / st->stride <= (int64_t)s->config.prefetch.depth + 1)
			return st;
	}
	return NULL;
}

static void stream_advance(sim *s, uint32_t core, sim_stream *st, uint64_t line)
{
	st->last_line = line;
	st->last_use = ++s->core[core].stream_clock;
	/* restart the window when it is behind the demand stream or off its
	 * stride (after the stride changed) */
	int64_t offset = (int64_t)(st->ahead - line);
	if (offset / st->stride <= 0 || offset % st->stride != 0)
		st->ahead = line;
	stream_top_up(s, core, st);
}

void sim_prefetch_after_miss(sim *s, uint32_t core, uint64_t line)
{
	sim_core *k = &s->core[core];
	if (s->config.prefetch.kind == SIM_PREFETCH_NEXT_LINE) {
		sim_prefetch_line(s, core, line + 1);
		return;
	}
	/* A miss near a stream's last line (within 8 lines) retrains its
	 * stride; otherwise the least recently used tracker starts a new
	 * stream with stride 1, which its next miss corrects. */
	sim_stream *near = NULL;
	int64_t best = 9;
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream *st = &k->streams[i];
		if (!st->valid)
			continue;
		int64_t delta = (int64_t)(line - st->last_line);
		int64_t distance = delta < 0 ? -delta : delta;
		if (distance <= 8 && distance < best) {
			best = distance;
			near = st;
		}
	}
	if (near) {
		int64_t delta = (int64_t)(line - near->last_line);
		if (delta != 0)
			near->stride = delta;
		stream_advance(s, core, near, line);
		return;
	}
	sim_stream *victim = &k->streams[0];
	for (uint32_t i = 0; i < s->config.prefetch.streams; i++) {
		sim_stream *c = &k->streams[i];
		if (!c->valid) {
			victim = c;
			break;
		}
		if (c->last_use < victim->last_use)
			victim = c;
	}
	victim->valid = true;
	victim->stride = 1;
	victim->ahead = line;
	stream_advance(s, core, victim, line);
}

void sim_prefetch_after_prefetched_hit(sim *s, uint32_t core, uint64_t line)
{
	if (s->config.prefetch.kind == SIM_PREFETCH_NEXT_LINE) {
		sim_prefetch_line(s, core, line + 1);
		return;
	}
	s->stats.core[core].prefetch.stream_hits++;
	sim_stream *st = stream_find(s, &s->core[core], line);
	if (st)
		stream_advance(s, core, st, line);
}
