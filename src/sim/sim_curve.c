/* Miss-ratio curves in one pass (plumb/sim_curve.h): Mattson et al.'s
 * stack distances (1970) for every fully associative size, Hill and Smith's
 * per-set stacks (1989) for the set-associative grid, fed by the references
 * that reach the level through the levels above it as configured.
 *
 * Counting: a reference's distance at a set count is the largest of its
 * lines' distances; it is kept as a power-of-two bucket (b = 0 for distance
 * 0, b = floor(log2 d) + 1 otherwise, "beyond" for a first reference or one
 * deeper than the grid).  A cache of 2^j ways misses exactly the references
 * with b >= j + 1, so a histogram of buckets per set count is the whole
 * curve, and a region's curve is the difference of its core's histograms
 * between BEGIN and END, as the simulator's regions are (sim_regions.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif
#include "core/progress.h"
#include "sim/sim_curve.h"
#include "sim/sim_curve_internal.h"
#include "sim/sim_state.h"

#define BATCH 65536
#define MAX_THREAD_ID (1u << 20)
#define EMPTY_OWNER UINT64_MAX

/* ------------------------------------------------------------ the stacks */

#define NO_NODE UINT32_MAX
#define BLOCK_LINES 16

/* One cache of the level (a core's private one, or the shared L3): every
 * grid point's state at once.  Lines are numbered by blocks of BLOCK_LINES
 * neighbouring lines: the n-th block to come has ids n * BLOCK_LINES on
 * (a line's id is its block's first plus its place in the block, so that
 * finding it takes one map lookup); the stacks hold ids. */
typedef struct curve_slot {
	uint64_t key;
	uint32_t id;
} curve_slot;

typedef struct curve_node {
	uint32_t prev, next;            /* its neighbours in Mattson's stack, NO_NODE: none */
	uint32_t group;                 /* UNSEEN: a line of a known block never referenced */
} curve_node;

#define UNSEEN UINT32_MAX
#define TOP (UINT32_MAX - 1)        /* a line in the stacks' top row */
#define TOP_GROUPS 5                /* the top row holds groups 0 .. 4: positions 0 .. 15 */

typedef struct curve_stacks {
	/* line -> id, in blocks of BLOCK_LINES neighbouring lines: a map from a
	 * block (open addressing; key block + 1, 0 empty) to its number, and
	 * the block used last */
	curve_slot *map;
	size_t map_capacity, map_used;
	uint64_t cached_key;
	uint32_t cached_base;           /* its first id */
	uint32_t used;                  /* the distinct lines referenced */
	/* Mattson: the fully associative LRU stack as a list, most recent
	 * first, cut into the buckets' groups: group 0 holds position 0,
	 * group g (1 .. bits) positions 2^(g-1) .. 2^g - 1, group bits + 1 the
	 * rest.  A line's group is its bucket; moving it to the top moves the
	 * deepest line of each group above it one group down, so a reference
	 * costs one step per group above it, not a walk of the stack. */
	curve_node *node;               /* per id */
	size_t node_capacity;
	uint32_t head;
	uint32_t last[34];              /* the deepest id of each group */
	/* With a grid of 32 lines or more, the stack's first 16 positions
	 * (groups 0 .. 4) are a row of ids + 1 instead (0 empty), moved as a
	 * set's row is, and the list holds the rest from position 16 on
	 * (head): a reference at a distance below 16 moves the row alone. */
	bool use_top;
	uint32_t *top;
	uint32_t top_count;
	/* Hill and Smith: for set count 2^k (k >= 1), 2^k stacks of depth[k]
	 * ids + 1 (0 empty), most recent first */
	uint32_t *sets[32];
	void *sets_allocated[32];       /* sets[k] is this, moved up to a cache line's start */
	uint32_t depth[32];
	/* The set counts of 16-way stacks (k = 1 .. full_rows) in one table:
	 * set s of 2^k sets is row 2^k + s, 16 ids (a cache line) from the
	 * table's start per row, so that the walk finds a row with a mask and
	 * an or, not a load of sets[k] and a multiply (sets[k] points into it). */
	uint32_t *rows;
	void *rows_allocated;
	unsigned full_rows;
	uint64_t last_line;             /* the most recent line: at the top of every stack */
	uint64_t second_line;           /* the one before it (EMPTY_OWNER: none) */
	/* The bucket of a position in a 16-way row, 16 (not there) beyond:
	 * one load in the walk, where the bucket's arithmetic was ten
	 * instructions a row (xz's L1D curve 4% less CPU time) */
	uint8_t row_bucket[17];
} curve_stacks;

/* The counts of one core: references, and buckets[k][b] (b = 0 .. bits + 1, the last "beyond"). */
typedef struct curve_counts {
	uint64_t *v;                    /* v[0] references, then (bits + 1) x (bits + 2) buckets */
} curve_counts;

typedef struct curve_open {
	size_t region;
	uint64_t *start;                /* the core's counts at BEGIN */
} curve_open;

typedef struct curve_thread {
	bool used;
	uint32_t core;
	size_t depth, capacity;
	curve_open *open;
} curve_thread;

typedef struct curve_region {
	char *name;
	uint32_t thread;
	uint64_t entries;
	uint64_t *sum;
} curve_region;

typedef struct curve_program curve_program;
static void program_free(curve_program *p);

typedef struct curve_core {
	sim_cache l1[2];                /* L1I, L1D: the levels above an L2 or L3 */
	sim_cache l2;                   /* the level above an L3 */
	bool ready;
	curve_stacks *stacks;           /* private levels: this core's cache of the level */
} curve_core;

struct sim_curve {
	sim_config config;
	sim_level level;
	unsigned line_bits;
	unsigned bits;                  /* log2 of the grid's largest size in lines */
	size_t counter_count;           /* 1 + (bits + 1) * (bits + 2) */
	bool has_l2;                    /* an L2 above the L3 */
	curve_core *cores;
	curve_counts *counts;           /* per core */
	curve_stacks *shared;           /* the L3 */
	curve_thread *threads;
	size_t thread_capacity;
	uint32_t next_core;
	curve_region *regions;
	size_t region_count, region_capacity;
	uint64_t mismatches;
	curve_program *program;         /* plumbgrind's definitions made into the level's ops */
	bool wide;                      /* the sets' rows searched and moved with AVX-512 */
};

static unsigned bucket_of(uint64_t distance)
{
	return distance == 0 ? 0 : 64u - (unsigned)__builtin_clzll(distance);
}

static uint64_t hash_line(uint64_t line)
{
	return (line + 1) * 0x9e3779b97f4a7c15ull;
}

static void stacks_free(curve_stacks *t)
{
	if (!t)
		return;
	free(t->map);
	free(t->node);
	free(t->top);
	for (int k = 0; k < 32; k++)
		free(t->sets_allocated[k]);
	free(t->rows_allocated);
	free(t);
}

static curve_stacks *stacks_new(unsigned bits)
{
	curve_stacks *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->map_capacity = 1024;
	t->node_capacity = 512;
	t->map = calloc(t->map_capacity, sizeof *t->map);
	t->node = malloc(t->node_capacity * sizeof *t->node);
	t->last_line = t->second_line = EMPTY_OWNER;
	t->head = NO_NODE;
	t->use_top = bits >= TOP_GROUPS;
	t->top = aligned_alloc(64, 16 * sizeof *t->top);
	if (!t->map || !t->node || !t->top) {
		stacks_free(t);
		return NULL;
	}
	memset(t->top, 0, 16 * sizeof *t->top);
	t->full_rows = bits > 4 ? bits - 4 : 0;
	for (uint32_t position = 0; position < 16; position++)
		t->row_bucket[position] = (uint8_t)bucket_of(position);
	t->row_bucket[16] = (uint8_t)(bits + 1);
	if (t->full_rows) {
		/* zeroed pages come when a set is first used */
		size_t bytes = ((size_t)2 << t->full_rows) * 16 * sizeof *t->rows;
		if (!(t->rows_allocated = calloc(1, bytes + 64))) {
			stacks_free(t);
			return NULL;
		}
		t->rows = (uint32_t *)(((uintptr_t)t->rows_allocated + 63) & ~(uintptr_t)63);
	}
	for (unsigned k = 1; k <= bits; k++) {
		uint64_t depth = 1ull << (bits - k);
		if (depth > SIM_CURVE_MAX_WAYS)
			depth = SIM_CURVE_MAX_WAYS;
		t->depth[k] = (uint32_t)depth;
		if (k <= t->full_rows) {
			t->sets[k] = t->rows + ((size_t)1 << k) * 16;
			continue;
		}
		/* zeroed pages come when a set is first used */
		/* each 16-way row in one cache line */
		size_t bytes = ((size_t)1 << k) * (size_t)depth * sizeof *t->sets[k];
		if (!(t->sets_allocated[k] = calloc(1, bytes + 64))) {
			stacks_free(t);
			return NULL;
		}
		t->sets[k] = (uint32_t *)(((uintptr_t)t->sets_allocated[k] + 63) & ~(uintptr_t)63);
	}
	return t;
}

/* The map slot of line: its own, or the empty one where it would go. */
static size_t map_slot(const curve_stacks *t, uint64_t line)
{
	size_t mask = t->map_capacity - 1;
	size_t i = (size_t)(hash_line(line) >> 20) & mask;
	while (t->map[i].key && t->map[i].key != line + 1)
		i = (i + 1) & mask;
	return i;
}

static int map_grow(curve_stacks *t)
{
	size_t capacity = t->map_capacity * 2;
	curve_slot *map = calloc(capacity, sizeof *map);
	if (!map)
		return -1;
	curve_slot *old = t->map;
	size_t old_capacity = t->map_capacity;
	t->map = map;
	t->map_capacity = capacity;
	for (size_t i = 0; i < old_capacity; i++)
		if (old[i].key)
			t->map[map_slot(t, old[i].key - 1)] = old[i];
	free(old);
	return 0;
}

static int nodes_grow(curve_stacks *t);

/* The first id of line's block (line % BLOCK_LINES its place in it), a new
 * block's nodes UNSEEN; NO_NODE: out of memory. */
static inline __attribute__((always_inline)) uint32_t line_block(curve_stacks *t, uint64_t line)
{
	uint64_t key = line / BLOCK_LINES + 1;
	if (key == t->cached_key)
		return t->cached_base;
	if (2 * (t->map_used + 1) > t->map_capacity && map_grow(t) != 0)
		return NO_NODE;
	size_t slot = map_slot(t, key - 1);
	if (!t->map[slot].key) {
		size_t first = t->map_used * BLOCK_LINES;
		while (first + BLOCK_LINES > t->node_capacity)
			if (nodes_grow(t) != 0)
				return NO_NODE;
		for (size_t i = first; i < first + BLOCK_LINES; i++)
			t->node[i].group = UNSEEN;
		t->map[slot] = (curve_slot){ .key = key, .id = (uint32_t)t->map_used++ };
	}
	t->cached_key = key;
	t->cached_base = t->map[slot].id * BLOCK_LINES;
	return t->cached_base;
}

static int nodes_grow(curve_stacks *t)
{
	if (t->node_capacity >= NO_NODE / 2)
		return -1;
	size_t capacity = t->node_capacity * 2;
	curve_node *node = realloc(t->node, capacity * sizeof *node);
	if (!node)
		return -1;
	t->node = node;
	t->node_capacity = capacity;
	return 0;
}

/* Mattson's groups from..to-1, each full, each give their deepest line to
 * the next group (a line moved to the top from group `to`). */
static inline __attribute__((always_inline)) void groups_pass_down(curve_stacks *t, unsigned from, unsigned to)
{
	curve_node *node = t->node;
	for (unsigned i = from; i < to; i++) {
		uint32_t y = t->last[i];
		node[y].group = i + 1;
		t->last[i] = node[y].prev;
	}
}

/* The same for a line never seen (of which there were `before`): the full
 * groups from `from` each give their deepest to the next; the first that
 * was not full keeps it. */
static inline __attribute__((always_inline)) void groups_pass_down_new(curve_stacks *t, unsigned from, unsigned beyond,
                                                                      uint64_t before)
{
	curve_node *node = t->node;
	for (unsigned i = from; i < beyond && before > (1ull << i) - 1; i++) {
		uint32_t y = t->last[i];
		node[y].group = i + 1;
		t->last[i] = node[y].prev;
		if (before == 1ull << i)
			t->last[i + 1] = y;   /* it was empty */
	}
}

/* Mattson's stack: id x (group g, or beyond + 1 for a line never seen, of
 * which there were `before`) to the top; returns its bucket. */
static inline __attribute__((always_inline)) unsigned lru_to_top(curve_stacks *t, uint32_t x, unsigned g, unsigned beyond, uint64_t before)
{
	curve_node *node = t->node;
	if (g <= beyond) {
		/* out of its place (group g keeps its deepest unless x was it) */
		uint32_t p = node[x].prev, n = node[x].next;
		if (t->last[g] == x)
			t->last[g] = p;
		node[p].next = n;
		if (n != NO_NODE)
			node[n].prev = p;
		node[t->head].prev = x;
		node[x] = (curve_node){ .prev = NO_NODE, .next = t->head, .group = 0 };
		t->head = x;
		/* every group above it full: each gives its deepest to the next */
		groups_pass_down(t, 0, g);
		return g;
	}
	node[x] = (curve_node){ .prev = NO_NODE, .next = t->head, .group = 0 };
	if (t->head == NO_NODE) {
		t->head = t->last[0] = x;
		return beyond;
	}
	node[t->head].prev = x;
	t->head = x;
	/* group i holds 2^i - 1 and above when full */
	groups_pass_down_new(t, 0, beyond, before);
	return beyond;
}

/* The position of key in row (depth entries), depth when it is not there. */
static inline uint32_t row_find(const uint32_t *row, uint32_t depth, uint32_t key)
{
#ifdef __SSE2__
	if (depth == 16) {
		/* one compare per four ways */
		__m128i k = _mm_set1_epi32((int)key);
		__m128i a = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)row), k),
		                            _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(row + 4)), k));
		__m128i b = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(row + 8)), k),
		                            _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(row + 12)), k));
		unsigned mask = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(a, b));
		return mask ? (uint32_t)__builtin_ctz(mask) : 16;
	}
#endif
	uint32_t p = 0;
	while (p < depth && row[p] != key)
		p++;
	return p;
}

/* key to the top of row: the entries above position move one down (the
 * entry at position leaves: key, or the least recent line). */
static inline void row_to_top(uint32_t *row, uint32_t depth, uint32_t position, uint32_t key)
{
#ifdef __SSE2__
	if (depth == 16) {
		/* every way at once: way i takes way i - 1 up to position, keeps its own below */
		__m128i v0 = _mm_loadu_si128((const __m128i *)row), v1 = _mm_loadu_si128((const __m128i *)(row + 4));
		__m128i v2 = _mm_loadu_si128((const __m128i *)(row + 8)), v3 = _mm_loadu_si128((const __m128i *)(row + 12));
		__m128i s0 = _mm_or_si128(_mm_slli_si128(v0, 4), _mm_cvtsi32_si128((int)key));
		__m128i s1 = _mm_or_si128(_mm_slli_si128(v1, 4), _mm_srli_si128(v0, 12));
		__m128i s2 = _mm_or_si128(_mm_slli_si128(v2, 4), _mm_srli_si128(v1, 12));
		__m128i s3 = _mm_or_si128(_mm_slli_si128(v3, 4), _mm_srli_si128(v2, 12));
		__m128i limit = _mm_set1_epi32((int)position + 1), four = _mm_set1_epi32(4);
		__m128i lane = _mm_setr_epi32(0, 1, 2, 3);
		__m128i m0 = _mm_cmplt_epi32(lane, limit);
		lane = _mm_add_epi32(lane, four);
		__m128i m1 = _mm_cmplt_epi32(lane, limit);
		lane = _mm_add_epi32(lane, four);
		__m128i m2 = _mm_cmplt_epi32(lane, limit);
		lane = _mm_add_epi32(lane, four);
		__m128i m3 = _mm_cmplt_epi32(lane, limit);
		_mm_storeu_si128((__m128i *)row, _mm_or_si128(_mm_and_si128(m0, s0), _mm_andnot_si128(m0, v0)));
		_mm_storeu_si128((__m128i *)(row + 4), _mm_or_si128(_mm_and_si128(m1, s1), _mm_andnot_si128(m1, v1)));
		_mm_storeu_si128((__m128i *)(row + 8), _mm_or_si128(_mm_and_si128(m2, s2), _mm_andnot_si128(m2, v2)));
		_mm_storeu_si128((__m128i *)(row + 12), _mm_or_si128(_mm_and_si128(m3, s3), _mm_andnot_si128(m3, v3)));
		return;
	}
#endif
	for (uint32_t i = position; i > 0; i--)
		row[i] = row[i - 1];
	row[0] = key;
}

/* A 16-way row in one AVX-512 register (the CPU is asked once, in
 * sim_curve_new): key to the top, the entries above its position one down;
 * returns its position, 16 when it was not there (the last entry left). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CURVE_WIDE 1
static inline __attribute__((target("avx512f"))) uint32_t wide_row_to_top(uint32_t *row, uint32_t key)
{
	__m512i v = _mm512_loadu_si512(row), k = _mm512_set1_epi32((int)key);
	unsigned found = (unsigned)_mm512_cmpeq_epi32_mask(v, k);
	/* the ways up to and including key's (all 16 when it is not there)
	 * take the way before them, way 0 key itself: one masked align of the
	 * row behind key's, the mask the found bit and those below it */
	v = _mm512_mask_alignr_epi32(v, (__mmask16)(found ^ (found - 1)), v, k, 15);
	_mm512_storeu_si512(row, v);
	return (uint32_t)__builtin_ctz(found | 0x10000u);
}

/* The same, unless key is at the top already (returns 0, nothing
 * written): the test reads the row as the move does, with one 64-byte
 * load, which a 64-byte store to the row just before can forward (a
 * 4-byte load of its first entry may have to wait for the store). */
static inline __attribute__((target("avx512f"))) uint32_t wide_row_to_top_unless_first(uint32_t *row, uint32_t key)
{
	__m512i v = _mm512_loadu_si512(row), k = _mm512_set1_epi32((int)key);
	unsigned found = (unsigned)_mm512_cmpeq_epi32_mask(v, k);
	if (found & 1)
		return 0;
	v = _mm512_mask_alignr_epi32(v, (__mmask16)(found ^ (found - 1)), v, k, 15);
	_mm512_storeu_si512(row, v);
	return (uint32_t)__builtin_ctz(found | 0x10000u);
}
#else
#define CURVE_WIDE 0
static inline uint32_t wide_row_to_top(uint32_t *row, uint32_t key)
{
	(void)row, (void)key;
	return 0;
}
static inline uint32_t wide_row_to_top_unless_first(uint32_t *row, uint32_t key)
{
	(void)row, (void)key;
	return 0;
}
#endif

/* Mattson's stack with its top row (use_top): id x (TOP, group g >= 5 in
 * the list, or beyond + 1 for a line never seen, of which there were
 * `before`) to the top; returns its bucket.  A line from the list (or a new
 * one) pushes the row's last line z to the list's head, position 16. */
static inline __attribute__((always_inline)) unsigned top_to_top(curve_stacks *t, uint32_t x, unsigned g,
                                                                 unsigned beyond, uint64_t before, const bool wide)
{
	uint32_t *top = t->top;
	const uint32_t key = x + 1;
	if (g == TOP) {
		uint32_t position;
		if (wide) {
			position = wide_row_to_top(top, key);
		} else {
			position = row_find(top, 16, key);
			row_to_top(top, 16, position, key);
		}
		return bucket_of(position);
	}
	curve_node *node = t->node;
	if (t->top_count < 16) {
		/* a new line: the list stays empty until the row is full */
		if (wide)
			wide_row_to_top(top, key);
		else
			row_to_top(top, 16, 15, key);
		t->top_count++;
		node[x].group = TOP;
		return beyond;
	}
	uint32_t z = top[15] - 1;
	if (wide)
		wide_row_to_top(top, key);
	else
		row_to_top(top, 16, 15, key);
	if (g <= beyond) {
		/* out of the list (group g keeps its deepest unless x was it) */
		uint32_t p = node[x].prev, n = node[x].next;
		if (t->last[g] == x)
			t->last[g] = p;
		if (p != NO_NODE)
			node[p].next = n;
		else
			t->head = n;
		if (n != NO_NODE)
			node[n].prev = p;
	}
	node[x].group = TOP;
	uint32_t h = t->head;
	node[z] = (curve_node){ .prev = NO_NODE, .next = h, .group = TOP_GROUPS };
	if (h != NO_NODE)
		node[h].prev = z;
	else
		t->last[TOP_GROUPS] = z;   /* the list was empty, or x was all of it */
	t->head = z;
	if (g <= beyond) {
		/* every group above x's full: each gives its deepest to the next */
		groups_pass_down(t, TOP_GROUPS, g);
		return g;
	}
	groups_pass_down_new(t, TOP_GROUPS, beyond, before);
	return beyond;
}

/* One reference of line to this cache: its bucket at every set count into
 * worst[] (the largest so far of the reference's lines), or when the
 * reference has one line, straight into its core's counts (count: v + 1,
 * a row of bits + 2 buckets per set count).  -1: out of memory. */
static inline __attribute__((always_inline)) void note_bucket(unsigned *worst, uint64_t *count, unsigned bits,
                                                              unsigned k, unsigned b)
{
	if (count)
		count[(size_t)k * (bits + 2) + b]++;
	else if (b > worst[k])
		worst[k] = b;
}

static inline __attribute__((always_inline)) int stacks_reference(curve_stacks *t, unsigned bits, uint64_t line,
                                                                  unsigned *worst, uint64_t *count, const bool wide)
{
	if (line == t->last_line)
		return 0;   /* distance 0 everywhere: bucket 0 changes no maximum */
	const unsigned beyond = bits + 1;
	if (line == t->second_line) {
		/* the line before the last one (a third of the references of
		 * real programs): it and the last line change places at the top
		 * of every stack they share, which are known without a search */
		uint32_t x, y;
		t->second_line = t->last_line;
		t->last_line = line;
		if (t->use_top) {
			x = t->top[1] - 1;
			y = t->top[0] - 1;
			t->top[0] = x + 1;
			t->top[1] = y + 1;
		} else {
			x = t->node[t->head].next;
			y = t->head;
			lru_to_top(t, x, 1, beyond, 0);
		}
		note_bucket(worst, count, bits, 0, 1);
		uint64_t differ = line ^ t->second_line;
		unsigned shared = (unsigned)__builtin_ctzll(differ);   /* lines differ: never 0 */
		if (shared > bits)
			shared = bits;
		for (unsigned k = 1; k <= shared; k++) {
			uint32_t *row = t->sets[k] + (size_t)(line & ((1ull << k) - 1)) * t->depth[k];
			row[0] = x + 1;
			unsigned kb = 1;
			if (t->depth[k] > 1)
				row[1] = y + 1;
			else
				kb = beyond;   /* one way: the other line leaves */
			note_bucket(worst, count, bits, k, kb);
		}
		return 0;
	}
	uint32_t base = line_block(t, line);
	if (base == NO_NODE)
		return -1;
	uint32_t x = base + (uint32_t)(line % BLOCK_LINES);
	unsigned g = t->node[x].group;
	if (g == UNSEEN) {
		t->used++;
		g = beyond + 1;
	}
	t->second_line = t->last_line;
	t->last_line = line;
	unsigned b = t->use_top ? top_to_top(t, x, g, beyond, (uint64_t)t->used - 1, wide)
	                        : lru_to_top(t, x, g, beyond, (uint64_t)t->used - 1);
	note_bucket(worst, count, bits, 0, b);
	/* Hill and Smith: one stack per set of every larger set count */
	const uint32_t key = x + 1;
	unsigned k = 1;
	if (wide) {
		/* the 16-way set counts: row 2^k + (line mod 2^k) of one table */
		uint32_t *const rows = t->rows;
		const unsigned full = t->full_rows;
		/* one reference's counts: set count 2^k's row of buckets, walked along */
		uint64_t *counts_k = count ? count + (bits + 2) : NULL;
		for (uint64_t mask = 1; k <= full; k++, mask = mask << 1 | 1) {
			uint32_t *row = rows + (((line & mask) | (mask + 1)) << 4);
			uint32_t position = wide_row_to_top_unless_first(row, key);
			if (!position)
				return 0;   /* Hill and Smith's inclusion, as below */
			unsigned kb = t->row_bucket[position];
			if (counts_k) {
				counts_k[kb]++;
				counts_k += bits + 2;
			} else if (kb > worst[k]) {
				worst[k] = kb;
			}
		}
	}
	for (; k <= bits; k++) {
		uint32_t depth = t->depth[k];
		uint32_t *row = t->sets[k] + (size_t)(line & ((1ull << k) - 1)) * depth;
		if (row[0] == key)
			break;   /* Hill and Smith's inclusion: at the top of its set here, at the top at every larger set count */
		/* (with wide rows, the 16-way set counts were walked above: these are narrower) */
		unsigned kb;
		uint32_t position = row_find(row, depth, key);
		if (position < depth) {
			kb = bucket_of(position);
		} else {
			kb = beyond;
			position = depth - 1;   /* the least recent line leaves */
		}
		row_to_top(row, depth, position, key);
		note_bucket(worst, count, bits, k, kb);
	}
	return 0;
}

/* ------------------------------------------------------------- the curve */

int sim_curve_level_parse(const char *text, sim_level *level, plumb_status *status)
{
	static const char *const names[] = { "l1i", "l1d", "l2", "l3" };
	for (int i = 0; i < 4; i++)
		if (strcasecmp(text, names[i]) == 0) {
			*level = (sim_level)i;
			return 0;
		}
	return plumb_fail(status, EINVAL, "'%s' is not a level: l1d, l1i, l2 or l3", text);
}

static int not_covered(plumb_status *status, const char *what)
{
	return plumb_fail(status, ENOTSUP, "it covers LRU caches fed by demand references only, not %s; "
	                  "for exact figures run one configuration per size: plumb sim --sweep CONFIGS --traces TRACE -o DIR",
	                  what);
}

int sim_curve_covers(const sim_config *config, sim_level level, plumb_status *status)
{
	const sim_cache_config *at = &config->cache[level];
	char what[160];
	if ((unsigned)level >= SIM_LEVEL_COUNT)
		return plumb_fail(status, EINVAL, "no such level");
	if (at->size == 0)
		return plumb_fail(status, EINVAL, "the configuration has no %s: --curve %s takes its line size and "
		                  "replacement from it (give one, e.g. --%s 1M,16,64)", sim_level_name(level),
		                  level == SIM_L2 ? "l2" : "l3", level == SIM_L2 ? "l2" : "l3");
	if (config->prefetch.kind != SIM_PREFETCH_NONE) {
		snprintf(what, sizeof what, "a prefetcher (prefetch = %s)", sim_prefetcher_name(config->prefetch.kind));
		return not_covered(status, what);
	}
	if (level == SIM_L3 && config->l3_inclusion == SIM_EXCLUSIVE)
		return not_covered(status, "an exclusive L3 (filled by the private levels' victims)");
	for (int l = SIM_L1I; l <= (int)level; l++) {
		const sim_cache_config *c = &config->cache[l];
		if (c->size == 0)
			continue;
		if ((level == SIM_L1I && l == SIM_L1D) || (level == SIM_L1D && l == SIM_L1I))
			continue;   /* the other L1 is beside the level, not above it */
		if (c->replacement != SIM_LRU) {
			snprintf(what, sizeof what, "%s replacement in the %s", sim_replacement_name(c->replacement),
			         sim_level_name((sim_level)l));
			return not_covered(status, what);
		}
		if (!c->write_allocate) {
			snprintf(what, sizeof what, "a no-write-allocate %s", sim_level_name((sim_level)l));
			return not_covered(status, what);
		}
		if (l != (int)level && !c->write_back) {
			snprintf(what, sizeof what, "a write-through %s above the %s (its writes go below)",
			         sim_level_name((sim_level)l), sim_level_name(level));
			return not_covered(status, what);
		}
		if (c->line != at->line) {
			snprintf(what, sizeof what, "line sizes that differ (%s %u B, %s %u B)", sim_level_name((sim_level)l),
			         c->line, sim_level_name(level), at->line);
			return not_covered(status, what);
		}
	}
	return 0;
}

static unsigned log2_floor(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

int sim_curve_new(sim_curve **out, const sim_config *config, sim_level level, uint64_t max_size,
                  plumb_status *status)
{
	*out = NULL;
	if (sim_curve_covers(config, level, status) != 0)
		return -1;
	uint32_t line = config->cache[level].line;
	if (max_size == 0)
		max_size = SIM_CURVE_DEFAULT_MAX_SIZE;
	if (max_size > SIM_CURVE_MAX_SIZE_LIMIT || max_size / line > SIM_CURVE_MAX_LINES)
		return plumb_fail(status, EINVAL, "--curve-max: at most 256M and %llu lines of %u B",
		                  (unsigned long long)SIM_CURVE_MAX_LINES, line);
	if (max_size < line)
		return plumb_fail(status, EINVAL, "--curve-max: at least one line (%u B)", line);
	sim_curve *c = calloc(1, sizeof *c);
	if (!c)
		return plumb_fail_errno(status, ENOMEM, "curve");
	c->config = *config;
	c->level = level;
	c->line_bits = log2_floor(line);
	c->bits = log2_floor(max_size / line);
	c->counter_count = 1 + (size_t)(c->bits + 1) * (c->bits + 2);
	c->has_l2 = config->cache[SIM_L2].size > 0;
#if CURVE_WIDE
	c->wide = __builtin_cpu_supports("avx512f");
#endif
	c->cores = calloc(config->cores, sizeof *c->cores);
	c->counts = calloc(config->cores, sizeof *c->counts);
	if (!c->cores || !c->counts) {
		sim_curve_free(c);
		return plumb_fail_errno(status, ENOMEM, "curve");
	}
	for (uint32_t i = 0; i < config->cores; i++)
		if (!(c->counts[i].v = calloc(c->counter_count, sizeof(uint64_t)))) {
			sim_curve_free(c);
			return plumb_fail_errno(status, ENOMEM, "curve");
		}
	if (level == SIM_L3 && !(c->shared = stacks_new(c->bits))) {
		sim_curve_free(c);
		return plumb_fail_errno(status, ENOMEM, "curve: the L3's stacks");
	}
	*out = c;
	return 0;
}

void sim_curve_narrow_rows(sim_curve *c)
{
	c->wide = false;
}

void sim_curve_free(sim_curve *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; c->cores && i < c->config.cores; i++) {
		curve_core *k = &c->cores[i];
		if (k->ready) {
			sim_cache_free(&k->l1[0]);
			sim_cache_free(&k->l1[1]);
			sim_cache_free(&k->l2);
		}
		stacks_free(k->stacks);
	}
	for (uint32_t i = 0; c->counts && i < c->config.cores; i++)
		free(c->counts[i].v);
	for (size_t i = 0; i < c->thread_capacity; i++) {
		for (size_t d = 0; d < c->threads[i].depth; d++)
			free(c->threads[i].open[d].start);
		free(c->threads[i].open);
	}
	for (size_t i = 0; i < c->region_count; i++) {
		free(c->regions[i].name);
		free(c->regions[i].sum);
	}
	stacks_free(c->shared);
	program_free(c->program);
	free(c->regions);
	free(c->threads);
	free(c->cores);
	free(c->counts);
	free(c);
}

/* The core's caches of the levels above, and its own stacks of a private level. */
static int core_ready(sim_curve *c, uint32_t core)
{
	curve_core *k = &c->cores[core];
	if (k->ready)
		return 0;
	const sim_config *g = &c->config;
	if (c->level >= SIM_L2) {
		for (int l = 0; l < 2; l++) {
			const sim_cache_config *cc = &g->cache[l];
			if (sim_cache_init(&k->l1[l], cc->size, cc->line, cc->assoc, SIM_LRU, g->seed, false) != 0)
				return -1;
		}
		if (c->level == SIM_L3 && c->has_l2) {
			const sim_cache_config *cc = &g->cache[SIM_L2];
			if (sim_cache_init(&k->l2, cc->size, cc->line, cc->assoc, SIM_LRU, g->seed, false) != 0)
				return -1;
		}
	}
	if (c->level != SIM_L3 && !(k->stacks = stacks_new(c->bits)))
		return -1;
	k->ready = true;
	return 0;
}

static int thread_core(sim_curve *c, uint32_t thread, uint32_t *core, plumb_status *status)
{
	if (thread >= c->thread_capacity) {
		if (thread >= MAX_THREAD_ID)
			return plumb_fail(status, EINVAL, "thread id %u is too large (at most %u)", thread, MAX_THREAD_ID - 1);
		size_t capacity = c->thread_capacity ? c->thread_capacity : 16;
		while (capacity <= thread)
			capacity *= 2;
		curve_thread *threads = realloc(c->threads, capacity * sizeof *threads);
		if (!threads)
			return plumb_fail_errno(status, ENOMEM, "curve: threads");
		memset(threads + c->thread_capacity, 0, (capacity - c->thread_capacity) * sizeof *threads);
		c->threads = threads;
		c->thread_capacity = capacity;
	}
	curve_thread *t = &c->threads[thread];
	if (!t->used) {
		if (c->next_core >= c->config.cores && c->config.thread_map == SIM_MAP_ERROR)
			return plumb_fail(status, ERANGE, "thread %u is thread number %u, but the simulator has %u cores "
			                  "(thread_map = modulo folds them)", thread, c->next_core + 1, c->config.cores);
		t->used = true;
		t->core = c->next_core % c->config.cores;
		c->next_core++;
	}
	*core = t->core;
	return core_ready(c, *core) == 0 ? 0 : plumb_fail_errno(status, ENOMEM, "curve: core %u", *core);
}

static int region_marker(sim_curve *c, uint32_t core, const trace_record *r, plumb_status *status)
{
	const char *name = trace_region_name(r);
	if (!name || !name[0])
		return plumb_fail(status, EINVAL, "a region marker of thread %u without a name", r->thread);
	curve_thread *t = &c->threads[r->thread];
	const uint64_t *now = c->counts[core].v;
	if (r->kind == TRACE_REGION_BEGIN) {
		size_t region = c->region_count;
		for (size_t i = 0; i < c->region_count; i++)
			if (c->regions[i].thread == r->thread && strcmp(c->regions[i].name, name) == 0) {
				region = i;
				break;
			}
		if (region == c->region_count) {
			if (c->region_count == c->region_capacity) {
				size_t capacity = c->region_capacity ? 2 * c->region_capacity : 8;
				curve_region *regions = realloc(c->regions, capacity * sizeof *regions);
				if (!regions)
					return plumb_fail_errno(status, ENOMEM, "curve: regions");
				c->regions = regions;
				c->region_capacity = capacity;
			}
			curve_region *g = &c->regions[c->region_count];
			memset(g, 0, sizeof *g);
			g->name = strdup(name);
			g->sum = calloc(c->counter_count, sizeof(uint64_t));
			g->thread = r->thread;
			if (!g->name || !g->sum) {
				free(g->name);
				free(g->sum);
				return plumb_fail_errno(status, ENOMEM, "curve: regions");
			}
			c->region_count++;
		}
		if (t->depth == t->capacity) {
			size_t capacity = t->capacity ? 2 * t->capacity : 8;
			curve_open *open = realloc(t->open, capacity * sizeof *open);
			if (!open)
				return plumb_fail_errno(status, ENOMEM, "curve: regions");
			t->open = open;
			t->capacity = capacity;
		}
		uint64_t *start = malloc(c->counter_count * sizeof *start);
		if (!start)
			return plumb_fail_errno(status, ENOMEM, "curve: regions");
		memcpy(start, now, c->counter_count * sizeof *start);
		t->open[t->depth++] = (curve_open){ region, start };
		return 0;
	}
	if (t->depth == 0 || strcmp(c->regions[t->open[t->depth - 1].region].name, name) != 0) {
		c->mismatches++;
		return 0;
	}
	curve_open *o = &t->open[--t->depth];
	curve_region *g = &c->regions[o->region];
	for (size_t i = 0; i < c->counter_count; i++)
		g->sum[i] += now[i] - o->start[i];
	g->entries++;
	free(o->start);
	return 0;
}

/* One reference's lines at the level under study, in order; counts it. */
typedef struct reference_lines {
	uint64_t line[SIM_MAX_LINES];
	unsigned n;
} reference_lines;

static inline __attribute__((always_inline)) int count_body(sim_curve *c, uint32_t core, curve_stacks *t,
                                                            const reference_lines *lines, const bool wide)
{
	uint64_t *v = c->counts[core].v;
	v[0]++;
	if (lines->n == 1)
		return stacks_reference(t, c->bits, lines->line[0], NULL, v + 1, wide);
	unsigned worst[32] = { 0 };
	for (unsigned i = 0; i < lines->n; i++)
		if (stacks_reference(t, c->bits, lines->line[i], worst, NULL, wide) != 0)
			return -1;
	size_t row = c->bits + 2;
	/* a line's distance never grows with the set count, and its walk stops
	 * at the first 0: the first empty bucket ends the reference's */
	for (unsigned k = 0; k <= c->bits && worst[k]; k++)
		v[1 + k * row + worst[k]]++;
	return 0;
}

#if CURVE_WIDE
static __attribute__((target("avx512f"))) int count_wide(sim_curve *c, uint32_t core, curve_stacks *t,
                                                         const reference_lines *lines)
{
	return count_body(c, core, t, lines, true);
}
#endif

static int count_narrow(sim_curve *c, uint32_t core, curve_stacks *t, const reference_lines *lines)
{
	return count_body(c, core, t, lines, false);
}

static int count_reference(sim_curve *c, uint32_t core, curve_stacks *t, const reference_lines *lines)
{
#if CURVE_WIDE
	if (c->wide)
		return count_wide(c, core, t, lines);
#endif
	return count_narrow(c, core, t, lines);
}

/* The line is the most recent of its L1 set (LRU keeps the ways in order):
 * a lookup hits and moves nothing. */
static inline bool l1_at_front(const sim_cache *l1, uint64_t line)
{
	return l1->tags[(size_t)sim_cache_set(l1, line) * l1->assoc] == line;
}

/* An L1 lookup as the engine's pass 1 makes it: touch, or fill (the victim simply leaves). */
static bool l1_reference(sim_cache *l1, uint64_t line)
{
	long w = sim_cache_find(l1, line);
	if (w >= 0) {
		sim_cache_touch(l1, (size_t)w);
		return true;
	}
	size_t v = sim_cache_victim(l1, line);
	sim_cache_fill(l1, v, line, 0);
	return false;
}

/* The L2 above an L3: a miss fills it, and its victim takes the core's L1
 * copies along (plumb's private L2 includes the L1s). */
static void l2_fill(curve_core *k, uint64_t line)
{
	size_t v = sim_cache_victim(&k->l2, line);
	uint64_t victim = k->l2.tags[v];
	if (victim != SIM_NO_TAG) {
		sim_cache_invalidate(&k->l2, v);
		for (int l = 0; l < 2; l++) {
			long w = sim_cache_find(&k->l1[l], victim);
			if (w >= 0)
				sim_cache_invalidate(&k->l1[l], (size_t)w);
		}
		v = sim_cache_victim(&k->l2, line);
	}
	sim_cache_fill(&k->l2, v, line, 0);
}

static int one_reference(sim_curve *c, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size)
{
	if (size == 0)
		size = 1;
	if (address + size - 1 < address)
		size = (uint32_t)(UINT64_MAX - address + 1);
	uint64_t first = address >> c->line_bits, last = (address + size - 1) >> c->line_bits;
	if (last - first >= SIM_MAX_LINES)
		last = first + SIM_MAX_LINES - 1;
	unsigned n = (unsigned)(last - first + 1);
	curve_core *k = &c->cores[core];
	reference_lines lines;
	if (c->level <= SIM_L1D) {
		if ((kind == SIM_IFETCH) != (c->level == SIM_L1I))
			return 0;
		lines.n = n;
		for (unsigned i = 0; i < n; i++)
			lines.line[i] = first + i;
		return count_reference(c, core, k->stacks, &lines);
	}
	/* below the L1s: pass 1, the L1 lookups; pass 2, every line of a
	 * reference one of whose lines missed (cachegrind's straddle rule) */
	int which = kind == SIM_IFETCH ? 0 : 1;
	sim_cache *l1 = &k->l1[which];
	if (n == 1 && l1_at_front(l1, first))
		return 0;   /* a hit on the front way: nothing changes */
	bool hit[SIM_MAX_LINES], missed = false;
	for (unsigned i = 0; i < n; i++) {
		hit[i] = l1_reference(l1, first + i);
		missed |= !hit[i];
	}
	if (!missed)
		return 0;
	lines.n = 0;
	if (c->level == SIM_L2) {
		for (unsigned i = 0; i < n; i++)
			lines.line[lines.n++] = first + i;
		return count_reference(c, core, k->stacks, &lines);
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t line = first + i;
		if (c->has_l2) {
			long w = sim_cache_find(&k->l2, line);
			if (w >= 0) {
				sim_cache_touch(&k->l2, (size_t)w);
				continue;
			}
			if (hit[i])
				continue;   /* the engine only looks for it (the L2 includes the L1s) */
			lines.line[lines.n++] = line;
			l2_fill(k, line);
			if (sim_cache_find(l1, line) < 0)   /* lost to the L2's victim meanwhile */
				sim_cache_fill(l1, sim_cache_victim(l1, line), line, 0);
		} else {
			lines.line[lines.n++] = line;
		}
	}
	return lines.n ? count_reference(c, core, c->shared, &lines) : 0;
}

int sim_curve_batch(sim_curve *c, const trace_record *records, size_t n, plumb_status *status)
{
	static const sim_access_kind kinds[4] = { SIM_IFETCH, SIM_READ, SIM_WRITE, SIM_READ };
	const uint32_t max_size = c->config.max_access_size;
	uint32_t cached_thread = UINT32_MAX, core = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (r->thread != cached_thread) {
			if (thread_core(c, r->thread, &core, status) != 0)
				return -1;
			cached_thread = r->thread;
		}
		if (r->kind > TRACE_MODIFY) {
			if (trace_is_collector_marker(r) || trace_is_call(r))
				continue;
			if (trace_is_marker(r)) {
				if (region_marker(c, core, r, status) != 0)
					return -1;
				continue;
			}
			return plumb_fail(status, EINVAL, "trace record %zu has an unknown kind %u", i, r->kind);
		}
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		sim_access_kind kind = kinds[r->kind];
		if (r->kind == TRACE_MODIFY && c->config.modify == SIM_MODIFY_WRITE)
			kind = SIM_WRITE;
		if (c->level <= SIM_L1D && r->kind != TRACE_MODIFY) {
			/* the L1s' most common case first: a reference inside the line
			 * referenced last, at distance 0 everywhere */
			if ((kind == SIM_IFETCH) != (c->level == SIM_L1I))
				continue;
			uint64_t end = r->address + (size ? size : 1) - 1;
			uint64_t line = r->address >> c->line_bits;
			if (end >= r->address && end >> c->line_bits == line && line == c->cores[core].stacks->last_line) {
				c->counts[core].v[0]++;
				continue;
			}
		}
		if (one_reference(c, core, kind, r->address, size) != 0)
			return plumb_fail_errno(status, ENOMEM, "curve: stacks");
		if (r->kind == TRACE_MODIFY && c->config.modify == SIM_MODIFY_READ_WRITE &&
		    one_reference(c, core, SIM_WRITE, r->address, size) != 0)
			return plumb_fail_errno(status, ENOMEM, "curve: stacks");
	}
	return 0;
}

/* ------------------------------------------- plumbgrind's compact entries */

/* What a use of one of plumbgrind's definitions does at the level, made
 * once per definition (as the simulator makes its ops, sim.c): only the
 * references that can reach the level, each with its size cut as
 * sim_curve_batch cuts it. */
typedef struct curve_op {
	uint64_t address;               /* a fetch's address (the definition's own) */
	uint64_t line;                  /* a fetch inside one line: its line */
	uint32_t size;
	uint32_t front;                 /* and below the L1s: the front way of its L1I set */
	uint32_t repeat;                /* and the fetches of the same line right after it */
	uint8_t fetch;                  /* 1: an instruction fetch; 0: a data reference, its address the use's word */
	uint8_t word;                   /* a data reference's address: the use's data word */
	uint8_t twice;                  /* a modify read and then written (modify = read-write) */
	uint8_t one_line;               /* a fetch inside one line (line, front and repeat are set) */
} curve_op;

typedef struct curve_definition {
	uint32_t first, count;          /* its ops */
	uint32_t head_high;             /* a good use's word, bits 32-63: the tag and the data count */
	uint32_t records;               /* the records a use stands for */
	bool expand;                    /* a record the ops do not take: the use goes as records */
} curve_definition;

struct curve_program {
	uint64_t stream;                /* trace_compact's identity of the stream compiled */
	size_t definitions;
	curve_definition *definition;
	size_t capacity;
	curve_op *ops;
	size_t op_count, op_capacity;
};

static void program_free(curve_program *p)
{
	if (!p)
		return;
	free(p->definition);
	free(p->ops);
	free(p);
}

static int program_define(const sim_curve *c, curve_program *p, const trace_record *t, size_t n)
{
	if (p->definitions == p->capacity) {
		size_t capacity = p->capacity ? 2 * p->capacity : 4096;
		curve_definition *definition = realloc(p->definition, capacity * sizeof *definition);
		if (!definition)
			return -1;
		p->definition = definition;
		p->capacity = capacity;
	}
	if (p->op_count + n > p->op_capacity) {
		size_t capacity = p->op_capacity ? 2 * p->op_capacity : 65536;
		while (capacity < p->op_count + n)
			capacity *= 2;
		curve_op *ops = realloc(p->ops, capacity * sizeof *ops);
		if (!ops)
			return -1;
		p->ops = ops;
		p->op_capacity = capacity;
	}
	const uint32_t max_size = c->config.max_access_size;
	const sim_cache_config *l1i = &c->config.cache[SIM_L1I];
	uint64_t l1i_sets = l1i->size && l1i->assoc ? l1i->size / ((uint64_t)l1i->line * l1i->assoc) : 1;
	if (l1i_sets == 0)
		l1i_sets = 1;
	curve_definition *def = &p->definition[p->definitions];
	def->first = (uint32_t)p->op_count;
	def->count = 0;
	def->expand = false;
	unsigned word = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &t[i];
		if (r->kind > TRACE_MODIFY) {
			def->expand = true;
			def->count = 0;
			break;
		}
		bool fetch = r->kind == TRACE_INSTRUCTION;
		unsigned at = fetch ? 0 : word++;
		/* the level's own: an L1 takes only its kind, the levels below both */
		if (c->level <= SIM_L1D && fetch != (c->level == SIM_L1I))
			continue;
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		curve_op op = {
			.address = fetch ? r->address : 0, .size = size, .fetch = fetch, .word = (uint8_t)at,
			.twice = r->kind == TRACE_MODIFY && c->config.modify == SIM_MODIFY_READ_WRITE,
		};
		uint64_t last_byte = r->address + (size ? size : 1) - 1;
		if (fetch && (c->level <= SIM_L1D || l1i->size) && last_byte >= r->address &&
		    last_byte >> c->line_bits == r->address >> c->line_bits) {
			op.one_line = 1;
			op.line = r->address >> c->line_bits;
			op.front = (uint32_t)((op.line % l1i_sets) * l1i->assoc);
			/* a fetch of the line the op before fetched: at distance 0, or an
			 * L1 hit on the front way (nothing came between) */
			curve_op *before = def->count ? &p->ops[p->op_count + def->count - 1] : NULL;
			if (before && before->one_line && before->line == op.line && before->repeat < UINT32_MAX) {
				before->repeat++;
				continue;
			}
		}
		p->ops[p->op_count + def->count++] = op;
	}
	p->op_count += def->count;
	p->definitions++;
	return 0;
}

static int program_update(sim_curve *c, const trace_compact *cp, plumb_status *status)
{
	curve_program *p = c->program;
	if (!p && !(p = c->program = calloc(1, sizeof *p)))
		return plumb_fail_errno(status, ENOMEM, "curve: plumbgrind's definitions");
	if (p->stream != cp->stream || cp->definitions < p->definitions) {
		/* another stream: start again */
		p->stream = cp->stream;
		p->definitions = 0;
		p->op_count = 0;
	}
	while (p->definitions < cp->definitions) {
		size_t d = p->definitions;
		if (cp->count[d] == 0 || program_define(c, p, cp->templates + cp->first[d], cp->count[d]) != 0)
			return plumb_fail_errno(status, ENOMEM, "curve: plumbgrind's definitions");
		p->definition[d].head_high = (uint32_t)(TRACE_COMPACT_USE_HIGH << 8 | cp->data[d]);
		p->definition[d].records = cp->count[d];
	}
	return 0;
}

/* A use the ops do not take, as its records. */
static int use_expanded(sim_curve *c, const trace_compact *cp, const uint64_t *w, plumb_status *status)
{
	uint32_t id = (uint32_t)w[0];
	const trace_record *t = cp->templates + cp->first[id];
	trace_record records[256];
	const uint64_t *d = w + 1;
	for (size_t i = 0; i < cp->count[id]; i++) {
		records[i] = t[i];
		records[i].thread = cp->thread;
		if (records[i].kind != TRACE_INSTRUCTION)
			records[i].address = *d++;
	}
	return sim_curve_batch(c, records, cp->count[id], status);
}

/* The uses of a run on core's stacks (wide: AVX-512 rows). */
static inline __attribute__((always_inline)) int compact_walk(sim_curve *c, trace_compact *cp, uint32_t core,
                                                              plumb_status *status, const bool wide)
{
	const curve_program *p = c->program;
	curve_core *k = &c->cores[core];
	uint64_t *v = c->counts[core].v;
	const unsigned line_bits = c->line_bits;
	const bool private_l1 = c->level <= SIM_L1D;
	/* a private level's stacks, held in a register (NULL for the L3's) */
	curve_stacks *const stacks = private_l1 ? k->stacks : NULL;
	const unsigned bits = c->bits;
	const uint64_t *w = cp->words, *const run_end = cp->end;
	const size_t definitions = p->definitions;
	uint64_t records = 0;
	/* the level's references, added to v[0] when the walk leaves: a
	 * counter in memory would chain every reference to the one before */
	uint64_t references = 0;
	while (w < run_end) {
		/* An unchecked run (trace_compact.unchecked) is checked here, use by
		 * use, as trace_compact_settle checks it: it ends at the first entry
		 * that is not a good use (the reader reports a bad one).  A checked
		 * run passes every check. */
		const uint64_t *entry = w;
		const uint64_t head = w[0];
		const uint32_t id = (uint32_t)head;
		if (__builtin_expect(id >= definitions, 0))
			break;
		const curve_definition *def = &p->definition[id];
		const uint32_t high = (uint32_t)(head >> 32);
		const uint64_t *d = w + 1, *next = d + (high & 0xff);
		if (__builtin_expect(high != def->head_high || next > run_end, 0))
			break;
		w = next;
		records += def->records;
		if (__builtin_expect(def->expand, 0)) {
			v[0] += references;
			references = 0;
			if (use_expanded(c, cp, entry, status) != 0)
				return -1;
			continue;
		}
		for (const curve_op *op = p->ops + def->first, *end = op + def->count; op < end; op++) {
			if (op->one_line) {
				if (private_l1) {
					/* the L1I's: the line, then its repeats at distance 0 */
					if (op->line != stacks->last_line &&
					    stacks_reference(stacks, bits, op->line, NULL, v + 1, wide) != 0)
						return plumb_fail_errno(status, ENOMEM, "curve: stacks");
					references += 1u + op->repeat;
					continue;
				}
				/* below the L1s: the repeats hit the front way */
				if (k->l1[0].tags[op->front] == op->line)
					continue;
			}
			uint64_t address = op->fetch ? op->address : d[op->word];
			uint32_t size = op->size ? op->size : 1;
			uint64_t last_byte = address + size - 1, line = address >> line_bits;
			bool one_line = last_byte >= address && last_byte >> line_bits == line;
			/* the common cases first: the level's most recent line, or an
			 * L1 hit on the front way, which move nothing */
			if (private_l1) {
				if (one_line) {
					/* the level's most recent line at distance 0, another counted at once */
					if (line != stacks->last_line &&
					    stacks_reference(stacks, bits, line, NULL, v + 1, wide) != 0)
						return plumb_fail_errno(status, ENOMEM, "curve: stacks");
					references += 1u + op->twice;
					continue;
				}
			} else if (one_line && l1_at_front(&k->l1[!op->fetch], line)) {
				continue;
			}
			sim_access_kind kind = op->fetch ? SIM_IFETCH : SIM_READ;
			if (one_reference(c, core, kind, address, size) != 0 ||
			    (op->twice && one_reference(c, core, SIM_WRITE, address, size) != 0))
				return plumb_fail_errno(status, ENOMEM, "curve: stacks");
		}
	}
	v[0] += references;
	if (cp->unchecked) {
		/* where the run ends: the block's uses, walked once */
		cp->end = w;
		cp->records = records;
		cp->unchecked = false;
	}
	return 0;
}

#if CURVE_WIDE
static __attribute__((target("avx512f"))) int compact_wide(sim_curve *c, trace_compact *cp, uint32_t core,
                                                           plumb_status *status)
{
	return compact_walk(c, cp, core, status, true);
}
#endif

static int compact_narrow(sim_curve *c, trace_compact *cp, uint32_t core, plumb_status *status)
{
	return compact_walk(c, cp, core, status, false);
}

int sim_curve_compact(sim_curve *c, trace_compact *cp, plumb_status *status)
{
	if (cp->filtered)
		return plumb_fail(status, EINVAL, "plumbgrind's L1-filtered entries cannot feed a curve (they leave out "
		                  "the L1s' hits)");
	if (cp->words == cp->end)
		return 0;
	if (program_update(c, cp, status) != 0)
		return -1;
	uint32_t core;
	if (thread_core(c, cp->thread, &core, status) != 0)
		return -1;
#if CURVE_WIDE
	if (c->wide)
		return compact_wide(c, cp, core, status);
#endif
	return compact_narrow(c, cp, core, status);
}

int sim_curve_run_reader(sim_curve *c, trace_reader *reader, trace_interleaver *interleaver, uint64_t *records,
                         plumb_status *status)
{
	return sim_curve_run_reader_all(&c, 1, reader, interleaver, records, status);
}

/* Several levels' curves of one pass: each batch goes to every curve in
 * turn (a compact run is settled by the first and read again by the others). */
int sim_curve_run_reader_all(sim_curve *const *curves, size_t count, trace_reader *reader,
                             trace_interleaver *interleaver, uint64_t *records, plumb_status *status)
{
	progress p;
	progress_begin(&p, "plumb sim: records", 0);
	/* the runs of uses checked as the first curve walks them, not walked
	 * twice (the others see the run it settled) */
	if (!interleaver)
		trace_reader_want_unchecked_runs(reader);
	int rc = 0;
	for (;;) {
		/* plumbgrind's entries as they came through its ring, or records */
		const trace_record *batch;
		trace_compact compact = { 0 };
		long got = interleaver ? trace_interleaver_view(interleaver, reader, &batch, BATCH, status)
		                       : trace_reader_view_compact(reader, &batch, &compact, BATCH, status);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		for (size_t i = 0; rc == 0 && i < count; i++)
			if (compact.words ? sim_curve_compact(curves[i], &compact, status) != 0
			                  : sim_curve_batch(curves[i], batch, (size_t)got, status) != 0)
				rc = -1;
		if (rc != 0)
			break;
		if (compact.words)
			trace_reader_compact_taken(reader, &compact);
		*records += compact.words ? compact.records : (uint64_t)got;
		progress_step(&p, (size_t)*records);
	}
	progress_end(&p);
	return rc;
}

/* -------------------------------------------------------------- results */

uint64_t sim_curve_footprint(const sim_curve *c)
{
	if (c->shared)
		return c->shared->used;
	uint64_t most = 0;
	for (uint32_t i = 0; i < c->config.cores; i++)
		if (c->cores[i].stacks && c->cores[i].stacks->used > most)
			most = c->cores[i].stacks->used;
	return most;
}

uint64_t sim_curve_max_size(const sim_curve *c)
{
	return (1ull << c->bits) << c->line_bits;
}

uint64_t sim_curve_shown_size(const sim_curve *c)
{
	uint64_t lines = 1;
	uint64_t footprint = sim_curve_footprint(c);
	while (lines < footprint && lines < (1ull << c->bits))
		lines *= 2;
	return lines << c->line_bits;
}

size_t sim_curve_region_count(const sim_curve *c)
{
	return c->region_count;
}

const char *sim_curve_region_name(const sim_curve *c, size_t index, uint32_t *thread, uint64_t *entries)
{
	if (index >= c->region_count)
		return NULL;
	if (thread)
		*thread = c->regions[index].thread;
	if (entries)
		*entries = c->regions[index].entries;
	return c->regions[index].name;
}

/* Misses at set count 2^k and 2^j ways from counters v. */
static uint64_t misses_of(const sim_curve *c, const uint64_t *v, unsigned k, unsigned j)
{
	const uint64_t *row = v + 1 + (size_t)k * (c->bits + 2);
	uint64_t sum = 0;
	for (unsigned b = j + 1; b <= c->bits + 1; b++)
		sum += row[b];
	return sum;
}

static bool is_power_of_two(uint64_t v)
{
	return v && (v & (v - 1)) == 0;
}

int sim_curve_point(const sim_curve *c, size_t region, uint64_t size, uint32_t ways, uint64_t *misses,
                    uint64_t *accesses)
{
	if (size % (1ull << c->line_bits) != 0)
		return -1;
	uint64_t lines = size >> c->line_bits;
	if (!is_power_of_two(lines) || lines > (1ull << c->bits))
		return -1;
	if (ways == 0)
		ways = (uint32_t)(lines > UINT32_MAX ? 0 : lines);
	if (!is_power_of_two(ways) || ways > lines || (ways > SIM_CURVE_MAX_WAYS && ways != lines))
		return -1;
	unsigned i = log2_floor(lines), j = log2_floor(ways), k = i - j;
	uint64_t total_misses = 0, total_accesses = 0;
	if (region == SIZE_MAX) {
		for (uint32_t core = 0; core < c->config.cores; core++) {
			total_misses += misses_of(c, c->counts[core].v, k, j);
			total_accesses += c->counts[core].v[0];
		}
	} else if (region < c->region_count) {
		total_misses = misses_of(c, c->regions[region].sum, k, j);
		total_accesses = c->regions[region].sum[0];
	} else {
		return -1;
	}
	*misses = total_misses;
	*accesses = total_accesses;
	return 0;
}

static const char *level_word(sim_level level)
{
	static const char *const words[] = { "l1i", "l1d", "l2", "l3" };
	return words[level];
}

output_table *sim_curve_table(output_report *report)
{
	output_table *t = output_table_add(report, "curve", "Misses at every size and associativity (LRU, one pass: "
	                                   "Mattson et al. 1970, Hill and Smith 1989)");
	output_column(t, "region", NULL, 0);
	output_column(t, "level", NULL, 0);
	output_column(t, "size_bytes", "B", 0);
	output_column(t, "ways", NULL, 0);
	output_column(t, "sets", NULL, 0);
	output_column(t, "misses", NULL, 0);
	output_column(t, "miss_ratio", NULL, 6);
	return t;
}

void sim_curve_rows(output_table *t, const sim_curve *c, size_t region, const char *name)
{
	uint64_t shown = sim_curve_shown_size(c) >> c->line_bits;
	for (uint64_t lines = 1; lines <= shown; lines *= 2) {
		for (uint64_t ways = 1; ways <= lines; ways *= 2) {
			if (ways > SIM_CURVE_MAX_WAYS && ways != lines)
				continue;
			uint64_t misses, accesses;
			if (sim_curve_point(c, region, lines << c->line_bits, (uint32_t)ways, &misses, &accesses) != 0)
				continue;
			output_row(t);
			output_cell_text(t, name);
			output_cell_text(t, level_word(c->level));
			output_cell_integer(t, (int64_t)(lines << c->line_bits));
			output_cell_integer(t, (int64_t)ways);
			output_cell_integer(t, (int64_t)(lines / ways));
			output_cell_integer(t, (int64_t)misses);
			if (accesses == 0)
				output_cell_status(t, "n/a", "no references reached the level");
			else
				output_cell_real(t, (double)misses / (double)accesses);
		}
	}
}

/* The knee of a region's fully associative curve: the smallest size whose
 * misses are within a tenth of the way from the largest size's (what no
 * capacity of the grid removes: first references) to one line's; 0 when no
 * capacity removes any miss. */
uint64_t sim_curve_knee(const sim_curve *c, size_t region, uint64_t *most, uint64_t *least)
{
	uint64_t line = 1ull << c->line_bits, top = sim_curve_shown_size(c), accesses;
	*most = *least = 0;
	if (sim_curve_point(c, region, line, 0, most, &accesses) != 0 ||
	    sim_curve_point(c, region, top, 0, least, &accesses) != 0 || *most <= *least)
		return 0;
	for (uint64_t size = line; size <= top; size <<= 1) {
		uint64_t misses;
		if (sim_curve_point(c, region, size, 0, &misses, &accesses) == 0 && (misses - *least) * 10 <= *most - *least)
			return size;
	}
	return top;
}

int sim_curve_levels_parse(const char *text, const sim_config *config, sim_level *levels, size_t *count,
                           plumb_status *status)
{
	*count = 0;
	if (strcasecmp(text, "data") == 0) {
		levels[(*count)++] = SIM_L1D;
		if (config->cache[SIM_L2].size)
			levels[(*count)++] = SIM_L2;
		if (config->cache[SIM_L3].size)
			levels[(*count)++] = SIM_L3;
		return 0;
	}
	char word[16];
	for (const char *p = text;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0 || n >= sizeof word)
			return plumb_fail(status, EINVAL, "'%s' is not a list of levels: l1d, l1i, l2 or l3 separated by "
			                  "commas, or data", text);
		memcpy(word, p, n);
		word[n] = 0;
		sim_level level = SIM_L1D;
		if (sim_curve_level_parse(word, &level, status) != 0)
			return -1;
		for (size_t i = 0; i < *count; i++)
			if (levels[i] == level)
				return plumb_fail(status, EINVAL, "'%s' names the %s twice", text, sim_level_name(level));
		levels[(*count)++] = level;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int sim_curve_new_levels(sim_curve **curves, size_t *count, const sim_config *config, const char *levels,
                         uint64_t max_size, plumb_status *status)
{
	sim_level list[SIM_LEVEL_COUNT];
	*count = 0;
	size_t n;
	if (sim_curve_levels_parse(levels, config, list, &n, status) != 0)
		return -1;
	for (size_t l = 0; l < n; l++)
		if (sim_curve_new(&curves[l], config, list[l], max_size, status) != 0) {
			for (size_t k = 0; k < l; k++)
				sim_curve_free(curves[k]);
			return -1;
		}
	*count = n;
	return 0;
}

output_report *sim_curve_report(const sim_curve *c, const sim_run_facts *facts, plumb_status *status)
{
	return sim_curve_report_all(&c, 1, facts, status);
}

/* A region's name as the tables give it: with its thread where another
 * thread has a region of the same name. */
static void region_label(const sim_curve *c, size_t i, char *name, size_t length)
{
	bool shared_name = false;
	for (size_t j = 0; j < c->region_count; j++)
		shared_name |= j != i && strcmp(c->regions[j].name, c->regions[i].name) == 0;
	if (shared_name)
		snprintf(name, length, "%s (thread %u)", c->regions[i].name, c->regions[i].thread);
	else
		snprintf(name, length, "%s", c->regions[i].name);
}

const char *sim_curve_level_word(const sim_curve *c)
{
	return level_word(c->level);
}

output_table *sim_curve_knees_table(output_report *report)
{
	output_table *k = output_table_add(report, "knees", "Each region's knee: the smallest capacity that removes nine "
	                                   "tenths of the misses any capacity of the grid removes (fully associative LRU)");
	output_column(k, "region", NULL, 0);
	output_column(k, "thread", NULL, 0);
	output_column(k, "level", NULL, 0);
	output_column(k, "references", NULL, 0);
	output_column(k, "misses_one_line", NULL, 0);
	output_column(k, "misses_largest", NULL, 0);
	output_column(k, "knee_bytes", "B", 0);
	return k;
}

void sim_curve_knee_row(output_table *k, const sim_curve *c, size_t region, const char *name)
{
	uint64_t most, least, misses, accesses = 0, knee = sim_curve_knee(c, region, &most, &least);
	sim_curve_point(c, region, 1ull << c->line_bits, 0, &misses, &accesses);
	output_row(k);
	output_cell_text(k, name);
	if (region < c->region_count)
		output_cell_integer(k, c->regions[region].thread);
	else
		output_cell_empty(k);   /* the whole program: every thread */
	output_cell_text(k, level_word(c->level));
	output_cell_integer(k, (int64_t)accesses);
	output_cell_integer(k, (int64_t)most);
	output_cell_integer(k, (int64_t)least);
	if (knee)
		output_cell_integer(k, (int64_t)knee);
	else
		output_cell_status(k, "n/a", accesses ? "no capacity removes a miss: every miss is a line's first reference"
		                                      : "no references reached the level");
}

output_report *sim_curve_report_all(const sim_curve *const *curves, size_t count, const sim_run_facts *facts,
                                    plumb_status *status)
{
	if (count == 0) {
		plumb_fail(status, EINVAL, "no curve");
		return NULL;
	}
	output_report *report = output_report_new("sim");
	if (!report) {
		plumb_fail_errno(status, ENOMEM, "report");
		return NULL;
	}
	const sim_curve *c = curves[0];
	const sim_config *g = &c->config;
	char text[600];
	if (facts) {
		output_meta_text(report, "trace", facts->trace ? facts->trace : "-");
		output_meta_text(report, "format", trace_format_name(facts->format));
		output_meta_integer(report, "records", (int64_t)facts->records);
		if (facts->origin && facts->origin->machine[0])
			output_meta_text(report, "machine", facts->origin->machine);
	}
	output_meta_text(report, "configuration", g->name);
	output_meta_text(report, "machine simulated", sim_config_describe(g, text, sizeof text));
	text[0] = 0;
	for (size_t l = 0; l < count; l++)
		snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", l ? ", " : "",
		         sim_level_name(curves[l]->level));
	output_meta_text(report, count > 1 ? "curve levels" : "curve level", text);
	output_meta_integer(report, "line_bytes", (int64_t)1 << c->line_bits);
	output_meta_integer(report, "footprint_lines", (int64_t)sim_curve_footprint(c));
	output_meta_integer(report, "grid_max_bytes", (int64_t)sim_curve_max_size(c));
	snprintf(text, sizeof text, "sizes 1 line to %" PRIu64 " B in powers of two; 1 to %d ways (powers of two) "
	         "and fully associative; LRU", sim_curve_shown_size(c), SIM_CURVE_MAX_WAYS);
	for (size_t l = 1; l < count; l++)
		snprintf(text + strlen(text), sizeof text - strlen(text), "; the %s's to %" PRIu64 " B",
		         sim_level_name(curves[l]->level), sim_curve_shown_size(curves[l]));
	output_meta_text(report, "grid", text);

	output_table *t = sim_curve_table(report);
	output_table *k = sim_curve_knees_table(report);
	for (size_t l = 0; l < count; l++) {
		c = curves[l];
		sim_curve_rows(t, c, SIZE_MAX, "(all)");
		sim_curve_knee_row(k, c, SIZE_MAX, "(all)");
		for (size_t i = 0; i < c->region_count; i++) {
			char name[TRACE_REGION_NAME_MAX + 32];
			region_label(c, i, name, sizeof name);
			sim_curve_rows(t, c, i, name);
			sim_curve_knee_row(k, c, i, name);
		}
	}

	for (size_t l = 0; l < count; l++) {
		c = curves[l];
		if (sim_curve_footprint(c) > (1ull << c->bits))
			output_note(report, "the footprint%s%s (%" PRIu64 " lines) is larger than the grid (%" PRIu64 " B): "
			            "raise --curve-max for larger sizes", count > 1 ? " at the " : "",
			            count > 1 ? sim_level_name(c->level) : "", sim_curve_footprint(c), sim_curve_max_size(c));
		if (c->level == SIM_L2)
			output_note(report, "the L2's input is what missed the configured L1s; the curve assumes the L2 never removes "
			            "their lines (plumb's private L2 includes the L1s and does), so a size where plumb sim counts "
			            "back-invalidations may differ");
		if (c->level == SIM_L3)
			output_note(report, "the L3's input is what missed the configured private levels of every core%s",
			            g->l3_inclusion == SIM_INCLUSIVE ? "; the curve assumes the L3 never removes their lines (an "
			            "inclusive L3 does: compare with l3.inclusion = non-inclusive)" : "");
	}
	c = curves[0];
	if (g->cores > 1 && c->next_core > 1)
		output_note(report, "several cores: the curve leaves coherence out (lines lost to another core's write); "
		            "it is exact when the threads write no line another core reads");
	if (c->region_count && c->next_core > g->cores)
		output_note(report, "more threads than cores: a region also counts the references of the other threads "
		            "of its core");
	if (c->mismatches)
		output_note(report, "%" PRIu64 " region ends did not name the innermost open region of their thread and "
		            "were ignored", c->mismatches);
	size_t open = 0;
	for (size_t i = 0; i < c->thread_capacity; i++)
		open += c->threads[i].depth;
	if (open)
		output_note(report, "%zu regions were still open at the end of the trace and are not counted", open);
	return report;
}
