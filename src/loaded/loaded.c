/* Loaded latency: orchestration of the latency thread and the generators
 * (protocol in plumb/loaded.h).  The chase is the latency developer's
 * (plumb/chase.h): a random cyclic chain over chase_bytes, so neither the
 * prefetchers nor out-of-order overlap hide a load's latency. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "core/arena.h"
#include "chase/chase.h"
#include "core/cpu.h"
#include "latency/latency.h"
#include "loaded/loaded.h"
#include "core/stats.h"

/* Lines a generator streams between two looks at the flag: small enough
 * that the counting boundary error is negligible next to a sample. */
#define CHECK_LINES 16

typedef struct generator {
	_Alignas(128) _Atomic uint64_t counted_bytes;  /* only while the flag is up */
	_Alignas(128) _Atomic uint64_t checks;         /* flag checks done, for the stop handshake */
	_Atomic int state;                             /* 0 starting, 1 ready, 2 failed */
	int cpu;
	arena memory;
	size_t lines, position;
	uint64_t sink;
	char error[PLUMB_MESSAGE_MAX];
	pthread_t thread;
	bool started;
	struct loaded_shared *shared;
} generator;

typedef struct loaded_shared {
	_Alignas(128) _Atomic uint64_t point;      /* incremented to start a point */
	_Alignas(128) _Atomic int counting;        /* the flag: up while the latency thread measures */
	_Alignas(128) _Atomic int stop_point;      /* generators return to waiting */
	_Alignas(128) _Atomic int running;         /* generators streaming in this point (the barrier) */
	_Atomic int exit;
	unsigned delay;
	loaded_pattern pattern;
	size_t line_bytes;
} loaded_shared;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void backoff(unsigned spins, uint64_t waited_ns)
{
	if (spins < 2048)
		cpu_relax();
	else if (waited_ns < 2000000)
		sched_yield();
	else
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
}

static void *generator_main(void *argument)
{
	generator *g = argument;
	loaded_shared *shared = g->shared;
	plumb_status status;
	if (cpu_pin_self(g->cpu, &status) != 0) {
		snprintf(g->error, sizeof g->error, "%s", status.message);
		atomic_store_explicit(&g->state, 2, memory_order_release);
		return NULL;
	}
	atomic_store_explicit(&g->state, 1, memory_order_release);
	uint64_t seen = 0;
	for (;;) {
		uint64_t start = 0;
		for (unsigned spins = 0; atomic_load_explicit(&shared->point, memory_order_acquire) == seen; spins++) {
			if (atomic_load_explicit(&shared->exit, memory_order_relaxed))
				return NULL;
			uint64_t t = spins >= 2048 ? now_ns() : 0;
			if (t && !start)
				start = t;
			backoff(spins, t ? t - start : 0);
		}
		seen = atomic_load_explicit(&shared->point, memory_order_acquire);
		unsigned delay = shared->delay;
		loaded_pattern pattern = shared->pattern;
		atomic_fetch_add_explicit(&shared->running, 1, memory_order_acq_rel);
		while (!atomic_load_explicit(&shared->stop_point, memory_order_acquire)) {
			g->sink += loaded_generate(pattern, g->memory.base, g->lines, shared->line_bytes, &g->position,
			                           CHECK_LINES, delay);
			/* The seed's counter: add what was moved since the last check
			 * only if the flag is up now. */
			if (atomic_load_explicit(&shared->counting, memory_order_acquire))
				atomic_fetch_add_explicit(&g->counted_bytes, CHECK_LINES * shared->line_bytes,
				                          memory_order_relaxed);
			atomic_fetch_add_explicit(&g->checks, 1, memory_order_release);
		}
		atomic_fetch_sub_explicit(&shared->running, 1, memory_order_acq_rel);
	}
}

void loaded_config_default(loaded_config *config)
{
	static const unsigned delays[] = { 4096, 1024, 256, 64, 16, 4, 0 };
	*config = (loaded_config){ .chase_bytes = 64u << 20, .generator_bytes = 64u << 20, .line_bytes = 64,
	                           .pattern = LOADED_READ, .delays = delays,
	                           .delay_count = sizeof delays / sizeof delays[0], .loads_per_sample = 100000,
	                           .chunk_loads = 2048,
	                           .samples = 5, .seed = 0x10ad, .timeout_ns = 5000000000ull };
}

typedef struct loaded_state {
	const loaded_config *config;
	const timer_calibration *timer;
	loaded_shared *shared;
	generator *generators;
	int generator_count;
	chase_chain chain;
	void *position;
	double *chunk_ns;           /* per-load latency of each chunk of a point */
	size_t chunk_capacity;
} loaded_state;

/* Chunks per sample: chunk_loads each, but never more than this many (a
 * huge --loads gets longer chunks rather than a huge array). */
#define MAX_CHUNKS_PER_SAMPLE 256

size_t loaded_chunk_loads(const loaded_config *c)
{
	size_t chunk = c->chunk_loads ? c->chunk_loads : 2048;
	size_t floor = (c->loads_per_sample + MAX_CHUNKS_PER_SAMPLE - 1) / MAX_CHUNKS_PER_SAMPLE;
	if (chunk < floor)
		chunk = floor;
	if (chunk > c->loads_per_sample)
		chunk = c->loads_per_sample;
	return chunk;
}

/* Context switches of the calling thread so far (voluntary and not): a
 * change across a chunk means the thread was off its CPU for part of it. */
static long thread_switches(void)
{
	struct rusage usage;
	if (getrusage(RUSAGE_THREAD, &usage) != 0)
		return -1;
	return usage.ru_nvcsw + usage.ru_nivcsw;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Waits until every generator has looked at the flag once more, so bytes
 * moved while it was up have all been counted. */
static int settle_counters(loaded_state *s, int active, const uint64_t *checks_at_stop, plumb_status *status)
{
	for (int i = 0; i < active; i++) {
		uint64_t start = now_ns();
		for (unsigned spins = 0;
		     atomic_load_explicit(&s->generators[i].checks, memory_order_acquire) <= checks_at_stop[i]; spins++) {
			uint64_t waited = now_ns() - start;
			if (waited > s->config->timeout_ns)
				return plumb_fail(status, ETIMEDOUT, "loaded: the generator on CPU %d stopped responding "
				                  "(machine too busy?)", s->generators[i].cpu);
			backoff(spins, waited);
		}
	}
	return 0;
}

static int run_point(loaded_state *s, bool idle, unsigned delay, loaded_point *out, plumb_status *status)
{
	const loaded_config *c = s->config;
	loaded_shared *shared = s->shared;
	int active = idle ? 0 : s->generator_count;
	*out = (loaded_point){ .idle = idle, .delay = delay, .generators = active };
	if (active) {
		shared->delay = delay;
		atomic_store(&shared->stop_point, 0);
		atomic_fetch_add_explicit(&shared->point, 1, memory_order_release);
		/* The barrier: every generator streaming before anything is timed. */
		uint64_t start = now_ns();
		for (unsigned spins = 0; atomic_load_explicit(&shared->running, memory_order_acquire) < active; spins++) {
			uint64_t waited = now_ns() - start;
			if (waited > c->timeout_ns) {
				atomic_store(&shared->stop_point, 1);
				return plumb_fail(status, ETIMEDOUT, "loaded: generators did not start within %.0f ms",
				                  c->timeout_ns / 1e6);
			}
			backoff(spins, waited);
		}
	}
	/* Warm-up (the seed's start-up routine): a quarter sample of chasing
	 * while the generators reach a steady state. */
	s->position = chase_run(s->position, c->loads_per_sample / 4 + 1);
	uint64_t bytes_before = 0, bytes_after = 0;
	double seconds = 0;
	uint64_t checks_at_stop[LOADED_MAX_GENERATORS];
	int rc = 0;
	size_t chunk = loaded_chunk_loads(c), kept = 0, preempted = 0;
	/* Preempted chunks go to the top of the array, kept ones to the
	 * bottom, so all of them are there if every chunk was preempted. */
	size_t top = s->chunk_capacity;
	for (int sample = 0; sample < c->samples && rc == 0; sample++) {
		for (int i = 0; i < active; i++)
			bytes_before += atomic_load_explicit(&s->generators[i].counted_bytes, memory_order_acquire);
		long switches = thread_switches();
		atomic_store_explicit(&shared->counting, 1, memory_order_release);
		uint64_t t0 = now_ns();
		for (size_t done = 0; done < c->loads_per_sample;) {
			size_t n = c->loads_per_sample - done < chunk ? c->loads_per_sample - done : chunk;
			double ticks = (double)chase_time_ticks(s->timer, &s->position, n) - s->timer->overhead_ticks;
			double ns = timer_ticks_to_ns(s->timer, ticks > 0 ? ticks : 0) / (double)n;
			long now = thread_switches();
			if (now != switches && kept + preempted < s->chunk_capacity) {
				s->chunk_ns[--top] = ns;
				preempted++;
			} else if (kept + preempted < s->chunk_capacity) {
				s->chunk_ns[kept++] = ns;
			}
			switches = now;
			done += n;
		}
		uint64_t t1 = now_ns();
		atomic_store_explicit(&shared->counting, 0, memory_order_release);
		for (int i = 0; i < active; i++)
			checks_at_stop[i] = atomic_load_explicit(&s->generators[i].checks, memory_order_acquire);
		rc = settle_counters(s, active, checks_at_stop, status);
		for (int i = 0; i < active; i++)
			bytes_after += atomic_load_explicit(&s->generators[i].counted_bytes, memory_order_acquire);
		seconds += (double)(t1 - t0) * 1e-9;
	}
	if (active) {
		atomic_store_explicit(&shared->stop_point, 1, memory_order_release);
		uint64_t start = now_ns();
		for (unsigned spins = 0; atomic_load_explicit(&shared->running, memory_order_acquire) > 0; spins++) {
			uint64_t waited = now_ns() - start;
			if (waited > c->timeout_ns)
				return plumb_fail(status, ETIMEDOUT, "loaded: generators did not stop within %.0f ms",
				                  c->timeout_ns / 1e6);
			backoff(spins, waited);
		}
	}
	if (rc != 0)
		return -1;
	/* Every chunk preempted (a machine busier than one switch per chunk):
	 * the statistics take them all rather than report nothing. */
	double *values = kept ? s->chunk_ns : s->chunk_ns + top;
	size_t n = kept ? kept : preempted;
	qsort(values, n, sizeof *values, compare_double);
	stats_summary summary;
	stats_summarize(values, n, &summary);
	out->latency_ns = summary.median;
	out->latency_min_ns = summary.min;
	out->latency_p10_ns = values[(size_t)(0.1 * (double)(n - 1))];
	out->chunks = kept + preempted;
	out->chunks_preempted = preempted;
	out->generator_bytes = bytes_after - bytes_before;
	out->measured_seconds = seconds;
	out->generator_mb_s = seconds > 0 ? (double)out->generator_bytes / seconds / 1e6 : NAN;
	out->latency_thread_mb_s = (double)c->line_bytes / summary.median * 1e3;
	out->total_mb_s = out->generator_mb_s + out->latency_thread_mb_s;
	return 0;
}

static int validate(const loaded_config *c, plumb_status *status)
{
	if (c->generators < 0 || c->generators > LOADED_MAX_GENERATORS)
		return plumb_fail(status, EINVAL, "loaded: 0..%d generators", LOADED_MAX_GENERATORS);
	if (c->delay_count > LOADED_MAX_POINTS - 1)
		return plumb_fail(status, EINVAL, "loaded: at most %d delays", LOADED_MAX_POINTS - 1);
	if (c->line_bytes < 64 || c->line_bytes % 8)
		return plumb_fail(status, EINVAL, "loaded: line size must be at least 64 and a multiple of 8");
	if (c->chase_bytes < 64 * c->line_bytes || c->generator_bytes < 64 * c->line_bytes)
		return plumb_fail(status, EINVAL, "loaded: buffers must hold at least 64 lines");
	if (c->samples < 1 || c->samples > 1000 || c->loads_per_sample < 1)
		return plumb_fail(status, EINVAL, "loaded: samples must be 1..1000 and loads per sample positive");
	if (c->loads_per_sample > 1000000000)
		return plumb_fail(status, EINVAL, "loaded: at most 10^9 loads per sample");
	for (int i = 0; i < c->generators; i++)
		if (c->generator_cpus[i] == c->latency_cpu)
			return plumb_fail(status, EINVAL, "loaded: generator CPU %d is the latency thread's CPU",
			                  c->latency_cpu);
	return 0;
}

/* The idle check's reference: lat's own loop on this chain, on this CPU,
 * before any generator thread exists (so none can be running). */
static void measure_reference(const timer_calibration *timer, const chase_chain *chain, arena *memory,
                              loaded_reference *reference)
{
	*reference = (loaded_reference){ 0 };
	plumb_status status;
	char pages[64] = "unknown";
	if (arena_inspect(memory, &status) == 0)
		arena_describe(memory, pages, sizeof pages);
	snprintf(reference->pages, sizeof reference->pages, "%s", pages);
	latency_measure_options options;
	latency_measure_defaults(&options);
	latency_result result;
	if (latency_measure_chain(timer, chain, &options, &result, &status) != 0) {
		snprintf(reference->why_not, sizeof reference->why_not, "%s", status.message);
		return;
	}
	reference->measured = true;
	reference->ns = result.ns;
	reference->ns_p10 = result.ns_p10;
}

int loaded_run(const loaded_config *config, const timer_calibration *timer, loaded_point *points, size_t *count,
               loaded_reference *reference, loaded_progress_fn on_progress, void *progress_context,
               plumb_status *status)
{
	*count = 0;
	if (reference)
		*reference = (loaded_reference){ .why_not = "not measured" };
	if (validate(config, status) != 0)
		return -1;
	loaded_state s = { .config = config, .timer = timer, .generator_count = config->generators };
	s.shared = aligned_alloc(128, sizeof *s.shared);
	s.generators = config->generators ? aligned_alloc(128, sizeof(generator) * (size_t)config->generators) : NULL;
	size_t chunk = loaded_chunk_loads(config);
	s.chunk_capacity = (size_t)config->samples * ((config->loads_per_sample + chunk - 1) / chunk);
	s.chunk_ns = malloc(sizeof(double) * s.chunk_capacity);
	arena chase_memory = { 0 };
	cpu_set_t saved;
	bool restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
	int rc = -1;
	if (!s.shared || (config->generators && !s.generators) || !s.chunk_ns) {
		plumb_fail(status, ENOMEM, "loaded: out of memory");
		goto done;
	}
	*s.shared = (loaded_shared){ .pattern = config->pattern, .line_bytes = config->line_bytes };
	if (s.generators)
		memset(s.generators, 0, sizeof(generator) * (size_t)config->generators);
	if (cpu_pin_self(config->latency_cpu, status) != 0)
		goto done;
	/* The chain first, from the pinned thread, so its pages are local. */
	arena_request request = { .size = config->chase_bytes, .pages = ARENA_PAGES_THP, .fault = ARENA_FAULT_PREFAULT,
	                          .alignment = 2u << 20 };
	if (arena_create(&chase_memory, &request, status) != 0)
		goto done;
	chase_layout layout = { .pattern = CHASE_RANDOM, .bytes = config->chase_bytes, .slot_bytes = config->line_bytes,
	                        .seed = config->seed };
	if (chase_build_layout(&s.chain, chase_memory.base, chase_memory.size, &layout, status) != 0)
		goto done;
	s.position = s.chain.start;
	if (reference)
		measure_reference(timer, &s.chain, &chase_memory, reference);
	for (int i = 0; i < config->generators; i++) {
		generator *g = &s.generators[i];
		g->cpu = config->generator_cpus[i];
		g->shared = s.shared;
		arena_request gr = { .size = config->generator_bytes, .pages = ARENA_PAGES_THP,
		                     .fault = ARENA_FAULT_PREFAULT, .alignment = 2u << 20 };
		if (arena_create(&g->memory, &gr, status) != 0)
			goto done;
		g->lines = config->generator_bytes / config->line_bytes;
		int err = pthread_create(&g->thread, NULL, generator_main, g);
		if (err != 0) {
			plumb_fail_errno(status, err, "loaded: cannot start a generator thread");
			goto done;
		}
		g->started = true;
	}
	for (int i = 0; i < config->generators; i++) {
		generator *g = &s.generators[i];
		uint64_t start = now_ns();
		for (unsigned spins = 0; atomic_load_explicit(&g->state, memory_order_acquire) == 0; spins++) {
			uint64_t waited = now_ns() - start;
			if (waited > config->timeout_ns) {
				plumb_fail(status, ETIMEDOUT, "loaded: the generator for CPU %d did not start", g->cpu);
				goto done;
			}
			backoff(spins, waited);
		}
		if (atomic_load(&g->state) == 2) {
			plumb_fail(status, EINVAL, "loaded: %s", g->error);
			goto done;
		}
	}
	size_t total = 1 + (config->generators ? config->delay_count : 0);
	for (size_t p = 0; p < total; p++) {
		bool idle = p == 0;
		if (run_point(&s, idle, idle ? 0 : config->delays[p - 1], &points[p], status) != 0)
			goto done;
		*count = p + 1;
		if (on_progress)
			on_progress(progress_context, p + 1, total);
	}
	rc = 0;
done:
	if (s.shared)
		atomic_store(&s.shared->exit, 1);
	for (int i = 0; i < config->generators && s.generators; i++) {
		if (s.generators[i].started)
			pthread_join(s.generators[i].thread, NULL);
		arena_destroy(&s.generators[i].memory);
	}
	arena_destroy(&chase_memory);
	if (restore)
		pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
	free(s.generators);
	free(s.shared);
	free(s.chunk_ns);
	return rc;
}
