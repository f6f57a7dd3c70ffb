/* Invariants (--check): single writer, inclusion, directory = contents, and
 * the counting identities.  sim_check_line runs after every transaction on
 * the line it touched (O(cores)); sim_check walks the whole state. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "sim/sim_core_state.h"
#include "sim/sim_engine.h"

typedef struct problem {
	char text[PLUMB_MESSAGE_MAX];
	bool found;
} problem;

static void report(problem *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void report(problem *p, const char *format, ...)
{
	if (p->found)
		return;
	p->found = true;
	va_list args;
	va_start(args, format);
	vsnprintf(p->text, sizeof p->text, format, args);
	va_end(args);
}

static void check_granule(const sim *s, uint64_t granule, problem *p)
{
	uint32_t exclusive = 0, owners = 0, holders = 0;
	uint64_t held = 0;
	for (uint32_t c = 0; c < s->config.cores; c++) {
		unsigned state = sim_core_state(s, c, granule);
		if (state == SIM_STATE_I)
			continue;
		holders++;
		held |= 1ull << c;
		if (state == SIM_STATE_M || state == SIM_STATE_E)
			exclusive++;
		if (state == SIM_STATE_M || state == SIM_STATE_O)
			owners++;
	}
	uint64_t address = granule << s->granule_bits;
	if (exclusive > 1 || (exclusive == 1 && holders > 1))
		report(p, "single writer: line %#llx is M/E in one core and held by %u cores",
		       (unsigned long long)address, holders);
	if (owners > 1)
		report(p, "single owner: line %#llx has %u M/O copies", (unsigned long long)address, owners);
	if (s->config.protocol == SIM_ESI && owners > 0)
		report(p, "ESI: line %#llx is M or O", (unsigned long long)address);
	if (s->config.cores > 1) {
		const sim_directory_entry *d = sim_table_find(&s->directory, granule);
		uint64_t sharers = d ? d->sharers : 0;
		if (sharers != held)
			report(p, "directory: line %#llx lists sharers %#llx but cores %#llx hold it",
			       (unsigned long long)address, (unsigned long long)sharers, (unsigned long long)held);
	}
	if (held && s->has_l3 && s->config.l3_inclusion == SIM_INCLUSIVE &&
	    sim_cache_find(&s->l3, address >> s->l3.line_bits) < 0)
		report(p, "inclusion: line %#llx is in a private cache but not in the inclusive L3",
		       (unsigned long long)address);
}

void sim_check_line(sim *s, uint64_t granule)
{
	if (s->failed)
		return;
	problem p = { .found = false };
	check_granule(s, granule, &p);
	if (p.found) {
		s->failed = true;
		snprintf(s->failure, sizeof s->failure, "%s", p.text);
	}
}

/* Stream buffers: the ring bookkeeping, and each buffered line a private
 * copy (inside the L2, or with a state of its own without one). */
static void check_buffers(const sim *s, uint32_t c, problem *p)
{
	const sim_core *k = &s->core[c];
	if (!k->buffers)
		return;
	uint32_t depth = s->config.prefetch.depth, held = 0;
	for (uint32_t b = 0; b < s->config.prefetch.streams; b++) {
		const sim_stream_buffer *sb = &k->buffers[b];
		if (sb->count > depth || sb->head >= depth)
			report(p, "core %u stream buffer %u: head %u, count %u of %u slots", c, b, sb->head, sb->count, depth);
		for (uint32_t i = 0; i < depth && !p->found; i++) {
			uint32_t from_head = (i + depth - sb->head) % depth;
			uint64_t line = sb->line[i];
			if (line == SIM_NO_TAG)
				continue;
			held++;
			if (from_head >= sb->count)
				report(p, "core %u stream buffer %u: slot %u outside the ring holds a line", c, b, i);
			uint64_t address = line << k->cache[SIM_L1D].line_bits;
			uint64_t granule = address >> s->granule_bits;
			if (s->has_l2 && sim_cache_find(&k->cache[SIM_L2], granule) < 0)
				report(p, "core %u stream buffer %u holds %#llx, its L2 does not", c, b, (unsigned long long)address);
			if (!s->has_l2 && sb->state[i] == SIM_STATE_I)
				report(p, "core %u stream buffer %u holds %#llx in state I", c, b, (unsigned long long)address);
			if (sim_cache_find(&k->cache[SIM_L1D], line) >= 0)
				report(p, "core %u holds %#llx in its L1D and a stream buffer", c, (unsigned long long)address);
			check_granule(s, granule, p);
		}
	}
	if (held != k->buffered)
		report(p, "core %u: stream buffers hold %u lines, %u counted", c, held, k->buffered);
}

static void check_private(const sim *s, problem *p)
{
	for (uint32_t c = 0; c < s->config.cores && !p->found; c++) {
		const sim_core *k = &s->core[c];
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			const sim_cache *cache = &k->cache[level];
			if (!cache->present)
				continue;
			size_t ways = (size_t)(cache->sets * cache->assoc);
			for (size_t w = 0; w < ways && !p->found; w++) {
				if (cache->tags[w] == SIM_NO_TAG)
					continue;
				uint64_t address = cache->tags[w] << cache->line_bits;
				uint64_t granule = address >> s->granule_bits;
				unsigned state = cache->meta[w] & META_STATE;
				if (state == SIM_STATE_I)
					report(p, "core %u %s holds line %#llx in state I", c, sim_level_name((sim_level)level),
					       (unsigned long long)address);
				if (s->has_l2 && level != SIM_L2) {
					long l2 = sim_cache_find(&k->cache[SIM_L2], granule);
					if (l2 < 0)
						report(p, "private inclusion: core %u %s holds %#llx, its L2 does not", c,
						       sim_level_name((sim_level)level), (unsigned long long)address);
					else if ((k->cache[SIM_L2].meta[l2] & META_STATE) != state)
						report(p, "core %u %s and L2 disagree on the state of %#llx", c,
						       sim_level_name((sim_level)level), (unsigned long long)address);
				}
				check_granule(s, granule, p);
			}
		}
	}
	for (uint32_t c = 0; c < s->config.cores && !p->found; c++)
		check_buffers(s, c, p);
	if (s->config.cores > 1 && !p->found) {
		for (size_t i = 0; i < s->directory.capacity && !p->found; i++)
			if (s->directory.keys[i] != SIM_NO_TAG)
				check_granule(s, s->directory.keys[i], p);
	}
}

static void check_counts(const sim *s, problem *p)
{
	uint64_t sent = 0, received = 0, fanout = 0, references = 0, l3 = 0;
	for (uint32_t c = 0; c < s->config.cores; c++) {
		const sim_core_stats *cs = &s->stats.core[c];
		sent += cs->coherence.invalidations_sent;
		received += cs->coherence.invalidations_received;
		for (uint32_t k = 1; k < SIM_MAX_CORES; k++)
			fanout += k * cs->coherence.fanout[k];
		for (int kind = 0; kind < SIM_KIND_COUNT; kind++)
			references += cs->references[kind];
		l3 += cs->l3_accesses;
		for (int level = SIM_L1I; level <= SIM_L2; level++) {
			const sim_cache_stats *st = &cs->cache[level];
			uint64_t misses = st->misses[0] + st->misses[1] + st->misses[2];
			for (int kind = 0; kind < SIM_KIND_COUNT; kind++)
				if (st->misses[kind] > st->accesses[kind])
					report(p, "core %u %s: more misses than accesses", c, sim_level_name((sim_level)level));
			uint64_t classes = st->compulsory + st->capacity + st->conflict + st->coherence_true +
			                   st->coherence_false + st->inclusion_victim;
			if (s->config.classify && classes != misses)
				report(p, "core %u %s: miss classes sum to %llu, misses are %llu", c,
				       sim_level_name((sim_level)level), (unsigned long long)classes, (unsigned long long)misses);
		}
	}
	/* Each level is referenced exactly when the one above missed, unless
	 * prefetches, write-through or write-around traffic also reach it. */
	bool plain = s->config.prefetch.kind == SIM_PREFETCH_NONE;
	for (int level = 0; level < SIM_LEVEL_COUNT; level++)
		if (s->config.cache[level].size && (!s->config.cache[level].write_back ||
		                                     !s->config.cache[level].write_allocate))
			plain = false;
	if (plain) {
		uint64_t below = 0;   /* misses of the last private level, all cores */
		for (uint32_t c = 0; c < s->config.cores; c++) {
			const sim_core_stats *cs = &s->stats.core[c];
			uint64_t l1 = cs->cache[SIM_L1I].misses[0] + cs->cache[SIM_L1D].misses[1] + cs->cache[SIM_L1D].misses[2];
			if (s->has_l2) {
				const sim_cache_stats *l2 = &cs->cache[SIM_L2];
				uint64_t refs = l2->accesses[0] + l2->accesses[1] + l2->accesses[2];
				if (refs != l1)
					report(p, "core %u: L2 references (%llu) != L1 misses (%llu)", c, (unsigned long long)refs,
					       (unsigned long long)l1);
				below += l2->misses[0] + l2->misses[1] + l2->misses[2];
			} else {
				below += l1;
			}
		}
		uint64_t l3_refs = s->stats.l3.accesses[0] + s->stats.l3.accesses[1] + s->stats.l3.accesses[2];
		if (s->has_l3 && l3_refs != below)
			report(p, "L3 references (%llu) != misses of the level above (%llu)", (unsigned long long)l3_refs,
			       (unsigned long long)below);
	}
	if (s->config.classify && s->has_l3) {
		const sim_cache_stats *st = &s->stats.l3;
		uint64_t misses = st->misses[0] + st->misses[1] + st->misses[2];
		uint64_t classes = st->compulsory + st->capacity + st->conflict + st->coherence_true +
		                   st->coherence_false + st->inclusion_victim;
		if (classes != misses)
			report(p, "L3: miss classes sum to %llu, misses are %llu", (unsigned long long)classes,
			       (unsigned long long)misses);
	}
	if (sent != received)
		report(p, "invalidations sent (%llu) != received (%llu)", (unsigned long long)sent,
		       (unsigned long long)received);
	if (fanout != sent)
		report(p, "invalidation fan-out histogram sums to %llu, sent %llu", (unsigned long long)fanout,
		       (unsigned long long)sent);
	uint64_t total = s->stats.references[0] + s->stats.references[1] + s->stats.references[2];
	if (references != total)
		report(p, "per-core references sum to %llu, total %llu", (unsigned long long)references,
		       (unsigned long long)total);
	uint64_t l3_total = s->stats.l3.accesses[0] + s->stats.l3.accesses[1] + s->stats.l3.accesses[2];
	if (l3 != l3_total)
		report(p, "per-core L3 accesses sum to %llu, L3 has %llu", (unsigned long long)l3,
		       (unsigned long long)l3_total);
}

int sim_check(const sim *s, plumb_status *status)
{
	problem p = { .found = false };
	sim_shadow_worker_settle(s->shadow_worker);
	if (s->failed)
		report(&p, "%s", s->failure);
	check_private(s, &p);
	check_counts(s, &p);
	if (p.found)
		return plumb_fail(status, EPROTO, "%s", p.text);
	return 0;
}
