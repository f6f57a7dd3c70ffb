/* The one detector for capacities and level latencies with repeated
 * passes (latency_levels_of_passes, latency_run_analyze) on synthetic
 * curves where the right answer is known: quiet passes, noisy passes, and
 * passes during which another program evicted the shared L3. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "latency/latency_run.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define PASSES 5

typedef struct passes {
	uint64_t bytes[128];
	double ns[PASSES * 128];   /* pass p at ns[p * n + i] */
	size_t n;
} passes;

/* A Zen 5-like staircase, 4 KiB .. 128 MiB at 4 points per octave: L1
 * 0.9 ns to 48 KiB, L2 3.2 ns to 1 MiB, L3 10 ns to 32 MiB, memory 145 ns. */
static double truth(uint64_t b)
{
	return b <= 48 * KiB ? 0.9 : b <= 1 * MiB ? 3.2 : b <= 32 * MiB ? 10.0 : 145.0;
}

static size_t index_of(const passes *c, uint64_t bytes)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->bytes[i] == bytes)
			return i;
	cr_assert_fail("size %llu not in the sweep", (unsigned long long)bytes);
	return 0;
}

/* Pass 0 measures every point; the later ones the points within three
 * steps of each true end (as the measuring side does), NAN elsewhere. */
static void quiet(passes *c)
{
	c->n = latency_sweep_sizes(4 * KiB, 128 * MiB, 4, 64, c->bytes, 128);
	cr_assert_eq(c->n, 61);
	size_t ends[3] = { index_of(c, 46336), index_of(c, 1 * MiB), index_of(c, 32 * MiB) };
	for (size_t p = 0; p < PASSES; p++)
		for (size_t i = 0; i < c->n; i++) {
			bool near = p == 0;
			for (int k = 0; k < 3; k++)
				near |= i + 3 >= ends[k] && i <= ends[k] + 3;
			c->ns[p * c->n + i] = near ? truth(c->bytes[i]) : NAN;
		}
}

static size_t detect(const passes *c, size_t count, latency_level *levels, latency_boundary_spread *spreads)
{
	latency_plateau_options o;
	latency_plateau_defaults(&o);
	o.expected_levels = 4;
	size_t found = 0;
	plumb_status status;
	cr_assert_eq(latency_levels_of_passes(c->bytes, c->ns, count, c->n, 4, &o, levels, spreads, LATENCY_MAX_LEVELS,
	                                      &found, &status), 0, "%s", status.message);
	return found;
}

Test(lat_repeats, quiet_passes_agree_exactly)
{
	passes c;
	quiet(&c);
	latency_level l[LATENCY_MAX_LEVELS];
	latency_boundary_spread s[LATENCY_MAX_LEVELS];
	cr_assert_eq(detect(&c, PASSES, l, s), 4);
	uint64_t ends[3] = { 46336, 1 * MiB, 32 * MiB };
	for (int k = 0; k < 3; k++) {
		cr_assert_eq(c.bytes[l[k].end_index], ends[k], "level %d", k);
		cr_assert_eq(s[k].low_bytes, ends[k]);
		cr_assert_eq(s[k].high_bytes, ends[k]);
		cr_assert_float_eq(s[k].spread_steps, 0, 1e-12);
		cr_assert_eq(s[k].passes, PASSES);
		cr_assert(s[k].stable);
	}
	cr_assert_float_eq(l[3].ns, 145, 1e-9);
	cr_assert_eq(s[3].passes, 0);
	/* One pass only: the spread is that pass's end alone. */
	cr_assert_eq(detect(&c, 1, l, s), 4);
	cr_assert_eq(s[2].passes, 1);
	cr_assert(s[2].stable);
}

Test(lat_repeats, noisy_passes_stay_within_two_steps_and_are_stable)
{
	passes c;
	quiet(&c);
	/* +-6% deterministic noise, different in every pass. */
	unsigned x = 4242;
	for (size_t i = 0; i < PASSES * c.n; i++) {
		x = x * 1103515245u + 12345u;
		if (isfinite(c.ns[i]))
			c.ns[i] *= 1.0 + 0.06 * ((double)(x >> 16 & 0x7fff) / 16383.5 - 1.0);
	}
	latency_level l[LATENCY_MAX_LEVELS];
	latency_boundary_spread s[LATENCY_MAX_LEVELS];
	cr_assert_eq(detect(&c, PASSES, l, s), 4);
	uint64_t ends[3] = { 48 * KiB, 1 * MiB, 32 * MiB };
	for (int k = 0; k < 3; k++) {
		cr_assert(latency_boundary_agrees(c.bytes[l[k].end_index], ends[k], 4, 1), "level %d ends at %llu", k,
		          (unsigned long long)c.bytes[l[k].end_index]);
		cr_assert_leq(s[k].spread_steps, LATENCY_STABLE_STEPS + 0.01);
		cr_assert(s[k].stable, "level %d: %.1f steps", k, s[k].spread_steps);
		cr_assert_leq(s[k].low_bytes, c.bytes[l[k].end_index]);
		cr_assert_geq(s[k].high_bytes, c.bytes[l[k].end_index]);
	}
}

Test(lat_repeats, a_pass_during_eviction_makes_the_l3_unstable_not_smaller)
{
	/* Pass 2 ran while another tenant evicted the shared L3: its points
	 * from 19 MiB up read memory latency.  The envelope keeps the end
	 * at 32 MiB; pass 2's own end is 16 MiB, four steps below: unstable. */
	passes c;
	quiet(&c);
	for (size_t i = 0; i < c.n; i++)
		if (c.bytes[i] > 16 * MiB && isfinite(c.ns[2 * c.n + i]))
			c.ns[2 * c.n + i] = 145;
	latency_level l[LATENCY_MAX_LEVELS];
	latency_boundary_spread s[LATENCY_MAX_LEVELS];
	cr_assert_eq(detect(&c, PASSES, l, s), 4);
	cr_assert_eq(c.bytes[l[2].end_index], 32 * MiB);
	cr_assert_eq(s[2].low_bytes, 16 * MiB);
	cr_assert_eq(s[2].high_bytes, 32 * MiB);
	cr_assert_float_eq(s[2].spread_steps, 4, 1e-9);
	cr_assert(!s[2].stable);
	cr_assert(s[0].stable && s[1].stable, "L1 and L2 are private: the eviction does not reach them");
	cr_assert_float_eq(l[2].ns, 10, 1e-9);
}

Test(lat_repeats, an_evicted_first_pass_is_corrected_by_the_later_ones)
{
	/* The whole first pass ran during the eviction (the L3 "ended" at
	 * 4.8 MiB); the later passes, quiet, measured 4 .. 45 MiB. */
	passes c;
	quiet(&c);
	for (size_t i = 0; i < c.n; i++) {
		if (c.bytes[i] > 4800 * KiB && c.bytes[i] <= 32 * MiB)
			c.ns[i] = 145;
		for (size_t p = 1; p < PASSES; p++)
			if (c.bytes[i] >= 4 * MiB && c.bytes[i] <= 45 * MiB)
				c.ns[p * c.n + i] = truth(c.bytes[i]);
	}
	latency_level l[LATENCY_MAX_LEVELS];
	latency_boundary_spread s[LATENCY_MAX_LEVELS];
	cr_assert_eq(detect(&c, 1, l, s), 4);
	cr_assert_lt(c.bytes[l[2].end_index], 5 * MiB, "the first pass alone sees the eviction");
	cr_assert_eq(detect(&c, PASSES, l, s), 4);
	cr_assert_eq(c.bytes[l[2].end_index], 32 * MiB);
	cr_assert_lt(s[2].low_bytes, 5 * MiB);
	cr_assert_eq(s[2].high_bytes, 32 * MiB);
	cr_assert(!s[2].stable);
}

Test(lat_repeats, bad_input_is_refused)
{
	passes c;
	quiet(&c);
	latency_level l[LATENCY_MAX_LEVELS];
	latency_boundary_spread s[LATENCY_MAX_LEVELS];
	latency_plateau_options o;
	latency_plateau_defaults(&o);
	size_t found;
	plumb_status status;
	cr_assert_eq(latency_levels_of_passes(c.bytes, c.ns, 0, c.n, 4, &o, l, s, LATENCY_MAX_LEVELS, &found, &status), -1);
	cr_assert_eq(latency_levels_of_passes(c.bytes, c.ns, 1, c.n, 0, &o, l, s, LATENCY_MAX_LEVELS, &found, &status), -1);
	c.ns[7] = NAN;   /* the first pass must hold every point */
	cr_assert_eq(latency_levels_of_passes(c.bytes, c.ns, 1, c.n, 4, &o, l, s, LATENCY_MAX_LEVELS, &found, &status), -1);
	cr_assert(strstr(status.message, "point 7"), "%s", status.message);
}

/* latency_run_analyze on a synthetic measurement: the labels. */
static const char *l3_verdict(passes *c, uint64_t sysfs_l3, latency_run_result *r)
{
	latency_run_options o;
	latency_run_defaults(&o);
	memset(r, 0, sizeof *r);
	r->point_count = c->n;
	r->sizes = c->bytes;
	r->pass_ns = c->ns;
	r->passes = PASSES;
	r->points = calloc(c->n, sizeof *r->points);
	for (size_t i = 0; i < c->n; i++) {
		double best = c->ns[i];
		for (size_t p = 1; p < PASSES; p++)
			if (c->ns[p * c->n + i] < best)
				best = c->ns[p * c->n + i];
		r->points[i].bytes = c->bytes[i];
		r->points[i].latency.ns = r->points[i].latency.ns_p10 = best;
	}
	uint64_t sysfs[3] = { 48 * KiB, 1 * MiB, sysfs_l3 };
	memcpy(r->sysfs_sizes, sysfs, sizeof sysfs);
	r->sysfs_levels = 3;
	plumb_status status;
	cr_assert_eq(latency_run_analyze(&o, r, &status), 0, "%s", status.message);
	free(r->points);
	cr_assert_eq(r->level_count, 4);
	cr_assert_str_eq(r->levels[3].name, "memory");
	cr_assert_str_eq(r->levels[3].verdict, "-");
	return r->levels[2].verdict;
}

Test(lat_repeats, labels_agree_disagree_and_unstable)
{
	passes c;
	latency_run_result r;
	quiet(&c);
	cr_assert_str_eq(l3_verdict(&c, 32 * MiB, &r), "agrees");
	cr_assert_str_eq(r.levels[0].verdict, "agrees");
	cr_assert_str_eq(r.levels[1].verdict, "agrees");
	/* Stable passes that all end at 32 MiB against a 64 MiB claim. */
	cr_assert_str_eq(l3_verdict(&c, 64 * MiB, &r), "disagrees");
	/* One pass during an eviction: unstable, whatever sysfs says. */
	for (size_t i = 0; i < c.n; i++)
		if (c.bytes[i] > 16 * MiB && isfinite(c.ns[2 * c.n + i]))
			c.ns[2 * c.n + i] = 145;
	cr_assert_str_eq(l3_verdict(&c, 32 * MiB, &r), "unstable");
	cr_assert_str_eq(l3_verdict(&c, 64 * MiB, &r), "unstable");
	cr_assert_eq(r.levels[2].end_bytes, 32 * MiB, "the end is the quiet passes'");
	cr_assert_eq(r.levels[2].spread.low_bytes, 16 * MiB);
	cr_assert_str_eq(r.levels[1].verdict, "agrees");
}

/* A saved report is outside input: a meta value that is not a number, or
 * one too large for its type, falls back to a default instead of being cast
 * (a NaN cast to int was undefined behaviour; found by fuzz_lat_saved). */
Test(lat_repeats, a_saved_report_with_nonsense_meta_reads_safely)
{
	output_report *report = output_report_new("lat");
	output_meta_text(report, "cpu", "x");
	output_meta_real(report, "line_bytes", 1e300);
	output_meta_integer(report, "points_per_octave", 4);
	output_meta_real(report, "time_cap_ms", 1e300);
	output_meta_text(report, "sysfs_data_caches", "49152,1048576");
	output_table *t = output_table_add(report, "sweep", "sweep");
	output_column(t, "bytes", "bytes", 0);
	output_column(t, "p10", "ns", 2);
	output_column(t, "samples", NULL, 0);
	uint64_t sizes[40];
	size_t n = latency_sweep_sizes(4 * KiB, 4 * MiB, 4, 64, sizes, 40);
	for (size_t i = 0; i < n; i++) {
		output_row(t);
		output_cell_integer(t, (int64_t)sizes[i]);
		output_cell_real(t, sizes[i] <= 48 * KiB ? 0.9 : sizes[i] <= 1 * MiB ? 3.2 : 10);
		output_cell_real(t, 1e300);
	}
	output_table *p = output_table_add(report, "passes", "passes");
	output_column(p, "pass", NULL, 0);
	output_column(p, "bytes", "bytes", 0);
	output_column(p, "p10", "ns", 2);
	output_row(p);
	output_cell_real(p, 1e300);   /* no such pass: ignored */
	output_cell_integer(p, (int64_t)sizes[3]);
	output_cell_real(p, 0.5);
	latency_run_options o;
	latency_run_result r;
	plumb_status status;
	cr_assert_eq(latency_run_from_report(report, &o, &r, &status), 0, "%s", status.message);
	cr_assert_eq(r.cpu, -1);
	cr_assert_eq(r.line_bytes, 0);
	cr_assert_eq(r.passes, 1);
	cr_assert_eq(r.sysfs_levels, 2);
	cr_assert_eq(r.level_count, 3);
	cr_assert_str_eq(r.levels[0].name, "L1");
	cr_assert_str_eq(r.levels[2].name, "memory");
	latency_run_free(&r);
	output_report_free(report);
}
