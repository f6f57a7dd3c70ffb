/* plumb events: which events each backend knows, and which of them really
 * count on this machine (src/counters/events_report.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "counters/counters.h"

const char cmd_events_summary[] = "list the events each counter backend knows, and which work here";

static void usage(FILE *f)
{
	fprintf(f, "usage: plumb events [options] [--backend perf|papi] [--natives] [--no-probe]\n"
	           "                    [--catalogue] [--verification FILE] [--csv | --json]\n"
	           "                    [-o FILE]\n\n"
	           "Lists the events of each backend and opens each one to see whether it counts\n"
	           "here: 'works', or 'unsupported' with the reason (errno, perf_event_paranoid,\n"
	           "missing PMU, PAPI error).  Then the catalogue: each PAPI preset studied by\n"
	           "Salayandia (2002) and Aguilera et al. (2005),\n"
	           "its perf event and its candidate native events per CPU, with their verification\n"
	           "state on this CPU: 'verified on this CPU (date, class)', 'checked: CLASS, not\n"
	           "trusted', or 'unverified' until plumb validate checked them here.  Software\n"
	           "events (minor-faults, ...) follow the presets.\n\n"
	           "      --backend B          only this backend (perf or papi)\n"
	           "      --natives            also the PMU's native events, through libpfm4 (perf)\n"
	           "      --no-probe           list without opening\n"
	           "      --catalogue          only the catalogue table\n"
	           "      --verification FILE  verification records (default: $PLUMB_VERIFICATION,\n"
	           "                           else none: every mapping shows as unverified)\n"
	           "      --csv                CSV output\n"
	           "      --json               JSON output (schema: docs/output-schema.md)\n"
	           "  -o, --output FILE        write to FILE (atomically) instead of stdout\n"
	           "  -h, --help               this help\n");
}

int cmd_events(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "backend", required_argument, 0, 0x2001 },
		{ "natives", no_argument, 0, 0x2002 },
		{ "no-probe", no_argument, 0, 0x2003 },
		{ "catalogue", no_argument, 0, 0x2004 },
		{ "verification", required_argument, 0, 0x2005 },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	const char *only = NULL, *verification = NULL;
	bool natives = false, probe = true, catalogue_only = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 0x2001: only = optarg; break;
		case 0x2002: natives = true; break;
		case 0x2003: probe = false; break;
		case 0x2004: catalogue_only = true; break;
		case 0x2005: verification = optarg; break;
		default:
			if (!cli_output_option("events", &out, c, optarg))
				return cli_bad_option("events", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("events", "unexpected argument '%s'", argv[optind]);
	if (only && strcmp(only, "perf") && strcmp(only, "papi"))
		return cli_usage_error("events", "unknown backend '%s' (perf or papi)", only);

	counter_events_request request = {
		.backend = only, .natives = natives, .probe = probe, .catalogue_only = catalogue_only,
		.verification_path = verification,
	};
	/* A damaged verification file must not hide the catalogue: one warning,
	 * and every mapping shows as unverified. */
	char warning[COUNTER_REASON_MAX + 64];
	output_report *report = counter_events_report(&request, warning, sizeof warning);
	if (warning[0])
		fprintf(stderr, "plumb events: warning: %s\n", warning);
	int rc = cli_output_emit(&out, report);
	output_report_free(report);
	return rc;
}
