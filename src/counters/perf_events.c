/* Event names for the perf_event backend.  perf's own spellings come first
 * (so "plumb stat -e page-faults" means what "perf stat -e page-faults"
 * means), then raw r<hex>, then PAPI presets through the catalogue, then
 * native names, which libpfm4 encodes exactly as perf tools and PAPI do. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "counters/perf_events.h"
#ifdef PLUMB_HAVE_PFM
#include <perfmon/pfmlib_perf_event.h>
#endif

typedef struct named_event {
	const char *name;
	const char *alias;
	unsigned type;
	unsigned long long config;
	const char *description;
} named_event;

static const named_event named_events[] = {
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles" },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "retired instructions" },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "last-level cache accesses" },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "last-level cache misses" },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branches" },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches" },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles" },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "front-end stall cycles" },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "back-end stall cycles" },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "reference cycles (unscaled by frequency)" },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "CPU clock (ns)" },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "time the task ran (ns)" },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults" },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O" },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed I/O" },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches" },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "migrations to another CPU" },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment faults" },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "emulated instructions" },
};

/* perf's hardware cache events: cache x operation x result. */
static const struct { const char *name; unsigned id; } cache_names[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D }, { "L1-icache", PERF_COUNT_HW_CACHE_L1I },
	{ "LLC", PERF_COUNT_HW_CACHE_LL }, { "dTLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB }, { "branch", PERF_COUNT_HW_CACHE_BPU },
	{ "node", PERF_COUNT_HW_CACHE_NODE },
};
static const struct { const char *name; const char *plural; unsigned id; } cache_ops[] = {
	{ "load", "loads", PERF_COUNT_HW_CACHE_OP_READ },
	{ "store", "stores", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "prefetch", "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH },
};

const char *perf_event_kind_name(perf_event_kind kind)
{
	switch (kind) {
	case PERF_EVENT_KIND_HARDWARE: return "hardware";
	case PERF_EVENT_KIND_SOFTWARE: return "software";
	case PERF_EVENT_KIND_CACHE: return "cache";
	case PERF_EVENT_KIND_RAW: return "raw";
	case PERF_EVENT_KIND_PRESET: return "preset";
	case PERF_EVENT_KIND_NATIVE: return "native";
	case PERF_EVENT_KIND_PMU: return "pmu";
	case PERF_EVENT_KIND_TRACEPOINT: return "tracepoint";
	case PERF_EVENT_KIND_TOOL: return "tool";
	}
	return "unknown";
}

static int resolve_named(const char *name, perf_event_spec *spec)
{
	for (size_t i = 0; i < sizeof named_events / sizeof named_events[0]; i++) {
		const named_event *e = &named_events[i];
		if (strcasecmp(name, e->name) && (!e->alias || strcasecmp(name, e->alias)))
			continue;
		spec->attr.type = e->type;
		spec->attr.config = e->config;
		spec->kind = e->type == PERF_TYPE_SOFTWARE ? PERF_EVENT_KIND_SOFTWARE : PERF_EVENT_KIND_HARDWARE;
		snprintf(spec->canonical, sizeof spec->canonical, "%s", e->name);
		return 0;
	}
	return -1;
}

static int resolve_cache(const char *name, perf_event_spec *spec)
{
	for (size_t c = 0; c < sizeof cache_names / sizeof cache_names[0]; c++) {
		size_t length = strlen(cache_names[c].name);
		if (strncasecmp(name, cache_names[c].name, length) || name[length] != '-')
			continue;
		const char *rest = name + length + 1;
		for (size_t o = 0; o < sizeof cache_ops / sizeof cache_ops[0]; o++) {
			char miss[32];
			snprintf(miss, sizeof miss, "%s-misses", cache_ops[o].name);
			unsigned result;
			if (!strcasecmp(rest, cache_ops[o].plural))
				result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
			else if (!strcasecmp(rest, miss))
				result = PERF_COUNT_HW_CACHE_RESULT_MISS;
			else
				continue;
			spec->attr.type = PERF_TYPE_HW_CACHE;
			spec->attr.config = cache_names[c].id | (cache_ops[o].id << 8) | (result << 16);
			spec->kind = PERF_EVENT_KIND_CACHE;
			snprintf(spec->canonical, sizeof spec->canonical, "%s-%s", cache_names[c].name, rest);
			return 0;
		}
	}
	return -1;
}

static int resolve_raw(const char *name, perf_event_spec *spec, char *reason, size_t length)
{
	if (name[0] != 'r' || !isxdigit((unsigned char)name[1]))
		return 1;   /* not raw syntax */
	char *end;
	errno = 0;
	unsigned long long config = strtoull(name + 1, &end, 16);
	if (*end != '\0')
		return 1;   /* e.g. "ref-cycles" is not raw */
	if (errno == ERANGE || end - (name + 1) > 16) {
		snprintf(reason, length, "raw event %s does not fit in 64 bits", name);
		return -1;
	}
	spec->attr.type = PERF_TYPE_RAW;
	spec->attr.config = config;
	spec->kind = PERF_EVENT_KIND_RAW;
	snprintf(spec->canonical, sizeof spec->canonical, "r%llx", config);
	return 0;
}

#ifdef PLUMB_HAVE_PFM
/* pfm_initialize is process-wide and not thread-safe; libpfm4 keeps its own
 * tables, so the only state here is the once-flag and its result (written
 * once inside pthread_once, read-only afterwards). */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_result;
static void pfm_init(void) { pfm_init_result = pfm_initialize(); }

static int resolve_native(const char *name, perf_event_spec *spec, char *reason, size_t length)
{
	pthread_once(&pfm_once, pfm_init);
	if (pfm_init_result != PFM_SUCCESS) {
		snprintf(reason, length, "libpfm4 failed to initialise: %s", pfm_strerror(pfm_init_result));
		return -1;
	}
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof arg);
	arg.attr = &attr;
	arg.size = sizeof arg;
	int rc = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (rc != PFM_SUCCESS) {
		/* "event not found" means an unknown name; anything else (a missing or
		 * invalid unit mask, a bad attribute) is a known event misspelt. */
		if (rc == PFM_ERR_NOTFOUND)
			snprintf(reason, length, "unknown event '%s' (libpfm4: %s)", name, pfm_strerror(rc));
		else
			snprintf(reason, length, "libpfm4 cannot encode '%s': %s", name, pfm_strerror(rc));
		return -1;
	}
	spec->attr.type = attr.type;
	spec->attr.config = attr.config;
	spec->attr.config1 = attr.config1;
	spec->attr.config2 = attr.config2;
	spec->kind = PERF_EVENT_KIND_NATIVE;
	spec->canonical[0] = '\0';
	return 0;
}
#else
static int resolve_native(const char *name, perf_event_spec *spec, char *reason, size_t length)
{
	(void)spec;
	snprintf(reason, length, "unknown event '%s' (native names need libpfm4; plumb was built without it)", name);
	return -1;
}
#endif

int perf_event_resolve(const char *name, perf_event_spec *spec, char *reason, size_t length)
{
	memset(spec, 0, sizeof *spec);
	spec->attr.size = sizeof spec->attr;
	if (!name || !name[0]) {
		snprintf(reason, length, "empty event name");
		return -1;
	}
	if (resolve_named(name, spec) == 0 || resolve_cache(name, spec) == 0)
		return 0;
	int raw = resolve_raw(name, spec, reason, length);
	if (raw <= 0)
		return raw;
	if (!strncmp(name, "PAPI_", 5)) {
		const counter_catalogue_entry *entry = counter_catalogue_find(name);
		if (!entry) {
			snprintf(reason, length, "%s is not in plumb's catalogue; use a perf name or a native event", name);
			return -1;
		}
		if (!entry->perf_generic) {
			/* A suggestion for this CPU only: another vendor's event
			 * names would only mislead. */
			char identity[64], native[256], why[COUNTER_REASON_MAX];
			counter_cpu_identity(identity, sizeof identity);
			if (counter_catalogue_native(entry, identity, native, sizeof native, why, sizeof why))
				snprintf(reason, length, "%s has no perf generic event (%s); candidate native for this CPU "
				         "(unverified): %s", name, entry->relation, native);
			else
				snprintf(reason, length, "%s has no perf generic event (%s); %s", name, entry->relation, why);
			return -1;
		}
		if (resolve_named(entry->perf_generic, spec) != 0 && resolve_cache(entry->perf_generic, spec) != 0) {
			snprintf(reason, length, "catalogue maps %s to unknown perf event %s", name, entry->perf_generic);
			return -1;
		}
		spec->kind = PERF_EVENT_KIND_PRESET;
		return 0;
	}
	char kernel_reason[COUNTER_REASON_MAX] = "";
	int kernel = perf_event_resolve_kernel(name, spec, kernel_reason, sizeof kernel_reason);
	if (kernel <= 0) {
		if (kernel < 0)
			snprintf(reason, length, "%s", kernel_reason);
		return kernel;
	}
	if (resolve_native(name, spec, reason, length) == 0)
		return 0;
	/* A SUBSYS:NAME that is neither a tracepoint nor a native: both words. */
	if (kernel_reason[0]) {
		size_t used = strlen(reason);
		snprintf(reason + used, length - used, "; %s", kernel_reason);
	}
	return -1;
}

const char *perf_event_papi_name(const char *name, char *buffer, size_t length)
{
	perf_event_spec spec;
	char reason[COUNTER_REASON_MAX];
	if (perf_event_resolve(name, &spec, reason, sizeof reason) != 0 || !spec.canonical[0] ||
	    (spec.kind != PERF_EVENT_KIND_HARDWARE && spec.kind != PERF_EVENT_KIND_SOFTWARE &&
	     spec.kind != PERF_EVENT_KIND_CACHE))
		return NULL;
	/* libpfm4's perf PMU spells perf's names in capitals: page-faults is
	 * perf::PAGE-FAULTS, L1-dcache-load-misses is perf::L1-DCACHE-LOAD-MISSES. */
	size_t i = 0;
	int prefix = snprintf(buffer, length, "perf::");
	for (i = 0; spec.canonical[i] && (size_t)prefix + i + 1 < length; i++)
		buffer[prefix + i] = (char)toupper((unsigned char)spec.canonical[i]);
	buffer[prefix + i] = '\0';
	return buffer;
}

void perf_event_list(counter_list_fn emit, void *argument, bool with_natives)
{
	for (size_t i = 0; i < sizeof named_events / sizeof named_events[0]; i++)
		emit(argument, named_events[i].name,
		     named_events[i].type == PERF_TYPE_SOFTWARE ? "software" : "hardware",
		     named_events[i].description);
	for (size_t c = 0; c < sizeof cache_names / sizeof cache_names[0]; c++)
		for (size_t o = 0; o < sizeof cache_ops / sizeof cache_ops[0]; o++)
			for (int miss = 0; miss < 2; miss++) {
				char name[64], description[96];
				if (miss)
					snprintf(name, sizeof name, "%s-%s-misses", cache_names[c].name, cache_ops[o].name);
				else
					snprintf(name, sizeof name, "%s-%s", cache_names[c].name, cache_ops[o].plural);
				snprintf(description, sizeof description, "%s %s %s", cache_names[c].name,
				         cache_ops[o].name, miss ? "misses" : "accesses");
				emit(argument, name, "cache", description);
			}
	size_t n;
	const counter_catalogue_entry *catalogue = counter_catalogue(&n);
	for (size_t i = 0; i < n; i++)
		emit(argument, catalogue[i].preset, "preset", catalogue[i].description);
	perf_event_list_kernel(emit, argument);
#ifdef PLUMB_HAVE_PFM
	if (!with_natives)
		return;
	pthread_once(&pfm_once, pfm_init);
	if (pfm_init_result != PFM_SUCCESS)
		return;
	pfm_pmu_t pmu;
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t info;
		memset(&info, 0, sizeof info);
		info.size = sizeof info;
		/* The perf PMU repeats the generic events above; perf_raw is r<hex>. */
		if (pfm_get_pmu_info(pmu, &info) != PFM_SUCCESS || !info.is_present ||
		    !strcmp(info.name, "perf") || !strcmp(info.name, "perf_raw"))
			continue;
		for (int e = info.first_event; e != -1; e = pfm_get_event_next(e)) {
			pfm_event_info_t event;
			memset(&event, 0, sizeof event);
			event.size = sizeof event;
			if (pfm_get_event_info(e, PFM_OS_NONE, &event) != PFM_SUCCESS)
				continue;
			char name[160];
			snprintf(name, sizeof name, "%s::%s", info.name, event.name);
			char description[COUNTER_REASON_MAX];
			snprintf(description, sizeof description, "%s", event.desc ? event.desc : "");
			description[strcspn(description, "\n")] = '\0';
			emit(argument, name, "native", description);
		}
	}
#else
	(void)with_natives;
#endif
}
