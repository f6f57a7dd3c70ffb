/* Pinned worker threads for the bandwidth kernels.
 *
 * Each worker pins itself, then maps and first-touches its own buffer, so
 * the pages are local to its CPU and no two workers share a line.  For a
 * sample, the controlling thread releases the workers through a pthread
 * barrier; the workers then meet at a spinning barrier, so they start
 * within a few hundred nanoseconds of each other rather than at the
 * scheduler's whim, and each reads the clock just before and after its
 * passes.  The sample's interval is the common one, from the earliest
 * start to the latest end: aggregate bandwidth is the total bytes over
 * that interval, which never credits a thread for finishing early while
 * another is still running. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bandwidth/bandwidth.h"

/* Arrays are offset by a line or two from each other so that their
 * streams do not alias modulo 4 KiB (which would add false store-to-load
 * dependences on some cores), as STREAM's OFFSET does. */
#define ARRAY_GAP_DOUBLES 8

typedef struct bandwidth_worker {
	bandwidth_team *team;
	pthread_t thread;
	int cpu;
	arena buffer;
	uint64_t start_ticks, end_ticks;
	double sink;
	plumb_status status;
	int failed;
} bandwidth_worker;

struct bandwidth_team {
	int threads;
	const timer_calibration *timer;
	uint64_t footprint;
	arena_pages pages;
	/* Launch hand-shake: workers report setup under the mutex, then wait
	 * until the team is launched (or abandoned, if a worker failed). */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int ready_count;
	bool launched, abandoned;
	pthread_barrier_t start, done;
	atomic_uint spin_arrived, spin_generation;
	/* The job of the current sample, written before the start barrier. */
	const bandwidth_kernel *kernel;
	size_t elements;
	uint64_t passes;
	bool quit;
	char pages_obtained[96];
	bandwidth_worker *workers;
};

static void spin_barrier_wait(bandwidth_team *team)
{
	unsigned generation = atomic_load_explicit(&team->spin_generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&team->spin_arrived, 1, memory_order_acq_rel) + 1 == (unsigned)team->threads) {
		atomic_store_explicit(&team->spin_arrived, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&team->spin_generation, 1, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&team->spin_generation, memory_order_acquire) == generation)
		cpu_relax();
}

/* The arrays a kernel uses are packed from the start of the buffer: the
 * read kernel's source is at the start, as is every destination. */
static void worker_arrays(bandwidth_worker *w, const bandwidth_kernel *kernel, size_t elements,
                          double **a, double **b, double **c)
{
	double *base = w->buffer.base;
	*a = base;
	*b = kernel->writes_per_element ? base + elements + ARRAY_GAP_DOUBLES : base;
	*c = *b + elements + ARRAY_GAP_DOUBLES;
}

static int worker_setup(bandwidth_worker *w)
{
	bandwidth_team *team = w->team;
	if (cpu_pin_self(w->cpu, &w->status) != 0)
		return -1;
	arena_request request = {
		.size = team->footprint + 4 * ARRAY_GAP_DOUBLES * sizeof(double) + 4096,
		.pages = team->pages,
		.fault = ARENA_FAULT_FIRST_TOUCH,
		.alignment = 2u << 20,
	};
	if (arena_create(&w->buffer, &request, &w->status) != 0)
		return -1;
	/* First touch from the pinned worker.  Values in [1, 2) keep every
	 * later value a normal number (no denormal slow paths in the triad),
	 * and differ from page to page, so a hypervisor that merges identical
	 * pages (KSM) cannot back a "64 MiB" read with one physical page. */
	double *values = w->buffer.base;
	for (size_t i = 0; i < w->buffer.size / sizeof(double); i++)
		values[i] = 1.0 + (double)(i % 1048573) / 2097152.0;
	plumb_status ignored;
	if (arena_inspect(&w->buffer, &ignored) == 0 && w == &team->workers[0])
		arena_describe(&w->buffer, team->pages_obtained, sizeof team->pages_obtained);
	return 0;
}

static void *worker_main(void *argument)
{
	bandwidth_worker *w = argument;
	bandwidth_team *team = w->team;
	int failed = worker_setup(w) != 0;
	pthread_mutex_lock(&team->lock);
	w->failed = failed;
	team->ready_count++;
	pthread_cond_broadcast(&team->changed);
	while (!team->launched && !team->abandoned)
		pthread_cond_wait(&team->changed, &team->lock);
	bool launched = team->launched;
	pthread_mutex_unlock(&team->lock);
	if (!launched)
		return NULL;
	for (;;) {
		pthread_barrier_wait(&team->start);
		if (team->quit)
			break;
		const bandwidth_kernel *kernel = team->kernel;
		double *a, *b, *c, sink = 0;
		worker_arrays(w, kernel, team->elements, &a, &b, &c);
		spin_barrier_wait(team);
		uint64_t start = timer_begin(team->timer);
		for (uint64_t p = 0; p < team->passes; p++)
			sink += kernel->run(a, b, c, team->elements, 3.0);
		uint64_t end = timer_end(team->timer);
		w->start_ticks = start;
		w->end_ticks = end;
		w->sink += sink;
		pthread_barrier_wait(&team->done);
	}
	return NULL;
}

static void team_free(bandwidth_team *team)
{
	for (int i = 0; i < team->threads; i++)
		if (team->workers[i].buffer.map_base)
			arena_destroy(&team->workers[i].buffer);
	pthread_barrier_destroy(&team->start);
	pthread_barrier_destroy(&team->done);
	pthread_cond_destroy(&team->changed);
	pthread_mutex_destroy(&team->lock);
	free(team->workers);
	free(team);
}

/* Stops workers that never launched and frees everything. */
static void team_abandon(bandwidth_team *team, int started)
{
	pthread_mutex_lock(&team->lock);
	team->abandoned = true;
	pthread_cond_broadcast(&team->changed);
	pthread_mutex_unlock(&team->lock);
	for (int i = 0; i < started; i++)
		pthread_join(team->workers[i].thread, NULL);
	team_free(team);
}

int bandwidth_team_create(bandwidth_team **out, const bandwidth_team_request *request, plumb_status *status)
{
	*out = NULL;
	if (request->threads < 1 || !request->cpus || !request->timer)
		return plumb_fail(status, EINVAL, "bandwidth team: need at least one thread, its CPUs and a timer");
	bandwidth_team *team = calloc(1, sizeof *team);
	if (!team)
		return plumb_fail(status, ENOMEM, "bandwidth team: out of memory");
	team->workers = calloc((size_t)request->threads, sizeof *team->workers);
	if (!team->workers) {
		free(team);
		return plumb_fail(status, ENOMEM, "bandwidth team: out of memory");
	}
	team->threads = request->threads;
	team->timer = request->timer;
	team->footprint = request->footprint;
	team->pages = request->pages;
	snprintf(team->pages_obtained, sizeof team->pages_obtained, "unknown");
	pthread_mutex_init(&team->lock, NULL);
	pthread_cond_init(&team->changed, NULL);
	pthread_barrier_init(&team->start, NULL, (unsigned)team->threads + 1);
	pthread_barrier_init(&team->done, NULL, (unsigned)team->threads + 1);
	for (int i = 0; i < team->threads; i++) {
		bandwidth_worker *w = &team->workers[i];
		w->team = team;
		w->cpu = request->cpus[i];
		int error = pthread_create(&w->thread, NULL, worker_main, w);
		if (error) {
			team_abandon(team, i);
			return plumb_fail_errno(status, error, "bandwidth team: cannot start thread %d", i);
		}
	}
	pthread_mutex_lock(&team->lock);
	while (team->ready_count < team->threads)
		pthread_cond_wait(&team->changed, &team->lock);
	int failed = -1;
	for (int i = 0; i < team->threads && failed < 0; i++)
		if (team->workers[i].failed)
			failed = i;
	if (failed < 0) {
		team->launched = true;
		pthread_cond_broadcast(&team->changed);
	}
	pthread_mutex_unlock(&team->lock);
	if (failed >= 0) {
		plumb_status copy = team->workers[failed].status;
		team_abandon(team, team->threads);
		if (status)
			*status = copy;
		return -1;
	}
	*out = team;
	return 0;
}

void bandwidth_team_destroy(bandwidth_team *team)
{
	if (!team)
		return;
	team->quit = true;
	pthread_barrier_wait(&team->start);
	for (int i = 0; i < team->threads; i++)
		pthread_join(team->workers[i].thread, NULL);
	team_free(team);
}

int bandwidth_team_threads(const bandwidth_team *team)
{
	return team->threads;
}

const char *bandwidth_team_pages(const bandwidth_team *team)
{
	return team->pages_obtained;
}

double bandwidth_team_sample(bandwidth_team *team, const bandwidth_kernel *kernel, size_t elements, uint64_t passes)
{
	size_t capacity = (size_t)(team->footprint / sizeof(double));
	if (!kernel || elements == 0 || passes == 0 || elements * kernel->arrays > capacity)
		return NAN;
	team->kernel = kernel;
	team->elements = elements;
	team->passes = passes;
	pthread_barrier_wait(&team->start);
	pthread_barrier_wait(&team->done);
	uint64_t first_start = UINT64_MAX, last_end = 0;
	for (int i = 0; i < team->threads; i++) {
		if (team->workers[i].start_ticks < first_start)
			first_start = team->workers[i].start_ticks;
		if (team->workers[i].end_ticks > last_end)
			last_end = team->workers[i].end_ticks;
	}
	if (last_end <= first_start)
		return NAN;
	double ns = timer_ticks_to_ns(team->timer, (double)(last_end - first_start));
	double bytes = (double)bandwidth_bytes_counted(kernel, elements) * (double)passes * team->threads;
	return bytes / ns;
}
