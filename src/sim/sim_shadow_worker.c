/* The caches' shadows' catch-ups on a thread of their own (the L1s', the
 * L2s' and the L3's; the TLBs' stay on the simulator's thread).
 *
 * A 3C shadow (sim_shadow.c) only tells a capacity miss from a conflict
 * miss, and nothing in the simulation reads its answer: it goes to the
 * capacity and conflict counts alone.  So the simulator's thread hands over
 * each full log and each miss's line, with the two counters the miss's
 * answer decides, and goes on; this thread brings the shadows up to date in
 * the same order and adds to the counters.  Whoever reads the statistics
 * waits for it first (sim_shadow_worker_settle).  In plumb sim -- PROG the
 * simulator's thread is the longer side and Valgrind's core is idle half the
 * time: the catch-ups were a fifth of the simulator's time on gzip.
 *
 * One producer, one consumer: a ring of items, and per shadow a ring of
 * logged lines into which the shadow logs directly (its log is a window of
 * the ring), so that nothing is copied on either side.
 * Either side that finds nothing to do (or no room) sleeps on a condition
 * variable after saying so, and the other side wakes it only then. */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_state.h"

#define ITEMS (1u << 14)
#define RING_LINES (1u << 16)    /* per shadow: 512 KiB */
#define CHANNELS (3 * SIM_MAX_CORES + 1)   /* the L1I, L1D and L2 of every core, the L3 */
#define NO_COUNTER UINT32_MAX

/* NOTE_CHANNEL: a table update (sim_table_note), line its key, start its
 * amount, if_present its op, if_absent its bits.  CODE_CHANNEL: a code
 * address's sums (code_sum), line the address, start the invalidations sent,
 * if_present, if_absent and lines the L1 misses, last-level misses and
 * coherence misses. */
#define NOTE_CHANNEL UINT32_MAX
#define CODE_CHANNEL (UINT32_MAX - 1)

/* The hot-code table's updates, summed per code address on the producer's
 * side before they are handed over: an L1 miss updates its instruction's
 * entry, and a program's misses come from few instructions, so most updates
 * add to a sum here instead of making an item.  The table only adds. */
#define CODE_SUMS 256u
#define CODE_SUM_LIMIT (1u << 31)
typedef struct code_sum {
	uint64_t address;         /* 0: none */
	uint64_t invalidations;
	uint32_t l1_misses, last_level_misses, coherence_misses;
} code_sum;

typedef struct shadow_item {
	uint64_t line;            /* SIM_NO_TAG: only the lines before it */
	uint64_t start;           /* where the logged lines are in the shadow's ring */
	uint32_t if_present, if_absent;   /* the counters the line's answer decides (indices), or NONE */
	uint32_t lines;           /* logged lines before the reference */
	uint32_t channel;         /* the shadow's, or NOTE_CHANNEL */
} shadow_item;

/* A shadow's ring: the producer logs at [head, head + the log's capacity),
 * never across the ring's end; the consumer releases what it has read. */
typedef struct channel {
	sim_shadow *shadow;
	uint64_t *ring;
	uint64_t *own_log;        /* the shadow's own buffer, given back at the end */
	uint64_t head;
	uint64_t released_seen;   /* the producer's last look at released */
	alignas(64) _Atomic uint64_t released;   /* the consumer's: a line of its own */
} channel;

struct sim_shadow_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;      /* the consumer waits here for items */
	pthread_cond_t room;      /* the producer waits here for room or for the end */
	shadow_item items[ITEMS];
	/* Each side's index on a line of its own, and the producer's last look
	 * at the consumer's: the producer reads item_tail and released only
	 * when that look says there is no room, and publishes its head without
	 * a full fence, since every read of a line the other core keeps writing
	 * is a transfer between the cores (sort's recorded trace, two cores:
	 * 1.29 to 1.26 s wall, 1.86 to 1.82 s CPU). */
	alignas(64) _Atomic uint64_t item_head;
	uint64_t tail_seen;
	alignas(64) _Atomic uint64_t item_tail;
	alignas(64) _Atomic bool consumer_asleep, producer_asleep, stop;
	channel channels[CHANNELS];
	uint32_t channel_count;
	/* The answers, counted here and added to the statistics when they are
	 * read (settle): the statistics' lines are the simulator's, which writes
	 * their other fields all the time. */
	uint64_t *targets[SIM_SHADOW_WORKER_COUNTERS];
	uint64_t counts[SIM_SHADOW_WORKER_COUNTERS];
	uint32_t target_count;
	sim *tables;              /* whose hot-lines and hot-code tables this thread keeps, or NULL */
	code_sum code_sums[CODE_SUMS];   /* the producer's */
};

/* A sleeping consumer is woken for a batch, not for every item: a wake-up
 * is a system call on each side, as dear as a few hundred catch-ups. */
#define WAKE_ITEMS 512u

static void signal_consumer(sim_shadow_worker *w)
{
	pthread_mutex_lock(&w->lock);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

static void wake_consumer(sim_shadow_worker *w)
{
	/* the head stored before asking whether the consumer sleeps: it says
	 * so before it looks at the head (a store then a load, which only a
	 * full fence keeps in order) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&w->consumer_asleep))
		signal_consumer(w);
}

static void wake_producer(sim_shadow_worker *w)
{
	if (atomic_load(&w->producer_asleep)) {
		pthread_mutex_lock(&w->lock);
		pthread_cond_signal(&w->room);
		pthread_mutex_unlock(&w->lock);
	}
}

static void *consume(void *argument)
{
	sim_shadow_worker *w = argument;
	uint64_t tail = atomic_load_explicit(&w->item_tail, memory_order_relaxed);
	for (;;) {
		uint64_t head = atomic_load_explicit(&w->item_head, memory_order_acquire);
		if (tail == head) {
			pthread_mutex_lock(&w->lock);
			atomic_store(&w->consumer_asleep, true);
			while (atomic_load(&w->item_head) == tail && !atomic_load(&w->stop))
				pthread_cond_wait(&w->wake, &w->lock);
			atomic_store(&w->consumer_asleep, false);
			pthread_mutex_unlock(&w->lock);
			if (atomic_load(&w->item_head) == tail && atomic_load(&w->stop))
				return NULL;
			continue;
		}
		for (; tail != head; tail++) {
			const shadow_item *item = &w->items[tail & (ITEMS - 1)];
			if (item->channel == NOTE_CHANNEL) {
				sim_table_note(w->tables, item->if_present, item->line, item->if_absent, item->start);
				atomic_store_explicit(&w->item_tail, tail + 1, memory_order_release);
				continue;
			}
			if (item->channel == CODE_CHANNEL) {
				sim_table_code(w->tables, item->line, item->if_present, item->if_absent, item->lines,
				               item->start);
				atomic_store_explicit(&w->item_tail, tail + 1, memory_order_release);
				continue;
			}
			channel *ch = &w->channels[item->channel];
			if (item->lines)
				sim_shadow_catch_up(ch->shadow, ch->ring + item->start % RING_LINES, item->lines);
			if (item->line != SIM_NO_TAG) {
				bool present = sim_shadow_reference_listed(ch->shadow, item->line);
				if (item->if_present != NO_COUNTER)
					w->counts[present ? item->if_present : item->if_absent]++;
			} else if (item->if_present != NO_COUNTER) {
				w->counts[item->if_present]++;   /* an answer known already (the line referenced last) */
			}
			atomic_store_explicit(&ch->released, item->start + item->lines, memory_order_release);
			atomic_store_explicit(&w->item_tail, tail + 1, memory_order_release);
		}
		/* the tails stored before asking whether the producer sleeps: it
		 * says so before it looks at them (a store then a load, which only
		 * a full fence keeps in order) */
		atomic_thread_fence(memory_order_seq_cst);
		wake_producer(w);
	}
}

int sim_shadow_worker_new(sim_shadow_worker **out)
{
	*out = NULL;
	/* aligned: the indices' lines are the struct's own */
	sim_shadow_worker *w = aligned_alloc(alignof(sim_shadow_worker), sizeof *w);
	if (!w)
		return -1;
	memset(w, 0, sizeof *w);
	if (pthread_mutex_init(&w->lock, NULL) != 0) {
		free(w);
		return -1;
	}
	if (pthread_cond_init(&w->wake, NULL) != 0 || pthread_cond_init(&w->room, NULL) != 0 ||
	    pthread_create(&w->thread, NULL, consume, w) != 0) {
		pthread_mutex_destroy(&w->lock);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

/* Waits until the consumer has taken the items before `until_item` and
 * released channel ch's lines before `until_line` (ch NULL: no lines). */
static void wait_for(sim_shadow_worker *w, uint64_t until_item, channel *ch, uint64_t until_line)
{
	if (atomic_load_explicit(&w->item_tail, memory_order_acquire) >= until_item &&
	    (!ch || atomic_load_explicit(&ch->released, memory_order_acquire) >= until_line))
		return;
	wake_consumer(w);   /* it may sleep on fewer items than a batch */
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->producer_asleep, true);
	while (atomic_load(&w->item_tail) < until_item || (ch && atomic_load(&ch->released) < until_line))
		pthread_cond_wait(&w->room, &w->lock);
	atomic_store(&w->producer_asleep, false);
	pthread_mutex_unlock(&w->lock);
}

/* The head to write the next item at, once there is room for it: the
 * consumer's tail is read only when the last look at it says the items
 * are full. */
static uint64_t room_for_item(sim_shadow_worker *w)
{
	uint64_t head = atomic_load_explicit(&w->item_head, memory_order_relaxed);
	if (head - w->tail_seen >= ITEMS) {
		w->tail_seen = atomic_load_explicit(&w->item_tail, memory_order_acquire);
		if (head - w->tail_seen >= ITEMS) {
			wait_for(w, head + 1 - ITEMS, NULL, 0);
			w->tail_seen = atomic_load_explicit(&w->item_tail, memory_order_acquire);
		}
	}
	return head;
}

/* The item before head written: published, and a sleeping consumer woken
 * once WAKE_ITEMS wait for it, looked at every WAKE_LOOK items (a look
 * takes a full fence; settle and a wait wake it whatever it has). */
#define WAKE_LOOK 64u
static void item_added(sim_shadow_worker *w, uint64_t head)
{
	atomic_store_explicit(&w->item_head, head, memory_order_release);
	if (head % WAKE_LOOK == 0) {
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load(&w->consumer_asleep) && head - atomic_load(&w->item_tail) >= WAKE_ITEMS)
			signal_consumer(w);
	}
}

int sim_shadow_worker_attach(sim_shadow_worker *w, sim_shadow *shadow)
{
	if (w->channel_count == CHANNELS)
		return -1;
	channel *ch = &w->channels[w->channel_count];
	ch->ring = malloc(RING_LINES * sizeof *ch->ring);
	if (!ch->ring)
		return -1;
	ch->shadow = shadow;
	ch->own_log = shadow->log;
	ch->head = 0;
	atomic_store(&ch->released, 0);
	shadow->worker = w;
	shadow->worker_channel = w->channel_count++;
	shadow->log = ch->ring;
	return 0;
}

/* The index of a statistic's counter (the producer's: the consumer only
 * adds to counts[]). */
static uint32_t counter_index(sim_shadow_worker *w, uint64_t *target)
{
	if (!target)
		return NO_COUNTER;
	for (uint32_t i = 0; i < w->target_count; i++)
		if (w->targets[i] == target)
			return i;
	if (w->target_count == SIM_SHADOW_WORKER_COUNTERS)
		abort();   /* more than the caches of SIM_MAX_CORES cores: never */
	w->targets[w->target_count] = target;
	return w->target_count++;
}

void sim_shadow_worker_push(sim_shadow_worker *w, sim_shadow *shadow, uint32_t lines, uint64_t line,
                            uint64_t *if_present, uint64_t *if_absent)
{
	channel *ch = &w->channels[shadow->worker_channel];
	uint64_t head = room_for_item(w);
	w->items[head & (ITEMS - 1)] = (shadow_item){ line, ch->head, counter_index(w, if_present),
	                                              counter_index(w, if_absent), lines, shadow->worker_channel };
	item_added(w, head + 1);
	/* the shadow's next window: after these lines, never across the ring's
	 * end, once the consumer has released what it overlays */
	uint64_t next = ch->head + lines;
	if (next % RING_LINES + shadow->log_capacity > RING_LINES)
		next += RING_LINES - next % RING_LINES;
	if (next + shadow->log_capacity > RING_LINES + ch->released_seen) {
		ch->released_seen = atomic_load_explicit(&ch->released, memory_order_acquire);
		if (next + shadow->log_capacity > RING_LINES + ch->released_seen) {
			wait_for(w, 0, ch, next + shadow->log_capacity - RING_LINES);
			ch->released_seen = atomic_load_explicit(&ch->released, memory_order_acquire);
		}
	}
	ch->head = next;
	shadow->log = ch->ring + next % RING_LINES;
}

void sim_shadow_worker_keep_tables(sim_shadow_worker *w, sim *s)
{
	w->tables = s;
}

static void push_item(sim_shadow_worker *w, shadow_item item)
{
	uint64_t head = room_for_item(w);
	w->items[head & (ITEMS - 1)] = item;
	item_added(w, head + 1);
}

static void code_sum_flush(sim_shadow_worker *w, code_sum *c)
{
	if (!c->address)
		return;
	push_item(w, (shadow_item){ c->address, c->invalidations, c->l1_misses, c->last_level_misses,
	                            c->coherence_misses, CODE_CHANNEL });
	c->address = 0;
}

void sim_shadow_worker_note(sim_shadow_worker *w, uint32_t op, uint64_t key, uint32_t bits, uint64_t amount)
{
	if (op == SIM_NOTE_CODE) {
		code_sum *c = &w->code_sums[(key * 0x9E3779B97F4A7C15ull) >> 56];
		if (c->address != key) {
			code_sum_flush(w, c);
			*c = (code_sum){ .address = key };
		}
		c->l1_misses += (bits & SIM_NOTE_CODE_L1_MISS) != 0;
		c->last_level_misses += (bits & SIM_NOTE_CODE_LAST_LEVEL) != 0;
		c->coherence_misses += (bits & SIM_NOTE_CODE_COHERENCE) != 0;
		c->invalidations += amount;
		if (c->l1_misses >= CODE_SUM_LIMIT || c->last_level_misses >= CODE_SUM_LIMIT ||
		    c->coherence_misses >= CODE_SUM_LIMIT)
			code_sum_flush(w, c);
		return;
	}
	push_item(w, (shadow_item){ key, amount, op, bits, 0, NOTE_CHANNEL });
}

void sim_shadow_worker_settle(sim_shadow_worker *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < CODE_SUMS; i++)
		code_sum_flush(w, &w->code_sums[i]);
	wait_for(w, atomic_load(&w->item_head), NULL, 0);
	/* the consumer is idle until the next item: its counts are ours */
	for (uint32_t i = 0; i < w->target_count; i++) {
		*w->targets[i] += w->counts[i];
		w->counts[i] = 0;
	}
}

void sim_shadow_worker_free(sim_shadow_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->stop, true);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	for (uint32_t i = 0; i < w->channel_count; i++) {
		w->channels[i].shadow->log = w->channels[i].own_log;   /* freed with the shadow */
		w->channels[i].shadow->worker = NULL;
		free(w->channels[i].ring);
	}
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->room);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* ---- The tables' updates, made here or on the worker ---- */

void sim_table_code(sim *s, uint64_t address, uint64_t l1_misses, uint64_t last_level_misses,
                    uint64_t coherence_misses, uint64_t invalidations)
{
	sim_code_stats *c = sim_table_insert(&s->code, address, NULL);
	c->address = address;
	c->l1_misses += l1_misses;
	c->last_level_misses += last_level_misses;
	c->coherence_misses += coherence_misses;
	c->invalidations_sent += invalidations;
}

void sim_table_note(sim *s, uint32_t op, uint64_t key, uint32_t bits, uint64_t amount)
{
	if (op == SIM_NOTE_CODE) {
		sim_table_code(s, key, (bits & SIM_NOTE_CODE_L1_MISS) != 0, (bits & SIM_NOTE_CODE_LAST_LEVEL) != 0,
		               (bits & SIM_NOTE_CODE_COHERENCE) != 0, amount);
		return;
	}
	bool created;
	sim_line_stats *l = sim_table_insert(&s->lines, key, &created);
	if (created)
		l->address = key << s->granule_bits;
	switch (op) {
	case SIM_NOTE_READ: l->reads++; l->cores |= 1ull << bits; break;
	case SIM_NOTE_WRITE: l->writes++; l->cores |= 1ull << bits; break;
	case SIM_NOTE_UPGRADE: l->upgrades++; l->writes++; l->cores |= 1ull << bits; break;
	case SIM_NOTE_INVALIDATIONS: l->invalidations += amount; break;
	case SIM_NOTE_TRANSFER: l->transfers++; break;
	case SIM_NOTE_TRUE: l->coherence_true++; break;
	case SIM_NOTE_FALSE: l->coherence_false++; break;
	default: break;
	}
}

/* ---- The shadows' side: the list brought up to date here, or handed over ---- */

void sim_shadow_sync(sim_shadow *s)
{
	if (s->worker)
		sim_shadow_worker_push(s->worker, s, s->logged, SIM_NO_TAG, NULL, NULL);
	else
		sim_shadow_catch_up(s, s->log, s->logged);
	s->logged = 0;
}

void sim_shadow_classify(sim_shadow *s, uint64_t line, uint64_t *if_present, uint64_t *if_absent)
{
	if (!s->worker) {
		bool present = sim_shadow_reference(s, line);
		if (if_present)
			(*(present ? if_present : if_absent))++;
		return;
	}
	if (line == s->last) {
		if (if_present)
			sim_shadow_worker_push(s->worker, s, 0, SIM_NO_TAG, if_present, NULL);
		return;
	}
	sim_shadow_worker_push(s->worker, s, s->logged, line, if_present, if_absent);
	s->logged = 0;
	s->last = line;
}
