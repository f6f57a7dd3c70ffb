/* Region markers for users' own programs, in the manner of likwid's marker
 * API and PAPI's high-level API:
 *
 *   #include <plumb/region.h>
 *   plumb_region_begin("solve");
 *   ... work ...
 *   plumb_region_end("solve");
 *
 * Run with PLUMB_EVENTS=page-faults,task-clock,PAPI_L1_DCM ./program.
 * Environment:
 *   PLUMB_EVENTS         comma-separated event names (default: task-clock,page-faults)
 *   PLUMB_BACKEND        perf (default), papi or none
 *   PLUMB_REGION_JSON    write the summary as JSON to this file instead of a table on stderr
 *   PLUMB_REGION_QUIET   set to 1: no summary at exit
 *
 * The summary gives each region its wall time (wall_ns, CLOCK_MONOTONIC)
 * beside the events; plumb explain (docs/explain.md) reads it.
 *
 * Regions nest (counts are inclusive: an outer region includes its inner
 * ones) and are per thread: each thread counts only itself, and the summary
 * has one row per (thread, region).  A region may be entered many times; its
 * counts add up and its entry count is reported.  An event that cannot be
 * counted is reported "unsupported" with its reason, never as 0.
 *
 * The calls never fail loudly inside the measured program: a mismatched end,
 * or counters that cannot be opened, are recorded and reported in the
 * summary. */
#ifndef PLUMB_REGION_H
#define PLUMB_REGION_H

#ifdef __cplusplus
extern "C" {
#endif

void plumb_region_begin(const char *name);
void plumb_region_end(const char *name);
/* Writes the summary now (as at exit) and clears the accumulated results. */
void plumb_region_report(void);

#ifdef __cplusplus
}
#endif

#endif
