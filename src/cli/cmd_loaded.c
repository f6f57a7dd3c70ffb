/* plumb loaded: latency under load, swept from idle to saturation. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "core/cpu.h"
#include "loaded/loaded.h"
#include "core/parse.h"
#include "core/progress.h"
#include "core/timer.h"

const char cmd_loaded_summary[] = "latency under load: chase latency against bandwidth, as MLC";

#define MAX_CPUS 1024

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb loaded [options] [--csv | --json] [-o FILE]\n\n"
	        "One thread chases a random chain (latency) while the other CPUs run load\n"
	        "generators with a delay loop between accesses; the delay is swept from idle to\n"
	        "0 (saturation).  Prints latency against the bandwidth the generators achieved\n"
	        "while the latency was measured, then two checks: the idle point against plumb\n"
	        "lat's measuring loop on the same chain, and whether the rise can be queueing\n"
	        "at all (Hristea's queueing model, 1997).  Feed --json output to\n"
	        "'plumb model --from'.\n\n"
	        "  -C, --cpu LIST       CPUs: the first runs the latency thread, the others load\n"
	        "                       (default: all this process may run on)\n"
	        "  --generators N       use only the first N generator CPUs\n"
	        "  --pattern P          read, write or mixed generator streams (default read)\n"
	        "  --delays LIST        delay-loop iterations per access, e.g. 4096,256,16,0\n"
	        "                       (default 4096,1024,256,64,16,4,0)\n"
	        "  --size BYTES         latency chain's working set (default 64MiB)\n"
	        "  --generator-size B   each generator's buffer (default 64MiB)\n"
	        "  --loads N            chase loads per sample (default 100000)\n"
	        "  --chunk N            ... timed in chunks of N loads; chunks during which the\n"
	        "                       latency thread was switched out are left out\n"
	        "                       (default 2048)\n"
	        "  --samples N          timed samples per point (default 5; median and min)\n"
	        "  --timeout MS         longest wait for a generator (default 5000)\n"
	        "  --seed N             chain order\n"
	        "  --csv, --json        CSV or JSON output (schema: docs/output-schema.md)\n"
	        "  -o, --output FILE    write to FILE atomically\n"
	        "  -h, --help           this help\n");
}

static int parse_delays(const char *text, unsigned *delays, size_t *count, plumb_status *status)
{
	char copy[1024];
	if (strlen(text) >= sizeof copy)
		return plumb_fail(status, EINVAL, "--delays: list too long");
	snprintf(copy, sizeof copy, "%s", text);
	*count = 0;
	if (!text[0])
		return plumb_fail(status, EINVAL, "--delays: empty list");
	/* split by hand: strtok_r would pass over an empty value ("16,,0") without a word */
	for (char *word = copy, *next; word; word = next) {
		next = strchr(word, ',');
		if (next)
			*next++ = '\0';
		if (!word[0])
			return plumb_fail(status, EINVAL, "--delays: an empty value in '%s'", text);
		uint64_t value;
		if (*count == LOADED_MAX_POINTS - 1)
			return plumb_fail(status, EINVAL, "--delays: at most %d values", LOADED_MAX_POINTS - 1);
		if (parse_u64(word, 0, 10000000, &value, status) != 0)
			return -1;
		delays[(*count)++] = (unsigned)value;
	}
	if (*count == 0)
		return plumb_fail(status, EINVAL, "--delays: empty list");
	return 0;
}

static void on_progress(void *context, size_t done, size_t total)
{
	progress_step_of(context, done, total);
}

int cmd_loaded(int argc, char **argv)
{
	static const struct option options[] = {
		{ "cpu", required_argument, 0, 'c' }, { "generators", required_argument, 0, 'g' },
		{ "pattern", required_argument, 0, 'p' }, { "delays", required_argument, 0, 'd' },
		{ "size", required_argument, 0, 's' }, { "generator-size", required_argument, 0, 'G' },
		{ "loads", required_argument, 0, 'l' }, { "chunk", required_argument, 0, 'K' }, { "samples", required_argument, 0, 'n' },
		{ "timeout", required_argument, 0, 'T' }, { "seed", required_argument, 0, 'S' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS,
		/* the name before the common vocabulary (man plumb-loaded: kept for one release) */
		{ "cpus", required_argument, 0, 'c' }, { 0, 0, 0, 0 } };
	loaded_config config;
	loaded_config_default(&config);
	cli_output out = { .format = OUTPUT_TABLE };
	int cpus[MAX_CPUS], cpu_count = 0;
	long generator_limit = -1;
	unsigned delays[LOADED_MAX_POINTS];
	plumb_status status;
	uint64_t value;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hC:o:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'C': case 'c':
			if (parse_cpu_list(optarg, cpus, MAX_CPUS, &cpu_count, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			break;
		case 'g':
			if (parse_u64(optarg, 0, LOADED_MAX_GENERATORS, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			generator_limit = (long)value;
			break;
		case 'p':
			if (loaded_pattern_parse(optarg, &config.pattern) != 0)
				return cli_usage_error("loaded", "--pattern takes read, write or mixed, not '%s'", optarg);
			break;
		case 'd':
			if (parse_delays(optarg, delays, &config.delay_count, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			config.delays = delays;
			break;
		case 's':
		case 'G':
			if (parse_size(optarg, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			if (value < 64 * 64 || value > (64ull << 30))
				return cli_usage_error("loaded", "%s must be between 4KiB and 64GiB",
				                       c == 's' ? "--size" : "--generator-size");
			if (c == 's')
				config.chase_bytes = value;
			else
				config.generator_bytes = value;
			break;
		case 'l':
			if (parse_u64(optarg, 1, 1000000000, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			config.loads_per_sample = value;
			break;
		case 'K':
			if (parse_u64(optarg, 1, 1000000000, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			config.chunk_loads = value;
			break;
		case 'n':
			if (parse_u64(optarg, 1, 1000, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			config.samples = (int)value;
			break;
		case 'T':
			if (parse_u64(optarg, 1, 3600000, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			config.timeout_ns = value * 1000000u;
			break;
		case 'S':
			if (parse_u64(optarg, 0, UINT64_MAX, &value, &status) != 0)
				return cli_usage_error("loaded", "%s", status.message);
			config.seed = value;
			break;
		default:
			if (cli_output_option("loaded", &out, c, optarg))
				break;
			return cli_bad_option("loaded", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("loaded", "unexpected argument '%s'", argv[optind]);

	int allowed[MAX_CPUS];
	int allowed_count = cpu_allowed(allowed, MAX_CPUS, &status);
	if (allowed_count < 1)
		return cli_error("loaded", &status);
	bool choose = cpu_count == 0;
	if (cpu_count == 0) {
		memcpy(cpus, allowed, sizeof(int) * (size_t)allowed_count);
		cpu_count = allowed_count;
	}
	if (cpu_check_allowed(cpus, cpu_count, &status) != 0)
		return cli_usage_error("loaded", "--cpu: %s", status.message);
	/* More generators than CPUs to run them is a request that cannot be
	 * honoured: said, not quietly run with fewer. */
	int room = cpu_count - 1 < LOADED_MAX_GENERATORS ? cpu_count - 1 : LOADED_MAX_GENERATORS;
	if (generator_limit > room)
		return cli_usage_error("loaded", "--generators %ld: only %d CPU%s left for generators (the first "
		                       "of %d runs the latency thread)", generator_limit, room,
		                       room == 1 ? " is" : "s are", cpu_count);
	/* Without --cpu the latency thread goes on the quietest CPU, measured
	 * (20 ms each), and the generators on the others. */
	char choice[160] = "the first of --cpu";
	if (choose)
		loaded_place_latency(cpus, cpu_count, 20000000, choice, sizeof choice);
	config.latency_cpu_choice = choice;
	for (int i = 0; i < cpu_count; i++) {
		for (int j = 0; j < i; j++)
			if (cpus[j] == cpus[i])
				return cli_usage_error("loaded", "CPU %d is listed twice", cpus[i]);
	}
	config.latency_cpu = cpus[0];
	config.generator_cpus = cpus + 1;
	config.generators = cpu_count - 1;
	if (generator_limit >= 0)
		config.generators = (int)generator_limit;
	if (config.generators > LOADED_MAX_GENERATORS)
		config.generators = LOADED_MAX_GENERATORS;

	timer_calibration timer;
	if (timer_calibrate(&timer, 20, &status) != 0)
		timer_calibration_clock(&timer);
	loaded_point points[LOADED_MAX_POINTS];
	size_t count = 0;
	progress bar;
	progress_begin(&bar, "plumb loaded", 1 + (config.generators ? config.delay_count : 0));
	loaded_reference reference;
	int rc = loaded_run(&config, &timer, points, &count, &reference, on_progress, &bar, &status);
	progress_end(&bar);
	if (rc != 0)
		return cli_error("loaded", &status);

	output_report *r = output_report_new("loaded");
	loaded_report(&config, &timer, points, count, &reference, cpu_count, r);
	rc = cli_output_emit(&out, r);
	output_report_free(r);
	return rc;
}
