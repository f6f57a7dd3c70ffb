/* TLB experiments, on small (4 KiB) pages.
 *
 * Entries: a random cycle through one line in each of N pages.  Lines sit
 * at a rotating offset inside their page ((i mod 64) lines in), so N lines
 * spread over all cache sets just as N contiguous lines do; the control
 * curve is exactly that, N contiguous lines on 2 MiB pages (almost no TLB
 * misses), so the difference of the two is the TLB's share.  Pages are
 * `page_stride` apart; plumb geometry uses consecutive pages: with every
 * other page, a set-associative second-level TLB sees only half its sets
 * (measured here: misses from 1117 pages instead of 2233).  A CPU that
 * coalesces neighbouring translations into one entry would show more
 * entries than CPUID claims, and the finding would say so.
 *
 * Page size: `lines` lines at stride s (Saavedra's method, with the order
 * randomised against the prefetchers, block by block).  The lines touch
 * lines * s / page distinct pages below the page size and `lines` pages
 * from it on.  With lines = twice a power of two at or above the L1 TLB's
 * entry count E (lines/2 <= E < lines), the pages fit the L1 TLB up to
 * s = page / 2 and overflow it from s = page on; past the page the count
 * of pages stops growing, so the curve is flat from the page size on.
 * The lines stay few (128 for E = 72: 8 KiB, L1-resident), so neither the
 * data caches nor the page walks (lines <= second-level TLB entries even
 * when a large stride uses only some of its sets) move the curve. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "core/arena.h"
#include "chase/permutation.h"
#include "geometry/geometry_chain.h"

static int make_arena(arena *a, size_t size, arena_pages pages, plumb_status *status)
{
	arena_request request = { .size = size, .pages = pages, .fault = ARENA_FAULT_FIRST_TOUCH,
	                          .alignment = pages == ARENA_PAGES_THP ? 2u << 20 : 0 };
	return arena_create(a, &request, status);
}

int geometry_probe_tlb(const geometry_options *options, uint64_t from, uint64_t to, int points_per_octave,
                       uint64_t page_stride, geometry_curve *pages, geometry_curve *control, plumb_status *status)
{
	if (from < 2 || to < from || to > (1u << 20) || points_per_octave < 1 || page_stride < 4096 || page_stride % 4096)
		return plumb_fail(status, EINVAL, "tlb probe: pages %llu..%llu, stride %llu not supported",
		                  (unsigned long long)from, (unsigned long long)to, (unsigned long long)page_stride);
	size_t n = (size_t)floor(log2((double)to / (double)from) * points_per_octave + 1e-9) + 1;
	if (geometry_curve_init(pages, n, status) != 0)
		return -1;
	if (geometry_curve_init(control, n, status) != 0) {
		geometry_curve_free(pages);
		return -1;
	}
	arena spread, dense;
	uint32_t *order = malloc(to * sizeof *order);
	void ***slots = malloc(to * sizeof *slots);
	int rc = -1;
	if (!order || !slots) {
		plumb_fail(status, ENOMEM, "out of memory");
		goto out;
	}
	if (make_arena(&spread, to * page_stride, ARENA_PAGES_SMALL, status) != 0)
		goto out;
	if (make_arena(&dense, to * 64, ARENA_PAGES_THP, status) != 0) {
		arena_destroy(&spread);
		goto out;
	}
	rc = 0;
	size_t previous = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t count = (size_t)llround((double)from * pow(2.0, (double)i / points_per_octave));
		if (count <= previous)
			count = previous + 1;
		previous = count;
		pages->x[i] = control->x[i] = (double)count;
		rc = permutation_random(order, count, options->seed + count, status);
		if (rc != 0)
			break;
		for (size_t k = 0; k < count; k++)
			slots[k] = (void **)((char *)spread.base + k * page_stride + (k % 64) * 64);
		void *start = geometry_link((void **const *)slots, order, count);
		rc = geometry_measure_chain(options, start, count, 16 * count, pages, i, status);
		if (rc != 0)
			break;
		for (size_t k = 0; k < count; k++)
			slots[k] = (void **)((char *)dense.base + k * 64);
		start = geometry_link((void **const *)slots, order, count);
		rc = geometry_measure_chain(options, start, count, 16 * count, control, i, status);
	}
	arena_destroy(&spread);
	arena_destroy(&dense);
out:
	free(order);
	free(slots);
	if (rc != 0) {
		geometry_curve_free(pages);
		geometry_curve_free(control);
	}
	return rc;
}

int geometry_probe_page_size(const geometry_options *options, size_t lines, uint64_t max_stride, uint64_t block,
                             arena_pages pages, double *huge_fraction, geometry_curve *curve,
                             plumb_status *status)
{
	if (lines < 64 || lines > (1u << 20) || max_stride < 128 || block < 64)
		return plumb_fail(status, EINVAL, "page-size probe: %zu lines, stride up to %llu not supported", lines,
		                  (unsigned long long)max_stride);
	size_t n = 0;
	for (uint64_t s = 64; s <= max_stride; s *= 2)
		n++;
	if (geometry_curve_init(curve, n, status) != 0)
		return -1;
	arena spread;
	uint32_t *order = malloc(lines * sizeof *order);
	void ***slots = malloc(lines * sizeof *slots);
	int rc = -1;
	if (!order || !slots) {
		plumb_fail(status, ENOMEM, "out of memory");
		goto out;
	}
	if (make_arena(&spread, lines * max_stride + 4096, pages, status) != 0)
		goto out;
	rc = 0;
	size_t i = 0;
	for (uint64_t s = 64; s <= max_stride && rc == 0; s *= 2, i++) {
		curve->x[i] = (double)s;
		size_t per_block = block > s ? block / s : 1;
		rc = permutation_page_grouped(order, lines, per_block, options->seed + s, status);
		if (rc != 0)
			break;
		/* Shift the line inside its stride by one line per 4 KiB page, so
		 * the lines cover all 64 sets of an L1 instead of the few that a
		 * power-of-two stride alone would hit. */
		uint64_t per_page = s < 4096 ? 4096 / s : 1;
		uint64_t shifts = (s < 4096 ? s : 4096) / 64;
		for (size_t k = 0; k < lines; k++)
			slots[k] = (void **)((char *)spread.base + k * s + ((k / per_page) % shifts) * 64);
		void *start = geometry_link((void **const *)slots, order, lines);
		rc = geometry_measure_chain(options, start, lines, 16 * lines, curve, i, status);
	}
	if (huge_fraction) {
		plumb_status ignored;
		*huge_fraction = NAN;
		if (arena_inspect(&spread, &ignored) == 0 && spread.resident_bytes > 0)
			*huge_fraction = (double)spread.anon_huge_bytes / (double)spread.resident_bytes;
	}
	arena_destroy(&spread);
out:
	free(order);
	free(slots);
	if (rc != 0)
		geometry_curve_free(curve);
	return rc;
}
