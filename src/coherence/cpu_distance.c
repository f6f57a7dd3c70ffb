/* How far apart two CPUs are, from hwloc's tree: the deepest object both
 * sit under decides whether a line moves inside a core, through a shared
 * cache, across dies of a package, or between sockets. */
#include <errno.h>
#include <stdlib.h>
#include <hwloc.h>
#include "coherence/c2c.h"

struct cpu_distance_map {
	hwloc_topology_t topology;
};

int cpu_distance_open(cpu_distance_map **out, plumb_status *status)
{
	*out = NULL;
	cpu_distance_map *map = calloc(1, sizeof *map);
	if (!map)
		return plumb_fail(status, ENOMEM, "cpu distance: out of memory");
	if (hwloc_topology_init(&map->topology) != 0) {
		free(map);
		return plumb_fail(status, EIO, "cpu distance: hwloc_topology_init failed");
	}
	if (hwloc_topology_load(map->topology) != 0) {
		hwloc_topology_destroy(map->topology);
		free(map);
		return plumb_fail(status, EIO, "cpu distance: hwloc could not read the topology");
	}
	*out = map;
	return 0;
}

void cpu_distance_close(cpu_distance_map *map)
{
	if (!map)
		return;
	hwloc_topology_destroy(map->topology);
	free(map);
}

static bool under_type(hwloc_obj_t object, hwloc_obj_type_t type)
{
	for (; object; object = object->parent)
		if (object->type == type)
			return true;
	return false;
}

cpu_distance cpu_distance_between(const cpu_distance_map *map, int cpu_a, int cpu_b)
{
	if (cpu_a == cpu_b)
		return CPU_DISTANCE_SAME;
	hwloc_obj_t a = hwloc_get_pu_obj_by_os_index(map->topology, (unsigned)cpu_a);
	hwloc_obj_t b = hwloc_get_pu_obj_by_os_index(map->topology, (unsigned)cpu_b);
	if (!a || !b)
		return CPU_DISTANCE_UNKNOWN;
	hwloc_obj_t common = hwloc_get_common_ancestor_obj(map->topology, a, b);
	if (!common)
		return CPU_DISTANCE_UNKNOWN;
	if (common->type == HWLOC_OBJ_CORE)
		return CPU_DISTANCE_SMT;
	/* A common ancestor below or at a cache means that cache is shared. */
	if (common->type == HWLOC_OBJ_L1CACHE || common->type == HWLOC_OBJ_L2CACHE)
		return CPU_DISTANCE_SAME_L2;
	if (under_type(common, HWLOC_OBJ_L3CACHE) || common->type == HWLOC_OBJ_L3CACHE)
		return CPU_DISTANCE_SAME_L3;
	if (under_type(common, HWLOC_OBJ_PACKAGE))
		return CPU_DISTANCE_OTHER_L3;
	return CPU_DISTANCE_OTHER_SOCKET;
}

const char *cpu_distance_name(cpu_distance distance)
{
	static const char *const names[] = { "same-cpu", "smt-sibling", "same-l2", "same-l3",
	                                     "other-l3", "other-socket", "unknown" };
	return (unsigned)distance < CPU_DISTANCE_COUNT ? names[distance] : "unknown";
}

void cpu_distance_representatives(const cpu_distance_map *map, const int *cpus, int count,
                                  int pairs[CPU_DISTANCE_COUNT][2])
{
	for (int d = 0; d < CPU_DISTANCE_COUNT; d++)
		pairs[d][0] = pairs[d][1] = -1;
	for (int i = 0; i < count; i++)
		for (int j = 0; j < count; j++) {
			if (i == j)
				continue;
			cpu_distance d = cpu_distance_between(map, cpus[i], cpus[j]);
			if (pairs[d][0] < 0) {
				pairs[d][0] = cpus[i];
				pairs[d][1] = cpus[j];
			}
		}
}
