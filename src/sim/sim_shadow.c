/* The fully associative LRU shadow that tells capacity from conflict misses
 * (Hill's 3C model): same number of lines as the real cache, no sets.
 *
 * Its answer is wanted only when the real cache misses, yet it must see
 * every reference in order, and most references hit.  So a hit (a touch,
 * sim_shadow_touch) only appends its line to a log, unless it is the line
 * logged last; the recency list is brought up to date when an answer is
 * wanted (sim_shadow_reference) or the log is full: read from its end, the
 * log gives the lines touched since, most recent first (a line's first
 * appearance from the end is its last touch), and they go to the front of
 * the list in that order, which is then cut back to the capacity.  That is
 * the list an LRU updated at every reference holds: every line touched
 * since the last update is more recent than every other line, and among
 * themselves they are in the order of their last touches.  A hit costs a
 * compare and a store in the simulator's loop, and the lookups of a run of
 * touches are made together, one list move per line. */
#include <stdlib.h>
#include <string.h>
#include "sim/sim_shadow.h"

#define NONE UINT32_MAX
#define UNLISTED (UINT32_MAX - 1)   /* previous[] of a node made for a logged line, not yet in the list */
#define LOG_CAPACITY SIM_SHADOW_LOG_CAPACITY

int sim_shadow_init(sim_shadow *s, uint32_t capacity)
{
	memset(s, 0, sizeof *s);
	/* the list, and as many lines again made while it is brought up to date */
	s->pool = 2 * capacity;
	/* one more: node pool is the list's sentinel (its next the most
	 * recent line, its previous the least), so that a move has no branch */
	s->node = calloc(s->pool + 1, sizeof *s->node);
	s->free_nodes = malloc(s->pool * sizeof *s->free_nodes);
	s->order = malloc(capacity * sizeof *s->order);
	s->log_capacity = LOG_CAPACITY;
	s->log = malloc(s->log_capacity * sizeof *s->log);
	uint32_t hints = 16;
	while (hints < 2 * capacity && hints < 4096)
		hints *= 2;
	s->hint = malloc(hints * sizeof *s->hint);
	s->hint_node = malloc(hints * sizeof *s->hint_node);
	s->hint_mask = hints - 1;
	if (s->hint)
		for (uint32_t i = 0; i < hints; i++)
			s->hint[i] = (sim_shadow_hint){ SIM_NO_TAG, 0 };
	if (!s->node || !s->free_nodes || !s->order || !s->log || !s->hint ||
	    !s->hint_node ||
	    sim_table_init(&s->index, sizeof(uint32_t), capacity) != 0) {
		sim_shadow_free(s);
		return -1;
	}
	s->node[s->pool].previous = s->node[s->pool].next = s->pool;
	s->capacity = capacity;
	s->last = SIM_NO_TAG;
	return 0;
}

void sim_shadow_free(sim_shadow *s)
{
	free(s->node);
	free(s->free_nodes);
	free(s->order);
	free(s->log);
	free(s->hint);
	free(s->hint_node);
	sim_table_free(&s->index);
	memset(s, 0, sizeof *s);
}

static inline void shadow_unlink(sim_shadow *s, uint32_t n)
{
	uint32_t before = s->node[n].previous, after = s->node[n].next;
	s->node[before].next = after;
	s->node[after].previous = before;
}

static inline void shadow_push_front(sim_shadow *s, uint32_t n)
{
	uint32_t sentinel = s->pool, head = s->node[sentinel].next;
	s->node[n].previous = sentinel;
	s->node[n].next = head;
	s->node[head].previous = n;
	s->node[sentinel].next = n;
}

/* The node of line, or NONE; the hint remembers it. */
static inline uint32_t shadow_find(sim_shadow *s, uint64_t line)
{
	uint32_t h = (uint32_t)line & s->hint_mask;
	if (s->hint[h].line == line)
		return s->hint_node[h];
	uint32_t *found = sim_table_find(&s->index, line);
	if (!found)
		return NONE;
	s->hint[h] = (sim_shadow_hint){ line, s->node[*found].mark };
	s->hint_node[h] = *found;
	return *found;
}

/* A free node for line, indexed, not in the list. */
static uint32_t shadow_new_node(sim_shadow *s, uint64_t line)
{
	uint32_t n = s->free_count ? s->free_nodes[--s->free_count] : s->allocated++;
	s->node[n].line = line;
	s->node[n].mark = 0;
	s->node[n].previous = s->node[n].next = UNLISTED;
	*(uint32_t *)sim_table_insert(&s->index, line, NULL) = n;
	uint32_t h = (uint32_t)line & s->hint_mask;
	s->hint[h] = (sim_shadow_hint){ line, 0 };
	s->hint_node[h] = n;
	return n;
}

static void shadow_release(sim_shadow *s, uint32_t n)
{
	uint64_t line = s->node[n].line;
	sim_table_remove(&s->index, line);
	s->node[n].line = SIM_NO_TAG;
	if (s->hint[(uint32_t)line & s->hint_mask].line == line)
		s->hint[(uint32_t)line & s->hint_mask].line = SIM_NO_TAG;   /* no hint finds it */
	s->free_nodes[s->free_count++] = n;
}

/* The least recent line leaves. */
static void shadow_evict_tail(sim_shadow *s)
{
	uint32_t t = s->node[s->pool].previous;
	shadow_unlink(s, t);
	shadow_release(s, t);
	s->listed--;
}

void sim_shadow_catch_up(sim_shadow *s, const uint64_t *log, uint32_t logged)
{
	uint64_t epoch = ++s->syncs;
	uint32_t k = 0;
	/* the logged lines, most recent first, each once: a line seen already
	 * in this update is told by its hint (its mark beside its line), else
	 * by its node's mark */
	sim_shadow_hint *hint = s->hint;
	const uint32_t hint_mask = s->hint_mask, capacity = s->capacity;
	uint32_t *order = s->order;
	for (uint32_t i = logged; i-- > 0;) {
		uint64_t line = log[i];
		sim_shadow_hint *h = &hint[(uint32_t)line & hint_mask];
		uint32_t n;
		if (h->line == line) {
			if (h->mark == epoch)
				continue;
			n = s->hint_node[h - hint];
		} else {
			uint32_t *found = sim_table_find(&s->index, line);
			n = found ? *found : shadow_new_node(s, line);
			h->line = line;
			s->hint_node[h - hint] = n;
			if (s->node[n].mark == epoch) {
				h->mark = epoch;
				continue;
			}
		}
		h->mark = epoch;
		s->node[n].mark = epoch;
		order[k++] = n;
		if (k == capacity)
			break;   /* the older ones and the whole list fall beyond the capacity */
	}
	if (k == s->capacity) {
		for (uint32_t n = s->node[s->pool].next; n != s->pool;) {
			uint32_t after = s->node[n].next;
			if (s->node[n].mark != epoch)
				shadow_release(s, n);
			n = after;
		}
		s->node[s->pool].previous = s->node[s->pool].next = s->pool;
		for (uint32_t j = k; j-- > 0;)
			shadow_push_front(s, s->order[j]);
		s->listed = k;
		return;
	}
	for (uint32_t j = k; j-- > 0;) {
		uint32_t n = s->order[j];
		if (s->node[n].previous == UNLISTED) {
			s->listed++;
		} else {
			if (s->node[s->pool].next == n)
				continue;
			shadow_unlink(s, n);
		}
		shadow_push_front(s, n);
	}
	while (s->listed > s->capacity)
		shadow_evict_tail(s);
}

bool sim_shadow_reference(sim_shadow *s, uint64_t line)
{
	/* the most recent line again: at the front, or about to be */
	if (line == s->last)
		return true;
	if (s->logged) {
		sim_shadow_catch_up(s, s->log, s->logged);
		s->logged = 0;
	}
	s->last = line;
	return sim_shadow_reference_listed(s, line);
}

bool sim_shadow_reference_listed(sim_shadow *s, uint64_t line)
{
	uint32_t n = shadow_find(s, line);
	bool present = n != NONE;
	if (present) {
		if (s->node[s->pool].next != n) {
			shadow_unlink(s, n);
			shadow_push_front(s, n);
		}
	} else {
		if (s->listed == s->capacity)
			shadow_evict_tail(s);
		n = shadow_new_node(s, line);
		shadow_push_front(s, n);
		s->listed++;
	}
	return present;
}
