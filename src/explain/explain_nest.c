/* Loops priced in the loop around them (docs/explain.md, "Loop nests").
 *
 * llvm-mca prices a block as if it ran forever: a loop body whose
 * iterations are chained (a sum, "sum += a[s] * c[s][p]") costs the chain's
 * latency per iteration.  On an out-of-order core that is only true of a
 * long loop.  When the loop runs T iterations and the loop around it enters
 * it again with the sum reset, the next run's chain does not wait for this
 * one, and the reorder buffer (512 entries on Golden Cove, 320 on Zen 4)
 * holds the end of one run and the start of the next: 1 + W/T runs are in
 * flight, W the iterations the buffer holds.  PolyBench's doitgen runs its
 * 8-instruction chained body 60 times per entry: alone, 2 cycles per
 * iteration (the add's latency); run, 1.4.
 *
 * llvm-mca itself cannot show this: its buffer holds unfused micro-ops (a
 * load and its operation are two, a compare and its branch two) where the
 * core's holds fused ones, so it sees a third fewer iterations in flight,
 * and no option sets its size.  So the overlap is computed here from its
 * model's buffer size and the block's fused micro-ops, for a hot one-block
 * loop entered from the block before it and left to the block after it,
 * which jumps back to the one before (the shape compilers give a loop
 * inside another), when every register the body carries (other than its
 * counters) is written afresh by the block before: a sum carried on from
 * the last run (not reset) keeps its chain.  The loop around may also jump
 * back to a head a block or two before that one, which tests the trip
 * count and skips the body when it would run no iteration (a triangle's
 * first or last row: PolyBench's trmm and cholesky); the head and the
 * blocks up to the body then together reset the chain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "explain/explain_internal.h"

/* The start of the line that ends at end (trailing blanks and newlines
 * before end skipped), *line_end its end. */
static const char *line_before(const char *text, const char *end, const char **line_end)
{
	while (end > text && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	const char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	*line_end = end;
	return start;
}

/* The last line of an AT&T listing (one instruction a line), into out. */
static void last_line(const char *text, char *out, size_t size)
{
	const char *end;
	const char *start = line_before(text, text + strlen(text), &end);
	while (start < end && (*start == ' ' || *start == '\t'))
		start++;
	size_t len = (size_t)(end - start);
	if (len >= size)
		len = size - 1;
	memcpy(out, start, len);
	out[len] = 0;
}

static bool jumps(const char *text, uint64_t end_address, uint64_t target, bool conditional_only)
{
	if (!text)
		return false;
	char line[256];
	last_line(text, line, sizeof line);
	/* a conditional jump: j<cc> but not jmp (unless any will do);
	 * llvm-mc writes its operand as the displacement from the end of the
	 * instruction ("jne -33") */
	if (line[0] != 'j' || (conditional_only && !strncmp(line, "jmp", 3)))
		return false;
	const char *operand = line + strcspn(line, " \t");
	operand += strspn(operand, " \t");
	if (!*operand)
		return false;
	char *rest;
	long long displacement = strtoll(operand, &rest, 0);
	if (rest == operand || (*rest && *rest != ' ' && *rest != '\t'))
		return false;   /* "jne *%rax", a symbol: not a displacement */
	return end_address + (uint64_t)displacement == target;
}

bool explain_block_jumps_to(const char *text, uint64_t end_address, uint64_t target)
{
	return jumps(text, end_address, target, true);
}

bool explain_block_jumps_back(const char *text, uint64_t end_address, uint64_t target)
{
	return jumps(text, end_address, target, false);
}

int explain_nest_head(const explain_nest_block *before, int n, const explain_nest_block *after)
{
	if (!before || !after || n < 1 || !after->text || !before[0].text || !before[0].runs ||
	    after->runs < before[0].runs)
		return -1;
	for (int k = 0; k < n; k++) {
		const explain_nest_block *b = &before[k];
		if (!b->text || (k > 0 && b->start + b->bytes != before[k - 1].start))
			return -1;   /* not falling through to the one after it */
		if (explain_block_jumps_to(after->text, after->start + after->bytes, b->start))
			return b->runs == after->runs ? k : -1;
	}
	return -1;
}

double explain_nest_overlap_cycles(double cycles, double floor, double rob_entries, double fused_uops, double trips)
{
	if (!(cycles > 0) || !(rob_entries > 0) || !(fused_uops > 0) || !(trips > 0))
		return cycles;
	/* the buffer holds `window` iterations: while one run's chain ends, the
	 * next run's first window - trips iterations, and so on: 1 + window /
	 * trips runs in flight, each at the chain's pace */
	double window = rob_entries / fused_uops;
	double overlapped = cycles / (1 + window / trips);
	if (overlapped < floor)
		overlapped = floor;
	return overlapped < cycles ? overlapped : cycles;
}

double explain_block_fused_uops(const char *text, unsigned instructions)
{
	if (!text || instructions == 0)
		return instructions;
	/* the line before the last: a compare, test or simple arithmetic that
	 * fuses with the conditional jump after it (Intel since Sandy Bridge
	 * fuses cmp, test, add, sub, and, inc and dec; AMD since Zen cmp and
	 * test, which are what loops end with) */
	const char *end;
	const char *last = line_before(text, text + strlen(text), &end);
	if (last == text)
		return instructions;
	const char *previous = line_before(text, last, &end);
	last += strspn(last, " \t");
	previous += strspn(previous, " \t");
	static const char *const fusing[] = { "cmp", "test", "add", "sub", "and", "inc", "dec", NULL };
	bool jump = last[0] == 'j' && strncmp(last, "jmp", 3) != 0;
	bool fuses = false;
	for (int k = 0; fusing[k] && jump; k++)
		fuses = fuses || !strncmp(previous, fusing[k], strlen(fusing[k]));
	return fuses && instructions > 1 ? instructions - 1.0 : instructions;
}

double explain_loop_fill_cycles(double once, double twice)
{
	/* once: cycles per execution of the text over N iterations, fill
	 * included; twice: of the text repeated, over the same N (2N bodies).
	 * The steady state is twice - once per body, the fill N x once - N x
	 * (twice - once), per execution 2 once - twice */
	if (!(once > 0) || !(twice > 0) || twice <= once)
		return 0;
	double fill = 2 * once - twice;
	return fill > 0 ? fill : 0;
}
