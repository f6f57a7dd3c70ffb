#include <criterion/criterion.h>
#include <math.h>
#include "core/stats.h"

Test(core_stats, summary_exact)
{
	double s[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	stats_summary m;
	stats_summarize(s, 8, &m);
	cr_assert_eq(m.n, 8);
	cr_assert_float_eq(m.mean, 5.0, 1e-12);
	cr_assert_float_eq(m.median, 4.5, 1e-12);
	cr_assert_float_eq(m.min, 2.0, 1e-12);
	cr_assert_float_eq(m.max, 9.0, 1e-12);
	cr_assert_float_eq(m.stddev, sqrt(32.0 / 7.0), 1e-12);
	cr_assert_float_eq(m.cv, sqrt(32.0 / 7.0) / 5.0, 1e-12);
	cr_assert_float_eq(m.ci95, 2.365 * sqrt(32.0 / 7.0) / sqrt(8.0), 1e-3);   /* t(0.975, 7) = 2.3646 */
}

Test(core_stats, median_odd_and_single)
{
	double s[] = { 9, 1, 5 };
	cr_assert_float_eq(stats_median(s, 3), 5.0, 1e-12);
	stats_summary m;
	stats_summarize(s, 1, &m);
	cr_assert_float_eq(m.stddev, 0.0, 1e-12);
	cr_assert(isinf(m.ci95));
	cr_assert(isnan(stats_median(s, 0)));
}

Test(core_stats, t_table)
{
	cr_assert_float_eq(stats_t95(1), 12.706, 5e-4);   /* the table rounds to 3 decimals */
	cr_assert_float_eq(stats_t95(30), 2.042, 5e-4);
	cr_assert(fabs(stats_t95(1000) - 1.962) < 0.002);
	cr_assert(stats_t95(31) < stats_t95(30));
}

Test(core_stats, linear_fit)
{
	double x[] = { 1, 10, 100, 1000 }, y[4], a, b, r2;
	for (int i = 0; i < 4; i++)
		y[i] = 3 + 1.06 * x[i];
	cr_assert_eq(stats_linear_fit(x, y, 4, &a, &b, &r2), 0);
	cr_assert_float_eq(a, 3.0, 1e-9);
	cr_assert_float_eq(b, 1.06, 1e-12);
	cr_assert_float_eq(r2, 1.0, 1e-12);
	double flat[] = { 5, 5, 5 };
	cr_assert_eq(stats_linear_fit(flat, y, 3, &a, &b, &r2), -1);
}

static double constant_sample(void *context)
{
	int *calls = context;
	(*calls)++;
	return 10.0 + (*calls % 2) * 1e-6;
}

static double alternating_sample(void *context)
{
	int *calls = context;
	(*calls)++;
	return (*calls % 2) ? 1.0 : 100.0;
}

Test(core_stats, repeat_stops_when_tight)
{
	int calls = 0;
	double samples[100];
	stats_summary m;
	bool noisy = true;
	long n = stats_repeat(constant_sample, &calls, 5, 100, 0.02, 10ull * 1000000000ull, samples, &m, &noisy);
	cr_assert_eq(n, 5);
	cr_assert_not(noisy);
}

Test(core_stats, repeat_labels_noise)
{
	int calls = 0;
	double samples[20];
	stats_summary m;
	bool noisy = false;
	long n = stats_repeat(alternating_sample, &calls, 3, 20, 0.02, 10ull * 1000000000ull, samples, &m, &noisy);
	cr_assert_eq(n, 20);
	cr_assert(noisy);
}
