#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>
#include "counters/counters.h"
#include "counters_test_pages.h"

static counter_set *open_or_fail(const char *backend, const char *const *events, size_t n,
                                 const counter_options *options)
{
	counter_set *set;
	plumb_status status;
	cr_assert_eq(counter_set_open(&set, backend, events, n, options, &status), 0, "%s", status.message);
	return set;
}

static void count_fresh_pages(counter_set *set, size_t pages, counter_value *values)
{
	plumb_status status;
	char *base = counters_test_map(pages);
	cr_assert_not_null(base);
	cr_assert_eq(counter_start(set, &status), 0, "%s", status.message);
	counters_test_touch(base, pages);
	cr_assert_eq(counter_stop(set, &status), 0, "%s", status.message);
	cr_assert_eq(counter_read(set, values, &status), 0, "%s", status.message);
	counters_test_unmap(base, pages);
}

Test(counters_perf, fresh_pages_give_exactly_that_many_minor_faults)
{
	const char *events[] = { "minor-faults", "page-faults", "major-faults" };
	counter_set *set = open_or_fail("perf", events, 3, NULL);
	size_t sizes[] = { 1, 10, 1000, 20000 };
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		counter_value v[3];
		count_fresh_pages(set, sizes[s], v);
		for (int i = 0; i < 3; i++)
			cr_assert_eq(v[i].state, COUNTER_OK, "%s: %s", events[i], v[i].reason);
		cr_assert_eq(v[0].raw, sizes[s], "minor-faults %llu for %zu pages", (unsigned long long)v[0].raw, sizes[s]);
		cr_assert_eq(v[1].raw, sizes[s]);
		cr_assert_eq(v[2].raw, 0);
		cr_assert_eq(v[0].value, (double)sizes[s]);
	}
	cr_assert_str_eq(counter_set_read_method(set), "read()");
	counter_close(set);
}

Test(counters_perf, software_events_share_one_group)
{
	/* One group: the kernel schedules the members together, so they report
	 * the same enabled and running times from one read(). */
	const char *events[] = { "task-clock", "page-faults", "context-switches", "cpu-migrations" };
	counter_set *set = open_or_fail("perf", events, 4, NULL);
	counter_value v[4];
	count_fresh_pages(set, 100, v);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(v[i].state, COUNTER_OK, "%s: %s", events[i], v[i].reason);
		cr_assert_eq(v[i].time_enabled, v[0].time_enabled);
		cr_assert_eq(v[i].time_running, v[0].time_running);
	}
	cr_assert_gt(v[0].raw, 0, "task-clock counted nothing");
	cr_assert_eq(v[1].raw, 100, "page-faults %llu", (unsigned long long)v[1].raw);
	counter_close(set);
}

Test(counters_perf, ungrouped_events_count_the_same)
{
	const char *events[] = { "page-faults", "minor-faults" };
	counter_options options = { .no_group = true };
	counter_set *set = open_or_fail("perf", events, 2, &options);
	counter_value v[2];
	count_fresh_pages(set, 300, v);
	cr_assert_eq(v[0].raw, 300);
	cr_assert_eq(v[1].raw, 300);
	counter_close(set);
}

Test(counters_perf, reads_while_running_and_restarts_from_zero)
{
	const char *events[] = { "page-faults" };
	counter_set *set = open_or_fail("perf", events, 1, NULL);
	plumb_status status;
	char *base = counters_test_map(200);
	counter_value v;
	/* A dry run first: counter_read and counter_stop run inside counted
	 * windows below, so their first execution (lazy binding of read(), the
	 * resolver's stack) must not be the counted one. */
	cr_assert_eq(counter_start(set, &status), 0);
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(counter_stop(set, &status), 0);
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(counter_start(set, &status), 0);
	counters_test_touch(base, 50);
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(v.raw, 50, "%llu", (unsigned long long)v.raw);
	counters_test_touch(base + 50 * sysconf(_SC_PAGESIZE), 70);
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(v.raw, 120, "%llu", (unsigned long long)v.raw);
	cr_assert_eq(counter_start(set, &status), 0);   /* start again resets */
	counters_test_touch(base + 120 * sysconf(_SC_PAGESIZE), 80);
	cr_assert_eq(counter_stop(set, &status), 0);
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(v.raw, 80, "%llu", (unsigned long long)v.raw);
	counters_test_unmap(base, 200);
	counter_close(set);
}

Test(counters_perf, never_started_is_not_counted)
{
	const char *events[] = { "page-faults" };
	counter_set *set = open_or_fail("perf", events, 1, NULL);
	counter_value v;
	plumb_status status;
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(v.state, COUNTER_NOT_COUNTED);
	cr_assert(isnan(v.value));
	counter_close(set);
}

Test(counters_perf, hardware_events_are_unsupported_with_a_reason_and_do_not_stop_the_rest)
{
	counter_environment env;
	counter_environment_read(&env);
	if (env.cpu_pmu_present)
		cr_skip_test("this machine has a cpu PMU; the no-PMU path cannot be shown here");
	const char *events[] = { "cycles", "page-faults", "L1-dcache-load-misses", "PAPI_TLB_DM", "r00c0",
	                         "PAPI_CA_INV", "no-such-event" };
	counter_set *set = open_or_fail("perf", events, 7, NULL);
	counter_value v[7];
	count_fresh_pages(set, 64, v);
	cr_assert_eq(v[1].state, COUNTER_OK);
	cr_assert_eq(v[1].raw, 64);
	size_t unsupported[] = { 0, 2, 3, 4, 5, 6 };
	for (size_t k = 0; k < 6; k++) {
		counter_value *u = &v[unsupported[k]];
		cr_assert_eq(u->state, COUNTER_UNSUPPORTED, "%s", events[unsupported[k]]);
		cr_assert(isnan(u->value), "%s has a number", events[unsupported[k]]);
		cr_assert_gt(strlen(u->reason), 10, "%s: no reason", events[unsupported[k]]);
	}
	cr_assert(strstr(v[0].reason, "no PMU"), "%s", v[0].reason);
	cr_assert(strstr(v[0].reason, "ENOENT"), "%s", v[0].reason);
	cr_assert(strstr(v[5].reason, "no perf generic event"), "%s", v[5].reason);
	cr_assert(strstr(v[6].reason, "unknown event"), "%s", v[6].reason);
	counter_close(set);
}

#ifdef PLUMB_HAVE_PFM
Test(counters_perf, native_names_count_through_libpfm4)
{
	const char *events[] = { "perf::PAGE-FAULTS", "amd64_fam19h_zen4::RETIRED_INSTRUCTIONS" };
	counter_set *set = open_or_fail("perf", events, 2, NULL);
	counter_value v[2];
	count_fresh_pages(set, 33, v);
	cr_assert_eq(v[0].state, COUNTER_OK, "%s", v[0].reason);
	cr_assert_eq(v[0].raw, 33);
	counter_environment env;
	counter_environment_read(&env);
	if (!env.cpu_pmu_present)
		cr_assert_eq(v[1].state, COUNTER_UNSUPPORTED);
	counter_close(set);
}
#endif

Test(counters_perf, inherited_counting_follows_children)
{
	/* inherit=1: a child forked after open is counted into the parent's
	 * events.  The child touches 500 fresh pages; the parent touches none. */
	const char *events[] = { "minor-faults" };
	counter_options options = { .inherit = true };
	counter_set *set = open_or_fail("perf", events, 1, &options);
	plumb_status status;
	char *base = counters_test_map(500);
	cr_assert_eq(counter_start(set, &status), 0, "%s", status.message);
	pid_t child = fork();
	if (child == 0) {
		counters_test_touch(base, 500);
		_exit(0);
	}
	int wstatus;
	waitpid(child, &wstatus, 0);
	cr_assert_eq(counter_stop(set, &status), 0);
	counter_value v;
	cr_assert_eq(counter_read(set, &v, &status), 0, "%s", status.message);
	cr_assert_eq(v.state, COUNTER_OK, "%s", v.reason);
	/* The child's 500 plus the copy-on-write faults fork causes (stack, libc data). */
	cr_assert_geq(v.raw, 500);
	cr_assert_lt(v.raw, 700);
	counters_test_unmap(base, 500);
	counter_close(set);
}

Test(counters_set, bad_input_is_refused)
{
	counter_set *set;
	plumb_status status;
	const char *events[] = { "page-faults", "" };
	cr_assert_neq(counter_set_open(&set, "perf", events, 0, NULL, &status), 0);
	cr_assert_neq(counter_set_open(&set, "perf", events, 2, NULL, &status), 0);
	cr_assert(strstr(status.message, "no name"), "%s", status.message);
	cr_assert_neq(counter_set_open(&set, "bogus", events, 1, NULL, &status), 0);
	cr_assert(strstr(status.message, "unknown counter backend"), "%s", status.message);
	cr_assert_neq(counter_set_open(&set, "sim", events, 1, NULL, &status), 0);
	cr_assert(strstr(status.message, "counter_set_open_backend"), "%s", status.message);
	cr_assert_null(set);
}

Test(counters_set, event_list_parsing)
{
	char storage[128];
	const char *names[COUNTER_MAX_EVENTS];
	size_t n;
	plumb_status status;
	cr_assert_eq(counter_event_list_parse("PAPI_L1_DCM,page-faults", storage, sizeof storage, names, &n, &status), 0);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(names[0], "PAPI_L1_DCM");
	cr_assert_str_eq(names[1], "page-faults");
	cr_assert_neq(counter_event_list_parse("a,,b", storage, sizeof storage, names, &n, &status), 0);
	cr_assert_neq(counter_event_list_parse("a,", storage, sizeof storage, names, &n, &status), 0);
	cr_assert_neq(counter_event_list_parse("", storage, sizeof storage, names, &n, &status), 0);
}

Test(counters_set, none_backend_reports_everything_unsupported)
{
	const char *events[] = { "page-faults", "cycles" };
	counter_set *set = open_or_fail("none", events, 2, NULL);
	counter_value v[2];
	count_fresh_pages(set, 5, v);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(v[i].state, COUNTER_UNSUPPORTED);
		cr_assert(isnan(v[i].value));
		cr_assert(strstr(v[i].reason, "none"));
	}
	counter_close(set);
}

/* A fake backend that claims to have counted an event open() marked
 * unsupported: the set must not let the number through. */
static int lying_open(void **instance, const char *const *events, size_t n, const counter_options *options,
                      counter_value *opened, plumb_status *status)
{
	(void)events; (void)options; (void)status;
	for (size_t i = 0; i < n; i++)
		counter_value_unsupported(&opened[i], "lying backend: nothing works");
	*instance = (void *)1;
	return 0;
}
static int lying_nothing(void *instance, plumb_status *status) { (void)instance; (void)status; return 0; }
static int lying_read(void *instance, counter_value *values, plumb_status *status)
{
	(void)instance; (void)status;
	values[0] = (counter_value){ .state = COUNTER_OK, .raw = 42, .value = 42 };
	return 0;
}
static void lying_close(void *instance) { (void)instance; }

Test(counters_set, unsupported_is_never_a_number_whatever_the_backend_says)
{
	const counter_backend lying = { .name = "lying", .open = lying_open, .start = lying_nothing,
	                                .stop = lying_nothing, .read = lying_read, .close = lying_close };
	const char *events[] = { "x" };
	counter_set *set;
	plumb_status status;
	cr_assert_eq(counter_set_open_backend(&set, &lying, events, 1, NULL, &status), 0);
	counter_value v;
	cr_assert_eq(counter_read(set, &v, &status), 0);
	cr_assert_eq(v.state, COUNTER_UNSUPPORTED);
	cr_assert(isnan(v.value));
	cr_assert_str_eq(counter_set_read_method(set), "unknown");
	counter_close(set);
}

Test(counters_calibration, empty_region_counts_no_software_events)
{
	/* Nothing happens between start and stop, so no page faults and no
	 * context switches can be counted; a non-zero bias would be the
	 * interface's own doing. */
	const char *events[] = { "page-faults", "cycles" };
	counter_calibration c;
	plumb_status status;
	cr_assert_eq(counter_calibrate("perf", events, 2, NULL, 200, &c, &status), 0, "%s", status.message);
	cr_assert_eq(c.iterations, 200);
	cr_assert_eq(c.bias[0].state, COUNTER_OK);
	cr_assert_eq(c.bias[0].max, 0.0);
	counter_environment env;
	counter_environment_read(&env);
	if (!env.cpu_pmu_present) {
		cr_assert_eq(c.bias[1].state, COUNTER_UNSUPPORTED);
		cr_assert(isnan(c.bias[1].mean));
	}
	/* page-faults opened: starting, stopping and reading it are system calls,
	 * which cost more than the timer around them */
	cr_assert_eq(c.cost_state, COUNTER_OK, "%s", c.cost_reason);
	cr_assert_gt(c.start_ns, 0);
	cr_assert_gt(c.stop_ns, 0);
	cr_assert_gt(c.read_ns, 0);
	cr_assert_str_eq(c.read_method, "read()");
	cr_assert_neq(counter_calibrate("perf", events, 2, NULL, 1, &c, &status), 0);
}

/* With no event open, start/stop/read do nothing, and their cost was once
 * reported as 0 ns (a clamp turned the timer's noise into "free"). */
Test(counters_calibration, nothing_opened_has_no_cost_to_report)
{
	const char *events[] = { "no-such-event-anywhere" };
	counter_calibration c;
	plumb_status status;
	cr_assert_eq(counter_calibrate("perf", events, 1, NULL, 200, &c, &status), 0, "%s", status.message);
	cr_assert_eq(c.bias[0].state, COUNTER_UNSUPPORTED);
	cr_assert_eq(c.cost_state, COUNTER_UNSUPPORTED);
	cr_assert(isnan(c.start_ns) && isnan(c.stop_ns) && isnan(c.read_ns));
	cr_assert(strncmp(c.cost_reason, "no event opened: unknown event 'no-such-event-anywhere'", 55) == 0, "%s",
	          c.cost_reason);
}

/* perf_event_paranoid 2 lets an unprivileged user count user space only.
 * Running as root, a child that drops to "nobody" shows both sides: kernel
 * counting refused with the level explained, user counting exact. */
Test(counters_perf, paranoid_level_refuses_kernel_counting_with_the_reason)
{
	counter_environment env;
	counter_environment_read(&env);
	if (geteuid() != 0 || env.perf_event_paranoid < 2)
		cr_skip_test("needs root (to drop privileges) and perf_event_paranoid >= 2 (it is %d)",
		             env.perf_event_paranoid);
	pid_t child = fork();
	if (child == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		const char *events[] = { "page-faults" };
		counter_options all = { .domain = COUNTER_DOMAIN_ALL };
		counter_set *set;
		plumb_status status;
		if (counter_set_open(&set, "perf", events, 1, &all, &status) != 0)
			_exit(11);
		const counter_value *opened = counter_set_opened(set, 0);
		if (opened->state != COUNTER_UNSUPPORTED || !strstr(opened->reason, "EACCES") ||
		    !strstr(opened->reason, "perf_event_paranoid is 2"))
			_exit(12);
		counter_close(set);
		counter_options user = { .domain = COUNTER_DOMAIN_USER };
		if (counter_set_open(&set, "perf", events, 1, &user, &status) != 0)
			_exit(13);
		counter_value v;
		count_fresh_pages(set, 25, &v);
		_exit(v.state == COUNTER_OK && v.raw == 25 ? 0 : 14);
	}
	int wstatus;
	waitpid(child, &wstatus, 0);
	cr_assert(WIFEXITED(wstatus), "child crashed");
	cr_assert_eq(WEXITSTATUS(wstatus), 0, "child check %d failed (10-11 setup, 12 reason, 13-14 user count)",
	             WEXITSTATUS(wstatus));
}
