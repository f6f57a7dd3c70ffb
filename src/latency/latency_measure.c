/* The measuring loop every latency probe shares: warm up, size a sample,
 * repeat until the 95% CI is tight or the time cap passes, report the
 * median (robust against the preempted sample a busy machine produces). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "latency/latency.h"
#include "core/stats.h"

void latency_measure_defaults(latency_measure_options *options)
{
	options->target_relative_ci = 0.02;
	options->time_cap_ns = 150000000;    /* 150 ms per measurement */
	options->min_runs = 9;
	options->max_runs = 200;
	/* 250 us: long next to the timer's ~15 ns overhead, short next to a
	 * scheduler time slice, so most samples run undisturbed. */
	options->sample_ns = 250000.0;
	options->warm_loads_max = 1u << 18;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Linear interpolation between order statistics; sorts values. */
static double percentile(double *values, size_t n, double p)
{
	qsort(values, n, sizeof *values, compare_double);
	double at = p * (double)(n - 1);
	size_t i = (size_t)at;
	if (i + 1 >= n)
		return values[n - 1];
	return values[i] + (at - (double)i) * (values[i + 1] - values[i]);
}

typedef struct sample_context {
	const timer_calibration *timer;
	latency_kernel_fn kernel;
	void *context;
	size_t units;
	size_t loads;
} sample_context;

static double elapsed_ns(const sample_context *s)
{
	uint64_t begin = timer_begin(s->timer);
	s->kernel(s->context, s->units);
	uint64_t end = timer_end(s->timer);
	double ticks = (double)(end - begin) - s->timer->overhead_ticks;
	if (ticks < 0)
		ticks = 0;
	return timer_ticks_to_ns(s->timer, ticks);
}

static double one_sample(void *context)
{
	sample_context *s = context;
	return elapsed_ns(s) / (double)s->loads;
}

int latency_measure(const timer_calibration *timer, latency_kernel_fn kernel, void *context,
                    size_t loads_per_unit, size_t warm_units, const latency_measure_options *options,
                    latency_result *result, plumb_status *status)
{
	if (!timer || !kernel || loads_per_unit == 0 || !options || options->min_runs == 0 ||
	    options->max_runs < options->min_runs || !(options->sample_ns > 0))
		return plumb_fail(status, EINVAL, "latency_measure: bad arguments");
	if (warm_units)
		kernel(context, warm_units);
	/* Size the sample: time a short trial, scale to sample_ns.  The trial
	 * is long enough (>= 2048 loads) that the timer overhead is small. */
	sample_context s = { timer, kernel, context, 0, 0 };
	s.units = (2048 + loads_per_unit - 1) / loads_per_unit;
	double trial = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		s.loads = s.units * loads_per_unit;
		double t = elapsed_ns(&s);
		trial = t / (double)s.units;
		if (t > 20000.0)
			break;
		s.units *= 8;
	}
	double units = trial > 0 ? options->sample_ns / trial : 1e6;
	if (units < 1)
		units = 1;
	if (units > 1e8)
		units = 1e8;
	s.units = (size_t)units;
	s.loads = s.units * loads_per_unit;
	double *samples = malloc(options->max_runs * sizeof *samples);
	if (!samples)
		return plumb_fail_errno(status, ENOMEM, "cannot allocate %zu samples", options->max_runs);
	stats_summary summary;
	bool noisy = false;
	long n = stats_repeat(one_sample, &s, options->min_runs, options->max_runs, options->target_relative_ci,
	                      options->time_cap_ns, samples, &summary, &noisy);
	if (n <= 0) {
		free(samples);
		return plumb_fail(status, EIO, "the latency measurement produced no sample");
	}
	result->ns_p10 = percentile(samples, (size_t)n, 0.10);
	free(samples);
	result->ns = summary.median;
	result->ns_min = summary.min;
	result->mean = summary.mean;
	result->cv = summary.cv;
	result->ci95_relative = summary.ci95_relative;
	result->samples = (size_t)n;
	result->loads_per_sample = s.loads;
	result->noisy = noisy;
	return 0;
}

typedef struct chain_walk {
	void *position;
} chain_walk;

static void walk_chain(void *context, size_t units)
{
	chain_walk *w = context;
	w->position = chase_run(w->position, units * 16);
}

int latency_measure_chain(const timer_calibration *timer, const chase_chain *chain,
                          const latency_measure_options *options, latency_result *result, plumb_status *status)
{
	/* Warm up over two laps (so a chain that fits a level is resident in
	 * it, and its TLB entries are loaded), capped for big chains, whose
	 * misses no warm-up can prevent. */
	size_t warm = 2 * chain->length;
	if (warm > options->warm_loads_max)
		warm = options->warm_loads_max;
	chain_walk walk = { chain->start };
	return latency_measure(timer, walk_chain, &walk, 16, (warm + 15) / 16, options, result, status);
}
