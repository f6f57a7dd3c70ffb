/* Region markers in traces: the native and lackey formats keep them (names,
 * kinds, threads, positions), across block boundaries and through the
 * background decoder; din drops them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace_test_util.h"

#define COUNT 150000   /* > 2 native blocks */

static const char *const names[] = { "solve", "a region with blanks", "x" };

static void make(trace_record *records, size_t count)
{
	trace_test_records(records, count, 5);
	for (size_t i = 0; i < count; i++) {
		records[i].flags &= (uint8_t)~TRACE_HAS_TIME;   /* lackey keeps no time */
		records[i].time = 0;
		records[i].thread %= 3;
	}
	/* markers every 997 records, alternating, some at block boundaries */
	for (size_t i = 0, k = 0; i < count; i += 997, k++)
		trace_region_marker(&records[i], k % 2 == 0, records[i].thread, names[(k / 2) % 3]);
	trace_region_marker(&records[65535], 1, 2, "boundary");
	trace_region_marker(&records[65536], 0, 2, "boundary");
}

static void round_trip(trace_format format, const char *file, bool exact)
{
	trace_record *in = calloc(COUNT, sizeof *in), *out = calloc(COUNT + 1, sizeof *out);
	make(in, COUNT);
	const char *path = trace_test_path(file);
	cr_assert_eq(trace_test_write(path, format, in, COUNT), 0);
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, format, &status), 0, "%s", status.message);
	size_t n = 0;
	long got;
	while ((got = trace_reader_read(reader, out + n, COUNT + 1 - n, &status)) > 0)
		n += (size_t)got;
	cr_assert_eq(got, 0, "%s", status.message);
	cr_assert_eq(n, COUNT);
	size_t markers = 0;
	for (size_t i = 0; i < COUNT; i++) {
		cr_assert_eq(out[i].kind, in[i].kind, "record %zu", i);
		cr_assert_eq(out[i].thread, in[i].thread, "record %zu", i);
		if (trace_is_marker(&in[i])) {
			markers++;
			cr_assert_str_eq(trace_region_name(&out[i]), trace_region_name(&in[i]), "record %zu", i);
			cr_assert_eq(out[i].size, 0);
		} else if (exact) {
			cr_assert(trace_test_records_equal(&in[i], &out[i]), "record %zu differs", i);
		} else {
			cr_assert_eq(out[i].address, in[i].address, "record %zu", i);
			cr_assert_eq(out[i].size, in[i].size, "record %zu", i);
		}
	}
	cr_assert_gt(markers, 100);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	free(in);
	free(out);
}

Test(trace_regions, native_keeps_markers)
{
	round_trip(TRACE_FORMAT_NATIVE, "regions.ptrace", true);
}

Test(trace_regions, lackey_keeps_markers)
{
	round_trip(TRACE_FORMAT_LACKEY, "regions.lackey", false);
}

Test(trace_regions, plumbgrind_marker_lines_are_read)
{
	static const char text[] = "I  00401000,4\n"
	                           "--77--   REGION[begin]: solve it\n"
	                           " L 7ff000,8\n"
	                           "--77--   SCHED[2]: plumbgrind: thread 1 runs\n"
	                           "--77--   REGION[end]: solve it\n"
	                           "--77--   a Valgrind message\n";
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_memory(&reader, text, sizeof text - 1, TRACE_FORMAT_LACKEY, &status), 0);
	trace_record r[8];
	long n = trace_reader_read(reader, r, 8, &status);
	cr_assert_eq(n, 4, "%s", status.message);
	cr_assert_eq(r[1].kind, TRACE_REGION_BEGIN);
	cr_assert_str_eq(trace_region_name(&r[1]), "solve it");
	cr_assert_eq(r[1].thread, 0);
	cr_assert_eq(r[3].kind, TRACE_REGION_END);
	cr_assert_eq(r[3].thread, 1);
	cr_assert_eq(trace_region_name(&r[1]), trace_region_name(&r[3]), "one interned copy");
	trace_reader_close(reader, NULL);
}

Test(trace_regions, bad_marker_names_are_errors)
{
	static const char text[] = "--77--   REGION[begin]: \n";
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_memory(&reader, text, sizeof text - 1, TRACE_FORMAT_LACKEY, &status), 0);
	trace_record r[4];
	long n = trace_reader_read(reader, r, 4, &status);
	if (n == 0)
		n = trace_reader_read(reader, r, 4, &status);
	cr_assert_eq(n, -1);
	cr_assert(strstr(status.message, "empty region name"), "%s", status.message);
	trace_reader_close(reader, NULL);
	trace_writer *writer;
	cr_assert_eq(trace_writer_open(&writer, trace_test_path("bad.ptrace"), TRACE_FORMAT_NATIVE, &status), 0);
	trace_record marker;
	trace_region_marker(&marker, 1, 0, "tab\there");
	cr_assert_eq(trace_writer_write(writer, &marker, 1, &status), -1);
	cr_assert(strstr(status.message, "control character"), "%s", status.message);
	trace_writer_abort(writer);
}

Test(trace_regions, din_drops_markers)
{
	trace_record r[3] = { { .address = 0x1000, .size = 4, .kind = TRACE_READ }, { 0 },
	                      { .address = 0x2000, .size = 4, .kind = TRACE_WRITE } };
	trace_region_marker(&r[1], 1, 0, "gone");
	const char *path = trace_test_path("regions.din");
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_DIN, r, 3), 0);
	size_t size;
	char *text = trace_test_slurp(path, &size);
	cr_assert_str_eq(text, "0 1000 4\n1 2000 4\n");
	free(text);
}

Test(trace_regions, code_map_round_trip_and_errors)
{
	const char *path = trace_test_path("map.code");
	static const char good[] = "plumbgrind-code 2\nsegment 400000 401fff 1000\t/usr/lib/a b.so\n"
	                           "401000 401007 12 /src/a.c\twalk here\n401008 40100b 0 ???\t???\nend\n";
	trace_test_spit(path, good, sizeof good - 1);
	trace_code_map *map;
	plumb_status status;
	cr_assert_eq(trace_code_map_load(&map, path, &status), 0, "%s", status.message);
	const char *function, *file;
	uint32_t line;
	cr_assert_eq(trace_code_map_lookup(map, 0x401004, &function, &file, &line), 1);
	cr_assert_str_eq(function, "walk here");
	cr_assert_str_eq(file, "/src/a.c");
	cr_assert_eq(line, 12);
	cr_assert_eq(trace_code_map_lookup(map, 0x40100c, &function, &file, &line), 0);
	const trace_code_segment *segments;
	cr_assert_eq(trace_code_map_segments(map, &segments), 1);
	cr_assert_eq(segments[0].start, 0x400000);
	cr_assert_eq(segments[0].end, 0x401fff);
	cr_assert_eq(segments[0].offset, 0x1000);
	cr_assert_str_eq(segments[0].path, "/usr/lib/a b.so");
	const char *saved = trace_test_path("saved.code");
	cr_assert_eq(trace_code_map_save(map, saved, &status), 0, "%s", status.message);
	size_t size;
	char *text = trace_test_slurp(saved, &size);
	cr_assert_str_eq(text, good);
	free(text);
	trace_code_map_free(map);
	/* version 1 (a trace recorded before segments): ranges, no segments */
	static const char first[] = "plumbgrind-code 1\n401000 401007 12 /src/a.c\twalk here\nend\n";
	trace_test_spit(path, first, sizeof first - 1);
	cr_assert_eq(trace_code_map_load(&map, path, &status), 0, "%s", status.message);
	cr_assert_eq(trace_code_map_size(map), 1);
	cr_assert_eq(trace_code_map_segments(map, &segments), 0);
	trace_code_map_free(map);
	static const char cut[] = "plumbgrind-code 2\n401000 401007 12 /src/a.c\twalk\n";
	trace_test_spit(path, cut, sizeof cut - 1);
	cr_assert_eq(trace_code_map_load(&map, path, &status), -1);
	cr_assert(strstr(status.message, "cut short"), "%s", status.message);
	static const char bad[] = "plumbgrind-code 1\n401000 zz 12 /src/a.c\twalk\nend\n";
	trace_test_spit(path, bad, sizeof bad - 1);
	cr_assert_eq(trace_code_map_load(&map, path, &status), -1);
	cr_assert(strstr(status.message, "line 2"), "%s", status.message);
	/* a map of no ranges (found by the fuzzer: qsort of NULL) */
	static const char empty[] = "plumbgrind-code 2\nsegment 400000 401fff 0\t/bin/true\nend\n";
	trace_test_spit(path, empty, sizeof empty - 1);
	cr_assert_eq(trace_code_map_load(&map, path, &status), 0, "%s", status.message);
	cr_assert_eq(trace_code_map_size(map), 0);
	cr_assert_eq(trace_code_map_segments(map, &segments), 1);
	trace_code_map_free(map);
	/* a segment: only in version 2, with a file's absolute path, end not before start */
	static const char *const bad_segments[] = {
		"plumbgrind-code 1\nsegment 400000 401fff 0\t/bin/true\nend\n",
		"plumbgrind-code 2\nsegment 400000 401fff 0\tbin/true\nend\n",
		"plumbgrind-code 2\nsegment 402000 401fff 0\t/bin/true\nend\n",
		"plumbgrind-code 2\nsegment 400000 401fff\t/bin/true\nend\n",
		"plumbgrind-code 2\nsegment 400000 401fff 0 /bin/true\nend\n",
		"plumbgrind-code 3\nend\n",
	};
	for (size_t i = 0; i < sizeof bad_segments / sizeof *bad_segments; i++) {
		trace_test_spit(path, bad_segments[i], strlen(bad_segments[i]));
		cr_assert_eq(trace_code_map_load(&map, path, &status), -1, "%s", bad_segments[i]);
		cr_assert(strstr(status.message, "line "), "%s: %s", bad_segments[i], status.message);
	}
}
