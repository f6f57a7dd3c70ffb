/* Miss-ratio curves in one pass (plumb/sim_curve.h): Mattson et al.'s
 * stack distances (1970) for every fully associative size, Hill and Smith's
 * per-set stacks (1989) for the set-associative grid, fed by the references
 * that reach the level through the levels above it as configured.
 *
 * Counting: a reference's distance at a set count is the largest of its
 * lines' distances; it is kept as a power-of-two bucket (b = 0 for distance
 * 0, b = floor(log2 d) + 1 otherwise, "beyond" for a first reference or one
 * deeper than the grid).  A cache of 2^j ways misses exactly the references
 * with b >= j + 1, so a histogram of buckets per set count is the whole
 * curve, and a region's curve is the difference of its core's histograms
 * between BEGIN and END, as the simulator's regions are (sim_regions.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "plumb/progress.h"
#include "plumb/sim_curve.h"
#include "sim/sim_state.h"

#define BATCH 65536
#define MAX_THREAD_ID (1u << 20)
#define EMPTY_OWNER UINT64_MAX

/* ------------------------------------------------------------ the stacks */

/* One cache of the level (a core's private one, or the shared L3): every
 * grid point's state at once. */
typedef struct curve_stacks {
	/* Mattson: line -> time of its last reference (open addressing; key
	 * line + 1, 0 empty), and a Fenwick tree over times holding 1 where a
	 * time is some line's last.  The times are renumbered when they run out. */
	uint64_t *keys;
	uint32_t *stamps;
	size_t map_capacity, map_used;
	uint32_t *tree;                 /* 1-based Fenwick tree of capacity entries */
	uint64_t *owner;                /* time -> line, EMPTY_OWNER when no longer a last reference */
	uint32_t clock, capacity;
	/* Hill and Smith: for set count 2^k (k >= 1), 2^k stacks of depth[k] lines, most recent first */
	uint64_t *sets[32];
	uint32_t depth[32];
	uint64_t last_line;             /* the most recent line: at the top of every stack */
} curve_stacks;

/* The counts of one core: references, and buckets[k][b] (b = 0 .. bits + 1, the last "beyond"). */
typedef struct curve_counts {
	uint64_t *v;                    /* v[0] references, then (bits + 1) x (bits + 2) buckets */
} curve_counts;

typedef struct curve_open {
	size_t region;
	uint64_t *start;                /* the core's counts at BEGIN */
} curve_open;

typedef struct curve_thread {
	bool used;
	uint32_t core;
	size_t depth, capacity;
	curve_open *open;
} curve_thread;

typedef struct curve_region {
	char *name;
	uint32_t thread;
	uint64_t entries;
	uint64_t *sum;
} curve_region;

typedef struct curve_core {
	sim_cache l1[2];                /* L1I, L1D: the levels above an L2 or L3 */
	sim_cache l2;                   /* the level above an L3 */
	bool ready;
	/* the line each L1 hit last when nothing below moved: at the front of its set */
	uint64_t l1_last[2];
	curve_stacks *stacks;           /* private levels: this core's cache of the level */
} curve_core;

struct sim_curve {
	sim_config config;
	sim_level level;
	unsigned line_bits;
	unsigned bits;                  /* log2 of the grid's largest size in lines */
	size_t counter_count;           /* 1 + (bits + 1) * (bits + 2) */
	bool has_l2;                    /* an L2 above the L3 */
	curve_core *cores;
	curve_counts *counts;           /* per core */
	curve_stacks *shared;           /* the L3 */
	curve_thread *threads;
	size_t thread_capacity;
	uint32_t next_core;
	curve_region *regions;
	size_t region_count, region_capacity;
	uint64_t mismatches;
};

static unsigned bucket_of(uint64_t distance)
{
	return distance == 0 ? 0 : 64u - (unsigned)__builtin_clzll(distance);
}

static uint64_t hash_line(uint64_t line)
{
	return (line + 1) * 0x9e3779b97f4a7c15ull;
}

static void stacks_free(curve_stacks *t)
{
	if (!t)
		return;
	free(t->keys);
	free(t->stamps);
	free(t->tree);
	free(t->owner);
	for (int k = 0; k < 32; k++)
		free(t->sets[k]);
	free(t);
}

static curve_stacks *stacks_new(unsigned bits)
{
	curve_stacks *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->map_capacity = 1024;
	t->capacity = 1024;
	t->keys = calloc(t->map_capacity, sizeof *t->keys);
	t->stamps = calloc(t->map_capacity, sizeof *t->stamps);
	t->tree = calloc((size_t)t->capacity + 1, sizeof *t->tree);
	t->owner = malloc((size_t)t->capacity * sizeof *t->owner);
	t->last_line = EMPTY_OWNER;
	if (!t->keys || !t->stamps || !t->tree || !t->owner) {
		stacks_free(t);
		return NULL;
	}
	for (unsigned k = 1; k <= bits; k++) {
		uint64_t depth = 1ull << (bits - k);
		if (depth > SIM_CURVE_MAX_WAYS)
			depth = SIM_CURVE_MAX_WAYS;
		t->depth[k] = (uint32_t)depth;
		size_t slots = ((size_t)1 << k) * (size_t)depth;
		t->sets[k] = malloc(slots * sizeof *t->sets[k]);
		if (!t->sets[k]) {
			stacks_free(t);
			return NULL;
		}
		memset(t->sets[k], 0xff, slots * sizeof *t->sets[k]);
	}
	return t;
}

/* The map slot of line: its own, or the empty one where it would go. */
static size_t map_slot(const curve_stacks *t, uint64_t line)
{
	size_t mask = t->map_capacity - 1;
	size_t i = (size_t)(hash_line(line) >> 20) & mask;
	while (t->keys[i] && t->keys[i] != line + 1)
		i = (i + 1) & mask;
	return i;
}

static int map_grow(curve_stacks *t)
{
	size_t capacity = t->map_capacity * 2;
	uint64_t *keys = calloc(capacity, sizeof *keys);
	uint32_t *stamps = calloc(capacity, sizeof *stamps);
	if (!keys || !stamps) {
		free(keys);
		free(stamps);
		return -1;
	}
	uint64_t *old_keys = t->keys;
	uint32_t *old_stamps = t->stamps;
	size_t old_capacity = t->map_capacity;
	t->keys = keys;
	t->stamps = stamps;
	t->map_capacity = capacity;
	for (size_t i = 0; i < old_capacity; i++) {
		if (!old_keys[i])
			continue;
		size_t j = map_slot(t, old_keys[i] - 1);
		t->keys[j] = old_keys[i];
		t->stamps[j] = old_stamps[i];
	}
	free(old_keys);
	free(old_stamps);
	return 0;
}

static void tree_add(curve_stacks *t, uint32_t time, int delta)
{
	for (size_t i = (size_t)time + 1; i <= t->capacity; i += i & (~i + 1))
		t->tree[i] = (uint32_t)((int64_t)t->tree[i] + delta);
}

/* Last references at times 0 .. time. */
static uint64_t tree_prefix(const curve_stacks *t, uint32_t time)
{
	uint64_t sum = 0;
	for (size_t i = (size_t)time + 1; i > 0; i -= i & (~i + 1))
		sum += t->tree[i];
	return sum;
}

/* The times ran out: the live ones are renumbered 0 .. live - 1 in order,
 * in a range at least twice as large as the lines known. */
static int renumber(curve_stacks *t)
{
	uint64_t live = t->map_used;
	uint64_t capacity = t->capacity;
	while (capacity < 2 * live + 1024)
		capacity *= 2;
	if (capacity > UINT32_MAX)
		return -1;
	uint64_t *owner = malloc((size_t)capacity * sizeof *owner);
	uint32_t *tree = calloc((size_t)capacity + 1, sizeof *tree);
	if (!owner || !tree) {
		free(owner);
		free(tree);
		return -1;
	}
	uint32_t next = 0;
	for (uint32_t time = 0; time < t->clock; time++) {
		if (t->owner[time] == EMPTY_OWNER)
			continue;
		t->stamps[map_slot(t, t->owner[time])] = next;
		owner[next++] = t->owner[time];
	}
	/* a Fenwick tree of ones at 0 .. next - 1, built in linear time */
	for (size_t i = 1; i <= capacity; i++) {
		if (i <= next)
			tree[i] += 1;
		size_t parent = i + (i & (~i + 1));
		if (parent <= capacity)
			tree[parent] += tree[i];
	}
	free(t->owner);
	free(t->tree);
	t->owner = owner;
	t->tree = tree;
	t->capacity = (uint32_t)capacity;
	t->clock = next;
	return 0;
}

/* One reference of line to this cache: its bucket at every set count into
 * worst[] (the largest so far of the reference's lines).  -1: out of memory. */
static int stacks_reference(curve_stacks *t, unsigned bits, uint64_t line, unsigned *worst)
{
	if (line == t->last_line)
		return 0;   /* distance 0 everywhere: bucket 0 changes no maximum */
	t->last_line = line;
	const unsigned beyond = bits + 1;
	/* Mattson: the fully associative stack (set count 1) */
	if (t->clock == t->capacity && renumber(t) != 0)
		return -1;
	if (2 * (t->map_used + 1) > t->map_capacity && map_grow(t) != 0)
		return -1;
	size_t slot = map_slot(t, line);
	unsigned b;
	if (t->keys[slot]) {
		uint32_t last = t->stamps[slot];
		uint64_t distance = t->map_used - tree_prefix(t, last);
		b = distance >= (1ull << bits) ? beyond : bucket_of(distance);
		tree_add(t, last, -1);
		t->owner[last] = EMPTY_OWNER;
	} else {
		b = beyond;
		t->keys[slot] = line + 1;
		t->map_used++;
	}
	t->stamps[slot] = t->clock;
	t->owner[t->clock] = line;
	tree_add(t, t->clock, 1);
	t->clock++;
	if (b > worst[0])
		worst[0] = b;
	/* Hill and Smith: one stack per set of every larger set count */
	for (unsigned k = 1; k <= bits; k++) {
		uint32_t depth = t->depth[k];
		uint64_t *set = t->sets[k] + (size_t)(line & ((1ull << k) - 1)) * depth;
		uint32_t position = 0;
		while (position < depth && set[position] != line && set[position] != SIM_NO_TAG)
			position++;
		unsigned kb;
		if (position == 0 && set[0] == line) {
			/* Hill and Smith's inclusion: at the top of its set here, it is
			 * at the top of its set at every larger set count too */
			break;
		}
		if (position < depth && set[position] == line) {
			kb = bucket_of(position);
		} else {
			kb = beyond;
			if (position == depth)
				position = depth - 1;   /* the least recent line leaves */
		}
		memmove(set + 1, set, position * sizeof *set);
		set[0] = line;
		if (kb > worst[k])
			worst[k] = kb;
	}
	return 0;
}

/* ------------------------------------------------------------- the curve */

int sim_curve_level_parse(const char *text, sim_level *level, plumb_status *status)
{
	static const char *const names[] = { "l1i", "l1d", "l2", "l3" };
	for (int i = 0; i < 4; i++)
		if (strcasecmp(text, names[i]) == 0) {
			*level = (sim_level)i;
			return 0;
		}
	return plumb_fail(status, EINVAL, "'%s' is not a level: l1d, l1i, l2 or l3", text);
}

static int not_covered(plumb_status *status, const char *what)
{
	return plumb_fail(status, ENOTSUP, "it covers LRU caches fed by demand references only, not %s; "
	                  "for exact figures run one configuration per size: plumb sim --sweep CONFIGS --traces TRACE -o DIR",
	                  what);
}

int sim_curve_covers(const sim_config *config, sim_level level, plumb_status *status)
{
	const sim_cache_config *at = &config->cache[level];
	char what[160];
	if ((unsigned)level >= SIM_LEVEL_COUNT)
		return plumb_fail(status, EINVAL, "no such level");
	if (at->size == 0)
		return plumb_fail(status, EINVAL, "the configuration has no %s: --curve %s takes its line size and "
		                  "replacement from it (give one, e.g. --%s 1M,16,64)", sim_level_name(level),
		                  level == SIM_L2 ? "l2" : "l3", level == SIM_L2 ? "l2" : "l3");
	if (config->prefetch.kind != SIM_PREFETCH_NONE) {
		snprintf(what, sizeof what, "a prefetcher (prefetch = %s)", sim_prefetcher_name(config->prefetch.kind));
		return not_covered(status, what);
	}
	if (level == SIM_L3 && config->l3_inclusion == SIM_EXCLUSIVE)
		return not_covered(status, "an exclusive L3 (filled by the private levels' victims)");
	for (int l = SIM_L1I; l <= (int)level; l++) {
		const sim_cache_config *c = &config->cache[l];
		if (c->size == 0)
			continue;
		if ((level == SIM_L1I && l == SIM_L1D) || (level == SIM_L1D && l == SIM_L1I))
			continue;   /* the other L1 is beside the level, not above it */
		if (c->replacement != SIM_LRU) {
			snprintf(what, sizeof what, "%s replacement in the %s", sim_replacement_name(c->replacement),
			         sim_level_name((sim_level)l));
			return not_covered(status, what);
		}
		if (!c->write_allocate) {
			snprintf(what, sizeof what, "a no-write-allocate %s", sim_level_name((sim_level)l));
			return not_covered(status, what);
		}
		if (l != (int)level && !c->write_back) {
			snprintf(what, sizeof what, "a write-through %s above the %s (its writes go below)",
			         sim_level_name((sim_level)l), sim_level_name(level));
			return not_covered(status, what);
		}
		if (c->line != at->line) {
			snprintf(what, sizeof what, "line sizes that differ (%s %u B, %s %u B)", sim_level_name((sim_level)l),
			         c->line, sim_level_name(level), at->line);
			return not_covered(status, what);
		}
	}
	return 0;
}

static unsigned log2_floor(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

int sim_curve_new(sim_curve **out, const sim_config *config, sim_level level, uint64_t max_size,
                  plumb_status *status)
{
	*out = NULL;
	if (sim_curve_covers(config, level, status) != 0)
		return -1;
	uint32_t line = config->cache[level].line;
	if (max_size == 0)
		max_size = SIM_CURVE_DEFAULT_MAX_SIZE;
	if (max_size > SIM_CURVE_MAX_SIZE_LIMIT || max_size / line > SIM_CURVE_MAX_LINES)
		return plumb_fail(status, EINVAL, "--curve-max: at most 256M and %llu lines of %u B",
		                  (unsigned long long)SIM_CURVE_MAX_LINES, line);
	if (max_size < line)
		return plumb_fail(status, EINVAL, "--curve-max: at least one line (%u B)", line);
	sim_curve *c = calloc(1, sizeof *c);
	if (!c)
		return plumb_fail_errno(status, ENOMEM, "curve");
	c->config = *config;
	c->level = level;
	c->line_bits = log2_floor(line);
	c->bits = log2_floor(max_size / line);
	c->counter_count = 1 + (size_t)(c->bits + 1) * (c->bits + 2);
	c->has_l2 = config->cache[SIM_L2].size > 0;
	c->cores = calloc(config->cores, sizeof *c->cores);
	c->counts = calloc(config->cores, sizeof *c->counts);
	if (!c->cores || !c->counts) {
		sim_curve_free(c);
		return plumb_fail_errno(status, ENOMEM, "curve");
	}
	for (uint32_t i = 0; i < config->cores; i++)
		if (!(c->counts[i].v = calloc(c->counter_count, sizeof(uint64_t)))) {
			sim_curve_free(c);
			return plumb_fail_errno(status, ENOMEM, "curve");
		}
	if (level == SIM_L3 && !(c->shared = stacks_new(c->bits))) {
		sim_curve_free(c);
		return plumb_fail_errno(status, ENOMEM, "curve: the L3's stacks");
	}
	*out = c;
	return 0;
}

void sim_curve_free(sim_curve *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; c->cores && i < c->config.cores; i++) {
		curve_core *k = &c->cores[i];
		if (k->ready) {
			sim_cache_free(&k->l1[0]);
			sim_cache_free(&k->l1[1]);
			sim_cache_free(&k->l2);
		}
		stacks_free(k->stacks);
	}
	for (uint32_t i = 0; c->counts && i < c->config.cores; i++)
		free(c->counts[i].v);
	for (size_t i = 0; i < c->thread_capacity; i++) {
		for (size_t d = 0; d < c->threads[i].depth; d++)
			free(c->threads[i].open[d].start);
		free(c->threads[i].open);
	}
	for (size_t i = 0; i < c->region_count; i++) {
		free(c->regions[i].name);
		free(c->regions[i].sum);
	}
	stacks_free(c->shared);
	free(c->regions);
	free(c->threads);
	free(c->cores);
	free(c->counts);
	free(c);
}

/* The core's caches of the levels above, and its own stacks of a private level. */
static int core_ready(sim_curve *c, uint32_t core)
{
	curve_core *k = &c->cores[core];
	if (k->ready)
		return 0;
	const sim_config *g = &c->config;
	if (c->level >= SIM_L2) {
		for (int l = 0; l < 2; l++) {
			const sim_cache_config *cc = &g->cache[l];
			if (sim_cache_init(&k->l1[l], cc->size, cc->line, cc->assoc, SIM_LRU, g->seed, false) != 0)
				return -1;
		}
		if (c->level == SIM_L3 && c->has_l2) {
			const sim_cache_config *cc = &g->cache[SIM_L2];
			if (sim_cache_init(&k->l2, cc->size, cc->line, cc->assoc, SIM_LRU, g->seed, false) != 0)
				return -1;
		}
	}
	if (c->level != SIM_L3 && !(k->stacks = stacks_new(c->bits)))
		return -1;
	k->l1_last[0] = k->l1_last[1] = SIM_NO_TAG;
	k->ready = true;
	return 0;
}

static int thread_core(sim_curve *c, uint32_t thread, uint32_t *core, plumb_status *status)
{
	if (thread >= c->thread_capacity) {
		if (thread >= MAX_THREAD_ID)
			return plumb_fail(status, EINVAL, "thread id %u is too large (at most %u)", thread, MAX_THREAD_ID - 1);
		size_t capacity = c->thread_capacity ? c->thread_capacity : 16;
		while (capacity <= thread)
			capacity *= 2;
		curve_thread *threads = realloc(c->threads, capacity * sizeof *threads);
		if (!threads)
			return plumb_fail_errno(status, ENOMEM, "curve: threads");
		memset(threads + c->thread_capacity, 0, (capacity - c->thread_capacity) * sizeof *threads);
		c->threads = threads;
		c->thread_capacity = capacity;
	}
	curve_thread *t = &c->threads[thread];
	if (!t->used) {
		if (c->next_core >= c->config.cores && c->config.thread_map == SIM_MAP_ERROR)
			return plumb_fail(status, ERANGE, "thread %u is thread number %u, but the simulator has %u cores "
			                  "(thread_map = modulo folds them)", thread, c->next_core + 1, c->config.cores);
		t->used = true;
		t->core = c->next_core % c->config.cores;
		c->next_core++;
	}
	*core = t->core;
	return core_ready(c, *core) == 0 ? 0 : plumb_fail_errno(status, ENOMEM, "curve: core %u", *core);
}

static int region_marker(sim_curve *c, uint32_t core, const trace_record *r, plumb_status *status)
{
	const char *name = trace_region_name(r);
	if (!name || !name[0])
		return plumb_fail(status, EINVAL, "a region marker of thread %u without a name", r->thread);
	curve_thread *t = &c->threads[r->thread];
	const uint64_t *now = c->counts[core].v;
	if (r->kind == TRACE_REGION_BEGIN) {
		size_t region = c->region_count;
		for (size_t i = 0; i < c->region_count; i++)
			if (c->regions[i].thread == r->thread && strcmp(c->regions[i].name, name) == 0) {
				region = i;
				break;
			}
		if (region == c->region_count) {
			if (c->region_count == c->region_capacity) {
				size_t capacity = c->region_capacity ? 2 * c->region_capacity : 8;
				curve_region *regions = realloc(c->regions, capacity * sizeof *regions);
				if (!regions)
					return plumb_fail_errno(status, ENOMEM, "curve: regions");
				c->regions = regions;
				c->region_capacity = capacity;
			}
			curve_region *g = &c->regions[c->region_count];
			memset(g, 0, sizeof *g);
			g->name = strdup(name);
			g->sum = calloc(c->counter_count, sizeof(uint64_t));
			g->thread = r->thread;
			if (!g->name || !g->sum) {
				free(g->name);
				free(g->sum);
				return plumb_fail_errno(status, ENOMEM, "curve: regions");
			}
			c->region_count++;
		}
		if (t->depth == t->capacity) {
			size_t capacity = t->capacity ? 2 * t->capacity : 8;
			curve_open *open = realloc(t->open, capacity * sizeof *open);
			if (!open)
				return plumb_fail_errno(status, ENOMEM, "curve: regions");
			t->open = open;
			t->capacity = capacity;
		}
		uint64_t *start = malloc(c->counter_count * sizeof *start);
		if (!start)
			return plumb_fail_errno(status, ENOMEM, "curve: regions");
		memcpy(start, now, c->counter_count * sizeof *start);
		t->open[t->depth++] = (curve_open){ region, start };
		return 0;
	}
	if (t->depth == 0 || strcmp(c->regions[t->open[t->depth - 1].region].name, name) != 0) {
		c->mismatches++;
		return 0;
	}
	curve_open *o = &t->open[--t->depth];
	curve_region *g = &c->regions[o->region];
	for (size_t i = 0; i < c->counter_count; i++)
		g->sum[i] += now[i] - o->start[i];
	g->entries++;
	free(o->start);
	return 0;
}

/* One reference's lines at the level under study, in order; counts it. */
typedef struct reference_lines {
	uint64_t line[SIM_MAX_LINES];
	unsigned n;
} reference_lines;

static int count_reference(sim_curve *c, uint32_t core, curve_stacks *t, const reference_lines *lines)
{
	unsigned worst[32] = { 0 };
	for (unsigned i = 0; i < lines->n; i++)
		if (stacks_reference(t, c->bits, lines->line[i], worst) != 0)
			return -1;
	uint64_t *v = c->counts[core].v;
	v[0]++;
	size_t row = c->bits + 2;
	/* a line's distance never grows with the set count, and its walk stops
	 * at the first 0: the first empty bucket ends the reference's */
	for (unsigned k = 0; k <= c->bits && worst[k]; k++)
		v[1 + k * row + worst[k]]++;
	return 0;
}

/* An L1 lookup as the engine's pass 1 makes it: touch, or fill (the victim simply leaves). */
static bool l1_reference(sim_cache *l1, uint64_t line)
{
	long w = sim_cache_find(l1, line);
	if (w >= 0) {
		sim_cache_touch(l1, (size_t)w);
		return true;
	}
	size_t v = sim_cache_victim(l1, line);
	sim_cache_fill(l1, v, line, 0);
	return false;
}

/* The L2 above an L3: a miss fills it, and its victim takes the core's L1
 * copies along (plumb's private L2 includes the L1s). */
static void l2_fill(curve_core *k, uint64_t line)
{
	size_t v = sim_cache_victim(&k->l2, line);
	uint64_t victim = k->l2.tags[v];
	if (victim != SIM_NO_TAG) {
		sim_cache_invalidate(&k->l2, v);
		for (int l = 0; l < 2; l++) {
			long w = sim_cache_find(&k->l1[l], victim);
			if (w >= 0)
				sim_cache_invalidate(&k->l1[l], (size_t)w);
		}
		v = sim_cache_victim(&k->l2, line);
	}
	sim_cache_fill(&k->l2, v, line, 0);
}

static int one_reference(sim_curve *c, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size)
{
	if (size == 0)
		size = 1;
	if (address + size - 1 < address)
		size = (uint32_t)(UINT64_MAX - address + 1);
	uint64_t first = address >> c->line_bits, last = (address + size - 1) >> c->line_bits;
	if (last - first >= SIM_MAX_LINES)
		last = first + SIM_MAX_LINES - 1;
	unsigned n = (unsigned)(last - first + 1);
	curve_core *k = &c->cores[core];
	reference_lines lines;
	if (c->level <= SIM_L1D) {
		if ((kind == SIM_IFETCH) != (c->level == SIM_L1I))
			return 0;
		lines.n = n;
		for (unsigned i = 0; i < n; i++)
			lines.line[i] = first + i;
		return count_reference(c, core, k->stacks, &lines);
	}
	/* below the L1s: pass 1, the L1 lookups; pass 2, every line of a
	 * reference one of whose lines missed (cachegrind's straddle rule) */
	int which = kind == SIM_IFETCH ? 0 : 1;
	if (n == 1 && first == k->l1_last[which])
		return 0;   /* a hit on the front way: nothing changes */
	sim_cache *l1 = &k->l1[which];
	bool hit[SIM_MAX_LINES], missed = false;
	for (unsigned i = 0; i < n; i++) {
		hit[i] = l1_reference(l1, first + i);
		missed |= !hit[i];
	}
	if (!missed) {
		k->l1_last[which] = last;
		return 0;
	}
	/* the levels below may take lines from either L1 (back-invalidation) */
	k->l1_last[0] = k->l1_last[1] = SIM_NO_TAG;
	lines.n = 0;
	if (c->level == SIM_L2) {
		for (unsigned i = 0; i < n; i++)
			lines.line[lines.n++] = first + i;
		return count_reference(c, core, k->stacks, &lines);
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t line = first + i;
		if (c->has_l2) {
			long w = sim_cache_find(&k->l2, line);
			if (w >= 0) {
				sim_cache_touch(&k->l2, (size_t)w);
				continue;
			}
			if (hit[i])
				continue;   /* the engine only looks for it (the L2 includes the L1s) */
			lines.line[lines.n++] = line;
			l2_fill(k, line);
			if (sim_cache_find(l1, line) < 0)   /* lost to the L2's victim meanwhile */
				sim_cache_fill(l1, sim_cache_victim(l1, line), line, 0);
		} else {
			lines.line[lines.n++] = line;
		}
	}
	return lines.n ? count_reference(c, core, c->shared, &lines) : 0;
}

int sim_curve_batch(sim_curve *c, const trace_record *records, size_t n, plumb_status *status)
{
	static const sim_access_kind kinds[4] = { SIM_IFETCH, SIM_READ, SIM_WRITE, SIM_READ };
	const uint32_t max_size = c->config.max_access_size;
	uint32_t cached_thread = UINT32_MAX, core = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (r->thread != cached_thread) {
			if (thread_core(c, r->thread, &core, status) != 0)
				return -1;
			cached_thread = r->thread;
		}
		if (r->kind > TRACE_MODIFY) {
			if (trace_is_collector_marker(r) || trace_is_call(r))
				continue;
			if (trace_is_marker(r)) {
				if (region_marker(c, core, r, status) != 0)
					return -1;
				continue;
			}
			return plumb_fail(status, EINVAL, "trace record %zu has an unknown kind %u", i, r->kind);
		}
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		sim_access_kind kind = kinds[r->kind];
		if (r->kind == TRACE_MODIFY && c->config.modify == SIM_MODIFY_WRITE)
			kind = SIM_WRITE;
		if (c->level <= SIM_L1D && r->kind != TRACE_MODIFY) {
			/* the L1s' most common case first: a reference inside the line
			 * referenced last, at distance 0 everywhere */
			if ((kind == SIM_IFETCH) != (c->level == SIM_L1I))
				continue;
			uint64_t end = r->address + (size ? size : 1) - 1;
			uint64_t line = r->address >> c->line_bits;
			if (end >= r->address && end >> c->line_bits == line && line == c->cores[core].stacks->last_line) {
				c->counts[core].v[0]++;
				continue;
			}
		}
		if (one_reference(c, core, kind, r->address, size) != 0)
			return plumb_fail_errno(status, ENOMEM, "curve: stacks");
		if (r->kind == TRACE_MODIFY && c->config.modify == SIM_MODIFY_READ_WRITE &&
		    one_reference(c, core, SIM_WRITE, r->address, size) != 0)
			return plumb_fail_errno(status, ENOMEM, "curve: stacks");
	}
	return 0;
}

int sim_curve_run_reader(sim_curve *c, trace_reader *reader, trace_interleaver *interleaver, uint64_t *records,
                         plumb_status *status)
{
	progress p;
	progress_begin(&p, "plumb sim: records", 0);
	int rc = 0;
	for (;;) {
		const trace_record *batch;
		long got = interleaver ? trace_interleaver_view(interleaver, reader, &batch, BATCH, status)
		                       : trace_reader_view(reader, &batch, BATCH, status);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		if (sim_curve_batch(c, batch, (size_t)got, status) != 0) {
			rc = -1;
			break;
		}
		*records += (uint64_t)got;
		progress_step(&p, (size_t)*records);
	}
	progress_end(&p);
	return rc;
}

/* -------------------------------------------------------------- results */

uint64_t sim_curve_footprint(const sim_curve *c)
{
	if (c->shared)
		return c->shared->map_used;
	uint64_t most = 0;
	for (uint32_t i = 0; i < c->config.cores; i++)
		if (c->cores[i].stacks && c->cores[i].stacks->map_used > most)
			most = c->cores[i].stacks->map_used;
	return most;
}

uint64_t sim_curve_max_size(const sim_curve *c)
{
	return (1ull << c->bits) << c->line_bits;
}

uint64_t sim_curve_shown_size(const sim_curve *c)
{
	uint64_t lines = 1;
	uint64_t footprint = sim_curve_footprint(c);
	while (lines < footprint && lines < (1ull << c->bits))
		lines *= 2;
	return lines << c->line_bits;
}

size_t sim_curve_region_count(const sim_curve *c)
{
	return c->region_count;
}

const char *sim_curve_region_name(const sim_curve *c, size_t index, uint32_t *thread, uint64_t *entries)
{
	if (index >= c->region_count)
		return NULL;
	if (thread)
		*thread = c->regions[index].thread;
	if (entries)
		*entries = c->regions[index].entries;
	return c->regions[index].name;
}

/* Misses at set count 2^k and 2^j ways from counters v. */
static uint64_t misses_of(const sim_curve *c, const uint64_t *v, unsigned k, unsigned j)
{
	const uint64_t *row = v + 1 + (size_t)k * (c->bits + 2);
	uint64_t sum = 0;
	for (unsigned b = j + 1; b <= c->bits + 1; b++)
		sum += row[b];
	return sum;
}

static bool is_power_of_two(uint64_t v)
{
	return v && (v & (v - 1)) == 0;
}

int sim_curve_point(const sim_curve *c, size_t region, uint64_t size, uint32_t ways, uint64_t *misses,
                    uint64_t *accesses)
{
	if (size % (1ull << c->line_bits) != 0)
		return -1;
	uint64_t lines = size >> c->line_bits;
	if (!is_power_of_two(lines) || lines > (1ull << c->bits))
		return -1;
	if (ways == 0)
		ways = (uint32_t)(lines > UINT32_MAX ? 0 : lines);
	if (!is_power_of_two(ways) || ways > lines || (ways > SIM_CURVE_MAX_WAYS && ways != lines))
		return -1;
	unsigned i = log2_floor(lines), j = log2_floor(ways), k = i - j;
	uint64_t total_misses = 0, total_accesses = 0;
	if (region == SIZE_MAX) {
		for (uint32_t core = 0; core < c->config.cores; core++) {
			total_misses += misses_of(c, c->counts[core].v, k, j);
			total_accesses += c->counts[core].v[0];
		}
	} else if (region < c->region_count) {
		total_misses = misses_of(c, c->regions[region].sum, k, j);
		total_accesses = c->regions[region].sum[0];
	} else {
		return -1;
	}
	*misses = total_misses;
	*accesses = total_accesses;
	return 0;
}

static const char *level_word(sim_level level)
{
	static const char *const words[] = { "l1i", "l1d", "l2", "l3" };
	return words[level];
}

static void add_rows(const sim_curve *c, output_table *t, size_t region, const char *name)
{
	uint64_t shown = sim_curve_shown_size(c) >> c->line_bits;
	for (uint64_t lines = 1; lines <= shown; lines *= 2) {
		for (uint64_t ways = 1; ways <= lines; ways *= 2) {
			if (ways > SIM_CURVE_MAX_WAYS && ways != lines)
				continue;
			uint64_t misses, accesses;
			if (sim_curve_point(c, region, lines << c->line_bits, (uint32_t)ways, &misses, &accesses) != 0)
				continue;
			output_row(t);
			output_cell_text(t, name);
			output_cell_text(t, level_word(c->level));
			output_cell_integer(t, (int64_t)(lines << c->line_bits));
			output_cell_integer(t, (int64_t)ways);
			output_cell_integer(t, (int64_t)(lines / ways));
			output_cell_integer(t, (int64_t)misses);
			if (accesses == 0)
				output_cell_status(t, "n/a", "no references reached the level");
			else
				output_cell_real(t, (double)misses / (double)accesses);
		}
	}
}

output_report *sim_curve_report(const sim_curve *c, const sim_run_facts *facts, plumb_status *status)
{
	output_report *report = output_report_new("sim");
	if (!report) {
		plumb_fail_errno(status, ENOMEM, "report");
		return NULL;
	}
	const sim_config *g = &c->config;
	char text[600];
	if (facts) {
		output_meta_text(report, "trace", facts->trace ? facts->trace : "-");
		output_meta_text(report, "format", trace_format_name(facts->format));
		output_meta_integer(report, "records", (int64_t)facts->records);
		if (facts->origin && facts->origin->machine[0])
			output_meta_text(report, "machine", facts->origin->machine);
	}
	output_meta_text(report, "configuration", g->name);
	output_meta_text(report, "machine simulated", sim_config_describe(g, text, sizeof text));
	output_meta_text(report, "curve level", sim_level_name(c->level));
	output_meta_integer(report, "line_bytes", (int64_t)1 << c->line_bits);
	output_meta_integer(report, "footprint_lines", (int64_t)sim_curve_footprint(c));
	output_meta_integer(report, "grid_max_bytes", (int64_t)sim_curve_max_size(c));
	snprintf(text, sizeof text, "sizes 1 line to %" PRIu64 " B in powers of two; 1 to %d ways (powers of two) "
	         "and fully associative; LRU", sim_curve_shown_size(c), SIM_CURVE_MAX_WAYS);
	output_meta_text(report, "grid", text);

	output_table *t = output_table_add(report, "curve", "Misses at every size and associativity (LRU, one pass: "
	                                   "Mattson et al. 1970, Hill and Smith 1989)");
	output_column(t, "region", NULL, 0);
	output_column(t, "level", NULL, 0);
	output_column(t, "size_bytes", NULL, 0);
	output_column(t, "ways", NULL, 0);
	output_column(t, "sets", NULL, 0);
	output_column(t, "misses", NULL, 0);
	output_column(t, "miss_ratio", NULL, 6);
	add_rows(c, t, SIZE_MAX, "(all)");
	for (size_t i = 0; i < c->region_count; i++) {
		bool shared_name = false;
		for (size_t j = 0; j < c->region_count; j++)
			shared_name |= j != i && strcmp(c->regions[j].name, c->regions[i].name) == 0;
		char name[TRACE_REGION_NAME_MAX + 32];
		if (shared_name)
			snprintf(name, sizeof name, "%s (thread %u)", c->regions[i].name, c->regions[i].thread);
		else
			snprintf(name, sizeof name, "%s", c->regions[i].name);
		add_rows(c, t, i, name);
	}

	if (sim_curve_footprint(c) > (1ull << c->bits))
		output_note(report, "the footprint (%" PRIu64 " lines) is larger than the grid (%" PRIu64 " B): "
		            "raise --curve-max for larger sizes", sim_curve_footprint(c), sim_curve_max_size(c));
	if (c->level == SIM_L2)
		output_note(report, "the L2's input is what missed the configured L1s; the curve assumes the L2 never removes "
		            "their lines (plumb's private L2 includes the L1s and does), so a size where plumb sim counts "
		            "back-invalidations may differ");
	if (c->level == SIM_L3)
		output_note(report, "the L3's input is what missed the configured private levels of every core%s",
		            g->l3_inclusion == SIM_INCLUSIVE ? "; the curve assumes the L3 never removes their lines (an "
		            "inclusive L3 does: compare with l3.inclusion = non-inclusive)" : "");
	if (g->cores > 1 && c->next_core > 1)
		output_note(report, "several cores: the curve leaves coherence out (lines lost to another core's write); "
		            "it is exact when the threads write no line another core reads");
	if (c->region_count && c->next_core > g->cores)
		output_note(report, "more threads than cores: a region also counts the references of the other threads "
		            "of its core");
	if (c->mismatches)
		output_note(report, "%" PRIu64 " region ends did not name the innermost open region of their thread and "
		            "were ignored", c->mismatches);
	size_t open = 0;
	for (size_t i = 0; i < c->thread_capacity; i++)
		open += c->threads[i].depth;
	if (open)
		output_note(report, "%zu regions were still open at the end of the trace and are not counted", open);
	return report;
}
