/* The machine parameters the benchmarks' closed forms need: page size,
 * line sizes, cache capacities, and two CPUs to pin the two-thread
 * benchmarks to.  The caches come from the kernel (sysfs), else from
 * glibc's sysconf, which reads CPUID: under Valgrind CPUID is Valgrind's
 * own (a 32 KiB L1D and a 256 KiB L2 on a machine with 48 KiB and 1 MiB),
 * so a kernel run under plumbgrind or cachegrind would size its arrays,
 * sweeps and code chains for another machine than the one it is compared
 * with.  A value neither gives falls back to the common x86-64 one, so a
 * benchmark never divides by zero. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "validate/validate.h"

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

static bool read_line(const char *path, char *text, size_t length)
{
	FILE *f = fopen(path, "r");
	if (!f) return false;
	bool ok = fgets(text, (int)length, f) != NULL;
	fclose(f);
	if (ok) text[strcspn(text, "\n")] = 0;
	return ok;
}

/* The caches of cpu from /sys/devices/system/cpu/cpuN/cache/indexK. */
static void read_sysfs_caches(int cpu, validate_machine *out)
{
	for (int index = 0; index < 16; index++) {
		char base[128], path[192], text[64];
		snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu%d/cache/index%d", cpu, index);
		snprintf(path, sizeof path, "%s/level", base);
		if (!read_line(path, text, sizeof text)) break;
		int level = atoi(text);
		snprintf(path, sizeof path, "%s/type", base);
		if (!read_line(path, text, sizeof text)) continue;
		bool instruction = !strcmp(text, "Instruction"), data = !strcmp(text, "Data") || !strcmp(text, "Unified");
		snprintf(path, sizeof path, "%s/size", base);
		if (!read_line(path, text, sizeof text)) continue;
		char *end;
		unsigned long long size = strtoull(text, &end, 10);
		if (*end == 'K') size <<= 10;
		else if (*end == 'M') size <<= 20;
		snprintf(path, sizeof path, "%s/coherency_line_size", base);
		unsigned line = read_line(path, text, sizeof text) ? (unsigned)atoi(text) : 0;
		snprintf(path, sizeof path, "%s/ways_of_associativity", base);
		int ways = read_line(path, text, sizeof text) ? atoi(text) : 0;
		if (level == 1 && instruction) {
			take((long)size, &out->l1i_size);
			take_unsigned((long)line, &out->l1i_line);
			take_int(ways, &out->l1i_ways);
		} else if (level == 1 && data) {
			take((long)size, &out->l1d_size);
			take_unsigned((long)line, &out->l1d_line);
			take_int(ways, &out->l1d_ways);
		} else if (level == 2 && data) {
			take((long)size, &out->l2_size);
			take_unsigned((long)line, &out->l2_line);
			take_int(ways, &out->l2_ways);
		}
	}
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
	read_sysfs_caches(out->cpus[0], out);
	return 0;
}
