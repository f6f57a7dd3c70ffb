/* The model behind the "predicted" column (docs/explain.md).
 *
 * Time = the instructions at a base rate, plus the time each miss costs at
 * the level that serves it, in the manner of Hennessy and Patterson's
 * CPU time = instructions x CPI_base + memory stall cycles (average memory
 * access time):
 *
 *   t = I / (IPC_base x f)
 *     + sum over L2, L3, memory of
 *         sequential misses served there x line / bandwidth of the level
 *       + irregular misses served there x latency of the level / overlap
 *   bounded below by (lines from memory x line) / memory bandwidth.
 *
 * "Sequential" misses are the ones a stride prefetcher removes in a second
 * simulation of the same references: hardware prefetchers turn such a stream
 * into a bandwidth-bound transfer, which plumb bw measures.  Irregular misses
 * pay the latency plumb lat measures; the overlap is 1 (each miss waits for
 * the previous one, as in a pointer chase) for the prediction, and the
 * measured memory-level parallelism (the misses in flight that k independent
 * chains reach, Chou et al. 2004 call it MLP) for the overlapped variant,
 * which bounds the prediction from below for independent misses. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "plumb/explain.h"

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
	if (!machine || !known(machine->clock_ghz) || !(ipc_base > 0)) {
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
	/* The fraction of L1D misses a stride prefetcher removed; applied to
	 * every level, since a stream is a stream wherever it is served from. */
	double sequential = m1 ? (double)sim->sequential_misses[0] / (double)m1 : 0;
	if (sequential > 1)
		sequential = 1;
	double line = machine->line_bytes ? machine->line_bytes : 64;
	out->compute_ns = (double)region->counts.value[INSTRUMENT_INSTRUCTIONS] / (ipc_base * machine->clock_ghz);
	double total = out->compute_ns, overlapped = out->compute_ns;
	for (int l = EXPLAIN_L2; l < EXPLAIN_LEVELS; l++) {
		if (served[l] == 0)
			continue;
		double streamed = sequential * (double)served[l], irregular = (double)served[l] - streamed;
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
		out->stream_ns[l] = streamed > 0 ? streamed * line / machine->bandwidth_gbps[l] : 0;
		out->latency_ns[l] = irregular > 0 ? irregular * machine->latency_ns[l] : 0;
		double mlp = known(machine->mlp[l]) && machine->mlp[l] > 1 ? machine->mlp[l] : 1;
		total += out->stream_ns[l] + out->latency_ns[l];
		overlapped += out->stream_ns[l] + out->latency_ns[l] / mlp;
	}
	uint64_t lines = sim->memory_reads;
	if (lines > 0 && known(machine->bandwidth_gbps[EXPLAIN_MEMORY]))
		out->bandwidth_bound_ns = (double)lines * line / machine->bandwidth_gbps[EXPLAIN_MEMORY];
	out->total_ns = total > out->bandwidth_bound_ns ? total : out->bandwidth_bound_ns;
	out->overlapped_ns = overlapped > out->bandwidth_bound_ns ? overlapped : out->bandwidth_bound_ns;
	out->done = true;
}

void explain_predict_all(explain_result *result)
{
	for (size_t i = 0; i < result->region_count; i++)
		explain_predict(result->have_machine ? &result->machine : NULL, result->ipc_base, &result->regions[i],
		                &result->regions[i].predicted);
}
