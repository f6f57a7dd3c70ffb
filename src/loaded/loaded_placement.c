/* Where to put the latency thread: on the quietest CPU.  On a VM the
 * first CPU is often the busiest (interrupts, the host's other work): idle
 * latency read 395 ns on CPU 0 against 152 ns on CPU 1 of one guest.  So
 * each candidate CPU is measured: pinned there, the thread spins reading
 * the clock for a short window and counts as lost every gap longer than a
 * few microseconds (time it did not run: other tasks, the hypervisor's
 * steal).  The CPU that lost the least is the quietest. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include "core/cpu.h"
#include "loaded/loaded.h"

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int loaded_cpu_interference(int cpu, uint64_t window_ns, double *lost_fraction, plumb_status *status)
{
	if (!lost_fraction || window_ns == 0)
		return plumb_fail(status, EINVAL, "loaded: no window to measure interference in");
	cpu_set_t saved;
	if (sched_getaffinity(0, sizeof saved, &saved) != 0)
		return plumb_fail_errno(status, errno, "sched_getaffinity");
	if (cpu_pin_self(cpu, status) != 0)
		return -1;
	const uint64_t gap_ns = 5000;
	uint64_t start = now_ns(), last = start, lost = 0;
	for (;;) {
		uint64_t t = now_ns();
		if (t - last > gap_ns)
			lost += t - last;
		last = t;
		if (t - start >= window_ns)
			break;
	}
	*lost_fraction = (double)lost / (double)(last - start);
	sched_setaffinity(0, sizeof saved, &saved);
	return 0;
}

int loaded_quietest(const double *lost_fraction, int n)
{
	int best = -1;
	for (int i = 0; i < n; i++)
		if (lost_fraction[i] >= 0 && (best < 0 || lost_fraction[i] < lost_fraction[best]))
			best = i;
	return best;
}

void loaded_place_latency(int *cpus, int count, uint64_t window_ns, char *choice, size_t length)
{
	if (count <= 1) {
		snprintf(choice, length, "the only allowed CPU");
		return;
	}
	double lost[LOADED_MAX_PLACEMENT_CPUS];
	if (count > LOADED_MAX_PLACEMENT_CPUS)
		count = LOADED_MAX_PLACEMENT_CPUS;
	plumb_status status;
	for (int i = 0; i < count; i++)
		if (loaded_cpu_interference(cpus[i], window_ns, &lost[i], &status) != 0)
			lost[i] = -1;
	int q = loaded_quietest(lost, count);
	if (q > 0) {
		int t = cpus[0];
		cpus[0] = cpus[q];
		cpus[q] = t;
		double l = lost[q];
		lost[q] = lost[0];
		lost[0] = l;
	}
	double worst = 0;
	for (int i = 1; i < count; i++)
		if (lost[i] > worst)
			worst = lost[i];
	if (q >= 0)
		snprintf(choice, length, "quietest of %d CPUs measured (%.2f%% of a %.0f ms spin lost; up to %.2f%% on the others)",
		         count, 100 * lost[0], (double)window_ns / 1e6, 100 * worst);
	else
		snprintf(choice, length, "first allowed CPU (interference not measurable)");
}
