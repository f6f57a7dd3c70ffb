/* The fully associative LRU shadow that tells capacity from conflict misses
 * (Hill's 3C model): same number of lines as the real cache, no sets. */
#include <stdlib.h>
#include "sim/sim_internal.h"

#define NONE UINT32_MAX

int sim_shadow_init(sim_shadow *s, uint32_t capacity)
{
	s->line = malloc(capacity * sizeof *s->line);
	s->previous = malloc(capacity * sizeof *s->previous);
	s->next = malloc(capacity * sizeof *s->next);
	uint32_t hints = 16;
	while (hints < 2 * capacity && hints < 4096)
		hints *= 2;
	s->hint = malloc(hints * sizeof *s->hint);
	s->hint_mask = hints - 1;
	if (s->hint)
		for (uint32_t i = 0; i < hints; i++)
			s->hint[i] = NONE;
	if (!s->line || !s->previous || !s->next || !s->hint ||
	    sim_table_init(&s->index, sizeof(uint32_t), capacity) != 0) {
		sim_shadow_free(s);
		return -1;
	}
	s->head = s->tail = NONE;
	s->used = 0;
	s->capacity = capacity;
	return 0;
}

void sim_shadow_free(sim_shadow *s)
{
	free(s->line);
	free(s->previous);
	free(s->next);
	free(s->hint);
	s->hint = NULL;
	s->line = NULL;
	s->previous = s->next = NULL;
	sim_table_free(&s->index);
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

bool sim_shadow_reference(sim_shadow *s, uint64_t line)
{
	/* the most recent line again (most references): already at the front */
	if (s->head != NONE && s->line[s->head] == line)
		return true;
	/* the node a recent reference of the line had: valid when it still
	 * holds the line (a node's line is always its current one) */
	uint32_t *hint = &s->hint[line & s->hint_mask];
	uint32_t hinted = *hint;
	uint32_t *node = hinted < s->used && s->line[hinted] == line ? hint : sim_table_find(&s->index, line);
	if (node) {
		uint32_t n = *node;
		*hint = n;
		if (s->head != n) {
			shadow_unlink(s, n);
			shadow_push_front(s, n);
		}
		return true;
	}
	uint32_t n;
	if (s->used < s->capacity) {
		n = s->used++;
	} else {
		n = s->tail;
		shadow_unlink(s, n);
		sim_table_remove(&s->index, s->line[n]);
	}
	s->line[n] = line;
	*(uint32_t *)sim_table_insert(&s->index, line, NULL) = n;
	*hint = n;
	shadow_push_front(s, n);
	return false;
}
