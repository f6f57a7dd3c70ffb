/* plumb sim --sweep: many traces through many configurations, one table.
 * The jobs are numbered trace by trace (job k: trace k / C, configuration
 * k % C); each job's row is built as JSON text, and the table is assembled
 * from the rows in job order, so a sweep spread over MPI ranks gives the
 * same bytes as one run serially. */
#ifndef PLUMB_SIM_SWEEP_H
#define PLUMB_SIM_SWEEP_H

#include <stddef.h>
#include "core/output.h"
#include "core/status.h"

typedef struct sim_sweep {
	char **configs;     /* each a preset name or a configuration file, as given */
	size_t config_count;
	char **traces;      /* trace files, as given */
	size_t trace_count;
} sim_sweep;

/* Splits the comma-separated lists and checks every configuration (a file
 * that exists is read as a configuration file, anything else must be a
 * preset) and that every trace can be opened.  Fails with one line. */
int sim_sweep_parse(sim_sweep *sweep, const char *configs, const char *traces, plumb_status *status);
void sim_sweep_free(sim_sweep *sweep);
size_t sim_sweep_job_count(const sim_sweep *sweep);
/* Runs job k and returns its row as JSON text (malloc'ed; NULL only when
 * out of memory).  A job that fails gives a row whose status says why. */
char *sim_sweep_run_job(const sim_sweep *sweep, size_t job);
/* The table (command "sim-sweep", table "sweep") from every job's row text
 * in job order; a row that is NULL or unreadable becomes a failed row with
 * reason (the same for every caller).  NULL if out of memory. */
output_report *sim_sweep_assemble(const sim_sweep *sweep, char *const *rows, size_t count);
/* Every job in this process, then the table: the serial sweep. */
output_report *sim_sweep_run_all(const sim_sweep *sweep);
/* Writes DIR/sweep.json and DIR/sweep.csv atomically (DIR is created). */
int sim_sweep_write(const output_report *report, const char *dir, plumb_status *status);

#endif
