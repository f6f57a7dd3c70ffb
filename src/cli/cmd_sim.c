/* plumb sim: run a trace (or a program under lackey) through the
 * multicore cache/TLB/coherence simulator and print every statistic. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/command.h"
#include "cli/sim_sweep.h"
#include "plumb/parse.h"
#include "plumb/progress.h"
#include "plumb/sim.h"
#include "plumb/trace.h"

const char cmd_sim_summary[] = "simulate caches, TLBs and coherence on a trace or a program";

#define BATCH 65536

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb sim [OPTIONS] [TRACE]\n"
	        "       plumb sim [OPTIONS] -- PROGRAM [ARGS...]\n"
	        "       [mpirun -n N] plumb sim --sweep CONFIGS --traces LIST -o DIR\n"
	        "                        every trace through every configuration, one table;\n"
	        "                        spread over MPI ranks under mpirun (--sweep X --help)\n\n"
	        "Runs a trace (a file, or standard input when TRACE is - or absent) or a\n"
	        "program under Valgrind (plumbgrind, or lackey) through N cores with private\n"
	        "L1I/L1D/L2, an optional shared L3, TLBs, prefetchers and MSI/MESI/MOESI/ESI\n"
	        "coherence, and\n"
	        "reports hits, misses and their classes, coherence events, transitions,\n"
	        "threads, regions (plumb_region_begin/end markers), hot lines, code addresses\n"
	        "with their function, file and line, and estimated cycles (docs/simulator.md).\n"
	        "Without --preset or --config it simulates this machine's caches (hwloc).\n\n"
	        "  -p, --preset NAME     start from a preset; --list-presets.  Without --preset and\n"
	        "                        --config: host, this machine's caches (hwloc)\n"
	        "  -c, --config FILE     read settings from FILE (format: docs/simulator.md)\n"
	        "  -s, --set KEY=VALUE   one setting, e.g. l1d.size=64K, protocol=moesi (repeatable)\n"
	        "      --cores N         simulated cores (1..64)\n"
	        "      --protocol P      mesi, msi, moesi or esi\n"
	        "      --l1i, --l1d, --l2, --l3 SIZE,ASSOC,LINE\n"
	        "                        a level's geometry as cachegrind takes it (l2/l3: none)\n"
	        "      --inclusion I     the L3: inclusive, non-inclusive or exclusive\n"
	        "      --prefetch KIND   none, next-line, stride or stream (Jouppi stream buffers;\n"
	        "                        prefetch.streams, .depth, .lookup, .unshared_only)\n"
	        "      --check           check coherence invariants after every transaction\n"
	        "      --basic           no miss classification (faster; classes not counted)\n"
	        "      --top N           hot lines and code addresses to list (default 10)\n"
	        "      --cachegrind-out FILE  per function and line costs in cachegrind's format\n"
	        "                        (cg_annotate FILE): every level, plus coherence events\n"
	        "      --callgrind-out FILE   the same in callgrind's format (KCachegrind)\n"
	        "      --interleave K    run the trace's threads in lockstep: K references of each\n"
	        "                        thread in turn (Valgrind runs threads by turns of a\n"
	        "                        scheduling quantum; none: keep the trace's order)\n"
	        "      --interleave-window N  records read ahead for --interleave (default 4M)\n"
	        "      --fair-sched      with a program: Valgrind's --fair-sched=yes (threads take\n"
	        "                        turns in a fair order; the turns stay long)\n"
	        "  -f, --format F        trace format: auto (default), native, lackey, din\n"
	        "      --allow-truncated read a cut-short native trace up to its last block\n"
	        "      --print-config    print the configuration in the file format and exit\n"
	        "      --list-presets    list the presets and exit\n"
	        "      --list-events     list the event names the simulator answers and exit\n"
	        "      --csv             CSV output\n"
	        "      --json            JSON output (schema: docs/output-schema.md)\n"
	        "  -o, --output FILE     write to FILE (atomically) instead of stdout\n"
	        "  -h, --help            this help\n");
}

enum {
	OPT_CORES = 0x2001, OPT_PROTOCOL, OPT_L1I, OPT_L1D, OPT_L2, OPT_L3, OPT_INCLUSION, OPT_PREFETCH,
	OPT_CHECK, OPT_BASIC, OPT_TOP, OPT_ALLOW_TRUNCATED, OPT_PRINT_CONFIG, OPT_LIST_PRESETS, OPT_LIST_EVENTS,
	OPT_CACHEGRIND_OUT, OPT_CALLGRIND_OUT,
	OPT_INTERLEAVE, OPT_INTERLEAVE_WINDOW, OPT_FAIR_SCHED
};

/* The program and its arguments, or the trace, for the annotation files' cmd: line. */
static char *command_text(char **argv, int first, int argc)
{
	size_t length = 1;
	for (int i = first; i < argc; i++)
		length += strlen(argv[i]) + 1;
	char *text = malloc(length);
	if (!text)
		return NULL;
	text[0] = 0;
	for (int i = first; i < argc; i++) {
		if (i > first)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	for (char *p = text; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return text;
}

/* Writes one annotation file atomically. */
static int write_annotation(const char *path, const sim *s, const trace_code_map *map, const char *command,
                            bool callgrind, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	int rc = callgrind ? sim_write_callgrind(s, map, command, file.stream, status)
	                   : sim_write_cachegrind(s, map, command, file.stream, status);
	if (rc != 0) {
		output_file_abort(&file);
		return -1;
	}
	return output_file_commit(&file, status);
}

/* "32K,8,64" (or "none" for L2/L3) into level's settings. */
static int set_geometry(sim_config *config, const char *level, const char *text, plumb_status *status)
{
	char key[32];
	if (strcmp(text, "none") == 0) {
		snprintf(key, sizeof key, "%s.size", level);
		return sim_config_set(config, key, "none", status);
	}
	char copy[128];
	if (strlen(text) >= sizeof copy)
		return plumb_fail(status, EINVAL, "--%s: too long", level);
	strcpy(copy, text);
	char *fields[3];
	char *save = NULL;
	int n = 0;
	for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		if (n == 3)
			return plumb_fail(status, EINVAL, "--%s: '%s' is not SIZE,ASSOC,LINE", level, text);
		fields[n++] = part;
	}
	if (n != 3)
		return plumb_fail(status, EINVAL, "--%s: '%s' is not SIZE,ASSOC,LINE", level, text);
	static const char *const names[3] = { "size", "assoc", "line" };
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof key, "%s.%s", level, names[i]);
		if (sim_config_set(config, key, fields[i], status) != 0)
			return -1;
	}
	return 0;
}

static int list_presets(void)
{
	const char *const *names = sim_preset_names();
	for (size_t i = 0; names[i]; i++)
		printf("%-12s %s\n", names[i], sim_preset_description(names[i]));
	return 0;
}

static int list_events(void)
{
	for (size_t i = 0; sim_event_name(i); i++)
		printf("%-24s %s\n", sim_event_name(i), sim_event_description(sim_event_name(i)));
	return 0;
}

/* A setting from the command line, applied after the preset and the file. */
typedef struct setting {
	const char *key;     /* NULL: assignment is "key=value"; else a --l1d-style geometry */
	const char *value;
} setting;

static int run(sim *s, trace_reader *reader, trace_interleaver *interleaver, uint64_t *records, plumb_status *status)
{
	progress p;
	progress_begin(&p, "plumb sim: records", 0);
	int rc = 0;
	for (;;) {
		/* Lent, not copied: a native file's records come straight from the
		 * reader's background decoder (docs/trace-format.md). */
		const trace_record *batch;
		trace_compact compact = { 0 };
		long got = interleaver ? trace_interleaver_view(interleaver, reader, &batch, BATCH, status)
		                       : trace_reader_view_compact(reader, &batch, &compact, BATCH, status);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		/* plumbgrind's entries as they came through the ring, or records */
		if (compact.words ? sim_access_compact(s, &compact, status) != 0
		                  : sim_access_batch(s, batch, (size_t)got, status) != 0) {
			rc = -1;
			break;
		}
		*records += (uint64_t)got;
		progress_step(&p, (size_t)*records);
	}
	progress_end(&p);
	return rc;
}

int cmd_sim(int argc, char **argv)
{
	static const struct option options[] = {
		{ "preset", required_argument, 0, 'p' }, { "config", required_argument, 0, 'c' },
		{ "set", required_argument, 0, 's' }, { "format", required_argument, 0, 'f' },
		{ "cores", required_argument, 0, OPT_CORES }, { "protocol", required_argument, 0, OPT_PROTOCOL },
		{ "l1i", required_argument, 0, OPT_L1I }, { "l1d", required_argument, 0, OPT_L1D },
		{ "l2", required_argument, 0, OPT_L2 }, { "l3", required_argument, 0, OPT_L3 },
		{ "inclusion", required_argument, 0, OPT_INCLUSION }, { "prefetch", required_argument, 0, OPT_PREFETCH },
		{ "check", no_argument, 0, OPT_CHECK }, { "basic", no_argument, 0, OPT_BASIC },
		{ "top", required_argument, 0, OPT_TOP }, { "allow-truncated", no_argument, 0, OPT_ALLOW_TRUNCATED },
		{ "print-config", no_argument, 0, OPT_PRINT_CONFIG }, { "list-presets", no_argument, 0, OPT_LIST_PRESETS },
		{ "list-events", no_argument, 0, OPT_LIST_EVENTS },
		{ "cachegrind-out", required_argument, 0, OPT_CACHEGRIND_OUT },
		{ "callgrind-out", required_argument, 0, OPT_CALLGRIND_OUT },
		{ "interleave", required_argument, 0, OPT_INTERLEAVE },
		{ "interleave-window", required_argument, 0, OPT_INTERLEAVE_WINDOW },
		{ "fair-sched", no_argument, 0, OPT_FAIR_SCHED },
		CLI_OUTPUT_OPTIONS, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	cli_output out = { OUTPUT_TABLE, NULL, NULL };
	const char *preset = NULL, *config_path = NULL, *format_name = "auto";
	setting *settings = calloc((size_t)argc + 1, sizeof *settings);
	size_t setting_count = 0;
	bool print_config = false, allow_truncated = false;
	const char *cachegrind_out = NULL, *callgrind_out = NULL;
	uint64_t top = 10, interleave = 0, interleave_window = TRACE_INTERLEAVE_WINDOW;
	bool fair_sched = false;
	plumb_status status;
	int c;
	if (!settings)
		return cli_usage_error("sim", "out of memory");
	if (cli_sim_is_sweep(argc, argv)) {
		free(settings);
		return cli_sim_sweep(argc, argv);
	}
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, so "-- PROGRAM -x" keeps its options */
	while ((c = getopt_long(argc, argv, "+:hp:c:s:f:o:", options, NULL)) != -1) {
		const char *key = NULL;
		switch (c) {
		case 'h':
			usage(stdout);
			free(settings);
			return 0;
		case 'p': preset = optarg; continue;
		case 'c': config_path = optarg; continue;
		case 'f': format_name = optarg; continue;
		case 's': settings[setting_count++] = (setting){ NULL, optarg }; continue;
		case OPT_CORES: key = "cores"; break;
		case OPT_PROTOCOL: key = "protocol"; break;
		case OPT_INCLUSION: key = "l3.inclusion"; break;
		case OPT_PREFETCH: key = "prefetch"; break;
		case OPT_L1I: key = "--l1i"; break;
		case OPT_L1D: key = "--l1d"; break;
		case OPT_L2: key = "--l2"; break;
		case OPT_L3: key = "--l3"; break;
		case OPT_CHECK: key = "check"; optarg = (char *)"yes"; break;
		case OPT_BASIC: key = "classify"; optarg = (char *)"no"; break;
		case OPT_TOP:
			if (parse_u64(optarg, 0, 10000, &top, &status) != 0) {
				free(settings);
				return cli_usage_error("sim", "--top: %s", status.message);
			}
			continue;
		case OPT_ALLOW_TRUNCATED: allow_truncated = true; continue;
		case OPT_CACHEGRIND_OUT: cachegrind_out = optarg; continue;
		case OPT_CALLGRIND_OUT: callgrind_out = optarg; continue;
		case OPT_INTERLEAVE:
			if (strcmp(optarg, "none") != 0 && parse_u64(optarg, 1, UINT64_MAX, &interleave, &status) != 0) {
				free(settings);
				return cli_usage_error("sim", "--interleave: %s (want a number of references, or none)",
				                       status.message);
			}
			if (strcmp(optarg, "none") == 0)
				interleave = 0;
			continue;
		case OPT_INTERLEAVE_WINDOW:
			if (parse_u64(optarg, 2, 1ull << 32, &interleave_window, &status) != 0) {
				free(settings);
				return cli_usage_error("sim", "--interleave-window: %s", status.message);
			}
			continue;
		case OPT_FAIR_SCHED: fair_sched = true; continue;

		case OPT_PRINT_CONFIG: print_config = true; continue;
		case OPT_LIST_PRESETS: free(settings); return list_presets();
		case OPT_LIST_EVENTS: free(settings); return list_events();
		default:
			if (cli_output_option(&out, c, optarg))
				continue;
			free(settings);
			return cli_bad_option("sim", c, argv);
		}
		settings[setting_count++] = (setting){ key, optarg };
	}
	bool command_mode = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
	const char *trace_path = "-";
	if (command_mode) {
		if (optind >= argc) {
			free(settings);
			return cli_usage_error("sim", "'--' must be followed by a program to run");
		}
	} else if (optind < argc) {
		trace_path = argv[optind++];
		if (optind < argc) {
			free(settings);
			return cli_usage_error("sim", "unexpected argument '%s' (a program goes after '--')", argv[optind]);
		}
	}

	/* Without a preset or a file: this machine's caches (the host preset),
	 * or the generic default with a note when they cannot be read. */
	sim_config config;
	char machine[512] = "", host_problem[PLUMB_MESSAGE_MAX] = "";
	if (!preset && !config_path) {
		char described[400];
		if (sim_preset(&config, "host", &status) == 0 && sim_config_validate(&config, &status) == 0) {
			snprintf(machine, sizeof machine, "host (hwloc: %s)",
			         sim_config_describe(&config, described, sizeof described));
		} else {
			snprintf(host_problem, sizeof host_problem, "%s", status.message);
			preset = "default";
		}
	}
	if (preset && sim_preset(&config, preset, &status) != 0) {
		free(settings);
		return cli_usage_error("sim", "%s", status.message);
	}
	if (!preset && config_path)
		sim_config_default(&config);
	if (config_path && sim_config_load(&config, config_path, &status) != 0) {
		free(settings);
		return cli_usage_error("sim", "%s", status.message);
	}
	for (size_t i = 0; i < setting_count; i++) {
		int rc;
		if (!settings[i].key)
			rc = sim_config_assign(&config, settings[i].value, &status);
		else if (settings[i].key[0] == '-')
			rc = set_geometry(&config, settings[i].key + 2, settings[i].value, &status);
		else
			rc = sim_config_set(&config, settings[i].key, settings[i].value, &status);
		if (rc != 0) {
			free(settings);
			return cli_usage_error("sim", "%s", status.message);
		}
	}
	free(settings);
	if (machine[0] && setting_count > 0) {
		size_t used = strlen(machine);
		snprintf(machine + used, sizeof machine - used, ", changed by %zu command-line setting%s", setting_count,
		         setting_count == 1 ? "" : "s");
	}
	if (sim_config_validate(&config, &status) != 0)
		return cli_usage_error("sim", "%s", status.message);
	if (print_config) {
		sim_config_write(&config, stdout);
		return 0;
	}
	trace_format format;
	if (trace_format_parse(format_name, &format, &status) != 0)
		return cli_usage_error("sim", "--format: %s", status.message);
	if (!command_mode && fair_sched)
		return cli_usage_error("sim", "--fair-sched applies to a program run after '--'");
	if (!command_mode && strcmp(trace_path, "-") == 0 && isatty(STDIN_FILENO))
		return cli_usage_error("sim", "no trace: give a file, pipe one in, or run a program after '--'");

	trace_reader *reader;
	/* --plumb-calls=yes: plumbgrind follows calls, for the callgrind file's inclusive costs */
	const char *valgrind_options[3] = { NULL, NULL, NULL };
	size_t option_count = 0;
	if (fair_sched)
		valgrind_options[option_count++] = "--fair-sched=yes";
	if (callgrind_out)
		valgrind_options[option_count++] = "--plumb-calls=yes";
	int rc = command_mode ? trace_reader_open_command_options(&reader, argv + optind, valgrind_options, &status)
	                      : trace_reader_open(&reader, trace_path, format, &status);
	if (rc != 0)
		return cli_error("sim", &status);
	if (allow_truncated)
		trace_reader_allow_truncated(reader, 1);
	sim *s;
	if (sim_new(&s, &config, &status) != 0) {
		trace_reader_close(reader, NULL);
		return cli_error("sim", &status);
	}
	if ((cachegrind_out || callgrind_out) && sim_annotate(s, &status) != 0) {
		trace_reader_close(reader, NULL);
		sim_free(s);
		return cli_error("sim", &status);
	}
	trace_interleaver *interleaver = NULL;
	if (interleave && trace_interleaver_new(&interleaver, interleave, (size_t)interleave_window, &status) != 0) {
		sim_free(s);
		trace_reader_close(reader, NULL);
		return cli_error("sim", &status);
	}
	uint64_t records = 0;
	rc = run(s, reader, interleaver, &records, &status);
	records -= sim_call_records(s);   /* calls and returns are not references */
	trace_interleaver_free(interleaver);
	/* plumbgrind's function, file and line of every instruction run */
	trace_code_map *code_map = NULL;
	char code_path[4096] = "";
	if (rc == 0 && trace_reader_code_map(reader, &code_map, &status) != 0)
		rc = -1;
	/* a trace recorded by plumb trace record keeps them in TRACE.code */
	if (rc == 0 && !code_map && !command_mode && strcmp(trace_path, "-") != 0 &&
	    trace_code_map_path_for(trace_path, code_path, sizeof code_path) && access(code_path, R_OK) == 0 &&
	    trace_code_map_load(&code_map, code_path, &status) != 0)
		rc = -1;
	sim_set_code_map(s, code_map);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	trace_format used = trace_reader_format(reader);
	plumb_status close_status;
	int closed = trace_reader_close(reader, &close_status);
	if (rc != 0 || closed != 0) {
		sim_free(s);
		trace_code_map_free(code_map);
		return cli_error("sim", rc != 0 ? &status : &close_status);
	}
	if (config.check && sim_check(s, &status) != 0) {
		sim_free(s);
		trace_code_map_free(code_map);
		return cli_error("sim", &status);
	}
	output_report *report = output_report_new("sim");
	output_meta_text(report, "trace", command_mode ? argv[optind] : trace_path);
	output_meta_text(report, "format", trace_format_name(used));
	output_meta_integer(report, "records", (int64_t)records);
	char meta[160];
	if (interleave) {
		snprintf(meta, sizeof meta, "%llu references of each thread in turn (window %llu records)",
		         (unsigned long long)interleave, (unsigned long long)interleave_window);
		output_meta_text(report, "interleave", meta);
	}
	if (fair_sched)
		output_meta_text(report, "valgrind scheduling", "--fair-sched=yes");
	if (machine[0])
		output_meta_text(report, "machine", machine);
	if (code_map && !command_mode)
		output_meta_text(report, "code_map", code_path);
	if (host_problem[0])
		output_note(report, "this machine's caches could not be read (%s): the generic default machine was "
		            "simulated", host_problem);
	if (info.truncated)
		output_note(report, "the trace was cut short: %llu bytes of an incomplete block were ignored",
		            (unsigned long long)info.truncated_bytes);
	if (sim_report(s, report, (size_t)top, &status) != 0) {
		output_report_free(report);
		sim_free(s);
		trace_code_map_free(code_map);
		return cli_error("sim", &status);
	}
	if (config.check)
		output_note(report, "--check: every invariant held (single writer, inclusion, directory = contents, "
		                    "counting identities)");
	rc = cli_output_emit(&out, report);
	output_report_free(report);
	if (rc == 0 && (cachegrind_out || callgrind_out)) {
		char *command = command_mode ? command_text(argv, optind, argc) : strdup(trace_path);
		if ((cachegrind_out && write_annotation(cachegrind_out, s, code_map, command, false, &status) != 0) ||
		    (callgrind_out && write_annotation(callgrind_out, s, code_map, command, true, &status) != 0))
			rc = cli_error("sim", &status);
		free(command);
	}
	sim_free(s);
	trace_code_map_free(code_map);
	return rc;
}
