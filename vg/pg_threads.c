/* Per-thread counts, named regions and the collection switch.
 *
 * Each guest thread gets a record when it first runs, numbered in order of
 * creation (0 = the main thread).  Valgrind reuses thread ids after a thread
 * exits; a new thread on a reused id gets a new record, so the summary never
 * mixes two threads.
 *
 * A region or collection window keeps the counts and the "excluded" counts
 * (the markers' own code) of its thread at its start; its value at the end
 * is the growth of the first minus the growth of the second.  So the markers
 * cost nothing per memory reference: only the requests do work. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "plumbgrind.h"

const HChar *const pg_counter_names[PG_COUNTERS] = {
	"instructions", "loads", "stores", "modifies", "bytes_read", "bytes_written"
};

ULong pg_live[PG_COUNTERS];

typedef struct {
	ULong counts[PG_COUNTERS];
	ULong excluded[PG_COUNTERS];
} pg_window;

typedef struct pg_region {
	HChar *name;
	ULong entries;
	ULong counts[PG_COUNTERS];
	struct pg_region *next;
} pg_region;

typedef struct {
	HChar *name;
	pg_window start;
} pg_open_region;

typedef struct pg_thread {
	UInt sequence;
	ThreadId tid;
	Int lwp;                       /* the kernel's thread id, 0 until it runs */
	Bool exited;
	ULong counts[PG_COUNTERS];     /* valid while the thread is not running */
	ULong excluded[PG_COUNTERS];
	Bool paused;
	ULong paused_at[PG_COUNTERS];
	pg_trace_position trace_at_pause;  /* where the trace was at the marker's first no-op */
	HChar *pending_begin;          /* a BEGIN written to the trace after the marker's second no-op */
	pg_open_region *stack;
	UInt depth, stack_capacity;
	pg_region *regions, **regions_tail;
	Bool collect_open;
	pg_window collect_start;
	ULong collected[PG_COUNTERS];
	struct pg_thread *next;
} pg_thread;

static pg_thread **by_tid;            /* VG_N_THREADS entries */
static pg_thread *all_threads, **all_threads_tail = &all_threads;
static UInt thread_count;
static pg_thread *running;

#define PG_WARNINGS_KEPT 64
static HChar *warnings[PG_WARNINGS_KEPT];
static ULong warning_count;

void pg_warn(const HChar *format, ...)
{
	if (warning_count++ >= PG_WARNINGS_KEPT)
		return;
	HChar text[512];
	va_list arguments;
	va_start(arguments, format);
	VG_(vsnprintf)(text, sizeof text, format, arguments);
	va_end(arguments);
	warnings[warning_count - 1] = VG_(strdup)("pg.warning", text);
}

static pg_thread *thread_new(ThreadId tid)
{
	pg_thread *thread = VG_(calloc)("pg.thread", 1, sizeof *thread);
	thread->sequence = thread_count++;
	thread->tid = tid;
	thread->regions_tail = &thread->regions;
	*all_threads_tail = thread;
	all_threads_tail = &thread->next;
	if (pg_collecting)
		thread->collect_open = True;   /* a window from zero */
	by_tid[tid] = thread;
	return thread;
}

static pg_thread *thread_of(ThreadId tid)
{
	tl_assert(tid > 0 && tid < VG_N_THREADS);
	return by_tid[tid] ? by_tid[tid] : thread_new(tid);
}

void pg_threads_init(void)
{
	by_tid = VG_(calloc)("pg.threads", VG_N_THREADS, sizeof *by_tid);
}

/* The running thread's counts are in pg_live; save them before another
 * thread's are loaded. */
static void switch_to(pg_thread *thread)
{
	if (running == thread)
		return;
	if (running)
		VG_(memcpy)(running->counts, pg_live, sizeof pg_live);
	running = thread;
	VG_(memcpy)(pg_live, thread->counts, sizeof pg_live);
	pg_running_thread = thread->sequence;
	if (pg_tracing || pg_ring_enabled)
		pg_trace_thread_switch(thread->sequence);
}

void pg_thread_start_client_code(ThreadId tid, ULong blocks_dispatched)
{
	pg_thread *thread = thread_of(tid);
	if (thread->lwp == 0)
		thread->lwp = VG_(gettid)();
	switch_to(thread);
}

void pg_thread_created(ThreadId parent, ThreadId child)
{
	/* A reused id: the old thread has exited (pg_thread_exited dropped it). */
	tl_assert(child > 0 && child < VG_N_THREADS);
	by_tid[child] = NULL;
	thread_new(child);
}

/* What a request sees as "now": inside a marker, the counts at its first
 * no-op, so the marker's code counts for neither side of the boundary. */
static void counts_now(const pg_thread *thread, ULong out[PG_COUNTERS])
{
	const ULong *source = thread->paused ? thread->paused_at : thread == running ? pg_live : thread->counts;
	VG_(memcpy)(out, source, sizeof(ULong) * PG_COUNTERS);
}

static void window_open(const pg_thread *thread, pg_window *window)
{
	counts_now(thread, window->counts);
	VG_(memcpy)(window->excluded, thread->excluded, sizeof window->excluded);
}

static void window_close(const pg_thread *thread, const pg_window *window, ULong total[PG_COUNTERS])
{
	ULong now[PG_COUNTERS];
	counts_now(thread, now);
	for (Int i = 0; i < PG_COUNTERS; i++)
		total[i] += (now[i] - window->counts[i]) - (thread->excluded[i] - window->excluded[i]);
}

void pg_thread_exited(ThreadId tid)
{
	if (tid <= 0 || tid >= VG_N_THREADS || !by_tid[tid])
		return;
	pg_thread *thread = by_tid[tid];
	if (running == thread) {
		VG_(memcpy)(thread->counts, pg_live, sizeof pg_live);
		running = NULL;
		VG_(memset)(pg_live, 0, sizeof pg_live);
	}
	if (thread->collect_open) {
		window_close(thread, &thread->collect_start, thread->collected);
		thread->collect_open = False;
	}
	thread->exited = True;
	by_tid[tid] = NULL;
}

VG_REGPARM(0) void pg_marker_pause(void)
{
	if (!running || running->paused)
		return;
	running->paused = True;
	VG_(memcpy)(running->paused_at, pg_live, sizeof pg_live);
	if (pg_tracing || pg_ring_enabled)
		running->trace_at_pause = pg_trace_here();
}

VG_REGPARM(0) void pg_marker_resume(void)
{
	if (!running || !running->paused)
		return;
	running->paused = False;
	for (Int i = 0; i < PG_COUNTERS; i++)
		running->excluded[i] += pg_live[i] - running->paused_at[i];
	if (running->pending_begin) {
		pg_trace_region(True, running->pending_begin, NULL);
		VG_(free)(running->pending_begin);
		running->pending_begin = NULL;
	}
}

static pg_region *region_find(pg_thread *thread, const HChar *name)
{
	for (pg_region *region = thread->regions; region; region = region->next)
		if (VG_(strcmp)(region->name, name) == 0)
			return region;
	pg_region *region = VG_(calloc)("pg.region", 1, sizeof *region);
	region->name = VG_(strdup)("pg.region.name", name);
	*thread->regions_tail = region;
	thread->regions_tail = &region->next;
	return region;
}

void pg_region_begin(ThreadId tid, const HChar *name)
{
	pg_thread *thread = thread_of(tid);
	if (thread->depth == thread->stack_capacity) {
		thread->stack_capacity = thread->stack_capacity ? 2 * thread->stack_capacity : 8;
		thread->stack = VG_(realloc)("pg.stack", thread->stack, thread->stack_capacity * sizeof *thread->stack);
	}
	pg_open_region *open = &thread->stack[thread->depth++];
	open->name = VG_(strdup)("pg.open.name", name);
	window_open(thread, &open->start);
	/* The trace gets the marker where the region's count starts: after the
	 * marker's code (at its second no-op) when inside one. */
	if (pg_tracing || pg_ring_enabled) {
		if (thread == running && thread->paused) {
			if (thread->pending_begin)
				VG_(free)(thread->pending_begin);
			thread->pending_begin = VG_(strdup)("pg.pending", name);
		} else {
			pg_trace_region(True, name, NULL);
		}
	}
}

/* The END goes where the region's count stops: before the marker's code. */
static void trace_end(pg_thread *thread, const HChar *name)
{
	if (pg_tracing || pg_ring_enabled)
		pg_trace_region(False, name, thread == running && thread->paused ? &thread->trace_at_pause : NULL);
}

void pg_region_end(ThreadId tid, const HChar *name)
{
	pg_thread *thread = thread_of(tid);
	trace_end(thread, name);   /* the simulator applies the same rules to a mismatched END */
	if (thread->depth == 0) {
		pg_warn("thread %u: region end \"%s\" without a begin", thread->sequence, name);
		return;
	}
	pg_open_region *open = &thread->stack[thread->depth - 1];
	if (VG_(strcmp)(open->name, name) != 0) {
		pg_warn("thread %u: region end \"%s\" while \"%s\" is the innermost open region (ignored)",
		        thread->sequence, name, open->name);
		return;
	}
	pg_region *region = region_find(thread, name);
	window_close(thread, &open->start, region->counts);
	region->entries++;
	VG_(free)(open->name);
	thread->depth--;
}

void pg_collect(ThreadId tid, Bool on)
{
	if (on == pg_collecting)
		return;
	pg_collecting = on;
	for (pg_thread *thread = all_threads; thread; thread = thread->next) {
		if (thread->exited)
			continue;
		if (on) {
			window_open(thread, &thread->collect_start);
			thread->collect_open = True;
		} else if (thread->collect_open) {
			window_close(thread, &thread->collect_start, thread->collected);
			thread->collect_open = False;
		}
	}
	pg_trace_collect_changed();
}

static void format_counts(HChar *p, const ULong counts[PG_COUNTERS])
{
	for (Int i = 0; i < PG_COUNTERS; i++)
		p += VG_(sprintf)(p, " %llu", counts[i]);
}

void pg_threads_report(pg_line_writer write_line)
{
	if (running)
		VG_(memcpy)(running->counts, pg_live, sizeof pg_live);
	ULong total[PG_COUNTERS] = { 0 };
	for (pg_thread *thread = all_threads; thread; thread = thread->next)
		for (Int i = 0; i < PG_COUNTERS; i++)
			total[i] += thread->counts[i];
	HChar line[1024];
	VG_(strcpy)(line, "total");
	format_counts(line + VG_(strlen)(line), total);
	write_line(line);
	for (pg_thread *thread = all_threads; thread; thread = thread->next) {
		VG_(sprintf)(line, "thread %u %d", thread->sequence, thread->lwp);
		format_counts(line + VG_(strlen)(line), thread->counts);
		write_line(line);
	}
	for (pg_thread *thread = all_threads; thread; thread = thread->next) {
		if (thread->collect_open) {
			window_close(thread, &thread->collect_start, thread->collected);
			thread->collect_open = False;
		}
		VG_(sprintf)(line, "collected %u", thread->sequence);
		format_counts(line + VG_(strlen)(line), thread->collected);
		write_line(line);
	}
	for (pg_thread *thread = all_threads; thread; thread = thread->next)
		for (pg_region *region = thread->regions; region; region = region->next) {
			VG_(sprintf)(line, "region %u %llu", thread->sequence, region->entries);
			format_counts(line + VG_(strlen)(line), region->counts);
			VG_(snprintf)(line + VG_(strlen)(line), 300, " %s", region->name);
			write_line(line);
		}
	for (pg_thread *thread = all_threads; thread; thread = thread->next)
		for (UInt i = 0; i < thread->depth; i++)
			pg_warn("thread %u: region \"%s\" still open at exit (not counted)", thread->sequence,
			        thread->stack[i].name);
	for (ULong i = 0; i < warning_count && i < PG_WARNINGS_KEPT; i++) {
		VG_(snprintf)(line, sizeof line, "warning %s", warnings[i]);
		write_line(line);
	}
	if (warning_count > PG_WARNINGS_KEPT) {
		VG_(sprintf)(line, "warning %llu more warnings not kept", warning_count - PG_WARNINGS_KEPT);
		write_line(line);
	}
}
