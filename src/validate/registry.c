/* The benchmark list and the suite sizes.  It sits above the benchmarks
 * (bench_*.c), whose tables it lists; what they call back (the region hooks,
 * a sub-run's parameters) is below them, in region.c. */
#include <string.h>
#include "validate/internal.h"

static const validate_benchmark *const all_benchmarks[] = {
	&validate_bench_page_faults,
	&validate_bench_dtlb,
	&validate_bench_dtlb_prefault,
	&validate_bench_padding,
	&validate_bench_padding_misaligned,
	&validate_bench_stride,
	&validate_bench_random,
	&validate_bench_page_crossing,
	&validate_bench_shared,
	&validate_bench_shared_control,
	&validate_bench_itv,
	&validate_bench_inv,
	&validate_bench_shr,
	&validate_bench_cln,
	&validate_bench_branch,
	&validate_bench_branch_long,
	&validate_bench_icache,
	&validate_bench_icache_l2,
	&validate_bench_cycles,
	&validate_bench_instructions,
	&validate_bench_issued,
	&validate_bench_loads,
	&validate_bench_stores,
	&validate_bench_fp,
	&validate_bench_fp_single,
	&validate_bench_fp_div,
	&validate_bench_sqrt,
};

const validate_benchmark *const *validate_benchmarks(size_t *count)
{
	*count = sizeof all_benchmarks / sizeof all_benchmarks[0];
	return all_benchmarks;
}

const validate_benchmark *validate_benchmark_find(const char *name)
{
	for (size_t i = 0; i < sizeof all_benchmarks / sizeof all_benchmarks[0]; i++)
		if (strcmp(all_benchmarks[i]->name, name) == 0) return all_benchmarks[i];
	return NULL;
}

size_t validate_suite_sizes(const validate_benchmark *benchmark, uint64_t max, uint64_t *sizes,
                            size_t capacity)
{
	size_t n = 0;
	for (uint64_t size = 1; size <= max && n < capacity; size *= 10) {
		sizes[n++] = size;
		if (size > UINT64_MAX / 10) break;
	}
	/* The seed's 1000-step capacity suite: 1000..10000, crossing half the cache. */
	if (benchmark->capacity_suite)
		for (uint64_t size = 2000; size <= 10000 && n < capacity; size += 1000) {
			bool present = false;
			for (size_t i = 0; i < n; i++) present |= sizes[i] == size;
			if (!present) sizes[n++] = size;
		}
	/* Keep ascending order. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
			uint64_t t = sizes[j];
			sizes[j] = sizes[j - 1];
			sizes[j - 1] = t;
		}
	return n;
}

int validate_run_plain(const validate_benchmark *benchmark, const validate_params *params,
                       validate_run_info *info, plumb_status *status)
{
	memset(info, 0, sizeof *info);
	return benchmark->run(params, NULL, info, status);
}
