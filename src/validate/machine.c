/* The machine parameters the benchmarks' closed forms need: page size,
 * line sizes, cache capacities, and two CPUs to pin the two-thread
 * benchmarks to.  glibc's sysconf reads them from CPUID; a value it cannot
 * give falls back to the common x86-64 one, so a benchmark never divides
 * by zero. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include "plumb/validate.h"

void validate_machine_default(validate_machine *out)
{
	memset(out, 0, sizeof *out);
	out->page_size = 4096;
	out->l1d_line = out->l2_line = out->l1i_line = 64;
	out->l1d_size = out->l1i_size = 32 * 1024;
	out->l2_size = 1024 * 1024;
	out->l1d_ways = out->l1i_ways = 8;
	out->l2_ways = 16;
	out->cpus[0] = 0;
	out->cpus[1] = 1;
	out->cpu_count = 2;
}

static void take(long value, uint64_t *field)
{
	if (value > 0) *field = (uint64_t)value;
}

static void take_unsigned(long value, unsigned *field)
{
	if (value > 0) *field = (unsigned)value;
}

static void take_int(long value, int *field)
{
	if (value > 0) *field = (int)value;
}

int validate_machine_detect(validate_machine *out, plumb_status *status)
{
	validate_machine_default(out);
	long page = sysconf(_SC_PAGESIZE);
	if (page > 0) out->page_size = (size_t)page;
	take(sysconf(_SC_LEVEL1_DCACHE_SIZE), &out->l1d_size);
	take_unsigned(sysconf(_SC_LEVEL1_DCACHE_LINESIZE), &out->l1d_line);
	take_int(sysconf(_SC_LEVEL1_DCACHE_ASSOC), &out->l1d_ways);
	take(sysconf(_SC_LEVEL1_ICACHE_SIZE), &out->l1i_size);
	take_unsigned(sysconf(_SC_LEVEL1_ICACHE_LINESIZE), &out->l1i_line);
	take_int(sysconf(_SC_LEVEL1_ICACHE_ASSOC), &out->l1i_ways);
	take(sysconf(_SC_LEVEL2_CACHE_SIZE), &out->l2_size);
	take_unsigned(sysconf(_SC_LEVEL2_CACHE_LINESIZE), &out->l2_line);
	take_int(sysconf(_SC_LEVEL2_CACHE_ASSOC), &out->l2_ways);

	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return plumb_fail_errno(status, errno, "cannot read the CPU affinity");
	out->cpu_count = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set)) continue;
		if (out->cpu_count < 2) out->cpus[out->cpu_count] = cpu;
		out->cpu_count++;
	}
	if (out->cpu_count == 1) out->cpus[1] = out->cpus[0];
	return 0;
}
