/* Geometry inference on synthetic latency curves: exact, deterministic
 * answers, including curves disturbed the way a shared machine disturbs
 * real ones (a spike, a burst, a gradual edge). */
#include <criterion/criterion.h>
#include <math.h>
#include "geometry/geometry.h"

/* The capacity sweep's own grid: from * 2^(i/ppo), rounded down to lines. */
static double grid(double from, int i, int ppo)
{
	double x = (double)llround(from * pow(2.0, (double)i / ppo));
	return x - fmod(x, 64);
}

static void step_curve(geometry_curve *c, size_t n, double from, int ppo, const double *capacity,
                       const double *ns, int levels, double memory)
{
	cr_assert_eq(geometry_curve_init(c, n, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		c->x[i] = grid(from, (int)i, ppo);
		c->ns[i] = memory;
		for (int l = levels - 1; l >= 0; l--)
			if (c->x[i] <= capacity[l])
				c->ns[i] = ns[l];
	}
}

static size_t last_at_most(const geometry_curve *c, double limit)
{
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->x[i] <= limit)
			k = i;
	return k;
}

static const double zen4_capacity[] = { 32768, 1048576, 8388608 };
static const double zen4_ns[] = { 1.1, 3.9, 12 };

Test(geometry_infer, plateaus_of_a_staircase)
{
	geometry_curve c;
	step_curve(&c, 57, 4096, 4, zen4_capacity, zen4_ns, 3, 100);
	geometry_tolerance tolerance = { .relative = 0.25, .absolute_ns = 0, .min_points = 2 };
	geometry_plateau p[GEOMETRY_MAX_PLATEAUS];
	cr_assert_eq(geometry_find_plateaus(&c, &tolerance, p, GEOMETRY_MAX_PLATEAUS), 4);
	cr_assert_eq(p[0].first, 0);
	cr_assert_eq(p[0].last, last_at_most(&c, 32768));
	cr_assert_eq(p[1].first, p[0].last + 1);
	cr_assert_eq(p[1].ns, 3.9);
	cr_assert_eq(p[3].ns, 100);
	cr_assert_eq(p[3].last, 56);
	cr_assert_eq(p[3].x_next, 0);
	geometry_curve_free(&c);
}

static void assert_zen4_levels(const geometry_curve *c, int expected)
{
	geometry_cache_estimate e[GEOMETRY_MAX_LEVELS];
	double memory;
	cr_assert_eq(geometry_infer_levels(c, expected, e, GEOMETRY_MAX_LEVELS, &memory), 3);
	for (int l = 0; l < 3; l++) {
		size_t k = last_at_most(c, zen4_capacity[l]);
		cr_assert_eq(e[l].capacity_low, c->x[k], "L%d low %.0f, expected %.0f", l + 1, e[l].capacity_low, c->x[k]);
		cr_assert_eq(e[l].capacity_high, c->x[k + 1], "L%d high", l + 1);
		cr_assert_float_eq(e[l].ns, zen4_ns[l], 1e-9);
	}
	cr_assert_float_eq(memory, 100, 1e-9);
}

Test(geometry_infer, levels_and_capacities_of_a_staircase)
{
	geometry_curve c;
	step_curve(&c, 57, 4096, 4, zen4_capacity, zen4_ns, 3, 100);
	assert_zen4_levels(&c, 0);
	assert_zen4_levels(&c, 3);
	geometry_curve_free(&c);
}

Test(geometry_infer, a_single_spike_changes_nothing)
{
	geometry_curve c;
	step_curve(&c, 57, 4096, 4, zen4_capacity, zen4_ns, 3, 100);
	c.ns[last_at_most(&c, 262144)] = 90;   /* inside L2 */
	c.ns[3] = 40;                          /* inside L1 */
	assert_zen4_levels(&c, 0);
	geometry_curve_free(&c);
}

Test(geometry_infer, a_burst_above_memory_is_dropped)
{
	geometry_curve c;
	step_curve(&c, 57, 4096, 4, zen4_capacity, zen4_ns, 3, 100);
	size_t k = last_at_most(&c, 8388608);
	/* Another program's burst over two points (a plateau needs three:
	 * on the 10th-percentile envelope a longer burst above memory does
	 * not happen). */
	c.ns[k + 1] = c.ns[k + 2] = 250;
	assert_zen4_levels(&c, 0);
	geometry_curve_free(&c);
}

Test(geometry_infer, a_gradual_edge_is_one_level_when_the_count_is_known)
{
	geometry_curve c;
	step_curve(&c, 57, 4096, 4, zen4_capacity, zen4_ns, 3, 100);
	/* L3 as a VM sees it: a step at 2.1x inside the level. */
	for (size_t i = 0; i < c.n; i++)
		if (c.x[i] > 2097152 && c.x[i] <= 8388608)
			c.ns[i] = 25.2;
	geometry_cache_estimate e[GEOMETRY_MAX_LEVELS];
	double memory;
	cr_assert_eq(geometry_infer_levels(&c, 0, e, GEOMETRY_MAX_LEVELS, &memory), 4, "without a count: 4 levels");
	cr_assert_eq(geometry_infer_levels(&c, 3, e, GEOMETRY_MAX_LEVELS, &memory), 3);
	cr_assert_eq(e[2].capacity_low, c.x[last_at_most(&c, 8388608)]);
	cr_assert_float_eq(memory, 100, 1e-9);
	geometry_curve_free(&c);
}

static void small_curve(geometry_curve *c, const double *x, const double *ns, size_t n)
{
	cr_assert_eq(geometry_curve_init(c, n, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		c->x[i] = x[i];
		c->ns[i] = ns[i];
	}
}

Test(geometry_infer, line_size_from_the_pair_curve)
{
	const double d[] = { 8, 16, 32, 64, 128, 256 };
	const double hit[] = { 2.5, 2.5, 2.5, 4, 4, 4 };
	const double spiky[] = { 3.4, 2.5, 2.5, 4, 4.1, 3.9 };
	const double pairs[] = { 2.5, 2.5, 2.5, 2.5, 4, 4 };
	const double flat[] = { 4, 4, 4, 4, 4, 4 };
	geometry_curve c;
	double line;
	small_curve(&c, d, hit, 6);
	cr_assert_eq(geometry_infer_line_size(&c, &line), 0);
	cr_assert_eq(line, 64);
	geometry_curve_free(&c);
	small_curve(&c, d, spiky, 6);
	cr_assert_eq(geometry_infer_line_size(&c, &line), 0);
	cr_assert_eq(line, 64);
	geometry_curve_free(&c);
	small_curve(&c, d, pairs, 6);
	cr_assert_eq(geometry_infer_line_size(&c, &line), 0);
	cr_assert_eq(line, 128, "an adjacent-line prefetcher reads as a 128-byte line");
	geometry_curve_free(&c);
	small_curve(&c, d, flat, 6);
	cr_assert_eq(geometry_infer_line_size(&c, &line), -1);
	cr_assert(isnan(line));
	geometry_curve_free(&c);
}

static void ways_curve(geometry_curve *c, int ways, size_t n)
{
	cr_assert_eq(geometry_curve_init(c, n, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		c->x[i] = (double)(i + 1);
		c->ns[i] = (int)(i + 1) <= ways ? 1.1 : 4.6;
	}
}

Test(geometry_infer, ways_from_the_conflict_curve)
{
	geometry_curve c;
	double ways;
	double threshold = sqrt(1.1 * 3.9);
	ways_curve(&c, 8, 24);
	cr_assert_eq(geometry_infer_ways(&c, threshold, &ways), 0);
	cr_assert_eq(ways, 8);
	c.ns[8] = 8.4;    /* the first count past the ways, disturbed */
	c.ns[3] = 9.0;    /* a spike inside */
	cr_assert_eq(geometry_infer_ways(&c, threshold, &ways), 0);
	cr_assert_eq(ways, 8);
	geometry_curve_free(&c);
	ways_curve(&c, 12, 24);
	cr_assert_eq(geometry_infer_ways(&c, threshold, &ways), 0);
	cr_assert_eq(ways, 12);
	geometry_curve_free(&c);
	ways_curve(&c, 100, 24);
	cr_assert_eq(geometry_infer_ways(&c, threshold, &ways), -1, "never crosses");
	cr_assert_eq(ways, 24, "the lower bound");
	geometry_curve_free(&c);
	ways_curve(&c, 0, 24);
	cr_assert_eq(geometry_infer_ways(&c, threshold, &ways), -1, "starts above");
	cr_assert(isnan(ways));
	geometry_curve_free(&c);
}

/* The TLB sweep's grid: 16 * 2^(i/8), strictly increasing. */
static void tlb_curves(geometry_curve *pages, geometry_curve *control, size_t n, double l1, double l2)
{
	cr_assert_eq(geometry_curve_init(pages, n, NULL), 0);
	cr_assert_eq(geometry_curve_init(control, n, NULL), 0);
	size_t previous = 0;
	for (size_t i = 0; i < n; i++) {
		size_t count = (size_t)llround(16 * pow(2.0, (double)i / 8));
		if (count <= previous)
			count = previous + 1;
		previous = count;
		pages->x[i] = control->x[i] = (double)count;
		control->ns[i] = count <= 512 ? 1.1 : 3.8;
		pages->ns[i] = control->ns[i] + (count <= l1 ? 0 : count <= l2 ? 1.9 : 20);
	}
}

Test(geometry_infer, tlb_levels_from_the_page_curve)
{
	geometry_curve pages, control;
	tlb_curves(&pages, &control, 73, 72, 3072);
	double entries[2], upper[2], penalty[2];
	cr_assert_eq(geometry_infer_tlb(&pages, &control, entries, upper, penalty, 2), 2);
	cr_assert_eq(entries[0], pages.x[last_at_most(&pages, 72)]);
	cr_assert_eq(upper[0], pages.x[last_at_most(&pages, 72) + 1]);
	cr_assert_leq(entries[0], 72);
	cr_assert_gt(upper[0], 72);
	cr_assert_leq(entries[1], 3072);
	cr_assert_gt(upper[1], 3072);
	cr_assert_eq(penalty[0], 1.9);
	cr_assert_eq(penalty[1], 20);
	/* Only one level inside the sweep. */
	geometry_curve_free(&pages);
	geometry_curve_free(&control);
	tlb_curves(&pages, &control, 73, 64, 1e9);
	cr_assert_eq(geometry_infer_tlb(&pages, &control, entries, upper, penalty, 2), 1);
	cr_assert_eq(entries[0], 64);
	geometry_curve_free(&pages);
	geometry_curve_free(&control);
}

Test(geometry_infer, page_size_from_the_stride_curve)
{
	const double s[] = { 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
	double step[11], ramp[11], huge[11];
	for (int i = 0; i < 11; i++) {
		step[i] = s[i] < 4096 ? 1.08 : 2.98;
		ramp[i] = 4 + 10 * fmin(1, s[i] / 4096);
		huge[i] = s[i] < 16384 ? 1.08 : 2.98;
	}
	geometry_curve c;
	double page;
	small_curve(&c, s, step, 11);
	cr_assert_eq(geometry_infer_page_size(&c, &page), 0);
	cr_assert_eq(page, 4096);
	geometry_curve_free(&c);
	small_curve(&c, s, ramp, 11);
	cr_assert_eq(geometry_infer_page_size(&c, &page), 0);
	cr_assert_eq(page, 4096);
	geometry_curve_free(&c);
	small_curve(&c, s, huge, 11);
	cr_assert_eq(geometry_infer_page_size(&c, &page), 0);
	cr_assert_eq(page, 16384);
	geometry_curve_free(&c);
	double flat[11];
	for (int i = 0; i < 11; i++)
		flat[i] = 3;
	small_curve(&c, s, flat, 11);
	cr_assert_eq(geometry_infer_page_size(&c, &page), -1);
	geometry_curve_free(&c);
}

Test(geometry_infer, judging_against_the_claim)
{
	cr_assert_eq(geometry_judge(32768, 38912, true, 32768), GEOMETRY_AGREE);
	cr_assert_eq(geometry_judge(2097152, 2493888, true, 33554432), GEOMETRY_DISAGREE);
	cr_assert_eq(geometry_judge(NAN, NAN, true, 8), GEOMETRY_UNRESOLVED);
	cr_assert_eq(geometry_judge(64, 64, false, 0), GEOMETRY_NO_REFERENCE);
	cr_assert_str_eq(geometry_verdict_name(GEOMETRY_DISAGREE), "DISAGREE");
}

/* AMD's TLB leaves decoded from raw register values, field by field as the
 * APM lays them out.  The first pair is what this project's Zen 5 KVM guest
 * returns: Fn8000_0005 EBX = 0xff60ff40 (L1 DTLB 96 entries, fully
 * associative: Zen 5's L1 DTLB) and Fn8000_0006 EBX = 0x60804040 (L2 DTLB
 * field 0x080 = 128 entries, code 6 = 8 ways): the "claimed 128" was the
 * right field, holding what the hypervisor reports. */
Test(geometry_infer, amd_tlb_leaves_decode_per_the_apm)
{
	geometry_tlb_reference r;
	geometry_tlb_reference_decode_amd(0xff60ff40u, 0x60804040u, true, &r);
	cr_assert_eq(r.levels, 2);
	cr_assert_eq(r.entries[0], 96);
	cr_assert_eq(r.ways[0], -1);
	cr_assert_eq(r.entries[1], 128);
	cr_assert_eq(r.ways[1], 8);
	cr_assert_str_eq(r.source, "cpuid 0x80000005/6 (hypervisor)");
	/* A 12-bit L2 count (3072 = 0xc00) with code 0xA (32 ways), and an
	 * 8-way L1 of 72; the ITLB fields (low halves) must not leak in. */
	geometry_tlb_reference_decode_amd(0x0848ffffu, 0xac00ffffu, false, &r);
	cr_assert_eq(r.levels, 2);
	cr_assert_eq(r.entries[0], 72);
	cr_assert_eq(r.ways[0], 8);
	cr_assert_eq(r.entries[1], 3072);
	cr_assert_eq(r.ways[1], 32);
	cr_assert_str_eq(r.source, "cpuid 0x80000005/6");
	/* No L2 DTLB reported: one level. */
	geometry_tlb_reference_decode_amd(0xff40ff40u, 0x0000ffffu, false, &r);
	cr_assert_eq(r.levels, 1);
	cr_assert_eq(r.entries[0], 64);
}
