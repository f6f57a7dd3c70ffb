/* The counters' "sim" backend (plumb/counters.h): the same event names as
 * the hardware backends (PAPI_L1_DCM, PAPI_CA_INV, ...), answered by the
 * simulator from the address stream of the counted region.  The caller owns
 * the simulator (options->backend_context) and feeds the region's references
 * with sim_counter_feed() or sim_access_batch(); start() takes a baseline
 * and read() returns the counts since then, so one simulator can serve
 * several sets and keep its cache contents across regions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "counters/counters.h"
#include "sim/sim_state.h"

typedef struct sim_counter_instance {
	sim *simulator;
	size_t n;
	char (*names)[64];
	bool *supported;
	uint64_t *baseline, *frozen;
	bool running, stopped;
} sim_counter_instance;

static void instance_free(sim_counter_instance *c)
{
	if (!c)
		return;
	free(c->names);
	free(c->supported);
	free(c->baseline);
	free(c->frozen);
	free(c);
}

static int sim_backend_open(void **out, const char *const *events, size_t n, const counter_options *options,
                            counter_value *opened, plumb_status *status)
{
	*out = NULL;
	if (!options || !options->backend_context)
		return plumb_fail(status, EINVAL, "the sim backend needs a simulator (counter_options.backend_context)");
	sim_counter_instance *c = calloc(1, sizeof *c);
	if (!c)
		return plumb_fail_errno(status, ENOMEM, "sim backend");
	c->simulator = options->backend_context;
	c->n = n;
	c->names = calloc(n ? n : 1, sizeof *c->names);
	c->supported = calloc(n ? n : 1, sizeof *c->supported);
	c->baseline = calloc(n ? n : 1, sizeof *c->baseline);
	c->frozen = calloc(n ? n : 1, sizeof *c->frozen);
	if (!c->names || !c->supported || !c->baseline || !c->frozen) {
		instance_free(c);
		return plumb_fail_errno(status, ENOMEM, "sim backend");
	}
	for (size_t i = 0; i < n; i++) {
		memset(&opened[i], 0, sizeof opened[i]);
		snprintf(c->names[i], sizeof c->names[i], "%s", events[i]);
		uint64_t value;
		plumb_status why;
		plumb_status_clear(&why);
		if (strlen(events[i]) >= sizeof c->names[i]) {
			counter_value_unsupported(&opened[i], "event name too long for the simulator");
		} else if (sim_event_count(c->simulator, events[i], -1, &value, &why) != 0) {
			counter_value_unsupported(&opened[i], "%s", why.message);
		} else {
			c->supported[i] = true;
			opened[i].state = COUNTER_OK;
		}
	}
	*out = c;
	return 0;
}

static void snapshot(const sim_counter_instance *c, uint64_t *values)
{
	for (size_t i = 0; i < c->n; i++) {
		values[i] = 0;
		if (c->supported[i])
			sim_event_count(c->simulator, c->names[i], -1, &values[i], NULL);
	}
}

static int sim_backend_start(void *instance, plumb_status *status)
{
	(void)status;
	sim_counter_instance *c = instance;
	snapshot(c, c->baseline);
	c->running = true;
	c->stopped = false;
	return 0;
}

static int sim_backend_stop(void *instance, plumb_status *status)
{
	(void)status;
	sim_counter_instance *c = instance;
	if (c->running)
		snapshot(c, c->frozen);
	c->running = false;
	c->stopped = true;
	return 0;
}

static int sim_backend_read(void *instance, counter_value *values, plumb_status *status)
{
	(void)status;
	sim_counter_instance *c = instance;
	uint64_t *now = malloc((c->n ? c->n : 1) * sizeof *now);
	if (!now)
		return plumb_fail_errno(status, ENOMEM, "sim backend");
	if (c->running)
		snapshot(c, now);
	else
		memcpy(now, c->frozen, c->n * sizeof *now);
	for (size_t i = 0; i < c->n; i++) {
		counter_value *v = &values[i];
		if (!c->supported[i])
			continue;   /* counter_read() keeps the open-time reason */
		memset(v, 0, sizeof *v);
		if (!c->running && !c->stopped) {
			v->state = COUNTER_NOT_COUNTED;
			v->value = 0.0 / 0.0;
			snprintf(v->reason, sizeof v->reason, "never started");
			continue;
		}
		v->raw = now[i] - c->baseline[i];
		v->time_enabled = v->time_running = 0;   /* the simulator has no time */
		counter_value_scale(v);
	}
	free(now);
	return 0;
}

static void sim_backend_close(void *instance)
{
	instance_free(instance);
}

static int sim_backend_list(void *context, counter_list_fn emit, void *argument, plumb_status *status)
{
	(void)context;
	(void)status;
	for (size_t i = 0; sim_event_name(i); i++)
		emit(argument, sim_event_name(i), "simulated", sim_event_description(sim_event_name(i)));
	return 0;
}

static const char *sim_backend_read_method(void *instance)
{
	(void)instance;
	return "simulated";
}

const counter_backend counter_backend_sim = {
	.name = "sim",
	.description = "the cache/TLB/coherence simulator, fed the region's address stream",
	.open = sim_backend_open,
	.start = sim_backend_start,
	.stop = sim_backend_stop,
	.read = sim_backend_read,
	.close = sim_backend_close,
	.list = sim_backend_list,
	.read_method = sim_backend_read_method,
};

int sim_counter_feed(void *instance, const trace_record *records, size_t n, plumb_status *status)
{
	sim_counter_instance *c = instance;
	if (!c || !c->simulator)
		return plumb_fail(status, EINVAL, "sim_counter_feed: not a sim backend instance");
	if (!c->running)
		return plumb_fail(status, EINVAL, "sim_counter_feed: the counter set is not started");
	return sim_access_batch(c->simulator, records, n, status);
}
