/* Region markers in the simulator: a region's figures are exactly the
 * growth of its core's statistics between its markers, whatever batch loop
 * runs (general with --check, last-way hint with classification or TLBs,
 * front-way LRU), and markers change no whole-program figure. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "sim_test_util.h"

static void add_marker(sim_trace *t, uint32_t thread, int begin, const char *name)
{
	trace_add(t, thread, TRACE_READ, 0, 0);
	trace_region_marker(&t->records[t->count - 1], begin, thread, name);
}

/* Pseudo-random references of one thread over a small footprint. */
static void add_references(sim_trace *t, uint32_t thread, size_t n, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t r = *seed >> 33;
		trace_kind kind = (trace_kind)(r % 4);
		uint64_t address = 0x100000 + (r >> 3) % 65536 + (thread << 20) * (r & 1);
		trace_add(t, thread, kind, address, kind == TRACE_INSTRUCTION ? 4 : (uint16_t)(1u << (r >> 20) % 4));
	}
}

/* The trace without its markers, up to (not including) record `end`. */
static sim *run_prefix(const sim_config *c, const sim_trace *t, size_t end)
{
	sim_trace plain = { 0 };
	for (size_t i = 0; i < end; i++)
		if (!trace_is_marker(&t->records[i]))
			trace_add(&plain, t->records[i].thread, (trace_kind)t->records[i].kind, t->records[i].address,
			          t->records[i].size);
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, c, &status), 0, "%s", status.message);
	if (plain.count)
		cr_assert_eq(sim_access_batch(s, plain.records, plain.count, &status), 0, "%s", status.message);
	trace_release(&plain);
	return s;
}

static void expect_delta(const sim_config *c, const sim_trace *t, const sim_region_stats *r, size_t begin,
                         size_t end)
{
	sim *a = run_prefix(c, t, begin), *b = run_prefix(c, t, end);
	const uint64_t *x = (const uint64_t *)&sim_statistics(a)->core[r->core];
	const uint64_t *y = (const uint64_t *)&sim_statistics(b)->core[r->core];
	const uint64_t *got = (const uint64_t *)&r->stats;
	for (size_t i = 0; i < sizeof(sim_core_stats) / 8; i++)
		cr_assert_eq(got[i], y[i] - x[i], "region %s: counter %zu is %llu, want %llu", r->name, i,
		             (unsigned long long)got[i], (unsigned long long)(y[i] - x[i]));
	sim_free(a);
	sim_free(b);
}

static void check_configuration(sim_config *c)
{
	sim_trace t = { 0 };
	uint64_t seed = 7;
	/* thread 0: A [outer B [inner C] D] E; thread 1 interleaved with [solo ...]
	 * and a mismatched END; batches cut anywhere. */
	add_references(&t, 0, 3000, &seed);
	size_t outer_begin = t.count;
	add_marker(&t, 0, 1, "outer");
	add_references(&t, 0, 2000, &seed);
	add_references(&t, 1, 500, &seed);
	add_marker(&t, 1, 1, "solo");
	size_t solo_begin = t.count;
	add_references(&t, 1, 1500, &seed);
	add_marker(&t, 1, 0, "not-open");
	add_references(&t, 0, 10, &seed);
	size_t inner_begin = t.count;
	add_marker(&t, 0, 1, "inner");
	add_references(&t, 0, 4000, &seed);
	size_t inner_end = t.count;
	add_marker(&t, 0, 0, "inner");
	add_references(&t, 1, 700, &seed);
	size_t solo_end = t.count;
	add_marker(&t, 1, 0, "solo");
	add_references(&t, 0, 900, &seed);
	size_t outer_end = t.count;
	add_marker(&t, 0, 0, "outer");
	add_references(&t, 0, 1000, &seed);
	add_marker(&t, 0, 1, "left-open");
	add_references(&t, 0, 100, &seed);

	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, c, &status), 0, "%s", status.message);
	for (size_t i = 0; i < t.count; i += 777) {
		size_t n = t.count - i < 777 ? t.count - i : 777;
		cr_assert_eq(sim_access_batch(s, t.records + i, n, &status), 0, "%s", status.message);
	}
	cr_assert_eq(sim_region_count(s), 4);   /* outer, solo, inner, left-open (in order of first entry) */
	const sim_region_stats *outer = sim_region(s, 0), *solo = sim_region(s, 1), *inner = sim_region(s, 2);
	cr_assert_str_eq(outer->name, "outer");
	cr_assert_str_eq(solo->name, "solo");
	cr_assert_str_eq(inner->name, "inner");
	cr_assert_str_eq(sim_region(s, 3)->name, "left-open");
	cr_assert_eq(sim_region(s, 3)->entries, 0);
	cr_assert_eq(outer->entries, 1);
	cr_assert_eq(outer->thread, 0);
	cr_assert_eq(solo->thread, 1);
	cr_assert_eq(sim_region_mismatches(s), 1);
	cr_assert_eq(sim_region_open_count(s), 1);
	expect_delta(c, &t, outer, outer_begin, outer_end);
	expect_delta(c, &t, inner, inner_begin, inner_end);
	expect_delta(c, &t, solo, solo_begin, solo_end);
	cr_assert_eq(inner->stats.references[SIM_IFETCH] + inner->stats.references[SIM_READ] +
	             inner->stats.references[SIM_WRITE] - (c->modify == SIM_MODIFY_READ_WRITE ? 0 : 0) >= 4000, 1);
	/* markers change no whole-program figure */
	sim *plain = run_prefix(c, &t, t.count);
	cr_assert_eq(memcmp(sim_statistics(plain), sim_statistics(s), sizeof(sim_stats)), 0);
	sim_free(plain);
	sim_free(s);
	trace_release(&t);
}

Test(sim_regions, region_is_the_growth_of_its_core_in_every_batch_loop)
{
	sim_config c;
	/* front-way LRU loop: no classification, no TLB */
	sim_config_default(&c);
	c.cores = 2;
	c.classify = false;
	check_configuration(&c);
	/* last-way hint loop with classification */
	c.classify = true;
	check_configuration(&c);
	/* with TLBs */
	c.classify = false;
	c.tlb[SIM_DTLB].entries = 16;
	c.tlb[SIM_ITLB].entries = 16;
	check_configuration(&c);
	/* the general loop (check) */
	small_config(&c, 2, SIM_MESI);
	check_configuration(&c);
}

Test(sim_regions, report_has_a_regions_table)
{
	sim_config c;
	sim_config_default(&c);
	sim_trace t = { 0 };
	add_marker(&t, 0, 1, "work");
	trace_add(&t, 0, TRACE_READ, 0x1000, 8);
	trace_add(&t, 0, TRACE_READ, 0x1000, 8);
	add_marker(&t, 0, 0, "work");
	trace_add(&t, 0, TRACE_READ, 0x2000, 8);
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0);
	cr_assert_eq(sim_access_batch(s, t.records, t.count, &status), 0, "%s", status.message);
	const sim_region_stats *r = sim_region(s, 0);
	cr_assert_eq(sim_region_accesses(r, SIM_L1D), 2);
	cr_assert_eq(sim_region_misses(r, SIM_L1D), 1);
	cr_assert_eq(sim_region_misses(r, SIM_L2), 1);
	output_report *report = output_report_new("sim");
	cr_assert_eq(sim_report(s, report, 10, &status), 0);
	const output_table *table = output_table_find(report, "regions");
	cr_assert_not_null(table);
	cr_assert_eq(output_row_count(table), 1);
	cr_assert_str_eq(output_cell_string(table, 0, (size_t)output_column_index(table, "region")), "work");
	cr_assert_eq(output_cell_number(table, 0, (size_t)output_column_index(table, "l1d_misses")), 1.0);
	cr_assert_eq(output_cell_number(table, 0, (size_t)output_column_index(table, "reads")), 2.0);
	output_report_free(report);
	sim_free(s);
	trace_release(&t);
}

Test(sim_regions, reset_clears_regions_and_open_ones_count_from_there)
{
	sim_config c;
	sim_config_default(&c);
	sim_trace t = { 0 };
	add_marker(&t, 0, 1, "r");
	trace_add(&t, 0, TRACE_READ, 0x1000, 8);
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0);
	cr_assert_eq(sim_access_batch(s, t.records, t.count, &status), 0, "%s", status.message);
	sim_reset_statistics(s);
	sim_trace u = { 0 };
	trace_add(&u, 0, TRACE_READ, 0x2000, 8);
	trace_add(&u, 0, TRACE_WRITE, 0x2000, 8);
	add_marker(&u, 0, 0, "r");
	cr_assert_eq(sim_access_batch(s, u.records, u.count, &status), 0, "%s", status.message);
	const sim_region_stats *r = sim_region(s, 0);
	cr_assert_eq(r->entries, 1);
	cr_assert_eq(sim_region_accesses(r, SIM_L1D), 2, "only what came after the reset");
	cr_assert_eq(sim_region_open_count(s), 0);
	sim_free(s);
	trace_release(&t);
	trace_release(&u);
}

/* The L1 shadows' catch-ups on a thread of their own (sim_shadow_worker.c)
 * change no figure: the whole statistics, read between batches too, and
 * every region's, equal those of the shadows kept on the simulator's
 * thread (PLUMB_SIM_SHADOW_THREAD=0), on small caches that miss often. */
static sim *new_sim_with_shadow_thread(const sim_config *c, bool shadow_thread)
{
	setenv("PLUMB_SIM_SHADOW_THREAD", shadow_thread ? "1" : "0", 1);
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, c, &status), 0, "%s", status.message);
	unsetenv("PLUMB_SIM_SHADOW_THREAD");
	return s;
}

/* Trace records [i, i + 1001) of t into s: i steps by 1001, so that the
 * callers can read the statistics between batches. */
static void batch_at(sim *s, const sim_trace *t, size_t i)
{
	plumb_status status;
	size_t n = t->count - i < 1001 ? t->count - i : 1001;
	cr_assert_eq(sim_access_batch(s, t->records + i, n, &status), 0, "%s", status.message);
}

static sim *run_classified(const sim_config *c, const sim_trace *t, bool shadow_thread, sim_stats *midway)
{
	sim *s = new_sim_with_shadow_thread(c, shadow_thread);
	for (size_t i = 0; i < t->count; i += 1001) {
		batch_at(s, t, i);
		if (i == 10010)
			*midway = *sim_statistics(s);
	}
	return s;
}

Test(sim_regions, the_shadows_thread_changes_no_figure)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.classify = true;
	sim_trace t = { 0 };
	uint64_t seed = 11;
	for (int round = 0; round < 6; round++) {
		add_references(&t, 0, 3000, &seed);
		add_marker(&t, 0, 1, "loop");
		add_references(&t, 0, 2500, &seed);
		add_references(&t, 1, 2500, &seed);
		add_marker(&t, 0, 0, "loop");
	}
	sim_stats midway_plain, midway_threaded;
	sim *plain = run_classified(&c, &t, false, &midway_plain);
	sim *threaded = run_classified(&c, &t, true, &midway_threaded);
	cr_assert_eq(memcmp(&midway_plain, &midway_threaded, sizeof(sim_stats)), 0);
	const sim_stats *a = sim_statistics(plain), *b = sim_statistics(threaded);
	cr_assert_gt(a->core[0].cache[SIM_L1D].capacity + a->core[0].cache[SIM_L1D].conflict, 100);
	cr_assert_eq(memcmp(a, b, sizeof(sim_stats)), 0);
	cr_assert_eq(sim_region_count(plain), 1);
	cr_assert_eq(sim_region_count(threaded), 1);
	cr_assert_eq(memcmp(&sim_region(plain, 0)->stats, &sim_region(threaded, 0)->stats, sizeof(sim_core_stats)), 0);
	sim_free(plain);
	sim_free(threaded);
	trace_release(&t);
}

/* The L2s' and the L3's shadows and the hot-lines and hot-code tables are
 * kept on the shadows' thread too: every class of every level and both
 * tables, read midway, before and after a reset and at the end, equal those
 * kept on the simulator's thread, on small caches (misses of every class at
 * every level) and lines both cores write (coherence misses, invalidations,
 * transfers, upgrades). */
static void add_shared(sim_trace *t, size_t n, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t r = *seed >> 33;
		uint32_t thread = (uint32_t)(r >> 2) & 1;
		trace_kind kind = (trace_kind)(r % 4);
		/* 2 KiB both threads use, and 64 KiB of each thread's own */
		uint64_t address = (r >> 7) % 4 == 0 ? 0x400000 + (r >> 10) % 2048
		                                     : 0x1000000 + ((uint64_t)thread << 24) + (r >> 10) % 65536;
		trace_add(t, thread, kind, address, kind == TRACE_INSTRUCTION ? 4 : (uint16_t)(1u << (r >> 20) % 4));
		if (kind != TRACE_INSTRUCTION) {
			t->records[t->count - 1].flags |= TRACE_HAS_INSTRUCTION_ADDRESS;
			t->records[t->count - 1].instruction_address = 0x400 + (r >> 13) % 64 * 4;
		}
	}
}

typedef struct tables_seen {
	sim_stats stats;
	size_t lines, code;
	sim_line_stats line[64];
	sim_code_stats code_stats[64];
} tables_seen;

static void read_tables(const sim *s, tables_seen *out)
{
	memset(out, 0, sizeof *out);   /* the padding too: compared whole */
	out->code = sim_hot_code(s, out->code_stats, 64);   /* each waits for the thread itself */
	out->lines = sim_hot_lines(s, out->line, 64);
	out->stats = *sim_statistics(s);
}

static void run_tables(const sim_config *c, const sim_trace *t, bool shadow_thread, tables_seen seen[4])
{
	sim *s = new_sim_with_shadow_thread(c, shadow_thread);
	for (size_t i = 0; i < t->count; i += 1001) {
		batch_at(s, t, i);
		if (i == 20020)
			read_tables(s, &seen[0]);
		if (i == 40040) {
			read_tables(s, &seen[1]);
			sim_reset_statistics(s);
		}
		if (i == 41041)
			read_tables(s, &seen[2]);
	}
	read_tables(s, &seen[3]);
	sim_free(s);
}

Test(sim_regions, the_shadows_thread_changes_no_class_and_no_hot_line)
{
	sim_config c;
	sim_config_default(&c);
	c.cores = 2;
	c.cache[SIM_L1I].size = c.cache[SIM_L1D].size = 4096;
	c.cache[SIM_L2].size = 16384;
	c.cache[SIM_L3].size = 65536;
	c.classify = true;
	sim_trace t = { 0 };
	uint64_t seed = 5;
	add_shared(&t, 80000, &seed);
	static tables_seen plain[4], threaded[4];
	run_tables(&c, &t, false, plain);
	run_tables(&c, &t, true, threaded);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(memcmp(&plain[i], &threaded[i], sizeof plain[i]), 0, "reading %d", i);
	const sim_stats *a = &plain[1].stats;
	cr_assert_gt(a->core[0].cache[SIM_L2].capacity, 100);
	cr_assert_gt(a->core[0].cache[SIM_L2].conflict, 100);
	cr_assert_gt(a->l3.capacity + a->l3.conflict, 100);
	cr_assert_gt(a->core[0].cache[SIM_L1D].coherence_true + a->core[0].cache[SIM_L1D].coherence_false, 100);
	cr_assert_gt(plain[1].lines, 16, "%zu hot lines", plain[1].lines);
	cr_assert_gt(plain[1].line[0].invalidations, 0);
	cr_assert_gt(plain[1].line[0].reads + plain[1].line[0].writes, 0);
	cr_assert_eq(plain[1].code, 64);
	cr_assert_gt(plain[1].code_stats[0].l1_misses, 0);
	cr_assert_lt(plain[2].stats.core[0].cache[SIM_L1D].accesses[SIM_READ],
	             plain[1].stats.core[0].cache[SIM_L1D].accesses[SIM_READ], "after the reset");
	trace_release(&t);
}
