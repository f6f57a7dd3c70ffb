/* Per-instruction costs: every level's misses and plumb's coherence events
 * are charged to the instruction that made each reference, and they sum to
 * the whole-program statistics; the cachegrind file names every level. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "sim_test_util.h"

static void add_at(sim_trace *t, uint32_t thread, trace_kind kind, uint64_t address, uint16_t size, uint64_t ip)
{
	trace_add(t, thread, kind, address, size);
	t->records[t->count - 1].instruction_address = ip;
	t->records[t->count - 1].flags = TRACE_HAS_INSTRUCTION_ADDRESS;
}

Test(sim_annotate, costs_sum_to_the_statistics_at_every_level)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.check = false;
	c.cache[SIM_L2].size = 8 * 1024;
	c.cache[SIM_L1D].size = 1024;
	c.cache[SIM_L1D].assoc = 2;
	c.cache[SIM_L3].size = 64 * 1024;
	c.cache[SIM_L3].assoc = 8;
	c.l3_inclusion = SIM_NON_INCLUSIVE;
	sim_trace t = { 0 };
	uint64_t seed = 3;
	for (int i = 0; i < 20000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t thread = (seed >> 40) & 1;
		uint64_t ip = 0x400000 + 16 * ((seed >> 20) % 64);
		add_at(&t, thread, TRACE_INSTRUCTION, ip, 4, ip);
		add_at(&t, thread, (seed >> 50) & 1 ? TRACE_WRITE : TRACE_READ, 0x10000 + 8 * ((seed >> 8) % 20000), 8, ip);
	}
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_annotate(s, &status), 0);
	cr_assert_eq(sim_access_batch(s, t.records, t.count, &status), 0, "%s", status.message);
	size_t n = sim_annotations(s, NULL, 0);
	cr_assert_eq(n, 64);
	sim_annotation *a = calloc(n, sizeof *a);
	cr_assert_eq(sim_annotations(s, a, n), n);
	uint64_t sum[SIM_AN_EVENTS] = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (i)
			cr_assert_gt(a[i].address, a[i - 1].address);
		for (int e = 0; e < SIM_AN_EVENTS; e++)
			sum[e] += a[i].count[e];
	}
	const sim_stats *st = sim_statistics(s);
	uint64_t want[SIM_AN_EVENTS] = { 0 };
	for (uint32_t k = 0; k < 2; k++) {
		const sim_core_stats *cs = &st->core[k];
		want[SIM_AN_IR] += cs->cache[SIM_L1I].accesses[SIM_IFETCH];
		want[SIM_AN_I1MR] += cs->cache[SIM_L1I].misses[SIM_IFETCH];
		want[SIM_AN_I2MR] += cs->cache[SIM_L2].misses[SIM_IFETCH];
		want[SIM_AN_DR] += cs->cache[SIM_L1D].accesses[SIM_READ];
		want[SIM_AN_D1MR] += cs->cache[SIM_L1D].misses[SIM_READ];
		want[SIM_AN_D2MR] += cs->cache[SIM_L2].misses[SIM_READ];
		want[SIM_AN_DW] += cs->cache[SIM_L1D].accesses[SIM_WRITE];
		want[SIM_AN_D1MW] += cs->cache[SIM_L1D].misses[SIM_WRITE];
		want[SIM_AN_D2MW] += cs->cache[SIM_L2].misses[SIM_WRITE];
		want[SIM_AN_INV_SENT] += cs->coherence.invalidations_sent;
		want[SIM_AN_INV_RECEIVED] += cs->coherence.invalidations_received;
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			want[SIM_AN_TRUE_SHARING] += cs->cache[level].coherence_true;
			want[SIM_AN_FALSE_SHARING] += cs->cache[level].coherence_false;
		}
	}
	want[SIM_AN_I3MR] = st->l3.misses[SIM_IFETCH];
	want[SIM_AN_D3MR] = st->l3.misses[SIM_READ];
	want[SIM_AN_D3MW] = st->l3.misses[SIM_WRITE];
	static const int exact[] = { SIM_AN_IR, SIM_AN_I1MR, SIM_AN_I2MR, SIM_AN_I3MR, SIM_AN_DR, SIM_AN_D1MR,
	                             SIM_AN_D2MR, SIM_AN_D3MR, SIM_AN_DW, SIM_AN_D1MW, SIM_AN_D2MW, SIM_AN_D3MW,
	                             SIM_AN_INV_SENT, SIM_AN_INV_RECEIVED };
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		cr_expect_eq(sum[exact[i]], want[exact[i]], "event %d: %llu, statistics %llu", exact[i],
		             (unsigned long long)sum[exact[i]], (unsigned long long)want[exact[i]]);
	cr_expect_gt(sum[SIM_AN_INV_SENT], 0);
	cr_expect_gt(sum[SIM_AN_D2MR], 0);
	cr_expect_gt(sum[SIM_AN_D3MR], 0);
	/* a miss counted at two levels is one coherence miss: not above the levels' sum */
	cr_expect_leq(sum[SIM_AN_COHERENCE], want[SIM_AN_TRUE_SHARING] + want[SIM_AN_FALSE_SHARING]);
	cr_expect_eq(sum[SIM_AN_COHERENCE], sum[SIM_AN_TRUE_SHARING] + sum[SIM_AN_FALSE_SHARING]);

	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	cr_assert_eq(sim_write_cachegrind(s, NULL, "prog", out, &status), 0, "%s", status.message);
	fclose(out);
	cr_expect(strstr(text, "\nevents: Ir I1mr I2mr ILmr Dr D1mr D2mr DLmr Dw D1mw D2mw DLmw CohM TrueSh FalseSh "
	                       "InvSent InvRecv\n"), "%s", text);
	cr_expect(strstr(text, "desc: L2 cache:         8192 B, 64 B, 16-way associative\n"), "%.400s", text);
	cr_expect(strstr(text, "fl=???\nfn=0x400000\n0 "), "%.900s", text);
	char summary[64];
	snprintf(summary, sizeof summary, "\nsummary: %llu ", (unsigned long long)want[SIM_AN_IR]);
	cr_expect(strstr(text, summary), "%s", summary);
	free(text);
	free(a);
	sim_free(s);
	trace_release(&t);
}

static void add_call(sim_trace *t, trace_kind kind, uint64_t address, uint64_t site)
{
	trace_add(t, 0, TRACE_INSTRUCTION, 0x1000, 4);   /* room for one record */
	trace_record *r = &t->records[t->count - 1];
	memset(r, 0, sizeof *r);
	r->kind = (uint8_t)kind;
	r->address = address;
	r->instruction_address = site;
}

/* Calls (TRACE_CALL / TRACE_RETURN): a call's cost is what its thread was
 * charged between the call and its return; a recursive call is counted but
 * costs nothing (the outer call holds it); a call still open at the end is
 * closed there; calls are not references. */
Test(sim_annotate, calls_carry_inclusive_costs_and_recursion_counts_once)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	sim_trace t = { 0 };
	add_at(&t, 0, TRACE_INSTRUCTION, 0x1000, 4, 0x1000);
	add_call(&t, TRACE_CALL, 0x2000, 0x1000);            /* main -> F */
	add_at(&t, 0, TRACE_INSTRUCTION, 0x2000, 4, 0x2000);
	add_at(&t, 0, TRACE_READ, 0x9000, 8, 0x2000);
	add_call(&t, TRACE_CALL, 0x2000, 0x2000);            /* F -> F */
	add_at(&t, 0, TRACE_INSTRUCTION, 0x2000, 4, 0x2000);
	add_at(&t, 0, TRACE_READ, 0x9040, 8, 0x2000);
	add_call(&t, TRACE_RETURN, 2, 0);                    /* both */
	add_at(&t, 0, TRACE_INSTRUCTION, 0x1000, 4, 0x1000);
	add_call(&t, TRACE_CALL, 0x3000, 0x1000);            /* main -> H, never returns */
	add_at(&t, 0, TRACE_INSTRUCTION, 0x3000, 4, 0x3000);
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_annotate(s, &status), 0);
	cr_assert_eq(sim_access_batch(s, t.records, t.count, &status), 0, "%s", status.message);
	cr_expect_eq(sim_call_records(s), 4);
	const sim_stats *st = sim_statistics(s);
	cr_expect_eq(st->references[SIM_IFETCH], 5);
	cr_expect_eq(st->references[SIM_READ], 2);
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	cr_assert_eq(sim_write_callgrind(s, NULL, "test", f, &status), 0, "%s", status.message);
	fclose(f);
	/* events: Ir I1mr ... Dr ...: F's two fetches and two reads in main's call */
	cr_expect(strstr(text, "fn=0x1000\n0 2 "), "%s", text);
	char *call = strstr(text, "cfn=0x2000\ncalls=1 0\n0 2 ");
	cr_expect(call, "main -> F: %s", text);
	cr_expect(strstr(text, "fn=0x2000\n0 2 "), "%s", text);
	/* F's call to itself: counted, no cost */
	char *self_call = strstr(text, "fn=0x2000\n0 2 ");
	cr_assert(self_call);
	self_call = strstr(self_call, "cfn=0x2000\ncalls=1 0\n0 0 0 ");
	cr_expect(self_call, "%s", text);
	cr_expect(strstr(text, "cfn=0x3000\ncalls=1 0\n0 1 "), "the open call, closed at the end: %s", text);
	free(text);
	sim_free(s);
	free(t.records);
}
