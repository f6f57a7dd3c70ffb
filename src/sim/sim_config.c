/* Configuration: the key = value settings shared by the file format and
 * the command line, the parser, validation and the writer (the defaults
 * are in sim_defaults.c, below this file and the presets).
 * The format is in docs/simulator.md; the parser is fuzzed
 * (tests/fuzz/fuzz_sim_config.c), so every path ends in a clear error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/parse.h"
#include "core/read_file.h"
#include "sim/sim.h"

static const char *const level_names[SIM_LEVEL_COUNT] = { "L1I", "L1D", "L2", "L3" };
static const char *const level_keys[SIM_LEVEL_COUNT] = { "l1i", "l1d", "l2", "l3" };
static const char *const tlb_names[SIM_TLB_COUNT] = { "ITLB", "DTLB", "STLB" };
static const char *const tlb_keys[SIM_TLB_COUNT] = { "itlb", "dtlb", "stlb" };
static const char *const replacement_names[] = { "lru", "plru", "fifo", "random", "srrip" };
static const char *const protocol_names[] = { "mesi", "msi", "moesi", "esi" };
static const char *const inclusion_names[] = { "inclusive", "non-inclusive", "exclusive" };
static const char *const state_names[SIM_STATE_COUNT] = { "I", "S", "E", "O", "M" };
static const char *const prefetcher_names[] = { "none", "next-line", "stream", "stride" };
static const char *const lookup_names[] = { "head", "any" };
static const char *const modify_names[] = { "read", "write", "read-write" };
static const char *const thread_map_names[] = { "modulo", "error" };

const char *sim_level_name(sim_level level) { return (unsigned)level < SIM_LEVEL_COUNT ? level_names[level] : "?"; }
const char *sim_tlb_level_name(sim_tlb_level level) { return (unsigned)level < SIM_TLB_COUNT ? tlb_names[level] : "?"; }
const char *sim_replacement_name(sim_replacement r) { return (unsigned)r < 5 ? replacement_names[r] : "?"; }
const char *sim_protocol_name(sim_protocol p) { return (unsigned)p < 4 ? protocol_names[p] : "?"; }
const char *sim_inclusion_name(sim_inclusion i) { return (unsigned)i < 3 ? inclusion_names[i] : "?"; }
const char *sim_state_name(sim_state s) { return (unsigned)s < SIM_STATE_COUNT ? state_names[s] : "?"; }
const char *sim_prefetcher_name(sim_prefetcher p) { return (unsigned)p < 4 ? prefetcher_names[p] : "?"; }

/* ------------------------------------------------------------ values */

static int pick(const char *value, const char *const *names, size_t n, int *out, const char *key,
                plumb_status *status)
{
	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(value, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	char choices[160] = "";
	for (size_t i = 0; i < n; i++) {
		strncat(choices, names[i], sizeof choices - strlen(choices) - 1);
		if (i + 1 < n)
			strncat(choices, ", ", sizeof choices - strlen(choices) - 1);
	}
	return plumb_fail(status, EINVAL, "%s: '%s' is not one of %s", key, value, choices);
}

static int boolean(const char *value, bool *out, const char *key, plumb_status *status)
{
	static const char *const yes[] = { "yes", "on", "true", "1" }, *const no[] = { "no", "off", "false", "0" };
	for (int i = 0; i < 4; i++) {
		if (strcasecmp(value, yes[i]) == 0) { *out = true; return 0; }
		if (strcasecmp(value, no[i]) == 0) { *out = false; return 0; }
	}
	return plumb_fail(status, EINVAL, "%s: '%s' is not yes or no", key, value);
}

static int number32(const char *value, uint64_t min, uint64_t max, uint32_t *out, const char *key,
                    plumb_status *status)
{
	uint64_t v;
	plumb_status parsed; /* a separate status: the key is prefixed to its message, never formatted into itself */
	if (parse_u64(value, min, max, &v, &parsed) != 0)
		return plumb_fail(status, EINVAL, "%s: %s", key, parsed.message);
	*out = (uint32_t)v;
	return 0;
}

static int size_value(const char *value, uint64_t *out, const char *key, plumb_status *status)
{
	plumb_status parsed;
	if (parse_size(value, out, &parsed) != 0)
		return plumb_fail(status, EINVAL, "%s: %s", key, parsed.message);
	return 0;
}

static int set_cache(sim_config *config, sim_level level, const char *field, const char *key,
                     const char *value, plumb_status *status)
{
	sim_cache_config *c = &config->cache[level];
	int choice = 0;   /* set by pick when it succeeds; gcc -O3 cannot see that */
	if (strcmp(field, "size") == 0) {
		if (strcasecmp(value, "none") == 0) {
			if (level == SIM_L1I || level == SIM_L1D)
				return plumb_fail(status, EINVAL, "%s: the L1 caches cannot be absent", key);
			c->size = 0;
			return 0;
		}
		return size_value(value, &c->size, key, status);
	}
	if (strcmp(field, "line") == 0) {
		uint64_t v;
		if (size_value(value, &v, key, status) != 0)
			return -1;
		if (v == 0 || v > (1u << 20))
			return plumb_fail(status, EINVAL, "%s: a line of %llu bytes is out of range (1 B .. 1 MiB)", key,
			                  (unsigned long long)v);
		c->line = (uint32_t)v;
		return 0;
	}
	if (strcmp(field, "assoc") == 0) {
		if (strcasecmp(value, "full") == 0) {
			c->assoc = 0;
			return 0;
		}
		return number32(value, 1, 1u << 20, &c->assoc, key, status);
	}
	if (strcmp(field, "latency") == 0)
		return number32(value, 0, 1000000, &c->latency, key, status);
	if (strcmp(field, "replacement") == 0) {
		if (pick(value, replacement_names, 5, &choice, key, status) != 0)
			return -1;
		c->replacement = (sim_replacement)choice;
		return 0;
	}
	if (strcmp(field, "write") == 0) {
		static const char *const policies[] = { "back", "through" };
		if (pick(value, policies, 2, &choice, key, status) != 0)
			return -1;
		c->write_back = choice == 0;
		return 0;
	}
	if (strcmp(field, "allocate") == 0 || strcmp(field, "write_allocate") == 0)
		return boolean(value, &c->write_allocate, key, status);
	if (strcmp(field, "inclusion") == 0 && level == SIM_L3) {
		if (pick(value, inclusion_names, 3, &choice, key, status) != 0)
			return -1;
		config->l3_inclusion = (sim_inclusion)choice;
		return 0;
	}
	return plumb_fail(status, EINVAL, "unknown key '%s'", key);
}

static int set_tlb(sim_config *config, sim_tlb_level level, const char *field, const char *key,
                   const char *value, plumb_status *status)
{
	sim_tlb_config *t = &config->tlb[level];
	int choice = 0;   /* set by pick when it succeeds; gcc -O3 cannot see that */
	if (strcmp(field, "entries") == 0) {
		if (strcasecmp(value, "none") == 0) {
			t->entries = 0;
			return 0;
		}
		return number32(value, 0, 1u << 24, &t->entries, key, status);
	}
	if (strcmp(field, "assoc") == 0) {
		if (strcasecmp(value, "full") == 0) {
			t->assoc = 0;
			return 0;
		}
		return number32(value, 1, 1u << 24, &t->assoc, key, status);
	}
	if (strcmp(field, "page") == 0 || strcmp(field, "page_size") == 0)
		return size_value(value, &t->page_size, key, status);
	if (strcmp(field, "latency") == 0)
		return number32(value, 0, 1000000, &t->latency, key, status);
	if (strcmp(field, "replacement") == 0) {
		if (pick(value, replacement_names, 5, &choice, key, status) != 0)
			return -1;
		t->replacement = (sim_replacement)choice;
		return 0;
	}
	return plumb_fail(status, EINVAL, "unknown key '%s'", key);
}

int sim_config_set(sim_config *config, const char *key, const char *value, plumb_status *status)
{
	int choice = 0;   /* set by pick when it succeeds; gcc -O3 cannot see that */
	if (!*value)
		return plumb_fail(status, EINVAL, "%s: empty value", key);
	for (int level = 0; level < SIM_LEVEL_COUNT; level++) {
		size_t n = strlen(level_keys[level]);
		if (strncasecmp(key, level_keys[level], n) == 0 && key[n] == '.')
			return set_cache(config, (sim_level)level, key + n + 1, key, value, status);
	}
	for (int level = 0; level < SIM_TLB_COUNT; level++) {
		size_t n = strlen(tlb_keys[level]);
		if (strncasecmp(key, tlb_keys[level], n) == 0 && key[n] == '.')
			return set_tlb(config, (sim_tlb_level)level, key + n + 1, key, value, status);
	}
	if (strcmp(key, "preset") == 0)
		return sim_preset(config, value, status);
	if (strcmp(key, "cores") == 0)
		return number32(value, 1, SIM_MAX_CORES, &config->cores, key, status);
	if (strcmp(key, "protocol") == 0) {
		if (pick(value, protocol_names, 4, &choice, key, status) != 0)
			return -1;
		config->protocol = (sim_protocol)choice;
		if (config->protocol == SIM_ESI) {
			/* ESI is the write-through protocol: it needs write-through
			 * caches, so choosing it sets them. */
			for (int level = 0; level < SIM_LEVEL_COUNT; level++)
				config->cache[level].write_back = false;
		}
		return 0;
	}
	if (strcmp(key, "inclusion") == 0)
		return set_cache(config, SIM_L3, "inclusion", key, value, status);
	if (strcmp(key, "modify") == 0) {
		if (pick(value, modify_names, 3, &choice, key, status) != 0)
			return -1;
		config->modify = (sim_modify)choice;
		return 0;
	}
	if (strcmp(key, "max_access_size") == 0)
		return number32(value, 0, 65535, &config->max_access_size, key, status);
	if (strcmp(key, "memory.latency") == 0 || strcmp(key, "memory_latency") == 0)
		return number32(value, 0, 100000000, &config->memory_latency, key, status);
	if (strcmp(key, "transfer.latency") == 0 || strcmp(key, "transfer_latency") == 0)
		return number32(value, 0, 100000000, &config->transfer_latency, key, status);
	if (strcmp(key, "upgrade.latency") == 0 || strcmp(key, "upgrade_latency") == 0)
		return number32(value, 0, 100000000, &config->upgrade_latency, key, status);
	if (strcmp(key, "seed") == 0) {
		plumb_status parsed;
		return parse_u64(value, 0, UINT64_MAX, &config->seed, &parsed) == 0 ? 0 :
		       plumb_fail(status, EINVAL, "seed: %s", parsed.message);
	}
	if (strcmp(key, "classify") == 0)
		return boolean(value, &config->classify, key, status);
	if (strcmp(key, "check") == 0)
		return boolean(value, &config->check, key, status);
	if (strcmp(key, "thread_map") == 0) {
		if (pick(value, thread_map_names, 2, &choice, key, status) != 0)
			return -1;
		config->thread_map = (sim_thread_map)choice;
		return 0;
	}
	if (strcmp(key, "prefetch") == 0 || strcmp(key, "prefetch.kind") == 0) {
		if (pick(value, prefetcher_names, 4, &choice, key, status) != 0)
			return -1;
		config->prefetch.kind = (sim_prefetcher)choice;
		return 0;
	}
	if (strcmp(key, "prefetch.streams") == 0)
		return number32(value, 1, 64, &config->prefetch.streams, key, status);
	if (strcmp(key, "prefetch.depth") == 0)
		return number32(value, 1, 64, &config->prefetch.depth, key, status);
	if (strcmp(key, "prefetch.unshared_only") == 0)
		return boolean(value, &config->prefetch.unshared_only, key, status);
	if (strcmp(key, "prefetch.lookup") == 0) {
		if (pick(value, lookup_names, 2, &choice, key, status) != 0)
			return -1;
		config->prefetch.lookup = (sim_stream_lookup)choice;
		return 0;
	}
	return plumb_fail(status, EINVAL, "unknown key '%s'", key);
}

static char *trim(char *text)
{
	while (*text == ' ' || *text == '\t')
		text++;
	size_t n = strlen(text);
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\r'))
		text[--n] = '\0';
	return text;
}

int sim_config_assign(sim_config *config, const char *assignment, plumb_status *status)
{
	char buffer[256];
	if (strlen(assignment) >= sizeof buffer)
		return plumb_fail(status, EINVAL, "setting too long: '%.40s...'", assignment);
	strcpy(buffer, assignment);
	char *equals = strchr(buffer, '=');
	if (!equals)
		return plumb_fail(status, EINVAL, "'%s' is not key=value", assignment);
	*equals = '\0';
	char *key = trim(buffer), *value = trim(equals + 1);
	if (!*key)
		return plumb_fail(status, EINVAL, "'%s' has no key", assignment);
	return sim_config_set(config, key, value, status);
}

int sim_config_parse(sim_config *config, const char *text, size_t length, const char *origin,
                     plumb_status *status)
{
	char section[32] = "";
	size_t line_number = 0;
	size_t at = 0;
	if (!origin)
		origin = "configuration";
	while (at < length) {
		size_t end = at;
		while (end < length && text[end] != '\n')
			end++;
		line_number++;
		char line[512];
		size_t n = end - at;
		if (n >= sizeof line)
			return plumb_fail(status, EINVAL, "%s: line %zu: longer than %zu characters", origin, line_number,
			                  sizeof line - 1);
		memcpy(line, text + at, n);
		line[n] = '\0';
		at = end + 1;
		if (memchr(line, '\0', n))
			return plumb_fail(status, EINVAL, "%s: line %zu: contains a NUL byte", origin, line_number);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *content = trim(line);
		if (!*content)
			continue;
		if (*content == '[') {
			char *close = strchr(content, ']');
			if (!close || close[1] != '\0')
				return plumb_fail(status, EINVAL, "%s: line %zu: a section is [name]", origin, line_number);
			*close = '\0';
			char *name = trim(content + 1);
			if (strlen(name) >= sizeof section)
				return plumb_fail(status, EINVAL, "%s: line %zu: section name too long", origin, line_number);
			if (strcasecmp(name, "general") == 0)
				name = (char *)"";
			strcpy(section, name);
			continue;
		}
		char *equals = strchr(content, '=');
		if (!equals)
			return plumb_fail(status, EINVAL, "%s: line %zu: expected key = value, got '%.60s'", origin,
			                  line_number, content);
		*equals = '\0';
		char *key = trim(content), *value = trim(equals + 1);
		if (!*key)
			return plumb_fail(status, EINVAL, "%s: line %zu: missing key before '='", origin, line_number);
		char full[128];
		if (snprintf(full, sizeof full, "%s%s%s", section, *section ? "." : "", key) >= (int)sizeof full)
			return plumb_fail(status, EINVAL, "%s: line %zu: key too long", origin, line_number);
		plumb_status inner;
		plumb_status_clear(&inner);
		if (sim_config_set(config, full, value, &inner) != 0)
			return plumb_fail(status, inner.code ? inner.code : EINVAL, "%s: line %zu: %s", origin,
			                  line_number, inner.message);
	}
	return 0;
}

int sim_config_load(sim_config *config, const char *path, plumb_status *status)
{
	char *text;
	size_t length;
	plumb_status read_status;
	if (read_file_limited(path, READ_FILE_MAX_CONFIG_BYTES, &text, &length, &read_status) != 0) {
		if (read_status.code == EFBIG || read_status.code == ENOMEM)
			return plumb_fail(status, read_status.code, "%s", read_status.message);
		return plumb_fail_errno(status, read_status.code, "%s", path);
	}
	size_t bom = read_file_bom_length(text, length);
	if (bom) {
		memmove(text, text + bom, length - bom + 1);
		length -= bom;
	}
	int rc = sim_config_parse(config, text, length, path, status);
	free(text);
	if (rc == 0) {
		const char *base = strrchr(path, '/');
		snprintf(config->name, sizeof config->name, "%s", base ? base + 1 : path);
	}
	return rc;
}

/* ------------------------------------------------------------ validation */

static bool power_of_two(uint64_t v) { return v && (v & (v - 1)) == 0; }

static int validate_cache(const sim_config *config, sim_level level, plumb_status *status)
{
	const sim_cache_config *c = &config->cache[level];
	const char *name = level_names[level];
	if (c->size == 0)
		return 0;
	if (!power_of_two(c->line))
		return plumb_fail(status, EINVAL, "%s: the line size %u is not a power of two", name, c->line);
	if (c->size % c->line)
		return plumb_fail(status, EINVAL, "%s: the size %llu is not a multiple of the line size %u", name,
		                  (unsigned long long)c->size, c->line);
	uint64_t lines = c->size / c->line;
	if (lines > (1ull << 28))
		return plumb_fail(status, EINVAL, "%s: %llu lines is more than the simulator supports (2^28)", name,
		                  (unsigned long long)lines);
	uint32_t assoc = c->assoc ? c->assoc : (uint32_t)lines;
	if (assoc > lines)
		return plumb_fail(status, EINVAL, "%s: %u ways but only %llu lines (%llu B / %u B)", name, assoc,
		                  (unsigned long long)lines, (unsigned long long)c->size, c->line);
	if (lines % assoc)
		return plumb_fail(status, EINVAL, "%s: %llu lines do not divide into %u ways", name,
		                  (unsigned long long)lines, assoc);
	if (assoc > 4096)
		return plumb_fail(status, EINVAL, "%s: %u ways is more than the simulator supports (4096)", name, assoc);
	if (c->replacement == SIM_PLRU && (!power_of_two(assoc) || assoc > 64))
		return plumb_fail(status, EINVAL, "%s: tree-PLRU needs a power-of-two associativity of at most 64, not %u",
		                  name, assoc);
	return 0;
}

int sim_config_validate(const sim_config *config, plumb_status *status)
{
	if (config->cores < 1 || config->cores > SIM_MAX_CORES)
		return plumb_fail(status, EINVAL, "cores: %u is out of range (1..%d)", config->cores, SIM_MAX_CORES);
	if (config->cache[SIM_L1I].size == 0 || config->cache[SIM_L1D].size == 0)
		return plumb_fail(status, EINVAL, "the L1I and L1D caches must be present");
	for (int level = 0; level < SIM_LEVEL_COUNT; level++)
		if (validate_cache(config, (sim_level)level, status) != 0)
			return -1;
	const sim_cache_config *l1i = &config->cache[SIM_L1I], *l1d = &config->cache[SIM_L1D];
	const sim_cache_config *l2 = &config->cache[SIM_L2], *l3 = &config->cache[SIM_L3];
	if (l2->size) {
		if (l1i->line > l2->line || l1d->line > l2->line)
			return plumb_fail(status, EINVAL, "the L1 lines (%u, %u B) must not be longer than the L2's (%u B): "
			                  "the private L2 is inclusive", l1i->line, l1d->line, l2->line);
	} else if (l1i->line != l1d->line) {
		return plumb_fail(status, EINVAL, "without an L2, L1I and L1D must have the same line size (%u != %u B)",
		                  l1i->line, l1d->line);
	}
	uint32_t line_above = l2->size ? l2->line : l1d->line;
	if (l3->size && config->l3_inclusion == SIM_EXCLUSIVE && l3->line != line_above)
		return plumb_fail(status, EINVAL, "an exclusive L3 needs the line size of the level above it");
	/* An L3 line shorter than the line above would hold only the part of
	 * that line that missed, and inclusion would be a lie (found by the
	 * configuration fuzzer: l2.line = 8K under a 64 B inclusive L3). */
	if (l3->size && config->l3_inclusion == SIM_INCLUSIVE && l3->line < line_above)
		return plumb_fail(status, EINVAL, "an inclusive L3 needs lines at least as long as the level above "
		                  "it (%u B < %u B); make it non-inclusive or lengthen its line", l3->line, line_above);
	if (config->protocol == SIM_ESI) {
		for (int level = 0; level < SIM_LEVEL_COUNT; level++)
			if (config->cache[level].size && config->cache[level].write_back)
				return plumb_fail(status, EINVAL, "protocol esi is write-through, but %s is write-back "
				                  "(set %s.write = through)", level_names[level], level_keys[level]);
	}
	if (!l1i->write_allocate)
		return plumb_fail(status, EINVAL, "L1I: instruction caches are never written; no-write-allocate means nothing there");
	for (int t = 0; t < SIM_TLB_COUNT; t++) {
		const sim_tlb_config *tc = &config->tlb[t];
		if (tc->entries == 0)
			continue;
		if (!power_of_two(tc->page_size) || tc->page_size < 256 || tc->page_size > (1ull << 30))
			return plumb_fail(status, EINVAL, "%s: the page size %llu is not a power of two between 256 B and 1 GiB",
			                  tlb_names[t], (unsigned long long)tc->page_size);
		uint32_t assoc = tc->assoc ? tc->assoc : tc->entries;
		if (assoc > tc->entries || tc->entries % assoc)
			return plumb_fail(status, EINVAL, "%s: %u entries do not divide into %u ways", tlb_names[t],
			                  tc->entries, assoc);
		if (assoc > 4096)
			return plumb_fail(status, EINVAL, "%s: %u ways is more than the simulator supports (4096)",
			                  tlb_names[t], assoc);
		if (tc->replacement == SIM_PLRU && (!power_of_two(assoc) || assoc > 64))
			return plumb_fail(status, EINVAL, "%s: tree-PLRU needs a power-of-two associativity of at most 64",
			                  tlb_names[t]);
	}
	if ((config->prefetch.kind == SIM_PREFETCH_STREAM || config->prefetch.kind == SIM_PREFETCH_STRIDE) &&
	    (config->prefetch.streams < 1 || config->prefetch.streams > 64 || config->prefetch.depth < 1 ||
	     config->prefetch.depth > 64))
		return plumb_fail(status, EINVAL, "prefetch: streams and depth must be 1..64");
	return 0;
}

/* ---------------------------------------------------------------- writer */

static void write_size(FILE *f, const char *key, uint64_t bytes)
{
	if (bytes && bytes % (1024 * 1024) == 0)
		fprintf(f, "%s = %lluM\n", key, (unsigned long long)(bytes / (1024 * 1024)));
	else if (bytes && bytes % 1024 == 0)
		fprintf(f, "%s = %lluK\n", key, (unsigned long long)(bytes / 1024));
	else
		fprintf(f, "%s = %llu\n", key, (unsigned long long)bytes);
}

int sim_config_write(const sim_config *c, FILE *f)
{
	fprintf(f, "# plumb sim configuration (%s)\n", c->name);
	fprintf(f, "cores = %u\nprotocol = %s\nmodify = %s\nmax_access_size = %u\n", c->cores,
	        protocol_names[c->protocol], modify_names[c->modify], c->max_access_size);
	fprintf(f, "memory.latency = %u\ntransfer.latency = %u\nupgrade.latency = %u\n", c->memory_latency,
	        c->transfer_latency, c->upgrade_latency);
	fprintf(f, "seed = %llu\nclassify = %s\ncheck = %s\nthread_map = %s\n", (unsigned long long)c->seed,
	        c->classify ? "yes" : "no", c->check ? "yes" : "no", thread_map_names[c->thread_map]);
	fprintf(f, "prefetch = %s\nprefetch.streams = %u\nprefetch.depth = %u\nprefetch.lookup = %s\n"
	        "prefetch.unshared_only = %s\n", prefetcher_names[c->prefetch.kind], c->prefetch.streams,
	        c->prefetch.depth, lookup_names[c->prefetch.lookup], c->prefetch.unshared_only ? "yes" : "no");
	for (int level = 0; level < SIM_LEVEL_COUNT; level++) {
		const sim_cache_config *cc = &c->cache[level];
		fprintf(f, "\n[%s]\n", level_keys[level]);
		if (cc->size == 0)
			fprintf(f, "size = none\n");
		else
			write_size(f, "size", cc->size);
		fprintf(f, "line = %u\n", cc->line);
		if (cc->assoc)
			fprintf(f, "assoc = %u\n", cc->assoc);
		else
			fprintf(f, "assoc = full\n");
		fprintf(f, "latency = %u\nreplacement = %s\nwrite = %s\nallocate = %s\n", cc->latency,
		        replacement_names[cc->replacement], cc->write_back ? "back" : "through",
		        cc->write_allocate ? "yes" : "no");
		if (level == SIM_L3)
			fprintf(f, "inclusion = %s\n", inclusion_names[c->l3_inclusion]);
	}
	for (int t = 0; t < SIM_TLB_COUNT; t++) {
		const sim_tlb_config *tc = &c->tlb[t];
		fprintf(f, "\n[%s]\nentries = %u\n", tlb_keys[t], tc->entries);
		if (tc->assoc)
			fprintf(f, "assoc = %u\n", tc->assoc);
		else
			fprintf(f, "assoc = full\n");
		write_size(f, "page", tc->page_size);
		fprintf(f, "latency = %u\nreplacement = %s\n", tc->latency, replacement_names[tc->replacement]);
	}
	return ferror(f) ? -1 : 0;
}
