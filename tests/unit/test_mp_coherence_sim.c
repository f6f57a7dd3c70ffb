/* State preparation replayed through plumb's simulator: the recipes'
 * trace form (flush = an eviction sweep, as the thesis did) must leave the
 * simulated caches in the intended states, so that A's timed pass causes
 * exactly the coherence traffic the state implies.  Deterministic counts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "coherence/coherence.h"
#include "sim/sim.h"

#define LINES 64
#define SPACING 128
#define BASE 0x10000000ull
#define EVICT_BASE 0x40000000ull
#define EVICT_BYTES (4u << 20)   /* 2x the simulated L1 + L2: a full eviction with LRU */

static sim *new_sim(unsigned cores, sim_protocol protocol)
{
	sim_config config;
	sim_config_default(&config);
	plumb_status status;
	char text[16];
	snprintf(text, sizeof text, "%u", cores);
	cr_assert_eq(sim_config_set(&config, "cores", text, &status), 0, "%s", status.message);
	config.protocol = protocol;
	config.modify = SIM_MODIFY_READ_WRITE;   /* an atomic reads, then writes */
	config.check = true;
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	return s;
}

static void replay(sim *s, const coherence_event *events, size_t n)
{
	size_t count = coherence_events_to_trace(events, n, NULL, EVICT_BASE, EVICT_BYTES, 64, NULL, 0);
	trace_record *records = calloc(count, sizeof *records);
	cr_assert_not_null(records);
	cr_assert_eq(coherence_events_to_trace(events, n, NULL, EVICT_BASE, EVICT_BYTES, 64, records, count), count);
	plumb_status status;
	cr_assert_eq(sim_access_batch(s, records, count, &status), 0, "%s", status.message);
	free(records);
}

static uint32_t order[LINES];
static const coherence_lines lines = { .base = BASE, .count = LINES, .spacing = SPACING, .order = order };

/* Runs: every role touches a private address once (so thread r is core r,
 * the simulator assigning cores in order of appearance), A writes all lines
 * (the previous pass), the plan, then A's timed pass with statistics reset
 * just before it.  Returns the simulator for inspection. */
static sim *run_case_with(sim_protocol protocol, coherence_state state, int sharers, coherence_access access)
{
	for (uint32_t i = 0; i < LINES; i++)
		order[i] = (i * 37u) % LINES;   /* 37 is coprime with 64: a permutation */
	coherence_plan plan;
	cr_assert_eq(coherence_plan_build(state, sharers, &plan, NULL), 0);
	unsigned cores = plan.roles < 2 ? 2 : (unsigned)plan.roles;
	sim *s = new_sim(cores, protocol);
	plumb_status status;
	for (uint32_t r = 0; r < cores; r++)
		cr_assert_eq(sim_access(s, r, SIM_READ, 0x70000000ull + r * 4096, 8, &status), 0);
	coherence_plan history;
	cr_assert_eq(coherence_plan_build(COHERENCE_LOCAL, 0, &history, NULL), 0);
	coherence_event *events = calloc((size_t)(plan.count + 2) * LINES, sizeof *events);
	size_t n = coherence_plan_events(&history, &lines, false, access, events, LINES);
	replay(s, events, n);
	n = coherence_plan_events(&plan, &lines, false, access, events, (size_t)plan.count * LINES);
	replay(s, events, n);
	sim_reset_statistics(s);
	coherence_plan none = { .count = 0 };
	n = coherence_plan_events(&none, &lines, true, access, events, LINES);
	replay(s, events, n);
	free(events);
	cr_assert_eq(sim_check(s, &status), 0, "%s", status.message);
	return s;
}

static sim *run_case(coherence_state state, int sharers, coherence_access access)
{
	return run_case_with(SIM_MESI, state, sharers, access);
}

static const sim_coherence_stats *coherence_of(const sim *s, unsigned core)
{
	return &sim_statistics(s)->core[core].coherence;
}

Test(mp_coherence_sim, modified_load_is_served_by_the_owner)
{
	sim *s = run_case(COHERENCE_MODIFIED, 0, COHERENCE_ACCESS_LOAD);
	cr_expect_eq(coherence_of(s, 0)->transfers_received, LINES);
	cr_expect_eq(coherence_of(s, 1)->interventions_received, LINES);
	cr_expect_eq(coherence_of(s, 1)->downgrades, LINES);
	cr_expect_eq(sim_statistics(s)->core[0].memory_reads, 0);
	sim_free(s);
}

Test(mp_coherence_sim, exclusive_atomic_takes_the_line_from_the_owner)
{
	sim *s = run_case(COHERENCE_EXCLUSIVE, 0, COHERENCE_ACCESS_ATOMIC_ADD);
	cr_expect_eq(coherence_of(s, 1)->interventions_received, LINES);
	cr_expect_eq(coherence_of(s, 1)->invalidations_received, LINES);
	cr_expect_eq(coherence_of(s, 1)->writebacks, 0, "an Exclusive line is clean");
	sim_free(s);
}

Test(mp_coherence_sim, invalid_store_goes_to_memory)
{
	sim *s = run_case(COHERENCE_INVALID, 0, COHERENCE_ACCESS_STORE);
	const sim_coherence_stats *a = coherence_of(s, 0);
	cr_expect_eq(a->bus_read_exclusive, LINES);
	cr_expect_eq(a->invalidations_sent, 0);
	cr_expect_eq(a->transfers_received, 0);
	cr_expect_eq(sim_statistics(s)->core[0].memory_reads, LINES);
	sim_free(s);
}

Test(mp_coherence_sim, local_cas_stays_in_l1)
{
	sim *s = run_case(COHERENCE_LOCAL, 0, COHERENCE_ACCESS_CAS);
	const sim_stats *stats = sim_statistics(s);
	cr_expect_eq(stats->core[0].cache[SIM_L1D].misses[SIM_READ] + stats->core[0].cache[SIM_L1D].misses[SIM_WRITE], 0);
	cr_expect_eq(coherence_of(s, 0)->bus_reads + coherence_of(s, 0)->bus_read_exclusive, 0);
	sim_free(s);
}

Test(mp_coherence_sim, shared_store_invalidates_owner_and_sharers)
{
	for (int k = 1; k <= 3; k++) {
		sim *s = run_case(COHERENCE_SHARED, k, COHERENCE_ACCESS_STORE);
		cr_expect_eq(coherence_of(s, 0)->invalidations_sent, (uint64_t)(k + 1) * LINES, "k=%d", k);
		cr_expect_eq(coherence_of(s, 0)->fanout[k + 1], LINES, "k=%d", k);
		sim_free(s);
	}
}

Test(mp_coherence_sim, clean_shared_store_invalidates_exactly_k)
{
	for (int k = 1; k <= 4; k++) {
		sim *s = run_case(COHERENCE_CLEAN_SHARED, k, COHERENCE_ACCESS_STORE);
		cr_expect_eq(coherence_of(s, 0)->invalidations_sent, (uint64_t)k * LINES, "k=%d", k);
		cr_expect_eq(coherence_of(s, 0)->fanout[k], LINES, "k=%d", k);
		uint64_t writebacks = 0;
		for (int r = 1; r <= k; r++)
			writebacks += coherence_of(s, (unsigned)r)->writebacks;
		cr_expect_eq(writebacks, 0, "k=%d: clean copies need no writeback", k);
		sim_free(s);
	}
}

/* AMD's protocol is MOESI: after seed 001's Shared recipe the writer keeps
 * the line Owned (dirty, shared), so A's miss is served by B, not memory. */
Test(mp_coherence_sim, shared_under_moesi_is_served_by_the_owner)
{
	sim *s = run_case_with(SIM_MOESI, COHERENCE_SHARED, 1, COHERENCE_ACCESS_LOAD);
	cr_expect_eq(coherence_of(s, 0)->transfers_received, LINES);
	cr_expect_eq(sim_statistics(s)->core[0].memory_reads, 0);
	cr_expect_eq(coherence_of(s, 1)->interventions_received, LINES, "B is the owner");
	sim_free(s);
}
