/* Event names -> simulator statistics, so that the simulator answers the
 * same questions as the counters (PAPI presets of seeds 000/003 and the
 * R10000's coherence events).  Each entry says exactly what it counts. */
#include <errno.h>
#include <string.h>
#include "sim/sim_state.h"

typedef uint64_t (*event_getter)(const sim *s, const sim_core_stats *c);

static uint64_t sum3(const uint64_t v[3]) { return v[0] + v[1] + v[2]; }
static uint64_t data_misses(const sim_cache_stats *st) { return st->misses[SIM_READ] + st->misses[SIM_WRITE]; }
static uint64_t data_accesses(const sim_cache_stats *st) { return st->accesses[SIM_READ] + st->accesses[SIM_WRITE]; }

static uint64_t l1_dcm(const sim *s, const sim_core_stats *c) { (void)s; return data_misses(&c->cache[SIM_L1D]); }
static uint64_t l1_icm(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L1I].misses[SIM_IFETCH]; }
static uint64_t l1_tcm(const sim *s, const sim_core_stats *c) { return l1_dcm(s, c) + l1_icm(s, c); }
static uint64_t l1_ldm(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L1D].misses[SIM_READ]; }
static uint64_t l1_stm(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L1D].misses[SIM_WRITE]; }
static uint64_t l1_dca(const sim *s, const sim_core_stats *c) { (void)s; return data_accesses(&c->cache[SIM_L1D]); }
static uint64_t l1_ica(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L1I].accesses[SIM_IFETCH]; }
static uint64_t l2_dcm(const sim *s, const sim_core_stats *c) { (void)s; return data_misses(&c->cache[SIM_L2]); }
static uint64_t l2_icm(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L2].misses[SIM_IFETCH]; }
static uint64_t l2_tcm(const sim *s, const sim_core_stats *c) { (void)s; return sum3(c->cache[SIM_L2].misses); }
static uint64_t l2_tca(const sim *s, const sim_core_stats *c) { (void)s; return sum3(c->cache[SIM_L2].accesses); }
static uint64_t l2_dca(const sim *s, const sim_core_stats *c) { (void)s; return data_accesses(&c->cache[SIM_L2]); }
static uint64_t l2_ldm(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L2].misses[SIM_READ]; }
static uint64_t l2_stm(const sim *s, const sim_core_stats *c) { (void)s; return c->cache[SIM_L2].misses[SIM_WRITE]; }
static uint64_t l3_tcm(const sim *s, const sim_core_stats *c) { (void)s; return c->l3_misses; }
static uint64_t l3_tca(const sim *s, const sim_core_stats *c) { (void)s; return c->l3_accesses; }
static uint64_t tlb_dm(const sim *s, const sim_core_stats *c)
{
	/* the first data TLB level present */
	return s->config.tlb[SIM_DTLB].entries ? c->tlb[SIM_DTLB].misses : c->tlb[SIM_STLB].misses;
}
static uint64_t tlb_im(const sim *s, const sim_core_stats *c)
{
	return s->config.tlb[SIM_ITLB].entries ? c->tlb[SIM_ITLB].misses : 0;
}
static uint64_t tlb_tl(const sim *s, const sim_core_stats *c) { return tlb_dm(s, c) + tlb_im(s, c); }
static uint64_t ca_shr(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.upgrades_shared; }
static uint64_t ca_cln(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.upgrades_clean; }
static uint64_t ca_itv(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.interventions_received; }
static uint64_t ca_inv(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.invalidations_received; }
static uint64_t ld_ins(const sim *s, const sim_core_stats *c) { (void)s; return c->references[SIM_READ]; }
static uint64_t sr_ins(const sim *s, const sim_core_stats *c) { (void)s; return c->references[SIM_WRITE]; }
static uint64_t lst_ins(const sim *s, const sim_core_stats *c) { (void)s; return c->references[SIM_READ] + c->references[SIM_WRITE]; }
static uint64_t tot_ins(const sim *s, const sim_core_stats *c) { (void)s; return c->references[SIM_IFETCH]; }
static uint64_t prf_dm(const sim *s, const sim_core_stats *c) { (void)s; return c->prefetch.issued; }
static uint64_t bus_reads(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.bus_reads; }
static uint64_t bus_rdx(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.bus_read_exclusive; }
static uint64_t bus_writes(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.bus_writes; }
static uint64_t transfers(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.transfers_received; }
static uint64_t writebacks(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.writebacks; }
static uint64_t inv_sent(const sim *s, const sim_core_stats *c) { (void)s; return c->coherence.invalidations_sent; }
static uint64_t memory_reads(const sim *s, const sim_core_stats *c) { (void)s; return c->memory_reads; }
static uint64_t coherence_misses(const sim *s, const sim_core_stats *c)
{
	(void)s;
	uint64_t n = 0;
	for (int l = SIM_L1I; l <= SIM_L1D; l++)
		n += c->cache[l].coherence_true + c->cache[l].coherence_false;
	return n;
}

typedef struct event_entry {
	const char *name;
	const char *description;
	event_getter get;
	int needs;            /* 0, or what must be configured: 1 L2, 2 L3, 3 TLB, 4 classify, 5 ITLB */
} event_entry;

static const event_entry events[] = {
	{ "PAPI_L1_DCM", "L1D misses (reads + writes; a reference missing on any of its lines counts once)", l1_dcm, 0 },
	{ "PAPI_L1_ICM", "L1I misses", l1_icm, 0 },
	{ "PAPI_L1_TCM", "L1I + L1D misses", l1_tcm, 0 },
	{ "PAPI_L1_LDM", "L1D read misses", l1_ldm, 0 },
	{ "PAPI_L1_STM", "L1D write misses", l1_stm, 0 },
	{ "PAPI_L1_DCA", "L1D accesses", l1_dca, 0 },
	{ "PAPI_L1_ICA", "L1I accesses", l1_ica, 0 },
	{ "PAPI_L2_DCM", "L2 misses of data references", l2_dcm, 1 },
	{ "PAPI_L2_ICM", "L2 misses of instruction fetches", l2_icm, 1 },
	{ "PAPI_L2_TCM", "L2 misses", l2_tcm, 1 },
	{ "PAPI_L2_TCA", "L2 accesses", l2_tca, 1 },
	{ "PAPI_L2_DCA", "L2 accesses of data references", l2_dca, 1 },
	{ "PAPI_L2_LDM", "L2 read misses", l2_ldm, 1 },
	{ "PAPI_L2_STM", "L2 write misses", l2_stm, 1 },
	{ "PAPI_L3_TCM", "shared L3 misses caused by this core", l3_tcm, 2 },
	{ "PAPI_L3_TCA", "shared L3 accesses by this core", l3_tca, 2 },
	{ "PAPI_TLB_DM", "misses of the first data TLB level", tlb_dm, 3 },
	{ "PAPI_TLB_IM", "instruction TLB misses", tlb_im, 5 },
	{ "PAPI_TLB_TL", "data + instruction TLB misses", tlb_tl, 3 },
	{ "PAPI_CA_SHR", "upgrade requests S->M (exclusive access to a shared line)", ca_shr, 0 },
	{ "PAPI_CA_CLN", "upgrades E->M (exclusive access to a clean line)", ca_cln, 0 },
	{ "PAPI_CA_ITV", "interventions received: remote requests that found this core the owner (M/E/O)", ca_itv, 0 },
	{ "PAPI_CA_INV", "invalidations received", ca_inv, 0 },
	{ "PAPI_LD_INS", "read references (trace loads; 'M' per the modify setting)", ld_ins, 0 },
	{ "PAPI_SR_INS", "write references", sr_ins, 0 },
	{ "PAPI_LST_INS", "read + write references", lst_ins, 0 },
	{ "PAPI_TOT_INS", "instruction fetch references (one per instruction in lackey traces)", tot_ins, 0 },
	{ "PAPI_PRF_DM", "prefetches issued", prf_dm, 0 },
	{ "SIM_BUS_READS", "bus reads (private-hierarchy read misses)", bus_reads, 0 },
	{ "SIM_BUS_RDX", "bus read-exclusive requests (write misses, RFO)", bus_rdx, 0 },
	{ "SIM_BUS_WRITES", "writes leaving the private hierarchy (write-through, write-around, ESI)", bus_writes, 0 },
	{ "SIM_TRANSFERS", "misses served by another core's cache", transfers, 0 },
	{ "SIM_WRITEBACKS", "dirty lines leaving the private hierarchy", writebacks, 0 },
	{ "SIM_INVALIDATIONS_SENT", "copies invalidated by this core's requests", inv_sent, 0 },
	{ "SIM_MEMORY_READS", "lines fetched from memory", memory_reads, 0 },
	{ "SIM_COHERENCE_MISSES", "L1 misses on lines lost to another core's write", coherence_misses, 4 },
};

#define EVENT_COUNT (sizeof events / sizeof events[0])

const char *sim_event_name(size_t index)
{
	return index < EVENT_COUNT ? events[index].name : NULL;
}

const char *sim_event_description(const char *event)
{
	for (size_t i = 0; i < EVENT_COUNT; i++)
		if (strcmp(events[i].name, event) == 0)
			return events[i].description;
	return NULL;
}

int sim_event_count(const sim *s, const char *event, int core, uint64_t *value, plumb_status *status)
{
	const event_entry *e = NULL;
	for (size_t i = 0; i < EVENT_COUNT; i++)
		if (strcmp(events[i].name, event) == 0)
			e = &events[i];
	if (!e) {
		static const char *const unmodelled[] = { "PAPI_BR_", "PAPI_FP", "PAPI_VEC", "PAPI_STL", "PAPI_RES_STL",
		                                          "PAPI_FUL", "PAPI_FMA", "PAPI_HW_INT", "PAPI_MEM_" };
		for (size_t i = 0; i < sizeof unmodelled / sizeof unmodelled[0]; i++)
			if (strncmp(event, unmodelled[i], strlen(unmodelled[i])) == 0)
				return plumb_fail(status, ENOTSUP, "%s: the simulator models caches, TLBs and coherence only",
				                  event);
		return plumb_fail(status, ENOENT, "%s: not an event the simulator knows", event);
	}
	const sim_config *c = &s->config;
	switch (e->needs) {
	case 1:
		if (!c->cache[SIM_L2].size)
			return plumb_fail(status, ENOTSUP, "%s: the simulated machine has no L2", event);
		break;
	case 2:
		if (!c->cache[SIM_L3].size)
			return plumb_fail(status, ENOTSUP, "%s: the simulated machine has no L3", event);
		break;
	case 3:
		if (!c->tlb[SIM_DTLB].entries && !c->tlb[SIM_STLB].entries)
			return plumb_fail(status, ENOTSUP, "%s: no data TLB is configured", event);
		break;
	case 4:
		if (!c->classify)
			return plumb_fail(status, ENOTSUP, "%s: needs classify = yes", event);
		break;
	case 5:
		if (!c->tlb[SIM_ITLB].entries)
			return plumb_fail(status, ENOTSUP, "%s: no instruction TLB is configured", event);
		break;
	default:
		break;
	}
	if (core >= (int)c->cores || core < -1)
		return plumb_fail(status, EINVAL, "%s: core %d does not exist (the simulator has %u)", event, core, c->cores);
	uint64_t total = 0;
	for (uint32_t i = 0; i < c->cores; i++)
		if (core < 0 || (uint32_t)core == i)
			total += e->get(s, &s->stats.core[i]);
	*value = total;
	return 0;
}
