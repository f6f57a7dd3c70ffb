/* The oracles of notes 002 section 9.4, derived by hand: ping-pong (true
 * and false sharing), padded variables, read-only sharing, broadcast
 * invalidation, conflict vs capacity, line-straddling accesses, and the
 * thesis's write-through ESI counts. */
#include "sim_test_util.h"

#define K 100
#define X 0x10000ull

static void ping_pong(sim_trace *t, uint64_t offset_per_core)
{
	for (int i = 0; i < K; i++)
		for (uint32_t c = 0; c < 2; c++) {
			trace_add(t, c, TRACE_READ, X + c * offset_per_core, 4);
			trace_add(t, c, TRACE_WRITE, X + c * offset_per_core, 4);
		}
}

static uint64_t l1d(const sim *s, uint32_t c, sim_access_kind k, bool misses)
{
	const sim_cache_stats *st = &sim_statistics(s)->core[c].cache[SIM_L1D];
	return misses ? st->misses[k] : st->accesses[k];
}

Test(sim_oracles, ping_pong_true_sharing_mesi)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim_trace t = { 0 };
	ping_pong(&t, 0);
	sim *s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0, SIM_READ, false) + l1d(s, 1, SIM_READ, false), 2 * K);
	cr_assert_eq(l1d(s, 0, SIM_READ, true) + l1d(s, 1, SIM_READ, true), 2 * K);
	cr_assert_eq(l1d(s, 0, SIM_WRITE, true) + l1d(s, 1, SIM_WRITE, true), 0, "every write hits a present line");
	const sim_stats *st = sim_statistics(s);
	uint64_t compulsory = 0, coherence_true = 0, coherence_false = 0;
	for (int i = 0; i < 2; i++) {
		compulsory += st->core[i].cache[SIM_L1D].compulsory;
		coherence_true += st->core[i].cache[SIM_L1D].coherence_true;
		coherence_false += st->core[i].cache[SIM_L1D].coherence_false;
	}
	cr_assert_eq(compulsory, 2);
	cr_assert_eq(coherence_true, 2 * K - 2);
	cr_assert_eq(coherence_false, 0);
	cr_assert_eq(event(s, "PAPI_CA_CLN", -1), 1, "the first write is E->M");
	cr_assert_eq(event(s, "PAPI_CA_SHR", -1), 2 * K - 1);
	cr_assert_eq(event(s, "PAPI_CA_INV", -1), 2 * K - 1);
	cr_assert_eq(event(s, "SIM_INVALIDATIONS_SENT", -1), 2 * K - 1);
	cr_assert_eq(event(s, "SIM_TRANSFERS", -1), 2 * K - 1, "M->S downgrades with a cache-to-cache transfer");
	cr_assert_eq(total_fanout(s, 0, 1) + total_fanout(s, 1, 1), 2 * K - 1);
	cr_assert_eq(st->memory_reads, 1, "only the very first read goes to memory");
	cr_assert_eq(event(s, "PAPI_CA_ITV", -1), 2 * K - 1);
	/* the hot line is x, a true-sharing line */
	sim_line_stats hot[2];
	cr_assert_eq(sim_hot_lines(s, hot, 2), 1);
	cr_assert_eq(hot[0].address, X);
	cr_assert_eq(hot[0].cores, 3);
	cr_assert_eq(hot[0].coherence_true, 2 * K - 2);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, ping_pong_false_sharing)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim_trace t = { 0 };
	ping_pong(&t, 4);
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(l1d(s, 0, SIM_READ, true) + l1d(s, 1, SIM_READ, true), 2 * K);
	cr_assert_eq(event(s, "PAPI_CA_INV", -1), 2 * K - 1);
	cr_assert_eq(event(s, "PAPI_CA_SHR", -1), 2 * K - 1);
	uint64_t t_true = st->core[0].cache[SIM_L1D].coherence_true + st->core[1].cache[SIM_L1D].coherence_true;
	uint64_t t_false = st->core[0].cache[SIM_L1D].coherence_false + st->core[1].cache[SIM_L1D].coherence_false;
	cr_assert_eq(t_true, 0);
	cr_assert_eq(t_false, 2 * K - 2);
	sim_line_stats hot[1];
	cr_assert_eq(sim_hot_lines(s, hot, 1), 1);
	cr_assert_eq(hot[0].coherence_false, 2 * K - 2);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, padded_variables)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim_trace t = { 0 };
	ping_pong(&t, 64);
	sim *s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0, SIM_READ, true) + l1d(s, 1, SIM_READ, true), 2, "two cold misses");
	cr_assert_eq(event(s, "PAPI_CA_INV", -1), 0);
	cr_assert_eq(event(s, "PAPI_CA_SHR", -1), 0);
	cr_assert_eq(event(s, "SIM_TRANSFERS", -1), 0);
	cr_assert_eq(event(s, "PAPI_CA_CLN", -1), 2, "each core's first write is E->M");
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, read_only_sharing)
{
	const uint32_t n = 4, reads = 50;
	sim_config c;
	small_config(&c, n, SIM_MESI);
	sim_trace t = { 0 };
	for (uint32_t core = 0; core < n; core++)
		for (uint32_t i = 0; i < reads; i++)
			trace_add(&t, core, TRACE_READ, X, 8);
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	uint64_t misses = 0, bus_reads = 0, with_sharers = 0, shared_reads = 0;
	for (uint32_t core = 0; core < n; core++) {
		misses += st->core[core].cache[SIM_L1D].misses[SIM_READ];
		bus_reads += st->core[core].coherence.bus_reads;
		with_sharers += st->core[core].coherence.reads_with_sharers;
		shared_reads += st->core[core].coherence.shared_reads;
		cr_assert_eq(st->core[core].cache[SIM_L1D].compulsory, 1);
	}
	cr_assert_eq(misses, n);
	cr_assert_eq(bus_reads, n);
	cr_assert_eq(with_sharers, n - 1);
	cr_assert_eq(shared_reads, n * (n - 1) / 2, "the thesis's holder-charged shared reads");
	cr_assert_eq(event(s, "PAPI_CA_INV", -1), 0);
	cr_assert_eq(event(s, "PAPI_CA_ITV", -1), 1, "only the first reader's E is downgraded");
	cr_assert_eq(st->core[0].coherence.transitions[1][SIM_STATE_E][SIM_STATE_S], 1);
	sim_free(s);
	trace_release(&t);
}

static void broadcast(uint32_t n, uint32_t expected_bucket)
{
	sim_config c;
	small_config(&c, n, SIM_MESI);
	sim_trace t = { 0 };
	for (uint32_t core = 0; core < n; core++)
		trace_add(&t, core, TRACE_READ, X, 8);
	trace_add(&t, 0, TRACE_WRITE, X, 8);
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(total_fanout(s, 0, n - 1), 1, "one write invalidating N-1 copies");
	cr_assert_eq(st->core[0].coherence.invalidations_sent, n - 1);
	for (uint32_t core = 1; core < n; core++)
		cr_assert_eq(st->core[core].coherence.invalidations_received, 1);
	cr_assert_eq(event(s, "PAPI_CA_SHR", 0), n > 1 ? 1 : 0);
	/* the thesis bucket, as the report prints it */
	uint32_t bucket = n - 1 == 1 ? 1 : n - 1 == 2 ? 2 : n - 1 <= 4 ? 3 : 4;
	cr_assert_eq(bucket, expected_bucket);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, broadcast_invalidation)
{
	broadcast(2, 1);
	broadcast(3, 2);
	broadcast(4, 3);
	broadcast(5, 3);
	broadcast(6, 4);
	broadcast(64, 4);
}

Test(sim_oracles, conflict_misses_in_a_direct_mapped_cache)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	c.cache[SIM_L1D].size = 4096;
	c.cache[SIM_L1D].assoc = 1;          /* 64 sets */
	c.cache[SIM_L2].size = 0;
	c.cache[SIM_L1I].assoc = 1;
	c.cache[SIM_L1I].size = 4096;
	sim_trace t = { 0 };
	const uint64_t a = 0x100000, b = a + 64 * 64;   /* same set */
	for (int i = 0; i < K; i++) {
		trace_add(&t, 0, TRACE_READ, a, 8);
		trace_add(&t, 0, TRACE_READ, b, 8);
	}
	sim *s = run_trace(&c, &t);
	const sim_cache_stats *st = &sim_statistics(s)->core[0].cache[SIM_L1D];
	cr_assert_eq(st->misses[SIM_READ], 2 * K);
	cr_assert_eq(st->compulsory, 2);
	cr_assert_eq(st->conflict, 2 * K - 2);
	cr_assert_eq(st->capacity, 0);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, capacity_misses_in_a_fully_associative_cache)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	c.cache[SIM_L1D].size = 64 * 16;    /* C = 16 lines */
	c.cache[SIM_L1D].assoc = 0;         /* fully associative */
	c.cache[SIM_L2].size = 0;
	c.cache[SIM_L1I] = c.cache[SIM_L1D];
	sim_trace t = { 0 };
	const int rounds = 10;
	for (int r = 0; r < rounds; r++)
		for (int line = 0; line < 17; line++)
			trace_add(&t, 0, TRACE_READ, 0x200000 + 64ull * line, 8);
	sim *s = run_trace(&c, &t);
	const sim_cache_stats *st = &sim_statistics(s)->core[0].cache[SIM_L1D];
	cr_assert_eq(st->misses[SIM_READ], 17 * rounds, "LRU thrashes on C+1 lines");
	cr_assert_eq(st->compulsory, 17);
	cr_assert_eq(st->capacity, 17 * (rounds - 1));
	cr_assert_eq(st->conflict, 0);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, straddling_read_is_one_miss_and_two_bus_reads)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_READ, X + 64 - 2, 4);
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->core[0].cache[SIM_L1D].accesses[SIM_READ], 1);
	cr_assert_eq(st->core[0].cache[SIM_L1D].misses[SIM_READ], 1, "cachegrind aggregation: one miss");
	cr_assert_eq(st->core[0].cache[SIM_L2].accesses[SIM_READ], 1);
	cr_assert_eq(st->core[0].cache[SIM_L2].misses[SIM_READ], 1);
	cr_assert_eq(st->core[0].coherence.bus_reads, 2, "per-line bus accounting");
	cr_assert_eq(st->core[0].straddles, 1);
	cr_assert_eq(st->memory_reads, 2);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, straddle_where_one_line_hits)
{
	/* cachegrind references both lines below the L1 when either misses */
	sim_config c;
	sim_preset(&c, "cachegrind", NULL);
	c.check = true;
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_READ, X, 4);            /* line X in D1 and LL */
	trace_add(&t, 0, TRACE_READ, X + 64 - 2, 4);   /* X hits, X+64 misses */
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->core[0].cache[SIM_L1D].misses[SIM_READ], 2);
	cr_assert_eq(st->l3.accesses[SIM_READ], 2, "LL refs = D1 misses");
	cr_assert_eq(st->l3.misses[SIM_READ], 2);
	sim_free(s);
	trace_release(&t);
}

Test(sim_oracles, thesis_esi_ping_pong)
{
	sim_config c;
	small_config(&c, 2, SIM_ESI);
	sim_trace t = { 0 };
	ping_pong(&t, 0);
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	uint64_t bus_writes = st->core[0].coherence.bus_writes + st->core[1].coherence.bus_writes;
	uint64_t bus_reads = st->core[0].coherence.bus_reads + st->core[1].coherence.bus_reads;
	cr_assert_eq(bus_writes, 2 * K, "write-through: every write is a bus write");
	cr_assert_eq(bus_reads, 2 * K);
	cr_assert_eq(event(s, "PAPI_CA_INV", -1), 2 * K - 1, "the first write invalidates nothing");
	cr_assert_eq(l1d(s, 0, SIM_READ, true) + l1d(s, 1, SIM_READ, true), 2 * K);
	cr_assert_eq(st->core[0].coherence.shared_reads, K);
	cr_assert_eq(st->core[1].coherence.shared_reads, K - 1);
	cr_assert_eq(event(s, "PAPI_CA_SHR", -1), 0, "no M state in ESI");
	cr_assert_eq(st->core[0].cache[SIM_L2].misses[SIM_READ] + st->core[1].cache[SIM_L2].misses[SIM_READ], 2 * K,
	             "per-core state I makes the L2 miss too");
	sim_free(s);
	trace_release(&t);
}

/* The L2's and the L3's misses split into conflict and capacity as the
 * L1's do (each level's shadow: a fully associative LRU cache of its
 * capacity), with and without the shadows' thread: lines that share one set
 * but fit the level whole miss by conflict, a cycle of twice the level's
 * lines misses by capacity.  L1D 4 KiB 8-way, L2 16 KiB 4-way (64 sets), L3
 * 64 KiB 4-way (256 sets), non-inclusive (no inclusion victims). */
static sim_stats below_the_l1(uint64_t stride, int lines, const char *thread)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	c.check = false;
	c.cache[SIM_L1D].size = 4096;
	c.cache[SIM_L1D].assoc = 8;
	c.cache[SIM_L2].size = 16384;
	c.cache[SIM_L2].assoc = 4;
	c.cache[SIM_L3].size = 65536;
	c.cache[SIM_L3].assoc = 4;
	c.l3_inclusion = SIM_NON_INCLUSIVE;
	sim_trace t = { 0 };
	for (int round = 0; round < 5; round++)
		for (int i = 0; i < lines; i++)
			trace_add(&t, 0, TRACE_READ, 0x10000000 + stride * (uint64_t)i, 8);
	setenv("PLUMB_SIM_SHADOW_THREAD", thread, 1);
	sim *s = run_trace(&c, &t);
	unsetenv("PLUMB_SIM_SHADOW_THREAD");
	sim_stats st = *sim_statistics(s);
	sim_free(s);
	trace_release(&t);
	return st;
}

Test(sim_oracles, conflict_and_capacity_misses_below_the_l1)
{
	for (int thread = 0; thread < 2; thread++) {
		const char *on = thread ? "1" : "0";
		/* 16 lines of one L2 set (4 in each of 4 L3 sets): L2 conflict */
		sim_stats a = below_the_l1(4096, 16, on);
		const sim_cache_stats *l2 = &a.core[0].cache[SIM_L2];
		cr_assert_eq(l2->misses[SIM_READ], 16 * 5);
		cr_assert_eq(l2->compulsory, 16);
		cr_assert_eq(l2->conflict, 16 * 4);
		cr_assert_eq(l2->capacity, 0);
		cr_assert_eq(a.l3.compulsory, 16);
		cr_assert_eq(a.l3.conflict + a.l3.capacity, 0);
		/* 512 lines in turn, twice the L2: L2 capacity, the L3 holds them */
		sim_stats b = below_the_l1(64, 512, on);
		l2 = &b.core[0].cache[SIM_L2];
		cr_assert_eq(l2->compulsory, 512);
		cr_assert_eq(l2->capacity, 512 * 4);
		cr_assert_eq(l2->conflict, 0);
		cr_assert_eq(b.l3.compulsory, 512);
		cr_assert_eq(b.l3.conflict + b.l3.capacity, 0);
		/* 8 lines of one L3 set: L3 conflict (and L2) */
		sim_stats d = below_the_l1(16384, 8, on);
		cr_assert_eq(d.l3.compulsory, 8);
		cr_assert_eq(d.l3.conflict, 8 * 4);
		cr_assert_eq(d.l3.capacity, 0);
		cr_assert_eq(d.core[0].cache[SIM_L2].conflict, 8 * 4);
		/* 2048 lines in turn, twice the L3: capacity everywhere */
		sim_stats e = below_the_l1(64, 2048, on);
		cr_assert_eq(e.l3.compulsory, 2048);
		cr_assert_eq(e.l3.capacity, 2048 * 4);
		cr_assert_eq(e.l3.conflict, 0);
		cr_assert_eq(e.core[0].cache[SIM_L2].capacity, 2048 * 4);
	}
}

/* One core: only MSI makes a line hot (a read leaves it in S, the write
 * after it is an upgrade), and its reads and writes are counted, while with
 * MESI nothing is hot (the one-core runs skip the hot-lines table's reads
 * and writes for that reason, sim_engine.c). */
Test(sim_oracles, one_core_hot_lines_only_with_msi)
{
	for (int protocol = 0; protocol < 2; protocol++) {
		sim_config c;
		small_config(&c, 1, protocol ? SIM_MSI : SIM_MESI);
		sim_trace t = { 0 };
		for (int i = 0; i < 3; i++)
			trace_add(&t, 0, TRACE_READ, X + 4096 * (uint64_t)i, 4);
		trace_add(&t, 0, TRACE_WRITE, X, 4);
		trace_add(&t, 0, TRACE_WRITE, X + 4096, 4);
		sim *s = run_trace(&c, &t);
		sim_line_stats hot[4];
		size_t n = sim_hot_lines(s, hot, 4);
		if (!protocol) {
			cr_assert_eq(n, 0, "MESI, one core: no line is hot");
		} else {
			cr_assert_eq(n, 2, "MSI, one core: the two lines written after a read");
			for (size_t i = 0; i < n; i++) {
				cr_assert_eq(hot[i].upgrades, 1);
				cr_assert_eq(hot[i].reads, 1, "the read miss that brought it in S");
				cr_assert_eq(hot[i].writes, 1);
				cr_assert_eq(hot[i].cores, 1);
			}
			cr_assert_eq(hot[0].address, X);
			cr_assert_eq(hot[1].address, X + 4096);
		}
		sim_free(s);
		trace_release(&t);
	}
}
