/* The validation kernels in x86-64 assembly (System V ABI: arguments in
 * rdi, rsi, rdx, rcx; rax returns).  See kernels.h for why assembly.
 * Each is a leaf that uses only caller-saved registers.  The loop bodies
 * are what tests/unit/test_validate_kernels.c checks in the disassembly of
 * this object and in exact Valgrind counts. */
#include "validate/kernels.h"

#define VK_BEGIN(name) \
	".text\n\t.p2align 6\n\t.globl " #name "\n\t.hidden " #name "\n\t.type " #name ", @function\n" #name ":\n\t"
#define VK_END(name) ".size " #name ", .-" #name "\n"

__asm__(
	VK_BEGIN(vk_touch_stride)
	"test %rdx, %rdx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"movb $1, (%rdi)\n\t"
	"add %rsi, %rdi\n\t"
	"dec %rdx\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_touch_stride)

	VK_BEGIN(vk_store_int_stride)
	"test %rdx, %rdx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"movl $12, (%rdi)\n\t"
	"add %rsi, %rdi\n\t"
	"dec %rdx\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_store_int_stride)

	VK_BEGIN(vk_store_int_pairs)
	"test %rcx, %rcx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"movl $12, (%rdi)\n\t"
	"movl $12, (%rdi,%rdx)\n\t"
	"add %rsi, %rdi\n\t"
	"dec %rcx\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_store_int_pairs)

	VK_BEGIN(vk_load_stride)
	"xor %eax, %eax\n\t"
	"test %rdx, %rdx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"add (%rdi), %rax\n\t"
	"add %rsi, %rdi\n\t"
	"dec %rdx\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_load_stride)

	VK_BEGIN(vk_chase)
	"test %rsi, %rsi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"mov (%rdi), %rdi\n\t"
	"dec %rsi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"mov %rdi, %rax\n\t"
	"ret\n\t"
	VK_END(vk_chase)

	VK_BEGIN(vk_read_increment_stride)
	"test %rdx, %rdx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"mov (%rdi), %eax\n\t"
	"add $1, %eax\n\t"
	"mov %eax, (%rdi)\n\t"
	"add %rsi, %rdi\n\t"
	"dec %rdx\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_read_increment_stride)

	VK_BEGIN(vk_read_lines_progress)
	"xor %eax, %eax\n\t"
	"xor %r8d, %r8d\n\t"
	"test %rdx, %rdx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"add (%rdi), %rax\n\t"
	"inc %r8\n\t"
	"mov %r8, (%rcx)\n\t"
	"add %rsi, %rdi\n\t"
	"cmp %rdx, %r8\n\t"
	"jne 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_read_lines_progress)

	VK_BEGIN(vk_branch_loops)
	"test %rdi, %rdi\n\t"
	"jz 3f\n"
	"1:\n\t"
	"mov %rsi, %rax\n"
	"2:\n\t"
	"dec %rax\n\t"
	"jnz 2b\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n"
	"3:\n\t"
	"ret\n\t"
	VK_END(vk_branch_loops)

	VK_BEGIN(vk_cycles)
	"xor %eax, %eax\n\t"
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"add $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\t"
	"add $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\t"
	"add $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\t"
	"add $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_cycles)

	VK_BEGIN(vk_instructions)
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"add $1, %rax\n\tadd $1, %rcx\n\tadd $1, %rdx\n\tadd $1, %rsi\n\t"
	"add $1, %r8\n\tadd $1, %r9\n\tadd $1, %r10\n\tadd $1, %r11\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_instructions)

	VK_BEGIN(vk_loads)
	"test %rsi, %rsi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"mov (%rdi), %rax\n\tmov 8(%rdi), %rcx\n\tmov 16(%rdi), %rdx\n\tmov 24(%rdi), %r8\n\t"
	"dec %rsi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_loads)

	VK_BEGIN(vk_stores)
	"test %rsi, %rsi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"mov %rsi, (%rdi)\n\tmov %rsi, 8(%rdi)\n\tmov %rsi, 16(%rdi)\n\tmov %rsi, 24(%rdi)\n\t"
	"dec %rsi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_stores)

	/* xmm1 = 1.0 multiplier, xmm2 = 0.0 addend: values stay 1.0, so no
	 * denormal or NaN assists change the timing of the FP units. */
	VK_BEGIN(vk_fp_ops)
	"mov $0x3ff0000000000000, %rax\n\t"
	"movq %rax, %xmm0\n\t"
	"movq %rax, %xmm1\n\t"
	"movq %rax, %xmm3\n\t"
	"pxor %xmm2, %xmm2\n\t"
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"addsd %xmm2, %xmm0\n\tmulsd %xmm1, %xmm0\n\taddsd %xmm2, %xmm3\n\tmulsd %xmm1, %xmm3\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_fp_ops)

	VK_BEGIN(vk_sqrt)
	"mov $0x4000000000000000, %rax\n\t"
	"movq %rax, %xmm1\n\t"
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"sqrtsd %xmm1, %xmm0\n\tsqrtsd %xmm1, %xmm2\n\t"
	"dec %rdi\n\t"
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_sqrt)
);
