/* Counting a command's events the way perf stat does (plumb stat): run it N
 * times, each run a fresh process (a loop inside one process would reuse warm
 * caches and page tables), count it and its children from its exec to its
 * exit, and summarize each event over the runs: mean, spread, perf's "+- x%"
 * and the rates perf prints beside the counts ("CPUs utilized", per second). */
#ifndef PLUMB_COUNTER_STAT_H
#define PLUMB_COUNTER_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "counters/counters.h"
#include "core/output.h"
#include "core/status.h"

/* perf stat's default events, and the events a calibration counts unless told. */
#define COUNTER_STAT_DEFAULT_EVENTS "task-clock,page-faults,context-switches,cpu-migrations,cycles,instructions"
#define COUNTER_STAT_CALIBRATE_EVENTS "page-faults,minor-faults,context-switches,task-clock,cycles,instructions"

typedef struct counter_stat_request {
	const char *backend;          /* "perf", "papi" or "none" */
	const char *const *events;
	size_t event_count;
	bool events_named;            /* the user named the events: one unsupported fails the request */
	counter_options options;      /* domain, grouping; pid and inherit are set per run */
	char **command;               /* argv of the command, NULL-terminated */
	size_t runs;                  /* >= 1 */
} counter_stat_request;

/* One run of the command. */
typedef struct counter_stat_run {
	counter_value values[COUNTER_MAX_EVENTS];
	double elapsed_ns;
	int exit_status;              /* wait status */
} counter_stat_run;

/* One event over the runs. */
typedef struct counter_stat_event {
	size_t counted;               /* runs that gave a number */
	double mean, stddev, min, max, cv;
	double mean_error_percent;    /* perf's "+- x%": standard error of the mean, in % of it; NaN for one run */
	double rate;                  /* beside the count, as perf prints it; NaN when none */
	const char *rate_unit;        /* "CPUs utilized", "/sec", "insn per cycle"; NULL when none */
	bool multiplexed;
	bool clock;                   /* a time in ns (task-clock, cpu-clock) */
	bool kernel_side_user_only;   /* happens only in the kernel, counted in user space only: reads 0 */
	const counter_value *worst;   /* a run's value that is not a number (state, reason), or NULL */
} counter_stat_event;

typedef struct counter_stat_result {
	size_t runs;
	counter_stat_run *run;        /* runs entries, owned */
	counter_stat_event events[COUNTER_MAX_EVENTS];
	double elapsed_mean_ns, elapsed_median_ns, elapsed_error_percent;
	double elapsed_stddev_ns;
	size_t failed_runs;           /* non-zero exit or a signal */
	int last_bad_status;          /* wait status of the last failed run */
	size_t unsupported;           /* events no run could count */
} counter_stat_result;

/* The domain perf stat counts in for this user: user and kernel when the
 * kernel lets it (root, CAP_PERFMON or CAP_SYS_ADMIN, perf_event_paranoid <= 1),
 * else user space only.  The PAPI backend always counts user space. */
counter_domain counter_stat_default_domain(void);
/* Events that happen only in the kernel (context-switches, cpu-migrations):
 * counted in user space only they read 0, whatever the command did. */
bool counter_stat_kernel_side(const char *event);

/* Runs the command request->runs times and summarizes.  -1 only when a run
 * could not be made (the command cannot be started, a pipe or fork failed);
 * a command that fails or is killed is a counted run, in failed_runs. */
int counter_stat_run_command(const counter_stat_request *request, counter_stat_result *result,
                             plumb_status *status);
void counter_stat_result_free(counter_stat_result *result);

/* The report: meta, the "counts" table (and "runs" with every run's value when
 * per_run), notes.  NULL when out of memory. */
output_report *counter_stat_report(const counter_stat_request *request, const counter_stat_result *result,
                                   bool per_run);
/* perf stat's text: one line per event, value (msec for clocks), name, rate,
 * "( +- x% )" over several runs, the elapsed time, then REPORT's notes. */
void counter_stat_print(FILE *stream, const counter_stat_request *request, const counter_stat_result *result,
                        const output_report *report);

/* plumb stat --calibrate: counter_calibrate of an empty region through
 * perf (reads by rdpmc, then by read()) and PAPI, or only the backend
 * named ("perf", "papi"; NULL: every one).  The report has the tables
 * "bias" (events counted per backend and event) and "cost" (start, stop,
 * read in ns), and a note for each backend that could not be calibrated
 * and for rdpmc falling back to read(); *calibrated gets how many could. */
output_report *counter_stat_calibration_report(const char *backend, const char *const *events, size_t n,
                                               const counter_options *base, size_t iterations, size_t *calibrated);

#endif
