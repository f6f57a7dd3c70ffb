/* The none backend counts nothing: every event is unsupported.  It is the
 * dry run of a measurement (what would be opened, in which output shape) and
 * the reference for "unsupported is never a number" in the tests. */
#include <stdlib.h>
#include "counters/counters.h"

static int none_open(void **instance, const char *const *events, size_t n, const counter_options *options,
                     counter_value *opened, plumb_status *status)
{
	(void)events;
	(void)options;
	(void)status;
	for (size_t i = 0; i < n; i++)
		counter_value_unsupported(&opened[i], "backend 'none' counts nothing (dry run)");
	/* A non-NULL instance that needs no state. */
	*instance = (void *)&counter_backend_none;
	return 0;
}

static int none_start(void *instance, plumb_status *status) { (void)instance; (void)status; return 0; }
static int none_stop(void *instance, plumb_status *status) { (void)instance; (void)status; return 0; }
static int none_read(void *instance, counter_value *values, plumb_status *status)
{
	/* counter_read() copies the open-time states over these. */
	(void)instance;
	(void)values;
	(void)status;
	return 0;
}
static void none_close(void *instance) { (void)instance; }
static int none_list(void *context, counter_list_fn emit, void *argument, plumb_status *status)
{
	(void)context;
	(void)emit;
	(void)argument;
	(void)status;
	return 0;
}
static const char *none_read_method(void *instance) { (void)instance; return "none"; }

const counter_backend counter_backend_none = {
	.name = "none",
	.description = "counts nothing; every event unsupported (dry run)",
	.open = none_open,
	.start = none_start,
	.stop = none_stop,
	.read = none_read,
	.close = none_close,
	.list = none_list,
	.read_method = none_read_method,
};
