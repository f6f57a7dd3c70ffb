/* The validation kernels in x86-64 assembly (System V ABI: arguments in
 * rdi, rsi, rdx, rcx; rax returns).  See kernels.h for why assembly.
 * Each is a leaf that uses only caller-saved registers.  The loop bodies
 * are what tests/unit/test_validate_kernels.c checks in the disassembly of
 * this object and in exact Valgrind counts. */
#include "validate/kernels.h"

#define VK_BEGIN(name) \
	".text\n\t.p2align 6\n\t.globl " #name "\n\t.hidden " #name "\n\t.type " #name ", @function\n" #name ":\n\t"
#define VK_END(name) ".size " #name ", .-" #name "\n"
/* Marks the instruction after it as the one that closes the kernel's loop:
 * it runs once per trip, so an execute breakpoint on it counts the trips
 * the loop really made (validate_check_trips).  Its address is published
 * as the data pointer NAME_trip, not as a label in .text: a symbol inside
 * the function would split it for objdump and for Valgrind, which
 * attribute every instruction to the nearest symbol. */
#define VK_TRIP(name) \
	".pushsection .data.rel.ro,\"aw\"\n\t.p2align 3\n\t.globl " #name "_trip\n\t.hidden " #name \
	"_trip\n" #name "_trip:\n\t.quad .L" #name "_trip\n\t.popsection\n.L" #name "_trip:\n\t"

__asm__(
	VK_BEGIN(vk_touch_stride)
	"test %rdx, %rdx\n\t"
	"jz 2f\n"
	"1:\n\t"
	"movb $1, (%rdi)\n\t"
	"add %rsi, %rdi\n\t"
	"dec %rdx\n\t"
	VK_TRIP(vk_touch_stride)
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
	VK_TRIP(vk_store_int_stride)
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
	VK_TRIP(vk_store_int_pairs)
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
	VK_TRIP(vk_load_stride)
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
	VK_TRIP(vk_chase)
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
	VK_TRIP(vk_read_increment_stride)
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_read_increment_stride)

	/* rcx = the flags: bar1 at 0, bar2 at 128, ready at 256, done at 384
	 * (vk_itv_flags).  The spins branch with je, so the loop's jne is the
	 * function's last (the iteration check's breakpoint). */
	VK_BEGIN(vk_itv_reader)
	"cmpq $0, (%rcx)\n\t"
	"movq $1, 256(%rcx)\n"
	"1:\n\t"
	"pause\n\t"
	"cmpq $0, (%rcx)\n\t"
	"je 1b\n\t"
	"xor %eax, %eax\n\t"
	"xor %r8d, %r8d\n\t"
	"test %rdx, %rdx\n\t"
	"jz 3f\n"
	"2:\n\t"
	"add (%rdi), %rax\n\t"
	"inc %r8\n\t"
	"mov %r8, 128(%rcx)\n\t"
	"add %rsi, %rdi\n\t"
	"cmp %rdx, %r8\n\t"
	VK_TRIP(vk_itv_reader)
	"jne 2b\n"
	"3:\n\t"
	"pause\n\t"
	"cmpq $0, 384(%rcx)\n\t"
	"je 3b\n\t"
	"ret\n\t"
	VK_END(vk_itv_reader)

	VK_BEGIN(vk_branch_loops)
	"test %rdi, %rdi\n\t"
	"jz 3f\n"
	"1:\n\t"
	"mov %rsi, %rax\n"
	"2:\n\t"
	"dec %rax\n\t"
	"jnz 2b\n\t"
	"dec %rdi\n\t"
	VK_TRIP(vk_branch_loops)
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
	VK_TRIP(vk_cycles)
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
	VK_TRIP(vk_instructions)
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
	VK_TRIP(vk_loads)
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
	VK_TRIP(vk_stores)
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
	VK_TRIP(vk_fp_ops)
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
	VK_TRIP(vk_sqrt)
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_sqrt)

	/* The counted side of the intervention benchmark (Salayandia 2002,
	 * Fig. 14): write 1 to *bar1 (the handshake that lets the other thread
	 * read), then wait until *bar2 (the other thread's progress) reaches n.
	 * One store, then loads of one word: nothing else in the region. */
	VK_BEGIN(vk_itv_owner)
	"movq $1, (%rdi)\n"
	"1:\n\t"
	"pause\n\t"
	"cmpq %rdx, (%rsi)\n\t"
	"jb 1b\n\t"
	"ret\n\t"
	VK_END(vk_itv_owner)

	/* The ping-pong of the invalidation benchmark (Salayandia 2002, Fig. 16)
	 * on *s, which starts at 2: the server writes 1 and waits until the
	 * other thread has written 2 back, n rounds; the returner waits while s
	 * is 2 and writes 2, n rounds.  The spins are plain loads (no pause),
	 * as in the thesis's C loop. */
	VK_BEGIN(vk_pingpong_serve)
	"test %rsi, %rsi\n\t"
	"jz 3f\n"
	"1:\n\t"
	"movq $1, (%rdi)\n"
	"2:\n\t"
	"cmpq $1, (%rdi)\n\t"
	"je 2b\n\t"
	"dec %rsi\n\t"
	VK_TRIP(vk_pingpong_serve)
	"jnz 1b\n"
	"3:\n\t"
	"ret\n\t"
	VK_END(vk_pingpong_serve)

	VK_BEGIN(vk_pingpong_return)
	"test %rsi, %rsi\n\t"
	"jz 3f\n"
	"1:\n\t"
	"cmpq $2, (%rdi)\n\t"
	"je 1b\n\t"
	"movq $2, (%rdi)\n\t"
	"dec %rsi\n\t"
	VK_TRIP(vk_pingpong_return)
	"jnz 1b\n"
	"3:\n\t"
	"ret\n\t"
	VK_END(vk_pingpong_return)

	/* Instructions issued (Aguilera et al. 2005, §4.6): 16 register adds,
	 * dec, a mov that keeps dec and jnz apart, jnz.  Every instruction is
	 * one micro-op, and a flag-setting instruction directly before a
	 * conditional branch is fused with it into one on current x86 cores:
	 * the mov (which sets no flags) prevents that, so issued micro-ops
	 * equal instructions.  19 per iteration, 3 fixed (test, jz, ret). */
	VK_BEGIN(vk_issued)
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"add $1, %rax\n\tadd $1, %rcx\n\tadd $1, %rdx\n\tadd $1, %rsi\n\t"
	"add $1, %r8\n\tadd $1, %r9\n\tadd $1, %r10\n\tadd $1, %r11\n\t"
	"add $1, %rax\n\tadd $1, %rcx\n\tadd $1, %rdx\n\tadd $1, %rsi\n\t"
	"add $1, %r8\n\tadd $1, %r9\n\tadd $1, %r10\n\tadd $1, %r11\n\t"
	"dec %rdi\n\t"
	"mov %rdi, %r11\n\t"
	VK_TRIP(vk_issued)
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_issued)

	/* Single precision (the Pentium III undercounted single-precision
	 * multiplies, Aguilera et al. 2005, Fig. 7): 2 addss + 2 mulss per
	 * iteration on values kept at 1.0f. */
	VK_BEGIN(vk_fp_single)
	"mov $0x3f800000, %eax\n\t"
	"movd %eax, %xmm0\n\t"
	"movd %eax, %xmm1\n\t"
	"movd %eax, %xmm3\n\t"
	"pxor %xmm2, %xmm2\n\t"
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"addss %xmm2, %xmm0\n\tmulss %xmm1, %xmm0\n\taddss %xmm2, %xmm3\n\tmulss %xmm1, %xmm3\n\t"
	"dec %rdi\n\t"
	VK_TRIP(vk_fp_single)
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_fp_single)

	/* Divides: 2 independent divsd per iteration, 2.0 / 1.0 (no special
	 * operands, so no microcode assist). */
	VK_BEGIN(vk_fp_div)
	"mov $0x3ff0000000000000, %rax\n\t"
	"movq %rax, %xmm1\n\t"
	"mov $0x4000000000000000, %rax\n\t"
	"movq %rax, %xmm0\n\t"
	"movq %rax, %xmm2\n\t"
	"test %rdi, %rdi\n\t"
	"jz 2f\n"
	"1:\n\t"
	"divsd %xmm1, %xmm0\n\tdivsd %xmm1, %xmm2\n\t"
	"dec %rdi\n\t"
	VK_TRIP(vk_fp_div)
	"jnz 1b\n"
	"2:\n\t"
	"ret\n\t"
	VK_END(vk_fp_div)
);
