/* The simulator's sets of numbers: an open-addressing hash table of uint64
 * keys (sim_table.c) and a set of line numbers as bitmaps in one (sim_lineset). */
#ifndef PLUMB_SIM_TABLE_H
#define PLUMB_SIM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The empty key, and an invalid tag of a cache way. */
#define SIM_NO_TAG UINT64_MAX

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

#endif
