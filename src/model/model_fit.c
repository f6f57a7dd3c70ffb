/* Least-squares fit of the closed M/D/1 model (seed 001, section 5.3.2):
 * sweep S, compute (5.23) against the measured latencies, keep the best.
 * A grid finds the basin (the objective need not be unimodal over the whole
 * range when the data are noisy); golden-section search then refines it
 * well below the grid step, and GSL's non-linear least squares
 * (Levenberg-Marquardt) finishes from there and gives the covariance, so
 * S comes with a 95% interval. */
#include <errno.h>
#include <math.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include "model/model.h"

#define FIT_GRID_STEPS 2000
#define FIT_L0_GRID_STEPS 200
#define GOLDEN 0.6180339887498949

double model_least_squares(const model_params *p, const model_point *points, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		double latency;
		if (model_latency(p, points[i].contention_mb_s, &latency, NULL) != 0)
			return INFINITY;
		double residual = points[i].latency_ns - latency;
		sum += residual * residual;
	}
	return sum;
}

/* Minimises the objective in S over (0, s_max] for a fixed L0. */
static double fit_service(model_params *p, const model_point *points, size_t n, double s_max)
{
	double step = s_max / FIT_GRID_STEPS, best_s = step, best = INFINITY;
	for (int i = 1; i <= FIT_GRID_STEPS; i++) {
		p->service_ns = step * i;
		double value = model_least_squares(p, points, n);
		if (value < best) {
			best = value;
			best_s = p->service_ns;
		}
	}
	double lo = fmax(best_s - step, step * 1e-3), hi = fmin(best_s + step, s_max);
	double x1 = hi - GOLDEN * (hi - lo), x2 = lo + GOLDEN * (hi - lo);
	p->service_ns = x1;
	double f1 = model_least_squares(p, points, n);
	p->service_ns = x2;
	double f2 = model_least_squares(p, points, n);
	for (int i = 0; i < 80 && hi - lo > 1e-9 * hi; i++) {
		if (f1 <= f2) {
			hi = x2; x2 = x1; f2 = f1;
			x1 = hi - GOLDEN * (hi - lo);
			p->service_ns = x1;
			f1 = model_least_squares(p, points, n);
		} else {
			lo = x1; x1 = x2; f1 = f2;
			x2 = lo + GOLDEN * (hi - lo);
			p->service_ns = x2;
			f2 = model_least_squares(p, points, n);
		}
	}
	double refined = f1 <= f2 ? x1 : x2, refined_value = fmin(f1, f2);
	p->service_ns = refined_value <= best ? refined : best_s;
	return fmin(refined_value, best);
}

/* The largest S for which every point has a solution: a > 0 needs
 * S < CLS / C for the largest C; L >= S and T = L0 - S >= 0 need S <= L0. */
static double service_limit(const model_point *points, size_t n, double line_bytes, double l0)
{
	double c_max = 0;
	for (size_t i = 0; i < n; i++)
		c_max = fmax(c_max, points[i].contention_mb_s);
	double limit = l0;
	if (c_max > 0)
		limit = fmin(limit, line_bytes / (c_max * 1e-3) * (1.0 - 1e-9));
	return limit;
}

static void fill_errors(model_fit *out, const model_point *points, size_t n)
{
	out->least_squares = model_least_squares(&out->params, points, n);
	out->error_per_sample = sqrt(out->least_squares) / (double)n;
	out->rms_error = sqrt(out->least_squares / (double)n);
	out->max_abs_error = 0;
	for (size_t i = 0; i < n; i++) {
		double latency;
		if (model_latency(&out->params, points[i].contention_mb_s, &latency, NULL) == 0)
			out->max_abs_error = fmax(out->max_abs_error, fabs(points[i].latency_ns - latency));
	}
	out->points = n;
}

typedef struct nlinear_data {
	const model_point *points;
	size_t n;
	model_params base;
	bool fit_l0;
} nlinear_data;

static int residuals(const gsl_vector *x, void *context, gsl_vector *f)
{
	const nlinear_data *d = context;
	model_params p = d->base;
	p.service_ns = gsl_vector_get(x, 0);
	if (d->fit_l0)
		p.unloaded_latency_ns = gsl_vector_get(x, 1);
	if (!(p.service_ns > 0) || !(p.unloaded_latency_ns >= p.service_ns))
		return GSL_EDOM;
	for (size_t i = 0; i < d->n; i++) {
		double latency;
		if (model_latency(&p, d->points[i].contention_mb_s, &latency, NULL) != 0)
			return GSL_EDOM;
		gsl_vector_set(f, i, latency - d->points[i].latency_ns);
	}
	return GSL_SUCCESS;
}

/* From the grid's best S (and L0): Levenberg-Marquardt to the minimum,
 * then S's 95% interval from the covariance, sigma^2 = SSR / (n - p), and
 * Student's t.  Keeps the grid's answer when GSL does not improve it. */
static void refine_with_interval(model_fit *out, const model_point *points, size_t n)
{
	out->service_low = out->service_high = NAN;
	size_t parameters = out->l0_fitted ? 2 : 1;
	if (n <= parameters)
		return;
	nlinear_data data = { points, n, out->params, out->l0_fitted };
	gsl_multifit_nlinear_fdf fdf = { .f = residuals, .df = NULL, .fvv = NULL, .n = n, .p = parameters, .params = &data };
	gsl_multifit_nlinear_parameters settings = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &settings, n, parameters);
	gsl_vector *x = gsl_vector_alloc(parameters);
	gsl_matrix *covariance = gsl_matrix_alloc(parameters, parameters);
	if (!w || !x || !covariance)
		goto done;
	gsl_vector_set(x, 0, out->params.service_ns);
	if (out->l0_fitted)
		gsl_vector_set(x, 1, out->params.unloaded_latency_ns);
	if (gsl_multifit_nlinear_init(x, &fdf, w) != GSL_SUCCESS)
		goto done;
	int info;
	gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 0, NULL, NULL, &info, w);
	const gsl_vector *best = gsl_multifit_nlinear_position(w);
	model_params trial = out->params;
	trial.service_ns = gsl_vector_get(best, 0);
	if (out->l0_fitted)
		trial.unloaded_latency_ns = gsl_vector_get(best, 1);
	double ssr = model_least_squares(&trial, points, n);
	if (isfinite(ssr) && ssr < out->least_squares) {
		out->params = trial;
		out->least_squares = ssr;
	}
	/* the covariance at the answer kept */
	gsl_vector_set(x, 0, out->params.service_ns);
	if (out->l0_fitted)
		gsl_vector_set(x, 1, out->params.unloaded_latency_ns);
	if (gsl_multifit_nlinear_init(x, &fdf, w) != GSL_SUCCESS ||
	    gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covariance) != GSL_SUCCESS)
		goto done;
	double dof = (double)(n - parameters), sigma2 = out->least_squares / dof;
	double se = sqrt(sigma2 * gsl_matrix_get(covariance, 0, 0)), t = gsl_cdf_tdist_Pinv(0.975, dof);
	if (isfinite(se)) {
		out->service_low = fmax(out->params.service_ns - t * se, 0);
		out->service_high = out->params.service_ns + t * se;
	}
done:
	gsl_matrix_free(covariance);
	gsl_vector_free(x);
	if (w)
		gsl_multifit_nlinear_free(w);
}

int model_fit_points(const model_point *points, size_t n, double line_bytes,
                     double unloaded_latency_ns, model_fit *out, plumb_status *status)
{
	if (n < 2)
		return plumb_fail(status, EINVAL, "model fit: need at least 2 points, got %zu", n);
	if (!(isfinite(line_bytes) && line_bytes > 0))
		return plumb_fail(status, EINVAL, "model fit: line size must be positive");
	double zero_sum = 0, min_latency = INFINITY;
	size_t zero_count = 0, loaded_count = 0;
	for (size_t i = 0; i < n; i++) {
		double c = points[i].contention_mb_s, l = points[i].latency_ns;
		if (!(isfinite(c) && c >= 0 && isfinite(l) && l > 0))
			return plumb_fail(status, EINVAL,
			                  "model fit: point %zu (%g MB/s, %g ns) is not a finite, non-negative "
			                  "bandwidth with a positive latency", i + 1, c, l);
		if (c == 0) {
			zero_sum += l;
			zero_count++;
		} else {
			loaded_count++;
		}
		min_latency = fmin(min_latency, l);
	}
	if (loaded_count == 0)
		return plumb_fail(status, EINVAL, "model fit: every point has zero bandwidth; nothing constrains S");

	*out = (model_fit){ .params.line_bytes = line_bytes };
	if (isfinite(unloaded_latency_ns) && unloaded_latency_ns > 0) {
		out->params.unloaded_latency_ns = unloaded_latency_ns;
	} else if (zero_count > 0) {
		/* (5.17): L0 is measured, the latency with no generator traffic. */
		out->params.unloaded_latency_ns = zero_sum / (double)zero_count;
	} else {
		/* No unloaded point: fit L0 too, over (0, smallest latency], since
		 * the model's L rises with contention from L0.  Two unknowns need
		 * two different bandwidths: at one, any L0 below the latency fits
		 * with some S, and the fit would pick one at random. */
		size_t distinct = 1;
		for (size_t i = 1; i < n && distinct < 2; i++)
			if (points[i].contention_mb_s != points[0].contention_mb_s)
				distinct = 2;
		if (distinct < 2)
			return plumb_fail(status, EINVAL,
			                  "model fit: every point is at %g MB/s; fitting both S and L0 needs two "
			                  "different bandwidths (or give L0, or a zero-bandwidth point)",
			                  points[0].contention_mb_s);
		out->l0_fitted = true;
		double best = INFINITY, best_l0 = min_latency;
		double step = min_latency / FIT_L0_GRID_STEPS;
		for (int i = 1; i <= FIT_L0_GRID_STEPS; i++) {
			model_params trial = out->params;
			trial.unloaded_latency_ns = step * i;
			double value = fit_service(&trial, points, n,
			                           service_limit(points, n, line_bytes, trial.unloaded_latency_ns));
			if (value < best) {
				best = value;
				best_l0 = trial.unloaded_latency_ns;
			}
		}
		/* Refine L0 on a finer grid around the best coarse value. */
		double lo = fmax(best_l0 - step, step * 1e-3), fine = 2 * step / 100;
		for (int i = 0; i <= 100; i++) {
			model_params trial = out->params;
			trial.unloaded_latency_ns = fmin(lo + fine * i, min_latency);
			double value = fit_service(&trial, points, n,
			                           service_limit(points, n, line_bytes, trial.unloaded_latency_ns));
			if (value < best) {
				best = value;
				best_l0 = trial.unloaded_latency_ns;
			}
		}
		out->params.unloaded_latency_ns = best_l0;
	}
	double limit = service_limit(points, n, line_bytes, out->params.unloaded_latency_ns);
	if (!(limit > 0))
		return plumb_fail(status, EDOM, "model fit: no service time fits these points");
	double best = fit_service(&out->params, points, n, limit);
	if (!isfinite(best))
		return plumb_fail(status, EDOM,
		                  "model fit: the model has no solution for these points (bandwidth above "
		                  "what any S <= L0 allows)");
	fill_errors(out, points, n);
	double step = limit / FIT_GRID_STEPS;
	out->at_bound = out->params.service_ns <= step ? -1 : out->params.service_ns >= limit - step ? 1 : 0;
	out->service_low = out->service_high = NAN;
	if (out->at_bound == 0) {
		/* GSL's default error handler aborts; the fit reports through
		 * return codes, so the handler is off for its span and put back
		 * (GSL keeps it in one process-wide pointer). */
		gsl_error_handler_t *handler = gsl_set_error_handler_off();
		refine_with_interval(out, points, n);
		gsl_set_error_handler(handler);
		fill_errors(out, points, n);
		/* An interval that reaches 0 cannot tell S from no queueing at all:
		 * the curve is flat within its noise, and S (with the peak line / S,
		 * which would read far beyond the memory's bandwidth) is as
		 * undetermined as at the bottom of the search.  The interval stays,
		 * as the bound on S the data do give. */
		if (isfinite(out->service_low) && out->service_low <= 0)
			out->at_bound = -1;
	}
	out->peak_bound_mb_s = out->free_service_ns = out->free_service_low = out->free_service_high = NAN;
	out->at_peak_bound = false;
	return 0;
}

int model_fit_points_bounded(const model_point *points, size_t n, double line_bytes, double unloaded_latency_ns,
                             double min_peak_mb_s, model_fit *out, plumb_status *status)
{
	if (!(min_peak_mb_s >= 0) || !isfinite(min_peak_mb_s))
		return plumb_fail(status, EINVAL, "model fit: the bandwidth bound must be a finite, non-negative MB/s");
	if (model_fit_points(points, n, line_bytes, unloaded_latency_ns, out, status) != 0)
		return -1;
	if (min_peak_mb_s == 0)
		return 0;
	out->peak_bound_mb_s = min_peak_mb_s;
	/* line / S >= the bandwidth measured: a resource that moved that much
	 * serves a line in at most this long */
	double bound = line_bytes / (min_peak_mb_s * 1e-3);
	if (out->at_bound < 0 || out->params.service_ns <= bound)
		return 0;   /* flat (no S to hold), or within the bound already */
	double free_service = out->params.service_ns;
	model_params held = out->params;
	double limit = fmin(bound, service_limit(points, n, line_bytes, held.unloaded_latency_ns));
	if (!(limit > 0) || !isfinite(fit_service(&held, points, n, limit)))
		return plumb_fail(status, EDOM, "model fit: no service time within the measured bandwidth's bound fits these points");
	out->params = held;
	fill_errors(out, points, n);
	out->free_service_ns = free_service;
	out->free_service_low = out->service_low;
	out->free_service_high = out->service_high;
	out->at_peak_bound = true;
	out->at_bound = 0;
	/* an interval from the curvature at a bound would be the free fit's
	 * question, not this one's */
	out->service_low = out->service_high = NAN;
	return 0;
}
