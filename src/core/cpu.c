#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "core/cpu.h"

/* Intel models whose cores have AMX: Sapphire Rapids, Emerald Rapids,
 * Granite Rapids and its D.  AVX512-FP16 they have too, and so did Alder
 * Lake's first parts (0x97, 0x9A), whose P-cores had AVX-512 before it was
 * fused off. */
static bool intel_has_amx(unsigned model)
{
	return model == 0x8F || model == 0xCF || model == 0xAD || model == 0xAE;
}

/* AMD family 19h models of Zen 4 cores (the rest of the family is Zen 3,
 * which has no AVX-512). */
static bool amd_zen4(unsigned model)
{
	return (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) || (model >= 0xA0 && model <= 0xAF);
}

void cpu_core_model_settle(cpu_features *cpu)
{
	cpu->core_model = cpu->model;
	cpu->core_model_reason[0] = 0;
	if (!strcmp(cpu->vendor, "AuthenticAMD") && cpu->family == 0x19 && cpu->avx512f && !amd_zen4(cpu->model)) {
		/* a guest shown a Zen 3 model (EPYC-Milan) on a Zen 4 host */
		cpu->core_model = 0x11;
		snprintf(cpu->core_model_reason, sizeof cpu->core_model_reason,
		         "its AVX-512 says Zen 4: taken as model 17");
		return;
	}
	if (strcmp(cpu->vendor, "GenuineIntel") || cpu->family != 6 || intel_has_amx(cpu->model))
		return;
	bool fp16_alone = cpu->avx512_fp16 && cpu->model != 0x97 && cpu->model != 0x9A;
	if (cpu->amx_tile || fp16_alone) {
		cpu->core_model = 0x8F;
		snprintf(cpu->core_model_reason, sizeof cpu->core_model_reason,
		         "its %s says Sapphire Rapids or later: taken as model 143",
		         cpu->amx_tile ? "AMX" : "AVX512-FP16");
	}
}

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
		out->avx512_fp16 = (d >> 23) & 1;
		out->amx_tile = (d >> 24) & 1;
	}
	cpu_core_model_settle(out);
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

/* Family and model ranges of x86 generations, from the vendors' manuals
 * (Intel's SDM, "CPUID Signature Values"; AMD's PPRs): a name for people,
 * never a decision.  Ranges are inclusive. */
static const struct cpu_generation {
	const char *vendor;
	unsigned family, first_model, last_model;
	const char *name;
} cpu_generations[] = {
	{ "GenuineIntel", 6, 0x3c, 0x3c, "Haswell" }, { "GenuineIntel", 6, 0x3f, 0x3f, "Haswell server" },
	{ "GenuineIntel", 6, 0x45, 0x46, "Haswell" }, { "GenuineIntel", 6, 0x3d, 0x3d, "Broadwell" },
	{ "GenuineIntel", 6, 0x47, 0x47, "Broadwell" }, { "GenuineIntel", 6, 0x4f, 0x4f, "Broadwell server" },
	{ "GenuineIntel", 6, 0x56, 0x56, "Broadwell server" }, { "GenuineIntel", 6, 0x4e, 0x4e, "Skylake" },
	{ "GenuineIntel", 6, 0x5e, 0x5e, "Skylake" }, { "GenuineIntel", 6, 0x55, 0x55, "Skylake or Cascade Lake server" },
	{ "GenuineIntel", 6, 0x8e, 0x8e, "Kaby Lake or Coffee Lake" }, { "GenuineIntel", 6, 0x9e, 0x9e, "Kaby Lake or Coffee Lake" },
	{ "GenuineIntel", 6, 0xa5, 0xa6, "Comet Lake" }, { "GenuineIntel", 6, 0x6a, 0x6a, "Ice Lake server" },
	{ "GenuineIntel", 6, 0x6c, 0x6c, "Ice Lake server" }, { "GenuineIntel", 6, 0x7d, 0x7e, "Ice Lake" },
	{ "GenuineIntel", 6, 0x8c, 0x8d, "Tiger Lake" }, { "GenuineIntel", 6, 0xa7, 0xa7, "Rocket Lake" },
	{ "GenuineIntel", 6, 0x8f, 0x8f, "Sapphire Rapids" }, { "GenuineIntel", 6, 0x97, 0x97, "Alder Lake" },
	{ "GenuineIntel", 6, 0x9a, 0x9a, "Alder Lake" }, { "GenuineIntel", 6, 0xb7, 0xb7, "Raptor Lake" },
	{ "GenuineIntel", 6, 0xba, 0xba, "Raptor Lake" }, { "GenuineIntel", 6, 0xbf, 0xbf, "Raptor Lake" },
	{ "GenuineIntel", 6, 0xaa, 0xac, "Meteor Lake" }, { "GenuineIntel", 6, 0xcf, 0xcf, "Emerald Rapids" },
	{ "GenuineIntel", 6, 0xad, 0xae, "Granite Rapids" }, { "GenuineIntel", 6, 0xaf, 0xaf, "Sierra Forest" },
	{ "GenuineIntel", 6, 0xbd, 0xbd, "Lunar Lake" }, { "GenuineIntel", 6, 0xc5, 0xc6, "Arrow Lake" },
	{ "AuthenticAMD", 0x17, 0x00, 0x2f, "Zen or Zen+" }, { "AuthenticAMD", 0x17, 0x30, 0xaf, "Zen 2" },
	{ "AuthenticAMD", 0x19, 0x00, 0x0f, "Zen 3" }, { "AuthenticAMD", 0x19, 0x10, 0x1f, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0x20, 0x5f, "Zen 3" }, { "AuthenticAMD", 0x19, 0x60, 0x7f, "Zen 4" },
	{ "AuthenticAMD", 0x19, 0xa0, 0xaf, "Zen 4" }, { "AuthenticAMD", 0x1a, 0x00, 0x7f, "Zen 5" },
};

const char *cpu_generation_name(const char *vendor, unsigned family, unsigned model)
{
	if (!vendor)
		return NULL;
	for (size_t i = 0; i < sizeof cpu_generations / sizeof cpu_generations[0]; i++) {
		const struct cpu_generation *g = &cpu_generations[i];
		if (!strcmp(vendor, g->vendor) && family == g->family && model >= g->first_model && model <= g->last_model)
			return g->name;
	}
	return NULL;
}
