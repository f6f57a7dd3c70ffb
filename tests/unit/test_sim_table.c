/* The simulator's hash table.  Callers keep a value's pointer across a
 * second insert of the same key (fetch_shared keeps its line's statistics
 * while invalidate_others counts the line's invalidations into them), so an
 * insert that finds its key must not grow the table and move the values. */
#include <criterion/criterion.h>
#include "sim/sim_shadow.h"

Test(sim_table, inserting_a_present_key_moves_no_value)
{
	sim_table t;
	cr_assert_eq(sim_table_init(&t, sizeof(uint64_t), 4), 0);
	/* fill to exactly half: the next new key would grow the table */
	uint64_t key = 1000;
	while (t.count * 2 < t.capacity)
		*(uint64_t *)sim_table_insert(&t, key++, NULL) = 7;
	size_t capacity = t.capacity;
	uint64_t *value = sim_table_find(&t, 1000);
	cr_assert_not_null(value);
	bool created = true;
	uint64_t *again = sim_table_insert(&t, 1000, &created);
	cr_assert(!created);
	cr_assert_eq(t.capacity, capacity, "an insert of a present key grew the table");
	cr_assert_eq(again, value);
	/* a new key grows it, and every value is kept */
	uint64_t *fresh = sim_table_insert(&t, key, &created);
	cr_assert(created);
	cr_assert_eq(*fresh, 0);
	cr_assert_gt(t.capacity, capacity);
	for (uint64_t k = 1000; k < key; k++) {
		uint64_t *v = sim_table_find(&t, k);
		cr_assert_not_null(v);
		cr_assert_eq(*v, 7);
	}
	sim_table_free(&t);
}
