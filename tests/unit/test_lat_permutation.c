/* Visit orders and chains: every chain is one cycle through every slot,
 * the page-grouped order finishes a page before starting another, and
 * orders are a function of the seed. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "chase/chase.h"
#include "chase/permutation.h"

static const size_t counts[] = { 1, 2, 3, 7, 64, 1000, 4096, 65537 };

Test(lat_permutation, random_is_complete_for_many_sizes)
{
	for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
		uint32_t *order = malloc(counts[c] * sizeof *order);
		cr_assert(permutation_random(order, counts[c], 42, NULL) == 0);
		cr_assert(permutation_is_complete(order, counts[c]), "count %zu", counts[c]);
		free(order);
	}
}

Test(lat_permutation, same_seed_same_order_other_seed_differs)
{
	size_t n = 10000;
	uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	cr_assert(permutation_random(a, n, 7, NULL) == 0);
	cr_assert(permutation_random(b, n, 7, NULL) == 0);
	cr_assert(permutation_random(c, n, 8, NULL) == 0);
	cr_assert(memcmp(a, b, n * sizeof *a) == 0);
	cr_assert(memcmp(a, c, n * sizeof *a) != 0);
	cr_assert(permutation_page_grouped(a, n, 64, 9, NULL) == 0);
	cr_assert(permutation_page_grouped(b, n, 64, 9, NULL) == 0);
	cr_assert(memcmp(a, b, n * sizeof *a) == 0);
	free(a);
	free(b);
	free(c);
}

Test(lat_permutation, random_order_is_not_sequential)
{
	/* A shuffle that left long ascending runs would let a stride
	 * prefetcher help; count successors that are the next slot. */
	size_t n = 65536, sequential = 0;
	uint32_t *order = malloc(n * sizeof *order);
	cr_assert(permutation_random(order, n, 1, NULL) == 0);
	for (size_t i = 0; i + 1 < n; i++)
		sequential += order[i + 1] == order[i] + 1;
	cr_assert_lt(sequential, 20);   /* expected about 1 */
	free(order);
}

Test(lat_permutation, page_grouped_visits_each_page_once_in_full)
{
	size_t spp = 64;
	size_t sizes[] = { 64, 640, 1000, 64 * 512 + 5 };
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t n = sizes[s];
		size_t pages = (n + spp - 1) / spp;
		uint32_t *order = malloc(n * sizeof *order);
		char *page_seen = calloc(pages, 1);
		cr_assert(permutation_page_grouped(order, n, spp, 3, NULL) == 0);
		cr_assert(permutation_is_complete(order, n));
		size_t i = 0;
		while (i < n) {
			size_t page = order[i] / spp;
			cr_assert(!page_seen[page], "page %zu visited twice", page);
			page_seen[page] = 1;
			size_t in_page = (page + 1) * spp <= n ? spp : n - page * spp;
			for (size_t j = 0; j < in_page; j++)
				cr_assert_eq(order[i + j] / spp, page, "slot %zu left page %zu early", i + j, page);
			i += in_page;
		}
		free(order);
		free(page_seen);
	}
}

Test(lat_permutation, page_grouped_shuffles_inside_pages_and_pages)
{
	size_t n = 64 * 256, spp = 64, in_order_pages = 0, ascending_pairs = 0;
	uint32_t *order = malloc(n * sizeof *order);
	cr_assert(permutation_page_grouped(order, n, spp, 5, NULL) == 0);
	for (size_t p = 0; p + 1 < n / spp; p++)
		in_order_pages += order[(p + 1) * spp] / spp == order[p * spp] / spp + 1;
	for (size_t i = 0; i + 1 < n; i++)
		ascending_pairs += order[i + 1] == order[i] + 1;
	cr_assert_lt(in_order_pages, 10);
	cr_assert_lt(ascending_pairs, n / 16);
	free(order);
}

Test(lat_permutation, strided_order)
{
	uint32_t order[10];
	cr_assert(permutation_strided(order, 10, 3, NULL) == 0);
	uint32_t expect[10] = { 0, 3, 6, 9, 1, 4, 7, 2, 5, 8 };
	cr_assert(memcmp(order, expect, sizeof order) == 0);
	cr_assert(permutation_strided(order, 10, 1, NULL) == 0);
	for (uint32_t i = 0; i < 10; i++)
		cr_assert_eq(order[i], i);
	cr_assert(permutation_strided(order, 10, 25, NULL) == 0);
	cr_assert(permutation_is_complete(order, 10));
}

Test(lat_permutation, bad_arguments_fail_with_a_message)
{
	uint32_t order[4];
	plumb_status status = { 0 };
	cr_assert(permutation_random(order, 0, 1, &status) == -1);
	cr_assert(status.message[0]);
	cr_assert(permutation_page_grouped(order, 4, 0, 1, &status) == -1);
	cr_assert(permutation_strided(order, 4, 0, &status) == -1);
	uint32_t duplicate[4] = { 0, 1, 1, 3 };
	cr_assert(!permutation_is_complete(duplicate, 4));
	uint32_t out_of_range[4] = { 0, 1, 2, 4 };
	cr_assert(!permutation_is_complete(out_of_range, 4));
}

Test(lat_permutation, rng_below_stays_in_range)
{
	permutation_rng rng;
	permutation_rng_seed(&rng, 11);
	size_t histogram[5] = { 0 };
	for (int i = 0; i < 50000; i++) {
		uint64_t v = permutation_rng_below(&rng, 5);
		cr_assert_lt(v, 5);
		histogram[v]++;
	}
	for (int i = 0; i < 5; i++)
		cr_assert(histogram[i] > 9000 && histogram[i] < 11000);
}

/* Chains built from every pattern are a single cycle through every slot:
 * following it from the start returns there after exactly `length` steps
 * and touches each slot once. */
static void check_single_cycle(const chase_layout *layout)
{
	size_t capacity = (layout->bytes + 4095) / 4096 * 4096;
	char *base = aligned_alloc(4096, capacity);
	cr_assert(base);
	chase_chain chain;
	plumb_status status;
	cr_assert(chase_build_layout(&chain, base, capacity, layout, &status) == 0, "%s", status.message);
	size_t slots = layout->bytes / layout->slot_bytes;
	cr_assert_eq(chain.length, slots);
	cr_assert_eq(chase_cycle_length(&chain, slots + 1), slots, "%s", chase_pattern_name(layout->pattern));
	char *visited = calloc(slots, 1);
	void **p = chain.start;
	for (size_t i = 0; i < slots; i++) {
		size_t offset = (size_t)((char *)p - base);
		cr_assert_eq(offset % layout->slot_bytes, layout->offset);
		size_t slot = offset / layout->slot_bytes;
		cr_assert(!visited[slot]);
		visited[slot] = 1;
		p = *p;
	}
	cr_assert_eq((void *)p, chain.start);
	free(visited);
	free(base);
}

Test(lat_permutation, chains_are_single_cycles_covering_every_line)
{
	chase_layout random = { .pattern = CHASE_RANDOM, .bytes = 1 << 20, .slot_bytes = 64, .seed = 1 };
	check_single_cycle(&random);
	chase_layout grouped = { .pattern = CHASE_PAGE_GROUPED, .bytes = 1 << 20, .slot_bytes = 64,
	                         .page_bytes = 4096, .seed = 2 };
	check_single_cycle(&grouped);
	chase_layout strided = { .pattern = CHASE_STRIDED, .bytes = 1 << 20, .slot_bytes = 64,
	                         .stride_bytes = 256 };
	check_single_cycle(&strided);
	chase_layout offset = { .pattern = CHASE_RANDOM, .bytes = 64 * 1024, .slot_bytes = 64, .offset = 56,
	                        .seed = 3 };
	check_single_cycle(&offset);
	chase_layout one = { .pattern = CHASE_RANDOM, .bytes = 64, .slot_bytes = 64, .seed = 3 };
	check_single_cycle(&one);
}

Test(lat_permutation, chase_run_follows_the_chain)
{
	size_t n = 1000;
	char *base = aligned_alloc(64, n * 64);
	uint32_t *order = malloc(n * sizeof *order);
	cr_assert(permutation_random(order, n, 4, NULL) == 0);
	chase_chain chain;
	cr_assert(chase_build(&chain, base, n * 64, 64, 0, order, n, NULL) == 0);
	/* 37 loads land on order[37]; a whole lap returns to the start. */
	cr_assert_eq(chase_run(chain.start, 37), base + (size_t)order[37] * 64);
	cr_assert_eq(chase_run(chain.start, n), chain.start);
	cr_assert_eq(chase_run(chain.start, 3 * n + 5), base + (size_t)order[5] * 64);
	/* Work kernels add zero: they walk the same chain. */
	size_t nwork;
	const unsigned *work = chase_work_counts(&nwork);
	for (size_t i = 0; i < nwork; i++)
		cr_assert_eq(chase_run_work(chain.start, 37, work[i], 0), base + (size_t)order[37] * 64);
	cr_assert(!chase_work_supported(17));
	cr_assert_null(chase_run_work(chain.start, 1, 17, 0));
	cr_assert_eq(chase_run_adds(5, 1000, 0), 5);
	/* Parallel walkers each advance `steps` along the same cycle. */
	void *positions[CHASE_MAX_PARALLEL];
	for (unsigned k = 1; k <= CHASE_MAX_PARALLEL; k++) {
		cr_assert(chase_spread_positions(&chain, positions, k, NULL) == 0);
		for (unsigned j = 0; j < k; j++)
			cr_assert_eq(positions[j], base + (size_t)order[n / k * j] * 64);
		cr_assert(chase_run_parallel(positions, k, 10) == 0);
		for (unsigned j = 0; j < k; j++)
			cr_assert_eq(positions[j], base + (size_t)order[(n / k * j + 10) % n] * 64);
	}
	cr_assert(chase_run_parallel(positions, 0, 1) == -1);
	cr_assert(chase_run_parallel(positions, 33, 1) == -1);
	free(order);
	free(base);
}

Test(lat_permutation, chase_build_rejects_bad_layouts)
{
	char base[256];
	uint32_t order[4] = { 0, 1, 2, 3 };
	chase_chain chain;
	plumb_status status;
	cr_assert(chase_build(&chain, base, sizeof base, 4, 0, order, 4, &status) == -1);
	cr_assert(chase_build(&chain, base, sizeof base, 64, 60, order, 4, &status) == -1);
	cr_assert(chase_build(&chain, base, 128, 64, 0, order, 4, &status) == -1);
	uint32_t bad[4] = { 0, 1, 2, 9 };
	cr_assert(chase_build(&chain, base, sizeof base, 64, 0, bad, 4, &status) == -1);
	chase_layout layout = { .pattern = CHASE_PAGE_GROUPED, .bytes = 256, .slot_bytes = 64, .page_bytes = 100 };
	cr_assert(chase_build_layout(&chain, base, sizeof base, &layout, &status) == -1);
	cr_assert(strstr(status.message, "page size"));
}
