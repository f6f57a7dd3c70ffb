/* Shared by the unit and end-to-end suites: a test that needs a capability
 * this machine may lack asks for it the way a user's run would (a real
 * perf_event_open, PAPI's own component status) and is skipped, with the
 * reason Criterion prints, when it is absent.  Where the capability exists
 * the test runs and must pass. */
#ifndef PLUMB_TESTS_CAPABILITY_H
#define PLUMB_TESTS_CAPABILITY_H

#include <criterion/criterion.h>
#include "plumb/counters.h"

#define REQUIRE_COUNTER_BACKEND(name)                                                         \
	do {                                                                                      \
		plumb_status require_status_;                                                         \
		if (counter_backend_usable((name), &require_status_) != 0)                            \
			cr_skip_test("needs the %s counter backend: %s", (name), require_status_.message); \
	} while (0)

#endif
