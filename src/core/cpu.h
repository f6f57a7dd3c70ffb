/* The CPU as a process sees it: features from CPUID, pinning, cache-line
 * flushes and compiler barriers used by every measurement kernel. */
#ifndef PLUMB_CPU_H
#define PLUMB_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

typedef struct cpu_features {
	char vendor[13];         /* "AuthenticAMD", "GenuineIntel" */
	char brand[49];
	unsigned family, model, stepping;
	bool sse2, avx, avx2, avx512f, clflush, clflushopt, clwb, rdtscp, invariant_tsc;
	bool hypervisor;
	bool amx_tile, avx512_fp16;   /* CPUID 7.0 EDX bits 24 and 23: Sapphire Rapids' and later server cores' */
	unsigned clflush_line;   /* bytes, from CPUID 1 EBX[15:8] * 8 */
	/* The model whose cores these are: `model`, unless a hypervisor shows
	 * an older model than the features say (a KVM guest of a Sapphire
	 * Rapids host given model 167, Rocket Lake, which has no AMX and adds
	 * doubles in 4 cycles, not 2; or an AMD guest shown a Zen 3 model with
	 * AVX-512, which only Zen 4 on has): then the first model with them,
	 * and core_model_reason says why in words ("" when core_model is
	 * model). */
	unsigned core_model;
	char core_model_reason[96];
} cpu_features;

void cpu_features_detect(cpu_features *out);
/* Sets core_model and core_model_reason from the vendor, family, model and
 * features (cpu_features_detect calls it; so does a caller that fills a
 * cpu_features of another machine). */
void cpu_core_model_settle(cpu_features *cpu);
/* The CPU's generation in words, from vendor, family and model ("Emerald
 * Rapids", "Zen 4"), for the x86 generations plumb has met or expects; NULL
 * for one it does not know.  A guest's brand string often hides the model
 * ("Intel(R) Xeon(R) Processor"); CPUID's family and model do not. */
const char *cpu_generation_name(const char *vendor, unsigned family, unsigned model);

/* CPUs this process may run on, ascending; returns the count (<= max) or -1. */
int cpu_allowed(int *cpus, int max, plumb_status *status);
/* Checks that each of cpus[0..n) is in this process's affinity mask as it is
 * now (the one it was started with, e.g. by taskset: call this before pinning
 * anything, since a pinned thread's mask is its one CPU).  Every command that
 * pins to a CPU the user named checks it here first, so a CPU outside the mask
 * is refused rather than widened into.  The error names the CPU and the set:
 * "CPU 1 is not one this process may run on (allowed: 0)". */
int cpu_check_allowed(const int *cpus, int n, plumb_status *status);
/* Pins the calling thread to one CPU. */
int cpu_pin_self(int cpu, plumb_status *status);
/* The CPU the caller runs on now. */
int cpu_current(void);

/* Flushes every line of [p, p+length) from all cache levels (clflushopt
 * when the CPU has it, else clflush), then fences. */
void cpu_flush_range(const void *p, size_t length, const cpu_features *features);
/* Evicts by sweeping a buffer larger than the last-level cache, for CPUs or
 * contexts without clflush.  buffer must be writable and length bytes. */
void cpu_evict_by_sweep(volatile uint8_t *buffer, size_t length, size_t line);

#define cpu_compiler_barrier() __asm__ __volatile__("" ::: "memory")
/* Keeps v alive and opaque to the optimiser. */
#define cpu_keep(v) __asm__ __volatile__("" :: "r"(v) : "memory")

static inline void cpu_relax(void) { __asm__ __volatile__("pause" ::: "memory"); }

#endif
