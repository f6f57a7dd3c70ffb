/* plumb trace: convert traces between formats, record a program's trace
 * under lackey, summarise a trace.  One command with sub-subcommands:
 *   plumb trace convert IN OUT [--from FMT] [--to FMT] [--fold-threads]
 *   plumb trace record OUT [--to FMT] [--buffer N --when-full P ...] -- PROGRAM [ARGS...]
 *   plumb trace filter IN OUT [--drop-collector] [--drop-range LOW-HIGH]...
 *   plumb trace stats FILE [--from FMT] [--line-size N] [--page-size N] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "core/interrupt.h"
#include "core/parse.h"
#include "perturb/perturb.h"
#include "trace/trace.h"
#include "trace/trace_copy.h"
#include "trace/trace_stats.h"

const char cmd_trace_summary[] = "convert, record and summarise memory reference traces";

static void print_usage(FILE *stream)
{
	fprintf(stream,
	        "usage: plumb trace convert IN OUT [--from FMT] [--to FMT] [--fold-threads]\n"
	        "                           [--allow-truncated]\n"
	        "       plumb trace record OUT [--to FMT] [--buffer N [--when-full MODE]\n"
	        "                          [--drain-rate R] [--halt-extra T]] -- PROGRAM [ARGS]\n"
	        "       plumb trace filter IN OUT [--drop-collector] [--drop-range LOW-HIGH]...\n"
	        "                          [--from FMT] [--to FMT]\n"
	        "       plumb trace stats FILE [--from FMT] [--line-size BYTES]\n"
	        "                         [--page-size BYTES] [--allow-truncated]\n"
	        "                         [--csv|--json] [-o FILE]\n\n"
	        "Formats: native (plumb's compressed binary, .ptrace), lackey (valgrind\n"
	        "--tool=lackey --trace-mem=yes output, .lackey), din (Dinero, .din).  Input\n"
	        "formats are detected; output formats come from the file name or --to.  '-' is\n"
	        "standard input or output.\n\n"
	        "  convert   copy a trace into another format (notes on stderr say what the\n"
	        "            target format cannot carry; din has no threads: --fold-threads\n"
	        "            makes all thread 0)\n"
	        "  record    run PROGRAM under plumbgrind (else valgrind's lackey) and write its\n"
	        "            references to OUT (a native OUT keeps plumbgrind's compact entries);\n"
	        "            --buffer N puts a buffer of N references between them, as a\n"
	        "            hardware tracer has: when it is full, halt stops PROGRAM until it\n"
	        "            has drained (default), drop loses what does not fit, wrap keeps the\n"
	        "            last N (--when-full halt, drop or wrap); --drain-rate R drains R\n"
	        "            references a second; --halt-extra T (such as 10ms) lengthens every\n"
	        "            halt\n"
	        "  filter    copy a trace without the collector's halt and loss markers\n"
	        "            (--drop-collector) or the references of an address range\n"
	        "            (--drop-range)\n"
	        "  stats     references by kind and thread, distinct lines and pages, address\n"
	        "            ranges, sizes, and the read throughput\n"
	        "  -h, --help  this help (after trace or after any subcommand)\n\n"
	        "See 'man plumb-trace' for the formats and the exact meaning of each figure.\n");
}

/* Copies reader to writer (both open); reports unless out is standard output. */
static int copy_trace(const char *command, trace_reader *reader, trace_writer *writer, const char *in_name,
                      const char *out, trace_format to, const trace_copy_options *options, const cli_output *output)
{
	plumb_status status;
	trace_copy_result result;
	if (trace_copy(reader, writer, out, to, options, &result, &status) != 0)
		return cli_error(command, &status);
	if (result.interrupted) {
		fprintf(stderr, "plumb %s: interrupted by signal %d (%s); %s holds the %llu records read before it\n",
		        command, interrupt_signal(), strsignal(interrupt_signal()), out, (unsigned long long)result.records);
		return interrupt_exit_code();
	}
	char prefix[64];
	snprintf(prefix, sizeof prefix, "plumb %s", command);
	trace_copy_write_notes(&result, prefix, stderr);
	if (strcmp(out, "-") == 0)
		return 0;
	output_report *report = trace_copy_report(command, in_name, out, options, &result);
	int rc = cli_output_emit(output, report);
	output_report_free(report);
	return rc;
}

/* convert and filter: names the output's format from its name unless --to
 * gave it, opens the input, then the output, and copies. */
static int copy_file(const char *command, const char *in, trace_format from, bool allow_truncated, const char *out,
                     trace_format to, const trace_copy_options *options, const cli_output *output)
{
	plumb_status status;
	if (to == TRACE_FORMAT_AUTO && strcmp(out, "-") == 0)
		return cli_usage_error(command, "name the output format with --to when writing to standard output");
	if (to == TRACE_FORMAT_AUTO && trace_format_from_path(out, &to, &status) < 0)
		return cli_usage_error(command, "%s", status.message);
	trace_reader *reader;
	if (trace_reader_open(&reader, in, from, &status) < 0)
		return cli_error(command, &status);
	trace_reader_allow_truncated(reader, allow_truncated);
	trace_writer *writer;
	if (trace_writer_open(&writer, out, to, &status) < 0) {
		trace_reader_close(reader, NULL);
		return cli_error(command, &status);
	}
	return copy_trace(command, reader, writer, in, out, to, options, output);
}

static int parse_format_option(const char *command, const char *text, trace_format *out)
{
	plumb_status status;
	if (trace_format_parse(text, out, &status) < 0)
		return cli_usage_error(command, "%s", status.message);
	return 0;
}

static int trace_convert(int argc, char **argv)
{
	static const char command[] = "trace convert";
	static const struct option options[] = {
		{ "from", required_argument, 0, 'f' }, { "to", required_argument, 0, 't' },
		{ "fold-threads", no_argument, 0, 'F' }, { "allow-truncated", no_argument, 0, 'T' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 }
	};
	trace_format from = TRACE_FORMAT_AUTO, to = TRACE_FORMAT_AUTO;
	bool fold = false, allow_truncated = false;
	cli_output output = { .format = OUTPUT_TABLE };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		if (cli_output_option("trace", &output, c, optarg))
			continue;
		switch (c) {
		case 'f': if (parse_format_option(command, optarg, &from)) return 2; break;
		case 't': if (parse_format_option(command, optarg, &to)) return 2; break;
		case 'F': fold = true; break;
		case 'T': allow_truncated = true; break;
		case 'h': print_usage(stdout); return 0;
		default: return cli_bad_option(command, c, argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(command, "want an input and an output trace");
	trace_copy_options copy = { .fold_threads = fold };
	return copy_file(command, argv[optind], from, allow_truncated, argv[optind + 1], to, &copy, &output);
}

static int trace_filter_command(int argc, char **argv)
{
	static const char command[] = "trace filter";
	static const struct option options[] = {
		{ "from", required_argument, 0, 'f' }, { "to", required_argument, 0, 't' },
		{ "drop-collector", no_argument, 0, 'c' }, { "drop-range", required_argument, 0, 'r' },
		{ "allow-truncated", no_argument, 0, 'T' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 }
	};
	trace_format from = TRACE_FORMAT_AUTO, to = TRACE_FORMAT_AUTO;
	bool allow_truncated = false;
	trace_filter filter;
	memset(&filter, 0, sizeof filter);
	cli_output output = { .format = OUTPUT_TABLE };
	plumb_status status;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		if (cli_output_option("trace", &output, c, optarg))
			continue;
		switch (c) {
		case 'f': if (parse_format_option(command, optarg, &from)) return 2; break;
		case 't': if (parse_format_option(command, optarg, &to)) return 2; break;
		case 'c': filter.drop_collector_markers = 1; break;
		case 'r':
			if (trace_filter_add_range(&filter, optarg, &status) < 0)
				return cli_usage_error(command, "--drop-range: %s", status.message);
			break;
		case 'T': allow_truncated = true; break;
		case 'h': print_usage(stdout); return 0;
		default: return cli_bad_option(command, c, argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(command, "want an input and an output trace");
	if (!filter.drop_collector_markers && filter.range_count == 0)
		return cli_usage_error(command, "nothing to remove: give --drop-collector or --drop-range LOW-HIGH");
	trace_copy_options copy = { .filter = &filter };
	return copy_file(command, argv[optind], from, allow_truncated, argv[optind + 1], to, &copy, &output);
}

static int trace_record_program(int argc, char **argv)
{
	static const char command[] = "trace record";
	static const struct option options[] = {
		{ "to", required_argument, 0, 't' }, { "fold-threads", no_argument, 0, 'F' },
		{ "buffer", required_argument, 0, 'b' }, { "when-full", required_argument, 0, 'w' },
		{ "drain-rate", required_argument, 0, 'r' }, { "halt-extra", required_argument, 0, 'x' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 }
	};
	trace_format to = TRACE_FORMAT_AUTO;
	bool fold = false, buffered = false, policy_given = false, rate_given = false, extra_given = false;
	trace_buffer_options buffer = { 0, TRACE_FULL_HALT, 0, 0 };
	plumb_status parse_status;
	cli_output output = { .format = OUTPUT_TABLE };
	int c;
	optind = 1;
	/* Options before OUT and between OUT and '--' (as the usage line has
	 * them); parsing stops at '--' or at the program. */
	const char *out = NULL;
	bool ended = false;
	while (!ended) {
		while ((c = getopt_long(argc, argv, "+:o:h", options, NULL)) != -1) {
			if (cli_output_option("trace", &output, c, optarg))
				continue;
			switch (c) {
			case 't': if (parse_format_option(command, optarg, &to)) return 2; break;
			case 'F': fold = true; break;
			case 'b':
				if (parse_u64(optarg, 1, TRACE_BUFFER_CAPACITY_MAX, &buffer.capacity, &parse_status) < 0)
					return cli_usage_error(command, "--buffer: %s (references)", parse_status.message);
				buffered = true;
				break;
			case 'w':
				if (trace_when_full_parse(optarg, &buffer.when_full, &parse_status) < 0)
					return cli_usage_error(command, "--when-full: %s", parse_status.message);
				policy_given = true;
				break;
			case 'r':
				if (parse_double(optarg, 1e-3, 1e12, &buffer.drain_rate, &parse_status) < 0)
					return cli_usage_error(command, "--drain-rate: %s (references per second)", parse_status.message);
				rate_given = true;
				break;
			case 'x':
				if (perturb_parse_seconds(optarg, &buffer.halt_extra, &parse_status) < 0)
					return cli_usage_error(command, "--halt-extra: %s", parse_status.message);
				extra_given = true;
				break;
			case 'h': print_usage(stdout); return 0;
			default: return cli_bad_option(command, c, argv);
			}
		}
		ended = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
		if (out || optind >= argc)
			break;
		out = argv[optind++];
	}
	if (!out || optind >= argc)
		return cli_usage_error(command, "want an output trace, then '--' and the program to run");
	if (!buffered && (policy_given || rate_given || extra_given))
		return cli_usage_error(command, "--%s needs --buffer N (the buffer's size in references)",
		                       policy_given ? "when-full" : rate_given ? "drain-rate" : "halt-extra");
	if (buffered && trace_buffer_check_options(&buffer, &parse_status) < 0)
		return cli_usage_error(command, "%s", parse_status.message);
	char **program = argv + optind;
	if (to == TRACE_FORMAT_AUTO) {
		plumb_status status;
		if (strcmp(out, "-") == 0)
			return cli_usage_error(command, "name the output format with --to when writing to standard output");
		if (trace_format_from_path(out, &to, &status) < 0)
			return cli_usage_error(command, "%s", status.message);
	}
	/* The output first: a destination that cannot be written fails before
	 * valgrind starts, rather than killing a valgrind that has just begun
	 * (which can leave its valgrind_proc_* file in TMPDIR). */
	plumb_status status;
	trace_writer *writer;
	if (trace_writer_open(&writer, out, to, &status) < 0)
		return cli_error(command, &status);
	trace_reader *reader;
	if (trace_reader_open_recording(&reader, program, buffered ? &buffer : NULL, &status) < 0) {
		trace_writer_abort(writer);
		return cli_error(command, &status);
	}
	if (trace_reader_tool_note(reader))
		fprintf(stderr, "plumb %s: note: %s\n", command, trace_reader_tool_note(reader));
	trace_copy_options copy = { .fold_threads = fold, .buffer = buffered ? &buffer : NULL };
	return copy_trace(command, reader, writer, program[0], out, to, &copy, &output);
}

static int trace_stats_command(int argc, char **argv)
{
	static const char command[] = "trace stats";
	static const struct option options[] = {
		{ "from", required_argument, 0, 'f' }, { "line-size", required_argument, 0, 'l' },
		{ "page-size", required_argument, 0, 'p' }, { "allow-truncated", no_argument, 0, 'T' },
		{ "distinct-limit", required_argument, 0, 'd' },
		{ "help", no_argument, 0, 'h' }, CLI_OUTPUT_OPTIONS, { 0, 0, 0, 0 }
	};
	trace_format from = TRACE_FORMAT_AUTO;
	uint64_t line_size = 64, page_size = 4096, limit = 1u << 22;   /* a set of 4 Mi keys takes at most 64 MiB */
	bool allow_truncated = false;
	cli_output output = { .format = OUTPUT_TABLE };
	plumb_status status;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		if (cli_output_option("trace", &output, c, optarg))
			continue;
		switch (c) {
		case 'f': if (parse_format_option(command, optarg, &from)) return 2; break;
		case 'l':
		case 'p':
			if (parse_size(optarg, c == 'l' ? &line_size : &page_size, &status) < 0)
				return cli_usage_error(command, "%s", status.message);
			break;
		case 'd':
			if (parse_u64(optarg, 1, 1ull << 32, &limit, &status) < 0)
				return cli_usage_error(command, "%s", status.message);
			break;
		case 'T': allow_truncated = true; break;
		case 'h': print_usage(stdout); return 0;
		default: return cli_bad_option(command, c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(command, "want one trace file ('-' for standard input)");
	for (int which = 0; which < 2; which++) {
		uint64_t v = which ? page_size : line_size;
		if (v == 0 || (v & (v - 1)) || v > (1ull << 30))
			return cli_usage_error(command, "%s size %llu is not a power of two up to 1GiB", which ? "page" : "line",
			                       (unsigned long long)v);
	}
	const char *path = argv[optind];
	trace_stats stats;
	if (trace_stats_init(&stats, line_size, page_size, (size_t)limit, &status) < 0)
		return cli_error(command, &status);
	trace_stats_reading reading;
	if (trace_stats_read(&stats, path, from, allow_truncated, &reading, &status) < 0) {
		trace_stats_free(&stats);
		return cli_error(command, &status);
	}
	output_report *report = trace_stats_report(path, &stats, &reading);
	int result = cli_output_emit(&output, report);
	output_report_free(report);
	trace_stats_free(&stats);
	return result;
}

int cmd_trace(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("trace", "want a subcommand: convert, filter, record or stats");
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(sub, "convert"))
		return trace_convert(argc - 1, argv + 1);
	if (!strcmp(sub, "record"))
		return trace_record_program(argc - 1, argv + 1);
	if (!strcmp(sub, "stats"))
		return trace_stats_command(argc - 1, argv + 1);
	if (!strcmp(sub, "filter"))
		return trace_filter_command(argc - 1, argv + 1);
	return cli_usage_error("trace", "'%s' is not a trace subcommand (convert, filter, record or stats)", sub);
}
