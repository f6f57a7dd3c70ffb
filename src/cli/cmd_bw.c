/* plumb bw: sustained bandwidth of each memory level (read, write, copy,
 * triad and their non-temporal-store variants) on 1..N pinned threads. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/command.h"
#include "bandwidth/bandwidth.h"
#include "core/parse.h"
#include "core/progress.h"
#include "machine/machine_model.h"
#include "report/report.h"

const char cmd_bw_summary[] = "bandwidth of each level: read, write, copy, triad, non-temporal";

#define MAX_LIST 64

static void usage(FILE *stream)
{
	fprintf(stream,
	        "usage: plumb bw [options]\n\n"
	        "Measures sustained bandwidth (GB/s, 10^9 bytes/s) with STREAM-style kernels over\n"
	        "per-thread working sets that land in each cache level and in DRAM, on 1..N\n"
	        "pinned threads.  Bytes are counted as STREAM does (bytes the kernel names);\n"
	        "the with-allocate column adds the write-allocate read of ordinary stores.\n\n"
	        "Options:\n"
	        "  -k, --kernels LIST   read, write, copy, triad, write-nt, copy-nt, triad-nt\n"
	        "                       (default: all)\n"
	        "  -i, --isa ISA        scalar, avx2, avx512 or all (default: the widest here)\n"
	        "  -s, --sizes LIST     per-thread working sets, e.g. 16K,128K,2M,64M\n"
	        "                       (default: one per cache level and DRAM, from topology)\n"
	        "  -t, --threads LIST   thread counts, e.g. 1,2 (default: 1,2,4,... and N)\n"
	        "  -C, --cpu LIST       CPUs to pin threads to, in order (default: all allowed)\n"
	        "      --pages MODE     default, small, thp or hugetlb (default: thp)\n"
	        "      --time-cap MS    time limit per measurement (default 200)\n"
	        "      --target-ci PCT  repeat until the 95%% CI is within +-PCT%% (default 2)\n"
	        "      --min-samples N  samples per measurement at least (default 5)\n"
	        "      --machine FILE   plumb report's report.json: a shared cache measured far\n"
	        "                       below its sysfs size is taken at its usable size (the\n"
	        "                       default working sets and the level each lands in)\n"
	        "      --levels-from FILE  the same from a plumb lat JSON report (- for stdin)\n"
	        "      --csv, --json    output format (default: aligned table)\n"
	        "  -o, --output FILE    write the report to FILE\n"
	        "  -h, --help           this help\n");
}

typedef struct bw_options {
	const bandwidth_kernel *kernels[BANDWIDTH_ISAS * 8];
	int kernel_count;
	const char *kernel_list;
	const char *isa;
	uint64_t sizes[MAX_LIST];
	int size_count;
	int threads[MAX_LIST];
	int thread_count;
	int cpus[1024];
	int cpu_count;
	arena_pages pages;
	bandwidth_measure_options measure;
} bw_options;

static int parse_sizes(const char *text, bw_options *o)
{
	plumb_status list_status;
	if (parse_list_check(text, 0, &list_status) != 0)
		return cli_usage_error("bw", "--sizes: %s", list_status.message);
	char *copy = strdup(text), *save = NULL;
	int rc = 0;
	o->size_count = 0;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		plumb_status status;
		uint64_t size;
		if (o->size_count == MAX_LIST) {
			rc = cli_usage_error("bw", "at most %d sizes", MAX_LIST);
			break;
		}
		if (parse_size(item, &size, &status) != 0) {
			rc = cli_usage_error("bw", "%s", status.message);
			break;
		}
		if (size < 4096 || size > (64ull << 30)) {
			rc = cli_usage_error("bw", "size '%s' is out of range (4KiB..64GiB)", item);
			break;
		}
		o->sizes[o->size_count++] = size;
	}
	if (rc == 0 && o->size_count == 0)
		rc = cli_usage_error("bw", "--sizes needs at least one size");
	free(copy);
	return rc;
}

static int parse_threads(const char *text, bw_options *o)
{
	plumb_status list_status;
	if (parse_list_check(text, 0, &list_status) != 0)
		return cli_usage_error("bw", "--threads: %s", list_status.message);
	char *copy = strdup(text), *save = NULL;
	int rc = 0;
	o->thread_count = 0;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		plumb_status status;
		long threads;
		if (o->thread_count == MAX_LIST) {
			rc = cli_usage_error("bw", "at most %d thread counts", MAX_LIST);
			break;
		}
		if (parse_int(item, 1, 1024, &threads, &status) != 0) {
			rc = cli_usage_error("bw", "--threads: %s", status.message);
			break;
		}
		o->threads[o->thread_count++] = (int)threads;
	}
	if (rc == 0 && o->thread_count == 0)
		rc = cli_usage_error("bw", "--threads needs at least one count");
	free(copy);
	return rc;
}

/* Resolves --kernels and --isa into kernel pointers; 0 or an exit code. */
static int resolve_kernels(bw_options *o, const cpu_features *features)
{
	const char *names[16];
	int name_count = 0;
	char *copy = NULL;
	if (o->kernel_list) {
		plumb_status list_status;
		if (parse_list_check(o->kernel_list, 0, &list_status) != 0)
			return cli_usage_error("bw", "--kernels: %s", list_status.message);
		copy = strdup(o->kernel_list);
		char *save = NULL;
		for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
			/* the 17th name is refused, not passed over unread */
			if (name_count == 16) {
				free(copy);
				return cli_usage_error("bw", "--kernels: at most 16 names");
			}
			names[name_count++] = item;
		}
		if (name_count == 0) {
			free(copy);
			return cli_usage_error("bw", "--kernels needs at least one kernel");
		}
	}
	plumb_status status;
	int rc = bandwidth_kernels_resolve(o->isa, o->kernel_list ? names : NULL, name_count, features, o->kernels,
	                                   BANDWIDTH_ISAS * 8, &o->kernel_count, &status);
	free(copy);
	if (rc != 0)
		return status.code == EOPNOTSUPP ? cli_error("bw", &status) : cli_usage_error("bw", "%s", status.message);
	return 0;
}

static void show_progress(void *context, size_t done, size_t total)
{
	progress_step_of(context, done, total);
}

int cmd_bw(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "kernels", required_argument, 0, 'k' },
		{ "isa", required_argument, 0, 'i' },
		{ "sizes", required_argument, 0, 's' },
		{ "threads", required_argument, 0, 't' },
		{ "cpu", required_argument, 0, 'C' },
		{ "cpus", required_argument, 0, 'C' }, /* with -c, the old name (man plumb-bw) */
		{ "pages", required_argument, 0, 0x2001 },
		{ "time-cap", required_argument, 0, 0x2002 },
		{ "target-ci", required_argument, 0, 0x2003 },
		{ "min-samples", required_argument, 0, 0x2004 },
		{ "min-runs", required_argument, 0, 0x2004 }, /* the old name (man plumb-bw) */
		{ "machine", required_argument, 0, 0x2005 },
		{ "levels-from", required_argument, 0, 0x2006 },
		{ "help", no_argument, 0, 'h' },
		CLI_OUTPUT_OPTIONS,
		{ 0, 0, 0, 0 }
	};
	bw_options o;
	memset(&o, 0, sizeof o);
	o.pages = ARENA_PAGES_THP;
	bandwidth_measure_defaults(&o.measure);
	cli_output output = { .format = OUTPUT_TABLE };
	const char *cpu_list = NULL, *machine_path = NULL, *levels_from = NULL;
	plumb_status status;
	int option, rc;
	optind = 1;
	opterr = 0;
	while ((option = getopt_long(argc, argv, ":k:i:s:t:C:c:o:h", long_options, NULL)) != -1) {
		if (cli_output_option("bw", &output, option, optarg))
			continue;
		switch (option) {
		case 'k': o.kernel_list = optarg; break;
		case 'i': o.isa = optarg; break;
		case 's':
			if ((rc = parse_sizes(optarg, &o)) != 0)
				return rc;
			break;
		case 't':
			if ((rc = parse_threads(optarg, &o)) != 0)
				return rc;
			break;
		case 'C': case 'c': cpu_list = optarg; break;
		case 0x2001:
			if (strcmp(optarg, "default") == 0) o.pages = ARENA_PAGES_DEFAULT;
			else if (strcmp(optarg, "small") == 0) o.pages = ARENA_PAGES_SMALL;
			else if (strcmp(optarg, "thp") == 0) o.pages = ARENA_PAGES_THP;
			else if (strcmp(optarg, "hugetlb") == 0) o.pages = ARENA_PAGES_HUGETLB;
			else return cli_usage_error("bw", "unknown page mode '%s' (default, small, thp, hugetlb)", optarg);
			break;
		case 0x2002: {
			long ms;
			if (parse_int(optarg, 10, 600000, &ms, &status) != 0)
				return cli_usage_error("bw", "--time-cap: %s", status.message);
			o.measure.time_cap_ns = (uint64_t)ms * 1000000u;
			break;
		}
		case 0x2003: {
			double percent;
			if (parse_double(optarg, 0.01, 100, &percent, &status) != 0)
				return cli_usage_error("bw", "--target-ci: %s", status.message);
			o.measure.target_relative_ci = percent / 100;
			break;
		}
		case 0x2004: {
			long runs;
			if (parse_int(optarg, 2, 1000, &runs, &status) != 0)
				return cli_usage_error("bw", "--min-samples: %s", status.message);
			o.measure.min_runs = (size_t)runs;
			if (o.measure.max_runs < o.measure.min_runs)
				o.measure.max_runs = o.measure.min_runs;
			break;
		}
		case 0x2005: machine_path = optarg; break;
		case 0x2006: levels_from = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return cli_bad_option("bw", option, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("bw", "unexpected argument '%s'", argv[optind]);

	cpu_features features;
	cpu_features_detect(&features);
	if ((rc = resolve_kernels(&o, &features)) != 0)
		return rc;
	if (cpu_list) {
		if (parse_cpu_list(cpu_list, o.cpus, 1024, &o.cpu_count, &status) != 0)
			return cli_usage_error("bw", "--cpu: %s", status.message);
		if (cpu_check_allowed(o.cpus, o.cpu_count, &status) != 0)
			return cli_usage_error("bw", "--cpu: %s", status.message);
	} else {
		o.cpu_count = cpu_allowed(o.cpus, 1024, &status);
		if (o.cpu_count < 1)
			return cli_error("bw", &status);
	}
	if (o.thread_count == 0)
		o.thread_count = bandwidth_default_threads(o.cpu_count, o.threads, MAX_LIST);
	for (int t = 0; t < o.thread_count; t++)
		if (o.threads[t] > o.cpu_count)
			return cli_usage_error("bw", "%d thread%s asked, but only %d CPU%s to pin them to", o.threads[t],
			                       o.threads[t] == 1 ? "" : "s", o.cpu_count, o.cpu_count == 1 ? "" : "s");

	if (machine_path && levels_from)
		return cli_usage_error("bw", "give --machine or --levels-from, not both");
	machine_model model;
	if (machine_path && machine_model_load(machine_path, &model, &status) != 0) {
		fprintf(stderr, "plumb bw: --machine: %s\n", status.message);
		return 1;
	}
	if (levels_from) {
		output_report *lat;
		if (report_read_file(levels_from, &lat, &status) != 0) {
			fprintf(stderr, "plumb bw: --levels-from: %s\n", status.message);
			return 1;
		}
		int built = strcmp(output_report_command(lat), "lat") != 0
		                    ? plumb_fail(&status, EINVAL, "'%s' is a plumb %s report, not plumb lat's", levels_from,
		                                 output_report_command(lat))
		                    : machine_model_build(&model, NULL, lat, NULL, NULL, &status);
		output_report_free(lat);
		if (built != 0) {
			fprintf(stderr, "plumb bw: --levels-from: %s\n", status.message);
			return 1;
		}
		snprintf(model.source, sizeof model.source, "%s", !strcmp(levels_from, "-") ? "plumb lat's report on stdin"
		                                                                             : levels_from);
	}
	topology topo;
	if (topology_read(&topo, &status) != 0)
		return cli_error("bw", &status);
	timer_calibration timer;
	if (timer_calibrate(&timer, 50, &status) != 0)
		timer_calibration_clock(&timer);

	progress bar;
	bandwidth_sweep sweep;
	bandwidth_sweep_request request = {
		.topo = &topo, .kernels = o.kernels, .kernel_count = o.kernel_count,
		.footprints = o.size_count ? o.sizes : NULL, .footprint_count = o.size_count,
		.model = machine_path || levels_from ? &model : NULL,
		.thread_counts = o.threads, .thread_count_count = o.thread_count,
		.cpus = o.cpus, .cpu_count = o.cpu_count, .pages = o.pages, .timer = &timer,
		.options = o.measure, .progress = show_progress, .progress_context = &bar,
	};
	uint64_t started = timer_monotonic_ns();
	progress_begin(&bar, "plumb bw", 0);
	rc = bandwidth_sweep_run(&request, &sweep, &status);
	progress_end(&bar);
	if (rc != 0)
		return cli_error("bw", &status);

	output_report *report = bandwidth_report(&sweep, &request, (double)(timer_monotonic_ns() - started) / 1e9);
	rc = cli_output_emit(&output, report);
	output_report_free(report);
	bandwidth_sweep_free(&sweep);
	return rc;
}
