/* The arithmetic of a halting experiment (Watson, 2004, §2.1 and §2.5, after
 * Jain, 1991): Eq. 2.1, the spin correction, Student's t, confidence
 * intervals, Welch's test and Eq. 2.3.  Pure functions, unit-tested against
 * the thesis's numbers. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "perturb/perturb.h"

double perturb_total_time(double x, double interval, double halt)
{
	if (!(interval > 0))
		return x;
	return halt * x / interval + x;
}

double perturb_slowdown(double interval, double halt)
{
	return interval > 0 ? halt / interval + 1.0 : 1.0;
}

double perturb_expected_halts(double x, double interval)
{
	return interval > 0 ? x / interval : 0.0;
}

double perturb_spin_correction(double halt_ms, double halts, double iterations_per_ms,
                               double per_iteration, double per_ms)
{
	return halt_ms * halts * (iterations_per_ms * per_iteration + per_ms);
}

double perturb_sample_size(double mean, double stddev, double z, double r_percent)
{
	if (!isfinite(mean) || !isfinite(stddev) || !(r_percent > 0) || stddev < 0)
		return NAN;
	if (mean == 0 || stddev == 0)
		return stddev == 0 ? 1 : NAN;
	double root = 100.0 * z * stddev / (r_percent * fabs(mean));
	return ceil(root * root);
}

/* Regularized incomplete beta I_x(a, b) by Lentz's continued fraction
 * (Numerical Recipes' betacf), enough for Student's t CDF. */
static double beta_continued_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap;
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 300; m++) {
		int m2 = 2 * m;
		double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		double delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return h;
}

static double incomplete_beta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_continued_fraction(a, b, x) / a;
	return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double perturb_t_two_sided_p(double t, double df)
{
	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return 0;
	return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double perturb_t_quantile(double p, double df)
{
	if (!(df > 0) || !(p > 0.5) || !(p < 1))
		return NAN;
	/* Two-sided p-value of the quantile is 2(1 - p); bisect on it. */
	double target = 2 * (1 - p), low = 0, high = 1;
	while (perturb_t_two_sided_p(high, df) > target && high < 1e12)
		high *= 2;
	for (int i = 0; i < 200; i++) {
		double mid = (low + high) / 2;
		if (perturb_t_two_sided_p(mid, df) > target)
			low = mid;
		else
			high = mid;
	}
	return (low + high) / 2;
}

void perturb_sample_stats_compute(const double *x, size_t n, perturb_sample_stats *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n == 0) {
		out->mean = out->stddev = out->ci_low = out->ci_high = NAN;
		return;
	}
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	double mean = sum / (double)n, squares = 0;
	for (size_t i = 0; i < n; i++)
		squares += (x[i] - mean) * (x[i] - mean);
	out->mean = mean;
	out->stddev = n > 1 ? sqrt(squares / (double)(n - 1)) : NAN;
	double half = n > 1 ? perturb_t_quantile(0.975, (double)(n - 1)) * out->stddev / sqrt((double)n) : INFINITY;
	out->ci_low = mean - half;
	out->ci_high = mean + half;
}

bool perturb_ci_disjoint(const perturb_sample_stats *a, const perturb_sample_stats *b)
{
	if (a->n < 2 || b->n < 2 || isnan(a->ci_low) || isnan(b->ci_low))
		return false;
	return a->ci_high < b->ci_low || b->ci_high < a->ci_low;
}

int perturb_welch(const perturb_sample_stats *a, const perturb_sample_stats *b, double *t,
                  double *df, double *p)
{
	if (a->n < 2 || b->n < 2)
		return -1;
	double va = a->stddev * a->stddev / (double)a->n, vb = b->stddev * b->stddev / (double)b->n;
	double diff = a->mean - b->mean;
	if (va + vb == 0) {
		*t = diff == 0 ? 0 : copysign(INFINITY, diff);
		*df = (double)(a->n + b->n - 2);
		*p = diff == 0 ? 1 : 0;
		return 0;
	}
	*t = diff / sqrt(va + vb);
	*df = (va + vb) * (va + vb) /
	      (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	*p = perturb_t_two_sided_p(*t, *df);
	return 0;
}
