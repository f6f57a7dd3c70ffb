/* Seed 001's closed M/D/1 queueing model of latency under contention
 * (Hristea 1997, section 5.3 and appendix B).
 *
 * A measuring processor M chases dependent misses with uncontended latency
 * L0; noise generators add C MB/s of line traffic at a resource with a
 * deterministic service time S.  Equation (5.18),
 *
 *     L = L0 + (S^2/2) (C/CLS) / (1 - S (C/CLS + 1/L)),
 *
 * is a quadratic in L (5.19-5.22); the larger root is the one with L >= S.
 * Units: ns for times, MB/s (10^6 bytes per second) for bandwidth, bytes for
 * the line size.  Equation (5.16) is garbled in the thesis and is not used. */
#ifndef PLUMB_MODEL_H
#define PLUMB_MODEL_H

#include <stddef.h>
#include <stdbool.h>
#include "core/status.h"

typedef struct model_params {
	double unloaded_latency_ns;  /* L0: latency with no contention */
	double service_ns;           /* S: service time of the contended resource */
	double line_bytes;           /* CLS: bytes moved per request */
} model_params;

/* The quadratic's coefficients a L^2 + b L + c = 0 at contention C (MB/s). */
typedef struct model_quadratic { double a, b, c; } model_quadratic;
void model_coefficients(const model_params *p, double contention_mb_s, model_quadratic *out);

/* Latency at contention C, the larger root of (5.19).  Fails (EDOM) when the
 * contention alone saturates the resource (S C / CLS >= 1), when the
 * discriminant is negative, or when parameters are not positive and finite. */
int model_latency(const model_params *p, double contention_mb_s, double *latency_ns,
                  plumb_status *status);
/* Utilization (5.14): U = S (C/CLS + 1/L). */
double model_utilization(const model_params *p, double contention_mb_s, double latency_ns);
/* Peak sustained bandwidth (5.13) in MB/s: CLS / S. */
double model_peak_bandwidth(const model_params *p);
/* Contention (MB/s) at which the resource saturates (a = 0): CLS / S. */
double model_saturation_contention(const model_params *p);

/* Latency when P processors all chase dependent misses, as M does: the
 * thesis treats noise generators as extra masters that see the same L, so
 * the contention from the other P-1 is (P-1) CLS / L.  Substituting into
 * (5.18) gives (L - L0)(L - P S) = (P-1) S^2 / 2; the larger root is taken.
 * P = 1 gives L0. */
int model_latency_processors(const model_params *p, unsigned processors, double *latency_ns,
                             plumb_status *status);

/* A measured point: generator bandwidth and the latency M saw meanwhile. */
typedef struct model_point { double contention_mb_s, latency_ns; } model_point;

typedef struct model_fit {
	model_params params;        /* fitted S; L0 given or fitted */
	bool l0_fitted;             /* L0 was fitted (no zero-contention point, none given) */
	double least_squares;       /* (5.23): sum of squared residuals, ns^2 */
	double error_per_sample;    /* (5.24): sqrt(least_squares) / n, the thesis's figure */
	double rms_error;           /* sqrt(least_squares / n) */
	double max_abs_error;
	size_t points;
	/* -1: S ended at the bottom of its range, or its 95% interval reaches
	 * 0 (latency does not rise with bandwidth beyond its noise in these
	 * data, so S is not determined); +1: at the top
	 * (S = L0 or the largest bandwidth's saturation limit); 0: inside. */
	int at_bound;
	/* S's 95% interval from the non-linear least-squares fit's covariance
	 * (GSL, Levenberg-Marquardt) and Student's t at n - parameters degrees
	 * of freedom; NaN when S ended at the bottom of its range or has no
	 * degree of freedom left. */
	double service_low, service_high;
	/* A bandwidth the resource is known to sustain (model_fit_points_bounded;
	 * NaN: none): S is at most line / that, the peak at least it.  When the
	 * loaded curve alone put S beyond, at_peak_bound is set, S is the bound's
	 * best fit and free_service_ns what the curve alone gave. */
	double peak_bound_mb_s, free_service_ns, free_service_low, free_service_high;
	bool at_peak_bound;
} model_fit;

/* Least-squares fit of S (and of L0 when unloaded_latency_ns <= 0 and no
 * point has zero contention; with a zero point L0 is that point's latency).
 * Grid search over the valid range of S, then golden-section refinement.
 * Needs at least two points and one with positive contention. */
int model_fit_points(const model_point *points, size_t n, double line_bytes,
                     double unloaded_latency_ns, model_fit *out, plumb_status *status);
/* The same with the peak held to at least min_peak_mb_s (> 0; 0: no bound),
 * a bandwidth measured elsewhere (plumb report passes its DRAM bandwidth):
 * S in (0, line / min_peak].  A flat fit stays flat; an S within the bound
 * is model_fit_points's. */
int model_fit_points_bounded(const model_point *points, size_t n, double line_bytes, double unloaded_latency_ns,
                             double min_peak_mb_s, model_fit *out, plumb_status *status);
/* (5.23) for given parameters; +inf if a point has no solution. */
double model_least_squares(const model_params *p, const model_point *points, size_t n);

/* Measurements read from a file: plumb loaded --json output, or a CSV of
 * (bandwidth, latency) pairs.  The caller frees points. */
typedef struct model_input {
	model_point *points;
	size_t count;
	double line_bytes;          /* from the loaded JSON's metadata; 0 if unknown */
	char source[32];            /* "plumb-loaded-json" or "csv" */
} model_input;

/* Reads path ("-" = stdin).  Errors name the file and line. */
int model_input_read(const char *path, model_input *out, plumb_status *status);
/* Parses text in memory (length bytes, need not be NUL-terminated). */
int model_input_parse(const char *text, size_t length, const char *name, model_input *out,
                      plumb_status *status);
void model_input_free(model_input *in);

/* The whole `plumb model` report (tables fit, points, predict_contention,
 * predict_processors; docs/output-schema.md). */
#include "core/output.h"

typedef struct model_report_options {
	const model_input *input;      /* measurements, or NULL to evaluate given S and L0 */
	const char *source;            /* the input's name, for metadata and errors */
	double service_ns;             /* > 0: evaluate this S instead of fitting */
	double unloaded_latency_ns;    /* > 0: given L0 */
	double line_bytes;             /* > 0: given; else the input's, else 64 */
	double min_peak_mb_s;          /* > 0: a bandwidth the memory sustains, bounding the fit's S */
	const double *at;              /* extra contentions to predict (MB/s) */
	size_t at_count;
	unsigned processors;           /* predict for 1..processors (0: 16) */
} model_report_options;

int model_report(const model_report_options *options, output_report *report, plumb_status *status);

#endif
