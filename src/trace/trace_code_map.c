/* Source names of code addresses: the file plumbgrind writes with
 * --plumb-code (vg/pg_debuginfo.c; docs/valgrind-tool.md), read into one
 * sorted array of address ranges with interned names, and the executable
 * file segments the code ran from (version 2). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/output.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

typedef struct code_range {
	uint64_t start, end;              /* inclusive */
	uint32_t line;
	const char *file, *function;      /* interned in names */
} code_range;

static int code_error(plumb_status *status, const char *path, unsigned long line, const char *what);

struct trace_code_map {
	code_range *ranges;
	size_t count, capacity;
	trace_code_segment *segments;
	size_t segment_count, segment_capacity;
	trace_names names;
};

/* "segment START END OFFSET<tab>PATH" (version 2): 1 read, 0 not such a
 * line, -1 bad or out of memory (status says which). */
static int read_segment(trace_code_map *map, const char *text, const char *path, unsigned long number,
                        plumb_status *status)
{
	if (strncmp(text, "segment ", 8) != 0)
		return 0;
	unsigned long long start, end, offset;
	int used = 0;
	const char *tab = strchr(text, '\t');
	if (sscanf(text + 8, "%llx %llx %llx%n", &start, &end, &offset, &used) != 3 || !tab || tab != text + 8 + used ||
	    end < start || tab[1] != '/')
		return code_error(status, path, number, "not 'segment START END OFFSET<tab>/PATH'");
	if (map->segment_count == map->segment_capacity) {
		size_t grown = map->segment_capacity ? 2 * map->segment_capacity : 16;
		trace_code_segment *segments = realloc(map->segments, grown * sizeof *segments);
		if (!segments)
			return plumb_fail(status, ENOMEM, "out of memory for a code map");
		map->segments = segments;
		map->segment_capacity = grown;
	}
	const char *name = trace_names_intern(&map->names, tab + 1, strlen(tab + 1));
	if (!name)
		return plumb_fail(status, ENOMEM, "out of memory for a code map");
	map->segments[map->segment_count++] = (trace_code_segment){ start, end, offset, name };
	return 1;
}

static int compare_ranges(const void *a, const void *b)
{
	const code_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int code_error(plumb_status *status, const char *path, unsigned long line, const char *what)
{
	return plumb_fail(status, EINVAL, "%s: line %lu: %s", path, line, what);
}

int trace_code_map_load(trace_code_map **out, const char *path, plumb_status *status)
{
	*out = NULL;
	FILE *f = fopen(path, "r");
	if (!f)
		return plumb_fail_errno(status, errno, "cannot read the code map %s", path);
	trace_code_map *map = calloc(1, sizeof *map);
	/* A line of fixed most length, not getline's: a file of one endless
	 * line (/dev/zero) would otherwise grow plumb without bound. */
	enum { LINE_MAX_BYTES = 65536 };
	char *text = malloc(LINE_MAX_BYTES + 2);
	size_t length;
	unsigned long number = 0;
	bool ended = false;
	int rc = 0, version = 0;
	if (!map || !text) {
		free(map);
		free(text);
		fclose(f);
		return plumb_fail(status, ENOMEM, "out of memory for a code map");
	}
	while (fgets(text, LINE_MAX_BYTES + 2, f)) {
		number++;
		length = strlen(text);
		if (length && text[length - 1] == '\n')
			text[--length] = 0;
		else if (length > LINE_MAX_BYTES || (length && !feof(f))) {
			rc = code_error(status, path, number, "a line longer than 64 KiB");
			break;
		}
		if (number == 1) {
			version = !strcmp(text, "plumbgrind-code 1") ? 1 : !strcmp(text, "plumbgrind-code 2") ? 2 : 0;
			if (!version) {
				rc = code_error(status, path, number, "not a plumbgrind code map (version 1 or 2)");
				break;
			}
			continue;
		}
		if (ended) {
			rc = code_error(status, path, number, "text after 'end'");
			break;
		}
		if (strcmp(text, "end") == 0) {
			ended = true;
			continue;
		}
		if (version >= 2) {
			int segment = read_segment(map, text, path, number, status);
			if (segment < 0) {
				rc = -1;
				break;
			}
			if (segment)
				continue;
		}
		unsigned long long start, end;
		unsigned line;
		int used = 0;
		char *tab = strchr(text, '\t');
		if (sscanf(text, "%llx %llx %u %n", &start, &end, &line, &used) != 3 || used == 0 || !tab ||
		    tab < text + used || end < start) {
			rc = code_error(status, path, number, "not 'START END LINE FILE<tab>FUNCTION'");
			break;
		}
		if (map->count == map->capacity) {
			size_t grown = map->capacity ? 2 * map->capacity : 1024;
			code_range *ranges = realloc(map->ranges, grown * sizeof *ranges);
			if (!ranges) {
				rc = plumb_fail(status, ENOMEM, "out of memory for a code map");
				break;
			}
			map->ranges = ranges;
			map->capacity = grown;
		}
		code_range *r = &map->ranges[map->count];
		r->start = start;
		r->end = end;
		r->line = line;
		r->file = trace_names_intern(&map->names, text + used, (size_t)(tab - (text + used)));
		r->function = trace_names_intern(&map->names, tab + 1, strlen(tab + 1));
		if (!r->file || !r->function) {
			rc = plumb_fail(status, ENOMEM, "out of memory for a code map");
			break;
		}
		map->count++;
	}
	free(text);
	fclose(f);
	if (rc == 0 && !ended)
		rc = plumb_fail(status, EINVAL, "%s: cut short (no 'end' line)", path);
	if (rc != 0) {
		trace_code_map_free(map);
		return -1;
	}
	if (map->count)   /* qsort may not take the NULL of a map of no ranges */
		qsort(map->ranges, map->count, sizeof *map->ranges, compare_ranges);
	*out = map;
	return 0;
}

int trace_code_map_lookup(const trace_code_map *map, uint64_t address, const char **function, const char **file,
                          uint32_t *line)
{
	if (!map || map->count == 0)
		return 0;
	size_t low = 0, high = map->count;   /* the last range starting at or before address */
	while (high - low > 1) {
		size_t middle = low + (high - low) / 2;
		if (map->ranges[middle].start <= address)
			low = middle;
		else
			high = middle;
	}
	const code_range *r = &map->ranges[low];
	if (address < r->start || address > r->end)
		return 0;
	*function = r->function;
	*file = r->file;
	*line = r->line;
	return 1;
}

int trace_code_map_function_start(const trace_code_map *map, const char *function, uint64_t *address)
{
	/* ranges are sorted by start: the first of the function's is its lowest */
	for (size_t i = 0; map && i < map->count; i++)
		if (!strcmp(map->ranges[i].function, function)) {
			*address = map->ranges[i].start;
			return 1;
		}
	return 0;
}

size_t trace_code_map_size(const trace_code_map *map)
{
	return map ? map->count : 0;
}

size_t trace_code_map_segments(const trace_code_map *map, const trace_code_segment **segments)
{
	*segments = map ? map->segments : NULL;
	return map ? map->segment_count : 0;
}

int trace_code_map_save(const trace_code_map *map, const char *path, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	fprintf(file.stream, "plumbgrind-code 2\n");
	for (size_t i = 0; map && i < map->segment_count; i++) {
		const trace_code_segment *g = &map->segments[i];
		fprintf(file.stream, "segment %" PRIx64 " %" PRIx64 " %" PRIx64 "\t%s\n", g->start, g->end, g->offset, g->path);
	}
	for (size_t i = 0; map && i < map->count; i++) {
		const code_range *r = &map->ranges[i];
		fprintf(file.stream, "%" PRIx64 " %" PRIx64 " %u %s\t%s\n", r->start, r->end, r->line, r->file, r->function);
	}
	fprintf(file.stream, "end\n");
	return output_file_commit(&file, status);
}

const char *trace_code_map_path_for(const char *trace_path, char *buffer, size_t size)
{
	int n = snprintf(buffer, size, "%s.code", trace_path);
	return n > 0 && (size_t)n < size ? buffer : NULL;
}

void trace_code_map_free(trace_code_map *map)
{
	if (!map)
		return;
	free(map->ranges);
	free(map->segments);
	trace_names_free(&map->names);
	free(map);
}
