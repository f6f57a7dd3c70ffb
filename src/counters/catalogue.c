/* The event catalogue: each event the seeds study (a PAPI preset), the perf
 * generic event with the same meaning, the name PAPI's perf_event component
 * knows it by, and candidate native events per core microarchitecture in
 * libpfm4 syntax, without the PMU prefix.
 *
 * The native candidates come from the vendors' event lists as libpfm4 4.13
 * spells them (AMD PPR for family 19h model 11h; Intel's Ice Lake and
 * Sapphire Rapids event lists), and a unit test encodes every one through
 * libpfm4's own table for its PMU: a name libpfm4 does not know fails the
 * build's tests.  None has been checked by a validation run yet: that is
 * recorded outside the code (counter_verification), so this table stays
 * constant.  A NULL native means no core-PMU event of that table is known
 * to match, and native_reason says why: modern x86 has no exact equivalent
 * of the R10000's coherence events (CA_*), so the candidates given for
 * those are the nearest requester-side events, and say so. */
#include <stdio.h>
#include <string.h>
#include "counters/counters.h"

static const counter_catalogue_entry catalogue[] = {
	{ "PAPI_TLB_DM", "Data TLB misses", "dTLB-load-misses", "loads only",
	  "perf::DTLB-LOAD-MISSES",
	  { "L1_DTLB_MISS:TLB_RELOAD_4K_L2_MISS:TLB_RELOAD_2M_L2_MISS:TLB_RELOAD_1G_L2_MISS:TLB_RELOAD_COALESCED_PAGE_MISS",
	    "DTLB_LOAD_MISSES:WALK_COMPLETED", "DTLB_LOAD_MISSES:WALK_COMPLETED" }, NULL },
	{ "PAPI_TLB_IM", "Instruction TLB misses", "iTLB-load-misses", "same",
	  "perf::ITLB-LOAD-MISSES",
	  { "L1_ITLB_MISS_L2_ITLB_MISS:IF4K:IF2M:IF1G:COALESCED4K", "ITLB_MISSES:WALK_COMPLETED",
	    "ITLB_MISSES:WALK_COMPLETED" }, NULL },
	{ "PAPI_TLB_TL", "Total TLB misses", NULL, "perf has no combined data+instruction TLB event",
	  NULL, { NULL, NULL, NULL }, "no single core event counts data and instruction TLB misses together" },
	{ "PAPI_L1_DCM", "Level 1 data cache misses", "L1-dcache-load-misses", "loads only",
	  "perf::L1-DCACHE-LOAD-MISSES",
	  { "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:LOCAL_CCX:NEAR_CACHE_NEAR_FAR:DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR:ALT_MEM_NEAR_FAR",
	    "L1D:REPLACEMENT", "L1D:REPLACEMENT" }, NULL },
	{ "PAPI_L2_DCM", "Level 2 data cache misses", NULL,
	  "perf has no generic L2 event (LLC-load-misses is the last level)", NULL,
	  { "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", "L2_RQSTS:DEMAND_DATA_RD_MISS",
	    "L2_RQSTS:DEMAND_DATA_RD_MISS" }, NULL },
	{ "PAPI_L3_TCM", "Level 3 cache misses", "LLC-load-misses", "loads only",
	  "perf::LLC-LOAD-MISSES", { NULL, "LONGEST_LAT_CACHE:MISS", "LONGEST_LAT_CACHE:MISS" },
	  "the L3 is outside AMD's core PMU (its misses are in the L3 PMU, amd64_fam19h_zen3_l3)" },
	{ "PAPI_L1_ICM", "Level 1 instruction cache misses", "L1-icache-load-misses", "same",
	  "perf::L1-ICACHE-LOAD-MISSES",
	  { "IC_TAG_HIT_MISS:IC_MISS", "ICACHE_64B:IFTAG_MISS", "FRONTEND_RETIRED:L1I_MISS" }, NULL },
	{ "PAPI_L2_ICM", "Level 2 instruction cache misses", NULL, "perf has no generic L2 event", NULL,
	  { "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:IC_FILL_MISS", "L2_RQSTS:CODE_RD_MISS",
	    "L2_RQSTS:CODE_RD_MISS" }, NULL },
	{ "PAPI_CA_ITV", "Requests for cache line intervention", NULL,
	  "no perf event; natives are requester-side fills from another core's cache", NULL,
	  { "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX", "MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM",
	    "MEM_LOAD_L3_HIT_RETIRED:XSNP_FWD" }, NULL },
	{ "PAPI_CA_INV", "Requests for cache line invalidation", NULL,
	  "no perf event and no known core-PMU native (invalidations received are not counted on x86 cores)",
	  NULL, { NULL, NULL, NULL }, "invalidations received are not counted by x86 core PMUs" },
	{ "PAPI_CA_SHR", "Requests for exclusive access to shared cache line", NULL,
	  "no perf event; natives count upgrade (shared to exclusive) requests", NULL,
	  { "REQUESTS_TO_L2_GROUP1:CHANGE_TO_X", "L2_RQSTS:RFO_HIT", "L2_RQSTS:RFO_HIT" }, NULL },
	{ "PAPI_CA_CLN", "Requests for exclusive access to clean cache line", NULL,
	  "no perf event; natives count read-for-ownership requests that miss", NULL,
	  { "REQUESTS_TO_L2_GROUP1:RD_BLK_X", "L2_RQSTS:RFO_MISS", "L2_RQSTS:RFO_MISS" }, NULL },
	{ "PAPI_BR_MSP", "Conditional branch instructions mispredicted", "branch-misses",
	  "all branches, not only conditional", "perf::BRANCH-MISSES",
	  { "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "BR_MISP_RETIRED:ALL_BRANCHES", "BR_MISP_RETIRED:ALL_BRANCHES" },
	  NULL },
	{ "PAPI_BR_INS", "Branch instructions", "branches", "same", "perf::BRANCHES",
	  { "RETIRED_BRANCH_INSTRUCTIONS", "BR_INST_RETIRED:ALL_BRANCHES", "BR_INST_RETIRED:ALL_BRANCHES" }, NULL },
	{ "PAPI_TOT_CYC", "Total cycles", "cycles", "same", "perf::CYCLES",
	  { "CYCLES_NOT_IN_HALT", "CPU_CLK_UNHALTED:THREAD_P", "CPU_CLK_UNHALTED:THREAD_P" }, NULL },
	{ "PAPI_TOT_INS", "Instructions completed", "instructions", "same", "perf::INSTRUCTIONS",
	  { "RETIRED_INSTRUCTIONS", "INST_RETIRED:ANY_P", "INST_RETIRED:ANY_P" }, NULL },
	{ "PAPI_TOT_IIS", "Instructions issued", NULL, "no perf event; natives count issued micro-ops",
	  NULL, { "RETIRED_OPS", "UOPS_ISSUED:ANY", "UOPS_ISSUED:ANY" }, NULL },
	{ "PAPI_LD_INS", "Load instructions", NULL, "no perf event; Zen 4 counts dispatched, not retired",
	  NULL, { "LS_DISPATCH:LD_DISPATCH", "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_LOADS" }, NULL },
	{ "PAPI_SR_INS", "Store instructions", NULL, "no perf event; Zen 4 counts dispatched, not retired",
	  NULL, { "LS_DISPATCH:STORE_DISPATCH", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_STORES" }, NULL },
	{ "PAPI_FP_OPS", "Floating point operations", NULL, "no perf event", NULL,
	  { "RETIRED_SSE_AVX_FLOPS:ANY", "FP_ARITH_INST_RETIRED:SCALAR", "FP_ARITH_INST_RETIRED:SCALAR" }, NULL },
	{ "PAPI_FP_INS", "Floating point instructions", NULL, "no perf event", NULL,
	  { "RETIRED_MMX_FP_INSTRUCTIONS:SSE_INSTR:X87_INSTR", "FP_ARITH_INST_RETIRED:SCALAR",
	    "FP_ARITH_INST_RETIRED:SCALAR" }, NULL },
	{ "PAPI_SP_OPS", "Single-precision floating point operations", NULL, "no perf event", NULL,
	  { NULL, "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE" },
	  "Zen 4 counts FLOPs without telling single from double precision" },
	{ "PAPI_FML_INS", "Floating point multiply instructions", NULL, "no perf event", NULL,
	  { "RETIRED_FP_OPS_BY_TYPE:SCALAR_MUL", NULL, NULL },
	  "Intel's core PMU counts FP arithmetic by width, not by operation" },
	{ "PAPI_FDV_INS", "Floating point divide instructions", NULL, "no perf event", NULL,
	  { "RETIRED_FP_OPS_BY_TYPE:SCALAR_DIV", NULL, NULL },
	  "Intel's core PMU counts cycles the divider is busy (ARITH:DIVIDER_ACTIVE), not divides" },
	{ "PAPI_FSQ_INS", "Floating point square root instructions", NULL, "no perf event", NULL,
	  { "RETIRED_FP_OPS_BY_TYPE:SCALAR_SQRT", NULL, NULL },
	  "Intel's core PMU has no square-root count" },
};

/* Kernel software events: the same on every CPU, so their "native" columns
 * are empty; a validation run still records them per CPU, and the page-fault
 * benchmark's exact counts make minor-faults the end-to-end proof on a
 * machine without a PMU. */
static const counter_catalogue_entry software[] = {
	{ "minor-faults", "Minor page faults (software event, counted by the kernel)", "minor-faults",
	  "same", "perf::MINOR-FAULTS", { NULL, NULL, NULL }, NULL },
	{ "major-faults", "Major page faults (software event, counted by the kernel)", "major-faults",
	  "same", "perf::MAJOR-FAULTS", { NULL, NULL, NULL }, NULL },
	{ "page-faults", "All page faults (software event, counted by the kernel)", "page-faults",
	  "same", "perf::PAGE-FAULTS", { NULL, NULL, NULL }, NULL },
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
	case COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS: return "spr";
	case COUNTER_VENDOR_COUNT: break;
	}
	return "unknown";
}

/* Which CPUs each table serves: vendor, family, a range of models, the
 * libpfm4 PMU that names the CPU, and the CPU in words. */
static const struct cpu_model_range {
	const char *vendor;
	unsigned family, first_model, last_model;
	counter_vendor table;
	const char *pmu, *name, *caveat;
} cpu_models[] = {
	/* Family 19h models 10h-1Fh, 60h-7Fh and A0h-AFh are Zen 4. */
	{ "AuthenticAMD", 0x19, 0x10, 0x1f, COUNTER_VENDOR_AMD_ZEN4, "amd64_fam19h_zen4", "AMD Zen 4", NULL },
	{ "AuthenticAMD", 0x19, 0x60, 0x7f, COUNTER_VENDOR_AMD_ZEN4, "amd64_fam19h_zen4", "AMD Zen 4", NULL },
	{ "AuthenticAMD", 0x19, 0xa0, 0xaf, COUNTER_VENDOR_AMD_ZEN4, "amd64_fam19h_zen4", "AMD Zen 4", NULL },
	/* Ice Lake client (7Dh, 7Eh) and server (6Ah, 6Ch): the same cores, two PMU names. */
	{ "GenuineIntel", 6, 0x7d, 0x7e, COUNTER_VENDOR_INTEL_ICELAKE, "icl", "Intel Ice Lake", NULL },
	{ "GenuineIntel", 6, 0x6a, 0x6a, COUNTER_VENDOR_INTEL_ICELAKE, "icx", "Intel Ice Lake server", NULL },
	{ "GenuineIntel", 6, 0x6c, 0x6c, COUNTER_VENDOR_INTEL_ICELAKE, "icx", "Intel Ice Lake server", NULL },
	/* Sapphire Rapids (8Fh); Emerald Rapids (CFh) has the same cores and
	 * core events (Intel's event lists), but libpfm4 4.13 does not detect it. */
	{ "GenuineIntel", 6, 0x8f, 0x8f, COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS, "spr", "Intel Sapphire Rapids", NULL },
	{ "GenuineIntel", 6, 0xcf, 0xcf, COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS, "spr", "Intel Emerald Rapids",
	  "libpfm4 4.13 does not detect Emerald Rapids; LIBPFM_FORCE_PMU=spr makes it use Sapphire Rapids' table" },
};

static bool parse_identity(const char *cpu_identity, char vendor[32], unsigned *family, unsigned *model)
{
	return cpu_identity && sscanf(cpu_identity, "%31[^:]:%u:%u", vendor, family, model) == 3;
}

void counter_cpu_native_table(const char *cpu_identity, counter_cpu_table *out)
{
	memset(out, 0, sizeof *out);
	out->table = COUNTER_VENDOR_COUNT;
	char vendor[32] = "";
	unsigned family = 0, model = 0;
	if (!parse_identity(cpu_identity, vendor, &family, &model)) {
		snprintf(out->description, sizeof out->description, "an unidentified CPU (%s)",
		         cpu_identity ? cpu_identity : "none");
		return;
	}
	const char *name = !strcmp(vendor, "AuthenticAMD") ? "AMD" : !strcmp(vendor, "GenuineIntel") ? "Intel" : vendor;
	for (size_t i = 0; i < sizeof cpu_models / sizeof cpu_models[0]; i++) {
		const struct cpu_model_range *r = &cpu_models[i];
		if (strcmp(vendor, r->vendor) || family != r->family || model < r->first_model || model > r->last_model)
			continue;
		out->known = true;
		out->table = r->table;
		out->pmu = r->pmu;
		out->caveat = r->caveat;
		name = r->name;
		break;
	}
	snprintf(out->description, sizeof out->description, "%s (family %u, model %u)", name, family, model);
}

counter_vendor counter_vendor_of(const char *cpu_identity)
{
	counter_cpu_table table;
	counter_cpu_native_table(cpu_identity, &table);
	return table.table;
}

const char *counter_catalogue_native(const counter_catalogue_entry *entry, const char *cpu_identity, char *buffer,
                                     size_t length, char *reason, size_t reason_length)
{
	counter_cpu_table table;
	counter_cpu_native_table(cpu_identity, &table);
	if (!table.known) {
		snprintf(reason, reason_length, "no native-event catalogue for this CPU, %s", table.description);
		return NULL;
	}
	const char *native = entry->native[table.table];
	if (!native) {
		snprintf(reason, reason_length, "no known %s event matches%s%s", table.description,
		         entry->native_reason ? ": " : "", entry->native_reason ? entry->native_reason : "");
		return NULL;
	}
	snprintf(buffer, length, "%s::%s", table.pmu, native);
	return buffer;
}
