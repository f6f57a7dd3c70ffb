/* The hit fast path must count exactly what the general path counts: the
 * same random traces through the same machines without --check (the fast
 * loop) and with it (the general loop: every reference goes through
 * sim_reference) give the same accesses, misses, classes, TLB counts,
 * coherence events and transitions, with classification off and on. */
#include "sim_test_util.h"

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void compare_caches(const sim_cache_stats *a, const sim_cache_stats *b, const char *what)
{
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		cr_assert_eq(a->accesses[k], b->accesses[k], "%s accesses[%d]", what, k);
		cr_assert_eq(a->misses[k], b->misses[k], "%s misses[%d]", what, k);
	}
	cr_assert_eq(a->evictions, b->evictions, "%s evictions", what);
	cr_assert_eq(a->writebacks, b->writebacks, "%s writebacks", what);
	cr_assert_eq(a->back_invalidations, b->back_invalidations, "%s back-invalidations", what);
	cr_assert_eq(a->compulsory, b->compulsory, "%s compulsory", what);
	cr_assert_eq(a->capacity, b->capacity, "%s capacity", what);
	cr_assert_eq(a->conflict, b->conflict, "%s conflict", what);
	cr_assert_eq(a->coherence_true, b->coherence_true, "%s true sharing", what);
	cr_assert_eq(a->coherence_false, b->coherence_false, "%s false sharing", what);
	cr_assert_eq(a->inclusion_victim, b->inclusion_victim, "%s inclusion victims", what);
	cr_assert_eq(a->prefetch_fills, b->prefetch_fills, "%s prefetch fills", what);
	cr_assert_eq(a->prefetch_useful, b->prefetch_useful, "%s prefetch useful", what);
}

static void same_counts(sim_protocol protocol, sim_inclusion inclusion, sim_replacement replacement,
                        sim_prefetcher prefetcher, uint32_t cores, uint64_t seed, bool classify)
{
	sim_config c;
	small_config(&c, cores, protocol);
	c.cache[SIM_L1I].size = c.cache[SIM_L1D].size = 1024;
	c.cache[SIM_L1I].assoc = c.cache[SIM_L1D].assoc = 2;
	c.cache[SIM_L2].size = 4096;
	c.cache[SIM_L3].size = 8192;
	c.l3_inclusion = inclusion;
	for (int l = 0; l < SIM_LEVEL_COUNT; l++)
		c.cache[l].replacement = replacement;
	c.prefetch.kind = prefetcher;
	c.modify = (sim_modify)(seed % 3);
	sim_trace t = { 0 };
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
	uint32_t thread = 0;
	for (int i = 0; i < 20000; i++) {
		uint64_t r = next(&x);
		if (r % 64 == 0)
			thread = (uint32_t)((r >> 8) % (cores + 1));
		trace_kind kind = (trace_kind)((r >> 12) % 4);
		/* mostly near the previous references, sometimes far, sometimes straddling */
		uint64_t address = kind == TRACE_INSTRUCTION ? 0x400000 + ((r >> 16) % 2048)
		                                            : 0x10000 + ((r >> 20) % 6000);
		trace_add(&t, thread, kind, address, (uint16_t)(1u << ((r >> 40) % 4)));
	}
	c.classify = classify;
	if (seed % 2) {
		/* TLBs: the fast path answers repeated pages itself */
		c.tlb[SIM_DTLB].entries = 4;
		c.tlb[SIM_ITLB].entries = 2;
		c.tlb[SIM_STLB].entries = 16;
		c.tlb[SIM_STLB].assoc = 4;
		c.tlb[SIM_DTLB].page_size = c.tlb[SIM_ITLB].page_size = c.tlb[SIM_STLB].page_size = 512;
		c.tlb[SIM_ITLB].replacement = seed % 4 == 1 ? SIM_LRU : SIM_FIFO;
	}
	c.check = false;
	sim *fast = run_trace(&c, &t);
	c.check = true;   /* takes the general loop, which checks every transaction */
	sim *general = run_trace(&c, &t);
	const sim_stats *a = sim_statistics(fast), *b = sim_statistics(general);
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		cr_assert_eq(a->references[k], b->references[k]);
	for (uint32_t core = 0; core < cores; core++) {
		const sim_core_stats *p = &a->core[core], *q = &b->core[core];
		for (int l = SIM_L1I; l <= SIM_L2; l++)
			compare_caches(&p->cache[l], &q->cache[l], sim_level_name((sim_level)l));
		cr_assert_eq(p->straddles, q->straddles);
		cr_assert(memcmp(p->tlb, q->tlb, sizeof p->tlb) == 0, "TLB counts of core %u", core);
		cr_assert_eq(p->l3_accesses, q->l3_accesses);
		cr_assert_eq(p->memory_reads, q->memory_reads);
		cr_assert_eq(p->memory_writes, q->memory_writes);
		cr_assert(memcmp(&p->coherence, &q->coherence, sizeof p->coherence) == 0, "coherence of core %u", core);
		cr_assert(memcmp(&p->prefetch, &q->prefetch, sizeof p->prefetch) == 0, "prefetch of core %u", core);
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			cr_assert_eq(p->references[k], q->references[k]);
	}
	compare_caches(&a->l3, &b->l3, "L3");
	cr_assert_eq(a->memory_reads, b->memory_reads);
	cr_assert_eq(a->memory_writes, b->memory_writes);
	for (size_t i = 0; i < sim_thread_count(fast); i++) {
		const sim_thread_stats *p = sim_thread(fast, i), *q = sim_thread(general, i);
		cr_assert_eq(p->thread, q->thread);
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			cr_assert_eq(p->references[k], q->references[k]);
		cr_assert_eq(p->l1_misses, q->l1_misses);
		cr_assert_eq(p->last_level_misses, q->last_level_misses);
		cr_assert_eq(p->invalidations_sent, q->invalidations_sent);
		cr_assert_eq(p->coherence_misses, q->coherence_misses);
	}
	if (classify) {
		sim_line_stats la[8], lb[8];
		size_t na = sim_hot_lines(fast, la, 8), nb = sim_hot_lines(general, lb, 8);
		cr_assert_eq(na, nb);
		cr_assert(memcmp(la, lb, na * sizeof la[0]) == 0, "hot lines differ");
	}
	sim_free(fast);
	sim_free(general);
	trace_release(&t);
}

Test(sim_fastpath, counts_what_the_general_path_counts)
{
	static const sim_protocol protocols[] = { SIM_MSI, SIM_MESI, SIM_MOESI, SIM_ESI };
	static const sim_inclusion inclusions[] = { SIM_INCLUSIVE, SIM_NON_INCLUSIVE, SIM_EXCLUSIVE };
	static const sim_replacement policies[] = { SIM_LRU, SIM_PLRU, SIM_FIFO, SIM_RANDOM, SIM_SRRIP };
	uint64_t seed = 1;
	for (int p = 0; p < 4; p++)
		for (int i = 0; i < 3; i++)
			for (int r = 0; r < 5; r++, seed++)
				for (int classify = 0; classify < 2; classify++)
					same_counts(protocols[p], inclusions[i], policies[r], (sim_prefetcher)(seed % 4),
					            1 + (uint32_t)(seed % 3), seed, classify == 1);
}
