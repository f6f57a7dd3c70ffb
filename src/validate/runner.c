/* The validation runner: for each selected benchmark and suite size, the
 * prediction, R native runs in fresh processes (perf_event and PAPI side
 * by side), one simulation and one instrumented run (both deterministic),
 * every raw value kept, then the classification of each (event, source)
 * suite. */
#include <errno.h>
#include <sched.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <time.h>
#include "counters/counters.h"
#include "core/cpu.h"
#include "core/progress.h"
#include "validate/native.h"

void validate_options_default(validate_options *o)
{
	memset(o, 0, sizeof *o);
	for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) o->sources[s] = s != VALIDATE_SOURCE_SYNTHETIC;
	o->runs = 100;
	o->synthetic.kind = VALIDATE_SYNTHETIC_EXACT;
	o->synthetic.magnitude = NAN;
	o->synthetic.seed = 1;
	o->counted_cpu = -1;
	o->check_trips_max = VALIDATE_TRIP_CHECK_MAX;
	validate_thresholds_default(&o->thresholds);
}

void validate_sim_detail(const validate_options *o, char *text, size_t length)
{
	if (length == 0) return;
	size_t used = (size_t)snprintf(text, length, "preset %s", o->sim_preset ? o->sim_preset : "host");
	for (size_t i = 0; i < o->sim_setting_count && used < length; i++)
		used += (size_t)snprintf(text + used, length - used, ", %s", o->sim_settings[i]);
	if (used >= length && length > 4) memcpy(text + length - 4, "...", 4);
}

const char *validate_source_name(validate_source s)
{
	switch (s) {
	case VALIDATE_SOURCE_PERF: return "perf_event";
	case VALIDATE_SOURCE_PAPI: return "papi";
	case VALIDATE_SOURCE_SIMULATOR: return "simulator";
	case VALIDATE_SOURCE_INSTRUMENTED: return "instrumented";
	case VALIDATE_SOURCE_SYNTHETIC: return "synthetic";
	case VALIDATE_SOURCE_COUNT: break;
	}
	return "?";
}

static void note(validate_results *r, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void note(validate_results *r, const char *format, ...)
{
	size_t capacity = sizeof r->notes / sizeof r->notes[0];
	if (r->note_count >= capacity) {
		r->notes_dropped++;
		return;
	}
	va_list ap;
	va_start(ap, format);
	vsnprintf(r->notes[r->note_count++], PLUMB_MESSAGE_MAX, format, ap);
	va_end(ap);
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Which events of a benchmark the selectors ask for (bit e); 0 = none. */
static unsigned selected_events(const validate_benchmark *b, const validate_options *o)
{
	unsigned all = (1u << b->event_count) - 1;
	if (!o->selectors || o->selector_count == 0) return all;
	unsigned mask = 0;
	for (size_t i = 0; i < o->selector_count; i++) {
		const char *s = o->selectors[i];
		if (!strcasecmp(s, "all") || !strcasecmp(s, b->name)) return all;
		for (int e = 0; e < b->event_count; e++)
			if (!strcasecmp(s, b->events[e].name) ||
			    (b->events[e].perf_name && !strcasecmp(s, b->events[e].perf_name)) ||
			    (b->events[e].papi_name && !strcasecmp(s, b->events[e].papi_name)))
				mask |= 1u << e;
	}
	return mask;
}

typedef struct benchmark_plan {
	const validate_benchmark *benchmark;
	unsigned events;
	size_t size_count;
	uint64_t sizes[64];
	validate_params params[64];
	bool in_domain[64];
	validate_series *series[VALIDATE_MAX_EVENTS][VALIDATE_SOURCE_COUNT];
	/* perf and PAPI probed before the runs (plan_cost), so that the
	 * expected cost leaves out what cannot run: probed 1, or -1 with
	 * probe_status when the probe failed; 0 not probed. */
	int probed;
	validate_native_support support;
	plumb_status probe_status;
	/* its simulated or instrumented source already run, ahead of its turn
	 * (validate_run: every kind of step seen early) */
	bool simulated_early, instrumented_early;
} benchmark_plan;

static validate_case *case_of(validate_series *s, size_t i) { return &s->cases[i]; }

/* What each step is expected to cost, in native runs (a fresh process,
 * about 15 ms on a 2-CPU VM at load 3.5): a simulated case costs a start
 * (about 0.15 s) plus its address stream, about 1 us a reference for a
 * one-thread data-cache or TLB stream, 4-8 us where two threads' cores
 * share a million lines (coherence on every line: shared, cln), a fraction
 * of that for instruction streams, nothing to speak of for counts of
 * instructions, loads and stores; an instrumented case a Valgrind run,
 * about 0.5 s for cachegrind's model and 1.4 s for plumbgrind's exact
 * counts (its trace is simulated too), each growing a little with the
 * kernel.  Timed step by step on whole default validates (Intel VM,
 * 2026-11-28, load 3.5-5): the costs before these (timed at load 12) put a
 * plumbgrind run at a cachegrind one's and a one-thread reference at four
 * times its time, so the last fifth (the exact counts) ran at half the rate
 * the rest had and the time left read 30-50% short from halfway on; with
 * these, within 20% on a run they were not fitted to.  The progress line's
 * fraction follows these costs; its time left (and the report's) prices
 * what is left of each kind of step as it runs (step_kind below). */
/* The kinds of step whose rates the progress line learns as validate runs
 * (core/progress.h, progress_kind_plan): the costs below are one load's
 * ratios, and load changes them (the native runs and the two-thread
 * simulations want the second CPU, the Valgrind runs run one thread), so
 * what is left of each kind is priced at its own pace against the others'
 * over the run, times the machine's recent pace.  In a
 * default validate, in the list's order, each kind was first seen at
 * (2026-11-28, load 4, 215 s in all): a native run 0 s (page_faults), a
 * one-thread simulation 2 s (page_faults), plumbgrind 6 s (page_faults'
 * emitter check), cachegrind 36 s (stride), two threads sharing lines 70 s
 * (shared); so validate_run runs shared's simulations and stride's
 * cachegrind runs right after page_faults, and every kind is seen in the
 * first half minute at load 4.  The simulated
 * cases of one thread are one kind whatever their stream (counts only,
 * instructions, data): they ran at one rate within 15%, and instruction
 * streams come only after two thirds of the run. */
enum step_kind {
	KIND_NATIVE,          /* a native run of a one-thread benchmark */
	KIND_NATIVE_THREADS,  /* of a benchmark whose threads share lines */
	KIND_SIM,             /* a simulated case of one thread (its start and its stream) */
	KIND_SIM_SHARED,      /* of two threads whose cores share lines */
	KIND_CACHEGRIND,      /* a cachegrind run */
	KIND_PLUMBGRIND,      /* a plumbgrind run, its trace simulated (exact counts, the emitter check) */
	KIND_COUNT
};
_Static_assert(KIND_COUNT <= PROGRESS_KINDS, "validate's kinds of step fit the progress line's");

static int native_kind(const benchmark_plan *plan)
{
	return plan->benchmark->threads > 1 ? KIND_NATIVE_THREADS : KIND_NATIVE;
}

/* The simulated stream's cost per element, and its kind. */
static double sim_stream(const benchmark_plan *plan, int *kind)
{
	double per_element = 0;
	*kind = KIND_SIM;
	for (int e = 0; e < plan->benchmark->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		double cost;
		int k;
		switch (plan->benchmark->events[e].sim) {
		case VALIDATE_SIM_NONE:
		case VALIDATE_SIM_INSTRUCTIONS:
		case VALIDATE_SIM_READS:
		case VALIDATE_SIM_WRITES: cost = 0; k = KIND_SIM; break;
		case VALIDATE_SIM_L1I_MISSES:
		case VALIDATE_SIM_L2_INSTRUCTION_MISSES: cost = 1.0 / 20000; k = KIND_SIM; break;
		case VALIDATE_SIM_L1D_MISSES:
		case VALIDATE_SIM_L2_MISSES:
		case VALIDATE_SIM_UPGRADES_CLEAN:
			cost = plan->benchmark->threads > 1 ? 1.0 / 3000 : 1.0 / 12000;
			k = plan->benchmark->threads > 1 ? KIND_SIM_SHARED : KIND_SIM;
			break;
		default: cost = 1.0 / 12000; k = KIND_SIM; break;   /* TLBs, and coherence on one line or a few thousand */
		}
		if (cost > per_element) {
			per_element = cost;
			*kind = k;
		}
	}
	return per_element;
}

static double sim_stream_cost(const benchmark_plan *plan)
{
	int kind;
	return sim_stream(plan, &kind);
}

static int sim_kind(const benchmark_plan *plan)
{
	int kind;
	sim_stream(plan, &kind);
	return kind;
}

/* A benchmark with no data working set (branches, generated code,
 * register-only and one-line kernels: branch..sqrt, the last half of the
 * list) costs 0.7 of the table in its simulations and Valgrind runs.
 * Timed per benchmark in three default validates inside whole reports
 * (2026-11-28 17:22-17:33 UTC, load 1.9-3.7): in every kind of step, the
 * runs of benchmarks that touch pages and lines (a start under Valgrind or
 * the simulator that faults in pages, classifies first touches, or flushes
 * a million lines) took 1.3-1.7 times the seconds per unit of cost of these,
 * which come last; the time left learned on the first ones read 25-55% high
 * from validate's halfway.  Replayed with this factor, within 13-25% from a
 * quarter of validate in the same runs (docs/PERFORMANCE.md, "The time left
 * learned as validate runs"). */
static double table_factor(const benchmark_plan *plan)
{
	for (int e = 0; e < plan->benchmark->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		switch (plan->benchmark->events[e].sim) {
		case VALIDATE_SIM_NONE:
		case VALIDATE_SIM_INSTRUCTIONS:
		case VALIDATE_SIM_READS:
		case VALIDATE_SIM_WRITES:
		case VALIDATE_SIM_L1I_MISSES:
		case VALIDATE_SIM_L2_INSTRUCTION_MISSES: break;
		default: return 1;   /* a data stream: pages, lines, TLBs, coherence */
		}
	}
	return plan->benchmark->threads > 1 ? 1 : 0.7;
}

static double sim_cost(const benchmark_plan *plan, size_t i)
{
	return (9 + (double)plan->sizes[i] * sim_stream_cost(plan)) * table_factor(plan);
}

/* A Valgrind run: plumbgrind's exact counts and the simulation of its
 * trace (1.3-1.6 s, 1.5-1.8 at a million), cachegrind's model (0.45-0.7 s,
 * 0.7-1.0 at a million). */
static double instrumented_run_cost(uint64_t size, bool exact)
{
	return exact ? 90 + (double)size / 60000 : 34 + (double)size / 40000;
}

/* The cost of sizes from..size_count of a simulated series. */
static double sim_cost_from(const benchmark_plan *plan, size_t from)
{
	double sum = 0;
	for (size_t i = from; i < plan->size_count; i++)
		sum += sim_cost(plan, i);
	return sum;
}

/* Steps taken off the total, with their cost, of one kind. */
static void skip(progress *bar, size_t steps, int kind, double cost)
{
	progress_skip(bar, steps);
	progress_kind_drop(bar, kind, cost);
}

/* One step done, at its cost, of one kind. */
static void step(progress *bar, int kind, double cost)
{
	progress_kind_done(bar, kind, cost);
	progress_step(bar, bar->done + 1);
}

static int new_series(validate_results *r, benchmark_plan *plan, int event, validate_source source,
                      size_t runs, plumb_status *status)
{
	validate_series *s = &r->series[r->series_count++];
	memset(s, 0, sizeof *s);
	s->benchmark = plan->benchmark;
	s->event_index = event;
	s->source = source;
	s->supported = true;
	s->calibration_bias = NAN;
	s->case_count = plan->size_count;
	s->cases = calloc(plan->size_count ? plan->size_count : 1, sizeof *s->cases);
	if (!s->cases) return plumb_fail(status, ENOMEM, "out of memory");
	const validate_event *ev = &plan->benchmark->events[event];
	for (size_t i = 0; i < plan->size_count; i++) {
		validate_case *c = case_of(s, i);
		c->size = plan->sizes[i];
		c->predicted = ev->companion || !ev->predict ? NAN : ev->predict(&plan->params[i]);
		c->in_domain = plan->in_domain[i];
		c->values = calloc(runs ? runs : 1, sizeof *c->values);
		if (!c->values) return plumb_fail(status, ENOMEM, "out of memory");
	}
	plan->series[event][source] = s;
	return 0;
}

static void unsupported(validate_series *s, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void unsupported(validate_series *s, const char *format, ...)
{
	s->supported = false;
	va_list ap;
	va_start(ap, format);
	vsnprintf(s->reason, sizeof s->reason, format, ap);
	va_end(ap);
}

static void failed(validate_series *s, const char *message)
{
	if (s->failed) return;
	s->failed = true;
	snprintf(s->reason, sizeof s->reason, "%s", message);
}

static void add_value(validate_series *s, size_t i, double value)
{
	if (!s || !s->supported || s->failed || isnan(value)) return;
	validate_case *c = case_of(s, i);
	c->values[c->runs++] = value;
}

static int add_trip_check(validate_results *r, const validate_trip_check *check)
{
	/* One per case of a counted benchmark: a handful, grown one at a time. */
	validate_trip_check *grown = realloc(r->trip_checks, (r->trip_check_count + 1) * sizeof *grown);
	if (!grown) return -1;
	r->trip_checks = grown;
	r->trip_checks[r->trip_check_count++] = *check;
	return 0;
}

static int plan_benchmark(benchmark_plan *plan, const validate_benchmark *b, unsigned events,
                          const validate_options *o, const validate_machine *machine,
                          validate_results *r)
{
	memset(plan, 0, sizeof *plan);
	plan->benchmark = b;
	plan->events = events;
	if (o->sizes && o->size_count) {
		for (size_t i = 0; i < o->size_count && i < 64; i++) plan->sizes[plan->size_count++] = o->sizes[i];
	} else {
		uint64_t max = o->max_size ? o->max_size : b->default_max_size;
		plan->size_count = validate_suite_sizes(b, max, plan->sizes, 64);
	}
	for (size_t i = 0; i < plan->size_count; i++) {
		validate_params_init(&plan->params[i], b, machine, plan->sizes[i]);
		char warning[PLUMB_MESSAGE_MAX] = "";
		plan->in_domain[i] = b->in_domain ? b->in_domain(&plan->params[i], warning, sizeof warning) : true;
		if (!plan->in_domain[i])
			note(r, "warning: %s at %llu is outside its validity domain: %s", b->name,
			     (unsigned long long)plan->sizes[i], warning);
	}
	return 0;
}

static int run_native(benchmark_plan *plan, const validate_options *o, validate_results *r,
                      progress *bar, plumb_status *status)
{
	const validate_benchmark *b = plan->benchmark;
	bool want[2] = { o->sources[VALIDATE_SOURCE_PERF], o->sources[VALIDATE_SOURCE_PAPI] };
	if (!want[0] && !want[1]) return 0;
	if (b->threads > r->machine.cpu_count) {
		/* Two spinning threads on one CPU make progress only at time-slice
		 * ends: the counts would be dominated by the scheduler. */
		for (int e = 0; e < b->event_count; e++)
			for (int s = 0; s < 2; s++)
				if ((plan->events & (1u << e)) && want[s])
					unsupported(plan->series[e][s], "needs %d CPUs; this process may use %d", b->threads,
					            r->machine.cpu_count);
		skip(bar, plan->size_count * o->runs, native_kind(plan), 0);   /* not in the cost (plan_cost) */
		return 0;
	}
	if (!plan->probed)
		plan->probed = validate_native_probe(b, &plan->support, &plan->probe_status) == 0 ? 1 : -1;
	if (plan->probed < 0) {
		*status = plan->probe_status;
		return -1;
	}
	const validate_native_support *support = &plan->support;
	bool run_source[2] = { false, false };
	for (int e = 0; e < b->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		for (int s = 0; s < 2; s++) {
			if (!want[s]) continue;
			validate_series *series = plan->series[e][s];
			series->calibration_bias = support->bias[s][e];
			snprintf(series->detail, sizeof series->detail, "%s",
			         validate_native_event_name(&b->events[e], s));
			if (!support->supported[s][e])
				unsupported(series, "%s", support->reason[s][e][0] ? support->reason[s][e] : "cannot be opened");
			else
				run_source[s] = true;
		}
	}
	if (!run_source[0] && !run_source[1]) {
		skip(bar, plan->size_count * o->runs, native_kind(plan), 0);   /* not in the cost (plan_cost) */
		return 0;
	}
	for (size_t i = 0; i < plan->size_count; i++) {
		/* The iteration check first: one run of its own, with the loop's
		 * trips counted (validate_check_trips); a kernel that does not run
		 * the trips its model expects fails every series of the case. */
		plumb_status check_status;
		validate_trip_check check;
		int checked = validate_check_trips(b, &plan->params[i], o->check_trips_max, &check, &check_status);
		r->total_runs += checked == 0 && check.state != VALIDATE_TRIPS_NOT_CHECKED;
		if (checked == 0 && add_trip_check(r, &check) != 0) return plumb_fail(status, ENOMEM, "out of memory");
		if (checked != 0 || check.state == VALIDATE_TRIPS_MISMATCH) {
			char message[PLUMB_MESSAGE_MAX];
			snprintf(message, sizeof message, "iteration check at %llu: %.200s", (unsigned long long)plan->sizes[i],
			         checked != 0 ? check_status.message : check.reason);
			for (int e = 0; e < b->event_count; e++)
				for (int s = 0; s < 2; s++)
					if ((plan->events & (1u << e)) && run_source[s]) failed(plan->series[e][s], message);
			note(r, "%s %s", b->name, message);
			skip(bar, (plan->size_count - i) * o->runs, native_kind(plan), (double)((plan->size_count - i) * o->runs));
			return 0;
		}
		for (size_t run = 0; run < o->runs; run++) {
			double values[2][VALIDATE_MAX_EVENTS];
			int states[2][VALIDATE_MAX_EVENTS];
			plumb_status run_status;
			int rc = validate_run_once(b, &plan->params[i], run_source, values, states, NULL, &run_status);
			r->total_runs++;
			step(bar, native_kind(plan), 1);
			for (int e = 0; e < b->event_count; e++) {
				if (!(plan->events & (1u << e))) continue;
				for (int s = 0; s < 2; s++) {
					if (!run_source[s]) continue;
					validate_series *series = plan->series[e][s];
					if (rc != 0) {
						failed(series, run_status.message);
						continue;
					}
					if (isnan(values[s][e]) && series->supported)
						failed(series, states[s][e] == COUNTER_NOT_COUNTED
						       ? "not counted: the event was opened but never ran on a counter"
						       : "a run returned no count");
					if (states[s][e] == COUNTER_MULTIPLEXED) series->multiplexed_runs++;
					add_value(series, i, values[s][e]);
				}
			}
			if (rc != 0) {
				note(r, "%s at %llu: %s", b->name, (unsigned long long)plan->sizes[i], run_status.message);
				skip(bar, (plan->size_count - i) * o->runs - (run + 1), native_kind(plan),
				     (double)((plan->size_count - i) * o->runs - (run + 1)));
				return 0;
			}
		}
	}
	return 0;
}

static int run_simulator(benchmark_plan *plan, const validate_options *o, validate_results *r,
                         progress *bar)
{
	const validate_benchmark *b = plan->benchmark;
	char reason[PLUMB_MESSAGE_MAX];
	bool available = validate_simulator_available(reason, sizeof reason);
	bool any = false;
	for (int e = 0; e < b->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		validate_series *series = plan->series[e][VALIDATE_SOURCE_SIMULATOR];
		validate_sim_detail(o, series->detail, sizeof series->detail);
		if (!available) unsupported(series, "%s", reason);
		else if (b->events[e].sim == VALIDATE_SIM_NONE)
			unsupported(series, "the simulator does not model %s", b->events[e].name);
		else if (!b->emit) unsupported(series, "%s has no address-stream emitter", b->name);
		else any = true;
	}
	if (!any) {
		skip(bar, plan->size_count, sim_kind(plan), 0);   /* not in the cost (plan_cost) */
		return 0;
	}
	for (size_t i = 0; i < plan->size_count; i++) {
		double values[VALIDATE_MAX_EVENTS];
		char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
		plumb_status status;
		progress_kind_next(bar, sim_kind(plan), sim_cost(plan, i));
		int rc = validate_simulate(b, &plan->params[i], o->sim_preset, o->sim_settings, o->sim_setting_count,
		                           values, reasons, &status);
		step(bar, sim_kind(plan), sim_cost(plan, i));
		for (int e = 0; e < b->event_count; e++) {
			if (!(plan->events & (1u << e))) continue;
			validate_series *series = plan->series[e][VALIDATE_SOURCE_SIMULATOR];
			if (rc != 0) failed(series, status.message);
			else add_value(series, i, values[e]);
		}
		if (rc != 0) {
			note(r, "simulator, %s at %llu: %s", b->name, (unsigned long long)plan->sizes[i], status.message);
			skip(bar, plan->size_count - i - 1, sim_kind(plan), sim_cost_from(plan, i + 1));
			return 0;
		}
	}
	return 0;
}

/* Whether Valgrind can run this plumb, checked once per validate_run. */
typedef struct valgrind_check {
	bool checked, available, plumbgrind, noted;
	char reason[PLUMB_MESSAGE_MAX], plumbgrind_reason[PLUMB_MESSAGE_MAX];
} valgrind_check;

static bool exact_event(const validate_event *ev)
{
	return ev->instrumented == VALIDATE_INSTR_INSTRUCTIONS || ev->instrumented == VALIDATE_INSTR_READS ||
	       ev->instrumented == VALIDATE_INSTR_WRITES;
}

static void check_valgrind(const validate_options *o, valgrind_check *check)
{
	if (check->checked) return;
	check->available = validate_valgrind_available(o->valgrind, o->self_path, check->reason, sizeof check->reason);
	check->plumbgrind =
		check->available && validate_plumbgrind_available(check->plumbgrind_reason, sizeof check->plumbgrind_reason);
	check->checked = true;
}

/* An instrumented case's cost: its Valgrind runs (plumbgrind for exact
 * counts, cachegrind for modelled ones), by its events and what this
 * machine's Valgrind can run; 0 when none can. */
static double instrumented_cost_of(const benchmark_plan *plan, size_t i, const valgrind_check *check, bool exact_run)
{
	bool exact = false, model = false;
	for (int e = 0; e < plan->benchmark->event_count; e++) {
		const validate_event *ev = &plan->benchmark->events[e];
		if (!(plan->events & (1u << e)) || ev->instrumented == VALIDATE_INSTR_NONE) continue;
		if (exact_event(ev)) exact = exact || check->plumbgrind;
		else model = model || check->available;
	}
	return table_factor(plan) * (exact_run ? (exact ? instrumented_run_cost(plan->sizes[i], true) : 0)
	                                       : (model ? instrumented_run_cost(plan->sizes[i], false) : 0));
}

/* Sizes from..size_count: their plumbgrind runs (exact_run) or cachegrind runs. */
static double instrumented_cost_from(const benchmark_plan *plan, size_t from, const valgrind_check *check, bool exact_run)
{
	double sum = 0;
	for (size_t i = from; i < plan->size_count; i++)
		sum += instrumented_cost_of(plan, i, check, exact_run);
	return sum;
}

/* Both kinds of sizes from..size_count taken off. */
static void skip_instrumented(progress *bar, const benchmark_plan *plan, size_t from, const valgrind_check *check)
{
	progress_skip(bar, plan->size_count - from);
	progress_kind_drop(bar, KIND_CACHEGRIND, instrumented_cost_from(plan, from, check, false));
	progress_kind_drop(bar, KIND_PLUMBGRIND, instrumented_cost_from(plan, from, check, true));
}

/* The instrumented source.  Exact counts (instructions, loads, stores) are
 * plumbgrind's, of the kernel function inside the marked region; cache and
 * branch misses are no count a Valgrind tool makes, only a model's, and
 * stay cachegrind's (its cache model with this machine's geometry, its
 * branch predictor). */
static int run_instrumented(benchmark_plan *plan, const validate_options *o, validate_results *r,
                            progress *bar, valgrind_check *check)
{
	const validate_benchmark *b = plan->benchmark;
	bool any_exact = false, any_model = false;
	for (int e = 0; e < b->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		validate_series *series = plan->series[e][VALIDATE_SOURCE_INSTRUMENTED];
		const validate_event *ev = &b->events[e];
		snprintf(series->detail, sizeof series->detail, "%s",
		         exact_event(ev) ? "plumbgrind"
		         : ev->instrumented == VALIDATE_INSTR_BRANCH_MISSES ? "cachegrind's branch model"
		                                                           : "cachegrind's cache model");
		if (ev->instrumented == VALIDATE_INSTR_NONE) {
			unsupported(series, "%s", b->threads > 1
			            ? "Valgrind serialises threads and has no coherence or multi-core cache model"
			            : "no Valgrind tool counts this event exactly");
			continue;
		}
		check_valgrind(o, check);
		if (!check->available) unsupported(series, "%s", check->reason);
		else if (exact_event(ev) && !check->plumbgrind) unsupported(series, "%s", check->plumbgrind_reason);
		else if (exact_event(ev)) any_exact = true;
		else any_model = true;
	}
	if (!any_exact && !any_model) {
		skip_instrumented(bar, plan, 0, check);
		return 0;
	}
	size_t agreed = 0, compared = 0;
	char disagreement[PLUMB_MESSAGE_MAX] = "";
	for (size_t i = 0; i < plan->size_count; i++) {
		double values[VALIDATE_MAX_EVENTS];
		for (int e = 0; e < VALIDATE_MAX_EVENTS; e++) values[e] = NAN;
		plumb_status status;
		int rc = 0;
		double model_cost = instrumented_cost_of(plan, i, check, false), exact_cost = instrumented_cost_of(plan, i, check, true);
		if (any_model) {
			progress_kind_next(bar, KIND_CACHEGRIND, model_cost);
			rc = validate_instrumented_counts(b, &plan->params[i], o->valgrind, o->self_path, values, &status);
			progress_kind_done(bar, KIND_CACHEGRIND, model_cost);
		}
		if (rc != 0 || !any_exact) progress_kind_drop(bar, KIND_PLUMBGRIND, exact_cost);
		if (rc == 0 && any_exact) {
			validate_traced traced;
			progress_kind_next(bar, KIND_PLUMBGRIND, exact_cost);
			rc = validate_plumbgrind_trace(b, &plan->params[i], o->self_path, o->sim_preset, o->sim_settings,
			                               o->sim_setting_count, &traced, &status);
			for (int e = 0; rc == 0 && e < b->event_count; e++)
				if (exact_event(&b->events[e])) values[e] = traced.instrumented[e];
			if (rc == 0 && traced.comparison != VALIDATE_EMITTER_NOT_COMPARED) {
				compared++;
				if (traced.comparison == VALIDATE_EMITTER_AGREES) agreed++;
				else if (!disagreement[0])
					snprintf(disagreement, sizeof disagreement, "at %llu %.200s", (unsigned long long)plan->sizes[i],
					         traced.comparison_text);
			}
			progress_kind_done(bar, KIND_PLUMBGRIND, exact_cost);
		}
		if (!any_model) progress_kind_drop(bar, KIND_CACHEGRIND, model_cost);
		progress_step(bar, bar->done + 1);
		for (int e = 0; e < b->event_count; e++) {
			if (!(plan->events & (1u << e)) || b->events[e].instrumented == VALIDATE_INSTR_NONE) continue;
			validate_series *series = plan->series[e][VALIDATE_SOURCE_INSTRUMENTED];
			if (!series->supported) continue;
			if (rc != 0) failed(series, status.message);
			else add_value(series, i, values[e]);
		}
		if (rc != 0) {
			note(r, "instrumented, %s at %llu: %s", b->name, (unsigned long long)plan->sizes[i], status.message);
			skip_instrumented(bar, plan, i + 1, check);
			return 0;
		}
	}
	if (compared)
		note(r, "emitter check, %s: the emitter %s plumbgrind's trace of the kernel at %zu of %zu sizes%s%s", b->name,
		     agreed == compared ? "agrees with" : "differs from", agreed, compared, disagreement[0] ? "; " : "",
		     disagreement);
	return 0;
}

/* The emitter check for a benchmark the instrumented source did not trace:
 * one plumbgrind run at one size (the smallest of 100 or more, 10 or more
 * for a kernel that hands off between its threads on every element, else
 * the largest), so that the simulator column's stream is checked against
 * the real kernel at a cost of about a second per benchmark. */
/* The size check_emitter traces, or -1 when it runs nothing (it needs
 * plumbgrind, and a benchmark the instrumented source did not trace). */
static long emitter_check_size(const benchmark_plan *plan, const validate_options *o, const valgrind_check *check)
{
	const validate_benchmark *b = plan->benchmark;
	if (!b->emit || plan->size_count == 0 || !check->plumbgrind) return -1;
	for (int e = 0; e < b->event_count; e++)
		if ((plan->events & (1u << e)) && exact_event(&b->events[e]) && o->sources[VALIDATE_SOURCE_INSTRUMENTED])
			return -1;
	size_t pick = plan->size_count - 1;
	uint64_t smallest = b->hands_off_each_element ? 10 : 100;
	for (size_t i = 0; i < plan->size_count; i++)
		if (plan->sizes[i] >= smallest && plan->sizes[i] <= 100000) {
			pick = i;
			break;
		}
	return plan->sizes[pick] > 100000 ? -1 : (long)pick;   /* too long under Valgrind for a check */
}

/* Its cost: one plumbgrind run, about a twentieth of a default validate. */
static double emitter_check_cost(const benchmark_plan *plan, const validate_options *o, const valgrind_check *check)
{
	long pick = emitter_check_size(plan, o, check);
	return pick < 0 ? 0 : table_factor(plan) * instrumented_run_cost(plan->sizes[pick], true);
}

static void check_emitter(benchmark_plan *plan, const validate_options *o, validate_results *r, valgrind_check *check)
{
	const validate_benchmark *b = plan->benchmark;
	if (!b->emit || plan->size_count == 0) return;
	for (int e = 0; e < b->event_count; e++)
		if ((plan->events & (1u << e)) && exact_event(&b->events[e]) && o->sources[VALIDATE_SOURCE_INSTRUMENTED])
			return;   /* run_instrumented checked every size */
	check_valgrind(o, check);
	if (!check->plumbgrind) {
		if (!check->noted) {
			note(r, "emitter check: not run: %s", check->available ? check->plumbgrind_reason : check->reason);
			check->noted = true;
		}
		return;
	}
	long pick = emitter_check_size(plan, o, check);
	if (pick < 0) return;
	validate_traced traced;
	plumb_status status;
	if (validate_plumbgrind_trace(b, &plan->params[pick], o->self_path, o->sim_preset, o->sim_settings,
	                              o->sim_setting_count, &traced, &status) != 0) {
		note(r, "emitter check, %s at %llu: %s", b->name, (unsigned long long)plan->sizes[pick], status.message);
		return;
	}
	note(r, "emitter check, %s at %llu: %s", b->name, (unsigned long long)plan->sizes[pick], traced.comparison_text);
}

/* The synthetic source: the prediction with an injected error, no run at all. */
static void run_synthetic(benchmark_plan *plan, const validate_options *o)
{
	const validate_benchmark *b = plan->benchmark;
	/* One stream per (benchmark, event): FNV-1a of the benchmark's name. */
	uint64_t name_hash = 0xcbf29ce484222325ull;
	for (const char *c = b->name; *c; c++) name_hash = (name_hash ^ (uint8_t)*c) * 0x100000001b3ull;
	for (int e = 0; e < b->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		validate_series *series = plan->series[e][VALIDATE_SOURCE_SYNTHETIC];
		if (b->events[e].companion || !b->events[e].predict) {
			unsupported(series, "%s is counted alongside, not predicted: nothing to inject an error into",
			            b->events[e].name);
			continue;
		}
		validate_synthetic_fill(&o->synthetic, name_hash + (uint64_t)e, series->cases, series->case_count, o->runs,
		                        series->detail, sizeof series->detail);
	}
}

static void finish_series(validate_series *s, const validate_thresholds *t)
{
	for (size_t i = 0; i < s->case_count; i++) validate_case_summarize(&s->cases[i]);
	const validate_event *ev = &s->benchmark->events[s->event_index];
	if (!s->supported || ev->companion) {
		memset(&s->verdict, 0, sizeof s->verdict);
		s->verdict.cls = VALIDATE_CLASS_UNKNOWN;
		s->verdict.a = s->verdict.b = s->verdict.r2 = s->verdict.reliable_from = NAN;
		return;
	}
	validate_classify(s->cases, s->case_count, t, &s->verdict);
	if (s->multiplexed_runs) {
		size_t used = strlen(s->verdict.explanation);
		snprintf(s->verdict.explanation + used, sizeof s->verdict.explanation - used,
		         "; %zu runs multiplexed (scaled by enabled/running time)", s->multiplexed_runs);
	}
	if (s->source == VALIDATE_SOURCE_SYNTHETIC) {
		size_t used = strlen(s->verdict.explanation);
		snprintf(s->verdict.explanation + used, sizeof s->verdict.explanation - used, "; injected: %s", s->detail);
	}
	if (s->verdict.cls == VALIDATE_CLASS_BIAS && isfinite(s->calibration_bias)) {
		size_t used = strlen(s->verdict.explanation);
		snprintf(s->verdict.explanation + used, sizeof s->verdict.explanation - used,
		         "; the empty region counts %.2f", s->calibration_bias);
	}
}

/* The expected cost of a plan's steps, as step and skip count them: perf
 * and PAPI are probed now (run_native uses the probe), the simulator and
 * Valgrind checked now, so that work that cannot run here is not in the
 * total (left in, it came off only as each benchmark was reached, and the
 * fraction done crept until the end). */
static void plan_cost(benchmark_plan *plan, const validate_options *o, const validate_results *r,
                      bool simulator, valgrind_check *check, double cost[KIND_COUNT])
{
	const validate_benchmark *b = plan->benchmark;
	bool want[2] = { o->sources[VALIDATE_SOURCE_PERF], o->sources[VALIDATE_SOURCE_PAPI] };
	if ((want[0] || want[1]) && b->threads <= r->machine.cpu_count) {
		plan->probed = validate_native_probe(b, &plan->support, &plan->probe_status) == 0 ? 1 : -1;
		bool runs = plan->probed < 0;
		for (int e = 0; e < b->event_count && !runs; e++)
			for (int s = 0; s < 2; s++)
				if ((plan->events & (1u << e)) && want[s] && plan->support.supported[s][e]) runs = true;
		if (runs) cost[native_kind(plan)] += (double)(plan->size_count * o->runs);
	}
	bool simulated = false, instrumented = false;
	for (int e = 0; e < b->event_count; e++) {
		if (!(plan->events & (1u << e))) continue;
		simulated = simulated || b->events[e].sim != VALIDATE_SIM_NONE;
		instrumented = instrumented || b->events[e].instrumented != VALIDATE_INSTR_NONE;
	}
	if (o->sources[VALIDATE_SOURCE_SIMULATOR] && simulator && b->emit && simulated)
		cost[sim_kind(plan)] += sim_cost_from(plan, 0);
	if (o->sources[VALIDATE_SOURCE_INSTRUMENTED] && instrumented) {
		check_valgrind(o, check);
		cost[KIND_CACHEGRIND] += instrumented_cost_from(plan, 0, check, false);
		cost[KIND_PLUMBGRIND] += instrumented_cost_from(plan, 0, check, true);
	}
	if (o->sources[VALIDATE_SOURCE_SIMULATOR] && o->sources[VALIDATE_SOURCE_INSTRUMENTED] && b->emit) {
		check_valgrind(o, check);
		cost[KIND_PLUMBGRIND] += emitter_check_cost(plan, o, check);
	}
}

int validate_run(const validate_options *options, validate_results *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	double started = now_seconds();
	if (validate_machine_detect(&out->machine, status) != 0) return -1;
	if (options->runs == 0) return plumb_fail(status, EINVAL, "the number of runs must be at least 1");
	if (options->counted_cpu >= 0) {
		plumb_status why;
		if (cpu_check_allowed(&options->counted_cpu, 1, &why) != 0)
			return plumb_fail(status, EINVAL, "--cpu: %s", why.message);
		/* The counted thread on the chosen CPU, its partner on another one. */
		int partner = out->machine.cpus[0] == options->counted_cpu ? out->machine.cpus[1] : out->machine.cpus[0];
		out->machine.cpus[0] = options->counted_cpu;
		out->machine.cpus[1] = partner;
	}
	size_t count;
	const validate_benchmark *const *all = validate_benchmarks(&count);
	benchmark_plan *plans = calloc(count, sizeof *plans);
	size_t plan_count = 0, series_capacity = 0;
	if (!plans) return plumb_fail(status, ENOMEM, "out of memory");
	for (size_t i = 0; i < options->selector_count; i++) {
		bool matched = false;
		for (size_t k = 0; k < count; k++) matched |= selected_events(all[k], &(validate_options){
			.selectors = &options->selectors[i], .selector_count = 1 }) != 0;
		if (!matched) {
			free(plans);
			return plumb_fail(status, EINVAL, "'%s' names no benchmark or event (see plumb validate --list)",
			                  options->selectors[i]);
		}
	}
	for (size_t k = 0; k < count; k++) {
		unsigned events = selected_events(all[k], options);
		if (!events) continue;
		plan_benchmark(&plans[plan_count], all[k], events, options, &out->machine, out);
		for (int e = 0; e < all[k]->event_count; e++)
			if (events & (1u << e)) series_capacity += VALIDATE_SOURCE_COUNT;
		plan_count++;
	}
	out->series = calloc(series_capacity ? series_capacity : 1, sizeof *out->series);
	if (!out->series) {
		free(plans);
		return plumb_fail(status, ENOMEM, "out of memory");
	}
	size_t steps = 0, early_shared = SIZE_MAX, early_cachegrind = SIZE_MAX;
	double cost[KIND_COUNT] = { 0 };
	valgrind_check check = { 0 };
	char simulator_reason[PLUMB_MESSAGE_MAX];
	bool simulator = options->sources[VALIDATE_SOURCE_SIMULATOR] &&
	                 validate_simulator_available(simulator_reason, sizeof simulator_reason);
	for (size_t p = 0; p < plan_count; p++) {
		for (int e = 0; e < plans[p].benchmark->event_count; e++) {
			if (!(plans[p].events & (1u << e))) continue;
			for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) {
				if (!options->sources[s]) continue;
				size_t runs = s <= VALIDATE_SOURCE_PAPI || s == VALIDATE_SOURCE_SYNTHETIC ? options->runs : 1;
				if (new_series(out, &plans[p], e, (validate_source)s, runs, status) != 0) {
					free(plans);
					return -1;
				}
			}
		}
		/* The steps each source will take: a source that then cannot run
		 * takes its steps off the total (progress_skip), so it ends at 100%. */
		bool native = options->sources[VALIDATE_SOURCE_PERF] || options->sources[VALIDATE_SOURCE_PAPI];
		steps += plans[p].size_count * ((native ? options->runs : 0) +
		                                (options->sources[VALIDATE_SOURCE_SIMULATOR] ? 1 : 0) +
		                                (options->sources[VALIDATE_SOURCE_INSTRUMENTED] ? 1 : 0));
		double own[KIND_COUNT] = { 0 };
		plan_cost(&plans[p], options, out, simulator, &check, own);
		for (int k = 0; k < KIND_COUNT; k++) cost[k] += own[k];
		if (own[KIND_SIM_SHARED] > 0 && early_shared == SIZE_MAX) early_shared = p;
		if (own[KIND_CACHEGRIND] > 0 && instrumented_cost_from(&plans[p], 0, &check, true) <= 0 &&
		    early_cachegrind == SIZE_MAX)
			early_cachegrind = p;
	}
	/* The bar runs even without a line to draw: its fraction also goes to
	 * plumb report when validate runs as one of its sections. */
	progress bar;
	progress_begin(&bar, "plumb validate", steps);
	bar.enabled = bar.enabled && options->progress;
	progress_set_cost(&bar, 0);
	for (int k = 0; k < KIND_COUNT; k++) progress_kind_plan(&bar, k, cost[k]);
	progress_share(&bar, 0, 1);
	int rc = 0;
	for (size_t p = 0; p < plan_count && rc == 0; p++) {
		if (options->sources[VALIDATE_SOURCE_PERF] || options->sources[VALIDATE_SOURCE_PAPI])
			rc = run_native(&plans[p], options, out, &bar, status);
		if (rc == 0 && options->sources[VALIDATE_SOURCE_SIMULATOR] && !plans[p].simulated_early)
			rc = run_simulator(&plans[p], options, out, &bar);
		if (rc == 0 && options->sources[VALIDATE_SOURCE_INSTRUMENTED] && !plans[p].instrumented_early)
			rc = run_instrumented(&plans[p], options, out, &bar, &check);
		if (rc == 0 && options->sources[VALIDATE_SOURCE_SIMULATOR] && options->sources[VALIDATE_SOURCE_INSTRUMENTED]) {
			double check_cost = emitter_check_cost(&plans[p], options, &check);
			progress_kind_next(&bar, KIND_PLUMBGRIND, check_cost);
			check_emitter(&plans[p], options, out, &check);
			if (check_cost > 0) progress_kind_done(&bar, KIND_PLUMBGRIND, check_cost);
		}
		if (rc == 0 && options->sources[VALIDATE_SOURCE_SYNTHETIC]) run_synthetic(&plans[p], options);
		/* Every kind of step seen early, so that the time left prices it
		 * at this run's rate from the first minute: after the first
		 * benchmark, the first simulation of two threads sharing lines
		 * (shared, ninth in the list, a third of the way through) and the
		 * first cachegrind-only benchmark (stride, sixth) run ahead of
		 * their turn.  Their series keep their places, and neither
		 * writes a note but on a failure, so the results are the same. */
		if (rc == 0 && p == 0 && early_shared > 1 && early_shared < plan_count) {
			rc = run_simulator(&plans[early_shared], options, out, &bar);
			plans[early_shared].simulated_early = true;
		}
		if (rc == 0 && p == 0 && early_cachegrind > 1 && early_cachegrind < plan_count) {
			rc = run_instrumented(&plans[early_cachegrind], options, out, &bar, &check);
			plans[early_cachegrind].instrumented_early = true;
		}
	}
	progress_end(&bar);
	for (size_t i = 0; i < out->series_count; i++) finish_series(&out->series[i], &options->thresholds);
	free(plans);
	out->seconds = now_seconds() - started;
	return rc;
}

void validate_results_free(validate_results *results)
{
	for (size_t i = 0; i < results->series_count; i++) {
		validate_series *s = &results->series[i];
		for (size_t c = 0; c < s->case_count && s->cases; c++) free(s->cases[c].values);
		free(s->cases);
	}
	free(results->series);
	results->series = NULL;
	results->series_count = 0;
	free(results->trip_checks);
	results->trip_checks = NULL;
	results->trip_check_count = 0;
}
