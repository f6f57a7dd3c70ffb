/* The entries' loop variant with classification (sim_loop_choose):
 * plumbgrind's entries walked as they are, the L1s' shadows fed. */
#include <errno.h>
#include <string.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"
#include "sim/sim_mru.h"
#include "sim/sim_program.h"

/* What the hint loop (sim_loop_hint.c) does with classification and no TLB, for LRU L1s
 * with power-of-two sets: a hit also references the L1's shadow (inline
 * when the line is the shadow's most recent already, as after a fetch of
 * the same line); with several cores a one-line write hit of a line in M
 * also records the words written (sim_write_hit_words, what the general
 * path adds for the sharing masks), and the other writes take the general
 * path, as every write does with Franz's ESI.  The fetches that follow a hit in
 * the same line are hits and the shadow's most recent line: counted at
 * once.  A hit deeper in its set is moved to the front inline (with 8-way
 * L1s and AVX-512, by the vector search of sim_mru.h); a definition
 * whose fetch lines are all hits has its fetches counted at once and only
 * its data references walked (compact_classify_body).  Everything else goes
 * through classify_one, the hint loop's decisions for one reference. */
static inline void shadow_touch(sim_shadow *shadow, uint64_t line)
{
	sim_shadow_touch(shadow, line);
}

typedef struct classify_state {
	mru_state m;
	sim_cache *cache[SIM_KIND_COUNT];   /* by kind: L1I, L1D, L1D */
	bool note_writes;                    /* several cores: a write hit records its words */
	bool general_writes;                 /* several cores and ESI: every write is general */
} classify_state;

static __attribute__((noinline)) int classify_one(sim *s, classify_state *c, sim_access_kind kind, uint64_t address,
                                                   uint32_t size, uint64_t ip)
{
	mru_state *m = &c->m;
	const mru_l1 *f = &m->l1[kind];
	sim_cache *cache = c->cache[kind];
	if (s->config.max_access_size && size > s->config.max_access_size)
		size = s->config.max_access_size;
	uint64_t line = address >> f->line_bits, last_line = (address + size - 1) >> f->line_bits;
	if (kind == SIM_WRITE && c->general_writes) {
		/* the general path */
	} else if (size != 0 && last_line == line + 1 && address + size - 1 > address) {
		if (kind == SIM_WRITE && c->note_writes)
			goto general;   /* a straddling write records its words per line */
		long a = sim_cache_find(cache, line), b = sim_cache_find(cache, last_line);
		if (a >= 0 && b >= 0 && (cache->meta[a] & f->need) == f->want && (cache->meta[b] & f->need) == f->want) {
			sim_shadow_touch(&cache->shadow, line);
			sim_shadow_touch(&cache->shadow, last_line);
			cache->meta[a] |= f->dirty;
			sim_cache_move_to_front(cache, (size_t)a);
			b = sim_cache_find(cache, last_line);
			cache->meta[b] |= f->dirty;
			sim_cache_move_to_front(cache, (size_t)b);
			m->straddles++;
			return 0;
		}
	} else if (size != 0 && last_line == line) {
		long w = sim_cache_find(cache, line);
		if (w >= 0 && (cache->meta[w] & f->need) == f->want) {
			shadow_touch(&cache->shadow, line);
			if (kind == SIM_WRITE && c->note_writes && sim_others_recorded(s, m->core))
				sim_write_hit_words(s, m->core, address, size);
			cache->meta[w] |= f->dirty;
			sim_cache_move_to_front(cache, (size_t)w);
			return 0;
		}
	}
general:
	m->general[kind]++;
	s->current_ip = ip;
	sim_reference_caches(s, m->core, kind, address, size);
	return s->failed ? -1 : 0;
}

/* Whether line is in its set of an ordered L1 (front: the set's first way)
 * with metadata that makes it a hit; if so it is moved to the front (with
 * dirty added), as classify_one moves a hit.  wide: 8-way sets, AVX-512. */
static inline __attribute__((always_inline)) bool l1_hit_to_front(uint64_t *tags, uint8_t *meta, size_t front,
                                                                  uint32_t assoc, uint64_t line, uint8_t need,
                                                                  uint8_t want, uint8_t dirty, const bool wide)
{
	if (__builtin_expect(tags[front] == line, 1)) {
		unsigned found = meta[front];
		if (__builtin_expect((found & need) != want, 0))
			return false;
		if (dirty & ~found)
			meta[front] = (uint8_t)(found | dirty);
		return true;
	}
	if (wide)
		return wide_set_hit(tags + front, meta + front, line, need, want, dirty);
	for (uint32_t w = 1; w < assoc; w++) {
		if (tags[front + w] != line)
			continue;
		uint8_t found = meta[front + w];
		if ((found & need) != want)
			return false;
		for (uint32_t i = w; i > 0; i--) {
			tags[front + i] = tags[front + i - 1];
			meta[front + i] = meta[front + i - 1];
		}
		tags[front] = line;
		meta[front] = (uint8_t)(found | dirty);
		return true;
	}
	return false;
}

/* A shadow's log as the loop keeps it: in locals, which the compiler can
 * keep in registers (the shadow's own fields might be any of the stores to
 * the tags, as far as it can tell), written back before anything else
 * reads the shadow (classify_one, a sync). */
typedef struct touch_log {
	sim_shadow *shadow;
	uint64_t *at, *full;      /* the next entry; the log's end */
	uint64_t last, before;    /* the two lines touched last, distinct (before: SIM_NO_TAG, none) */
} touch_log;

/* The lines touched are the log's, then before, then last.  Only the order
 * of last touches matters to an LRU list, so a line that goes back and
 * forth with the one before it (a loop's stack slot and its array) swaps
 * the two instead of making an entry: a line is logged when a third line
 * pushes it out, or when the log is handed over. */
static inline __attribute__((always_inline)) void touch_log_load(touch_log *t)
{
	t->at = t->shadow->log + t->shadow->logged;
	t->full = t->shadow->log + t->shadow->log_capacity;
	t->last = t->shadow->last;
	t->before = SIM_NO_TAG;
}

static inline __attribute__((always_inline)) void touch_log_push(touch_log *t, uint64_t line)
{
	*t->at++ = line;
	if (__builtin_expect(t->at == t->full, 0)) {
		t->shadow->logged = (uint32_t)(t->at - t->shadow->log);
		sim_shadow_sync(t->shadow);
		t->at = t->shadow->log + t->shadow->logged;
		t->full = t->shadow->log + t->shadow->log_capacity;
	}
}

/* Logs the two lines and hands the log back to the shadow (last its most
 * recent line).  The last line stays the local log's, logged: it is not
 * logged yet when before is a line, or when it is not the shadow's last
 * (the first line after a load whose shadow had none). */
static inline __attribute__((always_inline)) void touch_log_store(touch_log *t)
{
	if (t->before != SIM_NO_TAG) {
		touch_log_push(t, t->before);
		touch_log_push(t, t->last);
		t->before = SIM_NO_TAG;
	} else if (t->last != t->shadow->last) {
		touch_log_push(t, t->last);
	}
	t->shadow->last = t->last;
	t->shadow->logged = (uint32_t)(t->at - t->shadow->log);
}

/* touch_log_store for a log that touch_log_add alone adds to (its last
 * line is logged already). */
static inline __attribute__((always_inline)) void touch_log_store_plain(const touch_log *t)
{
	t->shadow->last = t->last;
	t->shadow->logged = (uint32_t)(t->at - t->shadow->log);
}

/* sim_shadow_touch on the local copy: the L1I's (its lines come a use's
 * lines at a time, and seldom back and forth). */
static inline __attribute__((always_inline)) void touch_log_add(touch_log *t, uint64_t line)
{
	if (line == t->last)
		return;
	touch_log_push(t, line);
	t->last = line;
}

/* The same, swapping a line that goes back and forth with the one before
 * it: the L1D's. */
static inline __attribute__((always_inline)) void touch_log_swap(touch_log *t, uint64_t line)
{
	if (line == t->last)
		return;
	uint64_t pushed = t->before;
	t->before = t->last;
	t->last = line;
	if (line == pushed)
		return;
	if (pushed != SIM_NO_TAG)
		touch_log_push(t, pushed);
}

/* A one-line data reference that hits in the L1D, moved to the front, with
 * its line touched in the L1D's shadow and, for a write when another core
 * holds an invalidation record (recorded), its words noted; false:
 * classify_one's to decide. */
static inline __attribute__((always_inline)) bool classify_data_hit(sim *s, uint32_t core, uint64_t *tags,
                                                                    uint8_t *meta, uint64_t set_mask,
                                                                    unsigned line_bits, uint32_t assoc,
                                                                    touch_log *shadow, unsigned kind,
                                                                    uint64_t address, uint32_t size, uint8_t need,
                                                                    uint8_t want, uint8_t dirty, bool recorded,
                                                                    const bool wide)
{
	uint64_t line = address >> line_bits;
	if (__builtin_expect(((address + size - 1) >> line_bits) != line, 0))
		return false;
	size_t front = (size_t)(line & set_mask) * assoc;
	if (!l1_hit_to_front(tags, meta, front, assoc, line, need, want, dirty, wide))
		return false;
	touch_log_swap(shadow, line);
	if (__builtin_expect(recorded, 0) && kind == OP_WRITE)
		sim_write_hit_words(s, core, address, size);
	return true;
}

/* classify_one, with the logs written back before and read again after,
 * and whether another core now holds an invalidation record. */
static inline __attribute__((always_inline)) int classify_logged(sim *s, classify_state *c, touch_log *ilog,
                                                                 touch_log *dlog, sim_access_kind kind,
                                                                 uint64_t address, uint32_t size, uint64_t ip,
                                                                 bool *recorded)
{
	touch_log_store_plain(ilog);
	touch_log_store(dlog);
	int rc = classify_one(s, c, kind, address, size, ip);
	touch_log_load(ilog);
	touch_log_load(dlog);
	*recorded = c->note_writes && sim_others_recorded(s, c->m.core);
	return rc;
}

/* The loop.  A definition's fast form (compact_mru's) is taken here too:
 * when its fetch lines are all at the front of their sets, every fetch is a
 * hit, and once its data references have all hit too, the L1I's shadow is
 * touched with its lines in the order of their last fetches (p->lines),
 * which leaves the shadow as touching them fetch by fetch would: only the
 * order of last touches matters to an LRU list, and the data references
 * that hit touch the L1D's shadow only.  When a data reference does not
 * hit, the fetches before it are touched in order, the fetches after it are
 * taken back, and the ops after it go one by one. */
static inline __attribute__((always_inline)) int compact_classify_body(sim *s, trace_compact *cp,
                                                                       plumb_status *status, const bool wide)
{
	const sim_program *p = s->program;
	classify_state c;
	memset(&c, 0, sizeof c);
	mru_state *m = &c.m;
	m->write_back = s->config.cache[SIM_L1D].write_back;
	c.note_writes = s->config.cores > 1;
	c.general_writes = sim_every_write_general(s);
	if (sim_thread_enter(s, cp->thread, &m->core, status) != 0)
		return -1;
	sim_mru_load(s, m);
	const uint32_t core = m->core;
	c.cache[SIM_IFETCH] = &s->core[core].cache[SIM_L1I];
	c.cache[SIM_READ] = c.cache[SIM_WRITE] = &s->core[core].cache[SIM_L1D];
	touch_log ilog = { .shadow = &c.cache[SIM_IFETCH]->shadow }, dlog = { .shadow = &c.cache[SIM_READ]->shadow };
	touch_log_load(&ilog);
	touch_log_load(&dlog);
	const mru_l1 l1d = m->l1[SIM_READ];   /* the geometry; need, want and dirty by kind below */
	const uint64_t *itags = m->l1[SIM_IFETCH].tags;
	const uint8_t *imeta = m->l1[SIM_IFETCH].meta;
	const uint8_t ineed = m->l1[SIM_IFETCH].need, iwant = m->l1[SIM_IFETCH].want;
	const uint32_t iassoc = m->l1[SIM_IFETCH].assoc;
	/* by kind: the L1I's, and classify_masks' for a read and a write (the
	 * fast form's data ops carry the same) */
	uint8_t need[SIM_KIND_COUNT] = { ineed }, want[SIM_KIND_COUNT] = { iwant }, dirty[SIM_KIND_COUNT] = { 0 };
	for (unsigned k = SIM_READ; k <= SIM_WRITE; k++)
		sim_classify_masks(s, k, &need[k], &want[k], &dirty[k]);
	/* another core holds an invalidation record: only classify_one's
	 * general path changes that */
	bool recorded = c.note_writes && sim_others_recorded(s, core);
	uint64_t counts[SIM_KIND_COUNT] = { 0, 0, 0 }, straddles = 0, records = 0;
	int rc = 0;
	const uint64_t *w = cp->words, *end = cp->end;
	const size_t definitions = p->definitions;
	const sim_definition *defs = p->definition;
	const sim_op *const ops = p->ops;
	const sim_fetch_line *const program_lines = p->lines;
	const sim_data_op *const data_ops = p->data_ops;
	/* the L1D's geometry in locals (an 8-way set with AVX-512) */
	uint64_t *const dtags = (uint64_t *)l1d.tags;
	uint8_t *const dmeta = l1d.meta;
	const uint64_t dmask = l1d.set_mask;
	const unsigned dbits = l1d.line_bits;
	const uint32_t dassoc = wide ? 8 : l1d.assoc;
	while (w < end) {
		/* An unchecked run (trace_compact.unchecked) is checked here, use by
		 * use, as trace_compact_settle checks it: it ends at the first entry
		 * that is not a good use (the reader reports a bad one). */
		const uint64_t *entry = w;
		const uint64_t head = w[0];
		const uint32_t id = (uint32_t)head;
		if (__builtin_expect(id >= definitions, 0))
			break;
		const sim_definition *def = &defs[id];
		const uint32_t high = (uint32_t)(head >> 32);
		const uint64_t *d = w + 1, *next = d + (high & 0xff);
		if (__builtin_expect(high != def->head_high || next > end, 0))
			break;
		w = next;
		records += def->records;
		const unsigned lines = def->lines;
		const sim_op *op = NULL;   /* set on every path that reaches the ops one by one */
		if (__builtin_expect(lines != SIM_NO_FAST_FORM, 1)) {
			/* most definitions have one line: the definition's own, on a
			 * path of its own */
			bool at_front = true;
			if (__builtin_expect(lines == 1, 1)) {
				at_front = itags[def->front] == def->line && (imeta[def->front] & ineed) == iwant;
			} else {
				const sim_fetch_line *fl = program_lines + def->line_first;
				for (uint32_t i = 0; i < lines; i++)
					at_front &= itags[fl[i].front] == fl[i].line && (imeta[fl[i].front] & ineed) == iwant;
			}
			if (__builtin_expect(!at_front, 0)) {
				const sim_fetch_line *fl = program_lines + def->line_first;
				/* Each line in its set and a hit: moved to the front now.  The
				 * lines are in different sets (add_line), and until a fetch
				 * misses only invalidations change the L1I, which take a line
				 * out of its set as they would before its move.  So the moves
				 * made before a line that is not there change nothing that
				 * the ops, one by one, do not do too. */
				at_front = true;
				for (uint32_t i = 0; i < lines && at_front; i++)
					at_front = l1_hit_to_front((uint64_t *)itags, (uint8_t *)imeta, fl[i].front, iassoc, fl[i].line,
					                           ineed, iwant, 0, wide);
			}
			if (__builtin_expect(at_front, 1)) {
				counts[SIM_IFETCH] += def->fetches;
				straddles += def->straddles;
				const sim_data_op *dop = data_ops + def->data_first, *dop_end = dop + def->data_ops;
				for (; dop < dop_end; dop++) {
					unsigned kind = dop->kind;
					counts[kind]++;
					uint64_t address = *d;
					d += dop->advance;
					if (__builtin_expect(classify_data_hit(s, core, dtags, dmeta, dmask, dbits, dassoc, &dlog, kind,
					                                       address, dop->size, dop->need, dop->want, dop->dirty,
					                                       recorded, wide), 1))
						continue;
					/* Not known to be hits any more: one by one after it.  The
					 * fetches before it touch the L1I's shadow as they came: its
					 * general path may take a fetch line of this use out of the
					 * L1I (the L2's victim, a back-invalidation), and that
					 * line's miss, after it, must find the shadow as it was. */
					counts[SIM_IFETCH] -= dop->fetches_after;
					straddles -= dop->straddles_after;
					op = ops + def->first;
					for (const sim_op *before = op, *stop = op + dop->resume - 1; before < stop; before++) {
						if (before->kind == OP_FETCH || before->kind == OP_FETCH2)
							touch_log_add(&ilog, before->line);
						if (before->kind == OP_FETCH2)
							touch_log_add(&ilog, before->line + 1);
					}
					op += dop->resume;
					rc = classify_logged(s, &c, &ilog, &dlog, (sim_access_kind)kind, address, dop->size, op[-1].address, &recorded);
					if (rc)
						rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
						                (size_t)sim_records_before(cp, entry) + dop->index, s->failure);
					break;
				}
				if (rc)
					break;
				if (dop == dop_end) {
					/* every fetch a hit: the lines in the order of their last fetches */
					if (__builtin_expect(lines == 1, 1)) {
						touch_log_add(&ilog, def->line);
					} else {
						const sim_fetch_line *fl = program_lines + def->line_first;
						for (uint32_t i = 0; i < lines; i++)
							touch_log_add(&ilog, fl[i].line);
					}
					continue;
				}
			} else {
				op = ops + def->first;
			}
		} else {
			op = ops + def->first;
		}
		const sim_op *const op_end = ops + def->first + def->count;
		for (; op < op_end; op++) {
			unsigned kind = op->kind;
			uint64_t address;
			uint32_t size;
			if (kind == OP_FETCH) {
				if (__builtin_expect(l1_hit_to_front((uint64_t *)itags, (uint8_t *)imeta, op->front, iassoc, op->line,
				                                     ineed, iwant, 0, wide), 1)) {
					touch_log_add(&ilog, op->line);
					counts[SIM_IFETCH] += 1 + op->repeat;
					op += op->repeat;
					continue;
				}
				kind = SIM_IFETCH;
				address = op->address;
				size = op->size;
			} else if (kind == OP_READ || kind == OP_WRITE) {
				address = *d;
				d += op->advance;
				size = op->size;
				if (__builtin_expect(classify_data_hit(s, core, dtags, dmeta, dmask, dbits, dassoc, &dlog, kind, address,
				                                       size, need[kind], want[kind], dirty[kind], recorded, wide), 1)) {
					counts[kind]++;
					continue;
				}
			} else if (kind == OP_FETCH2 && itags[op->front] == op->line && itags[op->front2] == op->line + 1 &&
			           (imeta[op->front] & ineed) == iwant && (imeta[op->front2] & ineed) == iwant) {
				/* a fetch across two lines both at the front of their sets:
				 * classify_one's straddle hit, nothing to move */
				counts[SIM_IFETCH]++;
				straddles++;
				touch_log_add(&ilog, op->line);
				touch_log_add(&ilog, op->line + 1);
				continue;
			} else {
				/* a fetch across two lines, size 0 (a modify of size 0 is a
				 * read, a write, or both, as the hint loop makes it) */
				kind = op->trace_kind == TRACE_INSTRUCTION ? SIM_IFETCH : op->trace_kind == TRACE_WRITE ? SIM_WRITE : SIM_READ;
				address = op->address;
				size = op->size;
				if (op->trace_kind != TRACE_INSTRUCTION)
					address = *d++;
				if (op->trace_kind == TRACE_MODIFY && s->config.modify != SIM_MODIFY_READ) {
					if (s->config.modify == SIM_MODIFY_READ_WRITE) {
						counts[SIM_READ]++;
						rc = classify_logged(s, &c, &ilog, &dlog, SIM_READ, address, size, op->address, &recorded);
						if (rc)
							goto failed;
					}
					kind = SIM_WRITE;
				}
			}
			counts[kind]++;
			rc = classify_logged(s, &c, &ilog, &dlog, (sim_access_kind)kind, address, size, op->address, &recorded);
			if (rc)
				goto failed;
			continue;
		failed:
			rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
			                (size_t)sim_records_before(cp, entry) + op->index, s->failure);
			break;
		}
		if (rc)
			break;
	}
	if (cp->unchecked && rc == 0) {
		/* where the run ends: the whole block's uses, walked once */
		cp->end = w;
		cp->records = records;
		cp->unchecked = false;
	}
	touch_log_store_plain(&ilog);
	touch_log_store(&dlog);
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		m->references[k] += counts[k];
	m->straddles += straddles;
	sim_mru_flush(s, m);
	return rc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"))) int sim_compact_classify_wide(sim *s, trace_compact *cp,
                                                                     plumb_status *status)
{
	return compact_classify_body(s, cp, status, true);
}
#endif

int sim_compact_classify_narrow(sim *s, trace_compact *cp, plumb_status *status)
{
	return compact_classify_body(s, cp, status, false);
}

