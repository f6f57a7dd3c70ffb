/* Cache-to-cache coherence probes (seed 001 chapter 4; ccbench-style
 * operations on lines in each MESI state).
 *
 * A state preparation is data: a list of steps, each one operation (write,
 * read, flush) by one role over every line of the buffer, in order.  Role 0
 * is A, the core that is timed; role 1 is B, the owner; roles 2.. are
 * further sharers.  The same list is
 *   - executed on real cores by a coherence_team (one pinned thread per
 *     helper role, A is the caller), before every timed pass, and
 *   - expanded into per-thread memory events (coherence_plan_events) that a
 *     simulator or a counting harness replays, so the preparation itself is
 *     tested exactly where timing cannot be trusted. */
#ifndef PLUMB_COHERENCE_H
#define PLUMB_COHERENCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"
#include "core/timer.h"
#include "trace/trace.h"

typedef enum coherence_state {
	COHERENCE_LOCAL,        /* A wrote the lines itself: its own cache (baseline) */
	COHERENCE_MODIFIED,     /* B holds them Modified: B writes */
	COHERENCE_EXCLUSIVE,    /* B holds them Exclusive: B writes, flushes, reads */
	COHERENCE_SHARED,       /* B writes, then sharers 2..k+1 read (seed 001's recipe) */
	COHERENCE_INVALID,      /* nobody caches them: B writes, then flushes */
	COHERENCE_CLEAN_SHARED  /* k clean copies: B writes, flushes, then B and sharers read */
} coherence_state;
#define COHERENCE_STATE_COUNT 6

typedef enum coherence_op {
	COHERENCE_OP_WRITE,     /* a store to every line (second word: the chain stays intact) */
	COHERENCE_OP_READ,      /* a load of every line */
	COHERENCE_OP_FLUSH,     /* clflush(opt) of every line: out of every cache */
	COHERENCE_OP_ACCESS     /* the timed access by A (load, store, atomic add or CAS) */
} coherence_op;

/* The operation A times on each line. */
typedef enum coherence_access {
	COHERENCE_ACCESS_LOAD,        /* dependent load chain */
	COHERENCE_ACCESS_STORE,       /* store + mfence: until the RFO makes it globally visible */
	COHERENCE_ACCESS_ATOMIC_ADD,  /* lock xadd of 0: returns the next pointer */
	COHERENCE_ACCESS_CAS          /* lock cmpxchg (fails, still locks the line exclusively) */
} coherence_access;
#define COHERENCE_ACCESS_COUNT 4

#define COHERENCE_MAX_ROLES 256
#define COHERENCE_MAX_STEPS (2 * COHERENCE_MAX_ROLES + 4)

typedef struct coherence_step {
	uint16_t role;   /* 0 = A, 1 = B, 2.. = further sharers */
	uint8_t op;      /* coherence_op */
} coherence_step;

typedef struct coherence_plan {
	coherence_state state;
	int sharers;     /* COHERENCE_SHARED: further sharers besides B; CLEAN_SHARED: copies */
	int roles;       /* threads involved, A included */
	int count;
	coherence_step steps[COHERENCE_MAX_STEPS];
} coherence_plan;

/* Builds the preparation for state.  sharers: for COHERENCE_SHARED the
 * further sharers besides B (>= 1); for COHERENCE_CLEAN_SHARED the number of
 * cores holding a clean copy (>= 1; 1 means a single clean Exclusive copy);
 * ignored (pass 0) otherwise. */
int coherence_plan_build(coherence_state state, int sharers, coherence_plan *out, plumb_status *status);
/* Short names: "local", "M", "E", "S", "I", "clean-shared"; and the access's
 * "load", "store", "atomic-add", "cas". */
const char *coherence_state_name(coherence_state state);
const char *coherence_state_description(coherence_state state);
const char *coherence_access_name(coherence_access access);
/* CPUs a state needs (roles). */
int coherence_state_roles(coherence_state state, int sharers);

/* One memory event of a preparation or of the timed pass. */
typedef struct coherence_event {
	uint16_t role;
	uint8_t op;          /* coherence_op */
	uint8_t access;      /* coherence_access, for COHERENCE_OP_ACCESS */
	uint64_t address;
} coherence_event;

/* The lines a plan works on: count lines spaced `spacing` bytes from base,
 * and the order A visits them in (a random cycle; NULL = ascending). */
typedef struct coherence_lines {
	uint64_t base;
	size_t count;
	size_t spacing;
	const uint32_t *order;
} coherence_lines;

/* Expands plan (then, if with_access, A's timed pass) into events, in the
 * order they happen: steps in sequence, every line within a step.  Helpers
 * touch lines in ascending order; A's pass follows `order`.  Returns the
 * number of events (also when events is NULL or capacity is too small:
 * only the first capacity are written). */
size_t coherence_plan_events(const coherence_plan *plan, const coherence_lines *lines, bool with_access,
                             coherence_access access, coherence_event *events, size_t capacity);

/* The events as trace records for the simulator: role r becomes thread
 * role_thread[r] (NULL = r); write -> TRACE_WRITE, read/load -> TRACE_READ,
 * store -> TRACE_WRITE, atomic add and CAS -> TRACE_MODIFY.  A trace has no
 * flush record, so a flush becomes what seed 001 itself did: the flushing
 * thread writes an eviction array (evict_bytes at evict_base, one write per
 * line_bytes) big enough to push the lines out of its caches.  Returns the
 * record count (only the first capacity are written). */
size_t coherence_events_to_trace(const coherence_event *events, size_t count, const uint32_t *role_thread,
                                 uint64_t evict_base, size_t evict_bytes, size_t line_bytes,
                                 trace_record *records, size_t capacity);

/* Per-role counts of the operations a team really performed, for the
 * counting harness: the executor's work must equal the plan's. */
typedef struct coherence_counts {
	uint64_t writes, reads, flushes;
} coherence_counts;

/* A team: one pinned thread per helper role; A (role 0) is the calling
 * thread, which the caller pins to cpus[0].  Spin waits are bounded by
 * timeout_ns, so a descheduled or missing helper gives an error, not a hang. */
typedef struct coherence_team coherence_team;

int coherence_team_start(coherence_team **out, const int *cpus, int roles, uint64_t timeout_ns,
                         plumb_status *status);
/* Runs the preparation on the lines (base is a real address here). */
int coherence_team_prepare(coherence_team *team, const coherence_plan *plan, const coherence_lines *lines,
                           plumb_status *status);
/* Counts performed by role since the team started. */
void coherence_team_counts(const coherence_team *team, int role, coherence_counts *out);
void coherence_team_stop(coherence_team *team);

/* The timed kernels: `count` accesses over a chain of lines whose first
 * word points at the next line (chase_build layout).  Returns ticks of the
 * calibrated timer.  The store kernel visits `order` through an address
 * list (stores return nothing to chain on), fencing after each store. */
uint64_t coherence_time_access(const timer_calibration *timer, coherence_access access, void *start,
                               void *const *addresses, size_t count);

#endif
