/* Repeat until stable (plumb/stats.h, stats_repeat): a measurement loop,
 * so it reads the clock (timer.c) as well as summarising (stats.c).  It sits
 * above both; stats.c is plain arithmetic, and the timer's calibration uses
 * it (stats_median). */
#include <math.h>
#include "core/stats.h"
#include "core/timer.h"

long stats_repeat(stats_measure_fn measure, void *context, size_t min_runs, size_t max_runs,
                  double target_relative_ci, uint64_t time_cap_ns, double *samples,
                  stats_summary *out, bool *noisy)
{
	if (max_runs == 0 || min_runs > max_runs)
		return -1;
	if (min_runs < 2)
		min_runs = 2 <= max_runs ? 2 : max_runs;
	uint64_t start = timer_monotonic_ns();
	size_t n = 0;
	while (n < max_runs) {
		double v = measure(context);
		if (isnan(v))
			return -1;
		samples[n++] = v;
		if (n < min_runs)
			continue;
		stats_summarize(samples, n, out);
		if (out->ci95_relative <= target_relative_ci)
			break;
		if (timer_monotonic_ns() - start >= time_cap_ns)
			break;
	}
	stats_summarize(samples, n, out);
	if (noisy)
		*noisy = !(out->ci95_relative <= target_relative_ci);
	return (long)n;
}
