#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core/status.h"

static int status_fill(plumb_status *status, int code, int with_errno, const char *format, va_list ap)
{
	if (!status)
		return -1;
	status->code = code;
	int n = vsnprintf(status->message, sizeof status->message, format, ap);
	/* EFBIG from a write is the file size limit (ulimit -f, or the largest
	 * file the file system holds); strerror's "File too large" reads as if
	 * plumb's output were too large for plumb. */
	if (with_errno && n >= 0 && (size_t)n < sizeof status->message)
		snprintf(status->message + n, sizeof status->message - (size_t)n, ": %s",
		         code == EFBIG ? "file size limit reached (ulimit -f)" : strerror(code));
	/* One line: a message must never carry a newline into a table or log. */
	for (char *p = status->message; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return -1;
}

int plumb_fail(plumb_status *status, int code, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	status_fill(status, code, 0, format, ap);
	va_end(ap);
	return -1;
}

int plumb_fail_errno(plumb_status *status, int code, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	status_fill(status, code, 1, format, ap);
	va_end(ap);
	return -1;
}

void plumb_status_clear(plumb_status *status)
{
	if (status) {
		status->code = 0;
		status->message[0] = 0;
	}
}
