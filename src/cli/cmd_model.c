/* plumb model: seed 001's closed M/D/1 model, fitted to measurements or
 * evaluated for given parameters, and used to predict beyond the machine. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "plumb/cpu.h"
#include "plumb/model.h"
#include "plumb/parse.h"

const char cmd_model_summary[] = "closed M/D/1 queueing model: fit service time to loaded latency, predict";

#define MAX_AT 64

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb model --from FILE [options] [--csv | --json] [-o FILE]\n"
	        "       plumb model --service NS --l0 NS [options]\n\n"
	        "Seed 001's closed M/D/1 model: latency L under generator contention C solves\n"
	        "  L = L0 + (S^2/2)(C/CLS) / (1 - S(C/CLS + 1/L))   (eq. 5.18; larger root)\n"
	        "With --from, fits the service time S by least squares to measured (bandwidth,\n"
	        "latency) points: 'plumb loaded --json' output or any CSV of pairs (MB/s, ns).\n"
	        "Then predicts latency at higher contention and for more processors.\n\n"
	        "  --from FILE        measurements ('-' = stdin)\n"
	        "  --service NS       use this service time instead of fitting\n"
	        "  --l0 NS            unloaded latency (default: the zero-bandwidth point, else fitted)\n"
	        "  --line BYTES       bytes per request (default: from the loaded JSON, else 64)\n"
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

static void add_prediction_row(output_table *t, const model_params *p, double contention, double measured_max)
{
	double latency;
	plumb_status status;
	output_row(t);
	output_cell_real(t, contention);
	if (model_latency(p, contention, &latency, &status) == 0) {
		output_cell_real(t, latency);
		output_cell_real(t, model_utilization(p, contention, latency));
	} else {
		output_cell_status(t, "n/a", status.message);
		output_cell_status(t, "n/a", status.message);
	}
	output_cell_text(t, measured_max < 0 ? "-" : contention > measured_max ? "yes" : "no");
}

int cmd_model(int argc, char **argv)
{
	static const struct option options[] = {
		{ "from", required_argument, 0, 'f' }, { "service", required_argument, 0, 's' },
		{ "l0", required_argument, 0, 'L' }, { "line", required_argument, 0, 'c' },
		{ "at", required_argument, 0, 'a' }, { "processors", required_argument, 0, 'P' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 } };
	cli_output out = { OUTPUT_TABLE, NULL };
	const char *from = NULL;
	double service = 0, l0 = 0, line = 0, at[MAX_AT];
	size_t at_count = 0;
	uint64_t processors = 0, value;
	plumb_status status;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
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
				return cli_usage_error("model", "--line: %s", status.message);
			line = (double)value;
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
			if (cli_output_option(&out, c, optarg))
				break;
			return cli_bad_option("model", argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("model", "unexpected argument '%s'", argv[optind]);
	if (!from && !(service > 0 && l0 > 0))
		return cli_usage_error("model", "give --from FILE to fit, or both --service and --l0 to evaluate");
	if (processors == 0) {
		int cpus[1024];
		int n = cpu_allowed(cpus, 1024, NULL);
		processors = n > 4 ? (uint64_t)n * 4 : 16;
	}

	model_input input = { 0 };
	model_fit fit = { 0 };
	double measured_max = -1;
	if (from) {
		if (model_input_read(from, &input, &status) != 0)
			return cli_error("model", &status);
		if (line <= 0)
			line = input.line_bytes > 0 ? input.line_bytes : 64;
		for (size_t i = 0; i < input.count; i++)
			measured_max = fmax(measured_max, input.points[i].contention_mb_s);
		if (service > 0) {
			/* Evaluate the given S against the file instead of fitting. */
			fit.params = (model_params){ .service_ns = service, .line_bytes = line };
			double zero_sum = 0;
			int zeros = 0;
			for (size_t i = 0; i < input.count; i++)
				if (input.points[i].contention_mb_s == 0) {
					zero_sum += input.points[i].latency_ns;
					zeros++;
				}
			fit.params.unloaded_latency_ns = l0 > 0 ? l0 : zeros ? zero_sum / zeros : NAN;
			if (!(fit.params.unloaded_latency_ns > 0)) {
				model_input_free(&input);
				return cli_usage_error("model", "%s has no zero-bandwidth point; give --l0", from);
			}
			fit.least_squares = model_least_squares(&fit.params, input.points, input.count);
			fit.error_per_sample = sqrt(fit.least_squares) / (double)input.count;
			fit.rms_error = sqrt(fit.least_squares / (double)input.count);
			fit.points = input.count;
		} else if (model_fit_points(input.points, input.count, line, l0, &fit, &status) != 0) {
			model_input_free(&input);
			fprintf(stderr, "plumb model: %s: %s\n", from, status.message);
			return 1;
		}
	} else {
		fit.params = (model_params){ .unloaded_latency_ns = l0, .service_ns = service,
		                             .line_bytes = line > 0 ? line : 64 };
	}

	output_report *r = output_report_new("model");
	output_meta_text(r, "model", "closed M/D/1 (Hristea 1997, eq. 5.18-5.22, larger root)");
	if (from) {
		output_meta_text(r, "source", from);
		output_meta_text(r, "source_format", input.source);
	}
	output_table *t = output_table_add(r, "fit", from && service <= 0 ? "Least-squares fit" : "Model parameters");
	output_column(t, "service_time", "ns", 2);
	output_column(t, "unloaded_latency", "ns", 2);
	output_column(t, "unloaded_latency_source", NULL, 0);
	output_column(t, "line", "bytes", 0);
	output_column(t, "peak_bandwidth", "MB/s", 1);
	output_column(t, "points", NULL, 0);
	output_column(t, "error_per_sample", "ns", 2);
	output_column(t, "rms_error", "ns", 2);
	output_column(t, "max_abs_error", "ns", 2);
	output_row(t);
	output_cell_real(t, fit.params.service_ns);
	output_cell_real(t, fit.params.unloaded_latency_ns);
	output_cell_text(t, l0 > 0 ? "given" : fit.l0_fitted ? "fitted" : "zero-bandwidth point");
	output_cell_real(t, fit.params.line_bytes);
	output_cell_real(t, model_peak_bandwidth(&fit.params));
	if (from) {
		output_cell_integer(t, (int64_t)fit.points);
		output_cell_real(t, fit.error_per_sample);
		output_cell_real(t, fit.rms_error);
		output_cell_real(t, fit.max_abs_error);
	} else {
		for (int i = 0; i < 4; i++)
			output_cell_status(t, "n/a", "no measurements given (--from)");
	}
	if (from) {
		output_table *pt = output_table_add(r, "points", "Measured against model");
		output_column(pt, "contention", "MB/s", 1);
		output_column(pt, "measured_latency", "ns", 1);
		output_column(pt, "model_latency", "ns", 1);
		output_column(pt, "residual", "ns", 1);
		for (size_t i = 0; i < input.count; i++) {
			double latency;
			output_row(pt);
			output_cell_real(pt, input.points[i].contention_mb_s);
			output_cell_real(pt, input.points[i].latency_ns);
			if (model_latency(&fit.params, input.points[i].contention_mb_s, &latency, &status) == 0) {
				output_cell_real(pt, latency);
				output_cell_real(pt, input.points[i].latency_ns - latency);
			} else {
				output_cell_status(pt, "n/a", status.message);
				output_cell_status(pt, "n/a", status.message);
			}
		}
	}
	output_table *ct = output_table_add(r, "predict_contention", "Predicted latency against generator contention");
	output_column(ct, "contention", "MB/s", 1);
	output_column(ct, "latency", "ns", 1);
	output_column(ct, "utilization", NULL, 3);
	output_column(ct, "beyond_measured", NULL, 0);
	double saturation = model_saturation_contention(&fit.params);
	static const double fractions[] = { 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99 };
	for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++)
		add_prediction_row(ct, &fit.params, fractions[i] * saturation, measured_max);
	for (size_t i = 0; i < at_count; i++)
		add_prediction_row(ct, &fit.params, at[i], measured_max);
	output_table *xt = output_table_add(r, "predict_processors",
	                                    "Predicted latency when P processors all chase dependent misses (thesis: "
	                                    "generators as extra masters)");
	output_column(xt, "processors", NULL, 0);
	output_column(xt, "latency", "ns", 1);
	output_column(xt, "per_processor_bandwidth", "MB/s", 1);
	output_column(xt, "total_bandwidth", "MB/s", 1);
	output_column(xt, "utilization", NULL, 3);
	/* 1..16, then powers of two, then the requested count. */
	uint64_t counts[64];
	size_t count_n = 0;
	for (uint64_t p = 1; p <= processors && count_n < 63; p = p < 16 ? p + 1 : p * 2)
		counts[count_n++] = p;
	if (counts[count_n - 1] != processors)
		counts[count_n++] = processors;
	for (size_t i = 0; i < count_n; i++) {
		uint64_t p = counts[i];
		double latency;
		output_row(xt);
		output_cell_integer(xt, (int64_t)p);
		if (model_latency_processors(&fit.params, (unsigned)p, &latency, &status) == 0) {
			double each = fit.params.line_bytes / latency * 1e3;
			output_cell_real(xt, latency);
			output_cell_real(xt, each);
			output_cell_real(xt, each * (double)p);
			output_cell_real(xt, fit.params.service_ns * (double)p / latency);
		} else {
			for (int k = 0; k < 4; k++)
				output_cell_status(xt, "n/a", status.message);
		}
	}
	output_note(r, "peak bandwidth = line / S (eq. 5.13); the model has no solution at or beyond it");
	if (from && service <= 0 && fit.at_bound < 0)
		output_note(r, "S is at the bottom of its search range: latency does not rise with bandwidth in these "
		               "data, so S (and the peak bandwidth) is not determined; measure closer to saturation");
	if (from && service <= 0 && fit.at_bound > 0)
		output_note(r, "S is at the top of its search range (L0, or the saturation limit of the largest "
		               "bandwidth): the data rise faster than the model allows");
	if (from && fit.l0_fitted)
		output_note(r, "no zero-bandwidth point: L0 was fitted together with S");
	model_input_free(&input);
	int rc = cli_output_emit(&out, r);
	output_report_free(r);
	return rc;
}
