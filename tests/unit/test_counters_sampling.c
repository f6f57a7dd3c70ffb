#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "counters/counters.h"
#include "counters_test_pages.h"

typedef struct sampling_log {
	atomic_int calls;
	atomic_int wrong_thread;
	pid_t tid;
	uint64_t period_sum;
	uint64_t last_index;
} sampling_log;

static void record_sample(const counter_sample *sample, void *context)
{
	sampling_log *log = context;
	atomic_fetch_add(&log->calls, 1);
	if ((pid_t)syscall(SYS_gettid) != log->tid || (pid_t)sample->tid != log->tid)
		atomic_fetch_add(&log->wrong_thread, 1);
	log->period_sum += sample->period;
	log->last_index = sample->index;
}

static counter_sampler *open_sampler(const char *event, uint64_t period, sampling_log *log)
{
	memset(log, 0, sizeof *log);
	log->tid = (pid_t)syscall(SYS_gettid);
	counter_sampler_options options = { .event = event, .period = period, .callback = record_sample,
	                                    .context = log };
	counter_sampler *sampler;
	plumb_status status;
	cr_assert_eq(counter_sampler_open(&sampler, &options, &status), 0, "%s", status.message);
	return sampler;
}

Test(counters_sampling, page_fault_period_gives_one_callback_per_period)
{
	/* Page faults are counted synchronously in the faulting thread, so a
	 * period P over N*P fresh pages overflows exactly N times. */
	const size_t period = 10, overflows = 150;
	sampling_log log;
	counter_sampler *sampler = open_sampler("page-faults", period, &log);
	char *base = counters_test_map(period * overflows);
	plumb_status status;
	cr_assert_eq(counter_sampler_start(sampler, &status), 0, "%s", status.message);
	counters_test_touch(base, period * overflows);
	cr_assert_eq(counter_sampler_stop(sampler, &status), 0);
	cr_assert_eq(atomic_load(&log.calls), (int)overflows, "%d callbacks", atomic_load(&log.calls));
	cr_assert_eq(counter_sampler_callbacks(sampler), overflows);
	cr_assert_eq(counter_sampler_lost(sampler), 0);
	cr_assert_eq(atomic_load(&log.wrong_thread), 0, "a callback ran outside the counted thread");
	cr_assert_eq(log.period_sum, period * overflows);
	cr_assert_eq(log.last_index, overflows);
	counter_sampler_close(sampler);
	counters_test_unmap(base, period * overflows);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

Test(counters_sampling, task_clock_period_follows_cpu_time)
{
	/* task-clock overflows are checked at timer ticks, so the count is only
	 * roughly cpu_time / period: a ratio with a generous tolerance. */
	const uint64_t period = 2000000;   /* 2 ms */
	sampling_log log;
	counter_sampler *sampler = open_sampler("task-clock", period, &log);
	plumb_status status;
	uint64_t begin = thread_cpu_ns();
	cr_assert_eq(counter_sampler_start(sampler, &status), 0, "%s", status.message);
	/* Spin in user space: with exclude_kernel, a timer tick that lands in a
	 * system call (clock_gettime of a CPU clock is one) drops its sample, so
	 * the clock is read only every 100000 iterations. */
	volatile uint64_t spin = 0;
	while (thread_cpu_ns() - begin < 60000000)   /* 60 ms of this thread's CPU */
		for (int i = 0; i < 100000; i++)
			spin++;
	cr_assert_eq(counter_sampler_stop(sampler, &status), 0);
	double expected = (double)(thread_cpu_ns() - begin) / (double)period;
	double got = atomic_load(&log.calls);
	cr_assert_gt(got, 0.5 * expected, "%g callbacks, expected about %g", got, expected);
	cr_assert_lt(got, 1.5 * expected + 2, "%g callbacks, expected about %g", got, expected);
	cr_assert_eq(atomic_load(&log.wrong_thread), 0);
	counter_sampler_close(sampler);
}

Test(counters_sampling, task_clock_in_all_domains_counts_time_in_system_calls)
{
	/* Counting kernel time too (allowed to root, or with paranoid <= 1), a
	 * thread that lives in system calls still gets about cpu_time / period
	 * callbacks; user-only sampling would drop the ticks that land there. */
	counter_environment env;
	counter_environment_read(&env);
	if (!env.privileged && env.perf_event_paranoid > 1)
		cr_skip_test("kernel counting not allowed here (paranoid %d)", env.perf_event_paranoid);
	const uint64_t period = 2000000;
	sampling_log log;
	memset(&log, 0, sizeof log);
	log.tid = (pid_t)syscall(SYS_gettid);
	counter_sampler_options options = { .event = "task-clock", .period = period, .callback = record_sample,
	                                    .context = &log, .domain = COUNTER_DOMAIN_ALL };
	counter_sampler *sampler;
	plumb_status status;
	cr_assert_eq(counter_sampler_open(&sampler, &options, &status), 0, "%s", status.message);
	uint64_t begin = thread_cpu_ns();
	cr_assert_eq(counter_sampler_start(sampler, &status), 0);
	while (thread_cpu_ns() - begin < 60000000)   /* a system call per iteration */
		;
	cr_assert_eq(counter_sampler_stop(sampler, &status), 0);
	double expected = (double)(thread_cpu_ns() - begin) / (double)period;
	double got = atomic_load(&log.calls);
	cr_assert_gt(got, 0.5 * expected, "%g callbacks, expected about %g", got, expected);
	cr_assert_lt(got, 1.5 * expected + 2, "%g callbacks, expected about %g", got, expected);
	counter_sampler_close(sampler);
}

Test(counters_sampling, bad_options_and_unsupported_events)
{
	counter_sampler *sampler;
	plumb_status status;
	counter_sampler_options options = { .event = "page-faults", .period = 0, .callback = record_sample };
	cr_assert_neq(counter_sampler_open(&sampler, &options, &status), 0);
	options.period = 10;
	options.ring_pages = 3;
	cr_assert_neq(counter_sampler_open(&sampler, &options, &status), 0);
	cr_assert(strstr(status.message, "power of two"), "%s", status.message);
	options.ring_pages = 0;
	options.event = "no-such-event";
	cr_assert_neq(counter_sampler_open(&sampler, &options, &status), 0);
	cr_assert(strstr(status.message, "unsupported"), "%s", status.message);
	counter_environment env;
	counter_environment_read(&env);
	if (env.cpu_pmu_present)
		return;
	options.event = "cycles";
	cr_assert_neq(counter_sampler_open(&sampler, &options, &status), 0);
	cr_assert(strstr(status.message, "unsupported") && strstr(status.message, "no PMU"), "%s", status.message);
}
