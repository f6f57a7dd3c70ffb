#include <criterion/criterion.h>
#include <string.h>
#include "counters/counters.h"
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

/* The exact perf_event_attr encoding of every generic name, as the kernel's
 * uapi header defines it (and perf list spells it): a table, so a name
 * resolving to a wrong but valid event cannot pass. */
Test(counters_events, every_generic_name_has_its_exact_encoding)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } table[] = {
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
		{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
		{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
		{ "L1-dcache-loads", PERF_TYPE_HW_CACHE, 0x00000 },
		{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0x10000 },
		{ "L1-dcache-stores", PERF_TYPE_HW_CACHE, 0x00100 },
		{ "L1-icache-load-misses", PERF_TYPE_HW_CACHE, 0x10001 },
		{ "LLC-loads", PERF_TYPE_HW_CACHE, 0x00002 },
		{ "LLC-load-misses", PERF_TYPE_HW_CACHE, 0x10002 },
		{ "LLC-stores", PERF_TYPE_HW_CACHE, 0x00102 },
		{ "LLC-store-misses", PERF_TYPE_HW_CACHE, 0x10102 },
		{ "dTLB-loads", PERF_TYPE_HW_CACHE, 0x00003 },
		{ "dTLB-load-misses", PERF_TYPE_HW_CACHE, 0x10003 },
		{ "dTLB-store-misses", PERF_TYPE_HW_CACHE, 0x10103 },
		{ "iTLB-load-misses", PERF_TYPE_HW_CACHE, 0x10004 },
		{ "branch-loads", PERF_TYPE_HW_CACHE, 0x00005 },
		{ "branch-load-misses", PERF_TYPE_HW_CACHE, 0x10005 },
		{ "r0", PERF_TYPE_RAW, 0 },
		{ "r53003c", PERF_TYPE_RAW, 0x53003c },
		{ "rffffffffffffffff", PERF_TYPE_RAW, UINT64_MAX },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		perf_event_spec s;
		char reason[COUNTER_REASON_MAX] = "";
		cr_assert_eq(perf_event_resolve(table[i].name, &s, reason, sizeof reason), 0, "%s: %s", table[i].name,
		             reason);
		cr_assert_eq(s.attr.type, table[i].type, "%s: type %u", table[i].name, s.attr.type);
		cr_assert_eq(s.attr.config, table[i].config, "%s: config %#llx", table[i].name,
		             (unsigned long long)s.attr.config);
	}
}

/* Presets resolve to the generic event the catalogue names, exactly. */
Test(counters_events, presets_resolve_to_their_exact_generic_event)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } table[] = {
		{ "PAPI_TOT_INS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "PAPI_TOT_CYC", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "PAPI_BR_MSP", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "PAPI_L1_DCM", PERF_TYPE_HW_CACHE, 0x10000 },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		perf_event_spec s = resolve_ok(table[i].name);
		cr_assert_eq(s.kind, PERF_EVENT_KIND_PRESET, "%s", table[i].name);
		cr_assert_eq(s.attr.type, table[i].type, "%s: type %u", table[i].name, s.attr.type);
		cr_assert_eq(s.attr.config, table[i].config, "%s: config %#llx", table[i].name,
		             (unsigned long long)s.attr.config);
	}
	perf_event_spec s;
	char reason[COUNTER_REASON_MAX] = "";
	cr_assert_neq(perf_event_resolve("no-such-event", &s, reason, sizeof reason), 0);
#ifdef PLUMB_HAVE_PFM
	cr_assert_str_eq(reason, "unknown event 'no-such-event' (libpfm4: event not found)");
#else
	cr_assert(strncmp(reason, "unknown event 'no-such-event'", 29) == 0, "%s", reason);
#endif
}
