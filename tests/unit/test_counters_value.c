#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "counters/counters.h"
#include "counters/rdpmc.h"

Test(counters_value, full_time_is_ok_and_unscaled)
{
	counter_value v = { .raw = 1000, .time_enabled = 500, .time_running = 500 };
	counter_value_scale(&v);
	cr_assert_eq(v.state, COUNTER_OK);
	cr_assert_eq(v.value, 1000.0);
}

Test(counters_value, multiplexed_is_scaled_and_says_so)
{
	counter_value v = { .raw = 1000, .time_enabled = 400, .time_running = 100 };
	counter_value_scale(&v);
	cr_assert_eq(v.state, COUNTER_MULTIPLEXED);
	cr_assert_float_eq(v.value, 4000.0, 1e-9);
	cr_assert(strstr(v.reason, "25.0%"), "reason: %s", v.reason);
	cr_assert(counter_value_usable(&v));
}

Test(counters_value, never_running_is_not_counted_not_zero)
{
	counter_value v = { .raw = 0, .time_enabled = 400, .time_running = 0 };
	counter_value_scale(&v);
	cr_assert_eq(v.state, COUNTER_NOT_COUNTED);
	cr_assert(isnan(v.value));
	cr_assert(!counter_value_usable(&v));
}

Test(counters_value, unknown_times_mean_unscaled)
{
	counter_value v = { .raw = 7 };
	counter_value_scale(&v);
	cr_assert_eq(v.state, COUNTER_OK);
	cr_assert_eq(v.value, 7.0);
}

Test(counters_value, unsupported_stays_unsupported)
{
	counter_value v;
	counter_value_unsupported(&v, "no PMU (%d)", 2);
	cr_assert_eq(v.state, COUNTER_UNSUPPORTED);
	cr_assert(isnan(v.value));
	cr_assert_str_eq(v.reason, "no PMU (2)");
	v.raw = 5;
	counter_value_scale(&v);
	cr_assert_eq(v.state, COUNTER_UNSUPPORTED);
	cr_assert(isnan(v.value));
	cr_assert_str_eq(counter_state_name(v.state), "unsupported");
	cr_assert_str_eq(counter_state_name(COUNTER_MULTIPLEXED), "multiplexed");
	cr_assert_str_eq(counter_state_name(COUNTER_NOT_COUNTED), "not-counted");
}

Test(counters_rdpmc, sign_extends_a_48_bit_counter)
{
	/* The kernel keeps offset so that offset + sign-extended pmc is the count:
	 * a counter started at -100 (0xffff...9c in 48 bits) that counted 250 reads
	 * 150 in 48 bits; with offset 100 the count is 250. */
	rdpmc_snapshot s = { .index = 1, .offset = 100, .pmc_width = 48,
	                     .time_enabled = 10, .time_running = 10 };
	uint64_t count, enabled, running;
	rdpmc_compute(&s, 150, 0, &count, &enabled, &running);
	cr_assert_eq(count, 250);
	uint64_t negative = ((uint64_t)1 << 48) - 100;   /* -100 in 48 bits */
	s.offset = 300;
	rdpmc_compute(&s, negative, 0, &count, &enabled, &running);
	cr_assert_eq(count, 200);
	cr_assert_eq(enabled, 10);
}

Test(counters_rdpmc, adds_time_since_the_last_update)
{
	/* time_mult/shift convert TSC ticks to ns: 2 ticks per ns -> mult 1<<9, shift 10. */
	rdpmc_snapshot s = { .index = 1, .offset = 0, .pmc_width = 48, .time_enabled = 1000,
	                     .time_running = 800, .cap_user_time = true, .time_shift = 10,
	                     .time_mult = 512, .time_offset = 0 };
	uint64_t count, enabled, running;
	rdpmc_compute(&s, 0, 2000, &count, &enabled, &running);
	cr_assert_eq(enabled, 2000);
	cr_assert_eq(running, 1800);
	s.index = 0;   /* not on a counter: running does not advance */
	rdpmc_compute(&s, 0, 2000, &count, &enabled, &running);
	cr_assert_eq(enabled, 2000);
	cr_assert_eq(running, 800);
}

Test(counters_environment, errno_reasons_name_the_cause)
{
	counter_environment env = { .perf_event_paranoid = 2, .cpu_pmu_present = false, .privileged = false };
	char reason[COUNTER_REASON_MAX];
	counter_explain_errno(ENOENT, &env, reason, sizeof reason);
	cr_assert(strstr(reason, "no PMU") && strstr(reason, "ENOENT"), "%s", reason);
	env.cpu_pmu_present = true;
	counter_explain_errno(ENOENT, &env, reason, sizeof reason);
	cr_assert(strstr(reason, "does not know this event"), "%s", reason);
	counter_explain_errno(EACCES, &env, reason, sizeof reason);
	cr_assert(strstr(reason, "perf_event_paranoid is 2") && strstr(reason, "CAP_PERFMON"), "%s", reason);
	counter_explain_errno(EOPNOTSUPP, &env, reason, sizeof reason);
	cr_assert(strstr(reason, "EOPNOTSUPP"), "%s", reason);
	counter_explain_errno(EMFILE, &env, reason, sizeof reason);
	cr_assert(strstr(reason, "too many open files"), "%s", reason);
}

Test(counters_environment, this_machine_is_described)
{
	counter_environment env;
	counter_environment_read(&env);
	cr_assert_gt(strlen(env.cpu_identity), 3);
	cr_assert(env.perf_event_paranoid >= -1 && env.perf_event_paranoid <= 4, "%d", env.perf_event_paranoid);
}
