/* plumb c2c: cache-to-cache coherence costs between cores. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "coherence/c2c.h"
#include "core/cpu.h"
#include "core/parse.h"
#include "core/timer.h"

const char cmd_c2c_summary[] = "cache-to-cache costs by MESI state, ping-pong, false sharing";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb c2c [options] [--csv | --json] [-o FILE]\n\n"
	        "Measures what a load, a store, an atomic add and a compare-and-swap by CPU A\n"
	        "cost on lines that CPU B holds Modified, Exclusive or Shared, or that nobody\n"
	        "caches; ping-pong round trips; a store invalidating k sharers; and false\n"
	        "sharing.  Helper threads prepare the state before every timed pass (Hristea's\n"
	        "recipes, 1997).\n\n"
	        "  -C, --cpu LIST     CPUs to use (default: all this process may run on)\n"
	        "  --pair A,B         this ordered pair instead of one per topology distance\n"
	        "  --matrix           every ordered pair: load-from-Modified and ping-pong\n"
	        "  --only LIST        of pairs, states, invalidate, false-sharing (default all)\n"
	        "  --lines N          lines in the random chain (default 2048)\n"
	        "  --spacing BYTES    distance between lines, multiple of 64 (default 128)\n"
	        "  --samples N        timed passes per measurement (default 11; median and min)\n"
	        "  --round-trips N    ping-pong round trips per trial (default 5000)\n"
	        "  --duration MS      false-sharing window per layout and repeat (default 100)\n"
	        "  --timeout MS       longest wait for a helper thread (default 2000)\n"
	        "  --seed N           seed of the chain order\n"
	        "  --csv, --json      CSV or JSON output (schema: docs/output-schema.md)\n"
	        "  -o, --output FILE  write to FILE atomically\n"
	        "  -h, --help         this help\n\n"
	        "Cases that need more CPUs than are available are reported as skipped, with why.\n");
}



static int parse_sections(const char *text, unsigned *out)
{
	char copy[256];
	plumb_status list_status;
	if (parse_list_check(text, sizeof copy - 1, &list_status) != 0)
		return -1;
	snprintf(copy, sizeof copy, "%s", text);
	*out = 0;
	for (char *save = NULL, *word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		if (!strcmp(word, "pairs"))
			*out |= C2C_SECTION_PAIRS;
		else if (!strcmp(word, "states"))
			*out |= C2C_SECTION_STATES;
		else if (!strcmp(word, "invalidate"))
			*out |= C2C_SECTION_INVALIDATE;
		else if (!strcmp(word, "false-sharing"))
			*out |= C2C_SECTION_FALSE_SHARING;
		else
			return -1;
	}
	return *out ? 0 : -1;
}

static int parse_options(int argc, char **argv, c2c_run_options *o, cli_output *out, int *exit_code)
{
	static const struct option options[] = {
		{ "cpu", required_argument, 0, 'c' }, { "pair", required_argument, 0, 'p' },
		{ "matrix", no_argument, 0, 'm' }, { "only", required_argument, 0, 'O' },
		{ "lines", required_argument, 0, 'l' }, { "spacing", required_argument, 0, 's' },
		{ "samples", required_argument, 0, 't' }, { "round-trips", required_argument, 0, 'r' },
		{ "duration", required_argument, 0, 'd' }, { "timeout", required_argument, 0, 'T' },
		{ "seed", required_argument, 0, 'S' }, { "help", no_argument, 0, 'h' },
		/* the names before the common vocabulary (man plumb-c2c: kept for one release) */
		{ "cpus", required_argument, 0, 'c' }, { "trials", required_argument, 0, 't' },
		CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 } };
	plumb_status status;
	uint64_t value;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hC:o:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); *exit_code = 0; return -1;
		case 'C': case 'c':
			if (parse_cpu_list(optarg, o->cpus, C2C_MAX_CPUS, &o->cpu_count, &status) != 0)
				goto bad_value;
			break;
		case 'p': {
			int pair[2], n;
			if (parse_cpu_list(optarg, pair, 2, &n, &status) != 0)
				goto bad_value;
			if (n != 2 || pair[0] == pair[1]) {
				*exit_code = cli_usage_error("c2c", "--pair needs two different CPUs, as A,B");
				return -1;
			}
			o->pair[0] = pair[0];
			o->pair[1] = pair[1];
			o->has_pair = true;
			break;
		}
		case 'm': o->matrix = true; break;
		case 'O':
			if (parse_sections(optarg, &o->sections) != 0) {
				*exit_code = cli_usage_error("c2c", "--only takes pairs, states, invalidate, false-sharing; got '%s'",
				                             optarg);
				return -1;
			}
			break;
		case 'l':
			if (parse_u64(optarg, 2, 1u << 24, &value, &status) != 0)
				goto bad_value;
			o->config.lines = value;
			break;
		case 's':
			if (parse_size(optarg, &value, &status) != 0)
				goto bad_value;
			if (value < 64 || value % 64 || value > (1u << 20)) {
				*exit_code = cli_usage_error("c2c", "--spacing must be a multiple of 64 up to 1MiB");
				return -1;
			}
			o->config.spacing = value;
			break;
		case 't':
			if (parse_u64(optarg, 1, 1000, &value, &status) != 0)
				goto bad_value;
			o->config.trials = (int)value;
			break;
		case 'r':
			if (parse_u64(optarg, 1, 100000000, &value, &status) != 0)
				goto bad_value;
			o->round_trips = value;
			break;
		case 'd':
			if (parse_u64(optarg, 1, 60000, &value, &status) != 0)
				goto bad_value;
			o->duration_ns = value * 1000000u;
			break;
		case 'T':
			if (parse_u64(optarg, 1, 3600000, &value, &status) != 0)
				goto bad_value;
			o->config.timeout_ns = value * 1000000u;
			break;
		case 'S':
			if (parse_u64(optarg, 0, UINT64_MAX, &value, &status) != 0)
				goto bad_value;
			o->config.seed = value;
			break;
		default:
			if (cli_output_option("c2c", out, c, optarg))
				break;
			*exit_code = cli_bad_option("c2c", c, argv);
			return -1;
		}
	}
	if (optind < argc) {
		*exit_code = cli_usage_error("c2c", "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	return 0;
bad_value:
	*exit_code = cli_usage_error("c2c", "%s", status.message);
	return -1;
}

int cmd_c2c(int argc, char **argv)
{
	c2c_run_options o;
	c2c_run_options_default(&o);
	cli_output out = { .format = OUTPUT_TABLE };
	int exit_code = 0;
	if (parse_options(argc, argv, &o, &out, &exit_code) != 0)
		return exit_code;
	plumb_status status;
	int allowed[C2C_MAX_CPUS];
	int allowed_count = cpu_allowed(allowed, C2C_MAX_CPUS, &status);
	if (allowed_count < 0)
		return cli_error("c2c", &status);
	if (o.cpu_count == 0) {
		memcpy(o.cpus, allowed, sizeof(int) * (size_t)allowed_count);
		o.cpu_count = allowed_count;
	}
	if (cpu_check_allowed(o.cpus, o.cpu_count, &status) != 0)
		return cli_usage_error("c2c", "--cpu: %s", status.message);
	if (o.has_pair && cpu_check_allowed(o.pair, 2, &status) != 0)
		return cli_usage_error("c2c", "--pair: %s", status.message);
	timer_calibration timer;
	if (timer_calibrate(&timer, 20, &status) != 0)
		timer_calibration_clock(&timer);
	output_report *r = output_report_new("c2c");
	if (c2c_run(&o, &timer, r, &status) != 0) {
		output_report_free(r);
		return cli_error("c2c", &status);
	}
	int rc = cli_output_emit(&out, r);
	output_report_free(r);
	return rc;
}
