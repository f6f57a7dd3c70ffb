/* State preparation, verified exactly: the plans replayed through a
 * counting harness (a reference MESI directory that counts transfers,
 * invalidations and memory fills), their trace-record form, and the real
 * threads' operation counts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "coherence/coherence.h"
#include "core/cpu.h"

/* ---- the counting harness: reference MESI over a few lines and roles ---- */
enum { I_, S_, E_, M_ };
#define H_LINES 16
#define H_ROLES 8

typedef struct harness {
	uint64_t base, spacing;
	int state[H_LINES][H_ROLES];
	unsigned memory_fills, from_modified, from_exclusive, from_shared, invalidations, writebacks, hits;
} harness;

static int harness_line(const harness *h, uint64_t address)
{
	uint64_t index = (address - h->base) / h->spacing;
	cr_assert(index < H_LINES, "address outside the lines");
	return (int)index;
}

static void harness_read(harness *h, int line, int role)
{
	int *s = h->state[line];
	if (s[role] != I_) {
		h->hits++;
		return;
	}
	bool others = false;
	for (int r = 0; r < H_ROLES; r++) {
		if (r == role || s[r] == I_)
			continue;
		others = true;
		if (s[r] == M_) {
			h->from_modified++;
			h->writebacks++;
		} else if (s[r] == E_) {
			h->from_exclusive++;
		}
		s[r] = S_;
	}
	if (!others)
		h->memory_fills++;
	s[role] = others ? S_ : E_;
}

static void harness_write(harness *h, int line, int role)
{
	int *s = h->state[line];
	if (s[role] == M_ || s[role] == E_) {
		h->hits++;
		s[role] = M_;
		return;
	}
	/* A miss (I) fetches the data once, from the best holder; an upgrade
	 * (S) fetches nothing.  Either way every other copy is invalidated. */
	int source = I_;
	for (int r = 0; r < H_ROLES; r++) {
		if (r == role || s[r] == I_)
			continue;
		if (s[r] > source)
			source = s[r];
		if (s[r] == M_)
			h->writebacks++;
		h->invalidations++;
		s[r] = I_;
	}
	if (s[role] == I_) {
		if (source == M_)
			h->from_modified++;
		else if (source == E_)
			h->from_exclusive++;
		else if (source == S_)
			h->from_shared++;
		else
			h->memory_fills++;
	}
	s[role] = M_;
}

static void harness_apply(harness *h, const coherence_event *events, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int line = harness_line(h, events[i].address), role = events[i].role;
		switch (events[i].op) {
		case COHERENCE_OP_READ: harness_read(h, line, role); break;
		case COHERENCE_OP_WRITE: harness_write(h, line, role); break;
		case COHERENCE_OP_FLUSH:
			for (int r = 0; r < H_ROLES; r++) {
				if (h->state[line][r] == M_)
					h->writebacks++;
				h->state[line][r] = I_;
			}
			break;
		case COHERENCE_OP_ACCESS:
			if (events[i].access == COHERENCE_ACCESS_LOAD)
				harness_read(h, line, role);
			else
				harness_write(h, line, role);
			break;
		}
	}
}

static void harness_reset_counts(harness *h)
{
	h->memory_fills = h->from_modified = h->from_exclusive = h->from_shared = 0;
	h->invalidations = h->writebacks = h->hits = 0;
}

static const uint32_t order[H_LINES] = { 3, 7, 1, 12, 0, 9, 15, 4, 2, 11, 6, 14, 8, 5, 13, 10 };
static const coherence_lines lines = { .base = 0x100000, .count = H_LINES, .spacing = 128, .order = order };

/* Prepares state from a history in which A holds every line Modified (as
 * after a store pass), so the plans must work whatever came before. */
static void prepare(harness *h, coherence_state state, int sharers)
{
	memset(h, 0, sizeof *h);
	h->base = lines.base;
	h->spacing = lines.spacing;
	for (int l = 0; l < H_LINES; l++)
		h->state[l][0] = M_;
	coherence_plan plan;
	cr_assert_eq(coherence_plan_build(state, sharers, &plan, NULL), 0);
	coherence_event events[H_LINES * 16];
	size_t n = coherence_plan_events(&plan, &lines, false, COHERENCE_ACCESS_LOAD, events, H_LINES * 16);
	cr_assert_eq(n, (size_t)plan.count * H_LINES);
	harness_apply(h, events, n);
	harness_reset_counts(h);
}

static void expect_states(const harness *h, const int *expected, int roles)
{
	for (int l = 0; l < H_LINES; l++)
		for (int r = 0; r < roles; r++)
			cr_expect_eq(h->state[l][r], expected[r], "line %d role %d: state %d, expected %d", l, r,
			             h->state[l][r], expected[r]);
}

static void timed_pass(harness *h, coherence_access access)
{
	coherence_plan empty = { .count = 0 };
	coherence_event events[H_LINES];
	size_t n = coherence_plan_events(&empty, &lines, true, access, events, H_LINES);
	cr_assert_eq(n, H_LINES);
	/* A visits in the random order, each line once. */
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(events[i].address, lines.base + order[i] * lines.spacing);
	harness_apply(h, events, n);
}

Test(mp_coherence_plan, modified)
{
	harness h;
	prepare(&h, COHERENCE_MODIFIED, 0);
	expect_states(&h, (int[]){ I_, M_, I_ }, 3);
	timed_pass(&h, COHERENCE_ACCESS_LOAD);
	cr_expect_eq(h.from_modified, H_LINES);
	cr_expect_eq(h.memory_fills + h.from_exclusive + h.hits, 0);
}

Test(mp_coherence_plan, exclusive)
{
	harness h;
	prepare(&h, COHERENCE_EXCLUSIVE, 0);
	expect_states(&h, (int[]){ I_, E_, I_ }, 3);
	timed_pass(&h, COHERENCE_ACCESS_ATOMIC_ADD);
	cr_expect_eq(h.from_exclusive, H_LINES);
	cr_expect_eq(h.invalidations, H_LINES);
	cr_expect_eq(h.writebacks + h.memory_fills, 0);
}

Test(mp_coherence_plan, invalid)
{
	harness h;
	prepare(&h, COHERENCE_INVALID, 0);
	expect_states(&h, (int[]){ I_, I_, I_ }, 3);
	timed_pass(&h, COHERENCE_ACCESS_STORE);
	cr_expect_eq(h.memory_fills, H_LINES);
	cr_expect_eq(h.invalidations, 0);
}

Test(mp_coherence_plan, local)
{
	harness h;
	prepare(&h, COHERENCE_LOCAL, 0);
	expect_states(&h, (int[]){ M_, I_ }, 2);
	timed_pass(&h, COHERENCE_ACCESS_CAS);
	cr_expect_eq(h.hits, H_LINES);
	cr_expect_eq(h.memory_fills + h.invalidations + h.from_modified, 0);
}

Test(mp_coherence_plan, shared_with_further_sharers)
{
	for (int k = 1; k <= 5; k++) {
		harness h;
		prepare(&h, COHERENCE_SHARED, k);
		int expected[H_ROLES] = { I_ };
		for (int r = 1; r <= k + 1; r++)
			expected[r] = S_;
		expect_states(&h, expected, H_ROLES);
		timed_pass(&h, COHERENCE_ACCESS_STORE);
		cr_expect_eq(h.invalidations, (unsigned)(k + 1) * H_LINES, "k=%d", k);
		cr_expect_eq(h.from_shared, (unsigned)H_LINES);
	}
}

Test(mp_coherence_plan, clean_shared_store_invalidates_exactly_k)
{
	for (int k = 1; k <= 7; k++) {
		harness h;
		prepare(&h, COHERENCE_CLEAN_SHARED, k);
		int expected[H_ROLES] = { I_ };
		for (int r = 1; r <= k; r++)
			expected[r] = k == 1 ? E_ : S_;
		expect_states(&h, expected, H_ROLES);
		timed_pass(&h, COHERENCE_ACCESS_STORE);
		cr_expect_eq(h.invalidations, (unsigned)k * H_LINES, "k=%d", k);
		cr_expect_eq(h.writebacks, 0, "k=%d: a clean copy needs no writeback", k);
	}
}

Test(mp_coherence_plan, roles_and_rejections)
{
	coherence_plan plan;
	plumb_status status;
	cr_expect_eq(coherence_plan_build(COHERENCE_MODIFIED, 0, &plan, &status), 0);
	cr_expect_eq(plan.roles, 2);
	cr_expect_eq(coherence_plan_build(COHERENCE_SHARED, 3, &plan, &status), 0);
	cr_expect_eq(plan.roles, 5);
	cr_expect_eq(plan.count, 4);
	cr_expect_eq(coherence_plan_build(COHERENCE_CLEAN_SHARED, 4, &plan, &status), 0);
	cr_expect_eq(plan.roles, 5);
	cr_expect_neq(coherence_plan_build(COHERENCE_SHARED, 0, &plan, &status), 0);
	cr_expect_neq(coherence_plan_build(COHERENCE_CLEAN_SHARED, 0, &plan, &status), 0);
	cr_expect_neq(coherence_plan_build((coherence_state)42, 0, &plan, &status), 0);
	cr_expect_str_eq(coherence_state_name(COHERENCE_EXCLUSIVE), "E");
	cr_expect_str_eq(coherence_access_name(COHERENCE_ACCESS_CAS), "cas");
}

Test(mp_coherence_plan, trace_records)
{
	coherence_plan plan;
	cr_assert_eq(coherence_plan_build(COHERENCE_EXCLUSIVE, 0, &plan, NULL), 0);
	coherence_event events[H_LINES * 4];
	size_t n = coherence_plan_events(&plan, &lines, true, COHERENCE_ACCESS_ATOMIC_ADD, events, H_LINES * 4);
	cr_assert_eq(n, 4 * H_LINES);
	const uint32_t threads[] = { 5, 9 };
	size_t evict = 64 * 1024;
	size_t records_needed = coherence_events_to_trace(events, n, threads, 0x40000000, evict, 64, NULL, 0);
	/* write (16), one sweep for the flush step (1024), read (16), access (16) */
	cr_assert_eq(records_needed, 16 + 1024 + 16 + 16);
	trace_record *records = calloc(records_needed, sizeof *records);
	cr_assert_eq(coherence_events_to_trace(events, n, threads, 0x40000000, evict, 64, records, records_needed),
	             records_needed);
	cr_expect_eq(records[0].kind, TRACE_WRITE);
	cr_expect_eq(records[0].thread, 9);
	cr_expect_eq(records[0].address, lines.base + 8);
	cr_expect_eq(records[16].address, 0x40000000);
	cr_expect_eq(records[16 + 1023].address, 0x40000000 + 1023 * 64);
	cr_expect_eq(records[16 + 1024].kind, TRACE_READ);
	cr_expect_eq(records[16 + 1024 + 16].kind, TRACE_MODIFY);
	cr_expect_eq(records[16 + 1024 + 16].thread, 5);
	cr_expect_eq(records[16 + 1024 + 16].address, lines.base + order[0] * lines.spacing);
	free(records);
}

/* The real threads do exactly what the plan says: per-role counts. */
Test(mp_coherence_plan, team_counts_match_plan)
{
	int cpus[8];
	int allowed = cpu_allowed(cpus, 8, NULL);
	cr_assert(allowed >= 1);
	if (allowed < 2)
		cr_skip_test("needs 2 CPUs for a helper thread");
	size_t count = 256, spacing = 128;
	uint8_t *buffer = aligned_alloc(4096, count * spacing);
	cr_assert_not_null(buffer);
	memset(buffer, 0, count * spacing);
	coherence_lines real = { .base = (uint64_t)(uintptr_t)buffer, .count = count, .spacing = spacing };
	coherence_team *team;
	plumb_status status;
	cr_assert_eq(coherence_team_start(&team, cpus, 2, 5000000000ull, &status), 0, "%s", status.message);
	const coherence_state states[] = { COHERENCE_LOCAL, COHERENCE_MODIFIED, COHERENCE_EXCLUSIVE,
	                                   COHERENCE_INVALID, COHERENCE_CLEAN_SHARED };
	coherence_counts expected[2] = { { 0 } };
	for (int repeat = 0; repeat < 3; repeat++)
		for (size_t s = 0; s < sizeof states / sizeof states[0]; s++) {
			coherence_plan plan;
			cr_assert_eq(coherence_plan_build(states[s], states[s] == COHERENCE_CLEAN_SHARED ? 1 : 0, &plan, NULL), 0);
			cr_assert_eq(coherence_team_prepare(team, &plan, &real, &status), 0, "%s", status.message);
			for (int i = 0; i < plan.count; i++) {
				coherence_counts *c = &expected[plan.steps[i].role];
				c->writes += plan.steps[i].op == COHERENCE_OP_WRITE ? count : 0;
				c->reads += plan.steps[i].op == COHERENCE_OP_READ ? count : 0;
				c->flushes += plan.steps[i].op == COHERENCE_OP_FLUSH ? count : 0;
			}
		}
	for (int role = 0; role < 2; role++) {
		coherence_counts got;
		coherence_team_counts(team, role, &got);
		cr_expect_eq(got.writes, expected[role].writes, "role %d writes", role);
		cr_expect_eq(got.reads, expected[role].reads, "role %d reads", role);
		cr_expect_eq(got.flushes, expected[role].flushes, "role %d flushes", role);
	}
	/* The helper's writes really happened (second word of each line). */
	for (size_t i = 0; i < count; i++)
		cr_expect_eq(((uint64_t *)(buffer + i * spacing))[1], i);
	/* A plan needing more CPUs than the team has is refused, not run. */
	coherence_plan big;
	cr_assert_eq(coherence_plan_build(COHERENCE_SHARED, 2, &big, NULL), 0);
	cr_expect_neq(coherence_team_prepare(team, &big, &real, &status), 0);
	coherence_team_stop(team);
	free(buffer);
}

Test(mp_coherence_plan, team_rejects_duplicate_cpus)
{
	int cpus[] = { 0, 0 };
	coherence_team *team;
	plumb_status status;
	cr_expect_neq(coherence_team_start(&team, cpus, 2, 1000000000ull, &status), 0);
	cr_expect(strstr(status.message, "twice") != NULL);
}
