/* The instrumented source, and the simulated one from the same run: the
 * program runs once under plumbgrind, whose summary gives the exact counts
 * per region and whose references (with the region markers) come through
 * its binary ring of shared memory into the simulation
 * (explain_simulate_trace), as under plumb sim. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "explain/explain.h"
#include "core/interrupt.h"
#include "core/tempdir.h"
#include "trace/trace.h"
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
 * markers, and no counter reads (rdpmc is not emulated); and, as in the
 * measured runs (explain_measure.c), no lazy binding inside a region.  Set
 * in the child only (trace_launch.environment). */
static const char *const valgrind_environment[] = { "PLUMB_BACKEND=none", "PLUMB_REGION_QUIET=1",
                                                    "PLUMB_REGION_JSON", "LD_BIND_NOW=1", NULL };

/* Reads the trace to its end without simulating (--no-simulate). */
static int drain(trace_reader *reader, plumb_status *status)
{
	const trace_record *batch;
	trace_compact compact;
	long got;
	/* the ring's runs of entries as they come, not expanded into records */
	while ((got = trace_reader_view_compact(reader, &batch, &compact, 65536, status)) > 0)
		;
	return got < 0 ? -1 : 0;
}

static void remove_folder(const char *folder, const char *summary)
{
	unlink(summary);
	rmdir(folder);
	interrupt_remove_path(summary);
	interrupt_remove_path(folder);
}

/* One run under plumbgrind through the launcher every command shares
 * (trace_reader_open_launch): its binary ring feeds the simulation while
 * the tool counts exactly, and its summary gives the counts at the end. */
int explain_instrument(char *const argv[], const explain_options *options, explain_result *result,
                       plumb_status *status)
{
	bool simulate = options->simulate && explain_simulation_available(result->simulate_error,
	                                                                  sizeof result->simulate_error);
	char folder[PATH_MAX - 32], summary_path[PATH_MAX];
	if (temp_folder(folder, sizeof folder, "plumb-explain-vg.XXXXXX", status) != 0)
		return -1;
	snprintf(summary_path, sizeof summary_path, "%s/summary", folder);
	interrupt_add_path(summary_path, false);
	/* with plumbgrind's code map, which places the executable's symbols
	 * (explain_name_data) and tells an exit from an exec */
	const char *valgrind_options[4];
	size_t n = 0;
	/* the summary's count of the ring's references is not read here, and
	 * the tool would reread every block for it */
	valgrind_options[n++] = "--plumb-count-records=no";
	if (options->fair_sched)
		valgrind_options[n++] = "--fair-sched=yes";
	valgrind_options[n] = NULL;
	trace_launch_exit exit_info;
	trace_launch launch;
	trace_launch_init(&launch);
	launch.valgrind_options = valgrind_options;
	launch.valgrind = options->valgrind;
	launch.summary_path = summary_path;
	launch.program_stdout = options->program_stdout >= 0 ? options->program_stdout : STDOUT_FILENO;
	launch.environment = valgrind_environment;
	launch.exit = &exit_info;
	trace_reader *reader;
	if (trace_reader_open_launch(&reader, argv, &launch, status) != 0) {
		remove_folder(folder, summary_path);
		return -1;
	}
	plumb_status simulate_status;
	trace_code_map *map = NULL;
	int traced = simulate ? explain_simulate_trace(reader, options, result, &map, &simulate_status)
	                      : drain(reader, &simulate_status);
	/* An exec: the trace and the counts end there (trace_reader_code_map says
	 * so; a map the simulation read is proof there was none). */
	plumb_status exec_status;
	bool exec = false;
	if (traced == 0 && !map && trace_reader_code_map(reader, &map, &exec_status) != 0) {
		exec = exec_status.code == ENOENT;
		traced = -1;
		simulate_status = exec_status;
	}
	if (traced == 0 && simulate && result->shared_count) {
		explain_name_data(argv[0], map, result->shared, result->shared_count);
		for (size_t i = 0; i < result->shared_count; i++) {
			const explain_shared_line *line = &result->shared[i];
			explain_result_note(result, "simulated: %s shared line: 0x%llx, %s: %llu false-sharing and %llu "
			                    "true-sharing misses, %llu invalidations", i == 0 ? "the hottest" : "another",
			                    (unsigned long long)line->address, line->variable,
			                    (unsigned long long)line->false_sharing, (unsigned long long)line->true_sharing,
			                    (unsigned long long)line->invalidations);
		}
	}
	trace_code_map_free(map);
	plumb_status ignored;
	if (traced != 0 && !exec)
		drain(reader, &ignored);   /* the counts still come when the program ends */
	plumb_status close_status;
	int closed = trace_reader_close(reader, &close_status);
	if (exec) {
		remove_folder(folder, summary_path);
		return plumb_fail(status, EXDEV, "%s", exec_status.message);
	}
	if (exit_info.exec_failed) {
		remove_folder(folder, summary_path);
		return plumb_fail(status, ECHILD, "%s", close_status.message);
	}
	if (traced != 0) {
		if (simulate)
			snprintf(result->simulate_error, sizeof result->simulate_error, "%s", simulate_status.message);
		else {
			remove_folder(folder, summary_path);
			*status = simulate_status;
			return -1;
		}
	}
	if (closed != 0 && !exit_info.ended) {
		remove_folder(folder, summary_path);
		*status = close_status;
		return -1;
	}
	instrument_summary summary;
	int rc = instrument_summary_read(&summary, summary_path, status);
	remove_folder(folder, summary_path);
	if (rc != 0)
		return -1;
	summary.exit_code = exit_info.code;
	summary.exit_signal = exit_info.signal;
	if (summary.trace_error && !result->simulate_error[0])
		snprintf(result->simulate_error, sizeof result->simulate_error, "the trace is incomplete: %s",
		         summary.trace_error);
	rc = take_summary(result, &summary, status);
	instrument_summary_free(&summary);
	return rc;
}
