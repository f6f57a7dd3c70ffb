/* The simulated source (stub until the simulator counts regions). */
#include <errno.h>
#include <stdio.h>
#include "explain/explain_internal.h"

bool explain_simulation_available(char *reason, size_t size)
{
	snprintf(reason, size, "this plumb's simulator does not count regions yet");
	return false;
}

int explain_simulate_trace(trace_reader *reader, const explain_options *options, explain_result *result,
                           plumb_status *status)
{
	(void)reader, (void)options, (void)result;
	return plumb_fail(status, ENOTSUP, "this plumb's simulator does not count regions yet");
}
