/* The IR instrumentation.
 *
 * Events are collected as lackey collects them, so that the counts equal
 * the number of lines of a lackey trace of the same run: one instruction
 * event per guest instruction (IMark), a load per load expression, guarded
 * load, dirty-helper read or CAS, a store per store, and a load followed by
 * a store of the same size to the same address atom within one event list
 * merged into one modify (x86's read-modify-write instructions).
 *
 * A pending list is flushed before every side exit, at the end of the
 * block, when full, and around the marker no-ops.  A flush adds the
 * unguarded events' counts to pg_live inline (a load, an add and a store
 * per counter, no helper call); guarded events get a guarded helper call,
 * and when a trace is written each event gets lackey's helper call, in
 * order. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_tooliface.h"
#include "plumbgrind.h"

#define MAX_DATA_SIZE 512
#define EVENTS_MAX PG_EVENTS_MAX

typedef pg_event event;

typedef struct {
	IRSB *out;
	event events[EVENTS_MAX];
	Int used;
	Addr instruction;   /* the address of the last IMark */
} instrumenter;

static VG_REGPARM(2) void count_guarded(UWord kind, UWord size)
{
	switch (kind) {
	case EVENT_LOAD:
		pg_live[PG_LOADS]++;
		pg_live[PG_BYTES_READ] += size;
		break;
	case EVENT_STORE:
		pg_live[PG_STORES]++;
		pg_live[PG_BYTES_WRITTEN] += size;
		break;
	default:
		tl_assert(0);
	}
}

static void flush(instrumenter *in, Bool group_continues)
{
	ULong sums[PG_COUNTERS] = { 0 };
	if (pg_ring_enabled)
		pg_ring_emit(in->out, in->events, in->used, group_continues);
	for (Int i = 0; i < in->used; i++) {
		event *e = &in->events[i];
		if (pg_tracing) {
			static const struct { const HChar *name; void *function; } helpers[] = {
				[EVENT_INSTRUCTION] = { "pg_trace_instruction", pg_trace_instruction },
				[EVENT_LOAD] = { "pg_trace_load", pg_trace_load },
				[EVENT_STORE] = { "pg_trace_store", pg_trace_store },
				[EVENT_MODIFY] = { "pg_trace_modify", pg_trace_modify },
			};
			pg_ir_call(in->out, helpers[e->kind].name, helpers[e->kind].function,
			         mkIRExprVec_2(e->address, mkIRExpr_HWord((HWord)e->size)), 2, e->guard);
		}
		if (!pg_counting)
			continue;
		if (e->guard) {
			tl_assert(e->kind == EVENT_LOAD || e->kind == EVENT_STORE);
			pg_ir_call(in->out, "count_guarded", count_guarded,
			         mkIRExprVec_2(mkIRExpr_HWord((HWord)e->kind), mkIRExpr_HWord((HWord)e->size)), 2, e->guard);
			continue;
		}
		switch (e->kind) {
		case EVENT_INSTRUCTION:
			sums[PG_INSTRUCTIONS]++;
			break;
		case EVENT_LOAD:
			sums[PG_LOADS]++;
			sums[PG_BYTES_READ] += (ULong)e->size;
			break;
		case EVENT_STORE:
			sums[PG_STORES]++;
			sums[PG_BYTES_WRITTEN] += (ULong)e->size;
			break;
		case EVENT_MODIFY:
			sums[PG_MODIFIES]++;
			sums[PG_BYTES_READ] += (ULong)e->size;
			sums[PG_BYTES_WRITTEN] += (ULong)e->size;
			break;
		}
	}
	for (Int c = 0; c < PG_COUNTERS && pg_counting; c++)
		if (sums[c])
			pg_ir_add(in->out, &pg_live[c], sums[c]);
	in->used = 0;
}

static event *event_add(instrumenter *in)
{
	if (in->used == EVENTS_MAX)
		flush(in, True);
	return &in->events[in->used++];
}

static void add_instruction(instrumenter *in, Addr address, UInt size)
{
	tl_assert((VG_MIN_INSTR_SZB <= size && size <= VG_MAX_INSTR_SZB) || size == VG_CLREQ_SZB);
	event *e = event_add(in);
	e->kind = EVENT_INSTRUCTION;
	e->address = mkIRExpr_HWord((HWord)address);
	e->size = (Int)size;
	e->guard = NULL;
	e->instruction = address;
	in->instruction = address;
}

static void add_load(instrumenter *in, IRExpr *address, Int size, IRExpr *guard)
{
	tl_assert(isIRAtom(address) && size >= 1 && size <= MAX_DATA_SIZE);
	event *e = event_add(in);
	e->kind = EVENT_LOAD;
	e->address = address;
	e->size = size;
	e->guard = guard;
	e->instruction = in->instruction;
}

static void add_store(instrumenter *in, IRExpr *address, Int size, IRExpr *guard)
{
	tl_assert(isIRAtom(address) && size >= 1 && size <= MAX_DATA_SIZE);
	if (!guard && in->used > 0) {
		event *last = &in->events[in->used - 1];
		if (last->kind == EVENT_LOAD && last->size == size && !last->guard && eqIRAtom(last->address, address)) {
			last->kind = EVENT_MODIFY;
			return;
		}
	}
	event *e = event_add(in);
	e->kind = EVENT_STORE;
	e->address = address;
	e->size = size;
	e->guard = guard;
	e->instruction = in->instruction;
}

/* The marker no-ops of include/plumb/valgrind.h: nopl disp32(%rax). */
static Int marker_at(Addr address, UInt length)
{
	if (length != 7)
		return 0;
	const UChar *code = (const UChar *)address;
	if (code[0] != 0x0f || code[1] != 0x1f || code[2] != 0x80 || code[3] != 0x47 || code[4] != 0x50 ||
	    code[5] != 0x70)
		return 0;
	return code[6] == 0x30 ? 1 : code[6] == 0x31 ? 2 : 0;
}

IRSB *pg_instrument(VgCallbackClosure *closure, IRSB *sb_in, const VexGuestLayout *layout,
                    const VexGuestExtents *extents, const VexArchInfo *archinfo_host, IRType guest_word,
                    IRType host_word)
{
	if (guest_word != host_word)
		VG_(tool_panic)("plumbgrind: host and guest word sizes differ");
	instrumenter in = { .out = deepCopyIRSBExceptStmts(sb_in), .used = 0, .instruction = 0 };
	if (pg_filter_enabled)
		pg_filter_block_begin();
	if (pg_ring_enabled)
		pg_ring_block_begin();
	IRTypeEnv *types = sb_in->tyenv;
	Int i = 0;
	while (i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark)
		addStmtToIRSB(in.out, sb_in->stmts[i++]);
	for (; i < sb_in->stmts_used; i++) {
		IRStmt *st = sb_in->stmts[i];
		if (!st || st->tag == Ist_NoOp)
			continue;
		switch (st->tag) {
		case Ist_AbiHint:
		case Ist_Put:
		case Ist_PutI:
		case Ist_MBE:
			break;
		case Ist_IMark: {
			Addr address = (Addr)st->Ist.IMark.addr;
			UInt length = st->Ist.IMark.len;
			Int marker = marker_at(address, length);
			if (pg_code_enabled)
				pg_code_note(address, length);
			if (marker == 1) {   /* pause: before the no-op itself */
				flush(&in, False);
				pg_ir_call(in.out, "pg_marker_pause", pg_marker_pause, mkIRExprVec_0(), 0, NULL);
			}
			add_instruction(&in, address, length);
			if (marker == 2) {   /* resume: after it */
				flush(&in, False);
				pg_ir_call(in.out, "pg_marker_resume", pg_marker_resume, mkIRExprVec_0(), 0, NULL);
			}
			break;
		}
		case Ist_WrTmp: {
			IRExpr *data = st->Ist.WrTmp.data;
			if (data->tag == Iex_Load)
				add_load(&in, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), NULL);
			break;
		}
		case Ist_Store:
			add_store(&in, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(types, st->Ist.Store.data)), NULL);
			break;
		case Ist_StoreG: {
			IRStoreG *store = st->Ist.StoreG.details;
			add_store(&in, store->addr, sizeofIRType(typeOfIRExpr(types, store->data)), store->guard);
			break;
		}
		case Ist_LoadG: {
			IRLoadG *load = st->Ist.LoadG.details;
			IRType loaded = Ity_INVALID, widened = Ity_INVALID;
			typeOfIRLoadGOp(load->cvt, &widened, &loaded);
			tl_assert(loaded != Ity_INVALID);
			add_load(&in, load->addr, sizeofIRType(loaded), load->guard);
			break;
		}
		case Ist_Dirty: {
			IRDirty *d = st->Ist.Dirty.details;
			if (d->mFx != Ifx_None) {
				tl_assert(d->mAddr != NULL && d->mSize != 0);
				if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
					add_load(&in, d->mAddr, d->mSize, NULL);
				if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
					add_store(&in, d->mAddr, d->mSize, NULL);
			}
			break;
		}
		case Ist_CAS: {
			IRCAS *cas = st->Ist.CAS.details;
			Int size = sizeofIRType(typeOfIRExpr(types, cas->dataLo));
			if (cas->dataHi != NULL)
				size *= 2;
			add_load(&in, cas->addr, size, NULL);
			add_store(&in, cas->addr, size, NULL);
			break;
		}
		case Ist_LLSC:
			if (st->Ist.LLSC.storedata == NULL) {
				add_load(&in, st->Ist.LLSC.addr, sizeofIRType(typeOfIRTemp(types, st->Ist.LLSC.result)), NULL);
				flush(&in, False);
			} else {
				add_store(&in, st->Ist.LLSC.addr, sizeofIRType(typeOfIRExpr(types, st->Ist.LLSC.storedata)),
				          NULL);
			}
			break;
		case Ist_Exit:
			flush(&in, True);
			break;
		default:
			ppIRStmt(st);
			tl_assert(0);
		}
		addStmtToIRSB(in.out, st);
	}
	flush(&in, False);
	if (pg_clo_calls && pg_ring_enabled && (sb_in->jumpkind == Ijk_Call || sb_in->jumpkind == Ijk_Ret)) {
		IRExpr *sp = IRExpr_Get(layout->offset_SP, guest_word);
		IRTemp held = newIRTemp(in.out->tyenv, guest_word);
		addStmtToIRSB(in.out, IRStmt_WrTmp(held, sp));
		if (sb_in->jumpkind == Ijk_Call) {
			IRTemp target = newIRTemp(in.out->tyenv, guest_word);
			addStmtToIRSB(in.out, IRStmt_WrTmp(target, sb_in->next));
			pg_ir_call(in.out, "pg_ring_call", pg_ring_call,
			         mkIRExprVec_3(mkIRExpr_HWord((HWord)in.instruction), IRExpr_RdTmp(target), IRExpr_RdTmp(held)), 3,
			         NULL);
		} else {
			pg_ir_call(in.out, "pg_ring_return", pg_ring_return, mkIRExprVec_1(IRExpr_RdTmp(held)), 1, NULL);
		}
	}
	if (pg_code_enabled)
		pg_code_block_end();
	return in.out;
}
