/* What a benchmark calls around its measured loop: the region hooks the
 * runner or a source fills in (open, begin, end, watch), and the parameters
 * of a run (validate_params_init, which bench_pages also uses for its
 * sub-runs).  Below the benchmarks (bench_*.c) and the list of them
 * (registry.c), so no benchmark calls the file that lists it. */
#include <string.h>
#include "validate/internal.h"

void validate_params_init(validate_params *params, const validate_benchmark *benchmark,
                          const validate_machine *machine, uint64_t size)
{
	memset(params, 0, sizeof *params);
	params->size = size;
	params->machine = machine;
	params->inner_trips = 10;
	if (benchmark->configure) benchmark->configure(params);
}

int validate_region_open(validate_region *region, plumb_status *status)
{
	if (region && region->open) return region->open(region->context, status);
	return 0;
}

void validate_region_begin(validate_region *region)
{
	if (region && region->begin) region->begin(region->context);
}

void validate_region_end(validate_region *region)
{
	if (region && region->end) region->end(region->context);
}

int validate_region_watch(validate_region *region, const validate_trip_points *points, plumb_status *status)
{
	if (region && region->watch) return region->watch(region->context, points, status);
	return 0;
}

int validate_watch_loop(validate_region *region, const void *trip, bool partner_thread, plumb_status *status)
{
	validate_trip_points points = { .count = 1, .address = { trip }, .partner_thread = partner_thread };
	return validate_region_watch(region, &points, status);
}
