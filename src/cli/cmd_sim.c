/* plumb sim: run a trace (or a program under lackey) through the
 * multicore cache/TLB/coherence simulator and print every statistic. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/command.h"
#include "core/parse.h"
#include "sim/sim.h"
#include "sim/sim_curve.h"
#include "sim/sim_sweep.h"
#include "trace/trace.h"
#ifdef PLUMB_HAVE_MPI
#include "cluster/cluster_mpi.h"
#endif

const char cmd_sim_summary[] = "simulate caches, TLBs and coherence on a trace or a program";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb sim [options] [TRACE]\n"
	        "       plumb sim [options] -- PROGRAM [ARGS...]\n"
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
	        "  -p, --preset NAME     start from a preset; --list-presets.  Without --preset\n"
	        "                        and --config: host, this machine's caches (hwloc)\n"
	        "      --machine FILE    plumb report's report.json: the host preset simulates a\n"
	        "                        shared cache at the usable size measured there when it\n"
	        "                        is under half the nominal one (--preset host-nominal:\n"
	        "                        never)\n"
	        "  -c, --config FILE     read settings from FILE (format: docs/simulator.md)\n"
	        "      --set KEY=VALUE   one setting, e.g. l1d.size=64K, protocol=moesi\n"
	        "                        (repeatable)\n"
	        "      --cores N         simulated cores (1..64)\n"
	        "      --protocol P      mesi, msi, moesi or esi\n"
	        "      --l1i, --l1d, --l2, --l3 SIZE,ASSOC,LINE\n"
	        "                        a level's geometry as cachegrind takes it (l2/l3: none)\n"
	        "      --inclusion I     the L3: inclusive, non-inclusive or exclusive\n"
	        "      --prefetch KIND   none, next-line, stride or stream (Jouppi stream\n"
	        "                        buffers; prefetch.streams, .depth, .lookup,\n"
	        "                        .unshared_only)\n"
	        "      --check           check coherence invariants after every transaction\n"
	        "      --basic           no miss classification (faster; classes not counted)\n"
	        "      --top N           hot lines and code addresses to list (default 10)\n"
	        "      --cachegrind-out FILE  per function and line costs in cachegrind's format\n"
	        "                        (cg_annotate FILE): every level, plus coherence events\n"
	        "      --callgrind-out FILE   the same in callgrind's format (KCachegrind)\n"
	        "      --interleave K    run the trace's threads in lockstep: K references of\n"
	        "                        each thread in turn (Valgrind runs threads by turns of a\n"
	        "                        scheduling quantum; none: keep the trace's order)\n"
	        "      --interleave-window N  records read ahead for --interleave (default 4M)\n"
	        "      --fair-sched      with a program: Valgrind's --fair-sched=yes (threads\n"
	        "                        take turns in a fair order; the turns stay long)\n"
	        "      --curve LEVELS    miss-ratio curve of l1d, l1i, l2 or l3 instead of the\n"
	        "                        report: the misses of every size (1 line up to the\n"
	        "                        footprint) at 1..16 ways and fully associative, LRU,\n"
	        "                        in one pass (Mattson et al. 1970; Hill and Smith 1989),\n"
	        "                        for the program and per region, and each one's knee;\n"
	        "                        a level below the L1s sees what missed the configured\n"
	        "                        levels above it.  Several levels in the same pass:\n"
	        "                        l1d,l2,l3, or data (l1d and every level below it)\n"
	        "      --curve-max SIZE  the grid's largest size (default 64M, at most 256M)\n"
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
	OPT_CHECK, OPT_BASIC, OPT_TOP, OPT_ALLOW_TRUNCATED, OPT_PRINT_CONFIG, OPT_LIST_PRESETS, OPT_MACHINE, OPT_LIST_EVENTS,
	OPT_CACHEGRIND_OUT, OPT_CALLGRIND_OUT,
	OPT_INTERLEAVE, OPT_INTERLEAVE_WINDOW, OPT_FAIR_SCHED, OPT_CURVE, OPT_CURVE_MAX
};

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

/* True when the arguments (before any "--") ask for a sweep. */
static bool is_sweep(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--sweep") || !strncmp(argv[i], "--sweep=", 8))
			return true;
	return false;
}

/* Parses the options into *sweep and *dir: -1 when they are good, else the
 * exit code (0 after --help).  quiet: a rank other than 0 says nothing. */
static int sweep_parse(int argc, char **argv, bool quiet, sim_sweep *sweep, const char **dir)
{
	enum { OPT_SWEEP = 0x3001, OPT_TRACES };
	static const struct option options[] = { { "sweep", required_argument, 0, OPT_SWEEP }, { "traces", required_argument, 0, OPT_TRACES },
		                                     { "output", required_argument, 0, 'o' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	const char *configs = NULL, *traces = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: plumb sim --sweep CONFIGS --traces LIST -o DIR\n"
			       "       mpirun -n N plumb sim --sweep CONFIGS --traces LIST -o DIR\n\n"
			       "Runs every trace through every configuration (each a preset or a configuration\n"
			       "file; comma-separated) and writes one table, DIR/sweep.json and DIR/sweep.csv.\n"
			       "Under mpirun or srun the jobs are spread over the ranks; the table is the\n"
			       "serial one, byte for byte (docs/cluster.md).\n");
			return 0;
		case OPT_SWEEP: configs = optarg; break;
		case OPT_TRACES: traces = optarg; break;
		case 'o': *dir = optarg; break;
		default:
			if (quiet)
				return 2;
			if (c == '?' && optind > 0 && strncmp(argv[optind - 1], "--sweep", 7) && strncmp(argv[optind - 1], "--traces", 8))
				return cli_usage_error("sim", "--sweep takes only --traces and -o DIR (no '%s'): put settings in a configuration file",
				                       argv[optind - 1]);
			return cli_bad_option("sim", c, argv);
		}
	}
	if (optind < argc)
		return quiet ? 2 : cli_usage_error("sim", "unexpected argument '%s' with --sweep (traces go in --traces)", argv[optind]);
	if (!traces)
		return quiet ? 2 : cli_usage_error("sim", "--sweep needs --traces LIST");
	if (!*dir)
		return quiet ? 2 : cli_usage_error("sim", "--sweep needs the output folder: -o DIR");
	plumb_status status;
	if (sim_sweep_parse(sweep, configs, traces, &status) != 0)
		return quiet ? 2 : cli_usage_error("sim", "%s", status.message);
	return -1;
}

/* plumb sim --sweep CONFIGS --traces LIST -o DIR: the sweep's own options,
 * serially or (under mpirun or srun, in a plumb built with MPI) spread over
 * the ranks. */
static int sweep_command(int argc, char **argv)
{
	sim_sweep sweep;
	const char *dir = NULL;
#ifdef PLUMB_HAVE_MPI
	if (cluster_launched()) {
		/* Every rank parses the same arguments; only rank 0 says what is
		 * wrong, and then the ranks leave together. */
		int rc = sweep_parse(argc, argv, cluster_launcher_rank() != 0, &sweep, &dir);
		if (rc >= 0)
			return rc > 0 ? cluster_mpi_exit_together(rc) : rc;
		rc = sim_sweep_mpi_main(&sweep, dir);
		sim_sweep_free(&sweep);
		return rc;
	}
#endif
	int rc = sweep_parse(argc, argv, false, &sweep, &dir);
	if (rc >= 0)
		return rc;
	rc = 0;
	plumb_status status;
	output_report *report = sim_sweep_run_all(&sweep);
	if (!report)
		rc = cli_usage_error("sim", "out of memory");
	else if (sim_sweep_write(report, dir, &status) != 0)
		rc = cli_error("sim", &status);
	else
		printf("sweep: %zu jobs (%zu traces x %zu configurations)\nsweep: %s/sweep.json\nsweep: %s/sweep.csv\n", sim_sweep_job_count(&sweep),
		       sweep.trace_count, sweep.config_count, dir, dir);
	output_report_free(report);
	sim_sweep_free(&sweep);
	return rc;
}

/* The program run under Valgrind (plumb sim -- PROG): its standard output
 * goes to plumb's when the report goes to a file (-o FILE), as under
 * cachegrind, and to plumb's standard error when the report takes the
 * standard output, which then holds the report alone. */
static int open_program(trace_reader **reader, char *const argv[], const char *const valgrind_options[],
                        const cli_output *out, plumb_status *status)
{
	trace_launch launch;
	trace_launch_init(&launch);
	launch.valgrind_options = valgrind_options;
	if (out->path && strcmp(out->path, "-") != 0)
		launch.program_stdout = STDOUT_FILENO;
	return trace_reader_open_launch(reader, argv, &launch, status);
}

/* plumb sim --curve LEVELS: the curves' one pass over the trace or the
 * program's references (all of them: plumbgrind keeps no L1s itself). */
static int curve_command(const cli_output *out, const sim_config *config, const sim_config_origin *origin,
                         const char *level_name, uint64_t max_size, char **program, const char *trace_path,
                         trace_format format, bool allow_truncated, bool fair_sched, uint64_t interleave,
                         uint64_t interleave_window)
{
	plumb_status status;
	sim_curve *curves[SIM_LEVEL_COUNT] = { 0 };
	size_t count = 0;
	if (sim_curve_new_levels(curves, &count, config, level_name, max_size, &status) != 0)
		return cli_usage_error("sim", "--curve: %s", status.message);
	const char *valgrind_options[3] = { TRACE_NO_CODE_MAP, NULL, NULL };
	if (fair_sched)
		valgrind_options[1] = "--fair-sched=yes";
	trace_reader *reader = NULL;
	int rc = program ? open_program(&reader, program, valgrind_options, out, &status)
	                 : trace_reader_open(&reader, trace_path, format, &status);
	trace_interleaver *interleaver = NULL;
	if (rc == 0) {
		if (trace_reader_tool_note(reader))
			fprintf(stderr, "plumb sim: note: %s\n", trace_reader_tool_note(reader));
		if (allow_truncated)
			trace_reader_allow_truncated(reader, 1);
		if (interleave && trace_interleaver_new(&interleaver, interleave, (size_t)interleave_window, &status) != 0) {
			trace_reader_close(reader, NULL);
			rc = -1;
		}
	}
	uint64_t records = 0;
	trace_format used = format;
	if (rc == 0) {
		rc = sim_curve_run_reader_all(curves, count, reader, interleaver, &records, &status);
		trace_interleaver_free(interleaver);
		used = trace_reader_format(reader);
		plumb_status close_status;
		if (trace_reader_close(reader, &close_status) != 0 && rc == 0) {
			status = close_status;
			rc = -1;
		}
	}
	output_report *report = NULL;
	if (rc == 0) {
		sim_run_facts facts = { .trace = program ? program[0] : trace_path, .format = used, .records = records,
			                    .origin = origin };
		report = sim_curve_report_all((const sim_curve *const *)curves, count, &facts, &status);
	}
	for (size_t l = 0; l < count; l++)
		sim_curve_free(curves[l]);
	if (!report)
		return cli_error("sim", &status);
	rc = cli_output_emit(out, report);
	output_report_free(report);
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
		{ "machine", required_argument, 0, OPT_MACHINE },
		{ "list-events", no_argument, 0, OPT_LIST_EVENTS },
		{ "cachegrind-out", required_argument, 0, OPT_CACHEGRIND_OUT },
		{ "callgrind-out", required_argument, 0, OPT_CALLGRIND_OUT },
		{ "interleave", required_argument, 0, OPT_INTERLEAVE },
		{ "interleave-window", required_argument, 0, OPT_INTERLEAVE_WINDOW },
		{ "fair-sched", no_argument, 0, OPT_FAIR_SCHED },
		{ "curve", required_argument, 0, OPT_CURVE }, { "curve-max", required_argument, 0, OPT_CURVE_MAX },
		CLI_OUTPUT_OPTIONS, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	cli_output out = { .format = OUTPUT_TABLE };
	const char *preset = NULL, *config_path = NULL, *format_name = "auto", *machine_path = NULL;
	sim_setting *settings = calloc((size_t)argc + 1, sizeof *settings);
	size_t setting_count = 0;
	bool print_config = false, allow_truncated = false;
	const char *cachegrind_out = NULL, *callgrind_out = NULL;
	uint64_t top = 10, interleave = 0, interleave_window = TRACE_INTERLEAVE_WINDOW;
	bool fair_sched = false;
	const char *curve_level = NULL;
	uint64_t curve_max = 0;
	plumb_status status;
	int c;
	if (!settings)
		return cli_usage_error("sim", "out of memory");
	if (is_sweep(argc, argv)) {
		free(settings);
		return sweep_command(argc, argv);
	}
	optind = 1;
	opterr = 0;
	/* Options may follow TRACE ("plumb sim t.ptrace --json", as trace stats
	 * takes them); a program's own options are safe after '--', where
	 * getopt stops. */
	while ((c = getopt_long(argc, argv, ":hp:c:f:o:", options, NULL)) != -1) {
		const char *key = NULL;
		bool geometry = false;
		switch (c) {
		case 'h':
			usage(stdout);
			free(settings);
			return 0;
		case 'p': preset = optarg; continue;
		case 'c': config_path = optarg; continue;
		case 'f': format_name = optarg; continue;
		case 's': settings[setting_count++] = (sim_setting){ NULL, optarg, false }; continue;
		case OPT_CORES: key = "cores"; break;
		case OPT_PROTOCOL: key = "protocol"; break;
		case OPT_INCLUSION: key = "l3.inclusion"; break;
		case OPT_PREFETCH: key = "prefetch"; break;
		case OPT_L1I: key = "l1i"; geometry = true; break;
		case OPT_L1D: key = "l1d"; geometry = true; break;
		case OPT_L2: key = "l2"; geometry = true; break;
		case OPT_L3: key = "l3"; geometry = true; break;
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
		case OPT_CURVE: curve_level = optarg; continue;
		case OPT_CURVE_MAX:
			if (parse_size(optarg, &curve_max, &status) != 0) {
				free(settings);
				return cli_usage_error("sim", "--curve-max: %s", status.message);
			}
			if (curve_max == 0) {
				/* 0 stands for "not given" below: said here, not read as 64M */
				free(settings);
				return cli_usage_error("sim", "--curve-max: 0 bytes holds no line");
			}
			continue;

		case OPT_PRINT_CONFIG: print_config = true; continue;
		case OPT_LIST_PRESETS: free(settings); return list_presets();
		case OPT_MACHINE: machine_path = optarg; continue;
		case OPT_LIST_EVENTS: free(settings); return list_events();
		default:
			if (cli_output_option("sim", &out, c, optarg))
				continue;
			free(settings);
			/* -s is --sizes in bw; a setting here is spelled out. */
			if (c == '?' && optopt == 's')
				return cli_usage_error("sim", "-s is not an option of sim (in other commands it is --sizes); "
				                       "give a setting with --set KEY=VALUE");
			return cli_bad_option("sim", c, argv);
		}
		settings[setting_count++] = (sim_setting){ key, optarg, geometry };
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
	sim_config_origin origin;
	int chosen = sim_config_choose_machine(&config, preset, config_path, machine_path, settings, setting_count, &origin,
	                                       &status);
	free(settings);
	if (chosen != 0)
		return cli_usage_error("sim", "%s", status.message);
	if (print_config) {
		if (machine_path && origin.machine[0])
			printf("# %s\n", origin.machine);   /* the usable size taken, with the nominal one */
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
	if (curve_max && !curve_level)
		return cli_usage_error("sim", "--curve-max goes with --curve LEVEL");
	if (curve_level) {
		if (cachegrind_out || callgrind_out || config.check)
			return cli_usage_error("sim", "--curve makes its own table: it takes no --cachegrind-out, "
			                       "--callgrind-out or --check");
		return curve_command(&out, &config, &origin, curve_level, curve_max, command_mode ? argv + optind : NULL,
		                     trace_path, format, allow_truncated, fair_sched, interleave, interleave_window);
	}

	trace_reader *reader;
	/* --plumb-calls=yes: plumbgrind follows calls, for the callgrind file's inclusive costs */
	const char *valgrind_options[5] = { NULL, NULL, NULL, NULL, NULL };
	size_t option_count = 0;
	if (!sim_run_names_code(&config, (size_t)top, cachegrind_out || callgrind_out))
		valgrind_options[option_count++] = TRACE_NO_CODE_MAP;
	if (fair_sched)
		valgrind_options[option_count++] = "--fair-sched=yes";
	if (callgrind_out)
		valgrind_options[option_count++] = "--plumb-calls=yes";
	/* plumbgrind keeps a one-core machine's L1s itself when it can (docs/valgrind-tool.md) */
	char filter_option[256];
	if (command_mode && !cachegrind_out && !callgrind_out && !interleave) {
		int filter = sim_filter_option(&config, filter_option, sizeof filter_option, &status);
		if (filter < 0)
			return cli_error("sim", &status);
		if (filter > 0)
			valgrind_options[option_count++] = filter_option;
	}
	int rc = command_mode ? open_program(&reader, argv + optind, valgrind_options, &out, &status)
	                      : trace_reader_open(&reader, trace_path, format, &status);
	if (rc != 0)
		return cli_error("sim", &status);
	if (trace_reader_tool_note(reader))
		fprintf(stderr, "plumb sim: note: %s\n", trace_reader_tool_note(reader));
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
	/* A traced program writes on plumb's standard output: a progress line on
	 * the same terminal would be cut by its lines. */
	bool program_on_terminal = command_mode && isatty(STDOUT_FILENO);
	rc = sim_run_reader(s, reader, interleaver, !program_on_terminal, &records, &status);
	records -= sim_call_records(s);   /* calls and returns are not references */
	trace_interleaver_free(interleaver);
	/* plumbgrind's function, file and line of every instruction run, or
	 * those plumb trace record kept beside the trace */
	trace_code_map *code_map = NULL;
	char code_path[4096] = "";
	if (rc == 0 && sim_code_map_find(reader, command_mode ? NULL : trace_path, &code_map, code_path,
	                                 sizeof code_path, &status) != 0)
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
	sim_run_facts facts = { .trace = command_mode ? argv[optind] : trace_path, .format = used, .records = records,
		                    .interleave = interleave, .interleave_window = interleave_window,
		                    .fair_sched = fair_sched, .origin = &origin,
		                    .code_map = code_map && !command_mode ? code_path : NULL,
		                    .truncated = info.truncated != 0, .truncated_bytes = info.truncated_bytes,
		                    .checked = config.check };
	output_report *report = sim_run_report(s, &facts, (size_t)top, &status);
	if (!report) {
		sim_free(s);
		trace_code_map_free(code_map);
		return cli_error("sim", &status);
	}
	rc = cli_output_emit(&out, report);
	output_report_free(report);
	if (rc == 0 && (cachegrind_out || callgrind_out)) {
		char *command = command_mode ? sim_command_text(argv + optind, (size_t)(argc - optind)) : strdup(trace_path);
		if ((cachegrind_out && sim_write_annotation_file(cachegrind_out, s, code_map, command, false, &status) != 0) ||
		    (callgrind_out && sim_write_annotation_file(callgrind_out, s, code_map, command, true, &status) != 0))
			rc = cli_error("sim", &status);
		free(command);
	}
	sim_free(s);
	trace_code_map_free(code_map);
	return rc;
}
