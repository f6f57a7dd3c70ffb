/* The public trace API: plumb_trace_record is trace_record, field for field. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "api_internal.h"
#include "trace/trace.h"

_Static_assert(sizeof(plumb_trace_record) == sizeof(trace_record) &&
               offsetof(plumb_trace_record, address) == offsetof(trace_record, address) &&
               offsetof(plumb_trace_record, instruction_address) == offsetof(trace_record, instruction_address) &&
               offsetof(plumb_trace_record, time) == offsetof(trace_record, time) &&
               offsetof(plumb_trace_record, thread) == offsetof(trace_record, thread) &&
               offsetof(plumb_trace_record, size) == offsetof(trace_record, size) &&
               offsetof(plumb_trace_record, kind) == offsetof(trace_record, kind) &&
               offsetof(plumb_trace_record, flags) == offsetof(trace_record, flags),
               "the public trace record is the internal one");
_Static_assert((int)PLUMB_TRACE_REGION_END == (int)TRACE_REGION_END && (int)PLUMB_TRACE_MODIFY == (int)TRACE_MODIFY &&
               PLUMB_TRACE_HAS_TIME == TRACE_HAS_TIME &&
               PLUMB_TRACE_HAS_INSTRUCTION_ADDRESS == TRACE_HAS_INSTRUCTION_ADDRESS,
               "the public trace kinds and flags are the internal ones");

int plumb_trace_open(plumb_trace_reader **out, const char *path, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!out || !path)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_trace_open: no path"), &status));
	trace_reader *reader;
	if (trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status) != 0)
		return api_error(error, &status);
	*out = (plumb_trace_reader *)reader;
	return 0;
}

long plumb_trace_read(plumb_trace_reader *reader, plumb_trace_record *records, size_t capacity, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!reader || (!records && capacity > 0))
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_trace_read: no reader or no room"), &status));
	long n = trace_reader_read((trace_reader *)reader, (trace_record *)records, capacity, &status);
	return n >= 0 ? n : api_error(error, &status);
}

int plumb_trace_close(plumb_trace_reader *reader, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!reader)
		return 0;
	return trace_reader_close((trace_reader *)reader, &status) == 0 ? 0 : api_error(error, &status);
}

const char *plumb_trace_region_name(const plumb_trace_record *record)
{
	if (!record || !trace_is_marker((const trace_record *)record))
		return NULL;
	return trace_region_name((const trace_record *)record);
}

int plumb_trace_create(plumb_trace_writer **out, const char *path, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!out || !path)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_trace_create: no path"), &status));
	trace_writer *writer;
	if (trace_writer_open(&writer, path, TRACE_FORMAT_AUTO, &status) != 0)
		return api_error(error, &status);
	*out = (plumb_trace_writer *)writer;
	return 0;
}

int plumb_trace_write(plumb_trace_writer *writer, const plumb_trace_record *records, size_t count,
                      plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!writer || (!records && count > 0))
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_trace_write: no writer or records"), &status));
	return trace_writer_write((trace_writer *)writer, (const trace_record *)records, count, &status) == 0
	       ? 0 : api_error(error, &status);
}

int plumb_trace_finish(plumb_trace_writer *writer, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!writer)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_trace_finish: no writer"), &status));
	return trace_writer_close((trace_writer *)writer, &status) == 0 ? 0 : api_error(error, &status);
}

void plumb_trace_abort(plumb_trace_writer *writer)
{
	if (writer)
		trace_writer_abort((trace_writer *)writer);
}
