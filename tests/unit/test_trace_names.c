/* Interned names (region markers, a code map's files and functions): one
 * copy per name, found again by a hash.  A code map of a large program
 * interns tens of thousands of names; the search of every name before
 * took 18 s for 40,000 functions (docs/PERFORMANCE.md, "Traces"). */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "../temp_folder.h"

/* Enough names that the old search of every name (quadratic) takes minutes
 * and runs into the timeout, where the hash takes a fraction of a second
 * (a ratio of several hundred: no absolute time is asserted). */
#define NAMES 300000

/* Each name interned twice, in two different orders: the same copy both
 * times, a different copy for every other name, a prefix its own name. */
Test(trace_names, every_name_is_one_copy, .timeout = 60)
{
	trace_names table;
	memset(&table, 0, sizeof table);
	const char **first = calloc(NAMES, sizeof *first);
	cr_assert_not_null(first);
	char name[64];
	for (int i = 0; i < NAMES; i++) {
		int length = snprintf(name, sizeof name, "function_%d", i);
		first[i] = trace_names_intern(&table, name, (size_t)length);
		cr_assert_not_null(first[i]);
		cr_assert_str_eq(first[i], name);
	}
	cr_assert_eq(table.count, NAMES);
	for (int i = NAMES - 1; i >= 0; i--) {
		int length = snprintf(name, sizeof name, "function_%d", (int)((unsigned)i * 7919u % NAMES));
		cr_assert_eq(trace_names_intern(&table, name, (size_t)length), first[(unsigned)i * 7919u % NAMES]);
	}
	cr_assert_eq(table.count, NAMES);
	/* "function_1" is a prefix of "function_12": its own copy */
	cr_assert_neq(first[1], first[12]);
	cr_assert_eq(trace_names_intern(&table, "function_12xyz", 11), first[12]);
	/* a NUL ends a name */
	cr_assert_eq(trace_names_intern(&table, "function_7\0tail", 15), first[7]);
	cr_assert_eq(table.count, NAMES);
	trace_names_free(&table);
	free(first);
}

/* A code map of 400,000 ranges in 15,000 files and 120,000 functions names
 * each range's own function and file (the old search: minutes). */
Test(trace_names, a_large_code_map_names_every_range, .timeout = 60)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-code-map-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "plumbgrind-code 1\n");
	for (int i = 0; i < 400000; i++)
		fprintf(f, "%x %x %d src/file%d.c\tfunction_%d\n", 4096 + i * 16, 4096 + i * 16 + 15, i % 1000, i % 15000,
		        i % 120000);
	fprintf(f, "end\n");
	cr_assert_eq(fclose(f), 0);
	trace_code_map *map;
	plumb_status status;
	cr_assert_eq(trace_code_map_load(&map, path, &status), 0, "%s", status.message);
	unlink(path);
	cr_assert_eq(trace_code_map_size(map), 400000);
	for (int i = 0; i < 400000; i += 997) {
		const char *function, *file;
		uint32_t line;
		char want_function[32], want_file[32];
		snprintf(want_function, sizeof want_function, "function_%d", i % 120000);
		snprintf(want_file, sizeof want_file, "src/file%d.c", i % 15000);
		trace_code_map_lookup(map, 4096 + (uint64_t)i * 16 + 7, &function, &file, &line);
		cr_assert_str_eq(function, want_function);
		cr_assert_str_eq(file, want_file);
		cr_assert_eq(line, (uint32_t)(i % 1000));
	}
	trace_code_map_free(map);
}

/* Issue 29: a code map of one endless line (/dev/zero, or a file without a
 * newline) is refused at 64 KiB; getline grew plumb without bound. */
Test(trace_names, a_code_map_line_has_a_limit)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-code-map-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("plumbgrind-code 1\n1000 1fff 3 a.c\t", f);
	for (int i = 0; i < 100000; i++)
		fputc('f', f);
	fputs("\nend\n", f);
	fclose(f);
	trace_code_map *map = NULL;
	plumb_status status;
	cr_assert_eq(trace_code_map_load(&map, path, &status), -1);
	unlink(path);
	cr_assert(strstr(status.message, "line 2: a line longer than 64 KiB"), "%s", status.message);
	cr_assert_eq(trace_code_map_load(&map, "/dev/zero", &status), -1);
	cr_assert_null(map);
}
