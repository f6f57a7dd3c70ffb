/* plumb validate: counter validation microbenchmarks, every source side
 * by side, and a verdict per event. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli/command.h"
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include "plumb/instrument.h"
#include "plumb/parse.h"
#include "plumb/sim.h"
#include "plumb/topology.h"
#include "plumb/validate.h"

const char cmd_validate_summary[] = "check counters against microbenchmarks with predicted counts";

enum {
	OPT_BACKEND = 0x2001, OPT_RUNS, OPT_SIZES, OPT_MAX_SIZE, OPT_PRESET, OPT_SIM_SET, OPT_DIR, OPT_PLOT_FORMAT,
	OPT_VALGRIND, OPT_LIST, OPT_CASES, OPT_NO_PROGRESS, OPT_EXEC, OPT_EXEC_SIZE, OPT_EXEC_PAD,
	OPT_EXEC_BASE, OPT_EXEC_TRIPS, OPT_FIND_PADDING, OPT_BASE_OFFSET, OPT_PAIRS, OPT_THRESHOLD, OPT_CPU,
	OPT_VERIFICATION, OPT_NO_RECORD, OPT_SEED, OPT_CHECK_TRIPS
};

/* --threshold NAME=VALUE: the classification rules' numbers (docs/validation.md). */
static int parse_threshold(const char *text, validate_thresholds *t)
{
	static const struct { const char *name; size_t offset; double min, max; bool fraction; } keys[] = {
		{ "accurate", offsetof(validate_thresholds, accurate_tolerance), 0, 100, true },
		{ "slope", offsetof(validate_thresholds, slope_tolerance), 0, 100, true },
		{ "bias", offsetof(validate_thresholds, bias_min_events), 0, 1e12, false },
		{ "random-cv", offsetof(validate_thresholds, random_cv), 0, 100, true },
		{ "random-stddev", offsetof(validate_thresholds, random_min_stddev), 0, 1e12, false },
		{ "min-r2", offsetof(validate_thresholds, min_r2), -1e12, 1, false },
		{ "reliable", offsetof(validate_thresholds, reliable_tolerance), 0, 100, true },
	};
	const char *equals = strchr(text, '=');
	if (!equals) return cli_usage_error("validate", "--threshold wants NAME=VALUE, not '%s'", text);
	size_t length = (size_t)(equals - text);
	plumb_status status;
	if (length == 9 && !strncmp(text, "min-cases", 9)) {
		uint64_t cases;
		if (parse_u64(equals + 1, 2, 1000, &cases, &status) != 0)
			return cli_usage_error("validate", "--threshold min-cases: %s", status.message);
		t->min_cases = (size_t)cases;
		return 0;
	}
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (strlen(keys[i].name) != length || strncmp(text, keys[i].name, length)) continue;
		double value;
		if (parse_double(equals + 1, keys[i].min, keys[i].max, &value, &status) != 0)
			return cli_usage_error("validate", "--threshold %s: %s", keys[i].name, status.message);
		/* Tolerances are given in percent, like the tables print them. */
		*(double *)((char *)t + keys[i].offset) = keys[i].fraction ? value / 100 : value;
		return 0;
	}
	return cli_usage_error("validate", "--threshold: unknown name '%.*s' (accurate, slope, bias, random-cv, "
	                       "random-stddev, min-r2, reliable, min-cases)", (int)length, text);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: plumb validate [EVENTS|BENCHMARKS|all] [--backend LIST] [--runs R] [--sizes LIST]\n"
	        "                      [--max-size N] [--preset NAME] [--set KEY=VALUE]...\n"
	        "                      [-d DIR] [--plot-format png|svg]\n"
	        "                      [--cases] [--csv | --json] [-o FILE]\n\n"
	        "Runs validation microbenchmarks whose event counts have a closed form\n"
	        "(Salayandia 2002; Aguilera et al. 2005), R times each in fresh processes,\n"
	        "reads them through perf_event and PAPI, simulates their exact address\n"
	        "streams, counts them exactly under Valgrind, and classifies each (event,\n"
	        "source) suite: exact, accurate, bias, multiplicative, random or unknown,\n"
	        "with the fit reported = a + b*predicted, R^2 and the smallest count from\n"
	        "which the event is within 5%%.\n\n"
	        "  EVENTS              event or benchmark names (comma or space separated),\n"
	        "                      e.g. minor-faults, PAPI_L1_DCM, itv; default all\n"
	        "  --backend LIST      sources: perf, papi, sim, instrumented (or all); default all.\n"
	        "                      synthetic:KIND[=M] adds counts made from the prediction with\n"
	        "                      an injected error (exact, bias, multiplicative, random,\n"
	        "                      unknown), to see how the classifier names each\n"
	        "  --seed N            seed of the synthetic source (default 1)\n"
	        "  -r, --runs R        runs per test case for perf/PAPI (default 100)\n"
	        "  --sizes LIST        suite sizes, e.g. 1,10,100,1000 (default: powers of ten up to\n"
	        "                      each benchmark's maximum, plus 1000-steps for capacity suites)\n"
	        "  --max-size N        cap of the default suites (default per benchmark)\n"
	        "  --preset NAME       simulator preset (default host)\n"
	        "  --set KEY=VALUE     a simulator setting after the preset (repeatable), e.g.\n"
	        "                      prefetch=stream to see a prefetcher hide the stride misses\n"
	        "  -C, --cpu N         run the counted thread on CPU N (default the first allowed;\n"
	        "                      Salayandia (2002) compared P0 and P1 so)\n"
	        "  -d, --output-dir D  write D/validate.csv, D/validate.json (every raw run) and\n"
	        "                      the plot D/validate.png with its data and gnuplot script\n"
	        "  --plot-format F     png (default) or svg\n"
	        "  --valgrind PATH     the valgrind program (default valgrind)\n"
	        "  --threshold N=V     change a classification threshold: accurate=1, slope=5,\n"
	        "                      random-cv=10, reliable=5 (percent), bias=0.5, random-stddev=1\n"
	        "                      (events), min-r2=0.9, min-cases=3 (defaults shown)\n"
	        "  --cases             also print every case with all sources side by side, and\n"
	        "                      the iteration check (loop trips counted at run time)\n"
	        "  --check-trips N     count the loop trips of every counted case of up to N\n"
	        "                      trips with execute breakpoints, in a run of its own\n"
	        "                      (default 100000; each trip traps; 0: no check)\n"
	        "  --list              list the benchmarks and their events\n"
	        "  --find-padding      the configuration benchmark: sweep the pad 0..page-4 and find\n"
	        "                      where the array's first page starts (Salayandia 2002, sec. 3.2)\n"
	        "  --base-offset B     with --find-padding: array start past a page (default 16)\n"
	        "  --pairs N           with --find-padding: pairs per run (default 16)\n"
	        "  --verification FILE record each perf/PAPI verdict for this CPU in FILE (default\n"
	        "                      $PLUMB_VERIFICATION, else $XDG_DATA_HOME/plumb/verification.tsv,\n"
	        "                      else ~/.local/share/plumb/verification.tsv); plumb events shows them\n"
	        "  --no-record         do not record verdicts\n"
	        "  --no-progress       no progress line on stderr\n"
	        "  --csv, --json       output format; JSON and CSV include every raw run\n"
	        "  -o, --output FILE   write to FILE (atomically) instead of stdout\n"
	        "  -h, --help          this help\n");
}

static int list_benchmarks(const cli_output *out)
{
	size_t count;
	const validate_benchmark *const *all = validate_benchmarks(&count);
	output_report *r = output_report_new("validate");
	output_table *t = output_table_add(r, "benchmarks", "Validation benchmarks");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "events", NULL, 0);
	output_column(t, "threads", NULL, 0);
	output_column(t, "max_size", NULL, 0);
	output_column(t, "description", NULL, 0);
	output_column(t, "defeats", NULL, 0);
	for (size_t i = 0; i < count; i++) {
		char events[256] = "";
		for (int e = 0; e < all[i]->event_count; e++) {
			size_t used = strlen(events);
			snprintf(events + used, sizeof events - used, "%s%s%s", e ? "," : "", all[i]->events[e].name,
			         all[i]->events[e].companion ? "(companion)" : "");
		}
		output_row(t);
		output_cell_text(t, all[i]->name);
		output_cell_text(t, events);
		output_cell_integer(t, all[i]->threads);
		output_cell_integer(t, (int64_t)all[i]->default_max_size);
		output_cell_text(t, all[i]->title);
		output_cell_text(t, all[i]->defeats);
	}
	int rc = cli_output_emit(out, r);
	output_report_free(r);
	return rc;
}

/* The padding sweep: pad against minor faults, and the pad that halves them. */
static int find_padding(const cli_output *out, uint64_t base_offset, uint64_t pairs, bool all_rows)
{
	plumb_status status;
	validate_machine machine;
	if (validate_machine_detect(&machine, &status) != 0) return cli_error("validate", &status);
	size_t capacity = machine.page_size / 4, count = 0;
	validate_padding_point *points = calloc(capacity, sizeof *points);
	if (!points) return 1;
	uint64_t found;
	if (validate_padding_search(&machine, base_offset, pairs, points, capacity, &count, &found, &status) != 0) {
		free(points);
		return cli_error("validate", &status);
	}
	uint64_t expected = validate_padding_aligned(base_offset, machine.page_size);
	output_report *r = output_report_new("validate");
	output_meta_integer(r, "page_size", (int64_t)machine.page_size);
	output_meta_integer(r, "base_offset", (int64_t)base_offset);
	output_meta_integer(r, "pairs", (int64_t)pairs);
	output_table *summary = output_table_add(r, "padding_found", "Padding configuration benchmark");
	output_column(summary, "found_pad", "bytes", 0);
	output_column(summary, "start_index", "ints", 0);
	output_column(summary, "faults_at_found", "events", 0);
	output_column(summary, "expected_pad", "bytes", 0);
	output_column(summary, "agrees", NULL, 0);
	output_row(summary);
	output_cell_integer(summary, (int64_t)found);
	output_cell_integer(summary, (int64_t)(1 + found / 4));
	double at_found = NAN;
	for (size_t i = 0; i < count; i++)
		if (points[i].pad == found) at_found = points[i].faults;
	output_cell_real(summary, at_found);
	output_cell_integer(summary, (int64_t)expected);
	output_cell_text(summary, found == expected ? "yes" : "no");
	output_table *sweep = output_table_add(r, "padding_sweep", "Minor faults per pad");
	output_column(sweep, "pad", "bytes", 0);
	output_column(sweep, "faults", "events", 0);
	output_column(sweep, "predicted", "events", 0);
	size_t mismatches = 0;
	for (size_t i = 0; i < count; i++) {
		bool differs = points[i].faults != points[i].predicted;
		mismatches += differs;
		/* The table format shows the interesting rows; CSV/JSON every pad. */
		if (!all_rows && out->format == OUTPUT_TABLE && !differs && points[i].faults != (double)pairs &&
		    (i + 1 >= count || points[i + 1].faults == points[i].faults) &&
		    (i == 0 || points[i - 1].faults == points[i].faults))
			continue;
		output_row(sweep);
		output_cell_integer(sweep, (int64_t)points[i].pad);
		output_cell_real(sweep, points[i].faults);
		output_cell_real(sweep, points[i].predicted);
	}
	output_note(r, "%zu pads swept, %zu differ from the model (pairs if aligned, else 2 x pairs)", count,
	            mismatches);
	int rc = cli_output_emit(out, r);
	output_report_free(r);
	free(points);
	return rc;
}

/* One line on the iteration checks: how many cases ran the trips their
 * model expects, and why the others could not be checked. */
static void trips_note(output_report *r, const validate_results *results)
{
	validate_trip_tally tally;
	validate_trip_tally_of(results, &tally);
	const size_t *n = tally.count;
	const char *const *why = tally.first_reason;
	if (!tally.total) return;
	output_note(r, "iteration check: %zu of %zu counted cases ran the loop trips their model expects "
	            "(execute breakpoints)%s", n[VALIDATE_TRIPS_OK], results->trip_check_count,
	            n[VALIDATE_TRIPS_MISMATCH] ? "; a mismatch fails its case" : "");
	if (n[VALIDATE_TRIPS_UNSUPPORTED])
		output_note(r, "iteration check unsupported in %zu %s: %s", n[VALIDATE_TRIPS_UNSUPPORTED],
		            n[VALIDATE_TRIPS_UNSUPPORTED] == 1 ? "case" : "cases", why[VALIDATE_TRIPS_UNSUPPORTED]);
	if (n[VALIDATE_TRIPS_NOT_CHECKED])
		output_note(r, "iteration check not run in %zu %s: %s", n[VALIDATE_TRIPS_NOT_CHECKED],
		            n[VALIDATE_TRIPS_NOT_CHECKED] == 1 ? "case" : "cases", why[VALIDATE_TRIPS_NOT_CHECKED]);
}

/* Runs one benchmark kernel once, uncounted: what Valgrind instruments. */
static int exec_kernel(const char *name, uint64_t size, uint64_t pad, uint64_t base, uint64_t trips,
                       bool have_pad, bool have_base)
{
	const validate_benchmark *b = validate_benchmark_find(name);
	if (!b) return cli_usage_error("validate", "no benchmark '%s'", name);
	plumb_status status;
	validate_machine machine;
	if (validate_machine_detect(&machine, &status) != 0) return cli_error("validate", &status);
	validate_params params;
	validate_params_init(&params, b, &machine, size);
	if (have_pad) params.pad = pad;
	if (have_base) params.base_offset = base;
	params.inner_trips = (unsigned)trips;
	params.evict_by_sweep = true;
	validate_run_info info;
	if (validate_run_marked(b, &params, &info, &status) != 0) return cli_error("validate", &status);
	return 0;
}

static int parse_sizes(const char *text, uint64_t *sizes, size_t *count)
{
	char copy[1024];
	snprintf(copy, sizeof copy, "%s", text);
	*count = 0;
	for (char *save = NULL, *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save)) {
		plumb_status status;
		if (*count >= 64) return cli_usage_error("validate", "at most 64 sizes");
		if (parse_u64(token, 1, 100000000, &sizes[*count], &status) != 0)
			return cli_usage_error("validate", "--sizes: %s", status.message);
		(*count)++;
	}
	if (*count == 0) return cli_usage_error("validate", "--sizes needs at least one size");
	return 0;
}

static int parse_backends(const char *text, bool sources[VALIDATE_SOURCE_COUNT], validate_synthetic *synthetic)
{
	char copy[256];
	snprintf(copy, sizeof copy, "%s", text);
	for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) sources[s] = false;
	for (char *save = NULL, *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(token, "all")) {
			/* every source of this machine's counts; synthetic is never implied */
			for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) sources[s] = sources[s] || s != VALIDATE_SOURCE_SYNTHETIC;
		} else if (!strncasecmp(token, "synthetic:", 10)) {
			plumb_status status;
			uint64_t seed = synthetic->seed;
			if (validate_synthetic_parse(token + 10, synthetic, &status) != 0)
				return cli_usage_error("validate", "--backend %s: %s", token, status.message);
			synthetic->seed = seed;
			sources[VALIDATE_SOURCE_SYNTHETIC] = true;
		} else if (!strcasecmp(token, "synthetic")) {
			return cli_usage_error("validate", "--backend synthetic needs an error to inject: synthetic:KIND "
			                       "(exact, bias, multiplicative, random, unknown)");
		} else if (!strcasecmp(token, "perf") || !strcasecmp(token, "perf_event")) {
			sources[VALIDATE_SOURCE_PERF] = true;
		} else if (!strcasecmp(token, "papi")) {
			sources[VALIDATE_SOURCE_PAPI] = true;
		} else if (!strcasecmp(token, "sim") || !strcasecmp(token, "simulator")) {
			sources[VALIDATE_SOURCE_SIMULATOR] = true;
		} else if (!strcasecmp(token, "instrumented") || !strcasecmp(token, "valgrind")) {
			sources[VALIDATE_SOURCE_INSTRUMENTED] = true;
		} else {
			return cli_usage_error("validate", "unknown backend '%s' (perf, papi, sim, instrumented, all, "
			                       "synthetic:KIND)", token);
		}
	}
	return 0;
}

static void add_machine_meta(output_report *r, const validate_results *results, const validate_options *o)
{
	const validate_machine *m = &results->machine;
	/* What the counts depend on besides the benchmark (notes 000 §7.6 R2). */
	struct utsname uts;
	if (uname(&uts) == 0) output_meta_text(r, "kernel", uts.release);
	output_meta_text(r, "glibc", gnu_get_libc_version());
	output_meta_text(r, "compiler", __VERSION__);
	topology machine_topology;
	plumb_status status;
	if (topology_read(&machine_topology, &status) == 0) {
		output_meta_text(r, "cpu_model", machine_topology.cpu_model);
		output_meta_text(r, "thp", machine_topology.thp_mode);
		output_meta_text(r, "virtualised", machine_topology.hypervisor ? "yes" : "no");
	}
	output_meta_text(r, "memory", "fresh mmap per run, MADV_NOHUGEPAGE, prefaulted by writing where the "
	                              "benchmark needs no faults; lines made uncached by clflush");
	output_meta_integer(r, "page_size", (int64_t)m->page_size);
	output_meta_integer(r, "l1d_size", (int64_t)m->l1d_size);
	output_meta_integer(r, "l1d_line", m->l1d_line);
	output_meta_integer(r, "l2_size", (int64_t)m->l2_size);
	output_meta_integer(r, "l1i_size", (int64_t)m->l1i_size);
	output_meta_integer(r, "counted_cpu", m->cpus[0]);
	output_meta_integer(r, "partner_cpu", m->cpus[1]);
	output_meta_integer(r, "runs", (int64_t)o->runs);
	output_meta_real(r, "seconds", results->seconds);
	output_meta_integer(r, "process_runs", (int64_t)results->total_runs);
	output_meta_text(r, "sim_preset", o->sim_preset ? o->sim_preset : "host");
	char settings[512];
	validate_sim_detail(o, settings, sizeof settings);
	output_meta_text(r, "simulator", settings);
	const validate_thresholds *t = &o->thresholds;
	char rules[512];
	snprintf(rules, sizeof rules,
	         "accurate |diff|<=%g%%; multiplicative |b-1|>%g%%; bias |a|>=%g with b~1; random: CV>%g%% and "
	         "stddev>%g and variance>mean in some case; unknown: <%zu cases, a flat count (b within 3 standard "
	         "errors of 0) or R^2<%g; reliable from: every "
	         "larger case within %g%%", t->accurate_tolerance * 100, t->slope_tolerance * 100, t->bias_min_events,
	         t->random_cv * 100, t->random_min_stddev, t->min_cases, t->min_r2, t->reliable_tolerance * 100);
	output_meta_text(r, "thresholds", rules);
}

static int write_files(const char *directory, const validate_results *results, const validate_options *o,
                       const char *plot_format)
{
	plumb_status status;
	if (mkdir(directory, 0777) != 0 && errno != EEXIST) {
		plumb_fail_errno(&status, errno, "cannot create %s", directory);
		return cli_error("validate", &status);
	}
	output_report *r = output_report_new("validate");
	add_machine_meta(r, results, o);
	validate_verdict_table(r, results);
	validate_side_by_side_table(r, results);
	validate_case_table(r, results);
	validate_raw_table(r, results);
	char path[4096];
	int rc = 0;
	snprintf(path, sizeof path, "%s/validate.json", directory);
	if (output_write_file(r, OUTPUT_JSON, path, &status) != 0) rc = cli_error("validate", &status);
	snprintf(path, sizeof path, "%s/validate.csv", directory);
	if (rc == 0 && output_write_csv_tables(r, path, &status) != 0) rc = cli_error("validate", &status);
	output_report_free(r);
	if (rc != 0) return rc;
	char image[4096];
	if (validate_plot(results, directory, plot_format, NULL, image, sizeof image, &status) != 0)
		fprintf(stderr, "plumb validate: no plot: %s\n", status.message);
	else
		fprintf(stderr, "plumb validate: wrote %s/validate.{json,csv} and %s\n", directory, image);
	return 0;
}

/* Records what the perf/PAPI suites proved about their mappings on this CPU
 * (docs/validation.md, "Recording verdicts").  A failure to record does not
 * undo the measurement: one warning line, and the table is still printed. */
static void record_verdicts(output_report *r, const validate_results *results, const validate_options *o,
                            const char *path)
{
	char default_path[4096];
	plumb_status status;
	if (!path) {
		if (counter_verification_default_path(default_path, sizeof default_path, &status) != 0) {
			fprintf(stderr, "plumb validate: warning: verdicts not recorded: %s\n", status.message);
			return;
		}
		path = default_path;
	}
	counter_environment environment;
	counter_environment_read(&environment);
	size_t recorded = 0;
	if (validate_record_results(results, &o->thresholds, path, environment.cpu_identity, time(NULL), &recorded,
	                            &status) != 0) {
		fprintf(stderr, "plumb validate: warning: verdicts not recorded: %s\n", status.message);
		return;
	}
	if (recorded)
		output_note(r, "%zu verdicts for %s recorded in %s (plumb events shows them)", recorded,
		            environment.cpu_identity, path);
	else
		output_note(r, "no verdict recorded: none came from perf/PAPI with %d+ cases of %d+ runs",
		            VALIDATE_RECORD_MIN_CASES, VALIDATE_RECORD_MIN_RUNS);
}

int cmd_validate(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS,
		{ "help", no_argument, 0, 'h' },
		{ "backend", required_argument, 0, OPT_BACKEND },
		{ "runs", required_argument, 0, OPT_RUNS },
		{ "sizes", required_argument, 0, OPT_SIZES },
		{ "max-size", required_argument, 0, OPT_MAX_SIZE },
		{ "preset", required_argument, 0, OPT_PRESET },
		{ "set", required_argument, 0, OPT_SIM_SET },
		{ "output-dir", required_argument, 0, 'd' },
		{ "plot-format", required_argument, 0, OPT_PLOT_FORMAT },
		{ "valgrind", required_argument, 0, OPT_VALGRIND },
		{ "list", no_argument, 0, OPT_LIST },
		{ "cases", no_argument, 0, OPT_CASES },
		{ "no-progress", no_argument, 0, OPT_NO_PROGRESS },
		{ "exec", required_argument, 0, OPT_EXEC },
		{ "exec-size", required_argument, 0, OPT_EXEC_SIZE },
		{ "exec-pad", required_argument, 0, OPT_EXEC_PAD },
		{ "exec-base-offset", required_argument, 0, OPT_EXEC_BASE },
		{ "exec-inner-trips", required_argument, 0, OPT_EXEC_TRIPS },
		{ "find-padding", no_argument, 0, OPT_FIND_PADDING },
		{ "base-offset", required_argument, 0, OPT_BASE_OFFSET },
		{ "pairs", required_argument, 0, OPT_PAIRS },
		{ "threshold", required_argument, 0, OPT_THRESHOLD },
		{ "cpu", required_argument, 0, OPT_CPU },
		{ "verification", required_argument, 0, OPT_VERIFICATION },
		{ "no-record", no_argument, 0, OPT_NO_RECORD },
		{ "seed", required_argument, 0, OPT_SEED },
		{ "check-trips", required_argument, 0, OPT_CHECK_TRIPS },
		/* the names before the common vocabulary (man plumb-validate: kept for one release) */
		{ "sim-preset", required_argument, 0, OPT_PRESET },
		{ "sim-set", required_argument, 0, OPT_SIM_SET },
		{ 0, 0, 0, 0 }
	};
	cli_output out = { OUTPUT_TABLE, NULL, NULL };
	validate_options o;
	validate_options_default(&o);
	o.progress = true;
	uint64_t sizes[64];
	const char *sim_settings[32];
	size_t sim_setting_count = 0;
	const char *directory = NULL, *plot_format = "png", *exec = NULL;
	uint64_t exec_size = 1, exec_pad = 0, exec_base = 0, exec_trips = 10;
	bool have_pad = false, have_base = false, list = false, cases = false, padding = false;
	bool record = true;
	const char *verification = NULL;
	uint64_t base_offset = 16, pairs = 16;
	plumb_status status;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hr:C:o:d:", options, NULL)) != -1) {
		uint64_t value;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_BACKEND:
			if (parse_backends(optarg, o.sources, &o.synthetic) != 0) return 2;
			break;
		case OPT_RUNS: case 'r':
			if (parse_u64(optarg, 1, 100000, &value, &status) != 0)
				return cli_usage_error("validate", "--runs: %s", status.message);
			o.runs = value;
			break;
		case OPT_SIZES:
			if (parse_sizes(optarg, sizes, &o.size_count) != 0) return 2;
			o.sizes = sizes;
			break;
		case OPT_MAX_SIZE:
			if (parse_u64(optarg, 1, 100000000, &o.max_size, &status) != 0)
				return cli_usage_error("validate", "--max-size: %s", status.message);
			break;
		case OPT_PRESET: {
			/* checked now: an unknown preset is one usage error, not a failure in
			 * every simulated row */
			sim_config check;
			if (sim_preset(&check, optarg, &status) != 0 && status.code == EINVAL)
				return cli_usage_error("validate", "--preset: %s", status.message);
			o.sim_preset = optarg;
			break;
		}
		case OPT_SIM_SET: {
			/* checked now, against the default configuration, so a bad key
			 * is one usage error and not a failure in every simulated case */
			sim_config check;
			sim_config_default(&check);
			if (sim_config_assign(&check, optarg, &status) != 0)
				return cli_usage_error("validate", "--set: %s", status.message);
			if (sim_setting_count == sizeof sim_settings / sizeof sim_settings[0])
				return cli_usage_error("validate", "--set: at most %zu settings",
				                       sizeof sim_settings / sizeof sim_settings[0]);
			sim_settings[sim_setting_count++] = optarg;
			o.sim_settings = sim_settings;
			o.sim_setting_count = sim_setting_count;
			break;
		}
		case 'd': directory = optarg; break;
		case OPT_PLOT_FORMAT:
			if (strcmp(optarg, "png") && strcmp(optarg, "svg"))
				return cli_usage_error("validate", "--plot-format must be png or svg, not '%s'", optarg);
			plot_format = optarg;
			break;
		case OPT_VALGRIND: {
			/* checked now: a Valgrind that cannot be run is one error, not
			 * an unsupported instrumented row after the whole run */
			char found[4096];
			if (instrument_find_valgrind(optarg, found, sizeof found, &status) != 0)
				return cli_error("validate", &status);
			o.valgrind = optarg;
			break;
		}
		case OPT_LIST: list = true; break;
		case OPT_FIND_PADDING: padding = true; break;
		case OPT_CPU: case 'C': {
			long cpu;
			if (parse_int(optarg, 0, 65535, &cpu, &status) != 0)
				return cli_usage_error("validate", "--cpu: %s", status.message);
			o.counted_cpu = (int)cpu;
			break;
		}
		case OPT_THRESHOLD:
			if (parse_threshold(optarg, &o.thresholds) != 0) return 2;
			break;
		case OPT_BASE_OFFSET:
			if (parse_u64(optarg, 0, 1 << 20, &base_offset, &status) != 0 || base_offset % 4 != 0)
				return cli_usage_error("validate", "--base-offset: a multiple of 4 up to 1 MiB, not '%s'", optarg);
			break;
		case OPT_PAIRS:
			if (parse_u64(optarg, 1, 100000, &pairs, &status) != 0)
				return cli_usage_error("validate", "--pairs: %s", status.message);
			break;
		case OPT_CASES: cases = true; break;
		case OPT_VERIFICATION:
			if (!optarg[0]) return cli_usage_error("validate", "--verification needs a file name");
			verification = optarg;
			break;
		case OPT_NO_RECORD: record = false; break;
		case OPT_CHECK_TRIPS:
			if (parse_u64(optarg, 0, 1000000000, &o.check_trips_max, &status) != 0)
				return cli_usage_error("validate", "--check-trips: %s", status.message);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &o.synthetic.seed, &status) != 0)
				return cli_usage_error("validate", "--seed: %s", status.message);
			break;
		case OPT_NO_PROGRESS: o.progress = false; break;
		case OPT_EXEC: exec = optarg; break;
		case OPT_EXEC_SIZE:
			if (parse_u64(optarg, 1, 1000000000, &exec_size, &status) != 0)
				return cli_usage_error("validate", "--exec-size: %s", status.message);
			break;
		case OPT_EXEC_PAD:
			if (parse_u64(optarg, 0, 1 << 30, &exec_pad, &status) != 0)
				return cli_usage_error("validate", "--exec-pad: %s", status.message);
			have_pad = true;
			break;
		case OPT_EXEC_BASE:
			if (parse_u64(optarg, 0, 1 << 30, &exec_base, &status) != 0)
				return cli_usage_error("validate", "--exec-base-offset: %s", status.message);
			have_base = true;
			break;
		case OPT_EXEC_TRIPS:
			if (parse_u64(optarg, 1, 1000000, &exec_trips, &status) != 0)
				return cli_usage_error("validate", "--exec-inner-trips: %s", status.message);
			break;
		default:
			if (!cli_output_option(&out, c, optarg)) return cli_bad_option("validate", c, argv);
		}
	}
	if (record && verification && counter_verification_check(verification, &status) != 0)
		return cli_error("validate", &status);
	if (exec) return exec_kernel(exec, exec_size, exec_pad, exec_base, exec_trips, have_pad, have_base);
	if (list) return list_benchmarks(&out);
	if (padding) return find_padding(&out, base_offset, pairs, cases);
	/* The output folder is made before the runs: one that cannot be made
	 * fails now, not after minutes of runs. */
	bool made_directory = false;
	if (directory) {
		struct stat folder;
		if (mkdir(directory, 0777) == 0) {
			made_directory = true;
		} else if (errno != EEXIST) {
			plumb_fail_errno(&status, errno, "cannot create %s", directory);
			return cli_error("validate", &status);
		} else if (stat(directory, &folder) != 0 || !S_ISDIR(folder.st_mode)) {
			plumb_fail_errno(&status, ENOTDIR, "cannot create %s", directory);
			return cli_error("validate", &status);
		}
	}

	/* Selectors: positional words, each possibly a comma list. */
	char *storage = NULL;
	const char *selectors[128];
	size_t selector_count = 0;
	size_t total = 0;
	for (int i = optind; i < argc; i++) total += strlen(argv[i]) + 1;
	if (total) {
		storage = malloc(total);
		if (!storage) return 1;
		char *cursor = storage;
		for (int i = optind; i < argc; i++) {
			strcpy(cursor, argv[i]);
			for (char *save = NULL, *token = strtok_r(cursor, ",", &save); token;
			     token = strtok_r(NULL, ",", &save))
				if (selector_count < 128) selectors[selector_count++] = token;
			cursor += strlen(argv[i]) + 1;
		}
	}
	o.selectors = selectors;
	o.selector_count = selector_count;
	if (!isatty(STDERR_FILENO)) o.progress = false;

	validate_results results;
	if (validate_run(&o, &results, &status) != 0) {
		free(storage);
		validate_results_free(&results);
		if (made_directory) rmdir(directory);
		return status.code == EINVAL ? cli_usage_error("validate", "%s", status.message)
		                             : cli_error("validate", &status);
	}
	output_report *r = output_report_new("validate");
	add_machine_meta(r, &results, &o);
	validate_verdict_table(r, &results);
	if (cases || out.format != OUTPUT_TABLE) validate_side_by_side_table(r, &results);
	if ((cases || out.format != OUTPUT_TABLE) && results.trip_check_count) validate_trips_table(r, &results);
	if (out.format != OUTPUT_TABLE) validate_case_table(r, &results);
	if (out.format != OUTPUT_TABLE) validate_raw_table(r, &results);
	if (record) record_verdicts(r, &results, &o, verification);
	trips_note(r, &results);
	for (size_t i = 0; i < results.note_count; i++) output_note(r, "%s", results.notes[i]);
	if (results.notes_dropped) output_note(r, "%zu more notes not shown", results.notes_dropped);
	output_note(r, "%zu process runs in %.1f s", results.total_runs, results.seconds);
	int rc = cli_output_emit(&out, r);
	output_report_free(r);
	if (rc == 0 && directory) rc = write_files(directory, &results, &o, plot_format);
	validate_results_free(&results);
	free(storage);
	return rc;
}
