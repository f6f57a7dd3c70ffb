/* Writers of the text formats.
 *
 * lackey: "I  %08lx,%u" and " L/S/M %08lx,%u" exactly as lackey prints them;
 * a change of thread is written as a Valgrind scheduler line
 * "--0--   SCHED[n]:  acquired lock (plumb)" (n = thread + 1), which plumb's
 * lackey reader turns back into the thread.  lackey has no field for an
 * instruction address other than the I lines, nor for time: those are not
 * written.
 *
 * din: "LABEL ADDRESS SIZE" with LABEL 0 read, 1 write, 2 fetch, hex address,
 * decimal size (a field Dinero ignores; plumb's reader uses it).  din has
 * no modify: an M record becomes a read and a write of the same bytes, in
 * that order (what a cache sees).  din has no threads: a record of any
 * thread but 0 is refused rather than silently merged.
 *
 * Region markers: lackey gets a message line "--0--   REGION[begin]: NAME"
 * (or end) that plumb's lackey reader turns back into the marker; din has
 * no place for them and drops them. */
#include <errno.h>
#include <stdlib.h>
#include "core/status.h"
#include "trace/trace_internal.h"

#define LINE_MAX_BYTES 96

int trace_writer_flush_text(trace_writer *writer, plumb_status *status)
{
	if (writer->text_length && fwrite(writer->text, 1, writer->text_length, writer->stream) != writer->text_length)
		return plumb_fail_errno(status, errno ? errno : EIO, "writing the trace");
	writer->text_length = 0;
	return 0;
}

char *trace_put_hex(char *p, uint64_t value, int min_digits)
{
	static const char digits[] = "0123456789abcdef";
	char reversed[16];
	int n = 0;
	do {
		reversed[n++] = digits[value & 15];
		value >>= 4;
	} while (value);
	while (n < min_digits)
		reversed[n++] = '0';
	while (n)
		*p++ = reversed[--n];
	return p;
}

char *trace_put_decimal(char *p, uint64_t value)
{
	char reversed[20];
	int n = 0;
	do {
		reversed[n++] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	while (n)
		*p++ = reversed[--n];
	return p;
}

static int text_finish(trace_writer *writer, plumb_status *status)
{
	return trace_writer_flush_text(writer, status);
}

static int text_buffer(trace_writer *writer, plumb_status *status)
{
	writer->text_capacity = TRACE_TEXT_BUFFER;
	writer->text = malloc(writer->text_capacity);
	if (!writer->text)
		return plumb_fail(status, ENOMEM, "out of memory for a trace writer");
	writer->finish = text_finish;
	return 0;
}

static int lackey_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status)
{
	static const char prefix[4][4] = { "I  ", " L ", " S ", " M " };
	for (size_t i = 0; i < count; i++) {
		const trace_record *r = &records[i];
		if (trace_is_collector_marker(r))
			continue;   /* lackey has no halts (plumb trace convert says how many were dropped) */
		if (trace_is_marker(r)) {
			/* a Valgrind-style message line: plumb's lackey reader reads it back */
			const char *name = trace_region_name(r);
			size_t length = strlen(name);
			if (trace_writer_text_room(writer, 2 * LINE_MAX_BYTES + length, status) < 0)
				return -1;
			char *p = writer->text + writer->text_length;
			if (r->thread != writer->text_thread) {
				static const char sched[] = "--0--   SCHED[";
				static const char acquired[] = "]:  acquired lock (plumb)\n";
				memcpy(p, sched, sizeof sched - 1);
				p = trace_put_decimal(p + sizeof sched - 1, (uint64_t)r->thread + 1);
				memcpy(p, acquired, sizeof acquired - 1);
				p += sizeof acquired - 1;
				writer->text_thread = r->thread;
			}
			const char *tag = r->kind == TRACE_REGION_BEGIN ? "--0--   REGION[begin]: " : "--0--   REGION[end]: ";
			memcpy(p, tag, strlen(tag));
			p += strlen(tag);
			memcpy(p, name, length);
			p += length;
			*p++ = '\n';
			writer->text_length = (size_t)(p - writer->text);
			continue;
		}
		if (trace_writer_text_room(writer, 2 * LINE_MAX_BYTES, status) < 0)
			return -1;
		char *p = writer->text + writer->text_length;
		if (r->thread != writer->text_thread) {
			static const char sched[] = "--0--   SCHED[";
			static const char acquired[] = "]:  acquired lock (plumb)\n";
			memcpy(p, sched, sizeof sched - 1);
			p = trace_put_decimal(p + sizeof sched - 1, (uint64_t)r->thread + 1);
			memcpy(p, acquired, sizeof acquired - 1);
			p += sizeof acquired - 1;
			writer->text_thread = r->thread;
		}
		memcpy(p, prefix[r->kind & 3], 3);
		p = trace_put_hex(p + 3, r->address, 8);
		*p++ = ',';
		p = trace_put_decimal(p, r->size);
		*p++ = '\n';
		writer->text_length = (size_t)(p - writer->text);
	}
	return 0;
}

static char *din_line(char *p, char label, const trace_record *r)
{
	*p++ = label;
	*p++ = ' ';
	p = trace_put_hex(p, r->address, 1);
	*p++ = ' ';
	p = trace_put_decimal(p, r->size);
	*p++ = '\n';
	return p;
}

static int din_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status)
{
	for (size_t i = 0; i < count; i++) {
		const trace_record *r = &records[i];
		if (trace_is_marker(r) || trace_is_collector_marker(r))
			continue;   /* din has no markers (plumb trace convert says how many were dropped) */
		if (r->thread != 0)
			return plumb_fail(status, EINVAL, "din has no thread field, and record %llu is of thread %u "
			                  "(fold the threads into one first)", (unsigned long long)(writer->records + i), r->thread);
		if (trace_writer_text_room(writer, 2 * LINE_MAX_BYTES, status) < 0)
			return -1;
		char *p = writer->text + writer->text_length;
		switch (r->kind) {
		case TRACE_INSTRUCTION: p = din_line(p, '2', r); break;
		case TRACE_READ: p = din_line(p, '0', r); break;
		case TRACE_WRITE: p = din_line(p, '1', r); break;
		default: p = din_line(din_line(p, '0', r), '1', r); break;
		}
		writer->text_length = (size_t)(p - writer->text);
	}
	return 0;
}

int trace_lackey_writer_init(trace_writer *writer, plumb_status *status)
{
	writer->write = lackey_write;
	return text_buffer(writer, status);
}

int trace_din_writer_init(trace_writer *writer, plumb_status *status)
{
	writer->write = din_write;
	return text_buffer(writer, status);
}
