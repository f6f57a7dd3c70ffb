/* Which encoding a backend uses for an event name.  A verification record
 * keeps it because the same meaning reached through a perf generic event, a
 * raw code or a libpfm4 native name is three different mappings: the kernel's
 * generic table (or PAPI's preset definition) can be wrong where the native
 * is right, and a verdict for one says nothing about the others. */
#include <errno.h>
#include <string.h>
#include "counters/counters.h"
#include "perf_events.h"

const char *counter_event_encoding(const char *backend, const char *name)
{
	if (!backend || !name || !name[0])
		return "unknown";
	if (!strcmp(backend, "papi")) {
		/* PAPI presets are PAPI_*; everything else is a native of one of
		 * its components (perf::MINOR-FAULTS, amd64_fam19h_zen4::...). */
		return !strncmp(name, "PAPI_", 5) ? "papi-preset" : "native";
	}
	if (strcmp(backend, "perf"))
		return "unknown";
	perf_event_spec spec;
	char reason[256];
	if (perf_event_resolve(name, &spec, reason, sizeof reason) != 0)
		return "unknown";
	switch (spec.kind) {
	case PERF_EVENT_KIND_HARDWARE:
	case PERF_EVENT_KIND_CACHE: return "perf-generic";
	case PERF_EVENT_KIND_SOFTWARE: return "perf-software";
	case PERF_EVENT_KIND_RAW: return "raw";
	case PERF_EVENT_KIND_PRESET: return "papi-preset";
	case PERF_EVENT_KIND_NATIVE: return "native";
	case PERF_EVENT_KIND_PMU: return "pmu";
	case PERF_EVENT_KIND_TRACEPOINT: return "tracepoint";
	case PERF_EVENT_KIND_TOOL: return "tool";
	}
	return "unknown";
}

int counter_event_check_known(const char *name, plumb_status *status)
{
	if (!name || !name[0])
		return plumb_fail(status, EINVAL, "empty event name");
	/* A component native PAPI may know and libpfm4 not (rapl:::...): left to the backend. */
	if (strstr(name, "::"))
		return 0;
	perf_event_spec spec;
	char reason[256];
	if (perf_event_resolve(name, &spec, reason, sizeof reason) == 0)
		return 0;
	/* perf_event_resolve says "unknown event" only for a name nothing
	 * resolves (a generic, software or raw name, a PAPI preset, a libpfm4
	 * native); anything else (a raw code too wide, a native with a bad unit
	 * mask) is a known kind of event that stays unsupported with its reason. */
	if (strncmp(reason, "unknown event", 13) != 0)
		return 0;
	return plumb_fail(status, EINVAL, "%s; plumb events lists the known ones", reason);
}
