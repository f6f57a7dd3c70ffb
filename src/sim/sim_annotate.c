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
#include "sim/sim_state.h"

/* ---- calls (TRACE_CALL / TRACE_RETURN records, plumbgrind --plumb-calls) ----
 * callgrind's rule: the cost of a call is what its thread was charged
 * between the call and its return.  Each thread's charges are summed as they
 * happen; a call notes the sum, its return adds the difference to the call's
 * edge (call instruction -> callee).  A call to a function already active in
 * the thread (recursion, direct or not) is counted but adds no cost: the
 * outermost activation's cost already holds it, so a function's inclusive
 * cost never counts an event twice.  Calls still open at the end are closed
 * there (sim_write_callgrind), as callgrind does at exit. */

typedef struct call_frame {
	uint64_t site, callee;
	uint64_t enter[SIM_AN_EVENTS];
	bool recursive;
} call_frame;

typedef struct call_thread {
	call_frame *frames;
	size_t depth, capacity;
	uint64_t cost[SIM_AN_EVENTS];   /* everything charged to the thread so far */
} call_thread;

typedef struct call_edge {
	uint64_t site, callee, calls;
	uint64_t cost[SIM_AN_EVENTS];
} call_edge;

struct sim_calls {
	call_thread *threads;
	size_t thread_count;
	sim_table edges;                 /* mixed (site, callee) -> call_edge */
	sim_table active;                /* callee | thread << 48 -> activations */
	uint32_t last_thread[SIM_MAX_CORES];
	uint64_t records;                /* call and return records taken */
};

static void calls_free(struct sim_calls *c)
{
	if (!c)
		return;
	for (size_t t = 0; t < c->thread_count; t++)
		free(c->threads[t].frames);
	free(c->threads);
	sim_table_free(&c->edges);
	sim_table_free(&c->active);
	free(c);
}

void sim_annotate_free(sim *s)
{
	if (s->annotate)
		sim_table_free(&s->annotation);
	calls_free(s->calls);
	s->calls = NULL;
}

static call_thread *call_thread_of(struct sim_calls *c, uint32_t thread)
{
	if (thread >= c->thread_count) {
		size_t count = (size_t)thread + 8;
		call_thread *grown = realloc(c->threads, count * sizeof *grown);
		if (!grown)
			return NULL;
		memset(grown + c->thread_count, 0, (count - c->thread_count) * sizeof *grown);
		c->threads = grown;
		c->thread_count = count;
	}
	return &c->threads[thread];
}

static call_edge *edge_of(sim_table *edges, uint64_t site, uint64_t callee)
{
	uint64_t key = site * 0x9e3779b97f4a7c15ull ^ callee * 0xc2b2ae3d27d4eb4full;
	for (;;) {
		if (key == SIM_NO_TAG)
			key = 0;
		bool created;
		call_edge *e = sim_table_insert(edges, key, &created);
		if (!e)
			return NULL;
		if (created) {
			memset(e, 0, sizeof *e);
			e->site = site;
			e->callee = callee;
			return e;
		}
		if (e->site == site && e->callee == callee)
			return e;
		key = key * 0xff51afd7ed558ccdull + 1;   /* another key for the same pair */
	}
}

static uint64_t active_key(uint64_t callee, uint32_t thread)
{
	return (callee & ((1ull << 48) - 1)) | (uint64_t)(thread & 0xffff) << 48;
}

int sim_annotate_call(sim *s, const trace_record *record, plumb_status *status)
{
	if (!s->calls) {
		struct sim_calls *c = calloc(1, sizeof *c);
		if (!c || sim_table_init(&c->edges, sizeof(call_edge), 1024) != 0) {
			free(c);
			return plumb_fail_errno(status, ENOMEM, "call table");
		}
		if (sim_table_init(&c->active, sizeof(uint64_t), 256) != 0) {
			sim_table_free(&c->edges);
			free(c);
			return plumb_fail_errno(status, ENOMEM, "call table");
		}
		s->calls = c;
	}
	struct sim_calls *c = s->calls;
	c->records++;
	call_thread *t = call_thread_of(c, record->thread);
	if (!t)
		return plumb_fail_errno(status, ENOMEM, "call stack");
	if (record->kind == TRACE_CALL) {
		if (t->depth == t->capacity) {
			size_t capacity = t->capacity ? 2 * t->capacity : 64;
			call_frame *grown = realloc(t->frames, capacity * sizeof *grown);
			if (!grown)
				return plumb_fail_errno(status, ENOMEM, "call stack");
			t->frames = grown;
			t->capacity = capacity;
		}
		uint64_t *active = sim_table_insert(&c->active, active_key(record->address, record->thread), NULL);
		if (!active)
			return plumb_fail_errno(status, ENOMEM, "call table");
		call_frame *f = &t->frames[t->depth++];
		f->site = record->instruction_address;
		f->callee = record->address;
		f->recursive = (*active)++ > 0;
		memcpy(f->enter, t->cost, sizeof f->enter);
		return 0;
	}
	for (uint64_t n = record->address; n > 0 && t->depth > 0; n--) {
		call_frame *f = &t->frames[--t->depth];
		call_edge *e = edge_of(&c->edges, f->site, f->callee);
		uint64_t *active = sim_table_find(&c->active, active_key(f->callee, record->thread));
		if (!e)
			return plumb_fail_errno(status, ENOMEM, "call table");
		if (active && *active > 0)
			(*active)--;
		e->calls++;
		if (!f->recursive)
			for (int k = 0; k < SIM_AN_EVENTS; k++)
				e->cost[k] += t->cost[k] - f->enter[k];
	}
	return 0;
}

uint64_t sim_call_records(const sim *s)
{
	return s->calls ? s->calls->records : 0;
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
	uint64_t delta[SIM_AN_EVENTS] = { 0 };
	static const int base[SIM_KIND_COUNT] = { SIM_AN_IR, SIM_AN_DR, SIM_AN_DW };
	int b = base[kind];
	if (reached[0]) {
		delta[b]++;
		if (missed[0])
			delta[b + 1]++;
	}
	if (reached[1] && s->has_l2 && missed[1])
		delta[b + 2]++;
	if (reached[2] && s->has_l3 && missed[2])
		delta[b + 3]++;
	if (coherence_true || coherence_false) {
		delta[SIM_AN_COHERENCE]++;
		delta[coherence_true ? SIM_AN_TRUE_SHARING : SIM_AN_FALSE_SHARING]++;
	}
	delta[SIM_AN_INV_SENT] += invalidations;
	for (int e = 0; e < SIM_AN_EVENTS; e++)
		a->count[e] += delta[e];
	if (s->calls) {
		s->calls->last_thread[core] = s->trace_thread;
		call_thread *t = call_thread_of(s->calls, s->trace_thread);
		if (t)
			for (int e = 0; e < SIM_AN_EVENTS; e++)
				t->cost[e] += delta[e];
	}
}

void sim_annotate_received(sim *s, uint32_t core)
{
	if (s->last_ip[core] == 0)
		return;
	sim_annotation *a = cost_of(s, s->last_ip[core]);
	if (a)
		a->count[SIM_AN_INV_RECEIVED]++;
	if (a && s->calls) {
		call_thread *t = call_thread_of(s->calls, s->calls->last_thread[core]);
		if (t)
			t->cost[SIM_AN_INV_RECEIVED]++;
	}
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

/* One call line of the callgrind file: calls from a caller's line to a callee. */
typedef struct call_line {
	const char *file, *function;
	uint32_t line;
	const char *callee_file, *callee_function;
	uint32_t callee_line;
	uint64_t calls;
	uint64_t count[SIM_AN_EVENTS];
} call_line;

static int compare_calls(const void *a, const void *b)
{
	const call_line *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c == 0)
		c = strcmp(x->function, y->function);
	if (c == 0)
		c = x->line < y->line ? -1 : x->line > y->line;
	if (c == 0)
		c = strcmp(x->callee_file, y->callee_file);
	if (c == 0)
		c = strcmp(x->callee_function, y->callee_function);
	return c;
}

static void name_of(const trace_code_map *map, uint64_t address, char *unnamed, const char **function,
                    const char **file, uint32_t *line)
{
	if (!trace_code_map_lookup(map, address, function, file, line)) {
		snprintf(unnamed, 24, "0x%" PRIx64, address);
		*function = unnamed;
		*file = "???";
		*line = 0;
	}
}

/* The calls followed, with the calls still open at the end closed there,
 * grouped by caller line and callee (sorted); NULL with *count 0 if none. */
static call_line *group_calls(const sim *s, const trace_code_map *map, size_t *count, char **unnamed)
{
	*count = 0;
	*unnamed = NULL;
	const struct sim_calls *c = s->calls;
	if (!c)
		return NULL;
	size_t open = 0;
	for (size_t t = 0; t < c->thread_count; t++)
		open += c->threads[t].depth;
	size_t n = c->edges.count + open;
	call_line *lines = calloc(n + 1, sizeof *lines);
	*unnamed = malloc((2 * n + 1) * 24);
	if (!lines || !*unnamed) {
		free(lines);
		free(*unnamed);
		*unnamed = NULL;
		*count = SIZE_MAX;
		return NULL;
	}
	size_t m = 0;
	for (size_t i = 0; i < c->edges.capacity; i++) {
		if (c->edges.keys[i] == SIM_NO_TAG)
			continue;
		const call_edge *e = sim_table_value_at(&c->edges, i);
		call_line *l = &lines[m];
		name_of(map, e->site, *unnamed + 48 * m, &l->function, &l->file, &l->line);
		name_of(map, e->callee, *unnamed + 48 * m + 24, &l->callee_function, &l->callee_file, &l->callee_line);
		l->calls = e->calls;
		memcpy(l->count, e->cost, sizeof l->count);
		m++;
	}
	for (size_t t = 0; t < c->thread_count; t++) {
		const call_thread *th = &c->threads[t];
		for (size_t d = th->depth; d-- > 0;) {
			const call_frame *f = &th->frames[d];
			call_line *l = &lines[m];
			name_of(map, f->site, *unnamed + 48 * m, &l->function, &l->file, &l->line);
			name_of(map, f->callee, *unnamed + 48 * m + 24, &l->callee_function, &l->callee_file, &l->callee_line);
			l->calls = 1;
			if (!f->recursive)
				for (int k = 0; k < SIM_AN_EVENTS; k++)
					l->count[k] = th->cost[k] - f->enter[k];
			m++;
		}
	}
	qsort(lines, m, sizeof *lines, compare_calls);
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		if (k > 0 && compare_calls(&lines[k - 1], &lines[i]) == 0) {
			lines[k - 1].calls += lines[i].calls;
			for (int e = 0; e < SIM_AN_EVENTS; e++)
				lines[k - 1].count[e] += lines[i].count[e];
			continue;
		}
		lines[k++] = lines[i];
	}
	*count = k;
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
	size_t call_count = 0;
	char *call_names = NULL;
	call_line *calls = callgrind ? group_calls(s, map, &call_count, &call_names) : NULL;
	if (call_count == SIZE_MAX) {
		free(lines);
		free(unnamed);
		return plumb_fail_errno(status, ENOMEM, "annotation");
	}
	/* self costs and calls merged in (file, function, line) order: each
	 * call's lines belong to its caller's fn block */
	const char *file = NULL, *function = NULL;
	size_t i = 0, j = 0;
	while (i < count || j < call_count) {
		const cost_line *l = i < count ? &lines[i] : NULL;
		const call_line *c = j < call_count ? &calls[j] : NULL;
		bool take_call = !l;
		if (l && c) {
			int order = strcmp(c->file, l->file);
			if (order == 0)
				order = strcmp(c->function, l->function);
			if (order == 0)
				order = c->line < l->line ? -1 : c->line > l->line;
			take_call = order < 0;
		}
		const char *at_file = take_call ? c->file : l->file, *at_function = take_call ? c->function : l->function;
		if (!file || strcmp(file, at_file) != 0) {
			fprintf(out, "fl=%s\n", at_file);
			file = at_file;
			function = NULL;
		}
		if (!function || strcmp(function, at_function) != 0) {
			fprintf(out, "fn=%s\n", at_function);
			function = at_function;
		}
		const uint64_t *cost;
		if (take_call) {
			fprintf(out, "cfl=%s\ncfn=%s\ncalls=%" PRIu64 " %u\n%u", c->callee_file, c->callee_function, c->calls,
			        c->callee_line, c->line);
			cost = c->count;
			j++;
		} else {
			fprintf(out, "%u", l->line);
			cost = l->count;
			i++;
		}
		for (size_t e = 0; e < event_count; e++)
			fprintf(out, " %" PRIu64, cost[events[e]]);
		fprintf(out, "\n");
	}
	free(calls);
	free(call_names);
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
