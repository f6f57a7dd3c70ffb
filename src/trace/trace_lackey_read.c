/* Reader of Valgrind lackey output (valgrind --tool=lackey --trace-mem=yes).
 *
 * Lackey prints "I  ADDR,SIZE" for an instruction fetch, then " L", " S" or
 * " M" lines for that instruction's loads, stores and modifies; addresses are
 * hex, sizes decimal.  Lackey has no thread field.  With --trace-sched=yes
 * Valgrind interleaves "--PID--   SCHED[n]: ..." lines into the same stream,
 * in order; since Valgrind runs one thread at a time, every reference after a
 * SCHED[n] line belongs to Valgrind thread n, which becomes plumb thread n-1.
 * Without SCHED lines everything is thread 0.  Other "==PID==" and "--PID--"
 * lines are Valgrind's messages and are skipped; any other line is an error
 * (a program's own output mixed into the log would otherwise be guessed at).
 * A data reference carries the address of the I line before it as its
 * instruction address, unless a thread switch came in between.
 * A program that forks without exec keeps tracing in the child into the same
 * log; the two processes' references cannot be told apart (their lines carry
 * no PID), so a message line with a second PID is an error.
 * Region markers (plumbgrind, plumb's lackey writer) are message lines too,
 * "--PID--   REGION[begin]: NAME" and "--PID--   REGION[end]: NAME" (NAME
 * is the rest of the line): the current thread enters or leaves NAME.  Other
 * lackey readers skip them as Valgrind messages.  The scheduler's
 * "SCHEDSETJMP(...)" lines, printed without a prefix around a signal's
 * delivery, are messages too; lackey's "==PID== Exit code:" line says the
 * program exited (trace_reader_close refuses a run that exec'd another
 * program, whose trace ends without it). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/status.h"
#include "trace/trace_internal.h"

static int lackey_error(trace_reader *reader, const unsigned char *line, const unsigned char *line_end,
                        const char *what)
{
	char quoted[200];
	return plumb_fail(&reader->failure, EINVAL, "%s: lackey line %llu: %s: '%s'", reader->input.name,
	                  (unsigned long long)reader->text.line, what,
	                  trace_quote_line(line, line_end, quoted, sizeof quoted));
}

static int lackey_sched(trace_reader *reader, const unsigned char *line, const unsigned char *line_end)
{
	static const char tag[] = "SCHED[";
	const unsigned char *p = memmem(line, (size_t)(line_end - line), tag, sizeof tag - 1);
	if (!p)
		return 0;   /* another Valgrind message */
	p += sizeof tag - 1;
	uint64_t tid = 0;
	const unsigned char *digits = p;
	while (p < line_end && *p >= '0' && *p <= '9' && tid <= UINT32_MAX)
		tid = tid * 10 + (uint64_t)(*p++ - '0');
	if (p == digits || p >= line_end || *p != ']' || tid == 0 || tid > UINT32_MAX)
		return lackey_error(reader, line, line_end, "bad SCHED thread number");
	uint32_t thread = (uint32_t)(tid - 1);
	if (thread != reader->text.thread) {
		reader->text.thread = thread;
		reader->text.have_fetch = false;
		reader->info.thread_switches++;
	}
	return 0;
}

/* A region marker line: 1 with the marker in *record, 0 if the line is
 * another message, -1 on a bad name. */
static int lackey_region(trace_reader *reader, const unsigned char *line, const unsigned char *line_end,
                         trace_record *record)
{
	const unsigned char *p = line + 2;
	while (p < line_end && *p >= '0' && *p <= '9')
		p++;
	if (line_end - p < 2 || p[0] != '-' || p[1] != '-')
		return 0;
	p += 2;
	while (p < line_end && *p == ' ')
		p++;
	static const char begin[] = "REGION[begin]: ", end[] = "REGION[end]: ";
	size_t left = (size_t)(line_end - p);
	int is_begin;
	if (left >= sizeof begin - 1 && memcmp(p, begin, sizeof begin - 1) == 0) {
		is_begin = 1;
		p += sizeof begin - 1;
	} else if (left >= sizeof end - 1 && memcmp(p, end, sizeof end - 1) == 0) {
		is_begin = 0;
		p += sizeof end - 1;
	} else {
		return 0;
	}
	size_t length = (size_t)(line_end - p);
	const char *problem = trace_region_name_problem((const char *)p, length);
	if (!problem && memchr(p, 0, length))
		problem = "a NUL byte in a region name";
	if (problem)
		return lackey_error(reader, line, line_end, problem);
	const char *name = trace_names_intern(&reader->names, (const char *)p, length);
	if (!name)
		return plumb_fail(&reader->failure, ENOMEM, "out of memory for a region name");
	trace_region_marker(record, is_begin, reader->text.thread, name);
	return 1;
}

/* The PID of a "==PID==" or "--PID--" line; 0 if the line has none. */
static uint64_t message_pid(const unsigned char *line, const unsigned char *line_end)
{
	uint64_t pid = 0;
	const unsigned char *p = line + 2;
	while (p < line_end && *p >= '0' && *p <= '9' && pid < (1ull << 40))
		pid = pid * 10 + (uint64_t)(*p++ - '0');
	if (p + 1 < line_end && p[0] == line[0] && p[1] == line[1])
		return pid;
	return 0;
}

static int check_pid(trace_reader *reader, const unsigned char *line, const unsigned char *line_end)
{
	uint64_t pid = message_pid(line, line_end);
	if (pid == 0)
		return 0;
	if (reader->text.pid == 0)
		reader->text.pid = pid;
	else if (pid != reader->text.pid) {
		char what[160];
		snprintf(what, sizeof what, "a second process (PID %llu after %llu) writes to this trace; a forked "
		         "child's references cannot be told from its parent's", (unsigned long long)pid,
		         (unsigned long long)reader->text.pid);
		return lackey_error(reader, line, line_end, what);
	}
	return 0;
}

static int lackey_line(trace_reader *reader, const unsigned char *line, const unsigned char *line_end,
                       trace_record *record)
{
	size_t length = (size_t)(line_end - line);
	if (length >= 4 && line[2] == ' ') {
		int kind = -1;
		if (line[0] == 'I' && line[1] == ' ')
			kind = TRACE_INSTRUCTION;
		else if (line[0] == ' ')
			kind = line[1] == 'L' ? TRACE_READ : line[1] == 'S' ? TRACE_WRITE : line[1] == 'M' ? TRACE_MODIFY : -1;
		if (kind >= 0) {
			const unsigned char *p = line + 3;
			uint64_t address;
			uint16_t size;
			if (trace_parse_hex(&p, line_end, &address) < 0 || p >= line_end || *p != ',')
				return lackey_error(reader, line, line_end, "bad address");
			p++;
			if (trace_parse_size(&p, line_end, &size) < 0 || p != line_end)
				return lackey_error(reader, line, line_end, "bad size (want 1..65535 and nothing after it)");
			/* The simulator would split such an access at 2^64 and count one line
			 * where the trace names bytes beyond the end of the address space. */
			if (address > UINT64_MAX - (size - 1u))
				return lackey_error(reader, line, line_end, "the access runs past the end of the 64-bit "
				                    "address space");
			record->address = address;
			record->size = size;
			record->kind = (uint8_t)kind;
			record->thread = reader->text.thread;
			record->time = 0;
			if (kind == TRACE_INSTRUCTION) {
				reader->text.last_fetch_address = address;
				reader->text.have_fetch = true;
			}
			if (reader->text.have_fetch) {
				record->instruction_address = reader->text.last_fetch_address;
				record->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
			} else {
				record->instruction_address = 0;
				record->flags = 0;
			}
			return 1;
		}
	}
	if (length == 0)
		return 0;
	if (length >= 2 && line[0] == '=' && line[1] == '=') {
		/* lackey's last words when the program exits: a trace without them
		 * ended at an exec (or a crash of valgrind) */
		static const char exit_line[] = "Exit code:";
		if (memmem(line, length, exit_line, sizeof exit_line - 1))
			reader->text.exited = true;
		return check_pid(reader, line, line_end);
	}
	/* --trace-sched=yes prints this one without the --PID-- prefix when a
	 * signal is delivered (Valgrind's scheduler.c) */
	static const char setjmp_line[] = "SCHEDSETJMP(";
	if (length >= sizeof setjmp_line - 1 && !memcmp(line, setjmp_line, sizeof setjmp_line - 1))
		return 0;
	if (length >= 2 && line[0] == '-' && line[1] == '-') {
		if (check_pid(reader, line, line_end) < 0)
			return -1;
		int marker = lackey_region(reader, line, line_end, record);
		return marker != 0 ? marker : lackey_sched(reader, line, line_end);
	}
	return lackey_error(reader, line, line_end, "not a lackey trace line (log the trace with --log-file or --log-fd)");
}

static long lackey_read(trace_reader *reader, trace_record *records, size_t capacity)
{
	return trace_text_read(reader, lackey_line, records, capacity);
}

int trace_lackey_reader_init(trace_reader *reader, plumb_status *status)
{
	(void)status;
	reader->read = lackey_read;
	return 0;
}
