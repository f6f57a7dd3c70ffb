/* What the machine is: CPUs, cores, sockets, NUMA nodes, caches, pages and
 * whether counters can be opened.  Read through hwloc (which reads sysfs and
 * CPUID), plus /proc and /sys for what hwloc does not cover. */
#ifndef PLUMB_TOPOLOGY_H
#define PLUMB_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

#define TOPOLOGY_MAX_CACHES 16
/* The instruction set plumb was built for, as plumb topo names it. */
#if defined(__x86_64__)
#define TOPOLOGY_ISA "x86-64"
#elif defined(__aarch64__)
#define TOPOLOGY_ISA "aarch64"
#else
#define TOPOLOGY_ISA "unknown"
#endif
#define TOPOLOGY_MAX_PAGE_SIZES 8
#define TOPOLOGY_CPU_LIST_MAX 256

typedef enum cache_type { CACHE_DATA, CACHE_INSTRUCTION, CACHE_UNIFIED } cache_type;

typedef struct topology_cache {
	int level;                 /* 1, 2, 3 */
	cache_type type;
	uint64_t size;             /* bytes, one instance */
	unsigned line;             /* bytes */
	int associativity;         /* ways; -1 fully associative; 0 unknown */
	int instances;             /* how many of this cache the machine has */
	int cpus_per_instance;     /* CPUs sharing one instance */
	char shared_cpu_list[TOPOLOGY_CPU_LIST_MAX]; /* of the first instance, "0-1" */
} topology_cache;

typedef struct topology {
	int cpus, cores, sockets, numa_nodes;
	int threads_per_core;
	int cache_count;
	topology_cache caches[TOPOLOGY_MAX_CACHES];  /* ordered by level, data before instruction */
	size_t base_page_size;
	int huge_page_count;
	size_t huge_page_sizes[TOPOLOGY_MAX_PAGE_SIZES];
	long huge_pages_reserved[TOPOLOGY_MAX_PAGE_SIZES];  /* nr_hugepages per size */
	char thp_mode[16];         /* "always", "madvise", "never", "unknown" */
	int perf_event_paranoid;   /* INT32_MIN if unreadable */
	bool hardware_counters;    /* a real perf_event_open of PERF_COUNT_HW_CPU_CYCLES worked */
	char hardware_counters_reason[PLUMB_MESSAGE_MAX];
	uint64_t memory_total;     /* bytes */
	char cpu_model[64];
	bool hypervisor;
} topology;

int topology_read(topology *out, plumb_status *status);
/* The data or unified cache at level (1..), or NULL. */
const topology_cache *topology_data_cache(const topology *t, int level);
/* The largest data/unified cache (last level), or NULL. */
const topology_cache *topology_last_level_cache(const topology *t);

/* plumb topo's report: the tables "machine" (model, vendor, CPUs, cores,
 * sockets, NUMA nodes, memory, features), "caches", "pages" and
 * "timing_and_counters" (the timer's calibration, perf_event_paranoid,
 * whether hardware counters exist), and the timer's rate as meta. */
struct output_report;
struct timer_calibration;
struct cpu_features;
struct output_report *topology_report(const topology *t, const struct timer_calibration *calibration,
                                      const struct cpu_features *features);

#endif
