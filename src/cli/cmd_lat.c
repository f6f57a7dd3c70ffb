/* plumb lat: dependent-load latency across a working-set sweep, the levels
 * it reveals, and optionally restart latency and memory-level parallelism.
 * The work is in src/latency/latency_*.c; this file parses and prints. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli/command.h"
#include "core/cpu.h"
#include "latency/latency_run.h"
#include "machine/machine_model.h"
#include "core/parse.h"
#include "report/report.h"

const char cmd_lat_summary[] = "load latency per cache level, restart latency, memory parallelism";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb lat [options] [--csv | --json] [-o FILE]\n\n"
	        "Times chains of dependent loads (random cyclic permutations at cache-line\n"
	        "granularity, so prefetchers cannot help) over a working-set sweep, reports ns\n"
	        "and TSC cycles per load, and finds each level's plateau latency and the\n"
	        "working set where it ends, next to what sysfs says.\n\n"
	        "  --min-size SIZE        smallest working set (default 4KiB)\n"
	        "  --max-size SIZE        largest working set (default 4x the last-level cache)\n"
	        "  --points-per-octave N  sweep density (default 4)\n"
	        "  --pattern P            random (default), page (pages in random order, all\n"
	        "                         lines of a page before the next: isolates TLB misses),\n"
	        "                         strided (constant stride: exposes the prefetchers), or\n"
	        "                         another tool's chain, to compare with it: lmbench\n"
	        "                         (lmbench 3.0 lat_mem_rd: a forward 64-byte stride walk,\n"
	        "                         default pages), lmbench-thrash (lat_mem_rd -t: another\n"
	        "                         random page at every load), lmbench-line (lmbench's\n"
	        "                         line_initialize: random pages, lines of a page in\n"
	        "                         bit-reversed order), lmbench2 (lmbench 2 lat_mem_rd: a\n"
	        "                         backward 64-byte stride walk), multichase (its default:\n"
	        "                         random inside 256 KiB blocks of 256-byte slots, blocks\n"
	        "                         in random order, pointer at a random word, 4 KiB\n"
	        "                         pages); --line-size, --page-group and --pages override\n"
	        "                         a tool's values (lmbench's stride is --line-size)\n"
	        "  --page-group SIZE      page size for --pattern page and lmbench-*, block size\n"
	        "                         for multichase (default the base page; 256KiB)\n"
	        "  --stride SIZE          stride for --pattern strided (default one line)\n"
	        "  --line-size SIZE       slot size (default the L1 line size)\n"
	        "  --pages MODE           thp (default), small, hugetlb or default\n"
	        "  -C, --cpu N            pin to CPU N (default the CPU the run starts on)\n"
	        "  --seed N               permutation seed\n"
	        "  --repeats N            measure the points near each boundary in N more passes\n"
	        "                         (0-8, default 4): each boundary is given with its\n"
	        "                         spread over the passes, and \"unstable\" when they\n"
	        "                         disagree\n"
	        "  --single-pass          the same as --repeats 0\n"
	        "  --from FILE            re-analyse a saved 'plumb lat --json' report (its sweep\n"
	        "                         and passes) instead of measuring; - reads stdin\n"
	        "  --machine FILE         plumb report's report.json: say where a level's latency\n"
	        "                         or usable size, or the clock, differs from its machine\n"
	        "                         model beyond both spreads\n"
	        "  --restart              also measure restart latency at each level\n"
	        "  --mlp                  also measure memory-level parallelism at each level\n"
	        "  --max-chains N         MLP: up to N interleaved chains (1-32, default 32)\n"
	        "  --target-ci PCT        repeat until the 95%% CI is within +-PCT%% (default 2)\n"
	        "  --time-cap MS          time cap per measurement (default 150)\n"
	        "  --csv                  CSV output\n"
	        "  --json                 JSON output (schema: docs/output-schema.md)\n"
	        "  -o, --output FILE      write to FILE (atomically) instead of stdout\n"
	        "  -h, --help             this help\n\n"
	        "The default run (sweep and levels) takes 3-20 s on 2 cores, with load;\n"
	        "--restart and --mlp add a few seconds each.  See man plumb-lat and\n"
	        "docs/latency.md.\n");
}

enum {
	OPT_MIN = 0x2001, OPT_MAX, OPT_PPO, OPT_PATTERN, OPT_PAGE_GROUP, OPT_STRIDE, OPT_LINE, OPT_PAGES, OPT_CPU,
	OPT_SEED, OPT_SINGLE_PASS, OPT_RESTART, OPT_MLP, OPT_MAX_CHAINS, OPT_CI, OPT_TIME_CAP, OPT_REPEATS, OPT_FROM, OPT_MACHINE
};

/* Which options the user gave, so a named pattern's values fill only the rest. */
typedef struct given_options {
	const latency_pattern_preset *preset;
	bool line, page_group, pages;
} given_options;

static int parse_option(latency_run_options *o, given_options *given, int c, const char *arg, plumb_status *s)
{
	uint64_t u;
	double d;
	switch (c) {
	case OPT_MIN: return parse_size(arg, &o->min_bytes, s);
	case OPT_MAX: return parse_size(arg, &o->max_bytes, s);
	case OPT_PPO:
		if (parse_u64(arg, 1, 64, &u, s) != 0)
			return -1;
		o->points_per_octave = (unsigned)u;
		return 0;
	case OPT_PATTERN:
		given->preset = latency_pattern_find(arg);
		if (!given->preset)
			return plumb_fail(s, 22, "unknown pattern '%s' (%s)", arg, latency_pattern_names());
		o->pattern = given->preset->pattern;
		return 0;
	case OPT_PAGE_GROUP:
		if (parse_size(arg, &u, s) != 0)
			return -1;
		/* the library reads 0 as "the page size": refuse it rather than substitute */
		if (u == 0)
			return plumb_fail(s, 22, "--page-group: 0 bytes is not a group size; give a positive size such as 4K");
		o->page_group_bytes = (size_t)u;
		given->page_group = true;
		return 0;
	case OPT_STRIDE:
		if (parse_size(arg, &u, s) != 0)
			return -1;
		/* the library reads 0 as "one line": refuse it rather than substitute */
		if (u == 0)
			return plumb_fail(s, 22, "--stride: 0 bytes is not a stride; give a positive size such as 64 or 4K");
		o->stride_bytes = (size_t)u;
		return 0;
	case OPT_LINE:
		if (parse_size(arg, &u, s) != 0)
			return -1;
		if (u < 8 || (u & (u - 1)))
			return plumb_fail(s, 22, "line size '%s' is not a power of two of at least 8 bytes", arg);
		o->line_bytes = (size_t)u;
		given->line = true;
		return 0;
	case OPT_PAGES:
		given->pages = true;
		if (!strcmp(arg, "thp"))
			o->pages = ARENA_PAGES_THP;
		else if (!strcmp(arg, "small"))
			o->pages = ARENA_PAGES_SMALL;
		else if (!strcmp(arg, "hugetlb"))
			o->pages = ARENA_PAGES_HUGETLB;
		else if (!strcmp(arg, "default"))
			o->pages = ARENA_PAGES_DEFAULT;
		else
			return plumb_fail(s, 22, "unknown page mode '%s' (thp, small, hugetlb, default)", arg);
		return 0;
	case OPT_CPU:
		if (parse_u64(arg, 0, 4095, &u, s) != 0)
			return -1;
		o->cpu = (int)u;
		return 0;
	case OPT_SEED: return parse_u64(arg, 0, UINT64_MAX, &o->seed, s);
	case OPT_SINGLE_PASS: o->repeats = 0; return 0;
	case OPT_REPEATS:
		if (parse_u64(arg, 0, 8, &u, s) != 0)
			return -1;
		o->repeats = (unsigned)u;
		return 0;
	case OPT_RESTART: o->restart = true; return 0;
	case OPT_MLP: o->mlp = true; return 0;
	case OPT_MAX_CHAINS:
		if (parse_u64(arg, 1, CHASE_MAX_PARALLEL, &u, s) != 0)
			return -1;
		o->max_chains = (unsigned)u;
		return 0;
	case OPT_CI:
		if (parse_double(arg, 0.1, 50, &d, s) != 0)
			return -1;
		o->measure.target_relative_ci = d / 100;
		return 0;
	case OPT_TIME_CAP:
		if (parse_u64(arg, 1, 60000, &u, s) != 0)
			return -1;
		o->measure.time_cap_ns = u * 1000000;
		return 0;
	}
	return 1;
}

int cmd_lat(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "help", no_argument, 0, 'h' },
		{ "min-size", required_argument, 0, OPT_MIN },
		{ "max-size", required_argument, 0, OPT_MAX },
		{ "points-per-octave", required_argument, 0, OPT_PPO },
		{ "pattern", required_argument, 0, OPT_PATTERN },
		{ "page-group", required_argument, 0, OPT_PAGE_GROUP },
		{ "stride", required_argument, 0, OPT_STRIDE },
		{ "line-size", required_argument, 0, OPT_LINE },
		{ "pages", required_argument, 0, OPT_PAGES },
		{ "cpu", required_argument, 0, OPT_CPU },
		{ "seed", required_argument, 0, OPT_SEED },
		{ "single-pass", no_argument, 0, OPT_SINGLE_PASS },
		{ "restart", no_argument, 0, OPT_RESTART },
		{ "mlp", no_argument, 0, OPT_MLP },
		{ "max-chains", required_argument, 0, OPT_MAX_CHAINS },
		{ "target-ci", required_argument, 0, OPT_CI },
		{ "time-cap", required_argument, 0, OPT_TIME_CAP },
		{ "repeats", required_argument, 0, OPT_REPEATS },
		{ "from", required_argument, 0, OPT_FROM },
		{ "machine", required_argument, 0, OPT_MACHINE },
		/* the names before the common vocabulary (man plumb-lat: kept for one release) */
		{ "min", required_argument, 0, OPT_MIN },
		{ "max", required_argument, 0, OPT_MAX },
		{ "line", required_argument, 0, OPT_LINE },
		{ "ci", required_argument, 0, OPT_CI },
		{ 0, 0, 0, 0 }
	};
	cli_output out = { .format = OUTPUT_TABLE };
	latency_run_options o;
	latency_run_defaults(&o);
	given_options given = { 0 };
	plumb_status status;
	const char *from = NULL, *machine = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hC:o:", options, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (cli_output_option("lat", &out, c, optarg))
			continue;
		if (c == 'C')
			c = OPT_CPU;
		if (c == OPT_FROM) {
			from = optarg;
			continue;
		}
		if (c == OPT_MACHINE) {
			machine = optarg;
			continue;
		}
		int rc = parse_option(&o, &given, c, optarg, &status);
		if (rc < 0)
			return cli_usage_error("lat", "%s", status.message);
		if (rc > 0)
			return cli_bad_option("lat", c, argv);
	}
	if (optind < argc)
		return cli_usage_error("lat", "unexpected argument '%s'", argv[optind]);
	/* Another tool's pattern brings its slot, block and pages, unless given. */
	if (given.preset) {
		if (!given.line && given.preset->line_bytes)
			o.line_bytes = given.preset->line_bytes;
		if (!given.page_group && given.preset->page_group_bytes)
			o.page_group_bytes = given.preset->page_group_bytes;
		if (!given.pages && given.preset->set_pages)
			o.pages = given.preset->pages;
	}
	if (o.max_bytes && o.max_bytes < o.min_bytes)
		return cli_usage_error("lat", "--max-size is smaller than --min-size");
	if (o.cpu >= 0 && cpu_check_allowed(&o.cpu, 1, &status) != 0)
		return cli_usage_error("lat", "--cpu: %s", status.message);

	latency_run_result result;
	if (from) {
		/* The saved run's own settings replace the options. */
		output_report *saved;
		if (report_read_file(from, &saved, &status) != 0)
			return cli_error("lat", &status);
		int rc = latency_run_from_report(saved, &o, &result, &status);
		output_report_free(saved);
		if (rc != 0) {
			latency_run_free(&result);
			fprintf(stderr, "plumb lat: %s: %s\n", from, status.message);
			return 1;
		}
	} else if (latency_run(&o, &result, &status) != 0) {
		latency_run_free(&result);
		return cli_error("lat", &status);
	}
	output_report *report = latency_run_report(&o, &result);
	latency_run_free(&result);
	if (!report) {
		snprintf(status.message, sizeof status.message, "out of memory");
		return cli_error("lat", &status);
	}
	if (machine && machine_model_note_differences(report, machine, &status) != 0) {
		output_report_free(report);
		fprintf(stderr, "plumb lat: --machine %s: %s\n", machine, status.message);
		return 1;
	}
	int rc = cli_output_emit(&out, report);
	output_report_free(report);
	return rc;
}
