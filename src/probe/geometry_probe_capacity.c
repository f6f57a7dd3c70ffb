/* Capacity sweep: chains of one pointer per line over growing working
 * sets.  The order is random inside 64 KiB groups and the groups come in
 * random order: as random as a full random chain for any prefetcher, but
 * a group's 16 pages stay in the first-level TLB while it is walked, so
 * TLB misses (which a VM's 4 KiB host pages cause whatever the guest maps)
 * add at most one per 64 loads and do not blur the cache steps.  The
 * dependence defeats out-of-order overlap, and 2 MiB pages keep the
 * guest's own page walks short.  Each latency step is a cache level
 * running out.
 *
 * Measuring and level detection are plumb lat's (latency_sweep,
 * latency_sweep_levels): each point keeps its 10th percentile (another
 * program only ever adds latency), and the points near each boundary are
 * measured again, later, keeping the lower envelope.  Here they are
 * measured four more times, each time in another part of the arena: on a VM
 * whose host backs memory with scattered 4 KiB pages, which L2 sets a
 * working set overfills depends on where its pages landed, so one
 * placement can lose a quarter of the L2 (seen here: 881 KiB at the L3's
 * latency in one run, 4.9 ns in another).  The capacity is a property of
 * the cache, not of one placement; the lower envelope over five
 * placements comes closest to it (three left one run in five with L2
 * at 724 KiB at load 9; five gave 10 of 10 within a step at load 2-4.5). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "plumb/arena.h"
#include "plumb/chase.h"
#include "plumb/latency.h"
#include "probe/geometry_chain.h"

/* The first full sweep and four more passes near the boundaries. */
#define GEOMETRY_PLACEMENTS 5

void geometry_level_options(int expected_levels, latency_plateau_options *plateau)
{
	latency_plateau_defaults(plateau);
	/* One level per cache sysfs lists, plus memory. */
	plateau->expected_levels = expected_levels > 0 ? (size_t)expected_levels + 1 : 0;
}

int geometry_probe_capacity(const geometry_options *options, uint64_t from, uint64_t to, int points_per_octave,
                            unsigned line, int expected_levels, geometry_curve *curve, plumb_status *status)
{
	if (from < line || to < from || points_per_octave < 1 || points_per_octave > 64 || line < sizeof(void *))
		return plumb_fail(status, EINVAL, "capacity sweep: need line <= from <= to and 1..64 points per octave");
	size_t room = (size_t)(points_per_octave * (log2((double)to / (double)from) + 2) + 4);
	uint64_t *sizes = calloc(room, sizeof *sizes);
	latency_point *points = calloc(room, sizeof *points);
	if (!sizes || !points) {
		free(sizes); free(points);
		return plumb_fail(status, ENOMEM, "out of memory for the capacity sweep");
	}
	size_t n = latency_sweep_sizes(from, to, (unsigned)points_per_octave, line, sizes, room);
	int rc = n ? 0 : plumb_fail(status, EINVAL, "capacity sweep: no sizes between %llu and %llu bytes",
	                            (unsigned long long)from, (unsigned long long)to);
	arena buffer;
	/* Three regions (placements), 2 MiB aligned, one after the other. */
	size_t region = (size_t)(n ? sizes[n - 1] : to);
	region = (region + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	arena_request request = { .size = GEOMETRY_PLACEMENTS * region, .pages = ARENA_PAGES_THP,
	                          .fault = ARENA_FAULT_PREFAULT, .alignment = 2u << 20 };
	if (rc == 0 && arena_create(&buffer, &request, status) != 0)
		rc = -1;
	if (rc == 0) {
		latency_sweep_options sweep = { .layout = { .pattern = CHASE_PAGE_GROUPED, .slot_bytes = line,
		                                            .page_bytes = 65536, .seed = options->seed } };
		latency_measure_defaults(&sweep.measure);
		sweep.measure.target_relative_ci = options->target_relative_ci;
		sweep.measure.time_cap_ns = options->capacity_point_cap_ns;
		sweep.budget_ns = options->capacity_budget_ns;
		rc = latency_sweep(options->timer, &sweep, buffer.base, region, sizes, n, points, NULL, status);
		latency_plateau_options plateau;
		geometry_level_options(expected_levels, &plateau);
		for (int pass = 1; rc == 0 && pass < GEOMETRY_PLACEMENTS; pass++) {
			latency_sweep_options again = sweep;
			again.budget_ns = options->capacity_budget_ns ? options->capacity_budget_ns / 8 : 0;
			again.layout.seed = options->seed + (uint64_t)pass;
			latency_level levels[LATENCY_MAX_LEVELS];
			size_t count;
			rc = latency_sweep_levels(options->timer, &again, (char *)buffer.base + (size_t)pass * region, region,
			                          sizes, points, n, &plateau, levels, LATENCY_MAX_LEVELS, &count, NULL, status);
		}
		arena_destroy(&buffer);
	}
	if (rc == 0 && geometry_curve_init(curve, n, status) != 0)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		curve->x[i] = (double)sizes[i];
		curve->ns[i] = points[i].latency.ns_p10;
		curve->cv[i] = points[i].latency.cv;
		curve->noisy[i] = points[i].latency.noisy;
	}
	free(sizes);
	free(points);
	return rc;
}
