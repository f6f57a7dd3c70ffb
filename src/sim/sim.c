/* The simulator object: construction, the choice of its loop variants
 * (sim_loop.h), the entries that call them, threads, and the statistics
 * accessors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"
#include "sim/sim_mru.h"
#include "sim/sim_program.h"

static unsigned log2_exact(uint64_t v)
{
	unsigned bits = 0;
	while ((1ull << bits) < v)
		bits++;
	return bits;
}

int sim_new(sim **out, const sim_config *config, plumb_status *status)
{
	*out = NULL;
	if (sim_config_validate(config, status) != 0)
		return -1;
	sim *s = calloc(1, sizeof *s);
	if (!s)
		return plumb_fail_errno(status, ENOMEM, "simulator");
	s->config = *config;
	s->prefetcher = &sim_prefetch_policy;
	s->stats.cores = config->cores;
	s->has_l2 = config->cache[SIM_L2].size > 0;
	s->has_l3 = config->cache[SIM_L3].size > 0;
	s->granule_bits = log2_exact(s->has_l2 ? config->cache[SIM_L2].line : config->cache[SIM_L1D].line);
	s->word_bits = s->granule_bits > 6 + 2 ? s->granule_bits - 6 : 2;
	uint64_t private_lines = 0;
	for (uint32_t c = 0; c < config->cores; c++) {
		sim_core *k = &s->core[c];
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			const sim_cache_config *cc = &config->cache[level];
			if (cc->size == 0)
				continue;
			if (sim_cache_init(&k->cache[level], cc->size, cc->line, cc->assoc, cc->replacement,
			                   config->seed + 97 * c + (uint64_t)level, config->classify) != 0)
				goto oom;
			if (level == SIM_L2 || (!s->has_l2 && level != SIM_L2))
				private_lines += cc->size / cc->line;
		}
		for (int t = 0; t < SIM_TLB_COUNT; t++) {
			const sim_tlb_config *tc = &config->tlb[t];
			if (tc->entries == 0)
				continue;
			s->has_tlb = true;
			if (sim_cache_init(&k->tlb[t], (uint64_t)tc->entries * tc->page_size, (uint32_t)tc->page_size,
			                   tc->assoc, tc->replacement, config->seed + 13 * c + (uint64_t)t,
			                   config->classify) != 0)
				goto oom;
		}
		if (config->classify && sim_table_init(&k->invalidated, sizeof(sim_invalidation_record), 64) != 0)
			goto oom;
		if (sim_prefetch_init(s, k) != 0)
			goto oom;
	}
	if (s->has_l3) {
		const sim_cache_config *cc = &config->cache[SIM_L3];
		if (sim_cache_init(&s->l3, cc->size, cc->line, cc->assoc, cc->replacement, config->seed + 7777,
		                   config->classify) != 0)
			goto oom;
	}
	/* The caches' shadows' catch-ups on a thread of their own
	 * (sim_shadow_worker.c) when there is a second CPU to run it;
	 * PLUMB_SIM_SHADOW_THREAD=0: never, =1: always (tests).  The answers are
	 * the same either way.  The TLBs' shadows stay here. */
	const char *shadow_thread = secure_getenv("PLUMB_SIM_SHADOW_THREAD");
	bool want_thread = shadow_thread && shadow_thread[0] ? strcmp(shadow_thread, "0") != 0
	                                                     : sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	if (config->classify && want_thread && sim_shadow_worker_new(&s->shadow_worker) == 0) {
		for (uint32_t c = 0; c < config->cores; c++)
			for (int level = SIM_L1I; level <= SIM_L2; level++)
				if (s->core[c].cache[level].classify &&
				    sim_shadow_worker_attach(s->shadow_worker, &s->core[c].cache[level].shadow) != 0)
					goto oom;
		if (s->l3.classify && sim_shadow_worker_attach(s->shadow_worker, &s->l3.shadow) != 0)
			goto oom;
		sim_shadow_worker_keep_tables(s->shadow_worker, s);
	}
	/* The directory holds one entry per line some private hierarchy holds:
	 * sized for all of them at once, so it never grows without classify. */
	s->fast = !config->classify && !s->has_tlb;
	s->lean = !config->classify && !config->check && config->prefetch.kind == SIM_PREFETCH_NONE;
	if (config->cores > 1 &&
	    sim_table_init(&s->directory, sizeof(sim_directory_entry), (size_t)private_lines) != 0)
		goto oom;
	if (config->classify &&
	    (sim_table_init(&s->lines, sizeof(sim_line_stats), 256) != 0 ||
	     sim_table_init(&s->code, sizeof(sim_code_stats), 256) != 0))
		goto oom;
	sim_loop_choose(s);
	*out = s;
	return 0;
oom:
	sim_free(s);
	return plumb_fail_errno(status, ENOMEM, "simulator caches");
}

void sim_free(sim *s)
{
	if (!s)
		return;
	sim_shadow_worker_free(s->shadow_worker);   /* before the shadows it keeps */
	for (uint32_t c = 0; c < SIM_MAX_CORES; c++) {
		sim_core *k = &s->core[c];
		for (int level = 0; level < 3; level++)
			if (k->cache[level].present)
				sim_cache_free(&k->cache[level]);
		for (int t = 0; t < SIM_TLB_COUNT; t++)
			if (k->tlb[t].present)
				sim_cache_free(&k->tlb[t]);
		sim_table_free(&k->invalidated);
		sim_prefetch_free(k);
	}
	if (s->l3.present)
		sim_cache_free(&s->l3);
	sim_table_free(&s->directory);
	sim_table_free(&s->lines);
	sim_table_free(&s->code);
	free(s->threads);
	free(s->thread_core);
	sim_regions_free(s);
	sim_annotate_free(s);
	sim_program_free(s->program);
	free(s);
}

/* Per-instruction costs from now on (sim_annotate.c keeps them): every
 * reference through the engine, so the general loop. */
int sim_annotate(sim *s, plumb_status *status)
{
	if (s->annotate)
		return 0;
	if (sim_table_init(&s->annotation, sizeof(sim_annotation), 4096) != 0)
		return plumb_fail_errno(status, ENOMEM, "annotation table");
	s->annotate = true;
	s->fast = false;   /* every reference through the engine, which charges it */
	sim_loop_choose(s);
	return 0;
}

const sim_config *sim_configuration(const sim *s)
{
	return &s->config;
}

const sim_stats *sim_statistics(const sim *s)
{
	sim_shadow_worker_settle(s->shadow_worker);
	return &s->stats;
}

void sim_reset_statistics(sim *s)
{
	uint32_t cores = s->stats.cores;
	sim_shadow_worker_settle(s->shadow_worker);
	memset(&s->stats, 0, sizeof s->stats);
	s->stats.cores = cores;
	for (size_t i = 0; i < s->thread_capacity; i++) {
		if (!s->threads[i].used)
			continue;
		sim_thread_stats *t = &s->threads[i].stats;
		uint32_t thread = t->thread, core = t->core;
		memset(t, 0, sizeof *t);
		t->thread = thread;
		t->core = core;
	}
	if (s->config.classify) {
		sim_table_clear(&s->lines);
		sim_table_clear(&s->code);
	}
	sim_regions_reset(s);
	if (s->annotate)
		sim_table_clear(&s->annotation);
}


/* LRU L1s with a power-of-two number of sets. */
static bool l1s_ordered(const sim *s)
{
	for (uint32_t c = 0; c < s->config.cores; c++)
		for (int level = SIM_L1I; level <= SIM_L1D; level++) {
			const sim_cache *cache = &s->core[c].cache[level];
			if (cache->replacement != SIM_LRU || !cache->sets_power_of_two)
				return false;
		}
	return true;
}


/* Whether one-line references with classification take the engine's miss
 * path for one core without an L2 (sim_engine.c, reference_single): the
 * L1s LRU with the coherence line's size (the granule is one line of
 * either), the L1D write-back and write-allocate, an L3 absent or
 * non-inclusive (nothing below ever takes a line out of an L1), MESI or
 * MOESI (a read miss gets E, a write miss M, and the hot-lines table is
 * never updated), no check, prefetcher or annotation. */
static bool sim_single_core_path(const sim *s)
{
	const sim_config *c = &s->config;
	const sim_cache *l1i = &s->core[0].cache[SIM_L1I], *l1d = &s->core[0].cache[SIM_L1D];
	return c->classify && c->cores == 1 && !s->has_l2 && !c->check && !s->annotate &&
	       c->prefetch.kind == SIM_PREFETCH_NONE && (c->protocol == SIM_MESI || c->protocol == SIM_MOESI) &&
	       l1i->replacement == SIM_LRU && l1d->replacement == SIM_LRU && l1i->line_bits == s->granule_bits &&
	       l1d->line_bits == s->granule_bits && c->cache[SIM_L1D].write_back && c->cache[SIM_L1D].write_allocate &&
	       (!s->has_l3 || c->l3_inclusion == SIM_NON_INCLUSIVE);
}

/* The loop variants for this simulator, decided once (and again when
 * annotation or the tests' narrow_sets change what applies). */
void sim_loop_choose(sim *s)
{
	s->single = sim_single_core_path(s);
	/* records: --check and annotation check or charge every reference in
	 * the engine */
	if (s->config.check || s->annotate)
		s->batch_loop = sim_loop_general;
	else if (s->config.classify)
		s->batch_loop = sim_loop_hint_classify;
	else if (s->has_tlb)
		s->batch_loop = sim_loop_hint_tlb;
	else if (s->fast && l1s_ordered(s))
		s->batch_loop = s->config.max_access_size ? sim_loop_mru_cut : sim_loop_mru;
	else
		s->batch_loop = sim_loop_hint_plain;
	/* plumbgrind's entries */
	s->compact_program = !(s->config.check || s->annotate || s->has_tlb || !l1s_ordered(s));
	s->compact_checks = s->compact_program;   /* both entry loops check an unchecked run as they walk */
	if (!s->compact_program) {
		s->compact_loop = sim_compact_expanded;
		return;
	}
	s->compact_loop = s->config.classify ? sim_compact_classify_narrow : sim_compact_mru_narrow;
#if SIM_WIDE_SETS
	const sim_cache *l1d = &s->core[0].cache[SIM_L1D];
	bool wide_sets = !s->narrow_sets && l1d->assoc == 8 && __builtin_cpu_supports("avx512f");
	for (uint32_t core = 1; core < s->config.cores; core++)
		wide_sets = wide_sets && s->core[core].cache[SIM_L1D].assoc == 8;
	if (wide_sets && !s->config.classify)
		s->compact_loop = sim_compact_mru_wide;
	/* classification's loop searches the L1Is' sets too */
	for (uint32_t core = 0; core < s->config.cores; core++)
		wide_sets = wide_sets && s->core[core].cache[SIM_L1I].assoc == 8;
	if (wide_sets && s->config.classify)
		s->compact_loop = sim_compact_classify_wide;
#endif
}

int sim_access_batch(sim *s, const trace_record *records, size_t n, plumb_status *status)
{
	return n > 0 ? s->batch_loop(s, records, n, status) : 0;
}

int sim_access_compact(sim *s, trace_compact *c, plumb_status *status)
{
	if (c->filtered)
		return plumb_fail(status, EINVAL, "plumbgrind's filtered entries go to sim_access_filtered");
	/* the entry loops check an unchecked run as they walk; the expanded one does not */
	if (c->unchecked && !s->compact_checks)
		trace_compact_settle(c);
	if (c->words == c->end)
		return 0;
	if (s->compact_program && sim_program_update(s, c, status) != 0)
		return -1;
	return s->compact_loop(s, c, status);
}

int sim_access(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size,
               plumb_status *status)
{
	if (core >= s->config.cores)
		return plumb_fail(status, EINVAL, "core %u does not exist (the simulator has %u)", core, s->config.cores);
	if ((unsigned)kind >= SIM_KIND_COUNT)
		return plumb_fail(status, EINVAL, "bad access kind %d", (int)kind);
	s->current_thread = NULL;
	s->current_ip = 0;
	if (s->config.max_access_size && size > s->config.max_access_size)
		size = s->config.max_access_size;
	s->stats.references[kind]++;
	sim_one_reference(s, core, kind, address, size);
	if (s->failed)
		return plumb_fail(status, EPROTO, "invariant violated: %s", s->failure);
	return 0;
}

uint64_t sim_core_cycles(const sim *s, uint32_t core, uint64_t *coherence_cycles)
{
	const sim_config *c = &s->config;
	const sim_core_stats *cs = &s->stats.core[core];
	uint64_t cycles = 0;
	for (int level = SIM_L1I; level <= SIM_L2; level++) {
		const sim_cache_stats *st = &cs->cache[level];
		cycles += (st->accesses[0] + st->accesses[1] + st->accesses[2]) * c->cache[level].latency;
	}
	cycles += cs->l3_accesses * c->cache[SIM_L3].latency;
	cycles += cs->memory_reads * c->memory_latency;
	for (int t = 0; t < SIM_TLB_COUNT; t++)
		cycles += cs->tlb[t].misses * c->tlb[t].latency;
	uint64_t coherence = cs->coherence.transfers_received * c->transfer_latency +
	                     (cs->coherence.upgrades_shared + cs->coherence.upgrades_owned) * c->upgrade_latency;
	if (coherence_cycles)
		*coherence_cycles = coherence;
	return cycles + coherence;
}

static uint64_t line_heat(const sim_line_stats *l)
{
	return l->coherence_true + l->coherence_false + l->invalidations + l->transfers + l->upgrades;
}

static int compare_lines(const void *a, const void *b)
{
	const sim_line_stats *x = a, *y = b;
	uint64_t hx = line_heat(x), hy = line_heat(y);
	if (hx != hy)
		return hx > hy ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

size_t sim_hot_lines(const sim *s, sim_line_stats *out, size_t max)
{
	if (!s->config.classify || max == 0)
		return 0;
	sim_shadow_worker_settle(s->shadow_worker);   /* the table's updates, all made */
	size_t n = 0;
	sim_line_stats *all = malloc((s->lines.count + 1) * sizeof *all);
	if (!all)
		return 0;
	for (size_t i = 0; i < s->lines.capacity; i++) {
		if (s->lines.keys[i] == SIM_NO_TAG)
			continue;
		const sim_line_stats *l = sim_table_value_at(&s->lines, i);
		if (line_heat(l) > 0)
			all[n++] = *l;
	}
	qsort(all, n, sizeof *all, compare_lines);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}

static uint64_t code_heat(const sim_code_stats *c)
{
	return c->l1_misses + c->coherence_misses + c->invalidations_sent;
}

static int compare_code(const void *a, const void *b)
{
	const sim_code_stats *x = a, *y = b;
	uint64_t hx = code_heat(x), hy = code_heat(y);
	if (hx != hy)
		return hx > hy ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

size_t sim_hot_code(const sim *s, sim_code_stats *out, size_t max)
{
	if (!s->config.classify || max == 0)
		return 0;
	sim_shadow_worker_settle(s->shadow_worker);
	size_t n = 0;
	sim_code_stats *all = malloc((s->code.count + 1) * sizeof *all);
	if (!all)
		return 0;
	for (size_t i = 0; i < s->code.capacity; i++)
		if (s->code.keys[i] != SIM_NO_TAG)
			all[n++] = *(const sim_code_stats *)sim_table_value_at(&s->code, i);
	qsort(all, n, sizeof *all, compare_code);
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}

