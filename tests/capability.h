/* Shared by the unit and end-to-end suites: a test that needs a capability
 * this machine may lack asks for it the way a user's run would (a real
 * perf_event_open, PAPI's own component status) and is skipped, with the
 * reason Criterion prints, when it is absent.  Where the capability exists
 * the test runs and must pass. */
#ifndef PLUMB_TESTS_CAPABILITY_H
#define PLUMB_TESTS_CAPABILITY_H

#include <criterion/criterion.h>
#include "counters/counters.h"

#define REQUIRE_COUNTER_BACKEND(name)                                                         \
	do {                                                                                      \
		plumb_status require_status_;                                                         \
		if (counter_backend_usable((name), &require_status_) != 0)                            \
			cr_skip_test("needs the %s counter backend: %s", (name), require_status_.message); \
	} while (0)

/* True in the AddressSanitizer build (make sanitize), where the plumb under
 * test is instrumented too: valgrind cannot run it, no libplumb.so is built
 * for preloading, and ASan's shadow memory adds page faults of its own. */
#if defined(__SANITIZE_ADDRESS__)
#define PLUMB_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLUMB_TEST_ASAN 1
#endif
#endif
#ifndef PLUMB_TEST_ASAN
#define PLUMB_TEST_ASAN 0
#endif

#define REQUIRE_NO_ASAN(why)                                                 \
	do {                                                                     \
		if (PLUMB_TEST_ASAN)                                                 \
			cr_skip_test("not in the AddressSanitizer build: %s", (why));  \
	} while (0)

#endif
