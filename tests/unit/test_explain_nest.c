/* How plumb explain prices loops inside loops (explain_nest.c and the
 * listing readers in explain_code.c): the jump back to a block's start, a
 * body's fused micro-ops, whether consecutive runs of a chained body are
 * independent (the sum reset by the block before), the overlap of those
 * runs in the reorder buffer, and the chain of a value carried through
 * memory.  The listings are gcc -O2's for PolyBench kernels. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include "explain/explain_internal.h"

/* doitgen's innermost loop and the blocks around it (gcc 12 -O2) */
static const char *const doitgen_before = "\tmovq\t$0, (%rax)\n\tmovq\t%rdx, %rdi\n\tmovq\t%rcx, %r15\n"
                                          "\tpxor\t%xmm1, %xmm1\n\tsubq\t%r9, %rdi\n\tnopl\t(%rax)\n";
static const char *const doitgen_body = "\tmovsd\t(%r15), %xmm0\n\tmulsd\t(%rdi), %xmm0\n\taddq\t$480, %rdi\n"
                                        "\taddq\t$8, %r15\n\taddsd\t%xmm0, %xmm1\n\tmovsd\t%xmm1, (%rax)\n"
                                        "\tcmpq\t%rdx, %rdi\n\tjne\t-33\n";
static const char *const doitgen_after = "\taddq\t$8, %rax\n\tleaq\t8(%rdi), %rdx\n\tcmpq\t%r10, %rax\n\tjne\t-70\n";

Test(explain_nest, a_loop_jumps_back_to_its_own_start)
{
	/* the body is 33 bytes at 0x1918: its jne goes 33 bytes back from its end */
	cr_expect(explain_block_jumps_to(doitgen_body, 0x1918 + 33, 0x1918));
	cr_expect_not(explain_block_jumps_to(doitgen_body, 0x1918 + 33, 0x1900));
	/* the block after: 13 bytes at 0x1939, back to 0x1900 (the block before) */
	cr_expect(explain_block_jumps_to(doitgen_after, 0x1939 + 13, 0x1900));
	cr_expect_not(explain_block_jumps_to("\tjmp\t-20\n", 100, 80));   /* not conditional */
	cr_expect_not(explain_block_jumps_to("\tjne\t*%rax\n", 100, 80));
	cr_expect_not(explain_block_jumps_to("\taddq\t$1, %rax\n", 100, 80));
	cr_expect_not(explain_block_jumps_to(NULL, 100, 80));
	/* a two-block loop's jump back may be unconditional */
	cr_expect(explain_block_jumps_back("\tmovaps\t%xmm0, %xmm10\n\tjmp\t-20\n", 100, 80));
	cr_expect(explain_block_jumps_back(doitgen_after, 0x1939 + 13, 0x1900));
	cr_expect_not(explain_block_jumps_back("\tjmp\t-20\n", 100, 70));
	cr_expect_not(explain_block_jumps_back("\tjmp\t*%rax\n", 100, 80));
}

Test(explain_nest, a_compare_and_its_branch_are_one_micro_op)
{
	cr_expect_float_eq(explain_block_fused_uops(doitgen_body, 8), 7, 1e-9);
	cr_expect_float_eq(explain_block_fused_uops("\tmovsd\t(%r15), %xmm0\n\tjne\t-10\n", 2), 2, 1e-9);
	cr_expect_float_eq(explain_block_fused_uops("\tsubq\t$1, %rcx\n\tjne\t-10\n", 2), 1, 1e-9);
	cr_expect_float_eq(explain_block_fused_uops("\taddsd\t%xmm0, %xmm1\n", 1), 1, 1e-9);
}

Test(explain_nest, a_sum_reset_before_each_run_makes_the_runs_independent)
{
	cr_expect(explain_nest_runs_independent(doitgen_before, doitgen_body));
	/* the same body after a block that does not reset the sum: one chain */
	const char *no_reset = "\tmovq\t$0, (%rax)\n\tmovq\t%rdx, %rdi\n\tmovq\t%rcx, %r15\n\tsubq\t%r9, %rdi\n";
	cr_expect_not(explain_nest_runs_independent(no_reset, doitgen_body));
	/* a sum loaded afresh from memory is reset too */
	const char *loaded = "\tmovsd\t(%rbx), %xmm1\n\tmovq\t%rdx, %rdi\n";
	cr_expect(explain_nest_runs_independent(loaded, doitgen_body));
	/* a copy loop carries nothing but its counters: nothing to overlap */
	const char *copy = "\tmovsd\t(%rsi), %xmm0\n\tmovsd\t%xmm0, (%rdi)\n\taddq\t$8, %rdi\n\taddq\t$8, %rsi\n"
	                   "\tcmpq\t%rdi, %rdx\n\tjne\t-30\n";
	cr_expect_not(explain_nest_runs_independent(doitgen_before, copy));
	/* three-operand AVX writes its destination without reading it */
	const char *avx_body = "\tvmovsd\t(%r15), %xmm0\n\tvaddsd\t%xmm0, %xmm1, %xmm1\n\taddq\t$8, %r15\n"
	                       "\tcmpq\t%rdx, %r15\n\tjne\t-20\n";
	cr_expect(explain_nest_runs_independent("\tvxorpd\t%xmm1, %xmm1, %xmm1\n", avx_body));
	cr_expect_not(explain_nest_runs_independent("\tvaddsd\t%xmm2, %xmm1, %xmm1\n", avx_body));
}

/* trmm's innermost loop (gcc 12 -O2): the loop around jumps back to a
 * head that loads the sum and tests whether the run is empty (the
 * triangle's last row), which falls through to the block before the body */
static const char *const trmm_head = "\tmovsd\t(%rdx), %xmm0\n\tcmpq\t$199, %r8\n\tje\t54\n";
static const char *const trmm_before = "\tleaq\t(%rdi,%rax), %r15\n\tmovq\t%rax, %rcx\n\tmovq\t%r10, %rsi\n"
                                       "\tnopw\t(%rax,%rax)\n";
static const char *const trmm_body = "\tmovsd\t(%rsi), %xmm1\n\tmulsd\t(%rcx), %xmm1\n\taddq\t$1920, %rcx\n"
                                     "\taddq\t$1600, %rsi\n\taddsd\t%xmm1, %xmm0\n\tmovsd\t%xmm0, (%rdx)\n"
                                     "\tcmpq\t%r15, %rcx\n\tjne\t-35\n";
static const char *const trmm_after = "\tmulsd\t%xmm2, %xmm0\n\taddq\t$8, %rax\n\taddq\t$8, %rdx\n"
                                      "\tmovsd\t%xmm0, -8(%rdx)\n\tcmpq\t%r9, %rax\n\tjne\t-89\n";

Test(explain_nest, a_nest_may_test_its_trip_count_before_the_body)
{
	/* doitgen: the block after jumps back to the block before */
	explain_nest_block doitgen[] = { { 0x1900, 0x18, 240, doitgen_before } };
	explain_nest_block doitgen_next = { 0x1939, 13, 240, doitgen_after };
	cr_expect_eq(explain_nest_head(doitgen, 1, &doitgen_next), 0);
	/* trmm: to the head a block earlier, which runs once a round (48000)
	 * where the block before runs once an entry (47760: 240 rounds skip) */
	explain_nest_block trmm[] = { { 0x136d, 19, 47760, trmm_before }, { 0x1360, 13, 48000, trmm_head },
	                              { 0x1338, 40, 200, "\tmovl\t%r11d, %ecx\n" } };
	explain_nest_block trmm_next = { 0x13a3, 22, 48000, trmm_after };
	cr_expect_eq(explain_nest_head(trmm, 3, &trmm_next), 1);
	cr_expect_eq(explain_nest_head(trmm, 1, &trmm_next), -1);   /* the head not among those given */
	/* the sum is reset in the head, not in the block before: the runs are
	 * independent only with the head's listing */
	char entry[512];
	snprintf(entry, sizeof entry, "%s%s", trmm_head, trmm_before);
	cr_expect(explain_nest_runs_independent(entry, trmm_body));
	cr_expect_not(explain_nest_runs_independent(trmm_before, trmm_body));
	/* a head that runs other than once a round is not the loop's */
	explain_nest_block odd[] = { trmm[0], { 0x1360, 13, 47000, trmm_head } };
	cr_expect_eq(explain_nest_head(odd, 2, &trmm_next), -1);
	/* nor one that does not fall through to the block before */
	explain_nest_block gap[] = { trmm[0], { 0x1350, 13, 48000, trmm_head } };
	explain_nest_block gap_next = { 0x13a3, 22, 48000, "\tjne\t-99\n" };
	cr_expect_eq(explain_nest_head(gap, 2, &gap_next), -1);
	/* a block before that runs more often than the block after: no nest */
	explain_nest_block busy[] = { { 0x136d, 19, 50000, trmm_before }, trmm[1] };
	cr_expect_eq(explain_nest_head(busy, 2, &trmm_next), -1);
	cr_expect_eq(explain_nest_head(NULL, 0, &trmm_next), -1);
}

/* llvm-mca's cycles over 100 iterations include the pipeline's fill:
 * syrk's body (9 instructions, LLVM 16's alderlake) takes 235 cycles for
 * 100 iterations and 435 for 100 iterations of itself written twice, so 2
 * cycles an iteration in the steady state and 35 of fill, 0.35 per
 * execution; a chain of adds (303 and 603 cycles) has 3 of fill. */
Test(explain_nest, a_loop_body_pays_the_pipeline_fill_once)
{
	cr_expect_float_eq(explain_loop_fill_cycles(2.35, 4.35), 0.35, 1e-9);
	cr_expect_float_eq(explain_loop_fill_cycles(3.03, 6.03), 0.03, 1e-9);
	/* no fill to take: the doubled text cost exactly twice, or figures missing */
	cr_expect_float_eq(explain_loop_fill_cycles(2, 4), 0, 1e-9);
	cr_expect_float_eq(explain_loop_fill_cycles(2, 4.5), 0, 1e-9);
	cr_expect_float_eq(explain_loop_fill_cycles(-1, 4), 0, 1e-9);
	cr_expect_float_eq(explain_loop_fill_cycles(2, -1), 0, 1e-9);
	cr_expect_float_eq(explain_loop_fill_cycles(2, 1.5), 0, 1e-9);
}

Test(explain_nest, runs_overlap_as_the_reorder_buffer_allows)
{
	/* doitgen: 2 cycles an iteration alone (the add chain), 60 iterations a
	 * run, 7 fused micro-ops, 512 entries: 73 iterations in the buffer,
	 * 2.2 runs in flight, so 0.91 cycles; held to the throughput of 1.17 */
	cr_expect_float_eq(explain_nest_overlap_cycles(2, 7.0 / 6, 512, 7, 60), 7.0 / 6, 1e-9);
	cr_expect_float_eq(explain_nest_overlap_cycles(2, 0.5, 512, 7, 60), 2 / (1 + 512.0 / 7 / 60), 1e-9);
	/* a long loop barely overlaps; a loop that fits many times over runs
	 * at its throughput */
	double long_loop = explain_nest_overlap_cycles(2, 0.5, 512, 7, 100000);
	cr_expect(long_loop < 2 && long_loop > 1.99);
	cr_expect_float_eq(explain_nest_overlap_cycles(2, 0.5, 512, 7, 2), 0.5, 1e-9);
	/* never more than alone; nothing known, nothing changed */
	cr_expect_float_eq(explain_nest_overlap_cycles(2, 3, 512, 7, 60), 2, 1e-9);
	cr_expect_float_eq(explain_nest_overlap_cycles(2, 0.5, 0, 7, 60), 2, 1e-9);
	cr_expect_float_eq(explain_nest_overlap_cycles(2, 0.5, 512, 7, 0), 2, 1e-9);
}

Test(explain_nest, a_value_carried_through_memory_costs_its_path)
{
	/* LLVM 16's Golden Cove: integer load 5, FP load 7, addsd 3 (2 on the
	 * core's fast adders), a store 12 (the time to write the cache) */
	const explain_chain_costs golden_cove = { .forward = 5, .int_load = 5, .fp_load = 7, .fadd = 2 };
	/* gesummv: "addsd (%rdx), %xmm0; movsd %xmm0, (%rdx)": forwarding, the
	 * add (10 - 7 = 3 in the model, 2 on the fast adders) and a cycle for
	 * the store: 8 (measured: 8.5 cycles an iteration) */
	const char *gesummv = "\tmovsd\t(%r14,%rax), %xmm0\n\tmulsd\t(%r12,%rax), %xmm0\n\taddsd\t(%rdx), %xmm0\n"
	                      "\tmovsd\t%xmm0, (%rdx)\n\tcmpq\t$2000, %rax\n\tjne\t-52\n";
	double latency[] = { 7, 11, 10, 12, 1, 1 };
	cr_expect_float_eq(explain_block_memory_chain(gesummv, latency, 6, 2, 3, &golden_cove), 8, 1e-9);
	/* without costs: the model's load-and-add latency and a cycle */
	cr_expect_float_eq(explain_block_memory_chain(gesummv, latency, 6, 2, 3, NULL), 11, 1e-9);
	/* a load, an add on the way, the store: the add counts, the multiply
	 * off the path does not */
	const char *through = "\tmovsd\t(%rdx), %xmm1\n\tmulsd\t%xmm3, %xmm2\n\taddsd\t%xmm2, %xmm1\n"
	                      "\tmovsd\t%xmm1, (%rdx)\n";
	double through_latency[] = { 7, 4, 3, 12 };
	cr_expect_float_eq(explain_block_memory_chain(through, through_latency, 4, 0, 3, NULL), 7 + 3 + 1, 1e-9);
	cr_expect_float_eq(explain_block_memory_chain(through, through_latency, 4, 0, 3, &golden_cove), 5 + 2 + 1,
	                   1e-9);
	/* one read-modify-write instruction: forwarding and its operation */
	double rmw_latency[] = { 6 };
	cr_expect_float_eq(explain_block_memory_chain("\taddl\t$1, (%rdx)\n", rmw_latency, 1, 0, 0, &golden_cove), 6,
	                   1e-9);
	/* lines beyond the listing: nothing */
	cr_expect_float_eq(explain_block_memory_chain(through, through_latency, 4, 0, 9, NULL), 0, 1e-9);
}

/* sort's hottest epilogue ("add $0x2198, %rsp; pop x6; ret") cost 31
 * cycles an execution in llvm-mca, a chain through %rsp that the stack
 * engine removes: its pushes and pops become moves, its adjustments nops. */
Test(explain_nest, the_stack_engine_takes_the_stack_pointer_off_the_chain)
{
	char buffer[128];
	const char *line = explain_block_stack_engine("\tpopq\t%rbx", buffer, sizeof buffer);
	cr_assert_not_null(line);
	cr_expect_str_eq(line, "movq\t(%rsp), %rbx");
	line = explain_block_stack_engine("pushq %r15", buffer, sizeof buffer);
	cr_assert_not_null(line);
	cr_expect_str_eq(line, "movq\t%r15, -8(%rsp)");
	line = explain_block_stack_engine("push %rbp", buffer, sizeof buffer);
	cr_assert_not_null(line);
	cr_expect_str_eq(line, "movq\t%rbp, -8(%rsp)");
	line = explain_block_stack_engine("\taddq\t$8600, %rsp", buffer, sizeof buffer);
	cr_assert_not_null(line);
	cr_expect_str_eq(line, "nop");
	line = explain_block_stack_engine("subq $24, %rsp", buffer, sizeof buffer);
	cr_assert_not_null(line);
	cr_expect_str_eq(line, "nop");
	cr_expect_null(explain_block_stack_engine("addq %rax, %rsp", buffer, sizeof buffer));   /* not a constant */
	cr_expect_null(explain_block_stack_engine("addq $8, %rax", buffer, sizeof buffer));
	cr_expect_null(explain_block_stack_engine("addq $8, %rspx", buffer, sizeof buffer));
	cr_expect_null(explain_block_stack_engine("pushw %ax", buffer, sizeof buffer));
	cr_expect_null(explain_block_stack_engine("pushq $1", buffer, sizeof buffer));
	cr_expect_null(explain_block_stack_engine("popq %r12d", buffer, sizeof buffer));
	cr_expect_null(explain_block_stack_engine("movq (%rsp), %rax", buffer, sizeof buffer));
}
