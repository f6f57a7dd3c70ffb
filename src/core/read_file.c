/* Whole-file reads with a size limit (src/core/read_file.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/read_file.h"

static int too_large(plumb_status *status, const char *name, size_t limit)
{
	if (limit >= (1u << 20) && limit % (1u << 20) == 0)
		return plumb_fail(status, EFBIG, "%s: larger than %zu MiB", name, limit >> 20);
	return plumb_fail(status, EFBIG, "%s: larger than %zu bytes", name, limit);
}

int read_file_limited(const char *path, size_t limit, char **text, size_t *length, plumb_status *status)
{
	*text = NULL;
	*length = 0;
	bool standard_input = !strcmp(path, "-");
	const char *name = standard_input ? "standard input" : path;
	FILE *f = standard_input ? stdin : fopen(path, "rb");
	if (!f)
		return plumb_fail_errno(status, errno, "cannot open '%s'", path);
	struct stat info;
	int rc = 0;
	/* A regular file that is already too large fails before a byte is read. */
	if (fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode) && (uint64_t)info.st_size > limit)
		rc = too_large(status, name, limit);
	char *buffer = NULL;
	size_t used = 0, capacity = 0;
	while (rc == 0) {
		if (used == capacity) {
			if (capacity > limit) {
				rc = too_large(status, name, limit);
				break;
			}
			/* Room for one byte past the limit, to tell "exactly the
			 * limit" from "more", and for the terminating NUL. */
			size_t grown = capacity ? 2 * capacity : 65536;
			if (grown > limit + 1)
				grown = limit + 1;
			char *bigger = realloc(buffer, grown + 1);
			if (!bigger) {
				rc = plumb_fail(status, ENOMEM, "%s: out of memory after reading %zu MiB", name, used >> 20);
				break;
			}
			buffer = bigger;
			capacity = grown;
		}
		size_t got = fread(buffer + used, 1, capacity - used, f);
		used += got;
		if (got == 0) {
			if (ferror(f))
				rc = plumb_fail_errno(status, errno ? errno : EIO, "cannot read '%s'", path);
			break;
		}
		if (used > limit)
			rc = too_large(status, name, limit);
	}
	if (!standard_input)
		fclose(f);
	if (rc != 0) {
		free(buffer);
		return rc;
	}
	if (!buffer) {
		buffer = malloc(1);
		if (!buffer)
			return plumb_fail(status, ENOMEM, "%s: out of memory", name);
	}
	buffer[used] = 0;
	*text = buffer;
	*length = used;
	return 0;
}

size_t read_file_bom_length(const char *text, size_t length)
{
	return length >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
	       (unsigned char)text[2] == 0xBF ? 3 : 0;
}
