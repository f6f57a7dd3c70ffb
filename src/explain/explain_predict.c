/* The model behind the "predicted" column (docs/explain.md), in the manner
 * of the execution-cache-memory (ECM) model of Hager, Treibig and Wellein
 * (Treibig and Hager 2010; Stengel et al. 2015): the in-core time and the
 * data transfers overlap, and only what cannot overlap adds.
 *
 *   T_core     the region's blocks priced by LLVM's scheduling model of this
 *              CPU (llvm-mca, loads hitting the L1), or I / (IPC x f) when
 *              --ipc is given or llvm-mca is missing;
 *   T_transfer sum over L2, L3, memory of the prefetchable lines served
 *              there (and memory's write-backs) x line / the level's measured
 *              one-thread bandwidth (plumb bw's read kernel, which already
 *              holds the transfers through the levels above it);
 *   T_stall    sum over the levels of the irregular misses served there x
 *              latency x (chained + (1 - chained) / MLP): a load whose
 *              address comes from its own previous result (a pointer chase)
 *              waits a whole latency, the others overlap by the measured
 *              memory-level parallelism (Chou, Fahs and Abraham 2004);
 *
 *   T_kernel   the region's page faults (counted in the measured runs) x
 *              one minor fault's kernel time, measured now: the kernel is
 *              not in the cache model, and a program's first touch of its
 *              memory is mostly this (about 2 us a page on a KVM guest);
 *
 *   t = max(T_core, T_transfer, lines to and from memory x line / B_memory) + T_stall + T_kernel
 *
 * "Prefetchable" is the share of the new lines the region's load and store
 * instructions reach at a constant stride within a page, or in consecutive
 * lines across one (instruction-pointer stride prefetchers train per
 * instruction: a column walk counts; the L2 streamers follow a stream into
 * the next page).  The larger of this and the share of L1D misses a second
 * simulation with a stride prefetcher removed moved no PolyBench prediction
 * by more than 1% and cost a fifth of explain's CPU time: it went. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "explain/explain.h"

const char *explain_level_name(explain_level level)
{
	static const char *const names[EXPLAIN_LEVELS] = { "L1", "L2", "L3", "memory" };
	return (unsigned)level < EXPLAIN_LEVELS ? names[level] : "?";
}

static bool known(double value)
{
	return isfinite(value) && value > 0;
}

void explain_predict(const explain_machine *machine, double ipc_base, const explain_region *region,
                     explain_prediction *out)
{
	memset(out, 0, sizeof *out);
	const explain_simulated *sim = &region->simulated;
	if (!region->instrumented) {
		snprintf(out->reason, sizeof out->reason, "no instrumented instruction count");
		return;
	}
	if (!sim->done) {
		snprintf(out->reason, sizeof out->reason, "no simulated misses");
		return;
	}
	if (!machine || !known(machine->clock_ghz) || !(ipc_base >= 0)) {
		snprintf(out->reason, sizeof out->reason, "the core clock of this machine is not known");
		return;
	}
	/* Misses of level l are served by level l + 1. */
	uint64_t served[EXPLAIN_LEVELS] = { 0 };
	/* L2 and below are unified: their misses include instruction fetches'. */
	uint64_t m1 = sim->misses[0] + sim->l1i_misses, m2 = sim->misses[1] < m1 ? sim->misses[1] : m1;
	uint64_t m3 = sim->misses[2] < m2 ? sim->misses[2] : m2;
	served[EXPLAIN_L2] = m1 - m2;
	served[EXPLAIN_L3] = m2 - m3;
	served[EXPLAIN_MEMORY] = m3;
	/* The prefetchable fraction, applied to every level: a stream is a
	 * stream wherever it is served from. */
	double sequential = 0;
	const explain_core *core = &region->core;
	if (core->watched && core->lines > 0)
		sequential = (double)core->strided_lines / (double)core->lines;
	if (sequential > 1)
		sequential = 1;
	out->sequential = sequential;
	double chained = core->decoded_loads ? (double)core->chained_loads / (double)core->decoded_loads : 0;
	out->chained = chained > 1 ? 1 : chained;
	double line = machine->line_bytes ? machine->line_bytes : 64;
	double instructions = (double)region->counts.value[INSTRUMENT_INSTRUCTIONS];
	if (ipc_base <= 0 && core->done && core->cycles > 0) {
		out->compute_ns = core->cycles / machine->clock_ghz;
		out->ipc_from_code = true;
		out->ipc = (double)core->instructions / core->cycles;
	} else {
		out->ipc = ipc_base > 0 ? ipc_base : 1.0;
		out->compute_ns = instructions / (out->ipc * machine->clock_ghz);
	}
	double stall = 0, overlapped_stall = 0, transfer = 0;
	for (int l = EXPLAIN_L2; l < EXPLAIN_LEVELS; l++) {
		double streamed = sequential * (double)served[l], irregular = (double)served[l] - streamed;
		if (l == EXPLAIN_MEMORY)
			streamed += (double)sim->memory_writes;   /* write-backs share memory's bandwidth */
		if (streamed <= 0 && irregular <= 0)
			continue;
		if (irregular > 0 && !known(machine->latency_ns[l])) {
			snprintf(out->reason, sizeof out->reason, "the %s latency of this machine is not known",
			         explain_level_name((explain_level)l));
			return;
		}
		if (streamed > 0 && !known(machine->bandwidth_gbps[l])) {
			snprintf(out->reason, sizeof out->reason, "the %s bandwidth of this machine is not known",
			         explain_level_name((explain_level)l));
			return;
		}
		double mlp = known(machine->mlp[l]) && machine->mlp[l] > 1 ? machine->mlp[l] : 1;
		out->stream_ns[l] = streamed > 0 ? streamed * line / machine->bandwidth_gbps[l] : 0;
		double wait = irregular > 0 ? irregular * machine->latency_ns[l] : 0;
		out->latency_ns[l] = wait * (out->chained + (1 - out->chained) / mlp);
		transfer += out->stream_ns[l];
		stall += out->latency_ns[l];
		overlapped_stall += wait / mlp;
	}
	uint64_t lines = sim->memory_reads + sim->memory_writes;
	if (lines > 0 && known(machine->bandwidth_gbps[EXPLAIN_MEMORY]))
		out->bandwidth_bound_ns = (double)lines * line / machine->bandwidth_gbps[EXPLAIN_MEMORY];
	out->transfer_ns = transfer;
	out->stall_ns = stall;
	double overlap = out->compute_ns;
	if (transfer > overlap)
		overlap = transfer;
	if (out->bandwidth_bound_ns > overlap)
		overlap = out->bandwidth_bound_ns;
	if (known(machine->fault_ns) && isfinite(region->page_faults) && region->page_faults > 0)
		out->kernel_ns = region->page_faults * machine->fault_ns;
	out->total_ns = overlap + stall + out->kernel_ns;
	out->overlapped_ns = overlap + overlapped_stall + out->kernel_ns;
	out->done = true;
}

/* The mean of a counted event over the runs, NaN if it did not count. */
static double counted_mean(const explain_result *result, const explain_region *region, const char *name)
{
	for (size_t e = 0; e < result->event_count; e++) {
		const explain_counter *c = &region->counters[e];
		if (!strcmp(result->events[e], name) && (c->state == COUNTER_OK || c->state == COUNTER_MULTIPLEXED) && c->n > 0)
			return c->mean;
	}
	return NAN;
}

void explain_predict_all(explain_result *result)
{
	for (size_t i = 0; i < result->region_count; i++) {
		result->regions[i].page_faults = counted_mean(result, &result->regions[i], "page-faults");
		explain_predict(result->have_machine ? &result->machine : NULL, result->ipc_base, &result->regions[i],
		                &result->regions[i].predicted);
		if (result->have_other) {
			/* the same region with the other machine's misses, at its figures */
			explain_region there = result->regions[i];
			there.simulated = result->regions[i].other_simulated;
			if (there.other_core.done) {
				/* its own core's cycles; the strides are the program's */
				there.core.done = true;
				there.core.cycles = there.other_core.cycles;
				there.core.priced_instructions = there.other_core.priced_instructions;
				there.core.chained_loads = there.other_core.chained_loads;
				there.core.decoded_loads = there.other_core.decoded_loads;
			}
			explain_predict(&result->other_machine, result->ipc_base, &there, &result->regions[i].other_predicted);
		}
	}
}
