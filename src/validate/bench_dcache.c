/* Uniprocessor data-cache miss benchmarks (seed 000 §3.4a, notes §7.2 B4):
 *  - stride: read one word of each of N lines in address order after
 *    flushing them.  The model says N L1 and N L2 misses; hardware stream
 *    and next-line prefetchers make the reported count fall towards 0 as N
 *    grows.  It is kept as the control that exposes prefetching.
 *  - random: a dependent chase through N lines in a fixed random order,
 *    nodes two lines apart (adjacent-line "buddy" prefetch fetches the
 *    wrong line), so neither stride nor next-line prefetchers can guess.
 *  - page-crossing: stride of one page plus one line: every access is on a
 *    new 4 KiB page, where stream prefetchers stop. */
#include <stdlib.h>
#include "validate/internal.h"
#include "validate/kernels.h"

static uint64_t line_of(const validate_params *p)
{
	const validate_machine *m = p->machine;
	return m->l1d_line > m->l2_line ? m->l1d_line : m->l2_line;
}

static double misses_predict(const validate_params *p)
{
	return (double)p->size;
}

static uint64_t misses_iterations(const validate_params *p)
{
	return p->size;
}

static bool always_in_domain(const validate_params *p, char *warning, size_t length)
{
	(void)p;
	(void)warning;
	(void)length;
	return true;
}

#define MISS_EVENTS(function) \
	.event_count = 2, \
	.events = { \
		{ .name = "PAPI_L1_DCM", .perf_name = "L1-dcache-load-misses", .papi_name = "PAPI_L1_DCM", \
		  .sim = VALIDATE_SIM_L1D_MISSES, .instrumented = VALIDATE_INSTR_D1_MISSES, \
		  .instrumented_function = function, .predict = misses_predict }, \
		{ .name = "PAPI_L2_DCM", .perf_name = NULL, .papi_name = "PAPI_L2_DCM", \
		  .sim = VALIDATE_SIM_L2_MISSES, .instrumented = VALIDATE_INSTR_LL_MISSES, \
		  .instrumented_function = function, .predict = misses_predict }, \
	}

/* ---- stride and page-crossing: one load per line at a fixed stride ---- */

static int strided_run(const validate_params *p, uint64_t stride, validate_region *region,
                       validate_run_info *info, plumb_status *status)
{
	validate_memory m = { 0 };
	size_t bytes = p->size * stride;
	if (validate_memory_map(&m, bytes, true, status) != 0) return -1;
	if (validate_make_uncached(p, m.base, bytes, status) != 0 ||
	    validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_load_stride_trip, false, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	validate_region_begin(region);
	info->checksum = vk_load_stride(m.base, stride, p->size);
	validate_region_end(region);
	validate_memory_unmap(&m);
	return 0;
}

static int strided_emit(const validate_params *p, uint64_t stride, validate_sink *sink,
                        plumb_status *status)
{
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < p->size; i++)
		validate_emit(&e, 0, TRACE_READ, VALIDATE_EMIT_BASE + i * stride, 8);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

static int stride_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	return strided_run(p, line_of(p), region, info, status);
}

static int stride_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	return strided_emit(p, line_of(p), sink, status);
}

const validate_benchmark validate_bench_stride = {
	.name = "stride",
	.title = "L1/L2 D-cache misses: line-stride reads of N flushed lines (control: exposes prefetch)",
	.defeats = "nothing on purpose: hardware prefetchers hide these misses",
	.threads = 1,
	.default_max_size = 1000000,
	MISS_EVENTS("vk_load_stride"),
	.in_domain = always_in_domain,
	.run = stride_run,
	.emit = stride_emit,
	.expected_iterations = misses_iterations,
};

static uint64_t crossing_stride(const validate_params *p)
{
	return p->machine->page_size + line_of(p);
}

static int crossing_run(const validate_params *p, validate_region *region, validate_run_info *info,
                        plumb_status *status)
{
	return strided_run(p, crossing_stride(p), region, info, status);
}

static int crossing_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	return strided_emit(p, crossing_stride(p), sink, status);
}

const validate_benchmark validate_bench_page_crossing = {
	.name = "page-crossing",
	.title = "L1/L2 D-cache misses: stride page+line, every read on a new page",
	.defeats = "stream prefetchers (they stop at 4 KiB page boundaries)",
	.threads = 1,
	.default_max_size = 100000,
	MISS_EVENTS("vk_load_stride"),
	.in_domain = always_in_domain,
	.run = crossing_run,
	.emit = crossing_emit,
	.expected_iterations = misses_iterations,
};

/* ---- random: dependent chase in a fixed pseudo-random order ---- */

/* The visiting order: a permutation of 0..n-1 from a fixed seed, so the
 * kernel and the emitter walk the same lines in the same order. */
static uint32_t *random_order(uint64_t n, plumb_status *status)
{
	uint32_t *order = malloc((n ? n : 1) * sizeof *order);
	if (!order) {
		plumb_fail(status, 12, "out of memory for a %llu-line permutation", (unsigned long long)n);
		return NULL;
	}
	for (uint64_t i = 0; i < n; i++) order[i] = (uint32_t)i;
	uint64_t state = 0x9e3779b97f4a7c15ull;
	for (uint64_t i = n; i > 1; i--) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		uint64_t j = state % i;
		uint32_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	return order;
}

static uint64_t node_spacing(const validate_params *p)
{
	return 2 * line_of(p);
}

static int random_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	if (p->size > UINT32_MAX) return plumb_fail(status, 22, "random chase: at most 2^32 lines");
	uint64_t spacing = node_spacing(p);
	uint32_t *order = random_order(p->size, status);
	if (!order) return -1;
	validate_memory m = { 0 };
	size_t bytes = p->size * spacing;
	if (validate_memory_map(&m, bytes, true, status) != 0) {
		free(order);
		return -1;
	}
	for (uint64_t i = 0; i < p->size; i++) {
		void **node = (void **)(m.base + (uint64_t)order[i] * spacing);
		*node = m.base + (uint64_t)order[(i + 1) % p->size] * spacing;
	}
	void *start = m.base + (uint64_t)order[0] * spacing;
	free(order);
	if (validate_make_uncached(p, m.base, bytes, status) != 0 ||
	    validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_chase_trip, false, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	validate_region_begin(region);
	void *end = vk_chase(start, p->size);
	validate_region_end(region);
	info->checksum = (uint64_t)((uint8_t *)end - m.base);
	validate_memory_unmap(&m);
	return 0;
}

static int random_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	uint64_t spacing = node_spacing(p);
	uint32_t *order = random_order(p->size, status);
	if (!order) return -1;
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < p->size; i++)
		validate_emit(&e, 0, TRACE_READ, VALIDATE_EMIT_BASE + (uint64_t)order[i] * spacing, 8);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	free(order);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_random = {
	.name = "random",
	.title = "L1/L2 D-cache misses: dependent chase through N flushed lines in random order",
	.defeats = "stride, stream and adjacent-line prefetchers; out-of-order overlap (dependent loads)",
	.threads = 1,
	.default_max_size = 1000000,
	MISS_EVENTS("vk_chase"),
	.in_domain = always_in_domain,
	.run = random_run,
	.emit = random_emit,
	.expected_iterations = misses_iterations,
};
