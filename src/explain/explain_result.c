/* The result of plumb explain: options, regions, notes.  The whole job
 * (explain_run) is in explain_run.c, above the steps that fill these in. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "explain/explain.h"
#include "sim/sim_curve.h"

/* Everything a region marker can count through perf_event or PAPI that
 * bears on memory: software events (exact here), the generic hardware
 * events, and the PAPI presets of the caches and TLBs (translated to perf
 * events through the catalogue on the perf backend).  Those this machine
 * cannot count come back unsupported with the reason, once each. */
const char explain_default_events[] =
	"task-clock,page-faults,minor-faults,major-faults,context-switches,cpu-migrations,"
	"cycles,instructions,L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses,dTLB-load-misses,"
	"PAPI_L1_DCM,PAPI_L2_DCM,PAPI_L3_TCM,PAPI_TLB_DM";

void explain_options_init(explain_options *options)
{
	memset(options, 0, sizeof *options);
	options->runs = 5;
	options->backend = "perf";
	options->preset = "host";
	options->ipc_base = 0;   /* from the region's code (llvm-mca) */
	options->instrument = true;
	options->simulate = true;
	options->program_stdout = -1;
	options->interleave = 1;
	explain_machine_options_init(&options->machine);
}

int explain_result_init(explain_result *result, char *const argv[], const explain_options *options,
                        plumb_status *status)
{
	memset(result, 0, sizeof *result);
	if (!argv || !argv[0] || !argv[0][0])
		return plumb_fail(status, EINVAL, "no program to run (plumb explain -- ./program args)");
	if (!strchr(argv[0], '/')) {
		/* As execvp will look it up, so that a mistyped name fails before
		 * anything is measured. */
		const char *path = secure_getenv("PATH");
		bool found = false;
		for (const char *p = path && path[0] ? path : "/usr/bin:/bin"; !found && *p;) {
			const char *colon = strchr(p, ':');
			size_t length = colon ? (size_t)(colon - p) : strlen(p);
			char candidate[4096];
			if (snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, p, argv[0]) < (int)sizeof candidate)
				found = access(candidate, X_OK) == 0;
			p += length + (colon ? 1 : 0);
		}
		if (!found)
			return plumb_fail(status, ENOENT, "cannot run '%s': not found on PATH", argv[0]);
	} else if (access(argv[0], X_OK) != 0) {
		return plumb_fail_errno(status, errno, "cannot run '%s'", argv[0]);
	}
	if (options->runs < 1 || options->runs > EXPLAIN_RUNS_MAX)
		return plumb_fail(status, EINVAL, "the number of runs must be 1..%d", EXPLAIN_RUNS_MAX);
	if (!(options->ipc_base >= 0) || options->ipc_base > 16)
		return plumb_fail(status, EINVAL, "the base IPC must be above 0 and at most 16 (0: from the code)");
	const char *backend = options->backend ? options->backend : "perf";
	if (strcmp(backend, "perf") && strcmp(backend, "papi") && strcmp(backend, "none"))
		return plumb_fail(status, EINVAL, "unknown counter backend '%s' (perf, papi or none)", backend);
	snprintf(result->backend, sizeof result->backend, "%s", backend);
	const char *events = options->events ? options->events : explain_default_events;
	if (strlen(events) >= sizeof result->event_storage)
		return plumb_fail(status, EINVAL, "the event list is too long");
	if (counter_event_list_parse(events, result->event_storage, sizeof result->event_storage, result->events,
	                             &result->event_count, status) != 0)
		return -1;
	for (size_t i = 0; i < result->event_count; i++)
		if (strchr(result->events[i], '"') || strchr(result->events[i], '\\'))
			return plumb_fail(status, EINVAL, "bad event name '%s'", result->events[i]);
	result->runs = options->runs;
	result->ipc_base = options->ipc_base;
	snprintf(result->preset, sizeof result->preset, "%s", options->preset ? options->preset : "host");
	size_t length = 1;
	for (size_t i = 0; argv[i]; i++)
		length += strlen(argv[i]) + 1;
	result->command = malloc(length);
	if (!result->command)
		return plumb_fail(status, ENOMEM, "out of memory");
	result->command[0] = 0;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strcat(result->command, " ");
		strcat(result->command, argv[i]);
	}
	if (!explain_result_region(result, EXPLAIN_PROGRAM))
		return plumb_fail(status, ENOMEM, "out of memory");
	return 0;
}

void explain_result_free(explain_result *result)
{
	if (!result)
		return;
	free(result->command);
	free(result->regions);
	for (size_t i = 0; i < result->note_count; i++)
		free(result->notes[i]);
	free(result->notes);
	sim_curve_free(result->curve);
	free(result->other_config);
	memset(result, 0, sizeof *result);
}

explain_region *explain_result_region(explain_result *result, const char *name)
{
	for (size_t i = 0; i < result->region_count; i++)
		if (!strcmp(result->regions[i].name, name))
			return &result->regions[i];
	if (strlen(name) >= EXPLAIN_NAME_MAX)
		return NULL;
	explain_region *bigger = realloc(result->regions, (result->region_count + 1) * sizeof *bigger);
	if (!bigger)
		return NULL;
	result->regions = bigger;
	explain_region *region = &result->regions[result->region_count++];
	memset(region, 0, sizeof *region);
	snprintf(region->name, sizeof region->name, "%s", name);
	for (size_t i = 0; i < COUNTER_MAX_EVENTS; i++)
		region->counters[i].state = COUNTER_NOT_COUNTED;
	return region;
}

void explain_result_note(explain_result *result, const char *format, ...)
{
	char text[512];
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(text, sizeof text, format, arguments);
	va_end(arguments);
	for (size_t i = 0; i < result->note_count; i++)
		if (!strcmp(result->notes[i], text))
			return;   /* every reason once */
	char **bigger = realloc(result->notes, (result->note_count + 1) * sizeof *bigger);
	if (!bigger)
		return;
	result->notes = bigger;
	if ((result->notes[result->note_count] = strdup(text)))
		result->note_count++;
}
