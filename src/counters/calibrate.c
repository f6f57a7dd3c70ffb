/* Calibration: what the counter interface itself adds.  An empty region
 * (start, stop, read with nothing between) is counted many times; whatever
 * it counts is the interface's bias in events, which a validation run
 * subtracts or at least reports (seed 000's "overhead/bias" error class).
 * The same loop times each call (calibrated TSC), so the cost of start, stop and read is
 * known per backend and read method (rdpmc where the kernel allows it). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters/counters.h"
#include "core/stats.h"
#include "core/timer.h"

/* Calls are timed with the calibrated TSC (clock_gettime would add tens of
 * ns and a coarse step to calls that cost a few hundred); the cost of the
 * timer pair itself is subtracted.  A call that cost no more than the timer
 * has no measurable cost: NaN, never a 0 that reads as "free". */
static double net_median_ns(const timer_calibration *timer, double *ticks, size_t n)
{
	double median = stats_median(ticks, n) - timer->overhead_ticks;
	return median > 0 ? timer_ticks_to_ns(timer, median) : NAN;
}

int counter_calibrate(const char *backend, const char *const *events, size_t n,
                      const counter_options *options, size_t iterations,
                      counter_calibration *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	if (iterations < 2 || iterations > 10000000)
		return plumb_fail(status, EINVAL, "calibration needs 2 to 10000000 iterations, not %zu", iterations);
	counter_set *set;
	if (counter_set_open(&set, backend, events, n, options, status) != 0)
		return -1;
	double *bias = malloc(n * iterations * sizeof *bias);
	double *start_ns = malloc(iterations * sizeof *start_ns);
	double *stop_ns = malloc(iterations * sizeof *stop_ns);
	double *read_ns = malloc(iterations * sizeof *read_ns);
	counter_value values[COUNTER_MAX_EVENTS];
	int rc = -1;
	if (!bias || !start_ns || !stop_ns || !read_ns) {
		plumb_fail(status, ENOMEM, "out of memory");
		goto done;
	}
	out->iterations = iterations;
	out->n = n;
	timer_calibration timer;
	if (timer_calibrate(&timer, 20, NULL) != 0)
		timer_calibration_clock(&timer);
	/* Warm up: the first rounds fault in the backend's own code and data. */
	for (int i = 0; i < 10; i++)
		if (counter_start(set, status) || counter_stop(set, status) || counter_read(set, values, status))
			goto done;
	for (size_t i = 0; i < iterations; i++) {
		uint64_t t0 = timer_begin(&timer);
		if (counter_start(set, status))
			goto done;
		uint64_t t1 = timer_end(&timer);
		if (counter_stop(set, status))
			goto done;
		uint64_t t2 = timer_end(&timer);
		if (counter_read(set, values, status))
			goto done;
		start_ns[i] = (double)(t1 - t0);
		stop_ns[i] = (double)(t2 - t1);
		for (size_t e = 0; e < n; e++)
			bias[e * iterations + i] = values[e].value;
	}
	/* Reads while counting: the case rdpmc serves (a stopped event is not
	 * on a counter, so it is always read with read()). */
	if (counter_start(set, status))
		goto done;
	for (size_t i = 0; i < iterations; i++) {
		uint64_t t0 = timer_begin(&timer);
		if (counter_read(set, values, status))
			goto done;
		read_ns[i] = (double)(timer_end(&timer) - t0);
	}
	snprintf(out->read_method, sizeof out->read_method, "%s", counter_set_read_method(set));
	if (counter_stop(set, status))
		goto done;
	out->start_ns = net_median_ns(&timer, start_ns, iterations);
	out->stop_ns = net_median_ns(&timer, stop_ns, iterations);
	out->read_ns = net_median_ns(&timer, read_ns, iterations);
	out->cost_state = COUNTER_OK;
	const char *first_reason = NULL;
	size_t opened_count = 0;
	for (size_t e = 0; e < n; e++) {
		const counter_value *opened = counter_set_opened(set, e);
		if (opened->state != COUNTER_UNSUPPORTED)
			opened_count++;
		else if (!first_reason)
			first_reason = opened->reason;
	}
	if (opened_count == 0) {
		/* start, stop and read on a set with nothing open return at once: their
		 * cost is not the cost of counting anything */
		out->start_ns = out->stop_ns = out->read_ns = NAN;
		out->cost_state = COUNTER_UNSUPPORTED;
		int used = snprintf(out->cost_reason, sizeof out->cost_reason, "no event opened");
		if (first_reason && used > 0 && (size_t)used + 2 < sizeof out->cost_reason)
			snprintf(out->cost_reason + used, sizeof out->cost_reason - (size_t)used, ": %.*s",
			         (int)(sizeof out->cost_reason - (size_t)used - 3), first_reason);
	}
	for (size_t e = 0; e < n; e++) {
		counter_bias *b = &out->bias[e];
		const counter_value *opened = counter_set_opened(set, e);
		double *samples = &bias[e * iterations];
		bool usable = opened->state != COUNTER_UNSUPPORTED;
		for (size_t i = 0; usable && i < iterations; i++)
			usable = !isnan(samples[i]);
		if (!usable) {
			b->state = COUNTER_UNSUPPORTED;
			snprintf(b->reason, sizeof b->reason, "%s",
			         opened->state == COUNTER_UNSUPPORTED ? opened->reason : "not counted in the empty region");
			b->mean = b->stddev = b->min = b->max = NAN;
			continue;
		}
		stats_summary summary;
		stats_summarize(samples, iterations, &summary);
		b->state = COUNTER_OK;
		b->mean = summary.mean;
		b->stddev = summary.stddev;
		b->min = summary.min;
		b->max = summary.max;
	}
	rc = 0;
done:
	free(bias);
	free(start_ns);
	free(stop_ns);
	free(read_ns);
	counter_close(set);
	return rc;
}
