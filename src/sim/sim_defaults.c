/* The default configuration (docs/simulator.md): below both the parser
 * (sim_config.c, whose "preset" key starts from a preset) and the presets
 * (sim_presets.c, which start from these defaults), so neither calls the
 * other back. */
#include <stdio.h>
#include <string.h>
#include "sim/sim.h"

static void cache_default(sim_cache_config *c, uint64_t size, uint32_t assoc, uint32_t latency)
{
	c->size = size;
	c->line = 64;
	c->assoc = assoc;
	c->latency = latency;
	c->replacement = SIM_LRU;
	c->write_back = true;
	c->write_allocate = true;
}

void sim_config_default(sim_config *config)
{
	memset(config, 0, sizeof *config);
	snprintf(config->name, sizeof config->name, "default");
	config->cores = 1;
	cache_default(&config->cache[SIM_L1I], 32 * 1024, 8, 4);
	cache_default(&config->cache[SIM_L1D], 32 * 1024, 8, 4);
	cache_default(&config->cache[SIM_L2], 1024 * 1024, 16, 14);
	cache_default(&config->cache[SIM_L3], 0, 16, 50);
	config->l3_inclusion = SIM_INCLUSIVE;
	config->protocol = SIM_MESI;
	for (int t = 0; t < SIM_TLB_COUNT; t++) {
		config->tlb[t].page_size = 4096;
		config->tlb[t].replacement = SIM_LRU;
	}
	config->tlb[SIM_ITLB].latency = config->tlb[SIM_DTLB].latency = 7;
	config->tlb[SIM_STLB].latency = 30;
	config->prefetch.kind = SIM_PREFETCH_NONE;
	config->prefetch.streams = 4;
	config->prefetch.depth = 4;
	config->modify = SIM_MODIFY_READ_WRITE;
	config->memory_latency = 200;
	config->transfer_latency = 60;
	config->upgrade_latency = 40;
	config->seed = 1;
	config->classify = true;
}
