#include <criterion/criterion.h>
#include <string.h>
#include "plumb/counters.h"
#include "counters/perf_events.h"

static perf_event_spec resolve_ok(const char *name)
{
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX] = "";
	cr_assert_eq(perf_event_resolve(name, &spec, reason, sizeof reason), 0, "%s: %s", name, reason);
	return spec;
}

Test(counters_events, software_names_and_aliases)
{
	perf_event_spec s = resolve_ok("page-faults");
	cr_assert_eq(s.attr.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(s.attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	s = resolve_ok("faults");
	cr_assert_eq(s.attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	cr_assert_str_eq(s.canonical, "page-faults");
	s = resolve_ok("cs");
	cr_assert_eq(s.attr.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	s = resolve_ok("minor-faults");
	cr_assert_eq(s.attr.config, PERF_COUNT_SW_PAGE_FAULTS_MIN);
	s = resolve_ok("task-clock");
	cr_assert_eq(s.kind, PERF_EVENT_KIND_SOFTWARE);
}

Test(counters_events, hardware_and_cache_events)
{
	perf_event_spec s = resolve_ok("cycles");
	cr_assert_eq(s.attr.type, PERF_TYPE_HARDWARE);
	cr_assert_eq(s.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	s = resolve_ok("L1-dcache-load-misses");
	cr_assert_eq(s.attr.type, PERF_TYPE_HW_CACHE);
	cr_assert_eq(s.attr.config, PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
	             (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	s = resolve_ok("dTLB-stores");
	cr_assert_eq(s.attr.config, PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
	             (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16));
	s = resolve_ok("LLC-store-misses");
	cr_assert_eq(s.attr.config, PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
	             (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
}

Test(counters_events, raw_events)
{
	perf_event_spec s = resolve_ok("r01c2");
	cr_assert_eq(s.attr.type, PERF_TYPE_RAW);
	cr_assert_eq(s.attr.config, 0x1c2);
	/* ref-cycles starts with r but is a name, not raw hex. */
	s = resolve_ok("ref-cycles");
	cr_assert_eq(s.attr.type, PERF_TYPE_HARDWARE);
	char reason[COUNTER_REASON_MAX];
	cr_assert_neq(perf_event_resolve("r11112222333344445", &s, reason, sizeof reason), 0);
	cr_assert(strstr(reason, "64 bits"), "%s", reason);
}

Test(counters_events, presets_through_the_catalogue)
{
	perf_event_spec s = resolve_ok("PAPI_L1_DCM");
	cr_assert_eq(s.kind, PERF_EVENT_KIND_PRESET);
	cr_assert_eq(s.attr.type, PERF_TYPE_HW_CACHE);
	s = resolve_ok("PAPI_TOT_INS");
	cr_assert_eq(s.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	char reason[COUNTER_REASON_MAX];
	cr_assert_neq(perf_event_resolve("PAPI_CA_INV", &s, reason, sizeof reason), 0);
	cr_assert(strstr(reason, "no perf generic event"), "%s", reason);
	cr_assert_neq(perf_event_resolve("PAPI_NOT_A_THING", &s, reason, sizeof reason), 0);
	cr_assert(strstr(reason, "catalogue"), "%s", reason);
}

Test(counters_events, unknown_and_empty_names_explain)
{
	perf_event_spec s;
	char reason[COUNTER_REASON_MAX];
	cr_assert_neq(perf_event_resolve("no-such-event", &s, reason, sizeof reason), 0);
	cr_assert(strstr(reason, "no-such-event"), "%s", reason);
	cr_assert_neq(perf_event_resolve("", &s, reason, sizeof reason), 0);
}

#ifdef PLUMB_HAVE_PFM
Test(counters_events, natives_through_libpfm4)
{
	perf_event_spec s = resolve_ok("perf::PAGE-FAULTS");
	cr_assert_eq(s.attr.type, PERF_TYPE_SOFTWARE);
	cr_assert_eq(s.attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	cr_assert_eq(s.kind, PERF_EVENT_KIND_NATIVE);
}
#endif

Test(counters_events, papi_spelling_of_perf_names)
{
	char buffer[64];
	cr_assert_str_eq(perf_event_papi_name("page-faults", buffer, sizeof buffer), "perf::PAGE-FAULTS");
	cr_assert_str_eq(perf_event_papi_name("cs", buffer, sizeof buffer), "perf::CONTEXT-SWITCHES");
	cr_assert_str_eq(perf_event_papi_name("L1-dcache-load-misses", buffer, sizeof buffer),
	                 "perf::L1-DCACHE-LOAD-MISSES");
	cr_assert_null(perf_event_papi_name("r1234", buffer, sizeof buffer));
}

static void count_emit(void *argument, const char *name, const char *kind, const char *description)
{
	(void)kind;
	(void)description;
	size_t *count = argument;
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX];
	/* Every listed non-native name resolves back (PAPI presets without a perf
	 * equivalent are listed and explain themselves). */
	if (strcmp(kind, "native") && strcmp(kind, "preset"))
		cr_assert_eq(perf_event_resolve(name, &spec, reason, sizeof reason), 0, "%s: %s", name, reason);
	(*count)++;
}

Test(counters_events, everything_listed_resolves)
{
	size_t count = 0;
	perf_event_list(count_emit, &count, false);
	cr_assert_gt(count, 19 + 42);
}
