#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include "counters/counters.h"
#include "counters_test_pages.h"
#include "../capability.h"

#ifdef PLUMB_HAVE_PAPI

static void papi_count_pages(const char *const *events, size_t n, size_t pages, counter_value *v)
{
	counter_set *set;
	plumb_status status;
	cr_assert_eq(counter_set_open(&set, "papi", events, n, NULL, &status), 0, "%s", status.message);
	char *base = counters_test_map(pages);
	cr_assert_eq(counter_start(set, &status), 0, "%s", status.message);
	counters_test_touch(base, pages);
	cr_assert_eq(counter_stop(set, &status), 0, "%s", status.message);
	cr_assert_eq(counter_read(set, v, &status), 0, "%s", status.message);
	counters_test_unmap(base, pages);
	counter_close(set);
}

Test(counters_papi, fresh_pages_give_exactly_that_many_faults)
{
	/* The same event by its PAPI native name and by its perf name. */
	REQUIRE_COUNTER_BACKEND("papi");
	const char *events[] = { "perf::PAGE-FAULTS", "minor-faults", "perf::MAJOR-FAULTS" };
	size_t sizes[] = { 1, 100, 5000 };
	for (size_t s = 0; s < 3; s++) {
		counter_value v[3];
		papi_count_pages(events, 3, sizes[s], v);
		for (int i = 0; i < 3; i++)
			cr_assert_eq(v[i].state, COUNTER_OK, "%s: %s", events[i], v[i].reason);
		cr_assert_eq(v[0].raw, sizes[s], "PAPI perf::PAGE-FAULTS %llu for %zu pages",
		             (unsigned long long)v[0].raw, sizes[s]);
		cr_assert_eq(v[1].raw, sizes[s]);
		cr_assert_eq(v[2].raw, 0);
	}
}

Test(counters_papi, unavailable_presets_are_unsupported_with_papi_reason)
{
	REQUIRE_COUNTER_BACKEND("papi");
	const char *events[] = { "PAPI_L1_DCM", "page-faults", "PAPI_NOT_AN_EVENT", "cycles" };
	counter_value v[4];
	papi_count_pages(events, 4, 10, v);
	cr_assert_eq(v[1].state, COUNTER_OK, "%s", v[1].reason);
	cr_assert_eq(v[1].raw, 10);
	counter_environment env;
	counter_environment_read(&env);
	if (env.cpu_pmu_present)
		cr_skip_test("a PMU is present; presets may count");
	size_t bad[] = { 0, 2, 3 };
	for (size_t k = 0; k < 3; k++) {
		cr_assert_eq(v[bad[k]].state, COUNTER_UNSUPPORTED, "%s", events[bad[k]]);
		cr_assert(isnan(v[bad[k]].value));
		cr_assert(strstr(v[bad[k]].reason, "PAPI_"), "%s", v[bad[k]].reason);
	}
}

static void *thread_counts(void *argument)
{
	const char *events[] = { "perf::PAGE-FAULTS" };
	counter_value *v = argument;
	papi_count_pages(events, 1, 77, v);
	return NULL;
}

Test(counters_papi, each_thread_counts_itself)
{
	REQUIRE_COUNTER_BACKEND("papi");
	pthread_t threads[2];
	counter_value v[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, thread_counts, &v[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(v[i].state, COUNTER_OK, "%s", v[i].reason);
		cr_assert_eq(v[i].raw, 77);
	}
}

/* Where PAPI's perf_event component is disabled (libpfm4 4.13 on AMD family
 * 26), PAPI counts nothing: the backend says so once, naming the component,
 * its reason and what to use instead, rather than failing every event with
 * "Component containing event is disabled (-25)". */
Test(counters_papi, a_disabled_component_is_named_once_with_what_would_help)
{
	plumb_status status;
	if (counter_backend_usable("papi", &status) == 0)
		cr_skip_test("PAPI counts here: its perf_event component is enabled");
	const char *events[] = { "perf::PAGE-FAULTS", "minor-faults", "PAPI_L1_DCM" };
	counter_set *set;
	cr_assert_neq(counter_set_open(&set, "papi", events, 3, NULL, &status), 0);
	cr_assert(strstr(status.message, "perf_event component is disabled"), "%s", status.message);
	cr_assert(strstr(status.message, "family"), "%s", status.message);
	cr_assert(strstr(status.message, "--backend perf"), "%s", status.message);
	cr_assert_null(strstr(status.message, "(-25)"), "%s", status.message);
	cr_assert_null(strstr(status.message, "does not exist"), "%s", status.message);
}

#else

Test(counters_papi, built_without_papi_says_so)
{
	const char *events[] = { "page-faults" };
	counter_set *set;
	plumb_status status;
	cr_assert_neq(counter_set_open(&set, "papi", events, 1, NULL, &status), 0);
	cr_assert(strstr(status.message, "built without PAPI"), "%s", status.message);
}

#endif
