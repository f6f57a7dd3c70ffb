/* The binary reference trace: a stream of 64-bit words written by the
 * instrumented code itself into a ring of blocks in memory shared with plumb,
 * which expands it into records and simulates them on another core.
 *
 * --plumb-ring=MEMFD,FULLFD,FREEFD,BLOCKS,BLOCKBYTES (plumb passes it; see
 * src/trace/trace_ring.c for the other side):
 *   MEMFD      a memfd of BLOCKS x BLOCKBYTES bytes, mapped shared here;
 *   FULLFD     a pipe: for each block in turn, a 4-byte count of the words
 *              written in it (the last block may be partial); EOF = end;
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
 * call), store the entry's words and the advanced cursor.  While not
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
#include "pg_filter.h"
#include <immintrin.h>

/* Core functions the tool headers do not declare (libcoregrind exports
 * them; pub_core_aspacemgr.h, pub_core_libcfile.h). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);
extern Int VG_(safe_fd)(Int oldfd);

#define TAG_USE 1ull
#define TAG_DEFINE 2ull
#define TAG_THREAD 3ull
#define TAG_SINGLE 4ull
#define TAG_MARKER 5ull
#define TAG_CALL 6ull
#define TAG_RETURN 7ull
#define TAG_SHIFT 60
/* The longest entry: a marker of a 255-byte name; a definition of
 * PG_EVENTS_MAX events. */
#define ENTRY_MAX_WORDS (2 + 256 / 8 + PG_EVENTS_MAX)
#define SCRATCH_WORDS (ENTRY_MAX_WORDS + 8)

const HChar *pg_clo_ring = NULL;
const HChar *pg_clo_filter = NULL;
Bool pg_ring_enabled;
Addr pg_ring_cursor, pg_ring_limit;

static UChar *memory;
static ULong blocks, block_bytes;
static Int full_fd = -1, free_fd = -1;
static ULong sequence;               /* the block being written */
static Addr block_start, saved_cursor;
static Bool active;                  /* collecting into the ring (else the scratch area) */
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

/* ---- The L1 filter (--plumb-filter, vg/pg_filter.h) ----
 * For a one-core machine plumb passes its L1s: the instrumented code then
 * writes its entries into a small private stage (pg_ring_cursor and
 * pg_ring_limit point there), and when the stage is full, at a thread
 * switch's or a marker's turn, and at the end, the filter walks it with the
 * tool's copy of the L1s: what they settle is only counted (COUNTS), the
 * rest crosses to plumb as GENERAL entries.  Definitions stay here. */
#define STAGE_WORDS 4096             /* 32 KiB: stays in the host's L1 */
static Bool filtering;
static pgf_model model;
static ULong stage[STAGE_WORDS] __attribute__((aligned(64)));
static ULong stage_generation;        /* stage walks so far (a marker's position is in one) */
static ULong *out_at, *out_end;       /* where the filter writes in the ring's block */
/* The stage's position at the last marker's first no-op (pg_ring_here), and
 * where its words are now: a walk of the stage leaves the words after it
 * for the next walk (moved to the stage's start), so that an END still goes
 * there (pg_ring_region) however small the stage. */
static ULong pause_generation, pause_generation_now;
static Addr pause_cursor, pause_cursor_now;
/* The definitions, kept here, each one blob of words in program[] (a use's
 * number is its blob's offset, so one load finds it, and what the walk reads
 * of it is together):
 *   header   count | data<<8 | lines<<16 | plain<<24 | words<<32
 *            (events, data events, distinct fetch lines or 0xff, plain when
 *            no data event is a read-write modify or of size 0, the most the
 *            filter writes for one use)
 *   counts   count | fetches<<21 | straddles<<42: added to the walk's packed
 *            counts per use (a stage's uses never fill a 21-bit field)
 *   data     reads | writes<<32: the same, when all its references hit
 *   lines    per distinct fetch line: line | front<<42 (its set's front way)
 *   data     per data event: size | akind<<16 | need<<24 | want<<32 | dirty<<40
 *   events   per event: iaddr | size<<48 | akind<<62
 * (akind: fetch, read, write, or 3 a modify read then written; sizes cut as
 * the simulator cuts them).  When all its fetch lines are at the front of
 * their L1I sets, every fetch of the definition is a hit: only a miss changes
 * the L1I, and a data miss never does here (no L2, no inclusive L3). */
static ULong *program;
static UInt program_used, program_capacity;

/* Inline checks (the default with --plumb-filter; --plumb-filter-walk=yes
 * keeps the stage and its walk): the instrumented code itself compares each
 * reference's line with the front way of its set, as cachegrind's helpers
 * do but with no call, and calls filter_fetch or filter_data only when the
 * reference is not such a hit.  The counts of a flushed list are added
 * inline as if all were hits; a helper takes its reference's back. */
Bool pg_clo_filter_walk = False;
static Bool inline_checks;
static ULong fetch_line_known = ~0ull;   /* instrumenting: the L1I line last checked in this superblock */
static Bool meta_checked[3];             /* per access kind: a hit depends on the line's metadata */
static ULong singles_counted;            /* records pgf_record counted in total_records since the last COUNTS */
/* A flush's counts, one add of four 16-bit fields: records, fetches, reads,
 * writes (a flush adds at most PG_EVENTS_MAX to each); drained into the
 * model's when a field reaches 2^15, and before the model's are read. */
static ULong packed_counts;
#define PACKED_FULL 0x8000800080008000ull
static Bool wide_sets;                /* an 8-way L1D and AVX-512: deeper hits as one vector */
static Bool wide_fetch_sets;          /* the same for an 8-way L1I */
static Bool cpu_has_avx512f(void);

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
	active = False;
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
		if (pg_clo_calls || block_bytes < 65536 || !pgf_parse(&model, pg_clo_filter)) {
			VG_(umsg)("plumbgrind: --plumb-filter=%s: not a machine the tool's L1s can be%s\n", pg_clo_filter,
			          pg_clo_calls ? " (with --plumb-calls)" : "");
			return False;
		}
		for (Int l = 0; l < 2; l++) {
			model.l1[l].tags = VG_(malloc)("pg.filter.tags", pgf_ways(&model, l) * sizeof(ULong));
			model.l1[l].meta = VG_(malloc)("pg.filter.meta", pgf_ways(&model, l));
		}
		pgf_reset(&model);
		wide_sets = model.l1[1].assoc == 8 && cpu_has_avx512f();
		wide_fetch_sets = model.l1[0].assoc == 8 && cpu_has_avx512f();
		filtering = True;
		inline_checks = !pg_clo_filter_walk;
		UChar settable = (UChar)(model.state_mask | model.dirty_bit | model.read_state | model.write_state |
		                         model.owned_state | model.clean_state);
		for (Int k = 0; k < 3; k++) {
			settable |= model.dirty[k];
		}
		for (Int k = 0; k < 3; k++)
			meta_checked[k] = (model.need[k] & settable) || model.want[k] || model.dirty[k];
		out_at = (ULong *)memory;
		out_end = (ULong *)((Addr)memory + block_bytes);
	}
	/* Counting rereads every block: only for a summary that shows it. */
	count_records = pg_clo_out && VG_(strcmp)(pg_clo_out, "none") != 0;
	sequence = 0;
	block_start = (Addr)memory;
	saved_cursor = filtering ? (Addr)stage : block_start;
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
	if (count_records && !filtering)
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

/* ---- The filter's walk of the stage ---- */

/* Room for words in the ring's block for the filter's entries. */
static Bool out_room(UInt words)
{
	if ((Addr)(out_at + words) <= (Addr)out_end)
		return True;
	if (!send_block((Addr)out_at))
		return False;
	out_at = (ULong *)block_start;
	out_end = (ULong *)(block_start + block_bytes);
	return True;
}

static void drain_counts(void)
{
	ULong p = packed_counts;
	packed_counts = 0;
	model.records += p & 0xffff;
	model.settled[PGF_FETCH] += (p >> 16) & 0xffff;
	model.settled[PGF_READ] += (p >> 32) & 0xffff;
	model.settled[PGF_WRITE] += p >> 48;
}

static VG_REGPARM(0) void counts_full(void)
{
	drain_counts();
}

static void out_counts(void)
{
	drain_counts();
	if (inline_checks && !active) {
		/* what the inline code counted while not collecting */
		model.settled[0] = model.settled[1] = model.settled[2] = 0;
		model.straddles = model.records = 0;
		singles_counted = 0;
		return;
	}
	if (inline_checks) {
		/* the records counted inline are not in the total yet */
		model.total_records += model.records - singles_counted;
		singles_counted = 0;
	}
	if (out_room(PGF_COUNTS_WORDS))
		out_at += pgf_counts(&model, out_at);
}

/* An 8-way L1D with AVX-512 (as plumb's wide_set_hit, src/sim/sim.c): a
 * one-line data reference deeper in its set is found and rotated to the
 * front as one vector of the set's tags, with no branch on the way. */
static Bool cpu_has_avx512f(void)
{
	UInt a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	if (a < 7)
		return False;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27)))   /* OSXSAVE */
		return False;
	UInt lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 0xe6) != 0xe6)   /* the OS saves the SSE, AVX and AVX-512 state */
		return False;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
	return (b & (1u << 16)) != 0;
}

static __attribute__((target("avx512f"), noinline)) Bool wide_hit(UInt akind, ULong address, UInt size)
{
	pgf_cache *c = &model.l1[akind == PGF_FETCH ? 0 : 1];
	ULong line = address >> c->line_bits;
	if (size == 0 || ((address + size - 1) >> c->line_bits) != line)
		return False;
	ULong base = (line & c->set_mask) * 8;
	ULong *tags = c->tags + base;
	UChar *meta = c->meta + base;
	__m512i t = _mm512_loadu_si512(tags);
	UInt found_ways = (UInt)_mm512_cmpeq_epi64_mask(t, _mm512_set1_epi64((long long)line));
	ULong m;
	__builtin_memcpy(&m, meta, sizeof m);
	UInt way = (UInt)__builtin_ctz(found_ways | 0x100u);
	UChar found = (UChar)(m >> (8 * (way & 7)));
	if (way >= 8 || (found & model.need[akind]) != model.want[akind])
		return False;
	t = _mm512_mask_mov_epi64(t, (__mmask8)((2u << way) - 1), _mm512_alignr_epi64(t, t, 7));
	_mm512_storeu_si512(tags, _mm512_mask_set1_epi64(t, 1, (long long)line));
	ULong moved = ~0ull >> (56 - 8 * way);
	m = (m & ~moved) | ((m << 8) & moved) | (UChar)(found | model.dirty[akind]);
	__builtin_memcpy(meta, &m, sizeof m);
	model.settled[akind]++;
	return True;
}

/* The rest of one reference (pgf_reference: deeper in its set, across two
 * lines, or general); akind 3 is a modify read then written. */
static __attribute__((noinline)) void slow_reference(UInt akind, ULong address, UInt size)
{
	if (wide_sets && akind != PGF_FETCH && akind != 3 && wide_hit(akind, address, size))
		return;
	if (akind == 3) {
		out_at += pgf_reference(&model, out_at, PGF_READ, address, size);
		akind = PGF_WRITE;
	}
	out_at += pgf_reference(&model, out_at, akind, address, size);
}

/* ---- Inline checks: the helpers ----
 * The second argument: size | kind<<16 | uncounted<<18 | straddle<<19
 * (uncounted: the flush did not count it as a hit; straddle: a fetch across
 * two lines, counted among the straddles). */
#define CHECK_KIND_SHIFT 16
#define CHECK_UNCOUNTED (1u << 18)
#define CHECK_STRADDLE (1u << 19)

static VG_REGPARM(2) void filter_fetch(Addr address, UWord how)
{
	if (!active)
		return;
	if (!(how & CHECK_UNCOUNTED)) {
		model.settled[PGF_FETCH]--;
		model.straddles -= (how & CHECK_STRADDLE) != 0;
	}
	UInt size = (UInt)how & 0xffff;
	/* most are lines deeper in their sets: no room needed */
	if ((wide_fetch_sets && wide_hit(PGF_FETCH, address, size)) || pgf_settle(&model, PGF_FETCH, address, size) ||
	    !out_room(PGF_GENERAL_MAX_WORDS))
		return;
	out_at += pgf_general(&model, out_at, PGF_FETCH, address, size);
}

static VG_REGPARM(2) void filter_data(Addr address, UWord how)
{
	if (!active)
		return;
	UInt akind = (UInt)(how >> CHECK_KIND_SHIFT) & 3, size = (UInt)how & 0xffff;
	if (!(how & CHECK_UNCOUNTED)) {
		if (akind == 3) {
			model.settled[PGF_READ]--;
			model.settled[PGF_WRITE]--;
		} else {
			model.settled[akind]--;
		}
	}
	if (akind != 3) {
		pgf_cache *c = &model.l1[1];
		if (pgf_hit2(c->tags, c->meta, c->set_mask, c->assoc, c->line_bits, model.need[akind], model.want[akind],
		             model.dirty[akind], address, size)) {
			model.settled[akind]++;
			return;
		}
		if ((wide_sets && wide_hit(akind, address, size)) || pgf_settle(&model, akind, address, size) ||
		    !out_room(PGF_GENERAL_MAX_WORDS))
			return;
		out_at += pgf_general(&model, out_at, akind, address, size);
		return;
	}
	if (out_room(PGF_RECORD_MAX_WORDS))
		slow_reference(akind, address, size);
}

/* The walk's packed counts into the model's. */
static void add_counts(ULong counts, ULong data_hits)
{
	ULong mask = (1ull << 21) - 1;
	model.records += counts & mask;
	model.total_records += counts & mask;
	model.settled[PGF_FETCH] += (counts >> 21) & mask;
	model.straddles += counts >> 42;
	model.settled[PGF_READ] += (UInt)data_hits;
	model.settled[PGF_WRITE] += data_hits >> 32;
}

/* Walks the stage's words [stage, end): uses and singles through the
 * model, thread switches and markers to plumb after the counts so far.  The
 * hits in the first two ways of their sets are counted in locals, the L1s'
 * geometry in locals too. */
static void filter_stage(const ULong *end)
{
	const ULong *w = stage;
	ULong *const itags = model.l1[0].tags, *const dtags = model.l1[1].tags;
	UChar *const imeta = model.l1[0].meta, *const dmeta = model.l1[1].meta;
	const ULong imask = model.l1[0].set_mask, dmask = model.l1[1].set_mask;
	const UInt iassoc = model.l1[0].assoc, dassoc = model.l1[1].assoc, bits = model.l1[1].line_bits;
	const UChar ineed = model.need[PGF_FETCH], iwant = model.want[PGF_FETCH];
	const ULong *const blobs = program;
	/* counts: records | fetch hits<<21 | fetch straddles<<42 (blob word 1);
	 * data: read hits | write hits<<32 */
	ULong counts = 0, data_hits = 0;
	stage_generation++;
	while (w < end && !stopped) {
		ULong head = w[0];
		ULong tag = head >> TAG_SHIFT;
		if (tag == TAG_USE) {
			const ULong *blob = blobs + (UInt)head;
			ULong h = blob[0];
			UInt count = (UInt)h & 0xff, data = (UInt)(h >> 8) & 0xff, nlines = (UInt)(h >> 16) & 0xff;
			const ULong *d = w + 1;
			w = d + data;
			if ((Addr)(out_at + PG_EVENTS_MAX * PGF_RECORD_MAX_WORDS) > (Addr)out_end &&
			    !out_room((UInt)(h >> 32)))
				break;
			if (nlines != 0xff) {
				const ULong *fl = blob + 3;
				Bool front = True;
				for (UInt i = 0; i < nlines; i++) {
					ULong f = fl[i] >> 42;
					front &= (itags[f] == (fl[i] & ((1ull << 42) - 1))) & ((imeta[f] & ineed) == iwant);
				}
				if ((h >> 24) & front) {
					/* the common use: its lines all at the front of their sets,
					 * looked at without a branch each; nothing changes (a write
					 * hit is of a line in M, dirty already) */
					const ULong *desc = fl + nlines;
					Bool all = True;
					for (UInt i = 0; i < data; i++) {
						ULong dd = desc[i], address = d[i];
						ULong line = address >> bits, last = (address + (dd & 0xffff) - 1) >> bits;
						ULong f = (line & dmask) * dassoc;
						all &= (line == last) & (dtags[f] == line) & ((dmeta[f] & (UChar)(dd >> 24)) == (UChar)(dd >> 32));
					}
					if (all) {
						counts += blob[1];
						data_hits += blob[2];
						continue;
					}
				}
				if (!front) {
					/* lines deeper in their sets (each in a set of its own):
					 * each moves to the front at its first fetch, and all
					 * fetches are hits, when all are there */
					for (UInt i = 0; i < nlines; i++) {
						ULong f = fl[i] >> 42, line = fl[i] & ((1ull << 42) - 1);
						ULong base = f, way;
						if (itags[f] == line)
							continue;
						for (way = 1; way < iassoc && itags[base + way] != line; way++)
							;
						if (way == iassoc || (imeta[base + way] & ineed) != iwant)
							break;
						UChar meta = imeta[base + way];
						for (; way > 0; way--) {
							itags[base + way] = itags[base + way - 1];
							imeta[base + way] = imeta[base + way - 1];
						}
						itags[base] = line;
						imeta[base] = meta;
					}
					front = True;
					for (UInt i = 0; i < nlines; i++) {
						ULong f = fl[i] >> 42;
						front &= (itags[f] == (fl[i] & ((1ull << 42) - 1))) & ((imeta[f] & ineed) == iwant);
					}
				}
				if (front) {
					/* every fetch a hit; the data references one by one */
					counts += blob[1];
					const ULong *desc = fl + nlines;
					for (UInt i = 0; i < data; i++) {
						ULong dd = desc[i];
						UInt akind = (UInt)(dd >> 16) & 3, size = (UInt)dd & 0xffff;
						ULong address = d[i];
						if (akind != 3 && pgf_hit2(dtags, dmeta, dmask, dassoc, bits, (UChar)(dd >> 24),
						                           (UChar)(dd >> 32), (UChar)(dd >> 40), address, size)) {
							data_hits += akind == PGF_READ ? 1 : 1ull << 32;
							continue;
						}
						slow_reference(akind, address, size);
					}
					continue;
				}
			}
			counts += count;
			const ULong *e = blob + 3 + (nlines == 0xff ? 0 : nlines) + data, *e_end = e + count;
			for (; e < e_end; e++) {
				ULong ev = *e;
				UInt akind = (UInt)(ev >> 62), size = (UInt)(ev >> 48) & 0x3fff;
				if (akind == PGF_FETCH) {
					if (pgf_hit2(itags, imeta, imask, iassoc, bits, ineed, iwant, 0, ev & ((1ull << 48) - 1), size))
						counts += 1ull << 21;
					else
						slow_reference(PGF_FETCH, ev & ((1ull << 48) - 1), size);
					continue;
				}
				ULong address = *d++;
				if (akind != 3 && pgf_hit2(dtags, dmeta, dmask, dassoc, bits, model.need[akind], model.want[akind],
				                           model.dirty[akind], address, size)) {
					data_hits += akind == PGF_READ ? 1 : 1ull << 32;
					continue;
				}
				slow_reference(akind, address, size);
			}
		} else if (tag == TAG_SINGLE) {
			if (!out_room(PGF_RECORD_MAX_WORDS))
				break;
			out_at += pgf_record(&model, out_at, (UInt)(head >> 16) & 0xff, w[1], (UInt)head & 0xffff);
			w += 3;
		} else {
			/* a thread switch or a marker: after the counts of what came before */
			UInt words = tag == TAG_MARKER ? 1 + (UInt)(((head >> 32) & 0xff) + 7) / 8 : 1;
			add_counts(counts, data_hits);
			counts = data_hits = 0;
			out_counts();
			if (!out_room(words))
				break;
			for (UInt i = 0; i < words; i++)
				out_at[i] = w[i];
			out_at += words;
			w += words;
		}
	}
	add_counts(counts, data_hits);
}

/* Filters the stage and starts it again (the instrumented code's cursor);
 * the words after the last marker's position stay when they are few. */
static void stage_flush(void)
{
	Addr end = pg_ring_cursor;
	Bool carry = pause_generation_now == stage_generation && pause_cursor_now >= (Addr)stage &&
	             pause_cursor_now <= end && end - pause_cursor_now <= 8 * (STAGE_WORDS / 4);
	Addr keep = carry ? pause_cursor_now : end;
	filter_stage((const ULong *)keep);
	pg_ring_cursor = (Addr)stage;
	pg_ring_limit = (Addr)(stage + STAGE_WORDS);
	if (carry) {
		VG_(memmove)(stage, (void *)keep, end - keep);
		pg_ring_cursor += end - keep;
		pause_generation_now = stage_generation;
		pause_cursor_now = (Addr)stage;
	}
}

VG_REGPARM(1) void pg_ring_room(UWord bytes)
{
	if (!active) {
		pg_ring_cursor = (Addr)scratch;
		return;
	}
	if (filtering) {
		stage_flush();
		return;
	}
	tl_assert(bytes <= block_bytes);
	next_block();
}

/* Room for `words` in the ring whether or not collecting (definitions,
 * threads and markers are sent either way); returns where to write, or 0.
 * ring_done then advances past them. */
static Bool was_active;
static ULong *ring_reserve(UInt words)
{
	if (!pg_ring_enabled || stopped)
		return NULL;
	was_active = active;
	if (!active) {
		pg_ring_cursor = saved_cursor;
		pg_ring_limit = filtering ? (Addr)(stage + STAGE_WORDS) : block_start + block_bytes;
		active = True;
	}
	if (pg_ring_cursor + 8ull * words > pg_ring_limit) {
		if (filtering)
			stage_flush();
		else
			next_block();
		if (stopped)
			return NULL;
	}
	return (ULong *)pg_ring_cursor;
}

static void ring_done(UInt words)
{
	pg_ring_cursor += 8ull * words;
	if (!was_active) {
		saved_cursor = pg_ring_cursor;
		active = False;
		use_scratch();
	}
}

VG_REGPARM(3) void pg_ring_single(Addr address, UWord size_kind, Addr instruction)
{
	if (!active)
		return;
	if (inline_checks) {
		if (!out_room(PGF_RECORD_MAX_WORDS))
			return;
		out_at += pgf_record(&model, out_at, (UInt)(size_kind >> 16) & 0xff, address, (UInt)size_kind & 0xffff);
		singles_counted++;
		return;
	}
	ULong *w = ring_reserve(3);
	if (!w)
		return;
	w[0] = TAG_SINGLE << TAG_SHIFT | (ULong)size_kind;
	w[1] = address;
	w[2] = instruction;
	ring_done(3);
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
	ULong *w = ring_reserve(1);
	if (!w)
		return;
	w[0] = TAG_RETURN << TAG_SHIFT | popped;
	ring_done(1);
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
	ULong *w = ring_reserve(3);
	if (!w)
		return;
	w[0] = TAG_CALL << TAG_SHIFT;
	w[1] = site;
	w[2] = target;
	ring_done(3);
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
	if (inline_checks) {
		if (stopped)
			return;
		out_counts();
		if (!out_room(1))
			return;
		*out_at++ = TAG_THREAD << TAG_SHIFT | thread;
		shown_thread = thread;
		return;
	}
	ULong *w = ring_reserve(1);
	if (!w)
		return;
	w[0] = TAG_THREAD << TAG_SHIFT | thread;
	ring_done(1);
	shown_thread = thread;
}

void pg_ring_collect_changed(void)
{
	if (!pg_ring_enabled || stopped)
		return;
	Bool now = pg_collecting;
	if (now == active)
		return;
	if (inline_checks) {
		if (now) {
			out_counts();   /* not active yet: drops what was counted while off */
			active = True;
		} else {
			out_counts();   /* the counts up to the switch, for exact per-window figures */
			active = False;
		}
		return;
	}
	if (now) {
		pg_ring_cursor = saved_cursor;
		pg_ring_limit = filtering ? (Addr)(stage + STAGE_WORDS) : block_start + block_bytes;
	} else {
		if (filtering) {
			/* the counts up to the switch, for exact per-window figures */
			stage_flush();
			out_counts();
		}
		saved_cursor = pg_ring_cursor;
		use_scratch();
	}
	active = now;
}

void pg_ring_close(void)
{
	if (!pg_ring_enabled)
		return;
	if (inline_checks && !stopped) {
		out_counts();
		active = False;
		saved_cursor = (Addr)out_at;
	}
	if (active) {
		saved_cursor = pg_ring_cursor;
		active = False;
	}
	if (filtering && !inline_checks && !stopped) {
		filter_stage((const ULong *)saved_cursor);
		out_counts();
		saved_cursor = (Addr)out_at;
	}
	if (!stopped && saved_cursor > block_start) {
		UInt words = (UInt)((saved_cursor - block_start) / 8);
		Int n;
		do
			n = VG_(write)(full_fd, &words, sizeof words);
		while (n == -VKI_EINTR);
		if (n != (Int)sizeof words)
			fail("writing to plumb failed (it stopped reading)");
		else if (count_records && !filtering)
			records += count_references((const ULong *)block_start, (const ULong *)saved_cursor);
	}
	stopped = True;
	use_scratch();
	if (full_fd >= 0)
		VG_(close)(full_fd);
	if (free_fd >= 0)
		VG_(close)(free_fd);
	full_fd = free_fd = -1;
}

void pg_ring_forget(void)
{
	/* A forked child shares the mapping and the pipes: it must write to
	 * neither. */
	if (!pg_ring_enabled)
		return;
	stopped = True;
	active = False;
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
void pg_ring_here(ULong *at_sequence, Addr *at_cursor)
{
	if (inline_checks) {
		if (!stopped)
			out_counts();
		*at_sequence = sequence;
		*at_cursor = (Addr)out_at;
		return;
	}
	*at_sequence = filtering ? stage_generation : sequence;
	*at_cursor = active ? pg_ring_cursor : saved_cursor;
	pause_generation = pause_generation_now = *at_sequence;
	pause_cursor = pause_cursor_now = *at_cursor;
}

void pg_ring_region(Bool begin, const HChar *name, ULong at_sequence, Addr at_cursor, Bool at_given)
{
	SizeT length = VG_(strlen)(name);
	if (length == 0 || length > 255)
		return;
	UInt words = 1 + (UInt)(length + 7) / 8;
	if (inline_checks) {
		if (stopped)
			return;
		out_counts();
		if (!out_room(words))
			return;
		Addr at = (Addr)out_at;
		if (at_given && at_sequence == sequence && at_cursor >= block_start && at_cursor <= at) {
			VG_(memmove)((void *)(at_cursor + 8ull * words), (void *)at_cursor, at - at_cursor);
			at = at_cursor;
		}
		ULong *m = (ULong *)at;
		m[0] = TAG_MARKER << TAG_SHIFT | (ULong)(begin ? 1 : 0) << 56 | (ULong)length << 32 | pg_running_thread;
		m[words - 1] = 0;
		VG_(memcpy)(m + 1, name, length);
		out_at += words;
		return;
	}
	ULong before = sequence;
	ULong *w = ring_reserve(words);
	if (!w)
		return;
	Addr position = (Addr)w;
	if (filtering) {
		/* where the words at that position are now (stage_flush) */
		if (at_given && at_sequence == pause_generation && at_cursor == pause_cursor) {
			at_sequence = pause_generation_now;
			at_cursor = pause_cursor_now;
		}
		if (at_given && at_sequence == stage_generation && at_cursor >= (Addr)stage && at_cursor <= pg_ring_cursor)
			position = at_cursor;
	} else if (at_given && before == sequence && at_sequence == sequence && at_cursor >= block_start &&
	           at_cursor <= pg_ring_cursor) {
		position = at_cursor;
	}
	VG_(memmove)((void *)(position + 8ull * words), (void *)position, pg_ring_cursor - position);
	w = (ULong *)position;
	w[0] = TAG_MARKER << TAG_SHIFT | (ULong)(begin ? 1 : 0) << 56 | (ULong)length << 32 | pg_running_thread;
	w[words - 1] = 0;
	VG_(memcpy)(w + 1, name, length);
	ring_done(words);
}

ULong pg_ring_records(void) { return filtering ? model.total_records : records; }
const HChar *pg_ring_error(void) { return error; }

/* ---- The instrumentation ---- */

static IRTemp assign(IRSB *out, IRType type, IRExpr *expression)
{
	IRTemp t = newIRTemp(out->tyenv, type);
	addStmtToIRSB(out, IRStmt_WrTmp(t, expression));
	return t;
}

/* Sends a definition of these events; returns its number. */
static Bool define_here(const pg_event *list, Int count, UInt *id_out);

static Bool define(const pg_event *events, Int count, UInt *id_out)
{
	if (filtering)
		return define_here(events, count, id_out);
	if (data_counts_capacity <= next_id) {
		UInt capacity = data_counts_capacity ? 2 * data_counts_capacity : 4096;
		data_counts = VG_(realloc)("pg.ring.counts", data_counts, 2 * (SizeT)capacity);
		data_counts_capacity = capacity;
	}
	ULong *w = ring_reserve(1 + (UInt)count);
	if (!w)
		return False;
	UInt id = next_id++, data = 0;
	w[0] = TAG_DEFINE << TAG_SHIFT | (ULong)count << 32 | id;
	for (Int i = 0; i < count; i++) {
		w[1 + i] = (ULong)events[i].instruction | (ULong)events[i].size << 48 | (ULong)events[i].kind << 62;
		data += events[i].kind != EVENT_INSTRUCTION;
	}
	ring_done(1 + (UInt)count);
	data_counts[2 * id] = (UChar)data;
	data_counts[2 * id + 1] = (UChar)(count - (Int)data);
	*id_out = id;
	return True;
}

/* Keeps a definition in the tool (filter mode): its events as the ring's
 * definition words, and its fast form. */
static Bool define_here(const pg_event *list, Int count, UInt *id_out)
{
	if (!pg_ring_enabled || stopped)
		return False;
	UInt need = 3 + 4 * (UInt)count;
	if (program_used + need > program_capacity) {
		program_capacity = program_capacity ? 2 * program_capacity : 1u << 18;
		program = VG_(realloc)("pg.filter.program", program, program_capacity * sizeof *program);
	}
	if (program_used + need < program_used) {
		fail("too many definitions for the L1 filter");
		return False;
	}
	const pgf_cache *l1i = &model.l1[0];
	ULong lines[2 * PG_EVENTS_MAX], descs[PG_EVENTS_MAX], evs[PG_EVENTS_MAX];
	UInt nlines = 0, data = 0, fetches = 0, straddles = 0, reads = 0, writes = 0;
	Bool fast = True, plain = True;
	for (Int i = 0; i < count; i++) {
		const pg_event *e = &list[i];
		/* the size as the simulator cuts it; a modify as its rule says */
		UInt size = (UInt)e->size;
		if (model.max_size && size > model.max_size)
			size = model.max_size;
		UInt akind = e->kind == EVENT_INSTRUCTION ? PGF_FETCH : e->kind == EVENT_LOAD ? PGF_READ :
		             e->kind == EVENT_STORE ? PGF_WRITE : model.modify == PGF_MODIFY_READ ? PGF_READ :
		             model.modify == PGF_MODIFY_WRITE ? PGF_WRITE : 3;
		evs[i] = (ULong)e->instruction | (ULong)size << 48 | (ULong)akind << 62;
		if (e->kind != EVENT_INSTRUCTION) {
			UInt k = akind == 3 ? PGF_WRITE : akind;
			plain = plain && akind != 3 && size != 0;
			reads += akind == PGF_READ;
			writes += akind == PGF_WRITE;
			descs[data++] = size | (ULong)akind << 16 | (ULong)model.need[k] << 24 | (ULong)model.want[k] << 32 |
			                (ULong)model.dirty[k] << 40;
			continue;
		}
		ULong first = (ULong)e->instruction >> l1i->line_bits, last = ((ULong)e->instruction + size - 1) >> l1i->line_bits;
		if (size == 0 || last > first + 1) {
			fast = False;
			continue;
		}
		fetches++;
		straddles += last != first;
		for (ULong line = first; line <= last && fast; line++) {
			ULong front = (line & l1i->set_mask) * l1i->assoc;
			UInt k;
			if (front >= (1ull << 22)) {
				fast = False;
				break;
			}
			for (k = 0; k < nlines; k++) {
				if ((lines[k] & ((1ull << 42) - 1)) == line)
					break;
				if (lines[k] >> 42 == front)
					fast = False;   /* two lines of one set are never both at the front */
			}
			if (k == nlines && fast)
				lines[nlines++] = line | front << 42;
		}
	}
	if (!fast)
		nlines = 0;
	ULong *blob = program + program_used;
	blob[0] = (ULong)count | (ULong)data << 8 | (ULong)(fast ? nlines : 0xff) << 16 | (ULong)(plain ? 1 : 0) << 24 |
	          (ULong)((UInt)count * PGF_RECORD_MAX_WORDS) << 32;
	blob[1] = (ULong)count | (ULong)fetches << 21 | (ULong)straddles << 42;
	blob[2] = (ULong)reads | (ULong)writes << 32;
	UInt at = 3;
	for (UInt i = 0; i < nlines; i++)
		blob[at++] = lines[i];
	for (UInt i = 0; i < data; i++)
		blob[at++] = descs[i];
	for (Int i = 0; i < count; i++)
		blob[at++] = evs[i];
	*id_out = program_used;
	program_used += at;
	next_id++;
	return True;
}


/* ---- Inline checks: the instrumentation ---- */

static IRExpr *word(ULong value) { return IRExpr_Const(IRConst_U64(value)); }
static IRExpr *temp(IRTemp t) { return IRExpr_RdTmp(t); }

/* Adds a constant to a 64-bit counter of the tool (inline, no call). */
static void add_inline(IRSB *out, ULong *counter, ULong amount)
{
	if (amount == 0)
		return;
	IRTemp old = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)counter)));
	IRTemp sum = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, temp(old), word(amount)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)counter), temp(sum)));
}

/* Nonzero (an I64) when the metadata byte at `meta` fails kind k's test
 * of a hit that changes nothing (the need and want of pgf_hit, and the dirty
 * bits already set); NULL when no metadata the model gives can fail it. */
static IRExpr *meta_mismatch(IRSB *out, IRExpr *meta, UInt k)
{
	if (!meta_checked[k])
		return NULL;
	IRTemp loaded = assign(out, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8, meta));
	IRTemp byte = assign(out, Ity_I64, IRExpr_Unop(Iop_8Uto64, temp(loaded)));
	ULong mask = (ULong)(model.need[k] | model.dirty[k]), value = (ULong)(model.want[k] | model.dirty[k]);
	IRTemp masked = assign(out, Ity_I64, IRExpr_Binop(Iop_And64, temp(byte), word(mask)));
	return temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Xor64, temp(masked), word(value))));
}

static IRExpr *either(IRSB *out, IRExpr *a, IRExpr *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Or64, a, b)));
}

static void call_check(IRSB *out, Bool fetch, IRExpr *address, ULong how, IRExpr *nonzero)
{
	IRDirty *call = fetch ? unsafeIRDirty_0_N(2, "filter_fetch", VG_(fnptr_to_fnentry)(filter_fetch),
	                                          mkIRExprVec_2(address, mkIRExpr_HWord((HWord)how)))
	                      : unsafeIRDirty_0_N(2, "filter_data", VG_(fnptr_to_fnentry)(filter_data),
	                                          mkIRExprVec_2(address, mkIRExpr_HWord((HWord)how)));
	if (nonzero)
		call->guard = temp(assign(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, nonzero, word(0))));
	addStmtToIRSB(out, IRStmt_Dirty(call));
}

/* The offset in bytes of the front way of address's set in an array of
 * `scale`-byte entries (scale a power of two): with 64-byte lines, 8 ways and
 * 8-byte tags it is the address's set bits as they are, one And. */
static IRExpr *front_offset(IRSB *out, const pgf_cache *c, IRExpr *address, UInt scale)
{
	UInt scale_bits = 0, way_bits = 0;
	while ((1u << scale_bits) < scale)
		scale_bits++;
	while ((1u << way_bits) < c->assoc)
		way_bits++;
	if ((1u << way_bits) == c->assoc && c->line_bits >= way_bits + scale_bits) {
		UInt shift = c->line_bits - way_bits - scale_bits;
		IRExpr *shifted = shift == 0 ? address
		                             : temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Shr64, address,
		                                                                        IRExpr_Const(IRConst_U8((UChar)shift)))));
		return temp(assign(out, Ity_I64, IRExpr_Binop(Iop_And64, shifted, word(c->set_mask << (way_bits + scale_bits)))));
	}
	IRTemp line = assign(out, Ity_I64, IRExpr_Binop(Iop_Shr64, address, IRExpr_Const(IRConst_U8((UChar)c->line_bits))));
	IRTemp set = assign(out, Ity_I64, IRExpr_Binop(Iop_And64, temp(line), word(c->set_mask)));
	return temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Mul64, temp(set), word((ULong)c->assoc * scale))));
}

/* An instruction fetch: a check of each of its lines that is not the line
 * the superblock fetched last (only an L1I miss changes the L1I, and a
 * miss goes through filter_fetch, after which its lines are at the front). */
static void check_fetch(IRSB *out, Addr instruction, UInt size, ULong *fetches, ULong *straddles)
{
	const pgf_cache *c = &model.l1[0];
	ULong first = (ULong)instruction >> c->line_bits, last = ((ULong)instruction + size - 1) >> c->line_bits;
	if (size == 0 || last > first + 1) {
		call_check(out, True, mkIRExpr_HWord((HWord)instruction), size | CHECK_UNCOUNTED, NULL);
		fetch_line_known = ~0ull;
		return;
	}
	(*fetches)++;
	*straddles += last != first;
	IRExpr *miss = NULL;
	for (ULong line = first; line <= last; line++) {
		if (line == fetch_line_known && !meta_checked[PGF_FETCH])
			continue;
		ULong front = (line & c->set_mask) * c->assoc;
		IRTemp tag = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&c->tags[front])));
		miss = either(out, miss, temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Xor64, temp(tag), word(line)))));
		miss = either(out, miss, meta_mismatch(out, mkIRExpr_HWord((HWord)&c->meta[front]), PGF_FETCH));
	}
	fetch_line_known = last;
	if (miss)
		call_check(out, True, mkIRExpr_HWord((HWord)instruction), size | (last != first ? CHECK_STRADDLE : 0), miss);
}

/* A data reference: its line at the front of its set, within one line,
 * its metadata as a hit that changes nothing wants.  The front way of the
 * first byte's set is compared with the last byte's line: they are equal
 * only when the reference is within one line (two lines are in different
 * sets, and a set holds only its own lines) and that line is at the front. */
static void check_data(IRSB *out, IRExpr *address, UInt akind, UInt size, ULong counts[3])
{
	const pgf_cache *c = &model.l1[1];
	ULong how = size | (ULong)akind << CHECK_KIND_SHIFT;
	if (size == 0) {
		call_check(out, False, address, how | CHECK_UNCOUNTED, NULL);
		return;
	}
	if (akind == 3) {
		counts[PGF_READ]++;
		counts[PGF_WRITE]++;
	} else {
		counts[akind]++;
	}
	IRExpr *bits = IRExpr_Const(IRConst_U8((UChar)c->line_bits));
	IRTemp at = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, front_offset(out, c, address, 8),
	                                               mkIRExpr_HWord((HWord)c->tags)));
	IRTemp tag = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, temp(at)));
	IRExpr *end = size == 1 ? address : temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, address, word(size - 1))));
	IRTemp last = assign(out, Ity_I64, IRExpr_Binop(Iop_Shr64, end, bits));
	UInt kinds[2] = { akind == 3 ? PGF_READ : akind, akind == 3 ? PGF_WRITE : akind };
	if (!meta_checked[kinds[0]] && !meta_checked[kinds[1]]) {
		IRTemp differ = assign(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, temp(tag), temp(last)));
		IRDirty *call = unsafeIRDirty_0_N(2, "filter_data", VG_(fnptr_to_fnentry)(filter_data),
		                                  mkIRExprVec_2(address, mkIRExpr_HWord((HWord)how)));
		call->guard = temp(differ);
		addStmtToIRSB(out, IRStmt_Dirty(call));
		return;
	}
	IRExpr *miss = temp(assign(out, Ity_I64, IRExpr_Binop(Iop_Xor64, temp(tag), temp(last))));
	{
		IRTemp meta = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, front_offset(out, c, address, 1),
		                                                 mkIRExpr_HWord((HWord)c->meta)));
		miss = either(out, miss, meta_mismatch(out, temp(meta), kinds[0]));
		if (kinds[1] != kinds[0])
			miss = either(out, miss, meta_mismatch(out, temp(meta), kinds[1]));
	}
	call_check(out, False, address, how, miss);
}

static void emit_single(IRSB *out, const pg_event *e);
static Bool definable(const pg_event *e);

/* A flushed event list as inline checks, in order, then its counts. */
static void emit_checks(IRSB *out, const pg_event *events, Int count)
{
	ULong fetches = 0, straddles = 0, records = 0, counts[3] = { 0, 0, 0 };
	for (Int i = 0; i < count; i++) {
		const pg_event *e = &events[i];
		if (e->guard || !definable(e)) {
			emit_single(out, e);
			continue;
		}
		records++;
		UInt size = (UInt)e->size;
		if (model.max_size && size > model.max_size)
			size = model.max_size;
		if (e->kind == EVENT_INSTRUCTION) {
			check_fetch(out, e->instruction, size, &fetches, &straddles);
			continue;
		}
		UInt akind = e->kind == EVENT_LOAD ? PGF_READ : e->kind == EVENT_STORE ? PGF_WRITE :
		             model.modify == PGF_MODIFY_READ ? PGF_READ : model.modify == PGF_MODIFY_WRITE ? PGF_WRITE : 3;
		check_data(out, e->address, akind, size, counts);
	}
	add_inline(out, &model.straddles, straddles);
	ULong packed = records | fetches << 16 | counts[PGF_READ] << 32 | counts[PGF_WRITE] << 48;
	if (packed == 0)
		return;
	tl_assert(records <= PG_EVENTS_MAX && fetches <= PG_EVENTS_MAX && counts[PGF_READ] <= PG_EVENTS_MAX &&
	          counts[PGF_WRITE] <= PG_EVENTS_MAX);
	IRTemp old = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&packed_counts)));
	IRTemp sum = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, temp(old), word(packed)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&packed_counts), temp(sum)));
	IRTemp high = assign(out, Ity_I64, IRExpr_Binop(Iop_And64, temp(sum), word(PACKED_FULL)));
	IRDirty *call = unsafeIRDirty_0_N(0, "counts_full", VG_(fnptr_to_fnentry)(counts_full), mkIRExprVec_0());
	call->guard = temp(assign(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, temp(high), word(0))));
	addStmtToIRSB(out, IRStmt_Dirty(call));
}

void pg_ring_block_begin(void)
{
	fetch_line_known = ~0ull;
}

static void emit_single(IRSB *out, const pg_event *e)
{
	IRDirty *call = unsafeIRDirty_0_N(3, "pg_ring_single", VG_(fnptr_to_fnentry)(pg_ring_single),
	                                  mkIRExprVec_3(e->address, mkIRExpr_HWord((HWord)((UInt)e->size | (UInt)e->kind << 16)),
	                                                mkIRExpr_HWord((HWord)e->instruction)));
	if (e->guard)
		call->guard = e->guard;
	addStmtToIRSB(out, IRStmt_Dirty(call));
}

static void emit_run(IRSB *out, const pg_event *events, Int count)
{
	UInt id;
	if (!define(events, count, &id))
		return;   /* the ring has stopped (an error, or a forked child) */
	Int data = 0;
	for (Int i = 0; i < count; i++)
		data += events[i].kind != EVENT_INSTRUCTION;
	ULong need = 8ull * (1 + (ULong)data);
	IRTemp cursor = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&pg_ring_cursor)));
	IRTemp limit = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&pg_ring_limit)));
	IRTemp end = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(cursor), IRExpr_Const(IRConst_U64(need))));
	IRTemp full = assign(out, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(limit), IRExpr_RdTmp(end)));
	IRDirty *call = unsafeIRDirty_0_N(1, "pg_ring_room", VG_(fnptr_to_fnentry)(pg_ring_room),
	                                  mkIRExprVec_1(mkIRExpr_HWord((HWord)need)));
	call->guard = IRExpr_RdTmp(full);
	addStmtToIRSB(out, IRStmt_Dirty(call));
	IRTemp base = assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&pg_ring_cursor)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(base), IRExpr_Const(IRConst_U64(TAG_USE << TAG_SHIFT | (ULong)data << 32 | id))));
	Int slot = 1;
	for (Int i = 0; i < count; i++) {
		if (events[i].kind == EVENT_INSTRUCTION)
			continue;
		IRTemp at = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(base),
		                                               IRExpr_Const(IRConst_U64(8ull * (ULong)slot++))));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(at), events[i].address));
	}
	IRTemp next = assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(base), IRExpr_Const(IRConst_U64(need))));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&pg_ring_cursor), IRExpr_RdTmp(next)));
}

/* A definition holds instruction addresses below 2^48 and sizes below 2^14:
 * every x86-64 user address and access, but checked. */
static Bool definable(const pg_event *e)
{
	return (ULong)e->instruction < (1ull << 48) && e->size >= 0 && e->size < (1 << 14);
}

void pg_ring_emit(IRSB *out, const pg_event *events, Int count)
{
	if (inline_checks) {
		if (!stopped)
			emit_checks(out, events, count);
		return;
	}
	Int i = 0;
	while (i < count) {
		if (events[i].guard || !definable(&events[i])) {
			emit_single(out, &events[i]);
			i++;
			continue;
		}
		Int j = i;
		while (j < count && !events[j].guard && definable(&events[j]))
			j++;
		emit_run(out, events + i, j - i);
		i = j;
	}
}
