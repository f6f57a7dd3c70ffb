/* The other tools' patterns (plumb lat --pattern lmbench, lmbench2,
 * multichase): exact address sequences, checked against the tools' own
 * construction rules written out independently here. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "chase/chase.h"
#include "latency/latency_run.h"
#include "chase/permutation.h"

/* lmbench's words_initialize, as lib_mem.c writes it: nbits from max >> 1,
 * then each index's bits reversed. */
static size_t lmbench_word(size_t i, size_t max)
{
	size_t nbits = 0, word = 0;
	for (size_t k = max >> 1; k != 0; k >>= 1)
		nbits++;
	for (size_t j = 0; j < nbits; j++)
		if (i & ((size_t)1 << j))
			word |= (size_t)1 << (nbits - j - 1);
	return word;
}

Test(lat_patterns, bit_reversal_is_lmbench_words_initialize)
{
	const size_t eight[] = { 0, 4, 2, 6, 1, 5, 3, 7 };
	for (size_t i = 0; i < 8; i++)
		cr_expect_eq(permutation_bit_reverse(i, 3), eight[i]);
	for (size_t max = 1; max <= 1024; max *= 2) {
		unsigned bits = 0;
		while (((size_t)1 << bits) < max)
			bits++;
		for (size_t i = 0; i < max; i++)
			cr_assert_eq(permutation_bit_reverse(i, bits), lmbench_word(i, max), "max %zu, i %zu", max, i);
	}
}

Test(lat_patterns, lmbench_order_is_random_pages_of_bit_reversed_lines)
{
	/* 4 KiB pages of 64-byte lines: 64 slots a page; 10 pages and a
	 * partial eleventh of 20 slots. */
	const size_t per_page = 64, pages = 11, count = 10 * per_page + 20;
	uint32_t *order = malloc(count * sizeof *order);
	cr_assert_eq(permutation_lmbench(order, count, per_page, 7, NULL), 0);
	cr_assert(permutation_is_complete(order, count));
	bool seen[11] = { false };
	size_t at = 0;
	for (size_t p = 0; p < pages; p++) {
		size_t page = order[at] / per_page;
		cr_assert(page < pages && !seen[page], "page %zu visited twice", page);
		seen[page] = true;
		/* Exactly lmbench's order inside the page, skipping slots past the end. */
		for (size_t j = 0; j < per_page; j++) {
			size_t slot = page * per_page + lmbench_word(j, per_page);
			if (slot >= count)
				continue;
			cr_assert_eq(order[at], slot, "page %zu, line %zu", page, j);
			at++;
		}
	}
	cr_assert_eq(at, count);
	/* The pages are shuffled (not 0, 1, 2, ...), and the seed decides how. */
	uint32_t *other = malloc(count * sizeof *other);
	cr_assert_eq(permutation_lmbench(other, count, per_page, 8, NULL), 0);
	cr_expect(memcmp(order, other, count * sizeof *order) != 0);
	bool in_order = true;
	for (size_t p = 0; p + 1 < 10; p++)
		in_order = in_order && order[p * per_page] / per_page == p;
	cr_expect(!in_order);
	plumb_status status;
	cr_expect_eq(permutation_lmbench(order, count, 48, 7, &status), -1);
	cr_expect(strstr(status.message, "power-of-two") != NULL, "%s", status.message);
	free(other);
	free(order);
}

/* lmbench 3.0-a9's thrash_initialize, written out as lib_mem.c writes it:
 * pointers between pages[i] + words[(i + j) % n] and pages[i + 1] +
 * words[(i + j + 1) % n], the last page back to page 0 at words[(j + 1) % n];
 * the walk from pages[0] + words[0], with plumb's page order as pages[]. */
static void lmbench_thrash_walk(const uint32_t *page_order, size_t pages, size_t n, size_t *walk)
{
	size_t count = pages * n;
	size_t *next = malloc(count * sizeof *next);
	cr_assert_not_null(next);
	for (size_t i = 0; i + 1 < pages; i++)
		for (size_t j = 0; j < n; j++)
			next[page_order[i] * n + lmbench_word((i + j) % n, n)] =
				page_order[i + 1] * n + lmbench_word((i + j + 1) % n, n);
	size_t i = pages - 1;
	for (size_t j = 0; j < n; j++)
		next[page_order[i] * n + lmbench_word((i + j) % n, n)] = page_order[0] * n + lmbench_word((j + 1) % n, n);
	size_t at = page_order[0] * n;
	for (size_t k = 0; k < count; k++) {
		walk[k] = at;
		at = next[at];
	}
	free(next);
}

/* --pattern lmbench-thrash is lat_mem_rd -t; --pattern lmbench its default
 * forward walk.  The old --pattern lmbench (line_initialize, now
 * lmbench-line) matched neither of lat_mem_rd's modes. */
Test(lat_patterns, lmbench_thrash_is_lat_mem_rd_dash_t)
{
	const size_t n = 64, pages = 10, count = pages * n;
	uint32_t *order = malloc(count * sizeof *order);
	cr_assert_eq(permutation_lmbench_thrash(order, count, n, 7, NULL), 0);
	cr_assert(permutation_is_complete(order, count));
	/* The page order plumb chose: the pages of the first round. */
	uint32_t page_order[10];
	for (size_t i = 0; i < pages; i++)
		page_order[i] = order[i] / (uint32_t)n;
	size_t *walk = malloc(count * sizeof *walk);
	lmbench_thrash_walk(page_order, pages, n, walk);
	for (size_t k = 0; k < count; k++)
		cr_assert_eq(order[k], walk[k], "step %zu", k);
	/* Every step lands on another page. */
	for (size_t k = 0; k + 1 < count; k++)
		cr_assert_neq(order[k] / n, order[k + 1] / n, "step %zu", k);
	/* Not whole pages: one bit-reversed run, as lmbench does; else refused. */
	uint32_t small[32];
	cr_assert_eq(permutation_lmbench_thrash(small, 32, 64, 7, NULL), 0);
	for (size_t k = 0; k < 32; k++)
		cr_assert_eq(small[k], lmbench_word(k, 32));
	plumb_status status;
	cr_expect_eq(permutation_lmbench_thrash(order, 100, 64, 7, &status), -1);
	cr_expect(strstr(status.message, "whole pages") != NULL, "%s", status.message);
	/* lmbench's default: a forward walk at the stride. */
	chase_layout layout = { .pattern = CHASE_FORWARD, .bytes = 8 * 64, .slot_bytes = 64 };
	void *memory = aligned_alloc(64, 8 * 64);
	chase_chain chain;
	cr_assert_eq(chase_build_layout(&chain, memory, 8 * 64, &layout, NULL), 0);
	char *at = chain.start;
	for (int k = 0; k < 8; k++) {
		cr_assert_eq(at, (char *)memory + 64 * k);
		at = *(char **)at;
	}
	cr_assert_eq(at, (char *)memory);
	free(memory);
	free(walk);
	free(order);
}

Test(lat_patterns, lmbench2_is_a_backward_walk)
{
	uint32_t order[5];
	cr_assert_eq(permutation_backward(order, 5, NULL), 0);
	const uint32_t expected[] = { 4, 3, 2, 1, 0 };
	cr_expect_arr_eq(order, expected, sizeof expected);
	/* As a chain at a 128-byte stride: each load goes 128 bytes down, and
	 * the lowest wraps to the top (lmbench 2's addr[0] -> addr[range - stride]). */
	char *base = aligned_alloc(64, 5 * 128);
	chase_layout layout = { .pattern = CHASE_BACKWARD, .bytes = 5 * 128, .slot_bytes = 128 };
	chase_chain chain;
	cr_assert_eq(chase_build_layout(&chain, base, 5 * 128, &layout, NULL), 0);
	void **p = chain.start;
	cr_expect_eq((char *)p, base + 4 * 128);
	for (int i = 3; i >= 0; i--) {
		p = *p;
		cr_expect_eq((char *)p, base + (size_t)i * 128);
	}
	cr_expect_eq(*p, chain.start);
	free(base);
}

Test(lat_patterns, multichase_blocks_of_random_slots_with_a_word_mixer)
{
	/* multichase's default shape, scaled down: 256-byte slots in 256 KiB
	 * blocks (1024 slots each), 4 blocks. */
	const size_t slot = 256, block = 256 * 1024, bytes = 4 * block, count = bytes / slot, per_block = block / slot;
	char *base = aligned_alloc(4096, bytes);
	chase_layout layout = { .pattern = CHASE_MULTICHASE, .bytes = bytes, .slot_bytes = slot, .page_bytes = block,
		                .seed = 11 };
	chase_chain chain;
	cr_assert_eq(chase_build_layout(&chain, base, bytes, &layout, NULL), 0);
	cr_assert_eq(chain.length, count);
	/* The intended sequence: the page-grouped order over blocks, each
	 * pointer at word mixer[slot % 64] of its slot. */
	uint32_t *order = malloc(count * sizeof *order);
	cr_assert_eq(permutation_page_grouped(order, count, per_block, 11, NULL), 0);
	uint32_t mixer[PERMUTATION_MIXER_SLOTS];
	cr_assert_eq(permutation_word_mixer(mixer, slot / 8, 11, NULL), 0);
	bool words_differ = false;
	for (size_t i = 0; i < PERMUTATION_MIXER_SLOTS; i++) {
		cr_assert_lt(mixer[i], slot / 8);
		words_differ = words_differ || mixer[i] != mixer[0];
	}
	cr_expect(words_differ, "the mixer spreads pointers over the slot's words");
	void **p = chain.start;
	for (size_t i = 0; i < count; i++) {
		char *expected = base + (size_t)order[i] * slot + (size_t)mixer[order[i] % 64] * 8;
		cr_assert_eq((char *)p, expected, "load %zu", i);
		/* A block is finished before the next one starts. */
		cr_assert_eq(order[i] / per_block, order[i / per_block * per_block] / per_block);
		p = *p;
	}
	cr_expect_eq((void *)p, chain.start, "one cycle through every slot");
	free(order);
	free(base);
}

Test(lat_patterns, named_patterns_bring_the_tools_parameters)
{
	const latency_pattern_preset *p = latency_pattern_find("multichase");
	cr_assert_not_null(p);
	cr_expect_eq(p->pattern, CHASE_MULTICHASE);
	cr_expect_eq(p->line_bytes, 256);
	cr_expect_eq(p->page_group_bytes, 256 * 1024);
	cr_expect(p->set_pages && p->pages == ARENA_PAGES_SMALL);
	p = latency_pattern_find("lmbench");
	cr_assert_not_null(p);
	cr_expect_eq(p->pattern, CHASE_FORWARD);
	cr_expect_eq(p->line_bytes, 64);
	cr_expect(p->set_pages && p->pages == ARENA_PAGES_DEFAULT);
	cr_expect_str_eq(chase_pattern_name(CHASE_FORWARD), "lmbench");
	p = latency_pattern_find("lmbench-thrash");
	cr_assert_not_null(p);
	cr_expect_eq(p->pattern, CHASE_LMBENCH_THRASH);
	cr_expect_eq(p->line_bytes, 64);
	p = latency_pattern_find("lmbench-line");
	cr_assert_not_null(p);
	cr_expect_eq(p->pattern, CHASE_LMBENCH);
	cr_expect_str_eq(chase_pattern_name(CHASE_LMBENCH), "lmbench-line");
	p = latency_pattern_find("lmbench2");
	cr_assert_not_null(p);
	cr_expect_eq(p->pattern, CHASE_BACKWARD);
	cr_expect_str_eq(chase_pattern_name(CHASE_BACKWARD), "lmbench2");
	p = latency_pattern_find("random");
	cr_assert_not_null(p);
	cr_expect(p->line_bytes == 0 && !p->set_pages, "plumb's own patterns keep the caller's choices");
	cr_expect_null(latency_pattern_find("stream"));
}
