/* The MPI drivers, linked into the plumb program only when Open MPI is
 * present (PLUMB_HAVE_MPI).  The CLI parses the options on every rank the
 * same way; only the rank the launcher calls 0 prints a usage error
 * (cluster_launcher_rank), so every rank fails with one message. */
#ifndef PLUMB_CLUSTER_MPI_H
#define PLUMB_CLUSTER_MPI_H

#include <stdbool.h>

typedef struct cluster_options {
	const char *output_dir;
	bool quick;
	const char *sections;      /* NULL: the default (or quick) list */
	const char *sharing;       /* "turns" or "split" */
	double rank_timeout;       /* seconds without a sign of life before a rank counts as dead */
} cluster_options;

/* The rank the launcher gave this process, read before MPI_Init from the
 * environment mpirun (OMPI_COMM_WORLD_RANK, PMIX_RANK) or srun
 * (SLURM_PROCID) set; 0 when started alone. */
int cluster_launcher_rank(void);

/* A usage error under a launcher: every rank reaches this with the same
 * code (rank 0 has printed the message, the others stayed quiet); they meet
 * in MPI so that no rank's early exit makes mpirun kill rank 0 before its
 * message is out.  Returns code. */
int cluster_mpi_exit_together(int code);

/* True when a launcher (mpirun, srun) started this process as a rank. */
bool cluster_launched(void);

/* mpirun -n N plumb cluster: returns the process's exit code. */
int cluster_mpi_main(const char *program, const cluster_options *options);

struct sim_sweep;
/* mpirun -n N plumb sim --sweep: job k on rank k mod N, the table on rank 0. */
int sim_sweep_mpi_main(const struct sim_sweep *sweep, const char *dir);

#endif
