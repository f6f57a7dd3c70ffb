/* Restart-latency arithmetic on synthetic t(k) curves, and MLP saturation
 * detection on synthetic bandwidth curves. */
#include <criterion/criterion.h>
#include <math.h>
#include "latency/latency.h"

static size_t synthetic(double b, double r, double c, double *ns, const unsigned **work)
{
	size_t n;
	*work = chase_work_counts(&n);
	for (size_t i = 0; i < n; i++) {
		double rising = r + c * (*work)[i];
		ns[i] = rising > b ? rising : b;
	}
	return n;
}

Test(lat_restart, knee_gives_fill_and_restart_per_load)
{
	/* B2B 100 ns, restart 70 ns, 0.25 ns per add: 30 ns (120 adds) of
	 * work hide in the fill. */
	double ns[64];
	const unsigned *work;
	size_t n = synthetic(100, 70, 0.25, ns, &work);
	latency_restart r;
	plumb_status status;
	cr_assert(latency_restart_analyze(work, ns, n, 0.25, &r, &status) == 0, "%s", status.message);
	cr_assert_float_eq(r.back_to_back_ns, 100, 1e-9);
	cr_assert_float_eq(r.fill_ns, 30, 1e-9);
	cr_assert_float_eq(r.restart_ns, 70, 1e-9);
	cr_assert_eq(r.fill_work, 112);   /* the largest compiled k with k * 0.25 <= 30 */
	cr_assert(!r.fill_beyond_range);
	cr_assert_float_eq(r.fit_error, 0, 1e-12);
}

Test(lat_restart, the_work_is_subtracted_per_load_not_per_run)
{
	/* The thesis's listing returns (last_time - (k-1) * WORK_COST) /
	 * num_reads: with a per-unit WORK_COST it subtracts the work of one
	 * load from the time of num_reads loads.  With per-run times for
	 * num_reads = 1e6 loads that would give ~100 ns, not 70 ns. */
	double ns[64];
	const unsigned *work;
	size_t n = synthetic(100, 70, 0.25, ns, &work);
	const double num_reads = 1e6;
	double buggy = (100 * num_reads - 120 * 0.25) / num_reads;
	latency_restart r;
	cr_assert(latency_restart_analyze(work, ns, n, 0.25, &r, NULL) == 0);
	cr_assert_float_eq(r.restart_ns, 70, 1e-9);
	cr_assert_gt(fabs(buggy - r.restart_ns), 29);
}

Test(lat_restart, nothing_hides_on_a_decoupled_fill)
{
	/* Modern cores: fill buffers decouple the fill, the very first add
	 * shows (knee at k = 0). */
	double ns[64];
	const unsigned *work;
	size_t n = synthetic(4, 4, 0.27, ns, &work);
	latency_restart r;
	cr_assert(latency_restart_analyze(work, ns, n, 0.27, &r, NULL) == 0);
	cr_assert_float_eq(r.fill_ns, 0, 1e-9);
	cr_assert_float_eq(r.restart_ns, 4, 1e-9);
	cr_assert_eq(r.fill_work, 0);
}

Test(lat_restart, fill_longer_than_the_work_range_is_a_bound)
{
	double ns[64];
	const unsigned *work;
	size_t n = synthetic(500, 100, 0.25, ns, &work);   /* knee at k = 1600 > 512 */
	latency_restart r;
	cr_assert(latency_restart_analyze(work, ns, n, 0.25, &r, NULL) == 0);
	cr_assert(r.fill_beyond_range);
	cr_assert_float_eq(r.fill_ns, 512 * 0.25, 1e-9);
	cr_assert_float_eq(r.restart_ns, 500 - 128, 1e-9);
}

Test(lat_restart, outliers_do_not_move_the_knee)
{
	double ns[64];
	const unsigned *work;
	size_t n = synthetic(100, 70, 0.25, ns, &work);
	ns[3] *= 3;        /* flat region */
	ns[n - 4] *= 2;    /* rising region */
	latency_restart r;
	cr_assert(latency_restart_analyze(work, ns, n, 0.25, &r, NULL) == 0);
	cr_assert_float_eq(r.fill_ns, 30, 1e-9);
	cr_assert_float_eq(r.restart_ns, 70, 1e-9);
}

Test(lat_restart, bad_input)
{
	unsigned work[3] = { 0, 1, 2 };
	double ns[3] = { 1, 1, 1 };
	plumb_status s;
	cr_assert(latency_restart_analyze(work, ns, 1, 0.25, NULL, &s) == -1);
	latency_restart r;
	cr_assert(latency_restart_analyze(work, ns, 3, 0, &r, &s) == -1);
	unsigned not_from_zero[3] = { 1, 2, 3 };
	cr_assert(latency_restart_analyze(not_from_zero, ns, 3, 0.25, &r, &s) == -1);
	unsigned not_increasing[3] = { 0, 2, 2 };
	cr_assert(latency_restart_analyze(not_increasing, ns, 3, 0.25, &r, &s) == -1);
	ns[2] = -1;
	cr_assert(latency_restart_analyze(work, ns, 3, 0.25, &r, &s) == -1);
}

static void mlp_curve(latency_mlp_point *p, size_t n, double per_chain, double limit)
{
	for (size_t i = 0; i < n; i++) {
		p[i].chains = (unsigned)i + 1;
		double bw = per_chain * (double)(i + 1);
		p[i].mb_per_s = bw < limit ? bw : limit;
		p[i].ns_per_load = 64.0 / p[i].mb_per_s * 1e3;
	}
}

Test(lat_mlp, saturation_on_a_clean_curve)
{
	latency_mlp_point p[32];
	mlp_curve(p, 32, 100, 1000);
	latency_mlp_summary s;
	cr_assert(latency_mlp_analyze(p, 32, 1.0, &s, NULL) == 0);
	cr_assert_eq(s.saturation_chains, 10);
	cr_assert(latency_mlp_analyze(p, 32, 0.9, &s, NULL) == 0);
	cr_assert_eq(s.saturation_chains, 9);
	cr_assert_float_eq(s.peak_mb_per_s, 1000, 1e-9);
	cr_assert_float_eq(s.outstanding, 10, 1e-9);
	cr_assert_float_eq(s.single_ns, 640, 1e-9);
	cr_assert(s.saturated);
}

Test(lat_mlp, a_curve_still_rising_is_not_saturated)
{
	latency_mlp_point p[32];
	mlp_curve(p, 32, 100, 1e9);
	latency_mlp_summary s;
	cr_assert(latency_mlp_analyze(p, 32, 0.9, &s, NULL) == 0);
	cr_assert(!s.saturated);
	cr_assert_eq(s.saturation_chains, 29);   /* first k >= 0.9 * 3200 */
	cr_assert_float_eq(s.outstanding, 32, 1e-9);
}

Test(lat_mlp, one_disturbed_point_is_not_the_peak)
{
	latency_mlp_point p[32];
	mlp_curve(p, 32, 100, 1000);
	p[4].mb_per_s = 5000;      /* k = 5 */
	p[20].mb_per_s = 300;      /* k = 21 */
	latency_mlp_summary s;
	cr_assert(latency_mlp_analyze(p, 32, 1.0, &s, NULL) == 0);
	cr_assert_float_eq(s.peak_mb_per_s, 1000, 1e-9);
	cr_assert_eq(s.saturation_chains, 10);
	cr_assert(s.saturated);
}

Test(lat_mlp, bad_input)
{
	latency_mlp_point p[4];
	mlp_curve(p, 4, 100, 1000);
	latency_mlp_summary s;
	cr_assert(latency_mlp_analyze(p, 0, 0.9, &s, NULL) == -1);
	cr_assert(latency_mlp_analyze(p, 4, 0, &s, NULL) == -1);
	cr_assert(latency_mlp_analyze(p, 4, 1.5, &s, NULL) == -1);
	p[2].chains = 1;
	cr_assert(latency_mlp_analyze(p, 4, 0.9, &s, NULL) == -1);
	mlp_curve(p, 4, 100, 1000);
	p[1].mb_per_s = 0;
	cr_assert(latency_mlp_analyze(p, 4, 0.9, &s, NULL) == -1);
}

/* At DRAM three runs fitted fill times of 0.76, 14.9 and 4.3 ns, all
 * labelled ok: a fill smaller than the spread over repeats is 0 within
 * that spread, and only one that stands out of it is reported. */
Test(lat_restart, a_fill_inside_the_spread_is_zero_within_it)
{
	double ns[64], spread[64];
	const unsigned *work;
	const double fills[] = { 0.76, 4.3, 14.9 };
	for (size_t f = 0; f < 3; f++) {
		size_t n = synthetic(150, 150 - fills[f], 0.25, ns, &work);
		for (size_t i = 0; i < n; i++)
			spread[i] = 8.5 / 150;   /* repeats scatter by 8.5 ns at DRAM */
		latency_restart r;
		cr_assert(latency_restart_analyze(work, ns, n, 0.25, &r, NULL) == 0);
		cr_assert_float_eq(r.fill_ns, fills[f], 1e-6, "the fit finds the fabricated fill");
		latency_restart_judge(&r, spread, n);
		cr_assert_float_eq(r.fill_estimate_ns, fills[f], 1e-6);
		cr_assert_float_eq(r.fill_within_ns, 17.0, 1e-9, "twice the median spread");
		cr_assert(!r.fill_resolved, "fill %.2f ns within +-17 ns", fills[f]);
		cr_assert_float_eq(r.fill_ns, 0, 1e-12);
		cr_assert_float_eq(r.restart_ns, 150, 1e-9);
		cr_assert_eq(r.fill_work, 0);
	}
}

Test(lat_restart, a_fill_standing_out_of_the_spread_is_reported)
{
	double ns[64], spread[64];
	const unsigned *work;
	size_t n = synthetic(100, 70, 0.25, ns, &work);
	for (size_t i = 0; i < n; i++)
		spread[i] = 0.005;   /* 0.5 ns at B = 100 ns */
	spread[3] = 0.4;   /* one disturbed point does not widen the noise */
	latency_restart r;
	cr_assert(latency_restart_analyze(work, ns, n, 0.25, &r, NULL) == 0);
	latency_restart_judge(&r, spread, n);
	cr_assert(r.fill_resolved);
	cr_assert_float_eq(r.fill_within_ns, 1.0, 1e-9);
	cr_assert_float_eq(r.fill_ns, 30, 1e-9);
	cr_assert_float_eq(r.restart_ns, 70, 1e-9);
	cr_assert_eq(r.fill_work, 112);
}
