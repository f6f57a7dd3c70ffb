#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "core/arena.h"
#include "core/cpu.h"
#include "core/output.h"
#include "core/timer.h"
#include "machine/topology.h"

Test(core_machine, topology_has_caches)
{
	topology t;
	plumb_status st;
	cr_assert_eq(topology_read(&t, &st), 0, "%s", st.message);
	cr_assert_geq(t.cpus, 1);
	cr_assert_geq(t.cores, 1);
	const topology_cache *l1 = topology_data_cache(&t, 1);
	cr_assert_not_null(l1);
	cr_assert_geq(l1->size, 4096);
	cr_assert(l1->line == 32 || l1->line == 64 || l1->line == 128);
	cr_assert_not_null(topology_last_level_cache(&t));
	cr_assert_geq(t.memory_total, 1u << 28);
	cr_assert_eq(t.base_page_size, 4096);
	/* Whatever the answer, it must come with a reason. */
	cr_assert(strlen(t.hardware_counters_reason) > 0);
	if (!t.hardware_counters)
		cr_assert(strchr(t.hardware_counters_reason, ':') != NULL);
}

Test(core_machine, timer_calibration_plausible)
{
	timer_calibration c;
	plumb_status st;
	cr_assert_eq(timer_calibrate(&c, 20, &st), 0, "%s", st.message);
	cr_assert(c.ticks_per_ns > 0.1 && c.ticks_per_ns < 10);
	/* The TSC must advance across a short sleep, in proportion. */
	uint64_t a = timer_begin(&c), n0 = timer_monotonic_ns();
	usleep(2000);
	uint64_t b = timer_end(&c), n1 = timer_monotonic_ns();
	double ratio = timer_ticks_to_ns(&c, (double)(b - a)) / (double)(n1 - n0);
	cr_assert(ratio > 0.9 && ratio < 1.1, "TSC/clock ratio %f", ratio);
	cr_assert_eq(timer_calibrate(&c, 1, &st), c.source == TIMER_TSC ? -1 : 0);
}

Test(core_machine, pinning)
{
	int cpus[256];
	plumb_status st;
	int n = cpu_allowed(cpus, 256, &st);
	cr_assert_geq(n, 1);
	cr_assert_eq(cpu_pin_self(cpus[n - 1], &st), 0, "%s", st.message);
	cr_assert_eq(cpu_current(), cpus[n - 1]);
	cr_assert_eq(cpu_pin_self(-1, &st), -1);
	cr_assert_eq(cpu_pin_self(100000, &st), -1);
}

Test(core_machine, features)
{
	cpu_features f;
	cpu_features_detect(&f);
	cr_assert(strlen(f.vendor) == 12);
	cr_assert(f.sse2);
	cr_assert_eq(f.clflush_line, 64);
}

Test(core_machine, arena_prefault_and_inspect)
{
	arena a;
	plumb_status st;
	arena_request rq = { .size = 8u << 20, .pages = ARENA_PAGES_SMALL, .fault = ARENA_FAULT_PREFAULT };
	cr_assert_eq(arena_create(&a, &rq, &st), 0, "%s", st.message);
	cr_assert_eq((uintptr_t)a.base % 4096, 0);
	cr_assert_eq(arena_inspect(&a, &st), 0, "%s", st.message);
	cr_assert_eq(a.kernel_page_size, 4096);
	cr_assert_geq(a.resident_bytes, 8u << 20);
	cr_assert_eq(a.anon_huge_bytes, 0);
	cpu_features f;
	cpu_features_detect(&f);
	cpu_flush_range(a.base, 4096, &f);
	arena_destroy(&a);
}

Test(core_machine, arena_first_touch_is_lazy)
{
	arena a;
	plumb_status st;
	arena_request rq = { .size = 4u << 20, .pages = ARENA_PAGES_SMALL, .fault = ARENA_FAULT_FIRST_TOUCH };
	cr_assert_eq(arena_create(&a, &rq, &st), 0);
	cr_assert_eq(arena_inspect(&a, &st), 0);
	cr_assert_eq(a.resident_bytes, 0);
	((volatile char *)a.base)[0] = 1;
	cr_assert_eq(arena_inspect(&a, &st), 0);
	cr_assert_eq(a.resident_bytes, 4096);
	arena_destroy(&a);
}

/* A sparse arena (geometry's set-conflict probe: 40 lines 512 MiB apart
 * on a 260 MiB L3) spans more address space than the machine has memory;
 * only what is touched is checked, and a dense request that large is
 * still refused. */
Test(core_machine, arena_sparse_request_is_checked_by_what_it_touches)
{
	arena a;
	plumb_status st;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	cr_assert_gt(pages, 0);
	size_t beyond = (size_t)pages * (size_t)page * 2;
	arena_request dense = { .size = beyond, .pages = ARENA_PAGES_SMALL, .fault = ARENA_FAULT_FIRST_TOUCH };
	cr_assert_neq(arena_create(&a, &dense, &st), 0);
	cr_assert(strstr(st.message, "are available"), "%s", st.message);
	arena_request sparse = dense;
	sparse.touched = 4u << 20;
	cr_assert_eq(arena_create(&a, &sparse, &st), 0, "%s", st.message);
	((volatile char *)a.base)[0] = 1;
	((volatile char *)a.base)[beyond - 1] = 1;
	arena_destroy(&a);
}

Test(core_machine, arena_thp_aligned)
{
	arena a;
	plumb_status st;
	arena_request rq = { .size = 8u << 20, .pages = ARENA_PAGES_THP, .fault = ARENA_FAULT_PREFAULT };
	if (arena_create(&a, &rq, &st) != 0)
		cr_skip_test("THP unavailable: %s", st.message);
	cr_assert_eq((uintptr_t)a.base % (2u << 20), 0);
	cr_assert_eq(arena_inspect(&a, &st), 0);
	char d[128];
	arena_describe(&a, d, sizeof d);
	cr_assert(strlen(d) > 0);
	arena_destroy(&a);
}

Test(core_machine, arena_refuses_too_much)
{
	arena a;
	plumb_status st;
	arena_request rq = { .size = (size_t)1 << 50, .pages = ARENA_PAGES_DEFAULT, .fault = ARENA_FAULT_FIRST_TOUCH };
	cr_assert_eq(arena_create(&a, &rq, &st), -1);
	cr_assert(strstr(st.message, "available"), "%s", st.message);
	rq.size = 0;
	cr_assert_eq(arena_create(&a, &rq, &st), -1);
}

/* plumb topo's report from the library: what cannot be read is a status
 * with its reason, never a number. */
Test(core_machine, topology_report_says_what_it_cannot_read)
{
	topology t;
	memset(&t, 0, sizeof t);
	snprintf(t.cpu_model, sizeof t.cpu_model, "a test CPU");
	t.cpus = t.cores = 2;
	t.cache_count = 2;
	t.caches[0] = (topology_cache){ .level = 1, .type = CACHE_DATA, .size = 32768, .line = 64, .associativity = 0,
		                            .instances = 2 };
	t.caches[1] = (topology_cache){ .level = 2, .type = CACHE_UNIFIED, .size = 1 << 20, .line = 64,
		                            .associativity = -1, .instances = 1 };
	t.base_page_size = 4096;
	t.perf_event_paranoid = INT32_MIN;
	snprintf(t.hardware_counters_reason, sizeof t.hardware_counters_reason, "no PMU");
	timer_calibration calibration;
	memset(&calibration, 0, sizeof calibration);
	timer_calibration_clock(&calibration);
	cpu_features features;
	cpu_features_detect(&features);
	output_report *r = topology_report(&t, &calibration, &features);
	cr_assert_eq(output_table_count(r), 4);
	const output_table *caches = output_table_find(r, "caches");
	cr_assert_eq(output_row_count(caches), 2);
	int ways = output_column_index(caches, "ways");
	cr_expect_str_eq(output_cell_string(caches, 0, (size_t)ways), "unknown");
	cr_expect_str_eq(output_cell_string(caches, 1, (size_t)ways), "full");
	const output_table *kt = output_table_find(r, "timing_and_counters");
	size_t rows = output_row_count(kt);
	cr_expect_str_eq(output_cell_string(kt, rows - 2, 1), "unknown", "perf_event_paranoid unreadable");
	cr_expect_str_eq(output_cell_string(kt, rows - 1, 1), "unsupported");
	cr_expect_str_eq(output_cell_reason(kt, rows - 1, 1), "no PMU");
	output_report_free(r);
}
