/* The working-set sweep: one chain per size, laid out in the same memory,
 * so every point sees the same pages (and page sizes). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
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

/* The points within three sweep steps of a boundary are measured again,
 * later, and the lower 10th percentile of the two passes kept: contention
 * comes and goes and only ever adds. */
static int remeasure_boundaries(const timer_calibration *timer, const latency_sweep_options *again, void *memory,
                                size_t capacity, const uint64_t *sizes, latency_point *points, size_t n,
                                const latency_level *levels, size_t level_count, size_t *remeasured,
                                plumb_status *status)
{
	size_t *index = malloc(n * sizeof *index);
	uint64_t *near_sizes = malloc(n * sizeof *near_sizes);
	latency_point *second = malloc(n * sizeof *second);
	if (!index || !near_sizes || !second) {
		free(index); free(near_sizes); free(second);
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		bool near = false;
		for (size_t k = 0; k + 1 < level_count && !near; k++) {
			size_t end = levels[k].end_index;
			near = i + 3 >= end && i <= end + 3;
		}
		if (near) {
			index[m] = i;
			near_sizes[m++] = sizes[i];
		}
	}
	int rc = latency_sweep(timer, again, memory, capacity, near_sizes, m, second, NULL, status);
	for (size_t j = 0; rc == 0 && j < m; j++)
		if (second[j].latency.ns_p10 < points[index[j]].latency.ns_p10)
			points[index[j]] = second[j];
	if (rc == 0 && remeasured)
		*remeasured = m;
	free(index); free(near_sizes); free(second);
	return rc;
}

int latency_levels_of_points(const uint64_t *sizes, const latency_point *points, size_t n,
                             const latency_plateau_options *plateau, latency_level *levels, size_t capacity,
                             size_t *count, plumb_status *status)
{
	*count = 0;
	double *ns = malloc((n ? n : 1) * sizeof *ns);
	if (!ns)
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		ns[i] = points[i].latency.ns_p10;
	int rc = latency_find_levels(sizes, ns, n, plateau, levels, capacity, count, status);
	free(ns);
	return rc;
}

int latency_sweep_levels(const timer_calibration *timer, const latency_sweep_options *again, void *memory,
                         size_t capacity, const uint64_t *sizes, latency_point *points, size_t n,
                         const latency_plateau_options *plateau, latency_level *levels, size_t level_capacity,
                         size_t *count, size_t *remeasured, plumb_status *status)
{
	int rc = latency_levels_of_points(sizes, points, n, plateau, levels, level_capacity, count, status);
	if (rc == 0 && again && *count > 1) {
		rc = remeasure_boundaries(timer, again, memory, capacity, sizes, points, n, levels, *count, remeasured,
		                          status);
		if (rc == 0)
			rc = latency_levels_of_points(sizes, points, n, plateau, levels, level_capacity, count, status);
	}
	return rc;
}
