/* Restart latency (seed 001 section 3.3, idea credited to D. Lenoski).
 *
 * With k dependent work units after each load, the line fill that follows
 * a miss's critical word overlaps the work; once the work is longer than
 * the fill, every extra unit shows in the time.  So t(k) per load is flat
 * at the back-to-back latency B, then rises with slope c (one unit's
 * cost): t(k) = max(B, R + c k).  The fill time is F = B - R and the
 * restart latency R = B - F.
 *
 * The thesis finds the knee as the first k whose total time exceeds the
 * previous one by a fixed error, and its listing subtracts the work once
 * per run instead of once per load (erratum 8.5.2 in the seed notes).  Here
 * everything is per load and the knee comes from a fit over all k: for
 * each split of the k values into a flat part and a rising part, B is the
 * median of the flat part, c the (Theil-Sen) slope of the rising part, R
 * the median of t(k) - c k over it, and the split with the smallest
 * relative error wins.  Medians keep one
 * disturbed point from moving the knee. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "latency/latency.h"
#include "core/stats.h"

static double model(double b, double r, double c, double k)
{
	double rising = r + c * k;
	return rising > b ? rising : b;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The slope of the rising part, t(k) for k in work[first..n-1]: the
 * Theil-Sen estimate (median of the pairwise slopes), robust to a
 * disturbed point.  The separately calibrated unit cost is off by the
 * clock's drift under load, and over 512 units a 2% error is 3 ns: the
 * slope seen in the data is the cost that applies.  Falls back to the
 * calibrated cost with fewer than 3 points or an implausible slope. */
static double rising_slope(const unsigned *work, const double *ns, size_t first, size_t n, double calibrated,
                           double *slopes)
{
	if (n < first + 3)
		return calibrated;
	size_t m = 0;
	for (size_t i = first; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			slopes[m++] = (ns[j] - ns[i]) / (double)(work[j] - work[i]);
	qsort(slopes, m, sizeof *slopes, compare_double);
	double slope = m % 2 ? slopes[m / 2] : 0.5 * (slopes[m / 2 - 1] + slopes[m / 2]);
	return slope > 0.5 * calibrated && slope < 2 * calibrated ? slope : calibrated;
}

int latency_restart_analyze(const unsigned *work, const double *ns, size_t n, double work_unit_ns,
                            latency_restart *out, plumb_status *status)
{
	if (!work || !ns || !out || n < 2)
		return plumb_fail(status, EINVAL, "restart latency needs at least two work counts");
	if (!(work_unit_ns > 0) || !isfinite(work_unit_ns))
		return plumb_fail(status, EINVAL, "the work unit cost must be positive");
	if (work[0] != 0)
		return plumb_fail(status, EINVAL, "the work counts must start at 0 (the back-to-back chase)");
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && work[i] <= work[i - 1])
			return plumb_fail(status, EINVAL, "the work counts must increase");
		if (!(ns[i] > 0) || !isfinite(ns[i]))
			return plumb_fail(status, EINVAL, "time per load %g at k=%u is not a positive number", ns[i], work[i]);
	}
	double *residual = malloc(n * sizeof *residual);
	double *slopes = malloc((n * (n - 1) / 2 + 1) * sizeof *slopes);
	if (!residual || !slopes) {
		free(residual);
		free(slopes);
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	}
	double best_cost = INFINITY, best_b = ns[0], best_r = ns[0], best_c = work_unit_ns;
	/* split = index of the last flat point; split == n - 1 means all flat. */
	for (size_t split = 0; split < n; split++) {
		double b = stats_median(ns, split + 1);
		double c = rising_slope(work, ns, split + 1, n, work_unit_ns, slopes);
		double r;
		if (split + 1 < n) {
			for (size_t i = split + 1; i < n; i++)
				residual[i] = ns[i] - c * work[i];
			r = stats_median(residual + split + 1, n - split - 1);
		} else
			r = b - c * work[n - 1];
		/* Relative error, so the large-k points (100+ ns) do not drown
		 * the flat part (a few ns at L1). */
		double cost = 0;
		for (size_t i = 0; i < n; i++)
			cost += fabs(ns[i] - model(b, r, c, work[i])) / ns[i];
		if (cost < best_cost - 1e-12) {
			best_cost = cost;
			best_b = b;
			best_r = r;
			best_c = c;
		}
	}
	free(residual);
	free(slopes);
	double c = best_c;
	double fill = best_b - best_r;
	if (fill < 0)
		fill = 0;       /* the rising line starts above B: nothing hides */
	if (fill > best_b)
		fill = best_b;
	out->back_to_back_ns = best_b;
	out->fill_ns = fill;
	out->restart_ns = best_b - fill;
	out->work_unit_ns = work_unit_ns;
	out->slope_ns = c;
	/* No measured k added time: the fill may be longer still. */
	out->fill_beyond_range = fill >= c * work[n - 1] * (1 - 1e-9);
	out->fill_work = 0;
	for (size_t i = 0; i < n; i++)
		if (c * work[i] <= fill * (1 + 1e-9))
			out->fill_work = work[i];
	double relative = 0;
	for (size_t i = 0; i < n; i++)
		relative += fabs(ns[i] - model(best_b, best_r, best_c, work[i])) / ns[i];
	out->fit_error = relative / (double)n;
	out->fill_estimate_ns = fill;
	out->fill_within_ns = 0;
	out->fill_resolved = fill > 0;
	return 0;
}

void latency_restart_judge(latency_restart *r, const double *spread_ns, size_t n)
{
	double noise = r->fit_error * r->back_to_back_ns;
	if (n > 0) {
		double *copy = malloc(n * sizeof *copy);
		if (copy) {
			size_t m = 0;
			for (size_t i = 0; i < n; i++)
				if (spread_ns[i] >= 0 && isfinite(spread_ns[i]))
					copy[m++] = spread_ns[i];
			if (m > 0) {
				double spread = 2 * stats_median(copy, m) * r->back_to_back_ns;
				if (spread > noise)
					noise = spread;
			}
			free(copy);
		}
	}
	r->fill_estimate_ns = r->fill_estimate_ns > 0 ? r->fill_estimate_ns : r->fill_ns;
	r->fill_within_ns = noise;
	r->fill_resolved = r->fill_ns > noise;
	if (!r->fill_resolved) {
		r->fill_ns = 0;
		r->restart_ns = r->back_to_back_ns;
		r->fill_work = 0;
		r->fill_beyond_range = false;
	}
}

typedef struct adds_context {
	uintptr_t value;
	uintptr_t zero;
} adds_context;

static void run_adds(void *context, size_t units)
{
	adds_context *a = context;
	a->value = chase_run_adds(a->value, units * 1024, a->zero);
}

int latency_measure_work_unit(const timer_calibration *timer, const latency_measure_options *options,
                              latency_result *result, plumb_status *status)
{
	/* zero is read through a volatile so the compiler cannot see it is 0. */
	volatile uintptr_t opaque_zero = 0;
	adds_context a = { 1, opaque_zero };
	return latency_measure(timer, run_adds, &a, 1024, 16, options, result, status);
}

typedef struct work_context {
	void *position;
	unsigned work;
	uintptr_t zero;
} work_context;

static void run_work(void *context, size_t units)
{
	work_context *w = context;
	w->position = chase_run_work(w->position, units * 16, w->work, w->zero);
}

int latency_restart_measure(const timer_calibration *timer, const chase_chain *chain,
                            const latency_measure_options *options, const unsigned *work, size_t n,
                            double work_unit_ns, latency_restart_point *points, latency_restart *out,
                            plumb_status *status)
{
	if (n < 2)
		return plumb_fail(status, EINVAL, "restart latency needs at least two work counts");
	double *ns = malloc(n * sizeof *ns);
	unsigned *ks = malloc(n * sizeof *ks);
	if (!ns || !ks) {
		free(ns);
		free(ks);
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	}
	volatile uintptr_t opaque_zero = 0;
	size_t warm = 2 * chain->length;
	if (warm > options->warm_loads_max)
		warm = options->warm_loads_max;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!chase_work_supported(work[i])) {
			rc = plumb_fail(status, EINVAL, "no kernel for %u work units per load", work[i]);
			break;
		}
		work_context w = { chain->start, work[i], opaque_zero };
		rc = latency_measure(timer, run_work, &w, 16, (warm + 15) / 16, options, &points[i].latency, status);
		points[i].work = work[i];
		ns[i] = points[i].latency.ns_p10;
		ks[i] = work[i];
	}
	if (rc == 0)
		rc = latency_restart_analyze(ks, ns, n, work_unit_ns, out, status);
	if (rc == 0) {
		/* The relative spread over repeats of each point: median minus
		 * 10th percentile, over the median.  (Not the coefficient of
		 * variation: one preempted sample makes it ~2 at L1.) */
		for (size_t i = 0; i < n; i++) {
			const latency_result *l = &points[i].latency;
			ns[i] = l->ns > 0 ? (l->ns - l->ns_p10) / l->ns : 0;
		}
		latency_restart_judge(out, ns, n);
	}
	free(ns);
	free(ks);
	return rc;
}
