/* Verification records for the catalogue's native candidates.  A mapping is
 * "unverified" until a validation run on that CPU has compared the event's
 * counts with a prediction; the run appends one tab-separated line
 * (event, cpu, native, verdict, evidence, backend, encoding, class, date)
 * to a plain text file that can be read, diffed and committed.  Appending
 * (not rewriting) keeps the history: the last record for a triple wins. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "counters/counters.h"
#include "core/read_file.h"

const char *counter_verdict_name(counter_verdict verdict)
{
	switch (verdict) {
	case COUNTER_VERIFIED: return "verified";
	case COUNTER_REJECTED: return "rejected";
	case COUNTER_CHECKED: return "checked";
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

/* Fields: 5 (the original format) or 9 (with backend, encoding, class, date). */
static int parse_line(char *line, counter_verification *record)
{
	char *fields[9] = { 0 };   /* set up to count; gcc -O3 cannot see that count == 9 sets all */
	size_t count = 0;
	char *cursor = line;
	line[strcspn(line, "\r\n")] = '\0';
	while (count < 9) {
		fields[count++] = cursor;
		char *tab = strchr(cursor, '\t');
		if (!tab)
			break;
		*tab = '\0';
		cursor = tab + 1;
		if (count == 9)
			return -1;   /* a tenth field */
	}
	if (count != 5 && count != 9)
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
	else if (!strcmp(fields[3], "checked"))
		record->verdict = COUNTER_CHECKED;
	else
		return -1;
	if (strlen(fields[4]) >= sizeof record->evidence)
		return -1;
	snprintf(record->evidence, sizeof record->evidence, "%s", fields[4]);
	if (count == 9) {
		/* Optional fields may be empty, but never longer than their storage. */
		if (strlen(fields[5]) >= sizeof record->backend || strlen(fields[6]) >= sizeof record->encoding ||
		    strlen(fields[7]) >= sizeof record->cls || strlen(fields[8]) >= sizeof record->date)
			return -1;
		snprintf(record->backend, sizeof record->backend, "%s", fields[5]);
		snprintf(record->encoding, sizeof record->encoding, "%s", fields[6]);
		snprintf(record->cls, sizeof record->cls, "%s", fields[7]);
		snprintf(record->date, sizeof record->date, "%s", fields[8]);
	}
	return 0;
}

int counter_verification_parse(const char *text, size_t length, const char *origin,
                               counter_verification **records, size_t *n, plumb_status *status)
{
	*records = NULL;
	*n = 0;
	size_t capacity = 0, line_number = 0, offset = read_file_bom_length(text, length);
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
			return plumb_fail(status, EINVAL, "%s:%zu: not a verification record (expected event<TAB>cpu<TAB>"
			                  "name<TAB>verified|checked|rejected<TAB>evidence[<TAB>backend<TAB>"
			                  "encoding<TAB>class<TAB>date])", origin, line_number);
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
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return 0;
	char *text;
	size_t length;
	plumb_status read_status;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, &read_status) != 0)
		return plumb_fail(status, read_status.code, "verification records: %s", read_status.message);
	int rc = counter_verification_parse(text ? text : "", length, path, records, n, status);
	free(text);
	return rc;
}

const counter_verification *counter_verification_find(const counter_verification *records, size_t n,
                                                      const char *event, const char *cpu_identity,
                                                      const char *native)
{
	if (!records || !event || !cpu_identity || !native)
		return NULL;
	for (size_t i = n; i-- > 0;)
		if (!strcmp(records[i].event, event) && !strcmp(records[i].cpu_identity, cpu_identity) &&
		    !strcmp(records[i].native, native))
			return &records[i];
	return NULL;
}

counter_verdict counter_verification_lookup(const counter_verification *records, size_t n,
                                            const char *event, const char *cpu_identity,
                                            const char *native)
{
	const counter_verification *record = counter_verification_find(records, n, event, cpu_identity, native);
	return record ? record->verdict : COUNTER_UNVERIFIED;
}

void counter_verification_describe(const counter_verification *record, char *out, size_t length)
{
	if (!record || record->verdict == COUNTER_UNVERIFIED) {
		snprintf(out, length, "unverified");
		return;
	}
	/* The day is enough in a table; the full time stays in the file. */
	char day[16] = "";
	if (record->date[0])
		snprintf(day, sizeof day, "%.10s", record->date);
	const char *cls = record->cls[0] ? record->cls : NULL;
	switch (record->verdict) {
	case COUNTER_VERIFIED:
		if (day[0] || cls)
			snprintf(out, length, "verified on this CPU (%s%s%s)", day, day[0] && cls ? ", " : "",
			         cls ? cls : "");
		else
			snprintf(out, length, "verified on this CPU");
		break;
	case COUNTER_CHECKED:
		snprintf(out, length, "checked: %s%s%s%s, not trusted", cls ? cls : "not exact",
		         day[0] ? " (" : "", day, day[0] ? ")" : "");
		break;
	case COUNTER_REJECTED:
		snprintf(out, length, "rejected%s%s%s", record->evidence[0] ? " (" : "", record->evidence,
		         record->evidence[0] ? ")" : "");
		break;
	case COUNTER_UNVERIFIED:
		break;
	}
}

static bool field_ok(const char *text)
{
	return text[0] && !strpbrk(text, "\t\r\n");
}

static bool optional_ok(const char *text)
{
	return !strpbrk(text, "\t\r\n");
}

/* mkdir -p of path's directory (not of path itself). */
static int make_parent(const char *path, plumb_status *status)
{
	char directory[4096];
	if (snprintf(directory, sizeof directory, "%s", path) >= (int)sizeof directory)
		return plumb_fail(status, ENAMETOOLONG, "path too long: %s", path);
	char *slash = strrchr(directory, '/');
	if (!slash || slash == directory)
		return 0;
	*slash = '\0';
	for (char *p = directory + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(directory, 0755) != 0 && errno != EEXIST)
			return plumb_fail_errno(status, errno, "cannot create %s", directory);
		*p = '/';
	}
	if (mkdir(directory, 0755) != 0 && errno != EEXIST)
		return plumb_fail_errno(status, errno, "cannot create %s", directory);
	return 0;
}

/* Appending text to a file that is not a verification file (a binary, a
 * trace, somebody's notes) would corrupt it: whatever is already there must
 * parse as verification records before a line is added.  Read through the
 * locked descriptor, so the check and the append see the same file. */
static int check_existing(int fd, off_t size, const char *path, plumb_status *status)
{
	if (size > ((off_t)64 << 20))
		return plumb_fail(status, EFBIG, "%s is not a verification file (larger than 64 MiB); not appending", path);
	char *text = malloc((size_t)size);
	if (!text)
		return plumb_fail(status, ENOMEM, "out of memory reading %s", path);
	size_t length = 0;
	while (length < (size_t)size) {
		ssize_t got = pread(fd, text + length, (size_t)size - length, (off_t)length);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = errno;
			free(text);
			return plumb_fail_errno(status, err, "cannot read %s", path);
		}
		if (got == 0)
			break;
		length += (size_t)got;
	}
	counter_verification *records;
	size_t n;
	plumb_status parsed;
	int rc = counter_verification_parse(text, length, path, &records, &n, &parsed);
	free(text);
	if (rc != 0)
		return plumb_fail(status, EINVAL, "%s: not a verification file (no records of event, cpu, name, "
		                  "verdict); nothing appended", path);
	free(records);
	return 0;
}

int counter_verification_check(const char *path, plumb_status *status)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;   /* missing or unreadable: nothing to protect; appending reports its own error */
	struct stat info;
	int rc = 0;
	if (fstat(fd, &info) != 0)
		rc = plumb_fail_errno(status, errno, "cannot inspect %s", path);
	else if (S_ISDIR(info.st_mode))
		rc = plumb_fail(status, EISDIR, "%s: is a directory, not a verification file", path);
	else if (S_ISREG(info.st_mode) && info.st_size > 0)
		rc = check_existing(fd, info.st_size, path, status);
	close(fd);
	return rc;
}

int counter_verification_append(const char *path, const counter_verification *record,
                                plumb_status *status)
{
	if (!field_ok(record->event) || !field_ok(record->cpu_identity) || !field_ok(record->native) ||
	    !optional_ok(record->evidence) || !optional_ok(record->backend) || !optional_ok(record->encoding) ||
	    !optional_ok(record->cls) || !optional_ok(record->date) || record->verdict == COUNTER_UNVERIFIED)
		return plumb_fail(status, EINVAL, "a verification record needs event, cpu, name "
		                  "(no tabs or newlines) and a verdict of verified, checked or rejected");
	if (make_parent(path, status) != 0)
		return -1;
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return plumb_fail_errno(status, errno, "cannot open %s", path);
	/* Concurrent validation runs append to the same file: one line per write
	 * on an O_APPEND descriptor (the kernel places each write at the end in
	 * one step) under an exclusive lock, so lines never interleave. */
	if (flock(fd, LOCK_EX) != 0) {
		int err = errno;
		close(fd);
		return plumb_fail_errno(status, err, "cannot lock %s", path);
	}
	char line[2048];
	int length = 0;
	struct stat info;
	if (fstat(fd, &info) != 0) {
		int err = errno;
		close(fd);
		return plumb_fail_errno(status, err, "cannot inspect %s", path);
	}
	if (S_ISREG(info.st_mode) && info.st_size > 0 && check_existing(fd, info.st_size, path, status) != 0) {
		close(fd);
		return -1;
	}
	if (S_ISREG(info.st_mode) && info.st_size == 0)
		length = snprintf(line, sizeof line, "# plumb verification records (docs/counters.md): event\tcpu\t"
		                  "name\tverdict\tevidence\tbackend\tencoding\tclass\tdate\n");
	length += snprintf(line + length, sizeof line - (size_t)length, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
	                   record->event, record->cpu_identity, record->native,
	                   counter_verdict_name(record->verdict), record->evidence, record->backend,
	                   record->encoding, record->cls, record->date);
	if (length <= 0 || (size_t)length >= sizeof line) {
		close(fd);
		return plumb_fail(status, EINVAL, "verification record too long");
	}
	ssize_t written = write(fd, line, (size_t)length);
	int err = errno;
	if (close(fd) != 0 && written == length)
		return plumb_fail_errno(status, errno, "cannot append to %s", path);
	if (written != length)
		return plumb_fail_errno(status, written < 0 ? err : EIO, "cannot append to %s", path);
	return 0;
}

int counter_verification_default_path(char *out, size_t length, plumb_status *status)
{
	/* Only a file the user named: a validation run once appended to a file
	 * under the user's home on every run, a side effect nobody asked for.
	 * secure_getenv: a setuid program linked with libplumb must not write
	 * where its caller's environment says. */
	const char *explicit_path = secure_getenv("PLUMB_VERIFICATION");
	if (!explicit_path || !explicit_path[0])
		return plumb_fail(status, ENOENT, "no verification records file asked for (give --verification FILE "
		                  "or set PLUMB_VERIFICATION)");
	int n = snprintf(out, length, "%s", explicit_path);
	if (n < 0 || (size_t)n >= length)
		return plumb_fail(status, ENAMETOOLONG, "verification records path too long");
	return 0;
}
