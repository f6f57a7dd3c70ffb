/* The perf event names that come from the running kernel rather than a
 * table, spelt as perf spells them:
 *
 *   PMU/TERMS/      a PMU under /sys/bus/event_source/devices (msr/tsc/,
 *                   cpu/event=0x3c,umask=0/, power/energy-pkg/): TERMS are
 *                   an alias from the PMU's events/ folder or KEY=VALUE
 *                   pairs placed by its format/ files;
 *   SUBSYS:NAME     a tracepoint (sched:sched_switch), its id read from
 *                   tracefs (/sys/kernel/tracing, or under debugfs);
 *   duration_time   perf's tool event: wall time while the set is enabled,
 *                   counted by the backend with the monotonic clock.
 *
 * These count on a machine without a hardware PMU (the msr PMU's TSC and
 * the tracepoints are the kernel's), which is where perf's users expect
 * them to work.  The folders are parameters so that the tests can give a
 * recorded sysfs tree. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters/perf_events.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"

static const char *const tracefs_roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* The first line of a small file, without its newline; -1 when it cannot be read. */
static int read_line(const char *path, char *out, size_t length)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	bool got = fgets(out, (int)length, f) != NULL;
	fclose(f);
	if (!got)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* One path component, never "." or ".." or hidden: a name from the
 * command line must not lead out of the PMU or tracefs folder. */
static bool valid_component(const char *text, size_t length)
{
	if (length == 0 || length > 64 || text[0] == '.')
		return false;
	for (size_t i = 0; i < length; i++)
		if (!isalnum((unsigned char)text[i]) && text[i] != '_' && text[i] != '-' && text[i] != '.')
			return false;
	return true;
}

/* A format file: "config:0-7,21" -> which attr field and which bits. */
static int apply_format(const char *format, unsigned long long value, struct perf_event_attr *attr, char *reason,
                        size_t length)
{
	const char *colon = strchr(format, ':');
	if (!colon) {
		snprintf(reason, length, "unreadable format '%s'", format);
		return -1;
	}
	__u64 *field;
	size_t name_length = (size_t)(colon - format);
	if (name_length == 6 && !strncmp(format, "config", 6))
		field = &attr->config;
	else if (name_length == 7 && !strncmp(format, "config1", 7))
		field = &attr->config1;
	else if (name_length == 7 && !strncmp(format, "config2", 7))
		field = &attr->config2;
	else {
		snprintf(reason, length, "format field '%.*s' is not config, config1 or config2", (int)name_length, format);
		return -1;
	}
	/* Bits are given low to high, in ranges; the value's bits fill them in order. */
	const char *p = colon + 1;
	unsigned used = 0;
	while (*p) {
		char *end;
		unsigned long low = strtoul(p, &end, 10), high = low;
		if (end == p || low > 63) {
			snprintf(reason, length, "unreadable format '%s'", format);
			return -1;
		}
		if (*end == '-') {
			p = end + 1;
			high = strtoul(p, &end, 10);
			if (end == p || high > 63 || high < low) {
				snprintf(reason, length, "unreadable format '%s'", format);
				return -1;
			}
		}
		for (unsigned long bit = low; bit <= high; bit++, used++)
			if (value >> used & 1)
				*field |= 1ULL << bit;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			snprintf(reason, length, "unreadable format '%s'", format);
			return -1;
		}
	}
	if (used < 64 && value >> used) {
		snprintf(reason, length, "value %#llx does not fit the %u bits of '%s'", value, used, format);
		return -1;
	}
	return 0;
}

/* One KEY or KEY=VALUE term (VALUE decimal or 0x hex; a bare KEY is 1). */
static int apply_term(const char *pmus, const char *pmu, const char *term, struct perf_event_attr *attr,
                      char *reason, size_t length)
{
	char key[65];
	const char *equals = strchr(term, '=');
	size_t key_length = equals ? (size_t)(equals - term) : strlen(term);
	if (!valid_component(term, key_length)) {
		snprintf(reason, length, "'%s' is not a term of the form KEY=VALUE", term);
		return -1;
	}
	memcpy(key, term, key_length);
	key[key_length] = '\0';
	unsigned long long value = 1;
	if (equals) {
		const char *text = equals + 1;
		char *end;
		errno = 0;
		bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
		value = strtoull(hex ? text + 2 : text, &end, hex ? 16 : 10);
		if (!*text || *end || errno == ERANGE || text[0] == '-' || text[0] == '+' || isspace((unsigned char)text[0])) {
			snprintf(reason, length, "'%s' in %s/%s/ is not a number (decimal, or 0x hexadecimal)", text, pmu, term);
			return -1;
		}
	}
	char path[512], format[128];
	snprintf(path, sizeof path, "%s/%s/format/%s", pmus, pmu, key);
	if (read_line(path, format, sizeof format) != 0) {
		snprintf(reason, length, "the %s PMU has no term '%s' (see %s/%s/format)", pmu, key, pmus, pmu);
		return -1;
	}
	return apply_format(format, value, attr, reason, length);
}

/* TERMS, comma-separated; each term may itself be an alias whose file holds terms. */
static int apply_terms(const char *pmus, const char *pmu, const char *terms, struct perf_event_attr *attr,
                       int depth, char *reason, size_t length)
{
	char copy[256];
	if (strlen(terms) >= sizeof copy) {
		snprintf(reason, length, "event terms too long");
		return -1;
	}
	strcpy(copy, terms);
	char *save = NULL;
	for (char *term = strtok_r(copy, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
		char path[512], alias[256];
		snprintf(path, sizeof path, "%s/%s/events/%s", pmus, pmu, term);
		if (!strchr(term, '=') && depth == 0 && valid_component(term, strlen(term)) &&
		    read_line(path, alias, sizeof alias) == 0) {
			if (apply_terms(pmus, pmu, alias, attr, depth + 1, reason, length) != 0)
				return -1;
			continue;
		}
		if (apply_term(pmus, pmu, term, attr, reason, length) != 0)
			return -1;
	}
	return 0;
}

int perf_event_resolve_pmu(const char *pmus, const char *name, perf_event_spec *spec, char *reason, size_t length)
{
	const char *slash = strchr(name, '/');
	size_t total = strlen(name);
	if (!slash || total < 3 || name[total - 1] != '/')
		return 1;   /* not PMU/TERMS/ syntax */
	size_t pmu_length = (size_t)(slash - name);
	if (!valid_component(name, pmu_length)) {
		snprintf(reason, length, "'%.*s' is not a PMU name", (int)pmu_length, name);
		return -1;
	}
	char pmu[65], terms[256], path[512], type_text[32];
	memcpy(pmu, name, pmu_length);
	pmu[pmu_length] = '\0';
	size_t terms_length = total - pmu_length - 2;
	if (terms_length == 0 || terms_length >= sizeof terms || memchr(slash + 1, '/', terms_length)) {
		snprintf(reason, length, "'%s' is not PMU/TERMS/", name);
		return -1;
	}
	memcpy(terms, slash + 1, terms_length);
	terms[terms_length] = '\0';
	snprintf(path, sizeof path, "%s/%s/type", pmus, pmu);
	if (read_line(path, type_text, sizeof type_text) != 0) {
		snprintf(reason, length, "this kernel has no PMU '%s' (%s lists them)", pmu, pmus);
		return -1;
	}
	char *end;
	unsigned long type = strtoul(type_text, &end, 10);
	if (end == type_text || *end) {
		snprintf(reason, length, "unreadable %s", path);
		return -1;
	}
	memset(&spec->attr, 0, sizeof spec->attr);
	spec->attr.size = sizeof spec->attr;
	spec->attr.type = (__u32)type;
	if (apply_terms(pmus, pmu, terms, &spec->attr, 0, reason, length) != 0)
		return -1;
	spec->kind = PERF_EVENT_KIND_PMU;
	snprintf(spec->canonical, sizeof spec->canonical, "%s", name);
	return 0;
}

int perf_event_resolve_tracepoint(const char *const *roots, size_t root_count, const char *name,
                                  perf_event_spec *spec, char *reason, size_t length)
{
	const char *colon = strchr(name, ':');
	if (!colon || colon[1] == ':' || strchr(colon + 1, ':') || strchr(name, '/'))
		return 1;   /* not SUBSYS:NAME (libpfm4 natives use ::, or EVENT:UMASK) */
	size_t subsystem_length = (size_t)(colon - name);
	if (!valid_component(name, subsystem_length) || !valid_component(colon + 1, strlen(colon + 1)))
		return 1;
	bool mounted = false;
	for (size_t r = 0; r < root_count; r++) {
		char path[512], id_text[32];
		snprintf(path, sizeof path, "%s/events", roots[r]);
		FILE *probe = fopen(path, "r");
		if (probe) {
			fclose(probe);
			mounted = true;
		}
		snprintf(path, sizeof path, "%s/events/%.*s/%s/id", roots[r], (int)subsystem_length, name, colon + 1);
		if (read_line(path, id_text, sizeof id_text) != 0)
			continue;
		char *end;
		unsigned long long id = strtoull(id_text, &end, 10);
		if (end == id_text || *end)
			continue;
		memset(&spec->attr, 0, sizeof spec->attr);
		spec->attr.size = sizeof spec->attr;
		spec->attr.type = PERF_TYPE_TRACEPOINT;
		spec->attr.config = id;
		spec->attr.sample_period = 1;
		spec->kind = PERF_EVENT_KIND_TRACEPOINT;
		snprintf(spec->canonical, sizeof spec->canonical, "%s", name);
		return 0;
	}
	/* EVENT:UMASK may still be a libpfm4 native: the caller goes on to it,
	 * and keeps this reason for when nothing else knows the name. */
	if (!mounted)
		snprintf(reason, length, "%s looks like a tracepoint, but tracefs is not mounted (mount -t tracefs nodev "
		         "/sys/kernel/tracing, as root)", name);
	else
		snprintf(reason, length, "no tracepoint %s in tracefs (its events/ folder lists them)", name);
	return 1;
}

int perf_event_resolve_kernel(const char *name, perf_event_spec *spec, char *reason, size_t length)
{
	if (!strcmp(name, "duration_time")) {
		memset(&spec->attr, 0, sizeof spec->attr);
		spec->kind = PERF_EVENT_KIND_TOOL;
		snprintf(spec->canonical, sizeof spec->canonical, "duration_time");
		return 0;
	}
	int rc = perf_event_resolve_pmu(SYSFS_PMUS, name, spec, reason, length);
	if (rc <= 0)
		return rc;
	return perf_event_resolve_tracepoint(tracefs_roots, sizeof tracefs_roots / sizeof tracefs_roots[0], name, spec,
	                                     reason, length);
}

void perf_event_list_kernel(counter_list_fn emit, void *argument)
{
	emit(argument, "duration_time", "tool", "wall-clock time while counting (ns), as perf's tool event");
	/* The aliases of the PMUs that are not the CPU's own (the CPU's are
	 * the generic events above and libpfm4's natives): msr/tsc/, power/... */
	static const char *const pmus[] = { "msr", "power", "cstate_core", "cstate_pkg" };
	for (size_t p = 0; p < sizeof pmus / sizeof pmus[0]; p++) {
		static const char *const aliases[] = { "tsc", "aperf", "mperf", "smi", "pperf", "energy-pkg",
		                                       "energy-cores", "energy-ram", "c1-residency", "c6-residency" };
		for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++) {
			char path[256], terms[128];
			snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s", pmus[p], aliases[a]);
			if (read_line(path, terms, sizeof terms) != 0)
				continue;
			char name[128], description[192];
			snprintf(name, sizeof name, "%s/%s/", pmus[p], aliases[a]);
			snprintf(description, sizeof description, "the kernel's %s PMU (%s)", pmus[p], terms);
			emit(argument, name, "pmu", description);
		}
	}
}
