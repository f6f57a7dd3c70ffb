/* plumb/region.h: region markers for users' own programs (public API).
 *
 * In the manner of likwid's marker API and PAPI's high-level API:
 *
 *   #include <plumb/region.h>
 *   PLUMB_REGION_BEGIN("solve");
 *   ... work ...
 *   PLUMB_REGION_END("solve");
 *
 *   cc -DPLUMB_REGIONS prog.c $(pkg-config --cflags --libs plumb)
 *   PLUMB_EVENTS=page-faults,task-clock ./prog
 *
 * The PLUMB_REGION_* macros expand to nothing unless the program is
 * compiled with -DPLUMB_REGIONS (as likwid's LIKWID_MARKER_* need
 * -DLIKWID_PERFMON), so the markers can stay in the source at no cost.  The
 * functions below them can also be called directly; they are always there.
 *
 * Environment (read once, at the first marker):
 *   PLUMB_EVENTS         comma-separated event names (default: task-clock,page-faults)
 *   PLUMB_BACKEND        perf (default), papi or none
 *   PLUMB_REGION_JSON    write the summary as JSON to this file instead of a table on stderr
 *   PLUMB_REGION_QUIET   set to 1: no summary at exit
 * read with secure_getenv: a setuid or setgid program ignores them.
 *
 * The summary gives each region its wall time (wall_ns, CLOCK_MONOTONIC)
 * beside the events; `plumb explain` reads it.
 *
 * Regions nest (counts are inclusive: an outer region includes its inner
 * ones) and are per thread: each thread counts only itself, and the summary
 * has one row per (thread, region).  A region may be entered many times; its
 * counts add up and its entry count is reported.  An event that cannot be
 * counted is reported "unsupported" with its reason, never as 0.
 *
 * Thread-safety: every call may be made from any thread at any time; each
 * acts on the calling thread's own regions.  The summary (at exit, or
 * plumb_region_report) takes a lock and should run while no other thread is
 * inside a marker call.
 *
 * Errors: begin and end never fail loudly inside the measured program: a
 * mismatched end, a bad name or counters that cannot be opened are recorded
 * and reported in the summary.
 *
 * Usable from C (C99 and later) and C++. */
#ifndef PLUMB_REGION_H
#define PLUMB_REGION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every declaration below is exported from libplumb.so (the library is
 * built with -fvisibility=hidden). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* The longest region name plumb keeps, including its terminating NUL. */
#define PLUMB_REGION_NAME_MAX 64
/* The most events one set of counters holds. */
#define PLUMB_EVENTS_MAX 64
/* The longest reason text, including its terminating NUL. */
#define PLUMB_REASON_MAX 200

/* How far a count can be trusted. */
typedef enum plumb_count_state {
	PLUMB_COUNT_OK = 0,          /* counted the whole time: value is exact */
	PLUMB_COUNT_MULTIPLEXED = 1, /* counted part of the time: value is scaled, an estimate */
	PLUMB_COUNT_UNSUPPORTED = 2, /* cannot be counted here: reason says why, value is NaN */
	PLUMB_COUNT_NOT_COUNTED = 3  /* opened but never ran: value is NaN */
} plumb_count_state;

/* One event's count. */
typedef struct plumb_count {
	const char *event;           /* the event's name; owned by plumb, valid until the
	                                counters are closed (regions: until exit) */
	plumb_count_state state;
	double value;                /* NaN unless PLUMB_COUNT_OK or PLUMB_COUNT_MULTIPLEXED */
	uint64_t time_enabled_ns;    /* 0 when the backend cannot tell (and from plumb_region_read) */
	uint64_t time_running_ns;
	char reason[PLUMB_REASON_MAX]; /* why unsupported, not counted or scaled; "" when OK */
} plumb_count;

/* Enters the region `name` (at most PLUMB_REGION_NAME_MAX - 1 bytes) in the
 * calling thread.  The first marker of a thread opens that thread's
 * counters.  The name is copied. */
void plumb_region_begin(const char *name);

/* Leaves the region `name`, which must be the calling thread's innermost
 * open region, and adds what its events counted since the begin to the
 * region's totals. */
void plumb_region_end(const char *name);

/* Reads the counts of a running region without ending it: what each event
 * counted in the calling thread since the begin of its innermost open region
 * called `name`.  Fills counts[0 .. min(n, capacity) - 1], where n is the
 * number of events (PLUMB_EVENTS), and *wall_ns (if not NULL) with the wall
 * time since the begin.  The caller owns `counts`.  Returns n (which may be
 * more than capacity; 0 when the events could not be configured, see the
 * summary), or -1 when no region of that name is open in this thread or name
 * is NULL.  Nothing is recorded: the region keeps running. */
int plumb_region_read(const char *name, plumb_count *counts, size_t capacity, uint64_t *wall_ns);

/* Writes the summary now (as at exit, to stderr or PLUMB_REGION_JSON) and
 * clears the accumulated results of every thread. */
void plumb_region_report(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

/* The marker macros: nothing at all unless compiled with -DPLUMB_REGIONS.
 * PLUMB_REGION_READ is then 0 (no events), and does not evaluate its
 * arguments. */
#ifdef PLUMB_REGIONS
#define PLUMB_REGION_BEGIN(name) plumb_region_begin(name)
#define PLUMB_REGION_END(name) plumb_region_end(name)
#define PLUMB_REGION_READ(name, counts, capacity, wall_ns) plumb_region_read((name), (counts), (capacity), (wall_ns))
#define PLUMB_REGION_REPORT() plumb_region_report()
#else
#define PLUMB_REGION_BEGIN(name) ((void)0)
#define PLUMB_REGION_END(name) ((void)0)
#define PLUMB_REGION_READ(name, counts, capacity, wall_ns) 0
#define PLUMB_REGION_REPORT() ((void)0)
#endif

#endif
