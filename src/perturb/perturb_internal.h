/* Between the experiment runner and the agent in each child (internal to src/perturb). */
#ifndef PLUMB_PERTURB_INTERNAL_H
#define PLUMB_PERTURB_INTERNAL_H

#include "perturb/perturb.h"

#define PERTURB_AGENT_FD_ENV "PLUMB_PERTURB_AGENT_FD"
#define PERTURB_AGENT_SPEC_ENV "PLUMB_PERTURB_AGENT_SPEC"
#define PERTURB_AGENT_PID_ENV "PLUMB_PERTURB_AGENT_PID"
#define PERTURB_AGENT_MAGIC 0x70727462u   /* "prtb" */

/* What the agent writes to its pipe once, at the end of the program. */
typedef struct perturb_agent_message {
	uint32_t magic;
	int32_t failed;                    /* 1: the agent could not start; message says why */
	char message[PLUMB_MESSAGE_MAX];
	uint64_t halts, halted_ns, wall_ns, tsc_cycles, deferred_signals;
	uint64_t halted_cpu_ns;            /* the thread's CPU time inside the halts */
	uint64_t longest_halt_ns;          /* the longest halt, wall clock */
	uint64_t halt_preemptions;         /* involuntary context switches inside the halts */
	uint64_t halt_waits;               /* voluntary ones */
	uint64_t running_ns;               /* the thread's CPU time from begin to end */
	uint32_t count;
	counter_value raw[PERTURB_MAX_EVENTS];
	counter_value excluded[PERTURB_MAX_EVENTS];
} perturb_agent_message;

typedef struct perturb_agent perturb_agent;

/* spec <-> one environment string. */
void perturb_agent_spec_format(const perturb_agent_spec *spec, char *text, size_t length);
int perturb_agent_spec_parse(const char *text, perturb_agent_spec *spec);

/* In the child: opens the counters and the halt clock and starts them
 * (begin), or, with spec->calibrate_halts, halts that many times back to
 * back; end stops, reads and fills the message.  The agent is allocated. */
int perturb_agent_begin(const perturb_agent_spec *spec, perturb_agent **out, plumb_status *status);
void perturb_agent_end(perturb_agent *agent, perturb_agent_message *message);
void perturb_agent_fail_message(perturb_agent_message *message, const char *text);
/* Writes the whole message to fd (retrying short writes). */
void perturb_agent_send(int fd, const perturb_agent_message *message);

/* The spin loop of a halt: `iterations` trips of an empty loop (a halt
 * spins it in chunks of about 1 us until its CPU clock says t has passed). */
void perturb_spin(uint64_t iterations);

#endif
