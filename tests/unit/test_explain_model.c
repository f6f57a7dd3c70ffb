/* plumb explain's library parts that are arithmetic: the model (exact
 * terms on made-up counts and machines), the folding of the markers'
 * summaries over threads and runs, and reading machine figures back. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "explain/explain.h"
#include "../temp_folder.h"

static explain_machine machine(void)
{
	explain_machine m;
	memset(&m, 0, sizeof m);
	m.clock_ghz = 2.0;
	m.line_bytes = 64;
	double latency[EXPLAIN_LEVELS] = { 1, 4, 10, 100 }, bandwidth[EXPLAIN_LEVELS] = { 200, 100, 50, 16 };
	double mlp[EXPLAIN_LEVELS] = { NAN, 10, 10, 20 };
	for (int l = 0; l < EXPLAIN_LEVELS; l++) {
		m.latency_ns[l] = latency[l];
		m.bandwidth_gbps[l] = bandwidth[l];
		m.mlp[l] = mlp[l];
	}
	return m;
}

static explain_region region(uint64_t instructions, uint64_t l1d, uint64_t l2, uint64_t l3, uint64_t sequential)
{
	explain_region r;
	memset(&r, 0, sizeof r);
	r.instrumented = true;
	r.counts.value[INSTRUMENT_INSTRUCTIONS] = instructions;
	r.simulated.done = true;
	r.simulated.misses[0] = l1d;
	r.simulated.misses[1] = l2;
	r.simulated.misses[2] = l3;
	if (sequential) {   /* that many of l1d new lines at a constant stride (the code watch) */
		r.core.watched = true;
		r.core.lines = l1d;
		r.core.strided_lines = sequential;
	}
	r.simulated.memory_reads = l3;
	return r;
}

Test(explain_model, compute_only_is_instructions_over_ipc_and_clock)
{
	explain_machine m = machine();
	explain_region r = region(4000, 0, 0, 0, 0);
	explain_prediction p;
	explain_predict(&m, 1.0, &r, &p);
	cr_assert(p.done, "%s", p.reason);
	cr_expect_float_eq(p.compute_ns, 2000.0, 1e-9);
	cr_expect_float_eq(p.total_ns, 2000.0, 1e-9);
	explain_predict(&m, 2.0, &r, &p);
	cr_expect_float_eq(p.total_ns, 1000.0, 1e-9);
}

/* The kernel is not in the cache model: a region's page faults add their
 * measured cost after everything that overlaps; unknown cost or no count,
 * nothing added. */
Test(explain_model, page_faults_add_their_kernel_time)
{
	explain_machine m = machine();
	m.fault_ns = 2000;
	explain_region r = region(4000, 0, 0, 0, 0);
	r.page_faults = 1000;
	explain_prediction p;
	explain_predict(&m, 1.0, &r, &p);
	cr_assert(p.done, "%s", p.reason);
	cr_expect_float_eq(p.kernel_ns, 2e6, 1e-6);
	cr_expect_float_eq(p.total_ns, 2000.0 + 2e6, 1e-6);
	cr_expect_float_eq(p.overlapped_ns, 2000.0 + 2e6, 1e-6);
	r.page_faults = NAN;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.total_ns, 2000.0, 1e-9);
	r.page_faults = 1000;
	m.fault_ns = NAN;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.total_ns, 2000.0, 1e-9);
}

/* A fresh page written once is one minor fault: a few hundred ns to tens of
 * us of kernel time on any machine plumb runs on. */
Test(explain_model, a_page_fault_costs_kernel_time)
{
	double ns = explain_machine_fault_ns();
	cr_assert(isfinite(ns), "the fault cost could not be measured");
	cr_expect(ns > 50 && ns < 100000, "%g ns per fault", ns);
}

Test(explain_model, irregular_misses_overlap_by_the_mlp_unless_their_loads_chain)
{
	explain_machine m = machine();
	/* 100 L1D misses: 40 hit the L2, 50 the L3, 10 go to memory. */
	explain_region r = region(0, 100, 60, 10, 0);
	explain_prediction p;
	explain_predict(&m, 1.0, &r, &p);
	cr_assert(p.done, "%s", p.reason);
	/* Independent misses: latency / MLP each. */
	cr_expect_float_eq(p.latency_ns[EXPLAIN_L2], 40 * 4.0 / 10, 1e-9);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_L3], 50 * 10.0 / 10, 1e-9);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_MEMORY], 10 * 100.0 / 20, 1e-9);
	cr_expect_float_eq(p.stall_ns, 16 + 50 + 50.0, 1e-9);
	/* The bandwidth bound: 10 lines from memory at 16 GB/s; the stalls add to it. */
	cr_expect_float_eq(p.bandwidth_bound_ns, 10 * 64 / 16.0, 1e-9);
	cr_expect_float_eq(p.total_ns, 40 + 116.0, 1e-9);
	/* Every load a pointer chase: each miss waits a whole latency. */
	r.core.decoded_loads = 8;
	r.core.chained_loads = 8;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.chained, 1.0, 1e-12);
	cr_expect_float_eq(p.stall_ns, 160 + 500 + 1000.0, 1e-9);
	cr_expect_float_eq(p.total_ns, 40 + 1660.0, 1e-9);
	cr_expect_float_eq(p.overlapped_ns, 40 + 116.0, 1e-9);
	/* Half of them: halfway. */
	r.core.chained_loads = 4;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_MEMORY], 10 * 100.0 * (0.5 + 0.5 / 20), 1e-9);
}

Test(explain_model, transfers_overlap_the_core_and_the_bound_holds)
{
	explain_machine m = machine();
	/* A sweep from memory: every L1D miss is sequential. */
	explain_region r = region(400, 1000, 1000, 1000, 1000);
	explain_prediction p;
	explain_predict(&m, 1.0, &r, &p);
	cr_assert(p.done, "%s", p.reason);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_MEMORY], 0.0, 1e-9);
	cr_expect_float_eq(p.stream_ns[EXPLAIN_MEMORY], 1000 * 64 / 16.0, 1e-9);
	cr_expect_float_eq(p.transfer_ns, 4000.0, 1e-9);
	/* max(in-core 200 ns, transfers 4000 ns): they overlap (ECM) */
	cr_expect_float_eq(p.total_ns, 4000.0, 1e-9);
	/* In-core time beyond the transfers is the prediction. */
	explain_predict(&m, 0.01, &r, &p);
	cr_expect_float_eq(p.total_ns, 400 / (0.01 * 2.0), 1e-6);
	/* Write-backs share memory's bandwidth. */
	r.simulated.memory_writes = 500;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.stream_ns[EXPLAIN_MEMORY], 1500 * 64 / 16.0, 1e-9);
	cr_expect_float_eq(p.bandwidth_bound_ns, 1500 * 64 / 16.0, 1e-9);
	/* More lines than the demand misses (prefetches): lifted to the bound. */
	r.simulated.memory_writes = 0;
	r.simulated.memory_reads = 4000;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.bandwidth_bound_ns, 4000 * 64 / 16.0, 1e-9);
	cr_expect_float_eq(p.total_ns, p.bandwidth_bound_ns, 1e-9);
}

Test(explain_model, constant_stride_lines_make_misses_prefetchable)
{
	explain_machine m = machine();
	/* 100 misses served by the L2; 90 of 100 new lines came at a constant
	 * stride (a column walk within pages). */
	explain_region r = region(0, 100, 0, 0, 0);
	r.core.watched = true;
	r.core.lines = 100;
	r.core.strided_lines = 90;
	explain_prediction p;
	explain_predict(&m, 1.0, &r, &p);
	cr_assert(p.done, "%s", p.reason);
	cr_expect_float_eq(p.sequential, 0.9, 1e-12);
	cr_expect_float_eq(p.stream_ns[EXPLAIN_L2], 90 * 64 / 100.0, 1e-9);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_L2], 10 * 4.0 / 10, 1e-9);
	/* Not watched (no code watch): nothing is taken as prefetchable. */
	r.core.watched = false;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.sequential, 0.0, 1e-12);
}

Test(explain_model, in_core_time_comes_from_the_priced_blocks_unless_ipc_is_given)
{
	explain_machine m = machine();
	explain_region r = region(4000, 0, 0, 0, 0);
	r.core.done = true;
	r.core.cycles = 1600;   /* 4000 instructions in 1600 cycles: IPC 2.5 */
	r.core.instructions = 4000;
	r.core.priced_instructions = 4000;
	explain_prediction p;
	explain_predict(&m, 0, &r, &p);
	cr_assert(p.done, "%s", p.reason);
	cr_expect(p.ipc_from_code);
	cr_expect_float_eq(p.compute_ns, 800.0, 1e-9);
	cr_expect_float_eq(p.ipc, 2.5, 1e-12);
	/* --ipc overrides the blocks. */
	explain_predict(&m, 4.0, &r, &p);
	cr_expect_not(p.ipc_from_code);
	cr_expect_float_eq(p.compute_ns, 500.0, 1e-9);
	/* Without priced blocks the base rate is 1. */
	r.core.done = false;
	explain_predict(&m, 0, &r, &p);
	cr_expect_not(p.ipc_from_code);
	cr_expect_float_eq(p.compute_ns, 2000.0, 1e-9);
}

Test(explain_model, instruction_misses_count_below_the_l1)
{
	explain_machine m = machine();
	explain_region r = region(0, 10, 12, 0, 0);
	r.simulated.l1i_misses = 5;   /* 15 L1 misses, 12 miss the unified L2 too */
	explain_prediction p;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_L2], 3 * 4.0 / 10, 1e-9);
	cr_expect_float_eq(p.latency_ns[EXPLAIN_L3], 12 * 10.0 / 10, 1e-9);
}

Test(explain_model, llvm_cpu_names_follow_cpuid_nearest_first)
{
	const char *names[8];
	size_t n = explain_llvm_cpus("GenuineIntel", 6, 207, names, 8);
	cr_assert_geq(n, 3);
	cr_expect_str_eq(names[0], "emeraldrapids");
	cr_expect_str_eq(names[1], "sapphirerapids");
	cr_expect_str_eq(names[n - 1], "x86-64");
	n = explain_llvm_cpus("AuthenticAMD", 0x19, 0x61, names, 8);   /* Zen 4 */
	cr_expect_str_eq(names[0], "znver4");
	cr_expect_str_eq(names[1], "znver3");
	n = explain_llvm_cpus("AuthenticAMD", 0x19, 0x21, names, 8);   /* Zen 3 */
	cr_expect_str_eq(names[0], "znver3");
	n = explain_llvm_cpus("AuthenticAMD", 0x1A, 0x44, names, 8);   /* Zen 5 */
	cr_expect_str_eq(names[0], "znver5");
	cr_expect_str_eq(names[1], "znver4");
	n = explain_llvm_cpus("GenuineIntel", 6, 0x55, names, 8);
	cr_expect_str_eq(names[0], "cascadelake");
	n = explain_llvm_cpus("SomethingElse", 1, 2, names, 8);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(names[0], "x86-64");
	cr_expect_eq(explain_llvm_cpus("AuthenticAMD", 0x19, 0x61, names, 1), 1);
}

Test(explain_model, a_miss_names_the_term_and_the_evidence)
{
	char *argv[] = { "/bin/true", NULL };
	explain_options options;
	explain_options_init(&options);
	options.events = "task-clock,page-faults,context-switches";
	explain_result result;
	plumb_status status;
	cr_assert_eq(explain_result_init(&result, argv, &options, &status), 0, "%s", status.message);
	explain_region *r = explain_result_region(&result, "work");
	cr_assert_not_null(r);
	r->runs = 1;
	r->wall.median = 2e6;
	for (int e = 0; e < 3; e++) {
		r->counters[e].state = COUNTER_OK;
		r->counters[e].n = r->counters[e].observed = 1;
	}
	r->counters[0].mean = 1e6;    /* 1 ms of CPU time against 2 ms of wall time */
	r->counters[1].mean = 800;    /* page faults */
	r->counters[2].mean = 3;
	r->predicted.done = true;
	r->predicted.total_ns = r->predicted.compute_ns = 0.5e6;
	char why[1024];
	cr_assert_gt(explain_diagnose(&result, r, why, sizeof why), 0);
	cr_expect(strstr(why, "page faults"), "%s", why);
	cr_expect(strstr(why, "context switches"), "%s", why);
	/* Within 25%: nothing to say. */
	r->predicted.total_ns = 1.1e6;
	cr_expect_eq(explain_diagnose(&result, r, why, sizeof why), 0);
	/* Predicted too long, mostly transfers: the bandwidths are suspected. */
	r->predicted.total_ns = r->predicted.transfer_ns = 3e6;
	r->predicted.compute_ns = 1e6;
	cr_assert_gt(explain_diagnose(&result, r, why, sizeof why), 0);
	cr_expect(strstr(why, "bandwidth"), "%s", why);
	cr_expect_null(strstr(why, "did not price"), "no blocks were priced at all here: %s", why);
	/* Blocks priced, but most of the region's instructions in blocks
	 * llvm-mca did not price: said, with how they were taken. */
	snprintf(result.core_source, sizeof result.core_source, "llvm-mca -mcpu=test");
	r->predicted.total_ns = r->predicted.compute_ns = 3e6;
	r->predicted.transfer_ns = 0;
	r->core.instructions = 1000;
	r->core.priced_instructions = 250;
	cr_assert_gt(explain_diagnose(&result, r, why, sizeof why), 0);
	cr_expect(strstr(why, "75% of its instructions ran in blocks llvm-mca did not price (taken at the priced "
	                  "blocks' average)"), "%s", why);
	r->core.priced_instructions = 0;
	cr_assert_gt(explain_diagnose(&result, r, why, sizeof why), 0);
	cr_expect(strstr(why, "100% of its instructions ran in blocks llvm-mca did not price (taken at 1.00 per cycle)"),
	          "%s", why);
	r->core.priced_instructions = 950;
	cr_assert_gt(explain_diagnose(&result, r, why, sizeof why), 0);
	cr_expect_null(strstr(why, "did not price"), "95%% priced is not worth a word: %s", why);
	explain_result_free(&result);
}

Test(explain_model, a_missing_figure_is_a_reason_never_a_zero)
{
	explain_machine m = machine();
	explain_region r = region(100, 10, 10, 10, 0);
	explain_prediction p;
	m.latency_ns[EXPLAIN_MEMORY] = NAN;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_not(p.done);
	cr_expect(strstr(p.reason, "memory latency"), "%s", p.reason);
	m = machine();
	r.simulated.done = false;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_not(p.done);
	cr_expect(strstr(p.reason, "simulated"), "%s", p.reason);
	r = region(100, 0, 0, 0, 0);
	r.instrumented = false;
	explain_predict(&m, 1.0, &r, &p);
	cr_expect_not(p.done);
	explain_predict(NULL, 1.0, &r, &p);
	cr_expect_not(p.done);
}

/* A markers' summary as the region runtime writes it: two threads ran
 * "work", one could not count page-faults. */
static const char summary_json[] =
	"{\"schema\":\"plumb-report\",\"schema_version\":1,\"plumb_version\":\"0.1.0\",\"command\":\"region\","
	"\"meta\":{\"backend\":\"perf\"},\"tables\":[{\"name\":\"regions\",\"title\":\"r\",\"columns\":["
	"{\"name\":\"thread\",\"unit\":null},{\"name\":\"tid\",\"unit\":null},{\"name\":\"region\",\"unit\":null},"
	"{\"name\":\"entries\",\"unit\":null},{\"name\":\"wall_ns\",\"unit\":\"ns\"},{\"name\":\"task-clock\",\"unit\":null},"
	"{\"name\":\"page-faults\",\"unit\":null}],\"rows\":["
	"{\"thread\":0,\"tid\":10,\"region\":\"work\",\"entries\":2,\"wall_ns\":1000,\"task-clock\":900,\"page-faults\":3},"
	"{\"thread\":1,\"tid\":11,\"region\":\"work\",\"entries\":2,\"wall_ns\":3000,\"task-clock\":2900,"
	"\"page-faults\":{\"status\":\"unsupported\",\"reason\":\"because\"}},"
	"{\"thread\":0,\"tid\":10,\"region\":\"other\",\"entries\":1,\"wall_ns\":50,\"task-clock\":40,\"page-faults\":0}"
	"]}],\"notes\":[]}";

Test(explain_model, summaries_sum_over_threads_and_summarise_over_runs)
{
	char *argv[] = { "/bin/true", NULL };
	explain_options options;
	explain_options_init(&options);
	options.events = "task-clock,page-faults";
	explain_result result;
	plumb_status status;
	cr_assert_eq(explain_result_init(&result, argv, &options, &status), 0, "%s", status.message);
	output_report *summary;
	cr_assert_eq(output_report_parse_json(summary_json, &summary, &status), 0, "%s", status.message);
	for (size_t run = 0; run < 3; run++)
		cr_assert_eq(explain_measure_add_regions(&result, summary, run, &status), 0, "%s", status.message);
	output_report_free(summary);
	cr_assert_eq(result.region_count, 3);   /* (program), work, other */
	explain_region *work = explain_result_region(&result, "work");
	cr_assert_eq(work->runs, 3);
	cr_expect_eq(work->entries, 4);
	cr_expect_float_eq(work->wall_ns[0], 4000.0, 1e-9);
	cr_expect_eq(work->counters[0].n, 3);
	cr_expect_float_eq(work->counters[0].sum, 3 * 3800.0, 1e-9);
	/* One thread could not count it: the region's count is not a number. */
	cr_expect_eq(work->counters[1].state, COUNTER_UNSUPPORTED);
	cr_expect_eq(work->counters[1].n, 0);
	cr_expect_str_eq(result.event_reason[1], "because");
	explain_region *other = explain_result_region(&result, "other");
	cr_expect_eq(other->counters[1].state, COUNTER_OK);
	cr_expect_float_eq(other->counters[1].sum, 0.0, 1e-9);
	explain_result_free(&result);
}

Test(explain_model, an_older_summary_without_wall_time_is_refused)
{
	char *argv[] = { "/bin/true", NULL };
	explain_options options;
	explain_options_init(&options);
	explain_result result;
	plumb_status status;
	cr_assert_eq(explain_result_init(&result, argv, &options, &status), 0, "%s", status.message);
	char old[sizeof summary_json];
	snprintf(old, sizeof old, "%s", summary_json);
	char *wall = strstr(old, "wall_ns");
	memcpy(wall, "wall_xx", 7);
	output_report *summary;
	cr_assert_eq(output_report_parse_json(old, &summary, &status), 0, "%s", status.message);
	cr_expect_eq(explain_measure_add_regions(&result, summary, 0, &status), -1);
	cr_expect(strstr(status.message, "wall_ns"), "%s", status.message);
	output_report_free(summary);
	explain_result_free(&result);
}

Test(explain_model, bad_options_are_refused)
{
	explain_options options;
	explain_options_init(&options);
	explain_result result;
	plumb_status status;
	char *missing[] = { "/nonexistent/program", NULL };
	cr_expect_eq(explain_result_init(&result, missing, &options, &status), -1);
	char *not_on_path[] = { "no-such-program-plumb", NULL };
	cr_expect_eq(explain_result_init(&result, not_on_path, &options, &status), -1);
	cr_expect(strstr(status.message, "PATH"), "%s", status.message);
	char *ok[] = { "true", NULL };
	options.runs = 0;
	cr_expect_eq(explain_result_init(&result, ok, &options, &status), -1);
	explain_options_init(&options);
	options.backend = "nope";
	cr_expect_eq(explain_result_init(&result, ok, &options, &status), -1);
}

Test(explain_model, machine_figures_come_back_from_explains_own_json)
{
	char *argv[] = { "/bin/true", NULL };
	explain_options options;
	explain_options_init(&options);
	explain_result result;
	plumb_status status;
	cr_assert_eq(explain_result_init(&result, argv, &options, &status), 0, "%s", status.message);
	result.machine = machine();
	snprintf(result.machine.source, sizeof result.machine.source, "made up");
	result.have_machine = true;
	output_report *report = explain_report(&result);
	cr_assert_not_null(report);
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-explain-machine-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(output_write_file(report, OUTPUT_JSON, path, &status), 0, "%s", status.message);
	output_report_free(report);
	explain_machine back;
	cr_assert_eq(explain_machine_load(path, &back, &status), 0, "%s", status.message);
	unlink(path);
	cr_expect_float_eq(back.clock_ghz, 2.0, 1e-6);
	cr_expect_eq(back.line_bytes, 64);
	cr_expect_float_eq(back.latency_ns[EXPLAIN_MEMORY], 100.0, 1e-6);
	cr_expect_float_eq(back.bandwidth_gbps[EXPLAIN_L3], 50.0, 1e-6);
	cr_expect_float_eq(back.mlp[EXPLAIN_MEMORY], 20.0, 1e-6);
	cr_expect(isnan(back.mlp[EXPLAIN_L1]));
	explain_result_free(&result);
	cr_expect_eq(explain_machine_load("/nonexistent.json", &back, &status), -1);
}

/* plumb report's report.json: the summary's hierarchy and the lat section's MLP. */
Test(explain_model, machine_figures_come_from_a_machine_report)
{
	static const char text[] =
		"{\"schema\":\"plumb-machine-report\",\"schema_version\":1,\"sections\":["
		"{\"command\":\"lat\",\"status\":\"ok\",\"report\":{\"schema\":\"plumb-report\",\"schema_version\":1,"
		"\"command\":\"lat\",\"meta\":{\"core_clock_ghz_estimate\":3.5},\"tables\":["
		"{\"name\":\"levels\",\"title\":\"l\",\"columns\":[{\"name\":\"level\",\"unit\":null},"
		"{\"name\":\"latency\",\"unit\":\"ns\"}],\"rows\":[{\"level\":\"L1\",\"latency\":1.5}]},"
		"{\"name\":\"mlp\",\"title\":\"m\",\"columns\":[{\"name\":\"level\",\"unit\":null},"
		"{\"name\":\"outstanding\",\"unit\":\"lines\"}],\"rows\":[{\"level\":\"memory\",\"outstanding\":17.5}]}"
		"],\"notes\":[]}},"
		"{\"command\":\"c2c\",\"status\":\"failed\",\"reason\":\"no\"}],"
		"\"summary\":{\"schema\":\"plumb-report\",\"schema_version\":1,\"command\":\"summary\","
		"\"meta\":{\"core_clock_ghz\":3.7},\"tables\":[{\"name\":\"hierarchy\",\"title\":\"h\",\"columns\":["
		"{\"name\":\"level\",\"unit\":null},{\"name\":\"sysfs_size\",\"unit\":\"bytes\"},"
		"{\"name\":\"latency\",\"unit\":\"ns\"},{\"name\":\"read_1\",\"unit\":\"GB/s\"}],\"rows\":["
		"{\"level\":\"L2\",\"sysfs_size\":1048576,\"latency\":3.5,\"read_1\":150},"
		"{\"level\":\"DRAM\",\"sysfs_size\":null,\"latency\":140,\"read_1\":20}]}],\"notes\":[]}}";
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-explain-report-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	explain_machine m;
	plumb_status status;
	int rc = explain_machine_load(path, &m, &status);
	unlink(path);
	cr_assert_eq(rc, 0, "%s", status.message);
	cr_expect_float_eq(m.clock_ghz, 3.7, 1e-9);
	cr_expect_float_eq(m.latency_ns[EXPLAIN_L1], 1.5, 1e-9);
	cr_expect_float_eq(m.latency_ns[EXPLAIN_L2], 3.5, 1e-9);
	cr_expect_float_eq(m.latency_ns[EXPLAIN_MEMORY], 140, 1e-9);
	cr_expect_float_eq(m.bandwidth_gbps[EXPLAIN_MEMORY], 20, 1e-9);
	cr_expect_float_eq(m.mlp[EXPLAIN_MEMORY], 17.5, 1e-9);
	cr_expect_eq(m.size_bytes[EXPLAIN_L2], 1048576);
	cr_expect(isnan(m.latency_ns[EXPLAIN_L3]));
}
