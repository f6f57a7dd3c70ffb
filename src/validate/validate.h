/* Counter validation (seeds 000 and 003): microbenchmarks whose event
 * counts have a closed form, run many times in fresh processes and read
 * through every available source (perf_event, PAPI, the simulator, exact
 * instrumented counts), compared with the prediction, and the errors
 * classified (bias/overhead, multiplicative, random, unknown).
 *
 * A benchmark is four things: a kernel (the code whose events are
 * counted), a predictor (a closed form of its parameters), an emitter (the
 * exact address stream of the measured region, for the simulator) and a
 * validity domain (where the closed form is claimed to hold). */
#ifndef PLUMB_VALIDATE_H
#define PLUMB_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "counters/counters.h"
#include "core/output.h"
#include "core/status.h"
#include "trace/trace.h"

/* ---- The machine parameters benchmarks depend on ---------------------- */

typedef struct validate_machine {
	size_t page_size;        /* base page, bytes */
	unsigned l1d_line, l2_line, l1i_line;
	uint64_t l1d_size, l2_size, l1i_size;
	int l1d_ways, l2_ways, l1i_ways;
	int cpus[2];             /* the two CPUs two-thread benchmarks pin to */
	int cpu_count;           /* CPUs this process may use */
} validate_machine;

/* From sysfs/sysconf and the allowed CPU set; safe defaults (4 KiB pages,
 * 64 B lines, 32 KiB L1, 1 MiB L2) when a value cannot be read. */
int validate_machine_detect(validate_machine *out, plumb_status *status);
/* The seeds' platforms and a generic host, for tests and presets. */
void validate_machine_default(validate_machine *out);

/* ---- Benchmarks --------------------------------------------------------- */

typedef struct validate_params {
	uint64_t size;           /* the suite parameter: intended number of events */
	uint64_t pad;            /* padding benchmark: bytes of padding (seed 000 §3.2) */
	uint64_t base_offset;    /* array start past a page boundary (glibc's malloc: 16) */
	unsigned inner_trips;    /* branch benchmark: inner loop trip count (seed 003: 10) */
	bool evict_by_sweep;     /* prepare uncached lines by an eviction sweep, not
	                            clflush (Valgrind's cache models ignore clflush) */
	const validate_machine *machine;
} validate_params;

/* Where the loop trips of a run can be counted at run time: instructions
 * whose executions between the region's begin and end are counted by
 * execute breakpoints (validate_check_trips).  With trips == NULL the
 * trips are the executions of address[0], the instruction that closes the
 * kernel's loop (it runs once per trip, taken or not).  Kernels whose loop
 * is generated code (icache) name two addresses and derive the trips. */
#define VALIDATE_TRIP_POINTS 4   /* x86 has four debug address registers */

typedef struct validate_trip_points {
	int count;                                  /* 1..VALIDATE_TRIP_POINTS */
	const void *address[VALIDATE_TRIP_POINTS];
	/* false: only the counted thread's executions (the other thread may run
	 * the same kernel outside the region); true: the loop runs on the
	 * partner thread, counted with the threads the counted one starts. */
	bool partner_thread;
	/* Trips from the executions of each address; false (with why) when the
	 * counts fit no run of the kernel.  NULL: trips = executions[0]. */
	bool (*trips)(const uint64_t executions[VALIDATE_TRIP_POINTS], const uint64_t parameters[2],
	              uint64_t *trips, char *why, size_t length);
	uint64_t parameters[2];
} validate_trip_points;

/* The measured region.  Kernels call validate_region_open() on the counted
 * thread before any barrier, then validate_region_watch() with their loop,
 * then begin/end around exactly the code whose events are predicted.  Any
 * member may be NULL (e.g. when only checking a kernel or emitting its
 * trace). */
typedef struct validate_region {
	int (*open)(void *context, plumb_status *status);
	void (*begin)(void *context);
	void (*end)(void *context);
	void *context;
	/* Optional: arms the trip counting (validate_check_trips); NULL in
	 * counted runs, where a breakpoint trap per trip would change every
	 * hardware count. */
	int (*watch)(void *context, const validate_trip_points *points, plumb_status *status);
} validate_region;

int validate_region_open(validate_region *region, plumb_status *status);
int validate_region_watch(validate_region *region, const validate_trip_points *points, plumb_status *status);
void validate_region_begin(validate_region *region);
void validate_region_end(validate_region *region);

/* What a kernel reports about its own run.  It carries no iteration count:
 * a count the wrapper reports comes from the same formula as the model's
 * and proves nothing; validate_check_trips counts the trips instead. */
typedef struct validate_run_info {
	uint64_t checksum;       /* keeps results observable */
} validate_run_info;

/* Where an emitter sends its stream.  mark(REGION_BEGIN/END) brackets the
 * records of the measured region; records before it prepare state (e.g. the
 * other thread's phase-1 writes).  Lines that the kernel flushes with
 * clflush are simply not emitted before the region: for a simulator a
 * flushed line and a never-touched line are the same state. */
typedef enum validate_mark { VALIDATE_REGION_BEGIN, VALIDATE_REGION_END } validate_mark;

typedef struct validate_sink {
	int (*records)(void *context, const trace_record *records, size_t count, plumb_status *status);
	int (*mark)(void *context, validate_mark mark, plumb_status *status);
	void *context;
} validate_sink;

/* What the simulator must count for an event. */
typedef enum validate_sim_event {
	VALIDATE_SIM_NONE,             /* not modelled by the simulator */
	VALIDATE_SIM_PAGES_TOUCHED,    /* first touches of pages = compulsory TLB misses */
	VALIDATE_SIM_TLB_MISSES,
	VALIDATE_SIM_L1D_MISSES,
	VALIDATE_SIM_L2_MISSES,
	VALIDATE_SIM_L1I_MISSES,
	VALIDATE_SIM_L2_INSTRUCTION_MISSES,   /* instruction fetches that missed the L2 (PAPI_L2_ICM) */
	VALIDATE_SIM_INSTRUCTIONS,
	VALIDATE_SIM_READS,
	VALIDATE_SIM_WRITES,
	VALIDATE_SIM_INTERVENTIONS,    /* received by the monitored core (PAPI_CA_ITV) */
	VALIDATE_SIM_INVALIDATIONS,    /* received by the monitored core (PAPI_CA_INV) */
	VALIDATE_SIM_UPGRADES_SHARED,  /* S->M requested by the monitored core (PAPI_CA_SHR) */
	VALIDATE_SIM_UPGRADES_CLEAN    /* E->M by the monitored core (PAPI_CA_CLN) */
} validate_sim_event;

/* What an exact instrumented count (a Valgrind tool) can give for an event. */
typedef enum validate_instrumented {
	VALIDATE_INSTR_NONE,
	VALIDATE_INSTR_INSTRUCTIONS,   /* cachegrind Ir of the kernel function */
	VALIDATE_INSTR_READS,          /* cachegrind Dr */
	VALIDATE_INSTR_WRITES,         /* cachegrind Dw */
	VALIDATE_INSTR_D1_MISSES,      /* cachegrind D1mr+D1mw with the host L1D geometry */
	VALIDATE_INSTR_LL_MISSES,      /* cachegrind DLmr+DLmw with LL = host L2 */
	VALIDATE_INSTR_I1_MISSES,      /* cachegrind I1mr */
	VALIDATE_INSTR_BRANCH_MISSES   /* cachegrind Bcm (its 2-bit predictor model) */
} validate_instrumented;

#define VALIDATE_MAX_EVENTS 3

typedef struct validate_event {
	const char *name;              /* shown in tables: "PAPI_TLB_DM", "minor-faults" */
	const char *perf_name;         /* for the perf_event backend; NULL = none */
	const char *papi_name;         /* for the PAPI backend; NULL = none */
	validate_sim_event sim;
	validate_instrumented instrumented;
	const char *instrumented_function;  /* kernel symbol cachegrind attributes to */
	bool companion;                /* counted alongside, not predicted (seed 000 Fig. 18) */
	/* Predicted count for these parameters (the closed form). */
	double (*predict)(const validate_params *params);
} validate_event;

typedef struct validate_benchmark {
	const char *name;              /* "page-faults", "dtlb", "itv", ... */
	const char *title;
	const char *defeats;           /* what the design defeats, one line */
	int threads;                   /* 1 or 2 (pinned to machine->cpus) */
	uint64_t default_max_size;     /* largest default suite size */
	bool capacity_suite;           /* adds the seed's 1000-step suite 1000..10000 */
	/* Each element hands a value to the other thread and spins for the
	 * answer: under Valgrind, which runs one thread at a time, every
	 * handoff waits out the spinner's time slice (100 ping-pong rounds:
	 * 11-18 s), so the emitter check traces 10 elements instead of 100. */
	bool hands_off_each_element;
	int event_count;
	validate_event events[VALIDATE_MAX_EVENTS];
	/* Fills params for a suite size (base_offset, pad, ...). */
	void (*configure)(validate_params *params);
	/* Returns true inside the validity domain; else writes why into warning. */
	bool (*in_domain)(const validate_params *params, char *warning, size_t length);
	/* Runs the kernel once, counting through region. */
	int (*run)(const validate_params *params, validate_region *region, validate_run_info *info,
	           plumb_status *status);
	/* Emits the exact reference stream of one run. */
	int (*emit)(const validate_params *params, validate_sink *sink, plumb_status *status);
	/* Loop trips the model expects (validate_check_trips counts them). */
	uint64_t (*expected_iterations)(const validate_params *params);
} validate_benchmark;

/* Every benchmark, in suite order; *count receives how many. */
const validate_benchmark *const *validate_benchmarks(size_t *count);
const validate_benchmark *validate_benchmark_find(const char *name);
/* Parameters for one size of a benchmark, with defaults filled in. */
void validate_params_init(validate_params *params, const validate_benchmark *benchmark,
                          const validate_machine *machine, uint64_t size);

/* Suite sizes: powers of ten from 1 to max (inclusive) plus, for capacity
 * suites, 2000..10000 in steps of 1000.  Returns the count (<= capacity). */
size_t validate_suite_sizes(const validate_benchmark *benchmark, uint64_t max, uint64_t *sizes,
                            size_t capacity);

/* The configuration benchmark of seed 000 §3.2: the byte padding that makes
 * the first reference start a page, for an array base at base_offset. */
uint64_t validate_padding_aligned(uint64_t base_offset, size_t page_size);
bool validate_padding_is_aligned(uint64_t base_offset, uint64_t pad, size_t page_size);

/* The sweep itself: runs the padding benchmark (pairs pairs, counted as
 * minor faults through perf_event, one fresh process per pad) for every
 * pad 0, 4, ... page-4 with the array at base_offset, and reports the pad
 * with the fewest faults -- the start index the thesis searched for. */
typedef struct validate_padding_point {
	uint64_t pad;
	double faults;       /* measured */
	double predicted;    /* pairs if the pad aligns, else 2 * pairs */
} validate_padding_point;

int validate_padding_search(const validate_machine *machine, uint64_t base_offset, uint64_t pairs,
                            validate_padding_point *points, size_t capacity, size_t *count,
                            uint64_t *found_pad, plumb_status *status);

/* The sweep's report: the meta (page size, base offset, pairs), the table
 * padding_found (the pad with the fewest faults, its start index, the
 * model's pad and whether they agree), the table padding_sweep (faults and
 * prediction per pad) and a note counting the pads that differ from the
 * model.  every_pad false leaves out the rows inside a plateau that agrees
 * with the model (what a terminal shows); true keeps every pad. */
void validate_padding_report(output_report *report, size_t page_size, uint64_t base_offset, uint64_t pairs,
                             const validate_padding_point *points, size_t count, uint64_t found, bool every_pad);
/* `plumb validate --find-padding`: detects the machine, runs the sweep and
 * returns its report in *report (the caller frees it). */
int validate_find_padding(uint64_t base_offset, uint64_t pairs, bool every_pad, output_report **report,
                          plumb_status *status);

/* ---- The iteration check: the trips a kernel's loop really made -------- */

typedef enum validate_trip_state {
	VALIDATE_TRIPS_OK,            /* counted == expected */
	VALIDATE_TRIPS_MISMATCH,      /* counted != expected: the model does not describe the run */
	VALIDATE_TRIPS_UNSUPPORTED,   /* cannot be counted here (reason) */
	VALIDATE_TRIPS_NOT_CHECKED    /* not attempted (reason: e.g. too many trips) */
} validate_trip_state;

const char *validate_trip_state_name(validate_trip_state state);

typedef struct validate_trip_check {
	const validate_benchmark *benchmark;
	uint64_t size;
	validate_trip_state state;
	uint64_t expected;            /* the model's trips */
	uint64_t counted;             /* counted at run time (OK, MISMATCH) */
	char reason[PLUMB_MESSAGE_MAX];
} validate_trip_check;

/* Each trip traps into the kernel (about 14 us under KVM, 1-2 us on bare
 * metal): by default, runs whose model expects more trips are not checked
 * (1.4 s per case at most under KVM; validate_options.check_trips_max). */
#define VALIDATE_TRIP_CHECK_MAX 100000ull
#define VALIDATE_TRIP_TRIES 3

/* Runs the benchmark once in a fresh child process with execute
 * breakpoints (perf_event_open, PERF_TYPE_BREAKPOINT: no PMU needed) on the
 * instructions its kernel names (validate_trip_points), counting only
 * between the region's begin and end, and compares the trips with
 * expected_iterations.  A model expecting more than max_trips is
 * NOT_CHECKED (0: nothing is checked).  Returns 0 with out filled in every state; -1 when
 * the run itself failed (status says why).  A run ended by SIGTRAP (a
 * breakpoint trap the kernel did not claim) is tried again, up to
 * VALIDATE_TRIP_TRIES runs in all. */
int validate_check_trips(const validate_benchmark *benchmark, const validate_params *params,
                         uint64_t max_trips, validate_trip_check *out, plumb_status *status);

/* ---- Statistics and classification -------------------------------------- */

typedef enum validate_class {
	VALIDATE_CLASS_EXACT,          /* every case equals the prediction */
	VALIDATE_CLASS_ACCURATE,       /* every case within accurate_tolerance */
	VALIDATE_CLASS_BIAS,           /* a != 0, b ~ 1: overhead that fades with size */
	VALIDATE_CLASS_MULTIPLICATIVE, /* b != 1 */
	VALIDATE_CLASS_RANDOM,         /* high spread in some cases only */
	VALIDATE_CLASS_UNKNOWN         /* no fit */
} validate_class;

const char *validate_class_name(validate_class c);

/* The thresholds, explicit so a reader can argue with them (docs/validation.md). */
typedef struct validate_thresholds {
	double accurate_tolerance;     /* |%diff| for "accurate" in every case: 0.01 */
	double slope_tolerance;        /* |b - 1| above this is multiplicative: 0.05 */
	double bias_min_events;        /* |a| below this is no bias: 0.5 events */
	double random_cv;              /* case CV above this is a high spread: 0.10 */
	double random_min_stddev;      /* ... and stddev above this many events: 1.0 */
	double min_r2;                 /* below this the fit fails (unknown): 0.90 */
	double reliable_tolerance;     /* reliable granularity: |%diff| <= 0.05 */
	size_t min_cases;              /* fewer in-domain cases: unknown: 3 */
} validate_thresholds;

void validate_thresholds_default(validate_thresholds *t);
/* Sets one threshold from "NAME=VALUE", NAME one of accurate, slope,
 * random-cv, reliable (percent, as the tables print them), bias,
 * random-stddev (events), min-r2, min-cases.  An unknown NAME fails with
 * ENOENT, a bad VALUE with "NAME: why", a text without '=' with EINVAL. */
int validate_threshold_assign(validate_thresholds *t, const char *assignment, plumb_status *status);

/* One test case of one source: every raw value and its summary. */
typedef struct validate_case {
	uint64_t size;
	double predicted;
	bool in_domain;
	size_t runs;
	double *values;                /* runs raw values (owned by whoever filled it) */
	double mean, stddev, min, max; /* stddev: sample (n-1), 0 for one run */
	double percent_difference;     /* (mean - predicted) / predicted, signed, as a fraction */
} validate_case;

/* Fills mean/stddev/min/max/percent_difference from values. */
void validate_case_summarize(validate_case *c);

typedef struct validate_verdict {
	validate_class cls;
	double a, b, r2;               /* reported = a + b * predicted; NaN if no fit */
	double reliable_from;          /* smallest predicted count within reliable_tolerance
	                                  from there up; NaN if none */
	size_t cases_used;             /* in-domain cases with data */
	size_t noisy_cases;
	double max_abs_difference;     /* over in-domain cases */
	char explanation[PLUMB_MESSAGE_MAX];
} validate_verdict;

/* Classifies a suite (cases sorted or not).  Out-of-domain cases are kept
 * in the data but excluded from the fit and the class. */
void validate_classify(const validate_case *cases, size_t count, const validate_thresholds *t,
                       validate_verdict *out);

/* ---- Sources and the runner ---------------------------------------------- */

typedef enum validate_source {
	VALIDATE_SOURCE_PERF,
	VALIDATE_SOURCE_PAPI,
	VALIDATE_SOURCE_SIMULATOR,
	VALIDATE_SOURCE_INSTRUMENTED,
	VALIDATE_SOURCE_SYNTHETIC,        /* injected errors (below); never part of "all" */
	VALIDATE_SOURCE_COUNT
} validate_source;

/* ---- The synthetic source: counts with an injected error -------------------
 *
 * On a machine without a PMU no hardware source ever shows the classifier a
 * bias, a slope or a spread.  The synthetic source makes R runs per case
 * from the prediction with one kind of error injected, deterministically
 * from a seed (the same seed, benchmark, event and size give the same
 * values), so the classification can be checked against what was put in:
 *   exact           the prediction itself, no noise (the control);
 *   bias            + a constant overhead of magnitude events per run
 *                   (default: a quarter of the smallest prediction of the
 *                   suite, at least 3), so the error fades with size;
 *   multiplicative  x magnitude (default 1.25);
 *   random          every other run scaled by 1 +- (magnitude .. 2 x
 *                   magnitude), signs alternating (default magnitude 0.3):
 *                   a large spread part of the time, mean kept;
 *   unknown         a level unrelated to the size: magnitude events
 *                   (default: the median prediction of the suite).
 * Every kind but exact adds counting noise, a normal deviate of standard
 * deviation sqrt(value)/2 (less spread than a Poisson count), and values
 * are whole counts, never negative. */
typedef enum validate_synthetic_kind {
	VALIDATE_SYNTHETIC_EXACT,
	VALIDATE_SYNTHETIC_BIAS,
	VALIDATE_SYNTHETIC_MULTIPLICATIVE,
	VALIDATE_SYNTHETIC_RANDOM,
	VALIDATE_SYNTHETIC_UNKNOWN
} validate_synthetic_kind;

typedef struct validate_synthetic {
	validate_synthetic_kind kind;
	double magnitude;                 /* NaN: the kind's default */
	uint64_t seed;
} validate_synthetic;

const char *validate_synthetic_kind_name(validate_synthetic_kind kind);
/* "KIND" or "KIND=MAGNITUDE" (the text after "synthetic:"); seed 1. */
int validate_synthetic_parse(const char *text, validate_synthetic *out, plumb_status *status);
/* The class a correct classifier must give this injection. */
validate_class validate_synthetic_expected_class(validate_synthetic_kind kind);
/* Fills runs values for each of count cases (their size, predicted and
 * in_domain set; values allocated for runs), setting each case's runs.
 * stream tells suites apart (the runner mixes in benchmark and event).
 * Writes the injection in words into detail. */
void validate_synthetic_fill(const validate_synthetic *synthetic, uint64_t stream, validate_case *cases,
                             size_t count, size_t runs, char *detail, size_t detail_length);

const char *validate_source_name(validate_source s);

/* Results of one (benchmark, event, source) suite. */
typedef struct validate_series {
	const validate_benchmark *benchmark;
	int event_index;
	validate_source source;
	bool supported;
	bool failed;                      /* supported, but a run failed: reason says how */
	char reason[PLUMB_MESSAGE_MAX];   /* why unsupported or failed */
	char detail[64];                  /* e.g. simulator preset, backend event name */
	size_t multiplexed_runs;          /* runs whose count was scaled by enabled/running */
	size_t case_count;
	validate_case *cases;
	validate_verdict verdict;
	double calibration_bias;          /* empty-region mean for this event; NaN if unknown */
} validate_series;

typedef struct validate_options {
	const char *const *selectors;     /* benchmark or event names; NULL or "all" = all */
	size_t selector_count;
	bool sources[VALIDATE_SOURCE_COUNT];
	size_t runs;                      /* R, default 100 */
	const uint64_t *sizes;            /* NULL = each benchmark's default suite */
	size_t size_count;
	uint64_t max_size;                /* cap of the default suites; 0 = per-benchmark */
	const char *sim_preset;           /* NULL = "host" */
	const char *const *sim_settings;  /* "key=value" simulator settings applied after the preset */
	size_t sim_setting_count;
	int counted_cpu;                  /* CPU of the counted thread; -1 = the first allowed.
	                                     The thesis ran each case once per processor (P0, P1). */
	const char *valgrind;             /* program name/path; NULL = "valgrind" */
	const char *self_path;            /* plumb binary for instrumented runs; NULL = /proc/self/exe */
	validate_synthetic synthetic;     /* the injection when sources[VALIDATE_SOURCE_SYNTHETIC] */
	validate_thresholds thresholds;
	uint64_t check_trips_max;         /* iteration check up to this many trips (default
	                                     VALIDATE_TRIP_CHECK_MAX; 0 = no check) */
	bool progress;
} validate_options;

void validate_options_default(validate_options *o);
/* "preset NAME" and the simulator settings after it, e.g. "preset host,
 * prefetch=stream" (cut to length with "..."). */
void validate_sim_detail(const validate_options *o, char *text, size_t length);

typedef struct validate_results {
	validate_machine machine;
	size_t series_count;
	validate_series *series;
	double seconds;                   /* wall time */
	size_t total_runs;                /* process runs (forks) */
	validate_trip_check *trip_checks; /* one per (benchmark, size) whose kernel ran counted */
	size_t trip_check_count;
	char notes[32][PLUMB_MESSAGE_MAX];
	size_t note_count;                /* notes kept (at most 32) */
	size_t notes_dropped;             /* further notes not kept */
} validate_results;

int validate_run(const validate_options *options, validate_results *out, plumb_status *status);

/* The iteration checks of a run, tallied: how many cases ended in each
 * state and the first reason given for it (NULL when none). */
typedef struct validate_trip_tally {
	size_t total;
	size_t count[VALIDATE_TRIPS_NOT_CHECKED + 1];
	const char *first_reason[VALIDATE_TRIPS_NOT_CHECKED + 1];
} validate_trip_tally;

void validate_trip_tally_of(const validate_results *results, validate_trip_tally *out);
void validate_results_free(validate_results *results);

/* One native run of a benchmark in a fresh child process; values[s][e]
 * gets each event's count for the perf (0) and PAPI (1) sources, NaN when
 * it was not counted; states (may be NULL) the counter_state of each (a
 * multiplexed value is scaled and says so there).  Exposed for tests. */
int validate_run_once(const validate_benchmark *benchmark, const validate_params *params,
                      const bool sources[2], double values[2][VALIDATE_MAX_EVENTS],
                      int states[2][VALIDATE_MAX_EVENTS], validate_run_info *info, plumb_status *status);

/* Runs a kernel in this process without counters (for instrumented runs
 * under Valgrind, and tests).  It checks no trips: under Valgrind the
 * kernel runs as translated code, never at the addresses a breakpoint
 * watches, and cachegrind's own counts are exact there. */
int validate_run_plain(const validate_benchmark *benchmark, const validate_params *params,
                       validate_run_info *info, plumb_status *status);
/* The same with the region marked for plumbgrind (PLUMB_VG_REGION_BEGIN/END
 * "plumb-validate" around exactly the counted code): what `plumb validate
 * --exec` runs under Valgrind for the instrumented source and the emitter
 * check (docs/validation.md). */
int validate_run_marked(const validate_benchmark *benchmark, const validate_params *params,
                        validate_run_info *info, plumb_status *status);

/* What `plumb validate --exec NAME` runs under Valgrind: one kernel of
 * this machine (validate_machine_detect), marked, with its lines made
 * uncached by an eviction sweep (Valgrind's cache models ignore clflush). */
typedef struct validate_exec_request {
	uint64_t size;                /* the suite parameter (default 1) */
	unsigned inner_trips;         /* branch benchmarks (default 10) */
	bool have_pad, have_base_offset;   /* else the benchmark's own */
	uint64_t pad, base_offset;
} validate_exec_request;

void validate_exec_request_default(validate_exec_request *request);
int validate_exec(const validate_benchmark *benchmark, const validate_exec_request *request, plumb_status *status);


/* ---- Recording verdicts (docs/validation.md, "Recording verdicts") ------ */

/* A verdict is recorded only when it rests on enough data: at least this
 * many in-domain cases (or thresholds->min_cases if larger) with at least
 * this many runs each.  Fewer cases cannot separate a bias from a slope. */
#define VALIDATE_RECORD_MIN_CASES 3
#define VALIDATE_RECORD_MIN_RUNS 3

/* Decides what a series proves about its (event, name) mapping on this CPU.
 * Returns true with *verdict COUNTER_VERIFIED (class exact or accurate) or
 * COUNTER_CHECKED (bias, multiplicative, random, or unknown from enough
 * cases: checked, not trusted).  Returns false, with why, for everything
 * that proves nothing: simulator and instrumented sources (they do not read
 * a counter), unsupported or failed series, companion events (no
 * prediction), too few cases or runs. */
bool validate_record_rule(const validate_series *series, const validate_thresholds *thresholds,
                          counter_verdict *verdict, char *why, size_t length);
/* The record for a series the rule admitted: event, CPU, the name it was
 * opened with, its backend and encoding, class, date and evidence. */
void validate_record_fill(const validate_series *series, counter_verdict verdict, const char *cpu_identity,
                          time_t when, counter_verification *record);
/* Appends a record for every series the rule admits to path (through
 * counter_verification_append); *recorded gets how many.  Stops at the
 * first write error. */
int validate_record_results(const validate_results *results, const validate_thresholds *thresholds,
                            const char *path, const char *cpu_identity, time_t when, size_t *recorded,
                            plumb_status *status);

/* ---- Output --------------------------------------------------------------- */

/* The verdict table ("Can I trust my counters?"): event, source, class, a,
 * b, R^2, reliable from, status.  Added to report; reusable by the main report. */
output_table *validate_verdict_table(output_report *report, const validate_results *results);
/* Per case, predicted and every source's mean in one row ("side by side"). */
output_table *validate_side_by_side_table(output_report *report, const validate_results *results);
/* The iteration check of every case: benchmark, size, expected and
 * counted trips, state, reason. */
output_table *validate_trips_table(output_report *report, const validate_results *results);
/* Per-case summary table (one row per source) and every raw run. */
output_table *validate_case_table(output_report *report, const validate_results *results);
output_table *validate_raw_table(output_report *report, const validate_results *results);

/* Writes directory/validate-plot.dat and .gp and runs gnuplot to
 * directory/validate.png (format "png") or .svg.  Returns -1 with a clear
 * message when gnuplot is missing. */
int validate_plot(const validate_results *results, const char *directory, const char *format,
                  const char *gnuplot, char *written, size_t written_length, plumb_status *status);

/* ---- The report of a run, as `plumb validate` gives it ----------------- */

/* The benchmarks, their events (companions marked), threads, largest
 * default size, title and what each defeats: `plumb validate --list`. */
output_table *validate_benchmarks_table(output_report *report);
/* What the counts depend on besides the benchmark: kernel, glibc, compiler,
 * CPU model, THP, the machine's page and cache sizes, the CPUs, runs,
 * simulator and the classification thresholds in words. */
void validate_report_meta(output_report *report, const validate_results *results, const validate_options *o);
/* A new report ("validate") with the meta and the verdict table; cases
 * adds the side-by-side and iteration-check tables, complete adds those,
 * the per-case summary and every raw run (what CSV and JSON carry). */
output_report *validate_report(const validate_results *results, const validate_options *o, bool cases,
                               bool complete);
/* Records the perf/PAPI verdicts in path (NULL: $PLUMB_VERIFICATION,
 * counter_verification_default_path; neither: nothing is written and a
 * note says how to keep them) for this CPU and notes in report how
 * many, or why none.  -1 when they could not be recorded (status says why;
 * the report is unchanged). */
int validate_report_record(output_report *report, const validate_results *results,
                           const validate_thresholds *thresholds, const char *path, plumb_status *status);
/* The run's notes: the iteration checks tallied, the runner's notes, and
 * the process runs and seconds. */
void validate_report_notes(output_report *report, const validate_results *results);
/* Makes the output folder before a run (so a folder that cannot be made
 * fails before minutes of runs); *made says whether it is new (to remove
 * it if the run fails).  An existing folder is fine, a file is not. */
int validate_make_folder(const char *directory, bool *made, plumb_status *status);
/* Writes directory/validate.json and validate.csv (every table and raw run)
 * and the plot (validate_plot); -1 only when the data files fail.  image
 * gets the plot's path, or "" with plot_status saying why there is none. */
int validate_write_folder(const char *directory, const validate_results *results, const validate_options *o,
                          const char *plot_format, char *image, size_t image_length, plumb_status *plot_status,
                          plumb_status *status);

#endif
