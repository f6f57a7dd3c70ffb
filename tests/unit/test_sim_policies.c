/* Replacement policies, inclusion, TLBs, prefetchers and determinism, each
 * on a trace small enough to count by hand. */
#include <stdio.h>
#include "sim_test_util.h"

/* One 4-way set: 256 B of 64 B lines, so every line maps to it. */
static void one_set(sim_config *c, const char *policy)
{
	small_config(c, 1, SIM_MESI);
	plumb_status status;
	cr_assert_eq(sim_config_set(c, "l1d.size", "256", &status), 0, "%s", status.message);
	cr_assert_eq(sim_config_set(c, "l1d.assoc", "4", &status), 0);
	cr_assert_eq(sim_config_set(c, "l1d.replacement", policy, &status), 0, "%s", status.message);
	c->cache[SIM_L2].size = 0;
	c->cache[SIM_L1I].size = 256;
	c->cache[SIM_L1I].assoc = 4;
}

#define LINE(n) (0x40000ull + 64ull * (n))
enum { A, B, C, D, E, F, G, H };

static sim *run_lines(const sim_config *c, const int *lines, size_t n)
{
	sim_trace t = { 0 };
	for (size_t i = 0; i < n; i++)
		trace_add(&t, 0, TRACE_READ, LINE(lines[i]), 8);
	sim *s = run_trace(c, &t);
	trace_release(&t);
	return s;
}

static uint64_t read_misses(const sim *s)
{
	return sim_statistics(s)->core[0].cache[SIM_L1D].misses[SIM_READ];
}

Test(sim_policies, lru_evicts_least_recently_used)
{
	sim_config c;
	one_set(&c, "lru");
	const int seq[] = { A, B, C, D, A, E, A, B };   /* E evicts B: A hits, B misses */
	sim *s = run_lines(&c, seq, 8);
	cr_assert_eq(read_misses(s), 7 - 1);
	sim_free(s);
}

Test(sim_policies, fifo_evicts_first_filled)
{
	sim_config c;
	one_set(&c, "fifo");
	const int seq[] = { A, B, C, D, A, E, A };      /* E evicts A although A was just used */
	sim *s = run_lines(&c, seq, 7);
	cr_assert_eq(read_misses(s), 6);
	sim_free(s);
}

Test(sim_policies, tree_plru_evicts_by_tree)
{
	sim_config c;
	one_set(&c, "plru");
	/* After A B C D A the tree points at way 2 (C), not at B as LRU would. */
	const int seq[] = { A, B, C, D, A, E, B };
	sim *s = run_lines(&c, seq, 7);
	cr_assert_eq(read_misses(s), 5, "B must still be present");
	sim_free(s);
	const int seq2[] = { A, B, C, D, A, E, C };
	s = run_lines(&c, seq2, 7);
	cr_assert_eq(read_misses(s), 6, "C was the victim");
	sim_free(s);
}

Test(sim_policies, srrip_resists_a_scan)
{
	sim_config c;
	one_set(&c, "srrip");
	/* A is re-referenced, then a scan of four new lines: SRRIP keeps A, LRU loses it. */
	const int seq[] = { A, B, C, D, A, E, F, G, H, A };
	sim *s = run_lines(&c, seq, 10);
	cr_assert_eq(read_misses(s), 8);
	sim_free(s);
	one_set(&c, "lru");
	s = run_lines(&c, seq, 10);
	cr_assert_eq(read_misses(s), 9);
	sim_free(s);
}

Test(sim_policies, random_is_seeded_and_repeatable)
{
	sim_config c;
	one_set(&c, "random");
	int seq[400];
	for (int i = 0; i < 400; i++)
		seq[i] = (i * 7 + i / 3) % 6;
	sim *s1 = run_lines(&c, seq, 400), *s2 = run_lines(&c, seq, 400);
	cr_assert_eq(read_misses(s1), read_misses(s2));
	cr_assert_gt(read_misses(s1), 6);
	cr_assert_lt(read_misses(s1), 400);
	sim_free(s1);
	sim_free(s2);
}

Test(sim_policies, plru_needs_power_of_two_ways)
{
	sim_config c;
	sim_config_default(&c);
	plumb_status status;
	cr_assert_eq(sim_config_set(&c, "l1d.assoc", "6", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l1d.size", "24K", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l1d.replacement", "plru", &status), 0);
	cr_assert_eq(sim_config_validate(&c, &status), -1);
	cr_assert(strstr(status.message, "PLRU"), "%s", status.message);
}

/* -------------------------------------------------------------- inclusion */

static void tiny_l3(sim_config *c, const char *inclusion)
{
	small_config(c, 1, SIM_MESI);
	plumb_status status;
	c->cache[SIM_L3].size = 128;      /* two lines, fully associative */
	c->cache[SIM_L3].assoc = 0;
	c->cache[SIM_L3].line = 64;
	cr_assert_eq(sim_config_set(c, "l3.inclusion", inclusion, &status), 0, "%s", status.message);
}

Test(sim_policies, inclusive_l3_back_invalidates)
{
	sim_config c;
	tiny_l3(&c, "inclusive");
	const int seq[] = { A, B, C, A };   /* C evicts A from the L3, and so from the core */
	sim *s = run_lines(&c, seq, 4);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(read_misses(s), 4);
	cr_assert_eq(st->core[0].cache[SIM_L1D].inclusion_victim, 1);
	cr_assert_eq(st->core[0].cache[SIM_L1D].back_invalidations, 2, "A, then B (evicted by A's return)");
	cr_assert_eq(st->core[0].cache[SIM_L2].back_invalidations, 2);
	cr_assert_eq(st->l3_back_invalidations, 2);
	cr_assert_eq(st->core[0].coherence.invalidations_received, 0, "counted apart from coherence");
	cr_assert_eq(st->core[0].coherence.transitions[1][SIM_STATE_E][SIM_STATE_I], 2);
	sim_free(s);
}

Test(sim_policies, non_inclusive_l3_keeps_private_copies)
{
	sim_config c;
	tiny_l3(&c, "non-inclusive");
	const int seq[] = { A, B, C, A };
	sim *s = run_lines(&c, seq, 4);
	cr_assert_eq(read_misses(s), 3);
	cr_assert_eq(sim_statistics(s)->l3_back_invalidations, 0);
	sim_free(s);
}

Test(sim_policies, exclusive_l3_holds_victims)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	plumb_status status;
	/* L1D and L2 of one line each (fully associative), L3 of four lines */
	cr_assert_eq(sim_config_set(&c, "l1d.size", "64", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l1d.assoc", "full", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l1i.size", "64", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l1i.assoc", "full", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l2.size", "64", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l2.assoc", "full", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l3.size", "256", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l3.assoc", "full", &status), 0);
	cr_assert_eq(sim_config_set(&c, "l3.inclusion", "exclusive", &status), 0);
	const int seq[] = { A, B, A };   /* B's fill pushes A into the L3; A then hits there */
	sim *s = run_lines(&c, seq, 3);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->l3.accesses[SIM_READ], 3);
	cr_assert_eq(st->l3.misses[SIM_READ], 2);
	cr_assert_eq(st->memory_reads, 2);
	sim_free(s);
}

/* ------------------------------------------------------------------- TLB */

Test(sim_policies, tlb_compulsory_capacity_conflict)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	plumb_status status;
	cr_assert_eq(sim_config_assign(&c, "dtlb.entries=4", &status), 0, "%s", status.message);
	cr_assert_eq(sim_config_assign(&c, "dtlb.assoc=full", &status), 0);
	cr_assert_eq(sim_config_assign(&c, "dtlb.page=4K", &status), 0);
	sim_trace t = { 0 };
	for (int round = 0; round < 3; round++)
		for (int page = 0; page < 5; page++)
			trace_add(&t, 0, TRACE_READ, 0x10000000ull + 4096ull * page, 8);
	sim *s = run_trace(&c, &t);
	const sim_tlb_stats *ts = &sim_statistics(s)->core[0].tlb[SIM_DTLB];
	cr_assert_eq(ts->accesses, 15);
	cr_assert_eq(ts->misses, 15, "LRU over 5 pages with 4 entries always misses");
	cr_assert_eq(ts->compulsory, 5);
	cr_assert_eq(ts->capacity, 10);
	cr_assert_eq(ts->conflict, 0);
	cr_assert_eq(event(s, "PAPI_TLB_DM", 0), 15);
	sim_free(s);
	trace_release(&t);

	/* direct-mapped, 4 sets: pages 0 and 4 collide, two entries would do */
	cr_assert_eq(sim_config_assign(&c, "dtlb.assoc=1", &status), 0);
	sim_trace u = { 0 };
	for (int round = 0; round < 4; round++) {
		trace_add(&u, 0, TRACE_READ, 0x10000000ull, 8);
		trace_add(&u, 0, TRACE_READ, 0x10000000ull + 4 * 4096ull, 8);
	}
	s = run_trace(&c, &u);
	ts = &sim_statistics(s)->core[0].tlb[SIM_DTLB];
	cr_assert_eq(ts->misses, 8);
	cr_assert_eq(ts->compulsory, 2);
	cr_assert_eq(ts->conflict, 6);
	sim_free(s);
	trace_release(&u);
}

Test(sim_policies, two_level_tlb)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	plumb_status status;
	const char *settings[] = { "dtlb.entries=2", "dtlb.assoc=full", "stlb.entries=8", "stlb.assoc=full" };
	for (int i = 0; i < 4; i++)
		cr_assert_eq(sim_config_assign(&c, settings[i], &status), 0, "%s", status.message);
	sim_trace t = { 0 };
	for (int round = 0; round < 2; round++)
		for (int page = 0; page < 4; page++)
			trace_add(&t, 0, TRACE_READ, 0x20000000ull + 4096ull * page, 8);
	sim *s = run_trace(&c, &t);
	const sim_core_stats *cs = &sim_statistics(s)->core[0];
	cr_assert_eq(cs->tlb[SIM_DTLB].misses, 8);
	cr_assert_eq(cs->tlb[SIM_STLB].accesses, 8, "every first-level miss looks in the second level");
	cr_assert_eq(cs->tlb[SIM_STLB].misses, 4, "which holds all four pages");
	sim_free(s);
	trace_release(&t);
}

/* ------------------------------------------------------------- prefetch */

Test(sim_policies, next_line_prefetch_covers_a_sequential_scan)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	plumb_status status;
	cr_assert_eq(sim_config_assign(&c, "prefetch=next-line", &status), 0);
	sim_trace t = { 0 };
	for (int line = 0; line < 32; line++)
		trace_add(&t, 0, TRACE_READ, 0x80000ull + 64ull * line, 8);
	sim *s = run_trace(&c, &t);
	const sim_core_stats *cs = &sim_statistics(s)->core[0];
	cr_assert_eq(cs->cache[SIM_L1D].misses[SIM_READ], 1);
	cr_assert_eq(cs->prefetch.issued, 32);
	cr_assert_eq(cs->prefetch.useful, 31);
	cr_assert_eq(cs->cache[SIM_L1D].prefetch_fills, 32);
	sim_free(s);
	trace_release(&t);
}

Test(sim_policies, stride_prefetch_learns_a_stride)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	plumb_status status;
	cr_assert_eq(sim_config_assign(&c, "prefetch=stride", &status), 0);
	cr_assert_eq(sim_config_assign(&c, "prefetch.depth=2", &status), 0);
	sim_trace t = { 0 };
	for (int i = 0; i < 20; i++)
		trace_add(&t, 0, TRACE_READ, 0x80000ull + 64ull * 3 * i, 8);
	sim *s = run_trace(&c, &t);
	const sim_core_stats *cs = &sim_statistics(s)->core[0];
	cr_assert_eq(cs->cache[SIM_L1D].misses[SIM_READ], 2, "%lu %lu %lu: the first miss starts a stream, the second sets its stride", cs->cache[SIM_L1D].misses[SIM_READ], cs->prefetch.useful, cs->prefetch.issued);
	cr_assert_eq(cs->prefetch.useful, 18);
	sim_free(s);
	trace_release(&t);
}

static uint64_t prefetch_run(bool unshared_only, uint64_t *skipped, uint64_t *interventions)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.prefetch.kind = SIM_PREFETCH_NEXT_LINE;
	c.prefetch.unshared_only = unshared_only;
	sim_trace t = { 0 };
	/* threads map to cores in order of appearance: thread 0 is core 0 */
	trace_add(&t, 0, TRACE_READ, 0x90040, 8);   /* core 0 holds line 1 in E (and prefetched line 2) */
	trace_add(&t, 1, TRACE_READ, 0x90000, 8);   /* core 1 misses line 0; prefetches line 1? */
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	*skipped = st->core[1].prefetch.skipped_shared;
	*interventions = st->core[0].coherence.interventions_received;
	uint64_t issued = st->core[1].prefetch.issued;
	sim_free(s);
	trace_release(&t);
	return issued;
}

Test(sim_policies, prefetch_only_unshared_lines)
{
	uint64_t skipped, interventions;
	cr_assert_eq(prefetch_run(false, &skipped, &interventions), 1);
	cr_assert_eq(skipped, 0);
	cr_assert_eq(interventions, 1, "the prefetch downgrades core 1's E copy");
	cr_assert_eq(prefetch_run(true, &skipped, &interventions), 0);
	cr_assert_eq(skipped, 1);
	cr_assert_eq(interventions, 0);
}

/* ----------------------------------------------------------- determinism */

static char *report_text(const sim_config *c, const sim_trace *t, output_format format)
{
	sim *s = run_trace(c, t);
	output_report *r = output_report_new("sim");
	plumb_status status;
	cr_assert_eq(sim_report(s, r, 10, &status), 0);
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	cr_assert_eq(output_write(r, format, f, &status), 0, "%s", status.message);
	fclose(f);
	output_report_free(r);
	sim_free(s);
	return text;
}

Test(sim_policies, same_input_same_bytes)
{
	sim_config c;
	small_config(&c, 4, SIM_MOESI);
	c.cache[SIM_L3].size = 64 * 1024;
	c.cache[SIM_L1D].replacement = SIM_RANDOM;
	sim_trace t = { 0 };
	uint64_t x = 12345;
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		trace_add(&t, (uint32_t)(x >> 60) % 5, (trace_kind)((x >> 20) % 4), 0x100000 + ((x >> 24) % 4096) * 8,
		          (uint16_t)(1u << ((x >> 40) % 4)));
		t.records[t.count - 1].flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		t.records[t.count - 1].instruction_address = 0x400000 + (x >> 50) % 64;
	}
	for (int f = 0; f < 3; f++) {
		char *a = report_text(&c, &t, (output_format)f), *b = report_text(&c, &t, (output_format)f);
		cr_assert_str_eq(a, b);
		free(a);
		free(b);
	}
	trace_release(&t);
}
