/* Fuzzes the reader of plumbgrind's code map (--plumb-code, a recorded
 * trace's OUT.code).  Any input must load or fail with a message; a map
 * that loads must save and load again to the same ranges and segments
 * (trace_code_map_save's file is the reader's own format). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "trace/trace.h"

static int load_bytes(trace_code_map **map, const uint8_t *data, size_t size, plumb_status *status)
{
	int fd = memfd_create("fuzz-code-map", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int rc = trace_code_map_load(map, path, status);
	close(fd);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	trace_code_map *map = NULL;
	plumb_status status;
	memset(&status, 0, sizeof status);
	if (load_bytes(&map, data, size, &status) != 0) {
		if (!status.message[0] || map)
			abort();   /* a rejection must say why, and leave nothing behind */
		return 0;
	}
	char path[] = "/tmp/fuzz-code-map-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	unlink(path);   /* trace_code_map_save writes a new file in its place */
	trace_code_map *again = NULL;
	if (trace_code_map_save(map, path, &status) != 0 || trace_code_map_load(&again, path, &status) != 0)
		abort();
	unlink(path);
	const trace_code_segment *a, *b;
	size_t n = trace_code_map_segments(map, &a);
	if (trace_code_map_size(again) != trace_code_map_size(map) || trace_code_map_segments(again, &b) != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].offset != b[i].offset ||
		    strcmp(a[i].path, b[i].path) != 0 || a[i].path[0] != '/' || a[i].end < a[i].start)
			abort();
	trace_code_map_free(again);
	trace_code_map_free(map);
	return 0;
}
