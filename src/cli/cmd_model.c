/* plumb model: seed 001's closed M/D/1 model, fitted to measurements or
 * evaluated for given parameters, and used to predict beyond the machine. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "core/cpu.h"
#include "model/model.h"
#include "core/parse.h"

const char cmd_model_summary[] = "M/D/1 queueing model: a service time fitted to loaded latency";

#define MAX_AT 64

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb model --from FILE [options] [--csv | --json] [-o FILE]\n"
	        "       plumb model --service NS --l0 NS [options]\n\n"
	        "Hristea's closed M/D/1 model (1997): latency L under generator contention C\n"
	        "solves\n"
	        "  L = L0 + (S^2/2)(C/CLS) / (1 - S(C/CLS + 1/L))   (eq. 5.18; larger root)\n"
	        "With --from, fits the service time S by least squares to measured (bandwidth,\n"
	        "latency) points: 'plumb loaded --json' output or any CSV of pairs (MB/s, ns).\n"
	        "Then predicts latency at higher contention and for more processors.\n\n"
	        "  --from FILE        measurements ('-' = stdin)\n"
	        "  --service NS       use this service time instead of fitting\n"
	        "  --l0 NS            unloaded latency (default: the zero-bandwidth point, else\n"
	        "                     fitted)\n"
	        "  --line-size BYTES  bytes per request (default: from the loaded JSON, else 64)\n"
	        "  --peak-at-least MB/S\n"
	        "                     a bandwidth the memory is known to sustain (plumb bw's\n"
	        "                     DRAM figure; plumb report passes it): S at most line/MB/S\n"
	        "  --at LIST          also predict at these contentions (MB/s), e.g. 100,200\n"
	        "  --processors N     predict for 1..N processors chasing like the latency thread\n"
	        "                     (default: 4 x this machine's CPUs, at least 16)\n"
	        "  --csv, --json      CSV or JSON output (schema: docs/output-schema.md)\n"
	        "  -o, --output FILE  write to FILE atomically\n"
	        "  -h, --help         this help\n");
}

static int parse_list(const char *text, double *values, size_t *count, plumb_status *status)
{
	char copy[2048];
	if (strlen(text) >= sizeof copy)
		return plumb_fail(status, EINVAL, "--at: list too long");
	plumb_status list_status;
	if (parse_list_check(text, 0, &list_status) != 0)
		return plumb_fail(status, EINVAL, "--at: %s", list_status.message);
	snprintf(copy, sizeof copy, "%s", text);
	*count = 0;
	for (char *save = NULL, *word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		if (*count == MAX_AT)
			return plumb_fail(status, EINVAL, "--at: at most %d values", MAX_AT);
		if (parse_double(word, 0, 1e9, &values[*count], status) != 0)
			return -1;
		(*count)++;
	}
	return *count ? 0 : plumb_fail(status, EINVAL, "--at: empty list");
}

int cmd_model(int argc, char **argv)
{
	static const struct option options[] = {
		{ "from", required_argument, 0, 'f' }, { "service", required_argument, 0, 's' },
		{ "l0", required_argument, 0, 'L' }, { "line-size", required_argument, 0, 'c' },
		{ "line", required_argument, 0, 'c' }, /* the old name (man plumb-model) */
		{ "at", required_argument, 0, 'a' }, { "processors", required_argument, 0, 'P' },
		{ "peak-at-least", required_argument, 0, 'B' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	const char *from = NULL;
	double service = 0, l0 = 0, line = 0, min_peak = 0, at[MAX_AT];
	size_t at_count = 0;
	uint64_t processors = 0, value;
	plumb_status status;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'f': from = optarg; break;
		case 's':
			if (parse_double(optarg, 1e-6, 1e12, &service, &status) != 0)
				return cli_usage_error("model", "--service: %s", status.message);
			break;
		case 'L':
			if (parse_double(optarg, 1e-6, 1e12, &l0, &status) != 0)
				return cli_usage_error("model", "--l0: %s", status.message);
			break;
		case 'c':
			if (parse_u64(optarg, 1, 1u << 20, &value, &status) != 0)
				return cli_usage_error("model", "--line-size: %s", status.message);
			line = (double)value;
			break;
		case 'B':
			if (parse_double(optarg, 1e-3, 1e12, &min_peak, &status) != 0)
				return cli_usage_error("model", "--peak-at-least: %s", status.message);
			break;
		case 'a':
			if (parse_list(optarg, at, &at_count, &status) != 0)
				return cli_usage_error("model", "%s", status.message);
			break;
		case 'P':
			if (parse_u64(optarg, 1, 1000000, &processors, &status) != 0)
				return cli_usage_error("model", "--processors: %s", status.message);
			break;
		default:
			if (cli_output_option("model", &out, c, optarg))
				break;
			return cli_bad_option("model", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("model", "unexpected argument '%s'", argv[optind]);
	if (!from && !(service > 0 && l0 > 0))
		return cli_usage_error("model", "give --from FILE to fit, or both --service and --l0 to evaluate");
	if (min_peak > 0 && !(from && service <= 0))
		return cli_usage_error("model", "--peak-at-least bounds a fit: give --from FILE, without --service");
	if (processors == 0) {
		int cpus[1024];
		int n = cpu_allowed(cpus, 1024, NULL);
		processors = n > 4 ? (uint64_t)n * 4 : 16;
	}

	model_input input = { 0 };
	if (from && model_input_read(from, &input, &status) != 0)
		return cli_error("model", &status);
	model_report_options request = { .input = from ? &input : NULL,
	                                 .source = from && strcmp(from, "-") == 0 ? "<stdin>" : from, .service_ns = service,
	                                 .unloaded_latency_ns = l0, .line_bytes = line, .min_peak_mb_s = min_peak,
	                                 .at = at, .at_count = at_count,
	                                 .processors = (unsigned)processors };
	output_report *r = output_report_new("model");
	if (model_report(&request, r, &status) != 0) {
		model_input_free(&input);
		output_report_free(r);
		return cli_error("model", &status);
	}
	model_input_free(&input);
	int rc = cli_output_emit(&out, r);
	output_report_free(r);
	return rc;
}
