/* Each protocol's transitions on the ping-pong and on a read-then-write by
 * a second core, checked in the transition matrix and the event counts. */
#include "sim_test_util.h"

#define X 0x30000ull

static sim *pattern(sim_protocol protocol, int rounds)
{
	sim_config c;
	small_config(&c, 2, protocol);
	sim_trace t = { 0 };
	for (int i = 0; i < rounds; i++)
		for (uint32_t core = 0; core < 2; core++) {
			trace_add(&t, core, TRACE_READ, X, 8);
			trace_add(&t, core, TRACE_WRITE, X, 8);
		}
	sim *s = run_trace(&c, &t);
	trace_release(&t);
	return s;
}

static uint64_t tr(const sim *s, uint32_t core, int cause, sim_state from, sim_state to)
{
	return sim_statistics(s)->core[core].coherence.transitions[cause][from][to];
}

Test(sim_protocols, mesi_transitions)
{
	sim *s = pattern(SIM_MESI, 1);
	/* core 0: I->E (read), E->M (write), then core 1's read: M->S, core 1's write: S->I */
	cr_assert_eq(tr(s, 0, 0, SIM_STATE_I, SIM_STATE_E), 1);
	cr_assert_eq(tr(s, 0, 0, SIM_STATE_E, SIM_STATE_M), 1);
	cr_assert_eq(tr(s, 0, 1, SIM_STATE_M, SIM_STATE_S), 1);
	cr_assert_eq(tr(s, 0, 1, SIM_STATE_S, SIM_STATE_I), 1);
	/* core 1: I->S (read with a sharer), S->M (upgrade) */
	cr_assert_eq(tr(s, 1, 0, SIM_STATE_I, SIM_STATE_S), 1);
	cr_assert_eq(tr(s, 1, 0, SIM_STATE_S, SIM_STATE_M), 1);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->core[0].coherence.writebacks, 1, "M->S flushes");
	cr_assert_eq(st->memory_writes, 1);
	cr_assert_eq(st->core[0].coherence.downgrades, 1);
	sim_free(s);
}

Test(sim_protocols, msi_has_no_exclusive_state)
{
	sim *s = pattern(SIM_MSI, 3);
	cr_assert_eq(tr(s, 0, 0, SIM_STATE_I, SIM_STATE_S), 3);
	cr_assert_eq(tr(s, 0, 0, SIM_STATE_I, SIM_STATE_E), 0);
	cr_assert_eq(event(s, "PAPI_CA_CLN", -1), 0);
	cr_assert_eq(event(s, "PAPI_CA_SHR", -1), 6, "every write upgrades S->M");
	cr_assert_eq(event(s, "PAPI_CA_INV", -1), 5, "the first upgrade finds no other copy");
	cr_assert_eq(total_fanout(s, 0, 1) + total_fanout(s, 1, 1), 5);
	sim_free(s);
}

Test(sim_protocols, moesi_shares_dirty_lines_without_writeback)
{
	sim *s = pattern(SIM_MOESI, 2);
	cr_assert_eq(tr(s, 0, 1, SIM_STATE_M, SIM_STATE_O), 2, "a remote read leaves the owner O");
	cr_assert_eq(tr(s, 0, 1, SIM_STATE_O, SIM_STATE_I), 2);
	cr_assert_eq(tr(s, 1, 1, SIM_STATE_M, SIM_STATE_O), 1);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->memory_writes, 0, "dirty sharing: no flush to memory");
	cr_assert_eq(event(s, "SIM_TRANSFERS", -1), 3);
	cr_assert_eq(event(s, "PAPI_CA_SHR", -1), 3);
	sim_free(s);
}

Test(sim_protocols, moesi_owner_upgrade)
{
	sim_config c;
	small_config(&c, 2, SIM_MOESI);
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_WRITE, X, 8);   /* core 0: M */
	trace_add(&t, 1, TRACE_READ, X, 8);    /* core 0: O, core 1: S */
	trace_add(&t, 0, TRACE_WRITE, X, 8);   /* core 0: O->M, invalidates core 1 */
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->core[0].coherence.upgrades_owned, 1);
	cr_assert_eq(st->core[0].coherence.bus_read_exclusive, 1, "the first write misses: RFO");
	cr_assert_eq(tr(s, 0, 0, SIM_STATE_O, SIM_STATE_M), 1);
	cr_assert_eq(st->core[1].coherence.invalidations_received, 1);
	sim_free(s);
	trace_release(&t);
}

Test(sim_protocols, write_miss_on_a_modified_line_is_an_rfo_with_transfer)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_WRITE, X, 8);
	trace_add(&t, 1, TRACE_WRITE, X, 8);
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->core[1].coherence.bus_read_exclusive, 1);
	cr_assert_eq(st->core[1].coherence.transfers_received, 1);
	cr_assert_eq(st->core[0].coherence.interventions_received, 1);
	cr_assert_eq(st->core[0].coherence.invalidations_received, 1);
	cr_assert_eq(tr(s, 0, 1, SIM_STATE_M, SIM_STATE_I), 1);
	sim_free(s);
	trace_release(&t);
}

Test(sim_protocols, esi_never_reaches_m)
{
	sim *s = pattern(SIM_ESI, 5);
	for (uint32_t core = 0; core < 2; core++)
		for (int cause = 0; cause < 2; cause++)
			for (int from = 0; from < SIM_STATE_COUNT; from++) {
				cr_assert_eq(tr(s, core, cause, (sim_state)from, SIM_STATE_M), 0);
				cr_assert_eq(tr(s, core, cause, SIM_STATE_M, (sim_state)from), 0);
			}
	cr_assert_eq(tr(s, 1, 0, SIM_STATE_S, SIM_STATE_E), 5, "a write makes the writer the only (E) holder");
	sim_free(s);
}

Test(sim_protocols, no_write_allocate_write_goes_around)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.cache[SIM_L1D].write_allocate = false;
	c.cache[SIM_L2].write_allocate = false;
	sim_trace t = { 0 };
	trace_add(&t, 1, TRACE_READ, X, 8);    /* thread 1 = core 0 holds X */
	trace_add(&t, 0, TRACE_WRITE, X, 8);   /* core 1 writes around its caches */
	trace_add(&t, 0, TRACE_READ, X, 8);    /* and then misses */
	sim *s = run_trace(&c, &t);
	const sim_stats *st = sim_statistics(s);
	cr_assert_eq(st->core[1].cache[SIM_L1D].misses[SIM_WRITE], 1);
	cr_assert_eq(st->core[1].cache[SIM_L1D].misses[SIM_READ], 1);
	cr_assert_eq(st->core[1].coherence.bus_writes, 1);
	cr_assert_eq(st->core[0].coherence.invalidations_received, 1);
	cr_assert_eq(st->memory_writes, 1);
	sim_free(s);
	trace_release(&t);
}

Test(sim_protocols, write_through_l1_updates_l2)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	c.cache[SIM_L1D].write_back = false;
	sim_trace t = { 0 };
	for (int i = 0; i < 10; i++)
		trace_add(&t, 0, TRACE_WRITE, X, 8);
	sim *s = run_trace(&c, &t);
	const sim_core_stats *cs = &sim_statistics(s)->core[0];
	cr_assert_eq(cs->cache[SIM_L1D].misses[SIM_WRITE], 1);
	cr_assert_eq(cs->cache[SIM_L2].accesses[SIM_WRITE], 10, "the write miss, then nine write-throughs");
	cr_assert_eq(cs->coherence.bus_writes, 0, "the write-back L2 absorbs them");
	sim_free(s);
	trace_release(&t);
}
