/* plumb perturb: does halting a program to drain a trace buffer change what
 * is measured?  The halting experiment of Watson (2004) for any program,
 * and the same question through the cache simulator.  Logic: src/perturb/. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "core/cpu.h"
#include "core/parse.h"
#include "perturb/perturb.h"

const char cmd_perturb_summary[] = "does halting a program to drain a trace perturb its counts?";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb perturb [options] (--design NAME | --intervals LIST --halts LIST)\n"
	        "                     (--workload NAME | -- COMMAND [ARGS...])\n"
	        "       plumb perturb --simulate TRACE --buffers LIST [options]\n"
	        "       plumb perturb --workload NAME --once   (once, e.g. to record it)\n"
	        "       plumb perturb --list-workloads\n"
	        "\n"
	        "Runs the program under every (interval f, halt time t) pair and a no-halting\n"
	        "baseline, N runs each, interleaved, each in a fresh process pinned to one CPU.\n"
	        "Every f seconds of the program's own running time (task-clock) a handler blocks\n"
	        "signals and spins t seconds of the program's CPU time (Watson, 2004).  Events\n"
	        "are compared with 95%% confidence intervals; the report gives the smallest\n"
	        "interval f* at which no event differs from the baseline, the halting agent's\n"
	        "own cost per halt (measured at t = 0) taken out of the running time.\n"
	        "\n"
	        "Experiment:\n"
	        "  --design NAME        halt-time (Watson's Table 2.1), halt-frequency (Table\n"
	        "                       2.2)\n"
	        "                       or full; scaled by --scale (default 0.001: seconds -> ms)\n"
	        "  --intervals LIST     intervals f: seconds, a/b, or with ms/us (1/8,1/2)\n"
	        "  --halts LIST         halt times t, 0 = handler entry and exit only (0,1/2,2)\n"
	        "  --scale S            multiply every interval and halt time (default 1 for\n"
	        "                       lists)\n"
	        "  -r, --runs N         runs per configuration (default 5)\n"
	        "  -e, --events LIST    events to count (default: software events and the usual\n"
	        "                       hardware ones, unsupported where there is no PMU)\n"
	        "  --footprint L,P,C    each halt also touches L cache lines, P fresh pages and\n"
	        "                       C bytes of code, as a real drain would\n"
	        "  --clock EVENT        the halt clock: task-clock (default) or cycles (needs a\n"
	        "                       PMU)\n"
	        "  --cycles-per-second R  cycles per second of interval for --clock cycles\n"
	        "                       (default: the TSC frequency)\n"
	        "  -C, --cpu N          the CPU to run on (default: the last one allowed)\n"
	        "  --reference-rate R   the program's memory references per second, for the\n"
	        "                       buffer size f* implies\n"
	        "  --rate-trace FILE    take that rate from a recorded trace of the program\n"
	        "                       (its references / the baseline's running time), and the\n"
	        "                       rate of bus transactions (line fills from memory and\n"
	        "                       write-backs, simulated on --preset's caches, default this\n"
	        "                       machine's): the buffer is given in both\n"
	        "  --show-output        keep the program's standard output (default: discarded)\n"
	        "\n"
	        "Workloads:\n"
	        "  --workload NAME      a built-in workload instead of a command\n"
	        "                       (--list-workloads)\n"
	        "  --size N             its size in its own units (default: about 0.5 s)\n"
	        "  --miss-times M       SimpleMisses' MISS_TIMES (default 8)\n"
	        "  --once               run the workload once, no halting, no report\n"
	        "\n"
	        "Through the simulator:\n"
	        "  --simulate TRACE     a recorded trace (plumb trace record, lackey or din)\n"
	        "  --buffers LIST       trace buffer sizes in bytes (64K,1M,...)\n"
	        "  --record-bytes B     bytes per reference in the buffer (default 16)\n"
	        "  --window W           references per window after a halt (default 1000)\n"
	        "  --windows K          windows followed after each halt (default 32)\n"
	        "  --preset NAME        simulated caches (default: this machine's); a preset\n"
	        "                       without TLBs gets 64-entry ITLB and DTLB of 4 KiB pages\n"
	        "  --no-default-tlbs    simulate no TLBs where the preset describes none\n"
	        "  --machine FILE       plumb report's report.json: the host preset's shared\n"
	        "                       cache at its measured usable size (as plumb sim\n"
	        "                       --machine)\n"
	        "  --limit N            simulate only the first N references\n"
	        "\n"
	        "Output:\n"
	        "  --json, --csv, -o FILE   as every command\n"
	        "  -h, --help           this help\n"
	        "\n"
	        "See plumb-perturb(1) and docs/perturbation.md.\n");
}

static int list_workloads(void)
{
	size_t n;
	const perturb_workload *w = perturb_workloads(&n);
	for (size_t i = 0; i < n; i++)
		printf("%-13s %s (size in %s, default %llu)\n", w[i].name, w[i].description, w[i].unit,
		       (unsigned long long)w[i].default_size);
	return 0;
}

static int parse_buffers(const char *text, perturb_sim_options *o, plumb_status *status)
{
	char copy[1024];
	if (parse_list_check(text, sizeof copy - 1, status) != 0)
		return -1;
	snprintf(copy, sizeof copy, "%s", text);
	char *save = NULL;
	o->n_buffers = 0;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (o->n_buffers >= sizeof o->buffers / sizeof o->buffers[0])
			return plumb_fail(status, E2BIG, "at most 16 buffer sizes");
		if (parse_size(item, &o->buffers[o->n_buffers], status) != 0)
			return -1;
		if (o->buffers[o->n_buffers] == 0)
			return plumb_fail(status, EINVAL, "a buffer of 0 bytes");
		o->n_buffers++;
	}
	if (o->n_buffers == 0)
		return plumb_fail(status, EINVAL, "no buffer sizes");
	return 0;
}

int cmd_perturb(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "design", required_argument, 0, 0x2001 },
		{ "intervals", required_argument, 0, 0x2002 },
		{ "halts", required_argument, 0, 0x2003 },
		{ "scale", required_argument, 0, 0x2004 },
		{ "runs", required_argument, 0, 'r' },
		{ "events", required_argument, 0, 'e' },
		{ "footprint", required_argument, 0, 0x2005 },
		{ "clock", required_argument, 0, 0x2006 },
		{ "cycles-per-second", required_argument, 0, 0x2007 },
		{ "cpu", required_argument, 0, 0x2008 },
		{ "reference-rate", required_argument, 0, 0x2009 },
		{ "rate-trace", required_argument, 0, 0x200a },
		{ "show-output", no_argument, 0, 0x200b },
		{ "workload", required_argument, 0, 'w' },
		{ "size", required_argument, 0, 0x200c },
		{ "miss-times", required_argument, 0, 0x200d },
		{ "once", no_argument, 0, 0x200e },
		{ "list-workloads", no_argument, 0, 0x200f },
		{ "simulate", required_argument, 0, 0x2010 },
		{ "buffers", required_argument, 0, 0x2011 },
		{ "record-bytes", required_argument, 0, 0x2012 },
		{ "window", required_argument, 0, 0x2013 },
		{ "windows", required_argument, 0, 0x2014 },
		{ "preset", required_argument, 0, 0x2015 },
		{ "machine", required_argument, 0, 0x2030 },
		{ "limit", required_argument, 0, 0x2016 },
		{ "no-default-tlbs", no_argument, 0, 0x2017 },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	perturb_options po;
	perturb_options_default(&po);
	perturb_sim_options so;
	perturb_sim_options_default(&so);
	const char *design_name = NULL, *intervals = NULL, *halts = NULL, *event_list = NULL,
	           *rate_trace = NULL, *buffers = NULL;
	double scale = NAN, reference_rate = 0;
	bool once = false;
	char storage[4096];
	plumb_status status;
	uint64_t value;
	long cpu;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hr:e:w:C:o:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 0x2001: design_name = optarg; break;
		case 0x2002: intervals = optarg; break;
		case 0x2003: halts = optarg; break;
		case 0x2004:
			if (parse_double(optarg, 1e-9, 1000, &scale, &status) != 0)
				return cli_usage_error("perturb", "--scale: %s", status.message);
			break;
		case 'r':
			if (parse_u64(optarg, 2, PERTURB_MAX_RUNS, &value, &status) != 0)
				return cli_usage_error("perturb", "--runs: %s", status.message);
			po.runs = (size_t)value;
			break;
		case 'e': event_list = optarg; break;
		case 0x2005:
			if (perturb_footprint_parse(optarg, &po.footprint, &status) != 0)
				return cli_usage_error("perturb", "--footprint: %s", status.message);
			so.footprint = po.footprint;
			break;
		case 0x2006: po.clock = optarg; break;
		case 0x2007:
			if (parse_double(optarg, 1e3, 1e12, &po.cycles_per_second, &status) != 0)
				return cli_usage_error("perturb", "--cycles-per-second: %s", status.message);
			break;
		case 0x2008: case 'C':
			if (parse_int(optarg, 0, 4095, &cpu, &status) != 0)
				return cli_usage_error("perturb", "--cpu: %s", status.message);
			po.cpu = (int)cpu;
			/* the shared check and wording, as under plumb lat, bw, c2c and validate */
			if (cpu_check_allowed(&po.cpu, 1, &status) != 0)
				return cli_usage_error("perturb", "--cpu: %s", status.message);
			break;
		case 0x2009:
			if (parse_double(optarg, 1e-6, 1e15, &reference_rate, &status) != 0)
				return cli_usage_error("perturb", "--reference-rate: %s", status.message);
			break;
		case 0x200a: rate_trace = optarg; break;
		case 0x200b: po.show_output = true; break;
		case 'w': po.workload = optarg; break;
		case 0x200c:
			if (parse_u64(optarg, 1, UINT64_MAX / 2, &po.workload_size, &status) != 0)
				return cli_usage_error("perturb", "--size: %s", status.message);
			break;
		case 0x200d:
			if (parse_u64(optarg, 1, 64, &po.workload_parameter, &status) != 0)
				return cli_usage_error("perturb", "--miss-times: %s", status.message);
			break;
		case 0x200e: once = true; break;
		case 0x200f: return list_workloads();
		case 0x2010: so.trace_path = optarg; break;
		case 0x2011: buffers = optarg; break;
		case 0x2012:
			if (parse_u64(optarg, 1, 4096, &value, &status) != 0)
				return cli_usage_error("perturb", "--record-bytes: %s", status.message);
			so.record_bytes = (uint32_t)value;
			break;
		case 0x2013:
			if (parse_u64(optarg, 1, 1000000000, &so.window, &status) != 0)
				return cli_usage_error("perturb", "--window: %s", status.message);
			break;
		case 0x2014:
			if (parse_u64(optarg, 1, 4096, &value, &status) != 0)
				return cli_usage_error("perturb", "--windows: %s", status.message);
			so.windows = (size_t)value;
			break;
		case 0x2015: so.preset = optarg; break;
		case 0x2030: so.machine_path = optarg; break;
		case 0x2016:
			if (parse_u64(optarg, 1, UINT64_MAX / 2, &so.max_records, &status) != 0)
				return cli_usage_error("perturb", "--limit: %s", status.message);
			break;
		case 0x2017: so.no_default_tlbs = true; break;
		default:
			if (!cli_output_option("perturb", &out, c, optarg))
				return cli_bad_option("perturb", c, argv);
		}
	}
	if (po.workload && !perturb_workload_find(po.workload))
		return cli_usage_error("perturb", "unknown workload '%s' (plumb perturb --list-workloads)", po.workload);

	if (once) {
		if (!po.workload || optind < argc)
			return cli_usage_error("perturb", "--once runs a built-in workload: give --workload NAME and no command");
		const perturb_workload *w = perturb_workload_find(po.workload);
		uint64_t sum = w->run(po.workload_size ? po.workload_size : w->default_size, po.workload_parameter, NULL, NULL);
		printf("%s: checksum %llu\n", w->name, (unsigned long long)sum);
		return 0;
	}

	if (so.trace_path) {
		if (!buffers)
			return cli_usage_error("perturb", "--simulate needs --buffers LIST");
		if (optind < argc || po.workload || design_name || intervals || halts)
			return cli_usage_error("perturb", "--simulate takes a trace, not a program or a design");
		if (parse_buffers(buffers, &so, &status) != 0)
			return cli_usage_error("perturb", "--buffers: %s", status.message);
		output_report *report = output_report_new("perturb");
		if (perturb_simulate(&so, report, &status) != 0) {
			output_report_free(report);
			return cli_error("perturb", &status);
		}
		int rc = cli_output_emit(&out, report);
		output_report_free(report);
		return rc;
	}
	if (buffers)
		return cli_usage_error("perturb", "--buffers goes with --simulate TRACE");

	perturb_design design;
	if (design_name) {
		if (intervals || halts)
			return cli_usage_error("perturb", "--design or --intervals/--halts, not both");
		if (perturb_design_builtin(design_name, isnan(scale) ? 0.001 : scale, &design, &status) != 0)
			return cli_usage_error("perturb", "--design: %s", status.message);
	} else {
		if (!intervals || !halts)
			return cli_usage_error("perturb", "give --design NAME, or both --intervals LIST and --halts LIST");
		if (perturb_design_from_lists(intervals, halts, isnan(scale) ? 1 : scale, &design, &status) != 0)
			return cli_usage_error("perturb", "%s", status.message);
	}
	if (event_list) {
		const char *names[COUNTER_MAX_EVENTS];
		size_t n;
		if (counter_event_list_parse(event_list, storage, sizeof storage, names, &n, &status) != 0)
			return cli_usage_error("perturb", "--events: %s", status.message);
		if (n > PERTURB_MAX_EVENTS)
			return cli_usage_error("perturb", "--events: at most %d events", PERTURB_MAX_EVENTS);
		for (size_t i = 0; i < n; i++)
			if (counter_event_check_known(names[i], &status) != 0)
				return cli_usage_error("perturb", "--events: %s", status.message);
		po.n_events = n;
		for (size_t i = 0; i < n; i++)
			po.events[i] = names[i];
	}
	if (po.workload && optind < argc)
		return cli_usage_error("perturb", "--workload or a command, not both");
	if (!po.workload) {
		if (optind >= argc)
			return cli_usage_error("perturb", "no program: give --workload NAME or -- COMMAND");
		po.command = argv + optind;
	}
	if (reference_rate > 0 && rate_trace)
		return cli_usage_error("perturb", "--reference-rate or --rate-trace, not both");
	/* The trace's CPU references, and its bus transactions (line fills from
	 * memory and write-backs) simulated on the same caches --simulate uses. */
	perturb_traffic traffic;
	memset(&traffic, 0, sizeof traffic);
	if (rate_trace && perturb_trace_traffic(rate_trace, so.preset, &traffic, &status) != 0)
		return cli_error("perturb", &status);
	po.progress = true;

	perturb_result *result;
	if (perturb_experiment_run(&po, &design, &result, &status) != 0)
		return cli_error("perturb", &status);
	perturb_analysis *analysis = malloc(sizeof *analysis);
	if (!analysis) {
		perturb_result_free(result);
		fprintf(stderr, "plumb perturb: out of memory\n");
		return 1;
	}
	perturb_analyze(result, reference_rate, analysis);
	if (rate_trace && analysis->x_clock > 0)   /* the running time of the baseline is known only now */
		perturb_analysis_rates(analysis, (double)traffic.references / analysis->x_clock,
		                       perturb_bus_rate(traffic.fills, traffic.writebacks, analysis->x_clock));
	output_report *report = output_report_new("perturb");
	int rc = perturb_report_build(result, analysis, report, &status);
	if (rc == 0 && rate_trace) {
		output_meta_text(report, "reference_rate_from", rate_trace);
		output_meta_integer(report, "trace_references", (int64_t)traffic.references);
		output_meta_integer(report, "trace_line_fills", (int64_t)traffic.fills);
		output_meta_integer(report, "trace_writebacks", (int64_t)traffic.writebacks);
		output_meta_text(report, "bus_transactions_simulated_on", traffic.caches);
	}
	rc = rc == 0 ? cli_output_emit(&out, report) : cli_error("perturb", &status);
	output_report_free(report);
	free(analysis);
	perturb_result_free(result);
	return rc;
}
