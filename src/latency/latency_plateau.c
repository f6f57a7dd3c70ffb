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
 *    grow, is still one level), since distinct levels differ by 2x or more
 *    (L1 -> L2 3x, L2 -> L3 3x, L3 -> DRAM 10x here; similar on Intel).
 *    A slow transition can still leave a short flat stretch between two
 *    levels; when the caller knows how many levels to expect (the sysfs
 *    caches plus memory) and more were found, the closest neighbours are
 *    merged while they are within expected_merge_ratio;
 * 4. a level ends at the last point, walking up from its plateau, whose
 *    smoothed latency is below the mean of its latency and the next
 *    level's: the working set at which half the loads still hit.  A load
 *    that hits with probability h costs h L_k + (1 - h) L_k+1 on average,
 *    so the latency is linear in the hit ratio and the mean marks h = 1/2.
 *    (Departure from the plateau would come earlier and depend on the
 *    noise: on a VM whose host backs memory with 4 KiB pages, random
 *    physical placement makes some cache sets overflow well below the
 *    capacity, so every transition is gradual; half the loads still hit
 *    about where the working set equals the capacity.) */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "latency/latency.h"
#include "core/stats.h"

void latency_plateau_defaults(latency_plateau_options *options)
{
	options->flat_ratio = 1.25;
	options->min_points = 3;
	options->level_ratio = 2.0;
	options->expected_levels = 0;
	options->expected_merge_ratio = 4.0;
}

static double median3(double a, double b, double c)
{
	if (a > b) { double t = a; a = b; b = t; }
	if (b > c) { double t = b; b = c; c = t; }
	return a > b ? a : b;
}

/* Log latency, and its running median of 3 (the ends take the median of
 * the first or last three points). */
static void smooth_log(const double *ns, size_t n, double *raw, double *smooth)
{
	for (size_t i = 0; i < n; i++)
		raw[i] = log(ns[i]);
	for (size_t i = 0; i < n; i++) {
		if (n < 3)
			smooth[i] = raw[i];
		else {
			size_t c = i == 0 ? 1 : i == n - 1 ? n - 2 : i;
			smooth[i] = median3(raw[c - 1], raw[c], raw[c + 1]);
		}
	}
}

static double median_of(const double *values, size_t first, size_t last)
{
	return stats_median(values + first, last - first + 1);
}

/* Sum of squared deviations from the mean of values[first..last]. */
static double spread(const double *values, size_t first, size_t last)
{
	double mean = 0, sum = 0;
	for (size_t i = first; i <= last; i++)
		mean += values[i];
	mean /= (double)(last - first + 1);
	for (size_t i = first; i <= last; i++)
		sum += (values[i] - mean) * (values[i] - mean);
	return sum;
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
	smooth_log(ns, n, raw, smooth);
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
	/* More levels than expected: merge the neighbours whose union adds
	 * least to the spread (sum of squared deviations of log latency),
	 * which keeps a long plateau from being swallowed for the sake of a
	 * short one beside it. */
	while (options->expected_levels > 0 && found > options->expected_levels) {
		size_t best = found;
		double best_cost = INFINITY;
		for (size_t k = 0; k + 1 < found; k++) {
			if (!(levels[k + 1].ns / levels[k].ns < options->expected_merge_ratio))
				continue;
			double cost = spread(smooth, levels[k].first_index, levels[k + 1].last_index) -
			              spread(smooth, levels[k].first_index, levels[k].last_index) -
			              spread(smooth, levels[k + 1].first_index, levels[k + 1].last_index);
			if (cost < best_cost) {
				best_cost = cost;
				best = k;
			}
		}
		if (best == found)
			break;
		levels[best].last_index = levels[best + 1].last_index;
		levels[best].ns = exp(median_of(raw, levels[best].first_index, levels[best].last_index));
		for (size_t k = best + 1; k + 1 < found; k++)
			levels[k] = levels[k + 1];
		found--;
	}
	/* Merging can leave a later level below an earlier one only on a
	 * curve that falls; keep the levels increasing by dropping those. */
	size_t kept = 0;
	for (size_t k = 0; k < found; k++)
		if (kept == 0 || levels[k].ns > levels[kept - 1].ns)
			levels[kept++] = levels[k];
	found = kept;
	/* 4. boundaries.  The walk up from a plateau is bounded by the next
	 * level's last point, not its first: merging can pull transition
	 * points into the next level, and those still belong below the
	 * half-way mark.  The next level then starts after the boundary. */
	for (size_t k = 0; k + 1 < found; k++) {
		latency_level *l = &levels[k], *next = &levels[k + 1];
		/* The next level's latency is the lowest (smoothed) latency in
		 * the octave that starts an octave past the boundary: just past
		 * it, part of the loads still hit this level, which would pull
		 * the half-way mark (and the boundary) down; far past it, and at
		 * any point where another program evicted a shared level, the
		 * latency is pushed up, and such effects only ever add.  The
		 * estimate depends on the boundary, so repeat until the boundary
		 * stays put. */
		size_t previous_end = SIZE_MAX;
		for (int round = 0; round < 8; round++) {
			double limit = log(0.5 * (l->ns + next->ns));
			size_t end = l->last_index;
			while (end > l->first_index && smooth[end] > limit)
				end--;
			while (end + 1 <= next->last_index && smooth[end + 1] <= limit)
				end++;
			if (end >= next->last_index)
				end = next->last_index - 1;   /* keep at least one point of the next level */
			l->end_index = end;
			if (next->first_index <= end)
				next->first_index = end + 1;
			size_t from = next->first_index;
			while (from < next->last_index && bytes[from] < 2 * bytes[end])
				from++;
			size_t to = from;
			while (to < next->last_index && bytes[to + 1] <= 4 * bytes[end])
				to++;
			double lowest = smooth[from];
			for (size_t i = from + 1; i <= to; i++)
				if (smooth[i] < lowest)
					lowest = smooth[i];
			next->ns = exp(lowest);
			/* The last level (memory) has no level after it to push its
			 * far points up, and a shared L3 smears its end over octaves
			 * (conflicts, other tenants): the lowest point two octaves
			 * past the boundary can still be half L3 hits.  Its latency
			 * is its plateau past 2x the boundary: the longest of the
			 * runs (cut greedily from there) whose smoothed latencies
			 * stay within flat_ratio, when it has min_points points; a
			 * transition that still rises leaves only short runs.  Not
			 * the far tail: on a virtual machine the latency keeps
			 * rising over the octaves past memory's plateau (the host's
			 * nested page walks), and one burst there read memory at
			 * 238 ns against a plateau of 130-140 ns, which also moved
			 * the half-way mark, and the L3's end, from 9.5 to 45 MiB. */
			if (k + 2 == found) {
				size_t best_first = 0, best_length = 0;
				for (size_t start = from; start <= next->last_index;) {
					double lo = smooth[start], hi = smooth[start];
					size_t stop = start;
					while (stop < next->last_index) {
						double v = smooth[stop + 1];
						double nlo = v < lo ? v : lo, nhi = v > hi ? v : hi;
						if (nhi - nlo > flat)
							break;
						lo = nlo;
						hi = nhi;
						stop++;
					}
					if (stop - start + 1 > best_length) {
						best_first = start;
						best_length = stop - start + 1;
					}
					start = stop + 1;
				}
				if (best_length >= options->min_points)
					next->ns = exp(median_of(raw, best_first, best_first + best_length - 1));
			}
			if (end == previous_end)
				break;
			previous_end = end;
		}
	}
	for (size_t k = 0; k < found; k++) {
		latency_level *l = &levels[k];
		if (l->last_index > l->end_index && k + 1 < found)
			l->last_index = l->end_index;
		l->ns_low = l->ns_high = ns[l->first_index];
		for (size_t i = l->first_index; i <= l->last_index; i++) {
			if (ns[i] < l->ns_low) l->ns_low = ns[i];
			if (ns[i] > l->ns_high) l->ns_high = ns[i];
		}
		l->open_ended = k + 1 == found;
		if (l->open_ended)
			l->end_index = n - 1;
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

/* Where level l ends on one pass's smoothed curve: the half-way rule of
 * latency_find_levels (step 4) with the envelope's level latencies,
 * starting from the envelope's end. */
static size_t pass_end(const double *smooth, const latency_level *l, const latency_level *next)
{
	double limit = log(0.5 * (l->ns + next->ns));
	size_t end = l->end_index;
	while (end > l->first_index && smooth[end] > limit)
		end--;
	while (end + 1 < next->last_index && smooth[end + 1] <= limit)
		end++;
	return end;
}

int latency_levels_of_passes(const uint64_t *bytes, const double *pass_ns, size_t passes, size_t n,
                             unsigned points_per_octave, const latency_plateau_options *options,
                             latency_level *levels, latency_boundary_spread *spreads, size_t capacity, size_t *count,
                             plumb_status *status)
{
	*count = 0;
	if (!pass_ns || !spreads || passes == 0 || points_per_octave == 0)
		return plumb_fail(status, EINVAL, "latency_levels_of_passes: need at least one pass and a sweep density");
	for (size_t i = 0; i < n; i++)
		if (!(pass_ns[i] > 0) || !isfinite(pass_ns[i]))
			return plumb_fail(status, EINVAL, "the first pass has no latency at point %zu", i);
	double *envelope = malloc((n ? n : 1) * sizeof *envelope), *curve = malloc((n ? n : 1) * sizeof *curve);
	double *raw = malloc((n ? n : 1) * sizeof *raw), *smooth = malloc((n ? n : 1) * sizeof *smooth);
	if (!envelope || !curve || !raw || !smooth) {
		free(envelope); free(curve); free(raw); free(smooth);
		return plumb_fail_errno(status, ENOMEM, "latency_levels_of_passes: out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		envelope[i] = pass_ns[i];
		for (size_t p = 1; p < passes; p++) {
			double v = pass_ns[p * n + i];
			if (v > 0 && isfinite(v) && v < envelope[i])
				envelope[i] = v;
		}
	}
	int rc = latency_find_levels(bytes, envelope, n, options, levels, capacity, count, status);
	for (size_t k = 0; rc == 0 && k < *count; k++) {
		latency_boundary_spread *s = &spreads[k];
		memset(s, 0, sizeof *s);
		s->stable = true;
		if (k + 1 == *count)
			continue;
		size_t end = levels[k].end_index;
		s->low_bytes = s->high_bytes = bytes[end];
		s->passes = 0;
		for (size_t p = 0; p < passes; p++) {
			const double *row = pass_ns + p * n;
			bool near = p == 0;
			for (size_t i = end > 0 ? end - 1 : 0; i <= end + 1 && i < n && !near; i++)
				near = row[i] > 0 && isfinite(row[i]);
			if (!near)
				continue;
			s->passes++;
			for (size_t i = 0; i < n; i++)
				curve[i] = row[i] > 0 && isfinite(row[i]) ? row[i] : pass_ns[i];
			smooth_log(curve, n, raw, smooth);
			uint64_t b = bytes[pass_end(smooth, &levels[k], &levels[k + 1])];
			if (b < s->low_bytes)
				s->low_bytes = b;
			if (b > s->high_bytes)
				s->high_bytes = b;
		}
		s->spread_steps = log2((double)s->high_bytes / (double)s->low_bytes) * points_per_octave;
		s->stable = s->spread_steps <= LATENCY_STABLE_STEPS + 0.01;
	}
	free(envelope); free(curve); free(raw); free(smooth);
	return rc;
}
