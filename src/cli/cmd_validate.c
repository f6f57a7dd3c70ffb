/* plumb validate: counter validation microbenchmarks, every source side
 * by side, and a verdict per event. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "cli/command.h"
#include "instrument/instrument.h"
#include "core/parse.h"
#include "sim/sim.h"
#include "validate/validate.h"

const char cmd_validate_summary[] = "check counters against microbenchmarks with predicted counts";

enum {
	OPT_BACKEND = 0x2001, OPT_RUNS, OPT_SIZES, OPT_MAX_SIZE, OPT_MAX_SIZE_BYTES, OPT_PRESET, OPT_SIM_SET, OPT_DIR, OPT_PLOT_FORMAT,
	OPT_VALGRIND, OPT_LIST, OPT_CASES, OPT_NO_PROGRESS, OPT_EXEC, OPT_EXEC_SIZE, OPT_EXEC_PAD,
	OPT_EXEC_BASE, OPT_EXEC_TRIPS, OPT_FIND_PADDING, OPT_BASE_OFFSET, OPT_PAIRS, OPT_THRESHOLD, OPT_CPU,
	OPT_VERIFICATION, OPT_NO_RECORD, OPT_SEED, OPT_CHECK_TRIPS
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb validate [options] [EVENTS|BENCHMARKS|all] [--backend LIST]\n"
	        "                      [--runs R] [--sizes LIST] [--max-count N] [--preset NAME]\n"
	        "                      [--set KEY=VALUE]... [-d DIR] [--plot-format png|svg]\n"
	        "                      [--cases] [--csv | --json] [-o FILE]\n\n"
	        "Runs validation microbenchmarks whose event counts have a closed form\n"
	        "(Salayandia 2002; Aguilera et al. 2005), R times each in fresh processes,\n"
	        "reads them through perf_event and PAPI, simulates their exact address\n"
	        "streams, counts them exactly under Valgrind, and classifies each (event,\n"
	        "source) suite: exact, accurate, bias, multiplicative, random or unknown,\n"
	        "with the fit reported = a + b*predicted, R^2 and the smallest count from\n"
	        "which the event is within 5%%.\n\n"
	        "  EVENTS              event or benchmark names (comma or space separated),\n"
	        "                      e.g. minor-faults, PAPI_L1_DCM, itv; default all\n"
	        "  --backend LIST      sources: perf, papi, sim, instrumented (or all); default\n"
	        "                      all.  synthetic:KIND[=M] adds counts made from the\n"
	        "                      prediction with an injected error (exact, bias,\n"
	        "                      multiplicative, random, unknown), to see how the\n"
	        "                      classifier names each\n"
	        "  --seed N            seed of the synthetic source (default 1)\n"
	        "  -r, --runs R        runs per test case for perf/PAPI (default 100)\n"
	        "  --sizes LIST        suite sizes, e.g. 1,10,100,1000 (default: powers of ten up\n"
	        "                      to each benchmark's maximum, plus 1000-steps for\n"
	        "                      capacity suites)\n"
	        "  --max-count N       cap of the default suites' sizes, a count of the events\n"
	        "                      each case predicts, not bytes (default per benchmark)\n"
	        "  --preset NAME       simulator preset (default host)\n"
	        "  --set KEY=VALUE     a simulator setting after the preset (repeatable), e.g.\n"
	        "                      prefetch=stream to see a prefetcher hide the stride misses\n"
	        "  -C, --cpu N         run the counted thread on CPU N (default the first\n"
	        "                      allowed; Salayandia (2002) compared P0 and P1 so)\n"
	        "  -d, --output-dir D  write D/validate.csv, D/validate.json (every raw run) and\n"
	        "                      the plot D/validate.png with its data and gnuplot script\n"
	        "  --plot-format F     png (default) or svg\n"
	        "  --valgrind PATH     the valgrind program (default valgrind)\n"
	        "  --threshold N=V     change a classification threshold: accurate=1, slope=5,\n"
	        "                      random-cv=10, reliable=5 (percent), bias=0.5,\n"
	        "                      random-stddev=1 (events), min-r2=0.9, min-cases=3\n"
	        "                      (defaults shown)\n"
	        "  --cases             also print every case with all sources side by side, and\n"
	        "                      the iteration check (loop trips counted at run time)\n"
	        "  --check-trips N     count the loop trips of every counted case of up to N\n"
	        "                      trips with execute breakpoints, in a run of its own\n"
	        "                      (default 100000; each trip traps; 0: no check)\n"
	        "  --list              list the benchmarks and their events\n"
	        "  --find-padding      the configuration benchmark: sweep the pad 0..page-4 and\n"
	        "                      find where the array's first page starts (Salayandia\n"
	        "                      2002, sec. 3.2)\n"
	        "  --base-offset B     with --find-padding: array start past a page (default 16)\n"
	        "  --pairs N           with --find-padding: pairs per run (default 16)\n"
	        "  --verification FILE record each perf/PAPI verdict for this CPU in FILE\n"
	        "                      (default $PLUMB_VERIFICATION; neither: nothing is\n"
	        "                      recorded); plumb events shows them\n"
	        "  --no-record         do not record verdicts\n"
	        "  --no-progress       no progress line on stderr\n"
	        "  --csv, --json       output format; JSON and CSV include every raw run\n"
	        "  -o, --output FILE   write to FILE (atomically) instead of stdout\n"
	        "  -h, --help          this help\n");
}

static int list_benchmarks(const cli_output *out)
{
	output_report *r = output_report_new("validate");
	validate_benchmarks_table(r);
	int rc = cli_output_emit(out, r);
	output_report_free(r);
	return rc;
}

static int find_padding(const cli_output *out, uint64_t base_offset, uint64_t pairs, bool every_pad)
{
	plumb_status status;
	output_report *r;
	if (validate_find_padding(base_offset, pairs, every_pad, &r, &status) != 0) return cli_error("validate", &status);
	int rc = cli_output_emit(out, r);
	output_report_free(r);
	return rc;
}

static int parse_sizes(const char *text, uint64_t *sizes, size_t *count)
{
	char copy[1024];
	plumb_status list_status;
	/* a longer list is refused, never cut: "000...00012" cut short is 1 */
	if (parse_list_check(text, sizeof copy - 1, &list_status) != 0)
		return cli_usage_error("validate", "--sizes: %s", list_status.message);
	snprintf(copy, sizeof copy, "%s", text);
	*count = 0;
	for (char *save = NULL, *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save)) {
		plumb_status status;
		if (*count >= 64) return cli_usage_error("validate", "at most 64 sizes");
		if (parse_u64(token, 1, 100000000, &sizes[*count], &status) != 0)
			return cli_usage_error("validate", "--sizes: %s", status.message);
		(*count)++;
	}
	if (*count == 0) return cli_usage_error("validate", "--sizes needs at least one size");
	return 0;
}

static int parse_backends(const char *text, bool sources[VALIDATE_SOURCE_COUNT], validate_synthetic *synthetic)
{
	char copy[256];
	plumb_status list_status;
	if (parse_list_check(text, sizeof copy - 1, &list_status) != 0)
		return cli_usage_error("validate", "--backend: %s", list_status.message);
	snprintf(copy, sizeof copy, "%s", text);
	for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) sources[s] = false;
	for (char *save = NULL, *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(token, "all")) {
			/* every source of this machine's counts; synthetic is never implied */
			for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) sources[s] = sources[s] || s != VALIDATE_SOURCE_SYNTHETIC;
		} else if (!strncasecmp(token, "synthetic:", 10)) {
			plumb_status status;
			uint64_t seed = synthetic->seed;
			if (validate_synthetic_parse(token + 10, synthetic, &status) != 0)
				return cli_usage_error("validate", "--backend %s: %s", token, status.message);
			synthetic->seed = seed;
			sources[VALIDATE_SOURCE_SYNTHETIC] = true;
		} else if (!strcasecmp(token, "synthetic")) {
			return cli_usage_error("validate", "--backend synthetic needs an error to inject: synthetic:KIND "
			                       "(exact, bias, multiplicative, random, unknown)");
		} else if (!strcasecmp(token, "perf") || !strcasecmp(token, "perf_event")) {
			sources[VALIDATE_SOURCE_PERF] = true;
		} else if (!strcasecmp(token, "papi")) {
			sources[VALIDATE_SOURCE_PAPI] = true;
		} else if (!strcasecmp(token, "sim") || !strcasecmp(token, "simulator")) {
			sources[VALIDATE_SOURCE_SIMULATOR] = true;
		} else if (!strcasecmp(token, "instrumented") || !strcasecmp(token, "valgrind")) {
			sources[VALIDATE_SOURCE_INSTRUMENTED] = true;
		} else {
			return cli_usage_error("validate", "unknown backend '%s' (perf, papi, sim, instrumented, all, "
			                       "synthetic:KIND)", token);
		}
	}
	return 0;
}

static int write_files(const char *directory, const validate_results *results, const validate_options *o,
                       const char *plot_format)
{
	plumb_status status, plot_status;
	char image[4096];
	if (validate_write_folder(directory, results, o, plot_format, image, sizeof image, &plot_status, &status) != 0)
		return cli_error("validate", &status);
	if (!image[0])
		fprintf(stderr, "plumb validate: no plot: %s\n", plot_status.message);
	else
		fprintf(stderr, "plumb validate: wrote %s/validate.{json,csv} and %s\n", directory, image);
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "help", no_argument, 0, 'h' },
		{ "backend", required_argument, 0, OPT_BACKEND },
		{ "runs", required_argument, 0, OPT_RUNS },
		{ "sizes", required_argument, 0, OPT_SIZES },
		{ "max-count", required_argument, 0, OPT_MAX_SIZE },
		{ "max-size", required_argument, 0, OPT_MAX_SIZE_BYTES },
		{ "preset", required_argument, 0, OPT_PRESET },
		{ "set", required_argument, 0, OPT_SIM_SET },
		{ "output-dir", required_argument, 0, 'd' },
		{ "plot-format", required_argument, 0, OPT_PLOT_FORMAT },
		{ "valgrind", required_argument, 0, OPT_VALGRIND },
		{ "list", no_argument, 0, OPT_LIST },
		{ "cases", no_argument, 0, OPT_CASES },
		{ "no-progress", no_argument, 0, OPT_NO_PROGRESS },
		{ "exec", required_argument, 0, OPT_EXEC },
		{ "exec-size", required_argument, 0, OPT_EXEC_SIZE },
		{ "exec-pad", required_argument, 0, OPT_EXEC_PAD },
		{ "exec-base-offset", required_argument, 0, OPT_EXEC_BASE },
		{ "exec-inner-trips", required_argument, 0, OPT_EXEC_TRIPS },
		{ "find-padding", no_argument, 0, OPT_FIND_PADDING },
		{ "base-offset", required_argument, 0, OPT_BASE_OFFSET },
		{ "pairs", required_argument, 0, OPT_PAIRS },
		{ "threshold", required_argument, 0, OPT_THRESHOLD },
		{ "cpu", required_argument, 0, OPT_CPU },
		{ "verification", required_argument, 0, OPT_VERIFICATION },
		{ "no-record", no_argument, 0, OPT_NO_RECORD },
		{ "seed", required_argument, 0, OPT_SEED },
		{ "check-trips", required_argument, 0, OPT_CHECK_TRIPS },
		/* the names before the common vocabulary (man plumb-validate: kept for one release) */
		{ "sim-preset", required_argument, 0, OPT_PRESET },
		{ "sim-set", required_argument, 0, OPT_SIM_SET },
		{ 0, 0, 0, 0 }
	};
	cli_output out = { .format = OUTPUT_TABLE };
	validate_options o;
	validate_options_default(&o);
	o.progress = true;
	uint64_t sizes[64];
	const char *sim_settings[32];
	size_t sim_setting_count = 0;
	const char *directory = NULL, *plot_format = "png", *exec = NULL;
	validate_exec_request exec_request;
	validate_exec_request_default(&exec_request);
	bool list = false, cases = false, padding = false;
	bool record = true;
	const char *verification = NULL;
	uint64_t base_offset = 16, pairs = 16;
	plumb_status status;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hr:C:o:d:", options, NULL)) != -1) {
		uint64_t value;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_BACKEND:
			if (parse_backends(optarg, o.sources, &o.synthetic) != 0) return 2;
			break;
		case OPT_RUNS: case 'r':
			if (parse_u64(optarg, 1, 100000, &value, &status) != 0)
				return cli_usage_error("validate", "--runs: %s", status.message);
			o.runs = value;
			break;
		case OPT_SIZES:
			if (parse_sizes(optarg, sizes, &o.size_count) != 0) return 2;
			o.sizes = sizes;
			break;
		case OPT_MAX_SIZE_BYTES:
			/* --max-size is a size in bytes in every other command; here
			 * the cap is a count, so it has a name of its own. */
			return cli_usage_error("validate", "--max-size is a size in bytes elsewhere; validate's cap is a "
			                       "count of events: --max-count N");
		case OPT_MAX_SIZE:
			if (parse_u64(optarg, 1, 100000000, &o.max_size, &status) != 0)
				return cli_usage_error("validate", "--max-count: %s", status.message);
			break;
		case OPT_PRESET: {
			/* checked now: an unknown preset is one usage error, not a failure in
			 * every simulated row */
			sim_config check;
			if (sim_preset(&check, optarg, &status) != 0 && status.code == EINVAL)
				return cli_usage_error("validate", "--preset: %s", status.message);
			o.sim_preset = optarg;
			break;
		}
		case OPT_SIM_SET: {
			/* checked now, against the default configuration, so a bad key
			 * is one usage error and not a failure in every simulated case */
			sim_config check;
			sim_config_default(&check);
			if (sim_config_assign(&check, optarg, &status) != 0)
				return cli_usage_error("validate", "--set: %s", status.message);
			if (sim_setting_count == sizeof sim_settings / sizeof sim_settings[0])
				return cli_usage_error("validate", "--set: at most %zu settings",
				                       sizeof sim_settings / sizeof sim_settings[0]);
			sim_settings[sim_setting_count++] = optarg;
			o.sim_settings = sim_settings;
			o.sim_setting_count = sim_setting_count;
			break;
		}
		case 'd': directory = optarg; break;
		case OPT_PLOT_FORMAT:
			if (strcmp(optarg, "png") && strcmp(optarg, "svg"))
				return cli_usage_error("validate", "--plot-format must be png or svg, not '%s'", optarg);
			plot_format = optarg;
			break;
		case OPT_VALGRIND: {
			/* checked now: a Valgrind that cannot be run is one error, not
			 * an unsupported instrumented row after the whole run */
			char found[4096];
			if (instrument_find_valgrind(optarg, found, sizeof found, &status) != 0)
				return cli_error("validate", &status);
			o.valgrind = optarg;
			break;
		}
		case OPT_LIST: list = true; break;
		case OPT_FIND_PADDING: padding = true; break;
		case OPT_CPU: case 'C': {
			long cpu;
			if (parse_int(optarg, 0, 65535, &cpu, &status) != 0)
				return cli_usage_error("validate", "--cpu: %s", status.message);
			o.counted_cpu = (int)cpu;
			break;
		}
		case OPT_THRESHOLD:
			if (validate_threshold_assign(&o.thresholds, optarg, &status) != 0)
				return cli_usage_error("validate", "--threshold%s%s", status.code == ENOENT ? ": " : " ",
				                       status.message);
			break;
		case OPT_BASE_OFFSET:
			if (parse_u64(optarg, 0, 1 << 20, &base_offset, &status) != 0 || base_offset % 4 != 0)
				return cli_usage_error("validate", "--base-offset: a multiple of 4 up to 1 MiB, not '%s'", optarg);
			break;
		case OPT_PAIRS:
			if (parse_u64(optarg, 1, 100000, &pairs, &status) != 0)
				return cli_usage_error("validate", "--pairs: %s", status.message);
			break;
		case OPT_CASES: cases = true; break;
		case OPT_VERIFICATION:
			if (!optarg[0]) return cli_usage_error("validate", "--verification needs a file name");
			verification = optarg;
			break;
		case OPT_NO_RECORD: record = false; break;
		case OPT_CHECK_TRIPS:
			if (parse_u64(optarg, 0, 1000000000, &o.check_trips_max, &status) != 0)
				return cli_usage_error("validate", "--check-trips: %s", status.message);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &o.synthetic.seed, &status) != 0)
				return cli_usage_error("validate", "--seed: %s", status.message);
			break;
		case OPT_NO_PROGRESS: o.progress = false; break;
		case OPT_EXEC: exec = optarg; break;
		case OPT_EXEC_SIZE:
			if (parse_u64(optarg, 1, 1000000000, &exec_request.size, &status) != 0)
				return cli_usage_error("validate", "--exec-size: %s", status.message);
			break;
		case OPT_EXEC_PAD:
			if (parse_u64(optarg, 0, 1 << 30, &exec_request.pad, &status) != 0)
				return cli_usage_error("validate", "--exec-pad: %s", status.message);
			exec_request.have_pad = true;
			break;
		case OPT_EXEC_BASE:
			if (parse_u64(optarg, 0, 1 << 30, &exec_request.base_offset, &status) != 0)
				return cli_usage_error("validate", "--exec-base-offset: %s", status.message);
			exec_request.have_base_offset = true;
			break;
		case OPT_EXEC_TRIPS:
			if (parse_u64(optarg, 1, 1000000, &value, &status) != 0)
				return cli_usage_error("validate", "--exec-inner-trips: %s", status.message);
			exec_request.inner_trips = (unsigned)value;
			break;
		default:
			if (!cli_output_option("validate", &out, c, optarg)) return cli_bad_option("validate", c, argv);
		}
	}
	if (record && verification && counter_verification_check(verification, &status) != 0)
		return cli_error("validate", &status);
	if (exec) {
		/* one kernel, once, uncounted: what Valgrind instruments */
		const validate_benchmark *b = validate_benchmark_find(exec);
		if (!b) return cli_usage_error("validate", "no benchmark '%s'", exec);
		return validate_exec(b, &exec_request, &status) != 0 ? cli_error("validate", &status) : 0;
	}
	if (list) return list_benchmarks(&out);
	/* The table format shows the interesting rows; CSV/JSON every pad. */
	if (padding) return find_padding(&out, base_offset, pairs, cases || out.format != OUTPUT_TABLE);
	/* The output folder is made before the runs: one that cannot be made
	 * fails now, not after minutes of runs. */
	bool made_directory = false;
	if (directory && validate_make_folder(directory, &made_directory, &status) != 0)
		return cli_error("validate", &status);

	/* Selectors: positional words, each possibly a comma list. */
	char *storage = NULL;
	const char *selectors[128];
	size_t selector_count = 0;
	size_t total = 0;
	for (int i = optind; i < argc; i++) total += strlen(argv[i]) + 1;
	if (total) {
		storage = malloc(total);
		if (!storage) return 1;
		char *cursor = storage;
		for (int i = optind; i < argc; i++) {
			strcpy(cursor, argv[i]);
			for (char *save = NULL, *token = strtok_r(cursor, ",", &save); token;
			     token = strtok_r(NULL, ",", &save))
				if (selector_count < 128) selectors[selector_count++] = token;
			cursor += strlen(argv[i]) + 1;
		}
	}
	o.selectors = selectors;
	o.selector_count = selector_count;
	if (!isatty(STDERR_FILENO)) o.progress = false;

	validate_results results;
	if (validate_run(&o, &results, &status) != 0) {
		free(storage);
		validate_results_free(&results);
		if (made_directory) rmdir(directory);
		return status.code == EINVAL ? cli_usage_error("validate", "%s", status.message)
		                             : cli_error("validate", &status);
	}
	/* On a terminal: the verdicts (with --cases, each case too); CSV and JSON
	 * carry every table and raw run. */
	output_report *r = validate_report(&results, &o, cases, out.format != OUTPUT_TABLE);
	/* A failure to record does not undo the measurement: one warning line,
	 * and the table is still printed. */
	if (record && validate_report_record(r, &results, &o.thresholds, verification, &status) != 0)
		fprintf(stderr, "plumb validate: warning: verdicts not recorded: %s\n", status.message);
	validate_report_notes(r, &results);
	int rc = cli_output_emit(&out, r);
	output_report_free(r);
	if (rc == 0 && directory) rc = write_files(directory, &results, &o, plot_format);
	validate_results_free(&results);
	free(storage);
	return rc;
}
