/* Errors: every fallible libplumb call returns 0 on success or -1 on
 * failure, and on failure fills a caller-owned plumb_status (if non-NULL)
 * with an errno-style code and one line of text a user can act on. */
#ifndef PLUMB_STATUS_H
#define PLUMB_STATUS_H

#include <stddef.h>

#define PLUMB_MESSAGE_MAX 256

typedef struct plumb_status {
	int code;                          /* errno value, or EINVAL for bad input */
	char message[PLUMB_MESSAGE_MAX];   /* one line, no trailing newline */
} plumb_status;

/* Records a failure and returns -1, so callers can `return plumb_fail(...)`. */
int plumb_fail(plumb_status *status, int code, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/* Like plumb_fail, appending ": strerror(code)". */
int plumb_fail_errno(plumb_status *status, int code, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

void plumb_status_clear(plumb_status *status);

#endif
