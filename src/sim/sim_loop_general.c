/* The general loop variant: every record through sim_reference, with the
 * invariant checks (--check) and per-instruction costs (annotation); and
 * plumbgrind's entries expanded into records for every configuration the
 * entries' own loops do not take (sim_loop_choose). */
#include <errno.h>
#include <string.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"
#include "sim/sim_program.h"

/* Annotation charges every reference in sim_engine.c's finish_reference. */
int sim_loop_general(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	static const sim_access_kind kinds[4] = { SIM_IFETCH, SIM_READ, SIM_WRITE, SIM_READ };
	const uint32_t max_size = s->config.max_access_size;
	uint64_t counted[SIM_KIND_COUNT] = { 0, 0, 0 };
	uint32_t cached_thread = UINT32_MAX, core = 0;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (r->thread != cached_thread) {
			if (sim_thread_enter(s, r->thread, &core, status) != 0) {
				rc = -1;
				break;
			}
			cached_thread = r->thread;
			s->trace_thread = r->thread;
		}
		if (r->kind > TRACE_MODIFY) {
			if (trace_is_collector_marker(r))
				continue;   /* a halt or a loss: no reference */
			if (trace_is_call(r)) {
				if (s->annotate && sim_annotate_call(s, r, status) != 0) {
					rc = -1;
					break;
				}
				continue;
			}
			if (trace_is_marker(r)) {
				for (int k = 0; k < SIM_KIND_COUNT; k++) {
					s->stats.references[k] += counted[k];
					counted[k] = 0;
				}
				if (sim_region_marker(s, core, r, status) != 0) {
					rc = -1;
					break;
				}
				continue;
			}
			rc = plumb_fail(status, EINVAL, "trace record %zu has an unknown kind %u", i, r->kind);
			break;
		}
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		s->current_ip = (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS) ? r->instruction_address :
		                r->kind == TRACE_INSTRUCTION ? r->address : 0;
		sim_access_kind kind = kinds[r->kind];
		if (r->kind == TRACE_MODIFY && s->config.modify == SIM_MODIFY_WRITE)
			kind = SIM_WRITE;
		counted[kind]++;
		sim_one_reference(s, core, kind, r->address, size);
		if (r->kind == TRACE_MODIFY && s->config.modify == SIM_MODIFY_READ_WRITE) {
			counted[SIM_WRITE]++;
			sim_one_reference(s, core, SIM_WRITE, r->address, size);
		}
		if (s->failed) {
			rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s", i, s->failure);
			break;
		}
	}
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		s->stats.references[k] += counted[k];
	return rc;
}


/* Not the MRU loop's case: the records, expanded in small batches. */
int sim_compact_expanded(sim *s, trace_compact *c, plumb_status *status)
{
	trace_record records[512];
	size_t n = 0;
	for (const uint64_t *w = c->words; w < c->end;) {
		uint32_t id = (uint32_t)w[0];
		const trace_record *t = c->templates + c->first[id];
		size_t count = c->count[id];
		const uint64_t *d = w + 1;
		w = d + sim_use_data(w[0]);
		if (n + count > sizeof records / sizeof *records) {
			if (s->batch_loop(s, records, n, status) != 0)
				return -1;
			n = 0;
		}
		for (size_t i = 0; i < count; i++) {
			trace_record *r = &records[n++];
			*r = t[i];
			r->thread = c->thread;
			if (r->kind != TRACE_INSTRUCTION)
				r->address = *d++;
		}
	}
	return n ? s->batch_loop(s, records, n, status) : 0;
}

