/* plumbgrind: plumb's Valgrind tool.  Shared declarations of its parts:
 *   pg_main.c       registration, options, client requests, the summary at exit
 *   pg_threads.c    per-thread counts, named regions, the collection switch
 *   pg_instrument.c the IR instrumentation (counting inline, tracing by helper)
 *   pg_trace.c      the reference trace in lackey's text format
 *   pg_debuginfo.c  function, file and line of every instruction run (--plumb-code)
 *   pg_entries.c    the reference trace as binary records (definitions, uses,
 *                   threads, markers, calls) in the ring shared with plumb
 *   pg_filter.c     the L1s of a one-core machine, checked inline; only what they
 *                   do not settle goes into the ring
 *   pg_ring.c       the ring's transport: its blocks, the room for an entry, the
 *                   end (pg_entries.c and pg_filter.c write through it)
 *
 * Valgrind runs one guest thread at a time (the big lock), so the counts of
 * the running thread live in one global array, pg_live, that the instrumented
 * code increments inline, with no helper call.  When another thread starts
 * running client code its counts are swapped in (pg_threads.c).  A tool is a
 * static executable of its own, so these globals are the tool's state and
 * nothing else's. */
#ifndef PLUMBGRIND_H
#define PLUMBGRIND_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* The counters, in summary order. */
enum {
	PG_INSTRUCTIONS,
	PG_LOADS,
	PG_STORES,
	PG_MODIFIES,
	PG_BYTES_READ,
	PG_BYTES_WRITTEN,
	PG_COUNTERS
};
extern const HChar *const pg_counter_names[PG_COUNTERS];

/* The running thread's counts since it started. */
extern ULong pg_live[PG_COUNTERS];
/* Whether the instrumented code counts (a summary is written: not
 * --plumb-out=none, which plumb sim passes: it wants only the trace). */
extern Bool pg_counting;

/* Options. */
extern const HChar *pg_clo_out;       /* --plumb-out (may hold %p), NULL: plumbgrind.out.%p */
extern const HChar *pg_clo_trace;     /* --plumb-trace=FILE */
extern Long pg_clo_trace_fd;          /* --plumb-trace-fd=N, -1 if unset */
extern Bool pg_clo_collect;           /* --plumb-collect=yes|no: collecting at start */
extern const HChar *pg_clo_code;      /* --plumb-code=FILE: source attribution, NULL: none */
extern const HChar *pg_clo_ring;      /* --plumb-ring=MEMFD,FULLFD,FREEFD,BLOCKS,BLOCKBYTES */
extern const HChar *pg_clo_filter;    /* --plumb-filter=...: the L1s of a one-core machine (vg/pg_filter.h) */
extern Bool pg_clo_vector;            /* --plumb-vector=no: the filter's scalar path even with AVX-512 */
extern Bool pg_clo_calls;             /* --plumb-calls=yes: calls and returns into the ring */
extern Bool pg_clo_count_records;     /* --plumb-count-records=no: the ring's references not counted */

/* ---- pg_threads.c ---- */
void pg_threads_init(void);
void pg_thread_start_client_code(ThreadId tid, ULong blocks_dispatched);
void pg_thread_created(ThreadId parent, ThreadId child);
void pg_thread_exited(ThreadId tid);
/* The marker's own code (the magic no-ops and the request between them) is
 * left out of every region and collection window of the running thread. */
VG_REGPARM(0) void pg_marker_pause(void);
VG_REGPARM(0) void pg_marker_resume(void);
/* Client requests; name is already copied into tool memory.  They return a
 * message for a misuse (kept for the summary) or NULL. */
void pg_region_begin(ThreadId tid, const HChar *name);
void pg_region_end(ThreadId tid, const HChar *name);
void pg_collect(ThreadId tid, Bool on);
extern Bool pg_collecting;            /* the switch the trace helpers test */
/* Sequence number of the running thread (0 = main), for the trace. */
extern UInt pg_running_thread;
/* Writes the per-thread and per-region lines of the summary. */
typedef void (*pg_line_writer)(const HChar *line);
void pg_threads_report(pg_line_writer write_line);
/* Notes a misuse (mismatched end, bad name) for the summary's warning lines. */
void pg_warn(const HChar *format, ...) PRINTF_CHECK(1, 2);
/* The option's file (expanded), written whole through FILE.tmp.PID and a rename. */
void pg_write_file(const HChar *option, const HChar *value, const HChar *what, const HChar *data, SizeT length);

/* ---- pg_instrument.c ---- */

/* One pending event of a superblock (kinds as plumb's trace_kind). */
typedef enum { EVENT_INSTRUCTION, EVENT_LOAD, EVENT_STORE, EVENT_MODIFY } pg_event_kind;
typedef struct {
	pg_event_kind kind;
	IRExpr *address;
	Int size;
	IRExpr *guard;    /* NULL: always */
	Addr instruction; /* the guest instruction's address (its IMark) */
} pg_event;
/* Events per flush.  Larger than lackey's 4: merging is decided before a
 * flush, so the size of the list changes no count, and fewer flushes mean
 * fewer counter updates and ring checks. */
#define PG_EVENTS_MAX 16

/* IR the instrumentation of every part writes: a 64-bit constant; a new
 * temporary holding expression; an add of a constant to a 64-bit counter of
 * the tool, inline (load, add, store; the sum returned); a dirty helper
 * call, when guard (an I1 atom) holds or always when it is NULL. */
IRExpr *pg_ir_word(ULong value);
IRTemp pg_ir_assign(IRSB *out, IRType type, IRExpr *expression);
IRTemp pg_ir_add(IRSB *out, ULong *counter, ULong amount);
void pg_ir_call(IRSB *out, const HChar *name, void *function, IRExpr **arguments, Int regparms, IRExpr *guard);

IRSB *pg_instrument(VgCallbackClosure *closure, IRSB *sb_in, const VexGuestLayout *layout,
                    const VexGuestExtents *extents, const VexArchInfo *archinfo_host, IRType guest_word,
                    IRType host_word);

/* ---- pg_trace.c ---- */
extern Bool pg_tracing;               /* a trace is being written */
Bool pg_trace_open(void);             /* False after a message if the file cannot be opened */
void pg_trace_thread_switch(UInt thread);
void pg_trace_collect_changed(void);   /* pg_collecting changed */
extern Bool pg_trace_active;         /* tracing and collecting: the helpers write */
VG_REGPARM(2) void pg_trace_instruction(Addr address, SizeT size);
VG_REGPARM(2) void pg_trace_load(Addr address, SizeT size);
VG_REGPARM(2) void pg_trace_store(Addr address, SizeT size);
VG_REGPARM(2) void pg_trace_modify(Addr address, SizeT size);
void pg_trace_close(void);
void pg_trace_forget(void);           /* in a forked child: drop the parent's buffer, stop */
ULong pg_trace_records(void);
/* Region markers in the trace (pg_threads.c decides where). */
typedef struct {
	UInt offset; ULong flushes;         /* the text buffer's */
	ULong ring_sequence; Addr ring_cursor;   /* the binary ring's (pg_ring.c) */
} pg_trace_position;
#define PG_TRACE_REGION_LINE_MAX 320
pg_trace_position pg_trace_here(void);
/* Writes a marker of the running thread at `at` (a position taken in this
 * thread), or at the end when at is NULL or the buffer was flushed since. */
void pg_trace_region(Bool begin, const HChar *name, const pg_trace_position *at);
const HChar *pg_trace_error(void);    /* NULL, or why the trace stopped */

/* ---- pg_debuginfo.c ---- */
extern Bool pg_code_enabled;
void pg_code_init(void);
/* At translation: an instruction of the superblock being instrumented, in order. */
void pg_code_note(Addr address, UInt length);
void pg_code_block_end(void);
/* At exit, before the trace is closed. */
void pg_code_write(void);

/* ---- pg_entries.c: what goes into the ring ---- */
Bool pg_ring_open(void);              /* False after a message if --plumb-ring is unusable */
void pg_ring_collect_changed(void);
/* Emits the inline stores of one flushed event list (in order), a part of
 * its superblock's group; group_continues: a side exit or a full list, after
 * which the group goes on.  pg_ring_block_begin: a superblock starts. */
void pg_ring_emit(IRSB *out, const pg_event *events, Int count, Bool group_continues);
void pg_ring_block_begin(void);
VG_REGPARM(3) void pg_ring_single(Addr address, UWord size_kind, Addr instruction);
void pg_ring_thread_switch(UInt thread);   /* the running thread changed */
void pg_ring_close(void);
/* Where the next record goes; a region marker inserted at such a position. */
void pg_ring_here(ULong *sequence, Addr *cursor);
void pg_ring_region(Bool begin, const HChar *name, ULong at_sequence, Addr at_cursor, Bool at_given);
ULong pg_ring_records(void);
/* Calls and returns (--plumb-calls=yes with the ring): at the end of a
 * superblock left by a call, the call's instruction, its target and the
 * stack pointer after the call pushed the return address; at the end of one
 * left by a return, the stack pointer after it.  A shadow stack per thread
 * keyed on the stack pointer pops every frame the return (or a longjmp seen
 * at the next call or return) leaves, as callgrind unwinds. */
VG_REGPARM(3) void pg_ring_call(Addr site, Addr target, Addr sp);
VG_REGPARM(1) void pg_ring_return(Addr sp);
/* The most events one use holds (a superblock's group of parts). */
#define PG_RING_GROUP_MAX 64

/* ---- pg_ring.c: the ring's transport ---- */
extern Bool pg_ring_enabled;          /* the trace goes to plumb's shared ring as binary records */
extern Addr pg_ring_cursor, pg_ring_limit;
/* Maps the ring --plumb-ring names (pg_ring_enabled; True and nothing done
 * without the option); False after a message if it is unusable. */
Bool pg_ring_map(void);
ULong pg_ring_block_size(void);
Bool pg_ring_stopped(void);           /* an error, a fork or the end: nothing more is written */
VG_REGPARM(1) void pg_ring_room(UWord bytes);
/* Room for `words` in the ring whether or not collecting; returns where to
 * write, or NULL after an error.  pg_ring_done(n) then advances past the n
 * words written (at most `words`). */
ULong *pg_ring_reserve(UInt words);
void pg_ring_done(UInt words);
/* Collecting into the ring (not stopped, not switched off). */
extern Bool pg_ring_live;
void pg_ring_set_live(Bool now);      /* the collection switch, as pg_collecting changed */
/* Definition id has data data events and fetches fetches (the summary's count). */
void pg_ring_defined(UInt id, UInt data, UInt fetches);
/* Where the next entry goes (after making room for a marker's code), and
 * room for words at such a position (see pg_ring.c). */
void pg_ring_position(ULong *sequence, Addr *cursor);
ULong *pg_ring_reserve_at(UInt words, ULong at_sequence, Addr at_cursor, Bool at_given);
void pg_ring_finish(void);            /* the last block, the end word; closes the pipes */
void pg_ring_forget(void);            /* in a forked child */
/* Syscall wrappers: before an execve, plumb is told the program's name
 * (PLUMB_RING_EXEC), so that it can say which program the trace stopped at. */
void pg_ring_pre_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nArgs);
void pg_ring_post_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nArgs, SysRes res);
ULong pg_ring_counted(void);          /* references sent, without the filter */
const HChar *pg_ring_error(void);


/* ---- pg_filter.c ---- */
extern Bool pg_filter_enabled;         /* set by pg_filter_open, defined in pg_options.c */
Bool pg_filter_open(const HChar *option);   /* False: not a machine the model can be */
/* Instrumentation: a superblock starts; a flushed event list, in order. */
void pg_filter_block_begin(void);
void pg_filter_emit(IRSB *out, const pg_event *events, Int count);
/* A COUNTS entry of what the L1s settled since the last one (dropped when
 * not collecting): before every thread switch, marker, collection switch
 * and at the end. */
void pg_filter_counts(void);
ULong pg_filter_records(void);

#endif
