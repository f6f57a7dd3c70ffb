/* plumb cluster: the characterisation on every node of a cluster, under
 * mpirun or srun (the MPI driver is src/cluster/cluster_mpi.c). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/command.h"
#include "cluster/cluster.h"
#include "core/parse.h"
#include "report/report.h"
#ifdef PLUMB_HAVE_MPI
#include "cluster/cluster_mpi.h"
#endif

const char cmd_cluster_summary[] = "the characterisation on every node under MPI, nodes compared";

static void usage(FILE *f)
{
	/* the default lists are the section table's (src/report/section_table.c) */
	char sections[256], quick_sections[256];
	report_section_list(REPORT_SECTION_CLUSTER_DEFAULT, ",", sections, sizeof sections);
	report_section_list(REPORT_SECTION_CLUSTER_QUICK, ",", quick_sections, sizeof quick_sections);
	fprintf(f, "usage: mpirun -n N plumb cluster [options] [--quick] [--sections LIST]\n"
	           "                         [--share turns|split] -o DIR\n"
	           "       srun plumb cluster [options] [--quick] [--sections LIST] -o DIR\n\n"
	           "Every MPI rank runs the report's sections (as plumb report runs them) on its\n"
	           "node's CPUs; rank 0 gathers the results and writes DIR/cluster.json and\n"
	           "DIR/cluster.html: every node's headline figures side by side, the node-to-node\n"
	           "spread of each figure, the outliers by robust z-score (median and MAD), and the\n"
	           "configuration that differs between nodes (CPU model, caches, THP, kernel,\n"
	           "counter availability). Run one rank per node (docs/cluster.md).\n\n"
	           "  -o, --output DIR     folder for cluster.json and cluster.html (required)\n"
	           "  --sections LIST      comma-separated sections, of geometry, model and the\n"
	           "                       default %s\n"
	           "  --quick              sections %s with shorter time caps\n"
	           "                       (under a minute per node)\n"
	           "  --share turns|split  ranks on one node take turns, each on all its CPUs\n"
	           "                       (default), or split its CPUs and measure at once\n"
	           "  --rank-timeout S     give a rank up after S seconds without a sign of life\n"
	           "                       (default 120; 0: wait for ever)\n"
	           "  -h, --help           this help\n", sections, quick_sections);
}

/* Returns -1 when the options are good (filled in), else the exit code. */
static int parse_options(int argc, char **argv, int quiet, const char **dir, const char **sections, const char **share,
                         double *rank_timeout, int *quick)
{
	enum { OPT_SECTIONS = 0x2001, OPT_QUICK, OPT_SHARE, OPT_RANK_TIMEOUT };
	static const struct option options[] = {
		{ "output", required_argument, 0, 'o' }, { "sections", required_argument, 0, OPT_SECTIONS },
		{ "quick", no_argument, 0, OPT_QUICK }, { "share", required_argument, 0, OPT_SHARE },
		{ "rank-timeout", required_argument, 0, OPT_RANK_TIMEOUT }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	plumb_status status;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'o': *dir = optarg; break;
		case OPT_SECTIONS: *sections = optarg; break;
		case OPT_QUICK: *quick = 1; break;
		case OPT_SHARE:
			if (strcmp(optarg, "turns") && strcmp(optarg, "split"))
				return quiet ? 2 : cli_usage_error("cluster", "--share must be turns or split, not '%s'", optarg);
			*share = optarg;
			break;
		case OPT_RANK_TIMEOUT:
			if (parse_double(optarg, 0, 1e9, rank_timeout, &status) != 0)
				return quiet ? 2 : cli_usage_error("cluster", "--rank-timeout: %s", status.message);
			break;
		default:
			return quiet ? 2 : cli_bad_option("cluster", c, argv);
		}
	}
	if (optind < argc)
		return quiet ? 2 : cli_usage_error("cluster", "unexpected argument '%s'", argv[optind]);
	if (!*dir)
		return quiet ? 2 : cli_usage_error("cluster", "give the output folder: -o DIR");
	return -1;
}

int cmd_cluster(int argc, char **argv)
{
#ifdef PLUMB_HAVE_MPI
	/* Every rank parses the same arguments; only rank 0 says what is wrong. */
	int quiet = cluster_launcher_rank() != 0;
#else
	int quiet = 0;
#endif
	const char *dir = NULL, *sections = NULL, *share = "turns";
	double rank_timeout = 120;
	int quick = 0;
	int rc = parse_options(argc, argv, quiet, &dir, &sections, &share, &rank_timeout, &quick);
	if (rc >= 0) {
#ifdef PLUMB_HAVE_MPI
		if (rc > 0 && cluster_launched())
			return cluster_mpi_exit_together(rc);
#endif
		return rc;
	}
#ifndef PLUMB_HAVE_MPI
	(void)quick;
	(void)sections;
	(void)share;
	fprintf(stderr, "plumb cluster: this plumb was built without MPI; install Open MPI (Debian: apt-get install libopenmpi-dev openmpi-bin, or make deps) and rebuild\n");
	return 1;
#else
	char program[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
	if (n <= 0)
		return cluster_mpi_exit_together(quiet ? 1 : cli_usage_error("cluster", "cannot find the plumb program (/proc/self/exe)"));
	program[n] = 0;
	cluster_options o = { .output_dir = dir, .quick = quick, .sections = sections, .sharing = share, .rank_timeout = rank_timeout };
	return cluster_mpi_main(program, &o);
#endif
}
