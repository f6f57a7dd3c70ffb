/* Byte accounting (STREAM's convention, and the write-allocate estimate)
 * and the grouping of working sets into memory levels. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bandwidth/bandwidth.h"

static const bandwidth_kernel *kernel(const char *name)
{
	const bandwidth_kernel *k = bandwidth_kernel_by_name(name, BANDWIDTH_ISA_SCALAR);
	cr_assert_not_null(k, "%s", name);
	return k;
}

Test(bw_accounting, stream_counting)
{
	cr_assert_eq(bandwidth_bytes_counted(kernel("read"), 100), 800);
	cr_assert_eq(bandwidth_bytes_counted(kernel("write"), 100), 800);
	cr_assert_eq(bandwidth_bytes_counted(kernel("copy"), 100), 1600);
	cr_assert_eq(bandwidth_bytes_counted(kernel("triad"), 100), 2400);
	cr_assert_eq(bandwidth_bytes_counted(kernel("write-nt"), 100), 800);
	cr_assert_eq(bandwidth_bytes_counted(kernel("triad-nt"), 100), 2400);
}

Test(bw_accounting, write_allocate_adds_one_read_per_ordinary_store)
{
	cr_assert_eq(bandwidth_bytes_moved(kernel("read"), 100), 800);
	cr_assert_eq(bandwidth_bytes_moved(kernel("write"), 100), 1600);
	cr_assert_eq(bandwidth_bytes_moved(kernel("copy"), 100), 2400);
	cr_assert_eq(bandwidth_bytes_moved(kernel("triad"), 100), 3200);
	cr_assert_eq(bandwidth_bytes_moved(kernel("write-nt"), 100), 800);
	cr_assert_eq(bandwidth_bytes_moved(kernel("copy-nt"), 100), 1600);
	cr_assert_eq(bandwidth_bytes_moved(kernel("triad-nt"), 100), 2400);
}

Test(bw_accounting, elements_fill_the_footprint_in_whole_blocks)
{
	/* 3 arrays in 30000 bytes: 10000 each, rounded down to 9728 (19 x 512). */
	cr_assert_eq(bandwidth_elements_for_footprint(kernel("triad"), 30000), 9728 / 8);
	cr_assert_eq(bandwidth_elements_for_footprint(kernel("read"), 16384), 2048);
	cr_assert_eq(bandwidth_elements_for_footprint(kernel("copy"), 16384), 1024);
	cr_assert_eq(bandwidth_elements_for_footprint(kernel("copy"), 1000), 0);
}

/* The development machine's shape: private 32 KiB L1 and 1 MiB L2, one
 * 32 MiB L3 shared by both CPUs. */
static void zen4_vm(topology *t)
{
	memset(t, 0, sizeof *t);
	t->cpus = t->cores = 2;
	t->cache_count = 4;
	t->caches[0] = (topology_cache){ .level = 1, .type = CACHE_DATA, .size = 32 << 10, .line = 64, .associativity = 8, .instances = 2, .cpus_per_instance = 1 };
	t->caches[1] = (topology_cache){ .level = 1, .type = CACHE_INSTRUCTION, .size = 32 << 10, .line = 64, .associativity = 8, .instances = 2, .cpus_per_instance = 1 };
	t->caches[2] = (topology_cache){ .level = 2, .type = CACHE_UNIFIED, .size = 1 << 20, .line = 64, .associativity = 8, .instances = 2, .cpus_per_instance = 1 };
	t->caches[3] = (topology_cache){ .level = 3, .type = CACHE_UNIFIED, .size = 32 << 20, .line = 64, .associativity = 16, .instances = 1, .cpus_per_instance = 2 };
}

Test(bw_accounting, levels_from_topology_share_the_last_level)
{
	topology t;
	zen4_vm(&t);
	bandwidth_level levels[BANDWIDTH_MAX_LEVELS];
	int n = bandwidth_levels_from_topology(&t, 1, levels, BANDWIDTH_MAX_LEVELS);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(levels[0].name, "L1");
	cr_assert_str_eq(levels[3].name, "DRAM");
	cr_assert_eq(levels[2].capacity_per_thread, 32u << 20);
	n = bandwidth_levels_from_topology(&t, 2, levels, BANDWIDTH_MAX_LEVELS);
	cr_assert_eq(levels[0].capacity_per_thread, 32u << 10, "private caches are not divided");
	cr_assert_eq(levels[1].capacity_per_thread, 1u << 20);
	cr_assert_eq(levels[2].capacity_per_thread, 16u << 20, "two threads share the L3");
	/* No topology: everything is DRAM. */
	cr_assert_eq(bandwidth_levels_from_topology(NULL, 1, levels, BANDWIDTH_MAX_LEVELS), 1);
}

Test(bw_accounting, sizes_group_into_levels)
{
	topology t;
	zen4_vm(&t);
	bandwidth_level one[BANDWIDTH_MAX_LEVELS], two[BANDWIDTH_MAX_LEVELS];
	int n1 = bandwidth_levels_from_topology(&t, 1, one, BANDWIDTH_MAX_LEVELS);
	int n2 = bandwidth_levels_from_topology(&t, 2, two, BANDWIDTH_MAX_LEVELS);
	cr_assert_str_eq(one[bandwidth_level_of(one, n1, 16 << 10)].name, "L1");
	cr_assert_str_eq(one[bandwidth_level_of(one, n1, 32 << 10)].name, "L1");
	cr_assert_str_eq(one[bandwidth_level_of(one, n1, (32 << 10) + 1)].name, "L2");
	cr_assert_str_eq(one[bandwidth_level_of(one, n1, 2 << 20)].name, "L3");
	cr_assert_str_eq(one[bandwidth_level_of(one, n1, 20 << 20)].name, "L3");
	cr_assert_str_eq(two[bandwidth_level_of(two, n2, 20 << 20)].name, "DRAM", "two threads x 20 MiB overflow the shared L3");
	cr_assert_str_eq(one[bandwidth_level_of(one, n1, 1ull << 34)].name, "DRAM");
}

Test(bw_accounting, default_footprints_land_one_per_level)
{
	topology t;
	zen4_vm(&t);
	bandwidth_level levels[BANDWIDTH_MAX_LEVELS];
	int n = bandwidth_levels_from_topology(&t, 1, levels, BANDWIDTH_MAX_LEVELS);
	uint64_t f[BANDWIDTH_MAX_LEVELS];
	cr_assert_eq(bandwidth_default_footprints(levels, n, f, BANDWIDTH_MAX_LEVELS), 4);
	cr_assert_eq(f[0], 16u << 10);
	cr_assert_eq(f[1], 64u << 10);
	cr_assert_eq(f[2], 2u << 20);
	cr_assert_eq(f[3], 64u << 20);
	for (int i = 0; i < n; i++)
		cr_assert_eq(bandwidth_level_of(levels, n, f[i]), i, "default %d lands in %s", i, levels[i].name);
}

Test(bw_accounting, level_value_is_the_median_of_its_points)
{
	const bandwidth_kernel *read = kernel("read"), *copy = kernel("copy");
	bandwidth_point points[5];
	memset(points, 0, sizeof points);
	const double medians[] = { 10, 30, 20, 99, 5 };
	const char *levels[] = { "L2", "L2", "L2", "L3", "L2" };
	for (int i = 0; i < 5; i++) {
		points[i].threads = 1;
		points[i].kernel = i == 4 ? copy : read;
		snprintf(points[i].level, sizeof points[i].level, "%s", levels[i]);
		points[i].result.gbps.max = medians[i];
		points[i].result.noisy = i == 1;
	}
	double value;
	bool noisy;
	cr_assert_eq(bandwidth_level_value(points, 5, 1, read, "L2", &value, &noisy), 3);
	cr_assert_eq(value, 20);
	cr_assert(noisy);
	cr_assert_eq(bandwidth_level_value(points, 5, 1, read, "L3", &value, &noisy), 1);
	cr_assert_eq(value, 99);
	cr_assert_not(noisy);
	cr_assert_eq(bandwidth_level_value(points, 5, 2, read, "L2", &value, &noisy), 0);
	cr_assert(isnan(value));
}
