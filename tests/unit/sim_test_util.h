/* Helpers for the simulator's unit tests: small configurations and a trace
 * builder, so each oracle reads like its definition in notes 002 s9.4. */
#ifndef PLUMB_TEST_SIM_UTIL_H
#define PLUMB_TEST_SIM_UTIL_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"

typedef struct sim_trace {
	trace_record *records;
	size_t count, capacity;
} sim_trace;

static inline void trace_add(sim_trace *t, uint32_t thread, trace_kind kind, uint64_t address, uint16_t size)
{
	if (t->count == t->capacity) {
		t->capacity = t->capacity ? t->capacity * 2 : 256;
		t->records = realloc(t->records, t->capacity * sizeof *t->records);
		cr_assert_not_null(t->records);
	}
	trace_record *r = &t->records[t->count++];
	memset(r, 0, sizeof *r);
	r->thread = thread;
	r->kind = (uint8_t)kind;
	r->address = address;
	r->size = size;
}

static inline void trace_release(sim_trace *t)
{
	free(t->records);
	memset(t, 0, sizeof *t);
}

/* Private 32 KiB L1s and 256 KiB L2 per core, no L3, MESI, LRU, write-back,
 * classification and invariant checks on: big enough that the oracles'
 * lines are never evicted. */
static inline void small_config(sim_config *c, uint32_t cores, sim_protocol protocol)
{
	sim_config_default(c);
	c->cores = cores;
	c->cache[SIM_L2].size = 256 * 1024;
	c->cache[SIM_L3].size = 0;
	plumb_status status;
	cr_assert_eq(sim_config_set(c, "protocol",
	             protocol == SIM_MESI ? "mesi" : protocol == SIM_MSI ? "msi" :
	             protocol == SIM_MOESI ? "moesi" : "esi", &status), 0);
	c->classify = true;
	c->check = true;
}

static inline sim *run_trace(const sim_config *c, const sim_trace *t)
{
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_access_batch(s, t->records, t->count, &status), 0, "%s", status.message);
	cr_assert_eq(sim_check(s, &status), 0, "%s", status.message);
	return s;
}

static inline uint64_t event(const sim *s, const char *name, int core)
{
	uint64_t v = 0;
	plumb_status status;
	cr_assert_eq(sim_event_count(s, name, core, &v, &status), 0, "%s: %s", name, status.message);
	return v;
}

static inline uint64_t total_fanout(const sim *s, uint32_t core, uint32_t k)
{
	return sim_statistics(s)->core[core].coherence.fanout[k];
}

#endif
