/* Pieces the validation benchmarks share: memory mappings with controlled
 * page state, line flushes, a two-thread pinned harness with a custom spin
 * barrier, and a buffered emitter of trace records. */
#ifndef PLUMB_VALIDATE_INTERNAL_H
#define PLUMB_VALIDATE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "validate/validate.h"

/* ---- Memory ---- */
typedef struct validate_memory {
	uint8_t *base;     /* page aligned */
	size_t size;
} validate_memory;

/* Anonymous private mapping of at least size bytes with small pages
 * (MADV_NOHUGEPAGE: a THP would turn N first touches into one fault).
 * prefault writes one byte per page, so the region sees no page faults
 * and no zero-page copy-on-write (the read-then-write pitfall, notes 000
 * §3.9).  Never calloc: glibc recycles freed chunks and already touched
 * the first page with its chunk header (notes 000 §8.2). */
int validate_memory_map(validate_memory *m, size_t size, bool prefault, plumb_status *status);
void validate_memory_unmap(validate_memory *m);
/* clflush of every line of the range, then mfence: the lines are in memory
 * and in no cache. */
void validate_flush(const void *p, size_t length, unsigned line);
/* Evicts by reading a buffer of bytes (for models without clflush). */
int validate_evict_sweep(size_t bytes, unsigned line, plumb_status *status);
/* Flush or sweep as params ask, for a range about to be measured. */
int validate_make_uncached(const validate_params *params, const void *p, size_t length,
                           plumb_status *status);

/* ---- Two pinned threads ---- */
typedef struct validate_spin_barrier {
	_Alignas(128) atomic_uint arrived;
	_Alignas(128) atomic_uint generation;
} validate_spin_barrier;

void validate_spin_barrier_init(validate_spin_barrier *b);
/* Two-party barrier on its own lines: library barriers cause unpredictable
 * coherence traffic or block (seed 000 §3.7). */
void validate_spin_barrier_wait(validate_spin_barrier *b);

/* Runs role(0) on the calling thread pinned to machine->cpus[0] and role(1)
 * on a new thread pinned to cpus[1]; joins.  The caller opens its counters
 * (per thread) before calling. */
typedef void (*validate_role_fn)(int role, void *context);
int validate_two_threads(const validate_machine *machine, validate_role_fn role, void *context,
                         plumb_status *status);

/* ---- Emitting ---- */
#define VALIDATE_EMIT_BATCH 1024
/* Synthetic base of emitted arrays: page and 2 MiB aligned, like the real
 * mappings, so offsets within pages and lines match the kernels'. */
#define VALIDATE_EMIT_BASE 0x7f0000000000ull
#define VALIDATE_EMIT_STACK 0x7ffff0000000ull

typedef struct validate_emitter {
	validate_sink *sink;
	plumb_status *status;
	size_t count;
	uint64_t time;
	int failed;
	trace_record records[VALIDATE_EMIT_BATCH];
} validate_emitter;

void validate_emitter_init(validate_emitter *e, validate_sink *sink, plumb_status *status);
int validate_emit(validate_emitter *e, uint32_t thread, trace_kind kind, uint64_t address,
                  uint16_t size);
int validate_emit_instruction(validate_emitter *e, uint32_t thread, uint64_t address, uint16_t size);
int validate_emit_mark(validate_emitter *e, validate_mark mark);
int validate_emit_finish(validate_emitter *e);

/* ---- The iteration check ---- */
/* Names the instruction that closes the kernel's loop (kernels.h NAME_trip)
 * to the region, on the counted thread after validate_region_open: counted
 * on that thread only, or with partner_thread on the threads it starts
 * (where the loop runs on the other role). */
int validate_watch_loop(validate_region *region, const void *trip, bool partner_thread, plumb_status *status);

/* ---- Helpers for predictors ---- */
static inline uint64_t validate_ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
/* Iterations that make about size events at per events per iteration (>= 1). */
static inline uint64_t validate_iterations_for(uint64_t size, uint64_t per)
{
	uint64_t n = validate_ceil_div(size, per);
	return n ? n : 1;
}

/* Benchmark groups (each file defines its own). */
extern const validate_benchmark validate_bench_page_faults, validate_bench_dtlb, validate_bench_dtlb_prefault,
	validate_bench_padding, validate_bench_padding_misaligned;
extern const validate_benchmark validate_bench_stride, validate_bench_random,
	validate_bench_page_crossing;
extern const validate_benchmark validate_bench_shared, validate_bench_shared_control;
extern const validate_benchmark validate_bench_itv, validate_bench_inv, validate_bench_shr,
	validate_bench_cln;
extern const validate_benchmark validate_bench_branch, validate_bench_branch_long, validate_bench_icache,
	validate_bench_icache_l2, validate_bench_cycles, validate_bench_instructions, validate_bench_issued,
	validate_bench_loads, validate_bench_stores, validate_bench_fp, validate_bench_fp_single,
	validate_bench_fp_div, validate_bench_sqrt;

#endif
