/* plumb sim --sweep CONFIGS --traces LIST -o DIR: the sweep's own options,
 * serially or (under mpirun or srun, in a plumb built with MPI) spread over
 * the ranks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "cli/sim_sweep.h"
#include "plumb/sim_sweep.h"
#ifdef PLUMB_HAVE_MPI
#include "cluster/cluster_mpi.h"
#endif

bool cli_sim_is_sweep(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--sweep") || !strncmp(argv[i], "--sweep=", 8))
			return true;
	return false;
}

/* Parses the options into *sweep and *dir: -1 when they are good, else the
 * exit code (0 after --help).  quiet: a rank other than 0 says nothing. */
static int parse(int argc, char **argv, bool quiet, sim_sweep *sweep, const char **dir)
{
	enum { OPT_SWEEP = 0x3001, OPT_TRACES };
	static const struct option options[] = { { "sweep", required_argument, 0, OPT_SWEEP }, { "traces", required_argument, 0, OPT_TRACES },
		                                     { "output", required_argument, 0, 'o' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	const char *configs = NULL, *traces = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: plumb sim --sweep CONFIGS --traces LIST -o DIR\n"
			       "       mpirun -n N plumb sim --sweep CONFIGS --traces LIST -o DIR\n\n"
			       "Runs every trace through every configuration (each a preset or a configuration\n"
			       "file; comma-separated) and writes one table, DIR/sweep.json and DIR/sweep.csv.\n"
			       "Under mpirun or srun the jobs are spread over the ranks; the table is the\n"
			       "serial one, byte for byte (docs/cluster.md).\n");
			return 0;
		case OPT_SWEEP: configs = optarg; break;
		case OPT_TRACES: traces = optarg; break;
		case 'o': *dir = optarg; break;
		default:
			if (quiet)
				return 2;
			if (c == '?' && optind > 0 && strncmp(argv[optind - 1], "--sweep", 7) && strncmp(argv[optind - 1], "--traces", 8))
				return cli_usage_error("sim", "--sweep takes only --traces and -o DIR (no '%s'): put settings in a configuration file",
				                       argv[optind - 1]);
			return cli_bad_option("sim", c, argv);
		}
	}
	if (optind < argc)
		return quiet ? 2 : cli_usage_error("sim", "unexpected argument '%s' with --sweep (traces go in --traces)", argv[optind]);
	if (!traces)
		return quiet ? 2 : cli_usage_error("sim", "--sweep needs --traces LIST");
	if (!*dir)
		return quiet ? 2 : cli_usage_error("sim", "--sweep needs the output folder: -o DIR");
	plumb_status status;
	if (sim_sweep_parse(sweep, configs, traces, &status) != 0)
		return quiet ? 2 : cli_usage_error("sim", "%s", status.message);
	return -1;
}

int cli_sim_sweep(int argc, char **argv)
{
	sim_sweep sweep;
	const char *dir = NULL;
#ifdef PLUMB_HAVE_MPI
	if (cluster_launched()) {
		/* Every rank parses the same arguments; only rank 0 says what is
		 * wrong, and then the ranks leave together. */
		int rc = parse(argc, argv, cluster_launcher_rank() != 0, &sweep, &dir);
		if (rc >= 0)
			return rc > 0 ? cluster_mpi_exit_together(rc) : rc;
		rc = sim_sweep_mpi_main(&sweep, dir);
		sim_sweep_free(&sweep);
		return rc;
	}
#endif
	int rc = parse(argc, argv, false, &sweep, &dir);
	if (rc >= 0)
		return rc;
	rc = 0;
	plumb_status status;
	output_report *report = sim_sweep_run_all(&sweep);
	if (!report)
		rc = cli_usage_error("sim", "out of memory");
	else if (sim_sweep_write(report, dir, &status) != 0)
		rc = cli_error("sim", &status);
	else
		printf("sweep: %zu jobs (%zu traces x %zu configurations)\nsweep: %s/sweep.json\nsweep: %s/sweep.csv\n", sim_sweep_job_count(&sweep),
		       sweep.trace_count, sweep.config_count, dir, dir);
	output_report_free(report);
	sim_sweep_free(&sweep);
	return rc;
}
