/* Timing on a shared 2-CPU machine: only orderings with wide margins, each
 * retried a few times before failing, because another program may own a
 * CPU for a while.  Deterministic parts (generator stream, distances,
 * counted bytes when the flag never rises) are exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "coherence/c2c.h"
#include "core/cpu.h"
#include "loaded/loaded.h"
#include "core/output.h"

#define RETRIES 5

static int two_cpus(int cpus[2])
{
	int all[64];
	int n = cpu_allowed(all, 64, NULL);
	if (n < 2)
		return 0;
	cpus[0] = all[0];
	cpus[1] = all[1];
	return 1;
}

static timer_calibration calibrated(void)
{
	timer_calibration timer;
	if (timer_calibrate(&timer, 10, NULL) != 0)
		timer_calibration_clock(&timer);
	return timer;
}

Test(mp_timing, remote_modified_load_costs_more_than_local_l1, .timeout = 60)
{
	int cpus[2];
	if (!two_cpus(cpus))
		cr_skip_test("needs 2 CPUs");
	timer_calibration timer = calibrated();
	c2c_config config;
	c2c_config_default(&config);
	config.lines = 128;      /* 128 lines, 16 KiB span: fits in L1 */
	config.trials = 7;
	double local = 0, remote = 0;
	for (int attempt = 0; attempt < RETRIES; attempt++) {
		c2c_bench *bench;
		plumb_status status;
		cr_assert_eq(c2c_bench_open(&bench, &config, cpus, 2, &timer, &status), 0, "%s", status.message);
		c2c_result l, m;
		cr_assert_eq(c2c_bench_measure(bench, COHERENCE_LOCAL, 0, COHERENCE_ACCESS_LOAD, &l, &status), 0, "%s",
		             status.message);
		cr_assert_eq(c2c_bench_measure(bench, COHERENCE_MODIFIED, 0, COHERENCE_ACCESS_LOAD, &m, &status), 0, "%s",
		             status.message);
		c2c_bench_close(bench);
		local = l.min_ns;
		remote = m.median_ns;
		if (remote > 2 * local)
			return;
		/* The host may have placed both vCPUs on one physical core for a
		 * while (SMT siblings share the L1): wait for it to move them. */
		usleep(50000u << attempt);
	}
	/* A Modified line in a cache this core shares answers as fast as its
	 * own L1: on a VM whose host kept both vCPUs on SMT siblings through
	 * every retry (seen once in CI: 1.8 ns for both) the ordering cannot be
	 * shown, which is the host's doing, not the probe's. */
	if (remote < 1.5 * local)
		cr_skip_test("another core's Modified line loaded as fast as an L1 hit (%.1f ns, L1 %.1f ns) in every "
		             "retry: the two CPUs share an L1 now (a VM's vCPUs on SMT siblings of one host core)",
		             remote, local);
	cr_assert_fail("load from another core's Modified line (%.1f ns) not above twice a local L1 hit (%.1f ns)", remote,
	        local);
}

Test(mp_timing, padded_counters_beat_falsely_shared, .timeout = 60)
{
	int cpus[2];
	if (!two_cpus(cpus))
		cr_skip_test("needs 2 CPUs");
	c2c_false_sharing_result result = { 0 };
	/* The overlapped bursts need both threads on their CPUs at once; under
	 * load (and beside the test criterion runs in parallel) a short window
	 * can have none, which the library reports as an error, or too few to
	 * show the gap.  Retry both, each time with a window twice as long. */
	for (int attempt = 0; attempt < RETRIES; attempt++) {
		plumb_status status;
		int rc = c2c_false_sharing(cpus[0], cpus[1], 20000000ull << attempt, 3, 2000000000ull, &result, &status);
		if (rc != 0 && attempt < RETRIES - 1)
			continue;
		cr_assert_eq(rc, 0, "%s", status.message);
		if (result.slowdown > 1.3)
			return;
	}
	cr_assert_fail("falsely shared counters (%.2f ns/update) not slower than padded (%.2f ns/update)",
	        result.shared_ns_per_update, result.padded_ns_per_update);
}

Test(mp_timing, pingpong_gives_a_finite_round_trip, .timeout = 60)
{
	int cpus[2];
	if (!two_cpus(cpus))
		cr_skip_test("needs 2 CPUs");
	c2c_pingpong_result result;
	plumb_status status;
	cr_assert_eq(c2c_pingpong(cpus[0], cpus[1], 500, 3, 2000000000ull, &result, &status), 0, "%s", status.message);
	cr_expect(result.min_ns > 0 && isfinite(result.median_ns) && result.min_ns <= result.median_ns);
	cr_expect_neq(c2c_pingpong(cpus[0], cpus[0], 10, 1, 1000000, &result, &status), 0);
}

Test(mp_timing, loaded_counts_only_while_the_flag_is_up, .timeout = 60)
{
	int cpus[2];
	if (!two_cpus(cpus))
		cr_skip_test("needs 2 CPUs");
	timer_calibration timer = calibrated();
	loaded_config config;
	loaded_config_default(&config);
	static const unsigned delays[] = { 0 };
	config.latency_cpu = cpus[0];
	config.generator_cpus = &cpus[1];
	config.generators = 1;
	config.delays = delays;
	config.delay_count = 1;
	config.chase_bytes = 1u << 20;
	config.generator_bytes = 4u << 20;
	config.loads_per_sample = 50000;
	config.samples = 3;
	loaded_point points[2];
	size_t count;
	plumb_status status;
	/* Exact: the idle point counts nothing.  Timing: that the generator
	 * moved bytes while the flag was up needs it to have run during the
	 * samples, which another program on its CPU can prevent; retry. */
	for (int attempt = 0; attempt < RETRIES; attempt++) {
		loaded_reference reference;
		cr_assert_eq(loaded_run(&config, &timer, points, &count, &reference, NULL, NULL, &status), 0, "%s",
		             status.message);
		cr_assert_eq(count, 2);
		cr_expect(reference.measured && reference.ns > 0, "%s", reference.why_not);
		/* Exact: every sample is cut into whole chunks and the last part. */
		size_t chunk = loaded_chunk_loads(&config);
		for (int p = 0; p < 2; p++) {
			cr_expect_eq(points[p].chunks, (size_t)config.samples * ((config.loads_per_sample + chunk - 1) / chunk));
			cr_expect_leq(points[p].chunks_preempted, points[p].chunks);
			cr_expect(points[p].latency_min_ns <= points[p].latency_p10_ns
			          && points[p].latency_p10_ns <= points[p].latency_ns);
		}
		cr_expect(points[0].idle);
		cr_expect_eq(points[0].generator_bytes, 0, "idle point counted generator bytes");
		cr_expect_eq(points[0].generators, 0);
		cr_expect(!points[1].idle);
		cr_expect_eq(points[1].generator_bytes % (16 * 64), 0, "bytes are counted in whole checks");
		cr_expect(points[1].latency_ns > 0 && points[1].measured_seconds > 0);
		if (points[1].generator_bytes > 0)
			break;
		cr_expect_lt(attempt, RETRIES - 1, "the generator never counted a byte in %d attempts", RETRIES);
		/* Each retry samples 4x longer: a sample shorter than the
		 * scheduler's slice fits entirely in a time the generator's CPU
		 * is given to another program, and then correctly counts 0. */
		config.loads_per_sample *= 4;
	}
	/* The same CPU for both roles is refused, not run. */
	config.generator_cpus = &cpus[0];
	cr_expect_neq(loaded_run(&config, &timer, points, &count, NULL, NULL, NULL, &status), 0);
}

Test(mp_timing, generator_stream_is_exact)
{
	uint64_t buffer[8 * 10] = { 0 };   /* 10 lines of 64 bytes */
	for (int i = 0; i < 10; i++)
		buffer[8 * i] = (uint64_t)i;
	size_t position = 7;
	uint64_t sum = loaded_generate(LOADED_READ, (uint8_t *)buffer, 10, 64, &position, 5, 0);
	cr_expect_eq(position, 2, "wraps at the end");
	cr_expect_eq(sum, 7 + 8 + 9 + 0 + 1);
	position = 0;
	loaded_generate(LOADED_WRITE, (uint8_t *)buffer, 10, 64, &position, 10, 3);
	/* Every line was stored to: the stored value is the running sum plus delay adds. */
	for (int i = 0; i < 10; i++)
		cr_expect_eq(buffer[8 * i], (uint64_t)(3 * i), "line %d", i);
	loaded_pattern pattern;
	cr_expect_eq(loaded_pattern_parse("mixed", &pattern), 0);
	cr_expect_eq(pattern, LOADED_MIXED);
	cr_expect_neq(loaded_pattern_parse("copy", &pattern), 0);
}

Test(mp_timing, cpu_distance_classes)
{
	cpu_distance_map *map;
	plumb_status status;
	cr_assert_eq(cpu_distance_open(&map, &status), 0, "%s", status.message);
	int cpus[64];
	int n = cpu_allowed(cpus, 64, NULL);
	cr_expect_eq(cpu_distance_between(map, cpus[0], cpus[0]), CPU_DISTANCE_SAME);
	cr_expect_eq(cpu_distance_between(map, cpus[0], 100000), CPU_DISTANCE_UNKNOWN);
	int pairs[CPU_DISTANCE_COUNT][2];
	cpu_distance_representatives(map, cpus, n, pairs);
	cr_expect_eq(pairs[CPU_DISTANCE_SAME][0], -1);
	for (int i = 1; i < n && i < 8; i++) {
		cpu_distance d = cpu_distance_between(map, cpus[0], cpus[i]);
		cr_expect(d != CPU_DISTANCE_SAME && d != CPU_DISTANCE_UNKNOWN, "%d-%d: %s", cpus[0], cpus[i],
		          cpu_distance_name(d));
		cr_expect_eq(d, cpu_distance_between(map, cpus[i], cpus[0]), "distance is symmetric");
		cr_expect_geq(pairs[d][0], 0);
	}
	cr_expect_str_eq(cpu_distance_name(CPU_DISTANCE_SMT), "smt-sibling");
	cpu_distance_close(map);
}

/* A bench that cannot open (here: one line, which c2c_bench_open refuses;
 * in CI's sanitizer build under load, a helper thread that did not start in
 * time) gives rows of "failed" cells.  The invalidate table wrote one cell
 * too many there and plumb aborted with "table 'invalidate' row overflow". */
Test(mp_timing, a_bench_that_cannot_open_gives_failed_rows, .timeout = 60)
{
	int cpus[2];
	if (!two_cpus(cpus))
		cr_skip_test("needs 2 CPUs");
	timer_calibration timer = calibrated();
	c2c_run_options options;
	c2c_run_options_default(&options);
	options.cpus[0] = cpus[0];
	options.cpus[1] = cpus[1];
	options.cpu_count = 2;
	options.sections = C2C_SECTION_PAIRS | C2C_SECTION_STATES | C2C_SECTION_INVALIDATE;
	options.config.lines = 1;
	output_report *report = output_report_new("c2c");
	plumb_status status;
	cr_assert_eq(c2c_run(&options, &timer, report, &status), 0, "%s", status.message);
	const output_table *invalidate = output_table_find(report, "invalidate");
	cr_assert_not_null(invalidate);
	cr_assert_eq(output_row_count(invalidate), 1);
	cr_assert_str_eq(output_cell_string(invalidate, 0, 5), "failed");
	output_report_free(report);
}
