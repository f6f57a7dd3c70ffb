/* The writer interface: atomic output files, record checks, batches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/output.h"
#include "core/status.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

int trace_writer_open(trace_writer **out, const char *path, trace_format format, plumb_status *status)
{
	*out = NULL;
	if (!path)
		return plumb_fail(status, EINVAL, "no output path given");
	bool to_stdout = strcmp(path, "-") == 0;
	if (format == TRACE_FORMAT_AUTO) {
		if (to_stdout)
			return plumb_fail(status, EINVAL, "writing a trace to standard output needs its format named");
		if (trace_format_from_path(path, &format, status) < 0)
			return -1;
	}
	trace_writer *writer = calloc(1, sizeof *writer);
	if (!writer)
		return plumb_fail(status, ENOMEM, "out of memory for a trace writer");
	writer->format = format;
	if (to_stdout) {
		writer->stream = stdout;
	} else {
		output_file *file = calloc(1, sizeof *file);
		if (!file) {
			free(writer);
			return plumb_fail(status, ENOMEM, "out of memory for a trace writer");
		}
		if (output_file_open(file, path, status) < 0) {
			free(file);
			free(writer);
			return -1;
		}
		writer->file = file;
		writer->stream = file->stream;
	}
	int result;
	switch (format) {
	case TRACE_FORMAT_NATIVE: result = trace_native_writer_init(writer, status); break;
	case TRACE_FORMAT_LACKEY: result = trace_lackey_writer_init(writer, status); break;
	case TRACE_FORMAT_DIN: result = trace_din_writer_init(writer, status); break;
	default: result = plumb_fail(status, EINVAL, "unknown trace format %d", (int)format); break;
	}
	if (result < 0) {
		trace_writer_abort(writer);
		return -1;
	}
	*out = writer;
	return 0;
}

int trace_writer_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status)
{
	if (!writer)
		return plumb_fail(status, EINVAL, "no trace writer");
	for (size_t i = 0; i < count; i++) {
		const trace_record *r = &records[i];
		if (trace_is_marker(r)) {
			const char *name = trace_region_name(r);
			const char *problem = name ? trace_region_name_problem(name, strnlen(name, TRACE_REGION_NAME_MAX + 1))
			                           : "no region name";
			if (problem)
				return plumb_fail(status, EINVAL, "trace record %llu is a region marker with %s",
				                  (unsigned long long)(writer->records + i), problem);
			continue;
		}
		if (trace_is_collector_marker(r)) {
			if (r->size != 0 || r->flags != 0 || trace_collector_end(r) < trace_collector_start(r))
				return plumb_fail(status, EINVAL, "trace record %llu is a collector marker with bad fields",
				                  (unsigned long long)(writer->records + i));
			continue;
		}
		if (r->kind > TRACE_MODIFY || r->size == 0 || (r->flags & ~(TRACE_HAS_INSTRUCTION_ADDRESS | TRACE_HAS_TIME)))
			return plumb_fail(status, EINVAL, "trace record %llu is invalid (kind %u, size %u, flags 0x%x)",
			                  (unsigned long long)(writer->records + i), r->kind, r->size, r->flags);
	}
	if (writer->write(writer, records, count, status) < 0)
		return -1;
	writer->records += count;
	return 0;
}

static void writer_free(trace_writer *writer)
{
	if (writer->destroy)
		writer->destroy(writer);
	free(writer->text);
	free(writer->file);
	free(writer);
}

int trace_writer_close(trace_writer *writer, plumb_status *status)
{
	if (!writer)
		return 0;
	if (writer->finish(writer, status) < 0) {
		trace_writer_abort(writer);
		return -1;
	}
	int result = 0;
	if (writer->file) {
		result = output_file_commit(writer->file, status);
	} else if (fflush(writer->stream) != 0) {
		result = plumb_fail_errno(status, errno, "writing the trace to standard output");
	}
	writer_free(writer);
	return result;
}

void trace_writer_abort(trace_writer *writer)
{
	if (!writer)
		return;
	if (writer->file)
		output_file_abort(writer->file);
	else
		fflush(writer->stream);
	writer_free(writer);
}
