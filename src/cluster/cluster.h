/* plumb cluster: the same characterisation on every node of a cluster,
 * gathered into one table.  This header is the part that needs no MPI: a
 * node's row built from the report's sections, the cluster table built
 * from the rows (robust z-scores, spread per figure, configuration
 * differences) and its pages.  The MPI driver that runs it across ranks is
 * linked into the plumb program only (src/cluster/cluster_mpi.c). */
#ifndef PLUMB_CLUSTER_H
#define PLUMB_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include "core/output.h"
#include "core/status.h"

/* ---------------------------------------------------------- robust statistics */

/* The median of the finite values among values[0..n) (NaN if none). */
double cluster_median(const double *values, size_t n);
/* The median absolute deviation from the median, unscaled (NaN if no finite value). */
double cluster_mad(const double *values, size_t n);
/* Iglewicz and Hoaglin's modified z-score (1993): z = 0.6745 (x - median) / MAD.
 * When the MAD is 0 (more than half the values equal) the mean absolute
 * deviation stands in: z = (x - median) / (1.253314 * meanAD); when that is 0
 * too, every value is the median and z is 0.  Non-finite values get NaN, and
 * so does everything when fewer than 3 values are finite (no spread to judge).
 * z[i] for values[i]; returns the number of finite values. */
size_t cluster_robust_z(const double *values, size_t n, double *z);
/* |z| above this marks an outlier (Iglewicz and Hoaglin's recommendation). */
#define CLUSTER_OUTLIER_Z 3.5

/* ------------------------------------------------------------ one node's row */

/* The sections plumb cluster may run on each node, and those it runs by
 * default and with --quick, are the report's section table's
 * (report_section_list, REPORT_SECTION_CLUSTER*, plumb/report.h). */
#define CLUSTER_MAX_SECTIONS 12

/* Parses a --sections list into names (pointing into list, which is
 * modified): each a section the table lets a cluster run
 * (REPORT_SECTION_CLUSTER), at most once; a section that needs an earlier
 * one's report (model, loaded's) brings it before it.  Fails with one line. */
int cluster_sections_parse(char *list, const char **names, size_t max, size_t *count, plumb_status *status);
/* Open MPI keeps its session's shared store in files of a few MiB (PMIx's
 * dstore: its start failed on a 2 MiB file-size limit and printed a dozen
 * lines of its own, or hung): a file-size limit (ulimit -f) under 8 MiB is
 * refused before MPI starts, with one line.  0: no such limit. */
int cluster_file_limit_check(plumb_status *status);

/* Where one rank ran: its host, its rank, the CPUs it was pinned to and how
 * it shared its node with other ranks ("alone", "turns", "split"). */
typedef struct cluster_placement {
	int rank;
	const char *host;
	const char *cpus;        /* "0-1" */
	const char *sharing;     /* "alone", "turns" or "split" */
	const char *detail;      /* one sentence for people */
	int ranks_on_node;
} cluster_placement;

/* One rank's row (command "cluster-node"): meta rank, host, cpus, sharing,
 * placement, kernel; tables "figures" (figure, value, unit: every headline
 * figure, a status cell with its reason when it could not be measured),
 * "configuration" (property, value) and "sections" (section, result).
 * Built from the sections' reports as report_summary_build reads them.
 * NULL if out of memory. */
output_report *cluster_node_report(const cluster_placement *placement, output_report *const *sections,
                                   const char *const *commands, const char *const *failures, size_t count);

/* ------------------------------------------------------ the cluster's table */

/* One gathered row: a rank's node report, or NULL with failure saying why
 * (the rank died, or sent nothing readable); host may be NULL when unknown. */
typedef struct cluster_row {
	int rank;
	const char *host;
	const output_report *node;
	const char *failure;
} cluster_row;

/* The cluster report (command "cluster"): tables "nodes" (one row per rank:
 * rank, host, cpus, sharing, status, then every figure), "figures_by_node"
 * (the same transposed: a figure per row, a column per rank), "spread"
 * (per figure: nodes, median, MAD, min, max, spread %), "outliers" (rank,
 * host, figure, value, median, robust z, for |z| > CLUSTER_OUTLIER_Z),
 * "configuration" (rank, host and each configuration property) and
 * "differences" (each property whose value differs between ranks, with the
 * ranks holding each value).  NULL if out of memory. */
output_report *cluster_build(const cluster_row *rows, size_t count);

/* DIR/cluster.html through the report's HTML code, atomically. */
int cluster_write_html(const char *path, const output_report *cluster, plumb_status *status);

#endif
