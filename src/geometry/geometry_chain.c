/* Shared pieces of the geometry probes (see geometry_chain.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "chase/chase.h"
#include "core/stats.h"
#include "geometry/geometry_chain.h"

void geometry_options_defaults(geometry_options *options, const timer_calibration *timer)
{
	options->timer = timer;
	options->target_relative_ci = 0.02;
	options->point_cap_ns = 60u * 1000 * 1000;
	options->min_runs = 5;
	options->max_runs = 40;
	options->sample_ns = 0.5e6;
	options->seed = 0x9e0e7a11;
}

void *geometry_link(void **const *slots, const uint32_t *order, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		size_t from = order ? order[i] : i;
		size_t to = order ? order[i + 1 == count ? 0 : i + 1] : (i + 1 == count ? 0 : i + 1);
		*slots[from] = (void *)slots[to];
	}
	return (void *)slots[order ? order[0] : 0];
}

typedef struct chain_sample {
	const timer_calibration *timer;
	void *position;
	size_t loads;
} chain_sample;

static double timed_run(chain_sample *s)
{
	uint64_t ticks = chase_time_ticks(s->timer, &s->position, s->loads);
	double overhead = s->timer->overhead_ticks > 0 ? s->timer->overhead_ticks : 0;
	double net = (double)ticks > overhead ? (double)ticks - overhead : (double)ticks;
	return timer_ticks_to_ns(s->timer, net) / (double)s->loads;
}

/* One sample is the median of three timed runs: on a shared machine a
 * run now and then loses the CPU for milliseconds, and one such run must
 * not make the whole point look noisy. */
static double sample_ns_per_load(void *argument)
{
	chain_sample *s = argument;
	double a = timed_run(s), b = timed_run(s), c = timed_run(s);
	if (a > b) { double t = a; a = b; b = t; }
	if (b > c) b = c;
	return a > b ? a : b;
}

int geometry_measure_chain(const geometry_options *options, void *start, size_t length, size_t warm_loads,
                           geometry_curve *curve, size_t i, plumb_status *status)
{
	/* Warm-up: one lap brings every line of the chain into the level it
	 * fits in (and its translations into the TLB); capped for chains far
	 * larger than any cache, where a lap would only cost time. */
	size_t warm = length < warm_loads ? length : warm_loads;
	void *position = chase_run(start, warm > 0 ? warm : 1);
	chain_sample s = { options->timer, position, 2000 };
	double probe_ns = timed_run(&s);
	double loads = options->sample_ns / 3 / (probe_ns > 0.1 ? probe_ns : 0.1);
	if (loads < 1000)
		loads = 1000;
	if (loads > 8e6)
		loads = 8e6;
	s.loads = (size_t)loads;
	double *samples = malloc(options->max_runs * sizeof *samples);
	if (!samples)
		return plumb_fail(status, ENOMEM, "out of memory");
	stats_summary summary;
	bool noisy = true;
	long n = stats_repeat(sample_ns_per_load, &s, options->min_runs, options->max_runs,
	                      options->target_relative_ci, options->point_cap_ns, samples, &summary, &noisy);
	free(samples);
	if (n < 1)
		return plumb_fail(status, EIO, "chain timing failed");
	curve->ns[i] = summary.median;
	if (curve->cv)
		curve->cv[i] = summary.cv;
	if (curve->noisy)
		curve->noisy[i] = noisy;
	return 0;
}

void geometry_level_options(int expected_levels, latency_plateau_options *plateau)
{
	latency_plateau_defaults(plateau);
	/* One level per cache sysfs lists, plus memory. */
	plateau->expected_levels = expected_levels > 0 ? (size_t)expected_levels + 1 : 0;
}
