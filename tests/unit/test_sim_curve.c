/* Miss-ratio curves (plumb/sim_curve.h): every point of the grid equals a
 * separate run of plumb's own simulator with that one configuration, for
 * the whole program and every region, on random reference streams with
 * reads, writes, modifies, fetches, straddles and several threads; for the
 * levels below the L1s, where the input is what missed the configured
 * levels above, and where inclusion makes the levels above depend on the
 * level (back-invalidation), at every point where the simulator counted
 * none. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sim/sim.h"
#include "sim/sim_curve.h"
#include "sim_test_util.h"
#include "../temp_folder.h"

static void add_marker(sim_trace *t, uint32_t thread, int begin, const char *name)
{
	trace_add(t, thread, TRACE_READ, 0, 0);
	trace_region_marker(&t->records[t->count - 1], begin, thread, name);
}

static uint64_t next_random(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return *seed >> 33;
}

/* n references of thread over lines lines of its own range (disjoint:
 * thread << 24) or a common one; some straddle two lines, some repeat the
 * last line, a quarter are fetches. */
static void add_references(sim_trace *t, uint32_t thread, size_t n, uint64_t lines, bool disjoint, uint64_t *seed)
{
	uint64_t base = 0x400000 + (disjoint ? (uint64_t)thread << 24 : 0), last = base;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next_random(seed);
		trace_kind kind = (trace_kind)(r % 4);
		/* a hot eighth of the lines half the time: reuse at every distance */
		uint64_t line = (r >> 2) % 2 ? (r >> 8) % (lines / 8 + 1) : (r >> 8) % lines;
		uint64_t address = base + line * 64 + (r >> 40) % 64;
		if ((r >> 4) % 8 == 0)
			address = last;   /* the same line again */
		last = address;
		uint16_t size = kind == TRACE_INSTRUCTION ? 4 : (uint16_t)(1u << (r >> 20) % 5);
		trace_add(t, thread, kind, address, size);
	}
}

static sim_curve *run_curve(const sim_config *c, sim_level level, uint64_t max_size, const sim_trace *t)
{
	plumb_status status;
	sim_curve *curve;
	cr_assert_eq(sim_curve_new(&curve, c, level, max_size, &status), 0, "%s", status.message);
	/* in several batches, as a reader hands them */
	size_t half = t->count / 3;
	cr_assert_eq(sim_curve_batch(curve, t->records, half, &status), 0, "%s", status.message);
	cr_assert_eq(sim_curve_batch(curve, t->records + half, t->count - half, &status), 0, "%s", status.message);
	return curve;
}

static uint64_t level_misses(const sim *s, sim_level level, uint64_t *back_invalidations)
{
	const sim_stats *st = sim_statistics(s);
	uint64_t misses = 0;
	*back_invalidations = st->l3_back_invalidations;
	for (uint32_t core = 0; core < st->cores; core++) {
		const sim_core_stats *k = &st->core[core];
		*back_invalidations += k->cache[SIM_L1I].back_invalidations + k->cache[SIM_L1D].back_invalidations;
		if (level != SIM_L3)
			for (int kind = 0; kind < SIM_KIND_COUNT; kind++)
				misses += k->cache[level].misses[kind];
	}
	if (level == SIM_L3)
		for (int kind = 0; kind < SIM_KIND_COUNT; kind++)
			misses += st->l3.misses[kind];
	return misses;
}

/* The L1s' misses and evictions: plumb's private L2 removes the L1 copies
 * of its victims without counting them, so a run where they equal those of
 * a run whose L2 never evicts had no such removal (a removed line misses
 * again, or its empty way is filled without an eviction). */
static uint64_t l1_signature(const sim *s)
{
	const sim_stats *st = sim_statistics(s);
	uint64_t v = 0;
	for (uint32_t core = 0; core < st->cores; core++)
		for (int level = SIM_L1I; level <= SIM_L1D; level++) {
			const sim_cache_stats *k = &st->core[core].cache[level];
			v = v * 1000003 + k->evictions;
			for (int kind = 0; kind < SIM_KIND_COUNT; kind++)
				v = v * 1000003 + k->misses[kind];
		}
	return v;
}

/* Every grid point against the simulator with that configuration; returns
 * the points compared (skipping, when only_without_back_invalidation, those
 * where the simulator removed lines from the levels above). */
static size_t compare_grid(const sim_config *base, sim_level level, uint64_t max_size, const sim_trace *t,
                           bool only_without_back_invalidation)
{
	sim_curve *curve = run_curve(base, level, max_size, t);
	uint64_t shown = sim_curve_shown_size(curve);
	cr_assert_gt(shown, 64);
	size_t compared = 0, regions = sim_curve_region_count(curve);
	uint64_t untouched_l1 = 0;
	if (level == SIM_L2) {
		/* the configured L2 is larger than the footprint: it never evicts */
		plumb_status status;
		sim *s;
		cr_assert_eq(sim_new(&s, base, &status), 0, "%s", status.message);
		cr_assert_eq(sim_access_batch(s, t->records, t->count, &status), 0, "%s", status.message);
		cr_assert_eq(sim_statistics(s)->core[0].cache[SIM_L2].evictions, 0);
		untouched_l1 = l1_signature(s);
		sim_free(s);
	}
	for (uint64_t size = 64; size <= shown; size *= 2) {
		for (uint32_t ways = 1; ways <= size / 64; ways *= 2) {
			if (ways > SIM_CURVE_MAX_WAYS && ways != size / 64)
				continue;
			sim_config c = *base;
			c.cache[level].size = size;
			c.cache[level].assoc = ways;
			c.classify = false;
			c.check = false;
			plumb_status status;
			sim *s;
			cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
			cr_assert_eq(sim_access_batch(s, t->records, t->count, &status), 0, "%s", status.message);
			uint64_t back;
			uint64_t expected = level_misses(s, level, &back);
			if (level == SIM_L2 && l1_signature(s) != untouched_l1)
				back++;
			if (only_without_back_invalidation && back > 0) {
				sim_free(s);
				continue;
			}
			uint64_t misses, accesses;
			cr_assert_eq(sim_curve_point(curve, SIZE_MAX, size, ways, &misses, &accesses), 0);
			cr_assert_eq(misses, expected, "%s %llu B %u-way: curve %llu, simulator %llu", sim_level_name(level),
			             (unsigned long long)size, ways, (unsigned long long)misses, (unsigned long long)expected);
			cr_assert_eq(sim_region_count(s), regions);
			for (size_t r = 0; r < regions; r++) {
				const sim_region_stats *g = sim_region(s, r);
				uint32_t thread;
				uint64_t entries;
				cr_assert_str_eq(sim_curve_region_name(curve, r, &thread, &entries), g->name);
				cr_assert_eq(thread, g->thread);
				cr_assert_eq(entries, g->entries);
				cr_assert_eq(sim_curve_point(curve, r, size, ways, &misses, &accesses), 0);
				cr_assert_eq(misses, sim_region_misses(g, level), "region %s, %llu B %u-way: curve %llu, simulator %llu",
				             g->name, (unsigned long long)size, ways, (unsigned long long)misses,
				             (unsigned long long)sim_region_misses(g, level));
				cr_assert_eq(accesses, sim_region_accesses(g, level));
			}
			sim_free(s);
			compared++;
		}
	}
	sim_curve_free(curve);
	return compared;
}

/* Three threads with nested regions, one entered twice, one end that names
 * the wrong region, one left open. */
static void regions_trace(sim_trace *t, uint64_t lines, bool disjoint, uint64_t seed)
{
	add_references(t, 0, 3000, lines, disjoint, &seed);
	add_marker(t, 0, 1, "outer");
	add_references(t, 0, 2000, lines, disjoint, &seed);
	add_marker(t, 1, 1, "worker");
	add_references(t, 1, 3000, lines, disjoint, &seed);
	add_marker(t, 0, 1, "inner");
	add_references(t, 0, 2000, lines, disjoint, &seed);
	add_marker(t, 0, 0, "outer");   /* not the innermost: ignored */
	add_marker(t, 0, 0, "inner");
	add_references(t, 2, 2000, lines, disjoint, &seed);
	add_marker(t, 1, 0, "worker");
	add_marker(t, 0, 1, "inner");
	add_references(t, 0, 1500, lines, disjoint, &seed);
	add_marker(t, 0, 0, "inner");
	add_marker(t, 0, 0, "outer");
	add_marker(t, 2, 1, "never-closed");
	add_references(t, 2, 1000, lines, disjoint, &seed);
	add_references(t, 1, 1000, lines, disjoint, &seed);
}

static void l1_only(sim_config *c, uint32_t cores)
{
	sim_config_default(c);
	c->cores = cores;
	c->cache[SIM_L2].size = 0;
	c->cache[SIM_L3].size = 0;
}

Test(sim_curve, l1d_every_point_equals_the_simulator)
{
	sim_config c;
	l1_only(&c, 1);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		sim_trace t = { 0 };
		regions_trace(&t, 300 * seed, false, seed);
		cr_assert_gt(compare_grid(&c, SIM_L1D, 1 << 20, &t, false), 30);
		trace_release(&t);
	}
}

Test(sim_curve, l1i_and_modify_as_read_and_write)
{
	sim_config c;
	l1_only(&c, 1);
	plumb_status status;
	cr_assert_eq(sim_config_set(&c, "modify", "read-write", &status), 0, "%s", status.message);
	sim_trace t = { 0 };
	regions_trace(&t, 400, false, 7);
	cr_assert_gt(compare_grid(&c, SIM_L1I, 1 << 20, &t, false), 30);
	cr_assert_gt(compare_grid(&c, SIM_L1D, 1 << 20, &t, false), 30);
	trace_release(&t);
}

/* Two cores, each thread on its own lines: one stack per core, misses summed. */
Test(sim_curve, several_cores_private_levels)
{
	sim_config c;
	l1_only(&c, 2);
	sim_trace t = { 0 };
	regions_trace(&t, 500, true, 11);
	cr_assert_gt(compare_grid(&c, SIM_L1D, 1 << 20, &t, false), 30);
	trace_release(&t);
}

/* The footprint past the map's and the list's first capacities. */
Test(sim_curve, large_footprint_and_long_trace)
{
	sim_config c;
	l1_only(&c, 1);
	sim_trace t = { 0 };
	uint64_t seed = 5;
	add_references(&t, 0, 60000, 3000, false, &seed);
	cr_assert_gt(compare_grid(&c, SIM_L1D, 1 << 20, &t, false), 50);
	trace_release(&t);
}

/* Lines 17 lines apart (and a few neighbours): nearly every line a block
 * of the map to itself, so the lines' numbers (a block's first plus the
 * line's place in it) leave most numbers unused and the list's nodes grow
 * far past the footprint. */
Test(sim_curve, sparse_lines_each_a_block_of_their_own)
{
	sim_config c;
	l1_only(&c, 1);
	sim_trace t = { 0 };
	uint64_t seed = 13;
	for (size_t i = 0; i < 40000; i++) {
		uint64_t r = next_random(&seed);
		uint64_t line = (r >> 2) % 2 ? (r >> 8) % 200 : (r >> 8) % 2000;
		uint64_t address = 0x400000 + (line * 17 + (r >> 30) % 2) * 64 + (r >> 40) % 64;
		trace_add(&t, 0, (r >> 4) % 3 ? TRACE_READ : TRACE_WRITE, address, (uint16_t)(1u << (r >> 20) % 5));
	}
	sim_curve *curve = run_curve(&c, SIM_L1D, 1 << 20, &t);
	cr_assert_gt(sim_curve_footprint(curve), 2000, "%llu lines", (unsigned long long)sim_curve_footprint(curve));
	sim_curve_free(curve);
	cr_assert_gt(compare_grid(&c, SIM_L1D, 1 << 20, &t, false), 50);
	trace_release(&t);
}

/* Grids of 2 to 16 lines keep Mattson's whole stack as the list; from 32
 * lines on its first 16 positions are a row of their own: every point of
 * each equals the simulator. */
Test(sim_curve, small_grids_and_the_top_row)
{
	sim_config c;
	l1_only(&c, 1);
	sim_trace t = { 0 };
	uint64_t seed = 17;
	add_references(&t, 0, 20000, 120, false, &seed);
	for (uint64_t max_size = 128; max_size <= 4096; max_size *= 2)
		cr_assert_gt(compare_grid(&c, SIM_L1D, max_size, &t, false), 0, "a grid of %llu B",
		             (unsigned long long)max_size);
	trace_release(&t);
}

/* The L2 sees what missed the configured L1s (one line size).  plumb's L2
 * includes the L1s, so at sizes where its victims removed L1 lines the
 * simulator may differ: compared where it counted none. */
Test(sim_curve, l2_below_the_configured_l1s)
{
	sim_config c;
	sim_config_default(&c);
	c.cache[SIM_L1D].size = 2048;
	c.cache[SIM_L1D].assoc = 2;
	c.cache[SIM_L1I].size = 1024;
	c.cache[SIM_L1I].assoc = 4;
	c.cache[SIM_L2].size = 1 << 20;
	c.cache[SIM_L3].size = 0;
	sim_trace t = { 0 };
	regions_trace(&t, 700, false, 3);
	size_t compared = compare_grid(&c, SIM_L2, 1 << 20, &t, true);
	/* the large sizes rarely back-invalidate */
	cr_assert_gt(compared, 10, "compared %zu", compared);
	trace_release(&t);
}

/* A non-inclusive L3 under L1s and an L2: exact at every point, also with
 * two cores on their own lines sharing it (misses attributed by core). */
Test(sim_curve, l3_non_inclusive_below_l1_and_l2)
{
	for (uint32_t cores = 1; cores <= 2; cores++) {
		sim_config c;
		sim_config_default(&c);
		c.cores = cores;
		c.cache[SIM_L1D].size = 1024;
		c.cache[SIM_L1D].assoc = 2;
		c.cache[SIM_L1I].size = 1024;
		c.cache[SIM_L1I].assoc = 2;
		c.cache[SIM_L2].size = 4096;
		c.cache[SIM_L2].assoc = 4;
		c.cache[SIM_L3].size = 1 << 20;
		c.cache[SIM_L3].assoc = 16;
		c.cache[SIM_L3].line = 64;
		c.l3_inclusion = SIM_NON_INCLUSIVE;
		sim_trace t = { 0 };
		regions_trace(&t, 600, true, 13 + cores);
		/* dirty lines leave the L1s and the L2 (write-backs): they mark the
		 * L3's copy without a use, so they are no reference of the curve */
		sim *s = run_trace(&c, &t);
		cr_assert_gt(sim_statistics(s)->core[0].cache[SIM_L1D].writebacks, 100);
		cr_assert_gt(sim_statistics(s)->core[0].cache[SIM_L2].writebacks, 100);
		sim_free(s);
		cr_assert_gt(compare_grid(&c, SIM_L3, 1 << 20, &t, false), 30);
		trace_release(&t);
	}
}

/* An L3 straight under the L1s: the lines of a straddle that hit the L1
 * go to the L3 too when another missed (cachegrind's rule). */
Test(sim_curve, l3_without_l2)
{
	sim_config c;
	sim_config_default(&c);
	c.cache[SIM_L1D].size = 1024;
	c.cache[SIM_L1D].assoc = 4;
	c.cache[SIM_L2].size = 0;
	c.cache[SIM_L3].size = 1 << 20;
	c.cache[SIM_L3].assoc = 16;
	c.cache[SIM_L3].line = 64;
	c.l3_inclusion = SIM_NON_INCLUSIVE;
	sim_trace t = { 0 };
	regions_trace(&t, 500, false, 17);
	cr_assert_gt(compare_grid(&c, SIM_L3, 1 << 20, &t, false), 30);
	trace_release(&t);
}

/* An inclusive L3 back-invalidates the private levels: the curve is the
 * non-inclusive L3's, equal to the inclusive one wherever it removed nothing. */
Test(sim_curve, l3_inclusive_equal_where_nothing_was_back_invalidated)
{
	sim_config c;
	sim_config_default(&c);
	c.cache[SIM_L1D].size = 1024;
	c.cache[SIM_L1D].assoc = 2;
	c.cache[SIM_L2].size = 0;
	c.cache[SIM_L3].size = 1 << 20;
	c.cache[SIM_L3].assoc = 16;
	c.cache[SIM_L3].line = 64;
	c.l3_inclusion = SIM_INCLUSIVE;
	sim_trace t = { 0 };
	regions_trace(&t, 400, false, 19);
	size_t compared = compare_grid(&c, SIM_L3, 1 << 20, &t, true);
	cr_assert_gt(compared, 5);
	trace_release(&t);
}

Test(sim_curve, not_covered_names_the_alternative)
{
	sim_config c;
	sim_config_default(&c);
	plumb_status status;
	sim_curve *curve;
	c.cache[SIM_L1D].replacement = SIM_PLRU;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L1D, 0, &status), -1);
	cr_assert_not_null(strstr(status.message, "plru"), "%s", status.message);
	cr_assert_not_null(strstr(status.message, "--sweep"), "%s", status.message);
	/* a policy of a level below the curve's does not matter */
	sim_config_default(&c);
	c.cache[SIM_L2].replacement = SIM_PLRU;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L1D, 0, &status), 0, "%s", status.message);
	sim_curve_free(curve);
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L2, 0, &status), -1);
	sim_config_default(&c);
	c.prefetch.kind = SIM_PREFETCH_NEXT_LINE;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L1D, 0, &status), -1);
	cr_assert_not_null(strstr(status.message, "prefetch"), "%s", status.message);
	sim_config_default(&c);
	c.cache[SIM_L1D].write_back = false;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L2, 0, &status), -1);
	cr_assert_not_null(strstr(status.message, "write-through"), "%s", status.message);
	sim_config_default(&c);
	c.cache[SIM_L2].line = 128;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L2, 0, &status), -1);
	cr_assert_not_null(strstr(status.message, "line sizes"), "%s", status.message);
	sim_config_default(&c);
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L3, 0, &status), -1);   /* no L3 */
	c.cache[SIM_L3].size = 1 << 20;
	c.cache[SIM_L3].line = 64;
	c.cache[SIM_L3].assoc = 16;
	c.l3_inclusion = SIM_EXCLUSIVE;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L3, 0, &status), -1);
	cr_assert_not_null(strstr(status.message, "exclusive"), "%s", status.message);
	sim_config_default(&c);
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L1D, 1ull << 40, &status), -1);
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L1D, 32, &status), -1);
}

Test(sim_curve, levels_and_points_outside_the_grid)
{
	sim_level level;
	plumb_status status;
	cr_assert_eq(sim_curve_level_parse("L2", &level, &status), 0);
	cr_assert_eq(level, SIM_L2);
	cr_assert_eq(sim_curve_level_parse("l1d", &level, &status), 0);
	cr_assert_eq(level, SIM_L1D);
	cr_assert_eq(sim_curve_level_parse("l4", &level, &status), -1);
	sim_config c;
	l1_only(&c, 1);
	sim_curve *curve;
	cr_assert_eq(sim_curve_new(&curve, &c, SIM_L1D, 1 << 16, &status), 0);
	uint64_t misses, accesses;
	cr_assert_eq(sim_curve_point(curve, SIZE_MAX, 4096, 4, &misses, &accesses), 0);
	cr_assert_eq(sim_curve_point(curve, SIZE_MAX, 4096, 0, &misses, &accesses), 0);   /* fully associative */
	cr_assert_eq(sim_curve_point(curve, SIZE_MAX, 4096, 3, &misses, &accesses), -1);
	cr_assert_eq(sim_curve_point(curve, SIZE_MAX, 4096, 32, &misses, &accesses), -1);   /* 32 ways of 64 lines */
	cr_assert_eq(sim_curve_point(curve, SIZE_MAX, 3 * 64, 1, &misses, &accesses), -1);
	cr_assert_eq(sim_curve_point(curve, SIZE_MAX, 1 << 17, 1, &misses, &accesses), -1);   /* past the grid */
	cr_assert_eq(sim_curve_point(curve, 0, 4096, 1, &misses, &accesses), -1);   /* no region */
	sim_curve_free(curve);
}

/* The report's table: one row per grid point, the whole program first. */
Test(sim_curve, report_table)
{
	sim_config c;
	l1_only(&c, 1);
	sim_trace t = { 0 };
	regions_trace(&t, 100, false, 23);
	sim_curve *curve = run_curve(&c, SIM_L1D, 1 << 20, &t);
	plumb_status status;
	sim_run_facts facts = { .trace = "test", .format = TRACE_FORMAT_NATIVE, .records = t.count };
	output_report *report = sim_curve_report(curve, &facts, &status);
	cr_assert_not_null(report);
	const output_table *table = output_table_find(report, "curve");
	cr_assert_not_null(table);
	static const char *const columns[] = { "region", "level", "size_bytes", "ways", "sets", "misses", "miss_ratio" };
	cr_assert_eq(output_column_count(table), 7);
	for (size_t i = 0; i < 7; i++)
		cr_assert_str_eq(output_column_name(table, i), columns[i]);
	cr_assert_str_eq(output_column_unit(table, 2), "B");
	/* plumb explain builds its table with the same two functions: the
	 * same rows, region by region */
	output_report *own = output_report_new("explain");
	output_table *mine = sim_curve_table(own);
	sim_curve_rows(mine, curve, SIZE_MAX, "(all)");
	size_t whole = output_row_count(mine);
	cr_assert_gt(whole, 0);
	for (size_t r = 0; r < whole; r++)
		for (size_t j = 0; j < 7; j++) {
			cr_assert_eq(output_cell_kind(mine, r, j), output_cell_kind(table, r, j), "row %zu, %s", r, columns[j]);
			if (output_cell_string(mine, r, j))
				cr_assert_str_eq(output_cell_string(mine, r, j), output_cell_string(table, r, j));
			else
				cr_assert_eq(output_cell_number(mine, r, j), output_cell_number(table, r, j), "row %zu, %s", r,
				             columns[j]);
		}
	output_report_free(own);
	cr_assert_str_eq(output_cell_string(table, 0, 0), "(all)");
	cr_assert_str_eq(output_cell_string(table, 0, 1), "l1d");
	cr_assert_eq(output_cell_number(table, 0, 2), 64);
	/* 128 lines shown (footprint 100): sizes 1..128 lines */
	cr_assert_eq(sim_curve_shown_size(curve), 128 * 64);
	size_t rows_per_region = 0;
	for (size_t r = 0; r < output_row_count(table); r++)
		rows_per_region += strcmp(output_cell_string(table, r, 0), "(all)") == 0;
	cr_assert_eq(output_row_count(table), rows_per_region * (1 + sim_curve_region_count(curve)));
	for (size_t r = 0; r < output_row_count(table); r++) {
		double size = output_cell_number(table, r, 2), ways = output_cell_number(table, r, 3),
		       sets = output_cell_number(table, r, 4);
		cr_assert_eq(size, ways * sets * 64);
	}
	output_report_free(report);
	sim_curve_free(curve);
	trace_release(&t);
}

/* --curve's list of levels: names once each, or "data" (the L1D and every
 * level below it that the configuration has). */
Test(sim_curve, levels_list)
{
	sim_config c;
	sim_config_default(&c);
	sim_level levels[SIM_LEVEL_COUNT];
	size_t n;
	plumb_status status;
	cr_assert_eq(sim_curve_levels_parse("l1d,L2", &c, levels, &n, &status), 0, "%s", status.message);
	cr_assert_eq(n, 2);
	cr_assert_eq(levels[0], SIM_L1D);
	cr_assert_eq(levels[1], SIM_L2);
	cr_assert_eq(sim_curve_levels_parse("data", &c, levels, &n, &status), 0);
	cr_assert_eq(n, 1 + (c.cache[SIM_L2].size > 0) + (c.cache[SIM_L3].size > 0));
	cr_assert_eq(levels[0], SIM_L1D);
	l1_only(&c, 1);
	cr_assert_eq(sim_curve_levels_parse("data", &c, levels, &n, &status), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(sim_curve_levels_parse("l1d,l1d", &c, levels, &n, &status), -1);
	cr_assert(strstr(status.message, "twice"), "%s", status.message);
	cr_assert_eq(sim_curve_levels_parse("l1d,", &c, levels, &n, &status), -1);
	cr_assert_eq(sim_curve_levels_parse("l1d,l4", &c, levels, &n, &status), -1);
	cr_assert_eq(sim_curve_levels_parse("", &c, levels, &n, &status), -1);
	/* made all, or none: this configuration has no L2 */
	sim_curve *curves[SIM_LEVEL_COUNT];
	cr_assert_eq(sim_curve_new_levels(curves, &n, &c, "l1d,l2", 0, &status), -1);
	cr_assert_eq(n, 0);
	cr_assert(strstr(status.message, "L2"), "%s", status.message);
	cr_assert_eq(sim_curve_new_levels(curves, &n, &c, "data", 0, &status), 0, "%s", status.message);
	cr_assert_eq(n, 1);
	sim_curve_free(curves[0]);
}

/* Several levels in one pass over a reader (plumb sim --curve data, what
 * plumb report --program runs): every point and every knee equal each
 * level's own curve. */
Test(sim_curve, several_levels_in_one_pass_equal_one_level_each)
{
	sim_config c;
	sim_config_default(&c);
	c.cores = 2;
	c.cache[SIM_L2].size = 16 << 10;
	c.cache[SIM_L2].assoc = 4;
	c.cache[SIM_L3].size = 64 << 10;
	c.cache[SIM_L3].assoc = 8;
	c.l3_inclusion = SIM_NON_INCLUSIVE;
	sim_trace t = { 0 };
	regions_trace(&t, 3000, false, 41);
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-curve-levels-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	plumb_status status;
	trace_writer *w;
	cr_assert_eq(trace_writer_open(&w, path, TRACE_FORMAT_NATIVE, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_write(w, t.records, t.count, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_close(w, &status), 0, "%s", status.message);
	sim_level levels[SIM_LEVEL_COUNT];
	size_t n;
	cr_assert_eq(sim_curve_levels_parse("data", &c, levels, &n, &status), 0);
	cr_assert_eq(n, 3);
	sim_curve *together[3];
	for (size_t l = 0; l < n; l++)
		cr_assert_eq(sim_curve_new(&together[l], &c, levels[l], 1 << 20, &status), 0, "%s", status.message);
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_NATIVE, &status), 0, "%s", status.message);
	uint64_t records = 0;
	cr_assert_eq(sim_curve_run_reader_all(together, n, reader, NULL, &records, &status), 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	unlink(path);
	cr_assert_eq(records, t.count);
	sim_run_facts facts = { .trace = "test", .format = TRACE_FORMAT_NATIVE, .records = t.count };
	output_report *report = sim_curve_report_all((const sim_curve *const *)together, n, &facts, &status);
	cr_assert_not_null(report);
	const output_table *knees = output_table_find(report, "knees");
	cr_assert_not_null(knees);
	size_t compared = 0, knee_rows = 0;
	for (size_t l = 0; l < n; l++) {
		sim_curve *alone = run_curve(&c, levels[l], 1 << 20, &t);
		cr_assert_eq(sim_curve_shown_size(alone), sim_curve_shown_size(together[l]));
		for (size_t region = 0; region <= sim_curve_region_count(alone); region++) {
			size_t r = region == sim_curve_region_count(alone) ? SIZE_MAX : region;
			for (uint64_t size = 64; size <= sim_curve_shown_size(alone); size *= 2)
				for (uint32_t ways = 0; ways <= SIM_CURVE_MAX_WAYS; ways = ways ? ways * 2 : 1) {
					uint64_t a, b, aa, ba;
					int ra = sim_curve_point(alone, r, size, ways, &a, &aa);
					cr_assert_eq(sim_curve_point(together[l], r, size, ways, &b, &ba), ra);
					if (ra == 0) {
						cr_assert_eq(a, b, "%s at %llu B, %u ways", sim_level_name(levels[l]),
						             (unsigned long long)size, ways);
						cr_assert_eq(aa, ba);
						compared++;
					}
				}
			uint64_t most, least, most_together, least_together;
			uint64_t knee = sim_curve_knee(alone, r, &most, &least);
			cr_assert_eq(sim_curve_knee(together[l], r, &most_together, &least_together), knee);
			/* the report's row of this region and level */
			const char *word = levels[l] == SIM_L1D ? "l1d" : levels[l] == SIM_L2 ? "l2" : "l3";
			const char *name = r == SIZE_MAX ? "(all)" : sim_curve_region_name(alone, r, NULL, NULL);
			int region_column = output_column_index(knees, "region"), level_column = output_column_index(knees, "level");
			int knee_column = output_column_index(knees, "knee_bytes");
			int most_column = output_column_index(knees, "misses_one_line");
			cr_assert(region_column >= 0 && level_column >= 0 && knee_column >= 0 && most_column >= 0);
			for (size_t row = 0; row < output_row_count(knees); row++) {
				const char *region_cell = output_cell_string(knees, row, (size_t)region_column);
				const char *level_cell = output_cell_string(knees, row, (size_t)level_column);
				if (strncmp(region_cell, name, strlen(name)) || strcmp(level_cell, word))
					continue;
				double cell = output_cell_number(knees, row, (size_t)knee_column);
				cr_assert(knee ? cell == (double)knee : isnan(cell), "%s %s: %g against %llu", name, word, cell,
				          (unsigned long long)knee);
				cr_assert_eq(output_cell_number(knees, row, (size_t)most_column), (double)most);
				knee_rows++;
				break;
			}
		}
		sim_curve_free(alone);
		sim_curve_free(together[l]);
	}
	cr_assert_gt(compared, 100);
	cr_assert_eq(knee_rows, n * 5, "a knee per level for the program and its 4 regions");
	output_report_free(report);
	trace_release(&t);
}
