/* Expands a preparation into the memory events it performs, and those
 * into trace records, so the simulator (or a counting harness) can replay
 * exactly what the real threads do. */
#include <stdbool.h>
#include "coherence/coherence.h"

static uint64_t line_address(const coherence_lines *lines, size_t i)
{
	return lines->base + (uint64_t)i * lines->spacing;
}

size_t coherence_plan_events(const coherence_plan *plan, const coherence_lines *lines, bool with_access,
                             coherence_access access, coherence_event *events, size_t capacity)
{
	size_t n = 0;
	for (int s = 0; s < plan->count; s++)
		for (size_t i = 0; i < lines->count; i++, n++)
			if (events && n < capacity)
				events[n] = (coherence_event){ .role = plan->steps[s].role, .op = plan->steps[s].op,
				                               .address = line_address(lines, i) };
	if (with_access)
		for (size_t i = 0; i < lines->count; i++, n++)
			if (events && n < capacity)
				events[n] = (coherence_event){
					.role = 0, .op = COHERENCE_OP_ACCESS, .access = (uint8_t)access,
					.address = line_address(lines, lines->order ? lines->order[i] : i) };
	return n;
}

static uint8_t access_kind(coherence_access access)
{
	switch (access) {
	case COHERENCE_ACCESS_LOAD: return TRACE_READ;
	case COHERENCE_ACCESS_STORE: return TRACE_WRITE;
	default: return TRACE_MODIFY;   /* locked read-modify-write */
	}
}

size_t coherence_events_to_trace(const coherence_event *events, size_t count, const uint32_t *role_thread,
                                 uint64_t evict_base, size_t evict_bytes, size_t line_bytes,
                                 trace_record *records, size_t capacity)
{
	size_t n = 0;
	size_t evict_lines = line_bytes ? evict_bytes / line_bytes : 0;
	for (size_t e = 0; e < count; e++) {
		const coherence_event *event = &events[e];
		uint32_t thread = role_thread ? role_thread[event->role] : event->role;
		trace_record record = { .thread = thread, .size = 8 };
		if (event->op == COHERENCE_OP_FLUSH) {
			/* One eviction sweep stands for the whole flush step: emit it at
			 * the step's first line only (consecutive flush events of one
			 * step share the role). */
			bool first_of_step = e == 0 || events[e - 1].op != COHERENCE_OP_FLUSH
			                     || events[e - 1].role != event->role;
			if (!first_of_step)
				continue;
			for (size_t i = 0; i < evict_lines; i++, n++)
				if (records && n < capacity) {
					record.address = evict_base + (uint64_t)i * line_bytes;
					record.kind = TRACE_WRITE;
					records[n] = record;
				}
			continue;
		}
		/* Writes go to the second word, as the real threads do, so the chain
		 * pointer in the first word survives. */
		bool second_word = event->op == COHERENCE_OP_WRITE
		                   || (event->op == COHERENCE_OP_ACCESS && event->access == COHERENCE_ACCESS_STORE);
		record.address = second_word ? event->address + 8 : event->address;
		record.kind = event->op == COHERENCE_OP_WRITE ? TRACE_WRITE
		              : event->op == COHERENCE_OP_READ ? TRACE_READ
		              : access_kind((coherence_access)event->access);
		if (records && n < capacity)
			records[n] = record;
		n++;
	}
	return n;
}
