/* The hit fast path must count exactly what the general path counts: the
 * same random traces through the same machines without --check (the fast
 * loop) and with it (the general loop: every reference goes through
 * sim_reference) give the same accesses, misses, classes, TLB counts,
 * coherence events and transitions, with classification off and on. */
#include "sim_test_util.h"
#include "sim/sim_loop.h"

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

static void same_statistics(sim *fast, sim *general, uint32_t cores, bool classify);

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
	same_statistics(fast, general, cores, classify);
	sim_free(fast);
	sim_free(general);
	trace_release(&t);
}

static void same_statistics(sim *fast, sim *general, uint32_t cores, bool classify)
{
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

/* The plain loop for LRU L1s with power-of-two sets checks the front way of
 * the set (no last-way hint), counts references in a packed register of
 * 65535 records at most and leaves for modifies, size-0 records and thread
 * switches: long runs on few lines (fronts hit), lines deeper in their sets,
 * straddles, misses, every record kind and size, batches longer than 65535
 * records and batches cut anywhere must all count what the general loop
 * counts. */
static sim *run_in_batches(const sim_config *c, const sim_trace *t, uint64_t seed)
{
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, c, &status), 0, "%s", status.message);
	uint64_t x = seed + 99;
	for (size_t done = 0; done < t->count;) {
		size_t n = 1 + next(&x) % 70000;
		if (n > t->count - done)
			n = t->count - done;
		cr_assert_eq(sim_access_batch(s, t->records + done, n, &status), 0, "%s", status.message);
		done += n;
	}
	cr_assert_eq(sim_check(s, &status), 0, "%s", status.message);
	return s;
}

static void front_way_case(int variant, uint64_t seed)
{
	sim_config c;
	uint32_t cores = 1 + (uint32_t)(variant % 3);
	small_config(&c, cores, variant == 3 ? SIM_ESI : variant == 2 ? SIM_MOESI : SIM_MESI);
	c.classify = false;
	c.cache[SIM_L1I].size = 1024;
	c.cache[SIM_L1I].assoc = 2;
	c.cache[SIM_L1D].size = 2048;
	c.cache[SIM_L1D].assoc = 4;
	c.cache[SIM_L2].size = 8192;
	c.cache[SIM_L3].size = 16384;
	c.modify = (sim_modify)(seed % 3);
	switch (variant) {
	case 1:   /* different L1 lines, a 12-way L1D of 4 sets, accesses cut to 8 bytes */
		c.cache[SIM_L1I].line = 32;
		c.cache[SIM_L1D].size = 3072;
		c.cache[SIM_L1D].assoc = 12;
		c.max_access_size = 8;
		break;
	case 2:   /* a write-through L1D, a next-line prefetcher */
		c.cache[SIM_L1D].write_back = false;
		c.prefetch.kind = SIM_PREFETCH_NEXT_LINE;
		break;
	case 4:   /* 12 sets: not a power of two, the hinted loop */
		c.cache[SIM_L1D].size = 1536;
		c.cache[SIM_L1D].assoc = 2;
		break;
	case 5:   /* FIFO L1s: the hinted loop */
		c.cache[SIM_L1I].replacement = c.cache[SIM_L1D].replacement = SIM_FIFO;
		c.prefetch.kind = SIM_PREFETCH_STREAM;
		break;
	default:
		break;
	}
	sim_trace t = { 0 };
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 3, pc = 0x400000, data = 0x10000;
	uint32_t thread = 0;
	for (int i = 0; i < 150000; i++) {
		uint64_t r = next(&x);
		/* one long single-thread stretch, so a batch passes 65535 records of one thread */
		if (r % 512 == 0 && (i <= 20000 || i > 100000))
			thread = (uint32_t)((r >> 8) % (cores + 1));
		/* ... of which 70000 are fetches alone: a kind's count fills its 16 bits */
		bool stretch = i > 20000 && i <= 100000, fetches_only = i > 30000 && i <= 100000;
		unsigned pick = fetches_only ? 0 : i == 30000 ? 15 : (unsigned)(r >> 12) % 16;
		if (pick < 9) {
			/* instructions: mostly the next one, sometimes a jump in a 4 KiB loop */
			pc = (r >> 20) % 16 == 0 ? 0x400000 + ((r >> 24) % 4096) : pc + 1 + (r >> 28) % 7;
			trace_add(&t, thread, TRACE_INSTRUCTION, pc, (uint16_t)(1 + (r >> 32) % 7));
		} else {
			/* data: near the last reference, sometimes anywhere in 12 KiB */
			data = (r >> 20) % 8 == 0 ? 0x10000 + ((r >> 24) % 12288) : data + (r >> 36) % 24 - 8;
			/* modifies and size 0 leave the inner loop: none in the stretch */
			trace_kind kind = pick < 13 ? TRACE_READ : pick < 15 || stretch ? TRACE_WRITE : TRACE_MODIFY;
			if (i == 30000)
				kind = TRACE_MODIFY;   /* the fetches start a fresh count */
			uint16_t size = (r >> 44) % 64 == 0 && !stretch ? 0 : (uint16_t)(1u << ((r >> 50) % 7));
			trace_add(&t, thread, kind, data, size);
		}
	}
	c.check = false;
	sim *one = run_trace(&c, &t);
	sim *cut = run_in_batches(&c, &t, seed);
	c.check = true;
	sim *general = run_trace(&c, &t);
	same_statistics(one, general, cores, false);
	same_statistics(cut, general, cores, false);
	sim_free(one);
	sim_free(cut);
	sim_free(general);
	trace_release(&t);
}

Test(sim_fastpath, front_way_loop_counts_what_the_general_path_counts)
{
	for (int variant = 0; variant < 6; variant++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			front_way_case(variant, seed + 10 * (uint64_t)variant);
}

/* One-line references without classification, --check or a prefetcher take
 * sim_engine.c's reference_one_line (misses, writes needing ownership, lines
 * deeper in their sets): random traces through machines with and without an
 * L2 and an L3, each inclusion policy, write-through and no-write-allocate
 * L1s and L2s, ordered and unordered replacement, 1 and 2 cores, must count
 * what the general path counts (--check takes it for every reference). */
static void one_line_case(unsigned variant, uint64_t seed)
{
	static const sim_inclusion inclusions[] = { SIM_INCLUSIVE, SIM_NON_INCLUSIVE, SIM_EXCLUSIVE };
	static const sim_replacement policies[] = { SIM_LRU, SIM_FIFO, SIM_PLRU, SIM_RANDOM, SIM_SRRIP };
	uint32_t cores = 1 + variant % 2;
	sim_config c;
	small_config(&c, cores, (sim_protocol)((variant / 2) % 4));
	c.classify = false;
	c.cache[SIM_L1I].size = 1024;
	c.cache[SIM_L1I].assoc = 2;
	c.cache[SIM_L1D].size = 2048;
	c.cache[SIM_L1D].assoc = 8;
	c.cache[SIM_L2].size = (variant / 8) % 3 == 2 ? 0 : 8192;
	c.cache[SIM_L3].size = (variant / 8) % 3 == 1 ? 0 : 32768;
	c.l3_inclusion = inclusions[variant % 3];
	sim_replacement policy = policies[(variant / 3) % 5];
	for (int l = 0; l < SIM_LEVEL_COUNT; l++)
		c.cache[l].replacement = l == SIM_L3 ? policies[(variant + 1) % 5] : policy;
	if (variant % 5 == 3)
		c.cache[SIM_L1D].write_back = false;
	if (variant % 7 == 4)
		c.cache[SIM_L1D].write_allocate = false;
	if (variant % 11 == 6 && c.cache[SIM_L2].size)
		c.cache[SIM_L2].write_back = false;
	c.modify = (sim_modify)(seed % 3);
	sim_trace t = { 0 };
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 5;
	uint32_t thread = 0;
	for (int i = 0; i < 30000; i++) {
		uint64_t r = next(&x);
		if (r % 128 == 0)
			thread = (uint32_t)((r >> 8) % (cores + 1));
		trace_kind kind = (trace_kind)((r >> 12) % 4);
		/* a 24 KiB data footprint: misses at every level, shared lines */
		uint64_t address = kind == TRACE_INSTRUCTION ? 0x400000 + ((r >> 16) % 3072)
		                                            : 0x10000 + ((r >> 20) % 24576);
		trace_add(&t, thread, kind, address, (uint16_t)(1u << ((r >> 40) % 4)));
	}
	c.check = false;
	sim *lean = run_trace(&c, &t);
	sim *cut = run_in_batches(&c, &t, seed);
	c.check = true;
	sim *general = run_trace(&c, &t);
	same_statistics(lean, general, cores, false);
	same_statistics(cut, general, cores, false);
	sim_free(lean);
	sim_free(cut);
	sim_free(general);
	trace_release(&t);
}

Test(sim_fastpath, one_line_path_counts_what_the_general_path_counts)
{
	for (unsigned variant = 0; variant < 48; variant++)
		one_line_case(variant, 100 + variant);
}

/* Each loop variant for records (src/sim/sim_loop.h), chosen when the
 * simulator is made from its configuration alone, counts what the general
 * loop counts on the same trace; and --check or annotation take the general
 * loop whatever else is configured. */
typedef struct variant_case {
	const char *name;
	sim_batch_loop expected;
	bool classify, tlb, annotate;
	sim_replacement l1;
	uint32_t max_access_size, cores;
} variant_case;

static void variant_counts(const variant_case *v, uint64_t seed)
{
	sim_config c;
	small_config(&c, v->cores, SIM_MESI);
	c.cache[SIM_L1I].size = c.cache[SIM_L1D].size = 1024;
	c.cache[SIM_L1I].assoc = c.cache[SIM_L1D].assoc = 2;
	c.cache[SIM_L1I].replacement = c.cache[SIM_L1D].replacement = v->l1;
	c.classify = v->classify;
	c.max_access_size = v->max_access_size;
	if (v->tlb) {
		c.tlb[SIM_DTLB].entries = 4;
		c.tlb[SIM_ITLB].entries = 2;
		c.tlb[SIM_DTLB].page_size = c.tlb[SIM_ITLB].page_size = 512;
	}
	sim_trace t = { 0 };
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
	uint32_t thread = 0;
	for (int i = 0; i < 20000; i++) {
		uint64_t r = next(&x);
		if (r % 64 == 0)
			thread = (uint32_t)((r >> 8) % (v->cores + 1));
		trace_kind kind = (trace_kind)((r >> 12) % 4);
		uint64_t address = kind == TRACE_INSTRUCTION ? 0x400000 + ((r >> 16) % 2048)
		                                            : 0x10000 + ((r >> 20) % 6000);
		trace_add(&t, thread, kind, address, (uint16_t)(1u << ((r >> 40) % 4)));
	}
	plumb_status status;
	sim *fast;
	c.check = false;
	cr_assert_eq(sim_new(&fast, &c, &status), 0, "%s", status.message);
	if (v->annotate)
		cr_assert_eq(sim_annotate(fast, &status), 0, "%s", status.message);
	cr_assert(fast->batch_loop == v->expected, "%s: not the loop its configuration chooses", v->name);
	cr_assert_eq(sim_access_batch(fast, t.records, t.count, &status), 0, "%s", status.message);
	c.check = true;
	sim *general = run_trace(&c, &t);
	cr_assert(general->batch_loop == sim_loop_general, "%s: --check takes the general loop", v->name);
	same_statistics(fast, general, v->cores, v->classify);
	sim_free(fast);
	sim_free(general);
	trace_release(&t);
}

Test(sim_fastpath, every_loop_variant_counts_what_the_general_loop_counts)
{
	static const variant_case cases[] = {
		{ "LRU L1s", sim_loop_mru, .l1 = SIM_LRU, .cores = 1 },
		{ "LRU L1s, two cores", sim_loop_mru, .l1 = SIM_LRU, .cores = 2 },
		{ "LRU L1s, accesses cut", sim_loop_mru_cut, .l1 = SIM_LRU, .max_access_size = 2, .cores = 2 },
		{ "FIFO L1s", sim_loop_hint_plain, .l1 = SIM_FIFO, .cores = 2 },
		{ "PLRU L1s", sim_loop_hint_plain, .l1 = SIM_PLRU, .cores = 1 },
		{ "TLBs", sim_loop_hint_tlb, .tlb = true, .l1 = SIM_LRU, .cores = 2 },
		{ "classification", sim_loop_hint_classify, .classify = true, .l1 = SIM_LRU, .cores = 2 },
		{ "classification, TLBs", sim_loop_hint_classify, .classify = true, .tlb = true, .l1 = SIM_LRU, .cores = 1 },
		{ "annotation", sim_loop_general, .annotate = true, .l1 = SIM_LRU, .cores = 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		variant_counts(&cases[i], 300 + i);
}

/* One core without an L2 (cachegrind's machine) with classification takes
 * sim_engine.c's reference_single for its one-line references: random
 * traces whose fetches and data share lines (code written to, data
 * fetched: the other L1 holds the line), through L1s of 2 and 8 ways, an
 * L3 absent or of each inclusion policy, every protocol, write-back,
 * write-through and no-write-allocate L1Ds, 32-byte L1 lines under an L3
 * of 64, classification on and off, must
 * count what the general path counts (--check takes it for every
 * reference), the hot code table included; and the path is chosen exactly
 * for the machines it serves. */
static void single_core_case(unsigned variant, uint64_t seed)
{
	static const sim_inclusion inclusions[] = { SIM_NON_INCLUSIVE, SIM_INCLUSIVE, SIM_EXCLUSIVE };
	static const sim_protocol protocols[] = { SIM_MESI, SIM_MOESI, SIM_MSI, SIM_ESI };
	sim_config c;
	sim_protocol protocol = variant % 8 < 5 ? (variant % 8 < 3 ? SIM_MESI : SIM_MOESI) : protocols[variant % 4];
	small_config(&c, 1, protocol);
	c.classify = variant % 16 < 13;
	c.cache[SIM_L2].size = 0;
	c.cache[SIM_L1I].size = 1024;
	c.cache[SIM_L1I].assoc = variant % 2 ? 8 : 2;
	c.cache[SIM_L1D].size = 2048;
	c.cache[SIM_L1D].assoc = variant % 3 ? 8 : 2;
	c.cache[SIM_L3].size = variant % 5 == 4 ? 0 : 16384;
	c.cache[SIM_L3].assoc = 4;
	c.l3_inclusion = variant % 6 < 4 ? SIM_NON_INCLUSIVE : inclusions[variant % 3];
	if (variant % 7 == 5)
		c.cache[SIM_L1D].write_back = false;
	if (variant % 11 == 7)
		c.cache[SIM_L1D].write_allocate = false;
	if (variant % 9 == 8 && c.l3_inclusion != SIM_EXCLUSIVE)   /* 32-byte L1 lines under an L3 of 64 */
		c.cache[SIM_L1I].line = c.cache[SIM_L1D].line = 32;
	c.modify = (sim_modify)(seed % 3);
	sim_trace t = { 0 };
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 11;
	for (int i = 0; i < 30000; i++) {
		uint64_t r = next(&x);
		trace_kind kind = (trace_kind)((r >> 12) % 4);
		/* code and data in one 12 KiB range, mostly a 3 KiB part of it:
		 * misses at every level, lines in both L1s */
		uint64_t span = (r >> 60) % 4 == 0 ? 12288 : 3072;
		uint64_t address = 0x10000 + ((r >> 20) % span);
		uint16_t size = (r >> 44) % 32 == 0 ? 0 : (uint16_t)(1u << ((r >> 40) % 4));
		trace_add(&t, 0, kind, address, size);
	}
	c.check = false;
	sim *single = run_trace(&c, &t);
	bool serves = c.classify && (protocol == SIM_MESI || protocol == SIM_MOESI) && c.cache[SIM_L1D].write_back &&
	              c.cache[SIM_L1D].write_allocate && (c.cache[SIM_L3].size == 0 || c.l3_inclusion == SIM_NON_INCLUSIVE);
	cr_assert_eq(single->single, serves, "variant %u: the one-core miss path %s", variant,
	             serves ? "not chosen" : "chosen where it does not apply");
	c.check = true;
	sim *general = run_trace(&c, &t);
	cr_assert(!general->single, "--check takes the general path");
	same_statistics(single, general, 1, c.classify);
	if (c.classify) {
		static sim_code_stats code_a[4096], code_b[4096];
		size_t na = sim_hot_code(single, code_a, 4096), nb = sim_hot_code(general, code_b, 4096);
		cr_assert_eq(na, nb);
		cr_assert(memcmp(code_a, code_b, na * sizeof *code_a) == 0, "variant %u: code tables differ", variant);
	}
	sim_free(single);
	sim_free(general);
	trace_release(&t);
}

Test(sim_fastpath, one_core_miss_path_counts_what_the_general_path_counts)
{
	for (unsigned variant = 0; variant < 64; variant++)
		single_core_case(variant, 500 + variant);
}
