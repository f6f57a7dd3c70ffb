/* The fully associative LRU shadow that tells capacity from conflict misses
 * (Hill's 3C model): same number of lines as the real cache, no sets.
 *
 * Its answer is wanted only when the real cache misses, yet it must see
 * every reference in order, and most references hit.  So a hit (a touch)
 * only stamps the line's node with the clock and, the first time since the
 * last answer, notes the node as touched; the recency list is brought up to
 * date when an answer is wanted (sim_shadow_reference): the nodes touched
 * since, sorted by their stamps, go to the front in that order and the
 * list is cut back to the capacity.  That is the list an eager LRU would
 * hold: every line touched since the last answer is more recent than every
 * other line, and among themselves they are in the order of their last
 * touches.  A run of touches of a few lines (a loop's stack and arrays)
 * costs one move per line per answer instead of one per reference. */
#include <stdlib.h>
#include "sim/sim_internal.h"

#define NONE UINT32_MAX
#define UNLISTED (UINT32_MAX - 1)   /* previous[] of a node touched but not yet in the list */
/* Nodes touched between answers: beyond this many an answer's work is
 * done early (it is the same whenever it is done). */
#define DIRTY_MAX 1024u

int sim_shadow_init(sim_shadow *s, uint32_t capacity)
{
	memset(s, 0, sizeof *s);
	s->dirty_capacity = capacity < DIRTY_MAX ? capacity : DIRTY_MAX;
	s->pool = capacity + s->dirty_capacity;
	s->node = malloc(s->pool * sizeof *s->node);
	s->previous = malloc(s->pool * sizeof *s->previous);
	s->next = malloc(s->pool * sizeof *s->next);
	s->free_nodes = malloc(s->pool * sizeof *s->free_nodes);
	s->dirty = malloc(s->dirty_capacity * sizeof *s->dirty);
	s->order = malloc(s->dirty_capacity * sizeof *s->order);
	uint32_t hints = 16;
	while (hints < 2 * capacity && hints < 4096)
		hints *= 2;
	s->hint = malloc(hints * sizeof *s->hint);
	s->hint_mask = hints - 1;
	if (s->hint)
		for (uint32_t i = 0; i < hints; i++)
			s->hint[i] = NONE;
	if (!s->node || !s->previous || !s->next || !s->free_nodes || !s->dirty || !s->order || !s->hint ||
	    sim_table_init(&s->index, sizeof(uint32_t), capacity) != 0) {
		sim_shadow_free(s);
		return -1;
	}
	s->head = s->tail = NONE;
	s->capacity = capacity;
	s->last = SIM_NO_TAG;
	return 0;
}

void sim_shadow_free(sim_shadow *s)
{
	free(s->node);
	free(s->previous);
	free(s->next);
	free(s->free_nodes);
	free(s->dirty);
	free(s->order);
	free(s->hint);
	sim_table_free(&s->index);
	memset(s, 0, sizeof *s);
}

static void shadow_unlink(sim_shadow *s, uint32_t n)
{
	if (s->previous[n] != NONE)
		s->next[s->previous[n]] = s->next[n];
	else
		s->head = s->next[n];
	if (s->next[n] != NONE)
		s->previous[s->next[n]] = s->previous[n];
	else
		s->tail = s->previous[n];
}

static void shadow_push_front(sim_shadow *s, uint32_t n)
{
	s->previous[n] = NONE;
	s->next[n] = s->head;
	if (s->head != NONE)
		s->previous[s->head] = n;
	s->head = n;
	if (s->tail == NONE)
		s->tail = n;
}

/* The node of line, or NONE; the hint remembers it. */
static inline uint32_t shadow_find(sim_shadow *s, uint64_t line)
{
	uint32_t *hint = &s->hint[line & s->hint_mask];
	uint32_t hinted = *hint;
	if (hinted < s->allocated && s->node[hinted].line == line)
		return hinted;
	uint32_t *found = sim_table_find(&s->index, line);
	if (!found)
		return NONE;
	*hint = *found;
	return *found;
}

/* A free node for line, indexed, not in the list. */
static uint32_t shadow_new_node(sim_shadow *s, uint64_t line)
{
	uint32_t n = s->free_count ? s->free_nodes[--s->free_count] : s->allocated++;
	s->node[n].line = line;
	s->node[n].stamp = 0;
	s->previous[n] = s->next[n] = UNLISTED;
	*(uint32_t *)sim_table_insert(&s->index, line, NULL) = n;
	s->hint[line & s->hint_mask] = n;
	return n;
}

/* The least recent line leaves. */
static void shadow_evict_tail(sim_shadow *s)
{
	uint32_t t = s->tail;
	shadow_unlink(s, t);
	sim_table_remove(&s->index, s->node[t].line);
	s->node[t].line = SIM_NO_TAG;   /* no hint finds it */
	s->free_nodes[s->free_count++] = t;
	s->listed--;
}

static int by_stamp(const void *a, const void *b)
{
	uint64_t x = ((const sim_shadow_order *)a)->stamp, y = ((const sim_shadow_order *)b)->stamp;
	return x < y ? -1 : x > y;
}

/* Brings the list up to date: the touched nodes to the front, oldest
 * touch first, then the list cut back to the capacity. */
static void shadow_sync(sim_shadow *s)
{
	uint32_t d = s->dirty_count;
	sim_shadow_order *order = s->order;
	for (uint32_t i = 0; i < d; i++)
		order[i] = (sim_shadow_order){ s->node[s->dirty[i]].stamp, s->dirty[i] };
	if (d > 24) {
		qsort(order, d, sizeof *order, by_stamp);
	} else {
		for (uint32_t i = 1; i < d; i++) {
			sim_shadow_order x = order[i];
			uint32_t j = i;
			for (; j > 0 && order[j - 1].stamp > x.stamp; j--)
				order[j] = order[j - 1];
			order[j] = x;
		}
	}
	for (uint32_t i = 0; i < d; i++) {
		uint32_t n = order[i].node;
		if (s->previous[n] == UNLISTED) {
			s->listed++;
		} else {
			if (s->head == n)
				continue;
			shadow_unlink(s, n);
		}
		shadow_push_front(s, n);
	}
	while (s->listed > s->capacity)
		shadow_evict_tail(s);
	s->dirty_count = 0;
	s->synced = s->clock;
}

void sim_shadow_touch_slow(sim_shadow *s, uint64_t line)
{
	s->last = line;
	/* room for one more touched node (before the lookup: bringing the
	 * list up to date may drop nodes) */
	if (s->dirty_count == s->dirty_capacity)
		shadow_sync(s);
	uint32_t n = shadow_find(s, line);
	if (n == NONE)
		n = shadow_new_node(s, line);
	if (s->node[n].stamp <= s->synced)
		s->dirty[s->dirty_count++] = n;
	s->node[n].stamp = ++s->clock;
}

bool sim_shadow_reference(sim_shadow *s, uint64_t line)
{
	/* the most recent line again: at the front, or about to be */
	if (line == s->last)
		return true;
	s->last = line;
	if (s->dirty_count)
		shadow_sync(s);
	uint32_t n = shadow_find(s, line);
	bool present = n != NONE;
	if (present) {
		if (s->head != n) {
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
	s->node[n].stamp = ++s->clock;
	s->synced = s->clock;
	return present;
}
