/* Turning an event name into a perf_event_attr (internal to the counters). */
#ifndef PLUMB_COUNTERS_PERF_EVENTS_H
#define PLUMB_COUNTERS_PERF_EVENTS_H

#include <stddef.h>
#include <linux/perf_event.h>
#include "plumb/counters.h"

typedef enum perf_event_kind {
	PERF_EVENT_KIND_HARDWARE, PERF_EVENT_KIND_SOFTWARE, PERF_EVENT_KIND_CACHE,
	PERF_EVENT_KIND_RAW, PERF_EVENT_KIND_PRESET, PERF_EVENT_KIND_NATIVE
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
/* Emits every name perf_event_resolve knows, except natives when with_natives is false. */
void perf_event_list(counter_list_fn emit, void *argument, bool with_natives);
/* The perf:: name PAPI's perf_event component uses for a perf name, or NULL. */
const char *perf_event_papi_name(const char *name, char *buffer, size_t length);

#endif
