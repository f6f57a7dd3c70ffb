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
 * median of the flat part, R the median of t(k) - c k over the rising part,
 * and the split with the smallest absolute error wins.  Medians keep one
 * disturbed point from moving the knee. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "plumb/latency.h"
#include "plumb/stats.h"

static double model(double b, double r, double c, double k)
{
	double rising = r + c * k;
	return rising > b ? rising : b;
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
	if (!residual)
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	double c = work_unit_ns;
	for (size_t i = 0; i < n; i++)
		residual[i] = ns[i] - c * work[i];
	double best_cost = INFINITY, best_b = ns[0], best_r = ns[0];
	/* split = index of the last flat point; split == n - 1 means all flat. */
	for (size_t split = 0; split < n; split++) {
		double b = stats_median(ns, split + 1);
		double r = split + 1 < n ? stats_median(residual + split + 1, n - split - 1) : b - c * work[n - 1];
		double cost = 0;
		for (size_t i = 0; i < n; i++)
			cost += fabs(ns[i] - model(b, r, c, work[i]));
		if (cost < best_cost - 1e-12) {
			best_cost = cost;
			best_b = b;
			best_r = r;
		}
	}
	free(residual);
	double fill = best_b - best_r;
	if (fill < 0)
		fill = 0;       /* the rising line starts above B: nothing hides */
	if (fill > best_b)
		fill = best_b;
	out->back_to_back_ns = best_b;
	out->fill_ns = fill;
	out->restart_ns = best_b - fill;
	out->work_unit_ns = c;
	/* No measured k added time: the fill may be longer still. */
	out->fill_beyond_range = fill >= c * work[n - 1] * (1 - 1e-9);
	out->fill_work = 0;
	for (size_t i = 0; i < n; i++)
		if (c * work[i] <= fill * (1 + 1e-9))
			out->fill_work = work[i];
	double relative = 0;
	for (size_t i = 0; i < n; i++)
		relative += fabs(ns[i] - model(best_b, best_r, c, work[i])) / ns[i];
	out->fit_error = relative / (double)n;
	return 0;
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
	free(ns);
	free(ks);
	return rc;
}
