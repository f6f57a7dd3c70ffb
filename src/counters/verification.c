/* Verification records for the catalogue's native candidates.  A mapping is
 * "unverified" until a validation run on that CPU has compared the event's
 * counts with a prediction; the run appends one tab-separated line
 * (event, cpu, native, verdict, evidence) to a plain text file that can be
 * read, diffed and committed.  Appending (not rewriting) keeps the history:
 * the last record for a triple wins. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include "plumb/counters.h"

const char *counter_verdict_name(counter_verdict verdict)
{
	switch (verdict) {
	case COUNTER_VERIFIED: return "verified";
	case COUNTER_REJECTED: return "rejected";
	case COUNTER_UNVERIFIED: break;
	}
	return "unverified";
}

static int copy_field(char *out, size_t size, const char *text, size_t length)
{
	if (length == 0 || length >= size)
		return -1;
	memcpy(out, text, length);
	out[length] = '\0';
	return 0;
}

static int parse_line(char *line, counter_verification *record)
{
	char *fields[5];
	size_t count = 0;
	char *cursor = line;
	line[strcspn(line, "\r\n")] = '\0';
	while (count < 5) {
		fields[count++] = cursor;
		char *tab = strchr(cursor, '\t');
		if (!tab)
			break;
		*tab = '\0';
		cursor = tab + 1;
	}
	if (count != 5)
		return -1;
	memset(record, 0, sizeof *record);
	if (copy_field(record->event, sizeof record->event, fields[0], strlen(fields[0])) ||
	    copy_field(record->cpu_identity, sizeof record->cpu_identity, fields[1], strlen(fields[1])) ||
	    copy_field(record->native, sizeof record->native, fields[2], strlen(fields[2])))
		return -1;
	if (!strcmp(fields[3], "verified"))
		record->verdict = COUNTER_VERIFIED;
	else if (!strcmp(fields[3], "rejected"))
		record->verdict = COUNTER_REJECTED;
	else
		return -1;
	snprintf(record->evidence, sizeof record->evidence, "%s", fields[4]);
	return 0;
}

int counter_verification_parse(const char *text, size_t length, const char *origin,
                               counter_verification **records, size_t *n, plumb_status *status)
{
	*records = NULL;
	*n = 0;
	size_t capacity = 0, line_number = 0, offset = 0;
	while (offset < length) {
		const char *start = text + offset;
		const char *newline = memchr(start, '\n', length - offset);
		size_t line_length = newline ? (size_t)(newline - start) : length - offset;
		offset += line_length + (newline ? 1 : 0);
		line_number++;
		if (line_length == 0 || start[0] == '#' || (line_length == 1 && start[0] == '\r'))
			continue;
		char line[2048];
		counter_verification record;
		bool ok = line_length < sizeof line && !memchr(start, '\0', line_length);
		if (ok) {
			memcpy(line, start, line_length);
			line[line_length] = '\0';
			ok = parse_line(line, &record) == 0;
		}
		if (!ok) {
			free(*records);
			*records = NULL;
			*n = 0;
			return plumb_fail(status, EINVAL, "%s:%zu: expected event<TAB>cpu<TAB>native<TAB>"
			                  "verified|rejected<TAB>evidence", origin, line_number);
		}
		if (*n == capacity) {
			capacity = capacity ? 2 * capacity : 16;
			counter_verification *grown = realloc(*records, capacity * sizeof *grown);
			if (!grown) {
				free(*records);
				*records = NULL;
				*n = 0;
				return plumb_fail(status, ENOMEM, "out of memory reading %s", origin);
			}
			*records = grown;
		}
		(*records)[(*n)++] = record;
	}
	return 0;
}

int counter_verification_load(const char *path, counter_verification **records, size_t *n,
                              plumb_status *status)
{
	*records = NULL;
	*n = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		return plumb_fail_errno(status, errno, "cannot read verification records %s", path);
	}
	char *text = NULL;
	size_t length = 0, capacity = 0;
	for (;;) {
		if (length + 4096 > capacity) {
			capacity = capacity ? 2 * capacity : 65536;
			if (capacity > ((size_t)64 << 20)) {
				free(text);
				fclose(f);
				return plumb_fail(status, EFBIG, "%s: verification records larger than 64 MiB", path);
			}
			char *grown = realloc(text, capacity);
			if (!grown) {
				free(text);
				fclose(f);
				return plumb_fail(status, ENOMEM, "out of memory reading %s", path);
			}
			text = grown;
		}
		size_t got = fread(text + length, 1, capacity - length, f);
		length += got;
		if (got == 0)
			break;
	}
	bool failed = ferror(f);
	fclose(f);
	if (failed) {
		free(text);
		return plumb_fail(status, EIO, "cannot read verification records %s", path);
	}
	int rc = counter_verification_parse(text ? text : "", length, path, records, n, status);
	free(text);
	return rc;
}

counter_verdict counter_verification_lookup(const counter_verification *records, size_t n,
                                            const char *event, const char *cpu_identity,
                                            const char *native)
{
	for (size_t i = n; i-- > 0;)
		if (!strcmp(records[i].event, event) && !strcmp(records[i].cpu_identity, cpu_identity) &&
		    !strcmp(records[i].native, native))
			return records[i].verdict;
	return COUNTER_UNVERIFIED;
}

static bool field_ok(const char *text)
{
	return text[0] && !strpbrk(text, "\t\r\n");
}

int counter_verification_append(const char *path, const counter_verification *record,
                                plumb_status *status)
{
	if (!field_ok(record->event) || !field_ok(record->cpu_identity) || !field_ok(record->native) ||
	    strpbrk(record->evidence, "\t\r\n") || record->verdict == COUNTER_UNVERIFIED)
		return plumb_fail(status, EINVAL, "a verification record needs event, cpu, native "
		                  "(no tabs or newlines) and a verdict of verified or rejected");
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return plumb_fail_errno(status, errno, "cannot open %s", path);
	/* Concurrent validation runs append to the same file: one line per write
	 * under a lock, so lines never interleave. */
	flock(fd, LOCK_EX);
	char line[2048];
	int length = snprintf(line, sizeof line, "%s\t%s\t%s\t%s\t%s\n", record->event,
	                      record->cpu_identity, record->native, counter_verdict_name(record->verdict),
	                      record->evidence);
	ssize_t written = write(fd, line, (size_t)length);
	int err = errno;
	close(fd);
	if (written != length)
		return plumb_fail_errno(status, written < 0 ? err : EIO, "cannot append to %s", path);
	return 0;
}
