/* The bandwidth sweep over thread counts, kernels and footprints, and the
 * grouping of its points into memory levels. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bandwidth/bandwidth.h"

int bandwidth_sweep_run(const bandwidth_sweep_request *request, bandwidth_sweep *sweep, plumb_status *status)
{
	memset(sweep, 0, sizeof *sweep);
	if (request->kernel_count < 1 || request->thread_count_count < 1)
		return plumb_fail(status, EINVAL, "bandwidth sweep: nothing to run");
	for (int t = 0; t < request->thread_count_count; t++)
		if (request->thread_counts[t] < 1 || request->thread_counts[t] > request->cpu_count)
			return plumb_fail(status, EINVAL, "%d thread%s asked, but only %d CPU%s to pin them to",
			                  request->thread_counts[t], request->thread_counts[t] == 1 ? "" : "s",
			                  request->cpu_count, request->cpu_count == 1 ? "" : "s");
	sweep->level_count = bandwidth_levels_from_topology(request->topo, 1, sweep->levels, BANDWIDTH_MAX_LEVELS);
	bandwidth_levels_use_model(sweep->levels, sweep->level_count, 1, request->model);
	int most_threads = 1;
	for (int t = 0; t < request->thread_count_count; t++)
		if (request->thread_counts[t] > most_threads)
			most_threads = request->thread_counts[t];

	uint64_t defaults[BANDWIDTH_MAX_LEVELS];
	const uint64_t *footprints = request->footprints;
	int footprint_count = request->footprint_count;
	if (!footprints) {
		footprint_count = bandwidth_footprints_for(sweep->levels, sweep->level_count, most_threads, defaults,
		                                           BANDWIDTH_MAX_LEVELS);
		footprints = defaults;
	}
	bandwidth_usable_note(sweep->levels, sweep->level_count, request->footprints ? NULL : footprints, most_threads,
	                      request->model ? request->model->source : "", sweep->usable_note, sizeof sweep->usable_note);
	uint64_t largest = 0;
	for (int f = 0; f < footprint_count; f++)
		if (footprints[f] > largest)
			largest = footprints[f];
	uint64_t available = arena_memory_available();
	uint64_t max_threads = 0;
	for (int t = 0; t < request->thread_count_count; t++)
		if ((uint64_t)request->thread_counts[t] > max_threads)
			max_threads = (uint64_t)request->thread_counts[t];
	if (available && largest * max_threads > available / 2)
		return plumb_fail(status, ENOMEM, "%d thread%s x %llu MiB would use more than half the available memory (%llu MiB)",
		                  (int)max_threads, max_threads == 1 ? "" : "s", (unsigned long long)(largest >> 20),
		                  (unsigned long long)(available >> 20));

	size_t total = (size_t)request->thread_count_count * (size_t)request->kernel_count * (size_t)footprint_count;
	sweep->points = calloc(total, sizeof *sweep->points);
	if (!sweep->points)
		return plumb_fail(status, ENOMEM, "out of memory");
	for (int t = 0; t < request->thread_count_count; t++) {
		int threads = request->thread_counts[t];
		bandwidth_level levels[BANDWIDTH_MAX_LEVELS];
		int level_count = bandwidth_levels_from_topology(request->topo, threads, levels, BANDWIDTH_MAX_LEVELS);
		bandwidth_levels_use_model(levels, level_count, threads, request->model);
		bandwidth_team_request team_request = {
			.threads = threads, .cpus = request->cpus, .footprint = largest,
			.pages = request->pages, .timer = request->timer,
		};
		bandwidth_team *team;
		if (bandwidth_team_create(&team, &team_request, status) != 0) {
			bandwidth_sweep_free(sweep);
			return -1;
		}
		if (t == 0)
			snprintf(sweep->pages_obtained, sizeof sweep->pages_obtained, "%s", bandwidth_team_pages(team));
		for (int f = 0; f < footprint_count; f++) {
			int level = bandwidth_level_of(levels, level_count, footprints[f]);
			/* a default sized from a level's usable size stays that level's,
			 * also where every thread's share cannot hold it (the note says
			 * the row is then partly memory), rather than blend into DRAM's */
			if (!request->footprints && f < level_count && levels[f].usable_size)
				level = f;
			for (int k = 0; k < request->kernel_count; k++) {
				bandwidth_point *point = &sweep->points[sweep->count];
				point->threads = threads;
				point->kernel = request->kernels[k];
				point->footprint_requested = footprints[f];
				snprintf(point->level, sizeof point->level, "%s", levels[level].name);
				if (bandwidth_measure(team, point->kernel, footprints[f], &request->options, &point->result, status) != 0) {
					bandwidth_team_destroy(team);
					bandwidth_sweep_free(sweep);
					return -1;
				}
				sweep->count++;
				if (request->progress)
					request->progress(request->progress_context, sweep->count, total);
			}
		}
		bandwidth_team_destroy(team);
	}
	return 0;
}

void bandwidth_sweep_free(bandwidth_sweep *sweep)
{
	free(sweep->points);
	sweep->points = NULL;
	sweep->count = 0;
}

size_t bandwidth_level_value(const bandwidth_point *points, size_t count, int threads, const bandwidth_kernel *kernel,
                             const char *level, double *value, bool *noisy)
{
	double *medians = malloc((count ? count : 1) * sizeof *medians);
	size_t n = 0;
	*noisy = false;
	*value = NAN;
	if (!medians)
		return 0;
	for (size_t i = 0; i < count; i++) {
		const bandwidth_point *p = &points[i];
		if (p->threads != threads || p->kernel != kernel || strcmp(p->level, level) != 0)
			continue;
		medians[n++] = p->result.gbps.max;
		*noisy |= p->result.noisy;
	}
	if (n)
		*value = stats_median(medians, n);
	free(medians);
	return n;
}
