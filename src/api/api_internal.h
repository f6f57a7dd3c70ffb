/* Shared by the wrappers of libplumb's public API (include/plumb/plumb.h):
 * they translate the public types to the internal ones and back, and
 * nothing else.  The internal names stay as they are inside the tree. */
#ifndef PLUMB_API_INTERNAL_H
#define PLUMB_API_INTERNAL_H

#include <stdio.h>
#include "plumb/plumb.h"
#include "core/status.h"

/* Copies an internal failure into the caller's plumb_error; returns -1. */
static inline int api_error(plumb_error *error, const plumb_status *status)
{
	if (error) {
		error->code = status->code;
		snprintf(error->message, sizeof error->message, "%s", status->message);
	}
	return -1;
}

static inline void api_status_init(plumb_status *status)
{
	status->code = 0;
	status->message[0] = '\0';
}

#endif
