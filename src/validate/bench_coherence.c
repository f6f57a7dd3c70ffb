/* Coherence benchmarks on two pinned threads (seed 000 §3.6-3.9).  Role 0
 * is always the counted thread.  Synchronisation inside and next to the
 * counted region uses flags on their own 128-byte lines, written by one
 * side only, so the handshakes add a known number of events (or none):
 * library barriers cause unpredictable coherence traffic or block.
 *
 * Lines are prepared by writing them (prefault) and clflush, never with
 * calloc: glibc's calloc recycles chunks that are already cached, and a
 * fresh page that is first read maps the shared zero page, so the
 * "read an uncached line, then write it" sequence becomes two page faults
 * and no clean-exclusive line at all (notes 000 §3.9, §8.2).
 *
 *  itv: role 0 owns N dirty lines; role 1 reads them -> N interventions
 *       received by role 0, plus 1 for the bar1 handshake (the thesis
 *       subtracted that one in code; here it is part of the closed form).
 *  inv: ping-pong on one variable s; role 0 receives one invalidation per
 *       round (N), counted with branch mispredictions as in Fig. 18.
 *  shr: role 1 dirties N lines; role 0 reads then writes each: N requests
 *       for exclusive access to a shared line (S -> M).
 *  cln: each role reads then writes N flushed lines of its own half: N
 *       requests for exclusive access to a clean line (E -> M). */
#include <stdio.h>
#include "validate/internal.h"
#include "validate/kernels.h"

#define X_VALUE 1
#define Y_VALUE 2

typedef struct flag_line {
	_Alignas(128) volatile uint64_t value;
} flag_line;

typedef struct coherence_context {
	const validate_params *params;
	validate_region *region;
	uint8_t *array;
	uint64_t line;
	validate_spin_barrier barrier;
	vk_itv_flags itv;
	flag_line s;
	uint64_t checksum;
} coherence_context;

static uint64_t coherence_line(const validate_params *p)
{
	const validate_machine *m = p->machine;
	return m->l1d_line > m->l2_line ? m->l1d_line : m->l2_line;
}

static uint64_t coherence_iterations(const validate_params *p)
{
	return p->size;
}

static double coherence_predict(const validate_params *p)
{
	return (double)p->size;
}

static bool half_cache_domain(const validate_params *p, char *warning, size_t length)
{
	uint64_t limit = p->machine->l2_size / coherence_line(p) / 2;
	if (p->size > limit) {
		snprintf(warning, length, "%llu lines exceed half the L2 (%llu lines), where Salayandia "
		         "(2002) saw predictions fail", (unsigned long long)p->size, (unsigned long long)limit);
		return false;
	}
	return true;
}

static bool any_domain(const validate_params *p, char *warning, size_t length)
{
	(void)p;
	(void)warning;
	(void)length;
	return true;
}

/* Maps lines (prefaulted, flushed), runs the roles, unmaps. */
static int coherence_run(const validate_params *p, uint64_t lines, validate_role_fn role,
                         uint64_t s_initial, const void *trip, bool partner_loop, validate_region *region,
                         validate_run_info *info, plumb_status *status)
{
	coherence_context *c;
	validate_memory flags = { 0 }, m = { 0 };
	/* The context (with its flag lines) lives in its own mapping, so no
	 * flag shares a line or a page with the array. */
	if (validate_memory_map(&flags, sizeof *c, true, status) != 0) return -1;
	c = (coherence_context *)flags.base;
	c->params = p;
	c->region = region;
	c->line = coherence_line(p);
	c->s.value = s_initial;
	validate_spin_barrier_init(&c->barrier);
	size_t bytes = (lines ? lines : 1) * c->line;
	if (validate_memory_map(&m, bytes, true, status) != 0) {
		validate_memory_unmap(&flags);
		return -1;
	}
	validate_flush(m.base, bytes, (unsigned)c->line);
	c->array = m.base;
	int result = validate_region_open(region, status);
	if (result == 0) result = validate_watch_loop(region, trip, partner_loop, status);
	if (result == 0) result = validate_two_threads(p->machine, role, c, status);
	info->checksum = c->checksum;
	validate_memory_unmap(&m);
	validate_memory_unmap(&flags);
	return result;
}

/* ---- itv ---- */

static void itv_role(int role, void *argument)
{
	coherence_context *c = argument;
	uint64_t n = c->params->size;
	if (role == 0) {
		vk_store_int_stride(c->array, c->line, n);   /* N lines dirty in this core */
		c->itv.bar1 = 0;
		validate_spin_barrier_wait(&c->barrier);
		while (c->itv.ready == 0) __asm__ __volatile__("pause" ::: "memory");
		/* bar1 = 1; while (bar2 < N) spin; (assembly: the region holds one
		 * store and the loads of bar2, nothing of the compiler's) */
		validate_region_begin(c->region);
		vk_itv_owner(&c->itv.bar1, &c->itv.bar2, n);
		validate_region_end(c->region);
		c->itv.done = 1;
	} else {
		/* Everything the reader needs is read before the region: the
		 * context's first line is written by this (the main) thread's core,
		 * so reading it inside would be one more intervention. */
		uint8_t *array = c->array;
		uint64_t line = c->line;
		vk_itv_flags *flags = &c->itv;
		c->itv.bar2 = 0;
		c->itv.done = 0;
		validate_spin_barrier_wait(&c->barrier);
		/* From ready = 1 until done the reader runs only vk_itv_reader:
		 * it reads bar1 before setting ready, so that bar1 is shared before
		 * the region and the only intervention bar1 costs role 0 is the one
		 * after its write; it waits for done, so that the thread's exit
		 * (glibc's TLS destructors, the stack list, the thread count read
		 * lines the main thread holds dirty: 14 interventions at N = 100
		 * under Valgrind) comes after the region; and it fetches no line of
		 * code role 0 ran first (a code line the owner's core holds
		 * exclusive: its fetch was the one intervention too many, 102 for
		 * 100, when the done-wait was this function's C loop). */
		c->checksum = vk_itv_reader(array, line, n, flags);
	}
}

static int itv_run(const validate_params *p, validate_region *region, validate_run_info *info,
                   plumb_status *status)
{
	/* The loop is the reader's, on the other thread. */
	return coherence_run(p, p->size, itv_role, 0, vk_itv_reader_trip, true, region, info, status);
}

/* Synthetic addresses of the flag lines, away from the array. */
#define FLAG_BAR1 (VALIDATE_EMIT_BASE - 0x1000)
#define FLAG_BAR2 (VALIDATE_EMIT_BASE - 0x1000 + 128)
#define FLAG_S (VALIDATE_EMIT_BASE - 0x1000 + 256)
#define FLAG_DONE (VALIDATE_EMIT_BASE - 0x1000 + 384)

static int itv_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	uint64_t line = coherence_line(p), n = p->size;
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	for (uint64_t i = 0; i < n; i++)
		validate_emit(&e, 0, TRACE_WRITE, VALIDATE_EMIT_BASE + i * line, 4);
	validate_emit(&e, 0, TRACE_WRITE, FLAG_BAR1, 8);
	validate_emit(&e, 1, TRACE_WRITE, FLAG_BAR2, 8);
	validate_emit(&e, 1, TRACE_WRITE, FLAG_DONE, 8);
	validate_emit(&e, 1, TRACE_READ, FLAG_BAR1, 8);     /* role 1 reads bar1 == 0 */
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	validate_emit(&e, 0, TRACE_WRITE, FLAG_BAR1, 8);    /* bar1 = 1 */
	validate_emit(&e, 1, TRACE_READ, FLAG_BAR1, 8);     /* the handshake intervention */
	for (uint64_t i = 0; i < n; i++) {
		validate_emit(&e, 1, TRACE_READ, VALIDATE_EMIT_BASE + i * line, 8);
		validate_emit(&e, 1, TRACE_WRITE, FLAG_BAR2, 8);
	}
	validate_emit(&e, 1, TRACE_READ, FLAG_DONE, 8);     /* role 1 waits for the region's end */
	validate_emit(&e, 0, TRACE_READ, FLAG_BAR2, 8);     /* role 0 sees bar2 == N */
	validate_emit_mark(&e, VALIDATE_REGION_END);
	validate_emit(&e, 0, TRACE_WRITE, FLAG_DONE, 8);
	return validate_emit_finish(&e);
}

static double itv_predict(const validate_params *p)
{
	return (double)p->size + 1;
}

const validate_benchmark validate_bench_itv = {
	.name = "itv",
	.title = "cache interventions: the other core reads N lines this core holds dirty (Fig. 14)",
	.defeats = "barrier noise: one-way flags on their own lines, +1 handshake in the model",
	.threads = 2,
	.default_max_size = 1000,
	.capacity_suite = true,
	.event_count = 1,
	.events = { { .name = "PAPI_CA_ITV", .papi_name = "PAPI_CA_ITV",
	              .sim = VALIDATE_SIM_INTERVENTIONS, .predict = itv_predict } },
	.in_domain = half_cache_domain,
	.run = itv_run,
	.emit = itv_emit,
	.expected_iterations = coherence_iterations,
};

/* ---- inv: ping-pong ---- */

static void inv_role(int role, void *argument)
{
	coherence_context *c = argument;
	uint64_t n = c->params->size;
	/* Both read s before the region so it starts shared and resident. */
	c->checksum += c->s.value;
	validate_spin_barrier_wait(&c->barrier);
	if (role == 0) {
		/* for n rounds: s = X; while (s == X) spin; (assembly, so its loop
		 * trips can be counted) */
		validate_region_begin(c->region);
		vk_pingpong_serve(&c->s.value, n);
		validate_region_end(c->region);
	} else {
		/* for n rounds: while (s == Y) spin; s = Y; */
		vk_pingpong_return(&c->s.value, n);
	}
}

static int inv_run(const validate_params *p, validate_region *region, validate_run_info *info,
                   plumb_status *status)
{
	/* s is initialised to the value of the thread that waits first
	 * (seed 000 §3.7): any other start races. */
	return coherence_run(p, 1, inv_role, Y_VALUE, vk_pingpong_serve_trip, false, region, info, status);
}

static int inv_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit(&e, 1, TRACE_WRITE, FLAG_S, 8);       /* s = Y */
	validate_emit(&e, 0, TRACE_READ, FLAG_S, 8);
	validate_emit(&e, 1, TRACE_READ, FLAG_S, 8);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < p->size; i++) {
		validate_emit(&e, 0, TRACE_WRITE, FLAG_S, 8);   /* s = X */
		validate_emit(&e, 1, TRACE_READ, FLAG_S, 8);    /* role 1 leaves its spin */
		validate_emit(&e, 1, TRACE_WRITE, FLAG_S, 8);   /* s = Y: invalidates role 0 */
		validate_emit(&e, 0, TRACE_READ, FLAG_S, 8);    /* role 0 leaves its spin */
	}
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_inv = {
	.name = "inv",
	.title = "cache invalidations: ping-pong on one variable, N rounds (Fig. 16)",
	.defeats = "library barriers (custom spin on the shared variable itself)",
	.threads = 2,
	.default_max_size = 1000000,
	.hands_off_each_element = true,
	.event_count = 2,
	.events = {
		{ .name = "PAPI_CA_INV", .papi_name = "PAPI_CA_INV", .sim = VALIDATE_SIM_INVALIDATIONS,
		  .predict = coherence_predict },
		{ .name = "PAPI_BR_MSP", .perf_name = "branch-misses", .papi_name = "PAPI_BR_MSP",
		  .companion = true, .predict = coherence_predict },
	},
	.in_domain = any_domain,
	.run = inv_run,
	.emit = inv_emit,
	.expected_iterations = coherence_iterations,
};

/* ---- shr ---- */

static void shr_role(int role, void *argument)
{
	coherence_context *c = argument;
	uint64_t n = c->params->size;
	if (role == 1) vk_store_int_stride(c->array, c->line, n);
	validate_spin_barrier_wait(&c->barrier);
	if (role == 0) {
		validate_region_begin(c->region);
		vk_read_increment_stride(c->array, c->line, n);
		validate_region_end(c->region);
	}
}

static int shr_run(const validate_params *p, validate_region *region, validate_run_info *info,
                   plumb_status *status)
{
	return coherence_run(p, p->size, shr_role, 0, vk_read_increment_stride_trip, false, region, info, status);
}

static int shr_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	uint64_t line = coherence_line(p);
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	for (uint64_t i = 0; i < p->size; i++)
		validate_emit(&e, 1, TRACE_WRITE, VALIDATE_EMIT_BASE + i * line, 4);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < p->size; i++) {
		validate_emit(&e, 0, TRACE_READ, VALIDATE_EMIT_BASE + i * line, 4);
		validate_emit(&e, 0, TRACE_WRITE, VALIDATE_EMIT_BASE + i * line, 4);
	}
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_shr = {
	.name = "shr",
	.title = "exclusive requests to shared lines: read then write N lines the other core dirtied (Fig. 19)",
	.defeats = "read-for-ownership merging: separate load and store instructions",
	.threads = 2,
	.default_max_size = 1000,
	.capacity_suite = true,
	.event_count = 1,
	.events = { { .name = "PAPI_CA_SHR", .papi_name = "PAPI_CA_SHR",
	              .sim = VALIDATE_SIM_UPGRADES_SHARED, .predict = coherence_predict } },
	.in_domain = half_cache_domain,
	.run = shr_run,
	.emit = shr_emit,
	.expected_iterations = coherence_iterations,
};

/* ---- cln ---- */

static void cln_role(int role, void *argument)
{
	coherence_context *c = argument;
	uint64_t n = c->params->size;
	uint8_t *half = c->array + (uint64_t)role * n * c->line;
	validate_spin_barrier_wait(&c->barrier);
	if (role == 0) validate_region_begin(c->region);
	vk_read_increment_stride(half, c->line, n);
	if (role == 0) validate_region_end(c->region);
}

static int cln_run(const validate_params *p, validate_region *region, validate_run_info *info,
                   plumb_status *status)
{
	/* Both roles run the kernel; the counted thread's trips are the model's
	 * (the other role's run partly outside the region). */
	return coherence_run(p, 2 * p->size, cln_role, 0, vk_read_increment_stride_trip, false, region, info,
	                     status);
}

static int cln_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	uint64_t line = coherence_line(p), n = p->size;
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < n; i++)
		for (uint32_t t = 0; t < 2; t++) {
			uint64_t address = VALIDATE_EMIT_BASE + (t * n + i) * line;
			validate_emit(&e, t, TRACE_READ, address, 4);
			validate_emit(&e, t, TRACE_WRITE, address, 4);
		}
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_cln = {
	.name = "cln",
	.title = "exclusive requests to clean lines: read then write N flushed lines (Fig. 21)",
	.defeats = "calloc and zero-page pitfalls: prefault by writing, then clflush",
	.threads = 2,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_CA_CLN", .papi_name = "PAPI_CA_CLN",
	              .sim = VALIDATE_SIM_UPGRADES_CLEAN, .predict = coherence_predict } },
	.in_domain = any_domain,
	.run = cln_run,
	.emit = cln_emit,
	.expected_iterations = coherence_iterations,
};
