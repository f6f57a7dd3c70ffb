/* The native sources (perf_event and PAPI through the counter layer), the
 * simulator and the instrumented (Valgrind) source, as the runner uses them. */
#ifndef PLUMB_VALIDATE_NATIVE_H
#define PLUMB_VALIDATE_NATIVE_H

#include "sim/sim.h"
#include "validate/validate.h"

/* Source 0 = perf_event, 1 = PAPI. */
typedef struct validate_native_support {
	bool supported[2][VALIDATE_MAX_EVENTS];
	char reason[2][VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
	double bias[2][VALIDATE_MAX_EVENTS];   /* empty-region mean; NaN if unknown */
} validate_native_support;

/* The name an event is opened with on a backend (0 perf, 1 PAPI). */
const char *validate_native_event_name(const validate_event *event, int source);
/* Probes in a child process (PAPI initialises once per process). */
int validate_native_probe(const validate_benchmark *benchmark, validate_native_support *out,
                          plumb_status *status);

/* Simulates one case: values[e] for each event the simulator models (NaN
 * otherwise, with reasons[e]), with the preset (NULL = host) and then the
 * "key=value" settings (e.g. prefetch=stream, to see what a prefetcher does
 * to a prediction).  Returns -1 when the simulator is missing or fails
 * (status says why). */
int validate_simulate(const validate_benchmark *benchmark, const validate_params *params,
                      const char *preset, const char *const *settings, size_t setting_count,
                      double values[VALIDATE_MAX_EVENTS],
                      char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX], plumb_status *status);
/* True when this plumb was built with the simulator. */
bool validate_simulator_available(char *reason, size_t length);

/* Exact instrumented counts of one case under Valgrind's cachegrind. */
int validate_instrumented_counts(const validate_benchmark *benchmark, const validate_params *params,
                                 const char *valgrind, const char *self_path,
                                 double values[VALIDATE_MAX_EVENTS], plumb_status *status);
/* Whether valgrind can run here (reason when not). */
bool validate_valgrind_available(const char *valgrind, const char *self_path, char *reason, size_t length);

/* The simulator configuration validate_simulate uses (preset, settings,
 * one core per thread, a DTLB when the preset has none), and an event's
 * count from a core's (or a region's) statistics. */
int validate_sim_configure(const validate_benchmark *benchmark, const validate_params *params, const char *preset,
                           const char *const *settings, size_t setting_count, sim_config *out, plumb_status *status);
uint64_t validate_sim_value(const sim_core_stats *stats, validate_sim_event event, bool *known);

/* ---- plumbgrind (source_plumbgrind.c) ---- */

/* Whether valgrind and plumbgrind can be run, and this plumb marks regions. */
bool validate_plumbgrind_available(char *reason, size_t length);

typedef enum validate_emitter_comparison {
	VALIDATE_EMITTER_NOT_COMPARED,
	VALIDATE_EMITTER_AGREES,
	VALIDATE_EMITTER_DIFFERS
} validate_emitter_comparison;

typedef struct validate_traced {
	/* Exact counts of the region, attributed to the kernel function
	 * (instructions, reads, writes); the simulator's misses of the real
	 * region for the cache-miss events; NaN with reasons[e] otherwise. */
	double instrumented[VALIDATE_MAX_EVENTS];
	char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
	/* Each event's simulator count on the real trace's region, and on the
	 * emitter's stream (the simulator column); NaN where not modelled. */
	double simulated[VALIDATE_MAX_EVENTS], emitted[VALIDATE_MAX_EVENTS];
	validate_emitter_comparison comparison;
	uint64_t compared;
	char comparison_text[PLUMB_MESSAGE_MAX];
} validate_traced;

/* One case under plumbgrind: exact counts, simulated counts of the real
 * kernel, and the emitter check.  Fails when valgrind or plumbgrind is
 * missing (say why), or the run fails. */
int validate_plumbgrind_trace(const validate_benchmark *benchmark, const validate_params *params,
                              const char *self_path, const char *preset, const char *const *settings,
                              size_t setting_count, validate_traced *out, plumb_status *status);

#endif
