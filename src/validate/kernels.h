/* The measured inner loops of the validation microbenchmarks.  They are
 * written in assembly (kernels.c) so that neither gcc nor clang, at any
 * optimisation level, can change the instruction mix a prediction rests
 * on: seed 003 found compiler-inserted instructions (Power rounding ops,
 * Itanium NOPs) behind most of its "counter errors".  Every kernel handles
 * count == 0, touches only its arguments and the stack, and is a leaf. */
#ifndef PLUMB_VALIDATE_KERNELS_H
#define PLUMB_VALIDATE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* The intervention benchmark's handshake flags, each on its own 128-byte
 * line and written by one thread only (vk_itv_reader reads them at these
 * offsets). */
typedef struct vk_itv_flags {
	_Alignas(128) volatile uint64_t bar1;    /* the owner sets 1: the reader may read */
	_Alignas(128) volatile uint64_t bar2;    /* the reader's progress: lines read so far */
	_Alignas(128) volatile uint64_t ready;   /* the reader sets 1: it has bar1 and is spinning */
	_Alignas(128) volatile uint64_t done;    /* the owner sets 1 after its region: the reader may leave */
} vk_itv_flags;
_Static_assert(offsetof(vk_itv_flags, bar2) == 128 && offsetof(vk_itv_flags, ready) == 256 &&
               offsetof(vk_itv_flags, done) == 384, "vk_itv_reader reads the flags at these offsets");

/* One byte store per iteration at base + i*stride (page-fault sweep). */
void vk_touch_stride(void *base, uint64_t stride, uint64_t count);
/* One 4-byte store of 12 per iteration (seed 000's zz[i] = 12). */
void vk_store_int_stride(void *base, uint64_t stride, uint64_t count);
/* Two 4-byte stores per iteration: base and base + second (padding benchmark). */
void vk_store_int_pairs(void *base, uint64_t stride, uint64_t second, uint64_t count);
/* One 8-byte load per iteration; returns the sum. */
uint64_t vk_load_stride(const void *base, uint64_t stride, uint64_t count);
/* Dependent pointer chase: p = *p, count times; returns the last p. */
void *vk_chase(void *start, uint64_t count);
/* Per iteration: load 4 bytes, add 1, store them back (separate load and
 * store, so the line is first read shared, then upgraded). */
void vk_read_increment_stride(void *base, uint64_t stride, uint64_t count);
/* The intervention reader, the other thread's whole part while the owner's
 * region is open: read bar1, set ready, spin (pause) until bar1 is set; then
 * per iteration one load of a line and a store of the number of lines read
 * so far to bar2; then spin (pause) until done is set.  Returns the sum of
 * the loads.  In assembly, in lines of code of its own, because the reader
 * must fetch no instruction the owner fetched first: a simulated core
 * holds such a code line exclusive, and the reader's fetch of it is one
 * more intervention received (the done-wait loop of the C reader did). */
uint64_t vk_itv_reader(const void *base, uint64_t stride, uint64_t count, vk_itv_flags *flags);
/* Seed 003's branch benchmark: outer iterations of an inner loop of inner trips. */
void vk_branch_loops(uint64_t outer, uint64_t inner);
/* 16 dependent 1-cycle adds per iteration (register-only: no memory). */
uint64_t vk_cycles(uint64_t iterations);
/* 8 independent register adds + dec + jnz = 10 instructions per iteration;
 * 3 + 10 * iterations in all (test, jz, ret). */
uint64_t vk_instructions(uint64_t iterations);
/* 4 loads from one line per iteration. */
uint64_t vk_loads(const void *line, uint64_t iterations);
/* 4 stores to one line per iteration. */
void vk_stores(void *line, uint64_t iterations);
/* 2 addsd + 2 mulsd per iteration (on values kept at 1.0). */
double vk_fp_ops(uint64_t iterations);
/* 2 sqrtsd per iteration. */
double vk_sqrt(uint64_t iterations);
/* *bar1 = 1, then spin (pause) until *bar2 >= n: the intervention
 * benchmark's counted region, one store and loads of *bar2. */
void vk_itv_owner(volatile uint64_t *bar1, volatile uint64_t *bar2, uint64_t n);
/* Invalidation ping-pong on *s (starting at 2), n rounds each: serve
 * writes 1 and waits for 2; return waits while 2, then writes 2. */
void vk_pingpong_serve(volatile uint64_t *s, uint64_t rounds);
void vk_pingpong_return(volatile uint64_t *s, uint64_t rounds);
/* 16 register adds + dec + mov + jnz = 19 single-micro-op instructions per
 * iteration, dec and jnz kept apart so they cannot fuse; 3 fixed. */
uint64_t vk_issued(uint64_t iterations);
/* 2 addss + 2 mulss per iteration (single precision, values kept at 1.0f). */
float vk_fp_single(uint64_t iterations);
/* 2 divsd per iteration (2.0 / 1.0). */
double vk_fp_div(uint64_t iterations);

/* The address of the instruction that closes each kernel's loop (it runs
 * once per trip): where validate_check_trips puts an execute breakpoint. */
extern const void *const vk_touch_stride_trip, *const vk_store_int_stride_trip,
	*const vk_store_int_pairs_trip, *const vk_load_stride_trip, *const vk_chase_trip,
	*const vk_read_increment_stride_trip, *const vk_itv_reader_trip,
	*const vk_branch_loops_trip, *const vk_cycles_trip, *const vk_instructions_trip,
	*const vk_loads_trip, *const vk_stores_trip, *const vk_fp_ops_trip, *const vk_sqrt_trip,
	*const vk_pingpong_serve_trip, *const vk_pingpong_return_trip, *const vk_issued_trip,
	*const vk_fp_single_trip, *const vk_fp_div_trip;

/* Per-iteration and fixed counts the predictors use, in one place so the
 * instruction-mix tests check the same numbers. */
#define VK_INSTRUCTIONS_PER_ITERATION 10
#define VK_INSTRUCTIONS_FIXED 3
#define VK_CYCLES_PER_ITERATION 16
#define VK_LOADS_PER_ITERATION 4
#define VK_STORES_PER_ITERATION 4
#define VK_FP_OPS_PER_ITERATION 4
#define VK_SQRT_PER_ITERATION 2
#define VK_ISSUED_PER_ITERATION 19
#define VK_ISSUED_FIXED 3
#define VK_FP_SINGLE_PER_ITERATION 4
#define VK_FP_DIV_PER_ITERATION 2

#endif
