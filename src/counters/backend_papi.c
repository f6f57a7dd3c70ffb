/* The PAPI backend: the same events through PAPI, the interface the seeds
 * validated (PAPI_start/PAPI_stop around a region).  Preset names go to PAPI
 * as they are; perf spellings go as the perf_event component's natives
 * (page-faults -> perf::PAGE-FAULTS), so one command line works on both
 * backends.
 *
 * PAPI adds events to an event set without knowing whether they will count:
 * an event the kernel refuses makes PAPI_start fail for the whole set.  So
 * each event is tried alone first (add, start, stop) and only those that
 * count go into the real set; the others are unsupported with PAPI's error.
 *
 * PAPI reports no enabled/running times (multiplexing is off), so values
 * come back with times 0: counted the whole time, unscaled. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters/counters.h"
#include "counters/perf_events.h"

#ifndef PLUMB_HAVE_PAPI

static int papi_open(void **instance, const char *const *events, size_t n, const counter_options *options,
                     counter_value *opened, plumb_status *status)
{
	(void)instance;
	(void)events;
	(void)n;
	(void)options;
	(void)opened;
	return plumb_fail(status, ENOTSUP, "plumb was built without PAPI (install libpapi-dev and rebuild)");
}
static int papi_nothing(void *instance, plumb_status *status)
{
	(void)instance;
	return plumb_fail(status, ENOTSUP, "built without PAPI");
}
static int papi_read(void *instance, counter_value *values, plumb_status *status)
{
	(void)instance;
	(void)values;
	return plumb_fail(status, ENOTSUP, "built without PAPI");
}
static void papi_close(void *instance) { (void)instance; }
static int papi_list(void *context, counter_list_fn emit, void *argument, plumb_status *status)
{
	(void)context;
	(void)emit;
	(void)argument;
	return plumb_fail(status, ENOTSUP, "built without PAPI");
}
const counter_backend counter_backend_papi = {
	.name = "papi", .description = "PAPI (not built in)",
	.open = papi_open, .start = papi_nothing, .stop = papi_nothing, .read = papi_read,
	.close = papi_close, .list = papi_list, .read_method = NULL,
};

#else

#include <pthread.h>
#include <papi.h>

/* PAPI_library_init and PAPI_thread_init are process-wide and must run
 * once, before any thread uses PAPI; the result is written once inside
 * pthread_once and only read afterwards.  This is the backend's only static
 * state; PAPI itself keeps the rest. */
static pthread_once_t papi_once = PTHREAD_ONCE_INIT;
static char papi_init_error[PLUMB_MESSAGE_MAX];

static unsigned long papi_thread_id(void) { return (unsigned long)pthread_self(); }

/* PAPI counts everything plumb asks of it (presets, perf:: software events,
 * libpfm4 natives) through its perf_event component.  When libpfm4 does not
 * know the CPU (libpfm4 4.13 and AMD family 26, Zen 5) that component is
 * disabled and PAPI counts nothing, not even perf::MINOR-FAULTS, while every
 * event fails with "Component containing event is disabled".  Say so once,
 * with the cause and what would help, instead of once per event.
 *
 * Forcing a PMU the CPU is not (LIBPFM_FORCE_PMU=amd64_fam19h_zen4) enables
 * the component but activates that PMU alone: libpfm4's perf:: table goes
 * away with the default PMUs, so software events still do not count, and on
 * a machine with a PMU the hardware events would be another CPU's encodings.
 * plumb does not do it; docs/counters.md records the experiment. */
static void describe_disabled_component(const PAPI_component_info_t *info, char *out, size_t length)
{
	const PAPI_hw_info_t *hardware = PAPI_get_hardware_info();
	char cpu[96] = "this CPU";
	if (hardware)
		snprintf(cpu, sizeof cpu, "%.40s family %d model %d", hardware->vendor_string,
		         hardware->cpuid_family, hardware->cpuid_model);
	const char *why = info->disabled_reason[0] ? info->disabled_reason : "no reason given";
	bool unknown_cpu = strstr(why, "PMU") != NULL;
	/* The status line is PLUMB_MESSAGE_MAX long: the cause first. */
	int written = snprintf(out, length, "PAPI counts nothing here: its %.24s component is disabled "
	                       "(%.60s; %s)%s; use --backend perf", info->name, why, cpu,
	                       unknown_cpu ? "; a libpfm4 that knows this CPU would enable it" : "");
	(void)written;
}

static void papi_init(void)
{
	int version = PAPI_library_init(PAPI_VER_CURRENT);
	if (version != PAPI_VER_CURRENT) {
		if (version > 0)
			snprintf(papi_init_error, sizeof papi_init_error,
			         "PAPI library version %d.%d does not match the headers plumb was built with (%d.%d)",
			         PAPI_VERSION_MAJOR(version), PAPI_VERSION_MINOR(version),
			         PAPI_VERSION_MAJOR(PAPI_VER_CURRENT), PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
		else
			snprintf(papi_init_error, sizeof papi_init_error, "PAPI_library_init: %s", PAPI_strerror(version));
		return;
	}
	int rc = PAPI_thread_init(papi_thread_id);
	if (rc != PAPI_OK) {
		snprintf(papi_init_error, sizeof papi_init_error, "PAPI_thread_init: %s", PAPI_strerror(rc));
		return;
	}
	int component = PAPI_get_component_index("perf_event");
	const PAPI_component_info_t *info = component >= 0 ? PAPI_get_component_info(component) : NULL;
	if (!info)
		snprintf(papi_init_error, sizeof papi_init_error,
		         "PAPI counts nothing here: it was built without its perf_event component");
	else if (info->disabled)
		describe_disabled_component(info, papi_init_error, sizeof papi_init_error);
}

static int papi_ready(plumb_status *status)
{
	pthread_once(&papi_once, papi_init);
	if (papi_init_error[0])
		return plumb_fail(status, ENOTSUP, "%s", papi_init_error);
	/* Idempotent; PAPI needs it before a new thread's first event set. */
	PAPI_register_thread();
	return 0;
}

typedef struct papi_instance {
	size_t n;
	int event_set;
	counter_options options;
	long long *last;               /* values at stop, per position in the event set */
	int *position;                 /* event set position of each event, -1 if unsupported */
	size_t counted;                /* events in the set */
	bool running;
	counter_value opened[];
} papi_instance;

/* The name PAPI should see for what the user typed. */
static const char *papi_name_for(const char *name, char *buffer, size_t length)
{
	if (!strncmp(name, "PAPI_", 5) || strstr(name, "::"))
		return name;
	const char *perf = perf_event_papi_name(name, buffer, length);
	return perf ? perf : name;
}

static int configure_set(int event_set, const counter_options *options, char *reason, size_t length)
{
	int rc = PAPI_assign_eventset_component(event_set, 0);
	if (rc != PAPI_OK) {
		snprintf(reason, length, "PAPI_assign_eventset_component: %s", PAPI_strerror(rc));
		return -1;
	}
	if (options->domain == COUNTER_DOMAIN_ALL) {
		PAPI_option_t option;
		memset(&option, 0, sizeof option);
		option.domain.eventset = event_set;
		option.domain.domain = PAPI_DOM_ALL;
		if ((rc = PAPI_set_opt(PAPI_DOMAIN, &option)) != PAPI_OK) {
			snprintf(reason, length, "PAPI_set_opt(PAPI_DOMAIN, all): %s", PAPI_strerror(rc));
			return -1;
		}
	}
	if (options->pid > 0 && (rc = PAPI_attach(event_set, (unsigned long)options->pid)) != PAPI_OK) {
		snprintf(reason, length, "PAPI_attach(%d): %s", (int)options->pid, PAPI_strerror(rc));
		return -1;
	}
	if (options->inherit) {
		PAPI_option_t option;
		memset(&option, 0, sizeof option);
		option.inherit.eventset = event_set;
		option.inherit.inherit = PAPI_INHERIT_ALL;
		if ((rc = PAPI_set_opt(PAPI_INHERIT, &option)) != PAPI_OK) {
			snprintf(reason, length, "PAPI_set_opt(PAPI_INHERIT): %s", PAPI_strerror(rc));
			return -1;
		}
	}
	return 0;
}

static void destroy_set(int *event_set)
{
	if (*event_set == PAPI_NULL)
		return;
	PAPI_cleanup_eventset(*event_set);
	PAPI_destroy_eventset(event_set);
	*event_set = PAPI_NULL;
}

/* Tries one event alone, in this thread: does PAPI know it, and does it count? */
static int try_event(const char *papi_name, char *reason, size_t length)
{
	int event_set = PAPI_NULL;
	int rc = PAPI_create_eventset(&event_set);
	if (rc != PAPI_OK) {
		snprintf(reason, length, "PAPI_create_eventset: %s", PAPI_strerror(rc));
		return -1;
	}
	long long scratch[1];
	if ((rc = PAPI_add_named_event(event_set, papi_name)) != PAPI_OK)
		snprintf(reason, length, "PAPI_add_named_event(%s): %s (%d)", papi_name, PAPI_strerror(rc), rc);
	else if ((rc = PAPI_start(event_set)) != PAPI_OK)
		snprintf(reason, length, "PAPI_start(%s): %s (%d)", papi_name, PAPI_strerror(rc), rc);
	else
		PAPI_stop(event_set, scratch);
	destroy_set(&event_set);
	return rc == PAPI_OK ? 0 : -1;
}

static void papi_close(void *opaque);

static int papi_open(void **out, const char *const *events, size_t n, const counter_options *options,
                     counter_value *opened, plumb_status *status)
{
	if (papi_ready(status) != 0)
		return -1;
	papi_instance *instance = calloc(1, sizeof *instance + n * sizeof instance->opened[0]);
	if (!instance)
		return plumb_fail(status, ENOMEM, "out of memory");
	instance->n = n;
	instance->options = *options;
	instance->event_set = PAPI_NULL;
	instance->last = calloc(n, sizeof *instance->last);
	instance->position = calloc(n, sizeof *instance->position);
	if (!instance->last || !instance->position) {
		papi_close(instance);
		return plumb_fail(status, ENOMEM, "out of memory");
	}
	int rc = PAPI_create_eventset(&instance->event_set);
	if (rc != PAPI_OK) {
		papi_close(instance);
		return plumb_fail(status, EIO, "PAPI_create_eventset: %s", PAPI_strerror(rc));
	}
	char reason[COUNTER_REASON_MAX];
	if (configure_set(instance->event_set, options, reason, sizeof reason) != 0) {
		/* The set cannot be configured this way here: every event is
		 * unsupported, with the reason, and the others backends still run. */
		counter_environment environment;
		counter_environment_read(&environment);
		for (size_t i = 0; i < n; i++) {
			instance->position[i] = -1;
			counter_value_unsupported(&instance->opened[i], "%.120s%s", reason,
			                          environment.cpu_pmu_present ? ""
			                          : " (PAPI probes permission by opening "
			                            "PERF_COUNT_HW_INSTRUCTIONS, which fails here: no PMU)");
			opened[i] = instance->opened[i];
		}
		*out = instance;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		char buffer[128];
		const char *name = papi_name_for(events[i], buffer, sizeof buffer);
		instance->position[i] = -1;
		if (try_event(name, reason, sizeof reason) != 0) {
			counter_value_unsupported(&instance->opened[i], "%s", reason);
		} else if ((rc = PAPI_add_named_event(instance->event_set, name)) != PAPI_OK) {
			counter_value_unsupported(&instance->opened[i], "PAPI_add_named_event(%s): %s (%d)",
			                          name, PAPI_strerror(rc), rc);
		} else {
			instance->position[i] = (int)instance->counted++;
			instance->opened[i].state = COUNTER_OK;
			instance->opened[i].value = 0;
		}
		opened[i] = instance->opened[i];
	}
	*out = instance;
	return 0;
}

static int papi_start(void *opaque, plumb_status *status)
{
	papi_instance *instance = opaque;
	if (instance->counted == 0)
		return 0;
	if (instance->running) {
		int rc = PAPI_reset(instance->event_set);
		return rc == PAPI_OK ? 0 : plumb_fail(status, EIO, "PAPI_reset: %s", PAPI_strerror(rc));
	}
	memset(instance->last, 0, instance->n * sizeof *instance->last);
	int rc = PAPI_start(instance->event_set);
	if (rc != PAPI_OK)
		return plumb_fail(status, EIO, "PAPI_start: %s", PAPI_strerror(rc));
	instance->running = true;
	return 0;
}

static int papi_stop(void *opaque, plumb_status *status)
{
	papi_instance *instance = opaque;
	if (!instance->running)
		return 0;
	int rc = PAPI_stop(instance->event_set, instance->last);
	instance->running = false;
	return rc == PAPI_OK ? 0 : plumb_fail(status, EIO, "PAPI_stop: %s", PAPI_strerror(rc));
}

static int papi_read(void *opaque, counter_value *values, plumb_status *status)
{
	papi_instance *instance = opaque;
	if (instance->running && instance->counted) {
		int rc = PAPI_read(instance->event_set, instance->last);
		if (rc != PAPI_OK)
			return plumb_fail(status, EIO, "PAPI_read: %s", PAPI_strerror(rc));
	}
	for (size_t i = 0; i < instance->n; i++) {
		values[i] = instance->opened[i];
		if (instance->position[i] < 0)
			continue;
		long long count = instance->last[instance->position[i]];
		values[i].raw = count < 0 ? 0 : (uint64_t)count;
		values[i].time_enabled = values[i].time_running = 0;
		counter_value_scale(&values[i]);
	}
	return 0;
}

static void papi_close(void *opaque)
{
	papi_instance *instance = opaque;
	if (!instance)
		return;
	if (instance->running) {
		PAPI_stop(instance->event_set, instance->last);
		instance->running = false;
	}
	destroy_set(&instance->event_set);
	free(instance->last);
	free(instance->position);
	free(instance);
}

static void emit_papi_events(int first, int component, counter_list_fn emit, void *argument, const char *kind)
{
	int code = first;
	int rc = component < 0 ? PAPI_enum_event(&code, PAPI_ENUM_FIRST)
	                       : PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, component);
	while (rc == PAPI_OK) {
		PAPI_event_info_t info;
		if (PAPI_get_event_info(code, &info) == PAPI_OK) {
			char description[COUNTER_REASON_MAX];
			snprintf(description, sizeof description, "%.*s", (int)sizeof description - 1,
			         info.long_descr[0] ? info.long_descr : info.short_descr);
			description[strcspn(description, "\n")] = '\0';
			emit(argument, info.symbol, kind, description);
		}
		rc = component < 0 ? PAPI_enum_event(&code, PAPI_ENUM_EVENTS)
		                   : PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, component);
	}
}

static int papi_list(void *context, counter_list_fn emit, void *argument, plumb_status *status)
{
	(void)context;
	if (papi_ready(status) != 0)
		return -1;
	emit_papi_events(PAPI_PRESET_MASK, -1, emit, argument, "preset");
	int components = PAPI_num_components();
	for (int c = 0; c < components; c++) {
		const PAPI_component_info_t *info = PAPI_get_component_info(c);
		if (info && !info->disabled)
			emit_papi_events(PAPI_NATIVE_MASK, c, emit, argument, "native");
	}
	return 0;
}

static const char *papi_read_method(void *opaque)
{
	(void)opaque;
	return "PAPI_read";
}

const counter_backend counter_backend_papi = {
	.name = "papi",
	.description = "PAPI " "(presets and native events, e.g. perf::PAGE-FAULTS)",
	.open = papi_open,
	.start = papi_start,
	.stop = papi_stop,
	.read = papi_read,
	.close = papi_close,
	.list = papi_list,
	.read_method = papi_read_method,
};

#endif
