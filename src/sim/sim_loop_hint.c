/* The loop variant for records with the last-way hint: TLBs,
 * classification, and L1s that are not LRU with a power-of-two number of
 * sets (sim_loop_choose).  No --check or annotation: those take the general
 * loop (sim_loop_general.c). */
#include <errno.h>
#include <string.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"

/* The batch loop with the last-way hint, for TLBs, classification and L1s
 * that are not LRU with a power-of-two number of sets (sim_loop_mru.c
 * takes the plain LRU runs): the L1 state of the current core lives in
 * locals, counts accumulate in locals and are added to the statistics when
 * the thread changes and at the end, so a hit is a shift, a compare and a
 * counter increment.  Anything else goes to sim_reference, exactly as in
 * the general loop. */
typedef struct fast_l1 {
	sim_cache *tlb;         /* the first TLB level for this kind of reference, or NULL */
	uint64_t *tlb_accesses; /* its access counter */
	sim_cache *cache;
	const uint64_t *tags;
	uint8_t *meta;
	size_t hint;
	unsigned bits;
	bool lru;
} fast_l1;

static void fast_load(sim *s, uint32_t core, fast_l1 l1[2])
{
	for (int i = 0; i < 2; i++) {
		sim_cache *c = &s->core[core].cache[i == 0 ? SIM_L1I : SIM_L1D];
		int level = i == 0 ? SIM_ITLB : SIM_DTLB;
		if (!s->core[core].tlb[level].present)
			level = SIM_STLB;
		sim_cache *t = &s->core[core].tlb[level];
		/* only an LRU TLB's hint is its most recent entry, needing no update */
		l1[i].tlb = t->present && t->replacement == SIM_LRU ? t : NULL;
		l1[i].tlb_accesses = &s->stats.core[core].tlb[level].accesses;
		l1[i].cache = c;
		l1[i].tags = c->tags;
		l1[i].meta = c->meta;
		l1[i].hint = c->last_way;
		l1[i].bits = c->line_bits;
		l1[i].lru = c->replacement == SIM_LRU;
	}
}

static void fast_flush(sim *s, uint32_t core, fast_l1 l1[2], uint64_t references[SIM_KIND_COUNT],
                       uint64_t hits[SIM_KIND_COUNT])
{
	sim_core_stats *cs = &s->stats.core[core];
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		sim_count_references(s, core, k, references[k]);
		references[k] = 0;
	}
	cs->cache[SIM_L1I].accesses[SIM_IFETCH] += hits[SIM_IFETCH];
	cs->cache[SIM_L1D].accesses[SIM_READ] += hits[SIM_READ];
	cs->cache[SIM_L1D].accesses[SIM_WRITE] += hits[SIM_WRITE];
	hits[0] = hits[1] = hits[2] = 0;
	l1[0].cache->last_way = l1[0].hint;
	l1[1].cache->last_way = l1[1].hint;
}

/* A line of a fast-path reference needs nothing more than a touch: a read
 * or fetch of a line that is not an unused prefetch, a write of a line held
 * in M by a write-back L1. */
static inline bool fast_permits(const fast_l1 *f, sim_access_kind kind, bool write_back, size_t way)
{
	uint8_t meta = f->meta[way];
	if (kind == SIM_WRITE)
		return (meta & (META_STATE | META_PREFETCHED)) == SIM_STATE_M && write_back;
	return !(meta & META_PREFETCHED);
}

static inline void fast_write(fast_l1 *f, sim_access_kind kind, size_t way)
{
	if (kind == SIM_WRITE)
		f->meta[way] |= META_DIRTY;
}

/* Also with classification (the L1 and TLB shadows are fed here) and TLBs
 * (the page of the last translation is a hit); --check takes the general
 * loop, which checks every transaction. */
static inline __attribute__((always_inline)) int batch_fast_body(sim *s, const trace_record *records, size_t n,
                                                                  plumb_status *status, const bool classify,
                                                                  const bool has_tlb)
{
	static const sim_access_kind kinds[4] = { SIM_IFETCH, SIM_READ, SIM_WRITE, SIM_READ };
	const uint32_t max_size = s->config.max_access_size;
	const bool write_back = s->config.cache[SIM_L1D].write_back;
	const sim_modify modify = s->config.modify;
	/* With classification a hit also feeds the L1's shadow; with several
	 * cores a one-line write hit of a line in M also records the words
	 * written for the sharing masks (sim_write_hit_words, what the general
	 * path adds), a straddling write takes the general path, and with
	 * Franz's ESI every write does. */
	const bool note_writes = classify && s->config.cores > 1;
	const bool general_writes = classify && sim_every_write_general(s);
	uint64_t references[SIM_KIND_COUNT] = { 0, 0, 0 }, hits[SIM_KIND_COUNT] = { 0, 0, 0 }, straddles = 0;
	uint32_t thread = records[0].thread, core = 0;
	fast_l1 l1[2];
	if (sim_thread_enter(s, thread, &core, status) != 0)
		return -1;
	fast_load(s, core, l1);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (__builtin_expect(r->thread != thread, 0)) {
			fast_flush(s, core, l1, references, hits);
			s->stats.core[core].straddles += straddles;
			straddles = 0;
			if (sim_thread_enter(s, r->thread, &core, status) != 0) {
				rc = -1;
				break;
			}
			thread = r->thread;
			fast_load(s, core, l1);
		}
		if (__builtin_expect(r->kind > TRACE_MODIFY, 0)) {
			if (trace_is_collector_marker(r))
				continue;   /* a halt or a loss: no reference */
			if (trace_is_call(r))   /* only annotation follows calls */
				continue;
			if (trace_is_marker(r)) {
				/* exact statistics for the region's snapshot */
				fast_flush(s, core, l1, references, hits);
				s->stats.core[core].straddles += straddles;
				straddles = 0;
				if (sim_region_marker(s, core, r, status) != 0) {
					rc = -1;
					break;
				}
				continue;
			}
			rc = plumb_fail(status, EINVAL, "trace record %zu has an unknown kind %u", i, r->kind);
			break;
		}
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		sim_access_kind kind = kinds[r->kind];
		bool second_write = false;
		if (r->kind == TRACE_MODIFY) {
			if (modify == SIM_MODIFY_WRITE)
				kind = SIM_WRITE;
			else if (modify == SIM_MODIFY_READ_WRITE)
				second_write = true;
		}
		for (;;) {
			references[kind]++;
			fast_l1 *f = &l1[kind != SIM_IFETCH];
			uint64_t address = r->address;
			if (has_tlb) {
				/* the page of the last translation again: a TLB hit */
				sim_cache *t = f->tlb;
				uint64_t page = t ? address >> t->line_bits : 0;
				if (t && size != 0 && t->tags[t->last_way] == page &&
				    ((address + size - 1) >> t->line_bits) == page) {
					(*f->tlb_accesses)++;
					if (classify)
						sim_shadow_touch(&t->shadow, page);
				} else {
					uint32_t tlb_size = size ? size : 1;
					if (address + tlb_size - 1 < address)
						tlb_size = (uint32_t)(UINT64_MAX - address + 1);
					sim_tlb_reference(s, core, kind, address, tlb_size);
				}
			}
			uint64_t line = address >> f->bits;
			bool done = false;
			uint64_t last_line = (address + size - 1) >> f->bits;
			if (kind == SIM_WRITE && general_writes) {
				/* general path below */
			} else if (size != 0 && last_line == line + 1 && address + size - 1 > address) {
				/* a straddle whose two lines both hit: one reference, both
				 * lines touched in order (cachegrind's rule); a straddling
				 * write that records its words does so per line there */
				long a = kind == SIM_WRITE && note_writes ? -1 : sim_cache_find(f->cache, line);
				long b = a < 0 ? -1 : sim_cache_find(f->cache, last_line);
				if (a >= 0 && b >= 0 && fast_permits(f, kind, write_back, (size_t)a) &&
				    fast_permits(f, kind, write_back, (size_t)b)) {
					if (classify) {
						sim_shadow_touch(&f->cache->shadow, line);
						sim_shadow_touch(&f->cache->shadow, last_line);
					}
					fast_write(f, kind, (size_t)a);
					sim_cache_touch(f->cache, (size_t)a);
					b = sim_cache_find(f->cache, last_line);
					fast_write(f, kind, (size_t)b);
					f->hint = sim_cache_touch(f->cache, (size_t)b);
					hits[kind]++;
					straddles++;
					done = true;
				}
			} else if (size != 0 && last_line == line) {
				size_t w = f->hint;
				bool hinted = f->tags[w] == line;
				long found = hinted ? (long)w : sim_cache_find(f->cache, line);
				if (found >= 0) {
					w = (size_t)found;
					uint8_t meta = f->meta[w];
					if (kind == SIM_WRITE) {
						if ((meta & (META_STATE | META_PREFETCHED)) == SIM_STATE_M && write_back) {
							f->meta[w] = meta | META_DIRTY;
							if (note_writes && sim_others_recorded(s, core))
								sim_write_hit_words(s, core, address, size);
							done = true;
						}
					} else if (!(meta & META_PREFETCHED)) {
						done = true;
					}
					if (done) {
						if (classify)
							sim_shadow_touch(&f->cache->shadow, line);
						hits[kind]++;
						if (!hinted || !f->lru)
							f->hint = sim_cache_touch(f->cache, w);
					}
				}
			}
			if (!done) {
				s->current_ip = !classify ? 0 : (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS) ? r->instruction_address :
				                r->kind == TRACE_INSTRUCTION ? r->address : 0;
				sim_reference_caches(s, core, kind, address, size);
				if (s->failed) {
					rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", i, s->failure);
					break;
				}
			}
			if (!second_write)
				break;
			second_write = false;
			kind = SIM_WRITE;
		}
		if (rc)
			break;
	}
	fast_flush(s, core, l1, references, hits);
	s->stats.core[core].straddles += straddles;
	return rc;
}

/* The loop specialised for its options, so the plain case carries no
 * branch for classification or TLBs. */
int sim_loop_hint_plain(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_fast_body(s, records, n, status, false, false);
}

int sim_loop_hint_tlb(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_fast_body(s, records, n, status, false, true);
}

int sim_loop_hint_classify(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_fast_body(s, records, n, status, true, s->has_tlb);
}

