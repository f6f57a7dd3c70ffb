/* Per-thread statistics, code addresses, estimated cycles and the report's
 * shape, on traces counted by hand. */
#include <stdio.h>
#include "sim_test_util.h"

#define K 20
#define X 0x50000ull

Test(sim_reports, per_thread_counts)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim_trace t = { 0 };
	for (int i = 0; i < K; i++)
		for (uint32_t thread = 7; thread <= 8; thread++) {   /* thread ids are arbitrary */
			trace_add(&t, thread, TRACE_READ, X, 4);
			trace_add(&t, thread, TRACE_WRITE, X, 4);
		}
	sim *s = run_trace(&c, &t);
	cr_assert_eq(sim_thread_count(s), 2);
	const sim_thread_stats *a = sim_thread(s, 0), *b = sim_thread(s, 1);
	cr_assert_eq(a->thread, 7);
	cr_assert_eq(a->core, 0);
	cr_assert_eq(b->thread, 8);
	cr_assert_eq(b->core, 1);
	cr_assert_eq(a->references[SIM_READ], K);
	cr_assert_eq(a->references[SIM_WRITE], K);
	cr_assert_eq(a->l1_misses, K);
	cr_assert_eq(a->coherence_misses, K - 1);
	cr_assert_eq(b->coherence_misses, K - 1);
	cr_assert_eq(a->invalidations_sent, K - 1, "its first write was E->M");
	cr_assert_eq(b->invalidations_sent, K);
	cr_assert_eq(a->last_level_misses, K, "one from memory, the rest from core 1's cache");
	cr_assert_null(sim_thread(s, 2));
	sim_free(s);
	trace_release(&t);
}

Test(sim_reports, code_addresses)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	sim_trace t = { 0 };
	for (int i = 0; i < 10; i++) {
		trace_add(&t, 0, TRACE_READ, X + 64ull * i, 8);          /* ten misses at 0x401000 */
		t.records[t.count - 1].flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		t.records[t.count - 1].instruction_address = 0x401000;
		trace_add(&t, 0, TRACE_READ, X, 8);                     /* hits at 0x401008 */
		t.records[t.count - 1].flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		t.records[t.count - 1].instruction_address = 0x401008;
	}
	sim *s = run_trace(&c, &t);
	sim_code_stats code[4];
	cr_assert_eq(sim_hot_code(s, code, 4), 1, "only the missing instruction is listed");
	cr_assert_eq(code[0].address, 0x401000);
	cr_assert_eq(code[0].l1_misses, 10);
	cr_assert_eq(code[0].last_level_misses, 10);
	sim_free(s);
	trace_release(&t);
}

Test(sim_reports, estimated_cycles)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.cache[SIM_L1D].latency = 4;
	c.cache[SIM_L2].latency = 14;
	c.memory_latency = 200;
	c.transfer_latency = 60;
	c.upgrade_latency = 40;
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_READ, X, 8);    /* L1D, L2, memory */
	trace_add(&t, 0, TRACE_READ, X, 8);    /* L1D hit */
	trace_add(&t, 1, TRACE_READ, X, 8);    /* core 1: L1D, L2, then core 0 (E) downgrades; memory */
	trace_add(&t, 0, TRACE_WRITE, X, 8);   /* core 0: L1D hit in S, upgrade */
	trace_add(&t, 1, TRACE_READ, X, 8);    /* core 1: L1D, L2 miss, transfer from core 0's M */
	sim *s = run_trace(&c, &t);
	uint64_t coherence;
	cr_assert_eq(sim_core_cycles(s, 0, &coherence), 3 * 4 + 14 + 200 + 40);
	cr_assert_eq(coherence, 40);
	cr_assert_eq(sim_core_cycles(s, 1, &coherence), 2 * 4 + 2 * 14 + 200 + 60);
	cr_assert_eq(coherence, 60);
	sim_free(s);
	trace_release(&t);
}

Test(sim_reports, report_tables_and_unsupported_cells)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.classify = false;
	c.check = false;
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_READ, X, 8);
	sim *s = run_trace(&c, &t);
	output_report *r = output_report_new("sim");
	plumb_status status;
	cr_assert_eq(sim_report(s, r, 5, &status), 0);
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	cr_assert_eq(output_write(r, OUTPUT_JSON, f, &status), 0);
	fclose(f);
	static const char *const tables[] = { "\"summary\"", "\"caches\"", "\"coherence\"", "\"fanout\"",
	                                      "\"transitions\"", "\"threads\"", "\"cycles\"" };
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		cr_assert(strstr(text, tables[i]), "%s missing", tables[i]);
	cr_assert(strstr(text, "\"not-counted\""), "classes without classify are not-counted, never 0");
	cr_assert_null(strstr(text, "\"hot_lines\""), "no hot lines without classify");
	free(text);
	output_report_free(r);
	sim_free(s);
	trace_release(&t);
}
