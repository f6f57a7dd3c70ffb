/* Per-instruction costs and the annotation files (sim.h, "annotation"):
 * every demand reference is charged, when it completes, to the instruction
 * that made it, with what it did at each level; the files group the costs
 * by file, function and line, as cachegrind's cost centres do, so that
 * cg_annotate, callgrind_annotate and KCachegrind show the simulated
 * hierarchy (docs/simulator.md, "Annotation files"). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_internal.h"

int sim_annotate(sim *s, plumb_status *status)
{
	if (s->annotate)
		return 0;
	if (sim_table_init(&s->annotation, sizeof(sim_annotation), 4096) != 0)
		return plumb_fail_errno(status, ENOMEM, "annotation table");
	s->annotate = true;
	s->fast = false;   /* every reference through the engine, which charges it */
	return 0;
}

void sim_annotate_free(sim *s)
{
	if (s->annotate)
		sim_table_free(&s->annotation);
}

static sim_annotation *cost_of(sim *s, uint64_t ip)
{
	bool created;
	sim_annotation *a = sim_table_insert(&s->annotation, ip, &created);
	if (a)
		a->address = ip;
	return a;
}

void sim_annotate_reference(sim *s, uint32_t core, sim_access_kind kind, const bool reached[3], const bool missed[3],
                            bool coherence_true, bool coherence_false, uint64_t invalidations)
{
	uint64_t ip = s->current_ip;
	s->last_ip[core] = ip;
	if (ip == 0)
		return;
	sim_annotation *a = cost_of(s, ip);
	if (!a)
		return;
	static const int base[SIM_KIND_COUNT] = { SIM_AN_IR, SIM_AN_DR, SIM_AN_DW };
	int b = base[kind];
	if (reached[0]) {
		a->count[b]++;
		if (missed[0])
			a->count[b + 1]++;
	}
	if (reached[1] && s->has_l2 && missed[1])
		a->count[b + 2]++;
	if (reached[2] && s->has_l3 && missed[2])
		a->count[b + 3]++;
	if (coherence_true || coherence_false) {
		a->count[SIM_AN_COHERENCE]++;
		a->count[coherence_true ? SIM_AN_TRUE_SHARING : SIM_AN_FALSE_SHARING]++;
	}
	a->count[SIM_AN_INV_SENT] += invalidations;
}

void sim_annotate_received(sim *s, uint32_t core)
{
	if (s->last_ip[core] == 0)
		return;
	sim_annotation *a = cost_of(s, s->last_ip[core]);
	if (a)
		a->count[SIM_AN_INV_RECEIVED]++;
}

static int compare_address(const void *a, const void *b)
{
	const sim_annotation *x = a, *y = b;
	return x->address < y->address ? -1 : x->address > y->address;
}

size_t sim_annotations(const sim *s, sim_annotation *out, size_t max)
{
	if (!s->annotate)
		return 0;
	if (!out)
		return s->annotation.count;
	sim_annotation *all = malloc((s->annotation.count + 1) * sizeof *all);
	if (!all)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < s->annotation.capacity; i++)
		if (s->annotation.keys[i] != SIM_NO_TAG)
			all[n++] = *(const sim_annotation *)sim_table_value_at(&s->annotation, i);
	qsort(all, n, sizeof *all, compare_address);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}

/* ---- the files ---- */

typedef struct cost_line {
	const char *file, *function;
	uint32_t line;
	uint64_t address;                 /* the first, for functions without a name */
	uint64_t count[SIM_AN_EVENTS];
} cost_line;

static int compare_lines(const void *a, const void *b)
{
	const cost_line *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c == 0)
		c = strcmp(x->function, y->function);
	if (c == 0)
		c = x->line < y->line ? -1 : x->line > y->line;
	return c;
}

/* The events present for this configuration, in file order, and their names. */
static size_t events_of(const sim *s, int events[SIM_AN_EVENTS], const char *names[SIM_AN_EVENTS])
{
	size_t n = 0;
	static const char *const prefix[3] = { "I", "D", "D" };
	static const char *const suffix[3] = { "r", "r", "w" };
	static const char *const access[3] = { "Ir", "Dr", "Dw" };
	static const int base[3] = { SIM_AN_IR, SIM_AN_DR, SIM_AN_DW };
	static char level_names[3][3][8];
	for (int k = 0; k < 3; k++) {
		events[n] = base[k];
		names[n++] = access[k];
		/* cachegrind's names: 1 for the L1, L for the last level, 2 for an L2 above an L3 */
		const bool present[3] = { true, s->has_l2, s->has_l3 };
		for (int level = 0; level < 3; level++) {
			if (!present[level])
				continue;
			bool last = level == 2 || (level == 1 && !s->has_l3);
			snprintf(level_names[k][level], sizeof level_names[k][level], "%s%s%s", prefix[k],
			         level == 0 ? "1" : last ? "L" : "2", k == 0 ? "mr" : suffix[k][0] == 'r' ? "mr" : "mw");
			events[n] = base[k] + 1 + level;
			names[n++] = level_names[k][level];
		}
	}
	if (s->config.classify) {
		events[n] = SIM_AN_COHERENCE;
		names[n++] = "CohM";
		events[n] = SIM_AN_TRUE_SHARING;
		names[n++] = "TrueSh";
		events[n] = SIM_AN_FALSE_SHARING;
		names[n++] = "FalseSh";
	}
	events[n] = SIM_AN_INV_SENT;
	names[n++] = "InvSent";
	events[n] = SIM_AN_INV_RECEIVED;
	names[n++] = "InvRecv";
	return n;
}

/* The costs grouped by file, function and line (sorted), with their totals. */
static cost_line *group(const sim *s, const trace_code_map *map, size_t *count, char **unnamed,
                        uint64_t total[SIM_AN_EVENTS])
{
	size_t n = sim_annotations(s, NULL, 0);
	sim_annotation *all = malloc((n + 1) * sizeof *all);
	cost_line *lines = malloc((n + 1) * sizeof *lines);
	*unnamed = malloc((n + 1) * 24);
	if (!all || !lines || !*unnamed) {
		free(all);
		free(lines);
		free(*unnamed);
		*unnamed = NULL;
		return NULL;
	}
	n = sim_annotations(s, all, n);
	memset(total, 0, sizeof(uint64_t) * SIM_AN_EVENTS);
	for (size_t i = 0; i < n; i++) {
		cost_line *l = &lines[i];
		if (!trace_code_map_lookup(map, all[i].address, &l->function, &l->file, &l->line)) {
			char *name = *unnamed + 24 * i;
			snprintf(name, 24, "0x%" PRIx64, all[i].address);
			l->function = name;
			l->file = "???";
			l->line = 0;
		}
		l->address = all[i].address;
		memcpy(l->count, all[i].count, sizeof l->count);
		for (int e = 0; e < SIM_AN_EVENTS; e++)
			total[e] += all[i].count[e];
	}
	free(all);
	qsort(lines, n, sizeof *lines, compare_lines);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && compare_lines(&lines[m - 1], &lines[i]) == 0) {
			for (int e = 0; e < SIM_AN_EVENTS; e++)
				lines[m - 1].count[e] += lines[i].count[e];
			continue;
		}
		lines[m++] = lines[i];
	}
	*count = m;
	return lines;
}

static void cache_description(const sim_cache_config *c, char *text, size_t size)
{
	if (c->assoc == 1)
		snprintf(text, size, "%" PRIu64 " B, %u B, direct-mapped", c->size, c->line);
	else if (c->assoc == 0)
		snprintf(text, size, "%" PRIu64 " B, %u B, fully associative", c->size, c->line);
	else
		snprintf(text, size, "%" PRIu64 " B, %u B, %u-way associative", c->size, c->line, c->assoc);
}

static int write_costs(const sim *s, const trace_code_map *map, const char *command, FILE *out,
                       plumb_status *status, bool callgrind)
{
	if (!s->annotate)
		return plumb_fail(status, EINVAL, "the simulator did not annotate (sim_annotate before the trace)");
	int events[SIM_AN_EVENTS];
	const char *names[SIM_AN_EVENTS];
	size_t event_count = events_of(s, events, names);
	uint64_t total[SIM_AN_EVENTS];
	size_t count = 0;
	char *unnamed = NULL;
	cost_line *lines = group(s, map, &count, &unnamed, total);
	if (!lines)
		return plumb_fail_errno(status, ENOMEM, "annotation");
	if (callgrind)
		fprintf(out, "# callgrind format\nversion: 1\ncreator: plumb sim\npositions: line\n");
	char text[128];
	cache_description(&s->config.cache[SIM_L1I], text, sizeof text);
	fprintf(out, "desc: I1 cache:         %s\n", text);
	cache_description(&s->config.cache[SIM_L1D], text, sizeof text);
	fprintf(out, "desc: D1 cache:         %s\n", text);
	if (s->has_l2) {
		cache_description(&s->config.cache[SIM_L2], text, sizeof text);
		fprintf(out, "desc: %s cache:         %s\n", s->has_l3 ? "L2" : "LL", text);
	}
	if (s->has_l3) {
		cache_description(&s->config.cache[SIM_L3], text, sizeof text);
		fprintf(out, "desc: LL cache:         %s\n", text);
	}
	fprintf(out, "desc: simulated by:     plumb sim, %u core%s, %s\n", s->config.cores, s->config.cores == 1 ? "" : "s",
	        sim_protocol_name(s->config.protocol));
	fprintf(out, "cmd: %s\n", command ? command : "(unknown)");
	fprintf(out, "events:");
	for (size_t e = 0; e < event_count; e++)
		fprintf(out, " %s", names[e]);
	fprintf(out, "\n");
	const char *file = NULL, *function = NULL;
	for (size_t i = 0; i < count; i++) {
		const cost_line *l = &lines[i];
		if (!file || strcmp(file, l->file) != 0) {
			fprintf(out, "fl=%s\n", l->file);
			file = l->file;
			function = NULL;
		}
		if (!function || strcmp(function, l->function) != 0) {
			fprintf(out, "fn=%s\n", l->function);
			function = l->function;
		}
		fprintf(out, "%u", l->line);
		for (size_t e = 0; e < event_count; e++)
			fprintf(out, " %" PRIu64, l->count[events[e]]);
		fprintf(out, "\n");
	}
	fprintf(out, "%s:", callgrind ? "totals" : "summary");
	for (size_t e = 0; e < event_count; e++)
		fprintf(out, " %" PRIu64, total[events[e]]);
	fprintf(out, "\n");
	if (callgrind) {
		fprintf(out, "summary:");
		for (size_t e = 0; e < event_count; e++)
			fprintf(out, " %" PRIu64, total[events[e]]);
		fprintf(out, "\n");
	}
	free(lines);
	free(unnamed);
	if (ferror(out))
		return plumb_fail_errno(status, EIO, "writing the annotation file");
	return 0;
}

int sim_write_cachegrind(const sim *s, const trace_code_map *map, const char *command, FILE *out,
                         plumb_status *status)
{
	return write_costs(s, map, command, out, status, false);
}

int sim_write_callgrind(const sim *s, const trace_code_map *map, const char *command, FILE *out,
                        plumb_status *status)
{
	return write_costs(s, map, command, out, status, true);
}
