/* plumbgrind's L1 filter, plumb's side (docs/valgrind-tool.md, "L1
 * filtering"; vg/pg_filter.h is the tool's).  For a one-core machine whose
 * L1s the tool can keep, plumbgrind simulates the L1I and L1D itself and
 * sends only counts of what they settled (COUNTS) and the references they do
 * not settle (GENERAL), each with the least recent way of every set it
 * touches as the tool has it.  Here the counts are added as the MRU loop
 * adds its hits (sim.c mru_flush) and a general reference goes through the
 * engine as mru_general sends it; plumb's L1s see no hits, so their recency
 * order lags the tool's (their contents and metadata do not): the way the
 * tool names is found, checked and moved to the back of its set first, so
 * the engine evicts what the tool evicted.  A way that is not there, or
 * whose metadata differs, is an error, never a silent wrong number. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"

#define TAG_COUNTS 8u
#define TAG_GENERAL 9u
#define LINE_FIELD ((1ull << 56) - 1)

static bool filterable(const sim_config *c)
{
	const sim_cache_config *l1i = &c->cache[SIM_L1I], *l1d = &c->cache[SIM_L1D];
	for (int level = SIM_L1I; level <= SIM_L1D; level++) {
		const sim_cache_config *l = &c->cache[level];
		uint64_t sets = l->size / ((uint64_t)l->line * l->assoc);
		if (l->replacement != SIM_LRU || sets < SIM_MAX_LINES || (sets & (sets - 1)) ||
		    sets * l->line * l->assoc != l->size)
			return false;
	}
	for (int t = 0; t < SIM_TLB_COUNT; t++)
		if (c->tlb[t].entries)
			return false;
	/* no level below that removes or changes an L1 line: the private L2
	 * includes the L1s (its evictions take their lines), an inclusive L3
	 * back-invalidates, a prefetcher fills the L1D, other cores invalidate */
	return c->cores == 1 && l1i->line == l1d->line && l1d->write_back && l1d->write_allocate &&
	       c->cache[SIM_L2].size == 0 && (c->cache[SIM_L3].size == 0 || c->l3_inclusion != SIM_INCLUSIVE) &&
	       (c->protocol == SIM_MESI || c->protocol == SIM_MOESI) && c->prefetch.kind == SIM_PREFETCH_NONE &&
	       !c->classify && !c->check;
}

/* The metadata of line's copy in level (the front way after a reference). */
static uint8_t meta_of(const sim *s, sim_level level, uint64_t address)
{
	const sim_cache *c = &s->core[0].cache[level];
	long w = sim_cache_find(c, address >> c->line_bits);
	return w >= 0 ? c->meta[w] : 0xff;
}

int sim_filter_option(const sim_config *config, char *option, size_t size, plumb_status *status)
{
	/* PLUMB_SIM_NO_FILTER=1: every reference crosses (tests, comparisons) */
	const char *off = secure_getenv("PLUMB_SIM_NO_FILTER");
	if (!filterable(config) || (off && off[0]))
		return 0;
	/* The metadata the engine gives a line: a scratch simulator of the same
	 * L1s, asked. */
	sim_config scratch = *config;
	scratch.cache[SIM_L3].size = 0;
	sim *s;
	if (sim_new(&s, &scratch, status) != 0)
		return -1;
	const sim_cache *l1i = &s->core[0].cache[SIM_L1I], *l1d = &s->core[0].cache[SIM_L1D];
	uint64_t line = 1ull << l1d->line_bits, span = line * l1d->sets;
	/* a read miss (set 0), a write miss (set 1), a write to a clean line (set 2) */
	int rc = sim_access(s, 0, SIM_READ, 0, 1, status) | sim_access(s, 0, SIM_WRITE, line, 1, status) |
	         sim_access(s, 0, SIM_READ, 2 * line, 1, status) | sim_access(s, 0, SIM_WRITE, 2 * line, 1, status);
	uint8_t read_meta = meta_of(s, SIM_L1D, 0), write_meta = meta_of(s, SIM_L1D, line),
	        written_meta = meta_of(s, SIM_L1D, 2 * line);
	/* an owned line also fetched (set 3), then its L1D copy evicted: the
	 * L1I's copy stays, clean */
	rc |= sim_access(s, 0, SIM_WRITE, 3 * line, 1, status) | sim_access(s, 0, SIM_IFETCH, 3 * line, 1, status);
	uint8_t shared_meta = meta_of(s, SIM_L1I, 3 * line);
	for (uint32_t w = 1; w <= l1d->assoc; w++)
		rc |= sim_access(s, 0, SIM_READ, 3 * line + w * span, 1, status);
	uint8_t clean_meta = meta_of(s, SIM_L1I, 3 * line);
	bool evicted = meta_of(s, SIM_L1D, 3 * line) == 0xff;
	uint64_t l1i_sets = l1i->sets, l1d_sets = l1d->sets;
	unsigned l1i_ways = l1i->assoc, l1d_ways = l1d->assoc, bits = l1d->line_bits;
	sim_free(s);
	if (rc != 0)
		return -1;
	uint8_t owned = written_meta & META_STATE;
	if (!evicted || (shared_meta & META_STATE) != owned || (write_meta & META_STATE) != owned ||
	    (written_meta & ~META_STATE) != META_DIRTY || (write_meta & ~META_STATE) != META_DIRTY ||
	    (read_meta & ~META_STATE) || (clean_meta & ~META_STATE))
		return 0;   /* not the rules vg/pg_filter.h keeps */
	uint8_t need[SIM_KIND_COUNT], want[SIM_KIND_COUNT], dirty[SIM_KIND_COUNT];
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		sim_mru_masks((sim_access_kind)k, config->cache[SIM_L1D].write_back, &need[k], &want[k], &dirty[k]);
	int n = snprintf(option, size,
	                 "--plumb-filter=%llu,%u,%u,%llu,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u",
	                 (unsigned long long)l1i_sets, l1i_ways, bits, (unsigned long long)l1d_sets, l1d_ways, bits,
	                 need[0], want[0], dirty[0], need[1], want[1], dirty[1], need[2], want[2], dirty[2],
	                 read_meta & META_STATE, write_meta & META_STATE, owned, clean_meta & META_STATE, META_STATE,
	                 META_DIRTY, config->max_access_size, (unsigned)config->modify);
	if (n < 0 || (size_t)n >= size)
		return plumb_fail(status, EINVAL, "plumbgrind's filter option is too long");
	return 1;
}

static int disagree(const char *what, uint64_t address, plumb_status *status)
{
	return plumb_fail(status, EPROTO, "the tool's L1s and plumb's disagree: %s (reference at 0x%llx)", what,
	                  (unsigned long long)address);
}

/* Puts the way holding the tool's least recent line (hint) at the back of
 * line's set in c, after checking its metadata. */
static int to_back(sim_cache *c, uint64_t line, uint64_t hint, uint64_t address, plumb_status *status)
{
	uint64_t tag = hint & LINE_FIELD;
	uint8_t meta = (uint8_t)(hint >> 56);
	if (tag == LINE_FIELD)
		tag = SIM_NO_TAG;
	size_t base = (size_t)(line & c->set_mask) * c->assoc;
	uint64_t *tags = c->tags + base;
	uint8_t *metas = c->meta + base;
	uint32_t w = 0;
	while (w < c->assoc && tags[w] != tag)
		w++;
	if (w == c->assoc)
		return disagree(tag == SIM_NO_TAG ? "the tool has an empty way where plumb has none" :
		                "the tool's least recent line is not in plumb's set", address, status);
	if (metas[w] != meta)
		return disagree("a line's metadata", address, status);
	for (; w + 1 < c->assoc; w++) {
		tags[w] = tags[w + 1];
		metas[w] = metas[w + 1];
	}
	tags[w] = tag;
	metas[w] = meta;
	return 0;
}

int sim_access_filtered(sim *s, const trace_compact *c, plumb_status *status)
{
	if (!filterable(&s->config) || s->annotate)
		return plumb_fail(status, EINVAL, "plumbgrind's L1 filter entries for a machine whose L1s it cannot keep");
	uint32_t core;
	if (c->words == c->end)
		return 0;
	if (sim_thread_enter(s, c->thread, &core, status) != 0)
		return -1;
	sim_core_stats *cs = &s->stats.core[core];
	for (const uint64_t *w = c->words; w < c->end;) {
		unsigned tag = (unsigned)(w[0] >> 60);
		if (tag == TAG_COUNTS) {
			/* the hits the tool settled, as mru_flush adds them */
			if ((size_t)(c->end - w) < 6)
				return plumb_fail(status, EPROTO, "plumbgrind's filter: an entry cut short");
			for (int k = 0; k < SIM_KIND_COUNT; k++) {
				sim_count_references(s, core, k, w[1 + k]);
				cs->cache[k == SIM_IFETCH ? SIM_L1I : SIM_L1D].accesses[k] += w[1 + k];
			}
			cs->straddles += w[4];
			w += 6;
			continue;
		}
		if (tag != TAG_GENERAL || (size_t)(c->end - w) < 2)
			return plumb_fail(status, EPROTO, "plumbgrind's filter: an entry of an unknown kind");
		unsigned lines = (unsigned)(w[0] >> 32) & 0xff, kind = (unsigned)(w[0] >> 16) & 0xff;
		uint32_t size = (uint32_t)(w[0] & 0xffff);
		uint64_t address = w[1];
		if (kind >= SIM_KIND_COUNT || (w[0] >> 40 & 0xfffff) || (size_t)(c->end - w) < 2 + (size_t)lines)
			return plumb_fail(status, EPROTO, "plumbgrind's filter: a bad general reference");
		if (s->config.max_access_size && size > s->config.max_access_size)
			size = s->config.max_access_size;
		sim_cache *l1 = &s->core[core].cache[kind == SIM_IFETCH ? SIM_L1I : SIM_L1D];
		/* the engine's lines (sim_reference_caches) */
		uint32_t bytes = size ? size : 1;
		if (address + bytes - 1 < address)
			bytes = (uint32_t)(UINT64_MAX - address + 1);
		uint64_t first = address >> l1->line_bits, last = (address + bytes - 1) >> l1->line_bits;
		if (last - first >= SIM_MAX_LINES)
			last = first + SIM_MAX_LINES - 1;
		if (last - first + 1 != lines)
			return plumb_fail(status, EPROTO, "plumbgrind's filter: a general reference of %u lines that has %llu",
			                  lines, (unsigned long long)(last - first + 1));
		/* in different sets (at least 64): each one's back as the tool has it */
		for (unsigned i = lines; i-- > 0;)
			if (to_back(l1, first + i, w[2 + i], address, status) != 0)
				return -1;
		sim_count_references(s, core, (int)kind, 1);
		s->current_ip = 0;
		sim_reference_caches(s, core, (sim_access_kind)kind, address, size);
		if (s->failed)
			return plumb_fail(status, EPROTO, "invariant violated: %s", s->failure);
		w += 2 + lines;
	}
	return 0;
}
