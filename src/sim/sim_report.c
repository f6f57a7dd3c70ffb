/* The simulator's report: every statistic as tables of the output layer
 * (table, CSV or JSON).  Nothing here depends on time or the host, so the
 * same trace and configuration give byte-identical output. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_state.h"

static const char *const kind_names[SIM_KIND_COUNT] = { "ifetch", "read", "write" };

static void rate(output_table *t, uint64_t part, uint64_t whole)
{
	if (whole == 0)
		output_cell_status(t, "n/a", "no accesses");
	else
		output_cell_real(t, 100.0 * (double)part / (double)whole);
}

static void hex(output_table *t, uint64_t v)
{
	char text[24];
	snprintf(text, sizeof text, "0x%" PRIx64, v);
	output_cell_text(t, text);
}

static void classified(output_table *t, const sim *s, uint64_t v)
{
	if (s->config.classify)
		output_cell_integer(t, (int64_t)v);
	else
		output_cell_status(t, "not-counted", "classify = no");
}

static void add_meta(const sim *s, output_report *r)
{
	const sim_config *c = &s->config;
	output_meta_text(r, "configuration", c->name);
	output_meta_integer(r, "cores", c->cores);
	output_meta_text(r, "protocol", sim_protocol_name(c->protocol));
	for (int level = 0; level < SIM_LEVEL_COUNT; level++) {
		const sim_cache_config *cc = &c->cache[level];
		char key[32], text[256];
		snprintf(key, sizeof key, "%s", sim_level_name((sim_level)level));
		if (cc->size == 0) {
			snprintf(text, sizeof text, "none");
		} else {
			char assoc[24];
			if (cc->assoc)
				snprintf(assoc, sizeof assoc, "%u-way", cc->assoc);
			else
				snprintf(assoc, sizeof assoc, "fully associative");
			char exact[32];
			snprintf(text, sizeof text, "%s, %s, %u B lines, %s, write-%s, %s, %u cycles%s%s",
			         sim_size_text(cc->size, exact, sizeof exact), assoc, cc->line, sim_replacement_name(cc->replacement),
			         cc->write_back ? "back" : "through", cc->write_allocate ? "write-allocate" : "no-write-allocate",
			         cc->latency, level == SIM_L3 ? ", " : "", level == SIM_L3 ? sim_inclusion_name(c->l3_inclusion) : "");
		}
		output_meta_text(r, key, text);
	}
	for (int t = 0; t < SIM_TLB_COUNT; t++) {
		const sim_tlb_config *tc = &c->tlb[t];
		char text[128];
		if (tc->entries == 0)
			snprintf(text, sizeof text, "none");
		else
			snprintf(text, sizeof text, "%u entries, %s%s, %" PRIu64 " B pages, %u cycles per miss", tc->entries,
			         tc->assoc ? "" : "fully associative", tc->assoc ? "set-associative" : "", tc->page_size,
			         tc->latency);
		output_meta_text(r, sim_tlb_level_name((sim_tlb_level)t), text);
	}
	char text[128];
	const sim_prefetch_config *p = &c->prefetch;
	if (p->kind == SIM_PREFETCH_STREAM)
		snprintf(text, sizeof text, "stream: %u buffers of %u lines, %s lookup%s", p->streams, p->depth,
		         p->lookup == SIM_LOOKUP_ANY ? "any-entry" : "head", p->unshared_only ? ", unshared lines only" : "");
	else if (p->kind == SIM_PREFETCH_STRIDE)
		snprintf(text, sizeof text, "stride: %u streams, %u lines ahead%s", p->streams, p->depth,
		         p->unshared_only ? ", unshared lines only" : "");
	else
		snprintf(text, sizeof text, "%s%s", sim_prefetcher_name(p->kind), p->unshared_only ? ", unshared lines only" : "");
	output_meta_text(r, "prefetch", text);
	static const char *const modify[] = { "read", "write", "read-write" };
	output_meta_text(r, "modify", modify[c->modify]);
	output_meta_integer(r, "memory_latency", c->memory_latency);
}

/* cachegrind's summary, with its labels, so the two can be compared. */
static void add_summary(const sim *s, output_report *r)
{
	const sim_stats *st = &s->stats;
	uint64_t i1[2] = { 0, 0 }, d1_access[2] = { 0, 0 }, d1_miss[2] = { 0, 0 };
	uint64_t ll_access[3] = { 0, 0, 0 }, ll_miss[3] = { 0, 0, 0 };
	for (uint32_t c = 0; c < st->cores; c++) {
		const sim_core_stats *cs = &st->core[c];
		i1[0] += cs->cache[SIM_L1I].accesses[SIM_IFETCH];
		i1[1] += cs->cache[SIM_L1I].misses[SIM_IFETCH];
		for (int k = SIM_READ; k <= SIM_WRITE; k++) {
			d1_access[k - 1] += cs->cache[SIM_L1D].accesses[k];
			d1_miss[k - 1] += cs->cache[SIM_L1D].misses[k];
		}
		if (!s->has_l3 && s->has_l2)
			for (int k = 0; k < 3; k++) {
				ll_access[k] += cs->cache[SIM_L2].accesses[k];
				ll_miss[k] += cs->cache[SIM_L2].misses[k];
			}
	}
	if (s->has_l3)
		for (int k = 0; k < 3; k++) {
			ll_access[k] = st->l3.accesses[k];
			ll_miss[k] = st->l3.misses[k];
		}
	bool have_ll = s->has_l2 || s->has_l3;
	output_table *t = output_table_add(r, "summary", "Summary (cachegrind's labels; LL = the last level)");
	output_column(t, "event", NULL, 0);
	output_column(t, "total", NULL, 0);
	output_column(t, "read", NULL, 0);
	output_column(t, "write", NULL, 0);
	output_column(t, "rate", "%", 2);
#define ROW(label, total, rd, wr, part, whole, with_split) do { \
		output_row(t); output_cell_text(t, label); output_cell_integer(t, (int64_t)(total)); \
		if (with_split) { output_cell_integer(t, (int64_t)(rd)); output_cell_integer(t, (int64_t)(wr)); } \
		else { output_cell_empty(t); output_cell_empty(t); } \
		if ((whole) == UINT64_MAX) output_cell_empty(t); else rate(t, part, whole); } while (0)
	ROW("I refs", i1[0], 0, 0, 0, UINT64_MAX, false);
	ROW("I1 misses", i1[1], 0, 0, i1[1], i1[0], false);
	if (have_ll)
		ROW("LLi misses", ll_miss[0], 0, 0, ll_miss[0], i1[0], false);
	ROW("D refs", d1_access[0] + d1_access[1], d1_access[0], d1_access[1], 0, UINT64_MAX, true);
	ROW("D1 misses", d1_miss[0] + d1_miss[1], d1_miss[0], d1_miss[1], d1_miss[0] + d1_miss[1],
	    d1_access[0] + d1_access[1], true);
	if (have_ll) {
		ROW("LLd misses", ll_miss[1] + ll_miss[2], ll_miss[1], ll_miss[2], ll_miss[1] + ll_miss[2],
		    d1_access[0] + d1_access[1], true);
		ROW("LL refs", ll_access[0] + ll_access[1] + ll_access[2], ll_access[0] + ll_access[1], ll_access[2], 0,
		    UINT64_MAX, true);
		uint64_t all = i1[0] + d1_access[0] + d1_access[1];
		ROW("LL misses", ll_miss[0] + ll_miss[1] + ll_miss[2], ll_miss[0] + ll_miss[1], ll_miss[2],
		    ll_miss[0] + ll_miss[1] + ll_miss[2], all, true);
	}
#undef ROW
}

static void cache_row(const sim *s, output_table *t, const char *core, const char *level, const sim_cache_stats *c)
{
	output_row(t);
	output_cell_text(t, core);
	output_cell_text(t, level);
	uint64_t accesses = 0, misses = 0;
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		output_cell_integer(t, (int64_t)c->accesses[k]);
		accesses += c->accesses[k];
	}
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		output_cell_integer(t, (int64_t)c->misses[k]);
		misses += c->misses[k];
	}
	rate(t, misses, accesses);
	output_cell_integer(t, (int64_t)c->evictions);
	output_cell_integer(t, (int64_t)c->writebacks);
	classified(t, s, c->compulsory);
	classified(t, s, c->capacity);
	classified(t, s, c->conflict);
	classified(t, s, c->coherence_true);
	classified(t, s, c->coherence_false);
	classified(t, s, c->inclusion_victim);
	output_cell_integer(t, (int64_t)c->back_invalidations);
	output_cell_integer(t, (int64_t)c->prefetch_fills);
	output_cell_integer(t, (int64_t)c->prefetch_useful);
}

static void add_caches(const sim *s, output_report *r)
{
	output_table *t = output_table_add(r, "caches", "Caches per core and level (misses classified)");
	static const char *const columns[] = { "core", "level" };
	for (int i = 0; i < 2; i++)
		output_column(t, columns[i], NULL, 0);
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		char name[32];
		snprintf(name, sizeof name, "%s_accesses", kind_names[k]);
		output_column(t, name, NULL, 0);
	}
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		char name[32];
		snprintf(name, sizeof name, "%s_misses", kind_names[k]);
		output_column(t, name, NULL, 0);
	}
	output_column(t, "miss_rate", "%", 3);
	static const char *const rest[] = { "evictions", "writebacks", "compulsory", "capacity", "conflict",
	                                    "true_sharing", "false_sharing", "inclusion_victims",
	                                    "back_invalidations", "prefetch_fills", "prefetch_useful" };
	for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
		output_column(t, rest[i], NULL, 0);
	for (uint32_t c = 0; c < s->config.cores; c++) {
		char core[16];
		snprintf(core, sizeof core, "%u", c);
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			if (level == SIM_L2 && !s->has_l2)
				continue;
			cache_row(s, t, core, sim_level_name((sim_level)level), &s->stats.core[c].cache[level]);
		}
	}
	if (s->has_l3)
		cache_row(s, t, "all", "L3", &s->stats.l3);
}

static void add_tlbs(const sim *s, output_report *r)
{
	if (!s->has_tlb)
		return;
	output_table *t = output_table_add(r, "tlb", "TLBs per core");
	static const char *const columns[] = { "core", "tlb", "accesses", "misses", "miss_rate", "compulsory",
	                                       "capacity", "conflict" };
	for (int i = 0; i < 8; i++)
		output_column(t, columns[i], i == 4 ? "%" : NULL, i == 4 ? 3 : 0);
	for (uint32_t c = 0; c < s->config.cores; c++) {
		for (int level = 0; level < SIM_TLB_COUNT; level++) {
			if (!s->config.tlb[level].entries)
				continue;
			const sim_tlb_stats *ts = &s->stats.core[c].tlb[level];
			output_row(t);
			output_cell_integer(t, c);
			output_cell_text(t, sim_tlb_level_name((sim_tlb_level)level));
			output_cell_integer(t, (int64_t)ts->accesses);
			output_cell_integer(t, (int64_t)ts->misses);
			rate(t, ts->misses, ts->accesses);
			classified(t, s, ts->compulsory);
			classified(t, s, ts->capacity);
			classified(t, s, ts->conflict);
		}
	}
}

static void add_coherence(const sim *s, output_report *r)
{
	output_table *t = output_table_add(r, "coherence", "Coherence events per core");
	static const char *const columns[] = {
		"core", "bus_reads", "bus_read_exclusive", "upgrades_s_to_m", "upgrades_e_to_m", "upgrades_o_to_m",
		"bus_writes", "interventions_received", "invalidations_sent", "invalidations_received",
		"transfers_supplied", "transfers_received", "downgrades", "writebacks", "shared_reads",
		"reads_with_sharers", "memory_reads", "memory_writes" };
	for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
		output_column(t, columns[i], NULL, 0);
	for (uint32_t c = 0; c < s->config.cores; c++) {
		const sim_core_stats *cs = &s->stats.core[c];
		const sim_coherence_stats *k = &cs->coherence;
		uint64_t values[] = { k->bus_reads, k->bus_read_exclusive, k->upgrades_shared, k->upgrades_clean,
		                      k->upgrades_owned, k->bus_writes, k->interventions_received, k->invalidations_sent,
		                      k->invalidations_received, k->transfers_supplied, k->transfers_received,
		                      k->downgrades, k->writebacks, k->shared_reads, k->reads_with_sharers,
		                      cs->memory_reads, cs->memory_writes };
		output_row(t);
		output_cell_integer(t, c);
		for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
			output_cell_integer(t, (int64_t)values[i]);
	}

	output_table *f = output_table_add(r, "fanout",
	                                   "Invalidations per request (Franz's 2008 buckets 1; 2; 3-4; >4, and exact)");
	static const char *const fcolumns[] = { "core", "one", "two", "three_four", "more_than_four", "exact" };
	for (int i = 0; i < 6; i++)
		output_column(f, fcolumns[i], NULL, 0);
	for (uint32_t c = 0; c < s->config.cores; c++) {
		const uint64_t *h = s->stats.core[c].coherence.fanout;
		uint64_t more = 0;
		char exact[512] = "";
		for (int k = 1; k < SIM_MAX_CORES; k++) {
			if (k > 4)
				more += h[k];
			if (h[k]) {
				char part[48];
				snprintf(part, sizeof part, "%s%d:%" PRIu64, *exact ? " " : "", k, h[k]);
				strncat(exact, part, sizeof exact - strlen(exact) - 1);
			}
		}
		output_row(f);
		output_cell_integer(f, c);
		output_cell_integer(f, (int64_t)h[1]);
		output_cell_integer(f, (int64_t)h[2]);
		output_cell_integer(f, (int64_t)(h[3] + h[4]));
		output_cell_integer(f, (int64_t)more);
		output_cell_text(f, *exact ? exact : "-");
	}

	output_table *m = output_table_add(r, "transitions",
	                                   "State transitions (cause local = this core's reference, remote = another core or the inclusive L3)");
	static const char *const mcolumns[] = { "core", "cause", "from", "to", "count" };
	for (int i = 0; i < 5; i++)
		output_column(m, mcolumns[i], NULL, 0);
	for (uint32_t c = 0; c < s->config.cores; c++)
		for (int cause = 0; cause < 2; cause++)
			for (int from = 0; from < SIM_STATE_COUNT; from++)
				for (int to = 0; to < SIM_STATE_COUNT; to++) {
					uint64_t n = s->stats.core[c].coherence.transitions[cause][from][to];
					if (!n)
						continue;
					output_row(m);
					output_cell_integer(m, c);
					output_cell_text(m, cause ? "remote" : "local");
					output_cell_text(m, sim_state_name((sim_state)from));
					output_cell_text(m, sim_state_name((sim_state)to));
					output_cell_integer(m, (int64_t)n);
				}
}

static void add_prefetch(const sim *s, output_report *r)
{
	if (s->config.prefetch.kind == SIM_PREFETCH_NONE)
		return;
	output_table *t = output_table_add(r, "prefetch", "Prefetcher per core");
	static const char *const columns[] = { "core", "issued", "skipped_shared", "useful", "stream_hits",
	                                       "allocations", "dropped_unused", "dropped_invalidated" };
	for (int i = 0; i < 8; i++)
		output_column(t, columns[i], NULL, 0);
	for (uint32_t c = 0; c < s->config.cores; c++) {
		const sim_prefetch_stats *p = &s->stats.core[c].prefetch;
		output_row(t);
		output_cell_integer(t, c);
		output_cell_integer(t, (int64_t)p->issued);
		output_cell_integer(t, (int64_t)p->skipped_shared);
		output_cell_integer(t, (int64_t)p->useful);
		output_cell_integer(t, (int64_t)p->stream_hits);
		output_cell_integer(t, (int64_t)p->allocations);
		output_cell_integer(t, (int64_t)p->dropped_unused);
		output_cell_integer(t, (int64_t)p->dropped_invalidated);
	}
}

static void add_threads(const sim *s, output_report *r)
{
	output_table *t = output_table_add(r, "threads", "Per thread");
	static const char *const columns[] = { "thread", "core", "ifetch", "reads", "writes", "l1_misses",
	                                       "last_level_misses", "coherence_misses", "invalidations_sent" };
	for (int i = 0; i < 9; i++)
		output_column(t, columns[i], NULL, 0);
	for (size_t i = 0; i < sim_thread_count(s); i++) {
		const sim_thread_stats *th = sim_thread(s, i);
		output_row(t);
		output_cell_integer(t, th->thread);
		output_cell_integer(t, th->core);
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			output_cell_integer(t, (int64_t)th->references[k]);
		output_cell_integer(t, (int64_t)th->l1_misses);
		output_cell_integer(t, (int64_t)th->last_level_misses);
		classified(t, s, th->coherence_misses);
		output_cell_integer(t, (int64_t)th->invalidations_sent);
	}
}

/* Per region (markers in the trace): the same figures as the caches and
 * coherence tables, for what the region's core counted while it was open. */
static void add_regions(const sim *s, output_report *r)
{
	size_t n = sim_region_count(s);
	if (n == 0 && sim_region_mismatches(s) == 0 && sim_region_open_count(s) == 0)
		return;
	output_table *t = output_table_add(r, "regions", "Per region (thread, name): what its core counted while it was open");
	static const char *const head[] = { "thread", "region", "core", "entries", "ifetch", "reads", "writes" };
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		output_column(t, head[i], NULL, 0);
	static const char *const level_keys[SIM_LEVEL_COUNT] = { "l1i", "l1d", "l2", "l3" };
	bool present[SIM_LEVEL_COUNT] = { true, true, s->has_l2, s->has_l3 };
	for (int level = 0; level < SIM_LEVEL_COUNT; level++) {
		if (!present[level])
			continue;
		char name[32];
		snprintf(name, sizeof name, "%s_accesses", level_keys[level]);
		output_column(t, name, NULL, 0);
		snprintf(name, sizeof name, "%s_misses", level_keys[level]);
		output_column(t, name, NULL, 0);
	}
	static const char *const tail[] = { "coherence_misses", "true_sharing", "false_sharing", "invalidations_sent",
	                                    "invalidations_received", "bus_reads", "bus_read_exclusive", "upgrades",
	                                    "transfers_received", "memory_reads" };
	for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
		output_column(t, tail[i], NULL, 0);
	for (size_t i = 0; i < n; i++) {
		const sim_region_stats *g = sim_region(s, i);
		const sim_core_stats *cs = &g->stats;
		output_row(t);
		output_cell_integer(t, g->thread);
		output_cell_text(t, g->name);
		output_cell_integer(t, g->core);
		output_cell_integer(t, (int64_t)g->entries);
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			output_cell_integer(t, (int64_t)cs->references[k]);
		for (int level = 0; level < SIM_LEVEL_COUNT; level++) {
			if (!present[level])
				continue;
			output_cell_integer(t, (int64_t)sim_region_accesses(g, (sim_level)level));
			output_cell_integer(t, (int64_t)sim_region_misses(g, (sim_level)level));
		}
		uint64_t true_sharing = 0, false_sharing = 0;
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			true_sharing += cs->cache[level].coherence_true;
			false_sharing += cs->cache[level].coherence_false;
		}
		classified(t, s, g->coherence_misses);
		classified(t, s, true_sharing);
		classified(t, s, false_sharing);
		const sim_coherence_stats *k = &cs->coherence;
		output_cell_integer(t, (int64_t)k->invalidations_sent);
		output_cell_integer(t, (int64_t)k->invalidations_received);
		output_cell_integer(t, (int64_t)k->bus_reads);
		output_cell_integer(t, (int64_t)k->bus_read_exclusive);
		output_cell_integer(t, (int64_t)(k->upgrades_shared + k->upgrades_owned));
		output_cell_integer(t, (int64_t)k->transfers_received);
		output_cell_integer(t, (int64_t)cs->memory_reads);
	}
	if (sim_region_mismatches(s))
		output_note(r, "%llu region ends did not name the innermost open region of their thread and were ignored",
		            (unsigned long long)sim_region_mismatches(s));
	if (sim_region_open_count(s))
		output_note(r, "%zu regions were still open at the end of the trace and are not counted",
		            sim_region_open_count(s));
	if (n > 0 && sim_region_folded(s))
		output_note(r, "more threads than cores: a region also counts the references of the other threads "
		               "folded onto its core");
}

/* Function, file and line of a code address, from plumbgrind's debug
 * information (cachegrind's "???" and 0 where it has none). */
static void source_cells(const sim *s, output_table *t, uint64_t address)
{
	const char *function = "???", *file = "???";
	uint32_t line = 0;
	if (!s->code_map) {
		for (int i = 0; i < 3; i++)
			output_cell_status(t, "unknown", "no debug information: only plumb sim -- PROGRAM under plumbgrind "
			                   "names code");
		return;
	}
	trace_code_map_lookup(s->code_map, address, &function, &file, &line);
	output_cell_text(t, function);
	output_cell_text(t, file);
	output_cell_integer(t, line);
}

static int add_hot(const sim *s, output_report *r, size_t top)
{
	if (!s->config.classify || top == 0)
		return 0;
	sim_line_stats *lines = calloc(top, sizeof *lines);
	sim_code_stats *code = calloc(top, sizeof *code);
	if (!lines || !code) {
		free(lines);
		free(code);
		return -1;
	}
	size_t n = sim_hot_lines(s, lines, top);
	output_table *t = output_table_add(r, "hot_lines", "Hottest lines (coherence misses, invalidations, transfers, upgrades)");
	static const char *const columns[] = { "address", "cores", "reads", "writes", "true_sharing", "false_sharing",
	                                       "invalidations", "transfers", "upgrades", "verdict" };
	for (int i = 0; i < 10; i++)
		output_column(t, columns[i], NULL, 0);
	for (size_t i = 0; i < n; i++) {
		const sim_line_stats *l = &lines[i];
		char cores[256] = "";
		for (int c = 0; c < SIM_MAX_CORES; c++) {
			if (!(l->cores >> c & 1))
				continue;
			char part[8];
			snprintf(part, sizeof part, "%s%d", *cores ? "," : "", c);
			strncat(cores, part, sizeof cores - strlen(cores) - 1);
		}
		output_row(t);
		hex(t, l->address);
		output_cell_text(t, *cores ? cores : "-");
		output_cell_integer(t, (int64_t)l->reads);
		output_cell_integer(t, (int64_t)l->writes);
		output_cell_integer(t, (int64_t)l->coherence_true);
		output_cell_integer(t, (int64_t)l->coherence_false);
		output_cell_integer(t, (int64_t)l->invalidations);
		output_cell_integer(t, (int64_t)l->transfers);
		output_cell_integer(t, (int64_t)l->upgrades);
		const char *verdict = l->coherence_true && l->coherence_false ? "mixed" :
		                      l->coherence_true ? "true sharing" :
		                      l->coherence_false ? "false sharing" : "no coherence misses";
		output_cell_text(t, verdict);
	}
	size_t m = sim_hot_code(s, code, top);
	if (m > 0) {
		output_table *k = output_table_add(r, "code", "Code addresses with the most misses");
		static const char *const kcolumns[] = { "address", "function", "file", "line", "l1_misses",
		                                        "last_level_misses", "coherence_misses", "invalidations_sent" };
		for (int i = 0; i < 8; i++)
			output_column(k, kcolumns[i], NULL, 0);
		for (size_t i = 0; i < m; i++) {
			output_row(k);
			hex(k, code[i].address);
			source_cells(s, k, code[i].address);
			output_cell_integer(k, (int64_t)code[i].l1_misses);
			output_cell_integer(k, (int64_t)code[i].last_level_misses);
			output_cell_integer(k, (int64_t)code[i].coherence_misses);
			output_cell_integer(k, (int64_t)code[i].invalidations_sent);
		}
	}
	free(lines);
	free(code);
	return 0;
}

static void add_cycles(const sim *s, output_report *r)
{
	output_table *t = output_table_add(r, "cycles", "Estimated cycles from the configured latencies");
	output_column(t, "core", NULL, 0);
	output_column(t, "cycles", NULL, 0);
	output_column(t, "coherence_cycles", NULL, 0);
	output_column(t, "coherence_share", "%", 2);
	for (uint32_t c = 0; c < s->config.cores; c++) {
		uint64_t coherence;
		uint64_t cycles = sim_core_cycles(s, c, &coherence);
		output_row(t);
		output_cell_integer(t, c);
		output_cell_integer(t, (int64_t)cycles);
		output_cell_integer(t, (int64_t)coherence);
		rate(t, coherence, cycles);
	}
}

int sim_report(const sim *s, output_report *report, size_t top, plumb_status *status)
{
	sim_shadow_worker_settle(s->shadow_worker);   /* the shadows' answers, all counted */
	add_meta(s, report);
	add_summary(s, report);
	add_caches(s, report);
	add_tlbs(s, report);
	add_coherence(s, report);
	add_prefetch(s, report);
	add_threads(s, report);
	add_regions(s, report);
	if (add_hot(s, report, top) != 0)
		return plumb_fail_errno(status, ENOMEM, "report");
	add_cycles(s, report);
	return 0;
}
