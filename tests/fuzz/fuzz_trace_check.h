/* What every trace reader promises of a record it hands out (trace.h): a
 * reference has a kind up to TRACE_MODIFY and a size; a region marker has
 * size 0 and a name of 1 to TRACE_REGION_NAME_MAX bytes without control
 * characters; a collector marker (halt or lost) has size 0, flags 0 and an
 * end no earlier than its start.  Anything else is a reader bug. */
#ifndef PLUMB_FUZZ_TRACE_CHECK_H
#define PLUMB_FUZZ_TRACE_CHECK_H

#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"

static inline void fuzz_check_record(const trace_record *record)
{
	if (trace_is_marker(record)) {
		const char *name = trace_region_name(record);
		if (!name || record->size != 0)
			abort();
		/* the readers' own rule for names, asked of what they handed out */
		if (trace_region_name_problem(name, strnlen(name, TRACE_REGION_NAME_MAX + 1)))
			abort();
		return;
	}
	if (trace_is_collector_marker(record)) {
		/* the codec's own limits, asked of what it handed out */
		if (record->size != 0 || record->flags != 0 || trace_collector_end(record) < trace_collector_start(record) ||
		    trace_collector_index(record) > TRACE_COLLECTOR_INDEX_MAX)
			abort();
		return;
	}
	if (record->size == 0 || record->kind > TRACE_MODIFY)
		abort();
}

#endif
