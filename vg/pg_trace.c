/* The reference trace, in the text format of valgrind --tool=lackey
 * --trace-mem=yes, so that plumb's lackey reader (and any other lackey
 * consumer) reads it unchanged:
 *   "I  ADDR,SIZE" an instruction fetch, " L ", " S ", " M " a load, store or
 *   modify; addresses in hex with at least 8 digits, sizes in decimal.
 * Threads are shown as Valgrind's --trace-sched=yes shows them, with a line
 * "--PID--   SCHED[n]: ..." before the first reference of thread n-1 after
 * a switch (n = plumb's thread number + 1; the main thread is 1 and needs no
 * line at the start).
 *
 * Lackey spends most of its time in VG_(printf) formatting every line; here
 * each line is written by hand into a 1 MiB buffer flushed with one write. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_vki.h"
#include "plumbgrind.h"

#define TRACE_BUFFER (1u << 20)
#define MARKER_ROOM (128u << 10)   /* kept free at a marker's first no-op */
#define TRACE_LINE_MAX 64

Bool pg_tracing;
Bool pg_trace_active;
static HChar *buffer;
static UInt used;
static Int trace_fd = -1;
static Bool close_fd;
static ULong records;
static UInt shown_thread;            /* the thread the reader believes is running */
static const HChar *error;
static HChar error_text[256];

static ULong flushes;                 /* how many times the buffer was emptied */

static void flush(void)
{
	UInt done = 0;
	flushes++;
	while (done < used && !error) {
		Int n = VG_(write)(trace_fd, buffer + done, (Int)(used - done));
		if (n <= 0) {
			/* The cause as strerror would say it, for the common ones. */
			const HChar *cause = n == 0 ? "no progress" : n == -VKI_ENOSPC ? "No space left on device"
			                   : n == -VKI_EFBIG ? "File too large"
			                   : n == -VKI_EPIPE ? "Broken pipe" : n == -VKI_EIO ? "Input/output error" : NULL;
			if (cause)
				VG_(snprintf)(error_text, sizeof error_text, "writing the trace failed: %s", cause);
			else
				VG_(snprintf)(error_text, sizeof error_text, "writing the trace failed: error %d", -n);
			error = error_text;
			pg_tracing = False;
			pg_trace_active = False;
			/* A descriptor comes from plumb, which reads the error from the
			 * summary and reports it in its own line; a file named with
			 * --plumb-trace is the user's, who hears it here. */
			if (close_fd)
				VG_(umsg)("plumbgrind: %s; the trace stops here\n", error);
		}
		done += (UInt)n;
	}
	used = 0;
}

Bool pg_trace_open(void)
{
	if (!pg_ring_open())
		return False;
	if (pg_clo_trace_fd >= 0) {
		trace_fd = (Int)pg_clo_trace_fd;
		close_fd = False;
	} else if (pg_clo_trace) {
		HChar *path = VG_(expand_file_name)("--plumb-trace", pg_clo_trace);
		trace_fd = VG_(fd_open)(path, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
		if (trace_fd < 0) {
			VG_(umsg)("plumbgrind: cannot create the trace file '%s'\n", path);
			return False;
		}
		close_fd = True;
	} else {
		return True;
	}
	buffer = VG_(malloc)("pg.trace", TRACE_BUFFER);
	pg_tracing = True;
	pg_trace_active = pg_collecting;
	return True;
}

void pg_trace_collect_changed(void)
{
	pg_ring_collect_changed();
	pg_trace_active = pg_tracing && pg_collecting;
}

static inline HChar *put_hex(HChar *p, ULong value)
{
	Int digits = 0;
	for (ULong v = value; v; v >>= 4)
		digits++;
	if (digits < 8)
		digits = 8;
	for (Int i = digits - 1; i >= 0; i--) {
		p[i] = "0123456789abcdef"[value & 15];
		value >>= 4;
	}
	return p + digits;
}

static inline HChar *put_decimal(HChar *p, ULong value)
{
	HChar digits[24];
	Int n = 0;
	do {
		digits[n++] = (HChar)('0' + value % 10);
		value /= 10;
	} while (value);
	while (n)
		*p++ = digits[--n];
	return p;
}

static inline void put_line(HChar c0, HChar c1, Addr address, SizeT size)
{
	if (!pg_trace_active)
		return;
	if (used > TRACE_BUFFER - TRACE_LINE_MAX)
		flush();
	HChar *p = buffer + used;
	p[0] = c0;
	p[1] = c1;
	p[2] = ' ';
	p = put_hex(p + 3, address);
	*p++ = ',';
	p = put_decimal(p, size);
	*p++ = '\n';
	used = (UInt)(p - buffer);
	records++;
}

void pg_trace_thread_switch(UInt thread)
{
	pg_ring_thread_switch(thread);
	if (!pg_tracing || thread == shown_thread)
		return;
	if (used > TRACE_BUFFER - 128)
		flush();
	used += VG_(sprintf)(buffer + used, "--%d--   SCHED[%u]: plumbgrind: thread %u runs\n", VG_(getpid)(),
	                     thread + 1, thread);
	shown_thread = thread;
}

/* ---- Region markers ----
 * "--PID--   REGION[begin]: NAME" / "REGION[end]: NAME", read by plumb's
 * lackey reader as markers of the current thread (docs/trace-format.md) and
 * skipped by other lackey readers as Valgrind messages.  To keep a marker's
 * own code out of the region, pg_threads.c writes an END at the position the
 * trace had at the marker's first no-op (pg_trace_here), inserting it before
 * the lines written since, and a BEGIN after the second no-op.  If the
 * buffer was flushed in between (a 1 MiB buffer filled inside a marker),
 * the line goes at the end instead. */
pg_trace_position pg_trace_here(void)
{
	/* Room for the marker's code before the next flush, as pg_ring_here
	 * makes in the ring: the marker then goes to its place in both, however
	 * the threads were interleaved before it. */
	if (buffer && pg_trace_active && !error && used > TRACE_BUFFER - MARKER_ROOM)
		flush();
	pg_trace_position at = { used, flushes, 0, 0 };
	pg_ring_here(&at.ring_sequence, &at.ring_cursor);
	return at;
}

void pg_trace_region(Bool begin, const HChar *name, const pg_trace_position *at)
{
	pg_ring_region(begin, name, at ? at->ring_sequence : 0, at ? at->ring_cursor : 0, at != NULL);
	if (!pg_tracing)
		return;
	HChar line[PG_TRACE_REGION_LINE_MAX];
	Int n = VG_(snprintf)(line, sizeof line, "--%d--   REGION[%s]: %s\n", VG_(getpid)(), begin ? "begin" : "end",
	                      name);
	if (n <= 0 || (UInt)n >= sizeof line)
		return;
	if (used + (UInt)n > TRACE_BUFFER)
		flush();
	UInt position = used;
	if (at && at->flushes == flushes && at->offset <= used)
		position = at->offset;
	VG_(memmove)(buffer + position + n, buffer + position, used - position);
	VG_(memcpy)(buffer + position, line, (SizeT)n);
	used += (UInt)n;
}

VG_REGPARM(2) void pg_trace_instruction(Addr address, SizeT size) { put_line('I', ' ', address, size); }
VG_REGPARM(2) void pg_trace_load(Addr address, SizeT size) { put_line(' ', 'L', address, size); }
VG_REGPARM(2) void pg_trace_store(Addr address, SizeT size) { put_line(' ', 'S', address, size); }
VG_REGPARM(2) void pg_trace_modify(Addr address, SizeT size) { put_line(' ', 'M', address, size); }

void pg_trace_close(void)
{
	pg_ring_close();
	if (!buffer)
		return;
	if (!error)
		flush();
	if (close_fd && trace_fd >= 0)
		VG_(close)(trace_fd);
	trace_fd = -1;
	pg_tracing = False;
	pg_trace_active = False;
}

void pg_trace_forget(void)
{
	/* A forked child must not repeat the parent's buffered lines, nor
	 * interleave its own with the parent's in the same file. */
	pg_ring_forget();
	used = 0;
	pg_tracing = False;
	pg_trace_active = False;
	if (close_fd && trace_fd >= 0)
		VG_(close)(trace_fd);
	trace_fd = -1;
}

/* With both a text trace and the ring (a test compares them), the text's. */
ULong pg_trace_records(void) { return buffer ? records : pg_ring_records(); }
const HChar *pg_trace_error(void) { return error ? error : pg_ring_error(); }
