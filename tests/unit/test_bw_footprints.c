/* plumb bw's default working sets on a machine whose shared cache is
 * usable far below its nominal size (a VM guest that gets a few MiB of a
 * 260 MiB L3): sized from the usable capacity the machine model measured,
 * so that the all-threads row of the shared level fits in it and measures
 * it, not memory.  Exact sizes, nothing timed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bandwidth/bandwidth.h"
#include "machine/machine_model.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

/* L1 48 KiB and L2 2 MiB per core, an L3 of 260 MiB shared by both CPUs,
 * DRAM; each thread's share as bandwidth_levels_from_topology gives it. */
static int xeon_levels(bandwidth_level *levels, int threads)
{
	static const uint64_t sizes[3] = { 48 * KiB, 2 * MiB, 260 * MiB };
	static const int sharing[3] = { 1, 1, 2 };
	for (int i = 0; i < 3; i++) {
		memset(&levels[i], 0, sizeof levels[i]);
		snprintf(levels[i].name, sizeof levels[i].name, "L%d", i + 1);
		levels[i].cache_level = i + 1;
		levels[i].cache_size = sizes[i];
		levels[i].sharing = sharing[i];
		levels[i].capacity_per_thread = sizes[i] / (uint64_t)(threads < sharing[i] ? threads : sharing[i]);
	}
	memset(&levels[3], 0, sizeof levels[3]);
	snprintf(levels[3].name, sizeof levels[3].name, "DRAM");
	levels[3].capacity_per_thread = UINT64_MAX;
	return 4;
}

static void model_with_l3(machine_model *m, double usable)
{
	machine_model_clear(m);
	snprintf(m->source, sizeof m->source, "report.json");
	static const char *const names[] = { "L1", "L2", "L3", "DRAM" };
	static const double nominal[] = { 48 * KiB, 2 * MiB, 260 * MiB, NAN };
	for (int k = 0; k < 4; k++) {
		machine_level *l = &m->levels[m->level_count++];
		memset(l, 0, sizeof *l);
		snprintf(l->name, sizeof l->name, "%s", names[k]);
		l->cache_level = k < 3 ? k + 1 : 0;
		l->shared = k == 2;
		l->nominal_bytes = nominal[k];
		l->usable_bytes = k == 2 ? usable : nominal[k];
	}
}

Test(bw_footprints, without_a_model_the_defaults_are_unchanged)
{
	bandwidth_level levels[4];
	int n = xeon_levels(levels, 1);
	uint64_t f[4], g[4];
	cr_assert_eq(bandwidth_default_footprints(levels, n, f, 4), 4);
	cr_expect_eq(f[0], 24 * KiB);
	cr_expect_eq(f[1], 96 * KiB);
	cr_expect_eq(f[2], 4 * MiB, "twice the L2");
	cr_expect_eq(f[3], 520 * MiB, "twice the nominal L3");
	cr_expect_eq(bandwidth_levels_use_model(levels, n, 1, NULL), 0);
	cr_assert_eq(bandwidth_footprints_for(levels, n, 2, g, 4), 4);
	cr_expect_arr_eq(f, g, sizeof f, "no usable size known: the same for any thread count");
}

Test(bw_footprints, a_small_usable_l3_holds_every_threads_working_set)
{
	machine_model m;
	model_with_l3(&m, 6 * MiB);
	bandwidth_level one[4], two[4];
	int n = xeon_levels(one, 1);
	xeon_levels(two, 2);
	cr_expect_eq(bandwidth_levels_use_model(one, n, 1, &m), 1);
	cr_expect_eq(bandwidth_levels_use_model(two, n, 2, &m), 1);
	cr_expect_eq(one[2].usable_size, 6 * MiB);
	cr_expect_eq(one[2].capacity_per_thread, 6 * MiB);
	cr_expect_eq(two[2].capacity_per_thread, 3 * MiB, "two threads share the usable 6 MiB");
	uint64_t f[4];
	cr_assert_eq(bandwidth_footprints_for(one, n, 2, f, 4), 4);
	cr_expect_eq(f[0], 24 * KiB);
	cr_expect_eq(f[1], 96 * KiB);
	/* each thread's share is 3 MiB; half of it would stay in the 2 MiB L2,
	 * so the geometric mean of 2 and 3 MiB, in whole pages */
	uint64_t mean = (uint64_t)sqrt(2.0 * MiB * 3.0 * MiB);
	cr_expect_eq(f[2], mean - mean % 4096, "%llu", (unsigned long long)f[2]);
	cr_expect_gt(f[2], 2 * MiB, "past the L2");
	cr_expect_leq(2 * f[2], 6 * MiB, "both threads fit in the usable L3");
	cr_expect_eq(f[3], 520 * MiB, "memory: past the nominal size, whatever the guest gets");
	/* the level each lands in, at one and two threads */
	cr_expect_eq(bandwidth_level_of(one, n, f[2]), 2);
	cr_expect_eq(bandwidth_level_of(two, n, f[2]), 2);
	cr_expect_eq(bandwidth_level_of(two, n, 4 * MiB), 3, "the old default for two threads is memory here");
	char note[320];
	bandwidth_usable_note(one, n, f, 2, m.source, note, sizeof note);
	cr_expect(strstr(note, "L3 at its usable 6.0 MiB of the nominal 260 MiB") && strstr(note, "report.json") &&
	          strstr(note, "2 threads"), "%s", note);
}

Test(bw_footprints, a_usable_l3_large_enough_keeps_twice_the_l2)
{
	machine_model m;
	model_with_l3(&m, 45 * MiB);
	bandwidth_level one[4];
	int n = xeon_levels(one, 1);
	cr_expect_eq(bandwidth_levels_use_model(one, n, 1, &m), 1);
	uint64_t f[4];
	bandwidth_footprints_for(one, n, 2, f, 4);
	cr_expect_eq(f[2], 4 * MiB);
}

Test(bw_footprints, too_small_for_every_thread_is_sized_for_one)
{
	machine_model m;
	model_with_l3(&m, 3 * MiB);
	bandwidth_level one[4];
	int n = xeon_levels(one, 1);
	bandwidth_levels_use_model(one, n, 1, &m);
	uint64_t f[4];
	bandwidth_footprints_for(one, n, 2, f, 4);
	cr_expect_gt(f[2], 2 * MiB);
	cr_expect_lt(f[2], 3 * MiB);
	char note[320];
	bandwidth_usable_note(one, n, f, 2, m.source, note, sizeof note);
	cr_expect(strstr(note, "sized for one thread"), "%s", note);
}

Test(bw_footprints, the_nominal_size_where_the_rule_does_not_apply)
{
	machine_model m;
	bandwidth_level one[4];
	int n = xeon_levels(one, 1);
	model_with_l3(&m, 200 * MiB);   /* not far below the nominal size */
	cr_expect_eq(bandwidth_levels_use_model(one, n, 1, &m), 0);
	model_with_l3(&m, 6 * MiB);
	m.levels[2].hidden = true;   /* no plateau of its own: no usable size */
	cr_expect_eq(bandwidth_levels_use_model(one, n, 1, &m), 0);
	m.levels[2].hidden = false;
	m.levels[2].shared = false;
	cr_expect_eq(bandwidth_levels_use_model(one, n, 1, &m), 0);
	cr_expect_eq(one[2].usable_size, 0);
	cr_expect_eq(one[2].capacity_per_thread, 260 * MiB);
	char note[64];
	bandwidth_usable_note(one, n, NULL, 2, "x", note, sizeof note);
	cr_expect_str_empty(note);
}
