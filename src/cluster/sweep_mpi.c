/* plumb sim --sweep across MPI ranks: job k runs on rank k mod N; every
 * row travels to rank 0 as the JSON text the serial sweep builds too, and
 * rank 0 assembles them in job order (sim_sweep_assemble), so the table is
 * the serial one byte for byte.  Waits poll and sleep (see cluster_mpi.c). */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cluster/cluster.h"
#include "cluster/cluster_mpi.h"
#include "sim/sim_sweep.h"

enum { TAG_ROW = 201 };

static void nap(void)
{
	struct timespec t = { 0, 20000000L };
	nanosleep(&t, NULL);
}

int sim_sweep_mpi_main(const sim_sweep *sweep, const char *dir)
{
	plumb_status limit_status;
	if (cluster_file_limit_check(&limit_status) != 0) {
		fprintf(stderr, "plumb sim: %s\n", limit_status.message);
		return 1;
	}
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
		fprintf(stderr, "plumb sim: MPI_Init failed\n");
		return 1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rank = 0, size = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	size_t jobs = sim_sweep_job_count(sweep);
	char **rows = calloc(jobs ? jobs : 1, sizeof *rows);
	MPI_Request *requests = calloc(jobs ? jobs : 1, sizeof *requests);
	size_t sent = 0;
	if (!rows || !requests) {
		fprintf(stderr, "plumb sim: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t k = (size_t)rank; k < jobs; k += (size_t)size) {
		rows[k] = sim_sweep_run_job(sweep, k);
		if (rank != 0)
			MPI_Isend(rows[k] ? rows[k] : "", rows[k] ? (int)strlen(rows[k]) : 0, MPI_CHAR, 0, TAG_ROW, MPI_COMM_WORLD,
			          &requests[sent++]);
	}
	int exit_code = 0;
	if (rank != 0) {
		int done = 0;
		while (!done) {
			if (MPI_Testall((int)sent, requests, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
				break;
			if (!done)
				nap();
		}
	} else {
		/* Messages from one rank arrive in the order it sent them: its jobs in order. */
		size_t *next = calloc((size_t)size, sizeof *next);
		for (int r = 1; next && r < size; r++)
			next[r] = (size_t)r;
		size_t pending = 0;
		for (size_t k = 0; k < jobs; k++)
			pending += k % (size_t)size != 0;
		while (next && pending) {
			bool got = false;
			for (int r = 1; r < size; r++) {
				if (next[r] >= jobs)
					continue;
				int flag = 0;
				MPI_Status st;
				if (MPI_Iprobe(r, TAG_ROW, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
					continue;
				int length = 0;
				MPI_Get_count(&st, MPI_CHAR, &length);
				char *text = malloc((size_t)length + 1);
				if (text && MPI_Recv(text, length, MPI_CHAR, r, TAG_ROW, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS) {
					text[length] = 0;
					if (!length) {
						free(text);
						text = NULL;
					}
				} else {
					free(text);
					text = NULL;
				}
				rows[next[r]] = text;
				next[r] += (size_t)size;
				pending--;
				got = true;
			}
			if (!got)
				nap();
		}
		free(next);
		output_report *report = sim_sweep_assemble(sweep, rows, jobs);
		plumb_status status;
		if (!report) {
			fprintf(stderr, "plumb sim: out of memory\n");
			exit_code = 1;
		} else if (sim_sweep_write(report, dir, &status) != 0) {
			fprintf(stderr, "plumb sim: %s\n", status.message);
			exit_code = 1;
		} else {
			printf("sweep: %zu jobs (%zu traces x %zu configurations) on %d rank%s\nsweep: %s/sweep.json\nsweep: %s/sweep.csv\n", jobs,
			       sweep->trace_count, sweep->config_count, size, size == 1 ? "" : "s", dir, dir);
		}
		output_report_free(report);
	}
	for (size_t k = 0; k < jobs; k++)
		free(rows[k]);
	free(rows);
	free(requests);
	MPI_Finalize();
	return exit_code;
}
