/* The machine's shape, from hwloc (which reads sysfs and CPUID), plus what
 * hwloc does not know: page sizes, THP mode, perf_event_paranoid, and
 * whether a hardware counter really opens. */
#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "core/cpu.h"
#include "machine/topology.h"

static int read_first_line(const char *path, char *buffer, size_t length)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *ok = fgets(buffer, (int)length, f);
	fclose(f);
	if (!ok)
		return -1;
	buffer[strcspn(buffer, "\n")] = 0;
	return 0;
}

static uint64_t read_memory_total(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[256];
	unsigned long long kib = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

static void read_thp_mode(topology *t)
{
	char line[128];
	snprintf(t->thp_mode, sizeof t->thp_mode, "unknown");
	if (read_first_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof line) != 0)
		return;
	/* The active mode is bracketed: "always [madvise] never". */
	char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
	if (open && close && close - open - 1 < (long)sizeof t->thp_mode) {
		memcpy(t->thp_mode, open + 1, (size_t)(close - open - 1));
		t->thp_mode[close - open - 1] = 0;
	}
}

static int compare_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static void read_huge_pages(topology *t)
{
	DIR *d = opendir("/sys/kernel/mm/hugepages");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && t->huge_page_count < TOPOLOGY_MAX_PAGE_SIZES) {
		unsigned long kib;
		if (sscanf(e->d_name, "hugepages-%lukB", &kib) == 1)
			t->huge_page_sizes[t->huge_page_count++] = kib * 1024;
	}
	closedir(d);
	qsort(t->huge_page_sizes, (size_t)t->huge_page_count, sizeof(size_t), compare_size);
	for (int i = 0; i < t->huge_page_count; i++) {
		char path[128], line[64];
		snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%zukB/nr_hugepages", t->huge_page_sizes[i] >> 10);
		t->huge_pages_reserved[i] = read_first_line(path, line, sizeof line) == 0 ? atol(line) : -1;
	}
}

/* A real open of the cycles counter: the only reliable answer.  The
 * attempt counts user space only, which paranoid levels up to 2 allow. */
static void probe_hardware_counters(topology *t)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		t->hardware_counters = true;
		snprintf(t->hardware_counters_reason, sizeof t->hardware_counters_reason, "cycles counter opened");
		return;
	}
	int e = errno;
	t->hardware_counters = false;
	const char *why = e == ENOENT ? "no PMU (the kernel knows no hardware cycles event; typical of a VM without PMU passthrough)"
	                : e == EACCES || e == EPERM ? "not permitted (perf_event_paranoid or capabilities)"
	                : e == ENOSYS ? "kernel built without perf events"
	                : e == EOPNOTSUPP ? "PMU cannot count this (no sampling or filtering support)"
	                : "open failed";
	snprintf(t->hardware_counters_reason, sizeof t->hardware_counters_reason, "%s: %s", strerrorname_np(e) ? strerrorname_np(e) : "errno", why);
}

static void read_caches(topology *t, hwloc_topology_t h)
{
	static const hwloc_obj_type_t types[] = {
		HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
		HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
	};
	for (size_t k = 0; k < sizeof types / sizeof types[0] && t->cache_count < TOPOLOGY_MAX_CACHES; k++) {
		int count = hwloc_get_nbobjs_by_type(h, types[k]);
		if (count <= 0)
			continue;
		hwloc_obj_t o = hwloc_get_obj_by_type(h, types[k], 0);
		topology_cache *c = &t->caches[t->cache_count++];
		memset(c, 0, sizeof *c);
		c->level = (int)o->attr->cache.depth;
		c->type = o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? CACHE_INSTRUCTION
		        : o->attr->cache.type == HWLOC_OBJ_CACHE_DATA ? CACHE_DATA : CACHE_UNIFIED;
		c->size = o->attr->cache.size;
		c->line = o->attr->cache.linesize;
		c->associativity = o->attr->cache.associativity;
		c->instances = count;
		c->cpus_per_instance = hwloc_bitmap_weight(o->cpuset);
		hwloc_bitmap_list_snprintf(c->shared_cpu_list, sizeof c->shared_cpu_list, o->cpuset);
	}
}

int topology_read(topology *t, plumb_status *status)
{
	memset(t, 0, sizeof *t);
	hwloc_topology_t h;
	if (hwloc_topology_init(&h) != 0)
		return plumb_fail_errno(status, errno, "hwloc_topology_init");
	/* hwloc drops instruction caches by default; the report wants them. */
	hwloc_topology_set_icache_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_load(h) != 0) {
		int e = errno;
		hwloc_topology_destroy(h);
		return plumb_fail_errno(status, e, "hwloc cannot read the topology");
	}
	t->cpus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
	t->cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
	t->sockets = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
	t->numa_nodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
	if (t->cores <= 0)
		t->cores = t->cpus;
	if (t->sockets <= 0)
		t->sockets = 1;
	if (t->numa_nodes <= 0)
		t->numa_nodes = 1;
	t->threads_per_core = t->cores ? t->cpus / t->cores : 1;
	read_caches(t, h);
	hwloc_topology_destroy(h);
	/* MemTotal, not hwloc's NUMA-node sum: under some hypervisors the node
	 * files cover only boot-time memory and miss hot-plugged ranges. */
	t->memory_total = read_memory_total();

	cpu_features f;
	cpu_features_detect(&f);
	snprintf(t->cpu_model, sizeof t->cpu_model, "%s", f.brand[0] ? f.brand : f.vendor);
	t->hypervisor = f.hypervisor;
	t->base_page_size = (size_t)sysconf(_SC_PAGESIZE);
	read_huge_pages(t);
	read_thp_mode(t);
	char line[64];
	t->perf_event_paranoid = read_first_line("/proc/sys/kernel/perf_event_paranoid", line, sizeof line) == 0 ? atoi(line) : INT32_MIN;
	probe_hardware_counters(t);
	return 0;
}

const topology_cache *topology_data_cache(const topology *t, int level)
{
	for (int i = 0; i < t->cache_count; i++)
		if (t->caches[i].level == level && t->caches[i].type != CACHE_INSTRUCTION)
			return &t->caches[i];
	return NULL;
}

const topology_cache *topology_last_level_cache(const topology *t)
{
	const topology_cache *best = NULL;
	for (int i = 0; i < t->cache_count; i++)
		if (t->caches[i].type != CACHE_INSTRUCTION && (!best || t->caches[i].level > best->level))
			best = &t->caches[i];
	return best;
}
