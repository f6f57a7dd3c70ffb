/* The measured source: the program run R times, natively.
 *
 * Each run gets the region markers' JSON summary (PLUMB_REGION_JSON, with
 * PLUMB_EVENTS and PLUMB_BACKEND: src/counters/region.c counts every region
 * itself, wall time included) and is timed and counted as a whole from
 * outside, as plumb stat does: the child waits on a pipe until its counters
 * are attached (perf_event, enabled at its exec, inherited by its threads). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/read_file.h"
#include "core/tempdir.h"
#include "explain/explain.h"
#include "core/interrupt.h"

static uint64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void remember_reason(explain_result *result, size_t event, const char *reason)
{
	if (!result->event_reason[event][0] && reason && reason[0])
		snprintf(result->event_reason[event], sizeof result->event_reason[event], "%.*s",
		         (int)sizeof result->event_reason[event] - 1, reason);
}

static int state_rank(counter_state state)
{
	switch (state) {
	case COUNTER_OK: return 0;
	case COUNTER_MULTIPLEXED: return 1;
	case COUNTER_NOT_COUNTED: return 2;
	case COUNTER_UNSUPPORTED: return 3;
	}
	return 3;
}

/* One run's value of one event in one region. */
static void counter_add(explain_region *region, size_t event, counter_state state, double value, size_t run)
{
	explain_counter *c = &region->counters[event];
	(void)run;
	/* The worst state over the runs wins. */
	if (c->observed++ == 0 || state_rank(state) > state_rank(c->state))
		c->state = state;
	if ((state == COUNTER_OK || state == COUNTER_MULTIPLEXED) && isfinite(value)) {
		if (c->n == 0 || value < c->min)
			c->min = value;
		c->n++;
		c->sum += value;
		c->sum_squares += value * value;
	}
}

static counter_state state_from_word(const char *word)
{
	if (!word)
		return COUNTER_UNSUPPORTED;
	if (!strcmp(word, "not-counted"))
		return COUNTER_NOT_COUNTED;
	if (!strcmp(word, "multiplexed"))
		return COUNTER_MULTIPLEXED;
	return COUNTER_UNSUPPORTED;
}

int explain_measure_add_regions(explain_result *result, const output_report *regions, size_t run,
                                plumb_status *status)
{
	const output_table *table = output_table_find(regions, "regions");
	if (!table)
		return 0;   /* no region was marked */
	int name_column = output_column_index(table, "region"), entries_column = output_column_index(table, "entries");
	int wall_column = output_column_index(table, "wall_ns");
	if (name_column < 0 || entries_column < 0 || wall_column < 0)
		return plumb_fail(status, EINVAL, "the region markers' summary lacks the region, entries or wall_ns "
		                  "column (a program linked with an older libplumb?)");
	int event_column[COUNTER_MAX_EVENTS];
	for (size_t e = 0; e < result->event_count; e++)
		event_column[e] = output_column_index(table, result->events[e]);
	/* Sum over the threads first: a region's run is one sample. */
	typedef struct { size_t region; double wall; uint64_t entries; double value[COUNTER_MAX_EVENTS];
	                 counter_state state[COUNTER_MAX_EVENTS]; } run_total;
	size_t rows = output_row_count(table);
	run_total *totals = calloc(rows ? rows : 1, sizeof *totals);
	if (!totals)
		return plumb_fail(status, ENOMEM, "out of memory");
	size_t used = 0;
	for (size_t row = 0; row < rows; row++) {
		const char *name = output_cell_string(table, row, (size_t)name_column);
		if (!name || !strcmp(name, EXPLAIN_PROGRAM))
			continue;
		explain_region *region = explain_result_region(result, name);
		if (!region) {
			free(totals);
			return plumb_fail(status, ENOMEM, "out of memory (or a region name of %d bytes or more)",
			                  EXPLAIN_NAME_MAX);
		}
		/* By index: creating a region may move them all. */
		size_t index = (size_t)(region - result->regions), k = 0;
		while (k < used && totals[k].region != index)
			k++;
		if (k == used)
			totals[used++].region = index;
		run_total *t = &totals[k];
		t->wall += output_cell_number(table, row, (size_t)wall_column);
		t->entries += (uint64_t)output_cell_number(table, row, (size_t)entries_column);
		for (size_t e = 0; e < result->event_count; e++) {
			counter_state state;
			double value = NAN;
			if (event_column[e] < 0) {
				state = COUNTER_UNSUPPORTED;
				remember_reason(result, e, "the markers did not count it (a bad event list?)");
			} else {
				cell_kind kind = output_cell_kind(table, row, (size_t)event_column[e]);
				if (kind == CELL_INTEGER || kind == CELL_REAL) {
					value = output_cell_number(table, row, (size_t)event_column[e]);
					state = kind == CELL_REAL ? COUNTER_MULTIPLEXED : COUNTER_OK;
				} else {
					state = state_from_word(output_cell_string(table, row, (size_t)event_column[e]));
					remember_reason(result, e, output_cell_reason(table, row, (size_t)event_column[e]));
				}
			}
			if (state_rank(state) > state_rank(t->state[e]))
				t->state[e] = state;
			if (isfinite(value))
				t->value[e] += value;
		}
	}
	for (size_t k = 0; k < used; k++) {
		explain_region *region = &result->regions[totals[k].region];
		if (region->runs < EXPLAIN_RUNS_MAX)
			region->wall_ns[region->runs] = totals[k].wall;
		if (region->runs == 0)
			region->entries = totals[k].entries;
		region->runs++;
		for (size_t e = 0; e < result->event_count; e++)
			counter_add(region, e, totals[k].state[e],
			            totals[k].state[e] == COUNTER_OK || totals[k].state[e] == COUNTER_MULTIPLEXED
			            ? totals[k].value[e] : NAN, run);
	}
	for (size_t n = 0; n < output_note_count(regions); n++)
		explain_result_note(result, "region markers: %s", output_note_at(regions, n));
	free(totals);
	return 0;
}

static char *read_whole_file(const char *path)
{
	char *text;
	size_t length;
	return read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, NULL) == 0 ? text : NULL;
}

typedef struct one_run {
	double elapsed_ns;
	int wait_status;
	counter_value values[COUNTER_MAX_EVENTS];
	bool counted;                /* values hold the whole program's counts */
	char not_counted[PLUMB_MESSAGE_MAX];
} one_run;

/* Runs the program once.  Returns -1 only when it cannot be started. */
static int run_once(char *const argv[], const explain_options *options, explain_result *result,
                    const char *events, const char *json_path, one_run *run, plumb_status *status)
{
	memset(run, 0, sizeof *run);
	int go[2], failed[2];
	if (pipe2(go, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	if (pipe2(failed, O_CLOEXEC) != 0) {
		close(go[0]);
		close(go[1]);
		return plumb_fail_errno(status, errno, "pipe");
	}
	fflush(NULL);
	/* Registered for plumb's signal handling (interrupt.h); in plumb's own
	 * process group, like plumb stat's, so the terminal reaches it. */
	pid_t child = interrupt_fork_command();
	if (child < 0) {
		int error = errno;
		close(go[0]), close(go[1]), close(failed[0]), close(failed[1]);
		return plumb_fail_errno(status, error, "fork");
	}
	if (child == 0) {
		char byte;
		close(go[1]);
		close(failed[0]);
		setenv("PLUMB_REGION_JSON", json_path, 1);
		setenv("PLUMB_EVENTS", events, 1);
		setenv("PLUMB_BACKEND", result->backend, 1);
		unsetenv("PLUMB_REGION_QUIET");
		/* Symbols bound at start: otherwise the first call of
		 * plumb_region_end in a region runs the dynamic linker's lookup
		 * (hundreds of instructions) inside it. */
		setenv("LD_BIND_NOW", "1", 1);
		if (options->program_stdout >= 0 && options->program_stdout != STDOUT_FILENO &&
		    dup2(options->program_stdout, STDOUT_FILENO) < 0)
			_exit(127);
		if (read(go[0], &byte, 1) != 1)
			_exit(126);
		execvp(argv[0], argv);
		int error = errno;
		if (write(failed[1], &error, sizeof error) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(failed[1]);
	counter_set *set = NULL;
	if (!strcmp(result->backend, "perf")) {
		counter_options counting = { .pid = child, .inherit = true, .enable_on_exec = true };
		plumb_status open_status;
		if (counter_set_open(&set, "perf", result->events, result->event_count, &counting, &open_status) != 0 ||
		    counter_start(set, &open_status) != 0) {
			snprintf(run->not_counted, sizeof run->not_counted, "%s", open_status.message);
			counter_close(set);
			set = NULL;
		}
	} else {
		snprintf(run->not_counted, sizeof run->not_counted,
		         "the %s backend counts a program only from inside it: see the regions, or plumb stat",
		         result->backend);
	}
	uint64_t begin = monotonic_ns();
	int rc = 0;
	if (write(go[1], "g", 1) != 1)
		rc = plumb_fail_errno(status, errno, "starting the program");
	close(go[1]);
	int exec_error = 0;
	ssize_t got = read(failed[0], &exec_error, sizeof exec_error);
	close(failed[0]);
	interrupt_waitpid(child, &run->wait_status);
	run->elapsed_ns = (double)(monotonic_ns() - begin);
	if (rc == 0 && got == (ssize_t)sizeof exec_error)
		rc = plumb_fail(status, exec_error, "cannot run '%s': %s", argv[0], strerror(exec_error));
	if (set) {
		plumb_status read_status;
		if (counter_stop(set, &read_status) == 0 && counter_read(set, run->values, &read_status) == 0)
			run->counted = true;
		else
			snprintf(run->not_counted, sizeof run->not_counted, "%s", read_status.message);
		counter_close(set);
	}
	return rc;
}

int explain_measure(char *const argv[], const explain_options *options, explain_result *result,
                    plumb_status *status)
{
	char events[sizeof result->event_storage];
	events[0] = 0;
	for (size_t e = 0; e < result->event_count; e++) {
		if (e)
			strcat(events, ",");
		strcat(events, result->events[e]);
	}
	char folder[4096];
	if (temp_folder(folder, sizeof folder, "plumb-explain.XXXXXX", status) != 0)
		return -1;
	char json_path[4200];
	snprintf(json_path, sizeof json_path, "%s/regions.json", folder);
	interrupt_add_path(json_path, false);
	explain_region *program = explain_result_region(result, EXPLAIN_PROGRAM);
	int rc = 0;
	bool any_regions = false;
	unsigned failed_runs = 0, start_failures = 0;   /* non-zero exits; of them 126 and 127 */
	int first_failure = 0;
	for (unsigned r = 0; rc == 0 && r < result->runs; r++) {
		one_run run;
		unlink(json_path);
		if (run_once(argv, options, result, events, json_path, &run, status) != 0) {
			rc = -1;
			break;
		}
		program = &result->regions[0];
		program->wall_ns[program->runs++] = run.elapsed_ns;
		program->entries = 1;
		for (size_t e = 0; e < result->event_count; e++) {
			if (!run.counted) {
				/* Said once for the program's row; the regions' reasons stay the events'. */
				counter_add(program, e, COUNTER_UNSUPPORTED, NAN, r);
				snprintf(result->program_counters_error, sizeof result->program_counters_error, "%s",
				         run.not_counted);
				continue;
			}
			counter_add(program, e, run.values[e].state, run.values[e].value, r);
			if (!counter_value_usable(&run.values[e]))
				remember_reason(result, e, run.values[e].reason[0] ? run.values[e].reason
				                                                   : counter_state_name(run.values[e].state));
		}
		result->exit_code = WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status)
		                                                : 128 + WTERMSIG(run.wait_status);
		if (WIFSIGNALED(run.wait_status))
			result->exit_signal = WTERMSIG(run.wait_status);
		if (WIFSIGNALED(run.wait_status))
			explain_result_note(result, "run %u: the program was killed by signal %d (%s)", r + 1,
			                    WTERMSIG(run.wait_status), strsignal(WTERMSIG(run.wait_status)));
		if (result->exit_code != 0 && failed_runs++ == 0)
			first_failure = result->exit_code;
		if (WIFEXITED(run.wait_status) && (result->exit_code == 126 || result->exit_code == 127))
			start_failures++;
		char *text = read_whole_file(json_path);
		if (!text)
			continue;
		output_report *regions = NULL;
		plumb_status parse_status;
		if (output_report_parse_json(text, &regions, &parse_status) != 0) {
			explain_result_note(result, "run %u: the region markers' summary could not be read: %s", r + 1,
			                    parse_status.message);
		} else {
			any_regions = true;
			rc = explain_measure_add_regions(result, regions, r, status);
			output_report_free(regions);
		}
		free(text);
	}
	unlink(json_path);
	rmdir(folder);
	interrupt_remove_path(json_path);
	interrupt_remove_path(folder);
	if (rc != 0)
		return -1;
	/* A program that never ran to a good end measured nothing of its work:
	 * its times are those of a failure (a loader that found no library, a
	 * missing file), and presenting them beside a prediction would be a
	 * wrong number. */
	if (failed_runs == result->runs && start_failures == result->runs)
		return plumb_fail(status, ECHILD, "'%s' did not start: it exited with status %d in all %u runs (a missing "
		                  "shared library, file or interpreter? its own message is above); nothing was measured",
		                  argv[0], first_failure, result->runs);
	if (failed_runs == result->runs && !result->exit_signal)
		return plumb_fail(status, ECHILD, "'%s' exited with status %d in all %u runs: a failed run is not a "
		                  "measurement (its own message is above)", argv[0], first_failure, result->runs);
	if (failed_runs > 0)
		explain_result_note(result, "the program exited with a non-zero status in %u of %u runs (status %d%s)",
		                    failed_runs, result->runs, result->exit_code,
		                    start_failures ? "; 126 and 127 mean it did not start" : "");
	/* The other backend, in one line: what it would count here. */
	const char *other = !strcmp(result->backend, "papi") ? "perf" : !strcmp(result->backend, "perf") ? "papi" : NULL;
	plumb_status usable;
	if (other && counter_backend_usable(other, &usable) != 0)
		explain_result_note(result, "measured: the %s backend cannot count here either: %s", other, usable.message);
	if (!any_regions)
		snprintf(result->measure_note, sizeof result->measure_note,
		         "no region summary: the program marks no regions, or is not linked with libplumb "
		         "(plumb_region_begin/end, <plumb/region.h>)");
	/* The statistics, over the runs each region was seen in. */
	for (size_t i = 0; i < result->region_count; i++) {
		explain_region *region = &result->regions[i];
		size_t n = region->runs < EXPLAIN_RUNS_MAX ? region->runs : EXPLAIN_RUNS_MAX;
		if (n > 0)
			stats_summarize(region->wall_ns, n, &region->wall);
		if (region->runs > 0 && region->runs < result->runs)
			explain_result_note(result, "region \"%s\" ran in %zu of %u runs", region->name, region->runs,
			                    result->runs);
		for (size_t e = 0; e < result->event_count; e++) {
			explain_counter *c = &region->counters[e];
			if (c->n == 0) {
				c->mean = NAN;
				c->ci95 = NAN;
				if (c->state == COUNTER_OK || c->state == COUNTER_MULTIPLEXED)
					c->state = COUNTER_NOT_COUNTED;
				continue;
			}
			c->mean = c->sum / (double)c->n;
			double variance = c->n > 1 ? (c->sum_squares - c->sum * c->mean) / (double)(c->n - 1) : 0;
			c->ci95 = c->n > 1 && variance > 0 ? stats_t95(c->n - 1) * sqrt(variance / (double)c->n) : 0;
		}
	}
	return 0;
}
