/* Descriptive statistics: plain arithmetic on samples, below the timer
 * (whose calibration takes a median) and the repeat loop (repeat.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "core/stats.h"

double stats_median(const double *samples, size_t n)
{
	if (n == 0)
		return NAN;
	double *copy = malloc(n * sizeof *copy);
	if (!copy)
		return NAN;
	memcpy(copy, samples, n * sizeof *copy);
	gsl_sort(copy, 1, n);
	double m = gsl_stats_median_from_sorted_data(copy, 1, n);
	free(copy);
	return m;
}

double stats_t95(size_t df)
{
	/* Two-sided 95% critical value of Student's t (GSL's quantile). */
	if (df == 0)
		return INFINITY;
	return gsl_cdf_tdist_Pinv(0.975, (double)df);
}

void stats_summarize(const double *samples, size_t n, stats_summary *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n == 0) {
		out->mean = out->median = out->stddev = out->min = out->max = NAN;
		out->cv = out->ci95 = out->ci95_relative = NAN;
		return;
	}
	double sum = 0, min = samples[0], max = samples[0];
	for (size_t i = 0; i < n; i++) {
		sum += samples[i];
		if (samples[i] < min)
			min = samples[i];
		if (samples[i] > max)
			max = samples[i];
	}
	double mean = sum / (double)n, squares = 0;
	for (size_t i = 0; i < n; i++)
		squares += (samples[i] - mean) * (samples[i] - mean);
	out->mean = mean;
	out->min = min;
	out->max = max;
	out->median = stats_median(samples, n);
	out->stddev = n > 1 ? sqrt(squares / (double)(n - 1)) : 0;
	out->cv = mean != 0 ? out->stddev / fabs(mean) : 0;
	out->ci95 = n > 1 ? stats_t95(n - 1) * out->stddev / sqrt((double)n) : INFINITY;
	out->ci95_relative = mean != 0 ? out->ci95 / fabs(mean) : (out->ci95 == 0 ? 0 : INFINITY);
}

int stats_linear_fit(const double *x, const double *y, size_t n, double *a, double *b, double *r2)
{
	if (n < 2)
		return -1;
	double mx = 0, my = 0;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	double sxx = 0, sxy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx <= 0)
		return -1;
	*b = sxy / sxx;
	*a = my - *b * mx;
	if (r2)
		*r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
	return 0;
}
