/* The event catalogue: each event the seeds study (a PAPI preset), the perf
 * generic event with the same meaning, the name PAPI's perf_event component
 * knows it by, and candidate native events per CPU in libpfm4 syntax.
 *
 * The native candidates come from the vendors' event lists (AMD PPR for
 * family 19h model 11h, Intel's Ice Lake event list as libpfm4 spells them).
 * None has been checked by a validation run yet: that is recorded outside the
 * code (counter_verification), so this table stays constant.  A NULL native
 * means no core-PMU event is known to match: modern x86 has no exact
 * equivalent of the R10000's coherence events (CA_*), so the candidates given
 * for those are the nearest requester-side events, and say so. */
#include <stdio.h>
#include <string.h>
#include "plumb/counters.h"

#define ZEN4 "amd64_fam19h_zen4::"
#define ICL "icl::"

static const counter_catalogue_entry catalogue[] = {
	{ "PAPI_TLB_DM", "Data TLB misses", "dTLB-load-misses", "loads only",
	  "perf::DTLB-LOAD-MISSES",
	  { ZEN4 "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS",
	    ICL "DTLB_LOAD_MISSES:WALK_COMPLETED" } },
	{ "PAPI_TLB_IM", "Instruction TLB misses", "iTLB-load-misses", "same",
	  "perf::ITLB-LOAD-MISSES",
	  { ZEN4 "L1_ITLB_MISS_L2_ITLB_MISS:IF4K:IF2M:IF1G:COALESCED4K",
	    ICL "ITLB_MISSES:WALK_COMPLETED" } },
	{ "PAPI_TLB_TL", "Total TLB misses", NULL, "perf has no combined data+instruction TLB event",
	  NULL, { NULL, NULL } },
	{ "PAPI_L1_DCM", "Level 1 data cache misses", "L1-dcache-load-misses", "loads only",
	  "perf::L1-DCACHE-LOAD-MISSES",
	  { ZEN4 "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:LOCAL_CCX:NEAR_CACHE_NEAR_FAR:DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR:ALT_MEM_NEAR_FAR",
	    ICL "L1D:REPLACEMENT" } },
	{ "PAPI_L2_DCM", "Level 2 data cache misses", NULL,
	  "perf has no generic L2 event (LLC-load-misses is the last level)", NULL,
	  { ZEN4 "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C",
	    ICL "L2_RQSTS:DEMAND_DATA_RD_MISS" } },
	{ "PAPI_L3_TCM", "Level 3 cache misses", "LLC-load-misses", "loads only",
	  "perf::LLC-LOAD-MISSES", { NULL, NULL } },
	{ "PAPI_L1_ICM", "Level 1 instruction cache misses", "L1-icache-load-misses", "same",
	  "perf::L1-ICACHE-LOAD-MISSES",
	  { ZEN4 "IC_TAG_HIT_MISS:IC_MISS", ICL "ICACHE_64B:IFTAG_MISS" } },
	{ "PAPI_L2_ICM", "Level 2 instruction cache misses", NULL, "perf has no generic L2 event", NULL,
	  { ZEN4 "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:IC_FILL_MISS", ICL "L2_RQSTS:CODE_RD_MISS" } },
	{ "PAPI_CA_ITV", "Requests for cache line intervention", NULL,
	  "no perf event; natives are requester-side fills from another core's cache", NULL,
	  { ZEN4 "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX", ICL "MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM" } },
	{ "PAPI_CA_INV", "Requests for cache line invalidation", NULL,
	  "no perf event and no known core-PMU native (invalidations received are not counted on x86 cores)",
	  NULL, { NULL, NULL } },
	{ "PAPI_CA_SHR", "Requests for exclusive access to shared cache line", NULL,
	  "no perf event; natives count upgrade (shared to exclusive) requests", NULL,
	  { ZEN4 "REQUESTS_TO_L2_GROUP1:CHANGE_TO_X", ICL "L2_RQSTS:RFO_HIT" } },
	{ "PAPI_CA_CLN", "Requests for exclusive access to clean cache line", NULL,
	  "no perf event; natives count read-for-ownership requests that miss", NULL,
	  { ZEN4 "REQUESTS_TO_L2_GROUP1:RD_BLK_X", ICL "L2_RQSTS:RFO_MISS" } },
	{ "PAPI_BR_MSP", "Conditional branch instructions mispredicted", "branch-misses",
	  "all branches, not only conditional", "perf::BRANCH-MISSES",
	  { ZEN4 "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", ICL "BR_MISP_RETIRED:ALL_BRANCHES" } },
	{ "PAPI_BR_INS", "Branch instructions", "branches", "same", "perf::BRANCHES",
	  { ZEN4 "RETIRED_BRANCH_INSTRUCTIONS", ICL "BR_INST_RETIRED:ALL_BRANCHES" } },
	{ "PAPI_TOT_CYC", "Total cycles", "cycles", "same", "perf::CYCLES",
	  { ZEN4 "CYCLES_NOT_IN_HALT", ICL "CPU_CLK_UNHALTED:THREAD_P" } },
	{ "PAPI_TOT_INS", "Instructions completed", "instructions", "same", "perf::INSTRUCTIONS",
	  { ZEN4 "RETIRED_INSTRUCTIONS", ICL "INST_RETIRED:ANY_P" } },
	{ "PAPI_TOT_IIS", "Instructions issued", NULL, "no perf event; natives count issued micro-ops",
	  NULL, { ZEN4 "RETIRED_OPS", ICL "UOPS_ISSUED:ANY" } },
	{ "PAPI_LD_INS", "Load instructions", NULL, "no perf event; Zen 4 counts dispatched, not retired",
	  NULL, { ZEN4 "LS_DISPATCH:LD_DISPATCH", ICL "MEM_INST_RETIRED:ALL_LOADS" } },
	{ "PAPI_SR_INS", "Store instructions", NULL, "no perf event; Zen 4 counts dispatched, not retired",
	  NULL, { ZEN4 "LS_DISPATCH:STORE_DISPATCH", ICL "MEM_INST_RETIRED:ALL_STORES" } },
	{ "PAPI_FP_OPS", "Floating point operations", NULL, "no perf event", NULL,
	  { ZEN4 "RETIRED_SSE_AVX_FLOPS:ANY", ICL "FP_ARITH_INST_RETIRED:SCALAR" } },
	{ "PAPI_FP_INS", "Floating point instructions", NULL, "no perf event", NULL,
	  { ZEN4 "RETIRED_MMX_FP_INSTRUCTIONS:SSE_INSTR:X87_INSTR", ICL "FP_ARITH_INST_RETIRED:SCALAR" } },
	{ "PAPI_FSQ_INS", "Floating point square root instructions", NULL, "no perf event", NULL,
	  { ZEN4 "RETIRED_FP_OPS_BY_TYPE:SCALAR_SQRT", NULL } },
};

/* Kernel software events: the same on every CPU, so their "native" columns
 * are empty; a validation run still records them per CPU, and the page-fault
 * benchmark's exact counts make minor-faults the end-to-end proof on a
 * machine without a PMU. */
static const counter_catalogue_entry software[] = {
	{ "minor-faults", "Minor page faults (software event, counted by the kernel)", "minor-faults",
	  "same", "perf::MINOR-FAULTS", { NULL, NULL } },
	{ "major-faults", "Major page faults (software event, counted by the kernel)", "major-faults",
	  "same", "perf::MAJOR-FAULTS", { NULL, NULL } },
	{ "page-faults", "All page faults (software event, counted by the kernel)", "page-faults",
	  "same", "perf::PAGE-FAULTS", { NULL, NULL } },
};

const counter_catalogue_entry *counter_catalogue_software(size_t *n)
{
	*n = sizeof software / sizeof software[0];
	return software;
}

const counter_catalogue_entry *counter_catalogue(size_t *n)
{
	*n = sizeof catalogue / sizeof catalogue[0];
	return catalogue;
}

const counter_catalogue_entry *counter_catalogue_find(const char *preset)
{
	if (!preset)
		return NULL;
	for (size_t i = 0; i < sizeof catalogue / sizeof catalogue[0]; i++)
		if (!strcmp(catalogue[i].preset, preset))
			return &catalogue[i];
	return NULL;
}

const char *counter_vendor_name(counter_vendor vendor)
{
	switch (vendor) {
	case COUNTER_VENDOR_AMD_ZEN4: return "amd64_fam19h_zen4";
	case COUNTER_VENDOR_INTEL_ICELAKE: return "icl";
	case COUNTER_VENDOR_COUNT: break;
	}
	return "unknown";
}

counter_vendor counter_vendor_of(const char *cpu_identity)
{
	unsigned family = 0, model = 0;
	char vendor[32] = "";
	if (!cpu_identity || sscanf(cpu_identity, "%31[^:]:%u:%u", vendor, &family, &model) != 3)
		return COUNTER_VENDOR_COUNT;
	/* Family 19h models 10h-1Fh and 60h-7Fh and A0h-AFh are Zen 4. */
	if (!strcmp(vendor, "AuthenticAMD") && family == 25 &&
	    ((model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) || (model >= 0xa0 && model <= 0xaf)))
		return COUNTER_VENDOR_AMD_ZEN4;
	/* Ice Lake client (7Dh, 7Eh) and server (6Ah, 6Ch). */
	if (!strcmp(vendor, "GenuineIntel") && family == 6 &&
	    (model == 0x7d || model == 0x7e || model == 0x6a || model == 0x6c))
		return COUNTER_VENDOR_INTEL_ICELAKE;
	return COUNTER_VENDOR_COUNT;
}
