/* The simulator's hash table: linear probing keyed by line address.  Used
 * off the hit path only (directory, classification, hot lines), so a simple
 * multiplicative hash is enough; line addresses are dense and sequential. */
#include <stdlib.h>
#include <string.h>
#include "sim/sim_table.h"

static inline size_t table_slot(const sim_table *t, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (t->capacity - 1);
}

int sim_table_init(sim_table *t, size_t value_size, size_t initial)
{
	size_t capacity = 16;
	while (capacity < initial * 2)
		capacity *= 2;
	t->keys = malloc(capacity * sizeof *t->keys);
	t->values = calloc(capacity, value_size ? value_size : 1);
	if (!t->keys || !t->values) {
		free(t->keys);
		free(t->values);
		t->keys = NULL;
		t->values = NULL;
		return -1;
	}
	memset(t->keys, 0xff, capacity * sizeof *t->keys);
	t->value_size = value_size;
	t->capacity = capacity;
	t->count = 0;
	return 0;
}

void sim_table_free(sim_table *t)
{
	free(t->keys);
	free(t->values);
	t->keys = NULL;
	t->values = NULL;
	t->capacity = t->count = 0;
}

void sim_table_clear(sim_table *t)
{
	if (!t->keys)
		return;
	memset(t->keys, 0xff, t->capacity * sizeof *t->keys);
	memset(t->values, 0, t->capacity * t->value_size);
	t->count = 0;
}

void *sim_table_find(const sim_table *t, uint64_t key)
{
	if (!t->keys || t->count == 0)
		return NULL;
	size_t mask = t->capacity - 1;
	size_t home = table_slot(t, key);
	/* keys and values are apart: load the value's line while the key's is
	 * fetched (both miss the host's caches in a big directory) */
	__builtin_prefetch(t->values + home * t->value_size);
	for (size_t i = home;; i = (i + 1) & mask) {
		if (t->keys[i] == key)
			return t->values + i * t->value_size;
		if (t->keys[i] == SIM_NO_TAG)
			return NULL;
	}
}

static int table_grow(sim_table *t)
{
	sim_table bigger;
	if (sim_table_init(&bigger, t->value_size, t->capacity) != 0)
		return -1;
	for (size_t i = 0; i < t->capacity; i++) {
		if (t->keys[i] == SIM_NO_TAG)
			continue;
		size_t mask = bigger.capacity - 1, j = table_slot(&bigger, t->keys[i]);
		while (bigger.keys[j] != SIM_NO_TAG)
			j = (j + 1) & mask;
		bigger.keys[j] = t->keys[i];
		memcpy(bigger.values + j * t->value_size, t->values + i * t->value_size, t->value_size);
		bigger.count++;
	}
	sim_table_free(t);
	*t = bigger;
	return 0;
}

void *sim_table_insert(sim_table *t, uint64_t key, bool *created)
{
	if (created)
		*created = false;
	if (!t->keys && table_grow(t) != 0)   /* a table never made (all zero) */
		abort();
	size_t mask = t->capacity - 1;
	size_t i = table_slot(t, key);
	__builtin_prefetch(t->values + i * t->value_size, 1);   /* as in sim_table_find */
	for (;; i = (i + 1) & mask) {
		if (t->keys[i] == key)
			return t->values + i * t->value_size;
		if (t->keys[i] == SIM_NO_TAG)
			break;
	}
	/* grown only for a new key: a pointer to a present key's value stays
	 * good through an insert that finds it */
	if ((t->count + 1) * 2 > t->capacity) {
		if (table_grow(t) != 0)
			abort();   /* out of memory in a table bounded by the footprint */
		mask = t->capacity - 1;
		for (i = table_slot(t, key); t->keys[i] != SIM_NO_TAG; i = (i + 1) & mask)
			;
	}
	t->keys[i] = key;
	memset(t->values + i * t->value_size, 0, t->value_size);
	t->count++;
	if (created)
		*created = true;
	return t->values + i * t->value_size;
}

bool sim_table_remove(sim_table *t, uint64_t key)
{
	if (!t->keys)
		return false;
	size_t mask = t->capacity - 1;
	size_t i = table_slot(t, key);
	for (;; i = (i + 1) & mask) {
		if (t->keys[i] == SIM_NO_TAG)
			return false;
		if (t->keys[i] == key)
			break;
	}
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; t->keys[j] != SIM_NO_TAG; j = (j + 1) & mask) {
		size_t home = table_slot(t, t->keys[j]);
		bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
		if (movable) {
			t->keys[hole] = t->keys[j];
			memcpy(t->values + hole * t->value_size, t->values + j * t->value_size, t->value_size);
			hole = j;
		}
	}
	t->keys[hole] = SIM_NO_TAG;
	memset(t->values + hole * t->value_size, 0, t->value_size);
	t->count--;
	return true;
}

int sim_lineset_init(sim_lineset *l, size_t lines)
{
	l->last_block = 0;
	l->last_bits = NULL;
	return sim_table_init(&l->blocks, sizeof(uint64_t) << (SIM_LINESET_SHIFT - 6), 1 + (lines >> SIM_LINESET_SHIFT));
}

void sim_lineset_free(sim_lineset *l)
{
	sim_table_free(&l->blocks);
	l->last_bits = NULL;
}
