/* The hierarchy and the coherence protocols: what one reference does.
 *
 * A reference first looks up every L1 line it touches (installing the ones
 * that miss, as cachegrind does), then resolves each missing line through the
 * private L2, the coherence layer (directory of sharers per coherence line)
 * and the shared L3.  Coherence state lives in the private caches' metadata:
 * every private copy of a line (L2 and the L1 lines inside it) carries the
 * core's state, so a read hit or a write hit in M never leaves the L1.
 * docs/simulator.md states the model and the counting rules. */
#include <string.h>
#include "sim/sim_core_state.h"
#include "sim/sim_engine.h"

enum { LEVEL_FIRST = 0, LEVEL_SECOND = 1, LEVEL_THIRD = 2 };
/* CLASS_SHADOWED: capacity or conflict, counted by the shadow's answer
 * (sim_shadow_classify), maybe on another thread; count_class skips it. */
enum { CLASS_NONE = 0, CLASS_COMPULSORY, CLASS_CAPACITY, CLASS_CONFLICT, CLASS_TRUE, CLASS_FALSE, CLASS_INCLUSION,
       CLASS_SHADOWED };

/* What one reference did, counted once per level when it completes. */
typedef struct reference {
	uint32_t core;
	sim_access_kind kind;
	uint64_t address;
	uint32_t size;
	bool reached[3], missed[3];
	uint8_t class[3];
	bool memory, transfer, coherence_miss;
	uint64_t invalidations;
	bool prefetch;                 /* a prefetch, not a demand reference */
} reference;

static inline uint8_t state_of(uint8_t meta) { return meta & META_STATE; }

static inline uint64_t granule_of(const sim *s, uint64_t address) { return address >> s->granule_bits; }

/* The words of the coherence line that [address, address + size) touches. */
static uint64_t word_mask(const sim *s, uint64_t granule, uint64_t address, uint32_t size)
{
	uint64_t start = granule << s->granule_bits, end = start + (1ull << s->granule_bits);
	uint64_t first = address < start ? start : address;
	uint64_t last = address + size > end ? end - 1 : address + size - 1;
	if (last < first)
		return 0;
	unsigned a = (unsigned)((first - start) >> s->word_bits), b = (unsigned)((last - start) >> s->word_bits);
	uint64_t mask = b >= 63 ? ~0ull : ((1ull << (b + 1)) - 1);
	return mask & ~((1ull << a) - 1);
}

static void transition(sim *s, uint32_t core, int cause, unsigned from, unsigned to)
{
	if (from != to)
		s->stats.core[core].coherence.transitions[cause][from][to]++;
}

/* Whether a line of the hot-lines table can ever be hot (sim_hot_lines
 * reports only lines with coherence misses, invalidations, transfers or
 * upgrades).  With one core there are no other holders to invalidate, to
 * transfer from or to cause coherence misses, and only MSI puts a line in S
 * (O comes from another core's read), so only MSI has upgrades: elsewhere
 * a line's reads and writes would be counted for nothing to read them. */
static inline bool lines_can_heat(const sim *s)
{
	return s->config.cores > 1 || s->config.protocol == SIM_MSI;
}

/* An update of the hot-lines or hot-code table (classify only): made on the
 * shadows' thread when there is one, which nothing here waits for. */
static void note(sim *s, uint32_t op, uint64_t key, uint32_t bits, uint64_t amount)
{
	if (!s->config.classify)
		return;
	if ((op == SIM_NOTE_READ || op == SIM_NOTE_WRITE) && !lines_can_heat(s))
		return;   /* one core: one table update (a hash insert) less per miss */
	if (s->shadow_worker)
		sim_shadow_worker_note(s->shadow_worker, op, key, bits, amount);
	else
		sim_table_note(s, op, key, bits, amount);
}

/* ---------------------------------------------------- private copies */

static void set_state_in(sim_cache *c, long way, unsigned state)
{
	c->meta[way] = (uint8_t)((c->meta[way] & ~META_STATE) | state);
}

static void private_set_state(sim *s, uint32_t core, uint64_t granule, unsigned state)
{
	sim_core *k = &s->core[core];
	if (s->has_l2) {
		long w = sim_cache_find(&k->cache[SIM_L2], granule);
		if (w >= 0)
			set_state_in(&k->cache[SIM_L2], w, state);
	}
	FOR_LINES_IN_GRANULE(s, &k->cache[SIM_L1D], granule, w, { set_state_in(&k->cache[SIM_L1D], w, state); });
	FOR_LINES_IN_GRANULE(s, &k->cache[SIM_L1I], granule, w, { set_state_in(&k->cache[SIM_L1I], w, state); });
	long slot = s->has_l2 ? -1 : sim_stream_slot(s, k, granule);
	if (slot >= 0)
		k->buffer_states[slot] = (uint8_t)state;
}

/* Removes every private copy; returns whether any was dirty. */
static bool private_remove(sim *s, uint32_t core, uint64_t granule, bool back_invalidation)
{
	sim_core *k = &s->core[core];
	bool dirty = false;
	sim_stream_remove_granule(s, core, granule);   /* buffered lines are clean */
	for (int level = SIM_L1I; level <= SIM_L2; level++) {
		sim_cache *c = &k->cache[level];
		if (!c->present)
			continue;
		if (level == SIM_L2) {
			long w = sim_cache_find(c, granule);
			if (w >= 0) {
				dirty |= (c->meta[w] & META_DIRTY) != 0;
				sim_cache_invalidate(c, (size_t)w);
				if (back_invalidation)
					s->stats.core[core].cache[level].back_invalidations++;
			}
			continue;
		}
		FOR_LINES_IN_GRANULE(s, c, granule, w, {
			dirty |= (c->meta[w] & META_DIRTY) != 0;
			sim_cache_invalidate(c, (size_t)w);
			if (back_invalidation)
				s->stats.core[core].cache[level].back_invalidations++;
		});
	}
	return dirty;
}

/* ---------------------------------------------------------- directory */

static sim_directory_entry *directory_find(sim *s, uint64_t granule)
{
	return s->config.cores > 1 ? sim_table_find(&s->directory, granule) : NULL;
}

static void directory_remove(sim *s, uint32_t core, uint64_t granule)
{
	if (s->config.cores <= 1)
		return;
	sim_directory_entry *d = sim_table_find(&s->directory, granule);
	if (!d)
		return;
	d->sharers &= ~(1ull << core);
	if (!d->sharers && !d->recorded)
		sim_table_remove(&s->directory, granule);
}

/* Classification records: the core lost the line to another core's write
 * (or to the inclusive L3); its next miss on the line is a coherence (or
 * inclusion-victim) miss. */
static void record_loss(sim *s, uint32_t core, uint64_t granule, bool inclusion)
{
	if (!s->config.classify)
		return;
	sim_invalidation_record *r = sim_table_insert(&s->core[core].invalidated, granule, NULL);
	r->written = 0;
	r->inclusion = inclusion;
	if (!inclusion && s->config.cores > 1) {
		sim_directory_entry *d = sim_table_insert(&s->directory, granule, NULL);
		d->recorded |= 1ull << core;
	}
}

/* A write by core to words of granule: remembered by the cores waiting to
 * tell true from false sharing. */
static void record_write(sim *s, uint32_t core, uint64_t granule, uint64_t words)
{
	if (!sim_others_recorded(s, core))
		return;
	sim_directory_entry *d = directory_find(s, granule);
	if (!d)
		return;
	uint64_t others = d->recorded & ~(1ull << core);
	while (others) {
		unsigned o = (unsigned)__builtin_ctzll(others);
		others &= others - 1;
		sim_invalidation_record *r = sim_table_find(&s->core[o].invalidated, granule);
		if (r)
			r->written |= words;
	}
}

/* What a one-line write hit of a line the core holds in M adds, with
 * classification and several cores, to a move to the front and the dirty
 * bit (sim_reference_caches, its write after pass 2: write_ownership has
 * nothing to do in M): the words written, for the cores that lost the line. */
void sim_write_hit_words(sim *s, uint32_t core, uint64_t address, uint32_t size)
{
	uint64_t granule = granule_of(s, address);
	record_write(s, core, granule, word_mask(s, granule, address, size));
}

/* ------------------------------------------------------- the shared L3 */

static void memory_write(sim *s, uint32_t core)
{
	s->stats.memory_writes++;
	s->stats.core[core].memory_writes++;
}

/* A dirty line leaves a private hierarchy: it marks the L3's copy dirty
 * without touching its replacement state (a writeback is not a use), or goes
 * to memory.  Writebacks never allocate, except into an exclusive L3, which
 * is filled only by private victims. */
static void l3_insert_victim(sim *s, uint32_t core, uint64_t address, bool dirty);

static void writeback_below_private(sim *s, uint32_t core, uint64_t address, bool dirty)
{
	if (s->has_l3 && s->config.l3_inclusion == SIM_EXCLUSIVE) {
		l3_insert_victim(s, core, address, dirty);
		return;
	}
	if (!dirty)
		return;
	if (s->has_l3) {
		long w = sim_cache_find(&s->l3, address >> s->l3.line_bits);
		if (w >= 0) {
			s->l3.meta[w] |= META_DIRTY;
			return;
		}
	}
	memory_write(s, core);
}

static void l3_evict(sim *s, uint32_t core, size_t way)
{
	sim_cache *l3 = &s->l3;
	if (l3->tags[way] == SIM_NO_TAG)
		return;
	uint64_t line = l3->tags[way];
	bool dirty = (l3->meta[way] & META_DIRTY) != 0;
	s->stats.l3.evictions++;
	if (s->config.l3_inclusion == SIM_INCLUSIVE) {
		/* Back-invalidation: the private copies of every coherence line
		 * inside the victim go too, counted apart from coherence. */
		uint64_t first = (line << l3->line_bits) >> s->granule_bits;
		uint64_t last = (((line + 1) << l3->line_bits) - 1) >> s->granule_bits;
		bool any = false;
		for (uint64_t g = first; g <= last; g++) {
			/* the directory names the holders; one core needs none */
			const sim_directory_entry *d = directory_find(s, g);
			uint64_t holders = s->config.cores == 1 ? 1 : d ? d->sharers : 0;
			while (holders) {
				uint32_t c = (uint32_t)__builtin_ctzll(holders);
				holders &= holders - 1;
				unsigned state = sim_core_state(s, c, g);
				if (state == SIM_STATE_I)
					continue;
				any = true;
				dirty |= private_remove(s, c, g, true);
				dirty |= state == SIM_STATE_M || state == SIM_STATE_O;
				transition(s, c, 1, state, SIM_STATE_I);
				directory_remove(s, c, g);
				record_loss(s, c, g, true);
			}
		}
		if (any)
			s->stats.l3_back_invalidations++;
	}
	if (dirty) {
		s->stats.l3.writebacks++;
		memory_write(s, core);
	}
	sim_cache_invalidate(l3, way);
}

static void l3_insert_victim(sim *s, uint32_t core, uint64_t address, bool dirty)
{
	uint64_t line = address >> s->l3.line_bits;
	long w = sim_cache_find(&s->l3, line);
	if (w >= 0) {
		if (dirty)
			s->l3.meta[w] |= META_DIRTY;
		return;
	}
	size_t v = sim_cache_victim(&s->l3, line);
	l3_evict(s, core, v);
	sim_cache_fill(&s->l3, v, line, dirty ? META_DIRTY : 0);
}

/* Feeds a TLB's shadow the reference of page; hit: the real TLB's answer.
 * The shadow's own answer (would a fully associative TLB have hit?) is
 * wanted only on a miss, and a hit costs the shadow less (sim_shadow.c). */
static inline bool shadow_access(sim_cache *c, uint64_t line, bool hit)
{
	if (!c->classify)
		return false;
	if (hit) {
		sim_shadow_touch(&c->shadow, line);
		return true;
	}
	return sim_shadow_reference(&c->shadow, line);
}

/* A hit of an L2 or the L3: its shadow sees the reference. */
static inline void shadow_hit(sim_cache *c, uint64_t line)
{
	if (c->classify)
		sim_shadow_touch(&c->shadow, line);
}

/* The class of a miss that does not need the shadow's answer, or
 * CLASS_SHADOWED (the order of classes: compulsory, then coherence). */
static uint8_t classify_without_shadow(sim *s, reference *r, sim_cache *c, uint64_t line, bool private_level)
{
	bool created = sim_lineset_insert(&c->seen, line);
	if (private_level) {
		sim_invalidation_record *rec = sim_table_find(&s->core[r->core].invalidated, granule_of(s, line << c->line_bits));
		if (rec) {
			if (rec->inclusion)
				return CLASS_INCLUSION;
			r->coherence_miss = true;
			uint64_t g = granule_of(s, r->address);
			return (rec->written & word_mask(s, g, r->address, r->size)) ? CLASS_TRUE : CLASS_FALSE;
		}
	}
	return created ? CLASS_COMPULSORY : CLASS_SHADOWED;
}

/* A miss of line in an L2 or the L3 (c, counted in st at `level` of r):
 * its shadow sees the reference, and the reference's first miss at this
 * level gets its class.  A capacity or conflict miss is the shadow's answer,
 * counted into st now or on the shadows' thread (sim_shadow_classify), as
 * the L1s' are: nothing in the simulation reads it. */
static void classify_level_miss(sim *s, reference *r, int level, sim_cache *c, sim_cache_stats *st, uint64_t line,
                                bool private_level)
{
	if (!c->classify)
		return;
	uint64_t *if_present = NULL, *if_absent = NULL;
	if (!r->missed[level]) {
		r->class[level] = classify_without_shadow(s, r, c, line, private_level);
		if (r->class[level] == CLASS_SHADOWED) {
			if_present = &st->conflict;
			if_absent = &st->capacity;
		}
	}
	sim_shadow_classify(&c->shadow, line, if_present, if_absent);
}

/* The L3 reference of a private miss (or of a straddling reference's other
 * line, as cachegrind does).  Returns true on a hit. */
static bool l3_reference(sim *s, reference *r, uint64_t address, bool install)
{
	sim_cache *l3 = &s->l3;
	uint64_t line = address >> l3->line_bits;
	r->reached[LEVEL_THIRD] = true;
	long w = sim_cache_find(l3, line);
	if (w >= 0) {
		shadow_hit(l3, line);
		w = (long)sim_cache_touch(l3, (size_t)w);
		if (s->config.l3_inclusion == SIM_EXCLUSIVE && install) {
			/* moved up into the private hierarchy, which gets it clean: the
			 * L3's dirty data goes to memory on the way */
			if (l3->meta[w] & META_DIRTY)
				memory_write(s, r->core);
			sim_cache_invalidate(l3, (size_t)w);
		}
		return true;
	}
	classify_level_miss(s, r, LEVEL_THIRD, l3, &s->stats.l3, line, false);
	r->missed[LEVEL_THIRD] = true;
	if (install && s->config.l3_inclusion != SIM_EXCLUSIVE) {
		size_t v = sim_cache_victim(l3, line);
		l3_evict(s, r->core, v);
		sim_cache_fill(l3, v, line, 0);
	}
	return false;
}

/* ------------------------------------------------- coherence requests */

static void count_fanout(sim *s, reference *r, uint64_t granule, uint64_t invalidated)
{
	if (invalidated == 0)
		return;
	sim_coherence_stats *cs = &s->stats.core[r->core].coherence;
	cs->invalidations_sent += invalidated;
	cs->fanout[invalidated < SIM_MAX_CORES ? invalidated : SIM_MAX_CORES - 1]++;
	r->invalidations += invalidated;
	note(s, SIM_NOTE_INVALIDATIONS, granule, 0, invalidated);
}

/* Invalidates every other holder of granule (a write by r->core).  Returns
 * whether one of them supplied dirty data (only when the requester needs the
 * data: a read-for-ownership, not an upgrade or a write-through). */
static bool invalidate_others(sim *s, reference *r, uint64_t granule, bool needs_data)
{
	sim_directory_entry *d = directory_find(s, granule);
	if (!d)
		return false;
	uint64_t others = d->sharers & ~(1ull << r->core);
	uint64_t count = 0;
	bool supplied = false;
	while (others) {
		unsigned o = (unsigned)__builtin_ctzll(others);
		others &= others - 1;
		unsigned state = sim_core_state(s, o, granule);
		sim_coherence_stats *oc = &s->stats.core[o].coherence;
		if (needs_data && (state == SIM_STATE_M || state == SIM_STATE_O)) {
			oc->transfers_supplied++;
			supplied = true;
		}
		if (state == SIM_STATE_M || state == SIM_STATE_E || state == SIM_STATE_O)
			oc->interventions_received++;
		oc->invalidations_received++;
		if (s->annotate)
			sim_annotate_received(s, o);
		private_remove(s, o, granule, false);
		transition(s, o, 1, state, SIM_STATE_I);
		directory_remove(s, o, granule);
		record_loss(s, o, granule, false);
		count++;
	}
	count_fanout(s, r, granule, count);
	return supplied;
}

/* Fetches granule into r->core's private hierarchy from the other cores, the
 * L3 or memory; returns the core's new state. */
static unsigned fetch_shared(sim *s, reference *r, uint64_t address, bool exclusive)
{
	uint64_t granule = granule_of(s, address);
	uint32_t core = r->core;
	sim_coherence_stats *cs = &s->stats.core[core].coherence;
	unsigned own = s->has_l2 ? SIM_STATE_I : sim_core_state(s, core, granule);
	unsigned state;
	bool supplied = false;
	note(s, exclusive ? SIM_NOTE_WRITE : SIM_NOTE_READ, granule, core, 0);
	/* One directory probe: the other holders, and this core added. */
	uint64_t others = 0;
	if (own == SIM_STATE_I && s->config.cores > 1) {
		sim_directory_entry *d = sim_table_insert(&s->directory, granule, NULL);
		others = d->sharers & ~(1ull << core);
		d->sharers |= 1ull << core;
	}
	if (own != SIM_STATE_I) {
		/* Without an L2, the other L1 of this core already holds it: no
		 * coherence request, only the L3 reference. */
		state = own;
	} else if (exclusive && s->config.protocol == SIM_ESI) {
		/* ESI write miss: the fill is no bus read (the thesis counts bus
		 * reads at read misses only); the write itself is the bus write
		 * that invalidates the other copies. */
		state = SIM_STATE_E;
	} else if (exclusive && s->config.protocol != SIM_ESI) {
		cs->bus_read_exclusive++;
		if (others)
			supplied = invalidate_others(s, r, granule, true);
		state = SIM_STATE_M;
	} else {
		cs->bus_reads++;
		if (others) {
			cs->reads_with_sharers++;
			while (others) {
				unsigned o = (unsigned)__builtin_ctzll(others);
				others &= others - 1;
				unsigned old = sim_core_state(s, o, granule), next = old;
				sim_coherence_stats *oc = &s->stats.core[o].coherence;
				oc->shared_reads++;
				if (old == SIM_STATE_M) {
					oc->interventions_received++;
					oc->transfers_supplied++;
					oc->downgrades++;
					supplied = true;
					if (s->config.protocol == SIM_MOESI) {
						next = SIM_STATE_O;
					} else {
						/* M -> S flushes the line to memory (or the L3) */
						next = SIM_STATE_S;
						oc->writebacks++;
						writeback_below_private(s, o, granule << s->granule_bits, true);
						if (s->has_l2) {
							long w = sim_cache_find(&s->core[o].cache[SIM_L2], granule);
							if (w >= 0)
								s->core[o].cache[SIM_L2].meta[w] &= (uint8_t)~META_DIRTY;
						}
						FOR_LINES_IN_GRANULE(s, &s->core[o].cache[SIM_L1D], granule, w,
							{ s->core[o].cache[SIM_L1D].meta[w] &= (uint8_t)~META_DIRTY; });
					}
				} else if (old == SIM_STATE_E) {
					oc->interventions_received++;
					oc->downgrades++;
					next = SIM_STATE_S;
				} else if (old == SIM_STATE_O) {
					oc->interventions_received++;
					oc->transfers_supplied++;
					supplied = true;
				}
				if (next != old) {
					private_set_state(s, o, granule, next);
					transition(s, o, 1, old, next);
				}
			}
			state = SIM_STATE_S;
		} else {
			state = s->config.protocol == SIM_MSI ? SIM_STATE_S : SIM_STATE_E;
		}
	}
	bool l3_hit = false;
	if (s->has_l3)
		l3_hit = l3_reference(s, r, address, true);
	if (own == SIM_STATE_I) {
		if (supplied) {
			cs->transfers_received++;
			r->transfer = true;
			note(s, SIM_NOTE_TRANSFER, granule, 0, 0);
		} else if (!l3_hit) {
			s->stats.memory_reads++;
			s->stats.core[core].memory_reads++;
			r->memory = true;
		}
		transition(s, core, 0, SIM_STATE_I, state);
	} else if (!l3_hit) {
		r->memory = true;
	}
	return state;
}

/* A private copy leaves the core: the coherence layer forgets it, and dirty
 * data goes down. */
static void private_leave(sim *s, uint32_t core, uint64_t granule, unsigned state, bool dirty)
{
	sim_coherence_stats *cs = &s->stats.core[core].coherence;
	dirty |= state == SIM_STATE_M || state == SIM_STATE_O;
	if (dirty)
		cs->writebacks++;
	transition(s, core, 0, state, SIM_STATE_I);
	directory_remove(s, core, granule);
	writeback_below_private(s, core, granule << s->granule_bits, dirty);
}

/* Installs line in an L1 of core, handling the victim.  Returns the way. */
static size_t l1_install(sim *s, uint32_t core, sim_level level, uint64_t line, uint8_t meta)
{
	sim_core *k = &s->core[core];
	sim_cache *c = &k->cache[level];
	size_t v = sim_cache_victim(c, line);
	if (c->tags[v] != SIM_NO_TAG) {
		uint64_t victim = c->tags[v];
		bool dirty = (c->meta[v] & META_DIRTY) != 0;
		unsigned state = state_of(c->meta[v]);
		sim_cache_stats *st = &s->stats.core[core].cache[level];
		st->evictions++;
		sim_cache_invalidate(c, v);
		uint64_t address = victim << c->line_bits;
		if (s->has_l2) {
			if (dirty) {
				st->writebacks++;
				long w = sim_cache_find(&k->cache[SIM_L2], address >> k->cache[SIM_L2].line_bits);
				if (w >= 0)
					k->cache[SIM_L2].meta[w] |= META_DIRTY;   /* no replacement update */
				else
					writeback_below_private(s, core, address, true);
			}
		} else {
			if (dirty)
				st->writebacks++;
			uint64_t granule = granule_of(s, address);
			if (sim_core_state(s, core, granule) == SIM_STATE_I) {
				private_leave(s, core, granule, state, dirty);
			} else if (dirty || state == SIM_STATE_M || state == SIM_STATE_O) {
				/* the other L1 still holds it, now clean */
				s->stats.core[core].coherence.writebacks++;
				writeback_below_private(s, core, address, true);
				unsigned clean = s->config.protocol == SIM_MSI ? SIM_STATE_S :
				                 state == SIM_STATE_O ? SIM_STATE_S : SIM_STATE_E;
				if (state == SIM_STATE_M || state == SIM_STATE_O) {
					private_set_state(s, core, granule, clean);
					transition(s, core, 0, state, clean);
				}
			}
		}
	}
	return sim_cache_fill(c, v, line, meta);
}

/* Installs granule in core's L2; the victim leaves the private hierarchy
 * and takes the L1 lines inside it along (the private L2 is inclusive). */
static void l2_install(sim *s, uint32_t core, uint64_t granule, unsigned state)
{
	sim_core *k = &s->core[core];
	sim_cache *c = &k->cache[SIM_L2];
	size_t v = sim_cache_victim(c, granule);
	if (c->tags[v] != SIM_NO_TAG) {
		uint64_t victim = c->tags[v];
		bool dirty = (c->meta[v] & META_DIRTY) != 0;
		unsigned old = state_of(c->meta[v]);
		s->stats.core[core].cache[SIM_L2].evictions++;
		sim_cache_invalidate(c, v);
		FOR_LINES_IN_GRANULE(s, &k->cache[SIM_L1D], victim, w, {
			dirty |= (k->cache[SIM_L1D].meta[w] & META_DIRTY) != 0;
			sim_cache_invalidate(&k->cache[SIM_L1D], (size_t)w);
		});
		FOR_LINES_IN_GRANULE(s, &k->cache[SIM_L1I], victim, w,
			{ sim_cache_invalidate(&k->cache[SIM_L1I], (size_t)w); });
		sim_stream_remove_granule(s, core, victim);
		if (dirty)
			s->stats.core[core].cache[SIM_L2].writebacks++;
		private_leave(s, core, victim, old, dirty);
	}
	sim_cache_fill(c, v, granule, (uint8_t)state);
}

/* The L1 missed line at address: resolve it through L2 and below; returns
 * the state the new copy gets. */
static unsigned fetch_below_l1(sim *s, reference *r, uint64_t address, bool exclusive)
{
	if (!s->has_l2)
		return fetch_shared(s, r, address, exclusive);
	sim_core *k = &s->core[r->core];
	sim_cache *l2 = &k->cache[SIM_L2];
	uint64_t granule = granule_of(s, address);
	r->reached[LEVEL_SECOND] = true;
	long w = sim_cache_find(l2, granule);
	if (w >= 0) {
		shadow_hit(l2, granule);
		w = (long)sim_cache_touch(l2, (size_t)w);
		return state_of(l2->meta[w]);
	}
	classify_level_miss(s, r, LEVEL_SECOND, l2, &s->stats.core[r->core].cache[SIM_L2], granule, true);
	r->missed[LEVEL_SECOND] = true;
	unsigned state = fetch_shared(s, r, address, exclusive);
	l2_install(s, r->core, granule, state);
	return state;
}

/* Write-through and write-around traffic below the L1: it updates the L2
 * copy (or goes on when the L2 is write-through too) and then the L3 or
 * memory.  It never allocates below the L1. */
static void write_down(sim *s, reference *r, uint64_t address, bool from_l1)
{
	sim_core *k = &s->core[r->core];
	if (from_l1 && s->has_l2) {
		sim_cache *l2 = &k->cache[SIM_L2];
		uint64_t granule = granule_of(s, address);
		r->reached[LEVEL_SECOND] = true;
		long w = sim_cache_find(l2, granule);
		if (w >= 0) {
			shadow_hit(l2, granule);
			w = (long)sim_cache_touch(l2, (size_t)w);
			if (s->config.cache[SIM_L2].write_back) {
				l2->meta[w] |= META_DIRTY;
				return;
			}
		} else {
			/* the private L2 includes the L1, so only a write-around from a
			 * no-write-allocate L1 can get here */
			classify_level_miss(s, r, LEVEL_SECOND, l2, &s->stats.core[r->core].cache[SIM_L2], granule, true);
			r->missed[LEVEL_SECOND] = true;
		}
	}
	/* past the private hierarchy: a bus write */
	s->stats.core[r->core].coherence.bus_writes++;
	if (s->has_l3) {
		sim_cache *l3 = &s->l3;
		uint64_t line = address >> l3->line_bits;
		r->reached[LEVEL_THIRD] = true;
		long w = sim_cache_find(l3, line);
		if (w >= 0) {
			shadow_hit(l3, line);
			w = (long)sim_cache_touch(l3, (size_t)w);
			if (s->config.cache[SIM_L3].write_back) {
				l3->meta[w] |= META_DIRTY;
				return;
			}
		} else {
			classify_level_miss(s, r, LEVEL_THIRD, l3, &s->stats.l3, line, false);
			r->missed[LEVEL_THIRD] = true;
		}
	}
	memory_write(s, r->core);
}

/* A write to a line the core holds: obtain ownership, as the protocol says. */
static void write_ownership(sim *s, reference *r, uint64_t granule)
{
	uint32_t core = r->core;
	sim_coherence_stats *cs = &s->stats.core[core].coherence;
	unsigned state = sim_core_state(s, core, granule);
	if (s->config.protocol == SIM_ESI) {
		/* Franz's ESI: every write goes to the bus and leaves the writer
		 * the only (E) holder. */
		invalidate_others(s, r, granule, false);
		if (state != SIM_STATE_E) {
			private_set_state(s, core, granule, SIM_STATE_E);
			transition(s, core, 0, state, SIM_STATE_E);
		}
		return;
	}
	if (state == SIM_STATE_M)
		return;
	if (state == SIM_STATE_E) {
		cs->upgrades_clean++;
	} else {
		if (state == SIM_STATE_O)
			cs->upgrades_owned++;
		else
			cs->upgrades_shared++;
		invalidate_others(s, r, granule, false);
		note(s, SIM_NOTE_UPGRADE, granule, core, 0);
	}
	private_set_state(s, core, granule, SIM_STATE_M);
	transition(s, core, 0, state, SIM_STATE_M);
}

/* A write that allocates nowhere in the private hierarchy: it invalidates
 * the other copies on its way to the L3 or memory. */
static void write_around(sim *s, reference *r, uint64_t address)
{
	uint64_t granule = granule_of(s, address);
	if (s->has_l2) {
		sim_cache *l2 = &s->core[r->core].cache[SIM_L2];
		r->reached[LEVEL_SECOND] = true;
		long w = sim_cache_find(l2, granule);
		if (w >= 0) {
			shadow_hit(l2, granule);
			w = (long)sim_cache_touch(l2, (size_t)w);
			write_ownership(s, r, granule);
			if (s->config.cache[SIM_L2].write_back)
				l2->meta[w] |= META_DIRTY;
			else
				write_down(s, r, address, false);
			return;
		}
		classify_level_miss(s, r, LEVEL_SECOND, l2, &s->stats.core[r->core].cache[SIM_L2], granule, true);
		r->missed[LEVEL_SECOND] = true;
		if (s->config.cache[SIM_L2].write_allocate) {
			unsigned state = fetch_shared(s, r, address, true);
			l2_install(s, r->core, granule, state);
			write_ownership(s, r, granule);
			w = sim_cache_find(l2, granule);
			if (w >= 0 && s->config.cache[SIM_L2].write_back)
				l2->meta[w] |= META_DIRTY;
			else
				write_down(s, r, address, false);
			return;
		}
	}
	if (s->config.cores > 1) {
		note(s, SIM_NOTE_WRITE, granule, r->core, 0);
		invalidate_others(s, r, granule, false);
	}
	write_down(s, r, address, false);
}

/* ----------------------------------------------------------- the TLBs */

void sim_tlb_reference(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size)
{
	sim_core *k = &s->core[core];
	sim_core_stats *cs = &s->stats.core[core];
	int first_level = kind == SIM_IFETCH ? SIM_ITLB : SIM_DTLB;
	for (int page_of_access = 0; page_of_access < 2; page_of_access++) {
		int level = first_level;
		if (!k->tlb[level].present)
			level = SIM_STLB;
		uint64_t at = page_of_access ? address + size - 1 : address;
		while (level <= SIM_STLB && k->tlb[level].present) {
			sim_cache *t = &k->tlb[level];
			uint64_t page = at >> t->line_bits;
			if (page_of_access && page == (address >> t->line_bits))
				break;   /* same page: one lookup */
			cs->tlb[level].accesses++;
			long w = sim_cache_find(t, page);
			bool shadow_hit = shadow_access(t, page, w >= 0);
			if (w >= 0) {
				t->last_way = sim_cache_touch(t, (size_t)w);   /* the fast path's hint */
				break;
			}
			cs->tlb[level].misses++;
			if (t->classify) {
				if (sim_lineset_insert(&t->seen, page))
					cs->tlb[level].compulsory++;
				else if (shadow_hit)
					cs->tlb[level].conflict++;
				else
					cs->tlb[level].capacity++;
			}
			t->last_way = sim_cache_fill(t, sim_cache_victim(t, page), page, 0);
			if (level == SIM_STLB)
				break;
			level = SIM_STLB;
		}
	}
}

/* ------------------------------------------------------ one reference */

static void count_class(sim_cache_stats *st, uint8_t class)
{
	switch (class) {
	case CLASS_COMPULSORY: st->compulsory++; break;
	case CLASS_CAPACITY: st->capacity++; break;
	case CLASS_CONFLICT: st->conflict++; break;
	case CLASS_TRUE: st->coherence_true++; break;
	case CLASS_FALSE: st->coherence_false++; break;
	case CLASS_INCLUSION: st->inclusion_victim++; break;
	default: break;
	}
}

/* One level a reference reached: an access, and a miss with its class. */
static inline void count_level(sim_cache_stats *st, const reference *r, int level)
{
	st->accesses[r->kind]++;
	if (r->missed[level]) {
		st->misses[r->kind]++;
		if (r->class[level])
			count_class(st, r->class[level]);
	}
}

static void finish_reference(sim *s, reference *r, sim_level first)
{
	sim_core_stats *cs = &s->stats.core[r->core];
	/* level by level, unrolled: a miss passes here once per L1 miss */
	if (r->reached[LEVEL_FIRST])
		count_level(&cs->cache[first], r, LEVEL_FIRST);
	if (r->reached[LEVEL_SECOND] && s->has_l2)
		count_level(&cs->cache[SIM_L2], r, LEVEL_SECOND);
	if (r->reached[LEVEL_THIRD] && s->has_l3) {
		count_level(&s->stats.l3, r, LEVEL_THIRD);
		cs->l3_accesses++;
		if (r->missed[LEVEL_THIRD])
			cs->l3_misses++;
	}
	if (r->prefetch)
		return;
	if (s->annotate)
		sim_annotate_reference(s, r->core, r->kind, r->reached, r->missed,
		                       r->class[LEVEL_FIRST] == CLASS_TRUE || r->class[LEVEL_SECOND] == CLASS_TRUE,
		                       r->coherence_miss && !(r->class[LEVEL_FIRST] == CLASS_TRUE ||
		                                              r->class[LEVEL_SECOND] == CLASS_TRUE),
		                       r->invalidations);
	sim_thread_stats *t = s->current_thread;
	if (t) {
		if (r->missed[LEVEL_FIRST])
			t->l1_misses++;
		if (r->memory || r->transfer)
			t->last_level_misses++;
		if (r->coherence_miss)
			t->coherence_misses++;
		t->invalidations_sent += r->invalidations;
	}
	if (s->config.classify) {
		uint64_t granule = granule_of(s, r->address);
		if (r->coherence_miss || r->class[LEVEL_FIRST] == CLASS_INCLUSION) {
			uint64_t last = granule_of(s, r->address + r->size - 1);
			for (uint64_t g = granule; g <= last; g++) {
				if (sim_table_remove(&s->core[r->core].invalidated, g)) {
					sim_directory_entry *d = directory_find(s, g);
					if (d) {
						d->recorded &= ~(1ull << r->core);
						if (!d->sharers && !d->recorded)
							sim_table_remove(&s->directory, g);
					}
				}
			}
			if (r->coherence_miss)
				note(s, r->class[LEVEL_FIRST] == CLASS_TRUE || r->class[LEVEL_SECOND] == CLASS_TRUE ?
				        SIM_NOTE_TRUE : SIM_NOTE_FALSE, granule, 0, 0);
		}
		if (s->current_ip && (r->missed[LEVEL_FIRST] || r->invalidations))
			note(s, SIM_NOTE_CODE, s->current_ip,
			     (r->missed[LEVEL_FIRST] ? SIM_NOTE_CODE_L1_MISS : 0u) |
			     (r->memory || r->transfer ? SIM_NOTE_CODE_LAST_LEVEL : 0u) |
			     (r->coherence_miss ? SIM_NOTE_CODE_COHERENCE : 0u), r->invalidations);
	}
}

/* A write going around the L1D: a buffered copy of its line would be
 * stale, so the buffer lets it go (without an L2 it may be the last copy). */
static void stream_forget(sim *s, uint32_t core, uint64_t granule)
{
	sim_core *k = &s->core[core];
	if (!k->buffered)
		return;
	unsigned state = sim_core_state(s, core, granule);
	uint32_t before = k->buffered;
	sim_stream_remove_granule(s, core, granule);
	if (k->buffered != before)   /* without an L2 the granule is the line */
		sim_stream_release(s, core, granule, state);
}

#define MAX_LINES SIM_MAX_LINES

enum { AFTER_MISS, AFTER_PREFETCHED_HIT, AFTER_BUFFER_HIT };

typedef struct prefetch_trigger {
	uint64_t line;
	int event;             /* a demand miss, the first use of a prefetched line, a stream buffer hit */
} prefetch_trigger;

void sim_reference(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size)
{
	if (s->has_tlb) {
		uint32_t tlb_size = size ? size : 1;
		if (address + tlb_size - 1 < address)
			tlb_size = (uint32_t)(UINT64_MAX - address + 1);
		sim_tlb_reference(s, core, kind, address, tlb_size);
	}
	sim_reference_caches(s, core, kind, address, size);
}

/* A reference inside one line, without classification, checks or a
 * prefetcher (every L1 miss of a plain run, and the writes that need
 * ownership): what the two passes of sim_reference_caches do for one line,
 * without their per-line arrays, prefetch triggers and repeated lookups of
 * the line (its way is known after the touch or the install, and nothing in
 * between moves this core's L1 ways).  tests/unit/test_sim_fastpath.c
 * compares it with the general path (--check). */
static void reference_one_line(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size,
                               sim_level first, uint64_t line)
{
	sim_cache *l1 = &s->core[core].cache[first];
	const sim_cache_config *l1_config = &s->config.cache[first];
	bool write = kind == SIM_WRITE;
	reference r = { .core = core, .kind = kind, .address = address, .size = size,
	                .reached = { true, false, false } };
	uint64_t line_address = line << l1->line_bits;
	uint64_t granule = granule_of(s, line_address);
	long w = sim_cache_find(l1, line);
	if (w >= 0) {
		w = (long)sim_cache_touch(l1, (size_t)w);
	} else {
		r.missed[LEVEL_FIRST] = true;
		if (write && !l1_config->write_allocate) {
			stream_forget(s, core, granule);
			write_around(s, &r, address);
			finish_reference(s, &r, first);
			return;
		}
		if (s->has_l2) {
			/* the L2 set is looked up next: start loading its tags (a
			 * host-cache miss) while the L1 victim is handled */
			const sim_cache *l2 = &s->core[core].cache[SIM_L2];
			const uint64_t *set = l2->tags + (size_t)sim_cache_set(l2, granule) * l2->assoc;
			__builtin_prefetch(set);
			__builtin_prefetch(set + l2->assoc - 1);
		}
		l1_install(s, core, first, line, SIM_STATE_I);
		unsigned state = fetch_below_l1(s, &r, line_address, write);
		w = sim_cache_find(l1, line);
		if (w < 0)   /* lost to a back-invalidation meanwhile */
			w = (long)l1_install(s, core, first, line, (uint8_t)state);
		set_state_in(l1, w, state);
	}
	if (write) {
		write_ownership(s, &r, granule);
		if (l1_config->write_back)
			l1->meta[w] |= META_DIRTY;
		else
			write_down(s, &r, address, true);
	}
	finish_reference(s, &r, first);
}

/* Moves way w of an LRU set (tags, meta: its first way) to the front. */
static inline void set_to_front(uint64_t *tags, uint8_t *meta, uint32_t w)
{
	uint64_t tag = tags[w];
	uint8_t m = meta[w];
	for (; w > 0; w--) {
		tags[w] = tags[w - 1];
		meta[w] = meta[w - 1];
	}
	tags[0] = tag;
	meta[0] = m;
}

/* A one-line reference on one core without an L2 (s->single, chosen by
 * sim_loop_choose: cachegrind's machine with classification), when the
 * core holds no invalidation record: what the two passes of
 * sim_reference_caches and the helpers they call do for it, for this
 * machine alone.  The L1 set is searched once and its ways moved in place
 * (the victim is the set's last way, the new line goes to the front, and
 * nothing in between moves them: the L3 is absent or non-inclusive, so it
 * never takes a line back); the core's state for a line is the other L1's
 * copy (the granule is one line of either L1); a read miss is a bus read
 * that gets E, a write miss a read for ownership that gets M (one core,
 * MESI or MOESI, and no hot-lines update: lines_can_heat).  The rare
 * cases, a line held by the other L1 too or a write to a line not in M,
 * take the general helpers.  tests/unit/test_sim_fastpath.c compares it
 * with the general path (--check). */
static void reference_single(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size,
                             sim_level first, uint64_t line)
{
	sim_core *k = &s->core[core];
	sim_cache *l1 = &k->cache[first];
	const sim_cache *other = &k->cache[first == SIM_L1I ? SIM_L1D : SIM_L1I];
	bool write = kind == SIM_WRITE;
	reference r = { .core = core, .kind = kind, .address = address, .size = size,
	                .reached = { true, false, false } };
	const uint32_t assoc = l1->assoc;
	size_t base = (size_t)sim_cache_set(l1, line) * assoc;
	uint64_t *tags = l1->tags + base;
	uint8_t *meta = l1->meta + base;
	uint32_t w = 0;
	while (w < assoc && tags[w] != line)
		w++;
	if (w < assoc) {
		/* a hit the entries' loop left to the engine: a write to a line not in M */
		if (l1->classify)
			sim_shadow_touch(&l1->shadow, line);
		set_to_front(tags, meta, w);
		if (write) {
			write_ownership(s, &r, line);
			meta[0] |= META_DIRTY;
		}
		finish_reference(s, &r, first);
		return;
	}
	r.missed[LEVEL_FIRST] = true;
	sim_cache_stats *st = &s->stats.core[core].cache[first];
	if (l1->classify) {
		/* no invalidation record: compulsory, or the shadow's answer */
		uint64_t *if_present = NULL, *if_absent = NULL;
		if (sim_lineset_insert(&l1->seen, line)) {
			r.class[LEVEL_FIRST] = CLASS_COMPULSORY;
		} else {
			r.class[LEVEL_FIRST] = CLASS_SHADOWED;
			if_present = &st->conflict;
			if_absent = &st->capacity;
		}
		sim_shadow_classify(&l1->shadow, line, if_present, if_absent);
	}
	/* l1_install's victim, the set's last way */
	const uint32_t last = assoc - 1;
	uint64_t victim = tags[last];
	if (victim != SIM_NO_TAG) {
		uint8_t victim_meta = meta[last];
		bool dirty = (victim_meta & META_DIRTY) != 0;
		unsigned state = state_of(victim_meta);
		st->evictions++;
		tags[last] = SIM_NO_TAG;
		meta[last] = 0;
		if (dirty)
			st->writebacks++;
		long held = sim_cache_find(other, victim);
		if (held < 0 || state_of(other->meta[held]) == SIM_STATE_I) {
			private_leave(s, core, victim, state, dirty);
		} else if (dirty || state == SIM_STATE_M || state == SIM_STATE_O) {
			/* the other L1 still holds it, now clean */
			s->stats.core[core].coherence.writebacks++;
			writeback_below_private(s, core, victim << l1->line_bits, true);
			unsigned clean = state == SIM_STATE_O ? SIM_STATE_S : SIM_STATE_E;
			if (state == SIM_STATE_M || state == SIM_STATE_O) {
				private_set_state(s, core, victim, clean);
				transition(s, core, 0, state, clean);
			}
		}
	}
	/* the fill: the new line at the front, the others one way back */
	for (uint32_t i = last; i > 0; i--) {
		tags[i] = tags[i - 1];
		meta[i] = meta[i - 1];
	}
	tags[0] = line;
	meta[0] = SIM_STATE_I;
	/* fetch_shared for one core */
	uint64_t line_address = line << l1->line_bits;
	long copy = sim_cache_find(other, line);
	unsigned own = copy >= 0 ? state_of(other->meta[copy]) : SIM_STATE_I;
	unsigned state;
	bool l3_hit = false;
	if (own != SIM_STATE_I) {
		/* the other L1 holds it: no coherence request, only the L3 reference */
		state = own;
		if (s->has_l3)
			l3_hit = l3_reference(s, &r, line_address, true);
		if (!l3_hit)
			r.memory = true;
	} else {
		sim_coherence_stats *cs = &s->stats.core[core].coherence;
		if (write) {
			cs->bus_read_exclusive++;
			state = SIM_STATE_M;
		} else {
			cs->bus_reads++;
			state = SIM_STATE_E;
		}
		if (s->has_l3)
			l3_hit = l3_reference(s, &r, line_address, true);
		if (!l3_hit) {
			s->stats.memory_reads++;
			s->stats.core[core].memory_reads++;
			r.memory = true;
		}
		transition(s, core, 0, SIM_STATE_I, state);
	}
	meta[0] = (uint8_t)state;
	if (write) {
		if (state != SIM_STATE_M)
			write_ownership(s, &r, line);
		meta[0] |= META_DIRTY;
	}
	finish_reference(s, &r, first);
}

void sim_reference_caches(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size)
{
	sim_core *k = &s->core[core];
	sim_level first = kind == SIM_IFETCH ? SIM_L1I : SIM_L1D;
	sim_cache *l1 = &k->cache[first];
	const sim_cache_config *l1_config = &s->config.cache[first];
	bool write = kind == SIM_WRITE;
	if (size == 0)
		size = 1;
	if (address + size - 1 < address)
		size = (uint32_t)(UINT64_MAX - address + 1);   /* never wrap around */

	uint64_t first_line = address >> l1->line_bits, last_line = (address + size - 1) >> l1->line_bits;
	if (s->lean && first_line == last_line) {
		reference_one_line(s, core, kind, address, size, first, first_line);
		return;
	}
	if (s->single && first_line == last_line && k->invalidated.count == 0) {
		reference_single(s, core, kind, address, size, first, first_line);
		return;
	}

	reference r;
	memset(&r, 0, sizeof r);
	r.core = core;
	r.kind = kind;
	r.address = address;
	r.size = size;
	r.reached[LEVEL_FIRST] = true;

	if (last_line - first_line >= MAX_LINES)
		last_line = first_line + MAX_LINES - 1;   /* cut: config max_access_size documents it */
	unsigned n = (unsigned)(last_line - first_line + 1);
	if (n > 1)
		s->stats.core[core].straddles++;
	bool hit[MAX_LINES];
	/* The prefetcher acts after the reference is complete, so its fills
	 * can never evict the line the reference is still writing. */
	prefetch_trigger trigger[MAX_LINES];
	unsigned triggers = 0;

	/* Pass 1: the L1 lookups, filling what misses (cachegrind's order). */
	for (unsigned i = 0; i < n; i++) {
		uint64_t line = first_line + i;
		long w = sim_cache_find(l1, line);
		hit[i] = w >= 0;
		if (w >= 0) {
			if (l1->classify)
				sim_shadow_touch(&l1->shadow, line);
			w = (long)sim_cache_touch(l1, (size_t)w);
			if (l1->meta[w] & META_PREFETCHED) {
				l1->meta[w] &= (uint8_t)~META_PREFETCHED;
				s->stats.core[core].cache[first].prefetch_useful++;
				s->stats.core[core].prefetch.useful++;
				trigger[triggers++] = (prefetch_trigger){ line, AFTER_PREFETCHED_HIT };
			}
			continue;
		}
		unsigned buffered_state;
		if (first == SIM_L1D && k->buffered && (!write || l1_config->write_allocate) &&
		    s->prefetcher->stream_take(s, core, line, &buffered_state)) {
			/* a stream buffer has it: it moves into the L1D, and the
			 * reference is served as by a hit (Jouppi: "reloads the cache
			 * in one cycle"); the buffer fetches its next line afterwards */
			hit[i] = true;
			if (l1->classify) {
				sim_lineset_insert(&l1->seen, line);
				sim_shadow_classify(&l1->shadow, line, NULL, NULL);
			}
			l1_install(s, core, first, line, (uint8_t)buffered_state);
			trigger[triggers++] = (prefetch_trigger){ line, AFTER_BUFFER_HIT };
			continue;
		}
		if (l1->classify) {
			/* the shadow's answer counts only a miss neither compulsory nor
			 * coherence: capacity if it misses too, else conflict */
			uint64_t *if_present = NULL, *if_absent = NULL;
			if (!r.missed[LEVEL_FIRST]) {
				r.class[LEVEL_FIRST] = classify_without_shadow(s, &r, l1, line, true);
				if (r.class[LEVEL_FIRST] == CLASS_SHADOWED) {
					sim_cache_stats *st = &s->stats.core[core].cache[first];
					if_present = &st->conflict;
					if_absent = &st->capacity;
				}
			}
			sim_shadow_classify(&l1->shadow, line, if_present, if_absent);
		}
		r.missed[LEVEL_FIRST] = true;
		if (!write || l1_config->write_allocate)
			l1_install(s, core, first, line, SIM_STATE_I);
	}

	/* Pass 2: resolve the misses below; the lines that hit are referenced
	 * below too when another line missed (cachegrind's straddle rule). */
	for (unsigned i = 0; i < n; i++) {
		uint64_t line = first_line + i;
		uint64_t line_address = line << l1->line_bits;
		uint64_t piece = i == 0 ? address : line_address;
		uint64_t granule = granule_of(s, line_address);
		if (hit[i]) {
			if (r.missed[LEVEL_FIRST]) {
				if (s->has_l2) {
					if (k->cache[SIM_L2].classify)
						sim_shadow_touch(&k->cache[SIM_L2].shadow, granule);
					long w = sim_cache_find(&k->cache[SIM_L2], granule);
					r.reached[LEVEL_SECOND] = true;
					if (w >= 0)
						w = (long)sim_cache_touch(&k->cache[SIM_L2], (size_t)w);
				} else if (s->has_l3) {
					l3_reference(s, &r, line_address, s->config.l3_inclusion != SIM_EXCLUSIVE);
				}
			}
		} else if (!write || l1_config->write_allocate) {
			unsigned state = fetch_below_l1(s, &r, line_address, write);
			long w = sim_cache_find(l1, line);
			if (w < 0)   /* lost to a back-invalidation meanwhile */
				w = (long)l1_install(s, core, first, line, (uint8_t)state);
			set_state_in(l1, w, state);
			if (kind != SIM_IFETCH && s->config.prefetch.kind != SIM_PREFETCH_NONE)
				trigger[triggers++] = (prefetch_trigger){ line, AFTER_MISS };
		} else {
			stream_forget(s, core, granule);
			write_around(s, &r, piece);
			continue;
		}
		if (write) {
			long w = sim_cache_find(l1, line);
			write_ownership(s, &r, granule);
			if (s->config.classify && s->config.cores > 1)
				record_write(s, core, granule, word_mask(s, granule, piece,
				             (uint32_t)((i + 1 < n ? line_address + (1ull << l1->line_bits) : address + size) - piece)));
			if (w >= 0 && l1_config->write_back)
				l1->meta[w] |= META_DIRTY;
			else
				write_down(s, &r, piece, true);
		}
		if (s->config.check)
			sim_check_line(s, granule);
	}
	finish_reference(s, &r, first);
	for (unsigned i = 0; i < triggers; i++) {
		if (trigger[i].event == AFTER_PREFETCHED_HIT)
			s->prefetcher->after_prefetched_hit(s, core, trigger[i].line);
		else if (trigger[i].event == AFTER_BUFFER_HIT)
			s->prefetcher->stream_after_hit(s, core, trigger[i].line);
		else
			s->prefetcher->after_miss(s, core, trigger[i].line);
	}
}

/* ---------------------------------------------------------- prefetch */

bool sim_line_held_elsewhere(const sim *s, uint32_t core, uint64_t granule)
{
	if (s->config.cores <= 1)
		return false;
	const sim_directory_entry *d = sim_table_find(&s->directory, granule);
	return d && (d->sharers & ~(1ull << core)) != 0;
}

/* One prefetch of line (an L1D line number): a read below the L1 that
 * counts at the levels below only.  Into the L1D (next-line, stride), the
 * line is installed first, tagged, so its victim leaves before the fetch as
 * on a demand miss; for a stream buffer the caller keeps it.  False when it
 * is not fetched: out of the address space, in the L1D already, or held by
 * another core with unshared_only. */
static bool prefetch(sim *s, uint32_t core, uint64_t line, bool into_l1, unsigned *state)
{
	sim_cache *l1 = &s->core[core].cache[SIM_L1D];
	/* a stream running off either end of the address space stops there */
	if (line > (UINT64_MAX >> l1->line_bits) || sim_cache_find(l1, line) >= 0)
		return false;
	uint64_t address = line << l1->line_bits;
	uint64_t granule = granule_of(s, address);
	sim_prefetch_stats *ps = &s->stats.core[core].prefetch;
	if (s->config.prefetch.unshared_only && sim_line_held_elsewhere(s, core, granule)) {
		ps->skipped_shared++;
		return false;
	}
	ps->issued++;
	reference r;
	memset(&r, 0, sizeof r);
	r.core = core;
	r.kind = SIM_READ;
	r.address = address;
	r.size = 1;
	r.prefetch = true;
	sim_thread_stats *saved = s->current_thread;
	s->current_thread = NULL;
	if (into_l1)
		l1_install(s, core, SIM_L1D, line, META_PREFETCHED);
	*state = fetch_below_l1(s, &r, address, false);
	if (into_l1) {
		long w = sim_cache_find(l1, line);
		if (w >= 0)   /* else lost to a back-invalidation meanwhile */
			set_state_in(l1, w, *state);
		s->stats.core[core].cache[SIM_L1D].prefetch_fills++;
	}
	finish_reference(s, &r, SIM_L1D);   /* r never reached the L1: counted below it only */
	s->current_thread = saved;
	if (into_l1 && s->config.check)
		sim_check_line(s, granule);
	return true;
}

void sim_prefetch_line(sim *s, uint32_t core, uint64_t line)
{
	unsigned state;
	prefetch(s, core, line, true, &state);
}

bool sim_prefetch_fetch(sim *s, uint32_t core, uint64_t line, unsigned *state)
{
	return prefetch(s, core, line, false, state);
}

void sim_stream_release(sim *s, uint32_t core, uint64_t line, unsigned state)
{
	if (s->has_l2)
		return;   /* the L2 keeps its copy */
	uint64_t granule = granule_of(s, line << s->core[core].cache[SIM_L1D].line_bits);
	if (sim_core_state(s, core, granule) == SIM_STATE_I)
		private_leave(s, core, granule, state, false);
}
