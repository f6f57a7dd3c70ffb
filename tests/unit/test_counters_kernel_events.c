/* The event names the running kernel defines, spelt as perf spells them:
 * PMU/TERMS/ through a sysfs tree, SUBSYS:NAME through tracefs, and
 * duration_time.  The trees here are recorded copies (an Intel core PMU's
 * format files, the msr PMU, a tracefs events folder), so the encodings are
 * checked on any machine; the last tests count through the real ones when
 * this machine has them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "counters/counters.h"
#include "counters/perf_events.h"
#include "../temp_folder.h"

static char root[300];

static void put(const char *relative, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, relative);
	/* make every parent folder */
	for (char *slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* As Linux 6.x writes them for an Intel core PMU and the msr PMU. */
static void recorded_tree(void)
{
	/* removed when the test's process exits, skipped or not */
	snprintf(root, sizeof root, "%s", temp_folder("plumb-kernel-events"));
	put("pmus/cpu/type", "4");
	put("pmus/cpu/format/event", "config:0-7");
	put("pmus/cpu/format/umask", "config:8-15");
	put("pmus/cpu/format/edge", "config:18");
	put("pmus/cpu/format/cmask", "config:24-31");
	put("pmus/cpu/format/ldlat", "config1:0-15");
	put("pmus/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3");
	put("pmus/msr/type", "11");
	put("pmus/msr/format/event", "config:0-63");
	put("pmus/msr/events/tsc", "event=0x00");
	put("pmus/msr/events/aperf", "event=0x01");
	put("tracing/events/sched/sched_switch/id", "314");
}

TestSuite(counters_kernel_events, .init = recorded_tree);

static int pmu(const char *name, perf_event_spec *spec, char *reason)
{
	char pmus[512];
	snprintf(pmus, sizeof pmus, "%s/pmus", root);
	return perf_event_resolve_pmu(pmus, name, spec, reason, COUNTER_REASON_MAX);
}

Test(counters_kernel_events, terms_are_placed_by_the_format_files)
{
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX] = "";
	cr_assert_eq(pmu("cpu/event=0x3c,umask=0x1/", &spec, reason), 0, "%s", reason);
	cr_assert_eq(spec.attr.type, 4);
	cr_assert_eq(spec.attr.config, 0x13c);
	cr_assert_eq(spec.kind, PERF_EVENT_KIND_PMU);
	cr_assert_eq(pmu("cpu/event=60,edge,cmask=2/", &spec, reason), 0, "%s", reason);   /* decimal; a bare term is 1 */
	cr_assert_eq(spec.attr.config, 0x0204003cULL);
	/* An alias expands to its terms, one of them in config1. */
	cr_assert_eq(pmu("cpu/mem-loads/", &spec, reason), 0, "%s", reason);
	cr_assert_eq(spec.attr.config, 0x1cd);
	cr_assert_eq(spec.attr.config1, 3);
	cr_assert_eq(pmu("msr/tsc/", &spec, reason), 0, "%s", reason);
	cr_assert_eq(spec.attr.type, 11);
	cr_assert_eq(spec.attr.config, 0);
	cr_assert_str_eq(spec.canonical, "msr/tsc/");
	cr_assert_eq(pmu("msr/aperf/", &spec, reason), 0, "%s", reason);
	cr_assert_eq(spec.attr.config, 1);
}

Test(counters_kernel_events, bad_terms_say_what_is_wrong)
{
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX] = "";
	cr_assert_eq(pmu("nope/tsc/", &spec, reason), -1);
	cr_assert(strstr(reason, "no PMU 'nope'"), "%s", reason);
	cr_assert_eq(pmu("cpu/frobnicate=1/", &spec, reason), -1);
	cr_assert(strstr(reason, "no term 'frobnicate'"), "%s", reason);
	cr_assert_eq(pmu("cpu/event=0x1ff/", &spec, reason), -1);   /* 9 bits into 8 */
	cr_assert(strstr(reason, "does not fit"), "%s", reason);
	cr_assert_eq(pmu("cpu/event=-1/", &spec, reason), -1);
	cr_assert(strstr(reason, "not a number"), "%s", reason);
	cr_assert_eq(pmu("cpu/event=0x3c/extra/", &spec, reason), -1);
	cr_assert_eq(pmu("../cpu/event=1/", &spec, reason), -1);   /* no way out of the folder */
	cr_assert(strstr(reason, "not a PMU name"), "%s", reason);
	cr_assert_eq(pmu("../pmus/cpu/", &spec, reason), -1);
	cr_assert(strstr(reason, "not a PMU name"), "%s", reason);
	cr_assert_eq(pmu("cpu/../../x/", &spec, reason), -1);
	cr_assert_eq(pmu("cpu/../", &spec, reason), -1);
	/* Not this syntax at all: left to the other resolvers. */
	cr_assert_eq(pmu("page-faults", &spec, reason), 1);
	cr_assert_eq(pmu("icx::L1D:REPLACEMENT", &spec, reason), 1);
}

Test(counters_kernel_events, tracepoints_are_found_by_their_tracefs_id)
{
	char tracing[512], missing[512];
	snprintf(tracing, sizeof tracing, "%s/tracing", root);
	snprintf(missing, sizeof missing, "%s/not-mounted", root);
	const char *roots[] = { missing, tracing };
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX] = "";
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 2, "sched:sched_switch", &spec, reason, sizeof reason), 0);
	cr_assert_eq(spec.attr.type, PERF_TYPE_TRACEPOINT);
	cr_assert_eq(spec.attr.config, 314);
	cr_assert_eq(spec.kind, PERF_EVENT_KIND_TRACEPOINT);
	/* Unknown: not resolved, with the reason kept for the last word. */
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 2, "sched:nope", &spec, reason, sizeof reason), 1);
	cr_assert(strstr(reason, "no tracepoint sched:nope"), "%s", reason);
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 1, "sched:sched_switch", &spec, reason, sizeof reason), 1);
	cr_assert(strstr(reason, "tracefs is not mounted"), "%s", reason);
	/* libpfm4's spellings are not tracepoints. */
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 2, "icx::L1D", &spec, reason, sizeof reason), 1);
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 2, "a:b:c", &spec, reason, sizeof reason), 1);
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 2, "../x:y", &spec, reason, sizeof reason), 1);
	cr_assert_eq(perf_event_resolve_tracepoint(roots, 2, "..:sched", &spec, reason, sizeof reason), 1);
}

/* duration_time: perf's tool event, wall time while the set counts. */
Test(counters_kernel_events, duration_time_is_the_wall_time_while_counting)
{
	const char *events[] = { "duration_time", "task-clock" };
	counter_set *set;
	plumb_status status;
	cr_assert_eq(counter_set_open(&set, "perf", events, 2, NULL, &status), 0, "%s", status.message);
	cr_assert_eq(counter_start(set, &status), 0, "%s", status.message);
	usleep(20000);   /* asleep: wall time passes, task-clock hardly */
	cr_assert_eq(counter_stop(set, &status), 0, "%s", status.message);
	counter_value values[2];
	cr_assert_eq(counter_read(set, values, &status), 0, "%s", status.message);
	cr_assert_eq(values[0].state, COUNTER_OK, "%s", values[0].reason);
	cr_assert_geq(values[0].value, 20e6);
	if (values[1].state == COUNTER_OK)
		cr_assert_gt(values[0].value, values[1].value);
	/* Stopped: it does not grow. */
	usleep(5000);
	counter_value again[2];
	cr_assert_eq(counter_read(set, again, &status), 0);
	cr_assert_eq(again[0].value, values[0].value);
	counter_close(set);
}

/* On this machine's own kernel, where it has the msr PMU (most x86 Linux,
 * VMs included): the TSC counts with no hardware PMU. */
Test(counters_kernel_events, msr_tsc_counts_where_the_kernel_has_it)
{
	if (access("/sys/bus/event_source/devices/msr/events/tsc", R_OK) != 0)
		cr_skip_test("this kernel has no msr PMU with a tsc event");
	const char *events[] = { "msr/tsc/" };
	counter_set *set;
	plumb_status status;
	cr_assert_eq(counter_set_open(&set, "perf", events, 1, NULL, &status), 0, "%s", status.message);
	counter_value value;
	cr_assert_eq(counter_start(set, &status), 0);
	usleep(1000);
	cr_assert_eq(counter_stop(set, &status), 0);
	cr_assert_eq(counter_read(set, &value, &status), 0);
	if (value.state == COUNTER_UNSUPPORTED)
		cr_skip_test("msr/tsc/ does not open here: %s", value.reason);
	cr_assert_eq(value.state, COUNTER_OK, "%s", value.reason);
	cr_assert_gt(value.value, 0);
	counter_close(set);
}
