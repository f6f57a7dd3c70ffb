/* Helpers the geometry probes share: linking arbitrary addresses into one
 * random pointer cycle, and timing a walk of it with the shared chase loop
 * (plumb/chase.h) until the confidence interval is tight. */
#ifndef PLUMB_PROBE_GEOMETRY_CHAIN_H
#define PLUMB_PROBE_GEOMETRY_CHAIN_H

#include <stddef.h>
#include <stdint.h>
#include "geometry/geometry.h"
#include "latency/latency.h"

/* Links slots[order[0]] -> slots[order[1]] -> ... -> slots[order[0]]:
 * each slot receives the address of the next.  order NULL = as given.
 * Returns the chain's start. */
void *geometry_link(void **const *slots, const uint32_t *order, size_t count);

/* One latency point: warms the chain up (a lap, at most warm_loads), sizes
 * samples to options->sample_ns, then repeats (stats_repeat) and stores the
 * median ns per load, the CV and the noisy flag at curve index i. */
int geometry_measure_chain(const geometry_options *options, void *start, size_t length, size_t warm_loads,
                           geometry_curve *curve, size_t i, plumb_status *status);

/* The level detector's options for the capacity sweep: plumb lat's
 * defaults, expecting expected_levels caches plus memory (0 = unknown).
 * geometry_infer_levels uses it. */
void geometry_level_options(int expected_levels, latency_plateau_options *plateau);

#endif
