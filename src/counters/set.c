/* A counter set: the backend-neutral front of the counters.  It checks the
 * caller's input, keeps the names and open-time states, and makes sure that
 * what a backend reports for an unsupported event stays unsupported. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "counters/counters.h"

struct counter_set {
	const counter_backend *backend;
	void *instance;
	size_t n;
	char **names;
	counter_value *opened;
	bool started;
};

const counter_backend *counter_backend_find(const char *name, plumb_status *status)
{
	if (name && !strcmp(name, "perf"))
		return &counter_backend_perf;
	if (name && !strcmp(name, "papi"))
		return &counter_backend_papi;
	if (name && !strcmp(name, "none"))
		return &counter_backend_none;
	if (name && !strcmp(name, "sim")) {
		plumb_fail(status, EINVAL, "the sim backend simulates a region's address stream: open it "
		           "with counter_set_open_backend() and the simulator's backend table");
		return NULL;
	}
	plumb_fail(status, EINVAL, "unknown counter backend '%s' (perf, papi or none)", name ? name : "");
	return NULL;
}

int counter_event_list_parse(const char *list, char *storage, size_t storage_size,
                             const char **names, size_t *n, plumb_status *status)
{
	*n = 0;
	if (!list || !list[0])
		return plumb_fail(status, EINVAL, "empty event list");
	size_t length = strlen(list);
	if (length + 1 > storage_size)
		return plumb_fail(status, EINVAL, "event list too long");
	memcpy(storage, list, length + 1);
	char *cursor = storage;
	for (;;) {
		char *comma = strchr(cursor, ',');
		if (comma)
			*comma = '\0';
		if (!cursor[0])
			return plumb_fail(status, EINVAL, "empty event name in list '%s'", list);
		if (*n == COUNTER_MAX_EVENTS)
			return plumb_fail(status, EINVAL, "more than %d events in '%s'", COUNTER_MAX_EVENTS, list);
		names[(*n)++] = cursor;
		if (!comma)
			break;
		cursor = comma + 1;
	}
	return 0;
}

int counter_set_open_backend(counter_set **out, const counter_backend *backend,
                             const char *const *events, size_t n,
                             const counter_options *options, plumb_status *status)
{
	*out = NULL;
	if (!backend || !backend->open || !backend->start || !backend->stop || !backend->read || !backend->close)
		return plumb_fail(status, EINVAL, "incomplete counter backend");
	if (n == 0 || n > COUNTER_MAX_EVENTS)
		return plumb_fail(status, EINVAL, "a counter set takes 1 to %d events, not %zu", COUNTER_MAX_EVENTS, n);
	for (size_t i = 0; i < n; i++)
		if (!events[i] || !events[i][0])
			return plumb_fail(status, EINVAL, "event %zu has no name", i + 1);
	counter_options defaults;
	memset(&defaults, 0, sizeof defaults);
	if (!options)
		options = &defaults;
	if (options->domain != COUNTER_DOMAIN_USER && options->domain != COUNTER_DOMAIN_ALL)
		return plumb_fail(status, EINVAL, "unknown counting domain");
	counter_set *set = calloc(1, sizeof *set);
	if (!set)
		return plumb_fail(status, ENOMEM, "out of memory");
	set->backend = backend;
	set->n = n;
	set->names = calloc(n, sizeof *set->names);
	set->opened = calloc(n, sizeof *set->opened);
	if (!set->names || !set->opened)
		goto out_of_memory;
	for (size_t i = 0; i < n; i++)
		if (!(set->names[i] = strdup(events[i])))
			goto out_of_memory;
	for (size_t i = 0; i < n; i++)
		counter_value_unsupported(&set->opened[i], "the %s backend did not report this event", backend->name);
	if (backend->open(&set->instance, (const char *const *)set->names, n, options, set->opened, status) != 0) {
		set->instance = NULL;
		counter_close(set);
		return -1;
	}
	*out = set;
	return 0;
out_of_memory:
	counter_close(set);
	return plumb_fail(status, ENOMEM, "out of memory");
}

int counter_set_open(counter_set **out, const char *backend, const char *const *events, size_t n,
                     const counter_options *options, plumb_status *status)
{
	*out = NULL;
	const counter_backend *table = counter_backend_find(backend, status);
	return table ? counter_set_open_backend(out, table, events, n, options, status) : -1;
}

int counter_start(counter_set *set, plumb_status *status)
{
	if (!set)
		return plumb_fail(status, EINVAL, "no counter set");
	if (set->backend->start(set->instance, status) != 0)
		return -1;
	set->started = true;
	return 0;
}

int counter_stop(counter_set *set, plumb_status *status)
{
	if (!set)
		return plumb_fail(status, EINVAL, "no counter set");
	return set->backend->stop(set->instance, status);
}

int counter_pause(counter_set *set)
{
	if (!set || !set->backend->pause)
		return -1;
	return set->backend->pause(set->instance);
}

int counter_resume(counter_set *set)
{
	if (!set || !set->backend->resume)
		return -1;
	return set->backend->resume(set->instance);
}

int counter_read(counter_set *set, counter_value *values, plumb_status *status)
{
	if (!set || !values)
		return plumb_fail(status, EINVAL, "no counter set or no room for values");
	if (set->backend->read(set->instance, values, status) != 0)
		return -1;
	for (size_t i = 0; i < set->n; i++) {
		/* A backend must never turn an unsupported event into a number. */
		if (set->opened[i].state == COUNTER_UNSUPPORTED) {
			values[i] = set->opened[i];
			values[i].value = NAN;
		} else if (values[i].state == COUNTER_UNSUPPORTED || values[i].state == COUNTER_NOT_COUNTED) {
			values[i].value = NAN;
		}
	}
	return 0;
}

void counter_close(counter_set *set)
{
	if (!set)
		return;
	if (set->instance)
		set->backend->close(set->instance);
	if (set->names)
		for (size_t i = 0; i < set->n; i++)
			free(set->names[i]);
	free(set->names);
	free(set->opened);
	free(set);
}

size_t counter_set_size(const counter_set *set) { return set ? set->n : 0; }

const char *counter_set_event(const counter_set *set, size_t index)
{
	return set && index < set->n ? set->names[index] : NULL;
}

const char *counter_set_backend_name(const counter_set *set) { return set ? set->backend->name : NULL; }

const counter_value *counter_set_opened(const counter_set *set, size_t index)
{
	return set && index < set->n ? &set->opened[index] : NULL;
}

const char *counter_set_read_method(const counter_set *set)
{
	if (!set || !set->backend->read_method)
		return "unknown";
	return set->backend->read_method(set->instance);
}

void *counter_set_backend_instance(const counter_set *set) { return set ? set->instance : NULL; }

/* Opens the one event every machine with working counters can count, a
 * software page-fault counter, and reads its open-time state: the same path
 * a user's run takes, so the answer is what that run would see. */
int counter_backend_usable(const char *name, plumb_status *status)
{
	const char *events[] = { "page-faults" };
	counter_set *set;
	if (counter_set_open(&set, name, events, 1, NULL, status) != 0)
		return -1;
	const counter_value *opened = counter_set_opened(set, 0);
	int rc = 0;
	if (opened->state == COUNTER_UNSUPPORTED)
		rc = plumb_fail(status, ENOTSUP, "%s", opened->reason);
	counter_close(set);
	return rc;
}
