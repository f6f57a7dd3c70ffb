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
 * This file is the ring's transport: the blocks, the room for an entry
 * (pg_ring_reserve, pg_ring_done, the inline code's pg_ring_room), the
 * collection switch of the cursor, the end, the exec message and the
 * summary's count of references.  What goes into it (definitions, uses,
 * threads, markers, calls; the L1 filter's counts) is pg_entries.c's and
 * pg_filter.c's, which both call this file and which it calls neither of
 * (docs/DESIGN.md's layer table).  The entries, after their tag in the
 * first word's top 4 bits (src/trace/ring_format.h), are described in
 * pg_entries.c.
 *
 * A flush (pg_ring_emit, pg_entries.c) is inline code with no helper call:
 * load the cursor, call pg_ring_room only if the entry does not fit before
 * the limit (a guarded call), store the entry's words and the advanced
 * cursor.  While not collecting (and after an error, or in a forked child)
 * the cursor and limit point at a private scratch area, so the same code
 * writes there and pg_ring_room resets the cursor: no test in the common
 * path. */
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
#define TAG_SHIFT PLUMB_RING_TAG_SHIFT
#define PG_RING_END PLUMB_RING_END
/* The longest entry: a marker of a 255-byte name; a definition of
 * PG_RING_GROUP_MAX events, a use of as many data addresses. */
#define ENTRY_MAX_WORDS (2 + 256 / 8 + PG_RING_GROUP_MAX)
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
static UChar *data_counts;           /* per definition: its data events and fetches, for counting */
static UInt data_counts_capacity;
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

Bool pg_ring_map(void)
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
	/* Counting rereads every block: only for a summary that shows it, and
	 * not when its reader does not want it (--plumb-count-records=no:
	 * plumb explain, 4% of the tool's time on md5sum). */
	count_records = pg_clo_count_records && pg_clo_out && VG_(strcmp)(pg_clo_out, "none") != 0;
	sequence = 0;
	block_start = (Addr)memory;
	saved_cursor = block_start;
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

ULong pg_ring_block_size(void) { return block_bytes; }
Bool pg_ring_stopped(void) { return stopped; }

/* The per-definition counts count_references reads: a definition's data
 * events and instruction fetches. */
void pg_ring_defined(UInt id, UInt data, UInt fetches)
{
	if (data_counts_capacity <= id) {
		UInt capacity = data_counts_capacity ? 2 * data_counts_capacity : 4096;
		while (capacity <= id)
			capacity *= 2;
		data_counts = VG_(realloc)("pg.ring.counts", data_counts, 2 * (SizeT)capacity);
		data_counts_capacity = capacity;
	}
	data_counts[2 * id] = (UChar)data;
	data_counts[2 * id + 1] = (UChar)fetches;
}

void pg_ring_set_live(Bool now)
{
	if (now) {
		pg_ring_cursor = saved_cursor;
		pg_ring_limit = block_start + block_bytes;
	} else {
		saved_cursor = pg_ring_cursor;
		use_scratch();
	}
	pg_ring_live = now;
}

void pg_ring_finish(void)
{
	if (!pg_ring_enabled)
		return;
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

void pg_ring_position(ULong *at_sequence, Addr *at_cursor)
{
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

/* Room for words at the position pg_ring_position gave, moving the words
 * written since (or at the end, when not given or a block was sent in
 * between); pg_ring_done then advances past them. */
ULong *pg_ring_reserve_at(UInt words, ULong at_sequence, Addr at_cursor, Bool at_given)
{
	ULong before = sequence;
	ULong *w = pg_ring_reserve(words);
	if (!w)
		return NULL;
	Addr position = (Addr)w;
	if (at_given && before == sequence && at_sequence == sequence && at_cursor >= block_start &&
	    at_cursor <= pg_ring_cursor) {
		position = at_cursor;
	}
	VG_(memmove)((void *)(position + 8ull * words), (void *)position, pg_ring_cursor - position);
	return (ULong *)position;
}

ULong pg_ring_counted(void) { return records; }
const HChar *pg_ring_error(void) { return error; }
