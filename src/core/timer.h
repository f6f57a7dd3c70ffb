/* Timers.  The TSC read with rdtscp is the finest clock an x86-64 has; it is
 * calibrated against CLOCK_MONOTONIC_RAW (which NTP does not slew) and the
 * calibration is reported, so a reader can judge it.  Without an invariant
 * TSC plumb falls back to clock_gettime. */
#ifndef PLUMB_TIMER_H
#define PLUMB_TIMER_H

#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

typedef enum timer_source { TIMER_TSC, TIMER_CLOCK_GETTIME } timer_source;

typedef struct timer_calibration {
	timer_source source;
	bool invariant_tsc;      /* CPUID 0x80000007 EDX bit 8 */
	double ticks_per_ns;     /* 1.0 for clock_gettime */
	double spread;           /* relative spread of the calibration rounds */
	double overhead_ticks;   /* cost of one timer_ticks() pair, median */
	int rounds;
} timer_calibration;

/* Calibrates over about duration_ms milliseconds (>= 10). */
int timer_calibrate(timer_calibration *out, int duration_ms, plumb_status *status);
/* A calibration that uses clock_gettime only. */
void timer_calibration_clock(timer_calibration *out);

uint64_t timer_monotonic_ns(void);

static inline uint64_t timer_tsc_begin(void)
{
	/* lfence keeps earlier loads from drifting past the read. */
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t timer_tsc_end(void)
{
	/* rdtscp waits for earlier instructions; the lfence stops later ones
	 * from starting before the read. */
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* Reads the calibrated clock: TSC ticks or nanoseconds. */
static inline uint64_t timer_begin(const timer_calibration *c)
{
	return c->source == TIMER_TSC ? timer_tsc_begin() : timer_monotonic_ns();
}
static inline uint64_t timer_end(const timer_calibration *c)
{
	return c->source == TIMER_TSC ? timer_tsc_end() : timer_monotonic_ns();
}
static inline double timer_ticks_to_ns(const timer_calibration *c, double ticks)
{
	return ticks / c->ticks_per_ns;
}

#endif
