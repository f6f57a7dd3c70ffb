/* One set-associative cache (or TLB): tag arrays and replacement policies.
 * Every policy fills an invalid way first, as hardware does, so an empty
 * cache behaves the same under all of them until it is full. */
#include <stdlib.h>
#include <string.h>
#include "sim/sim_cache.h"

static unsigned log2_exact(uint64_t v)
{
	unsigned bits = 0;
	while ((1ull << bits) < v)
		bits++;
	return bits;
}

int sim_cache_init(sim_cache *c, uint64_t size, uint32_t line, uint32_t assoc,
                   sim_replacement replacement, uint64_t seed, bool classify)
{
	memset(c, 0, sizeof *c);
	uint64_t lines = size / line;
	if (assoc == 0 || assoc > lines)
		assoc = (uint32_t)lines;
	c->assoc = assoc;
	c->assoc_power_of_two = (assoc & (assoc - 1)) == 0;
	c->assoc_bits = c->assoc_power_of_two ? log2_exact(assoc) : 0;
	c->sets = lines / assoc;
	c->sets_power_of_two = (c->sets & (c->sets - 1)) == 0;
	c->set_mask = c->sets - 1;
	c->line_bits = log2_exact(line);
	c->replacement = replacement;
	c->ordered = replacement == SIM_LRU || replacement == SIM_FIFO;
	c->random_state = seed ? seed : 0x853c49e6748fea9bull;
	c->present = true;
	size_t ways = (size_t)(c->sets * assoc);
	/* 64-byte aligned, so that an 8-way set's tags are one cache line (the
	 * classifying loop loads them as one vector); its metadata likewise */
	size_t tag_bytes = (ways * sizeof *c->tags + 63) & ~(size_t)63, meta_bytes = (ways + 63) & ~(size_t)63;
	c->tags = aligned_alloc(64, tag_bytes);
	c->meta = aligned_alloc(64, meta_bytes);
	if (c->meta)
		memset(c->meta, 0, meta_bytes);
	if (replacement == SIM_SRRIP)
		c->rrpv = calloc(ways, 1);
	if (replacement == SIM_PLRU)
		c->plru = calloc((size_t)c->sets, sizeof *c->plru);
	if (!c->tags || !c->meta || (replacement == SIM_SRRIP && !c->rrpv) ||
	    (replacement == SIM_PLRU && !c->plru))
		goto fail;
	memset(c->tags, 0xff, ways * sizeof *c->tags);
	if (classify) {
		c->classify = true;
		if (sim_shadow_init(&c->shadow, (uint32_t)ways) != 0 || sim_lineset_init(&c->seen, ways) != 0)
			goto fail;
	}
	return 0;
fail:
	sim_cache_free(c);
	return -1;
}

void sim_cache_free(sim_cache *c)
{
	free(c->tags);
	free(c->meta);
	free(c->rrpv);
	free(c->plru);
	if (c->classify) {
		sim_shadow_free(&c->shadow);
		sim_lineset_free(&c->seen);
	}
	memset(c, 0, sizeof *c);
}

/* Tree-PLRU: assoc - 1 bits per set in heap order; a bit says on which side
 * the next victim is (0 = left).  An access points every bit on its path
 * away from the way used. */
static void plru_access(sim_cache *c, size_t way)
{
	uint64_t set = way / c->assoc;
	uint32_t w = (uint32_t)(way % c->assoc);
	unsigned levels = log2_exact(c->assoc);
	uint64_t bits = c->plru[set];
	uint32_t node = 1;
	for (unsigned l = 0; l < levels; l++) {
		uint32_t direction = (w >> (levels - 1 - l)) & 1u;
		if (direction)
			bits &= ~(1ull << node);   /* used right: victim on the left */
		else
			bits |= 1ull << node;
		node = node * 2 + direction;
	}
	c->plru[set] = bits;
}

static uint32_t plru_victim(const sim_cache *c, uint64_t set)
{
	unsigned levels = log2_exact(c->assoc);
	uint64_t bits = c->plru[set];
	uint32_t node = 1;
	for (unsigned l = 0; l < levels; l++)
		node = node * 2 + (uint32_t)((bits >> node) & 1u);
	return node - c->assoc;
}

void sim_cache_touch_slow(sim_cache *c, size_t way)
{
	if (c->replacement == SIM_PLRU)
		plru_access(c, way);
	else if (c->replacement == SIM_SRRIP)
		c->rrpv[way] = 0;
}

static uint64_t next_random(sim_cache *c)
{
	/* xorshift64*: seeded per cache, so runs repeat exactly. */
	uint64_t x = c->random_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	c->random_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

size_t sim_cache_victim_unordered(sim_cache *c, uint64_t line)
{
	uint64_t set = sim_cache_set(c, line);
	size_t base = (size_t)set * c->assoc;
	for (uint32_t w = 0; w < c->assoc; w++)
		if (c->tags[base + w] == SIM_NO_TAG)
			return base + w;
	switch (c->replacement) {
	case SIM_RANDOM:
		return base + (size_t)(next_random(c) % c->assoc);
	case SIM_PLRU:
		return base + plru_victim(c, set);
	case SIM_SRRIP:
		for (;;) {
			for (uint32_t w = 0; w < c->assoc; w++)
				if (c->rrpv[base + w] >= 3)
					return base + w;
			for (uint32_t w = 0; w < c->assoc; w++)
				c->rrpv[base + w]++;
		}
	default:
		return base;
	}
}

void sim_cache_fill_unordered(sim_cache *c, size_t way)
{
	if (c->replacement == SIM_SRRIP)
		c->rrpv[way] = 2;   /* "long" re-reference prediction: scan resistant */
	else if (c->replacement == SIM_PLRU)
		plru_access(c, way);
}
