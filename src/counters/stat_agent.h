/* The in-process agent that lets plumb stat count a command through PAPI
 * (internal to the counters and plumb stat). */
#ifndef PLUMB_COUNTERS_STAT_AGENT_H
#define PLUMB_COUNTERS_STAT_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include "counters/counters.h"

#define STAT_AGENT_FD_ENV "PLUMB_STAT_AGENT_FD"
#define STAT_AGENT_EVENTS_ENV "PLUMB_STAT_AGENT_EVENTS"
#define STAT_AGENT_BACKEND_ENV "PLUMB_STAT_AGENT_BACKEND"

/* What the agent writes to its pipe: this header, then `count` counter_value. */
#define STAT_AGENT_MAGIC 0x706c6d62u   /* "plmb" */

typedef struct stat_agent_header {
	uint32_t magic;
	uint32_t count;
	int32_t failed;                    /* 1: opening failed, message says why */
	char message[PLUMB_MESSAGE_MAX];
} stat_agent_header;

/* Reads what the agent wrote to fd (non-blocking; call after the command
 * exited) into values[0..n-1].  When the agent wrote nothing, every value is
 * not-counted with the likely reason.  Returns 0, or -1 on a malformed
 * message. */
int stat_agent_collect(int fd, size_t n, counter_value *values, plumb_status *status);

/* The shared library plumb stat preloads: libplumb.so beside the plumb
 * program (build tree) or in ../lib (installed).  Returns NULL and fills
 * status when neither exists. */
const char *stat_agent_library(char *buffer, size_t length, plumb_status *status);

#endif
