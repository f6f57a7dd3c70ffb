/* The simulator's internal structures.  Kept plain, like cachegrind's: tags
 * are line addresses in one array per cache (set-major), with parallel
 * arrays of per-way metadata, so a hit is a short scan and a store. */
#ifndef PLUMB_SIM_INTERNAL_H
#define PLUMB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "plumb/sim.h"

#define SIM_NO_TAG UINT64_MAX

/* Per-way metadata byte: the coherence state in the low bits, then flags. */
#define META_STATE 0x07u
#define META_DIRTY 0x08u
#define META_PREFETCHED 0x10u

/* The lines of one reference the engine simulates; a longer one is cut. */
#define SIM_MAX_LINES 64

/* ------------------------------------------------------------ hash table */

/* Open addressing with linear probing and backward-shift deletion; keys are
 * uint64 (SIM_NO_TAG is the empty marker), values are fixed-size blobs stored
 * beside them.  It grows at half load, so it is used only where growth is
 * bounded by the footprint (classification) or by the caches' capacity. */
typedef struct sim_table {
	uint64_t *keys;
	unsigned char *values;
	size_t value_size;
	size_t capacity;        /* a power of two */
	size_t count;
} sim_table;

int sim_table_init(sim_table *t, size_t value_size, size_t initial);
void sim_table_free(sim_table *t);
void *sim_table_find(const sim_table *t, uint64_t key);
/* Finds or inserts (zeroed value).  Pointers into the table are invalid
 * after the next insert of a new key (an insert that finds its key moves
 * nothing). */
void *sim_table_insert(sim_table *t, uint64_t key, bool *created);
bool sim_table_remove(sim_table *t, uint64_t key);
void sim_table_clear(sim_table *t);
/* Iteration: slot i is used when keys[i] != SIM_NO_TAG. */
static inline void *sim_table_value_at(const sim_table *t, size_t slot)
{
	return t->values + slot * t->value_size;
}

/* ------------------------------------------------------ classification */

/* A set of line numbers (the lines a cache ever missed: compulsory misses)
 * as bitmaps of 512 consecutive lines in a hash table by line / 512: a
 * program's lines come in runs, so its footprint takes a few host lines
 * where a table of lines took one slot each, and the block of the last
 * insert is kept, so a run of neighbours costs no hashing. */
#define SIM_LINESET_SHIFT 9
typedef struct sim_lineset {
	sim_table blocks;       /* line >> SIM_LINESET_SHIFT -> 8 words of bits */
	uint64_t last_block;
	uint64_t *last_bits;    /* the last block's bits (NULL: none yet) */
} sim_lineset;

int sim_lineset_init(sim_lineset *l, size_t lines);
void sim_lineset_free(sim_lineset *l);
/* Adds line; returns true when it was not in the set. */
static inline bool sim_lineset_insert(sim_lineset *l, uint64_t line)
{
	uint64_t block = line >> SIM_LINESET_SHIFT;
	if (!l->last_bits || block != l->last_block) {
		l->last_bits = sim_table_insert(&l->blocks, block, NULL);
		l->last_block = block;
	}
	uint64_t *word = &l->last_bits[(line >> 6) & ((1u << (SIM_LINESET_SHIFT - 6)) - 1)];
	uint64_t bit = 1ull << (line & 63);
	if (*word & bit)
		return false;
	*word |= bit;
	return true;
}

/* A fully associative LRU cache of the same number of lines: a miss in the
 * real cache that hits here is a conflict miss, one that misses here too is a
 * capacity miss.  A hit of the real cache only logs its line; the recency
 * list is brought up to date when a miss asks (sim_shadow.c). */
typedef struct sim_shadow_hint {
	uint64_t line;          /* SIM_NO_TAG: none */
	uint64_t mark;          /* the node's mark, as of the hint's last use */
} sim_shadow_hint;

/* A node of a shadow's recency list: what a move, a lookup's check of its
 * mark and an eviction read, together. */
typedef struct sim_shadow_node {
	uint64_t line;          /* SIM_NO_TAG: free */
	uint64_t mark;          /* the update that last placed it */
	uint32_t previous, next;   /* the recency list, most recent first, through the sentinel */
} sim_shadow_node;

typedef struct sim_shadow_worker sim_shadow_worker;
#define SIM_SHADOW_LOG_CAPACITY 1024u

/* The thread's side (sim_shadow_touch, the log) and the list's side (the
 * rest): with a worker (sim_shadow_worker.c) the list is its thread's. */
typedef struct sim_shadow {
	sim_shadow_worker *worker;   /* NULL: the list is brought up to date here */
	uint32_t worker_channel;     /* with a worker: the shadow's ring there, into which it logs */
	sim_table index;        /* line -> node */
	sim_shadow_node *node;  /* pool of them, and the recency list's sentinel (node pool) */
	uint32_t *free_nodes;
	uint32_t *order;        /* scratch: the logged lines' nodes, most recent first */
	uint64_t *log;          /* lines touched since the last update, in order */
	uint32_t logged, log_capacity;
	sim_shadow_hint *hint;  /* by the line's low bits: a line lately looked up, */
	uint32_t *hint_node;    /* and its node */
	uint32_t hint_mask;
	uint32_t listed, capacity;
	uint32_t pool, allocated, free_count;
	uint64_t syncs;         /* updates so far */
	uint64_t last;          /* the most recent line */
} sim_shadow;

int sim_shadow_init(sim_shadow *s, uint32_t capacity);
void sim_shadow_free(sim_shadow *s);
/* References line; returns true if it was present.  Not with a worker. */
bool sim_shadow_reference(sim_shadow *s, uint64_t line);
/* References line at a miss of the real cache and adds one to *if_present
 * or *if_absent (none when NULL): now, or on the worker's thread. */
void sim_shadow_classify(sim_shadow *s, uint64_t line, uint64_t *if_present, uint64_t *if_absent);
/* Brings the recency list up to date with the log (or hands the log over). */
void sim_shadow_sync(sim_shadow *s);
/* The list's side: the lines logged (oldest first) brought to the front;
 * line referenced, its log caught up already. */
void sim_shadow_catch_up(sim_shadow *s, const uint64_t *log, uint32_t logged);
bool sim_shadow_reference_listed(sim_shadow *s, uint64_t line);

/* A thread that keeps shadows' lists (sim_shadow_worker.c); the counters
 * its answers decide: two per L1 and L2 of each core, two of the L3. */
#define SIM_SHADOW_WORKER_COUNTERS (6 * SIM_MAX_CORES + 2)
/* A thread that keeps shadows' lists (sim_shadow_worker.c). */
int sim_shadow_worker_new(sim_shadow_worker **out);
/* The shadow's lists kept by the worker, its log a window of a ring there. */
int sim_shadow_worker_attach(sim_shadow_worker *w, sim_shadow *shadow);
/* Hands over the `lines` lines the shadow logged, then a reference of line
 * (SIM_NO_TAG: none; then if_present, when not NULL, counts an answer known
 * to be present), and moves the shadow's log to its next window. */
void sim_shadow_worker_push(sim_shadow_worker *w, sim_shadow *shadow, uint32_t lines, uint64_t line,
                            uint64_t *if_present, uint64_t *if_absent);
/* The hot-lines and hot-code tables (sim_line_stats, sim_code_stats: the
 * report's, nothing in the simulation reads them) kept by the worker too:
 * their updates are handed over as items, in order with the shadows'. */
void sim_shadow_worker_keep_tables(sim_shadow_worker *w, sim *s);
/* A table update (sim_table_note's arguments) handed over. */
void sim_shadow_worker_note(sim_shadow_worker *w, uint32_t op, uint64_t key, uint32_t bits, uint64_t amount);
/* Waits until everything handed over is done: before statistics are read. */
void sim_shadow_worker_settle(sim_shadow_worker *w);
void sim_shadow_worker_free(sim_shadow_worker *w);
/* An update of the hot-lines or hot-code table (s->lines, s->code), on the
 * simulator's thread or the worker's (sim_note). */
enum {
	SIM_NOTE_READ,          /* key: a coherence line (granule); bits: the core */
	SIM_NOTE_WRITE,         /* the same */
	SIM_NOTE_UPGRADE,       /* the same: an upgrade, which is a write too */
	SIM_NOTE_INVALIDATIONS, /* amount: copies invalidated */
	SIM_NOTE_TRANSFER,
	SIM_NOTE_TRUE,          /* a coherence miss, true sharing */
	SIM_NOTE_FALSE,         /* and false sharing */
	SIM_NOTE_CODE           /* key: an instruction address; bits: SIM_NOTE_CODE_*, amount: invalidations sent */
};
enum { SIM_NOTE_CODE_L1_MISS = 1, SIM_NOTE_CODE_LAST_LEVEL = 2, SIM_NOTE_CODE_COHERENCE = 4 };
void sim_table_note(sim *s, uint32_t op, uint64_t key, uint32_t bits, uint64_t amount);
/* Sums added to the hot-code table's entry of a code address. */
void sim_table_code(sim *s, uint64_t address, uint64_t l1_misses, uint64_t last_level_misses,
                    uint64_t coherence_misses, uint64_t invalidations);
/* References line when the answer is not wanted (the real cache hit). */
static inline void sim_shadow_touch(sim_shadow *s, uint64_t line)
{
	if (line == s->last)
		return;
	s->last = line;
	s->log[s->logged++] = line;
	if (s->logged == s->log_capacity)
		sim_shadow_sync(s);
}

/* ----------------------------------------------------------------- cache */

/* LRU and FIFO keep each set's ways in order, most recent first, as
 * cachegrind does: a hit at the front costs one compare, the victim is the
 * last way, and no per-way stamps are needed (fewer host cache lines per
 * simulated set, which is what a big simulated L3 costs).  LRU moves a hit
 * to the front; FIFO only moves fills there.  Invalidated ways go to the
 * back, so they are filled first.  The other policies keep fixed ways.
 * Way indexes therefore change on touch and fill: both return the new one. */
typedef struct sim_cache {
	uint64_t *tags;         /* sets * assoc line addresses, SIM_NO_TAG = invalid */
	uint8_t *meta;          /* state | flags */
	uint8_t *rrpv;          /* SRRIP */
	uint64_t *plru;         /* tree bits per set */
	uint64_t sets, set_mask;
	uint32_t assoc;
	uint32_t line_bits;
	uint32_t assoc_bits;    /* log2(assoc) when assoc is a power of two, else 0 */
	bool assoc_power_of_two;
	bool sets_power_of_two;
	bool ordered;           /* LRU or FIFO: ways kept in recency / fill order */
	sim_replacement replacement;
	uint64_t random_state;
	size_t last_way;        /* the fast path's hint: the way of the last hit */
	bool present;
	/* classification (classify on) */
	bool classify;
	sim_shadow shadow;
	sim_lineset seen;       /* lines ever missed: compulsory misses */
} sim_cache;

int sim_cache_init(sim_cache *c, uint64_t size, uint32_t line, uint32_t assoc,
                   sim_replacement replacement, uint64_t seed, bool classify);
void sim_cache_free(sim_cache *c);

static inline uint64_t sim_cache_set(const sim_cache *c, uint64_t line)
{
	return c->sets_power_of_two ? (line & c->set_mask) : (line % c->sets);
}

/* Way index (absolute: set * assoc + way) or -1.  The scan exits early:
 * with LRU sets kept in recency order, a hit is usually in the first ways. */
static inline long sim_cache_find(const sim_cache *c, uint64_t line)
{
	size_t base = (size_t)sim_cache_set(c, line) * c->assoc;
	const uint64_t *tags = c->tags + base;
	for (uint32_t w = 0; w < c->assoc; w++)
		if (tags[w] == line)
			return (long)(base + w);
	return -1;
}

/* The first way of way's set (no division for power-of-two associativity). */
static inline size_t sim_cache_base(const sim_cache *c, size_t way)
{
	return c->assoc_power_of_two ? (way >> c->assoc_bits) << c->assoc_bits : way - way % c->assoc;
}

/* Moves way to the front of its set, keeping the order of the others. */
static inline size_t sim_cache_move_to_front(sim_cache *c, size_t way)
{
	size_t base = sim_cache_base(c, way);
	if (way == base)
		return way;
	uint64_t tag = c->tags[way];
	uint8_t meta = c->meta[way];
	if (way - base >= 4) {
		/* a fill at the back of a set (or a deep hit): one block copy each
		 * instead of a loop of unpredictable length */
		memmove(&c->tags[base + 1], &c->tags[base], (way - base) * sizeof *c->tags);
		memmove(&c->meta[base + 1], &c->meta[base], way - base);
	} else {
		for (size_t i = way; i > base; i--) {
			c->tags[i] = c->tags[i - 1];
			c->meta[i] = c->meta[i - 1];
		}
	}
	c->tags[base] = tag;
	c->meta[base] = meta;
	return base;
}

void sim_cache_touch_slow(sim_cache *c, size_t way);

/* A hit: updates the replacement state; returns the way's new index. */
static inline size_t sim_cache_touch(sim_cache *c, size_t way)
{
	if (c->replacement == SIM_LRU)
		return sim_cache_move_to_front(c, way);
	if (c->replacement == SIM_PLRU || c->replacement == SIM_SRRIP)
		sim_cache_touch_slow(c, way);
	return way;
}

/* Chooses the way to fill for line (an invalid one first); the caller
 * handles the victim in tags[way] (SIM_NO_TAG when none), then calls
 * sim_cache_fill, which returns the filled way's index.  LRU and FIFO (the
 * ordered sets, every preset) are decided here, inline, since every miss
 * at every level passes through; the other policies in sim_cache.c. */
size_t sim_cache_victim_unordered(sim_cache *c, uint64_t line);
void sim_cache_fill_unordered(sim_cache *c, size_t way);

static inline size_t sim_cache_victim(sim_cache *c, uint64_t line)
{
	if (c->ordered)   /* the back: invalid ways, else the oldest */
		return (size_t)sim_cache_set(c, line) * c->assoc + c->assoc - 1;
	return sim_cache_victim_unordered(c, line);
}

static inline size_t sim_cache_fill(sim_cache *c, size_t way, uint64_t line, uint8_t meta)
{
	c->tags[way] = line;
	c->meta[way] = meta;
	if (c->ordered)
		return sim_cache_move_to_front(c, way);
	sim_cache_fill_unordered(c, way);
	return way;
}

static inline void sim_cache_invalidate(sim_cache *c, size_t way)
{
	if (c->ordered) {
		/* to the back, so the next fill of the set takes it */
		size_t last = sim_cache_base(c, way) + c->assoc - 1;
		for (size_t i = way; i < last; i++) {
			c->tags[i] = c->tags[i + 1];
			c->meta[i] = c->meta[i + 1];
		}
		way = last;
	}
	c->tags[way] = SIM_NO_TAG;
	c->meta[way] = 0;
}

/* ----------------------------------------------------------- prefetcher */

/* Where a prefetch stream is: the last demand line that followed it, its
 * stride, and the furthest position examined for prefetching.  The stride
 * prefetcher keeps `depth` lines ahead of last_line in the L1D; a stream
 * buffer keeps them in its ring. */
typedef struct sim_stream_position {
	uint64_t last_line;
	int64_t stride;         /* in lines */
	uint64_t ahead;
	uint64_t last_use;
	bool valid;
} sim_stream_position;

/* A Jouppi stream buffer's FIFO: `depth` slots holding the lines fetched
 * ahead of its stream (position i of the core goes with buffer i).  Slots
 * run from `head` for `count` (ring order is stream order); a slot whose
 * line was taken away by coherence or an eviction below holds SIM_NO_TAG (a
 * hole).  The line's coherence state is the L2's when there is an L2, else
 * the slot's own `state`. */
typedef struct sim_stream_buffer {
	uint64_t *line;         /* depth slots */
	uint8_t *state;
	uint32_t head, count;
} sim_stream_buffer;

/* ------------------------------------------------------------------ sim */

typedef struct sim_invalidation_record {
	uint64_t written;       /* words other cores wrote since this core lost the line */
	uint8_t inclusion;      /* lost to back-invalidation rather than coherence */
} sim_invalidation_record;

typedef struct sim_directory_entry {
	uint64_t sharers;       /* cores whose private hierarchy holds the line */
	uint64_t recorded;      /* cores with an invalidation record for it (classify) */
} sim_directory_entry;

typedef struct sim_core {
	sim_cache cache[3];     /* L1I, L1D, L2 */
	sim_cache tlb[SIM_TLB_COUNT];
	sim_table invalidated;  /* line -> sim_invalidation_record (classify) */
	sim_stream_position *streams;   /* stride prefetcher and stream buffers */
	sim_stream_buffer *buffers;     /* stream buffers (one per stream) */
	uint64_t *buffer_lines;         /* streams * depth slots, shared by the buffers */
	uint8_t *buffer_states;
	uint32_t buffered;              /* lines held by all buffers (a lookup skips empty ones) */
	uint64_t stream_clock;
} sim_core;

typedef struct sim_thread_slot {
	sim_thread_stats stats;
	bool used;
} sim_thread_slot;

/* The prefetchers' entry points as the engine calls them.  The prefetchers
 * (sim_prefetch.c) issue their prefetches through the engine, so they sit
 * above it; the engine reaches them only through this table, which sim.c
 * (above both) sets, so no file calls back into one above it. */
typedef struct sim_prefetch_hooks {
	void (*after_miss)(sim *s, uint32_t core, uint64_t line);
	void (*after_prefetched_hit)(sim *s, uint32_t core, uint64_t line);
	bool (*stream_take)(sim *s, uint32_t core, uint64_t line, unsigned *state);
	void (*stream_after_hit)(sim *s, uint32_t core, uint64_t line);
} sim_prefetch_hooks;

struct sim {
	sim_config config;
	sim_stats stats;
	sim_shadow_worker *shadow_worker;   /* the L1 shadows' thread, or NULL */
	sim_core core[SIM_MAX_CORES];
	sim_cache l3;
	bool has_l2, has_l3, has_tlb;
	uint32_t granule_bits;          /* coherence line: L2's, or L1D's without L2 */
	uint32_t word_bits;             /* sharing-mask word: line / 64, at least 4 bytes */
	sim_table directory;            /* granule -> sim_directory_entry (cores > 1) */
	sim_table lines;                /* granule -> sim_line_stats (classify) */
	sim_table code;                 /* ip -> sim_code_stats (classify) */
	sim_thread_slot *threads;       /* indexed by trace thread id */
	size_t thread_capacity;
	uint32_t *thread_core;          /* thread id -> core + 1 (0 = unmapped) */
	uint32_t next_core;
	/* the reference being simulated */
	sim_thread_stats *current_thread;
	uint64_t current_ip;
	bool fast;                      /* no classification, no TLB: the hit path is a few instructions */
	bool narrow_sets;               /* tests: sim_access_compact's portable loop even with AVX-512 */
	bool lean;                      /* no classification, check or prefetcher: one-line references
	                                 * take sim_engine.c's reference_one_line */
	struct sim_regions *regions;    /* sim_regions.c; NULL until the first marker */
	const trace_code_map *code_map; /* names for the code table, or NULL */
	struct sim_program *program;    /* plumbgrind's definitions made into ops (sim_access_compact) */
	bool annotate;                  /* per-instruction costs (sim_annotate.c) */
	sim_table annotation;           /* ip -> sim_annotation */
	uint64_t last_ip[SIM_MAX_CORES]; /* annotate: each core's last instruction */
	uint32_t trace_thread;          /* annotate: the thread of the reference being simulated */
	struct sim_calls *calls;        /* annotate: calls followed (sim_annotate.c); NULL until the first */
	const sim_prefetch_hooks *prefetcher; /* sim_prefetch_policy, set by sim_new */
	/* the first invariant violation (check on) */
	bool failed;
	char failure[PLUMB_MESSAGE_MAX];
};

/* n references of kind made by core, counted for the core, the current
 * thread and the whole run (the loops that count them locally flush here). */
static inline void sim_count_references(sim *s, uint32_t core, int kind, uint64_t n)
{
	s->stats.core[core].references[kind] += n;
	if (s->current_thread)
		s->current_thread->references[kind] += n;
	s->stats.references[kind] += n;
}

/* sim.c */
void sim_program_free(struct sim_program *p);
/* The thread's slot made current (a new thread gets the next core); its core. */
/* A hit of an access of this kind in an LRU L1 needs (meta & need) == want
 * and sets dirty (the MRU loops' and plumbgrind's L1 filter's rule). */
void sim_mru_masks(sim_access_kind kind, bool write_back, uint8_t *need, uint8_t *want, uint8_t *dirty);

/* sim_regions.c: a region marker of the thread on core (its slot is
 * current); the batch loops flush their local counts first. */
int sim_region_marker(sim *s, uint32_t core, const trace_record *record, plumb_status *status);
void sim_regions_free(sim *s);
void sim_regions_reset(sim *s);

/* sim_annotate.c: one completed demand reference (annotate on). */
void sim_annotate_reference(sim *s, uint32_t core, sim_access_kind kind, const bool reached[3], const bool missed[3],
                            bool coherence_true, bool coherence_false, uint64_t invalidations);
void sim_annotate_received(sim *s, uint32_t core);
/* A call or return record (trace_is_call) of the trace. */
int sim_annotate_call(sim *s, const trace_record *record, plumb_status *status);
void sim_annotate_free(sim *s);

/* sim_engine.c */
void sim_reference(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size);
/* The two halves of sim_reference: the TLB lookups, then the caches. */
void sim_tlb_reference(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size);
void sim_reference_caches(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size);
/* A one-line write hit of a line in M, classify on, several cores: the
 * words written, for true and false sharing. */
void sim_write_hit_words(sim *s, uint32_t core, uint64_t address, uint32_t size);
/* Whether a core other than core holds an invalidation record (classify
 * on): only then can a write be remembered for true and false sharing.
 * A single-threaded program never has one, so its write hits skip the
 * directory lookup. */
static inline bool sim_others_recorded(const sim *s, uint32_t core)
{
	for (uint32_t o = 0; o < s->config.cores; o++)
		if (o != core && s->core[o].invalidated.count)
			return true;
	return false;
}
/* sim_check.c: checks one line after a transaction (check on). */
void sim_check_line(sim *s, uint64_t granule);
/* sim_prefetch_state.c: the prefetchers' state each core owns. */
int sim_prefetch_init(sim *s, sim_core *core);
void sim_prefetch_free(sim_core *core);
/* The slot holding line in one of core's buffers (an index into
 * buffer_lines), or -1. */
long sim_stream_slot(const sim *s, const sim_core *k, uint64_t line);
/* The state of line in core's buffers (I when none holds it). */
unsigned sim_stream_state(const sim *s, const sim_core *k, uint64_t line);
/* Coherence and the L2 took the granule away: its buffered lines go. */
void sim_stream_remove_granule(sim *s, uint32_t core, uint64_t granule);
/* sim_prefetch.c: the prefetchers, above the engine.  The engine calls
 * them through s->prefetcher only (sim_prefetch_hooks). */
/* After a demand L1D miss of line (an L1D line number) that went below. */
void sim_prefetch_after_miss(sim *s, uint32_t core, uint64_t line);
/* After the first demand use of a line prefetched into the L1D. */
void sim_prefetch_after_prefetched_hit(sim *s, uint32_t core, uint64_t line);
/* Stream buffers.  An L1D miss of line: when a buffer holds it (at its head,
 * or anywhere with lookup = any), takes it out and gives its state; the
 * caller installs it in the L1D and calls sim_stream_after_hit once the
 * reference is complete. */
bool sim_stream_take(sim *s, uint32_t core, uint64_t line, unsigned *state);
void sim_stream_after_hit(sim *s, uint32_t core, uint64_t line);
/* The four above, as sim.c gives them to the engine (s->prefetcher). */
extern const sim_prefetch_hooks sim_prefetch_policy;
/* sim_engine.c: brings line (L1D line number) into core's L1D as a prefetch. */
void sim_prefetch_line(sim *s, uint32_t core, uint64_t line);
/* Fetches line below the L1 for a stream buffer; false when it is not
 * fetched (in the L1D already, held elsewhere with unshared_only, out of the
 * address space).  *state is the state the buffered copy gets. */
bool sim_prefetch_fetch(sim *s, uint32_t core, uint64_t line, unsigned *state);
/* A buffered line that leaves unused: with no L2 it may be the core's last copy. */
void sim_stream_release(sim *s, uint32_t core, uint64_t line, unsigned state);
bool sim_line_held_elsewhere(const sim *s, uint32_t core, uint64_t granule);

/* Tests: the curve moves its sets' rows with the portable code even where
 * the CPU has AVX-512 (sim_curve.c). */
struct sim_curve;
void sim_curve_narrow_rows(struct sim_curve *c);

#endif
