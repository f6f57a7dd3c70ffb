/* The binary reference trace: a stream of 64-bit words written by the
 * instrumented code itself into a ring of blocks in memory shared with plumb,
 * which expands it into records and simulates them on another core.
 *
 * --plumb-ring=MEMFD,FULLFD,FREEFD,BLOCKS,BLOCKBYTES (plumb passes it; see
 * src/trace/trace_ring.c for the other side):
 *   MEMFD      a memfd of BLOCKS x BLOCKBYTES bytes, mapped shared here;
 *   FULLFD     a pipe: for each block in turn, a 4-byte count of the words
 *              written in it (the last block may be partial); then, when
 *              the program exits, 0xffffffff; EOF = end;
 *   FREEFD     a socket: one byte back from plumb per block it has read.
 * Blocks are used in order, cyclically; block k >= BLOCKS waits for one free
 * byte first.  Both sides block in read(), so a slow side never spins.
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
 * point at a private scratch area, so the same code writes there and
 * pg_ring_room resets the cursor: no test in the common path. */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "plumbgrind.h"
#include "trace/ring_format.h"

/* Core functions the tool headers do not declare (libcoregrind exports
 * them; pub_core_aspacemgr.h, pub_core_libcfile.h). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);
extern Int VG_(safe_fd)(Int oldfd);

/* The words' tags and the end, shared with plumb (src/trace/ring_format.h) */
#define TAG_USE ((ULong)PLUMB_RING_USE)
#define TAG_DEFINE ((ULong)PLUMB_RING_DEFINE)
#define TAG_THREAD ((ULong)PLUMB_RING_THREAD)
#define TAG_SINGLE ((ULong)PLUMB_RING_SINGLE)
#define TAG_MARKER ((ULong)PLUMB_RING_MARKER)
#define TAG_CALL ((ULong)PLUMB_RING_CALL)
#define TAG_RETURN ((ULong)PLUMB_RING_RETURN)
#define TAG_SHIFT PLUMB_RING_TAG_SHIFT
#define PG_RING_END PLUMB_RING_END
/* The most events a group holds (see "Groups" below; plumb takes up to 255
 * in a definition) */
#define GROUP_MAX 64
/* The longest entry: a marker of a 255-byte name; a definition of GROUP_MAX
 * events, a use of as many data addresses. */
#define ENTRY_MAX_WORDS (2 + 256 / 8 + GROUP_MAX)
#define SCRATCH_WORDS (ENTRY_MAX_WORDS + 8)

Addr pg_ring_cursor, pg_ring_limit;

static UChar *memory;
static ULong blocks, block_bytes;
static Int full_fd = -1, free_fd = -1;
static ULong sequence;               /* the block being written */
static Addr block_start, saved_cursor;
Bool pg_ring_live;                   /* collecting into the ring (else the scratch area) */
static Bool stopped;                 /* an error or a fork: never again */
static ULong records;                /* references sent (counted per block, for the summary) */
static Bool count_records;           /* a summary is written (not --plumb-out=none, as under plumb sim) */
static UInt next_id;                 /* the next definition's number */
static UChar *data_counts;           /* per definition: its data events and fetches, for counting */
static UInt data_counts_capacity;
static UInt shown_thread;            /* the thread the stream is at */
static const HChar *error;
static HChar error_text[256];
static ULong scratch[SCRATCH_WORDS] __attribute__((aligned(64)));


static void use_scratch(void)
{
	pg_ring_cursor = (Addr)scratch;
	pg_ring_limit = (Addr)scratch;   /* every flush calls pg_ring_room, which resets the cursor */
}

static void fail(const HChar *what)
{
	if (!error) {
		VG_(snprintf)(error_text, sizeof error_text, "%s", what);
		error = error_text;
		VG_(umsg)("plumbgrind: %s; the trace stops here\n", error);
	}
	stopped = True;
	pg_ring_live = False;
	use_scratch();
}

static Bool parse_number(const HChar **p, ULong *out)
{
	const HChar *s = *p;
	ULong v = 0;
	if (*s < '0' || *s > '9')
		return False;
	while (*s >= '0' && *s <= '9') {
		if (v > (1ull << 40))
			return False;
		v = v * 10 + (ULong)(*s++ - '0');
	}
	if (*s == ',')
		s++;
	else if (*s != 0)
		return False;
	*p = s;
	*out = v;
	return True;
}

Bool pg_ring_open(void)
{
	use_scratch();
	if (!pg_clo_ring)
		return True;
	ULong values[5];
	const HChar *p = pg_clo_ring;
	for (Int i = 0; i < 5; i++)
		if (!parse_number(&p, &values[i])) {
			VG_(umsg)("plumbgrind: --plumb-ring=%s: want MEMFD,FULLFD,FREEFD,BLOCKS,BLOCKBYTES\n", pg_clo_ring);
			return False;
		}
	blocks = values[3];
	block_bytes = values[4];
	if (*p || blocks < 2 || blocks > 1024 || block_bytes < 4096 || block_bytes > (64u << 20) || block_bytes % 8) {
		VG_(umsg)("plumbgrind: --plumb-ring=%s: bad ring geometry\n", pg_clo_ring);
		return False;
	}
	SysRes mapped = VG_(am_shared_mmap_file_float_valgrind)(blocks * block_bytes, VKI_PROT_READ | VKI_PROT_WRITE,
	                                                         (Int)values[0], 0);
	if (sr_isError(mapped)) {
		VG_(umsg)("plumbgrind: --plumb-ring: cannot map the shared ring (fd %llu)\n", values[0]);
		return False;
	}
	memory = (UChar *)sr_Res(mapped);
	/* Out of the program's sight: it can neither see nor close them, and its
	 * children do not inherit them. */
	VG_(close)((Int)values[0]);
	full_fd = VG_(safe_fd)((Int)values[1]);
	free_fd = VG_(safe_fd)((Int)values[2]);
	if (full_fd < 0 || free_fd < 0) {
		VG_(umsg)("plumbgrind: --plumb-ring: bad descriptors\n");
		return False;
	}
	pg_ring_enabled = True;
	if (pg_clo_filter) {
		if (pg_clo_calls || block_bytes < 65536 || !pg_filter_open(pg_clo_filter)) {
			VG_(umsg)("plumbgrind: --plumb-filter=%s: not a machine the tool's L1s can be%s\n", pg_clo_filter,
			          pg_clo_calls ? " (with --plumb-calls)" : "");
			return False;
		}
	}
	/* Counting rereads every block: only for a summary that shows it. */
	count_records = pg_clo_out && VG_(strcmp)(pg_clo_out, "none") != 0;
	sequence = 0;
	block_start = (Addr)memory;
	saved_cursor = block_start;
	pg_ring_collect_changed();
	return True;
}

/* References in a finished block, for the summary's "trace records". */
static ULong count_references(const ULong *word, const ULong *end)
{
	ULong n = 0;
	while (word < end) {
		ULong tag = *word >> TAG_SHIFT;
		if (tag == TAG_USE) {
			UInt id = (UInt)(*word & 0xffffffffu);
			n += data_counts[2 * id] + data_counts[2 * id + 1];
			word += 1 + data_counts[2 * id];
		} else if (tag == TAG_DEFINE) {
			word += 1 + ((*word >> 32) & 0xffff);
		} else if (tag == TAG_THREAD) {
			word++;
		} else if (tag == TAG_SINGLE) {
			n++;
			word += 3;
		} else if (tag == TAG_MARKER) {
			word += 1 + (((*word >> 32) & 0xff) + 7) / 8;
		} else {
			break;
		}
	}
	return n;
}

/* Sends the current block's count (its words end at end) and takes the
 * next block (block_start); False after an error. */
static Bool send_block(Addr end)
{
	UInt words = (UInt)((end - block_start) / 8);
	Int n;
	do
		n = VG_(write)(full_fd, &words, sizeof words);
	while (n == -VKI_EINTR);
	if (n != (Int)sizeof words) {
		fail("writing to plumb failed (it stopped reading)");
		return False;
	}
	if (count_records && !pg_filter_enabled)
		records += count_references((const ULong *)block_start, (const ULong *)end);
	sequence++;
	if (sequence >= blocks) {
		UChar token;
		do
			n = VG_(read)(free_fd, &token, 1);
		while (n == -VKI_EINTR);
		if (n != 1) {
			fail("plumb stopped reading the trace");
			return False;
		}
	}
	block_start = (Addr)memory + (sequence % blocks) * block_bytes;
	return True;
}

static void next_block(void)
{
	if (!send_block(pg_ring_cursor))
		return;
	pg_ring_cursor = block_start;
	pg_ring_limit = block_start + block_bytes;
}

VG_REGPARM(1) void pg_ring_room(UWord bytes)
{
	if (!pg_ring_live) {
		pg_ring_cursor = (Addr)scratch;
		return;
	}
	tl_assert(bytes <= block_bytes);
	next_block();
}

/* Room for `words` in the ring whether or not collecting (definitions,
 * threads and markers are sent either way); returns where to write, or 0.
 * ring_done then advances past them. */
static Bool was_active;
ULong *pg_ring_reserve(UInt words)
{
	if (!pg_ring_enabled || stopped)
		return NULL;
	was_active = pg_ring_live;
	if (!pg_ring_live) {
		pg_ring_cursor = saved_cursor;
		pg_ring_limit = block_start + block_bytes;
		pg_ring_live = True;
	}
	if (pg_ring_cursor + 8ull * words > pg_ring_limit) {
		next_block();
		if (stopped)
			return NULL;
	}
	return (ULong *)pg_ring_cursor;
}

void pg_ring_done(UInt words)
{
	pg_ring_cursor += 8ull * words;
	if (!was_active) {
		saved_cursor = pg_ring_cursor;
		pg_ring_live = False;
		use_scratch();
	}
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
	if (pg_filter_enabled && !stopped)
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
	if (!pg_ring_enabled || stopped)
		return;
	Bool now = pg_collecting;
	if (now == pg_ring_live)
		return;
	/* the filter's counts up to the switch, for exact per-window figures;
	 * at the switch on, what its inline code counted while off is dropped */
	if (pg_filter_enabled)
		pg_filter_counts();
	if (now) {
		pg_ring_cursor = saved_cursor;
		pg_ring_limit = block_start + block_bytes;
	} else {
		saved_cursor = pg_ring_cursor;
		use_scratch();
	}
	pg_ring_live = now;
}

void pg_ring_close(void)
{
	if (!pg_ring_enabled)
		return;
	if (pg_filter_enabled && !stopped)
		pg_filter_counts();
	if (pg_ring_live) {
		saved_cursor = pg_ring_cursor;
		pg_ring_live = False;
	}
	if (!stopped && saved_cursor > block_start) {
		UInt words = (UInt)((saved_cursor - block_start) / 8);
		Int n;
		do
			n = VG_(write)(full_fd, &words, sizeof words);
		while (n == -VKI_EINTR);
		if (n != (Int)sizeof words)
			fail("writing to plumb failed (it stopped reading)");
		else if (count_records && !pg_filter_enabled)
			records += count_references((const ULong *)block_start, (const ULong *)saved_cursor);
	}
	if (!stopped) {
		/* The program exited here: a program that exec'd another never
		 * gets here (Valgrind does not follow an exec), and plumb tells the
		 * two apart by this word. */
		UInt end = PG_RING_END;
		Int n;
		do
			n = VG_(write)(full_fd, &end, sizeof end);
		while (n == -VKI_EINTR);
		if (n != (Int)sizeof end)
			fail("writing to plumb failed (it stopped reading)");
	}
	stopped = True;
	use_scratch();
	if (full_fd >= 0)
		VG_(close)(full_fd);
	if (free_fd >= 0)
		VG_(close)(free_fd);
	full_fd = free_fd = -1;
}

/* The client's string at address, copied while its pages are readable;
 * the length copied (0: unreadable or empty). */
static UInt client_string(Addr address, HChar *out, UInt size)
{
	UInt n = 0;
	while (n + 1 < size) {
		Addr at = address + n;
		if ((n == 0 || (at & (VKI_PAGE_SIZE - 1)) == 0) && !VG_(am_is_valid_for_client)(at, 1, VKI_PROT_READ))
			break;
		HChar c = *(const HChar *)at;
		if (c == 0)
			break;
		out[n++] = c;
	}
	out[n] = 0;
	return n;
}

void pg_ring_pre_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nArgs)
{
	/* execve(path, ...) or execveat(dirfd, path, ...): the words on the
	 * full pipe, between two blocks' lengths, are PLUMB_RING_EXEC, the
	 * name's length and the name.  If the exec fails, the program goes on
	 * and its end word still comes. */
	if (!pg_ring_enabled || stopped || full_fd < 0)
		return;
	Addr name;
	if (syscallno == __NR_execve && nArgs >= 1)
		name = args[0];
	else if (syscallno == __NR_execveat && nArgs >= 2)
		name = args[1];
	else
		return;
	struct {
		UInt tag, length;
		HChar name[PLUMB_RING_EXEC_NAME_MAX + 1];
	} message;
	message.tag = PLUMB_RING_EXEC;
	message.length = client_string(name, message.name, sizeof message.name);
	Int n;
	do
		n = VG_(write)(full_fd, &message, (Int)(8 + message.length));
	while (n == -VKI_EINTR);
	if (n != (Int)(8 + message.length))
		fail("writing to plumb failed (it stopped reading)");
}

void pg_ring_post_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nArgs, SysRes res)
{
}

void pg_ring_forget(void)
{
	/* A forked child shares the mapping and the pipes: it must write to
	 * neither. */
	if (!pg_ring_enabled)
		return;
	stopped = True;
	pg_ring_live = False;
	use_scratch();
	if (full_fd >= 0)
		VG_(close)(full_fd);
	if (free_fd >= 0)
		VG_(close)(free_fd);
	full_fd = free_fd = -1;
}

/* ---- Region markers ----
 * pg_threads.c decides where a marker goes, as for the text (pg_trace.c): an
 * END at the position the ring had at the marker's first no-op, moving the
 * words written since (entries are whole there: the no-op's helper runs after
 * a flush), unless a block was sent in between (then at the end). */
#define MARKER_ROOM (64ull << 10)

void pg_ring_here(ULong *at_sequence, Addr *at_cursor)
{
	if (pg_filter_enabled && !stopped)
		pg_filter_counts();
	/* Room for the marker's code in this block: where a block ends depends
	 * on how the threads were interleaved, so without it the same marker
	 * went to its place in one run and to the end of its code in another
	 * (and elsewhere than in the text trace of the same run).  A marker's
	 * code is a client request and perhaps a clock read: far below this. */
	ULong room = block_bytes / 4 < MARKER_ROOM ? block_bytes / 4 : MARKER_ROOM;
	if (pg_ring_live && !stopped && pg_ring_cursor + room > pg_ring_limit)
		next_block();
	*at_sequence = sequence;
	*at_cursor = pg_ring_live ? pg_ring_cursor : saved_cursor;
}

void pg_ring_region(Bool begin, const HChar *name, ULong at_sequence, Addr at_cursor, Bool at_given)
{
	SizeT length = VG_(strlen)(name);
	if (length == 0 || length > 255)
		return;
	UInt words = 1 + (UInt)(length + 7) / 8;
	if (pg_filter_enabled && !stopped)
		pg_filter_counts();   /* the counts before the marker's position (pg_ring_here's, or now) */
	ULong before = sequence;
	ULong *w = pg_ring_reserve(words);
	if (!w)
		return;
	Addr position = (Addr)w;
	if (at_given && before == sequence && at_sequence == sequence && at_cursor >= block_start &&
	    at_cursor <= pg_ring_cursor) {
		position = at_cursor;
	}
	VG_(memmove)((void *)(position + 8ull * words), (void *)position, pg_ring_cursor - position);
	w = (ULong *)position;
	w[0] = TAG_MARKER << TAG_SHIFT | (ULong)(begin ? 1 : 0) << 56 | (ULong)length << 32 | pg_running_thread;
	w[words - 1] = 0;
	VG_(memcpy)(w + 1, name, length);
	pg_ring_done(words);
}

ULong pg_ring_records(void) { return pg_filter_enabled ? pg_filter_records() : records; }
const HChar *pg_ring_error(void) { return error; }

/* ---- The instrumentation ---- */

/* Sends a definition of these events; returns its number. */
static Bool define(const pg_event *events, Int count, UInt *id_out)
{
	if (data_counts_capacity <= next_id) {
		UInt capacity = data_counts_capacity ? 2 * data_counts_capacity : 4096;
		data_counts = VG_(realloc)("pg.ring.counts", data_counts, 2 * (SizeT)capacity);
		data_counts_capacity = capacity;
	}
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
	data_counts[2 * id] = (UChar)data;
	data_counts[2 * id + 1] = (UChar)(count - (Int)data);
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
		if (!stopped)
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
