/* The public simulator API: a plumb_sim is the internal sim. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api_internal.h"
#include "sim/sim.h"
#include "trace/trace.h"

struct plumb_sim {
	sim *s;
};

static int is_preset(const char *name)
{
	for (const char *const *p = sim_preset_names(); *p; p++)
		if (!strcmp(*p, name))
			return 1;
	return 0;
}

int plumb_sim_new(plumb_sim **out, const char *config, const char *const *settings, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!out)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_sim_new: no handle to fill"), &status));
	*out = NULL;
	sim_config c;
	sim_config_default(&c);
	if (config && is_preset(config)) {
		if (sim_preset(&c, config, &status) != 0)
			return api_error(error, &status);
	} else if (config) {
		if (access(config, F_OK) != 0 && !strchr(config, '/') && !strchr(config, '.'))
			return api_error(error, (plumb_fail(&status, EINVAL,
			                                    "plumb_sim_new: '%s' is neither a preset nor a file", config),
			                         &status));
		if (sim_config_load(&c, config, &status) != 0)
			return api_error(error, &status);
	}
	for (size_t i = 0; settings && settings[i]; i++)
		if (sim_config_assign(&c, settings[i], &status) != 0)
			return api_error(error, &status);
	if (sim_config_validate(&c, &status) != 0)
		return api_error(error, &status);
	plumb_sim *handle = calloc(1, sizeof *handle);
	if (!handle)
		return api_error(error, (plumb_fail(&status, ENOMEM, "plumb_sim_new: out of memory"), &status));
	if (sim_new(&handle->s, &c, &status) != 0) {
		free(handle);
		return api_error(error, &status);
	}
	*out = handle;
	return 0;
}

const char *const *plumb_sim_presets(void)
{
	return sim_preset_names();
}

unsigned plumb_sim_cores(const plumb_sim *handle)
{
	return handle ? sim_configuration(handle->s)->cores : 0;
}

int plumb_sim_access(plumb_sim *handle, unsigned core, plumb_access_kind kind, uint64_t address, uint32_t size,
                     plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!handle || (int)kind < 0 || kind > PLUMB_ACCESS_WRITE || size == 0 ||
	    core >= sim_configuration(handle->s)->cores)
		return api_error(error, (plumb_fail(&status, EINVAL,
		                                    "plumb_sim_access: bad core %u, kind %d or size %u",
		                                    core, (int)kind, size), &status));
	static const sim_access_kind kinds[3] = { SIM_IFETCH, SIM_READ, SIM_WRITE };
	return sim_access(handle->s, core, kinds[kind], address, size, &status) == 0 ? 0 : api_error(error, &status);
}

int plumb_sim_run_trace(plumb_sim *handle, const char *path, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!handle || !path)
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_sim_run_trace: no simulator or path"),
		                         &status));
	trace_reader *reader;
	if (trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status) != 0)
		return api_error(error, &status);
	sim_feed feed = { .sims = &handle->s, .count = 1 };
	int rc = sim_feed_reader(&feed, reader, &status);
	plumb_status closing;
	api_status_init(&closing);
	if (trace_reader_close(reader, &closing) != 0 && rc == 0) {
		status = closing;
		rc = -1;
	}
	return rc == 0 ? 0 : api_error(error, &status);
}

static void add_level(plumb_sim_level *to, const sim_cache_stats *from)
{
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		to->accesses += from->accesses[k];
		to->misses += from->misses[k];
	}
}

static void add_core(plumb_sim_counts *out, const sim_core_stats *core)
{
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		out->references[k] += core->references[k];
	add_level(&out->l1i, &core->cache[SIM_L1I]);
	add_level(&out->l1d, &core->cache[SIM_L1D]);
	add_level(&out->l2, &core->cache[SIM_L2]);
	out->l3.accesses += core->l3_accesses;
	out->l3.misses += core->l3_misses;
	out->memory_reads += core->memory_reads;
	out->memory_writes += core->memory_writes;
	out->invalidations_sent += core->coherence.invalidations_sent;
	out->transfers_received += core->coherence.transfers_received;
}

int plumb_sim_counts_get(const plumb_sim *handle, int core, plumb_sim_counts *out, plumb_error *error)
{
	plumb_status status;
	api_status_init(&status);
	if (!handle || !out || core < -1 || (core >= 0 && (unsigned)core >= sim_configuration(handle->s)->cores))
		return api_error(error, (plumb_fail(&status, EINVAL, "plumb_sim_counts_get: bad core %d", core), &status));
	const sim_stats *stats = sim_statistics(handle->s);
	memset(out, 0, sizeof *out);
	if (core >= 0) {
		add_core(out, &stats->core[core]);
		return 0;
	}
	for (uint32_t c = 0; c < stats->cores; c++)
		add_core(out, &stats->core[c]);
	return 0;
}

void plumb_sim_reset_counts(plumb_sim *handle)
{
	if (handle)
		sim_reset_statistics(handle->s);
}

void plumb_sim_free(plumb_sim *handle)
{
	if (!handle)
		return;
	sim_free(handle->s);
	free(handle);
}
