/* Memory-level parallelism: k independent chains interleaved in one thread
 * (the modern form of seed 001's pipelined bandwidth: a strided reduction
 * would be prefetched, random chains are not).  Bandwidth grows with k
 * until the level runs out of miss buffers (or bandwidth); the k where it
 * stops growing is the number of misses the level keeps in flight. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "latency/latency.h"

static double median3(double a, double b, double c)
{
	if (a > b) { double t = a; a = b; b = t; }
	if (b > c) { double t = b; b = c; c = t; }
	return a > b ? a : b;
}

int latency_mlp_analyze(const latency_mlp_point *points, size_t n, double threshold,
                        latency_mlp_summary *out, plumb_status *status)
{
	if (!points || !out || n == 0)
		return plumb_fail(status, EINVAL, "MLP analysis needs at least one point");
	if (!(threshold > 0 && threshold <= 1))
		return plumb_fail(status, EINVAL, "the saturation threshold must be in (0, 1]");
	for (size_t i = 0; i < n; i++) {
		if (!(points[i].mb_per_s > 0) || !isfinite(points[i].mb_per_s) || !(points[i].ns_per_load > 0))
			return plumb_fail(status, EINVAL, "MLP point %zu has no valid bandwidth", i);
		if (i > 0 && points[i].chains <= points[i - 1].chains)
			return plumb_fail(status, EINVAL, "MLP points must be ordered by chain count");
	}
	double *smooth = malloc(n * sizeof *smooth);
	if (!smooth)
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	/* Median of 3 neighbours: one disturbed k neither makes nor hides the
	 * peak; a monotone curve is left unchanged. */
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || i == n - 1)
			smooth[i] = points[i].mb_per_s;
		else
			smooth[i] = median3(points[i - 1].mb_per_s, points[i].mb_per_s, points[i + 1].mb_per_s);
	}
	double peak = 0;
	for (size_t i = 0; i < n; i++)
		if (smooth[i] > peak)
			peak = smooth[i];
	size_t saturation = 0;
	while (saturation < n && smooth[saturation] < threshold * peak)
		saturation++;
	/* A curve still climbing at the largest k has not shown its limit:
	 * saturated means the first three quarters of the k range already
	 * came within 10% of the peak. */
	size_t head = n - n / 4;
	double head_peak = 0;
	for (size_t i = 0; i < head; i++)
		if (smooth[i] > head_peak)
			head_peak = smooth[i];
	out->saturated = n >= 4 && head_peak >= 0.9 * peak;
	free(smooth);
	out->saturation_chains = points[saturation].chains;
	out->peak_mb_per_s = peak;
	out->single_ns = points[0].ns_per_load;
	/* Little's law: lines in flight = throughput x latency = (peak lines
	 * per ns) x (one chain's ns per line) = peak / one-chain bandwidth. */
	out->outstanding = peak / points[0].mb_per_s;
	return 0;
}

typedef struct parallel_context {
	void *positions[CHASE_MAX_PARALLEL];
	unsigned chains;
} parallel_context;

static void run_parallel(void *context, size_t units)
{
	parallel_context *p = context;
	chase_run_parallel(p->positions, p->chains, units * 16);
}

int latency_mlp_measure(const timer_calibration *timer, const chase_chain *chain,
                        const latency_measure_options *options, unsigned max_chains, size_t line_bytes,
                        latency_mlp_point *points, plumb_status *status)
{
	if (max_chains == 0 || max_chains > CHASE_MAX_PARALLEL)
		return plumb_fail(status, EINVAL, "between 1 and %d chains are supported", CHASE_MAX_PARALLEL);
	if (line_bytes == 0)
		return plumb_fail(status, EINVAL, "line size must be positive");
	if (chain->length < max_chains)
		return plumb_fail(status, EINVAL, "a chain of %zu slots cannot carry %u walkers", chain->length, max_chains);
	size_t warm = 2 * chain->length;
	if (warm > options->warm_loads_max)
		warm = options->warm_loads_max;
	/* One walk along the chain records evenly spaced checkpoints (and
	 * warms it up); k walkers start at every (checkpoints/k)-th one, so
	 * they are spread evenly and never meet. */
	size_t checkpoints = chain->length < 2048 ? chain->length : 2048;
	void **checkpoint = malloc(checkpoints * sizeof *checkpoint);
	if (!checkpoint)
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	if (chase_spread_positions(chain, checkpoint, checkpoints, status) != 0) {
		free(checkpoint);
		return -1;
	}
	for (unsigned k = 1; k <= max_chains; k++) {
		parallel_context p = { .chains = k };
		for (unsigned j = 0; j < k; j++)
			p.positions[j] = checkpoint[checkpoints / k * j];
		size_t warm_units = (warm / k + 15) / 16;
		latency_mlp_point *point = &points[k - 1];
		point->chains = k;
		if (latency_measure(timer, run_parallel, &p, 16 * (size_t)k, warm_units, options, &point->latency,
		                    status) != 0) {
			free(checkpoint);
			return -1;
		}
		point->ns_per_load = point->latency.ns_p10;
		point->mb_per_s = point->ns_per_load > 0 ? (double)line_bytes / point->ns_per_load * 1e3 : 0;
	}
	free(checkpoint);
	return 0;
}
