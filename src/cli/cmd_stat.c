/* plumb stat: counts a command's events the way perf stat does, through
 * either backend, over N runs (each a fresh process, the seeds' rule: a loop
 * inside one process would reuse warm caches and page tables), and reports
 * mean, stddev and CV.  --calibrate measures the counter interface itself. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "plumb/interrupt.h"
#include "cli/command.h"
#include "plumb/counters.h"
#include "plumb/parse.h"
#include "plumb/stats.h"
#include "counters/stat_agent.h"

const char cmd_stat_summary[] = "count a command's events (perf or PAPI), or calibrate the counters";

static void usage(FILE *f)
{
	fprintf(f, "usage: plumb stat -e EVENT[,EVENT...] [-r N] [--backend perf|papi|none] [options] [--] COMMAND [ARGS]\n"
	           "       plumb stat --calibrate [-e EVENTS] [-n ITERATIONS] [--backend perf|papi]\n\n"
	           "Counts COMMAND's events (it and its children, user space only by default) N times,\n"
	           "each run a fresh process, and reports mean, standard deviation and CV per event.\n"
	           "Events are perf names (page-faults, task-clock, cycles, L1-dcache-load-misses),\n"
	           "raw r<hex>, PAPI presets (PAPI_L1_DCM) or native names (perf::PAGE-FAULTS,\n"
	           "amd64_fam19h_zen4::RETIRED_INSTRUCTIONS).  An event this machine cannot count is\n"
	           "reported 'unsupported' with the reason, never as a number.\n\n"
	           "  -e, --events LIST    comma-separated events (default: task-clock,page-faults,\n"
	           "                       context-switches,cpu-migrations,cycles,instructions)\n"
	           "  -r, --runs N         runs (default 1; --repeat is perf's name for it)\n"
	           "      --backend B      perf (default), papi or none\n"
	           "      --all-domains    count kernel as well as user space (needs\n"
	           "                       perf_event_paranoid <= 1 or CAP_PERFMON)\n"
	           "      --no-group       open each event on its own instead of one group\n"
	           "      --per-run        add a table with every run's value of every event\n"
	           "      --calibrate      count an empty region: bias in events, cost of start/stop/read\n"
	           "  -n, --iterations N   empty regions per calibration (default 10000)\n"
	           "      --csv            CSV output\n"
	           "      --json           JSON output (schema: docs/output-schema.md)\n"
	           "  -o, --output FILE    write to FILE (atomically) instead of stdout\n"
	           "  -h, --help           this help\n");
}

#define DEFAULT_EVENTS "task-clock,page-faults,context-switches,cpu-migrations,cycles,instructions"
#define CALIBRATE_EVENTS "page-faults,minor-faults,context-switches,task-clock,cycles,instructions"

typedef struct stat_run {
	counter_value values[COUNTER_MAX_EVENTS];
	double elapsed_ns;
	int exit_status;           /* wait status */
} stat_run;

static uint64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Runs the command once, counted from its exec to its exit.  The child waits
 * on a pipe until the counters are attached, so nothing it does is missed;
 * a second pipe (closed by a successful exec) carries an exec failure back. */
static int run_once(const char *backend, const char *const *events, size_t n, const counter_options *base,
                    char **command, stat_run *run, plumb_status *status)
{
	int go[2], failed[2];
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(failed, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	fflush(NULL);
	pid_t child = interrupt_fork(false);
	if (child < 0)
		return plumb_fail_errno(status, errno, "fork");
	if (child == 0) {
		char byte;
		close(go[1]);
		close(failed[0]);
		if (read(go[0], &byte, 1) != 1)
			_exit(126);
		execvp(command[0], command);
		int err = errno;
		if (write(failed[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(failed[1]);
	counter_options options = *base;
	options.pid = child;
	options.inherit = true;
	options.enable_on_exec = !strcmp(backend, "perf");
	counter_set *set = NULL;
	int rc = counter_set_open(&set, backend, events, n, &options, status);
	if (rc != 0 && status->code == ENOTSUP) {
		/* The backend cannot work at all here (built without PAPI): the
		 * command still runs, and every event says why it was not counted. */
		for (size_t i = 0; i < n; i++)
			counter_value_unsupported(&run->values[i], "%s", status->message);
		set = NULL;
		rc = 0;
	}
	if (rc == 0 && set)
		rc = counter_start(set, status);
	uint64_t begin = monotonic_ns();
	/* Releasing the child; if opening failed, closing the pipe ends it. */
	if (rc == 0 && write(go[1], "g", 1) != 1)
		rc = plumb_fail_errno(status, errno, "starting the command");
	close(go[1]);
	int exec_errno = 0;
	ssize_t got = read(failed[0], &exec_errno, sizeof exec_errno);
	close(failed[0]);
	int wstatus = 0;
	interrupt_waitpid(child, &wstatus);
	run->elapsed_ns = (double)(monotonic_ns() - begin);
	run->exit_status = wstatus;
	if (rc == 0 && got == (ssize_t)sizeof exec_errno)
		rc = plumb_fail(status, exec_errno, "cannot run '%s': %s", command[0], strerror(exec_errno));
	if (rc == 0 && set)
		rc = counter_stop(set, status);
	if (rc == 0 && set)
		rc = counter_read(set, run->values, status);
	counter_close(set);
	return rc;
}

/* PAPI counts from inside the command: libplumb.so is preloaded into it and
 * its agent (src/counters/stat_agent.c) starts the events in a constructor
 * and sends the values back over an inherited pipe at exit.  It counts the
 * command's main thread after the dynamic loader; docs/counters.md. */
static int run_once_agent(const char *backend, const char *const *events, size_t n, char **command,
                          stat_run *run, plumb_status *status)
{
	char library[4096];
	if (!stat_agent_library(library, sizeof library, status)) {
		/* Without the library nothing can be counted, but the command still runs. */
		for (size_t i = 0; i < n; i++)
			counter_value_unsupported(&run->values[i], "%s", status->message);
		library[0] = '\0';
	}
	char list[4096] = "";
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", events[i]);
	}
	int data[2], failed[2];
	if (pipe2(data, O_CLOEXEC) != 0 || pipe2(failed, O_CLOEXEC) != 0)
		return plumb_fail_errno(status, errno, "pipe");
	fflush(NULL);
	uint64_t begin = monotonic_ns();
	pid_t child = interrupt_fork(false);
	if (child < 0)
		return plumb_fail_errno(status, errno, "fork");
	if (child == 0) {
		close(data[0]);
		close(failed[0]);
		if (library[0]) {
			/* The agent's pipe must survive exec; the agent closes it on exec of
			 * anything the command starts. */
			char fd_text[16], preload[8192];
			fcntl(data[1], F_SETFD, 0);
			snprintf(fd_text, sizeof fd_text, "%d", data[1]);
			const char *previous = getenv("LD_PRELOAD");
			snprintf(preload, sizeof preload, "%s%s%s", library, previous && previous[0] ? ":" : "",
			         previous ? previous : "");
			setenv(STAT_AGENT_FD_ENV, fd_text, 1);
			setenv(STAT_AGENT_EVENTS_ENV, list, 1);
			setenv(STAT_AGENT_BACKEND_ENV, backend, 1);
			setenv("LD_PRELOAD", preload, 1);
		}
		execvp(command[0], command);
		int err = errno;
		if (write(failed[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(data[1]);
	close(failed[1]);
	int exec_errno = 0;
	ssize_t got = read(failed[0], &exec_errno, sizeof exec_errno);
	close(failed[0]);
	int wstatus = 0;
	interrupt_waitpid(child, &wstatus);
	run->elapsed_ns = (double)(monotonic_ns() - begin);
	run->exit_status = wstatus;
	int rc = 0;
	if (got == (ssize_t)sizeof exec_errno)
		rc = plumb_fail(status, exec_errno, "cannot run '%s': %s", command[0], strerror(exec_errno));
	else if (library[0])
		rc = stat_agent_collect(data[0], n, run->values, status);
	close(data[0]);
	return rc;
}

static bool is_clock(const char *event)
{
	return !strcmp(event, "task-clock") || !strcmp(event, "cpu-clock") ||
	       !strcmp(event, "perf::TASK-CLOCK") || !strcmp(event, "perf::CPU-CLOCK");
}

static void add_counts_table(output_report *report, const char *const *events, size_t n,
                             const stat_run *runs, size_t repeat)
{
	output_table *table = output_table_add(report, "counts", "Event counts over the runs");
	output_column(table, "event", NULL, 0);
	output_column(table, "mean", NULL, 1);
	output_column(table, "stddev", NULL, 1);
	output_column(table, "cv", "%", 2);
	output_column(table, "min", NULL, 0);
	output_column(table, "max", NULL, 0);
	output_column(table, "unit", NULL, 0);
	output_column(table, "runs", NULL, 0);
	output_column(table, "status", NULL, 0);
	double *samples = malloc(repeat * sizeof *samples);
	for (size_t e = 0; e < n; e++) {
		size_t counted = 0;
		const counter_value *worst = NULL;
		bool multiplexed = false;
		for (size_t r = 0; r < repeat; r++) {
			const counter_value *v = &runs[r].values[e];
			if (counter_value_usable(v)) {
				if (samples)
					samples[counted] = v->value;
				counted++;
				multiplexed |= v->state == COUNTER_MULTIPLEXED;
			} else if (!worst || v->state == COUNTER_UNSUPPORTED) {
				worst = v;
			}
		}
		output_row(table);
		output_cell_text(table, events[e]);
		if (counted == 0 || !samples) {
			const char *word = worst ? counter_state_name(worst->state) : "unsupported";
			const char *reason = worst ? worst->reason : "no run counted this event";
			for (int k = 0; k < 5; k++)
				output_cell_status(table, word, reason);
			output_cell_empty(table);
			output_cell_integer(table, 0);
			output_cell_text(table, word);
			continue;
		}
		stats_summary s;
		stats_summarize(samples, counted, &s);
		output_cell_real(table, s.mean);
		output_cell_real(table, s.stddev);
		output_cell_real(table, s.mean != 0 ? 100.0 * s.cv : NAN);
		output_cell_real(table, s.min);
		output_cell_real(table, s.max);
		if (is_clock(events[e]))
			output_cell_text(table, "ns");
		else
			output_cell_empty(table);
		output_cell_integer(table, (int64_t)counted);
		/* Multiplexed values are numbers (scaled estimates), flagged here. */
		output_cell_text(table, multiplexed ? "multiplexed" : counted < repeat ? "partly-counted" : "ok");
		if (multiplexed)
			for (size_t r = 0; r < repeat; r++)
				if (runs[r].values[e].state == COUNTER_MULTIPLEXED) {
					output_note(report, "%s: %s (run %zu)", events[e], runs[r].values[e].reason, r + 1);
					break;
				}
		if (counted < repeat && worst)
			output_note(report, "%s: not counted in %zu of %zu runs: %s", events[e], repeat - counted,
			            repeat, worst->reason);
	}
	free(samples);
}

/* Every run's value: what a validation analysis needs to tell a random error
 * (some runs off) from a bias (all runs off by the same amount). */
static void add_runs_table(output_report *report, const char *const *events, size_t n,
                           const stat_run *runs, size_t repeat)
{
	output_table *table = output_table_add(report, "runs", "Every run");
	output_column(table, "run", NULL, 0);
	output_column(table, "event", NULL, 0);
	output_column(table, "value", NULL, 0);
	output_column(table, "raw", NULL, 0);
	output_column(table, "time_enabled", "ns", 0);
	output_column(table, "time_running", "ns", 0);
	output_column(table, "status", NULL, 0);
	for (size_t r = 0; r < repeat; r++)
		for (size_t e = 0; e < n; e++) {
			const counter_value *v = &runs[r].values[e];
			output_row(table);
			output_cell_integer(table, (int64_t)(r + 1));
			output_cell_text(table, events[e]);
			if (counter_value_usable(v)) {
				if (v->state == COUNTER_OK)
					output_cell_integer(table, (int64_t)v->raw);
				else
					output_cell_real(table, v->value);
				output_cell_integer(table, (int64_t)v->raw);
				output_cell_integer(table, (int64_t)v->time_enabled);
				output_cell_integer(table, (int64_t)v->time_running);
				output_cell_text(table, counter_state_name(v->state));
			} else {
				for (int k = 0; k < 4; k++)
					output_cell_status(table, counter_state_name(v->state), v->reason);
				output_cell_text(table, counter_state_name(v->state));
			}
		}
}

static int run_stat(const char *backend, const char *const *events, size_t n, const counter_options *options,
                    size_t repeat, bool per_run, char **command, const cli_output *out)
{
	stat_run *runs = calloc(repeat, sizeof *runs);
	if (!runs) {
		fprintf(stderr, "plumb stat: out of memory\n");
		return 1;
	}
	plumb_status status;
	int failed_runs = 0, last_bad_status = 0;
	for (size_t r = 0; r < repeat; r++) {
		int rc = !strcmp(backend, "papi") ? run_once_agent(backend, events, n, command, &runs[r], &status)
		                                  : run_once(backend, events, n, options, command, &runs[r], &status);
		if (rc != 0) {
			free(runs);
			return cli_error("stat", &status);
		}
		int w = runs[r].exit_status;
		if (!WIFEXITED(w) || WEXITSTATUS(w) != 0) {
			failed_runs++;
			last_bad_status = w;
		}
	}
	output_report *report = output_report_new("stat");
	char text[512] = "";
	for (char **word = command; *word; word++) {
		size_t used = strlen(text);
		snprintf(text + used, sizeof text - used, "%s%s", used ? " " : "", *word);
	}
	output_meta_text(report, "command", text);
	output_meta_text(report, "backend", backend);
	output_meta_text(report, "domain", options->domain == COUNTER_DOMAIN_ALL ? "user+kernel" : "user");
	output_meta_integer(report, "runs", (int64_t)repeat);
	double *elapsed = malloc(repeat * sizeof *elapsed);
	if (elapsed) {
		for (size_t r = 0; r < repeat; r++)
			elapsed[r] = runs[r].elapsed_ns;
		output_meta_integer(report, "elapsed_ns_median", (int64_t)llround(stats_median(elapsed, repeat)));
		free(elapsed);
	}
	add_counts_table(report, events, n, runs, repeat);
	if (per_run)
		add_runs_table(report, events, n, runs, repeat);
	if (failed_runs) {
		if (WIFSIGNALED(last_bad_status))
			output_note(report, "the command was killed by signal %d in %d of %zu runs",
			            WTERMSIG(last_bad_status), failed_runs, repeat);
		else
			output_note(report, "the command exited with status %d in %d of %zu runs",
			            WEXITSTATUS(last_bad_status), failed_runs, repeat);
	}
	int rc = cli_output_emit(out, report);
	output_report_free(report);
	size_t unsupported = 0;
	for (size_t i = 0; i < n; i++)
		unsupported += runs[0].values[i].state == COUNTER_UNSUPPORTED;
	free(runs);
	if (rc == 0 && failed_runs) {
		fprintf(stderr, "plumb stat: the command failed in %d of %zu runs\n", failed_runs, repeat);
		return 1;
	}
	/* An event asked for and not counted is a failure of the request, even
	 * though the table says why: scripts must not take the other numbers as
	 * the whole answer. */
	if (rc == 0 && unsupported) {
		fprintf(stderr, "plumb stat: %zu of %zu events cannot be counted here (the table says why)\n", unsupported, n);
		return CLI_EXIT_UNCOUNTED;
	}
	return rc;
}

static void calibration_rows(output_table *bias, output_table *cost, const char *label,
                             const char *const *events, size_t n, const counter_calibration *c)
{
	for (size_t e = 0; e < n; e++) {
		output_row(bias);
		output_cell_text(bias, label);
		output_cell_text(bias, events[e]);
		const counter_bias *b = &c->bias[e];
		if (b->state != COUNTER_OK) {
			for (int k = 0; k < 4; k++)
				output_cell_status(bias, counter_state_name(b->state), b->reason);
			continue;
		}
		output_cell_real(bias, b->mean);
		output_cell_real(bias, b->stddev);
		output_cell_real(bias, b->min);
		output_cell_real(bias, b->max);
	}
	output_row(cost);
	output_cell_text(cost, label);
	output_cell_text(cost, c->read_method);
	const double costs[3] = { c->start_ns, c->stop_ns, c->read_ns };
	for (int k = 0; k < 3; k++) {
		if (c->cost_state != COUNTER_OK)
			output_cell_status(cost, counter_state_name(c->cost_state), c->cost_reason);
		else if (isnan(costs[k]))
			output_cell_status(cost, "unsupported", "no more than the timer's own cost");
		else
			output_cell_real(cost, costs[k]);
	}
	output_cell_integer(cost, (int64_t)c->iterations);
}

static int run_calibrate(const char *backend_choice, const char *const *events, size_t n,
                         const counter_options *base, size_t iterations, const cli_output *out)
{
	output_report *report = output_report_new("stat");
	output_meta_text(report, "mode", "calibrate");
	output_meta_integer(report, "iterations", (int64_t)iterations);
	output_table *bias = output_table_add(report, "bias", "Events counted in an empty region (start; stop; read)");
	output_column(bias, "backend", NULL, 0);
	output_column(bias, "event", NULL, 0);
	output_column(bias, "mean", NULL, 3);
	output_column(bias, "stddev", NULL, 3);
	output_column(bias, "min", NULL, 0);
	output_column(bias, "max", NULL, 0);
	output_table *cost = output_table_add(report, "cost", "Cost of one call (median, clock overhead subtracted)");
	output_column(cost, "backend", NULL, 0);
	output_column(cost, "read_method", NULL, 0);
	output_column(cost, "start", "ns", 0);
	output_column(cost, "stop", "ns", 0);
	output_column(cost, "read", "ns", 0);
	output_column(cost, "iterations", NULL, 0);
	struct { const char *label, *backend; bool rdpmc; } variants[] = {
		{ "perf", "perf", true }, { "perf/read()", "perf", false }, { "papi", "papi", false },
	};
	int produced = 0;
	plumb_status status;
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		if (backend_choice && strcmp(backend_choice, variants[v].backend))
			continue;
		counter_options options = *base;
		options.no_rdpmc = !variants[v].rdpmc;
		counter_calibration c;
		if (counter_calibrate(variants[v].backend, events, n, &options, iterations, &c, &status) != 0) {
			output_note(report, "%s: unsupported: %s", variants[v].label, status.message);
			continue;
		}
		produced++;
		calibration_rows(bias, cost, variants[v].label, events, n, &c);
		if (variants[v].rdpmc && strcmp(c.read_method, "rdpmc"))
			output_note(report, "perf: rdpmc unsupported here, reads fell back to read(): no event of the "
			            "set was on a hardware counter (software events never are; %s)",
			            access("/sys/bus/event_source/devices/cpu", F_OK) ? "this machine has no cpu PMU"
			                                                                 : "check /sys/bus/event_source/devices/cpu/rdpmc");
	}
	int rc = cli_output_emit(out, report);
	output_report_free(report);
	if (rc == 0 && produced == 0) {
		fprintf(stderr, "plumb stat: no backend could be calibrated\n");
		return 1;
	}
	return rc;
}

int cmd_stat(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "events", required_argument, 0, 'e' },
		{ "runs", required_argument, 0, 'r' },
		{ "repeat", required_argument, 0, 'r' }, /* perf stat's name, kept */
		{ "backend", required_argument, 0, 0x2001 },
		{ "all-domains", no_argument, 0, 0x2002 },
		{ "no-group", no_argument, 0, 0x2003 },
		{ "calibrate", no_argument, 0, 0x2004 },
		{ "iterations", required_argument, 0, 'n' },
		{ "per-run", no_argument, 0, 0x2005 },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 } };
	cli_output out = { OUTPUT_TABLE, NULL };
	const char *event_list = NULL, *backend = NULL;
	uint64_t repeat = 1, iterations = 10000;
	bool calibrate = false, per_run = false;
	counter_options counter_opts;
	memset(&counter_opts, 0, sizeof counter_opts);
	plumb_status status;
	int c;
	optind = 1;
	opterr = 0;
	/* '+': stop at the command, so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+:he:r:n:o:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'e': event_list = optarg; break;
		case 'r':
			if (parse_u64(optarg, 1, 100000, &repeat, &status) != 0)
				return cli_usage_error("stat", "-r: %s", status.message);
			break;
		case 'n':
			if (parse_u64(optarg, 2, 10000000, &iterations, &status) != 0)
				return cli_usage_error("stat", "-n: %s", status.message);
			break;
		case 0x2001: backend = optarg; break;
		case 0x2002: counter_opts.domain = COUNTER_DOMAIN_ALL; break;
		case 0x2003: counter_opts.no_group = true; break;
		case 0x2004: calibrate = true; break;
		case 0x2005: per_run = true; break;
		default:
			if (!cli_output_option(&out, c, optarg))
				return cli_bad_option("stat", c, argv);
		}
	}
	if (backend && strcmp(backend, "perf") && strcmp(backend, "papi") && strcmp(backend, "none"))
		return cli_usage_error("stat", "unknown backend '%s' (perf, papi or none)", backend);
	char storage[4096];
	const char *events[COUNTER_MAX_EVENTS];
	size_t n;
	if (!event_list)
		event_list = calibrate ? CALIBRATE_EVENTS : DEFAULT_EVENTS;
	if (counter_event_list_parse(event_list, storage, sizeof storage, events, &n, &status) != 0)
		return cli_usage_error("stat", "-e: %s", status.message);
	if (calibrate) {
		if (optind < argc)
			return cli_usage_error("stat", "--calibrate takes no command ('%s')", argv[optind]);
		return run_calibrate(backend, events, n, &counter_opts, (size_t)iterations, &out);
	}
	if (optind >= argc)
		return cli_usage_error("stat", "no command to count");
	return run_stat(backend ? backend : "perf", events, n, &counter_opts, (size_t)repeat, per_run,
	                argv + optind, &out);
}
