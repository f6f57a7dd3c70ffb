/* The shadow cache behind the capacity/conflict split must answer exactly
 * what a fully associative LRU cache of its capacity answers, whatever the
 * mix of references whose answer is wanted (sim_shadow_reference, a miss of
 * the real cache) and references whose answer is not (sim_shadow_touch, a
 * hit): it logs touches and brings its recency list up to date only when
 * asked or when the log is full.  Compared here with a brute-force LRU list
 * on random streams, at the capacity boundary, with long runs of touches
 * between answers (more lines than the log holds, more distinct lines than
 * the capacity) and with lines that share their low bits (its hint table)
 * but not their high ones. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "sim/sim_shadow.h"

typedef struct brute_lru {
	uint64_t *line;         /* most recent first */
	uint32_t count, capacity;
} brute_lru;

static bool brute_reference(brute_lru *b, uint64_t line)
{
	uint32_t i = 0;
	while (i < b->count && b->line[i] != line)
		i++;
	bool present = i < b->count;
	if (!present) {
		if (b->count < b->capacity)
			b->count++;
		if (b->count == 0)
			return false;   /* no ways: nothing is kept */
		i = b->count - 1;
	}
	for (; i > 0; i--)
		b->line[i] = b->line[i - 1];
	b->line[0] = line;
	return present;
}

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

enum pattern {
	FITS,               /* lines from half the capacity */
	BOUNDARY,           /* from capacity + 1 lines */
	TWICE,              /* from twice the capacity */
	CYCLE,              /* 0..capacity-1 in turn: all hits once warm */
	CYCLE_ONE_MORE,     /* 0..capacity in turn: all misses */
	SCATTERED,          /* a quarter from millions of lines, the rest near the capacity */
	BURSTS,             /* thousands of distinct lines touched, then a few lines */
	HIGH_BITS,          /* 64 regions far apart with the same low bits */
	PATTERNS
};

static uint64_t line_of(enum pattern p, uint64_t step, uint64_t r, uint32_t capacity)
{
	switch (p) {
	case FITS: return r % (capacity / 2 + 1);
	case BOUNDARY: return r % (capacity + 1);
	case TWICE: return r % (2 * (uint64_t)capacity + 3);
	case CYCLE: return step % capacity;
	case CYCLE_ONE_MORE: return step % (capacity + 1);
	case SCATTERED: return (r >> 8) % 4 == 0 ? r % 5000000 : (r >> 20) % (capacity + 2);
	case BURSTS: return (step / 3000) % 2 ? step % 2500 : r % 8;
	default: return ((r % 64) << 40) | ((r >> 10) % (capacity + capacity / 4 + 1));
	}
}

/* Runs steps references of pattern through both; every answer wanted is
 * compared.  ask_one_in: how often the answer is wanted (1: always). */
static void compare(uint32_t capacity, enum pattern p, uint64_t steps, uint32_t ask_one_in, uint64_t *hits,
                    uint64_t *asked)
{
	sim_shadow s;
	cr_assert_eq(sim_shadow_init(&s, capacity), 0);
	brute_lru b = { calloc(capacity, sizeof(uint64_t)), 0, capacity };
	cr_assert_not_null(b.line);
	uint64_t x = 88172645463325252ull + capacity * 31 + (uint64_t)p;
	for (uint64_t step = 0; step < steps; step++) {
		uint64_t r = next_random(&x);
		uint64_t line = line_of(p, step, r, capacity);
		bool expected = brute_reference(&b, line);
		if ((r >> 50) % ask_one_in == 0) {
			bool got = sim_shadow_reference(&s, line);
			cr_assert_eq(got, expected, "capacity %u, pattern %d, step %llu, line %llu: shadow says %s", capacity, p,
			             (unsigned long long)step, (unsigned long long)line, got ? "hit" : "miss");
			*hits += got;
			++*asked;
		} else {
			sim_shadow_touch(&s, line);
		}
	}
	sim_shadow_free(&s);
	free(b.line);
}

Test(sim_shadow, answers_as_a_brute_force_lru_on_random_streams)
{
	static const uint32_t capacities[] = { 1, 2, 3, 7, 16, 100, 512, 1023, 1024, 1025 };
	for (size_t c = 0; c < sizeof capacities / sizeof *capacities; c++)
		for (int p = 0; p < PATTERNS; p++)
			for (uint32_t ask = 1; ask <= 64; ask *= 8) {
				uint64_t hits = 0, asked = 0;
				compare(capacities[c], (enum pattern)p, 20000, ask, &hits, &asked);
				cr_assert_gt(asked, 0);
			}
}

/* Exact counts at the boundary: a cycle through as many lines as the
 * capacity hits from its second round on; one line more never hits. */
Test(sim_shadow, capacity_boundary)
{
	for (uint32_t capacity = 1; capacity <= 600; capacity += 37) {
		for (uint32_t ask = 1; ask <= 9; ask += 8) {
			sim_shadow s;
			cr_assert_eq(sim_shadow_init(&s, capacity), 0);
			uint64_t hits = 0, asked = 0;
			for (uint64_t step = 0; step < 10 * (uint64_t)capacity; step++) {
				uint64_t line = step % capacity;
				if (step % ask == 0) {
					hits += sim_shadow_reference(&s, line);
					asked++;
				} else {
					sim_shadow_touch(&s, line);
				}
			}
			/* every answer after the first round is a hit */
			uint64_t first_round = (capacity + ask - 1) / ask;
			cr_assert_eq(hits, asked - first_round, "capacity %u, every %u: %llu hits of %llu", capacity, ask,
			             (unsigned long long)hits, (unsigned long long)asked);
			sim_shadow_free(&s);

			cr_assert_eq(sim_shadow_init(&s, capacity), 0);
			hits = 0;
			for (uint64_t step = 0; step < 10 * (uint64_t)capacity; step++) {
				uint64_t line = (step % (capacity + 1)) << 6;
				if (step % ask == 0)
					hits += sim_shadow_reference(&s, line);
				else
					sim_shadow_touch(&s, line);
			}
			cr_assert_eq(hits, 0, "capacity %u, cycle of %u lines: %llu hits", capacity, capacity + 1,
			             (unsigned long long)hits);
			sim_shadow_free(&s);
		}
	}
}

/* The same line again and again between answers, and more distinct lines
 * touched between two answers than the shadow logs before it catches up
 * (its log holds 1024): the answers stay those of the brute force. */
Test(sim_shadow, long_runs_of_touches_and_repeated_lines)
{
	static const uint32_t capacities[] = { 1, 64, 1024, 1500, 3000 };
	for (size_t c = 0; c < sizeof capacities / sizeof *capacities; c++) {
		uint32_t capacity = capacities[c];
		sim_shadow s;
		cr_assert_eq(sim_shadow_init(&s, capacity), 0);
		brute_lru b = { calloc(capacity, sizeof(uint64_t)), 0, capacity };
		cr_assert_not_null(b.line);
		uint64_t x = 12345 + capacity;
		for (int round = 0; round < 12; round++) {
			/* a run of touches: distinct lines, each touched a few times */
			uint64_t run = 1 + next_random(&x) % 2600, base = next_random(&x) % 4000;
			for (uint64_t i = 0; i < run; i++)
				for (int again = 0; again < 3; again++) {
					uint64_t line = base + (i + (again == 1)) % run;
					brute_reference(&b, line);
					sim_shadow_touch(&s, line);
				}
			/* then answers, for lines recent, old and new */
			for (int q = 0; q < 40; q++) {
				uint64_t line = next_random(&x) % 7000;
				bool expected = brute_reference(&b, line);
				cr_assert_eq(sim_shadow_reference(&s, line), expected, "capacity %u, round %d, line %llu", capacity,
				             round, (unsigned long long)line);
				expected = brute_reference(&b, line);
				cr_assert(expected);
				cr_assert(sim_shadow_reference(&s, line), "the line just referenced");
			}
		}
		sim_shadow_free(&s);
		free(b.line);
	}
}
