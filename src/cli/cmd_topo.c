/* plumb topo: what the machine is, as plumb sees it. */
#include <getopt.h>
#include <stdio.h>
#include "cli/command.h"
#include "core/cpu.h"
#include "core/parse.h"
#include "core/timer.h"
#include "machine/topology.h"

const char cmd_topo_summary[] = "show CPUs, caches, pages, timer and counter availability";

static void usage(FILE *f)
{
	fprintf(f, "usage: plumb topo [options] [--csv | --json] [-o FILE]\n\n"
	           "Shows CPUs, cores, sockets and NUMA nodes; each cache level's size, line,\n"
	           "associativity and sharing; page sizes and THP mode; the calibrated timer;\n"
	           "perf_event_paranoid; and whether hardware counters really open.\n\n"
	           "  --csv          CSV output\n"
	           "  --json         JSON output (schema: docs/output-schema.md)\n"
	           "  -o, --output   write to FILE (atomically) instead of stdout\n"
	           "  -h, --help     this help\n");
}

int cmd_topo(int argc, char **argv)
{
	static const struct option options[] = { CLI_OUTPUT_OPTIONS, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (!cli_output_option("topo", &out, c, optarg))
			return cli_bad_option("topo", c, argv);
	}
	if (optind < argc)
		return cli_usage_error("topo", "unexpected argument '%s'", argv[optind]);

	plumb_status status;
	topology t;
	if (topology_read(&t, &status) != 0)
		return cli_error("topo", &status);
	timer_calibration cal;
	if (timer_calibrate(&cal, 50, &status) != 0)
		return cli_error("topo", &status);
	cpu_features f;
	cpu_features_detect(&f);

	output_report *r = topology_report(&t, &cal, &f);
	int rc = cli_output_emit(&out, r);
	output_report_free(r);
	return rc;
}
