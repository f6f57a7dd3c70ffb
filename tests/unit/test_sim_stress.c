/* Random traces through every combination of protocol, L3 inclusion,
 * replacement, write policy and prefetcher, with --check: the invariants
 * (single writer, directory = contents, inclusion) hold after every
 * transaction, and the counting identities at the end. */
#include "sim_test_util.h"

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void stress(sim_protocol protocol, sim_inclusion inclusion, sim_replacement replacement, bool write_back,
                   sim_prefetcher prefetcher, bool with_l2, uint64_t seed)
{
	sim_config c;
	small_config(&c, 3, protocol);
	/* tiny caches, so evictions, back-invalidations and conflicts happen */
	c.cache[SIM_L1I].size = c.cache[SIM_L1D].size = 512;
	c.cache[SIM_L1I].assoc = c.cache[SIM_L1D].assoc = 2;
	c.cache[SIM_L2].size = with_l2 ? 2048 : 0;
	c.cache[SIM_L2].assoc = 4;
	c.cache[SIM_L3].size = 4096;
	c.cache[SIM_L3].assoc = 4;
	c.l3_inclusion = inclusion;
	for (int l = 0; l < SIM_LEVEL_COUNT; l++) {
		c.cache[l].replacement = replacement;
		if (protocol != SIM_ESI)
			c.cache[l].write_back = write_back;
	}
	c.prefetch.kind = prefetcher;
	c.prefetch.unshared_only = (seed & 1) != 0;
	c.prefetch.lookup = (seed & 4) ? SIM_LOOKUP_ANY : SIM_LOOKUP_HEAD;
	c.prefetch.depth = 1 + (uint32_t)(seed % 5);
	c.tlb[SIM_DTLB].entries = 4;
	c.tlb[SIM_STLB].entries = 8;
	c.tlb[SIM_STLB].assoc = 2;
	c.modify = (sim_modify)(seed % 3);
	sim_trace t = { 0 };
	uint64_t x = seed * 2654435761u + 1;
	for (int i = 0; i < 3000; i++) {
		uint64_t r = next(&x);
		uint32_t thread = (uint32_t)(r % 4);
		trace_kind kind = (trace_kind)((r >> 8) % 4);
		uint64_t address = 0x10000 + ((r >> 16) % 96) * 24 + (kind == TRACE_INSTRUCTION ? 0x100000 : 0);
		trace_add(&t, thread, kind, address, (uint16_t)(1 + (r >> 40) % 16));
	}
	sim *s = run_trace(&c, &t);   /* asserts the batch and sim_check succeed */
	const sim_stats *st = sim_statistics(s);
	uint64_t references = st->references[0] + st->references[1] + st->references[2];
	cr_assert_geq(references, 3000);
	sim_free(s);
	trace_release(&t);
}

Test(sim_stress, every_combination_keeps_the_invariants)
{
	static const sim_protocol protocols[] = { SIM_MSI, SIM_MESI, SIM_MOESI, SIM_ESI };
	static const sim_inclusion inclusions[] = { SIM_INCLUSIVE, SIM_NON_INCLUSIVE, SIM_EXCLUSIVE };
	static const sim_replacement policies[] = { SIM_LRU, SIM_PLRU, SIM_FIFO, SIM_RANDOM, SIM_SRRIP };
	static const sim_prefetcher prefetchers[] = { SIM_PREFETCH_NONE, SIM_PREFETCH_NEXT_LINE, SIM_PREFETCH_STREAM,
	                                               SIM_PREFETCH_STRIDE };
	uint64_t seed = 1;
	for (int p = 0; p < 4; p++)
		for (int i = 0; i < 3; i++)
			for (int r = 0; r < 5; r++)
				for (int f = 0; f < 4; f++)
					for (int l2 = 0; l2 < 2; l2++, seed++)
						stress(protocols[p], inclusions[i], policies[r], (seed & 2) != 0, prefetchers[f],
						       l2 == 1, seed);
}
