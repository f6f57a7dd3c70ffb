/* libFuzzer target: the miss-ratio curve's stacks (src/sim/sim_curve.c) on
 * any reference stream.  The first bytes choose the level, the cores, the
 * L1s above and the grid's largest size; every 6 bytes after them are a
 * reference (thread, kind, size, address over a few hundred lines, some
 * repeated, some straddling) or a region marker.  For the L1D and L1I the
 * curve must equal plumb's simulator, run once per grid point with that one
 * configuration (the whole program and every region); the lower levels
 * must run clean under ASan and UBSan, and every level's curve must be
 * the same with the sets' rows moved the portable way. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "sim/sim_curve.h"
#include "sim/sim_curve_internal.h"

#define MAX_RECORDS 2048

static const char *const names[] = { "a", "b", "c" };

static void fail(const char *what, uint64_t size, uint32_t ways, uint64_t curve, uint64_t simulated)
{
	fprintf(stderr, "%s: %llu B %u-way: curve %llu, simulator %llu\n", what, (unsigned long long)size, ways,
	        (unsigned long long)curve, (unsigned long long)simulated);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	sim_config config;
	sim_config_default(&config);
	sim_level level = (sim_level)(data[0] % 4);
	config.cores = 1 + data[1] % 2;
	config.cache[SIM_L1D].size = 256u << (data[2] % 4);
	config.cache[SIM_L1D].assoc = 1u << (data[2] >> 4) % 3;
	config.cache[SIM_L1I].size = 256u << (data[3] % 3);
	config.cache[SIM_L1I].assoc = 2;
	config.cache[SIM_L2].size = level >= SIM_L2 ? 4096 : 0;
	config.cache[SIM_L2].assoc = 4;
	config.cache[SIM_L3].size = level == SIM_L3 ? 65536 : 0;
	config.cache[SIM_L3].assoc = 16;
	config.cache[SIM_L3].line = 64;
	config.l3_inclusion = SIM_NON_INCLUSIVE;
	config.modify = (sim_modify)((data[3] >> 4) % 3);
	uint64_t max_size = 64ull << (data[1] >> 4);
	plumb_status status;
	if (sim_config_validate(&config, &status) != 0)
		return 0;
	sim_curve *curve;
	if (sim_curve_new(&curve, &config, level, max_size, &status) != 0)
		abort();   /* every configuration here is covered */

	trace_record records[MAX_RECORDS];
	size_t n = 0;
	uint64_t last = 0x10000;
	for (size_t at = 4; at + 6 <= size && n < MAX_RECORDS; at += 6) {
		const uint8_t *b = data + at;
		trace_record *r = &records[n++];
		memset(r, 0, sizeof *r);
		r->thread = b[0] % 3;
		if (b[0] >> 6 == 3) {
			trace_region_marker(r, b[1] & 1, r->thread, names[(b[1] >> 1) % 3]);
			continue;
		}
		r->kind = (uint8_t)(b[1] % 4);
		r->size = (uint16_t)(1u << (b[1] >> 2) % 5);
		uint64_t address = 0x10000 + (((uint64_t)b[2] | (uint64_t)b[3] << 8 | (uint64_t)b[4] << 16) % (512 * 64));
		if (b[5] % 4 == 0)
			address = last;
		r->address = last = address;
	}
	/* in two batches, as a reader hands them */
	if (sim_curve_batch(curve, records, n / 2, &status) != 0 ||
	    sim_curve_batch(curve, records + n / 2, n - n / 2, &status) != 0)
		abort();   /* thread ids and kinds here are all good */
	/* the sets' rows moved the portable way (AVX-512 above, where the CPU
	 * has it): every point of every level the same */
	sim_curve *narrow;
	if (sim_curve_new(&narrow, &config, level, max_size, &status) != 0)
		abort();
	sim_curve_narrow_rows(narrow);
	if (sim_curve_batch(narrow, records, n, &status) != 0)
		abort();
	if (sim_curve_footprint(narrow) != sim_curve_footprint(curve))
		abort();
	for (uint64_t bytes = 64; bytes <= sim_curve_max_size(curve); bytes *= 2)
		for (uint32_t ways = 0; ways <= SIM_CURVE_MAX_WAYS; ways = ways ? 2 * ways : 1) {
			uint64_t a_misses, a_accesses, b_misses, b_accesses;
			int a_rc = sim_curve_point(curve, SIZE_MAX, bytes, ways, &a_misses, &a_accesses);
			if (a_rc != sim_curve_point(narrow, SIZE_MAX, bytes, ways, &b_misses, &b_accesses))
				abort();
			if (a_rc == 0 && (a_misses != b_misses || a_accesses != b_accesses))
				fail("portable rows", bytes, ways, b_misses, a_misses);
		}
	sim_curve_free(narrow);
	output_report *report = sim_curve_report(curve, NULL, &status);
	if (!report)
		abort();
	output_report_free(report);

	if (level <= SIM_L1D) {
		uint64_t shown = sim_curve_shown_size(curve);
		for (uint64_t bytes = 64; bytes <= shown; bytes *= 2)
			for (uint32_t ways = 1; ways <= bytes / 64; ways *= 2) {
				if (ways > SIM_CURVE_MAX_WAYS && ways != bytes / 64)
					continue;
				sim_config one = config;
				one.cache[level].size = bytes;
				one.cache[level].assoc = ways;
				sim *s;
				if (sim_new(&s, &one, &status) != 0 || sim_access_batch(s, records, n, &status) != 0)
					abort();
				const sim_stats *st = sim_statistics(s);
				uint64_t simulated = 0, misses, accesses;
				for (uint32_t core = 0; core < st->cores; core++)
					for (int kind = 0; kind < SIM_KIND_COUNT; kind++)
						simulated += st->core[core].cache[level].misses[kind];
				if (sim_curve_point(curve, SIZE_MAX, bytes, ways, &misses, &accesses) != 0)
					abort();
				/* two cores share the lines here: coherence, which the
				 * curve leaves out, may take lines; one core is exact */
				if (config.cores == 1 && misses != simulated)
					fail("whole program", bytes, ways, misses, simulated);
				for (size_t i = 0; config.cores == 1 && i < sim_region_count(s); i++) {
					uint64_t expected = sim_region_misses(sim_region(s, i), level);
					if (sim_curve_point(curve, i, bytes, ways, &misses, &accesses) != 0)
						abort();
					if (misses != expected)
						fail(sim_region(s, i)->name, bytes, ways, misses, expected);
				}
				sim_free(s);
			}
	}
	sim_curve_free(curve);
	return 0;
}
