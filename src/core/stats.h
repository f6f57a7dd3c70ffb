/* Descriptive statistics of a set of samples, and a loop that repeats a
 * measurement until its 95% confidence interval is tight enough. */
#ifndef PLUMB_STATS_H
#define PLUMB_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct stats_summary {
	size_t n;
	double mean, median, stddev, min, max;
	double cv;            /* stddev / mean; 0 when mean is 0 */
	double ci95;          /* half-width of the 95% CI of the mean (Student t) */
	double ci95_relative; /* ci95 / mean */
} stats_summary;

/* Summarises n samples (n >= 1).  Does not reorder the input. */
void stats_summarize(const double *samples, size_t n, stats_summary *out);
/* Median of n samples; sorts a private copy.  NaN for n == 0. */
double stats_median(const double *samples, size_t n);
/* Two-sided 95% Student-t critical value for df degrees of freedom. */
double stats_t95(size_t degrees_of_freedom);
/* Least squares y = a + b x; returns -1 when x has no spread. */
int stats_linear_fit(const double *x, const double *y, size_t n, double *a, double *b, double *r2);

/* Repeats measure() (which returns one sample, or NaN on failure) at least
 * min_runs and at most max_runs times, stopping early once the relative 95%
 * CI half-width falls to target_relative_ci, or once time_cap_ns has passed.
 * Samples go to samples[] (capacity max_runs).  *noisy tells whether the
 * target was missed.  Returns the number of samples, or -1 on failure. */
typedef double (*stats_measure_fn)(void *context);
long stats_repeat(stats_measure_fn measure, void *context, size_t min_runs, size_t max_runs,
                  double target_relative_ci, uint64_t time_cap_ns, double *samples,
                  stats_summary *out, bool *noisy);

#endif
