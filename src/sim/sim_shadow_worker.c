/* The L1 shadows' catch-ups on a thread of their own.
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
 * One producer, one consumer: a ring of items and a ring of logged lines,
 * each with a head the producer advances and a tail the consumer advances.
 * Either side that finds nothing to do (or no room) sleeps on a condition
 * variable after saying so, and the other side wakes it only then. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_internal.h"

#define ITEMS (1u << 14)
#define NO_COUNTER UINT32_MAX
#define LINES (1u << 18)

typedef struct shadow_item {
	sim_shadow *shadow;
	uint64_t line;            /* SIM_NO_TAG: only the lines before it */
	uint32_t if_present, if_absent;   /* the counters the line's answer decides (indices), or NONE */
	uint32_t lines;           /* logged lines before the reference, in the line ring */
} shadow_item;

struct sim_shadow_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;      /* the consumer waits here for items */
	pthread_cond_t room;      /* the producer waits here for room or for the end */
	shadow_item items[ITEMS];
	uint64_t lines[LINES];
	_Atomic uint64_t item_head, item_tail, line_head, line_tail;
	_Atomic bool consumer_asleep, producer_asleep, stop;
	uint64_t scratch[SIM_SHADOW_LOG_CAPACITY];
	/* The answers, counted here and added to the statistics when they are
	 * read (settle): the statistics' lines are the simulator's, which writes
	 * their other fields all the time. */
	uint64_t *targets[SIM_SHADOW_WORKER_COUNTERS];
	uint64_t counts[SIM_SHADOW_WORKER_COUNTERS];
	uint32_t target_count;
};

/* A sleeping consumer is woken for a batch, not for every item: a wake-up
 * is a system call on each side, as dear as a few hundred catch-ups. */
#define WAKE_ITEMS 512u

static void wake_consumer(sim_shadow_worker *w)
{
	if (atomic_load(&w->consumer_asleep)) {
		pthread_mutex_lock(&w->lock);
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->lock);
	}
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
	uint64_t line_tail = atomic_load_explicit(&w->line_tail, memory_order_relaxed);
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
			for (uint32_t i = 0; i < item->lines; i++)
				w->scratch[i] = w->lines[(line_tail + i) & (LINES - 1)];
			line_tail += item->lines;
			if (item->lines)
				sim_shadow_catch_up(item->shadow, w->scratch, item->lines);
			if (item->line != SIM_NO_TAG) {
				bool present = sim_shadow_reference_listed(item->shadow, item->line);
				if (item->if_present != NO_COUNTER)
					w->counts[present ? item->if_present : item->if_absent]++;
			} else if (item->if_present != NO_COUNTER) {
				w->counts[item->if_present]++;   /* an answer known already (the line referenced last) */
			}
			atomic_store_explicit(&w->line_tail, line_tail, memory_order_release);
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
	sim_shadow_worker *w = calloc(1, sizeof *w);
	if (!w)
		return -1;
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

/* Waits until the consumer has taken everything up to item `until` (and
 * the lines before it). */
static void wait_for(sim_shadow_worker *w, uint64_t until_item, uint64_t until_line)
{
	if (atomic_load_explicit(&w->item_tail, memory_order_acquire) >= until_item &&
	    atomic_load_explicit(&w->line_tail, memory_order_acquire) >= until_line)
		return;
	wake_consumer(w);   /* it may sleep on fewer items than a batch */
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->producer_asleep, true);
	while (atomic_load(&w->item_tail) < until_item || atomic_load(&w->line_tail) < until_line)
		pthread_cond_wait(&w->room, &w->lock);
	atomic_store(&w->producer_asleep, false);
	pthread_mutex_unlock(&w->lock);
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
		abort();   /* more than the L1s of SIM_MAX_CORES cores: never */
	w->targets[w->target_count] = target;
	return w->target_count++;
}

void sim_shadow_worker_push(sim_shadow_worker *w, sim_shadow *shadow, const uint64_t *log, uint32_t lines,
                            uint64_t line, uint64_t *if_present, uint64_t *if_absent)
{
	uint64_t head = atomic_load_explicit(&w->item_head, memory_order_relaxed);
	uint64_t line_head = atomic_load_explicit(&w->line_head, memory_order_relaxed);
	/* room for one more item and for its lines */
	if (head - atomic_load_explicit(&w->item_tail, memory_order_acquire) >= ITEMS ||
	    line_head + lines - atomic_load_explicit(&w->line_tail, memory_order_acquire) > LINES)
		wait_for(w, head >= ITEMS ? head + 1 - ITEMS : 0, line_head + lines > LINES ? line_head + lines - LINES : 0);
	for (uint32_t i = 0; i < lines; i++)
		w->lines[(line_head + i) & (LINES - 1)] = log[i];
	w->items[head & (ITEMS - 1)] =
		(shadow_item){ shadow, line, counter_index(w, if_present), counter_index(w, if_absent), lines };
	atomic_store_explicit(&w->line_head, line_head + lines, memory_order_release);
	atomic_store(&w->item_head, head + 1);
	if (head + 1 - atomic_load_explicit(&w->item_tail, memory_order_relaxed) >= WAKE_ITEMS ||
	    line_head + lines - atomic_load_explicit(&w->line_tail, memory_order_relaxed) >= LINES / 4)
		wake_consumer(w);
}

void sim_shadow_worker_settle(sim_shadow_worker *w)
{
	if (!w)
		return;
	wait_for(w, atomic_load(&w->item_head), atomic_load(&w->line_head));
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
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->room);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* ---- The shadows' side: the list brought up to date here, or handed over ---- */

void sim_shadow_sync(sim_shadow *s)
{
	if (s->worker)
		sim_shadow_worker_push(s->worker, s, s->log, s->logged, SIM_NO_TAG, NULL, NULL);
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
			sim_shadow_worker_push(s->worker, s, NULL, 0, SIM_NO_TAG, if_present, NULL);
		return;
	}
	sim_shadow_worker_push(s->worker, s, s->log, s->logged, line, if_present, if_absent);
	s->logged = 0;
	s->last = line;
}
