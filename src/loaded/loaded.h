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
#include "core/status.h"
#include "core/timer.h"

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
	size_t loads_per_sample;    /* chase loads per sample, one flag-up window (default 100000) */
	size_t chunk_loads;         /* ... timed in chunks of this many loads (default 2048, about
	                               300 us at DRAM: see loaded_run) */
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
/* Puts the quietest of cpus[0..count) first (loaded_cpu_interference over
 * window_ns each; the latency thread goes there, the generators on the
 * others) and says how it was chosen in choice.  One CPU: nothing to
 * measure.  At most LOADED_MAX_PLACEMENT_CPUS are measured. */
#define LOADED_MAX_PLACEMENT_CPUS 1024
void loaded_place_latency(int *cpus, int count, uint64_t window_ns, char *choice, size_t length);

void loaded_config_default(loaded_config *config);
/* The chunk length a run really uses: chunk_loads, raised so that a sample
 * has at most 256 chunks, and at most loads_per_sample. */
size_t loaded_chunk_loads(const loaded_config *config);

typedef struct loaded_point {
	bool idle;                      /* no generators running */
	unsigned delay;
	int generators;
	double latency_ns;              /* median over the undisturbed chunks, per load */
	double latency_min_ns;
	double latency_p10_ns;          /* 10th percentile of the undisturbed chunks */
	size_t chunks;                  /* chunks timed */
	size_t chunks_preempted;        /* ... during which the latency thread was switched out
	                                   (left out of the statistics unless all were) */
	double generator_mb_s;          /* counted generator bytes / timed interval (10^6 B/s) */
	double latency_thread_mb_s;     /* line_bytes / latency */
	double total_mb_s;
	uint64_t generator_bytes;       /* counted while the flag was up */
	double measured_seconds;        /* sum of the timed intervals */
} loaded_point;

/* The idle check's reference: plumb lat's measuring loop
 * (latency_measure_chain: samples of about 250 us, repeated until the CI
 * is tight, median and 10th percentile) on the latency thread's own chain,
 * on its CPU, before any generator thread exists.  Same buffer, pattern,
 * pages and CPU as the idle point, so the two must agree; when they do not,
 * the idle point was disturbed. */
typedef struct loaded_reference {
	bool measured;
	double ns;                      /* lat's figure: median per load */
	double ns_p10;
	char pages[64];                 /* pages under the chain, as smaps reports them */
	char why_not[PLUMB_MESSAGE_MAX];  /* when !measured */
} loaded_reference;

/* Runs the idle point, then one point per delay (in the given order).
 * points must hold 1 + delay_count entries; *count receives how many were
 * filled.  The caller's thread becomes the latency thread (pinned to
 * latency_cpu; its affinity is restored afterwards).  reference (may be
 * NULL: not measured) receives the idle check's reference.  progress (may
 * be NULL) is called after each point.
 *
 * Each sample (one flag-up window of loads_per_sample loads) is timed in
 * chunks of chunk_loads; a chunk during which the thread was switched out
 * (its context-switch count moved) is left out, and a point reports the
 * median of the rest.  On a busy machine a 15 ms sample timed whole takes
 * in other tasks' time slices: the idle point read 610-880 ns where lat
 * read 145 ns on the same 64 MiB chain. */
typedef void (*loaded_progress_fn)(void *context, size_t done, size_t total);
int loaded_run(const loaded_config *config, const timer_calibration *timer, loaded_point *points, size_t *count,
               loaded_reference *reference, loaded_progress_fn progress, void *progress_context,
               plumb_status *status);

/* ---- Checks on a measured curve (pure arithmetic, tested on synthetic curves) ---- */

/* The idle point against the reference: ratio = idle median / reference
 * median; agrees when within a factor of LOADED_IDLE_AGREEMENT. */
#define LOADED_IDLE_AGREEMENT 1.25
typedef struct loaded_idle_check {
	bool checked;                   /* false: no idle point or no reference */
	bool agrees;
	double ratio;
	double idle_ns, reference_ns;
} loaded_idle_check;
void loaded_check_idle(const loaded_point *points, size_t count, const loaded_reference *reference,
                       loaded_idle_check *out);

/* Can the curve's rise be queueing?  Hristea's closed M/D/1 model (1997;
 * plumb/model.h) gives the latency at generator bandwidth C for a memory
 * system with service time S and unloaded latency L0 (the idle point).
 * The highest load measured bounds S: the resource served that traffic,
 * so its utilisation S (C/line + 1/L) was at most 1 there, and
 * S <= S_max = 1 / max over points of (C/line + 1/L), and S <= L0.  The
 * model's latency grows with S, so model(C; S_max) is the most latency
 * queueing can add at any load these data allow.  A point above that bound
 * by more than the tolerance (LOADED_QUEUEING_TOLERANCE of L0, for the
 * run-to-run spread of a DRAM latency on a shared machine) has a step that
 * queueing cannot make: for example tens of ns at a load of tens of MB/s,
 * then flat, which comes from something sharing the latency thread's core
 * or time slices (an SMT sibling, the host's scheduling) or from traffic
 * the generators did not make (other programs), not from queueing behind
 * the generators' traffic. */
#define LOADED_QUEUEING_TOLERANCE 0.20
typedef struct loaded_queueing_check {
	bool checked;                   /* false: no idle point or no loaded point (why in why_not) */
	const char *why_not;
	bool step_not_queueing;         /* a point exceeds its bound by more than the tolerance */
	double service_bound_ns;        /* S_max */
	size_t worst_index;             /* the point most above its bound (index into points) */
	double worst_excess_ns;         /* its latency minus its bound (may be negative) */
	double worst_bound_ns;          /* its bound */
	double worst_bandwidth_mb_s;    /* its generator bandwidth */
	double worst_rise_ns;           /* its latency minus the idle latency */
	double tolerance_ns;
} loaded_queueing_check;
void loaded_check_queueing(const loaded_point *points, size_t count, double line_bytes, loaded_queueing_check *out);

/* The generator's inner loop, exposed for tests: touches `lines` lines of
 * buffer (line_bytes apart) from *position, wrapping at buffer_lines, with
 * `delay` delay-loop iterations after each access.  Returns a value that
 * depends on every load (keep it).  Deterministic: a write pattern stores
 * exactly `lines` (LOADED_WRITE) or lines/2 (LOADED_MIXED) times. */
uint64_t loaded_generate(loaded_pattern pattern, uint8_t *buffer, size_t buffer_lines, size_t line_bytes,
                         size_t *position, size_t lines, unsigned delay);

/* Adds the loaded table, metadata, the two checks and notes
 * (docs/output-schema.md) for count points of a run; reference may be
 * NULL; cpus_available says why a run without generators had none (one
 * CPU, or none requested). */
#include "core/output.h"
void loaded_report(const loaded_config *config, const timer_calibration *timer, const loaded_point *points,
                   size_t count, const loaded_reference *reference, int cpus_available, output_report *report);

#endif
