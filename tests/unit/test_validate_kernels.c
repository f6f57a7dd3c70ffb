/* The generated code of every validation kernel: the instruction sequence
 * in the linked binary (objdump of this very test program, which links
 * libplumb.a) must be exactly what the predictors assume, so no compiler
 * or flag change can silently move a prediction.  Plus the kernels' own
 * results. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "validate/kernels.h"

/* Mnemonics of function's instructions, space separated, into out. */
static int disassemble(const char *function, char *out, size_t length)
{
	char command[512];
	snprintf(command, sizeof command,
	         "objdump -d --no-show-raw-insn --disassemble=%s /proc/%d/exe 2>/dev/null", function, (int)getpid());
	FILE *p = popen(command, "r");
	if (!p) return -1;
	char line[512];
	bool inside = false;
	out[0] = 0;
	while (fgets(line, sizeof line, p)) {
		char header[128];
		snprintf(header, sizeof header, "<%s>:", function);
		if (strstr(line, header)) {
			inside = true;
			continue;
		}
		if (!inside) continue;
		if (line[0] == '\n' || strstr(line, "Disassembly of")) {
			if (out[0]) inside = false;
			continue;
		}
		char *tab = strchr(line, '\t');
		if (!tab) continue;
		char mnemonic[32];
		if (sscanf(tab + 1, "%31s", mnemonic) != 1) continue;
		size_t used = strlen(out);
		snprintf(out + used, length - used, "%s%s", used ? " " : "", mnemonic);
	}
	pclose(p);
	return 0;
}

static void expect_mix(const char *function, const char *expected)
{
	char got[2048];
	cr_assert_eq(disassemble(function, got, sizeof got), 0);
	cr_assert_str_eq(got, expected, "%s: got '%s'", function, got);
}

Test(validate_kernels, page_and_tlb_kernels_store_once_per_iteration)
{
	expect_mix("vk_touch_stride", "test je movb add dec jne ret");
	expect_mix("vk_store_int_stride", "test je movl add dec jne ret");
	expect_mix("vk_store_int_pairs", "test je movl movl add dec jne ret");
}

Test(validate_kernels, cache_kernels_load_once_per_iteration)
{
	expect_mix("vk_load_stride", "xor test je add add dec jne ret");
	expect_mix("vk_chase", "test je mov dec jne mov ret");
	/* Separate load and store: the line is first read shared, then upgraded. */
	expect_mix("vk_read_increment_stride", "test je mov add mov add dec jne ret");
	/* The intervention reader: bar1, ready, a spin; the loop; a spin on done. */
	expect_mix("vk_itv_reader", "cmpq movq pause cmpq je xor xor test je add inc mov add cmp jne pause cmpq je ret");
	/* The invalidation ping-pong: one store and a spin of loads per round. */
	expect_mix("vk_pingpong_serve", "test je movq cmpq je dec jne ret");
	expect_mix("vk_pingpong_return", "test je cmpq je movq dec jne ret");
}

Test(validate_kernels, seed003_kernels)
{
	expect_mix("vk_branch_loops", "test je mov dec jne dec jne ret");
	expect_mix("vk_instructions", "test je add add add add add add add add dec jne ret");
	expect_mix("vk_loads", "test je mov mov mov mov dec jne ret");
	expect_mix("vk_stores", "test je mov mov mov mov dec jne ret");
	expect_mix("vk_fp_ops", "movabs movq movq movq pxor test je addsd mulsd addsd mulsd dec jne ret");
	expect_mix("vk_sqrt", "movabs movq test je sqrtsd sqrtsd dec jne ret");
	/* The cases Aguilera et al. (2005) list that came later: instructions
	 * issued (dec and jnz apart, so they cannot fuse into one micro-op),
	 * single precision, divides. */
	expect_mix("vk_issued", "test je add add add add add add add add add add add add add add add add dec mov jne ret");
	expect_mix("vk_fp_single", "mov movd movd movd pxor test je addss mulss addss mulss dec jne ret");
	expect_mix("vk_fp_div", "movabs movq movabs movq movq test je divsd divsd dec jne ret");
	char cycles[2048];
	disassemble("vk_cycles", cycles, sizeof cycles);
	cr_assert_str_eq(cycles, "xor test je add add add add add add add add add add add add add add add add dec jne ret");
}

Test(validate_kernels, per_iteration_constants_match_the_code)
{
	cr_expect_eq(VK_INSTRUCTIONS_PER_ITERATION, 10);   /* 8 adds, dec, jne */
	cr_expect_eq(VK_INSTRUCTIONS_FIXED, 3);            /* test, je, ret */
	cr_expect_eq(VK_LOADS_PER_ITERATION, 4);
	cr_expect_eq(VK_STORES_PER_ITERATION, 4);
	cr_expect_eq(VK_FP_OPS_PER_ITERATION, 4);
	cr_expect_eq(VK_SQRT_PER_ITERATION, 2);
	cr_expect_eq(VK_CYCLES_PER_ITERATION, 16);
	cr_expect_eq(VK_ISSUED_PER_ITERATION, 19);         /* 16 adds, dec, mov, jne */
	cr_expect_eq(VK_ISSUED_FIXED, 3);                  /* test, je, ret */
	cr_expect_eq(VK_FP_SINGLE_PER_ITERATION, 4);
	cr_expect_eq(VK_FP_DIV_PER_ITERATION, 2);
}

Test(validate_kernels, kernels_compute_what_they_claim)
{
	uint64_t words[64] = { 0 };
	for (int i = 0; i < 64; i++) words[i] = (uint64_t)i;
	cr_expect_eq(vk_load_stride(words, 8 * sizeof(uint64_t), 8), 0 + 8 + 16 + 24 + 32 + 40 + 48 + 56);
	cr_expect_eq(vk_load_stride(words, 8, 0), 0);
	void *ring[3];
	ring[0] = &ring[1];
	ring[1] = &ring[2];
	ring[2] = &ring[0];
	cr_expect_eq(vk_chase(&ring[0], 4), &ring[1]);
	cr_expect_eq(vk_chase(&ring[0], 0), &ring[0]);
	uint32_t ints[16] = { 0 };
	vk_read_increment_stride(ints, 16, 4);
	cr_expect(ints[0] == 1 && ints[4] == 1 && ints[8] == 1 && ints[12] == 1 && ints[1] == 0);
	vk_store_int_pairs(ints, 32, 4, 2);
	cr_expect(ints[0] == 12 && ints[1] == 12 && ints[8] == 12 && ints[9] == 12);
	static vk_itv_flags flags = { .bar1 = 1, .done = 1 };
	cr_expect_eq(vk_itv_reader(words, 64, 3, &flags), 0 + 8 + 16);
	cr_expect_eq(flags.bar2, 3);
	cr_expect_eq(flags.ready, 1);
	cr_expect_eq(vk_cycles(3), 48);
	cr_expect_eq(vk_fp_ops(5), 1.0);
	double root = vk_sqrt(1);
	cr_expect(root > 1.414 && root < 1.415);
	cr_expect_eq(vk_fp_single(5), 1.0f);
	cr_expect_eq(vk_fp_div(5), 2.0);
	(void)vk_issued(3);   /* completes; its register sums are not a result */
	volatile uint64_t s = 2;
	vk_pingpong_serve(&s, 0);
	vk_pingpong_return(&s, 0);
	cr_expect_eq(s, 2);
	vk_branch_loops(3, 10);
	vk_branch_loops(0, 10);
	uint64_t line[8];
	vk_stores(line, 2);
	cr_expect_eq(line[0], 1);   /* the last iteration stores rsi = 1 */
}
