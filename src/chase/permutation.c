/* Visit orders for pointer-chase chains (see src/chase/permutation.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "chase/permutation.h"

void permutation_rng_seed(permutation_rng *rng, uint64_t seed)
{
	rng->state = seed;
}

uint64_t permutation_rng_next(permutation_rng *rng)
{
	uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t permutation_rng_below(permutation_rng *rng, uint64_t bound)
{
	/* Rejection on the top of the range: every value in [0, bound) has
	 * the same number of preimages, so a shuffle stays uniform. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
	uint64_t x;
	do
		x = permutation_rng_next(rng);
	while (x >= limit);
	return x % bound;
}

static int check_count(size_t count, plumb_status *status)
{
	if (count == 0)
		return plumb_fail(status, EINVAL, "a chain needs at least one slot");
	if (count > PERMUTATION_MAX_COUNT)
		return plumb_fail(status, EINVAL, "a chain of %zu slots is too long (at most %zu)", count,
		                  PERMUTATION_MAX_COUNT);
	return 0;
}

/* Fisher-Yates on order[first..first+length). */
static void shuffle(uint32_t *order, size_t length, permutation_rng *rng)
{
	for (size_t i = length; i > 1; i--) {
		size_t j = (size_t)permutation_rng_below(rng, i);
		uint32_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

int permutation_random(uint32_t *order, size_t count, uint64_t seed, plumb_status *status)
{
	if (check_count(count, status) != 0)
		return -1;
	permutation_rng rng;
	permutation_rng_seed(&rng, seed);
	for (size_t i = 0; i < count; i++)
		order[i] = (uint32_t)i;
	shuffle(order, count, &rng);
	return 0;
}

int permutation_page_grouped(uint32_t *order, size_t count, size_t slots_per_page, uint64_t seed,
                             plumb_status *status)
{
	if (check_count(count, status) != 0)
		return -1;
	if (slots_per_page == 0)
		return plumb_fail(status, EINVAL, "a page must hold at least one slot");
	size_t pages = (count + slots_per_page - 1) / slots_per_page;
	/* The page order is shuffled in a scratch array of its own, then each
	 * page's slots are written out and shuffled in place. */
	uint32_t *page_order = malloc(pages * sizeof *page_order);
	if (!page_order)
		return plumb_fail_errno(status, ENOMEM, "cannot allocate a page order of %zu pages", pages);
	permutation_rng rng;
	permutation_rng_seed(&rng, seed);
	for (size_t p = 0; p < pages; p++)
		page_order[p] = (uint32_t)p;
	shuffle(page_order, pages, &rng);
	size_t at = 0;
	for (size_t p = 0; p < pages; p++) {
		size_t first = (size_t)page_order[p] * slots_per_page;
		size_t length = count - first < slots_per_page ? count - first : slots_per_page;
		for (size_t s = 0; s < length; s++)
			order[at + s] = (uint32_t)(first + s);
		shuffle(order + at, length, &rng);
		at += length;
	}
	free(page_order);
	return 0;
}

int permutation_strided(uint32_t *order, size_t count, size_t stride_slots, plumb_status *status)
{
	if (check_count(count, status) != 0)
		return -1;
	if (stride_slots == 0)
		return plumb_fail(status, EINVAL, "the stride must be at least one slot");
	size_t at = 0;
	size_t phases = stride_slots < count ? stride_slots : count;
	for (size_t phase = 0; phase < phases; phase++)
		for (size_t i = phase; i < count; i += stride_slots)
			order[at++] = (uint32_t)i;
	return 0;
}

size_t permutation_bit_reverse(size_t index, unsigned bits)
{
	size_t reversed = 0;
	for (unsigned b = 0; b < bits; b++)
		if (index & ((size_t)1 << b))
			reversed |= (size_t)1 << (bits - b - 1);
	return reversed;
}

int permutation_lmbench(uint32_t *order, size_t count, size_t slots_per_page, uint64_t seed, plumb_status *status)
{
	if (check_count(count, status) != 0)
		return -1;
	if (slots_per_page == 0 || (slots_per_page & (slots_per_page - 1)))
		return plumb_fail(status, EINVAL, "lmbench's order needs a power-of-two number of slots per page, not %zu",
		                  slots_per_page);
	unsigned bits = 0;
	while (((size_t)1 << bits) < slots_per_page)
		bits++;
	size_t pages = (count + slots_per_page - 1) / slots_per_page;
	uint32_t *page_order = malloc(pages * sizeof *page_order);
	if (!page_order)
		return plumb_fail_errno(status, ENOMEM, "cannot allocate a page order of %zu pages", pages);
	permutation_rng rng;
	permutation_rng_seed(&rng, seed);
	for (size_t p = 0; p < pages; p++)
		page_order[p] = (uint32_t)p;
	shuffle(page_order, pages, &rng);
	size_t at = 0;
	for (size_t p = 0; p < pages; p++) {
		size_t first = (size_t)page_order[p] * slots_per_page;
		for (size_t j = 0; j < slots_per_page; j++) {
			size_t slot = first + permutation_bit_reverse(j, bits);
			if (slot < count)
				order[at++] = (uint32_t)slot;
		}
	}
	free(page_order);
	return 0;
}

int permutation_lmbench_thrash(uint32_t *order, size_t count, size_t slots_per_page, uint64_t seed,
                               plumb_status *status)
{
	if (check_count(count, status) != 0)
		return -1;
	if (slots_per_page == 0 || (slots_per_page & (slots_per_page - 1)))
		return plumb_fail(status, EINVAL, "lmbench's order needs a power-of-two number of slots per page, not %zu",
		                  slots_per_page);
	unsigned bits = 0;
	if (count % slots_per_page) {
		/* Not whole pages: lmbench chains words_initialize(count) itself. */
		if (count & (count - 1))
			return plumb_fail(status, EINVAL, "lmbench's thrash order needs whole pages or a power-of-two number "
			                  "of slots, not %zu", count);
		while (((size_t)1 << bits) < count)
			bits++;
		for (size_t i = 0; i < count; i++)
			order[i] = (uint32_t)permutation_bit_reverse(i, bits);
		return 0;
	}
	while (((size_t)1 << bits) < slots_per_page)
		bits++;
	size_t pages = count / slots_per_page;
	uint32_t *page_order = malloc(pages * sizeof *page_order);
	if (!page_order)
		return plumb_fail_errno(status, ENOMEM, "cannot allocate a page order of %zu pages", pages);
	permutation_rng rng;
	permutation_rng_seed(&rng, seed);
	for (size_t p = 0; p < pages; p++)
		page_order[p] = (uint32_t)p;
	shuffle(page_order, pages, &rng);
	size_t at = 0;
	for (size_t round = 0; round < slots_per_page; round++)
		for (size_t p = 0; p < pages; p++)
			order[at++] = (uint32_t)((size_t)page_order[p] * slots_per_page +
			                         permutation_bit_reverse((p + round) % slots_per_page, bits));
	free(page_order);
	return 0;
}

int permutation_backward(uint32_t *order, size_t count, plumb_status *status)
{
	if (check_count(count, status) != 0)
		return -1;
	for (size_t i = 0; i < count; i++)
		order[i] = (uint32_t)(count - 1 - i);
	return 0;
}

int permutation_word_mixer(uint32_t *mixer, size_t words_per_slot, uint64_t seed, plumb_status *status)
{
	if (words_per_slot == 0 || words_per_slot > UINT32_MAX)
		return plumb_fail(status, EINVAL, "a slot must hold at least one word");
	permutation_rng rng;
	permutation_rng_seed(&rng, seed ^ 0x6d69786572ULL);   /* "mixer" */
	for (size_t i = 0; i < PERMUTATION_MIXER_SLOTS; i++)
		mixer[i] = (uint32_t)permutation_rng_below(&rng, words_per_slot);
	return 0;
}

bool permutation_is_complete(const uint32_t *order, size_t count)
{
	if (count == 0 || count > PERMUTATION_MAX_COUNT)
		return false;
	unsigned char *seen = calloc((count + 7) / 8, 1);
	if (!seen)
		return false;
	bool complete = true;
	for (size_t i = 0; i < count && complete; i++) {
		uint32_t v = order[i];
		if (v >= count || (seen[v / 8] & (1u << (v % 8))))
			complete = false;
		else
			seen[v / 8] |= (unsigned char)(1u << (v % 8));
	}
	free(seen);
	return complete;
}
