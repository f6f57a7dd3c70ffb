/* Per-region results (sim.h, sim_region_stats): a region marker takes a
 * snapshot of its thread's core statistics at BEGIN and adds the growth to
 * the region at END.  Markers are rare, so nothing here touches the hot
 * loops: they only flush their local counts before calling
 * sim_region_marker, and the statistics are exact at that point. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_state.h"

_Static_assert(sizeof(sim_core_stats) % sizeof(uint64_t) == 0, "sim_core_stats is made of uint64_t counters");
#define CORE_COUNTERS (sizeof(sim_core_stats) / sizeof(uint64_t))

typedef struct open_region {
	size_t region;                  /* index into regions */
	sim_core_stats start;
} open_region;

typedef struct thread_stack {
	uint32_t thread;
	size_t depth, capacity;
	open_region *open;
} thread_stack;

typedef struct sim_regions {
	sim_region_stats *regions;
	size_t count, capacity;
	thread_stack *stacks;
	size_t stack_count, stack_capacity;
	uint64_t mismatches;
} sim_regions;

static thread_stack *stack_of(sim_regions *g, uint32_t thread)
{
	for (size_t i = 0; i < g->stack_count; i++)
		if (g->stacks[i].thread == thread)
			return &g->stacks[i];
	if (g->stack_count == g->stack_capacity) {
		size_t capacity = g->stack_capacity ? 2 * g->stack_capacity : 8;
		thread_stack *stacks = realloc(g->stacks, capacity * sizeof *stacks);
		if (!stacks)
			return NULL;
		g->stacks = stacks;
		g->stack_capacity = capacity;
	}
	thread_stack *t = &g->stacks[g->stack_count++];
	memset(t, 0, sizeof *t);
	t->thread = thread;
	return t;
}

static long region_find(sim_regions *g, uint32_t thread, uint32_t core, const char *name)
{
	for (size_t i = 0; i < g->count; i++)
		if (g->regions[i].thread == thread && strcmp(g->regions[i].name, name) == 0)
			return (long)i;
	if (g->count == g->capacity) {
		size_t capacity = g->capacity ? 2 * g->capacity : 8;
		sim_region_stats *regions = realloc(g->regions, capacity * sizeof *regions);
		if (!regions)
			return -1;
		g->regions = regions;
		g->capacity = capacity;
	}
	sim_region_stats *r = &g->regions[g->count];
	memset(r, 0, sizeof *r);
	char *copy = strdup(name);
	if (!copy)
		return -1;
	r->name = copy;
	r->thread = thread;
	r->core = core;
	return (long)g->count++;
}

int sim_region_marker(sim *s, uint32_t core, const trace_record *record, plumb_status *status)
{
	/* a region's figures are differences of the statistics: the shadows'
	 * answers up to the marker counted first */
	sim_shadow_worker_settle(s->shadow_worker);
	const char *name = trace_region_name(record);
	if (!name || !name[0])
		return plumb_fail(status, EINVAL, "a region marker of thread %u without a name", record->thread);
	if (!s->regions && !(s->regions = calloc(1, sizeof *s->regions)))
		return plumb_fail_errno(status, ENOMEM, "regions");
	sim_regions *g = s->regions;
	thread_stack *t = stack_of(g, record->thread);
	if (!t)
		return plumb_fail_errno(status, ENOMEM, "regions");
	if (record->kind == TRACE_REGION_BEGIN) {
		long region = region_find(g, record->thread, core, name);
		if (region < 0)
			return plumb_fail_errno(status, ENOMEM, "regions");
		if (t->depth == t->capacity) {
			size_t capacity = t->capacity ? 2 * t->capacity : 8;
			open_region *open = realloc(t->open, capacity * sizeof *open);
			if (!open)
				return plumb_fail_errno(status, ENOMEM, "regions");
			t->open = open;
			t->capacity = capacity;
		}
		open_region *o = &t->open[t->depth++];
		o->region = (size_t)region;
		o->start = s->stats.core[core];
		return 0;
	}
	if (t->depth == 0 || strcmp(g->regions[t->open[t->depth - 1].region].name, name) != 0) {
		g->mismatches++;
		return 0;
	}
	open_region *o = &t->open[--t->depth];
	sim_region_stats *r = &g->regions[o->region];
	const uint64_t *now = (const uint64_t *)&s->stats.core[core];
	const uint64_t *start = (const uint64_t *)&o->start;
	uint64_t *sum = (uint64_t *)&r->stats;
	for (size_t i = 0; i < CORE_COUNTERS; i++)
		sum[i] += now[i] - start[i];
	r->entries++;
	r->coherence_misses = 0;
	for (int level = SIM_L1I; level <= SIM_L2; level++)
		r->coherence_misses += r->stats.cache[level].coherence_true + r->stats.cache[level].coherence_false;
	return 0;
}

void sim_regions_reset(sim *s)
{
	sim_regions *g = s->regions;
	if (!g)
		return;
	for (size_t i = 0; i < g->count; i++) {
		sim_region_stats *r = &g->regions[i];
		memset(&r->stats, 0, sizeof r->stats);
		r->entries = 0;
		r->coherence_misses = 0;
	}
	/* the statistics start again from zero, and so do the open regions */
	for (size_t i = 0; i < g->stack_count; i++)
		for (size_t d = 0; d < g->stacks[i].depth; d++)
			memset(&g->stacks[i].open[d].start, 0, sizeof(sim_core_stats));
	g->mismatches = 0;
}

void sim_regions_free(sim *s)
{
	sim_regions *g = s->regions;
	if (!g)
		return;
	for (size_t i = 0; i < g->count; i++)
		free((char *)g->regions[i].name);
	for (size_t i = 0; i < g->stack_count; i++)
		free(g->stacks[i].open);
	free(g->regions);
	free(g->stacks);
	free(g);
	s->regions = NULL;
}

size_t sim_region_count(const sim *s)
{
	return s->regions ? s->regions->count : 0;
}

const sim_region_stats *sim_region(const sim *s, size_t index)
{
	return index < sim_region_count(s) ? &s->regions->regions[index] : NULL;
}

uint64_t sim_region_misses(const sim_region_stats *region, sim_level level)
{
	if ((unsigned)level > SIM_L3)
		return 0;
	if (level == SIM_L3)
		return region->stats.l3_misses;
	const sim_cache_stats *c = &region->stats.cache[level];
	return c->misses[SIM_IFETCH] + c->misses[SIM_READ] + c->misses[SIM_WRITE];
}

uint64_t sim_region_accesses(const sim_region_stats *region, sim_level level)
{
	if ((unsigned)level > SIM_L3)
		return 0;
	if (level == SIM_L3)
		return region->stats.l3_accesses;
	const sim_cache_stats *c = &region->stats.cache[level];
	return c->accesses[SIM_IFETCH] + c->accesses[SIM_READ] + c->accesses[SIM_WRITE];
}

uint64_t sim_region_mismatches(const sim *s)
{
	return s->regions ? s->regions->mismatches : 0;
}

size_t sim_region_open_count(const sim *s)
{
	size_t n = 0;
	if (s->regions)
		for (size_t i = 0; i < s->regions->stack_count; i++)
			n += s->regions->stacks[i].depth;
	return n;
}

void sim_set_code_map(sim *s, const trace_code_map *map)
{
	s->code_map = map;
}

bool sim_region_folded(const sim *s)
{
	return s->next_core > s->config.cores;
}
