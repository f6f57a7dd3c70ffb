/* Page-granular benchmarks (seed 000 §3.2-3.3, notes §8.2):
 *  - page-faults: N first-touch writes to N fresh small pages give exactly
 *    N minor faults.  It needs no PMU, so on any machine (and on this KVM
 *    guest) it is the exact end-to-end proof of the whole pipeline.
 *  - dtlb: the thesis's page-stride sweep over an int array that starts
 *    base_offset bytes past a page (glibc's malloc gives 16), from index
 *    1 + pad/4: N iterations, N compulsory DTLB misses, N first touches.
 *  - padding: the configuration benchmark that finds where the array's
 *    first full page starts: touching the first and last int of every other
 *    page-sized region costs one page per pair when the pad aligns the
 *    regions with pages, two otherwise. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include "validate/internal.h"
#include "validate/kernels.h"

uint64_t validate_padding_aligned(uint64_t base_offset, size_t page_size)
{
	/* The first reference is at base + 4 * (1 + pad / 4) (seed 000 §3.2),
	 * so pad / 4 = first / 4 - 1 where first is the distance to the next
	 * page boundary.  Pads first-4 .. first-1 are equivalent; the thesis
	 * reports the smallest (28,012 = 32768 - 4752 - 4; here 4076). */
	uint64_t first = (page_size - base_offset % page_size) % page_size;
	while (first < 4) first += page_size;
	return first - 4;
}

bool validate_padding_is_aligned(uint64_t base_offset, uint64_t pad, size_t page_size)
{
	return (base_offset + 4 * (1 + pad / 4)) % page_size == 0;
}

/* ---- page-faults ---- */

static double page_faults_predict(const validate_params *p)
{
	return (double)p->size;
}

static uint64_t page_faults_iterations(const validate_params *p)
{
	return p->size;
}

static bool page_faults_domain(const validate_params *p, char *warning, size_t length)
{
	(void)warning;
	(void)length;
	(void)p;
	return true;
}

static int page_faults_run(const validate_params *p, validate_region *region, validate_run_info *info,
                           plumb_status *status)
{
	validate_memory m = { 0 };
	size_t page = p->machine->page_size;
	if (validate_memory_map(&m, p->size * page, false, status) != 0) return -1;
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_touch_stride_trip, false, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	validate_region_begin(region);
	vk_touch_stride(m.base, page, p->size);
	validate_region_end(region);
	info->checksum = m.base[0];
	validate_memory_unmap(&m);
	return 0;
}

static int page_faults_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < p->size; i++)
		validate_emit(&e, 0, TRACE_WRITE, VALIDATE_EMIT_BASE + i * p->machine->page_size, 1);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_page_faults = {
	.name = "page-faults",
	.title = "minor page faults: one write to each of N fresh pages",
	.defeats = "THP (MADV_NOHUGEPAGE), glibc chunk reuse (fresh mmap, never calloc)",
	.threads = 1,
	.default_max_size = 10000,
	.event_count = 1,
	.events = { { .name = "minor-faults", .perf_name = "minor-faults",
	              .papi_name = "perf::MINOR-FAULTS", .sim = VALIDATE_SIM_PAGES_TOUCHED,
	              .predict = page_faults_predict } },
	.in_domain = page_faults_domain,
	.run = page_faults_run,
	.emit = page_faults_emit,
	.expected_iterations = page_faults_iterations,
};

/* ---- dtlb (seed 000 Fig. 3 / Appendix C, flag 2) ---- */

typedef struct int_array_layout {
	uint64_t elements;     /* zsize */
	uint64_t first_index;  /* initindex */
	uint64_t stride;       /* elements */
	uint64_t iterations;
} int_array_layout;

static int_array_layout dtlb_layout(const validate_params *p)
{
	uint64_t page = p->machine->page_size;
	int_array_layout l;
	l.elements = (page * p->size + p->pad) / 4;
	l.first_index = 1 + p->pad / 4;
	l.stride = page / 4;
	l.iterations = l.elements > l.first_index ? validate_ceil_div(l.elements - l.first_index, l.stride) : 0;
	return l;
}

static uint64_t dtlb_iterations(const validate_params *p)
{
	return dtlb_layout(p).iterations;
}

static double dtlb_predict(const validate_params *p)
{
	/* ceil((N*page/4 + pad/4 - 1 - pad/4) / (page/4)) = N for any pad (notes 000 §3.3). */
	return (double)dtlb_iterations(p);
}

static void dtlb_configure(validate_params *p)
{
	p->base_offset = 16;
	p->pad = validate_padding_aligned(p->base_offset, p->machine->page_size);
}

static bool dtlb_domain(const validate_params *p, char *warning, size_t length)
{
	if (p->base_offset % 4 != 0) {
		snprintf(warning, length, "base offset %llu is not int aligned",
		         (unsigned long long)p->base_offset);
		return false;
	}
	return true;
}

static int dtlb_run(const validate_params *p, validate_region *region, validate_run_info *info,
                    plumb_status *status)
{
	int_array_layout l = dtlb_layout(p);
	validate_memory m = { 0 };
	if (validate_memory_map(&m, p->base_offset + l.elements * 4 + 4, false, status) != 0) return -1;
	uint8_t *zz = m.base + p->base_offset;
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_store_int_stride_trip, false, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	validate_region_begin(region);
	vk_store_int_stride(zz + 4 * l.first_index, 4 * l.stride, l.iterations);
	validate_region_end(region);
	validate_memory_unmap(&m);
	return 0;
}

static int dtlb_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	int_array_layout l = dtlb_layout(p);
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	uint64_t zz = VALIDATE_EMIT_BASE + p->base_offset;
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < l.iterations; i++)
		validate_emit(&e, 0, TRACE_WRITE, zz + 4 * (l.first_index + i * l.stride), 4);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_dtlb = {
	.name = "dtlb",
	.title = "DTLB misses: page-stride sweep over N fresh pages (Salayandia 2002, Fig. 3)",
	.defeats = "TLB replacement and associativity (compulsory misses only); THP",
	.threads = 1,
	.default_max_size = 10000,
	.event_count = 2,
	.events = {
		{ .name = "PAPI_TLB_DM", .perf_name = "dTLB-store-misses", .papi_name = "PAPI_TLB_DM",
		  .sim = VALIDATE_SIM_TLB_MISSES, .predict = dtlb_predict },
		{ .name = "minor-faults", .perf_name = "minor-faults", .papi_name = "perf::MINOR-FAULTS",
		  .sim = VALIDATE_SIM_PAGES_TOUCHED, .predict = dtlb_predict },
	},
	.configure = dtlb_configure,
	.in_domain = dtlb_domain,
	.run = dtlb_run,
	.emit = dtlb_emit,
	.expected_iterations = dtlb_iterations,
};

/* ---- dtlb-prefault: the same sweep on prefaulted pages after a TLB sweep ---- */

/* On a first touch the faulting store walks the page table, faults, and
 * walks again after the kernel maps the page, so what a DTLB-miss event
 * counts there depends on the CPU (notes 000 §7.4 P3).  This variant
 * prefaults the pages, then evicts their translations by touching one line
 * of each page of a sweep buffer far larger than any second-level TLB
 * (8192 pages: Zen 4 has 3072 L2 DTLB entries, recent Intel cores 2048),
 * so the region's N stores are N compulsory DTLB misses and no faults. */
#define TLB_SWEEP_PAGES 8192

static int dtlb_prefault_run(const validate_params *p, validate_region *region, validate_run_info *info,
                             plumb_status *status)
{
	int_array_layout l = dtlb_layout(p);
	size_t page = p->machine->page_size;
	validate_memory m = { 0 }, sweep = { 0 };
	if (validate_memory_map(&m, p->base_offset + l.elements * 4 + 4, true, status) != 0) return -1;
	if (validate_memory_map(&sweep, TLB_SWEEP_PAGES * page, true, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	uint8_t *zz = m.base + p->base_offset;
	int rc = validate_region_open(region, status);
	if (rc == 0) rc = validate_watch_loop(region, vk_store_int_stride_trip, false, status);
	if (rc == 0) {
		vk_load_stride(sweep.base, page, TLB_SWEEP_PAGES);
		validate_region_begin(region);
		vk_store_int_stride(zz + 4 * l.first_index, 4 * l.stride, l.iterations);
		validate_region_end(region);
	}
	validate_memory_unmap(&sweep);
	validate_memory_unmap(&m);
	return rc;
}

static int dtlb_prefault_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	int_array_layout l = dtlb_layout(p);
	uint64_t page = p->machine->page_size;
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	uint64_t zz = VALIDATE_EMIT_BASE + p->base_offset;
	/* The prefault touches every page of the array, then the sweep buffer
	 * (placed after the array) pushes their translations out. */
	uint64_t array_pages = validate_ceil_div(p->base_offset + l.elements * 4 + 4, page);
	for (uint64_t i = 0; i < array_pages; i++) validate_emit(&e, 0, TRACE_WRITE, VALIDATE_EMIT_BASE + i * page, 1);
	uint64_t sweep = VALIDATE_EMIT_BASE + (array_pages + 16) * page;
	for (uint64_t i = 0; i < TLB_SWEEP_PAGES; i++) validate_emit(&e, 0, TRACE_READ, sweep + i * page, 8);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < l.iterations; i++)
		validate_emit(&e, 0, TRACE_WRITE, zz + 4 * (l.first_index + i * l.stride), 4);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_dtlb_prefault = {
	.name = "dtlb-prefault",
	.title = "DTLB misses: page-stride sweep over N prefaulted pages after a TLB-evicting sweep",
	.defeats = "page-fault walks (pages prefaulted) and warm translations (8192-page TLB sweep)",
	.threads = 1,
	.default_max_size = 10000,
	.event_count = 1,
	.events = { { .name = "PAPI_TLB_DM", .perf_name = "dTLB-store-misses", .papi_name = "PAPI_TLB_DM",
	              .sim = VALIDATE_SIM_TLB_MISSES, .predict = dtlb_predict } },
	.configure = dtlb_configure,
	.in_domain = dtlb_domain,
	.run = dtlb_prefault_run,
	.emit = dtlb_prefault_emit,
	.expected_iterations = dtlb_iterations,
};

/* ---- padding (seed 000 Fig. 7 / Appendix C, flag 1) ---- */

static int_array_layout padding_layout(const validate_params *p)
{
	uint64_t page = p->machine->page_size;
	int_array_layout l;
	l.elements = (page * p->size * 2 + p->pad) / 4;
	l.first_index = 1 + p->pad / 4;
	l.stride = 2 * page / 4;
	l.iterations = l.elements > l.first_index ? validate_ceil_div(l.elements - l.first_index, l.stride) : 0;
	return l;
}

static uint64_t padding_iterations(const validate_params *p)
{
	return padding_layout(p).iterations;
}

static double padding_predict(const validate_params *p)
{
	uint64_t pairs = padding_iterations(p);
	return (double)(validate_padding_is_aligned(p->base_offset, p->pad, p->machine->page_size) ? pairs
	                                                                                       : 2 * pairs);
}

static void padding_configure_misaligned(validate_params *p)
{
	p->base_offset = 16;
	p->pad = validate_padding_aligned(p->base_offset, p->machine->page_size) - 4;
}

static int padding_run(const validate_params *p, validate_region *region, validate_run_info *info,
                       plumb_status *status)
{
	int_array_layout l = padding_layout(p);
	uint64_t elements_per_page = p->machine->page_size / 4;
	validate_memory m = { 0 };
	/* The last pair's second int may lie past zsize (the thesis did not
	 * check): map one extra page. */
	if (validate_memory_map(&m, p->base_offset + l.elements * 4 + p->machine->page_size, false, status) != 0)
		return -1;
	uint8_t *zz = m.base + p->base_offset;
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_store_int_pairs_trip, false, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	validate_region_begin(region);
	vk_store_int_pairs(zz + 4 * l.first_index, 4 * l.stride, 4 * (elements_per_page - 1), l.iterations);
	validate_region_end(region);
	validate_memory_unmap(&m);
	return 0;
}

static int padding_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	int_array_layout l = padding_layout(p);
	uint64_t elements_per_page = p->machine->page_size / 4;
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	uint64_t zz = VALIDATE_EMIT_BASE + p->base_offset;
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < l.iterations; i++) {
		uint64_t index = l.first_index + i * l.stride;
		validate_emit(&e, 0, TRACE_WRITE, zz + 4 * index, 4);
		validate_emit(&e, 0, TRACE_WRITE, zz + 4 * (index + elements_per_page - 1), 4);
	}
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

#define PADDING_EVENTS \
	.event_count = 2, \
	.events = { \
		{ .name = "PAPI_TLB_DM", .perf_name = "dTLB-store-misses", .papi_name = "PAPI_TLB_DM", \
		  .sim = VALIDATE_SIM_TLB_MISSES, .predict = padding_predict }, \
		{ .name = "minor-faults", .perf_name = "minor-faults", .papi_name = "perf::MINOR-FAULTS", \
		  .sim = VALIDATE_SIM_PAGES_TOUCHED, .predict = padding_predict }, \
	}

const validate_benchmark validate_bench_padding = {
	.name = "padding",
	.title = "padding configuration benchmark, aligned pad: N pairs on N pages (Salayandia 2002, Fig. 7)",
	.defeats = "unknown array placement: finds the pad that starts a page",
	.threads = 1,
	.default_max_size = 10000,
	PADDING_EVENTS,
	.configure = dtlb_configure,
	.in_domain = dtlb_domain,
	.run = padding_run,
	.emit = padding_emit,
	.expected_iterations = padding_iterations,
};

const validate_benchmark validate_bench_padding_misaligned = {
	.name = "padding-misaligned",
	.title = "padding configuration benchmark, pad 4 bytes short: N pairs on 2N pages",
	.defeats = "unknown array placement: the control case of the pad sweep",
	.threads = 1,
	.default_max_size = 10000,
	PADDING_EVENTS,
	.configure = padding_configure_misaligned,
	.in_domain = dtlb_domain,
	.run = padding_run,
	.emit = padding_emit,
	.expected_iterations = padding_iterations,
};

/* ---- the configuration sweep: find the pad that halves the count ---- */

int validate_padding_search(const validate_machine *machine, uint64_t base_offset, uint64_t pairs,
                            validate_padding_point *points, size_t capacity, size_t *count,
                            uint64_t *found_pad, plumb_status *status)
{
	const validate_benchmark *b = &validate_bench_padding;
	*count = 0;
	*found_pad = UINT64_MAX;
	double fewest = INFINITY;
	for (uint64_t pad = 0; pad < machine->page_size && *count < capacity; pad += 4) {
		validate_params p;
		validate_params_init(&p, b, machine, pairs);
		p.base_offset = base_offset;
		p.pad = pad;
		bool sources[2] = { true, false };
		double values[2][VALIDATE_MAX_EVENTS];
		if (validate_run_once(b, &p, sources, values, NULL, NULL, status) != 0) return -1;
		double faults = values[0][1];
		if (isnan(faults))
			return plumb_fail(status, ENOTSUP, "minor-faults cannot be counted through perf_event here");
		points[*count].pad = pad;
		points[*count].faults = faults;
		points[*count].predicted = padding_predict(&p);
		(*count)++;
		if (faults < fewest) {
			fewest = faults;
			*found_pad = pad;
		}
	}
	return 0;
}
