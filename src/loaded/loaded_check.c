/* Checks on a measured loaded-latency curve (see plumb/loaded.h): the idle
 * point against lat's loop on the same chain, and whether the curve's rise
 * can be queueing at all under Hristea's closed M/D/1 model (1997). */
#include <math.h>
#include "loaded/loaded.h"
#include "model/model.h"

static const loaded_point *idle_point(const loaded_point *points, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (points[i].idle && isfinite(points[i].latency_ns) && points[i].latency_ns > 0)
			return &points[i];
	return NULL;
}

void loaded_check_idle(const loaded_point *points, size_t count, const loaded_reference *reference,
                       loaded_idle_check *out)
{
	*out = (loaded_idle_check){ .ratio = NAN, .idle_ns = NAN, .reference_ns = NAN };
	const loaded_point *idle = idle_point(points, count);
	if (idle)
		out->idle_ns = idle->latency_ns;
	if (!idle || !reference || !reference->measured || !(reference->ns > 0))
		return;
	out->checked = true;
	out->reference_ns = reference->ns;
	out->ratio = idle->latency_ns / reference->ns;
	out->agrees = out->ratio <= LOADED_IDLE_AGREEMENT && out->ratio >= 1 / LOADED_IDLE_AGREEMENT;
}

void loaded_check_queueing(const loaded_point *points, size_t count, double line_bytes, loaded_queueing_check *out)
{
	*out = (loaded_queueing_check){ .service_bound_ns = NAN, .worst_excess_ns = NAN, .worst_bound_ns = NAN,
	                                .worst_bandwidth_mb_s = NAN, .worst_rise_ns = NAN, .tolerance_ns = NAN };
	const loaded_point *idle = idle_point(points, count);
	if (!idle) {
		out->why_not = "no idle point";
		return;
	}
	if (!(line_bytes > 0)) {
		out->why_not = "no line size";
		return;
	}
	double l0 = idle->latency_ns;
	/* S_max: the utilisation S (C/line + 1/L) reached at most 1 at every
	 * point (C in bytes per ns: MB/s / 1000). */
	double demand = 0;
	size_t loaded = 0;
	for (size_t i = 0; i < count; i++) {
		const loaded_point *p = &points[i];
		if (p->idle || !isfinite(p->generator_mb_s) || p->generator_mb_s < 0 || !(p->latency_ns > 0))
			continue;
		double d = p->generator_mb_s / 1000.0 / line_bytes + 1 / p->latency_ns;
		if (d > demand)
			demand = d;
		loaded++;
	}
	if (loaded == 0) {
		out->why_not = "no loaded point";
		return;
	}
	out->checked = true;
	double s_max = 1 / demand;
	if (s_max > l0)
		s_max = l0;
	out->service_bound_ns = s_max;
	out->tolerance_ns = LOADED_QUEUEING_TOLERANCE * l0;
	model_params params = { .unloaded_latency_ns = l0, .service_ns = s_max, .line_bytes = line_bytes };
	bool first = true;
	for (size_t i = 0; i < count; i++) {
		const loaded_point *p = &points[i];
		if (p->idle || !isfinite(p->generator_mb_s) || p->generator_mb_s < 0 || !(p->latency_ns > 0))
			continue;
		plumb_status status;
		double bound;
		/* No solution: the load saturates the resource at S_max, so
		 * queueing explains any latency there. */
		if (model_latency(&params, p->generator_mb_s, &bound, &status) != 0)
			bound = INFINITY;
		double excess = p->latency_ns - bound;
		if (first || excess > out->worst_excess_ns) {
			first = false;
			out->worst_index = i;
			out->worst_excess_ns = excess;
			out->worst_bound_ns = bound;
			out->worst_bandwidth_mb_s = p->generator_mb_s;
			out->worst_rise_ns = p->latency_ns - l0;
		}
	}
	out->step_not_queueing = out->worst_excess_ns > out->tolerance_ns;
}
