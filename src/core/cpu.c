#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "plumb/cpu.h"

void cpu_features_detect(cpu_features *out)
{
	unsigned a = 0, b = 0, c = 0, d = 0, max = 0;
	memset(out, 0, sizeof *out);
	if (!__get_cpuid(0, &max, &b, &c, &d))
		return;
	memcpy(out->vendor, &b, 4);
	memcpy(out->vendor + 4, &d, 4);
	memcpy(out->vendor + 8, &c, 4);
	__get_cpuid(1, &a, &b, &c, &d);
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	out->family = family;
	out->model = model;
	out->stepping = a & 0xf;
	out->clflush = (d >> 19) & 1;
	out->clflush_line = ((b >> 8) & 0xff) * 8;
	out->sse2 = (d >> 26) & 1;
	out->hypervisor = (c >> 31) & 1;
	/* AVX needs the OS to save the YMM state too (OSXSAVE + XCR0). */
	int osxsave = (c >> 27) & 1, avx_cpu = (c >> 28) & 1;
	unsigned long long xcr0 = 0;
	if (osxsave) {
		unsigned lo, hi;
		__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = ((unsigned long long)hi << 32) | lo;
	}
	int ymm = (xcr0 & 6) == 6, zmm = (xcr0 & 0xe6) == 0xe6;
	out->avx = avx_cpu && ymm;
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		out->avx2 = out->avx && ((b >> 5) & 1);
		out->avx512f = zmm && ((b >> 16) & 1);
		out->clflushopt = (b >> 23) & 1;
		out->clwb = (b >> 24) & 1;
	}
	__get_cpuid(0x80000000, &max, &b, &c, &d);
	if (max >= 0x80000001) {
		__get_cpuid(0x80000001, &a, &b, &c, &d);
		out->rdtscp = (d >> 27) & 1;
	}
	if (max >= 0x80000004) {
		unsigned *brand = (unsigned *)out->brand;
		for (unsigned i = 0; i < 3; i++)
			__get_cpuid(0x80000002 + i, &brand[i * 4], &brand[i * 4 + 1], &brand[i * 4 + 2], &brand[i * 4 + 3]);
		out->brand[48] = 0;
		/* Brand strings are padded with leading and trailing spaces. */
		char *s = out->brand;
		while (*s == ' ')
			s++;
		memmove(out->brand, s, strlen(s) + 1);
		for (size_t n = strlen(out->brand); n && out->brand[n - 1] == ' '; n--)
			out->brand[n - 1] = 0;
	}
	if (max >= 0x80000007) {
		__get_cpuid(0x80000007, &a, &b, &c, &d);
		out->invariant_tsc = (d >> 8) & 1;
	}
}

int cpu_allowed(int *cpus, int max, plumb_status *status)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return plumb_fail_errno(status, errno, "sched_getaffinity");
	int n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/* "0-3,6": the set as a CPU list, cut with "..." if it does not fit. */
static void cpu_set_text(const cpu_set_t *set, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int last = c;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		char piece[32];
		int n = last == c ? snprintf(piece, sizeof piece, "%s%d", used ? "," : "", c)
		                  : snprintf(piece, sizeof piece, "%s%d-%d", used ? "," : "", c, last);
		if (used + (size_t)n + 4 >= size) {
			snprintf(out + used, size - used, ",...");
			return;
		}
		memcpy(out + used, piece, (size_t)n + 1);
		used += (size_t)n;
		c = last;
	}
}

int cpu_check_allowed(const int *cpus, int n, plumb_status *status)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return plumb_fail_errno(status, errno, "cannot read this process's CPU affinity");
	for (int i = 0; i < n; i++) {
		if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &set))
			continue;
		char allowed[96];
		cpu_set_text(&set, allowed, sizeof allowed);
		return plumb_fail(status, EINVAL, "CPU %d is not one this process may run on (allowed: %s)", cpus[i],
		                  allowed);
	}
	return 0;
}

int cpu_pin_self(int cpu, plumb_status *status)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return plumb_fail(status, EINVAL, "CPU %d does not exist", cpu);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (rc != 0)
		return plumb_fail_errno(status, rc, "cannot pin to CPU %d", cpu);
	return 0;
}

int cpu_current(void)
{
	return sched_getcpu();
}

void cpu_flush_range(const void *p, size_t length, const cpu_features *features)
{
	size_t line = features && features->clflush_line ? features->clflush_line : 64;
	const char *begin = (const char *)((uintptr_t)p & ~(uintptr_t)(line - 1));
	const char *end = (const char *)p + length;
	if (features && features->clflushopt) {
		for (const char *q = begin; q < end; q += line)
			__asm__ __volatile__(".byte 0x66; clflush %0" : "+m"(*(volatile char *)q));
	} else {
		for (const char *q = begin; q < end; q += line)
			__asm__ __volatile__("clflush %0" : "+m"(*(volatile char *)q));
	}
	/* clflushopt is ordered only by fences; mfence also orders clflush with
	 * the loads that follow, so a timed access cannot start early. */
	__asm__ __volatile__("mfence" ::: "memory");
}

void cpu_evict_by_sweep(volatile uint8_t *buffer, size_t length, size_t line)
{
	if (line == 0)
		line = 64;
	/* Two passes, because with a non-LRU policy one pass can leave some of
	 * the target's lines resident. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < length; i += line)
			buffer[i] = (uint8_t)(buffer[i] + 1);
	__asm__ __volatile__("mfence" ::: "memory");
}
