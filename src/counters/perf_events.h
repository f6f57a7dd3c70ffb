/* Turning an event name into a perf_event_attr (internal to the counters). */
#ifndef PLUMB_COUNTERS_PERF_EVENTS_H
#define PLUMB_COUNTERS_PERF_EVENTS_H

#include <stddef.h>
#include <linux/perf_event.h>
#include "counters/counters.h"

typedef enum perf_event_kind {
	PERF_EVENT_KIND_HARDWARE, PERF_EVENT_KIND_SOFTWARE, PERF_EVENT_KIND_CACHE,
	PERF_EVENT_KIND_RAW, PERF_EVENT_KIND_PRESET, PERF_EVENT_KIND_NATIVE,
	PERF_EVENT_KIND_PMU,          /* PMU/TERMS/ through sysfs (msr/tsc/) */
	PERF_EVENT_KIND_TRACEPOINT,   /* SUBSYS:NAME through tracefs */
	PERF_EVENT_KIND_TOOL          /* duration_time: counted by the backend, not the kernel */
} perf_event_kind;

typedef struct perf_event_spec {
	struct perf_event_attr attr;   /* type and config (+config1/2 for natives) */
	perf_event_kind kind;
	char canonical[64];            /* perf's spelling ("page-faults"), empty for natives/raw */
} perf_event_spec;

/* Resolves a name (perf name, alias, r<hex>, PAPI preset through the
 * catalogue, or a libpfm4 native).  On failure writes why into reason. */
int perf_event_resolve(const char *name, perf_event_spec *spec, char *reason, size_t length);
const char *perf_event_kind_name(perf_event_kind kind);
/* The names the running kernel defines (perf_sysfs_events.c): duration_time,
 * PMU/TERMS/ from the sysfs folder pmus, SUBSYS:NAME from tracefs under one
 * of roots.  0 resolved, -1 failed (reason says why), 1 not this syntax (a
 * reason may still be left for the caller's last word). */
int perf_event_resolve_kernel(const char *name, perf_event_spec *spec, char *reason, size_t length);
int perf_event_resolve_pmu(const char *pmus, const char *name, perf_event_spec *spec, char *reason, size_t length);
int perf_event_resolve_tracepoint(const char *const *roots, size_t root_count, const char *name,
                                  perf_event_spec *spec, char *reason, size_t length);
/* Emits duration_time and the aliases of the kernel's non-CPU PMUs present here. */
void perf_event_list_kernel(counter_list_fn emit, void *argument);
/* Emits every name perf_event_resolve knows, except natives when with_natives is false. */
void perf_event_list(counter_list_fn emit, void *argument, bool with_natives);
/* The perf:: name PAPI's perf_event component uses for a perf name, or NULL. */
const char *perf_event_papi_name(const char *name, char *buffer, size_t length);

#endif
