/* The public counters API: a plumb_counters is a counter_set plus the
 * storage for its event names and a read buffer. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "api_internal.h"
#include "counters/counters.h"

struct plumb_counters {
	counter_set *set;
	char storage[1024];
	const char *names[COUNTER_MAX_EVENTS];
	size_t n;
	counter_value values[COUNTER_MAX_EVENTS];
};

const char *plumb_version(void)
{
	return PLUMB_VERSION;
}

int plumb_counters_open(plumb_counters **out, const char *backend, const char *events, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!out || !events) {
		plumb_fail(&status, EINVAL, "plumb_counters_open: no events given");
		return api_error(error, &status);
	}
	*out = NULL;
	plumb_counters *counters = calloc(1, sizeof *counters);
	if (!counters) {
		plumb_fail(&status, ENOMEM, "plumb_counters_open: out of memory");
		return api_error(error, &status);
	}
	if (counter_event_list_parse(events, counters->storage, sizeof counters->storage, counters->names,
	                             &counters->n, &status) != 0 ||
	    counter_set_open(&counters->set, backend ? backend : "perf", counters->names, counters->n, NULL,
	                     &status) != 0) {
		free(counters);
		return api_error(error, &status);
	}
	*out = counters;
	return 0;
}

int plumb_counters_start(plumb_counters *counters, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!counters)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_counters_start: no counters"), &status));
	return counter_start(counters->set, &status) == 0 ? 0 : api_error(error, &status);
}

int plumb_counters_stop(plumb_counters *counters, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!counters)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_counters_stop: no counters"), &status));
	return counter_stop(counters->set, &status) == 0 ? 0 : api_error(error, &status);
}

int plumb_counters_read(plumb_counters *counters, plumb_count *counts, size_t capacity, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!counters || (!counts && capacity > 0))
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_counters_read: no counters or no room"),
		                         &status));
	if (counter_read(counters->set, counters->values, &status) != 0)
		return api_error(error, &status);
	for (size_t i = 0; i < counters->n && i < capacity; i++) {
		const counter_value *v = &counters->values[i];
		counts[i].event = counters->names[i];
		counts[i].state = (plumb_count_state)v->state;
		counts[i].value = counter_value_usable(v) ? v->value : NAN;
		counts[i].time_enabled_ns = v->time_enabled;
		counts[i].time_running_ns = v->time_running;
		snprintf(counts[i].reason, sizeof counts[i].reason, "%.*s", (int)sizeof counts[i].reason - 1,
		         v->state == COUNTER_OK ? "" : v->reason);
	}
	return (int)counters->n;
}

size_t plumb_counters_size(const plumb_counters *counters)
{
	return counters ? counters->n : 0;
}

const char *plumb_counters_event(const plumb_counters *counters, size_t index)
{
	return counters && index < counters->n ? counters->names[index] : NULL;
}

void plumb_counters_close(plumb_counters *counters)
{
	if (!counters)
		return;
	counter_close(counters->set);
	free(counters);
}

const char *plumb_count_state_name(plumb_count_state state)
{
	return counter_state_name((counter_state)state);
}

_Static_assert((int)PLUMB_COUNT_OK == (int)COUNTER_OK && (int)PLUMB_COUNT_MULTIPLEXED == (int)COUNTER_MULTIPLEXED &&
               (int)PLUMB_COUNT_UNSUPPORTED == (int)COUNTER_UNSUPPORTED &&
               (int)PLUMB_COUNT_NOT_COUNTED == (int)COUNTER_NOT_COUNTED,
               "the public count states are the internal ones");
