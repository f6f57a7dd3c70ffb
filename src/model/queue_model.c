/* The closed M/D/1 model of seed 001 (equations 5.12-5.22, appendix B).
 * Pure arithmetic: no clocks, no threads, testable anywhere. */
#include <errno.h>
#include <math.h>
#include "model/model.h"

/* MB/s (10^6 B/s) to lines per ns: C * 1e6 B/s / 1e9 ns/s / CLS. */
static double lines_per_ns(const model_params *p, double contention_mb_s)
{
	return contention_mb_s * 1e-3 / p->line_bytes;
}

static int params_valid(const model_params *p, plumb_status *status)
{
	if (!(isfinite(p->unloaded_latency_ns) && p->unloaded_latency_ns > 0))
		return plumb_fail(status, EINVAL, "model: unloaded latency L0 must be positive and finite");
	if (!(isfinite(p->service_ns) && p->service_ns > 0))
		return plumb_fail(status, EINVAL, "model: service time S must be positive and finite");
	if (!(isfinite(p->line_bytes) && p->line_bytes > 0))
		return plumb_fail(status, EINVAL, "model: line size must be positive and finite");
	return 0;
}

void model_coefficients(const model_params *p, double contention_mb_s, model_quadratic *out)
{
	/* Appendix B: A = S C / CLS (B.2), a = 1 - A (B.6),
	 * b = -S - L0 (1 - A) - S A / 2 (B.7), c = L0 S (B.8).  (5.21) is the same b
	 * written as L0 (A - 1) - S^2/2 C/CLS - S. */
	double s = p->service_ns, l0 = p->unloaded_latency_ns;
	double a_term = s * lines_per_ns(p, contention_mb_s);
	out->a = 1.0 - a_term;
	out->b = -s - l0 * (1.0 - a_term) - s * a_term / 2.0;
	out->c = l0 * s;
}

int model_latency(const model_params *p, double contention_mb_s, double *latency_ns,
                  plumb_status *status)
{
	if (params_valid(p, status) != 0)
		return -1;
	if (!(isfinite(contention_mb_s) && contention_mb_s >= 0))
		return plumb_fail(status, EINVAL, "model: contention must be finite and not negative");
	model_quadratic q;
	model_coefficients(p, contention_mb_s, &q);
	if (q.a <= 0)
		return plumb_fail(status, EDOM,
		                  "model: %.6g MB/s saturates a resource with S = %.6g ns (peak %.6g MB/s)",
		                  contention_mb_s, p->service_ns, model_peak_bandwidth(p));
	double discriminant = q.b * q.b - 4.0 * q.a * q.c;
	if (discriminant < 0)
		return plumb_fail(status, EDOM, "model: no real latency at %.6g MB/s (negative discriminant)",
		                  contention_mb_s);
	/* The larger root, so that L >= S (the thesis's choice). */
	*latency_ns = (-q.b + sqrt(discriminant)) / (2.0 * q.a);
	return 0;
}

double model_utilization(const model_params *p, double contention_mb_s, double latency_ns)
{
	return p->service_ns * (lines_per_ns(p, contention_mb_s) + 1.0 / latency_ns);
}

double model_peak_bandwidth(const model_params *p)
{
	/* bytes per ns = GB/s; times 1000 for MB/s. */
	return p->line_bytes / p->service_ns * 1e3;
}

double model_saturation_contention(const model_params *p)
{
	return model_peak_bandwidth(p);
}

int model_latency_processors(const model_params *p, unsigned processors, double *latency_ns,
                             plumb_status *status)
{
	if (params_valid(p, status) != 0)
		return -1;
	if (processors < 1)
		return plumb_fail(status, EINVAL, "model: the processor count must be at least 1");
	/* L^2 - (L0 + P S) L + L0 P S - (P-1) S^2/2 = 0; the discriminant is
	 * (L0 - P S)^2 + 2 (P-1) S^2 >= 0, and the larger root exceeds P S, so the
	 * queue is always below saturation (U < 1). */
	double s = p->service_ns, l0 = p->unloaded_latency_ns, np = processors;
	double difference = l0 - np * s;
	*latency_ns = (l0 + np * s + sqrt(difference * difference + 2.0 * (np - 1.0) * s * s)) / 2.0;
	return 0;
}
