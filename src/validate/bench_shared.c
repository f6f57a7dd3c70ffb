/* The two-thread shared-memory miss benchmark (seed 000 §3.4b, Fig. 11):
 * each thread writes its own half of an array (one word per line), a
 * barrier, then the counted thread reads the other thread's half.  Every
 * read is a miss in the counted core's L1 and L2, because the line is
 * dirty in the other core's cache.  The thesis argued that shared data is
 * not prefetched; modern x86 prefetchers do not care, so the benchmark
 * comes with its no-sharing control: the same threads and order, but the
 * halves flushed to memory before the reads.  If the two report the same
 * counts, sharing is not what defeats the prefetcher. */
#include <stdio.h>
#include "validate/internal.h"
#include "validate/kernels.h"

typedef struct shared_context {
	const validate_params *params;
	validate_region *region;
	uint8_t *halves[2];
	uint64_t line;
	bool control;
	validate_spin_barrier barrier;
	uint64_t checksum;
} shared_context;

static uint64_t shared_line(const validate_params *p)
{
	const validate_machine *m = p->machine;
	return m->l1d_line > m->l2_line ? m->l1d_line : m->l2_line;
}

static void shared_role(int role, void *argument)
{
	shared_context *c = argument;
	uint64_t n = c->params->size;
	vk_store_int_stride(c->halves[role], c->line, n);
	validate_spin_barrier_wait(&c->barrier);
	if (c->control) {
		/* clflush removes the line from every cache, so each thread
		 * flushes its own half; then both wait until both are done. */
		validate_flush(c->halves[role], n * c->line, (unsigned)c->line);
		validate_spin_barrier_wait(&c->barrier);
	}
	if (role == 0) {
		validate_region_begin(c->region);
		c->checksum = vk_load_stride(c->halves[1], c->line, n);
		validate_region_end(c->region);
	} else {
		c->checksum += vk_load_stride(c->halves[0], c->line, n);
	}
}

static int shared_run_common(const validate_params *p, bool control, validate_region *region,
                             validate_run_info *info, plumb_status *status)
{
	shared_context c = { .params = p, .region = region, .line = shared_line(p), .control = control };
	validate_memory m = { 0 };
	size_t half = p->size * c.line;
	if (validate_memory_map(&m, 2 * half, true, status) != 0) return -1;
	validate_flush(m.base, 2 * half, (unsigned)c.line);
	c.halves[0] = m.base;
	c.halves[1] = m.base + half;
	validate_spin_barrier_init(&c.barrier);
	int result = validate_region_open(region, status);
	/* Both roles run vk_load_stride; the model's trips are the counted
	 * thread's (the other's run partly outside the region). */
	if (result == 0) result = validate_watch_loop(region, vk_load_stride_trip, false, status);
	if (result == 0) result = validate_two_threads(p->machine, shared_role, &c, status);
	info->checksum = c.checksum;
	validate_memory_unmap(&m);
	return result;
}

static int shared_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	return shared_run_common(p, false, region, info, status);
}

static int control_run(const validate_params *p, validate_region *region, validate_run_info *info,
                       plumb_status *status)
{
	return shared_run_common(p, true, region, info, status);
}

static int shared_emit_common(const validate_params *p, bool control, validate_sink *sink,
                              plumb_status *status)
{
	uint64_t line = shared_line(p), n = p->size;
	uint64_t half[2] = { VALIDATE_EMIT_BASE, VALIDATE_EMIT_BASE + n * line };
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	if (!control)   /* flushed lines are simply never-touched lines to a simulator */
		for (uint64_t i = 0; i < n; i++)
			for (uint32_t t = 0; t < 2; t++)
				validate_emit(&e, t, TRACE_WRITE, half[t] + i * line, 4);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < n; i++)
		for (uint32_t t = 0; t < 2; t++)
			validate_emit(&e, t, TRACE_READ, half[1 - t] + i * line, 8);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

static int shared_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	return shared_emit_common(p, false, sink, status);
}

static int control_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	return shared_emit_common(p, true, sink, status);
}

static double shared_predict(const validate_params *p)
{
	return (double)p->size;
}

static uint64_t shared_iterations(const validate_params *p)
{
	return p->size;
}

static bool shared_domain(const validate_params *p, char *warning, size_t length)
{
	/* The other thread's half must still be in its cache (the thesis found
	 * cache-resident predictions hold up to about half the L2). */
	uint64_t limit = p->machine->l2_size / shared_line(p) / 2;
	if (p->size > limit) {
		snprintf(warning, length, "%llu lines exceed half the L2 (%llu lines): the other "
		         "core's half no longer stays in its cache",
		         (unsigned long long)p->size, (unsigned long long)limit);
		return false;
	}
	return true;
}

static bool control_domain(const validate_params *p, char *warning, size_t length)
{
	(void)p;
	(void)warning;
	(void)length;
	return true;
}

#define SHARED_EVENTS \
	.event_count = 2, \
	.events = { \
		{ .name = "PAPI_L1_DCM", .perf_name = "L1-dcache-load-misses", .papi_name = "PAPI_L1_DCM", \
		  .sim = VALIDATE_SIM_L1D_MISSES, .predict = shared_predict }, \
		{ .name = "PAPI_L2_DCM", .perf_name = NULL, .papi_name = "PAPI_L2_DCM", \
		  .sim = VALIDATE_SIM_L2_MISSES, .predict = shared_predict }, \
	}

const validate_benchmark validate_bench_shared = {
	.name = "shared",
	.title = "L1/L2 D-cache misses: two threads, read the lines the other core wrote (Salayandia 2002, Fig. 11)",
	.defeats = "prefetching, if prefetchers skip lines another core owns (Salayandia's 2002 hypothesis)",
	.threads = 2,
	.default_max_size = 1000000,
	SHARED_EVENTS,
	.in_domain = shared_domain,
	.run = shared_run,
	.emit = shared_emit,
	.expected_iterations = shared_iterations,
};

const validate_benchmark validate_bench_shared_control = {
	.name = "shared-control",
	.title = "no-sharing control of 'shared': same threads and order, halves flushed first",
	.defeats = "nothing: shows what the prefetcher does when nothing is shared",
	.threads = 2,
	.default_max_size = 1000000,
	SHARED_EVENTS,
	.in_domain = control_domain,
	.run = control_run,
	.emit = control_emit,
	.expected_iterations = shared_iterations,
};
