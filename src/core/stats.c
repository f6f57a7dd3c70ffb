/* Descriptive statistics: plain arithmetic on samples, below the timer
 * (whose calibration takes a median) and the repeat loop (repeat.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/stats.h"

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_median(const double *samples, size_t n)
{
	if (n == 0)
		return NAN;
	double *copy = malloc(n * sizeof *copy);
	if (!copy)
		return NAN;
	memcpy(copy, samples, n * sizeof *copy);
	qsort(copy, n, sizeof *copy, compare_double);
	double m = n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
	free(copy);
	return m;
}

double stats_t95(size_t df)
{
	/* Two-sided 95% critical values of Student's t; beyond 30 degrees of
	 * freedom the normal value with a 1/df correction is within 0.1%. */
	static const double table[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
		2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
	if (df == 0)
		return INFINITY;
	if (df <= 30)
		return table[df];
	return 1.959964 + 2.3723 / (double)df;
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
