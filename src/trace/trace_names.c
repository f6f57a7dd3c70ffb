/* The names of region markers a reader hands out (trace.h): interned once
 * each, so a name repeated by a million markers costs one copy, and a
 * record's pointer to it stays valid until the reader is closed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace_internal.h"

static bool same(const char *interned, const char *name, size_t length)
{
	return strncmp(interned, name, length) == 0 && interned[length] == 0;
}

/* FNV-1a: a code map interns tens of thousands of function and file
 * names, which a search of every name before (once the only way) made
 * quadratic: 18 s for 40,000 functions. */
static size_t hash(const char *name, size_t length)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < length; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 32));
}

/* The slot of name: where it is, or the empty slot where it would go. */
static size_t *slot_of(const trace_names *table, const char *name, size_t length)
{
	size_t i = hash(name, length) & table->slot_mask;
	while (table->slots[i] && !same(table->names[table->slots[i] - 1], name, length))
		i = (i + 1) & table->slot_mask;
	return &table->slots[i];
}

/* Room for one more name: the slots at least twice the names. */
static bool grow_slots(trace_names *table)
{
	if (table->slots && 2 * (table->count + 1) <= table->slot_mask + 1)
		return true;
	size_t count = table->slots ? 2 * (table->slot_mask + 1) : 64;
	size_t *slots = calloc(count, sizeof *slots);
	if (!slots)
		return false;
	free(table->slots);
	table->slots = slots;
	table->slot_mask = count - 1;
	for (size_t i = 0; i < table->count; i++)
		*slot_of(table, table->names[i], strlen(table->names[i])) = i + 1;
	return true;
}

const char *trace_names_intern(trace_names *table, const char *name, size_t length)
{
	/* a name is a C string: a NUL ends it (the readers refuse one in a
	 * region name; a code map's text could hold one) */
	length = strnlen(name, length);
	if (table->last < table->count && same(table->names[table->last], name, length))
		return table->names[table->last];
	if (!grow_slots(table))
		return NULL;
	size_t *slot = slot_of(table, name, length);
	if (*slot) {
		table->last = *slot - 1;
		return table->names[table->last];
	}
	if (table->count == table->capacity) {
		size_t capacity = table->capacity ? 2 * table->capacity : 16;
		char **names = realloc(table->names, capacity * sizeof *names);
		if (!names)
			return NULL;
		table->names = names;
		table->capacity = capacity;
	}
	char *copy = malloc(length + 1);
	if (!copy)
		return NULL;
	memcpy(copy, name, length);
	copy[length] = 0;
	table->last = table->count;
	table->names[table->count++] = copy;
	*slot = table->count;
	return copy;
}

void trace_names_free(trace_names *table)
{
	for (size_t i = 0; i < table->count; i++)
		free(table->names[i]);
	free(table->names);
	free(table->slots);
	memset(table, 0, sizeof *table);
}

const char *trace_region_name_problem(const char *name, size_t length)
{
	if (length == 0)
		return "an empty region name";
	if (length > TRACE_REGION_NAME_MAX)
		return "a region name longer than 255 bytes";
	for (size_t i = 0; i < length; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return "a control character in a region name";
	return NULL;
}
