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
#include <time.h>
#include "cli/command.h"
#include "plumb/interrupt.h"
#include "plumb/parse.h"
#include "plumb/perturb.h"
#include "plumb/trace.h"
#include "trace/trace_stats.h"

const char cmd_trace_summary[] = "convert, record and summarise memory reference traces";

#define BATCH 4096

static void print_usage(FILE *stream)
{
	fprintf(stream,
	        "usage: plumb trace convert IN OUT [--from FMT] [--to FMT] [--fold-threads] [--allow-truncated]\n"
	        "       plumb trace record OUT [--to FMT] [--buffer N [--when-full halt|drop|wrap]\n"
	        "                          [--drain-rate R] [--halt-extra T]] -- PROGRAM [ARGS...]\n"
	        "       plumb trace filter IN OUT [--drop-collector] [--drop-range LOW-HIGH]... [--from FMT] [--to FMT]\n"
	        "       plumb trace stats FILE [--from FMT] [--line-size BYTES] [--page-size BYTES]\n"
	        "                         [--allow-truncated] [--csv|--json] [-o FILE]\n\n"
	        "Formats: native (plumb's compressed binary, .ptrace), lackey (valgrind --tool=lackey\n"
	        "--trace-mem=yes output, .lackey), din (Dinero, .din).  Input formats are detected;\n"
	        "output formats come from the file name or --to.  '-' is standard input or output.\n\n"
	        "  convert   copy a trace into another format (notes on stderr say what the target\n"
	        "            format cannot carry; din has no threads: --fold-threads makes all thread 0)\n"
	        "  record    run PROGRAM under valgrind's lackey and write its references to OUT;\n"
	        "            --buffer N puts a buffer of N references between them, as a hardware tracer\n"
	        "            has: when it is full, halt stops PROGRAM until it has drained (default),\n"
	        "            drop loses what does not fit, wrap keeps the last N; --drain-rate R drains\n"
	        "            R references a second; --halt-extra T (such as 10ms) lengthens every halt\n"
	        "  filter    copy a trace without the collector's halt and loss markers\n"
	        "            (--drop-collector) or the references of an address range (--drop-range)\n"
	        "  stats     references by kind and thread, distinct lines and pages, address ranges,\n"
	        "            sizes, and the read throughput\n\n"
	        "See 'man plumb-trace' for the formats and the exact meaning of each figure.\n");
}

static double seconds_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What the target format cannot carry, counted exactly so the notes are true. */
typedef struct conversion_losses {
	uint64_t times, instruction_addresses, modifies_split, threads_folded, markers_dropped, collector_dropped;
	uint32_t lackey_thread;
	bool lackey_have_fetch;
	uint64_t lackey_last_fetch;
} conversion_losses;

static void count_losses(conversion_losses *loss, trace_format to, trace_record *records, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		trace_record *r = &records[i];
		if (to == TRACE_FORMAT_NATIVE)
			continue;
		if (trace_is_collector_marker(r)) {
			loss->collector_dropped++;
			continue;
		}
		if (trace_is_marker(r)) {
			if (to == TRACE_FORMAT_DIN)
				loss->markers_dropped++;
			continue;
		}
		if (r->flags & TRACE_HAS_TIME)
			loss->times++;
		if (to == TRACE_FORMAT_DIN) {
			if (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS)
				loss->instruction_addresses++;
			if (r->kind == TRACE_MODIFY)
				loss->modifies_split++;
			continue;
		}
		/* lackey: an instruction address survives only as "the I line before". */
		if (r->thread != loss->lackey_thread) {
			loss->lackey_thread = r->thread;
			loss->lackey_have_fetch = false;
		}
		if (r->kind == TRACE_INSTRUCTION) {
			loss->lackey_last_fetch = r->address;
			loss->lackey_have_fetch = true;
		}
		bool has = r->flags & TRACE_HAS_INSTRUCTION_ADDRESS;
		bool kept = loss->lackey_have_fetch ? has && r->instruction_address == loss->lackey_last_fetch : !has;
		if (!kept)
			loss->instruction_addresses++;
	}
}

static void print_losses(const char *command, const conversion_losses *loss, trace_format to)
{
	const char *name = trace_format_name(to);
	if (loss->times)
		fprintf(stderr, "plumb %s: note: %s has no time field: %llu records' times were dropped\n", command, name,
		        (unsigned long long)loss->times);
	if (loss->instruction_addresses)
		fprintf(stderr, "plumb %s: note: %s could not keep the instruction address of %llu records\n", command,
		        name, (unsigned long long)loss->instruction_addresses);
	if (loss->modifies_split)
		fprintf(stderr, "plumb %s: note: din has no modify: %llu modify records were written as a read and a write\n",
		        command, (unsigned long long)loss->modifies_split);
	if (loss->markers_dropped)
		fprintf(stderr, "plumb %s: note: din has no region markers: %llu markers were dropped\n", command,
		        (unsigned long long)loss->markers_dropped);
	if (loss->collector_dropped)
		fprintf(stderr, "plumb %s: note: %s has no halt or loss markers: %llu were dropped\n", command, name,
		        (unsigned long long)loss->collector_dropped);
	if (loss->threads_folded)
		fprintf(stderr, "plumb %s: note: %llu records of threads other than 0 were written as thread 0\n", command,
		        (unsigned long long)loss->threads_folded);
}

/* Copies reader to a writer at out (opened already, or opened here when
 * writer is NULL); reports unless out is standard output. */
static int pause_traced_program(void *context, int stop, plumb_status *status)
{
	return trace_reader_pause_program(context, stop, status);
}

/* A halt's drain, cut short by SIGINT, SIGTERM or SIGHUP: a slow drain rate
 * can make a halt last hours, and the user must still be able to stop. */
static void sleep_unless_interrupted(void *context, uint64_t ns)
{
	(void)context;
	while (ns > 0 && !interrupt_pending()) {
		uint64_t step = ns < 100000000u ? ns : 100000000u;
		struct timespec t = { 0, (long)step };
		nanosleep(&t, NULL);
		ns -= step;
	}
}

static void buffer_table(output_report *report, const trace_buffer_options *options, const trace_buffer_totals *t)
{
	output_table *table = output_table_add(report, "buffer", "Trace buffer");
	output_column(table, "capacity", NULL, 0);
	output_column(table, "when_full", NULL, 0);
	output_column(table, "references", NULL, 0);
	output_column(table, "kept", NULL, 0);
	output_column(table, "halts", NULL, 0);
	output_column(table, "halted_seconds", "s", 3);
	output_column(table, "dropped", NULL, 0);
	output_row(table);
	output_cell_integer(table, (int64_t)options->capacity);
	output_cell_text(table, trace_when_full_name(options->when_full));
	output_cell_integer(table, (int64_t)t->offered);
	output_cell_integer(table, (int64_t)t->kept);
	output_cell_integer(table, (int64_t)t->halts);
	output_cell_real(table, 1e-9 * (double)t->halted_ns);
	output_cell_integer(table, (int64_t)t->lost);
}

static int copy_trace(const char *command, trace_reader *reader, trace_writer *writer, const char *in_name,
                      const char *out, trace_format to, bool fold_threads, const cli_output *output,
                      const trace_buffer_options *buffer_options, const trace_filter *filter)
{
	plumb_status status;
	if (!writer && trace_writer_open(&writer, out, to, &status) < 0) {
		trace_reader_close(reader, NULL);
		return cli_error(command, &status);
	}
	if (to == TRACE_FORMAT_AUTO)
		trace_format_from_path(out, &to, NULL);
	trace_buffer *buffer = NULL;
	if (buffer_options) {
		trace_buffer_hooks hooks = { pause_traced_program, NULL, sleep_unless_interrupted, reader };
		if (trace_buffer_new(&buffer, buffer_options, &hooks, writer, &status) < 0) {
			trace_writer_abort(writer);
			trace_reader_close(reader, NULL);
			return cli_error(command, &status);
		}
	}
	trace_record *batch = malloc(BATCH * sizeof *batch);
	conversion_losses loss = { 0 };
	trace_filter_counts filtered = { 0, 0, 0 };
	uint64_t records = 0;
	double start = seconds_now();
	long n = 0;
	int failed = batch == NULL;
	if (failed)
		snprintf(status.message, sizeof status.message, "out of memory");
	/* On SIGINT, SIGTERM or SIGHUP the copy stops between batches and the
	 * trace is finished and committed (docs/trace.md): it holds every
	 * record read before the signal, and reads without --allow-truncated. */
	/* plumbgrind's entries go into a native file as they are (format 1.3);
	 * a buffer, a filter or folding needs the records */
	bool entries = !buffer && !filter && !fold_threads && trace_writer_can_take_entries(writer, reader);
	interrupt_poll_begin();
	while (!failed && !interrupt_pending() &&
	       (n = entries ? trace_writer_take_entries(writer, reader, &status)
	                    : trace_reader_read(reader, batch, BATCH, &status)) > 0) {
		if (entries) {
			records += (uint64_t)n;
			continue;
		}
		if (filter)
			n = (long)trace_filter_apply(filter, batch, (size_t)n, &filtered);
		if (fold_threads)
			for (long i = 0; i < n; i++)
				if (batch[i].thread) {
					batch[i].thread = 0;
					loss.threads_folded++;
				}
		count_losses(&loss, to, batch, (size_t)n);
		if ((buffer ? trace_buffer_take(buffer, batch, (size_t)n, &status)
		            : trace_writer_write(writer, batch, (size_t)n, &status)) < 0)
			failed = 1;
		records += (uint64_t)n;
	}
	bool interrupted = interrupt_pending();
	if (n < 0 && !interrupted)
		failed = 1;
	free(batch);
	/* what the buffer still holds (wrap) and the last loss go in before the end */
	if (buffer && !failed && trace_buffer_finish(buffer, &status) < 0)
		failed = 1;
	trace_buffer_totals totals = { 0 };
	if (buffer)
		trace_buffer_get_totals(buffer, &totals);
	trace_buffer_free(buffer);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	trace_format from = trace_reader_format(reader);
	if (interrupted && !failed) {
		int result = trace_writer_close(writer, &status) < 0 ? cli_error(command, &status) : 0;
		/* Stops and reaps a program being traced; its fate is no error here. */
		trace_reader_close(reader, NULL);
		interrupt_poll_end();
		if (result == 0)
			fprintf(stderr, "plumb %s: interrupted by signal %d (%s); %s holds the %llu records read before it\n",
			        command, interrupt_signal(), strsignal(interrupt_signal()), out, (unsigned long long)records);
		return result ? result : interrupt_exit_code();
	}
	interrupt_poll_end();
	if (failed) {
		trace_writer_abort(writer);
		trace_reader_close(reader, NULL);
		return cli_error(command, &status);
	}
	/* plumbgrind's names of the program's code go beside the trace (OUT.code) */
	trace_code_map *code_map = NULL;
	char code_path[4096];
	if (strcmp(out, "-") != 0 && trace_reader_code_map(reader, &code_map, &status) < 0) {
		trace_writer_abort(writer);
		trace_reader_close(reader, NULL);
		return cli_error(command, &status);
	}
	if (trace_reader_close(reader, &status) < 0) {
		trace_writer_abort(writer);
		trace_code_map_free(code_map);
		return cli_error(command, &status);
	}
	if (trace_writer_close(writer, &status) < 0) {
		trace_code_map_free(code_map);
		return cli_error(command, &status);
	}
	if (code_map) {
		int saved = trace_code_map_path_for(out, code_path, sizeof code_path)
		            ? trace_code_map_save(code_map, code_path, &status) : plumb_fail(&status, ENAMETOOLONG, "%s.code: name too long", out);
		trace_code_map_free(code_map);
		if (saved != 0)
			return cli_error(command, &status);
	}
	double seconds = seconds_now() - start;
	print_losses(command, &loss, to);
	if (info.skipped)
		fprintf(stderr, "plumb %s: note: %llu din flush records (label 4) were skipped\n", command,
		        (unsigned long long)info.skipped);
	if (info.truncated)
		fprintf(stderr, "plumb %s: warning: the input was cut short; %llu bytes of an incomplete block were ignored\n",
		        command, (unsigned long long)info.truncated_bytes);
	if (totals.region_markers_lost)
		fprintf(stderr, "plumb %s: note: wrap keeps references only: %llu region markers were dropped\n", command,
		        (unsigned long long)totals.region_markers_lost);
	if (strcmp(out, "-") == 0)
		return 0;
	output_report *report = output_report_new(command);
	output_meta_text(report, "input", in_name);
	output_meta_text(report, "output", out);
	output_table *table = output_table_add(report, "conversion", "Conversion");
	output_column(table, "from", NULL, 0);
	output_column(table, "to", NULL, 0);
	output_column(table, "records", NULL, 0);
	output_column(table, "input_bytes", "B", 0);
	output_column(table, "seconds", "s", 3);
	output_column(table, "rate", "Mrecords/s", 1);
	output_row(table);
	output_cell_text(table, trace_format_name(from));
	output_cell_text(table, trace_format_name(to));
	output_cell_integer(table, (int64_t)records);
	output_cell_integer(table, (int64_t)info.bytes);
	output_cell_real(table, seconds);
	if (seconds > 0)
		output_cell_real(table, (double)records / seconds / 1e6);
	else
		output_cell_status(table, "n/a", "too short to time");
	if (buffer_options)
		buffer_table(report, buffer_options, &totals);
	if (filter) {
		output_table *removed = output_table_add(report, "filter", "Removed");
		output_column(removed, "references_in", NULL, 0);
		output_column(removed, "references_removed", NULL, 0);
		output_column(removed, "markers_removed", NULL, 0);
		output_row(removed);
		output_cell_integer(removed, (int64_t)filtered.references_in);
		output_cell_integer(removed, (int64_t)filtered.references_dropped);
		output_cell_integer(removed, (int64_t)filtered.markers_dropped);
	}
	int result = cli_output_emit(output, report);
	output_report_free(report);
	return result;
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
	cli_output output = { OUTPUT_TABLE, NULL, NULL };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		if (cli_output_option(&output, c, optarg))
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
	const char *in = argv[optind], *out = argv[optind + 1];
	if (to == TRACE_FORMAT_AUTO && strcmp(out, "-") == 0)
		return cli_usage_error(command, "name the output format with --to when writing to standard output");
	if (to == TRACE_FORMAT_AUTO) {
		plumb_status status;
		if (trace_format_from_path(out, &to, &status) < 0)
			return cli_usage_error(command, "%s", status.message);
	}
	plumb_status status;
	trace_reader *reader;
	if (trace_reader_open(&reader, in, from, &status) < 0)
		return cli_error(command, &status);
	trace_reader_allow_truncated(reader, allow_truncated);
	return copy_trace(command, reader, NULL, in, out, to, fold, &output, NULL, NULL);
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
	cli_output output = { OUTPUT_TABLE, NULL, NULL };
	plumb_status status;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		if (cli_output_option(&output, c, optarg))
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
	const char *in = argv[optind], *out = argv[optind + 1];
	if (to == TRACE_FORMAT_AUTO && strcmp(out, "-") == 0)
		return cli_usage_error(command, "name the output format with --to when writing to standard output");
	if (to == TRACE_FORMAT_AUTO && trace_format_from_path(out, &to, &status) < 0)
		return cli_usage_error(command, "%s", status.message);
	trace_reader *reader;
	if (trace_reader_open(&reader, in, from, &status) < 0)
		return cli_error(command, &status);
	trace_reader_allow_truncated(reader, allow_truncated);
	return copy_trace(command, reader, NULL, in, out, to, false, &output, NULL, &filter);
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
	cli_output output = { OUTPUT_TABLE, NULL, NULL };
	int c;
	optind = 1;
	/* Options before OUT and between OUT and '--' (as the usage line has
	 * them); parsing stops at '--' or at the program. */
	const char *out = NULL;
	bool ended = false;
	while (!ended) {
		while ((c = getopt_long(argc, argv, "+:o:h", options, NULL)) != -1) {
			if (cli_output_option(&output, c, optarg))
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
	/* With a buffer, Valgrind's ring has two blocks of about N/16 entries
	 * (4 to 512 KiB): the program cannot run more than two blocks (some N/4
	 * references, at least about 2000) past the buffer's N-th reference
	 * before it is stopped. */
	size_t ring_block = 0;
	if (buffered) {
		uint64_t bytes = buffer.capacity / 2 / 4096 * 4096;
		ring_block = bytes < 4096 ? 4096 : bytes > (512u << 10) ? (512u << 10) : (size_t)bytes;
	}
	trace_reader *reader;
	if (trace_reader_open_command_blocks(&reader, program, NULL, buffered ? 2 : 0, ring_block, &status) < 0) {
		trace_writer_abort(writer);
		return cli_error(command, &status);
	}
	return copy_trace(command, reader, writer, program[0], out, to, fold, &output, buffered ? &buffer : NULL, NULL);
}

static void hex_cell(output_table *table, uint64_t value)
{
	char text[32];
	snprintf(text, sizeof text, "0x%llx", (unsigned long long)value);
	output_cell_text(table, text);
}

static void distinct_row(output_table *table, const char *what, uint64_t unit, const trace_distinct *set)
{
	bool exact;
	uint64_t count = trace_distinct_count(set, &exact);
	output_row(table);
	output_cell_text(table, what);
	output_cell_integer(table, (int64_t)unit);
	output_cell_integer(table, (int64_t)count);
	output_cell_integer(table, (int64_t)(count * unit));
	output_cell_text(table, exact ? "exact" : "estimate (HyperLogLog, about 1%)");
}

static output_report *stats_report(const char *path, const trace_stats *s, const trace_reader_info *info,
                                   trace_format format, double seconds, uint64_t line_size, uint64_t page_size)
{
	static const char *const kind_names[4] = { "instruction", "read", "write", "modify" };
	output_report *report = output_report_new("trace stats");
	output_meta_text(report, "trace", path);
	output_meta_text(report, "format", trace_format_name(format));
	output_meta_integer(report, "line_size", (int64_t)line_size);
	output_meta_integer(report, "page_size", (int64_t)page_size);
	if (s->region_markers)
		output_meta_integer(report, "region_markers", (int64_t)s->region_markers);
	/* what a bounded buffer did to the recording (plumb trace record --buffer) */
	output_meta_integer(report, "records", (int64_t)s->records);
	output_meta_integer(report, "halts", (int64_t)s->halts);
	output_meta_real(report, "halted_seconds", 1e-9 * (double)s->halted_ns);
	output_meta_integer(report, "dropped", (int64_t)s->lost);
	if (s->halts) {
		/* a buffer ends at every halt, and the references after the last one fill one more */
		output_meta_integer(report, "buffers", (int64_t)(s->halts + (s->after_last_halt > 0)));
		output_meta_real(report, "references_per_buffer", (double)s->drained / (double)s->halts);
	}

	output_table *t = output_table_add(report, "kinds", "References by kind");
	output_column(t, "kind", NULL, 0);
	output_column(t, "references", NULL, 0);
	output_column(t, "bytes", "B", 0);
	output_column(t, "share", "%", 2);
	for (int k = 0; k < 4; k++) {
		output_row(t);
		output_cell_text(t, kind_names[k]);
		output_cell_integer(t, (int64_t)s->by_kind[k]);
		output_cell_integer(t, (int64_t)s->bytes_by_kind[k]);
		if (s->records)
			output_cell_real(t, 100.0 * (double)s->by_kind[k] / (double)s->records);
		else
			output_cell_status(t, "n/a", "the trace has no references");
	}
	output_row(t);
	output_cell_text(t, "total");
	output_cell_integer(t, (int64_t)s->records);
	output_cell_integer(t, (int64_t)(s->bytes_by_kind[0] + s->bytes_by_kind[1] + s->bytes_by_kind[2] + s->bytes_by_kind[3]));
	if (s->records)
		output_cell_real(t, 100.0);
	else
		output_cell_status(t, "n/a", "the trace has no references");

	t = output_table_add(report, "threads", "References by thread");
	output_column(t, "thread", NULL, 0);
	for (int k = 0; k < 4; k++)
		output_column(t, kind_names[k], NULL, 0);
	output_column(t, "total", NULL, 0);
	for (size_t i = 0; i < s->thread_count; i++) {
		const trace_thread_counts *c = &s->threads[i];
		output_row(t);
		output_cell_integer(t, c->thread);
		for (int k = 0; k < 4; k++)
			output_cell_integer(t, (int64_t)c->by_kind[k]);
		output_cell_integer(t, (int64_t)(c->by_kind[0] + c->by_kind[1] + c->by_kind[2] + c->by_kind[3]));
	}

	t = output_table_add(report, "footprint", "Distinct lines and pages touched");
	output_column(t, "unit", NULL, 0);
	output_column(t, "size", "B", 0);
	output_column(t, "distinct", NULL, 0);
	output_column(t, "bytes", "B", 0);
	output_column(t, "counting", NULL, 0);
	distinct_row(t, "line", line_size, &s->lines);
	distinct_row(t, "page", page_size, &s->pages);

	t = output_table_add(report, "ranges", "Address ranges");
	output_column(t, "stream", NULL, 0);
	output_column(t, "lowest", NULL, 0);
	output_column(t, "highest", NULL, 0);
	output_column(t, "span", "B", 0);
	for (int side = 0; side < 2; side++) {
		output_row(t);
		output_cell_text(t, side ? "data" : "instruction");
		if (!s->seen[side]) {
			const char *reason = side ? "no data references in the trace" : "no instruction fetches in the trace";
			output_cell_status(t, "n/a", reason);
			output_cell_status(t, "n/a", reason);
			output_cell_status(t, "n/a", reason);
			continue;
		}
		hex_cell(t, s->min_address[side]);
		hex_cell(t, s->max_address[side]);
		uint64_t span = s->max_address[side] - s->min_address[side];
		if (span >= (uint64_t)INT64_MAX)
			output_cell_status(t, "overflow", "the span does not fit a signed 64-bit integer");
		else
			output_cell_integer(t, (int64_t)span + 1);
	}

	t = output_table_add(report, "sizes", "Reference sizes");
	output_column(t, "size", "B", 0);
	output_column(t, "references", NULL, 0);
	for (int b = 0; b < TRACE_STATS_SIZE_BUCKETS; b++) {
		output_row(t);
		if (b == TRACE_STATS_SIZE_BUCKETS - 1)
			output_cell_text(t, "other");
		else {
			char text[8];
			snprintf(text, sizeof text, "%d", 1 << b);
			output_cell_text(t, text);
		}
		output_cell_integer(t, (int64_t)s->sizes[b]);
	}
	output_row(t);
	output_cell_text(t, "line-straddling");
	output_cell_integer(t, (int64_t)s->line_straddles);

	t = output_table_add(report, "input", "Reading");
	output_column(t, "records", NULL, 0);
	output_column(t, "bytes", "B", 0);
	output_column(t, "bytes_per_record", "B", 2);
	output_column(t, "seconds", "s", 3);
	output_column(t, "throughput", "Mrecords/s", 1);   /* reading and these statistics together */
	output_row(t);
	output_cell_integer(t, (int64_t)s->records);
	output_cell_integer(t, (int64_t)info->bytes);
	if (s->records)
		output_cell_real(t, (double)info->bytes / (double)s->records);
	else
		output_cell_status(t, "n/a", "the trace has no references");
	output_cell_real(t, seconds);
	if (seconds > 0 && s->records)
		output_cell_real(t, (double)s->records / seconds / 1e6);
	else
		output_cell_status(t, "n/a", "too short to time");

	output_note(report, "%llu references carry an instruction address, %llu a time",
	            (unsigned long long)s->with_instruction_address, (unsigned long long)s->with_time);
	if (format == TRACE_FORMAT_NATIVE)
		output_note(report, "native trace: %llu blocks%s", (unsigned long long)info->blocks,
		            info->complete ? ", end marker present" : "");
	if (info->truncated)
		output_note(report, "the trace was cut short: %llu bytes of an incomplete block were ignored",
		            (unsigned long long)info->truncated_bytes);
	if (info->thread_switches)
		output_note(report, "lackey: %llu thread switches from SCHED lines", (unsigned long long)info->thread_switches);
	if (info->skipped)
		output_note(report, "din: %llu flush records (label 4) skipped", (unsigned long long)info->skipped);
	if (info->unknown_as_read)
		output_note(report, "din: %llu records of unknown type (label 3) counted as reads",
		            (unsigned long long)info->unknown_as_read);
	if (s->halts)
		output_note(report, "%llu halts drained %llu references (a buffer of %.0f); %llu references came after the "
		            "last halt", (unsigned long long)s->halts, (unsigned long long)s->drained,
		            (double)s->drained / (double)s->halts, (unsigned long long)s->after_last_halt);
	if (s->lost_markers)
		output_note(report, "%llu references were lost in %llu run%s (the buffer was full)",
		            (unsigned long long)s->lost, (unsigned long long)s->lost_markers, s->lost_markers == 1 ? "" : "s");
	if (s->with_time)
		output_note(report, "time runs from %llu to %llu", (unsigned long long)s->first_time,
		            (unsigned long long)s->last_time);
	return report;
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
	cli_output output = { OUTPUT_TABLE, NULL, NULL };
	plumb_status status;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		if (cli_output_option(&output, c, optarg))
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
	double start = seconds_now();
	trace_reader *reader;
	if (trace_reader_open(&reader, path, from, &status) < 0) {
		trace_stats_free(&stats);
		return cli_error(command, &status);
	}
	trace_reader_allow_truncated(reader, allow_truncated);
	trace_record *batch = malloc(BATCH * sizeof *batch);
	long n = -1;
	if (batch)
		while ((n = trace_reader_read(reader, batch, BATCH, &status)) > 0)
			if (trace_stats_add(&stats, batch, (size_t)n, &status) < 0) {
				n = -1;
				break;
			}
	double seconds = seconds_now() - start;
	free(batch);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	trace_format format = trace_reader_format(reader);
	if (n < 0) {
		if (!batch)
			snprintf(status.message, sizeof status.message, "out of memory");
		trace_reader_close(reader, NULL);
		trace_stats_free(&stats);
		return cli_error(command, &status);
	}
	if (trace_reader_close(reader, &status) < 0) {
		trace_stats_free(&stats);
		return cli_error(command, &status);
	}
	output_report *report = stats_report(path, &stats, &info, format, seconds, line_size, page_size);
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
