/* The instrumented source, and the simulated one from the same run: the
 * program runs once under plumbgrind, whose summary gives the exact counts
 * per region and whose reference trace (with the region markers) streams
 * through a pipe into the simulation (explain_simulate_trace). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plumb/explain.h"
#include "plumb/trace.h"
#include "explain/explain_internal.h"

static void add_counts(instrument_counts *into, const instrument_counts *counts)
{
	for (int c = 0; c < INSTRUMENT_COUNTERS; c++)
		into->value[c] += counts->value[c];
}

/* The exact counts into the result, regions summed over their threads. */
static int take_summary(explain_result *result, const instrument_summary *summary, plumb_status *status)
{
	explain_region *program = explain_result_region(result, EXPLAIN_PROGRAM);
	program->counts = summary->total;
	program->instrumented = true;
	for (size_t i = 0; i < summary->region_count; i++) {
		const instrument_region *region = &summary->regions[i];
		explain_region *into = explain_result_region(result, region->name);
		if (!into)
			return plumb_fail(status, ENOMEM, "out of memory (or a region name of %d bytes or more)",
			                  EXPLAIN_NAME_MAX);
		if (!into->instrumented) {
			memset(&into->counts, 0, sizeof into->counts);
			into->instrumented = true;
		}
		add_counts(&into->counts, &region->counts);
	}
	for (size_t i = 0; i < summary->warning_count; i++)
		explain_result_note(result, "plumbgrind: %s", summary->warnings[i]);
	if (summary->exit_code != 0)
		explain_result_note(result, "under plumbgrind the program exited with status %d", summary->exit_code);
	return 0;
}

/* The program's own counters are off under Valgrind: no summary file of the
 * markers, and no counter reads (rdpmc is not emulated).  The environment
 * is the only channel to the child valgrind starts; plumb is one thread
 * here, and the values are put back at once. */
typedef struct saved_environment {
	char *value[4];
	bool had[4];
} saved_environment;

static const char *const environment_names[4] = { "PLUMB_BACKEND", "PLUMB_REGION_QUIET", "PLUMB_REGION_JSON",
                                                  "LD_BIND_NOW" };

static void environment_for_valgrind(saved_environment *saved)
{
	for (int i = 0; i < 4; i++) {
		const char *value = getenv(environment_names[i]);
		saved->had[i] = value != NULL;
		saved->value[i] = value ? strdup(value) : NULL;
	}
	setenv("PLUMB_BACKEND", "none", 1);
	setenv("PLUMB_REGION_QUIET", "1", 1);
	unsetenv("PLUMB_REGION_JSON");
	/* As in the measured runs (explain_measure.c): no lazy binding inside a region. */
	setenv("LD_BIND_NOW", "1", 1);
}

static void environment_restore(saved_environment *saved)
{
	for (int i = 0; i < 4; i++) {
		if (saved->had[i] && saved->value[i])
			setenv(environment_names[i], saved->value[i], 1);
		else
			unsetenv(environment_names[i]);
		free(saved->value[i]);
	}
}

int explain_instrument(char *const argv[], const explain_options *options, explain_result *result,
                       plumb_status *status)
{
	instrument_options run_options;
	instrument_options_init(&run_options);
	run_options.valgrind = options->valgrind;
	run_options.program_stdout = options->program_stdout;
	instrument_summary summary;
	saved_environment saved;
	bool simulate = options->simulate && explain_simulation_available(result->simulate_error,
	                                                                  sizeof result->simulate_error);
	environment_for_valgrind(&saved);
	if (!simulate) {
		int rc = instrument_run(argv, &run_options, &summary, status);
		environment_restore(&saved);
		if (rc != 0)
			return -1;
	} else {
		instrument_process process;
		int rc = instrument_start(argv, &run_options, 1, &process, status);
		environment_restore(&saved);
		if (rc != 0)
			return -1;
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", process.trace_fd);
		plumb_status simulate_status;
		trace_reader *reader = NULL;
		if (trace_reader_open(&reader, path, TRACE_FORMAT_LACKEY, &simulate_status) != 0 ||
		    explain_simulate_trace(reader, options, result, process.pid, &simulate_status) != 0)
			snprintf(result->simulate_error, sizeof result->simulate_error, "%s", simulate_status.message);
		if (reader)
			trace_reader_close(reader, NULL);
		if (instrument_finish(&process, &summary, status) != 0)
			return -1;
		if (summary.trace_error && !result->simulate_error[0])
			snprintf(result->simulate_error, sizeof result->simulate_error, "the trace is incomplete: %s",
			         summary.trace_error);
	}
	int rc = take_summary(result, &summary, status);
	instrument_summary_free(&summary);
	return rc;
}

