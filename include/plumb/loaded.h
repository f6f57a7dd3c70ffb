/* Loaded latency (Intel MLC's "loaded latency"; seed 001 chapter 5): one
 * thread chases a random chain while N-1 generator threads stream through
 * their own buffers with a delay loop between accesses.  The delay sets
 * the injection rate; sweeping it from idle to 0 traces latency against
 * the bandwidth the generators really achieved.
 *
 * Start/stop protocol (seed 001, Fig. 5.1): the generators start first and
 * are released together; the latency thread warms up while they reach a
 * steady state; then it raises a flag, times its chase and lowers the
 * flag.  Generators add the bytes they moved to their counters only while
 * the flag is up (checked every few lines), and keep running until after
 * it is down, so the traffic counted is exactly the traffic that overlapped
 * the measurement. */
#ifndef PLUMB_LOADED_H
#define PLUMB_LOADED_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "plumb/status.h"
#include "plumb/timer.h"

typedef enum loaded_pattern {
	LOADED_READ,    /* one load per line, sequential */
	LOADED_WRITE,   /* one store per line, sequential (RFO plus writeback) */
	LOADED_MIXED    /* alternate lines: load, store */
} loaded_pattern;
const char *loaded_pattern_name(loaded_pattern pattern);
int loaded_pattern_parse(const char *text, loaded_pattern *out);

#define LOADED_MAX_GENERATORS 1023
#define LOADED_MAX_POINTS 64

typedef struct loaded_config {
	int latency_cpu;
	const int *generator_cpus;
	int generators;             /* 0 = only the idle point */
	size_t chase_bytes;         /* latency thread's random chain (default 64 MiB) */
	size_t generator_bytes;     /* each generator's buffer (default 64 MiB) */
	size_t line_bytes;          /* 64 */
	loaded_pattern pattern;
	const unsigned *delays;     /* delay-loop iterations per access, one point each */
	size_t delay_count;
	size_t loads_per_sample;    /* chase loads timed per sample (default 100000) */
	int samples;                /* timed samples per point (default 5) */
	uint64_t seed;
	uint64_t timeout_ns;        /* bound on every wait for a generator */
	const char *latency_cpu_choice; /* how latency_cpu was chosen (meta), or NULL */
} loaded_config;

/* Pinned to cpu (affinity restored afterwards), spins reading the clock
 * for window_ns and reports the fraction of it lost in gaps over 5 us
 * (the thread did not run: other tasks, a hypervisor's steal). */
int loaded_cpu_interference(int cpu, uint64_t window_ns, double *lost_fraction, plumb_status *status);
/* Index of the lowest lost fraction (the quietest CPU); the first on a
 * tie; negative fractions (not measured) are skipped; -1 if none. */
int loaded_quietest(const double *lost_fraction, int n);

void loaded_config_default(loaded_config *config);

typedef struct loaded_point {
	bool idle;                      /* no generators running */
	unsigned delay;
	int generators;
	double latency_ns;              /* median over samples, per load */
	double latency_min_ns;
	double generator_mb_s;          /* counted generator bytes / timed interval (10^6 B/s) */
	double latency_thread_mb_s;     /* line_bytes / latency */
	double total_mb_s;
	uint64_t generator_bytes;       /* counted while the flag was up */
	double measured_seconds;        /* sum of the timed intervals */
} loaded_point;

/* Runs the idle point, then one point per delay (in the given order).
 * points must hold 1 + delay_count entries; *count receives how many were
 * filled.  The caller's thread becomes the latency thread (pinned to
 * latency_cpu; its affinity is restored afterwards).  progress (may be
 * NULL) is called after each point. */
typedef void (*loaded_progress_fn)(void *context, size_t done, size_t total);
int loaded_run(const loaded_config *config, const timer_calibration *timer, loaded_point *points, size_t *count,
               loaded_progress_fn progress, void *progress_context, plumb_status *status);

/* The generator's inner loop, exposed for tests: touches `lines` lines of
 * buffer (line_bytes apart) from *position, wrapping at buffer_lines, with
 * `delay` delay-loop iterations after each access.  Returns a value that
 * depends on every load (keep it).  Deterministic: a write pattern stores
 * exactly `lines` (LOADED_WRITE) or lines/2 (LOADED_MIXED) times. */
uint64_t loaded_generate(loaded_pattern pattern, uint8_t *buffer, size_t buffer_lines, size_t line_bytes,
                         size_t *position, size_t lines, unsigned delay);

/* Adds the loaded table, metadata and notes (docs/output-schema.md) for
 * count points of a run; cpus_available says why a run without generators
 * had none (one CPU, or none requested). */
#include "plumb/output.h"
void loaded_report(const loaded_config *config, const timer_calibration *timer, const loaded_point *points,
                   size_t count, int cpus_available, output_report *report);

#endif
