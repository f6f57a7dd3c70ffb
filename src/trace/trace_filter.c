/* Removing a tracer's own records from a trace: its halt and loss markers,
 * and the references that fall in its code's and data's address ranges. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/parse.h"
#include "core/status.h"
#include "trace/trace.h"

static int parse_address(const char *text, const char *end, uint64_t *out)
{
	if (text == end || end - text > 40)
		return -1;
	char copy[48];
	memcpy(copy, text, (size_t)(end - text));
	copy[end - text] = 0;
	if (copy[0] == ' ')
		return -1;
	/* Decimal unless written 0x, as every number plumb reads: "010" is ten. */
	return parse_u64(copy, 0, UINT64_MAX, out, NULL);
}

int trace_filter_add_range(trace_filter *filter, const char *text, plumb_status *status)
{
	if (filter->range_count == TRACE_FILTER_RANGES_MAX)
		return plumb_fail(status, EINVAL, "at most %d address ranges", TRACE_FILTER_RANGES_MAX);
	const char *dash = strchr(text, '-');
	uint64_t low, high;
	if (!dash || parse_address(text, dash, &low) < 0 || parse_address(dash + 1, dash + strlen(dash), &high) < 0)
		return plumb_fail(status, EINVAL, "'%s' is not an address range LOW-HIGH (such as 0x400000-0x401000)", text);
	if (high <= low)
		return plumb_fail(status, EINVAL, "the range '%s' is empty: its end must be above its start", text);
	filter->low[filter->range_count] = low;
	filter->high[filter->range_count] = high;
	filter->range_count++;
	return 0;
}

static int in_ranges(const trace_filter *filter, uint64_t address)
{
	for (size_t k = 0; k < filter->range_count; k++)
		if (address >= filter->low[k] && address < filter->high[k])
			return 1;
	return 0;
}

size_t trace_filter_apply(const trace_filter *filter, trace_record *records, size_t count, trace_filter_counts *counts)
{
	size_t kept = 0;
	for (size_t i = 0; i < count; i++) {
		const trace_record *r = &records[i];
		bool drop = false;
		if (trace_is_collector_marker(r)) {
			drop = filter->drop_collector_markers;
			counts->markers_dropped += drop;
		} else if (trace_is_reference(r)) {
			counts->references_in++;
			drop = in_ranges(filter, r->address) ||
			       ((r->flags & TRACE_HAS_INSTRUCTION_ADDRESS) && in_ranges(filter, r->instruction_address));
			counts->references_dropped += drop;
		}
		if (!drop)
			records[kept++] = *r;
	}
	return kept;
}
