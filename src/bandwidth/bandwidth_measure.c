/* One bandwidth measurement: warm up, size the samples, then repeat until
 * the 95% confidence interval is tight or the time cap is reached. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bandwidth/bandwidth.h"

void bandwidth_measure_defaults(bandwidth_measure_options *options)
{
	options->min_runs = 5;
	options->max_runs = 60;
	options->target_relative_ci = 0.02;
	options->time_cap_ns = 200u * 1000 * 1000;
	options->sample_ns = 2e6;
}

typedef struct measure_context {
	bandwidth_team *team;
	const bandwidth_kernel *kernel;
	size_t elements;
	uint64_t passes;
} measure_context;

static double measure_once(void *argument)
{
	measure_context *context = argument;
	return bandwidth_team_sample(context->team, context->kernel, context->elements, context->passes);
}

int bandwidth_measure(bandwidth_team *team, const bandwidth_kernel *kernel, uint64_t footprint,
                      const bandwidth_measure_options *options, bandwidth_result *result, plumb_status *status)
{
	memset(result, 0, sizeof *result);
	size_t elements = bandwidth_elements_for_footprint(kernel, footprint);
	if (elements == 0)
		return plumb_fail(status, EINVAL, "footprint %llu bytes is too small for %s (%u arrays of 512-byte blocks)",
		                  (unsigned long long)footprint, kernel->name, kernel->arrays);
	if (options->min_runs < 2 || options->max_runs < options->min_runs)
		return plumb_fail(status, EINVAL, "need at least 2 runs per measurement");
	measure_context context = { team, kernel, elements, 1 };
	/* Sizing: a sample must last long against the timer and against the
	 * threads' start skew (a few hundred ns).  Passes grow until the
	 * faster of two samples lasts at least half of sample_ns.  The faster
	 * one, because a preempted thread only ever makes a sample slower: a
	 * single calibration sample that lost the CPU would otherwise make
	 * every later sample a single pass, timing mostly the start skew.
	 * The first samples also warm up: page walks, and bringing the arrays
	 * into the level they fit in. */
	double bytes_per_pass = (double)bandwidth_bytes_counted(kernel, elements) * bandwidth_team_threads(team);
	for (int round = 0; round < 8; round++) {
		double fastest_ns = INFINITY;
		for (int k = 0; k < 2; k++) {
			double rate = measure_once(&context);
			if (isnan(rate))
				return plumb_fail(status, EIO, "bandwidth sample failed (%s, %zu elements)", kernel->name, elements);
			double ns = bytes_per_pass * (double)context.passes / rate;
			if (ns < fastest_ns)
				fastest_ns = ns;
		}
		if (fastest_ns >= options->sample_ns / 2)
			break;
		double scale = options->sample_ns / (fastest_ns > 1 ? fastest_ns : 1);
		if (scale > 4096)
			scale = 4096;
		context.passes = (uint64_t)ceil((double)context.passes * scale);
	}
	double *samples = calloc(options->max_runs, sizeof *samples);
	if (!samples)
		return plumb_fail(status, ENOMEM, "out of memory");
	long n = stats_repeat(measure_once, &context, options->min_runs, options->max_runs,
	                      options->target_relative_ci, options->time_cap_ns, samples, &result->gbps, &result->noisy);
	free(samples);
	if (n < 0)
		return plumb_fail(status, EIO, "bandwidth sample failed (%s)", kernel->name);
	result->elements = elements;
	result->footprint = (uint64_t)elements * sizeof(double) * kernel->arrays;
	result->passes = context.passes;
	result->moved_factor = (double)bandwidth_bytes_moved(kernel, elements) / (double)bandwidth_bytes_counted(kernel, elements);
	return 0;
}
