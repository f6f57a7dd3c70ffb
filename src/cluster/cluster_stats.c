/* Robust statistics for comparing nodes: a slow node must not move the
 * yardstick it is measured with, so the centre is the median and the
 * scale the median absolute deviation (Iglewicz and Hoaglin, 1993). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/cluster.h"

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The finite values, sorted, in a new array (NULL with *m = 0 if none). */
static double *finite_sorted(const double *values, size_t n, size_t *m)
{
	*m = 0;
	double *v = n ? malloc(n * sizeof *v) : NULL;
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (isfinite(values[i]))
			v[(*m)++] = values[i];
	qsort(v, *m, sizeof *v, compare_double);
	return v;
}

static double sorted_median(const double *v, size_t m)
{
	if (!m)
		return NAN;
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

double cluster_median(const double *values, size_t n)
{
	size_t m;
	double *v = finite_sorted(values, n, &m);
	double median = sorted_median(v, m);
	free(v);
	return median;
}

double cluster_mad(const double *values, size_t n)
{
	size_t m;
	double *v = finite_sorted(values, n, &m);
	double median = sorted_median(v, m);
	for (size_t i = 0; i < m; i++)
		v[i] = fabs(v[i] - median);
	if (m)
		qsort(v, m, sizeof *v, compare_double);
	double mad = sorted_median(v, m);
	free(v);
	return mad;
}

size_t cluster_robust_z(const double *values, size_t n, double *z)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		z[i] = NAN;
		m += isfinite(values[i]) != 0;
	}
	if (m < 3)
		return m;
	double median = cluster_median(values, n), mad = cluster_mad(values, n);
	double scale;
	if (mad > 0) {
		scale = mad / 0.6745;
	} else {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			if (isfinite(values[i]))
				sum += fabs(values[i] - median);
		scale = 1.253314 * sum / (double)m;
	}
	for (size_t i = 0; i < n; i++)
		if (isfinite(values[i]))
			z[i] = scale > 0 ? (values[i] - median) / scale : 0;
	return m;
}
