/* plumb trace stats: reading a whole trace into its statistics
 * (trace_stats.c), and the report of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "core/output.h"
#include "trace/trace_stats.h"

#define BATCH 4096

static double seconds_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int trace_stats_read(trace_stats *stats, const char *path, trace_format from, bool allow_truncated,
                     trace_stats_reading *reading, plumb_status *status)
{
	double start = seconds_now();
	trace_reader *reader;
	if (trace_reader_open(&reader, path, from, status) < 0)
		return -1;
	trace_reader_allow_truncated(reader, allow_truncated);
	trace_record *batch = malloc(BATCH * sizeof *batch);
	long n = -1;
	if (batch)
		while ((n = trace_reader_read(reader, batch, BATCH, status)) > 0)
			if (trace_stats_add(stats, batch, (size_t)n, status) < 0) {
				n = -1;
				break;
			}
	reading->seconds = seconds_now() - start;
	free(batch);
	trace_reader_get_info(reader, &reading->info);
	reading->format = trace_reader_format(reader);
	if (n < 0) {
		if (!batch)
			plumb_fail(status, ENOMEM, "out of memory");
		trace_reader_close(reader, NULL);
		return -1;
	}
	return trace_reader_close(reader, status) < 0 ? -1 : 0;
}

static void hex_cell(output_table *table, uint64_t value)
{
	char text[32];
	snprintf(text, sizeof text, "0x%llx", (unsigned long long)value);
	output_cell_text(table, text);
}

static void distinct_row(output_table *table, const char *what, uint64_t unit, const trace_distinct *set)
{
	bool exact;
	uint64_t count = trace_distinct_count(set, &exact);
	output_row(table);
	output_cell_text(table, what);
	output_cell_integer(table, (int64_t)unit);
	output_cell_integer(table, (int64_t)count);
	output_cell_integer(table, (int64_t)(count * unit));
	output_cell_text(table, exact ? "exact" : "estimate (HyperLogLog, about 1%)");
}

output_report *trace_stats_report(const char *path, const trace_stats *s, const trace_stats_reading *reading)
{
	static const char *const kind_names[4] = { "instruction", "read", "write", "modify" };
	const trace_reader_info *info = &reading->info;
	trace_format format = reading->format;
	double seconds = reading->seconds;
	uint64_t line_size = 1ull << s->line_shift, page_size = 1ull << s->page_shift;
	output_report *report = output_report_new("trace stats");
	output_meta_text(report, "trace", path);
	output_meta_text(report, "format", trace_format_name(format));
	output_meta_integer(report, "line_size", (int64_t)line_size);
	output_meta_integer(report, "page_size", (int64_t)page_size);
	if (s->region_markers)
		output_meta_integer(report, "region_markers", (int64_t)s->region_markers);
	/* what a bounded buffer did to the recording (plumb trace record --buffer) */
	output_meta_integer(report, "records", (int64_t)s->records);
	output_meta_integer(report, "halts", (int64_t)s->halts);
	output_meta_real(report, "halted_seconds", 1e-9 * (double)s->halted_ns);
	output_meta_integer(report, "dropped", (int64_t)s->lost);
	if (s->halts) {
		/* a buffer ends at every halt, and the references after the last one fill one more */
		output_meta_integer(report, "buffers", (int64_t)(s->halts + (s->after_last_halt > 0)));
		output_meta_real(report, "references_per_buffer", (double)s->drained / (double)s->halts);
	}

	output_table *t = output_table_add(report, "kinds", "References by kind");
	output_column(t, "kind", NULL, 0);
	output_column(t, "references", NULL, 0);
	output_column(t, "bytes", "B", 0);
	output_column(t, "share", "%", 2);
	for (int k = 0; k < 4; k++) {
		output_row(t);
		output_cell_text(t, kind_names[k]);
		output_cell_integer(t, (int64_t)s->by_kind[k]);
		output_cell_integer(t, (int64_t)s->bytes_by_kind[k]);
		if (s->records)
			output_cell_real(t, 100.0 * (double)s->by_kind[k] / (double)s->records);
		else
			output_cell_status(t, "n/a", "the trace has no references");
	}
	output_row(t);
	output_cell_text(t, "total");
	output_cell_integer(t, (int64_t)s->records);
	output_cell_integer(t, (int64_t)(s->bytes_by_kind[0] + s->bytes_by_kind[1] + s->bytes_by_kind[2] + s->bytes_by_kind[3]));
	if (s->records)
		output_cell_real(t, 100.0);
	else
		output_cell_status(t, "n/a", "the trace has no references");

	t = output_table_add(report, "threads", "References by thread");
	output_column(t, "thread", NULL, 0);
	for (int k = 0; k < 4; k++)
		output_column(t, kind_names[k], NULL, 0);
	output_column(t, "total", NULL, 0);
	for (size_t i = 0; i < s->thread_count; i++) {
		const trace_thread_counts *c = &s->threads[i];
		output_row(t);
		output_cell_integer(t, c->thread);
		for (int k = 0; k < 4; k++)
			output_cell_integer(t, (int64_t)c->by_kind[k]);
		output_cell_integer(t, (int64_t)(c->by_kind[0] + c->by_kind[1] + c->by_kind[2] + c->by_kind[3]));
	}

	t = output_table_add(report, "footprint", "Distinct lines and pages touched");
	output_column(t, "unit", NULL, 0);
	output_column(t, "size", "B", 0);
	output_column(t, "distinct", NULL, 0);
	output_column(t, "bytes", "B", 0);
	output_column(t, "counting", NULL, 0);
	distinct_row(t, "line", line_size, &s->lines);
	distinct_row(t, "page", page_size, &s->pages);

	t = output_table_add(report, "ranges", "Address ranges");
	output_column(t, "stream", NULL, 0);
	output_column(t, "lowest", NULL, 0);
	output_column(t, "highest", NULL, 0);
	output_column(t, "span", "B", 0);
	for (int side = 0; side < 2; side++) {
		output_row(t);
		output_cell_text(t, side ? "data" : "instruction");
		if (!s->seen[side]) {
			const char *reason = side ? "no data references in the trace" : "no instruction fetches in the trace";
			output_cell_status(t, "n/a", reason);
			output_cell_status(t, "n/a", reason);
			output_cell_status(t, "n/a", reason);
			continue;
		}
		hex_cell(t, s->min_address[side]);
		hex_cell(t, s->max_address[side]);
		uint64_t span = s->max_address[side] - s->min_address[side];
		if (span >= (uint64_t)INT64_MAX)
			output_cell_status(t, "overflow", "the span does not fit a signed 64-bit integer");
		else
			output_cell_integer(t, (int64_t)span + 1);
	}

	t = output_table_add(report, "sizes", "Reference sizes");
	output_column(t, "size", "B", 0);
	output_column(t, "references", NULL, 0);
	for (int b = 0; b < TRACE_STATS_SIZE_BUCKETS; b++) {
		output_row(t);
		if (b == TRACE_STATS_SIZE_BUCKETS - 1)
			output_cell_text(t, "other");
		else {
			char text[8];
			snprintf(text, sizeof text, "%d", 1 << b);
			output_cell_text(t, text);
		}
		output_cell_integer(t, (int64_t)s->sizes[b]);
	}
	output_row(t);
	output_cell_text(t, "line-straddling");
	output_cell_integer(t, (int64_t)s->line_straddles);

	t = output_table_add(report, "input", "Reading");
	output_column(t, "records", NULL, 0);
	output_column(t, "bytes", "B", 0);
	output_column(t, "bytes_per_record", "B", 2);
	output_column(t, "seconds", "s", 3);
	output_column(t, "throughput", "Mrecords/s", 1);   /* reading and these statistics together */
	output_row(t);
	output_cell_integer(t, (int64_t)s->records);
	output_cell_integer(t, (int64_t)info->bytes);
	if (s->records)
		output_cell_real(t, (double)info->bytes / (double)s->records);
	else
		output_cell_status(t, "n/a", "the trace has no references");
	output_cell_real(t, seconds);
	if (seconds > 0 && s->records)
		output_cell_real(t, (double)s->records / seconds / 1e6);
	else
		output_cell_status(t, "n/a", "too short to time");

	output_note(report, "%llu references carry an instruction address, %llu a time",
	            (unsigned long long)s->with_instruction_address, (unsigned long long)s->with_time);
	if (format == TRACE_FORMAT_NATIVE)
		output_note(report, "native trace: %llu blocks%s", (unsigned long long)info->blocks,
		            info->complete ? ", end marker present" : "");
	if (info->truncated)
		output_note(report, "the trace was cut short: %llu bytes of an incomplete block were ignored",
		            (unsigned long long)info->truncated_bytes);
	if (info->thread_switches)
		output_note(report, "lackey: %llu thread switches from SCHED lines", (unsigned long long)info->thread_switches);
	if (info->skipped)
		output_note(report, "din: %llu flush records (label 4) skipped", (unsigned long long)info->skipped);
	if (info->unknown_as_read)
		output_note(report, "din: %llu records of unknown type (label 3) counted as reads",
		            (unsigned long long)info->unknown_as_read);
	if (s->halts)
		output_note(report, "%llu halts drained %llu references (a buffer of %.0f); %llu references came after the "
		            "last halt", (unsigned long long)s->halts, (unsigned long long)s->drained,
		            (double)s->drained / (double)s->halts, (unsigned long long)s->after_last_halt);
	if (s->lost_markers)
		output_note(report, "%llu references were lost in %llu run%s (the buffer was full)",
		            (unsigned long long)s->lost, (unsigned long long)s->lost_markers, s->lost_markers == 1 ? "" : "s");
	if (s->with_time)
		output_note(report, "time runs from %llu to %llu", (unsigned long long)s->first_time,
		            (unsigned long long)s->last_time);
	return report;
}

