/* plumb stat: counts a command's events the way perf stat does, through
 * either backend, over N runs (each a fresh process, the seeds' rule: a loop
 * inside one process would reuse warm caches and page tables), and reports
 * mean, stddev and CV.  --calibrate measures the counter interface itself. */
#include <getopt.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "counters/counter_stat.h"
#include "counters/counters.h"
#include "core/parse.h"

const char cmd_stat_summary[] = "count a command's events (perf or PAPI), or calibrate the counters";

static void usage(FILE *f)
{
	fprintf(f, "usage: plumb stat [options] [-e EVENT[,EVENT...]] [-r N] [--] COMMAND [ARGS]\n"
	           "       plumb stat --calibrate [-e EVENTS] [-n ITERATIONS] [--backend perf|papi]\n\n"
	           "Counts COMMAND's events (it and its children) N times, each run a fresh process,\n"
	           "and prints what perf stat prints, on stderr so that COMMAND's output is left\n"
	           "alone: each event's mean (times in msec), its rate (CPUs utilized, per second)\n"
	           "and, over several runs, +- the standard error of the mean in %%.\n"
	           "Events are perf names (page-faults, task-clock, cycles, L1-dcache-load-misses),\n"
	           "raw r<hex>, PAPI presets (PAPI_L1_DCM), native names (perf::PAGE-FAULTS,\n"
	           "icx::L1D:REPLACEMENT), the kernel's PMUs as perf writes them (msr/tsc/,\n"
	           "cpu/event=0x3c,umask=0/), tracepoints (sched:sched_switch) or perf's tool event\n"
	           "duration_time.  An event this machine cannot count is reported 'unsupported'\n"
	           "with the reason, never as a number.\n\n"
	           "  -e, --events LIST    comma-separated events (default: task-clock,page-faults,\n"
	           "                       context-switches,cpu-migrations,cycles,instructions)\n"
	           "  -r, --runs N         runs (default 1; --repeat is perf's name for it)\n"
	           "      --backend B      perf (default), papi or none\n"
	           "      --all-domains    count kernel as well as user space (needs root,\n"
	           "                       CAP_PERFMON or perf_event_paranoid <= 1); the default\n"
	           "                       when allowed, as in perf stat\n"
	           "      --user-only      count user space only (the default otherwise)\n"
	           "      --no-group       open each event on its own instead of one group\n"
	           "      --per-run        add a table with every run's value of every event\n"
	           "      --calibrate      count an empty region: bias in events, cost of\n"
	           "                       start/stop/read\n"
	           "  -n, --iterations N   empty regions per calibration (default 10000)\n"
	           "      --csv            CSV output\n"
	           "      --json           JSON output (schema: docs/output-schema.md)\n"
	           "  -o, --output FILE    write to FILE (atomically) instead of stderr; - for\n"
	           "                       stdout\n"
	           "  -h, --help           this help\n");
}

/* The table goes where perf stat's goes: to stderr, so the command's own
 * output on stdout is left as it was; -o FILE (or -o - for stdout) moves it. */
static int emit(const cli_output *out, const counter_stat_request *request, const counter_stat_result *result,
                const output_report *report)
{
	plumb_status status;
	if (out->path) {
		if (out->format != OUTPUT_TABLE)
			return cli_output_emit(out, report);
		if (!strcmp(out->path, "-")) {
			counter_stat_print(stdout, request, result, report);
			return fflush(stdout) == 0 ? 0 : CLI_EXIT_FAILURE;
		}
		output_file file;
		if (output_file_open(&file, out->path, &status) != 0)
			return cli_error("stat", &status);
		counter_stat_print(file.stream, request, result, report);
		if (output_file_commit(&file, &status) != 0)
			return cli_error("stat", &status);
		return 0;
	}
	fflush(stdout);
	if (out->format == OUTPUT_TABLE) {
		counter_stat_print(stderr, request, result, report);
		fflush(stderr);
		return 0;
	}
	if (out->format == OUTPUT_CSV) {
		if (output_write_csv_stream(report, out->table, stderr, &status) != 0)
			return out->table && !output_table_find(report, out->table)
			       ? cli_usage_error("stat", "--table: %s", status.message)
			       : cli_error("stat", &status);
		return 0;
	}
	if (output_write(report, out->format, stderr, &status) != 0)
		return cli_error("stat", &status);
	return 0;
}

static int run_stat(const counter_stat_request *request, bool per_run, const cli_output *out)
{
	plumb_status status;
	counter_stat_result result;
	if (counter_stat_run_command(request, &result, &status) != 0) {
		counter_stat_result_free(&result);
		return cli_error("stat", &status);
	}
	output_report *report = counter_stat_report(request, &result, per_run);
	if (!report) {
		counter_stat_result_free(&result);
		fprintf(stderr, "plumb stat: out of memory\n");
		return CLI_EXIT_FAILURE;
	}
	int rc = emit(out, request, &result, report);
	output_report_free(report);
	size_t failed_runs = result.failed_runs, unsupported = result.unsupported;
	int bad = result.last_bad_status;
	counter_stat_result_free(&result);
	/* As perf stat does, plumb stat ends with the command's own status
	 * (of its last failed run), so that a script's "plumb stat -- make &&"
	 * behaves as "make &&" would; a command killed by a signal gives 128 + it. */
	int command_status = WIFEXITED(bad) ? WEXITSTATUS(bad) : WIFSIGNALED(bad) ? 128 + WTERMSIG(bad) : 1;
	if (rc == 0 && failed_runs && WIFEXITED(bad) && (WEXITSTATUS(bad) == 126 || WEXITSTATUS(bad) == 127)) {
		fprintf(stderr, "plumb stat: the command did not start in %zu of %zu runs (exit status %d: a missing "
		        "shared library, file or interpreter?)\n", failed_runs, request->runs, WEXITSTATUS(bad));
		return command_status;
	}
	if (rc == 0 && failed_runs) {
		fprintf(stderr, "plumb stat: the command failed in %zu of %zu runs\n", failed_runs, request->runs);
		return command_status ? command_status : CLI_EXIT_FAILURE;
	}
	/* An event the user named and that was not counted is a failure of the
	 * request, even though the table says why: scripts must not take the
	 * other numbers as the whole answer.  perf stat's default list is not a
	 * request: it shows <not supported> and exits 0, and so does plumb. */
	if (rc == 0 && unsupported && request->events_named) {
		fprintf(stderr, "plumb stat: %zu of %zu events cannot be counted here (the table says why)\n", unsupported,
		        request->event_count);
		return CLI_EXIT_UNCOUNTED;
	}
	return rc;
}

static int run_calibrate(const char *backend, const char *const *events, size_t n, const counter_options *base,
                         size_t iterations, const cli_output *out)
{
	size_t calibrated;
	output_report *report = counter_stat_calibration_report(backend, events, n, base, iterations, &calibrated);
	int rc = cli_output_emit(out, report);
	output_report_free(report);
	if (rc == 0 && calibrated == 0) {
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
		{ "user-only", no_argument, 0, 0x2006 },
		{ "no-group", no_argument, 0, 0x2003 },
		{ "calibrate", no_argument, 0, 0x2004 },
		{ "iterations", required_argument, 0, 'n' },
		{ "per-run", no_argument, 0, 0x2005 },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	const char *event_list = NULL, *backend = NULL;
	uint64_t repeat = 1, iterations = 10000;
	bool calibrate = false, per_run = false, domain_given = false;
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
		case 0x2002: counter_opts.domain = COUNTER_DOMAIN_ALL; domain_given = true; break;
		case 0x2006: counter_opts.domain = COUNTER_DOMAIN_USER; domain_given = true; break;
		case 0x2003: counter_opts.no_group = true; break;
		case 0x2004: calibrate = true; break;
		case 0x2005: per_run = true; break;
		default:
			if (!cli_output_option("stat", &out, c, optarg))
				return cli_bad_option("stat", c, argv);
		}
	}
	if (backend && strcmp(backend, "perf") && strcmp(backend, "papi") && strcmp(backend, "none"))
		return cli_usage_error("stat", "unknown backend '%s' (perf, papi or none)", backend);
	char storage[4096];
	const char *events[COUNTER_MAX_EVENTS];
	size_t n;
	bool events_named = event_list != NULL;
	if (!event_list)
		event_list = calibrate ? COUNTER_STAT_CALIBRATE_EVENTS : COUNTER_STAT_DEFAULT_EVENTS;
	if (counter_event_list_parse(event_list, storage, sizeof storage, events, &n, &status) != 0)
		return cli_usage_error("stat", "-e: %s", status.message);
	if (calibrate) {
		if (optind < argc)
			return cli_usage_error("stat", "--calibrate takes no command ('%s')", argv[optind]);
		return run_calibrate(backend, events, n, &counter_opts, (size_t)iterations, &out);
	}
	if (optind >= argc)
		return cli_usage_error("stat", "no command to count");
	/* perf stat's domain for this user unless told: user and kernel when the
	 * kernel allows it, so context-switches read what perf reads. */
	if (!domain_given)
		counter_opts.domain = counter_stat_default_domain();
	counter_stat_request request = {
		.backend = backend ? backend : "perf", .events = events, .event_count = n,
		.events_named = events_named, .options = counter_opts, .command = argv + optind,
		.runs = (size_t)repeat,
	};
	return run_stat(&request, per_run, &out);
}
