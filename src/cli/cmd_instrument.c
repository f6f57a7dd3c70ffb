/* plumb instrument: exact instruction, load and store counts of a command,
 * per thread and per marked region, from plumbgrind (plumb's Valgrind tool).
 * The fourth source beside prediction, measurement and simulation: what the
 * program executed, counted one by one. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/command.h"
#include "instrument/instrument.h"

const char cmd_instrument_summary[] = "exact instruction, load and store counts per thread and region";

static void usage(FILE *f)
{
	fprintf(f, "usage: plumb instrument [options] [--] COMMAND [ARGS]\n"
	           "       plumb instrument [options] --summary FILE\n\n"
	           "Runs COMMAND under plumbgrind, plumb's Valgrind tool, and prints the exact\n"
	           "number of instructions, loads, stores, modifies (read-modify-write accesses)\n"
	           "and bytes read and written, per thread and per region marked with\n"
	           "PLUMB_VG_REGION_BEGIN/END (<plumb/valgrind.h>) or plumb_region_begin/end\n"
	           "(<plumb/region.h>).  The counts equal the lines of a lackey --trace-mem=yes\n"
	           "trace of the same run.  COMMAND's standard\n"
	           "output goes to standard error while the report is written to standard output.\n\n"
	           "      --trace FILE     also write every reference to FILE: plumb's native format\n"
	           "                       when FILE ends in .ptrace (written by plumb from binary\n"
	           "                       records, several times faster), else lackey's text format\n"
	           "                       (plumb sim and plumb trace read both)\n"
	           "      --no-collect     start with collection off: only what runs between\n"
	           "                       PLUMB_VG_START and PLUMB_VG_STOP is traced and\n"
	           "                       'collected'\n"
	           "      --summary FILE   read a summary plumbgrind wrote (valgrind\n"
	           "                       --tool=plumbgrind --plumb-out=FILE) instead of\n"
	           "                       running a command\n"
	           "      --valgrind PROG  the valgrind program (default: valgrind on PATH)\n"
	           "      --csv            CSV output\n"
	           "      --json           JSON output (schema: docs/output-schema.md)\n"
	           "  -o, --output FILE    write to FILE (atomically) instead of stdout\n"
	           "  -h, --help           this help\n\n"
	           "The tool is found in PLUMB_VALGRIND_LIB, the build tree (build/vg/lib),\n"
	           "PREFIX/lib/plumb/valgrind or VALGRIND_LIB.  See plumb-instrument(1) and\n"
	           "docs/valgrind-tool.md.\n");
}

int cmd_instrument(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "trace", required_argument, 0, 0x2001 },
		{ "no-collect", no_argument, 0, 0x2002 },
		{ "summary", required_argument, 0, 0x2003 },
		{ "valgrind", required_argument, 0, 0x2004 },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	instrument_options run_options;
	instrument_options_init(&run_options);
	const char *summary_path = NULL;
	int c;
	optind = 1;
	opterr = 0;
	/* '+': stop at the command, so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+:ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 0x2001: run_options.trace_path = optarg; break;
		case 0x2002: run_options.collect_at_start = 0; break;
		case 0x2003: summary_path = optarg; break;
		case 0x2004: run_options.valgrind = optarg; break;
		default:
			if (!cli_output_option("instrument", &out, c, optarg))
				return cli_bad_option("instrument", c, argv);
		}
	}
	if (run_options.trace_path && !run_options.trace_path[0])
		return cli_usage_error("instrument", "--trace needs a file name");
	instrument_summary summary;
	plumb_status status;
	int ran = 0;
	if (summary_path) {
		if (optind < argc)
			return cli_usage_error("instrument", "--summary takes no command ('%s')", argv[optind]);
		if (run_options.trace_path || !run_options.collect_at_start)
			return cli_usage_error("instrument", "--trace and --no-collect apply to a run, not to --summary");
		if (instrument_summary_read(&summary, summary_path, &status) != 0)
			return cli_error("instrument", &status);
	} else {
		if (optind >= argc)
			return cli_usage_error("instrument", "no command to run (plumb instrument -- ./program args)");
		if (!out.path || !strcmp(out.path, "-"))
			run_options.program_stdout = STDERR_FILENO;
		if (instrument_run(argv + optind, &run_options, &summary, &status) != 0)
			return cli_error("instrument", &status);
		ran = 1;
	}
	output_report *report = instrument_report(&summary, summary_path, ran);
	int rc = cli_output_emit(&out, report);
	output_report_free(report);
	/* The counts up to the end are in the report, but a command that failed
	 * or was killed fails the run, as under plumb stat and plumb sim. */
	if (rc == 0 && ran && summary.exit_signal) {
		plumb_fail(&status, ECHILD, "the command '%s' was killed by signal %d (%s)", argv[optind],
		           summary.exit_signal, strsignal(summary.exit_signal));
		rc = cli_error("instrument", &status);
	} else if (rc == 0 && ran && (summary.exit_code == 126 || summary.exit_code == 127)) {
		plumb_fail(&status, ECHILD, "the command '%s' did not start (exit status %d: a missing shared library, "
		           "file or interpreter?)", argv[optind], summary.exit_code);
		rc = cli_error("instrument", &status);
	} else if (rc == 0 && ran && summary.exit_code != 0) {
		plumb_fail(&status, ECHILD, "the command '%s' exited with status %d", argv[optind], summary.exit_code);
		rc = cli_error("instrument", &status);
	}
	instrument_summary_free(&summary);
	return rc;
}
