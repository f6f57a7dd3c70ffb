/* What plumbgrind writes into the ring it shares with plumb (the ring's
 * transport, its blocks and the room for an entry, is pg_ring.c; this file
 * calls it and the L1 filter, pg_filter.c, and neither calls this file).
 *
 * What cachegrind does for its simulator, done for plumb's: everything about
 * a flushed event list that is known when the superblock is instrumented
 * (each event's kind, size and instruction address, an instruction fetch's
 * address) is sent once, as a numbered definition; at run time a flush writes
 * only the definition's number and the data addresses.  Entries (the tag in
 * the first word's top 4 bits, never split across blocks):
 *   DEFINE  2<<60 | n<<32 | id, then n words iaddr | size<<48 | kind<<62
 *           (ids count up from 0, in order; written when instrumenting)
 *   USE     1<<60 | data<<32 | id, then the data addresses: one per data
 *           event of the definition, data of them (so that plumb steps
 *           from a use to the next without looking its definition up)
 *   THREAD  3<<60 | thread: the references that follow are this thread's
 *   SINGLE  4<<60 | kind<<16 | size, address, iaddr: one reference (a guarded
 *           load or store, or an event a definition cannot hold)
 *   MARKER  5<<60 | begin<<56 | length<<32 | thread, then the name, 8 bytes
 *           a word, zero-padded (a region marker, pg_threads.c places it)
 *   CALL    6<<60, call instruction, target: the running thread called
 *           (--plumb-calls=yes only)
 *   RETURN  7<<60 | n: the running thread left its n innermost calls
 * plumb's records are those its lackey reader makes of the text trace of the
 * same run (pg_trace.c); a test compares them record by record.
 *
 * A flush (pg_ring_emit) is inline code with no helper call: load the cursor,
 * call pg_ring_room only if the entry does not fit before the limit (a guarded
 * call), store the entry's words and the advanced cursor; a superblock's parts
 * across its side exits make one use ("Groups", below).  While not
 * collecting (and after an error, or in a forked child) the cursor and limit
 * point at a private scratch area (pg_ring.c), so the same code writes there
 * and pg_ring_room resets the cursor: no test in the common path. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "plumbgrind.h"
#include "trace/ring_format.h"

/* The words' tags (src/trace/ring_format.h) */
#define TAG_USE ((ULong)PLUMB_RING_USE)
#define TAG_DEFINE ((ULong)PLUMB_RING_DEFINE)
#define TAG_THREAD ((ULong)PLUMB_RING_THREAD)
#define TAG_SINGLE ((ULong)PLUMB_RING_SINGLE)
#define TAG_MARKER ((ULong)PLUMB_RING_MARKER)
#define TAG_CALL ((ULong)PLUMB_RING_CALL)
#define TAG_RETURN ((ULong)PLUMB_RING_RETURN)
#define TAG_SHIFT PLUMB_RING_TAG_SHIFT
/* The most events a group holds (see "Groups" below; plumb takes up to 255
 * in a definition) */
#define GROUP_MAX PG_RING_GROUP_MAX

static UInt next_id;                 /* the next definition's number */
static UInt shown_thread;            /* the thread the stream is at */

Bool pg_ring_open(void)
{
	if (!pg_ring_map())
		return False;
	if (!pg_ring_enabled)
		return True;
	if (pg_clo_filter) {
		if (pg_clo_calls || pg_ring_block_size() < 65536 || !pg_filter_open(pg_clo_filter)) {
			VG_(umsg)("plumbgrind: --plumb-filter=%s: not a machine the tool's L1s can be%s\n", pg_clo_filter,
			          pg_clo_calls ? " (with --plumb-calls)" : "");
			return False;
		}
	}
	pg_ring_collect_changed();
	return True;
}

VG_REGPARM(3) void pg_ring_single(Addr address, UWord size_kind, Addr instruction)
{
	if (!pg_ring_live)
		return;
	ULong *w = pg_ring_reserve(3);
	if (!w)
		return;
	w[0] = TAG_SINGLE << TAG_SHIFT | (ULong)size_kind;
	w[1] = address;
	w[2] = instruction;
	pg_ring_done(3);
}

/* The shadow call stacks, one per Valgrind thread: each frame's stack
 * pointer at the callee's entry (the return address's slot).  Calls and
 * returns are sent while not collecting too (like definitions), so that the
 * stream's calls and returns stay paired. */
typedef struct { Addr *sp; UInt depth, capacity; } call_stack;
static call_stack *call_stacks;      /* indexed by ThreadId, grown on demand */
static UInt call_stack_count;

static call_stack *running_stack(void)
{
	ThreadId tid = VG_(get_running_tid)();
	if (tid >= call_stack_count) {
		UInt count = tid + 16;
		call_stacks = VG_(realloc)("pg.calls", call_stacks, count * sizeof *call_stacks);
		VG_(memset)(call_stacks + call_stack_count, 0, (count - call_stack_count) * sizeof *call_stacks);
		call_stack_count = count;
	}
	return &call_stacks[tid];
}

/* Pops the frames a stack pointer of sp has left (their slot lies below it,
 * or at it for a new call: a longjmp out of them). */
static void unwind(call_stack *st, Addr sp, Bool at_call)
{
	UInt popped = 0;
	while (st->depth > 0 && (st->sp[st->depth - 1] < sp || (at_call && st->sp[st->depth - 1] == sp))) {
		st->depth--;
		popped++;
	}
	if (popped == 0)
		return;
	ULong *w = pg_ring_reserve(1);
	if (!w)
		return;
	w[0] = TAG_RETURN << TAG_SHIFT | popped;
	pg_ring_done(1);
}

VG_REGPARM(3) void pg_ring_call(Addr site, Addr target, Addr sp)
{
	call_stack *st = running_stack();
	if (!st)
		return;
	unwind(st, sp, True);
	if (st->depth == st->capacity) {
		UInt capacity = st->capacity ? 2 * st->capacity : 64;
		st->sp = VG_(realloc)("pg.calls", st->sp, capacity * sizeof *st->sp);
		st->capacity = capacity;
	}
	st->sp[st->depth++] = sp;
	ULong *w = pg_ring_reserve(3);
	if (!w)
		return;
	w[0] = TAG_CALL << TAG_SHIFT;
	w[1] = site;
	w[2] = target;
	pg_ring_done(3);
}

VG_REGPARM(1) void pg_ring_return(Addr sp)
{
	call_stack *st = running_stack();
	if (st)
		unwind(st, sp, False);
}

void pg_ring_thread_switch(UInt thread)
{
	if (thread == shown_thread)
		return;
	if (pg_filter_enabled && !pg_ring_stopped())
		pg_filter_counts();   /* the counts before the switch are the thread's */
	ULong *w = pg_ring_reserve(1);
	if (!w)
		return;
	w[0] = TAG_THREAD << TAG_SHIFT | thread;
	pg_ring_done(1);
	shown_thread = thread;
}

void pg_ring_collect_changed(void)
{
	if (!pg_ring_enabled || pg_ring_stopped())
		return;
	Bool now = pg_collecting;
	if (now == pg_ring_live)
		return;
	/* the filter's counts up to the switch, for exact per-window figures;
	 * at the switch on, what its inline code counted while off is dropped */
	if (pg_filter_enabled)
		pg_filter_counts();
	pg_ring_set_live(now);
}

void pg_ring_close(void)
{
	if (!pg_ring_enabled)
		return;
	if (pg_filter_enabled && !pg_ring_stopped())
		pg_filter_counts();
	pg_ring_finish();
}

/* ---- Region markers ----
 * pg_threads.c decides where a marker goes, as for the text (pg_trace.c): an
 * END at the position the ring had at the marker's first no-op, moving the
 * words written since (entries are whole there: the no-op's helper runs after
 * a flush), unless a block was sent in between (then at the end). */
void pg_ring_here(ULong *at_sequence, Addr *at_cursor)
{
	if (pg_filter_enabled && !pg_ring_stopped())
		pg_filter_counts();
	pg_ring_position(at_sequence, at_cursor);
}

void pg_ring_region(Bool begin, const HChar *name, ULong at_sequence, Addr at_cursor, Bool at_given)
{
	SizeT length = VG_(strlen)(name);
	if (length == 0 || length > 255)
		return;
	UInt words = 1 + (UInt)(length + 7) / 8;
	if (pg_filter_enabled && !pg_ring_stopped())
		pg_filter_counts();   /* the counts before the marker's position (pg_ring_here's, or now) */
	ULong *w = pg_ring_reserve_at(words, at_sequence, at_cursor, at_given);
	if (!w)
		return;
	w[0] = TAG_MARKER << TAG_SHIFT | (ULong)(begin ? 1 : 0) << 56 | (ULong)length << 32 | pg_running_thread;
	w[words - 1] = 0;
	VG_(memcpy)(w + 1, name, length);
	pg_ring_done(words);
}

ULong pg_ring_records(void) { return pg_filter_enabled ? pg_filter_records() : pg_ring_counted(); }

/* ---- The instrumentation ---- */

/* Sends a definition of these events; returns its number. */
static Bool define(const pg_event *events, Int count, UInt *id_out)
{
	ULong *w = pg_ring_reserve(1 + (UInt)count);
	if (!w)
		return False;
	UInt id = next_id++, data = 0;
	w[0] = TAG_DEFINE << TAG_SHIFT | (ULong)count << 32 | id;
	for (Int i = 0; i < count; i++) {
		w[1 + i] = (ULong)events[i].instruction | (ULong)events[i].size << 48 | (ULong)events[i].kind << 62;
		data += events[i].kind != EVENT_INSTRUCTION;
	}
	pg_ring_done(1 + (UInt)count);
	pg_ring_defined(id, data, (UInt)count - data);
	*id_out = id;
	return True;
}

static void emit_single(IRSB *out, const pg_event *e)
{
	pg_ir_call(out, "pg_ring_single", pg_ring_single,
	           mkIRExprVec_3(e->address, mkIRExpr_HWord((HWord)((UInt)e->size | (UInt)e->kind << 16)),
	                         mkIRExpr_HWord((HWord)e->instruction)),
	           3, e->guard);
}

/* ---- Groups: one use for a superblock's parts across its side exits ----
 * A superblock's event list is flushed at every side exit; most exits are
 * not taken, and a use per flushed part made plumb's loop pay its per-use
 * work (the definition, its fetch lines, the counts) again for the part
 * after each exit not taken.  So the parts of a superblock are one group:
 * the room for its largest use is made once, its data addresses are stored
 * one after the other after the header word as the parts are flushed, and
 * each part's end stores the header of the definition of everything up to
 * it (a prefix of the group's events) and the cursor past its data.  A
 * later part overwrites both; the exit taken, or the block's end, leaves the
 * last.  A fault in mid-part loses that part's references, as it did when
 * each part was its own use.
 * A group is closed (in the instrumentation) before anything that may write
 * to the ring: a guarded event's SINGLE, a marker's helper, the call and
 * return entries after the block; it holds at most GROUP_MAX events. */
static struct {
	pg_event events[GROUP_MAX];
	Int count, data;
	Int ended;                   /* events in the use the cursor is past */
	IRTemp base;                 /* the group's header word (the cursor at its start) */
	Bool open;
} group;

/* Inline: room for the group's largest use, and the cursor as its base. */
static void open_group(IRSB *out)
{
	ULong need = 8ull * (1 + GROUP_MAX);
	IRExpr *cursor_at = mkIRExpr_HWord((HWord)&pg_ring_cursor);
	IRTemp cursor = pg_ir_assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, cursor_at));
	IRTemp limit = pg_ir_assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&pg_ring_limit)));
	IRTemp end = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(cursor), pg_ir_word(need)));
	IRTemp full = pg_ir_assign(out, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(limit), IRExpr_RdTmp(end)));
	pg_ir_call(out, "pg_ring_room", pg_ring_room, mkIRExprVec_1(mkIRExpr_HWord((HWord)need)), 1, IRExpr_RdTmp(full));
	group.base = pg_ir_assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, cursor_at));
	group.count = group.data = group.ended = 0;
	group.open = True;
}

/* The group so far is a use: its definition, its header, the cursor past
 * its data. */
static void end_part(IRSB *out)
{
	UInt id;
	if (group.count == group.ended || !define(group.events, group.count, &id))
		return;   /* nothing since the last part, or the ring has stopped */
	group.ended = group.count;
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(group.base),
	                                pg_ir_word(TAG_USE << TAG_SHIFT | (ULong)group.data << 32 | id)));
	IRTemp next = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(group.base),
	                                                    pg_ir_word(8ull * (1 + (ULong)group.data))));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&pg_ring_cursor), IRExpr_RdTmp(next)));
}

/* Unguarded definable events: into the group, their data addresses after
 * its base. */
static void add_run(IRSB *out, const pg_event *events, Int count)
{
	for (Int i = 0; i < count; i++) {
		if (group.open && group.count == GROUP_MAX) {
			end_part(out);
			group.open = False;
		}
		if (!group.open)
			open_group(out);
		const pg_event *e = &events[i];
		group.events[group.count++] = *e;
		if (e->kind == EVENT_INSTRUCTION)
			continue;
		group.data++;
		IRTemp at = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(group.base),
		                                                  pg_ir_word(8ull * (ULong)group.data)));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(at), e->address));
	}
}

/* A definition holds instruction addresses below 2^48 and sizes below 2^14:
 * every x86-64 user address and access, but checked. */
static Bool definable(const pg_event *e)
{
	return (ULong)e->instruction < (1ull << 48) && e->size >= 0 && e->size < (1 << 14);
}

void pg_ring_block_begin(void)
{
	group.open = False;
}

void pg_ring_emit(IRSB *out, const pg_event *events, Int count, Bool group_continues)
{
	if (pg_filter_enabled) {
		if (!pg_ring_stopped())
			pg_filter_emit(out, events, count);
		return;
	}
	Int i = 0;
	while (i < count) {
		if (events[i].guard || !definable(&events[i])) {
			if (group.open) {
				end_part(out);
				group.open = False;
			}
			emit_single(out, &events[i]);
			i++;
			continue;
		}
		Int j = i;
		while (j < count && !events[j].guard && definable(&events[j]))
			j++;
		add_run(out, events + i, j - i);
		i = j;
	}
	if (group.open) {
		end_part(out);
		group.open = group_continues;
	}
}
