/* Where a working set lands: the cache levels from the topology, plus
 * DRAM, and the default footprints that put one run in each. */
#include <math.h>
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
		l->sharing = sharing;
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

int bandwidth_levels_use_model(bandwidth_level *levels, int count, int threads, const machine_model *model)
{
	int changed = 0;
	if (threads < 1)
		threads = 1;
	for (int i = 0; model && i < count; i++) {
		const machine_level *ml = NULL;
		for (size_t k = 0; k < model->level_count; k++)
			if (model->levels[k].cache_level == levels[i].cache_level && levels[i].cache_level > 0)
				ml = &model->levels[k];
		/* the rule against this machine's own nominal size */
		double usable = ml && ml->shared && !ml->hidden ? machine_usable_bytes((double)levels[i].cache_size, ml->usable_bytes)
		                                                : NAN;
		if (!isfinite(usable))
			continue;
		int sharing = levels[i].sharing > 0 ? levels[i].sharing : 1;
		levels[i].usable_size = (uint64_t)usable;
		levels[i].capacity_per_thread = levels[i].usable_size / (uint64_t)(threads < sharing ? threads : sharing);
		changed++;
	}
	return changed;
}

int bandwidth_default_footprints(const bandwidth_level *levels, int count, uint64_t *footprints, int max)
{
	return bandwidth_footprints_for(levels, count, 1, footprints, max);
}

int bandwidth_footprints_for(const bandwidth_level *levels, int count, int max_threads, uint64_t *footprints, int max)
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
		if (levels[i].cache_level && levels[i].usable_size) {
			/* every thread's share of what is usable, at the most threads */
			int sharing = levels[i].sharing > 0 ? levels[i].sharing : 1;
			int sharers = max_threads < 1 ? 1 : max_threads < sharing ? max_threads : sharing;
			uint64_t share = levels[i].usable_size / (uint64_t)sharers;
			if (share <= previous)
				share = levels[i].usable_size;   /* too little for every thread: sized for one */
			f = share / 2 < 2 * previous ? share / 2 : 2 * previous;
			if (f <= previous && share > previous)
				f = (uint64_t)sqrt((double)previous * (double)share);
		}
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

void bandwidth_usable_note(const bandwidth_level *levels, int count, const uint64_t *footprints, int max_threads,
                           const char *source, char *note, size_t length)
{
	size_t used = 0;
	if (length)
		note[0] = 0;
	for (int i = 0; i < count && used + 1 < length; i++) {
		if (!levels[i].usable_size)
			continue;
		int w = snprintf(note + used, length - used, "%s%s at its usable %.1f MiB of the nominal %.0f MiB", used ? "; " : "",
		                 levels[i].name, (double)levels[i].usable_size / 1048576, (double)levels[i].cache_size / 1048576);
		if (w > 0 && (size_t)w < length - used)
			used += (size_t)w;
		if (footprints && used + 1 < length) {
			int sharing = levels[i].sharing > 0 ? levels[i].sharing : 1;
			int sharers = max_threads < 1 ? 1 : max_threads < sharing ? max_threads : sharing;
			if ((uint64_t)sharers * footprints[i] <= levels[i].usable_size)
				w = snprintf(note + used, length - used, ", %.2f MiB per thread so that %d thread%s fit%s in it",
				             (double)footprints[i] / 1048576, sharers, sharers == 1 ? "" : "s", sharers == 1 ? "s" : "");
			else
				w = snprintf(note + used, length - used, ", %.2f MiB per thread, sized for one thread: %d threads' "
				             "working sets do not fit in it beside the level before it, so its all-threads row is partly memory",
				             (double)footprints[i] / 1048576, sharers);
			if (w > 0 && (size_t)w < length - used)
				used += (size_t)w;
		}
	}
	if (used && used + 1 < length)
		snprintf(note + used, length - used, " (the machine model measured in %s)", source && source[0] ? source : "a saved report");
}
