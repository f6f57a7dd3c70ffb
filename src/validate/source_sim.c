/* The simulator as a source ("data collection-2" of seed 000): a
 * benchmark's emitter streams the exact references of one run into the
 * simulator, which counts only between the region marks.  Without
 * prefetching (the presets' default) the simulator's counts must equal the
 * closed-form predictions inside each validity domain; where they do not,
 * the model or the emitter is wrong, and the tests say so.
 *
 * Built only when the simulator's header is present, so that this area
 * never breaks the build of a tree without the simulator. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "validate/native.h"

#if defined(__has_include)
#if __has_include("sim/sim.h")
#define VALIDATE_HAVE_SIM 1
#endif
#endif

#ifdef VALIDATE_HAVE_SIM
#include "sim/sim.h"

typedef struct sim_sink {
	sim *simulator;
	const validate_benchmark *benchmark;
	double *values;
	bool in_region, done;
} sim_sink;

uint64_t validate_sim_value(const sim_core_stats *c, validate_sim_event event, bool *known)
{
	*known = true;
	switch (event) {
	case VALIDATE_SIM_PAGES_TOUCHED: return c->tlb[SIM_DTLB].compulsory;
	case VALIDATE_SIM_TLB_MISSES: return c->tlb[SIM_DTLB].misses;
	case VALIDATE_SIM_L1D_MISSES: return c->cache[SIM_L1D].misses[SIM_READ] + c->cache[SIM_L1D].misses[SIM_WRITE];
	case VALIDATE_SIM_L2_MISSES: return c->cache[SIM_L2].misses[SIM_READ] + c->cache[SIM_L2].misses[SIM_WRITE];
	case VALIDATE_SIM_L1I_MISSES: return c->cache[SIM_L1I].misses[SIM_IFETCH];
	case VALIDATE_SIM_L2_INSTRUCTION_MISSES: return c->cache[SIM_L2].misses[SIM_IFETCH];
	case VALIDATE_SIM_INSTRUCTIONS: return c->references[SIM_IFETCH];
	case VALIDATE_SIM_READS: return c->references[SIM_READ];
	case VALIDATE_SIM_WRITES: return c->references[SIM_WRITE];
	case VALIDATE_SIM_INTERVENTIONS: return c->coherence.interventions_received;
	case VALIDATE_SIM_INVALIDATIONS: return c->coherence.invalidations_received;
	case VALIDATE_SIM_UPGRADES_SHARED: return c->coherence.upgrades_shared;
	case VALIDATE_SIM_UPGRADES_CLEAN: return c->coherence.upgrades_clean;
	case VALIDATE_SIM_NONE: break;
	}
	*known = false;
	return 0;
}

static int sink_records(void *context, const trace_record *records, size_t count, plumb_status *status)
{
	sim_sink *s = context;
	return sim_access_batch(s->simulator, records, count, status);
}

static int sink_mark(void *context, validate_mark mark, plumb_status *status)
{
	(void)status;
	sim_sink *s = context;
	if (mark == VALIDATE_REGION_BEGIN) {
		sim_reset_statistics(s->simulator);
		s->in_region = true;
		return 0;
	}
	const sim_stats *stats = sim_statistics(s->simulator);
	/* The simulator gives cores to threads in order of appearance; the
	 * counted role is thread 0 of the emitted stream. */
	uint32_t core = 0;
	for (size_t t = 0; t < sim_thread_count(s->simulator); t++)
		if (sim_thread(s->simulator, t)->thread == 0) core = sim_thread(s->simulator, t)->core;
	for (int e = 0; e < s->benchmark->event_count; e++) {
		bool known;
		uint64_t v = validate_sim_value(&stats->core[core], s->benchmark->events[e].sim, &known);
		s->values[e] = known ? (double)v : NAN;
	}
	s->in_region = false;
	s->done = true;
	return 0;
}

bool validate_simulator_available(char *reason, size_t length)
{
	(void)reason;
	(void)length;
	return true;
}

int validate_simulate(const validate_benchmark *benchmark, const validate_params *params,
                      const char *preset, const char *const *settings, size_t setting_count,
                      double values[VALIDATE_MAX_EVENTS],
                      char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX], plumb_status *status)
{
	for (int e = 0; e < VALIDATE_MAX_EVENTS; e++) {
		values[e] = NAN;
		reasons[e][0] = 0;
	}
	bool any = false;
	for (int e = 0; e < benchmark->event_count; e++) {
		if (benchmark->events[e].sim == VALIDATE_SIM_NONE)
			snprintf(reasons[e], PLUMB_MESSAGE_MAX, "the simulator does not model %s",
			         benchmark->events[e].name);
		else
			any = true;
	}
	if (!any || !benchmark->emit) return 0;
	sim_config config;
	if (validate_sim_configure(benchmark, params, preset, settings, setting_count, &config, status) != 0) return -1;
	sim *simulator;
	if (sim_new(&simulator, &config, status) != 0) return -1;
	sim_sink s = { .simulator = simulator, .benchmark = benchmark, .values = values };
	validate_sink sink = { sink_records, sink_mark, &s };
	int rc = benchmark->emit(params, &sink, status);
	if (rc == 0 && !s.done) rc = plumb_fail(status, EINVAL, "%s: the emitter marked no region", benchmark->name);
	sim_free(simulator);
	return rc;
}

int validate_sim_configure(const validate_benchmark *benchmark, const validate_params *params, const char *preset,
                           const char *const *settings, size_t setting_count, sim_config *out, plumb_status *status)
{
	sim_config config;
	if (sim_preset(&config, preset ? preset : "host", status) != 0) return -1;
	for (size_t i = 0; i < setting_count; i++)
		if (sim_config_assign(&config, settings[i], status) != 0) return -1;
	config.cores = (uint32_t)(benchmark->threads > 1 ? benchmark->threads : 1);
	/* A DTLB for the page events when the preset has none; compulsory
	 * (first-touch) misses need the classification tables. */
	if (config.tlb[SIM_DTLB].entries == 0) {
		config.tlb[SIM_DTLB].entries = 64;
		config.tlb[SIM_DTLB].assoc = 0;
		config.tlb[SIM_DTLB].page_size = params->machine->page_size;
		config.tlb[SIM_DTLB].latency = 7;
	}
	for (int e = 0; e < benchmark->event_count; e++)
		if (benchmark->events[e].sim == VALIDATE_SIM_PAGES_TOUCHED) config.classify = true;
	*out = config;
	return 0;
}

#else

bool validate_simulator_available(char *reason, size_t length)
{
	snprintf(reason, length, "this plumb was built without the simulator (plumb/sim.h)");
	return false;
}

int validate_simulate(const validate_benchmark *benchmark, const validate_params *params,
                      const char *preset, const char *const *settings, size_t setting_count,
                      double values[VALIDATE_MAX_EVENTS],
                      char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX], plumb_status *status)
{
	(void)benchmark;
	(void)params;
	(void)preset;
	(void)settings;
	(void)setting_count;
	(void)values;
	(void)reasons;
	return plumb_fail(status, ENOTSUP, "this plumb was built without the simulator (plumb/sim.h)");
}

#endif
