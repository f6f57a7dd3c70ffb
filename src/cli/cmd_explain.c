/* plumb explain: the four sources (measured, instrumented, simulated,
 * predicted) for the regions a user's program marks, side by side. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/command.h"
#include "counters/counters.h"
#include "explain/explain.h"
#include "machine/machine_model.h"
#include "sim/sim_curve.h"
#include "core/parse.h"
#include "sim/sim.h"

const char cmd_explain_summary[] = "measured, exact, simulated and predicted figures for your program";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb explain [options] -- PROGRAM [ARGS]\n\n"
	        "For each region PROGRAM marks with plumb_region_begin/end (<plumb/region.h>,\n"
	        "link with -lplumb) and for the whole program, puts four sources side by side:\n"
	        "  measured      wall time over R runs (mean, 95%% confidence interval) and\n"
	        "                every counter that works here (perf_event or PAPI)\n"
	        "  instrumented  exact instructions, loads and stores (plumbgrind, Valgrind)\n"
	        "  simulated     misses per cache level and coherence events on this\n"
	        "                machine's caches\n"
	        "  predicted     a time from the simulated misses and this machine's latencies,\n"
	        "                bandwidths and memory-level parallelism (docs/explain.md)\n"
	        "and says where prediction and measurement disagree most.\n\n"
	        "  -r, --runs N          measured runs (1-100, default 5)\n"
	        "  -e, --events LIST     counters to read per region (default: software events,\n"
	        "                        the generic hardware events and the cache and TLB PAPI\n"
	        "                        presets)\n"
	        "      --backend B       perf (default), papi or none\n"
	        "      --machine FILE    take the latencies, bandwidths and MLP from a saved\n"
	        "                        report (plumb report's report.json, plumb explain\n"
	        "                        --json, or plumb lat --mlp --json, whose missing read\n"
	        "                        bandwidths are measured now, 1-3 s) instead of\n"
	        "                        measuring them now (10-20 s on a quiet machine)\n"
	        "      --compare-machine FILE\n"
	        "                        measuring now: say where a latency, a read bandwidth, a\n"
	        "                        usable size or the clock differs from the machine model\n"
	        "                        in FILE (plumb report's report.json) beyond both spreads\n"
	        "      --ipc X           instructions per cycle outside misses (default: each\n"
	        "                        executed block priced by llvm-mca for this CPU; 1\n"
	        "                        without llvm-mca)\n"
	        "      --preset NAME     the simulator's caches (default host: this machine's,\n"
	        "                        from sysfs)\n"
	        "      --interleave K    simulate the threads in lockstep, K references of each\n"
	        "                        in turn (default 1: as threads that run at once, so true\n"
	        "                        and false sharing show), or none: Valgrind's order\n"
	        "                        (turns of a scheduling quantum)\n"
	        "      --fair-sched      Valgrind's --fair-sched=yes (threads take turns fairly)\n"
	        "      --on FILE         also the program on another machine: FILE is the\n"
	        "                        report.json plumb report wrote there; its caches\n"
	        "                        simulated and each region's time predicted with its\n"
	        "                        figures, beside this machine's (--machine stays this\n"
	        "                        machine's figures)\n"
	        "      --curve LEVEL     also the miss-ratio curve of l1d, l1i, l2 or l3 per\n"
	        "                        region (as plumb sim --curve) and each region's knee:\n"
	        "                        the smallest capacity that removes most of its misses\n"
	        "      --no-simulate     no simulation (and so no prediction)\n"
	        "      --no-valgrind     neither plumbgrind nor the simulation: measured only\n"
	        "      --valgrind PROG   the valgrind program (default: valgrind on PATH)\n"
	        "      --html FILE       also write the tables as an HTML page\n"
	        "      --csv             CSV output\n"
	        "      --json            JSON output (schema: docs/output-schema.md)\n"
	        "  -o, --output FILE     write to FILE (atomically) instead of stdout\n"
	        "  -h, --help            this help\n\n"
	        "PROGRAM's standard output goes to standard error while the report goes to\n"
	        "standard output.  See plumb-explain(1) and docs/explain.md.\n");
}

enum { OPT_BACKEND = 0x2001, OPT_MACHINE, OPT_IPC, OPT_PRESET, OPT_NO_SIMULATE, OPT_NO_VALGRIND, OPT_VALGRIND,
       OPT_HTML, OPT_INTERLEAVE, OPT_FAIR_SCHED, OPT_CURVE, OPT_ON, OPT_COMPARE_MACHINE };

int cmd_explain(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "runs", required_argument, 0, 'r' }, { "events", required_argument, 0, 'e' },
		{ "backend", required_argument, 0, OPT_BACKEND }, { "machine", required_argument, 0, OPT_MACHINE },
		{ "ipc", required_argument, 0, OPT_IPC }, { "preset", required_argument, 0, OPT_PRESET },
		{ "no-simulate", no_argument, 0, OPT_NO_SIMULATE }, { "no-valgrind", no_argument, 0, OPT_NO_VALGRIND },
		{ "valgrind", required_argument, 0, OPT_VALGRIND }, { "html", required_argument, 0, OPT_HTML },
		{ "interleave", required_argument, 0, OPT_INTERLEAVE }, { "fair-sched", no_argument, 0, OPT_FAIR_SCHED },
		{ "curve", required_argument, 0, OPT_CURVE }, { "on", required_argument, 0, OPT_ON },
		{ "compare-machine", required_argument, 0, OPT_COMPARE_MACHINE },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	explain_options run;
	explain_options_init(&run);
	const char *html = NULL;
	plumb_status status;
	uint64_t number;
	int c;
	optind = 1;
	opterr = 0;
	/* '+': stop at the program, so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+:hr:e:o:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'r':
			if (parse_u64(optarg, 1, EXPLAIN_RUNS_MAX, &number, &status) != 0)
				return cli_usage_error("explain", "--runs: %s", status.message);
			run.runs = (unsigned)number;
			break;
		case 'e': run.events = optarg; break;
		case OPT_BACKEND: run.backend = optarg; break;
		case OPT_MACHINE: run.machine_file = optarg; break;
		case OPT_COMPARE_MACHINE: run.compare_file = optarg; break;
		case OPT_IPC:
			if (parse_double(optarg, 0.01, 16, &run.ipc_base, &status) != 0)
				return cli_usage_error("explain", "--ipc: %s", status.message);
			break;
		case OPT_PRESET: {
			/* checked now: an unknown preset is one usage error (as under
			 * plumb sim and validate --sim-preset), not a note in the report */
			sim_config check;
			if (sim_preset(&check, optarg, &status) != 0 && status.code == EINVAL)
				return cli_usage_error("explain", "--preset: %s", status.message);
			run.preset = optarg;
			break;
		}
		case OPT_NO_SIMULATE: run.simulate = false; break;
		case OPT_NO_VALGRIND: run.instrument = false; break;
		case OPT_VALGRIND: run.valgrind = optarg; break;
		case OPT_HTML: html = optarg; break;
		case OPT_INTERLEAVE:
			if (strcmp(optarg, "none") == 0)
				run.interleave = 0;
			else if (parse_u64(optarg, 1, UINT64_MAX, &run.interleave, &status) != 0)
				return cli_usage_error("explain", "--interleave: %s (want a number of references, or none)",
				                       status.message);
			break;
		case OPT_FAIR_SCHED: run.fair_sched = true; break;
		case OPT_ON: run.other_file = optarg; break;
		case OPT_CURVE: {
			sim_level level;
			if (sim_curve_level_parse(optarg, &level, &status) != 0)
				return cli_usage_error("explain", "--curve: %s", status.message);
			run.curve_level = optarg;
			break;
		}
		default:
			if (!cli_output_option("explain", &out, c, optarg))
				return cli_bad_option("explain", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("explain", "no program to run (plumb explain -- ./program args)");
	if (run.backend && strcmp(run.backend, "perf") && strcmp(run.backend, "papi") && strcmp(run.backend, "none"))
		return cli_usage_error("explain", "--backend: '%s' is not perf, papi or none", run.backend);
	if (run.events) {
		/* an event no backend knows is a usage error; a known one that cannot
		 * be counted here stays unsupported in the report, with its reason */
		char storage[4096];
		const char *names[COUNTER_MAX_EVENTS];
		size_t n;
		if (strlen(run.events) >= sizeof storage)
			return cli_usage_error("explain", "-e: the event list is too long");
		if (counter_event_list_parse(run.events, storage, sizeof storage, names, &n, &status) != 0)
			return cli_usage_error("explain", "-e: %s", status.message);
		for (size_t i = 0; i < n; i++)
			if (counter_event_check_known(names[i], &status) != 0)
				return cli_usage_error("explain", "-e: %s", status.message);
	}
	if (html && !html[0])
		return cli_usage_error("explain", "--html needs a file name");
	if (run.compare_file && run.machine_file)
		return cli_usage_error("explain", "--compare-machine holds a fresh measurement against a saved model; "
		                                  "with --machine nothing is measured");
	if (run.compare_file && !run.instrument)
		return cli_usage_error("explain", "--compare-machine: with --no-valgrind the machine is not measured");
	if (run.compare_file) {
		/* a file that holds no model is one error now, not a note after the sweep */
		machine_model saved;
		if (machine_model_load(run.compare_file, &saved, &status) != 0) {
			fprintf(stderr, "plumb explain: --compare-machine: %s\n", status.message);
			return 1;
		}
	}
	if (!out.path || !strcmp(out.path, "-"))
		run.program_stdout = STDERR_FILENO;
	explain_result result;
	if (explain_run(argv + optind, &run, &result, &status) != 0)
		return cli_error("explain", &status);
	output_report *report = explain_report(&result);
	int exit_signal = result.exit_signal;
	explain_result_free(&result);
	if (!report) {
		fprintf(stderr, "plumb explain: out of memory\n");
		return 1;
	}
	int rc = cli_output_emit(&out, report);
	if (rc == 0 && html && explain_write_html(report, html, &status) != 0)
		rc = cli_error("explain", &status);
	output_report_free(report);
	/* A program that crashed fails the run, as under plumb stat, sim and
	 * instrument: its figures stay in the report, but are not the whole answer. */
	if (rc == 0 && exit_signal) {
		fprintf(stderr, "plumb explain: the program '%s' was killed by signal %d (%s)\n", argv[optind],
		        exit_signal, strsignal(exit_signal));
		rc = 1;
	}
	return rc;
}
