/* Counter values: states, and the multiplexing arithmetic.  Kept apart from
 * any backend so the scaling rule is one function, tested with made-up times
 * (software events are never multiplexed on this machine). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include "counters/counters.h"

const char *counter_state_name(counter_state state)
{
	switch (state) {
	case COUNTER_OK: return "ok";
	case COUNTER_MULTIPLEXED: return "multiplexed";
	case COUNTER_UNSUPPORTED: return "unsupported";
	case COUNTER_NOT_COUNTED: return "not-counted";
	}
	return "unknown";
}

void counter_value_scale(counter_value *value)
{
	if (value->state == COUNTER_UNSUPPORTED) {
		value->value = NAN;
		return;
	}
	value->reason[0] = '\0';
	if (value->time_enabled == 0 && value->time_running == 0) {
		/* The backend cannot tell (PAPI, the simulator): no scaling. */
		value->state = COUNTER_OK;
		value->value = (double)value->raw;
	} else if (value->time_running == 0) {
		value->state = COUNTER_NOT_COUNTED;
		value->value = NAN;
		snprintf(value->reason, sizeof value->reason,
		         "enabled %llu ns but never on a counter (time_running 0)",
		         (unsigned long long)value->time_enabled);
	} else if (value->time_running < value->time_enabled) {
		double fraction = (double)value->time_running / (double)value->time_enabled;
		value->state = COUNTER_MULTIPLEXED;
		value->value = (double)value->raw / fraction;
		snprintf(value->reason, sizeof value->reason,
		         "multiplexed: counted %.1f%% of the time, scaled by %.3f",
		         100.0 * fraction, 1.0 / fraction);
	} else {
		value->state = COUNTER_OK;
		value->value = (double)value->raw;
	}
}

void counter_value_unsupported(counter_value *value, const char *format, ...)
{
	va_list ap;
	value->state = COUNTER_UNSUPPORTED;
	value->raw = 0;
	value->value = NAN;
	value->time_enabled = value->time_running = 0;
	va_start(ap, format);
	vsnprintf(value->reason, sizeof value->reason, format, ap);
	va_end(ap);
}

bool counter_value_usable(const counter_value *value)
{
	return value->state == COUNTER_OK || value->state == COUNTER_MULTIPLEXED;
}
