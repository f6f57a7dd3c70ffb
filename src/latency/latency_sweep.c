/* The working-set sweep: one chain per size, laid out in the same memory,
 * so every point sees the same pages (and page sizes). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "latency/latency.h"

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

/* One repeat pass: the points within three sweep steps of a boundary are
 * measured again, later, with another seed and in another part of the
 * memory, and each point keeps the pass with the lower 10th percentile:
 * contention comes and goes and only ever adds. */
static int repeat_pass(const timer_calibration *timer, const latency_sweep_options *again, unsigned pass,
                       unsigned repeats, void *memory, size_t capacity, const uint64_t *sizes, latency_point *points,
                       size_t n, const latency_level *levels, size_t level_count, double *row, size_t *remeasured,
                       plumb_status *status)
{
	size_t *index = malloc(n * sizeof *index);
	uint64_t *near_sizes = malloc(n * sizeof *near_sizes);
	latency_point *measured = malloc(n * sizeof *measured);
	if (!index || !near_sizes || !measured) {
		free(index); free(near_sizes); free(measured);
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	}
	size_t m = 0;
	uint64_t largest = 0;
	for (size_t i = 0; i < n; i++) {
		bool near = false;
		for (size_t k = 0; k + 1 < level_count && !near; k++) {
			size_t end = levels[k].end_index;
			near = i + 3 >= end && i <= end + 3;
		}
		if (near) {
			index[m] = i;
			near_sizes[m++] = sizes[i];
			largest = sizes[i];
		}
	}
	/* Another part of the memory for each pass, 2 MiB aligned (so THP
	 * still backs it) when there is room. */
	size_t room = capacity > largest ? capacity - (size_t)largest : 0;
	size_t offset = repeats ? room / repeats * (pass - 1) : 0;
	size_t align = room >= ((size_t)2 << 20) ? (size_t)2 << 20 : 4096;
	offset -= offset % align;
	latency_sweep_options options = *again;
	options.layout.seed = again->layout.seed + pass;
	int rc = latency_sweep(timer, &options, (char *)memory + offset, capacity - offset, near_sizes, m, measured, NULL,
	                       status);
	for (size_t j = 0; rc == 0 && j < m; j++) {
		row[index[j]] = measured[j].latency.ns_p10;
		if (measured[j].latency.ns_p10 < points[index[j]].latency.ns_p10)
			points[index[j]] = measured[j];
	}
	if (rc == 0 && remeasured)
		*remeasured += m;
	free(index); free(near_sizes); free(measured);
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

int latency_sweep_levels(const timer_calibration *timer, const latency_sweep_options *again, unsigned repeats,
                         void *memory, size_t capacity, const uint64_t *sizes, latency_point *points, size_t n,
                         unsigned points_per_octave, const latency_plateau_options *plateau, latency_level *levels,
                         latency_boundary_spread *spreads, size_t level_capacity, size_t *count, double *pass_ns,
                         size_t *passes_done, size_t *remeasured, plumb_status *status)
{
	if (remeasured)
		*remeasured = 0;
	*passes_done = 1;
	if (!again)
		repeats = 0;
	for (size_t i = 0; i < n; i++)
		pass_ns[i] = points[i].latency.ns_p10;
	for (size_t i = n; i < (1 + (size_t)repeats) * n; i++)
		pass_ns[i] = NAN;
	int rc = latency_levels_of_passes(sizes, pass_ns, 1, n, points_per_octave, plateau, levels, spreads,
	                                  level_capacity, count, status);
	for (unsigned pass = 1; rc == 0 && pass <= repeats && *count > 1; pass++) {
		rc = repeat_pass(timer, again, pass, repeats, memory, capacity, sizes, points, n, levels, *count,
		                 pass_ns + pass * n, remeasured, status);
		if (rc == 0) {
			*passes_done = pass + 1;
			rc = latency_levels_of_passes(sizes, pass_ns, *passes_done, n, points_per_octave, plateau, levels,
			                              spreads, level_capacity, count, status);
		}
	}
	return rc;
}
