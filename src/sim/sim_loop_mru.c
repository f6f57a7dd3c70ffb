/* The plain loop variant for records: no classification, no TLB, LRU L1s
 * with a power-of-two number of sets (sim_loop_choose), the common case and
 * the benchmark's; and the way out of the MRU loops (sim_mru.h) that the
 * entries' loops share. */
#include <errno.h>
#include <string.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"
#include "sim/sim_mru.h"

void sim_mru_masks(sim_access_kind kind, bool write_back, uint8_t *need, uint8_t *want, uint8_t *dirty)
{
	*need = META_PREFETCHED;
	*want = 0;
	*dirty = 0;
	if (kind == SIM_WRITE) {
		/* a write-through L1D sends every write down: never the want */
		*need = META_STATE | META_PREFETCHED;
		*want = write_back ? SIM_STATE_M : 0xff;
		*dirty = META_DIRTY;
	}
}

void sim_mru_load(sim *s, mru_state *m)
{
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		sim_cache *c = &s->core[m->core].cache[k == SIM_IFETCH ? SIM_L1I : SIM_L1D];
		mru_l1 *f = &m->l1[k];
		f->tags = c->tags;
		f->meta = c->meta;
		f->set_mask = c->set_mask;
		f->assoc = c->assoc;
		f->line_bits = (uint8_t)c->line_bits;
		f->one = 1ull << (16 * k);
		sim_mru_masks((sim_access_kind)k, m->write_back, &f->need, &f->want, &f->dirty);
	}
}

void sim_mru_flush(sim *s, mru_state *m)
{
	sim_core_stats *cs = &s->stats.core[m->core];
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		uint64_t n = m->references[k];
		sim_count_references(s, m->core, k, n);
		cs->cache[k == SIM_IFETCH ? SIM_L1I : SIM_L1D].accesses[k] += n - m->general[k];
		m->references[k] = m->general[k] = 0;
	}
	cs->straddles += m->straddles;
	m->straddles = 0;
}

/* The references mru_other does not settle: misses, writes needing
 * ownership, straddles that miss.  Out of line, so the deeper hits in
 * mru_other save and restore no registers for it. */
static __attribute__((noinline)) int mru_general(sim *s, mru_state *m, sim_access_kind kind, uint64_t address,
                                                  uint32_t size)
{
	m->general[kind]++;
	s->current_ip = 0;
	sim_reference_caches(s, m->core, kind, address, size);
	return s->failed ? -1 : 0;
}

/* The way of line in its set (0 = the front), or -1; and the move of a
 * permitted line to the front of its set, dirty for a write.  From the
 * per-kind copy of the L1's geometry: the set of a line is its low bits
 * (mru_eligible). */
static inline long mru_find(const mru_l1 *f, uint64_t line, size_t *base)
{
	*base = (size_t)(line & f->set_mask) * f->assoc;
	const uint64_t *tags = f->tags + *base;
	for (uint32_t w = 0; w < f->assoc; w++)
		if (tags[w] == line)
			return (long)w;
	return -1;
}

static inline void mru_to_front(const mru_l1 *f, size_t base, uint32_t way)
{
	uint64_t *tags = (uint64_t *)f->tags + base;
	uint8_t *meta = f->meta + base;
	uint64_t line = tags[way];
	uint8_t found = meta[way];
	for (uint32_t i = way; i > 0; i--) {
		tags[i] = tags[i - 1];
		meta[i] = meta[i - 1];
	}
	tags[0] = line;
	meta[0] = (uint8_t)(found | f->dirty);
}

/* A straddle: when its two lines both hit, one reference, both lines
 * touched in order (cachegrind's rule).  With two sets or more the two
 * lines are in different sets, so the first move leaves the second line's
 * way alone. */
static __attribute__((noinline)) int mru_straddle(sim *s, mru_state *m, sim_access_kind kind, uint64_t address,
                                                   uint32_t size, uint64_t line, uint64_t last_line)
{
	const mru_l1 *f = &m->l1[kind];
	if (f->set_mask != 0) {
		size_t base_a, base_b;
		long a = mru_find(f, line, &base_a), b = mru_find(f, last_line, &base_b);
		if (a >= 0 && b >= 0 && (f->meta[base_a + (size_t)a] & f->need) == f->want &&
		    (f->meta[base_b + (size_t)b] & f->need) == f->want) {
			mru_to_front(f, base_a, (uint32_t)a);
			mru_to_front(f, base_b, (uint32_t)b);
			m->straddles++;
			return 0;
		}
		return mru_general(s, m, kind, address, size);
	}
	sim_cache *c = &s->core[m->core].cache[kind == SIM_IFETCH ? SIM_L1I : SIM_L1D];
	long a = sim_cache_find(c, line), b = sim_cache_find(c, last_line);
	if (a >= 0 && b >= 0 && (c->meta[a] & f->need) == f->want && (c->meta[b] & f->need) == f->want) {
		c->meta[a] |= f->dirty;
		sim_cache_move_to_front(c, (size_t)a);
		b = sim_cache_find(c, last_line);   /* one set: the move shifted it */
		c->meta[b] |= f->dirty;
		sim_cache_move_to_front(c, (size_t)b);
		m->straddles++;
		return 0;
	}
	return mru_general(s, m, kind, address, size);
}

/* One reference that is not a hit at the front of its set (counted by the
 * caller): the same decisions as the hint loop's (sim_loop_hint.c).  A line deeper in its
 * set is found and moved to the front here; the rest goes out of line, so
 * this path saves and restores fewer registers. */
__attribute__((noinline)) int sim_mru_other(sim *s, mru_state *m, sim_access_kind kind, uint64_t address, uint32_t size)
{
	const mru_l1 *f = &m->l1[kind];
	uint64_t line = address >> f->line_bits, last_line = (address + size - 1) >> f->line_bits;
	if (size != 0 && last_line == line) {
		size_t base = (size_t)(line & f->set_mask) * f->assoc;
		uint64_t *tags = (uint64_t *)f->tags + base;
		uint8_t *meta = f->meta + base;
		for (uint32_t w = 0; w < f->assoc; w++) {
			if (tags[w] != line)
				continue;
			uint8_t found = meta[w];
			if ((found & f->need) != f->want)
				break;
			for (uint32_t i = w; i > 0; i--) {
				tags[i] = tags[i - 1];
				meta[i] = meta[i - 1];
			}
			tags[0] = line;
			meta[0] = (uint8_t)(found | f->dirty);
			return 0;
		}
	} else if (size != 0 && last_line == line + 1 && address + size - 1 > address) {
		return mru_straddle(s, m, kind, address, size, line, last_line);
	}
	return mru_general(s, m, kind, address, size);
}

/* A record the inner loop does not take: a thread switch, a modify, size 0
 * or an unknown kind.  0, or -1 with status filled. */
__attribute__((noinline)) int sim_mru_special(sim *s, mru_state *m, const trace_record *r, size_t index, uint32_t *thread,
                                          plumb_status *status)
{
	if (r->thread != *thread) {
		sim_mru_flush(s, m);
		if (sim_thread_enter(s, r->thread, &m->core, status) != 0)
			return -1;
		*thread = r->thread;
		sim_mru_load(s, m);
	}
	if (r->kind > TRACE_MODIFY) {
		if (trace_is_collector_marker(r))
			return 0;   /* a halt or a loss: no reference */
		if (trace_is_call(r))   /* only annotation follows calls */
			return 0;
		if (trace_is_marker(r)) {
			sim_mru_flush(s, m);   /* exact statistics for the region's snapshot */
			return sim_region_marker(s, m->core, r, status);
		}
		return plumb_fail(status, EINVAL, "trace record %zu has an unknown kind %u", index, r->kind);
	}
	uint32_t size = r->size;
	if (s->config.max_access_size && size > s->config.max_access_size)
		size = s->config.max_access_size;
	sim_access_kind kind = (sim_access_kind)r->kind;
	bool second_write = false;
	if (r->kind == TRACE_MODIFY) {
		kind = s->config.modify == SIM_MODIFY_WRITE ? SIM_WRITE : SIM_READ;
		second_write = s->config.modify == SIM_MODIFY_READ_WRITE;
	}
	for (;;) {
		m->references[kind]++;
		if (sim_mru_other(s, m, kind, r->address, size) != 0)
			return plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", index, s->failure);
		if (!second_write)
			return 0;
		second_write = false;
		kind = SIM_WRITE;
	}
}

/* The plain loop (no classification, no TLB) when both L1s are LRU with a
 * power-of-two number of sets, the common case and the benchmark's.  Sets
 * are kept in recency order, so the front way of a set (tags[set * assoc])
 * is a hit that needs no move, whatever references came in between: this
 * subsumes the last-way hint and costs no state carried from one record to
 * the next.  The common record (one line, at the front of its set, a read,
 * a fetch, or a write of a line held in M) is a shift, a mask, a multiply,
 * one tag and one metadata compare; the checks of the meta byte come from
 * a per-kind table (what must be set and clear), so reads and writes take
 * the same branch.  References are counted per kind in one register, 16
 * bits a kind (so at most 65535 records between two unpackings); the hits
 * are the references minus those sent to sim_reference_caches.  Everything
 * else (a line deeper in its set, a straddle, a miss, a modify, a thread
 * switch) leaves the inner loop for sim_mru_other or sim_mru_special, which do
 * exactly what the hint loop (sim_loop_hint.c) does. */
static inline __attribute__((always_inline)) int batch_mru_body(sim *s, const trace_record *records, size_t n,
                                                                plumb_status *status, const bool cut)
{
	mru_state m;
	memset(&m, 0, sizeof m);
	m.write_back = s->config.cache[SIM_L1D].write_back;
	uint32_t thread = records[0].thread;
	if (sim_thread_enter(s, thread, &m.core, status) != 0)
		return -1;
	sim_mru_load(s, &m);
	const uint32_t max_size = s->config.max_access_size ? s->config.max_access_size : UINT32_MAX;
	int rc = 0;
	size_t i = 0;
	while (i < n && rc == 0) {
		size_t stop = n - i > 65535 ? i + 65535 : n;
		uint64_t packed = 0;   /* references of kind k in bits 16k..16k+15 */
		for (; i < stop; i++) {
			const trace_record *r = &records[i];
			unsigned kind = r->kind;
			uint32_t size = r->size;
			if (__builtin_expect(r->thread != thread || kind > TRACE_WRITE || size == 0, 0))
				break;
			if (cut && size > max_size)
				size = max_size;
			const mru_l1 *f = &m.l1[kind];
			packed += f->one;
			uint64_t address = r->address;
			uint64_t line = address >> f->line_bits;
			size_t front = (size_t)(line & f->set_mask) * f->assoc;
			if (__builtin_expect(((address + size - 1) >> f->line_bits) == line && f->tags[front] == line, 1)) {
				unsigned meta = f->meta[front];
				if (__builtin_expect((meta & f->need) == f->want, 1)) {
					if (__builtin_expect(f->dirty & ~meta, 0))
						f->meta[front] = (uint8_t)(meta | f->dirty);
					continue;
				}
			}
			rc = sim_mru_other(s, &m, (sim_access_kind)kind, address, size);
			if (rc) {
				rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", i, s->failure);
				break;
			}
		}
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			m.references[k] += (packed >> (16 * k)) & 0xffff;
		if (rc == 0 && i < stop) {
			/* after the unpacking: a thread switch flushes the counts */
			rc = sim_mru_special(s, &m, &records[i], i, &thread, status);
			i++;
		}
	}
	sim_mru_flush(s, &m);
	return rc;
}

/* Specialised for max_access_size, so the usual 0 costs nothing. */
int sim_loop_mru(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_mru_body(s, records, n, status, false);
}

int sim_loop_mru_cut(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return batch_mru_body(s, records, n, status, true);
}

