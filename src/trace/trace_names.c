/* The names of region markers a reader hands out (trace.h): interned once
 * each, so a name repeated by a million markers costs one copy, and a
 * record's pointer to it stays valid until the reader is closed. */
#include <stdlib.h>
#include <string.h>
#include "trace/trace_internal.h"

static bool same(const char *interned, const char *name, size_t length)
{
	return strncmp(interned, name, length) == 0 && interned[length] == 0;
}

const char *trace_names_intern(trace_names *table, const char *name, size_t length)
{
	if (table->last < table->count && same(table->names[table->last], name, length))
		return table->names[table->last];
	for (size_t i = 0; i < table->count; i++)
		if (same(table->names[i], name, length)) {
			table->last = i;
			return table->names[i];
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
	return copy;
}

void trace_names_free(trace_names *table)
{
	for (size_t i = 0; i < table->count; i++)
		free(table->names[i]);
	free(table->names);
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
