/* `plumb c2c` access latencies: A times one access on every line of a
 * random chain, after helpers put every line into the wanted state.
 *
 * What it defeats:
 * - prefetchers: A visits the lines in a random cyclic order, and lines are
 *   `spacing` (128) bytes apart so the adjacent-line prefetcher's buddy is
 *   never a measured line;
 * - the loop and out-of-order overlap: each access depends on the previous
 *   one (see coherence_kernels.c);
 * - stale state: the preparation runs before every timed pass, and every
 *   recipe starts with a write or flush that removes A's copies;
 * - page-mapping conflicts (the thesis's caveat): the lines sit in one
 *   2 MiB transparent huge page when the kernel grants one. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"
#include "coherence/c2c.h"
#include "chase/chase.h"
#include "core/cpu.h"
#include "chase/permutation.h"
#include "core/stats.h"

struct c2c_bench {
	c2c_config config;
	arena memory;
	chase_chain chain;
	uint32_t *order;
	void **addresses;
	coherence_lines lines;
	coherence_team *team;
	int roles;
	timer_calibration timer;
	cpu_set_t saved_affinity;
	bool affinity_saved;
	double *samples;
};

void c2c_config_default(c2c_config *config)
{
	*config = (c2c_config){ .lines = 2048, .spacing = 128, .trials = 11, .seed = 0x5eed001,
	                        .timeout_ns = 2000000000ull };
}

void c2c_bench_close(c2c_bench *bench)
{
	if (!bench)
		return;
	coherence_team_stop(bench->team);
	if (bench->affinity_saved)
		pthread_setaffinity_np(pthread_self(), sizeof bench->saved_affinity, &bench->saved_affinity);
	arena_destroy(&bench->memory);
	free(bench->order);
	free(bench->addresses);
	free(bench->samples);
	free(bench);
}

int c2c_bench_open(c2c_bench **out, const c2c_config *config, const int *cpus, int count,
                   const timer_calibration *timer, plumb_status *status)
{
	*out = NULL;
	if (config->lines < 2 || config->lines > (1u << 24))
		return plumb_fail(status, EINVAL, "c2c: lines must be 2..%u", 1u << 24);
	if (config->spacing < 64 || config->spacing % 64 != 0)
		return plumb_fail(status, EINVAL, "c2c: line spacing must be a multiple of 64 bytes");
	if (config->trials < 1)
		return plumb_fail(status, EINVAL, "c2c: trials must be at least 1");
	if (count < 1 || count > COHERENCE_MAX_ROLES)
		return plumb_fail(status, EINVAL, "c2c: 1..%d CPUs", COHERENCE_MAX_ROLES);
	c2c_bench *bench = calloc(1, sizeof *bench);
	if (!bench)
		return plumb_fail(status, ENOMEM, "c2c: out of memory");
	bench->config = *config;
	bench->timer = *timer;
	bench->roles = count;
	bench->order = malloc(config->lines * sizeof *bench->order);
	bench->addresses = malloc(config->lines * sizeof *bench->addresses);
	bench->samples = malloc((size_t)config->trials * sizeof *bench->samples);
	if (!bench->order || !bench->addresses || !bench->samples) {
		c2c_bench_close(bench);
		return plumb_fail(status, ENOMEM, "c2c: out of memory");
	}
	size_t bytes = config->lines * config->spacing, huge = 2u << 20;
	arena_request request = { .size = bytes < huge ? huge : bytes, .pages = ARENA_PAGES_THP,
	                          .fault = ARENA_FAULT_PREFAULT, .alignment = huge };
	if (arena_create(&bench->memory, &request, status) != 0) {
		c2c_bench_close(bench);
		return -1;
	}
	if (permutation_random(bench->order, config->lines, config->seed, status) != 0
	    || chase_build(&bench->chain, bench->memory.base, bench->memory.size, config->spacing, 0, bench->order,
	                   config->lines, status) != 0) {
		c2c_bench_close(bench);
		return -1;
	}
	for (size_t i = 0; i < config->lines; i++)
		bench->addresses[i] = (uint8_t *)bench->memory.base + (size_t)bench->order[i] * config->spacing;
	bench->lines = (coherence_lines){ .base = (uint64_t)(uintptr_t)bench->memory.base, .count = config->lines,
	                                  .spacing = config->spacing, .order = bench->order };
	if (pthread_getaffinity_np(pthread_self(), sizeof bench->saved_affinity, &bench->saved_affinity) == 0)
		bench->affinity_saved = true;
	if (cpu_pin_self(cpus[0], status) != 0
	    || coherence_team_start(&bench->team, cpus, count, config->timeout_ns, status) != 0) {
		c2c_bench_close(bench);
		return -1;
	}
	*out = bench;
	return 0;
}

int c2c_bench_measure(c2c_bench *bench, coherence_state state, int sharers, coherence_access access,
                      c2c_result *out, plumb_status *status)
{
	coherence_plan plan;
	if (coherence_plan_build(state, sharers, &plan, status) != 0)
		return -1;
	if (plan.roles > bench->roles)
		return plumb_fail(status, EINVAL, "c2c: state %s needs %d CPUs, the bench has %d",
		                  coherence_state_name(state), plan.roles, bench->roles);
	/* One untimed pass first: it warms the TLB, the code and the address list. */
	for (int trial = -1; trial < bench->config.trials; trial++) {
		if (coherence_team_prepare(bench->team, &plan, &bench->lines, status) != 0)
			return -1;
		uint64_t ticks = coherence_time_access(&bench->timer, access, bench->chain.start, bench->addresses,
		                                       bench->config.lines);
		if (trial >= 0)
			bench->samples[trial] = timer_ticks_to_ns(&bench->timer, (double)ticks) / (double)bench->config.lines;
	}
	stats_summary summary;
	stats_summarize(bench->samples, (size_t)bench->config.trials, &summary);
	*out = (c2c_result){ .median_ns = summary.median, .min_ns = summary.min, .trials = bench->config.trials };
	return 0;
}
