/* One record per section of plumb report (src/report/report.h,
 * report_section): its name, heading, introduction, arguments (and quick
 * ones), expected cost, the earlier section it reads, and the default lists
 * it is in, its charts, and what the summary reads its report as.  The
 * report's planner and runner, its page, its summary and plumb cluster read
 * this table; adding a section is adding an entry here (and, for new
 * summary rows, reading its report in summary.c). */
#include <stdio.h>
#include <string.h>
#include "report/report.h"

/* --quick: shorter time caps, so a whole quick report (or a cluster node's
 * quick run) stays near half a minute on two cores. */
static const char *const quick_lat[] = { "--time-cap", "40", NULL };
static const char *const quick_bw[] = { "--time-cap", "40", NULL };
static const char *const quick_loaded[] = { "--samples", "3", "--loads", "50000", NULL };
/* validate's own default is 100 runs per case (about 80 s here); the report
 * runs 20, enough to classify every event, so the whole report stays near
 * a minute and a half on two cores. */
static const char *const validate_arguments[] = { "--runs", "20", NULL };
/* Watson's halting experiment (2004), scaled to milliseconds: the code
 * workload (ITLB and I-cache pressure, the events his halts disturbed most)
 * for about 9 ms of running time, halted every 0.2, 1 or 4 ms for 0 or
 * 0.2 ms, each halt touching what a drain would; five runs each.  About 2 s
 * on two loaded cores (docs/perturbation.md, "In the report"). */
static const char *const perturb_arguments[] = {
	"--workload", "code", "--size", "2000", "--intervals", "200us,1ms,4ms", "--halts", "0,200us",
	"--footprint", "64,8,16K", "--runs", "5", "--events", "task-clock,page-faults,context-switches", NULL
};
/* The model is fitted to loaded's report; geometry takes lat's capacities
 * and level latencies instead of sweeping again, so the two sections and
 * the summary give one figure. */
static const char *const from_stdin[] = { "--from", "-", NULL };
static const char *const levels_from_stdin[] = { "--levels-from", "-", NULL };

/* The charts of each section's tables (src/report/chart.c draws them).  No
 * chart for validate: its 128 (event, benchmark, source) series made a
 * legend no one could read; the summary's verdict grid says it instead. */
static const report_chart lat_charts[] = {
	{ "sweep", "bytes", "latency", NULL, true, true, "Dependent-load latency against working-set size",
	  "Working-set size", "Latency per load (ns, log scale)", false, true, NULL },
	{ "mlp_curve", "chains", "bandwidth", "level", false, false, "Memory-level parallelism: bandwidth against interleaved chains",
	  "Interleaved chains", NULL, true, false, NULL },
	{ "restart_curve", "work", "latency", "level", false, false, "Restart latency: time per load against dependent work after it",
	  "Dependent work after each load", NULL, true, false, NULL },
};
static const report_chart bw_charts[] = {
	{ "bandwidth", "footprint_per_thread", "gbps_median", "kernel,threads", true, true,
	  "Bandwidth against working-set size (solid: 1 thread, dashed: all threads)",
	  "Working-set size per thread", "Bandwidth (GB/s, median; log scale)", false, true, "kernel=read|write|copy|triad" },
};
static const report_chart loaded_charts[] = {
	{ "loaded", "total_bandwidth", "latency", NULL, false, false, "Latency under load (against achieved bandwidth)",
	  "Total memory bandwidth (MB/s)", "Latency per load (ns)", true, false, NULL },
};
static const report_chart explain_charts[] = {
	{ "curve", "size_bytes", "miss_ratio", "region", true, false,
	  "Miss-ratio curve per region, fully associative LRU (marks: the simulated caches)", "Cache capacity",
	  "Miss ratio", true, true, "sets=1" },
};
/* The program's curve per level, whole program, fully associative: its
 * knee against this machine's caches, which the chart marks. */
static const report_chart program_charts[] = {
	{ "curve", "size_bytes", "miss_ratio", "level", true, false,
	  "Your program's miss-ratio curve per level, fully associative LRU (marks: this machine's caches)",
	  "Cache capacity", "Miss ratio", true, true, "sets=1&region=(all)" },
};
/* Every data level's curve in the one run under plumbgrind. */
static const char *const program_arguments[] = { "--curve", "data", NULL };
static const report_chart model_charts[] = {
	{ "predict_contention", "contention", "latency", NULL, false, false, "Queueing model: predicted latency against contention",
	  "Bandwidth of the other cores (MB/s)", "Predicted latency (ns)", true, false, NULL },
};
#define CHARTS(list) .charts = list, .chart_count = sizeof list / sizeof list[0]

/* In the report's order.  seconds: what each section took in a whole report
 * on a 2-CPU Intel VM (Emerald Rapids guest) at load about 5, 2026-11-28
 * 04:00 UTC (the sections' file times under plumb report -d;
 * docs/PERFORMANCE.md, "The report's sections"); only their ratios matter to
 * the progress line.  stat, sim and explain are headings of pages other
 * commands build the same way, not report sections. */
static const report_section sections[] = {
	{ .name = "topo",
	  .title = "The machine",
	  .intro = "What the system reports: CPUs, caches (from sysfs and CPUID through hwloc), pages, the timer and whether hardware counters open.",
	  .seconds = 0.3, .quick_seconds = 0.3,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK | REPORT_SECTION_CLUSTER | REPORT_SECTION_CLUSTER_DEFAULT | REPORT_SECTION_CLUSTER_QUICK,
	  .summary_input = REPORT_SUMMARY_TOPO },
	{ .name = "lat",
	  .title = "Latency",
	  .intro = "Dependent loads over random cyclic chains, so neither prefetchers nor out-of-order execution can hide the latency. Plateaus are the levels the program can really use.",
	  .quick_arguments = quick_lat,
	  .seconds = 12, .quick_seconds = 5,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK | REPORT_SECTION_CLUSTER | REPORT_SECTION_CLUSTER_DEFAULT | REPORT_SECTION_CLUSTER_QUICK,
	  CHARTS(lat_charts), .summary_input = REPORT_SUMMARY_LAT },
	{ .name = "bw",
	  .title = "Bandwidth",
	  .intro = "Read, write, copy and triad kernels per working-set size, one thread and all threads. GB/s counts the bytes the kernel names, as STREAM does.",
	  .quick_arguments = quick_bw,
	  .input = "lat", .input_arguments = levels_from_stdin,
	  .plan_note = "the bandwidth section sizes its working sets from the latency section's usable capacities; running lat before it",
	  .seconds = 12, .quick_seconds = 4,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK | REPORT_SECTION_CLUSTER | REPORT_SECTION_CLUSTER_DEFAULT | REPORT_SECTION_CLUSTER_QUICK,
	  CHARTS(bw_charts), .summary_input = REPORT_SUMMARY_BW },
	{ .name = "geometry",
	  .title = "Geometry inferred from timing",
	  .intro = "Line size, capacities, associativity and TLB reach from timing alone, beside what the system claims. Capacities and level latencies are plumb lat's measurement and detector (the latency section's own run when the report has one), so both sections give one figure.",
	  .input = "lat", .input_arguments = levels_from_stdin,
	  .plan_note = "the geometry section reads the latency section's measurement; running lat before it",
	  .seconds = 2, .quick_seconds = 2,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_CLUSTER,
	  .summary_input = REPORT_SUMMARY_GEOMETRY },
	{ .name = "c2c",
	  .title = "Coherence costs between cores",
	  .intro = "What an access costs when another core holds the line in each state.",
	  .seconds = 1, .quick_seconds = 1,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK | REPORT_SECTION_CLUSTER | REPORT_SECTION_CLUSTER_DEFAULT | REPORT_SECTION_CLUSTER_QUICK,
	  .summary_input = REPORT_SUMMARY_C2C },
	{ .name = "loaded",
	  .title = "Latency under load",
	  .intro = "Pointer-chase latency while other cores generate traffic at increasing rates, with two checks: the idle point against the latency probe's own loop on the same chain, and whether the rise can be queueing at the memory system at all.",
	  .quick_arguments = quick_loaded,
	  .seconds = 1, .quick_seconds = 1,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK | REPORT_SECTION_CLUSTER | REPORT_SECTION_CLUSTER_DEFAULT | REPORT_SECTION_CLUSTER_QUICK,
	  CHARTS(loaded_charts), .summary_input = REPORT_SUMMARY_LOADED },
	{ .name = "model",
	  .title = "Queueing model",
	  .intro = "Hristea et al.'s closed queueing model (1997) fitted to the loaded-latency curve: the service time is what the memory system spends per request; the model then predicts latency at loads not measured.",
	  .input = "loaded", .input_required = true, .input_arguments = from_stdin, .bandwidth_bound = true,
	  .plan_note = "the model section needs loaded's measurements; adding the loaded section before it",
	  .input_missing = "the loaded section did not run, and the model is fitted to its measurements",
	  .seconds = 0.3, .quick_seconds = 0.3,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK | REPORT_SECTION_CLUSTER,
	  CHARTS(model_charts), .summary_input = REPORT_SUMMARY_MODEL },
	{ .name = "validate",
	  .title = "Can I trust my counters?",
	  .intro = "Microbenchmarks whose counts have a closed form, read through each counter source (perf_event, PAPI, the simulator, Valgrind instrumentation); each event's error class and the region size from which it is reliable. The summary's grid is the short answer.",
	  .arguments = validate_arguments,
	  .seconds = 197, .quick_seconds = 197,
	  .lists = REPORT_SECTION_DEFAULT | REPORT_SECTION_CLUSTER | REPORT_SECTION_CLUSTER_DEFAULT,
	  .summary_input = REPORT_SUMMARY_VALIDATE },
	{ .name = "perturb",
	  .title = "Does halting to drain a trace buffer perturb a program?",
	  .intro = "Watson's experiment (2004) on a built-in workload that pressures the ITLB and I-cache: every f of its running time it is halted for t, as a hardware tracer halts the machine to drain its buffer, and every event is compared with unhalted runs (95% confidence intervals). f* is the shortest interval at which nothing changes; times the workload's reference rate (from a recording) it is the trace buffer a tracer needs. Milliseconds here stand for Watson's seconds.",
	  .arguments = perturb_arguments, .recorded = true,
	  .seconds = 15, .quick_seconds = 15,
	  .lists = 0,
	  .summary_input = REPORT_SUMMARY_PERTURB },
	{ .name = REPORT_PROGRAM_SECTION,
	  .command = "sim", .own_table = "knees",
	  .title = "Your program's working set",
	  .intro = "The program given with --program, run once under plumb's simulator (plumb sim --curve data, on this machine's caches): its miss-ratio curve at every data level in one pass (Mattson et al. 1970; Hill and Smith 1989). A level's knee is the smallest capacity that removes nine tenths of the misses any capacity removes; the summary's hierarchy says in which level the working set lands, the knee held against what the level holds for a program here.",
	  .arguments = program_arguments, .program = true,
	  .seconds = 10, .quick_seconds = 10,
	  .lists = 0,
	  CHARTS(program_charts), .summary_input = REPORT_SUMMARY_PROGRAM },
	{ .name = "stat",
	  .title = "Counts",
	  .intro = "",
	  .lists = 0 },
	{ .name = "sim",
	  .title = "Simulation",
	  .intro = "",
	  .lists = 0 },
	{ .name = "explain",
	  .title = "Your program's regions: four sources",
	  .intro = "Per marked region: wall time and counters measured over several runs, exact counts from plumbgrind, misses simulated on this machine's caches, and a time predicted from them and this machine's latencies and bandwidths (docs/explain.md).",
	  .lists = 0,
	  CHARTS(explain_charts) },
};

const report_section *report_section_table(size_t *count)
{
	*count = sizeof sections / sizeof sections[0];
	return sections;
}

const report_section *report_section_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof sections / sizeof sections[0]; i++)
		if (!strcmp(sections[i].name, name))
			return &sections[i];
	return NULL;
}

const char *report_section_command(const char *name)
{
	const report_section *section = report_section_find(name);
	return section && section->command ? section->command : name;
}

const char *report_section_of(const output_report *report)
{
	const char *command = output_report_command(report);
	for (size_t i = 0; command && i < sizeof sections / sizeof sections[0]; i++)
		if (sections[i].command && sections[i].own_table && !strcmp(sections[i].command, command) &&
		    output_table_find(report, sections[i].own_table))
			return sections[i].name;
	return command;
}

void report_section_summary_inputs(output_report *const *reports, const char *const *commands, size_t count,
                                   const output_report *in[REPORT_SUMMARY_INPUTS])
{
	for (size_t k = 0; k < REPORT_SUMMARY_INPUTS; k++)
		in[k] = NULL;
	for (size_t i = 0; i < count; i++) {
		const report_section *section = reports[i] ? report_section_find(commands[i]) : NULL;
		if (section && section->summary_input != REPORT_SUMMARY_NONE && !in[section->summary_input])
			in[section->summary_input] = reports[i];
	}
}

void report_section_list(unsigned mask, const char *separator, char *out, size_t length)
{
	size_t used = 0;
	if (length)
		out[0] = 0;
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		if ((sections[i].lists & mask) != mask || used >= length)
			continue;
		int n = snprintf(out + used, length - used, "%s%s", used ? separator : "", sections[i].name);
		used += n > 0 ? (size_t)n : 0;
	}
}
