/* Building IR: the few statements every part of plumbgrind's
 * instrumentation adds (a constant, a temporary, a counter's increment, a
 * helper call).  Calls no other file of the tool. */
#include "pub_tool_basics.h"
#include "pub_tool_machine.h"
#include "pub_tool_tooliface.h"
#include "plumbgrind.h"

IRExpr *pg_ir_word(ULong value)
{
	return IRExpr_Const(IRConst_U64(value));
}

IRTemp pg_ir_assign(IRSB *out, IRType type, IRExpr *expression)
{
	IRTemp t = newIRTemp(out->tyenv, type);
	addStmtToIRSB(out, IRStmt_WrTmp(t, expression));
	return t;
}

IRTemp pg_ir_add(IRSB *out, ULong *counter, ULong amount)
{
	IRTemp old = pg_ir_assign(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)counter)));
	IRTemp sum = pg_ir_assign(out, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old), pg_ir_word(amount)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)counter), IRExpr_RdTmp(sum)));
	return sum;
}

void pg_ir_call(IRSB *out, const HChar *name, void *function, IRExpr **arguments, Int regparms, IRExpr *guard)
{
	IRDirty *call = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(function), arguments);
	if (guard)
		call->guard = guard;
	addStmtToIRSB(out, IRStmt_Dirty(call));
}
