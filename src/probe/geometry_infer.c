/* Geometry inference: reads measured latency curves and returns the cache
 * and TLB geometry they imply.  Pure functions of their input, so the
 * tests can feed them synthetic curves and expect exact answers. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/geometry.h"
#include "plumb/stats.h"

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
	*memory_ns = NAN;
	geometry_tolerance tolerance = { .relative = 0.25, .absolute_ns = 0, .min_points = 2 };
	geometry_plateau found[GEOMETRY_MAX_PLATEAUS], kept[GEOMETRY_MAX_PLATEAUS];
	int count = geometry_find_plateaus(curve, &tolerance, found, GEOMETRY_MAX_PLATEAUS);
	/* Levels differ by far more than noise (x2.5 and more on current
	 * CPUs), so plateaus within x2 of each other are one level that a
	 * disturbance or a gradual edge (scattered physical pages, TLB reach)
	 * split, and are merged; a plateau at least x2 higher than what
	 * follows it was a disturbance (another program's burst), and is
	 * dropped. */
	int k = 0;
	for (int i = 0; i < count; i++) {
		geometry_plateau p = found[i];
		while (k > 0 && p.ns * 2 <= kept[k - 1].ns)
			k--;
		if (k > 0 && p.ns < kept[k - 1].ns * 2) {
			geometry_plateau *top = &kept[k - 1];
			top->last = p.last;
			top->x_last = p.x_last;
			top->x_next = p.x_next;
			top->ns = stats_median(curve->ns + top->first, top->last - top->first + 1);
			continue;
		}
		kept[k++] = p;
	}
	/* With more plateaus than the expected levels plus memory, the two
	 * closest in latency are one level cut in two by a gradual edge. */
	while (expected_levels > 0 && k > expected_levels + 1) {
		int closest = 0;
		for (int i = 1; i + 1 < k; i++)
			if (kept[i + 1].ns / kept[i].ns < kept[closest + 1].ns / kept[closest].ns)
				closest = i;
		geometry_plateau *a = &kept[closest];
		const geometry_plateau *b = &kept[closest + 1];
		a->last = b->last;
		a->x_last = b->x_last;
		a->x_next = b->x_next;
		a->ns = stats_median(curve->ns + a->first, a->last - a->first + 1);
		for (int i = closest + 1; i + 1 < k; i++)
			kept[i] = kept[i + 1];
		k--;
	}
	if (k == 0)
		return 0;
	*memory_ns = kept[k - 1].ns;
	/* The crossing of the middle latency is looked for from the start of
	 * the level's plateau, on the smoothed curve: a merged plateau may
	 * already reach past the middle at its end. */
	size_t n = curve->n;
	double *smooth = malloc(n * sizeof *smooth);
	if (!smooth)
		return 0;
	for (size_t i = 0; i < n; i++)
		smooth[i] = (i == 0 || i + 1 == n) ? curve->ns[i] : median3(curve->ns[i - 1], curve->ns[i], curve->ns[i + 1]);
	int levels_found = 0;
	for (int i = 0; i + 1 < k && levels_found < max; i++) {
		double middle = sqrt(kept[i].ns * kept[i + 1].ns);
		size_t j = kept[i].first + 1;
		while (j < kept[i + 1].first && smooth[j] < middle)
			j++;
		geometry_cache_estimate *e = &levels[levels_found++];
		e->ns = kept[i].ns;
		e->capacity_low = curve->x[j - 1];
		e->capacity_high = curve->x[j];
	}
	free(smooth);
	return levels_found;
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
