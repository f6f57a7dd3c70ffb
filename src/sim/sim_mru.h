/* The MRU loops' view of the L1s (sim_loop_mru.c, and the entries' loops
 * sim_loop_compact.c and sim_loop_classify.c that share it): the L1s'
 * geometry and hit tests per access kind, the counts kept in locals, the
 * way out of the inner loops for everything that is not a hit at the front
 * of its set, and the vector search of an 8-way set. */
#ifndef PLUMB_SIM_MRU_H
#define PLUMB_SIM_MRU_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "sim/sim_state.h"

/* An L1 as the MRU loops see it for one access kind. */
typedef struct mru_l1 {
	const uint64_t *tags;
	uint8_t *meta;
	uint64_t set_mask;
	uint32_t assoc;
	uint8_t line_bits;
	uint8_t need;           /* meta bits that are checked ... */
	uint8_t want;           /* ... and the value they must have */
	uint8_t dirty;          /* META_DIRTY for a write */
	uint64_t one;           /* 1 in this kind's field of the packed count */
} mru_l1;

typedef struct mru_state {
	mru_l1 l1[SIM_KIND_COUNT];     /* indexed by access kind: L1I, L1D, L1D */
	uint64_t references[SIM_KIND_COUNT];
	uint64_t general[SIM_KIND_COUNT];   /* references sent to sim_reference_caches */
	uint64_t straddles;
	uint32_t core;
	bool write_back;
} mru_state;


/* Loads the current core's L1s (m->core, m->write_back set). */
void sim_mru_load(sim *s, mru_state *m);
/* Adds the counts of the current core and thread to the statistics. */
void sim_mru_flush(sim *s, mru_state *m);
/* One reference that is not a hit at the front of its set (counted by the
 * caller): the same decisions as the hint loop's (sim_loop_hint.c).  0, or
 * -1 after an invariant violation (s->failure). */
int sim_mru_other(sim *s, mru_state *m, sim_access_kind kind, uint64_t address, uint32_t size);
/* A record the inner loops do not take: a thread switch, a modify, size 0
 * or an unknown kind.  0, or -1 with status filled. */
int sim_mru_special(sim *s, mru_state *m, const trace_record *r, size_t index, uint32_t *thread, plumb_status *status);

/* The vector search.  With AVX-512 and 8-way L1s a set's tags are one vector: the
 * line is looked for in all ways at once and the move to the front is a
 * lane rotation, with no branch on the way it is in (the scalar search and
 * move, inline or in mru_other, cost gzip's run 8% more CPU).  A hit at the
 * front stays a scalar compare with nothing written: stores of the whole set
 * on every hit made the next reference of the set wait for them. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIM_WIDE_SETS 1
/* Whether a hit of line at way 1-7 of the 8-way set at tags/meta was moved
 * to the front (0: not there, or not a hit for its metadata). */
static inline __attribute__((target("avx512f"))) int wide_set_hit(uint64_t *tags, uint8_t *meta, uint64_t line,
                                                                 uint8_t need, uint8_t want, uint8_t dirty)
{
	__m512i t = _mm512_loadu_si512(tags);
	unsigned found_ways = (unsigned)_mm512_cmpeq_epi64_mask(t, _mm512_set1_epi64((long long)line));
	uint64_t m;
	memcpy(&m, meta, sizeof m);
	unsigned way = (unsigned)__builtin_ctz(found_ways | 0x100u);   /* 8: not in the set */
	uint8_t found = (uint8_t)(m >> (8 * (way & 7)));
	if (way >= 8 || (found & need) != want)
		return 0;
	/* ways 0..way-1 move down one, the line goes to the front */
	t = _mm512_mask_mov_epi64(t, (__mmask8)((2u << way) - 1), _mm512_alignr_epi64(t, t, 7));
	_mm512_storeu_si512(tags, _mm512_mask_set1_epi64(t, 1, (long long)line));
	uint64_t moved = ~0ull >> (56 - 8 * way);   /* the bytes of ways 0..way */
	m = (m & ~moved) | ((m << 8) & moved) | (uint8_t)(found | dirty);
	memcpy(meta, &m, sizeof m);
	return 1;
}
#else
#define SIM_WIDE_SETS 0
static inline int wide_set_hit(uint64_t *tags, uint8_t *meta, uint64_t line, uint8_t need, uint8_t want, uint8_t dirty)
{
	(void)tags, (void)meta, (void)line, (void)need, (void)want, (void)dirty;
	return 0;
}
#endif

/* A one-line data reference that hits in the L1D, at the front or deeper
 * (moved to the front); false: mru_other's to decide. */
static inline __attribute__((always_inline)) bool l1d_hit(const mru_l1 *f, uint64_t address, uint32_t size,
                                                          const bool wide)
{
	uint64_t line = address >> f->line_bits;
	size_t front = (size_t)(line & f->set_mask) * f->assoc;
	if (__builtin_expect(((address + size - 1) >> f->line_bits) != line, 0))
		return false;
	if (__builtin_expect(f->tags[front] == line, 1)) {
		unsigned meta = f->meta[front];
		if (__builtin_expect((meta & f->need) == f->want, 1)) {
			if (__builtin_expect(f->dirty & ~meta, 0))
				f->meta[front] = (uint8_t)(meta | f->dirty);
			return true;
		}
		return false;
	}
	if (wide)
		return wide_set_hit((uint64_t *)f->tags + front, f->meta + front, line, f->need, f->want, f->dirty);
	if (f->assoc > 1 && f->tags[front + 1] == line) {
		/* the second way: mru_other's move to the front, a swap */
		uint8_t meta = f->meta[front + 1];
		if ((meta & f->need) == f->want) {
			uint64_t *tags = (uint64_t *)f->tags;
			tags[front + 1] = tags[front];
			f->meta[front + 1] = f->meta[front];
			tags[front] = line;
			f->meta[front] = (uint8_t)(meta | f->dirty);
			return true;
		}
	}
	return false;
}

#endif
