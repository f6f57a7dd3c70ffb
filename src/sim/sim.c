/* The simulator object: construction, the batch loop with its hit fast
 * path, threads, and the statistics accessors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"

#define MAX_THREAD_ID (1u << 20)

static unsigned log2_exact(uint64_t v)
{
	unsigned bits = 0;
	while ((1ull << bits) < v)
		bits++;
	return bits;
}

int sim_new(sim **out, const sim_config *config, plumb_status *status)
{
	*out = NULL;
	if (sim_config_validate(config, status) != 0)
		return -1;
	sim *s = calloc(1, sizeof *s);
	if (!s)
		return plumb_fail_errno(status, ENOMEM, "simulator");
	s->config = *config;
	s->prefetcher = &sim_prefetch_policy;
	s->stats.cores = config->cores;
	s->has_l2 = config->cache[SIM_L2].size > 0;
	s->has_l3 = config->cache[SIM_L3].size > 0;
	s->granule_bits = log2_exact(s->has_l2 ? config->cache[SIM_L2].line : config->cache[SIM_L1D].line);
	s->word_bits = s->granule_bits > 6 + 2 ? s->granule_bits - 6 : 2;
	uint64_t private_lines = 0;
	for (uint32_t c = 0; c < config->cores; c++) {
		sim_core *k = &s->core[c];
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			const sim_cache_config *cc = &config->cache[level];
			if (cc->size == 0)
				continue;
			if (sim_cache_init(&k->cache[level], cc->size, cc->line, cc->assoc, cc->replacement,
			                   config->seed + 97 * c + (uint64_t)level, config->classify) != 0)
				goto oom;
			if (level == SIM_L2 || (!s->has_l2 && level != SIM_L2))
				private_lines += cc->size / cc->line;
		}
		for (int t = 0; t < SIM_TLB_COUNT; t++) {
			const sim_tlb_config *tc = &config->tlb[t];
			if (tc->entries == 0)
				continue;
			s->has_tlb = true;
			if (sim_cache_init(&k->tlb[t], (uint64_t)tc->entries * tc->page_size, (uint32_t)tc->page_size,
			                   tc->assoc, tc->replacement, config->seed + 13 * c + (uint64_t)t,
			                   config->classify) != 0)
				goto oom;
		}
		if (config->classify && sim_table_init(&k->invalidated, sizeof(sim_invalidation_record), 64) != 0)
			goto oom;
		if (sim_prefetch_init(s, k) != 0)
			goto oom;
	}
	if (s->has_l3) {
		const sim_cache_config *cc = &config->cache[SIM_L3];
		if (sim_cache_init(&s->l3, cc->size, cc->line, cc->assoc, cc->replacement, config->seed + 7777,
		                   config->classify) != 0)
			goto oom;
	}
	/* The caches' shadows' catch-ups on a thread of their own
	 * (sim_shadow_worker.c) when there is a second CPU to run it;
	 * PLUMB_SIM_SHADOW_THREAD=0: never, =1: always (tests).  The answers are
	 * the same either way.  The TLBs' shadows stay here. */
	const char *shadow_thread = secure_getenv("PLUMB_SIM_SHADOW_THREAD");
	bool want_thread = shadow_thread && shadow_thread[0] ? strcmp(shadow_thread, "0") != 0
	                                                     : sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	if (config->classify && want_thread && sim_shadow_worker_new(&s->shadow_worker) == 0) {
		for (uint32_t c = 0; c < config->cores; c++)
			for (int level = SIM_L1I; level <= SIM_L2; level++)
				if (s->core[c].cache[level].classify &&
				    sim_shadow_worker_attach(s->shadow_worker, &s->core[c].cache[level].shadow) != 0)
					goto oom;
		if (s->l3.classify && sim_shadow_worker_attach(s->shadow_worker, &s->l3.shadow) != 0)
			goto oom;
		sim_shadow_worker_keep_tables(s->shadow_worker, s);
	}
	/* The directory holds one entry per line some private hierarchy holds:
	 * sized for all of them at once, so it never grows without classify. */
	s->fast = !config->classify && !s->has_tlb;
	s->lean = !config->classify && !config->check && config->prefetch.kind == SIM_PREFETCH_NONE;
	if (config->cores > 1 &&
	    sim_table_init(&s->directory, sizeof(sim_directory_entry), (size_t)private_lines) != 0)
		goto oom;
	if (config->classify &&
	    (sim_table_init(&s->lines, sizeof(sim_line_stats), 256) != 0 ||
	     sim_table_init(&s->code, sizeof(sim_code_stats), 256) != 0))
		goto oom;
	*out = s;
	return 0;
oom:
	sim_free(s);
	return plumb_fail_errno(status, ENOMEM, "simulator caches");
}

void sim_free(sim *s)
{
	if (!s)
		return;
	sim_shadow_worker_free(s->shadow_worker);   /* before the shadows it keeps */
	for (uint32_t c = 0; c < SIM_MAX_CORES; c++) {
		sim_core *k = &s->core[c];
		for (int level = 0; level < 3; level++)
			if (k->cache[level].present)
				sim_cache_free(&k->cache[level]);
		for (int t = 0; t < SIM_TLB_COUNT; t++)
			if (k->tlb[t].present)
				sim_cache_free(&k->tlb[t]);
		sim_table_free(&k->invalidated);
		sim_prefetch_free(k);
	}
	if (s->l3.present)
		sim_cache_free(&s->l3);
	sim_table_free(&s->directory);
	sim_table_free(&s->lines);
	sim_table_free(&s->code);
	free(s->threads);
	free(s->thread_core);
	sim_regions_free(s);
	sim_annotate_free(s);
	sim_program_free(s->program);
	free(s);
}

const sim_config *sim_configuration(const sim *s)
{
	return &s->config;
}

const sim_stats *sim_statistics(const sim *s)
{
	sim_shadow_worker_settle(s->shadow_worker);
	return &s->stats;
}

void sim_reset_statistics(sim *s)
{
	uint32_t cores = s->stats.cores;
	sim_shadow_worker_settle(s->shadow_worker);
	memset(&s->stats, 0, sizeof s->stats);
	s->stats.cores = cores;
	for (size_t i = 0; i < s->thread_capacity; i++) {
		if (!s->threads[i].used)
			continue;
		sim_thread_stats *t = &s->threads[i].stats;
		uint32_t thread = t->thread, core = t->core;
		memset(t, 0, sizeof *t);
		t->thread = thread;
		t->core = core;
	}
	if (s->config.classify) {
		sim_table_clear(&s->lines);
		sim_table_clear(&s->code);
	}
	sim_regions_reset(s);
	if (s->annotate)
		sim_table_clear(&s->annotation);
}

/* Thread -> core: in order of first appearance, then round-robin (or an
 * error, as in the thesis). */
static int thread_slot(sim *s, uint32_t thread, uint32_t *core, plumb_status *status)
{
	if (thread >= s->thread_capacity) {
		if (thread >= MAX_THREAD_ID)
			return plumb_fail(status, EINVAL, "thread id %u is too large (at most %u)", thread,
			                  MAX_THREAD_ID - 1);
		size_t capacity = s->thread_capacity ? s->thread_capacity : 16;
		while (capacity <= thread)
			capacity *= 2;
		sim_thread_slot *threads = realloc(s->threads, capacity * sizeof *threads);
		if (!threads)
			return plumb_fail_errno(status, ENOMEM, "thread table");
		memset(threads + s->thread_capacity, 0, (capacity - s->thread_capacity) * sizeof *threads);
		s->threads = threads;
		s->thread_capacity = capacity;
	}
	sim_thread_slot *slot = &s->threads[thread];
	if (!slot->used) {
		if (s->next_core >= s->config.cores && s->config.thread_map == SIM_MAP_ERROR)
			return plumb_fail(status, ERANGE, "thread %u is thread number %u, but the simulator has %u cores "
			                  "(thread_map = modulo folds them)", thread, s->next_core + 1, s->config.cores);
		slot->used = true;
		slot->stats.thread = thread;
		slot->stats.core = s->next_core % s->config.cores;
		s->next_core++;
	}
	*core = slot->stats.core;
	s->current_thread = &slot->stats;
	return 0;
}

int sim_thread_enter(sim *s, uint32_t thread, uint32_t *core, plumb_status *status)
{
	return thread_slot(s, thread, core, status);
}

/* The hit fast path: one line, in the L1, needing nothing else (a read of a
 * valid line, a write of a line held in M in a write-back L1).  The way of
 * the last hit is tried first: consecutive references mostly fall in the
 * same line, and the tag array stays the only truth (a reused way simply
 * fails the compare).  Everything else, and every reference when
 * classification or a TLB is on, takes sim_reference. */
/* With several cores and Franz's ESI every write takes the general path. */
static bool every_write_general(const sim *s)
{
	return s->config.cores > 1 && s->config.protocol == SIM_ESI;
}

static inline __attribute__((always_inline)) bool fast_hit(sim *s, uint32_t core, sim_access_kind kind,
                                                           uint64_t address, uint32_t size)
{
	sim_level level = kind == SIM_IFETCH ? SIM_L1I : SIM_L1D;
	sim_cache *c = &s->core[core].cache[level];
	uint64_t line = address >> c->line_bits;
	if (((address + size - 1) >> c->line_bits) != line)
		return false;
	size_t w = c->last_way;
	bool hinted = c->tags[w] == line;
	if (!hinted) {
		long found = sim_cache_find(c, line);
		if (found < 0)
			return false;
		w = (size_t)found;
	}
	uint8_t meta = c->meta[w];
	if (kind == SIM_WRITE) {
		if ((meta & (META_STATE | META_PREFETCHED)) != SIM_STATE_M || !s->config.cache[SIM_L1D].write_back)
			return false;
		c->meta[w] = meta | META_DIRTY;
	} else if (meta & META_PREFETCHED) {
		return false;
	}
	/* an LRU hint is the front of its set already: nothing to move */
	if (!hinted || c->replacement != SIM_LRU)
		c->last_way = sim_cache_touch(c, w);
	s->stats.core[core].cache[level].accesses[kind]++;
	return true;
}

static inline __attribute__((always_inline)) void one_reference(sim *s, uint32_t core, sim_access_kind kind,
                                                                uint64_t address, uint32_t size)
{
	s->stats.core[core].references[kind]++;
	if (s->current_thread)
		s->current_thread->references[kind]++;
	if (s->fast && size != 0 && fast_hit(s, core, kind, address, size))
		return;
	sim_reference(s, core, kind, address, size);
}

/* The batch loop with the last-way hint, for TLBs, classification and L1s
 * that are not LRU with a power-of-two number of sets (batch_mru below
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
	const bool general_writes = classify && every_write_general(s);
	uint64_t references[SIM_KIND_COUNT] = { 0, 0, 0 }, hits[SIM_KIND_COUNT] = { 0, 0, 0 }, straddles = 0;
	uint32_t thread = records[0].thread, core = 0;
	fast_l1 l1[2];
	if (thread_slot(s, thread, &core, status) != 0)
		return -1;
	fast_load(s, core, l1);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (__builtin_expect(r->thread != thread, 0)) {
			fast_flush(s, core, l1, references, hits);
			s->stats.core[core].straddles += straddles;
			straddles = 0;
			if (thread_slot(s, r->thread, &core, status) != 0) {
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

/* The plain loop (no classification, no TLB) when both L1s are LRU with a
 * power-of-two number of sets, the common case and the benchmark's.  Sets
 * are kept in recency order, so the front way of a set (tags[set * assoc])
 * is a hit that needs no move, whatever references came in between: this
 * subsumes the last-way hint and costs no state carried from one record to
 * the next.  The common record (one line, at the front of its set, a read,
 * a fetch, or a write of a line held in M) is a shift, a mask, a multiply,
 * one tag and one metadata compare; the checks of the meta byte come from
 * a per-kind table (what must be set and clear), so reads and writes take
 * the same branch.  References are counted per kind in one register, 16
 * bits a kind (so at most 65535 records between two unpackings); the hits
 * are the references minus those sent to sim_reference_caches.  Everything
 * else (a line deeper in its set, a straddle, a miss, a modify, a thread
 * switch) leaves the inner loop for mru_other or mru_special, which do
 * exactly what batch_fast_body does. */
typedef struct mru_l1 {
	const uint64_t *tags;
	uint8_t *meta;
	uint64_t set_mask;
	uint32_t assoc;
	uint8_t line_bits;
	uint8_t need;           /* meta bits that are checked ... */
	uint8_t want;           /* ... and the value they must have */
	uint8_t dirty;          /* META_DIRTY for a write */
	uint64_t one;           /* 1 in this kind's field of the packed count */
} mru_l1;

typedef struct mru_state {
	mru_l1 l1[SIM_KIND_COUNT];     /* indexed by access kind: L1I, L1D, L1D */
	uint64_t references[SIM_KIND_COUNT];
	uint64_t general[SIM_KIND_COUNT];   /* references sent to sim_reference_caches */
	uint64_t straddles;
	uint32_t core;
	bool write_back;
} mru_state;

/* LRU L1s with a power-of-two number of sets. */
static bool l1s_ordered(const sim *s)
{
	for (uint32_t c = 0; c < s->config.cores; c++)
		for (int level = SIM_L1I; level <= SIM_L1D; level++) {
			const sim_cache *cache = &s->core[c].cache[level];
			if (cache->replacement != SIM_LRU || !cache->sets_power_of_two)
				return false;
		}
	return true;
}

static bool mru_eligible(const sim *s)
{
	return s->fast && l1s_ordered(s);
}

void sim_mru_masks(sim_access_kind kind, bool write_back, uint8_t *need, uint8_t *want, uint8_t *dirty)
{
	*need = META_PREFETCHED;
	*want = 0;
	*dirty = 0;
	if (kind == SIM_WRITE) {
		/* a write-through L1D sends every write down: never the want */
		*need = META_STATE | META_PREFETCHED;
		*want = write_back ? SIM_STATE_M : 0xff;
		*dirty = META_DIRTY;
	}
}

static void mru_load(sim *s, mru_state *m)
{
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		sim_cache *c = &s->core[m->core].cache[k == SIM_IFETCH ? SIM_L1I : SIM_L1D];
		mru_l1 *f = &m->l1[k];
		f->tags = c->tags;
		f->meta = c->meta;
		f->set_mask = c->set_mask;
		f->assoc = c->assoc;
		f->line_bits = (uint8_t)c->line_bits;
		f->one = 1ull << (16 * k);
		sim_mru_masks((sim_access_kind)k, m->write_back, &f->need, &f->want, &f->dirty);
	}
}

/* Adds the counts of the current core and thread to the statistics. */
static void mru_flush(sim *s, mru_state *m)
{
	sim_core_stats *cs = &s->stats.core[m->core];
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		uint64_t n = m->references[k];
		sim_count_references(s, m->core, k, n);
		cs->cache[k == SIM_IFETCH ? SIM_L1I : SIM_L1D].accesses[k] += n - m->general[k];
		m->references[k] = m->general[k] = 0;
	}
	cs->straddles += m->straddles;
	m->straddles = 0;
}

/* The references mru_other does not settle: misses, writes needing
 * ownership, straddles that miss.  Out of line, so the deeper hits in
 * mru_other save and restore no registers for it. */
static __attribute__((noinline)) int mru_general(sim *s, mru_state *m, sim_access_kind kind, uint64_t address,
                                                  uint32_t size)
{
	m->general[kind]++;
	s->current_ip = 0;
	sim_reference_caches(s, m->core, kind, address, size);
	return s->failed ? -1 : 0;
}

/* The way of line in its set (0 = the front), or -1; and the move of a
 * permitted line to the front of its set, dirty for a write.  From the
 * per-kind copy of the L1's geometry: the set of a line is its low bits
 * (mru_eligible). */
static inline long mru_find(const mru_l1 *f, uint64_t line, size_t *base)
{
	*base = (size_t)(line & f->set_mask) * f->assoc;
	const uint64_t *tags = f->tags + *base;
	for (uint32_t w = 0; w < f->assoc; w++)
		if (tags[w] == line)
			return (long)w;
	return -1;
}

static inline void mru_to_front(const mru_l1 *f, size_t base, uint32_t way)
{
	uint64_t *tags = (uint64_t *)f->tags + base;
	uint8_t *meta = f->meta + base;
	uint64_t line = tags[way];
	uint8_t found = meta[way];
	for (uint32_t i = way; i > 0; i--) {
		tags[i] = tags[i - 1];
		meta[i] = meta[i - 1];
	}
	tags[0] = line;
	meta[0] = (uint8_t)(found | f->dirty);
}

/* A straddle: when its two lines both hit, one reference, both lines
 * touched in order (cachegrind's rule).  With two sets or more the two
 * lines are in different sets, so the first move leaves the second line's
 * way alone. */
static __attribute__((noinline)) int mru_straddle(sim *s, mru_state *m, sim_access_kind kind, uint64_t address,
                                                   uint32_t size, uint64_t line, uint64_t last_line)
{
	const mru_l1 *f = &m->l1[kind];
	if (f->set_mask != 0) {
		size_t base_a, base_b;
		long a = mru_find(f, line, &base_a), b = mru_find(f, last_line, &base_b);
		if (a >= 0 && b >= 0 && (f->meta[base_a + (size_t)a] & f->need) == f->want &&
		    (f->meta[base_b + (size_t)b] & f->need) == f->want) {
			mru_to_front(f, base_a, (uint32_t)a);
			mru_to_front(f, base_b, (uint32_t)b);
			m->straddles++;
			return 0;
		}
		return mru_general(s, m, kind, address, size);
	}
	sim_cache *c = &s->core[m->core].cache[kind == SIM_IFETCH ? SIM_L1I : SIM_L1D];
	long a = sim_cache_find(c, line), b = sim_cache_find(c, last_line);
	if (a >= 0 && b >= 0 && (c->meta[a] & f->need) == f->want && (c->meta[b] & f->need) == f->want) {
		c->meta[a] |= f->dirty;
		sim_cache_move_to_front(c, (size_t)a);
		b = sim_cache_find(c, last_line);   /* one set: the move shifted it */
		c->meta[b] |= f->dirty;
		sim_cache_move_to_front(c, (size_t)b);
		m->straddles++;
		return 0;
	}
	return mru_general(s, m, kind, address, size);
}

/* One reference that is not a hit at the front of its set (counted by the
 * caller): the same decisions as batch_fast_body's.  A line deeper in its
 * set is found and moved to the front here; the rest goes out of line, so
 * this path saves and restores fewer registers. */
static __attribute__((noinline)) int mru_other(sim *s, mru_state *m, sim_access_kind kind, uint64_t address,
                                                uint32_t size)
{
	const mru_l1 *f = &m->l1[kind];
	uint64_t line = address >> f->line_bits, last_line = (address + size - 1) >> f->line_bits;
	if (size != 0 && last_line == line) {
		size_t base = (size_t)(line & f->set_mask) * f->assoc;
		uint64_t *tags = (uint64_t *)f->tags + base;
		uint8_t *meta = f->meta + base;
		for (uint32_t w = 0; w < f->assoc; w++) {
			if (tags[w] != line)
				continue;
			uint8_t found = meta[w];
			if ((found & f->need) != f->want)
				break;
			for (uint32_t i = w; i > 0; i--) {
				tags[i] = tags[i - 1];
				meta[i] = meta[i - 1];
			}
			tags[0] = line;
			meta[0] = (uint8_t)(found | f->dirty);
			return 0;
		}
	} else if (size != 0 && last_line == line + 1 && address + size - 1 > address) {
		return mru_straddle(s, m, kind, address, size, line, last_line);
	}
	return mru_general(s, m, kind, address, size);
}

/* A record the inner loop does not take: a thread switch, a modify, size 0
 * or an unknown kind.  0, or -1 with status filled. */
static __attribute__((noinline)) int mru_special(sim *s, mru_state *m, const trace_record *r, size_t index,
                                                  uint32_t *thread, plumb_status *status)
{
	if (r->thread != *thread) {
		mru_flush(s, m);
		if (thread_slot(s, r->thread, &m->core, status) != 0)
			return -1;
		*thread = r->thread;
		mru_load(s, m);
	}
	if (r->kind > TRACE_MODIFY) {
		if (trace_is_collector_marker(r))
			return 0;   /* a halt or a loss: no reference */
		if (trace_is_call(r))   /* only annotation follows calls */
			return 0;
		if (trace_is_marker(r)) {
			mru_flush(s, m);   /* exact statistics for the region's snapshot */
			return sim_region_marker(s, m->core, r, status);
		}
		return plumb_fail(status, EINVAL, "trace record %zu has an unknown kind %u", index, r->kind);
	}
	uint32_t size = r->size;
	if (s->config.max_access_size && size > s->config.max_access_size)
		size = s->config.max_access_size;
	sim_access_kind kind = (sim_access_kind)r->kind;
	bool second_write = false;
	if (r->kind == TRACE_MODIFY) {
		kind = s->config.modify == SIM_MODIFY_WRITE ? SIM_WRITE : SIM_READ;
		second_write = s->config.modify == SIM_MODIFY_READ_WRITE;
	}
	for (;;) {
		m->references[kind]++;
		if (mru_other(s, m, kind, r->address, size) != 0)
			return plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", index, s->failure);
		if (!second_write)
			return 0;
		second_write = false;
		kind = SIM_WRITE;
	}
}

static inline __attribute__((always_inline)) int batch_mru_body(sim *s, const trace_record *records, size_t n,
                                                                plumb_status *status, const bool cut)
{
	mru_state m;
	memset(&m, 0, sizeof m);
	m.write_back = s->config.cache[SIM_L1D].write_back;
	uint32_t thread = records[0].thread;
	if (thread_slot(s, thread, &m.core, status) != 0)
		return -1;
	mru_load(s, &m);
	const uint32_t max_size = s->config.max_access_size ? s->config.max_access_size : UINT32_MAX;
	int rc = 0;
	size_t i = 0;
	while (i < n && rc == 0) {
		size_t stop = n - i > 65535 ? i + 65535 : n;
		uint64_t packed = 0;   /* references of kind k in bits 16k..16k+15 */
		for (; i < stop; i++) {
			const trace_record *r = &records[i];
			unsigned kind = r->kind;
			uint32_t size = r->size;
			if (__builtin_expect(r->thread != thread || kind > TRACE_WRITE || size == 0, 0))
				break;
			if (cut && size > max_size)
				size = max_size;
			const mru_l1 *f = &m.l1[kind];
			packed += f->one;
			uint64_t address = r->address;
			uint64_t line = address >> f->line_bits;
			size_t front = (size_t)(line & f->set_mask) * f->assoc;
			if (__builtin_expect(((address + size - 1) >> f->line_bits) == line && f->tags[front] == line, 1)) {
				unsigned meta = f->meta[front];
				if (__builtin_expect((meta & f->need) == f->want, 1)) {
					if (__builtin_expect(f->dirty & ~meta, 0))
						f->meta[front] = (uint8_t)(meta | f->dirty);
					continue;
				}
			}
			rc = mru_other(s, &m, (sim_access_kind)kind, address, size);
			if (rc) {
				rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", i, s->failure);
				break;
			}
		}
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			m.references[k] += (packed >> (16 * k)) & 0xffff;
		if (rc == 0 && i < stop) {
			/* after the unpacking: a thread switch flushes the counts */
			rc = mru_special(s, &m, &records[i], i, &thread, status);
			i++;
		}
	}
	mru_flush(s, &m);
	return rc;
}

/* Specialised for max_access_size, so the usual 0 costs nothing. */
static int batch_mru(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	if (s->config.max_access_size)
		return batch_mru_body(s, records, n, status, true);
	return batch_mru_body(s, records, n, status, false);
}

/* The loop specialised for its options, so the plain case carries no
 * branch for classification or TLBs. */
static int batch_fast_plain(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_fast_body(s, records, n, status, false, false);
}

static int batch_fast_tlb(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_fast_body(s, records, n, status, false, true);
}

static int batch_fast_classify(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_fast_body(s, records, n, status, true, s->has_tlb);
}

static int batch_fast(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	if (s->config.classify)
		return batch_fast_classify(s, records, n, status);
	if (!s->has_tlb && mru_eligible(s))
		return batch_mru(s, records, n, status);
	return s->has_tlb ? batch_fast_tlb(s, records, n, status) : batch_fast_plain(s, records, n, status);
}

/* ---- plumbgrind's compact entries ----
 * A use entry names a definition (the records of one flush of the
 * instrumented code) and gives its data addresses.  For the MRU loop each
 * definition becomes ops once: a fetch knows its line and the front way of
 * its set already, so a fetch hit is a tag and a metadata compare with
 * nothing read from the trace; a read or write takes the next address word.
 * A fetch followed directly by fetches of the same line (no reference in
 * between) carries their number: once it is a hit at the front of its set,
 * they are too and change nothing, so they are counted at once; otherwise
 * each is simulated in turn.  A fetch across two lines (OP_FETCH2, in two
 * sets) is a hit when both are at the front of their sets.  A modify is a read, a write, or a read then
 * a write of the same address word, as the configuration says.  Anything
 * else (size 0, a fetch across two lines) is made into its record and goes
 * to mru_special. */
enum { OP_FETCH = 0, OP_READ = 1, OP_WRITE = 2, OP_OTHER = 3, OP_FETCH2 = 4 };

typedef struct sim_op {
	uint64_t line;          /* OP_FETCH, OP_FETCH2: the (first) L1I line */
	uint64_t address;       /* a fetch's address; a data reference's instruction address */
	uint32_t front;         /* OP_FETCH, OP_FETCH2: the index of the front way of its set */
	uint32_t front2;        /* OP_FETCH2: the same for the next line */
	uint16_t size;          /* cut to max_access_size, except OP_OTHER's */
	uint8_t kind;           /* OP_* */
	uint8_t trace_kind;     /* the record's kind */
	uint8_t index;          /* its record's in the definition (error messages) */
	uint8_t advance;        /* OP_READ, OP_WRITE: address words to pass after it (0: the read of a read-write modify) */
	uint16_t repeat;        /* OP_FETCH: fetches of the same line right after this one */
} sim_op;

/* A definition's fast form (compact_mru): the distinct L1I lines of its
 * fetches, all checked at the front of their sets before anything else.
 * When they are, every fetch of the definition is a hit (only a reference
 * that leaves the L1s can change the L1I, and the data references that hit
 * do not), so the fetches are counted at once and only the data references
 * are walked; the first data reference that does not hit in the L1D takes
 * back the fetches after it, and the ops after it go one by one. */
typedef struct sim_fetch_line {
	uint64_t line;
	uint32_t front;         /* the index of the front way of its set */
} sim_fetch_line;

typedef struct sim_data_op {
	uint16_t size;
	uint8_t kind;           /* OP_READ or OP_WRITE */
	uint8_t advance;        /* as sim_op's */
	uint8_t index;          /* its record's in the definition (error messages) */
	uint8_t need, want, dirty;   /* the classifying loop's hit test for its kind (classify_masks) */
	uint16_t resume;        /* the op after it in the definition's ops */
	uint16_t fetches_after; /* fetches of the definition after it */
	uint16_t straddles_after;
	uint16_t unused;        /* 16 bytes: an op's address is a shift of its index */
} sim_data_op;

#define SIM_NO_FAST_FORM 0xff

/* What a use needs, in the order the classifying loop reads it: the head
 * check, the first fetch line (most definitions have one), the rest. */
typedef struct sim_definition {
	uint32_t head_high;     /* a use's head >> 32: the use tag and the data count (one compare) */
	uint32_t front;         /* lines[0]'s front way, below */
	uint64_t line;          /* the first of its fast form's fetch lines (p->lines[line_first]) */
	uint8_t lines;          /* its distinct fetch lines, SIM_NO_FAST_FORM: none (one by one) */
	uint8_t data_ops;
	uint8_t data_words;     /* a use's data addresses (trace_compact data[]): checked in the loop */
	uint8_t records;        /* the records a use stands for (trace_compact count[]) */
	uint16_t fetches;       /* its fetches (records) */
	uint16_t straddles;     /* those across two lines */
	uint32_t data_first;    /* its data ops in the program's data ops */
	uint32_t line_first;    /* its fetch lines in the program's lines */
	uint32_t first;         /* its first op */
	uint32_t count;         /* its ops: one per record, two for a read-write modify */
} sim_definition;

typedef struct sim_program {
	uint64_t stream;        /* trace_compact's identity of the stream compiled */
	size_t definitions;     /* definitions made into ops */
	sim_op *ops;
	size_t op_count, op_capacity;
	sim_definition *definition;   /* per definition: its ops */
	size_t capacity;
	sim_fetch_line *lines;        /* the definitions' fast forms' lines, each definition's in
	                               * the order of their last fetches (compact_classify touches
	                               * the L1I's shadow so) */
	size_t line_count, line_capacity;
	sim_data_op *data_ops;
	size_t data_op_count, data_op_capacity;
} sim_program;

void sim_program_free(struct sim_program *p)
{
	if (!p)
		return;
	free(p->ops);
	free(p->definition);
	free(p->lines);
	free(p->data_ops);
	free(p);
}

static bool add_line(sim_program *p, sim_definition *def, uint64_t line, uint32_t front)
{
	sim_fetch_line *lines = p->lines + def->line_first;
	for (uint32_t i = 0; i < def->lines; i++) {
		if (lines[i].line == line)
			return true;
		if (lines[i].front == front)
			return false;   /* two lines of one set are never both at the front */
	}
	if (def->lines == SIM_NO_FAST_FORM - 1)
		return false;   /* more than its count holds (a made-up trace) */
	lines[def->lines++] = (sim_fetch_line){ .line = line, .front = front };
	return true;
}

/* The capacity a program's array of `capacity` elements grows to so that it
 * holds `need`: doubled (from `first`) until it does. */
static size_t grown_capacity(size_t capacity, size_t need, size_t first)
{
	size_t grown = capacity ? 2 * capacity : first;
	while (grown < need)
		grown *= 2;
	return grown;
}

/* The definition's fast form (sim_fetch_line), or SIM_NO_FAST_FORM when it
 * has an op compact_mru's loops do not take or fetch lines that cannot all
 * be at the front.  -1: out of memory. */
static void classify_masks(const sim *s, unsigned kind, uint8_t *need, uint8_t *want, uint8_t *dirty);

static int fast_form(const sim *s, sim_program *p, sim_definition *def, const sim_op *ops, size_t made)
{
	if (p->line_count + 2 * made > p->line_capacity) {
		size_t capacity = grown_capacity(p->line_capacity, p->line_count + 2 * made, 16384);
		sim_fetch_line *lines = realloc(p->lines, capacity * sizeof *lines);
		if (!lines)
			return -1;
		p->lines = lines;
		p->line_capacity = capacity;
	}
	if (p->data_op_count + made > p->data_op_capacity) {
		size_t capacity = grown_capacity(p->data_op_capacity, p->data_op_count + made, 16384);
		sim_data_op *data_ops = realloc(p->data_ops, capacity * sizeof *data_ops);
		if (!data_ops)
			return -1;
		p->data_ops = data_ops;
		p->data_op_capacity = capacity;
	}
	if (p->line_count + 2 * made > UINT32_MAX || p->data_op_count + made > UINT32_MAX)
		return -1;
	def->line_first = (uint32_t)p->line_count;
	def->data_first = (uint32_t)p->data_op_count;
	def->lines = def->data_ops = 0;
	def->fetches = def->straddles = 0;
	bool fast = made < 256;
	for (size_t i = 0; i < made && fast; i++) {
		const sim_op *op = &ops[i];
		if (op->kind == OP_FETCH) {
			fast = add_line(p, def, op->line, op->front);
			def->fetches++;
		} else if (op->kind == OP_FETCH2) {
			fast = add_line(p, def, op->line, op->front) && add_line(p, def, op->line + 1, op->front2);
			def->fetches++;
			def->straddles++;
		} else if (op->kind == OP_READ || op->kind == OP_WRITE) {
			sim_data_op *d = &p->data_ops[p->data_op_count + def->data_ops++];
			*d = (sim_data_op){
				.size = op->size, .kind = op->kind, .advance = op->advance, .index = op->index,
				.resume = (uint16_t)(i + 1), .fetches_after = def->fetches, .straddles_after = def->straddles,
			};
			classify_masks(s, op->kind, &d->need, &d->want, &d->dirty);
		} else {
			fast = false;
		}
	}
	if (!fast) {
		def->lines = SIM_NO_FAST_FORM;
		def->data_ops = 0;
		return 0;
	}
	/* the distinct lines again, in the order of their last fetches: walked
	 * from the end, a line's first fetch found is its last */
	uint64_t recent[256];
	uint32_t placed = def->lines;
	for (size_t i = made; i-- > 0 && placed > 0;) {
		const sim_op *op = &ops[i];
		if (op->kind != OP_FETCH && op->kind != OP_FETCH2)
			continue;
		/* a fetch across two lines touches its first line, then the second */
		for (uint64_t line = op->line + (op->kind == OP_FETCH2); ; line--) {
			bool known = false;
			for (uint32_t j = placed; j < def->lines; j++)
				known |= recent[j] == line;
			if (!known)
				recent[--placed] = line;
			if (line == op->line)
				break;
		}
	}
	/* in that order, each with its set's front way */
	sim_fetch_line *lines = p->lines + def->line_first, ordered[256];
	for (uint32_t j = 0; j < def->lines; j++)
		for (uint32_t i = 0; i < def->lines; i++)
			if (lines[i].line == recent[j])
				ordered[j] = lines[i];
	memcpy(lines, ordered, def->lines * sizeof *lines);
	if (def->lines) {
		def->line = lines[0].line;
		def->front = lines[0].front;
	}
	/* fetches after each data op: the definition's less those before it */
	for (uint32_t i = 0; i < def->data_ops; i++) {
		sim_data_op *d = &p->data_ops[p->data_op_count + i];
		d->fetches_after = (uint16_t)(def->fetches - d->fetches_after);
		d->straddles_after = (uint16_t)(def->straddles - d->straddles_after);
	}
	p->line_count += def->lines;
	p->data_op_count += def->data_ops;
	return 0;
}

static int program_define(sim *s, sim_program *p, const trace_record *t, size_t n)
{
	if (p->definitions == p->capacity) {
		size_t capacity = grown_capacity(p->capacity, p->definitions + 1, 4096);
		sim_definition *definition = realloc(p->definition, capacity * sizeof *definition);
		if (!definition)
			return -1;
		p->definition = definition;
		p->capacity = capacity;
	}
	if (p->op_count + 2 * n > p->op_capacity) {
		size_t capacity = grown_capacity(p->op_capacity, p->op_count + 2 * n, 65536);
		sim_op *ops = realloc(p->ops, capacity * sizeof *ops);
		if (!ops)
			return -1;
		p->ops = ops;
		p->op_capacity = capacity;
	}
	if (p->op_count + 2 * n > UINT32_MAX)
		return -1;
	const sim_cache *l1i = &s->core[0].cache[SIM_L1I];
	const uint32_t max_size = s->config.max_access_size;
	const sim_modify modify = s->config.modify;
	sim_op *ops = p->ops + p->op_count;
	size_t made = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &t[i];
		sim_op *op = &ops[made++];
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		op->size = (uint16_t)size;
		op->trace_kind = r->kind;
		op->repeat = 0;
		op->line = 0;
		op->front = op->front2 = 0;
		op->advance = 1;
		op->index = (uint8_t)i;
		op->address = r->kind == TRACE_INSTRUCTION ? r->address : r->instruction_address;
		if (r->kind == TRACE_INSTRUCTION) {
			uint64_t line = r->address >> l1i->line_bits;
			op->kind = OP_OTHER;
			if (size != 0 && r->address + size - 1 >= r->address &&
			    ((r->address + size - 1) >> l1i->line_bits) == line) {
				op->kind = OP_FETCH;
				op->line = line;
				op->front = (uint32_t)((line & l1i->set_mask) * l1i->assoc);
				/* the fetches of this line right before it: one more each */
				for (size_t j = made - 1; j-- > 0 && ops[j].kind == OP_FETCH && ops[j].line == line;)
					ops[j].repeat++;
			} else if (size != 0 && r->address + size - 1 >= r->address &&
			           ((r->address + size - 1) >> l1i->line_bits) == line + 1 && l1i->set_mask != 0) {
				op->kind = OP_FETCH2;
				op->line = line;
				op->front = (uint32_t)((line & l1i->set_mask) * l1i->assoc);
				op->front2 = (uint32_t)(((line + 1) & l1i->set_mask) * l1i->assoc);
			}
		} else if ((r->kind == TRACE_READ || r->kind == TRACE_WRITE) && size != 0) {
			op->kind = r->kind == TRACE_READ ? OP_READ : OP_WRITE;
		} else if (r->kind == TRACE_MODIFY && size != 0) {
			op->kind = modify == SIM_MODIFY_WRITE ? OP_WRITE : OP_READ;
			if (modify == SIM_MODIFY_READ_WRITE) {
				/* the read, then the write of the same word */
				op->advance = 0;
				ops[made] = *op;
				ops[made].kind = OP_WRITE;
				ops[made].advance = 1;
				made++;
			}
		} else {
			op->kind = OP_OTHER;
			op->size = r->size;   /* mru_special cuts it */
		}
	}
	sim_definition *def = &p->definition[p->definitions];
	def->first = (uint32_t)p->op_count;
	def->count = (uint32_t)made;
	if (fast_form(s, p, def, ops, made) != 0)
		return -1;
	p->op_count += made;
	p->definitions++;
	return 0;
}

static int program_update(sim *s, const trace_compact *c, plumb_status *status)
{
	sim_program *p = s->program;
	if (!p && !(p = s->program = calloc(1, sizeof *p)))
		return plumb_fail_errno(status, ENOMEM, "simulator: plumbgrind's definitions");
	if (p->stream != c->stream || c->definitions < p->definitions) {
		/* another stream: start again */
		p->stream = c->stream;
		p->definitions = 0;
		p->op_count = 0;
		p->line_count = 0;
		p->data_op_count = 0;
	}
	while (p->definitions < c->definitions) {
		size_t d = p->definitions;
		if (c->count[d] == 0 || program_define(s, p, c->templates + c->first[d], c->count[d]) != 0)
			return plumb_fail_errno(status, ENOMEM, "simulator: plumbgrind's definitions");
		p->definition[d].data_words = c->data[d];
		p->definition[d].head_high = (uint32_t)(TRACE_COMPACT_USE_HIGH << 8 | c->data[d]);
		p->definition[d].records = c->count[d];
	}
	return 0;
}

/* A use's data count (trace_compact: bits 32-39 of its word). */
static inline size_t use_data(uint64_t word)
{
	return (size_t)(word >> 32) & 0xff;
}

/* The records of the run's entries before `entry`, for an error message
 * (counted only then, so the loops need not). */
static uint64_t records_before(const trace_compact *c, const uint64_t *entry)
{
	uint64_t n = 0;
	for (const uint64_t *w = c->words; w < entry; w += 1 + use_data(w[0]))
		n += c->count[(uint32_t)w[0]];
	return n;
}

/* Not the MRU loop's case: the records, expanded in small batches. */
static int compact_expanded(sim *s, const trace_compact *c, plumb_status *status)
{
	trace_record records[512];
	size_t n = 0;
	for (const uint64_t *w = c->words; w < c->end;) {
		uint32_t id = (uint32_t)w[0];
		const trace_record *t = c->templates + c->first[id];
		size_t count = c->count[id];
		const uint64_t *d = w + 1;
		w = d + use_data(w[0]);
		if (n + count > sizeof records / sizeof *records) {
			if (sim_access_batch(s, records, n, status) != 0)
				return -1;
			n = 0;
		}
		for (size_t i = 0; i < count; i++) {
			trace_record *r = &records[n++];
			*r = t[i];
			r->thread = c->thread;
			if (r->kind != TRACE_INSTRUCTION)
				r->address = *d++;
		}
	}
	return n ? sim_access_batch(s, records, n, status) : 0;
}

static __attribute__((noinline)) int compact_other(sim *s, mru_state *m, const sim_op *op, const uint64_t **data,
                                                    uint32_t *thread, size_t index, plumb_status *status)
{
	trace_record r;
	memset(&r, 0, sizeof r);
	r.kind = op->trace_kind;
	r.size = op->size;
	r.thread = *thread;
	r.flags = TRACE_HAS_INSTRUCTION_ADDRESS;
	r.instruction_address = op->address;
	r.address = op->address;
	if (op->trace_kind != TRACE_INSTRUCTION)
		r.address = *(*data)++;
	return mru_special(s, m, &r, index, thread, status);
}

/* ---- The entries' loop with classification ----
 * What batch_fast_body does with classification and no TLB, for LRU L1s
 * with power-of-two sets: a hit also references the L1's shadow (inline
 * when the line is the shadow's most recent already, as after a fetch of
 * the same line); with several cores a one-line write hit of a line in M
 * also records the words written (sim_write_hit_words, what the general
 * path adds for the sharing masks), and the other writes take the general
 * path, as every write does with Franz's ESI.  The fetches that follow a hit in
 * the same line are hits and the shadow's most recent line: counted at
 * once.  A hit deeper in its set is moved to the front inline (with 8-way
 * L1s and AVX-512, by the vector search compact_mru uses); a definition
 * whose fetch lines are all hits has its fetches counted at once and only
 * its data references walked (compact_classify_body).  Everything else goes
 * through classify_one, batch_fast_body's decisions for one reference. */
static inline void shadow_touch(sim_shadow *shadow, uint64_t line)
{
	sim_shadow_touch(shadow, line);
}

/* What makes a data reference of kind a hit in the classifying loop (as
 * sim_mru_masks, but no write is one when every write is general). */
static void classify_masks(const sim *s, unsigned kind, uint8_t *need, uint8_t *want, uint8_t *dirty)
{
	sim_mru_masks((sim_access_kind)kind, s->config.cache[SIM_L1D].write_back, need, want, dirty);
	if (kind == SIM_WRITE && every_write_general(s)) {
		*need = 0;
		*want = 1;
	}
}

typedef struct classify_state {
	mru_state m;
	sim_cache *cache[SIM_KIND_COUNT];   /* by kind: L1I, L1D, L1D */
	bool note_writes;                    /* several cores: a write hit records its words */
	bool general_writes;                 /* several cores and ESI: every write is general */
} classify_state;

static __attribute__((noinline)) int classify_one(sim *s, classify_state *c, sim_access_kind kind, uint64_t address,
                                                   uint32_t size, uint64_t ip)
{
	mru_state *m = &c->m;
	const mru_l1 *f = &m->l1[kind];
	sim_cache *cache = c->cache[kind];
	if (s->config.max_access_size && size > s->config.max_access_size)
		size = s->config.max_access_size;
	uint64_t line = address >> f->line_bits, last_line = (address + size - 1) >> f->line_bits;
	if (kind == SIM_WRITE && c->general_writes) {
		/* the general path */
	} else if (size != 0 && last_line == line + 1 && address + size - 1 > address) {
		if (kind == SIM_WRITE && c->note_writes)
			goto general;   /* a straddling write records its words per line */
		long a = sim_cache_find(cache, line), b = sim_cache_find(cache, last_line);
		if (a >= 0 && b >= 0 && (cache->meta[a] & f->need) == f->want && (cache->meta[b] & f->need) == f->want) {
			sim_shadow_touch(&cache->shadow, line);
			sim_shadow_touch(&cache->shadow, last_line);
			cache->meta[a] |= f->dirty;
			sim_cache_move_to_front(cache, (size_t)a);
			b = sim_cache_find(cache, last_line);
			cache->meta[b] |= f->dirty;
			sim_cache_move_to_front(cache, (size_t)b);
			m->straddles++;
			return 0;
		}
	} else if (size != 0 && last_line == line) {
		long w = sim_cache_find(cache, line);
		if (w >= 0 && (cache->meta[w] & f->need) == f->want) {
			shadow_touch(&cache->shadow, line);
			if (kind == SIM_WRITE && c->note_writes && sim_others_recorded(s, m->core))
				sim_write_hit_words(s, m->core, address, size);
			cache->meta[w] |= f->dirty;
			sim_cache_move_to_front(cache, (size_t)w);
			return 0;
		}
	}
general:
	m->general[kind]++;
	s->current_ip = ip;
	sim_reference_caches(s, m->core, kind, address, size);
	return s->failed ? -1 : 0;
}

/* sim_access_compact's vector search of an 8-way set, below. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
static inline __attribute__((target("avx512f"))) int wide_set_hit(uint64_t *tags, uint8_t *meta, uint64_t line,
                                                                 uint8_t need, uint8_t want, uint8_t dirty);
#else
static inline int wide_set_hit(uint64_t *tags, uint8_t *meta, uint64_t line, uint8_t need, uint8_t want, uint8_t dirty);
#endif

/* Whether line is in its set of an ordered L1 (front: the set's first way)
 * with metadata that makes it a hit; if so it is moved to the front (with
 * dirty added), as classify_one moves a hit.  wide: 8-way sets, AVX-512. */
static inline __attribute__((always_inline)) bool l1_hit_to_front(uint64_t *tags, uint8_t *meta, size_t front,
                                                                  uint32_t assoc, uint64_t line, uint8_t need,
                                                                  uint8_t want, uint8_t dirty, const bool wide)
{
	if (__builtin_expect(tags[front] == line, 1)) {
		unsigned found = meta[front];
		if (__builtin_expect((found & need) != want, 0))
			return false;
		if (dirty & ~found)
			meta[front] = (uint8_t)(found | dirty);
		return true;
	}
	if (wide)
		return wide_set_hit(tags + front, meta + front, line, need, want, dirty);
	for (uint32_t w = 1; w < assoc; w++) {
		if (tags[front + w] != line)
			continue;
		uint8_t found = meta[front + w];
		if ((found & need) != want)
			return false;
		for (uint32_t i = w; i > 0; i--) {
			tags[front + i] = tags[front + i - 1];
			meta[front + i] = meta[front + i - 1];
		}
		tags[front] = line;
		meta[front] = (uint8_t)(found | dirty);
		return true;
	}
	return false;
}

/* A shadow's log as the loop keeps it: in locals, which the compiler can
 * keep in registers (the shadow's own fields might be any of the stores to
 * the tags, as far as it can tell), written back before anything else
 * reads the shadow (classify_one, a sync). */
typedef struct touch_log {
	sim_shadow *shadow;
	uint64_t *at, *full;      /* the next entry; the log's end */
	uint64_t last, before;    /* the two lines touched last, distinct (before: SIM_NO_TAG, none) */
} touch_log;

/* The lines touched are the log's, then before, then last.  Only the order
 * of last touches matters to an LRU list, so a line that goes back and
 * forth with the one before it (a loop's stack slot and its array) swaps
 * the two instead of making an entry: a line is logged when a third line
 * pushes it out, or when the log is handed over. */
static inline __attribute__((always_inline)) void touch_log_load(touch_log *t)
{
	t->at = t->shadow->log + t->shadow->logged;
	t->full = t->shadow->log + t->shadow->log_capacity;
	t->last = t->shadow->last;
	t->before = SIM_NO_TAG;
}

static inline __attribute__((always_inline)) void touch_log_push(touch_log *t, uint64_t line)
{
	*t->at++ = line;
	if (__builtin_expect(t->at == t->full, 0)) {
		t->shadow->logged = (uint32_t)(t->at - t->shadow->log);
		sim_shadow_sync(t->shadow);
		t->at = t->shadow->log + t->shadow->logged;
		t->full = t->shadow->log + t->shadow->log_capacity;
	}
}

/* Logs the two lines and hands the log back to the shadow (last its most
 * recent line).  The last line stays the local log's, logged: it is not
 * logged yet when before is a line, or when it is not the shadow's last
 * (the first line after a load whose shadow had none). */
static inline __attribute__((always_inline)) void touch_log_store(touch_log *t)
{
	if (t->before != SIM_NO_TAG) {
		touch_log_push(t, t->before);
		touch_log_push(t, t->last);
		t->before = SIM_NO_TAG;
	} else if (t->last != t->shadow->last) {
		touch_log_push(t, t->last);
	}
	t->shadow->last = t->last;
	t->shadow->logged = (uint32_t)(t->at - t->shadow->log);
}

/* touch_log_store for a log that touch_log_add alone adds to (its last
 * line is logged already). */
static inline __attribute__((always_inline)) void touch_log_store_plain(const touch_log *t)
{
	t->shadow->last = t->last;
	t->shadow->logged = (uint32_t)(t->at - t->shadow->log);
}

/* sim_shadow_touch on the local copy: the L1I's (its lines come a use's
 * lines at a time, and seldom back and forth). */
static inline __attribute__((always_inline)) void touch_log_add(touch_log *t, uint64_t line)
{
	if (line == t->last)
		return;
	touch_log_push(t, line);
	t->last = line;
}

/* The same, swapping a line that goes back and forth with the one before
 * it: the L1D's. */
static inline __attribute__((always_inline)) void touch_log_swap(touch_log *t, uint64_t line)
{
	if (line == t->last)
		return;
	uint64_t pushed = t->before;
	t->before = t->last;
	t->last = line;
	if (line == pushed)
		return;
	if (pushed != SIM_NO_TAG)
		touch_log_push(t, pushed);
}

/* A one-line data reference that hits in the L1D, moved to the front, with
 * its line touched in the L1D's shadow and, for a write when another core
 * holds an invalidation record (recorded), its words noted; false:
 * classify_one's to decide. */
static inline __attribute__((always_inline)) bool classify_data_hit(sim *s, uint32_t core, uint64_t *tags,
                                                                    uint8_t *meta, uint64_t set_mask,
                                                                    unsigned line_bits, uint32_t assoc,
                                                                    touch_log *shadow, unsigned kind,
                                                                    uint64_t address, uint32_t size, uint8_t need,
                                                                    uint8_t want, uint8_t dirty, bool recorded,
                                                                    const bool wide)
{
	uint64_t line = address >> line_bits;
	if (__builtin_expect(((address + size - 1) >> line_bits) != line, 0))
		return false;
	size_t front = (size_t)(line & set_mask) * assoc;
	if (!l1_hit_to_front(tags, meta, front, assoc, line, need, want, dirty, wide))
		return false;
	touch_log_swap(shadow, line);
	if (__builtin_expect(recorded, 0) && kind == OP_WRITE)
		sim_write_hit_words(s, core, address, size);
	return true;
}

/* classify_one, with the logs written back before and read again after,
 * and whether another core now holds an invalidation record. */
static inline __attribute__((always_inline)) int classify_logged(sim *s, classify_state *c, touch_log *ilog,
                                                                 touch_log *dlog, sim_access_kind kind,
                                                                 uint64_t address, uint32_t size, uint64_t ip,
                                                                 bool *recorded)
{
	touch_log_store_plain(ilog);
	touch_log_store(dlog);
	int rc = classify_one(s, c, kind, address, size, ip);
	touch_log_load(ilog);
	touch_log_load(dlog);
	*recorded = c->note_writes && sim_others_recorded(s, c->m.core);
	return rc;
}

/* The loop.  A definition's fast form (compact_mru's) is taken here too:
 * when its fetch lines are all at the front of their sets, every fetch is a
 * hit, and once its data references have all hit too, the L1I's shadow is
 * touched with its lines in the order of their last fetches (p->lines),
 * which leaves the shadow as touching them fetch by fetch would: only the
 * order of last touches matters to an LRU list, and the data references
 * that hit touch the L1D's shadow only.  When a data reference does not
 * hit, the fetches before it are touched in order, the fetches after it are
 * taken back, and the ops after it go one by one. */
static inline __attribute__((always_inline)) int compact_classify_body(sim *s, trace_compact *cp,
                                                                       plumb_status *status, const bool wide)
{
	const sim_program *p = s->program;
	classify_state c;
	memset(&c, 0, sizeof c);
	mru_state *m = &c.m;
	m->write_back = s->config.cache[SIM_L1D].write_back;
	c.note_writes = s->config.cores > 1;
	c.general_writes = every_write_general(s);
	if (thread_slot(s, cp->thread, &m->core, status) != 0)
		return -1;
	mru_load(s, m);
	const uint32_t core = m->core;
	c.cache[SIM_IFETCH] = &s->core[core].cache[SIM_L1I];
	c.cache[SIM_READ] = c.cache[SIM_WRITE] = &s->core[core].cache[SIM_L1D];
	touch_log ilog = { .shadow = &c.cache[SIM_IFETCH]->shadow }, dlog = { .shadow = &c.cache[SIM_READ]->shadow };
	touch_log_load(&ilog);
	touch_log_load(&dlog);
	const mru_l1 l1d = m->l1[SIM_READ];   /* the geometry; need, want and dirty by kind below */
	const uint64_t *itags = m->l1[SIM_IFETCH].tags;
	const uint8_t *imeta = m->l1[SIM_IFETCH].meta;
	const uint8_t ineed = m->l1[SIM_IFETCH].need, iwant = m->l1[SIM_IFETCH].want;
	const uint32_t iassoc = m->l1[SIM_IFETCH].assoc;
	/* by kind: the L1I's, and classify_masks' for a read and a write (the
	 * fast form's data ops carry the same) */
	uint8_t need[SIM_KIND_COUNT] = { ineed }, want[SIM_KIND_COUNT] = { iwant }, dirty[SIM_KIND_COUNT] = { 0 };
	for (unsigned k = SIM_READ; k <= SIM_WRITE; k++)
		classify_masks(s, k, &need[k], &want[k], &dirty[k]);
	/* another core holds an invalidation record: only classify_one's
	 * general path changes that */
	bool recorded = c.note_writes && sim_others_recorded(s, core);
	uint64_t counts[SIM_KIND_COUNT] = { 0, 0, 0 }, straddles = 0, records = 0;
	int rc = 0;
	const uint64_t *w = cp->words, *end = cp->end;
	const size_t definitions = p->definitions;
	const sim_definition *defs = p->definition;
	const sim_op *const ops = p->ops;
	const sim_fetch_line *const program_lines = p->lines;
	const sim_data_op *const data_ops = p->data_ops;
	/* the L1D's geometry in locals (an 8-way set with AVX-512) */
	uint64_t *const dtags = (uint64_t *)l1d.tags;
	uint8_t *const dmeta = l1d.meta;
	const uint64_t dmask = l1d.set_mask;
	const unsigned dbits = l1d.line_bits;
	const uint32_t dassoc = wide ? 8 : l1d.assoc;
	while (w < end) {
		/* An unchecked run (trace_compact.unchecked) is checked here, use by
		 * use, as trace_compact_settle checks it: it ends at the first entry
		 * that is not a good use (the reader reports a bad one). */
		const uint64_t *entry = w;
		const uint64_t head = w[0];
		const uint32_t id = (uint32_t)head;
		if (__builtin_expect(id >= definitions, 0))
			break;
		const sim_definition *def = &defs[id];
		const uint32_t high = (uint32_t)(head >> 32);
		const uint64_t *d = w + 1, *next = d + (high & 0xff);
		if (__builtin_expect(high != def->head_high || next > end, 0))
			break;
		w = next;
		records += def->records;
		const unsigned lines = def->lines;
		const sim_op *op = NULL;   /* set on every path that reaches the ops one by one */
		if (__builtin_expect(lines != SIM_NO_FAST_FORM, 1)) {
			/* most definitions have one line: the definition's own, on a
			 * path of its own */
			bool at_front = true;
			if (__builtin_expect(lines == 1, 1)) {
				at_front = itags[def->front] == def->line && (imeta[def->front] & ineed) == iwant;
			} else {
				const sim_fetch_line *fl = program_lines + def->line_first;
				for (uint32_t i = 0; i < lines; i++)
					at_front &= itags[fl[i].front] == fl[i].line && (imeta[fl[i].front] & ineed) == iwant;
			}
			if (__builtin_expect(!at_front, 0)) {
				const sim_fetch_line *fl = program_lines + def->line_first;
				/* Each line in its set and a hit: moved to the front now.  The
				 * lines are in different sets (add_line), and until a fetch
				 * misses only invalidations change the L1I, which take a line
				 * out of its set as they would before its move.  So the moves
				 * made before a line that is not there change nothing that
				 * the ops, one by one, do not do too. */
				at_front = true;
				for (uint32_t i = 0; i < lines && at_front; i++)
					at_front = l1_hit_to_front((uint64_t *)itags, (uint8_t *)imeta, fl[i].front, iassoc, fl[i].line,
					                           ineed, iwant, 0, wide);
			}
			if (__builtin_expect(at_front, 1)) {
				counts[SIM_IFETCH] += def->fetches;
				straddles += def->straddles;
				const sim_data_op *dop = data_ops + def->data_first, *dop_end = dop + def->data_ops;
				for (; dop < dop_end; dop++) {
					unsigned kind = dop->kind;
					counts[kind]++;
					uint64_t address = *d;
					d += dop->advance;
					if (__builtin_expect(classify_data_hit(s, core, dtags, dmeta, dmask, dbits, dassoc, &dlog, kind,
					                                       address, dop->size, dop->need, dop->want, dop->dirty,
					                                       recorded, wide), 1))
						continue;
					/* Not known to be hits any more: one by one after it.  The
					 * fetches before it touch the L1I's shadow as they came: its
					 * general path may take a fetch line of this use out of the
					 * L1I (the L2's victim, a back-invalidation), and that
					 * line's miss, after it, must find the shadow as it was. */
					counts[SIM_IFETCH] -= dop->fetches_after;
					straddles -= dop->straddles_after;
					op = ops + def->first;
					for (const sim_op *before = op, *stop = op + dop->resume - 1; before < stop; before++) {
						if (before->kind == OP_FETCH || before->kind == OP_FETCH2)
							touch_log_add(&ilog, before->line);
						if (before->kind == OP_FETCH2)
							touch_log_add(&ilog, before->line + 1);
					}
					op += dop->resume;
					rc = classify_logged(s, &c, &ilog, &dlog, (sim_access_kind)kind, address, dop->size, op[-1].address, &recorded);
					if (rc)
						rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
						                (size_t)records_before(cp, entry) + dop->index, s->failure);
					break;
				}
				if (rc)
					break;
				if (dop == dop_end) {
					/* every fetch a hit: the lines in the order of their last fetches */
					if (__builtin_expect(lines == 1, 1)) {
						touch_log_add(&ilog, def->line);
					} else {
						const sim_fetch_line *fl = program_lines + def->line_first;
						for (uint32_t i = 0; i < lines; i++)
							touch_log_add(&ilog, fl[i].line);
					}
					continue;
				}
			} else {
				op = ops + def->first;
			}
		} else {
			op = ops + def->first;
		}
		const sim_op *const op_end = ops + def->first + def->count;
		for (; op < op_end; op++) {
			unsigned kind = op->kind;
			uint64_t address;
			uint32_t size;
			if (kind == OP_FETCH) {
				if (__builtin_expect(l1_hit_to_front((uint64_t *)itags, (uint8_t *)imeta, op->front, iassoc, op->line,
				                                     ineed, iwant, 0, wide), 1)) {
					touch_log_add(&ilog, op->line);
					counts[SIM_IFETCH] += 1 + op->repeat;
					op += op->repeat;
					continue;
				}
				kind = SIM_IFETCH;
				address = op->address;
				size = op->size;
			} else if (kind == OP_READ || kind == OP_WRITE) {
				address = *d;
				d += op->advance;
				size = op->size;
				if (__builtin_expect(classify_data_hit(s, core, dtags, dmeta, dmask, dbits, dassoc, &dlog, kind, address,
				                                       size, need[kind], want[kind], dirty[kind], recorded, wide), 1)) {
					counts[kind]++;
					continue;
				}
			} else if (kind == OP_FETCH2 && itags[op->front] == op->line && itags[op->front2] == op->line + 1 &&
			           (imeta[op->front] & ineed) == iwant && (imeta[op->front2] & ineed) == iwant) {
				/* a fetch across two lines both at the front of their sets:
				 * classify_one's straddle hit, nothing to move */
				counts[SIM_IFETCH]++;
				straddles++;
				touch_log_add(&ilog, op->line);
				touch_log_add(&ilog, op->line + 1);
				continue;
			} else {
				/* a fetch across two lines, size 0 (a modify of size 0 is a
				 * read, a write, or both, as batch_fast_body makes it) */
				kind = op->trace_kind == TRACE_INSTRUCTION ? SIM_IFETCH : op->trace_kind == TRACE_WRITE ? SIM_WRITE : SIM_READ;
				address = op->address;
				size = op->size;
				if (op->trace_kind != TRACE_INSTRUCTION)
					address = *d++;
				if (op->trace_kind == TRACE_MODIFY && s->config.modify != SIM_MODIFY_READ) {
					if (s->config.modify == SIM_MODIFY_READ_WRITE) {
						counts[SIM_READ]++;
						rc = classify_logged(s, &c, &ilog, &dlog, SIM_READ, address, size, op->address, &recorded);
						if (rc)
							goto failed;
					}
					kind = SIM_WRITE;
				}
			}
			counts[kind]++;
			rc = classify_logged(s, &c, &ilog, &dlog, (sim_access_kind)kind, address, size, op->address, &recorded);
			if (rc)
				goto failed;
			continue;
		failed:
			rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
			                (size_t)records_before(cp, entry) + op->index, s->failure);
			break;
		}
		if (rc)
			break;
	}
	if (cp->unchecked && rc == 0) {
		/* where the run ends: the whole block's uses, walked once */
		cp->end = w;
		cp->records = records;
		cp->unchecked = false;
	}
	touch_log_store_plain(&ilog);
	touch_log_store(&dlog);
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		m->references[k] += counts[k];
	m->straddles += straddles;
	mru_flush(s, m);
	return rc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
static __attribute__((target("avx512f"))) int compact_classify_wide(sim *s, trace_compact *cp,
                                                                     plumb_status *status)
{
	return compact_classify_body(s, cp, status, true);
}
#endif

static int compact_classify_narrow(sim *s, trace_compact *cp, plumb_status *status)
{
	return compact_classify_body(s, cp, status, false);
}

/* ---- The entries' loop without classification ----
 * A data reference's line deeper in its set is found and moved to the front
 * here too.  With AVX-512 and 8-way L1s a set's tags are one vector: the
 * line is looked for in all ways at once and the move to the front is a
 * lane rotation, with no branch on the way it is in (the scalar search and
 * move, inline or in mru_other, cost gzip's run 8% more CPU).  A hit at the
 * front stays a scalar compare with nothing written: stores of the whole set
 * on every hit made the next reference of the set wait for them. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIM_WIDE_SETS 1
/* Whether a hit of line at way 1-7 of the 8-way set at tags/meta was moved
 * to the front (0: not there, or not a hit for its metadata). */
static inline __attribute__((target("avx512f"))) int wide_set_hit(uint64_t *tags, uint8_t *meta, uint64_t line,
                                                                 uint8_t need, uint8_t want, uint8_t dirty)
{
	__m512i t = _mm512_loadu_si512(tags);
	unsigned found_ways = (unsigned)_mm512_cmpeq_epi64_mask(t, _mm512_set1_epi64((long long)line));
	uint64_t m;
	memcpy(&m, meta, sizeof m);
	unsigned way = (unsigned)__builtin_ctz(found_ways | 0x100u);   /* 8: not in the set */
	uint8_t found = (uint8_t)(m >> (8 * (way & 7)));
	if (way >= 8 || (found & need) != want)
		return 0;
	/* ways 0..way-1 move down one, the line goes to the front */
	t = _mm512_mask_mov_epi64(t, (__mmask8)((2u << way) - 1), _mm512_alignr_epi64(t, t, 7));
	_mm512_storeu_si512(tags, _mm512_mask_set1_epi64(t, 1, (long long)line));
	uint64_t moved = ~0ull >> (56 - 8 * way);   /* the bytes of ways 0..way */
	m = (m & ~moved) | ((m << 8) & moved) | (uint8_t)(found | dirty);
	memcpy(meta, &m, sizeof m);
	return 1;
}
#else
#define SIM_WIDE_SETS 0
static inline int wide_set_hit(uint64_t *tags, uint8_t *meta, uint64_t line, uint8_t need, uint8_t want, uint8_t dirty)
{
	(void)tags, (void)meta, (void)line, (void)need, (void)want, (void)dirty;
	return 0;
}
#endif

/* A one-line data reference that hits in the L1D, at the front or deeper
 * (moved to the front); false: mru_other's to decide. */
static inline __attribute__((always_inline)) bool l1d_hit(const mru_l1 *f, uint64_t address, uint32_t size,
                                                          const bool wide)
{
	uint64_t line = address >> f->line_bits;
	size_t front = (size_t)(line & f->set_mask) * f->assoc;
	if (__builtin_expect(((address + size - 1) >> f->line_bits) != line, 0))
		return false;
	if (__builtin_expect(f->tags[front] == line, 1)) {
		unsigned meta = f->meta[front];
		if (__builtin_expect((meta & f->need) == f->want, 1)) {
			if (__builtin_expect(f->dirty & ~meta, 0))
				f->meta[front] = (uint8_t)(meta | f->dirty);
			return true;
		}
		return false;
	}
	if (wide)
		return wide_set_hit((uint64_t *)f->tags + front, f->meta + front, line, f->need, f->want, f->dirty);
	if (f->assoc > 1 && f->tags[front + 1] == line) {
		/* the second way: mru_other's move to the front, a swap */
		uint8_t meta = f->meta[front + 1];
		if ((meta & f->need) == f->want) {
			uint64_t *tags = (uint64_t *)f->tags;
			tags[front + 1] = tags[front];
			f->meta[front + 1] = f->meta[front];
			tags[front] = line;
			f->meta[front] = (uint8_t)(meta | f->dirty);
			return true;
		}
	}
	return false;
}

static inline __attribute__((always_inline)) int compact_mru(sim *s, const trace_compact *c, plumb_status *status,
                                                             const bool wide)
{
	const sim_program *p = s->program;
	mru_state m;
	memset(&m, 0, sizeof m);
	m.write_back = s->config.cache[SIM_L1D].write_back;
	uint32_t thread = c->thread;
	if (thread_slot(s, thread, &m.core, status) != 0)
		return -1;
	mru_load(s, &m);
	const uint64_t *itags = m.l1[SIM_IFETCH].tags;
	const uint8_t *imeta = m.l1[SIM_IFETCH].meta;
	const uint8_t ineed = m.l1[SIM_IFETCH].need, iwant = m.l1[SIM_IFETCH].want;
	uint64_t counts[SIM_KIND_COUNT] = { 0, 0, 0 }, straddles = 0;
	int rc = 0;
	const uint64_t *w = c->words, *end = c->end;
	while (w < end) {
		const uint64_t *entry = w;
		const sim_definition def = p->definition[(uint32_t)w[0]];
		const sim_op *op = p->ops + def.first, *op_end = op + def.count;
		const uint64_t *d = w + 1;
		w = d + use_data(w[0]);
		if (__builtin_expect(def.lines != SIM_NO_FAST_FORM, 1)) {
			const sim_fetch_line *fl = p->lines + def.line_first;
			bool at_front = true;
			for (uint32_t i = 0; i < def.lines; i++)
				at_front &= itags[fl[i].front] == fl[i].line && (imeta[fl[i].front] & ineed) == iwant;
			if (__builtin_expect(at_front, 1)) {
				counts[SIM_IFETCH] += def.fetches;
				straddles += def.straddles;
				const sim_data_op *dop = p->data_ops + def.data_first, *dop_end = dop + def.data_ops;
				for (; dop < dop_end; dop++) {
					unsigned kind = dop->kind;
					const mru_l1 *f = &m.l1[kind];
					counts[kind]++;
					uint64_t address = *d;
					d += dop->advance;
					if (__builtin_expect(l1d_hit(f, address, dop->size, wide), 1))
						continue;
					/* not known to be hits any more: one by one after it */
					counts[SIM_IFETCH] -= dop->fetches_after;
					straddles -= dop->straddles_after;
					rc = mru_other(s, &m, (sim_access_kind)kind, address, dop->size);
					if (rc)
						rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
						                (size_t)records_before(c, entry) + dop->index, s->failure);
					op += dop->resume;
					break;
				}
				if (rc)
					break;
				if (dop == dop_end)
					continue;
			}
		}
		for (; op < op_end; op++) {
			unsigned kind = op->kind;
			if (kind == OP_FETCH) {
				size_t front = op->front;
				if (__builtin_expect(itags[front] == op->line && (imeta[front] & ineed) == iwant, 1)) {
					counts[SIM_IFETCH] += 1 + op->repeat;
					op += op->repeat;
					continue;
				}
				counts[SIM_IFETCH]++;
				rc = mru_other(s, &m, SIM_IFETCH, op->address, op->size);
			} else if (kind == OP_FETCH2) {
				/* both lines at the front: mru_straddle's hit, nothing to move */
				size_t front = op->front, front2 = op->front2;
				counts[SIM_IFETCH]++;
				if (__builtin_expect(itags[front] == op->line && itags[front2] == op->line + 1 &&
				                     (imeta[front] & ineed) == iwant && (imeta[front2] & ineed) == iwant, 1)) {
					straddles++;
					continue;
				}
				rc = mru_other(s, &m, SIM_IFETCH, op->address, op->size);
			} else if (kind != OP_OTHER) {
				const mru_l1 *f = &m.l1[kind];
				counts[kind]++;
				uint64_t address = *d;
				d += op->advance;
				if (__builtin_expect(l1d_hit(f, address, op->size, wide), 1))
					continue;
				rc = mru_other(s, &m, (sim_access_kind)kind, address, op->size);
			} else {
				rc = compact_other(s, &m, op, &d, &thread, (size_t)records_before(c, entry) + op->index, status);
				if (rc)
					break;
				continue;
			}
			if (rc) {
				rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
				                (size_t)records_before(c, entry) + op->index, s->failure);
				break;
			}
		}
		if (rc)
			break;
	}
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		m.references[k] += counts[k];
	m.straddles += straddles;
	mru_flush(s, &m);
	return rc;
}

#if SIM_WIDE_SETS
static __attribute__((target("avx512f"))) int compact_mru_wide(sim *s, const trace_compact *c, plumb_status *status)
{
	return compact_mru(s, c, status, true);
}
#endif

static int compact_mru_narrow(sim *s, const trace_compact *c, plumb_status *status)
{
	return compact_mru(s, c, status, false);
}

int sim_access_compact(sim *s, trace_compact *c, plumb_status *status)
{
	if (c->filtered)
		return plumb_fail(status, EINVAL, "plumbgrind's filtered entries go to sim_access_filtered");
	bool general = s->config.check || s->annotate || s->has_tlb || !l1s_ordered(s);
	/* only the classifying loop checks an unchecked run as it walks */
	if (c->unchecked && (general || !s->config.classify))
		trace_compact_settle(c);
	if (c->words == c->end)
		return 0;
	if (general)
		return compact_expanded(s, c, status);
	if (program_update(s, c, status) != 0)
		return -1;
#if SIM_WIDE_SETS
	const sim_cache *l1d = &s->core[0].cache[SIM_L1D];
	bool wide_sets = !s->narrow_sets && l1d->assoc == 8 && __builtin_cpu_supports("avx512f");
	for (uint32_t core = 1; core < s->config.cores; core++)
		wide_sets = wide_sets && s->core[core].cache[SIM_L1D].assoc == 8;
	if (wide_sets && !s->config.classify)
		return compact_mru_wide(s, c, status);
	/* classification's loop searches the L1Is' sets too */
	for (uint32_t core = 0; core < s->config.cores; core++)
		wide_sets = wide_sets && s->core[core].cache[SIM_L1I].assoc == 8;
	if (wide_sets)
		return compact_classify_wide(s, c, status);
#endif
	if (s->config.classify)
		return compact_classify_narrow(s, c, status);
	return compact_mru_narrow(s, c, status);
}

int sim_access_batch(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	/* annotation charges every reference in sim_engine.c's finish_reference */
	if (!s->config.check && !s->annotate && n > 0)
		return batch_fast(s, records, n, status);
	static const sim_access_kind kinds[4] = { SIM_IFETCH, SIM_READ, SIM_WRITE, SIM_READ };
	const uint32_t max_size = s->config.max_access_size;
	uint64_t counted[SIM_KIND_COUNT] = { 0, 0, 0 };
	uint32_t cached_thread = UINT32_MAX, core = 0;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (r->thread != cached_thread) {
			if (thread_slot(s, r->thread, &core, status) != 0) {
				rc = -1;
				break;
			}
			cached_thread = r->thread;
			s->trace_thread = r->thread;
		}
		if (r->kind > TRACE_MODIFY) {
			if (trace_is_collector_marker(r))
				continue;   /* a halt or a loss: no reference */
			if (trace_is_call(r)) {
				if (s->annotate && sim_annotate_call(s, r, status) != 0) {
					rc = -1;
					break;
				}
				continue;
			}
			if (trace_is_marker(r)) {
				for (int k = 0; k < SIM_KIND_COUNT; k++) {
					s->stats.references[k] += counted[k];
					counted[k] = 0;
				}
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
		s->current_ip = (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS) ? r->instruction_address :
		                r->kind == TRACE_INSTRUCTION ? r->address : 0;
		sim_access_kind kind = kinds[r->kind];
		if (r->kind == TRACE_MODIFY && s->config.modify == SIM_MODIFY_WRITE)
			kind = SIM_WRITE;
		counted[kind]++;
		one_reference(s, core, kind, r->address, size);
		if (r->kind == TRACE_MODIFY && s->config.modify == SIM_MODIFY_READ_WRITE) {
			counted[SIM_WRITE]++;
			one_reference(s, core, SIM_WRITE, r->address, size);
		}
		if (s->failed) {
			rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", i, s->failure);
			break;
		}
	}
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		s->stats.references[k] += counted[k];
	return rc;
}

int sim_access(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size,
               plumb_status *status)
{
	if (core >= s->config.cores)
		return plumb_fail(status, EINVAL, "core %u does not exist (the simulator has %u)", core, s->config.cores);
	if ((unsigned)kind >= SIM_KIND_COUNT)
		return plumb_fail(status, EINVAL, "bad access kind %d", (int)kind);
	s->current_thread = NULL;
	s->current_ip = 0;
	if (s->config.max_access_size && size > s->config.max_access_size)
		size = s->config.max_access_size;
	s->stats.references[kind]++;
	one_reference(s, core, kind, address, size);
	if (s->failed)
		return plumb_fail(status, EPROTO, "invariant violated: %s", s->failure);
	return 0;
}

size_t sim_thread_count(const sim *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->thread_capacity; i++)
		n += s->threads[i].used;
	return n;
}

const sim_thread_stats *sim_thread(const sim *s, size_t index)
{
	for (size_t i = 0; i < s->thread_capacity; i++) {
		if (!s->threads[i].used)
			continue;
		if (index-- == 0)
			return &s->threads[i].stats;
	}
	return NULL;
}

uint64_t sim_core_cycles(const sim *s, uint32_t core, uint64_t *coherence_cycles)
{
	const sim_config *c = &s->config;
	const sim_core_stats *cs = &s->stats.core[core];
	uint64_t cycles = 0;
	for (int level = SIM_L1I; level <= SIM_L2; level++) {
		const sim_cache_stats *st = &cs->cache[level];
		cycles += (st->accesses[0] + st->accesses[1] + st->accesses[2]) * c->cache[level].latency;
	}
	cycles += cs->l3_accesses * c->cache[SIM_L3].latency;
	cycles += cs->memory_reads * c->memory_latency;
	for (int t = 0; t < SIM_TLB_COUNT; t++)
		cycles += cs->tlb[t].misses * c->tlb[t].latency;
	uint64_t coherence = cs->coherence.transfers_received * c->transfer_latency +
	                     (cs->coherence.upgrades_shared + cs->coherence.upgrades_owned) * c->upgrade_latency;
	if (coherence_cycles)
		*coherence_cycles = coherence;
	return cycles + coherence;
}

static uint64_t line_heat(const sim_line_stats *l)
{
	return l->coherence_true + l->coherence_false + l->invalidations + l->transfers + l->upgrades;
}

static int compare_lines(const void *a, const void *b)
{
	const sim_line_stats *x = a, *y = b;
	uint64_t hx = line_heat(x), hy = line_heat(y);
	if (hx != hy)
		return hx > hy ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

size_t sim_hot_lines(const sim *s, sim_line_stats *out, size_t max)
{
	if (!s->config.classify || max == 0)
		return 0;
	sim_shadow_worker_settle(s->shadow_worker);   /* the table's updates, all made */
	size_t n = 0;
	sim_line_stats *all = malloc((s->lines.count + 1) * sizeof *all);
	if (!all)
		return 0;
	for (size_t i = 0; i < s->lines.capacity; i++) {
		if (s->lines.keys[i] == SIM_NO_TAG)
			continue;
		const sim_line_stats *l = sim_table_value_at(&s->lines, i);
		if (line_heat(l) > 0)
			all[n++] = *l;
	}
	qsort(all, n, sizeof *all, compare_lines);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}

static uint64_t code_heat(const sim_code_stats *c)
{
	return c->l1_misses + c->coherence_misses + c->invalidations_sent;
}

static int compare_code(const void *a, const void *b)
{
	const sim_code_stats *x = a, *y = b;
	uint64_t hx = code_heat(x), hy = code_heat(y);
	if (hx != hy)
		return hx > hy ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

size_t sim_hot_code(const sim *s, sim_code_stats *out, size_t max)
{
	if (!s->config.classify || max == 0)
		return 0;
	sim_shadow_worker_settle(s->shadow_worker);
	size_t n = 0;
	sim_code_stats *all = malloc((s->code.count + 1) * sizeof *all);
	if (!all)
		return 0;
	for (size_t i = 0; i < s->code.capacity; i++)
		if (s->code.keys[i] != SIM_NO_TAG)
			all[n++] = *(const sim_code_stats *)sim_table_value_at(&s->code, i);
	qsort(all, n, sizeof *all, compare_code);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}
