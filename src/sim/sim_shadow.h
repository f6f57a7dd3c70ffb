/* Miss classification's shadows (sim_shadow.c): a fully associative LRU
 * cache of as many lines as a real one, kept beside it, and the thread that
 * can keep their recency lists (sim_shadow_worker.c) with the hot-line and
 * hot-code tables' updates. */
#ifndef PLUMB_SIM_SHADOW_H
#define PLUMB_SIM_SHADOW_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim.h"
#include "sim/sim_table.h"

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

#endif
