#include <cpuid.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/stats.h"
#include "core/timer.h"

uint64_t timer_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void timer_calibration_clock(timer_calibration *out)
{
	memset(out, 0, sizeof *out);
	out->source = TIMER_CLOCK_GETTIME;
	out->ticks_per_ns = 1.0;
	double overheads[64];
	for (int i = 0; i < 64; i++) {
		uint64_t a = timer_monotonic_ns(), b = timer_monotonic_ns();
		overheads[i] = (double)(b - a);
	}
	out->overhead_ticks = stats_median(overheads, 64);
}

static int has_invariant_tsc(int *rdtscp)
{
	unsigned a, b, c, d;
	*rdtscp = 0;
	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return 0;
	__get_cpuid(0x80000001, &a, &b, &c, &d);
	*rdtscp = (d >> 27) & 1;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	return (d >> 8) & 1;
}

/* Calibration pairs TSC reads with CLOCK_MONOTONIC_RAW reads over several
 * rounds and keeps the median ratio: a round interrupted by the hypervisor
 * or another task gives an outlier, which the median discards.  The spread
 * across rounds is reported so a reader can judge the calibration. */
int timer_calibrate(timer_calibration *out, int duration_ms, plumb_status *status)
{
	int rdtscp;
	memset(out, 0, sizeof *out);
	out->invariant_tsc = has_invariant_tsc(&rdtscp);
	if (!out->invariant_tsc || !rdtscp) {
		timer_calibration_clock(out);
		out->invariant_tsc = false;
		return 0;
	}
	if (duration_ms < 10)
		return plumb_fail(status, EINVAL, "timer calibration needs at least 10 ms (got %d)", duration_ms);
	enum { ROUNDS = 9 };
	double ratios[ROUNDS];
	uint64_t round_ns = (uint64_t)duration_ms * 1000000u / ROUNDS;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t n0 = timer_monotonic_ns(), t0 = timer_tsc_end();
		uint64_t n1, t1;
		do {
			n1 = timer_monotonic_ns();
			t1 = timer_tsc_end();
		} while (n1 - n0 < round_ns);
		ratios[r] = (double)(t1 - t0) / (double)(n1 - n0);
	}
	out->source = TIMER_TSC;
	out->rounds = ROUNDS;
	out->ticks_per_ns = stats_median(ratios, ROUNDS);
	double lo = ratios[0], hi = ratios[0];
	for (int r = 1; r < ROUNDS; r++) {
		lo = fmin(lo, ratios[r]);
		hi = fmax(hi, ratios[r]);
	}
	out->spread = (hi - lo) / out->ticks_per_ns;
	double overheads[256];
	for (int i = 0; i < 256; i++) {
		uint64_t a = timer_tsc_begin(), b = timer_tsc_end();
		overheads[i] = (double)(b - a);
	}
	out->overhead_ticks = stats_median(overheads, 256);
	if (!(out->ticks_per_ns > 0.01 && out->ticks_per_ns < 100))
		return plumb_fail(status, ERANGE, "TSC calibration gave an implausible %.4f ticks/ns", out->ticks_per_ns);
	return 0;
}
