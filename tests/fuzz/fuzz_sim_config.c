/* libFuzzer target: the simulator's configuration parser.  Any bytes must
 * parse or fail with a message; a configuration that parses and validates
 * (and is small enough to build quickly) must also build a simulator that
 * runs a short multi-threaded trace with its invariants checked. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"

static uint64_t total_lines(const sim_config *c)
{
	uint64_t lines = 0;
	for (int level = 0; level < SIM_LEVEL_COUNT; level++)
		if (c->cache[level].size)
			lines += (c->cache[level].size / c->cache[level].line) * (level == SIM_L3 ? 1 : c->cores);
	for (int t = 0; t < SIM_TLB_COUNT; t++)
		lines += (uint64_t)c->tlb[t].entries * c->cores;
	return lines;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sim_config config;
	plumb_status status;
	sim_config_default(&config);
	if (sim_config_parse(&config, (const char *)data, size, "fuzz", &status) != 0) {
		if (status.message[0] == '\0')
			abort();   /* every failure says why */
		return 0;
	}
	if (sim_config_validate(&config, &status) != 0 || total_lines(&config) > (1u << 16))
		return 0;
	config.check = true;
	sim *s;
	if (sim_new(&s, &config, &status) != 0)
		abort();   /* a valid configuration must build */
	trace_record records[64];
	for (int i = 0; i < 64; i++) {
		memset(&records[i], 0, sizeof records[i]);
		records[i].thread = (uint32_t)(i % 3);
		records[i].kind = (uint8_t)(i % 4);
		records[i].address = 0x1000 + (uint64_t)((i * 40) % 512);
		records[i].size = (uint16_t)(1 + i % 16);
	}
	if (sim_access_batch(s, records, 64, &status) != 0 || sim_check(s, &status) != 0) {
		fprintf(stderr, "invariant: %s\n", status.message);
		abort();   /* an invariant broke */
	}
	sim_free(s);
	return 0;
}
