/* The working-set sweep: one chain per size, laid out in the same memory,
 * so every point sees the same pages (and page sizes). */
#include <errno.h>
#include <math.h>
#include "plumb/latency.h"

size_t latency_sweep_sizes(uint64_t min_bytes, uint64_t max_bytes, unsigned points_per_octave, size_t line,
                           uint64_t *sizes, size_t capacity)
{
	if (line == 0 || points_per_octave == 0 || min_bytes < line || max_bytes < min_bytes || capacity == 0)
		return 0;
	size_t n = 0;
	for (unsigned i = 0;; i++) {
		double exact = (double)min_bytes * pow(2.0, (double)i / points_per_octave);
		uint64_t bytes = (uint64_t)llround(exact / (double)line) * line;
		if (n > 0 && bytes <= sizes[n - 1])
			continue;
		if (n == capacity)
			break;
		sizes[n++] = bytes;
		if (bytes >= max_bytes)
			break;
	}
	return n;
}

int latency_sweep(const timer_calibration *timer, const latency_sweep_options *options, void *memory,
                  size_t capacity, const uint64_t *sizes, size_t count, latency_point *points,
                  progress *progress_bar, plumb_status *status)
{
	uint64_t started = timer_monotonic_ns();
	for (size_t i = 0; i < count; i++) {
		latency_measure_options measure = options->measure;
		if (options->budget_ns) {
			/* Share what is left of the budget among the points left, so
			 * a busy machine (every point at its cap) still ends in time. */
			uint64_t spent = timer_monotonic_ns() - started;
			uint64_t left = spent < options->budget_ns ? options->budget_ns - spent : 0;
			uint64_t share = left / (count - i);
			if (share < 10000000)
				share = 10000000;
			if (share < measure.time_cap_ns)
				measure.time_cap_ns = share;
		}
		if (sizes[i] > capacity)
			return plumb_fail(status, EINVAL, "working set of %llu bytes exceeds the %zu-byte arena",
			                  (unsigned long long)sizes[i], capacity);
		chase_layout layout = options->layout;
		layout.bytes = (size_t)sizes[i];
		chase_chain chain;
		if (chase_build_layout(&chain, memory, capacity, &layout, status) != 0)
			return -1;
		points[i].bytes = sizes[i];
		if (latency_measure_chain(timer, &chain, &measure, &points[i].latency, status) != 0)
			return -1;
		if (progress_bar)
			progress_step(progress_bar, i + 1);
	}
	return 0;
}
