/* Summary statistics of a reference stream.  Distinct lines and pages are
 * counted exactly in a hash set while it stays under its limit; a
 * HyperLogLog sketch (2^14 registers, about 0.8% standard error) runs
 * alongside from the first record so the count survives the set being
 * dropped, and is then reported as an estimate. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace_stats.h"

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int distinct_init(trace_distinct *set, size_t limit, plumb_status *status)
{
	memset(set, 0, sizeof *set);
	set->limit = limit;
	set->exact = true;
	set->capacity = 1024;
	set->slots = calloc(set->capacity, sizeof *set->slots);
	if (!set->slots)
		return plumb_fail(status, ENOMEM, "out of memory for trace statistics");
	return 0;
}

static int distinct_grow(trace_distinct *set)
{
	size_t capacity = set->capacity * 2;
	uint64_t *slots = calloc(capacity, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < set->capacity; i++) {
		uint64_t key = set->slots[i];
		if (!key)
			continue;
		size_t j = mix(key) & (capacity - 1);
		while (slots[j])
			j = (j + 1) & (capacity - 1);
		slots[j] = key;
	}
	free(set->slots);
	set->slots = slots;
	set->capacity = capacity;
	return 0;
}

static inline void distinct_add(trace_distinct *set, uint64_t key)
{
	if (set->have_last && set->last_key == key)
		return;
	set->last_key = key;
	set->have_last = true;
	uint64_t h = mix(key);
	unsigned index = (unsigned)(h >> (64 - TRACE_STATS_HLL_BITS));
	uint64_t rest = h << TRACE_STATS_HLL_BITS;
	uint8_t rank = (uint8_t)(rest ? __builtin_clzll(rest) + 1 : 64 - TRACE_STATS_HLL_BITS + 1);
	if (rank > set->sketch[index])
		set->sketch[index] = rank;
	if (!set->exact)
		return;
	uint64_t stored = key + 1;   /* 0 marks an empty slot; key ~0 cannot occur (line numbers are shifted) */
	size_t j = h & (set->capacity - 1);
	while (set->slots[j]) {
		if (set->slots[j] == stored)
			return;
		j = (j + 1) & (set->capacity - 1);
	}
	set->slots[j] = stored;
	set->count++;
	if (set->count > set->limit) {
		set->exact = false;
		free(set->slots);
		set->slots = NULL;
	} else if (set->count * 2 > set->capacity && distinct_grow(set) < 0) {
		set->exact = false;   /* out of memory: fall back to the sketch */
		free(set->slots);
		set->slots = NULL;
	}
}

uint64_t trace_distinct_count(const trace_distinct *set, bool *exact)
{
	*exact = set->exact;
	if (set->exact)
		return set->count;
	const double m = (double)(1u << TRACE_STATS_HLL_BITS);
	double sum = 0;
	unsigned zeros = 0;
	for (unsigned i = 0; i < (1u << TRACE_STATS_HLL_BITS); i++) {
		sum += ldexp(1.0, -set->sketch[i]);
		zeros += set->sketch[i] == 0;
	}
	double estimate = 0.7213 / (1 + 1.079 / m) * m * m / sum;
	if (estimate <= 2.5 * m && zeros)
		estimate = m * log(m / zeros);   /* small-range correction */
	return (uint64_t)(estimate + 0.5);
}

int trace_stats_init(trace_stats *stats, uint64_t line_size, uint64_t page_size, size_t distinct_limit,
                     plumb_status *status)
{
	memset(stats, 0, sizeof *stats);
	if (!line_size || (line_size & (line_size - 1)) || !page_size || (page_size & (page_size - 1)))
		return plumb_fail(status, EINVAL, "line and page sizes must be powers of two");
	stats->line_shift = (unsigned)__builtin_ctzll(line_size);
	stats->page_shift = (unsigned)__builtin_ctzll(page_size);
	if (distinct_init(&stats->lines, distinct_limit, status) < 0 ||
	    distinct_init(&stats->pages, distinct_limit, status) < 0) {
		trace_stats_free(stats);
		return -1;
	}
	return 0;
}

static trace_thread_counts *thread_slot(trace_stats *stats, uint32_t thread)
{
	if (stats->last_thread < stats->thread_count && stats->threads[stats->last_thread].thread == thread)
		return &stats->threads[stats->last_thread];
	size_t low = 0, high = stats->thread_count;
	while (low < high) {
		size_t middle = (low + high) / 2;
		if (stats->threads[middle].thread < thread)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == stats->thread_count || stats->threads[low].thread != thread) {
		if (stats->thread_count == stats->thread_capacity) {
			size_t capacity = stats->thread_capacity ? 2 * stats->thread_capacity : 16;
			trace_thread_counts *grown = realloc(stats->threads, capacity * sizeof *grown);
			if (!grown)
				return NULL;
			stats->threads = grown;
			stats->thread_capacity = capacity;
		}
		memmove(&stats->threads[low + 1], &stats->threads[low], (stats->thread_count - low) * sizeof *stats->threads);
		memset(&stats->threads[low], 0, sizeof *stats->threads);
		stats->threads[low].thread = thread;
		stats->thread_count++;
	}
	stats->last_thread = low;
	return &stats->threads[low];
}

int trace_stats_add(trace_stats *stats, const trace_record *records, size_t count, plumb_status *status)
{
	size_t markers = 0, collector = 0;
	for (size_t i = 0; i < count; i++) {
		const trace_record *r = &records[i];
		if (trace_is_marker(r)) {
			markers++;   /* not references: counted apart */
			continue;
		}
		if (trace_is_collector_marker(r)) {
			if (r->kind == TRACE_HALT) {
				stats->halts++;
				stats->halted_ns += trace_collector_end(r) - trace_collector_start(r);
				stats->drained += trace_collector_count(r);
				stats->after_last_halt = 0;
			} else {
				stats->lost_markers++;
				stats->lost += trace_collector_count(r);
			}
			collector++;
			continue;
		}
		stats->after_last_halt++;
		unsigned kind = r->kind & 3;
		trace_thread_counts *t = thread_slot(stats, r->thread);
		if (!t)
			return plumb_fail(status, ENOMEM, "out of memory for trace statistics");
		t->by_kind[kind]++;
		stats->by_kind[kind]++;
		stats->bytes_by_kind[kind] += r->size;
		unsigned bucket = TRACE_STATS_SIZE_BUCKETS - 1;
		if (r->size <= 64 && (r->size & (r->size - 1)) == 0 && r->size)
			bucket = (unsigned)__builtin_ctz(r->size);
		stats->sizes[bucket]++;
		uint64_t last = r->address + (r->size ? r->size - 1u : 0);
		if (last < r->address)
			last = UINT64_MAX;   /* wraps the address space: count to its end */
		int side = kind == TRACE_INSTRUCTION ? 0 : 1;
		if (!stats->seen[side] || r->address < stats->min_address[side])
			stats->min_address[side] = r->address;
		if (!stats->seen[side] || last > stats->max_address[side])
			stats->max_address[side] = last;
		stats->seen[side] = true;
		uint64_t first_line = r->address >> stats->line_shift, last_line = last >> stats->line_shift;
		if (first_line != last_line)
			stats->line_straddles++;
		for (uint64_t line = first_line;; line++) {
			distinct_add(&stats->lines, line);
			if (line == last_line)
				break;
		}
		uint64_t first_page = r->address >> stats->page_shift, last_page = last >> stats->page_shift;
		for (uint64_t page = first_page;; page++) {
			distinct_add(&stats->pages, page);
			if (page == last_page)
				break;
		}
		if (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS)
			stats->with_instruction_address++;
		if (r->flags & TRACE_HAS_TIME) {
			if (!stats->with_time)
				stats->first_time = r->time;
			stats->last_time = r->time;
			stats->with_time++;
		}
	}
	stats->records += count - markers - collector;
	stats->region_markers += markers;
	return 0;
}

void trace_stats_free(trace_stats *stats)
{
	free(stats->lines.slots);
	free(stats->pages.slots);
	free(stats->threads);
	stats->lines.slots = stats->pages.slots = NULL;
	stats->threads = NULL;
}
