/* Copying a trace from a reader to a writer (plumb trace convert, filter
 * and record): the optional filter, thread folding and bounded buffer on
 * the way, what the target format cannot carry counted exactly, a signal
 * that stops the copy at a safe point, and the code map beside the output;
 * then the copy's report and its notes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/interrupt.h"
#include "trace/trace_copy.h"

#define BATCH 4096

static double seconds_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void trace_losses_count(trace_losses *loss, trace_format to, const trace_record *records, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const trace_record *r = &records[i];
		if (to == TRACE_FORMAT_NATIVE)
			continue;
		if (trace_is_collector_marker(r)) {
			loss->collector_dropped++;
			continue;
		}
		if (trace_is_marker(r)) {
			if (to == TRACE_FORMAT_DIN)
				loss->markers_dropped++;
			continue;
		}
		if (r->flags & TRACE_HAS_TIME)
			loss->times++;
		if (to == TRACE_FORMAT_DIN) {
			if (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS)
				loss->instruction_addresses++;
			if (r->kind == TRACE_MODIFY)
				loss->modifies_split++;
			continue;
		}
		/* lackey: an instruction address survives only as "the I line before". */
		if (r->thread != loss->lackey_thread) {
			loss->lackey_thread = r->thread;
			loss->lackey_have_fetch = false;
		}
		if (r->kind == TRACE_INSTRUCTION) {
			loss->lackey_last_fetch = r->address;
			loss->lackey_have_fetch = true;
		}
		bool has = r->flags & TRACE_HAS_INSTRUCTION_ADDRESS;
		bool kept = loss->lackey_have_fetch ? has && r->instruction_address == loss->lackey_last_fetch : !has;
		if (!kept)
			loss->instruction_addresses++;
	}
}

static int pause_traced_program(void *context, int stop, plumb_status *status)
{
	return trace_reader_pause_program(context, stop, status);
}

/* A halt's drain, cut short by SIGINT, SIGTERM or SIGHUP: a slow drain rate
 * can make a halt last hours, and the user must still be able to stop. */
static void sleep_unless_interrupted(void *context, uint64_t ns)
{
	(void)context;
	while (ns > 0 && !interrupt_pending()) {
		uint64_t step = ns < 100000000u ? ns : 100000000u;
		struct timespec t = { 0, (long)step };
		nanosleep(&t, NULL);
		ns -= step;
	}
}

/* Closes both ends after a successful copy: plumbgrind's names of the
 * program's code go beside the trace (OUT.code). */
static int finish(trace_reader *reader, trace_writer *writer, const char *out, trace_copy_result *result,
                  plumb_status *status)
{
	trace_code_map *code_map = NULL;
	char code_path[4096];
	if (strcmp(out, "-") != 0 && trace_reader_code_map(reader, &code_map, status) < 0) {
		trace_writer_abort(writer);
		trace_reader_close(reader, NULL);
		return -1;
	}
	if (trace_reader_close(reader, status) < 0) {
		trace_writer_abort(writer);
		trace_code_map_free(code_map);
		return -1;
	}
	if (trace_writer_close(writer, status) < 0) {
		trace_code_map_free(code_map);
		return -1;
	}
	if (!code_map)
		return 0;
	/* Never OUT.code beside a device or FIFO (/dev/null.code in /dev). */
	if (!output_path_takes_siblings(out)) {
		result->code_map_skipped = true;
		trace_code_map_free(code_map);
		return 0;
	}
	int saved = trace_code_map_path_for(out, code_path, sizeof code_path)
	            ? trace_code_map_save(code_map, code_path, status)
	            : plumb_fail(status, ENAMETOOLONG, "%s.code: name too long", out);
	trace_code_map_free(code_map);
	return saved != 0 ? -1 : 0;
}

int trace_copy(trace_reader *reader, trace_writer *writer, const char *out, trace_format to,
               const trace_copy_options *options, trace_copy_result *result, plumb_status *status)
{
	memset(result, 0, sizeof *result);
	if (to == TRACE_FORMAT_AUTO)
		trace_format_from_path(out, &to, NULL);
	result->to = to;
	trace_buffer *buffer = NULL;
	if (options->buffer) {
		trace_buffer_hooks hooks = { pause_traced_program, NULL, sleep_unless_interrupted, reader };
		if (trace_buffer_new(&buffer, options->buffer, &hooks, writer, status) < 0) {
			trace_writer_abort(writer);
			trace_reader_close(reader, NULL);
			return -1;
		}
	}
	trace_record *batch = malloc(BATCH * sizeof *batch);
	trace_losses *loss = &result->losses;
	double start = seconds_now();
	long n = 0;
	int failed = batch == NULL;
	if (failed)
		plumb_fail(status, ENOMEM, "out of memory");
	/* On SIGINT, SIGTERM or SIGHUP the copy stops between batches and the
	 * trace is finished and committed (docs/trace.md): it holds every
	 * record read before the signal, and reads without --allow-truncated. */
	/* plumbgrind's entries go into a native file as they are (format 1.3);
	 * a buffer, a filter or folding needs the records */
	bool entries = !buffer && !options->filter && !options->fold_threads &&
	               trace_writer_can_take_entries(writer, reader);
	interrupt_poll_begin();
	while (!failed && !interrupt_pending() &&
	       (n = entries ? trace_writer_take_entries(writer, reader, status)
	                    : trace_reader_read(reader, batch, BATCH, status)) > 0) {
		if (entries) {
			result->records += (uint64_t)n;
			continue;
		}
		if (options->filter)
			n = (long)trace_filter_apply(options->filter, batch, (size_t)n, &result->filtered);
		if (options->fold_threads)
			for (long i = 0; i < n; i++)
				if (batch[i].thread) {
					batch[i].thread = 0;
					loss->threads_folded++;
				}
		trace_losses_count(loss, to, batch, (size_t)n);
		if ((buffer ? trace_buffer_take(buffer, batch, (size_t)n, status)
		            : trace_writer_write(writer, batch, (size_t)n, status)) < 0)
			failed = 1;
		result->records += (uint64_t)n;
	}
	bool interrupted = interrupt_pending();
	if (n < 0 && !interrupted)
		failed = 1;
	free(batch);
	/* what the buffer still holds (wrap) and the last loss go in before the end */
	if (buffer && !failed && trace_buffer_finish(buffer, status) < 0)
		failed = 1;
	if (buffer)
		trace_buffer_get_totals(buffer, &result->buffer);
	trace_buffer_free(buffer);
	trace_reader_get_info(reader, &result->info);
	result->from = trace_reader_format(reader);
	if (interrupted && !failed) {
		result->interrupted = true;
		int closed = trace_writer_close(writer, status);
		/* Stops and reaps a program being traced; its fate is no error here. */
		trace_reader_close(reader, NULL);
		interrupt_poll_end();
		return closed < 0 ? -1 : 0;
	}
	interrupt_poll_end();
	if (failed) {
		trace_writer_abort(writer);
		trace_reader_close(reader, NULL);
		return -1;
	}
	if (finish(reader, writer, out, result, status) != 0)
		return -1;
	result->seconds = seconds_now() - start;
	return 0;
}

void trace_copy_write_notes(const trace_copy_result *result, const char *prefix, FILE *stream)
{
	const trace_losses *loss = &result->losses;
	const char *name = trace_format_name(result->to);
	if (loss->times)
		fprintf(stream, "%s: note: %s has no time field: %llu records' times were dropped\n", prefix, name,
		        (unsigned long long)loss->times);
	if (loss->instruction_addresses)
		fprintf(stream, "%s: note: %s could not keep the instruction address of %llu records\n", prefix, name,
		        (unsigned long long)loss->instruction_addresses);
	if (loss->modifies_split)
		fprintf(stream, "%s: note: din has no modify: %llu modify records were written as a read and a write\n",
		        prefix, (unsigned long long)loss->modifies_split);
	if (loss->markers_dropped)
		fprintf(stream, "%s: note: din has no region markers: %llu markers were dropped\n", prefix,
		        (unsigned long long)loss->markers_dropped);
	if (loss->collector_dropped)
		fprintf(stream, "%s: note: %s has no halt or loss markers: %llu were dropped\n", prefix, name,
		        (unsigned long long)loss->collector_dropped);
	if (loss->threads_folded)
		fprintf(stream, "%s: note: %llu records of threads other than 0 were written as thread 0\n", prefix,
		        (unsigned long long)loss->threads_folded);
	if (result->info.skipped)
		fprintf(stream, "%s: note: %llu din flush records (label 4) were skipped\n", prefix,
		        (unsigned long long)result->info.skipped);
	if (result->info.truncated)
		fprintf(stream, "%s: warning: the input was cut short; %llu bytes of an incomplete block were ignored\n",
		        prefix, (unsigned long long)result->info.truncated_bytes);
	if (result->code_map_skipped)
		fprintf(stream, "%s: note: the code map (names of the program's code) is not written beside the trace, "
		        "which is not a regular file\n", prefix);
	if (result->buffer.region_markers_lost)
		fprintf(stream, "%s: note: wrap keeps references only: %llu region markers were dropped\n", prefix,
		        (unsigned long long)result->buffer.region_markers_lost);
}

static void buffer_table(output_report *report, const trace_buffer_options *options, const trace_buffer_totals *t)
{
	output_table *table = output_table_add(report, "buffer", "Trace buffer");
	output_column(table, "capacity", NULL, 0);
	output_column(table, "when_full", NULL, 0);
	output_column(table, "references", NULL, 0);
	output_column(table, "kept", NULL, 0);
	output_column(table, "halts", NULL, 0);
	output_column(table, "halted_seconds", "s", 3);
	output_column(table, "dropped", NULL, 0);
	output_row(table);
	output_cell_integer(table, (int64_t)options->capacity);
	output_cell_text(table, trace_when_full_name(options->when_full));
	output_cell_integer(table, (int64_t)t->offered);
	output_cell_integer(table, (int64_t)t->kept);
	output_cell_integer(table, (int64_t)t->halts);
	output_cell_real(table, 1e-9 * (double)t->halted_ns);
	output_cell_integer(table, (int64_t)t->lost);
}

output_report *trace_copy_report(const char *command, const char *input, const char *out,
                                 const trace_copy_options *options, const trace_copy_result *result)
{
	output_report *report = output_report_new(command);
	output_meta_text(report, "input", input);
	output_meta_text(report, "output", out);
	output_table *table = output_table_add(report, "conversion", "Conversion");
	output_column(table, "from", NULL, 0);
	output_column(table, "to", NULL, 0);
	output_column(table, "records", NULL, 0);
	output_column(table, "input_bytes", "B", 0);
	output_column(table, "seconds", "s", 3);
	output_column(table, "rate", "Mrecords/s", 1);
	output_row(table);
	output_cell_text(table, trace_format_name(result->from));
	output_cell_text(table, trace_format_name(result->to));
	output_cell_integer(table, (int64_t)result->records);
	output_cell_integer(table, (int64_t)result->info.bytes);
	output_cell_real(table, result->seconds);
	if (result->seconds > 0)
		output_cell_real(table, (double)result->records / result->seconds / 1e6);
	else
		output_cell_status(table, "n/a", "too short to time");
	if (options->buffer)
		buffer_table(report, options->buffer, &result->buffer);
	if (options->filter) {
		output_table *removed = output_table_add(report, "filter", "Removed");
		output_column(removed, "references_in", NULL, 0);
		output_column(removed, "references_removed", NULL, 0);
		output_column(removed, "markers_removed", NULL, 0);
		output_row(removed);
		output_cell_integer(removed, (int64_t)result->filtered.references_in);
		output_cell_integer(removed, (int64_t)result->filtered.references_dropped);
		output_cell_integer(removed, (int64_t)result->filtered.markers_dropped);
	}
	return report;
}

int trace_reader_open_recording(trace_reader **out, char *const program[], const trace_buffer_options *buffer,
                                plumb_status *status)
{
	/* With a buffer, Valgrind's ring has two blocks of about N/16 entries
	 * (4 to 512 KiB): the program cannot run more than two blocks (some N/4
	 * references, at least about 2000) past the buffer's N-th reference
	 * before it is stopped. */
	size_t ring_block = 0;
	if (buffer) {
		uint64_t bytes = buffer->capacity / 2 / 4096 * 4096;
		ring_block = bytes < 4096 ? 4096 : bytes > (512u << 10) ? (512u << 10) : (size_t)bytes;
	}
	return trace_reader_open_command_blocks(out, program, NULL, buffer ? 2 : 0, ring_block, status);
}
