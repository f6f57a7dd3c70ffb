/* plumb geometry: line size, capacities, associativity, TLB entries and
 * page size inferred from timing alone, beside what sysfs/CPUID claim. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "core/cpu.h"
#include "geometry/geometry.h"
#include "core/parse.h"
#include "core/progress.h"
#include "report/report.h"

const char cmd_geometry_summary[] = "line size, capacities, ways, TLB entries and page size from timing";

static void usage(FILE *stream)
{
	fprintf(stream,
	        "usage: plumb geometry [options]\n\n"
	        "Infers the cache and TLB geometry from timing alone (dependent-load chains:\n"
	        "a working-set sweep, a same-line pair test, set-conflict tests, a page sweep\n"
	        "and a stride sweep) and prints each finding beside what sysfs, CPUID and\n"
	        "sysconf claim, flagging disagreements.\n\n"
	        "Options:\n"
	        "The capacities and level latencies are plumb lat's: the same sweep, repeats and\n"
	        "detector (see plumb-lat(1)), so both commands give one figure for each.\n\n"
	        "      --levels-from FILE  take capacities and level latencies from a saved\n"
	        "                       'plumb lat --json' report (- reads stdin) instead of\n"
	        "                       measuring them again\n"
	        "      --max-size SIZE  end of the working-set sweep (default: 4x the LLC)\n"
	        "      --points-per-octave N  sweep density (default 4)\n"
	        "      --repeats N      passes over the points near each boundary after the\n"
	        "                       first (0-8, default 4), as plumb lat\n"
	        "  -C, --cpu N          CPU to pin to (default: the first allowed)\n"
	        "      --time-cap MS    time limit per curve point (default 60; 2.5x for the\n"
	        "                       working-set sweep)\n"
	        "      --target-ci PCT  repeat a point until the 95%% CI is within +-PCT%%\n"
	        "                       (default 2)\n"
	        "      --seed N         seed of the random chains (default fixed)\n"
	        "      --curves         also output every measured curve\n"
	        "      --csv, --json    output format (default: aligned table)\n"
	        "  -o, --output FILE    write the report to FILE\n"
	        "  -h, --help           this help\n");
}

static void show_progress(void *context, size_t done, size_t total)
{
	progress_step_of(context, done, total);
}

int cmd_geometry(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "max-size", required_argument, 0, 0x2001 },
		{ "points-per-octave", required_argument, 0, 0x2002 },
		{ "points", required_argument, 0, 0x2002 }, /* the old name (man plumb-geometry) */
		{ "cpu", required_argument, 0, 0x2003 },
		{ "time-cap", required_argument, 0, 0x2004 },
		{ "target-ci", required_argument, 0, 0x2005 },
		{ "seed", required_argument, 0, 0x2006 },
		{ "curves", no_argument, 0, 0x2007 },
		{ "levels-from", required_argument, 0, 0x2008 },
		{ "repeats", required_argument, 0, 0x2009 },
		{ "help", no_argument, 0, 'h' },
		CLI_OUTPUT_OPTIONS,
		{ 0, 0, 0, 0 }
	};
	cli_output output = { .format = OUTPUT_TABLE };
	plumb_status status;
	uint64_t max_size = 0, seed = 0;
	long points = 4, cpu = -1, time_cap_ms = 60, repeats = -1;
	const char *levels_from = NULL;
	double target_ci = 2;
	bool curves = false, have_seed = false;
	int option;
	optind = 1;
	opterr = 0;
	while ((option = getopt_long(argc, argv, ":C:o:h", long_options, NULL)) != -1) {
		if (cli_output_option("geometry", &output, option, optarg))
			continue;
		switch (option) {
		case 0x2001:
			if (parse_size(optarg, &max_size, &status) != 0)
				return cli_usage_error("geometry", "--max-size: %s", status.message);
			if (max_size < (1u << 20) || max_size > (64ull << 30))
				return cli_usage_error("geometry", "--max-size must be between 1MiB and 64GiB");
			break;
		case 0x2002:
			if (parse_int(optarg, 1, 16, &points, &status) != 0)
				return cli_usage_error("geometry", "--points-per-octave: %s", status.message);
			break;
		case 0x2003: case 'C':
			if (parse_int(optarg, 0, 1 << 20, &cpu, &status) != 0)
				return cli_usage_error("geometry", "--cpu: %s", status.message);
			break;
		case 0x2004:
			if (parse_int(optarg, 1, 600000, &time_cap_ms, &status) != 0)
				return cli_usage_error("geometry", "--time-cap: %s", status.message);
			break;
		case 0x2005:
			if (parse_double(optarg, 0.01, 100, &target_ci, &status) != 0)
				return cli_usage_error("geometry", "--target-ci: %s", status.message);
			break;
		case 0x2006:
			if (parse_u64(optarg, 0, UINT64_MAX, &seed, &status) != 0)
				return cli_usage_error("geometry", "--seed: %s", status.message);
			have_seed = true;
			break;
		case 0x2007: curves = true; break;
		case 0x2008: levels_from = optarg; break;
		case 0x2009:
			if (parse_int(optarg, 0, 8, &repeats, &status) != 0)
				return cli_usage_error("geometry", "--repeats: %s", status.message);
			break;
		case 'h': usage(stdout); return 0;
		default: return cli_bad_option("geometry", option, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("geometry", "unexpected argument '%s'", argv[optind]);

	int allowed[1024];
	int allowed_count = cpu_allowed(allowed, 1024, &status);
	if (allowed_count < 1)
		return cli_error("geometry", &status);
	if (cpu < 0)
		cpu = allowed[0];
	int chosen = (int)cpu;
	if (cpu_check_allowed(&chosen, 1, &status) != 0)
		return cli_usage_error("geometry", "--cpu: %s", status.message);
	/* Pinned for the whole run: a migration would empty the caches and
	 * TLBs under a measurement. */
	if (cpu_pin_self((int)cpu, &status) != 0)
		return cli_error("geometry", &status);

	topology topo;
	bool have_topology = topology_read(&topo, &status) == 0;
	timer_calibration timer;
	if (timer_calibrate(&timer, 50, &status) != 0)
		timer_calibration_clock(&timer);

	geometry_run_request request = { .topo = have_topology ? &topo : NULL };
	geometry_options_defaults(&request.options, &timer);
	request.options.point_cap_ns = (uint64_t)time_cap_ms * 1000000u;
	request.options.target_relative_ci = target_ci / 100;
	if (have_seed)
		request.options.seed = seed;
	/* The capacity sweep is plumb lat's, with its defaults: its points
	 * need more samples (their 10th percentile is what the levels are
	 * found on), 2.5x the time cap of the other curves. */
	latency_run_options *lat = &request.latency_options;
	latency_run_defaults(lat);
	lat->max_bytes = max_size;
	lat->points_per_octave = (unsigned)points;
	lat->cpu = (int)cpu;
	lat->measure.time_cap_ns = (uint64_t)time_cap_ms * 2500000u;
	lat->measure.target_relative_ci = target_ci / 100;
	if (have_seed)
		lat->seed = seed;
	if (repeats >= 0)
		lat->repeats = (unsigned)repeats;
	latency_run_result saved;
	memset(&saved, 0, sizeof saved);
	if (levels_from) {
		output_report *input;
		if (report_read_file(levels_from, &input, &status) != 0)
			return cli_error("geometry", &status);
		int loaded = latency_run_from_report(input, lat, &saved, &status);
		output_report_free(input);
		if (loaded != 0) {
			latency_run_free(&saved);
			fprintf(stderr, "plumb geometry: %s: %s\n", levels_from, status.message);
			return 1;
		}
		request.levels_from = &saved;
	}
	progress bar;
	request.progress = show_progress;
	request.progress_context = &bar;
	geometry_report *g = calloc(1, sizeof *g);
	if (!g)
		return cli_usage_error("geometry", "out of memory");
	uint64_t started = timer_monotonic_ns();
	progress_begin(&bar, "plumb geometry", 9);
	int rc = geometry_run(&request, g, &status);
	progress_end(&bar);
	latency_run_free(&saved);
	if (rc != 0) {
		free(g);
		return cli_error("geometry", &status);
	}

	output_report *report = output_report_new("geometry");
	output_meta_text(report, "cpu", have_topology ? topo.cpu_model : "unknown");
	output_meta_integer(report, "pinned_cpu", cpu);
	output_meta_text(report, "timer", timer.source == TIMER_TSC ? "tsc" : "clock_gettime");
	output_meta_real(report, "timer_ticks_per_ns", timer.ticks_per_ns);
	output_meta_text(report, "tlb_reference", g->tlb_reference.source);
	output_meta_real(report, "target_ci_relative", request.options.target_relative_ci);
	output_meta_text(report, "levels_from", levels_from ? "a saved plumb lat report" : "plumb lat's sweep, run now");
	output_meta_integer(report, "points_per_octave", g->points_per_octave);
	output_meta_real(report, "wall_seconds", (double)(timer_monotonic_ns() - started) / 1e9);
	if (!have_topology)
		output_note(report, "no topology (%s): nothing to compare with", status.message);
	geometry_report_tables(report, g, curves, have_topology && topo.hypervisor);
	rc = cli_output_emit(&output, report);
	output_report_free(report);
	geometry_report_free(g);
	free(g);
	return rc;
}
