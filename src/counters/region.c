/* The region runtime behind include/plumb/region.h: likwid-style markers
 * for users' programs.
 *
 * PROCESS-WIDE STATE.  A marker API cannot hand the caller a context: the
 * user writes plumb_region_begin("x") anywhere, in any thread.  So this file
 * keeps the one piece of process-wide mutable state of the counters, the
 * struct `runtime` below:
 *   - the configuration read once from the environment (events, backend,
 *     output), under pthread_once;
 *   - the list of per-thread records, appended under runtime.lock, kept
 *     after a thread exits so the summary at exit can include it;
 *   - a pthread key whose value is the calling thread's record.
 * Each thread's record (its counter set, its stack of open regions, its
 * accumulated results) is touched only by that thread, except by the
 * summary, which takes the lock and is meant to run at exit or at a point
 * the program chooses (plumb_region_report). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>
#include "counters/counters.h"
#include "core/output.h"
#include "plumb/region.h"
#include "plumb/valgrind.h"

#define REGION_NAME_MAX 64
#define REGION_DEPTH_MAX 32
#define REGION_TOTALS_MAX 128
#define REGION_WARM_UP "plumb:warm-up"

/* Everything a marker writes lives in the thread's record, allocated and
 * written through once when the thread first uses a marker.  Otherwise the
 * first write to a fresh page of a stack entry or of a new region's totals
 * would be a page fault inside the enclosing region, counted as the
 * program's own (a region counting page-faults would read a few too many). */
typedef struct region_total {
	char name[REGION_NAME_MAX];
	uint64_t entries;
	uint64_t wall_ns;                          /* CLOCK_MONOTONIC, summed over the entries */
	double sum[COUNTER_MAX_EVENTS];
	counter_state state[COUNTER_MAX_EVENTS];   /* worst seen: OK < MULTIPLEXED < NOT_COUNTED < UNSUPPORTED */
} region_total;

/* What a region needs of a value at its begin (the full counter_value,
 * mostly its reason text, would make each thread's record megabytes). */
typedef struct region_mark {
	uint64_t raw;
	double value;
	counter_state state;
} region_mark;

typedef struct region_open {
	char name[REGION_NAME_MAX];
	uint64_t wall_begin_ns;
	region_mark at_begin[COUNTER_MAX_EVENTS];
} region_open;

typedef struct region_thread {
	int number;                       /* 0 for the first thread to use regions */
	pid_t tid;
	counter_set *set;                 /* NULL until first use, or when opening failed */
	char set_error[PLUMB_MESSAGE_MAX];
	region_open stack[REGION_DEPTH_MAX];
	int depth;
	counter_value read_buffer[COUNTER_MAX_EVENTS];
	uint64_t mismatches;
	char first_mismatch[160];
	region_total totals[REGION_TOTALS_MAX];
	size_t total_count;
	/* The first reason each event was not counted, for the summary. */
	char reason[COUNTER_MAX_EVENTS][COUNTER_REASON_MAX];
	struct region_thread *next;
} region_thread;

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_key_t key;
	char event_storage[1024];
	const char *events[COUNTER_MAX_EVENTS];
	size_t n_events;
	char backend[16];
	char config_error[PLUMB_MESSAGE_MAX];
	region_thread *threads;
	int thread_count;
} runtime = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

static void region_thread_exit(void *record)
{
	region_thread *thread = record;
	/* The thread's counts stop with it; its totals stay for the summary. */
	if (thread && thread->set) {
		counter_stop(thread->set, NULL);
		counter_close(thread->set);
		thread->set = NULL;
	}
}

static void region_at_exit(void)
{
	const char *quiet = secure_getenv("PLUMB_REGION_QUIET");
	if (quiet && !strcmp(quiet, "1"))
		return;
	plumb_region_report();
}

/* In a forked child the inherited counters still count the parent's thread
 * (perf events belong to a task, not to an address space), and the inherited
 * totals are the parent's to report.  So the child starts afresh: its first
 * marker opens counters on itself.  Regions open at the fork end in the
 * child as marker errors ("without a begin"), never as borrowed counts. */
static void region_after_fork_in_child(void)
{
	region_thread *thread = runtime.threads;
	while (thread) {
		region_thread *next = thread->next;
		if (thread->set)
			counter_close(thread->set);   /* closes the child's copies of the fds */
		free(thread);
		thread = next;
	}
	runtime.threads = NULL;
	runtime.thread_count = 0;
	pthread_mutex_init(&runtime.lock, NULL);
	pthread_setspecific(runtime.key, NULL);
}

static void region_configure(void)
{
	const char *events = secure_getenv("PLUMB_EVENTS");
	const char *backend = secure_getenv("PLUMB_BACKEND");
	plumb_status status;
	if (!events || !events[0])
		events = "task-clock,page-faults";
	if (counter_event_list_parse(events, runtime.event_storage, sizeof runtime.event_storage,
	                             runtime.events, &runtime.n_events, &status) != 0)
		snprintf(runtime.config_error, sizeof runtime.config_error, "PLUMB_EVENTS: %.200s", status.message);
	snprintf(runtime.backend, sizeof runtime.backend, "%s", backend && backend[0] ? backend : "perf");
	if (!runtime.config_error[0] && !counter_backend_find(runtime.backend, &status))
		snprintf(runtime.config_error, sizeof runtime.config_error, "PLUMB_BACKEND: %.200s", status.message);
	pthread_key_create(&runtime.key, region_thread_exit);
	pthread_atfork(NULL, NULL, region_after_fork_in_child);
	atexit(region_at_exit);
}

static region_thread *current_thread(void)
{
	pthread_once(&runtime.once, region_configure);
	region_thread *thread = pthread_getspecific(runtime.key);
	if (thread)
		return thread;
	thread = malloc(sizeof *thread);
	if (!thread)
		return NULL;
	/* Write every page now, outside any region.  (A plain memset to 0 after
	 * malloc may be turned into calloc, which leaves fresh pages untouched.) */
	memset(thread, 0, sizeof *thread);
	for (size_t offset = 0; offset < sizeof *thread; offset += 1024)
		((volatile char *)thread)[offset] = 0;
	thread->tid = (pid_t)syscall(SYS_gettid);
	if (runtime.config_error[0]) {
		snprintf(thread->set_error, sizeof thread->set_error, "%s", runtime.config_error);
	} else {
		plumb_status status;
		status.message[0] = '\0';
		if (counter_set_open(&thread->set, runtime.backend, runtime.events, runtime.n_events, NULL, &status) != 0 ||
		    counter_start(thread->set, &status) != 0) {
			snprintf(thread->set_error, sizeof thread->set_error, "%s", status.message);
			counter_close(thread->set);
			thread->set = NULL;
		}
	}
	pthread_mutex_lock(&runtime.lock);
	thread->number = runtime.thread_count++;
	region_thread **tail = &runtime.threads;
	while (*tail)
		tail = &(*tail)->next;
	*tail = thread;
	pthread_mutex_unlock(&runtime.lock);
	pthread_setspecific(runtime.key, thread);
	/* One unrecorded region, so that the first real one does not pay for
	 * mapping the markers' own code pages (each a minor fault, which an
	 * enclosing region would count). */
	plumb_region_begin(REGION_WARM_UP);
	plumb_region_end(REGION_WARM_UP);
	memset(thread->totals, 0, sizeof thread->totals);
	thread->total_count = 0;
	return thread;
}

/* Wall time, read between the counter read and the Valgrind request at a
 * begin (and in the mirror order at an end), so that neither the counters'
 * reads nor the clock's own cost (a vDSO call) lands in the other's count. */
static uint64_t wall_now_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void note_mismatch(region_thread *thread, const char *format, const char *name, const char *other)
{
	if (thread->mismatches++ == 0)
		snprintf(thread->first_mismatch, sizeof thread->first_mismatch, format, name, other);
}

static int state_rank(counter_state state)
{
	switch (state) {
	case COUNTER_OK: return 0;
	case COUNTER_MULTIPLEXED: return 1;
	case COUNTER_NOT_COUNTED: return 2;
	case COUNTER_UNSUPPORTED: return 3;
	}
	return 3;
}

static region_total *find_total(region_thread *thread, const char *name)
{
	for (size_t i = 0; i < thread->total_count; i++)
		if (!strcmp(thread->totals[i].name, name))
			return &thread->totals[i];
	if (thread->total_count == REGION_TOTALS_MAX) {
		note_mismatch(thread, "region \"%s\" not recorded: more than %s distinct regions in one thread",
		              name, "128");
		return NULL;
	}
	region_total *total = &thread->totals[thread->total_count++];
	size_t length = strnlen(name, sizeof total->name - 1);   /* begin() refused longer names */
	memmove(total->name, name, length);
	total->name[length] = '\0';
	return total;
}

void plumb_region_begin(const char *name)
{
	region_thread *thread = current_thread();
	if (!thread)
		return;
	if (!name || !name[0] || strlen(name) >= REGION_NAME_MAX) {
		note_mismatch(thread, "plumb_region_begin: bad region name '%s'%s", name ? name : "(null)", "");
		return;
	}
	if (thread->depth == REGION_DEPTH_MAX) {
		note_mismatch(thread, "plumb_region_begin(\"%s\"): regions nested deeper than %s", name, "32");
		return;
	}
	region_open *open = &thread->stack[thread->depth++];
	snprintf(open->name, sizeof open->name, "%s", name);
	size_t n = runtime.config_error[0] ? 0 : runtime.n_events;
	bool read_ok = thread->set && counter_read(thread->set, thread->read_buffer, NULL) == 0;
	for (size_t i = 0; i < n; i++) {
		const counter_value *v = &thread->read_buffer[i];
		region_mark *mark = &open->at_begin[i];
		if (!read_ok) {
			mark->state = COUNTER_UNSUPPORTED;
			continue;
		}
		mark->raw = v->raw;
		mark->value = v->value;
		mark->state = v->state;
		if (!counter_value_usable(v) && !thread->reason[i][0])
			snprintf(thread->reason[i], sizeof thread->reason[i], "%.*s", (int)sizeof thread->reason[i] - 1,
			         v->reason[0] ? v->reason : counter_state_name(v->state));
	}
	open->wall_begin_ns = wall_now_ns();
	/* Under plumbgrind (plumb instrument), the same region also gets exact
	 * instruction, load and store counts; elsewhere this is a no-op.  Last,
	 * so the counter read above is outside the instrumented region. */
	if (strcmp(name, REGION_WARM_UP) != 0)
		PLUMB_VG_REGION_BEGIN(name);
}

void plumb_region_end(const char *name)
{
	/* First, so the counter read below is outside the instrumented region. */
	if (name && strcmp(name, REGION_WARM_UP) != 0)
		PLUMB_VG_REGION_END(name);
	uint64_t wall_end_ns = wall_now_ns();
	region_thread *thread = current_thread();
	if (!thread)
		return;
	counter_value *at_end = thread->read_buffer;
	bool read_ok = thread->set && counter_read(thread->set, at_end, NULL) == 0;
	if (thread->depth == 0) {
		note_mismatch(thread, "plumb_region_end(\"%s\") without a begin%s", name ? name : "(null)", "");
		return;
	}
	region_open *open = &thread->stack[thread->depth - 1];
	if (!name || strcmp(open->name, name)) {
		note_mismatch(thread, "plumb_region_end(\"%s\") while \"%s\" is the innermost open region",
		              name ? name : "(null)", open->name);
		return;
	}
	thread->depth--;
	region_total *total = find_total(thread, open->name);
	if (!total)
		return;
	total->entries++;
	total->wall_ns += wall_end_ns - open->wall_begin_ns;
	size_t n = runtime.config_error[0] ? 0 : runtime.n_events;
	for (size_t i = 0; i < n; i++) {
		counter_state state;
		const char *reason = NULL;
		double delta = NAN;
		if (!thread->set) {
			state = COUNTER_UNSUPPORTED;
			reason = thread->set_error;
		} else if (!read_ok) {
			state = COUNTER_UNSUPPORTED;
			reason = "reading the counters failed";
		} else if (open->at_begin[i].state != COUNTER_OK && open->at_begin[i].state != COUNTER_MULTIPLEXED) {
			state = open->at_begin[i].state;
			reason = thread->reason[i][0] ? thread->reason[i] : "reading the counters failed at the region's begin";
		} else if (!counter_value_usable(&at_end[i])) {
			state = at_end[i].state;
			reason = at_end[i].reason;
		} else {
			state = at_end[i].state == COUNTER_MULTIPLEXED || open->at_begin[i].state == COUNTER_MULTIPLEXED
			        ? COUNTER_MULTIPLEXED : COUNTER_OK;
			/* Exact counts subtract as integers; scaled ones as estimates. */
			delta = state == COUNTER_OK ? (double)(at_end[i].raw - open->at_begin[i].raw)
			                            : at_end[i].value - open->at_begin[i].value;
			if (state == COUNTER_MULTIPLEXED)
				reason = at_end[i].reason;
		}
		if (total->entries == 1 || state_rank(state) > state_rank(total->state[i]))
			total->state[i] = state;
		if (state != COUNTER_OK && !thread->reason[i][0])
			snprintf(thread->reason[i], sizeof thread->reason[i], "%.*s",
			         (int)sizeof thread->reason[i] - 1, reason && reason[0] ? reason : counter_state_name(state));
		if (!isnan(delta))
			total->sum[i] += delta;
	}
}

_Static_assert(PLUMB_EVENTS_MAX == COUNTER_MAX_EVENTS, "plumb_count arrays and counter sets hold as many events");
_Static_assert(PLUMB_REASON_MAX == COUNTER_REASON_MAX, "reasons fit in a plumb_count");
_Static_assert(PLUMB_REGION_NAME_MAX == REGION_NAME_MAX, "the public name limit is the runtime's");

int plumb_region_read(const char *name, plumb_count *counts, size_t capacity, uint64_t *wall_ns)
{
	uint64_t now_ns = wall_now_ns();
	region_thread *thread = current_thread();
	if (!thread || !name)
		return -1;
	int level = thread->depth - 1;
	while (level >= 0 && strcmp(thread->stack[level].name, name))
		level--;
	if (level < 0)
		return -1;
	const region_open *open = &thread->stack[level];
	if (wall_ns)
		*wall_ns = now_ns - open->wall_begin_ns;
	size_t n = runtime.config_error[0] ? 0 : runtime.n_events;
	counter_value *now = thread->read_buffer;
	bool read_ok = thread->set && counter_read(thread->set, now, NULL) == 0;
	for (size_t i = 0; i < n && i < capacity; i++) {
		plumb_count *count = &counts[i];
		const char *reason = "";
		count->event = runtime.events[i];
		count->value = NAN;
		count->time_enabled_ns = 0;
		count->time_running_ns = 0;
		if (!thread->set) {
			count->state = PLUMB_COUNT_UNSUPPORTED;
			reason = thread->set_error;
		} else if (!read_ok) {
			count->state = PLUMB_COUNT_UNSUPPORTED;
			reason = "reading the counters failed";
		} else if (open->at_begin[i].state != COUNTER_OK && open->at_begin[i].state != COUNTER_MULTIPLEXED) {
			count->state = (plumb_count_state)open->at_begin[i].state;
			reason = thread->reason[i][0] ? thread->reason[i] : "reading the counters failed at the region's begin";
		} else if (!counter_value_usable(&now[i])) {
			count->state = (plumb_count_state)now[i].state;
			reason = now[i].reason;
		} else {
			bool scaled = now[i].state == COUNTER_MULTIPLEXED || open->at_begin[i].state == COUNTER_MULTIPLEXED;
			count->state = scaled ? PLUMB_COUNT_MULTIPLEXED : PLUMB_COUNT_OK;
			count->value = scaled ? now[i].value - open->at_begin[i].value
			                      : (double)(now[i].raw - open->at_begin[i].raw);
			if (scaled)
				reason = now[i].reason;
		}
		snprintf(count->reason, sizeof count->reason, "%.*s", (int)sizeof count->reason - 1, reason ? reason : "");
	}
	return (int)n;
}

static void add_summary_table(output_report *report)
{
	output_table *table = output_table_add(report, "regions", "Regions (counts per thread, inclusive of nested regions)");
	output_column(table, "thread", NULL, 0);
	output_column(table, "tid", NULL, 0);
	output_column(table, "region", NULL, 0);
	output_column(table, "entries", NULL, 0);
	output_column(table, "wall_ns", "ns", 0);
	size_t n = runtime.config_error[0] ? 0 : runtime.n_events;
	for (size_t i = 0; i < n; i++)
		output_column(table, runtime.events[i], NULL, 0);
	for (region_thread *thread = runtime.threads; thread; thread = thread->next) {
		for (size_t t = 0; t < thread->total_count; t++) {
			const region_total *total = &thread->totals[t];
			output_row(table);
			output_cell_integer(table, thread->number);
			output_cell_integer(table, thread->tid);
			output_cell_text(table, total->name);
			output_cell_integer(table, (int64_t)total->entries);
			output_cell_integer(table, (int64_t)total->wall_ns);
			for (size_t i = 0; i < n; i++) {
				if (total->state[i] == COUNTER_OK)
					output_cell_integer(table, (int64_t)llround(total->sum[i]));
				else if (total->state[i] == COUNTER_MULTIPLEXED)
					output_cell_real(table, total->sum[i]);
				else
					output_cell_status(table, counter_state_name(total->state[i]), thread->reason[i]);
			}
		}
		if (thread->mismatches)
			output_note(report, "thread %d: %llu marker error(s); first: %s", thread->number,
			            (unsigned long long)thread->mismatches, thread->first_mismatch);
		if (thread->depth)
			output_note(report, "thread %d: region \"%s\" was still open", thread->number,
			            thread->stack[thread->depth - 1].name);
	}
}

/* One row per region over all threads, as likwid's per-region statistics:
 * the sum of the threads' counts (a state worse than ok in any thread wins). */
static void add_totals_table(output_report *report)
{
	size_t n = runtime.config_error[0] ? 0 : runtime.n_events;
	size_t capacity = 0;
	for (region_thread *thread = runtime.threads; thread; thread = thread->next)
		capacity += thread->total_count;
	if (capacity == 0 || runtime.thread_count < 2)
		return;
	typedef struct { region_total total; size_t threads; const char *reason[COUNTER_MAX_EVENTS]; } aggregate;
	aggregate *all = calloc(capacity, sizeof *all);
	if (!all)
		return;
	size_t used = 0;
	for (region_thread *thread = runtime.threads; thread; thread = thread->next)
		for (size_t t = 0; t < thread->total_count; t++) {
			const region_total *total = &thread->totals[t];
			size_t k = 0;
			while (k < used && strcmp(all[k].total.name, total->name))
				k++;
			if (k == used) {
				memcpy(all[k].total.name, total->name, sizeof total->name);
				used++;
			}
			all[k].threads++;
			all[k].total.entries += total->entries;
			all[k].total.wall_ns += total->wall_ns;
			for (size_t i = 0; i < n; i++) {
				all[k].total.sum[i] += total->sum[i];
				if (state_rank(total->state[i]) > state_rank(all[k].total.state[i])) {
					all[k].total.state[i] = total->state[i];
					all[k].reason[i] = thread->reason[i];
				}
			}
		}
	output_table *table = output_table_add(report, "region_totals", "Regions summed over threads");
	output_column(table, "region", NULL, 0);
	output_column(table, "threads", NULL, 0);
	output_column(table, "entries", NULL, 0);
	output_column(table, "wall_ns", "ns", 0);
	for (size_t i = 0; i < n; i++)
		output_column(table, runtime.events[i], NULL, 0);
	for (size_t k = 0; k < used; k++) {
		output_row(table);
		output_cell_text(table, all[k].total.name);
		output_cell_integer(table, (int64_t)all[k].threads);
		output_cell_integer(table, (int64_t)all[k].total.entries);
		output_cell_integer(table, (int64_t)all[k].total.wall_ns);
		for (size_t i = 0; i < n; i++) {
			if (all[k].total.state[i] == COUNTER_OK)
				output_cell_integer(table, (int64_t)llround(all[k].total.sum[i]));
			else if (all[k].total.state[i] == COUNTER_MULTIPLEXED)
				output_cell_real(table, all[k].total.sum[i]);
			else
				output_cell_status(table, counter_state_name(all[k].total.state[i]),
				                   all[k].reason[i] ? all[k].reason[i] : "");
		}
	}
	free(all);
}

static void add_configuration_error(output_report *report)
{
	/* Unsupported cells carry their reasons (the table prints them under
	 * it, JSON keeps them per cell); a bad configuration has no cells. */
	if (runtime.config_error[0])
		output_note(report, "no counts: %s", runtime.config_error);
}

void plumb_region_report(void)
{
	pthread_once(&runtime.once, region_configure);
	pthread_mutex_lock(&runtime.lock);
	output_report *report = output_report_new("region");
	if (!report) {
		pthread_mutex_unlock(&runtime.lock);
		return;
	}
	output_meta_text(report, "backend", runtime.backend);
	output_meta_text(report, "events", secure_getenv("PLUMB_EVENTS") && secure_getenv("PLUMB_EVENTS")[0]
	                                   ? secure_getenv("PLUMB_EVENTS") : "task-clock,page-faults");
	output_meta_integer(report, "pid", (int64_t)getpid());
	add_summary_table(report);
	add_totals_table(report);
	add_configuration_error(report);
	plumb_status status;
	const char *json = secure_getenv("PLUMB_REGION_JSON");
	if (json && json[0]) {
		if (output_write_file(report, OUTPUT_JSON, json, &status) != 0)
			fprintf(stderr, "plumb regions: %s\n", status.message);
	} else {
		output_write(report, OUTPUT_TABLE, stderr, &status);
	}
	output_report_free(report);
	/* Start afresh: later regions are reported by the next call. */
	for (region_thread *thread = runtime.threads; thread; thread = thread->next) {
		memset(thread->totals, 0, sizeof thread->totals);
		thread->total_count = 0;
		thread->mismatches = 0;
	}
	pthread_mutex_unlock(&runtime.lock);
}
