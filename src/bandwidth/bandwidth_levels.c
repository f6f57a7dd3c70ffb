/* Where a working set lands: the cache levels from the topology, plus
 * DRAM, and the default footprints that put one run in each. */
#include <stdio.h>
#include <string.h>
#include "bandwidth/bandwidth.h"

int bandwidth_levels_from_topology(const topology *topo, int threads, bandwidth_level *levels, int max)
{
	int count = 0;
	if (threads < 1)
		threads = 1;
	for (int level = 1; topo && count < max - 1; level++) {
		const topology_cache *cache = topology_data_cache(topo, level);
		if (!cache)
			break;
		if (cache->size == 0)
			continue;
		bandwidth_level *l = &levels[count++];
		memset(l, 0, sizeof *l);
		snprintf(l->name, sizeof l->name, "L%d", level);
		l->cache_level = level;
		l->cache_size = cache->size;
		int sharing = cache->cpus_per_instance > 0 ? cache->cpus_per_instance : 1;
		int sharers = threads < sharing ? threads : sharing;
		l->capacity_per_thread = cache->size / (uint64_t)sharers;
	}
	if (count < max) {
		bandwidth_level *dram = &levels[count++];
		memset(dram, 0, sizeof *dram);
		snprintf(dram->name, sizeof dram->name, "DRAM");
		dram->capacity_per_thread = UINT64_MAX;
	}
	return count;
}

int bandwidth_level_of(const bandwidth_level *levels, int count, uint64_t footprint_per_thread)
{
	for (int i = 0; i < count; i++)
		if (footprint_per_thread <= levels[i].capacity_per_thread)
			return i;
	return count - 1;
}

int bandwidth_default_footprints(const bandwidth_level *levels, int count, uint64_t *footprints, int max)
{
	int n = 0;
	uint64_t previous = 0, last_cache = 0;
	for (int i = 0; i < count && n < max; i++) {
		uint64_t capacity = levels[i].capacity_per_thread;
		uint64_t f;
		if (levels[i].cache_level == 0)
			f = last_cache ? 2 * last_cache : (64u << 20);   /* DRAM */
		else if (previous == 0)
			f = capacity / 2;
		else
			f = capacity / 2 < 2 * previous ? capacity / 2 : 2 * previous;
		f -= f % 4096;   /* whole pages, whole kernel blocks */
		if (f == 0)
			f = 4096;
		footprints[n++] = f;
		if (levels[i].cache_level) {
			previous = capacity;
			last_cache = levels[i].cache_size;
		}
	}
	return n;
}
