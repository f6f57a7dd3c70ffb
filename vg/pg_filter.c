/* The L1 filter: plumbgrind keeps the L1I and L1D of a one-core machine
 * (--plumb-filter, which plumb sim passes when its machine is one;
 * vg/pg_filter.h has the model and its rules), so that only what they do
 * not settle crosses to plumb through the ring (pg_ring.c, its transport; pg_entries.c
 * calls this file, never the other way).
 *
 * Why inline checks: cachegrind calls a helper for every instruction and
 * pays about a nanosecond a call before it simulates anything.  Nearly
 * every reference of a real program is a hit at the front of its set, which
 * changes nothing in an LRU cache, so here the instrumented code itself
 * compares each reference with the front way of its set, with no call, and
 * calls filter_fetch or filter_data only when the reference is not such a
 * hit (5-10% of them).  An earlier version copied every reference into a
 * stage and walked it; the walk's data-dependent loop cost about 8 ns a
 * flushed list, 30-50% more than these checks (docs/PERFORMANCE.md).
 *
 *   a data reference: the front way of its first byte's set against its
 *     last byte's line: equal only when the reference is within one line
 *     (two lines are in different sets, and a set holds only its own lines)
 *     and that line is at the front; a write also tests the line's metadata
 *     (owned and dirty already), as pgf_hit would;
 *   an instruction: each of its lines that is not the line the superblock
 *     fetched last (only an L1I miss or a deeper hit changes the L1I's front
 *     ways, and both go through filter_fetch, after which the instruction's
 *     lines are at the front; a data reference never changes them here: no
 *     L2, no inclusive L3).
 *
 * A flushed list's counts are added as if every reference were a hit, in
 * one add to a word of four 16-bit fields (records, fetches, reads, writes),
 * drained into the model's counts when the records field, the largest,
 * reaches 2^15; a helper takes its reference's count back and lets the
 * model count what it settles.
 * COUNTS entries go out before every thread switch, marker, collection
 * switch and at the end (pg_filter_counts), as plumb wants them. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_tooliface.h"
#include "plumbgrind.h"
#include "pg_filter.h"
#include <immintrin.h>

static pgf_model model;
static Bool meta_checked[3];             /* per access kind: a hit depends on the line's metadata */
static ULong singles_counted;            /* records pgf_record counted in total_records since the last COUNTS */
static ULong packed_counts;              /* records | fetches<<16 | reads<<32 | writes<<48 */
/* Full when the records field reaches 2^15: no other field is larger (a
 * fetch, read or write counted comes from a record counted), and testing
 * one field takes a 32-bit constant where four took a 10-byte one. */
#define PACKED_FULL 0x8000ull
static Bool wide_data_sets;              /* an 8-way L1D and AVX-512: deeper hits as one vector */
static Bool wide_fetch_sets;             /* the same for an 8-way L1I */
static ULong fetch_line_known = ~0ull;   /* instrumenting: the L1I line last checked in this superblock */
#define POOL_WAYS 4096                   /* a 256 KiB L1 of 64-byte lines */
static ULong tag_pool[2][POOL_WAYS] __attribute__((aligned(64)));
static UChar meta_pool[2][POOL_WAYS];

/* ---- Set-up ---- */

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

Bool pg_filter_open(const HChar *option)
{
	if (!pgf_parse(&model, option))
		return False;
	/* The arrays of an L1 of up to POOL_WAYS entries are static: the tool
	 * sits below 2 GiB, so the instrumented code reaches a set's front way
	 * as a 32-bit displacement from the set's offset, one load, where a
	 * heap address takes a 10-byte constant and an add in every check
	 * (sqlite3: 8% less code to translate).  Each set's tags are in cache
	 * lines of their own (8 ways: one line), not split across two: a
	 * deeper hit loads them all as one vector. */
	for (Int l = 0; l < 2; l++) {
		if (pgf_ways(&model, l) <= POOL_WAYS) {
			model.l1[l].tags = tag_pool[l];
			model.l1[l].meta = meta_pool[l];
			continue;
		}
		Addr tags = (Addr)VG_(malloc)("pg.filter.tags", pgf_ways(&model, l) * sizeof(ULong) + 63);
		model.l1[l].tags = (ULong *)((tags + 63) & ~(Addr)63);
		model.l1[l].meta = VG_(malloc)("pg.filter.meta", pgf_ways(&model, l));
	}
	pgf_reset(&model);
	/* the metadata bits the model ever gives a line: a test of others
	 * (the prefetched bit a hit needs clear) always passes */
	UChar settable = (UChar)(model.state_mask | model.dirty_bit | model.read_state | model.write_state |
	                         model.owned_state | model.clean_state | model.dirty[0] | model.dirty[1] |
	                         model.dirty[2]);
	for (Int k = 0; k < 3; k++)
		meta_checked[k] = (model.need[k] & settable) || model.want[k] || model.dirty[k];
	Bool avx512 = pg_clo_vector && cpu_has_avx512f();
	wide_data_sets = model.l1[1].assoc == 8 && avx512;
	wide_fetch_sets = model.l1[0].assoc == 8 && avx512;
	pg_filter_enabled = True;
	return True;
}

/* ---- The counts ---- */

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

void pg_filter_counts(void)
{
	drain_counts();
	if (!pg_ring_live) {
		/* what the inline code counted while not collecting */
		model.settled[0] = model.settled[1] = model.settled[2] = 0;
		model.straddles = model.records = 0;
		singles_counted = 0;
		return;
	}
	/* the records counted inline are not in the total yet */
	model.total_records += model.records - singles_counted;
	singles_counted = 0;
	ULong *w = pg_ring_reserve(PGF_COUNTS_WORDS);
	if (w)
		pg_ring_done(pgf_counts(&model, w));
}

ULong pg_filter_records(void)
{
	return model.total_records;
}

/* ---- The helpers ---- */

/* A one-line reference deeper in an 8-way set (as plumb's wide_set_hit,
 * src/sim/sim.c): found and rotated to the front as one vector of the set's
 * tags, with no branch on the way. */
static inline __attribute__((target("avx512f"))) Bool wide_hit(UInt akind, ULong address, UInt size)
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

/* A reference the L1s do not settle: its GENERAL entry into the ring. */
static void general(UInt akind, ULong address, UInt size)
{
	ULong *w = pg_ring_reserve(PGF_GENERAL_MAX_WORDS);
	if (w)
		pg_ring_done(pgf_general(&model, w, akind, address, size));
}

/* The helpers' second argument: size | kind<<16 | uncounted<<18 |
 * straddle<<19 (uncounted: the flush did not count it as a hit; straddle:
 * a fetch across two lines, counted among the straddles). */
#define CHECK_KIND_SHIFT 16
#define CHECK_UNCOUNTED (1u << 18)
#define CHECK_STRADDLE (1u << 19)

/* filter_fetch's one argument, a constant: the instruction's address (a
 * user-space address has 47 bits), its size (at most 255 here: an
 * instruction has at most 19 bytes) and the how's two flags. */
#define FETCH_SIZE_SHIFT 48
#define FETCH_UNCOUNTED (1ull << 56)
#define FETCH_STRADDLE (1ull << 57)

static UWord fetch_argument(Addr instruction, UInt size, Bool uncounted, Bool straddle)
{
	tl_assert(instruction < (1ull << FETCH_SIZE_SHIFT) && size < 256);
	return instruction | (UWord)size << FETCH_SIZE_SHIFT | (uncounted ? FETCH_UNCOUNTED : 0) |
	       (straddle ? FETCH_STRADDLE : 0);
}

/* The helpers' bodies, with `wide` a constant: each helper has a copy
 * compiled for AVX-512 with the vector search of deeper hits inline, which
 * the instrumentation calls on such hosts (a call less in each of
 * sqlite3's 30 M helper calls). */
static inline __attribute__((always_inline)) void fetch_body(UWord argument, Bool wide)
{
	if (!pg_ring_live)
		return;
	Addr address = argument & ((1ull << FETCH_SIZE_SHIFT) - 1);
	UWord how = (argument >> FETCH_SIZE_SHIFT & 0xff) | (argument & FETCH_UNCOUNTED ? CHECK_UNCOUNTED : 0) |
	            (argument & FETCH_STRADDLE ? CHECK_STRADDLE : 0);
	if (!(how & CHECK_UNCOUNTED)) {
		model.settled[PGF_FETCH]--;
		model.straddles -= (how & CHECK_STRADDLE) != 0;
	}
	UInt size = (UInt)how & 0xffff;
	/* most are lines deeper in their sets */
	if ((wide && wide_hit(PGF_FETCH, address, size)) || pgf_settle(&model, PGF_FETCH, address, size))
		return;
	general(PGF_FETCH, address, size);
}

static inline __attribute__((always_inline)) void data_body(Addr address, UWord how, Bool wide)
{
	if (!pg_ring_live)
		return;
	UInt akind = (UInt)(how >> CHECK_KIND_SHIFT) & 3, size = (UInt)how & 0xffff;
	if (akind == 3) {
		/* a modify read then written (SIM_MODIFY_READ_WRITE) */
		if (!(how & CHECK_UNCOUNTED)) {
			model.settled[PGF_READ]--;
			model.settled[PGF_WRITE]--;
		}
		if (!pgf_settle(&model, PGF_READ, address, size))
			general(PGF_READ, address, size);
		if (!pgf_settle(&model, PGF_WRITE, address, size))
			general(PGF_WRITE, address, size);
		return;
	}
	if (!(how & CHECK_UNCOUNTED))
		model.settled[akind]--;
	if ((wide && wide_hit(akind, address, size)) || pgf_settle(&model, akind, address, size))
		return;
	general(akind, address, size);
}

static VG_REGPARM(1) void filter_fetch(UWord argument)
{
	fetch_body(argument, False);
}

static __attribute__((target("avx512f"))) VG_REGPARM(1) void filter_fetch_wide(UWord argument)
{
	fetch_body(argument, True);
}

static VG_REGPARM(2) void filter_data(Addr address, UWord how)
{
	data_body(address, how, False);
}

static __attribute__((target("avx512f"))) VG_REGPARM(2) void filter_data_wide(Addr address, UWord how)
{
	data_body(address, how, True);
}

/* The same for each usual kind and size, with the how in the helper: the
 * call site passes only the address, a constant and a move less to
 * translate at every check. */
#define FILTER_DATA_OF(kind, size) \
	static VG_REGPARM(1) void filter_data_##kind##_##size(Addr address) \
	{ \
		data_body(address, (UWord)size | (UWord)kind << CHECK_KIND_SHIFT, False); \
	} \
	static __attribute__((target("avx512f"))) VG_REGPARM(1) void filter_data_wide_##kind##_##size(Addr address) \
	{ \
		data_body(address, (UWord)size | (UWord)kind << CHECK_KIND_SHIFT, True); \
	}
#define FILTER_DATA_SIZES(kind) \
	FILTER_DATA_OF(kind, 1) FILTER_DATA_OF(kind, 2) FILTER_DATA_OF(kind, 4) FILTER_DATA_OF(kind, 8) \
	FILTER_DATA_OF(kind, 16) FILTER_DATA_OF(kind, 32)
FILTER_DATA_SIZES(1)
FILTER_DATA_SIZES(2)
FILTER_DATA_SIZES(3)
#define FILTER_DATA_ROW(wide, kind) \
	{ filter_data_##wide##kind##_1, filter_data_##wide##kind##_2, filter_data_##wide##kind##_4, \
	  filter_data_##wide##kind##_8, filter_data_##wide##kind##_16, filter_data_##wide##kind##_32 }
static void (*const filter_data_of[2][4][6])(Addr) = {
	{ { NULL }, FILTER_DATA_ROW(, 1), FILTER_DATA_ROW(, 2), FILTER_DATA_ROW(, 3) },
	{ { NULL }, FILTER_DATA_ROW(wide_, 1), FILTER_DATA_ROW(wide_, 2), FILTER_DATA_ROW(wide_, 3) },
};

/* A guarded load or store, which a flush cannot count in advance. */
static VG_REGPARM(2) void filter_single(Addr address, UWord size_kind)
{
	if (!pg_ring_live)
		return;
	ULong *w = pg_ring_reserve(PGF_RECORD_MAX_WORDS);
	if (!w)
		return;
	pg_ring_done(pgf_record(&model, w, (UInt)(size_kind >> 16) & 0xff, address, (UInt)size_kind & 0xffff));
	singles_counted++;
}

/* ---- The instrumentation ---- */

static IRExpr *temp(IRTemp t) { return IRExpr_RdTmp(t); }

/* Nonzero (an I64) when the metadata byte at `meta` fails kind k's test
 * of a hit that changes nothing (the need and want of pgf_hit, and the dirty
 * bits already set). */
static IRExpr *meta_mismatch(IRSB *out, IRExpr *meta, UInt k)
{
	IRTemp loaded = pg_ir_assign(out, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8, meta));
	IRTemp byte = pg_ir_assign(out, Ity_I64, IRExpr_Unop(Iop_8Uto64, temp(loaded)));
	ULong mask = (ULong)(model.need[k] | model.dirty[k]), value = (ULong)(model.want[k] | model.dirty[k]);
	IRTemp masked = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_And64, temp(byte), pg_ir_word(mask)));
	return temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Xor64, temp(masked), pg_ir_word(value))));
}

static IRExpr *either(IRSB *out, IRExpr *a, IRExpr *b)
{
	if (!a)
		return b;
	return temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Or64, a, b)));
}

/* A call of helper with (address, how), when guard (an I1) holds, or
 * always when it is NULL. */
static void call(IRSB *out, const HChar *name, void *helper, IRExpr *address, ULong how, IRExpr *guard)
{
	pg_ir_call(out, name, helper, mkIRExprVec_2(address, mkIRExpr_HWord((HWord)how)), 2, guard);
}

/* A call of filter_data, or of its copy for the kind and size of how
 * when there is one, when guard holds. */
static void call_data(IRSB *out, IRExpr *address, ULong how, IRExpr *guard)
{
	UInt kind = (UInt)(how >> CHECK_KIND_SHIFT) & 3, size = (UInt)how & 0xffff, size_index = 0;
	while (size_index < 6 && (1u << size_index) != size)
		size_index++;
	if (how & CHECK_UNCOUNTED || kind == 0 || size_index == 6) {
		call(out, "filter_data", wide_data_sets ? filter_data_wide : filter_data, address, how, guard);
		return;
	}
	pg_ir_call(out, "filter_data_of", filter_data_of[wide_data_sets][kind][size_index], mkIRExprVec_1(address), 1, guard);
}

/* A call of filter_fetch (its AVX-512 copy on such hosts) with its one
 * constant argument, when guard holds, or always when it is NULL. */
static void call_fetch(IRSB *out, Addr instruction, UInt size, Bool uncounted, Bool straddle, IRExpr *guard)
{
	pg_ir_call(out, "filter_fetch", wide_fetch_sets ? filter_fetch_wide : filter_fetch,
	           mkIRExprVec_1(mkIRExpr_HWord(fetch_argument(instruction, size, uncounted, straddle))), 1, guard);
}

static IRExpr *nonzero(IRSB *out, IRExpr *value)
{
	return temp(pg_ir_assign(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, value, pg_ir_word(0))));
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
		                             : temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Shr64, address,
		                                                                        IRExpr_Const(IRConst_U8((UChar)shift)))));
		return temp(pg_ir_assign(out, Ity_I64,
		                         IRExpr_Binop(Iop_And64, shifted, pg_ir_word(c->set_mask << (way_bits + scale_bits)))));
	}
	IRTemp line = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Shr64, address, IRExpr_Const(IRConst_U8((UChar)c->line_bits))));
	IRTemp set = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_And64, temp(line), pg_ir_word(c->set_mask)));
	return temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Mul64, temp(set), pg_ir_word((ULong)c->assoc * scale))));
}

static void check_fetch(IRSB *out, Addr instruction, UInt size, ULong *fetches, ULong *straddles)
{
	const pgf_cache *c = &model.l1[0];
	ULong first = (ULong)instruction >> c->line_bits, last = ((ULong)instruction + size - 1) >> c->line_bits;
	if (size == 0 || last > first + 1) {
		call_fetch(out, instruction, size, True, False, NULL);
		fetch_line_known = ~0ull;
		return;
	}
	(*fetches)++;
	*straddles += last != first;
	IRExpr *miss = NULL, *only_tag = NULL;
	ULong only_line = 0;
	for (ULong line = first; line <= last; line++) {
		if (line == fetch_line_known && !meta_checked[PGF_FETCH])
			continue;
		ULong front = (line & c->set_mask) * c->assoc;
		IRTemp tag = pg_ir_assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&c->tags[front])));
		if (!meta_checked[PGF_FETCH] && last == first) {
			/* the usual case, one line and no metadata: one compare */
			only_tag = temp(tag);
			only_line = line;
			continue;
		}
		miss = either(out, miss, temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Xor64, temp(tag), pg_ir_word(line)))));
		if (meta_checked[PGF_FETCH])
			miss = either(out, miss, meta_mismatch(out, mkIRExpr_HWord((HWord)&c->meta[front]), PGF_FETCH));
	}
	fetch_line_known = last;
	if (!only_tag && !miss)
		return;   /* the line the superblock fetched last */
	IRExpr *guard = only_tag ? temp(pg_ir_assign(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, only_tag, pg_ir_word(only_line))))
	                         : nonzero(out, miss);
	call_fetch(out, instruction, size, False, last != first, guard);
}

static void check_data(IRSB *out, IRExpr *address, UInt akind, UInt size, ULong counts[3])
{
	const pgf_cache *c = &model.l1[1];
	ULong how = size | (ULong)akind << CHECK_KIND_SHIFT;
	if (size == 0) {
		call_data(out, address, how | CHECK_UNCOUNTED, NULL);
		return;
	}
	UInt first_kind = akind == 3 ? PGF_READ : akind, second_kind = akind == 3 ? PGF_WRITE : akind;
	counts[first_kind]++;
	if (second_kind != first_kind)
		counts[second_kind]++;
	IRTemp at = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, front_offset(out, c, address, 8),
	                                               mkIRExpr_HWord((HWord)c->tags)));
	IRTemp tag = pg_ir_assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, temp(at)));
	IRExpr *end = size == 1 ? address
	                        : temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, address, pg_ir_word(size - 1))));
	IRTemp last = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Shr64, end, IRExpr_Const(IRConst_U8((UChar)c->line_bits))));
	if (!meta_checked[first_kind] && !meta_checked[second_kind]) {
		call_data(out, address, how, temp(pg_ir_assign(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, temp(tag), temp(last)))));
		return;
	}
	IRExpr *miss = temp(pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Xor64, temp(tag), temp(last))));
	IRTemp meta = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, front_offset(out, c, address, 1),
	                                                 mkIRExpr_HWord((HWord)c->meta)));
	if (meta_checked[first_kind])
		miss = either(out, miss, meta_mismatch(out, temp(meta), first_kind));
	if (second_kind != first_kind && meta_checked[second_kind])
		miss = either(out, miss, meta_mismatch(out, temp(meta), second_kind));
	call_data(out, address, how, nonzero(out, miss));
}

void pg_filter_block_begin(void)
{
	fetch_line_known = ~0ull;
}

void pg_filter_emit(IRSB *out, const pg_event *events, Int count)
{
	ULong fetches = 0, straddles = 0, records = 0, counts[3] = { 0, 0, 0 };
	for (Int i = 0; i < count; i++) {
		const pg_event *e = &events[i];
		if (e->guard) {
			tl_assert(e->kind == EVENT_LOAD || e->kind == EVENT_STORE);
			call(out, "filter_single", filter_single, e->address, (UInt)e->size | (UInt)e->kind << 16, e->guard);
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
	if (straddles)
		pg_ir_add(out, &model.straddles, straddles);
	if (records == 0)
		return;
	tl_assert(records <= PG_EVENTS_MAX);
	IRTemp sum = pg_ir_add(out, &packed_counts, records | fetches << 16 | counts[PGF_READ] << 32 | counts[PGF_WRITE] << 48);
	IRTemp high = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_And64, temp(sum), pg_ir_word(PACKED_FULL)));
	pg_ir_call(out, "counts_full", counts_full, mkIRExprVec_0(), 0, nonzero(out, temp(high)));
}
