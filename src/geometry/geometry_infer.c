/* Geometry inference: reads measured latency curves and returns the cache
 * and TLB geometry they imply.  Pure functions of their input, so the
 * tests can feed them synthetic curves and expect exact answers. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "geometry/geometry.h"
#include "core/stats.h"
#include "geometry/geometry_chain.h"

int geometry_curve_init(geometry_curve *curve, size_t n, plumb_status *status)
{
	memset(curve, 0, sizeof *curve);
	curve->x = calloc(n ? n : 1, sizeof *curve->x);
	curve->ns = calloc(n ? n : 1, sizeof *curve->ns);
	curve->cv = calloc(n ? n : 1, sizeof *curve->cv);
	curve->noisy = calloc(n ? n : 1, sizeof *curve->noisy);
	if (!curve->x || !curve->ns || !curve->cv || !curve->noisy) {
		geometry_curve_free(curve);
		return plumb_fail(status, ENOMEM, "out of memory for a curve of %zu points", n);
	}
	curve->n = n;
	return 0;
}

void geometry_curve_free(geometry_curve *curve)
{
	free(curve->x);
	free(curve->ns);
	free(curve->cv);
	free(curve->noisy);
	memset(curve, 0, sizeof *curve);
}

static double median3(double a, double b, double c)
{
	if (a > b) { double t = a; a = b; b = t; }
	if (b > c) { double t = b; b = c; c = t; }
	if (a > b) { double t = a; a = b; b = t; }
	return b;
}

int geometry_find_plateaus(const geometry_curve *curve, const geometry_tolerance *tolerance,
                           geometry_plateau *plateaus, int max)
{
	size_t n = curve->n;
	if (n == 0 || max < 1)
		return 0;
	double *smooth = malloc(n * sizeof *smooth);
	if (!smooth)
		return 0;
	for (size_t i = 0; i < n; i++)
		smooth[i] = (i == 0 || i + 1 == n) ? curve->ns[i] : median3(curve->ns[i - 1], curve->ns[i], curve->ns[i + 1]);
	size_t min_points = tolerance->min_points ? tolerance->min_points : 1;
	int count = 0;
	size_t i = 0;
	while (i < n && count < max) {
		double low = smooth[i], high = smooth[i];
		size_t j = i;
		while (j + 1 < n) {
			double v = smooth[j + 1];
			double new_low = v < low ? v : low, new_high = v > high ? v : high;
			if (new_high > new_low * (1 + tolerance->relative) + tolerance->absolute_ns)
				break;
			low = new_low;
			high = new_high;
			j++;
		}
		if (j - i + 1 >= min_points) {
			geometry_plateau *p = &plateaus[count++];
			p->first = i;
			p->last = j;
			p->ns = stats_median(curve->ns + i, j - i + 1);
			p->x_last = curve->x[j];
			p->x_next = j + 1 < n ? curve->x[j + 1] : 0;
			i = j + 1;
		} else {
			i++;
		}
	}
	free(smooth);
	return count;
}

int geometry_infer_levels(const geometry_curve *curve, int expected_levels, geometry_cache_estimate *levels,
                          int max, double *memory_ns)
{
	/* plumb lat's detector (latency_find_levels): the old one here put the
	 * boundary where the latency first passed the geometric mean of two
	 * plateaus, and on medians, so a level whose edge is gradual (random
	 * chains in a physically indexed cache on scattered pages) or a point
	 * disturbed by a neighbour ended it one or two steps early. */
	*memory_ns = NAN;
	size_t n = curve->n;
	if (n == 0 || max < 1)
		return 0;
	uint64_t *bytes = malloc(n * sizeof *bytes);
	if (!bytes)
		return 0;
	for (size_t i = 0; i < n; i++)
		bytes[i] = curve->x[i] > 0 ? (uint64_t)llround(curve->x[i]) : 0;
	latency_plateau_options plateau;
	geometry_level_options(expected_levels, &plateau);
	latency_level found[LATENCY_MAX_LEVELS];
	size_t count = 0;
	plumb_status ignored;
	if (latency_find_levels(bytes, curve->ns, n, &plateau, found, LATENCY_MAX_LEVELS, &count, &ignored) != 0)
		count = 0;
	free(bytes);
	if (count == 0)
		return 0;
	*memory_ns = found[count - 1].ns;
	int cache_levels = 0;
	for (size_t k = 0; k + 1 < count && cache_levels < max; k++) {
		geometry_cache_estimate *e = &levels[cache_levels++];
		e->ns = found[k].ns;
		e->capacity_low = curve->x[found[k].end_index];
		e->capacity_high = curve->x[found[k].end_index + 1];
	}
	return cache_levels;
}

int geometry_infer_line_size(const geometry_curve *curve, double *line)
{
	*line = NAN;
	if (curve->n < 3)
		return -1;
	/* Low end: the fastest of the first half (one disturbed point at the
	 * start must not hide the step); high end: the last two points. */
	double low = curve->ns[0];
	for (size_t i = 1; i <= curve->n / 2; i++)
		if (curve->ns[i] < low)
			low = curve->ns[i];
	double high = stats_median(curve->ns + curve->n - 2, 2);
	if (!(high >= low * 1.15))
		return -1;
	double middle = (low + high) / 2;
	/* The line: the smallest distance from which every point is past the
	 * middle. */
	size_t from = curve->n;
	while (from > 1 && curve->ns[from - 1] >= middle)
		from--;
	if (from == curve->n)
		return -1;
	*line = curve->x[from];
	return 0;
}

int geometry_infer_ways(const geometry_curve *curve, double threshold_ns, double *ways)
{
	*ways = NAN;
	size_t n = curve->n;
	if (n == 0)
		return -1;
	/* A running median of 3, so one disturbed count neither ends nor
	 * hides the step. */
	double *smooth = malloc(n * sizeof *smooth);
	if (!smooth)
		return -1;
	for (size_t i = 0; i < n; i++)
		smooth[i] = (i == 0 || i + 1 == n) ? curve->ns[i] : median3(curve->ns[i - 1], curve->ns[i], curve->ns[i + 1]);
	int rc = -1;
	if (smooth[0] <= threshold_ns) {
		*ways = curve->x[n - 1];
		for (size_t i = 1; i < n; i++)
			if (smooth[i] > threshold_ns) {
				*ways = curve->x[i - 1];
				rc = 0;
				break;
			}
	}
	free(smooth);
	return rc;
}

int geometry_infer_tlb(const geometry_curve *pages, const geometry_curve *control, double *entries,
                       double *entries_upper, double *penalty_ns, int max)
{
	if (pages->n != control->n || pages->n < 2)
		return 0;
	geometry_curve penalty;
	if (geometry_curve_init(&penalty, pages->n, NULL) != 0)
		return 0;
	for (size_t i = 0; i < pages->n; i++) {
		penalty.x[i] = pages->x[i];
		double p = pages->ns[i] - control->ns[i];
		penalty.ns[i] = p > 0 ? p : 0;
	}
	/* A TLB level is a step of a nanosecond or more on top of the same
	 * cache behaviour.  Plateaus need 3 points, so the gradual climb of
	 * page-walk costs past the last TLB (page-table lines falling out of
	 * the caches) does not read as more levels; and each level must end a
	 * plateau that something higher follows. */
	geometry_tolerance tolerance = { .relative = 0.3, .absolute_ns = 0.75, .min_points = 3 };
	geometry_plateau plateaus[GEOMETRY_MAX_PLATEAUS];
	int found = geometry_find_plateaus(&penalty, &tolerance, plateaus, GEOMETRY_MAX_PLATEAUS);
	int levels = 0;
	for (int k = 0; k < found && levels < max; k++) {
		size_t after = plateaus[k].last + 1;
		if (after >= penalty.n)
			break;
		double next = k + 1 < found ? plateaus[k + 1].ns : stats_median(penalty.ns + after, penalty.n - after);
		if (!(next > plateaus[k].ns * 1.3 + 0.75))
			continue;
		entries[levels] = plateaus[k].x_last;
		entries_upper[levels] = plateaus[k].x_next;
		penalty_ns[levels] = next;
		levels++;
	}
	geometry_curve_free(&penalty);
	return levels;
}

bool geometry_curve_is_flat(const geometry_curve *curve, double ratio)
{
	if (curve->n == 0 || !(curve->ns[0] > 0))
		return false;
	for (size_t i = 1; i < curve->n; i++)
		if (!(curve->ns[i] < curve->ns[0] * ratio))
			return false;
	return true;
}

int geometry_infer_page_size(const geometry_curve *curve, double *page)
{
	*page = NAN;
	if (curve->n < 3)
		return -1;
	/* Tight tolerance: below the page, doubling the stride doubles the
	 * misses per load, so neighbouring points differ by a clear step. */
	geometry_tolerance tolerance = { .relative = 0.12, .absolute_ns = 0.2, .min_points = 2 };
	geometry_plateau plateaus[GEOMETRY_MAX_PLATEAUS];
	int found = geometry_find_plateaus(curve, &tolerance, plateaus, GEOMETRY_MAX_PLATEAUS);
	if (found < 1)
		return -1;
	const geometry_plateau *last = &plateaus[found - 1];
	if (last->last + 1 != curve->n || last->first == 0)
		return -1;
	if (!(last->ns >= curve->ns[0] * 1.15))
		return -1;
	*page = curve->x[last->first];
	return 0;
}
