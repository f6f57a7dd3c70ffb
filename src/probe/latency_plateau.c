/* Plateaus and boundaries of a latency-versus-working-set curve.
 *
 * The curve is a staircase seen through noise: flat where the chain fits a
 * level, rising (steeply or over an octave or two) where it outgrows it,
 * with single points now and then several times too high because another
 * process ran.  So, in log latency:
 * 1. smooth with a running median of 3, which removes isolated outliers
 *    and leaves steps where they are;
 * 2. find plateaus: maximal runs of at least min_points points whose
 *    smoothed values stay within flat_ratio of one another;
 * 3. merge neighbouring plateaus whose median latencies are within
 *    level_ratio (a level that drifts slowly, e.g. DRAM as TLB misses
 *    grow, is still one level), since distinct levels differ by 2x or more;
 * 4. a level ends at the last point, walking up from its plateau, whose
 *    smoothed latency is still below the log-midpoint between it and the
 *    next level: half-way up the step.  (Departure from the plateau would
 *    be earlier and depends on the noise; on a VM whose host backs memory
 *    with 4 KiB pages, conflict misses from random physical placement
 *    start well below the capacity and make every transition gradual.
 *    The half-way point of an ideal step is the capacity, and the smeared
 *    step stays centred on it.) */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "plumb/latency.h"
#include "plumb/stats.h"

void latency_plateau_defaults(latency_plateau_options *options)
{
	options->flat_ratio = 1.25;
	options->min_points = 3;
	options->level_ratio = 1.6;
}

static double median3(double a, double b, double c)
{
	if (a > b) { double t = a; a = b; b = t; }
	if (b > c) { double t = b; b = c; c = t; }
	return a > b ? a : b;
}

static double median_of(const double *values, size_t first, size_t last)
{
	return stats_median(values + first, last - first + 1);
}

int latency_find_levels(const uint64_t *bytes, const double *ns, size_t n, const latency_plateau_options *options,
                        latency_level *levels, size_t capacity, size_t *count, plumb_status *status)
{
	*count = 0;
	if (!bytes || !ns || !options || !levels)
		return plumb_fail(status, EINVAL, "latency_find_levels: missing input");
	if (!(options->flat_ratio > 1) || options->min_points < 1 || !(options->level_ratio > 1))
		return plumb_fail(status, EINVAL, "latency_find_levels: ratios must exceed 1");
	for (size_t i = 0; i < n; i++) {
		if (!(ns[i] > 0) || !isfinite(ns[i]))
			return plumb_fail(status, EINVAL, "latency %g at point %zu is not a positive number", ns[i], i);
		if (i > 0 && bytes[i] <= bytes[i - 1])
			return plumb_fail(status, EINVAL, "working-set sizes must increase (point %zu)", i);
	}
	if (n == 0)
		return 0;
	double *raw = malloc(n * sizeof *raw), *smooth = malloc(n * sizeof *smooth);
	size_t *plateau_first = malloc(n * sizeof *plateau_first), *plateau_last = malloc(n * sizeof *plateau_last);
	if (!raw || !smooth || !plateau_first || !plateau_last) {
		free(raw); free(smooth); free(plateau_first); free(plateau_last);
		return plumb_fail_errno(status, ENOMEM, "latency_find_levels: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		raw[i] = log(ns[i]);
	for (size_t i = 0; i < n; i++) {
		if (n < 3)
			smooth[i] = raw[i];
		else {
			size_t c = i == 0 ? 1 : i == n - 1 ? n - 2 : i;
			smooth[i] = i == 0 || i == n - 1 ? median3(raw[c - 1], raw[c], raw[c + 1]) : median3(raw[i - 1], raw[i], raw[i + 1]);
		}
	}
	/* 2. plateaus, greedily from small sizes up. */
	double flat = log(options->flat_ratio);
	size_t plateaus = 0;
	for (size_t i = 0; i < n;) {
		double lo = smooth[i], hi = smooth[i];
		size_t j = i;
		while (j + 1 < n) {
			double v = smooth[j + 1];
			double nlo = v < lo ? v : lo, nhi = v > hi ? v : hi;
			if (nhi - nlo > flat)
				break;
			lo = nlo;
			hi = nhi;
			j++;
		}
		if (j - i + 1 >= options->min_points) {
			plateau_first[plateaus] = i;
			plateau_last[plateaus] = j;
			plateaus++;
			i = j + 1;
		} else
			i++;
	}
	/* 3. merge plateaus into levels. */
	double merge = log(options->level_ratio);
	size_t found = 0;
	for (size_t p = 0; p < plateaus; p++) {
		double level = median_of(smooth, plateau_first[p], plateau_last[p]);
		if (found > 0) {
			latency_level *previous = &levels[found - 1];
			if (level - log(previous->ns) < merge) {
				previous->last_index = plateau_last[p];
				previous->ns = exp(median_of(raw, previous->first_index, previous->last_index));
				continue;
			}
		}
		if (found == capacity)
			break;
		latency_level *l = &levels[found++];
		l->first_index = plateau_first[p];
		l->last_index = plateau_last[p];
		l->ns = exp(median_of(raw, l->first_index, l->last_index));
	}
	/* Merging can leave a later level below an earlier one only on a
	 * curve that falls; keep the levels increasing by dropping those. */
	size_t kept = 0;
	for (size_t k = 0; k < found; k++)
		if (kept == 0 || levels[k].ns > levels[kept - 1].ns)
			levels[kept++] = levels[k];
	found = kept;
	/* 4. boundaries and ranges. */
	for (size_t k = 0; k < found; k++) {
		latency_level *l = &levels[k];
		l->ns_low = l->ns_high = ns[l->first_index];
		for (size_t i = l->first_index; i <= l->last_index; i++) {
			if (ns[i] < l->ns_low) l->ns_low = ns[i];
			if (ns[i] > l->ns_high) l->ns_high = ns[i];
		}
		l->open_ended = k + 1 == found;
		if (l->open_ended) {
			l->end_index = n - 1;
			continue;
		}
		double limit = 0.5 * (log(l->ns) + log(levels[k + 1].ns));
		size_t end = l->last_index;
		while (end > l->first_index && smooth[end] > limit)
			end--;
		while (end + 1 < levels[k + 1].first_index && smooth[end + 1] <= limit)
			end++;
		l->end_index = end;
	}
	*count = found;
	free(raw); free(smooth); free(plateau_first); free(plateau_last);
	return 0;
}

bool latency_boundary_agrees(uint64_t measured, uint64_t reference, unsigned points_per_octave, double steps)
{
	if (measured == 0 || reference == 0 || points_per_octave == 0)
		return false;
	/* Sweep sizes are rounded to whole lines, so allow a hair over. */
	double distance = fabs(log2((double)measured / (double)reference)) * points_per_octave;
	return distance <= steps + 0.01;
}
