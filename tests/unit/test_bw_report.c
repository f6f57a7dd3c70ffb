/* plumb bw's choices and report from the library: kernels by name and
 * ISA, the default thread counts, and the report of a sweep. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "bandwidth/bandwidth.h"
#include "core/output.h"

Test(bw_report, kernels_by_name_and_isa)
{
	cpu_features features;
	cpu_features_detect(&features);
	const bandwidth_kernel *kernels[64];
	int count;
	plumb_status status;
	int all;
	for (all = 0; bandwidth_kernel_names[all]; all++)
		;
	cr_assert_eq(bandwidth_kernels_resolve(NULL, NULL, 0, &features, kernels, 64, &count, &status), 0, "%s",
	             status.message);
	cr_expect_eq(count, all, "every kernel of the best ISA");
	for (int k = 0; k < count; k++)
		cr_expect_eq(kernels[k]->isa, bandwidth_isa_best(&features));
	static const char *const two[] = { "triad", "read" };
	cr_assert_eq(bandwidth_kernels_resolve("scalar", two, 2, &features, kernels, 64, &count, &status), 0);
	cr_assert_eq(count, 2);
	cr_expect_str_eq(kernels[0]->name, "triad");
	cr_expect_str_eq(kernels[1]->name, "read");
	cr_expect_eq(kernels[0]->isa, BANDWIDTH_ISA_SCALAR);

	cr_expect_eq(bandwidth_kernels_resolve("sse9", two, 2, &features, kernels, 64, &count, &status), -1);
	cr_expect_str_eq(status.message, "unknown ISA 'sse9' (scalar, avx2, avx512, all)");
	static const char *const unknown[] = { "read", "nosuch" };
	cr_expect_eq(bandwidth_kernels_resolve("scalar", unknown, 2, &features, kernels, 64, &count, &status), -1);
	cr_expect_str_eq(status.message, "unknown kernel 'nosuch'");
	/* more kernels than room: refused, never written past the end */
	cr_expect_eq(bandwidth_kernels_resolve("scalar", two, 2, &features, kernels, 1, &count, &status), -1);
	cr_expect_eq(status.code, E2BIG);
	cr_expect_eq(count, 1);
}

Test(bw_report, default_threads_double_up_to_every_cpu)
{
	int threads[64];
	cr_assert_eq(bandwidth_default_threads(1, threads, 64), 1);
	cr_expect_eq(threads[0], 1);
	cr_assert_eq(bandwidth_default_threads(6, threads, 64), 4);
	cr_expect(threads[0] == 1 && threads[1] == 2 && threads[2] == 4 && threads[3] == 6);
	cr_assert_eq(bandwidth_default_threads(8, threads, 64), 4);
	cr_expect(threads[2] == 4 && threads[3] == 8);
	cr_assert_eq(bandwidth_default_threads(1024, threads, 4), 4, "capacity bounds it");
	cr_expect_eq(threads[3], 1024);
}

Test(bw_report, a_sweep_gives_levels_points_and_notes)
{
	const bandwidth_kernel *read = bandwidth_kernel_by_name("read", BANDWIDTH_ISA_SCALAR);
	cr_assert_not_null(read);
	const bandwidth_kernel *kernels[1] = { read };
	int threads[1] = { 1 };
	topology topo;
	memset(&topo, 0, sizeof topo);
	snprintf(topo.cpu_model, sizeof topo.cpu_model, "a test CPU");
	timer_calibration timer;
	memset(&timer, 0, sizeof timer);
	timer_calibration_clock(&timer);
	bandwidth_sweep_request request = { .topo = &topo, .kernels = kernels, .kernel_count = 1, .thread_counts = threads,
		                                .thread_count_count = 1, .timer = &timer };
	bandwidth_measure_defaults(&request.options);
	bandwidth_point points[2];
	memset(points, 0, sizeof points);
	bandwidth_sweep sweep = { .points = points, .count = 2, .level_count = 2 };
	snprintf(sweep.levels[0].name, sizeof sweep.levels[0].name, "L1");
	snprintf(sweep.levels[1].name, sizeof sweep.levels[1].name, "L2");
	snprintf(sweep.pages_obtained, sizeof sweep.pages_obtained, "small");
	for (int i = 0; i < 2; i++) {
		points[i].threads = 1;
		points[i].kernel = read;
		snprintf(points[i].level, sizeof points[i].level, "L1");
		points[i].result.gbps.median = 10 + i;
		points[i].result.gbps.max = 20 + i;
		points[i].result.gbps.n = 5;
		points[i].result.moved_factor = 1;
	}
	output_report *report = bandwidth_report(&sweep, &request, 1.5);
	cr_assert_eq(output_table_count(report), 2);
	const output_table *levels = output_table_find(report, "levels");
	cr_assert_eq(output_row_count(levels), 1);
	cr_expect_eq(output_cell_number(levels, 0, (size_t)output_column_index(levels, "L1")), 20.5,
	             "the median of the points' best samples");
	cr_expect_str_eq(output_cell_string(levels, 0, (size_t)output_column_index(levels, "L2")), "skipped");
	cr_expect_eq(output_row_count(output_table_find(report, "bandwidth")), 2);
	cr_expect_eq(output_note_count(report), 3);
	output_report_free(report);
}
