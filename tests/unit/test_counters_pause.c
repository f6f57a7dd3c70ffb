/* counter_pause/resume and counter_sampler_pause/resume, which a halt
 * handler uses to keep itself out of the counts and out of the halt clock. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <time.h>
#include "counters/counters.h"
#include "counters_test_pages.h"
#include "../capability.h"

/* Before the fix, resuming a group with PERF_IOC_FLAG_GROUP left its
 * members off until the next context switch: the faults after the resume
 * went uncounted (100 instead of 200). */
Test(counters_pause, perf_pause_resume_counts_again)
{
	REQUIRE_COUNTER_BACKEND("perf");
	const char *events[] = { "task-clock", "page-faults", "minor-faults" };
	counter_set *set;
	plumb_status st;
	cr_assert_eq(counter_set_open(&set, "perf", events, 3, NULL, &st), 0, "%s", st.message);
	char *a = counters_test_map(100), *b = counters_test_map(100), *c = counters_test_map(100);
	counters_test_prefault_stack();
	counters_test_prefault_thread();
	cr_assert_eq(counter_start(set, &st), 0);
	counters_test_touch(a, 100);
	cr_assert_eq(counter_pause(set), 0);
	counters_test_touch(b, 100);
	cr_assert_eq(counter_resume(set), 0);
	counters_test_touch(c, 100);
	counter_stop(set, &st);
	counter_value v[3];
	cr_assert_eq(counter_read(set, v, &st), 0);
	for (int i = 1; i < 3; i++)
		cr_assert(v[i].value >= 200 && v[i].value <= 203, "%s: %g (200: the paused 100 left out)", events[i],
		          v[i].value);
	counter_close(set);
	counters_test_unmap(a, 100);
	counters_test_unmap(b, 100);
	counters_test_unmap(c, 100);
	cr_assert_eq(counter_pause(NULL), -1);
}

static void count_call(const counter_sample *sample, void *context)
{
	(void)sample;
	atomic_fetch_add((atomic_int *)context, 1);
}

/* CPU time spent in user space: a user-only sampler skips overflows that
 * land in the kernel, so the clock is read only every 100000 iterations. */
static void spin_cpu_ms(double ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	volatile uint64_t x = 0;
	do {
		for (int i = 0; i < 100000; i++)
			x = x + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((double)(now.tv_sec - start.tv_sec) * 1e3 + (double)(now.tv_nsec - start.tv_nsec) / 1e6 < ms);
}

/* A paused task-clock sampler does not overflow, however long the pause. */
Test(counters_pause, paused_sampler_does_not_fire)
{
	REQUIRE_COUNTER_BACKEND("perf");
	atomic_int calls = 0;
	counter_sampler_options o = { .event = "task-clock", .period = 2000000, .callback = count_call, .context = &calls };
	counter_sampler *s;
	plumb_status st;
	cr_assert_eq(counter_sampler_open(&s, &o, &st), 0, "%s", st.message);
	/* As in a halted program: a counter set counts all along. */
	const char *events[] = { "task-clock", "page-faults" };
	counter_set *set;
	cr_assert_eq(counter_set_open(&set, "perf", events, 2, NULL, &st), 0, "%s", st.message);
	cr_assert_eq(counter_start(set, &st), 0);
	cr_assert_eq(counter_sampler_start(s, &st), 0);
	cr_assert_eq(counter_sampler_pause(s), 0);
	spin_cpu_ms(40);
	int during = atomic_load(&calls);
	cr_assert_eq(counter_sampler_resume(s), 0);
	spin_cpu_ms(40);
	counter_sampler_stop(s, &st);
	int after = atomic_load(&calls);
	counter_sampler_close(s);
	counter_close(set);
	cr_assert_eq(during, 0, "%d overflows while paused", during);
	cr_assert(after >= 10, "%d overflows in 40 ms at 2 ms", after);
}

/* A set started again after a stop (as validate's repeats and perturb's
 * runs do) counts the second interval in full: a group disabled with
 * PERF_IOC_FLAG_GROUP and enabled again the same way must not leave its
 * members off until the next context switch. */
Test(counters_pause, perf_start_after_stop_counts_again)
{
	REQUIRE_COUNTER_BACKEND("perf");
	const char *events[] = { "task-clock", "page-faults", "minor-faults" };
	counter_set *set;
	plumb_status st;
	cr_assert_eq(counter_set_open(&set, "perf", events, 3, NULL, &st), 0, "%s", st.message);
	char *a = counters_test_map(100), *b = counters_test_map(100), *c = counters_test_map(100);
	counters_test_prefault_stack();
	counters_test_prefault_thread();
	cr_assert_eq(counter_start(set, &st), 0);
	counters_test_touch(a, 100);
	cr_assert_eq(counter_stop(set, &st), 0);
	counters_test_touch(b, 100);
	cr_assert_eq(counter_start(set, &st), 0, "%s", st.message);
	counters_test_touch(c, 100);
	cr_assert_eq(counter_stop(set, &st), 0);
	counter_value v[3];
	cr_assert_eq(counter_read(set, v, &st), 0);
	for (int i = 1; i < 3; i++)
		cr_assert(v[i].value >= 100 && v[i].value <= 102, "%s: %g (100: the second start resets)", events[i],
		          v[i].value);
	counter_close(set);
	counters_test_unmap(a, 100);
	counters_test_unmap(b, 100);
	counters_test_unmap(c, 100);
}
