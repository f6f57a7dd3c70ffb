/* sim_curve_compact takes plumbgrind's entries as they come through the
 * ring (a definition per flush of instrumented code, a use per run of it
 * with only the data addresses): every point of every curve, for the whole
 * program and each region, must equal what sim_curve_batch counts for the
 * records the entries stand for, at every level, under each modify rule,
 * with runs of fetches in one line, fetches and data across two lines,
 * size-0 references, a definition with a call in it, several threads,
 * region markers between the runs, footprints larger than the grid, and
 * both ways of moving the sets' rows (AVX-512 where the CPU has it, and the
 * portable one). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "sim/sim_curve.h"
#include "sim/sim_curve_internal.h"
#include "sim_test_util.h"

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#define MAX_DEFINITIONS 48
#define MAX_WORDS 200000
#define MAX_RUNS 8000

typedef struct curve_stream {
	trace_record templates[MAX_DEFINITIONS * 40];
	uint32_t first[MAX_DEFINITIONS];
	uint8_t count[MAX_DEFINITIONS], data[MAX_DEFINITIONS];
	size_t definitions, events;
	uint64_t *words;
	size_t word_count;
	/* runs: [run_start[i], run_start[i + 1]) of one thread, definitions known;
	 * marker[i] > 0: a region marker of that thread before the run */
	size_t run_start[MAX_RUNS + 1], run_definitions[MAX_RUNS];
	uint32_t run_thread[MAX_RUNS];
	int marker[MAX_RUNS];
	size_t runs;
	sim_trace records;   /* what the entries and markers stand for */
} curve_stream;

static const char *const region_names[] = { "a", "b" };

/* A definition: instructions from pc on (sizes 1-15, so some cross a line,
 * several in one line), each followed by up to two data references (any
 * kind, sizes 0-64); now and then a call among them. */
static void define(curve_stream *c, uint64_t *x, uint64_t pc)
{
	size_t id = c->definitions++;
	c->first[id] = (uint32_t)c->events;
	uint8_t n = 0, data = 0;
	size_t instructions = 1 + next(x) % 12;
	bool call = next(x) % 9 == 0;
	for (size_t i = 0; i < instructions && n < 37; i++) {
		uint64_t r = next(x);
		trace_record *t = &c->templates[c->events + n++];
		memset(t, 0, sizeof *t);
		t->kind = TRACE_INSTRUCTION;
		t->size = (uint16_t)(1 + r % 15);
		t->address = t->instruction_address = pc;
		t->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		for (unsigned d = 0; d < (r >> 8) % 3 && n < 37; d++) {
			trace_record *e = &c->templates[c->events + n++];
			memset(e, 0, sizeof *e);
			unsigned pick = (unsigned)(r >> (12 + 4 * d)) % 8;
			e->kind = pick < 4 ? TRACE_READ : pick < 7 ? TRACE_WRITE : TRACE_MODIFY;
			e->size = (r >> (20 + 6 * d)) % 32 == 0 ? 0 : (uint16_t)(1u << ((r >> (30 + 3 * d)) % 7));
			e->instruction_address = pc;
			e->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
			data++;
		}
		if (call && i == instructions / 2) {
			trace_record *e = &c->templates[c->events + n++];
			memset(e, 0, sizeof *e);
			e->kind = TRACE_CALL;
			e->instruction_address = pc;
			data++;   /* its target is a data word, as every record's but a fetch's */
		}
		pc += t->size;
	}
	c->count[id] = n;
	c->data[id] = data;
	c->events += n;
}

/* lines: the data's range (deep reuse when large); threads: 1-3. */
static void make_stream(curve_stream *c, uint64_t seed, uint32_t threads, uint64_t lines, size_t entries)
{
	memset(c, 0, sizeof *c);
	c->words = calloc(MAX_WORDS, sizeof *c->words);
	cr_assert_not_null(c->words);
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 11, address = 0x10000;
	uint32_t thread = 0;
	int depth[3] = { 0 };
	define(c, &x, 0x400000 + next(&x) % 4096);
	for (size_t e = 0; e < entries; e++) {
		uint64_t r = next(&x);
		bool cut = r % 97 == 0, switched = r % 61 == 0;
		if (e == 0 || cut || switched) {
			if (switched)
				thread = (uint32_t)((r >> 8) % threads);
			cr_assert_lt(c->runs, MAX_RUNS);
			c->run_start[c->runs] = c->word_count;
			c->run_thread[c->runs] = thread;
			/* sometimes a region begins or ends before the run */
			if ((r >> 12) % 5 == 0) {
				int begin = depth[thread] == 0 || (depth[thread] < 2 && (r >> 16) % 2);
				depth[thread] += begin ? 1 : -1;
				const char *name = region_names[begin ? depth[thread] - 1 : depth[thread]];
				c->marker[c->runs] = begin ? 1 : 2;
				trace_add(&c->records, thread, TRACE_READ, 0, 0);
				trace_region_marker(&c->records.records[c->records.count - 1], begin, thread, name);
			}
			c->runs++;
		}
		if (c->definitions < MAX_DEFINITIONS && (r >> 16) % 40 == 0)
			define(c, &x, 0x400000 + (r >> 24) % 8192);
		size_t id = (r >> 32) % 8 == 0 ? (size_t)((r >> 36) % c->definitions) : (size_t)((r >> 40) % 4) % c->definitions;
		c->words[c->word_count++] = 1ull << 60 | (uint64_t)c->data[id] << 32 | id;
		const trace_record *t = &c->templates[c->first[id]];
		for (size_t i = 0; i < c->count[id]; i++) {
			trace_record record = t[i];
			record.thread = thread;
			if (record.kind != TRACE_INSTRUCTION) {
				uint64_t q = next(&x);
				/* near the last data reference, sometimes anywhere in the range */
				address = q % 6 == 0 ? 0x10000 + (q >> 8) % (lines * 64) : address + (q >> 20) % 40 - 16;
				record.address = address;
				c->words[c->word_count++] = address;
			}
			trace_add(&c->records, thread, (trace_kind)record.kind, record.address, record.size);
			c->records.records[c->records.count - 1] = record;
		}
		c->run_definitions[c->runs - 1] = c->definitions;
		cr_assert_lt(c->word_count + 64, MAX_WORDS);
	}
	c->run_start[c->runs] = c->word_count;
}

static void release(curve_stream *c)
{
	free(c->words);
	trace_release(&c->records);
}

static sim_curve *new_curve(const sim_config *config, sim_level level, uint64_t max_size, bool narrow)
{
	plumb_status status;
	sim_curve *curve;
	cr_assert_eq(sim_curve_new(&curve, config, level, max_size, &status), 0, "%s", status.message);
	if (narrow)
		sim_curve_narrow_rows(curve);
	return curve;
}

/* Run i handed out unchecked (trace_reader_want_unchecked_runs), in block:
 * its words followed by an entry that is not a good use, by turns another
 * kind of entry, a use of an unknown definition, one whose data count is
 * not its definition's, one with bits 40-59 set, one cut by the block's
 * end, or the block's end itself.  Returns the block's words. */
static size_t unchecked_block(const curve_stream *c, size_t i, uint64_t *block)
{
	size_t n = c->run_start[i + 1] - c->run_start[i], definitions = c->run_definitions[i];
	memcpy(block, c->words + c->run_start[i], n * sizeof *block);
	size_t with = definitions;   /* a definition with data words, if any */
	for (size_t d = 0; d < definitions && with == definitions; d++)
		if (c->data[d])
			with = d;
	size_t words = n;
	switch (i % 6) {
	case 0: block[words++] = 3ull << 60 | c->run_thread[i]; break;
	case 1: block[words++] = 1ull << 60 | (uint64_t)c->data[0] << 32 | definitions; break;
	case 2:   /* with as many address words as its count says */
		block[words++] = 1ull << 60 | (uint64_t)((c->data[0] + 1) & 0xff) << 32;
		for (unsigned k = 0; k < ((c->data[0] + 1) & 0xffu); k++)
			block[words++] = 0x10000;
		break;
	case 3: block[words++] = 1ull << 60 | 1ull << 45 | (uint64_t)c->data[0] << 32; break;
	case 4:
		if (with < definitions)
			block[words++] = 1ull << 60 | (uint64_t)c->data[with] << 32 | with;   /* no data words after */
		break;
	default: break;
	}
	return words;
}

/* The entries run by run, each marker (a record) before its run; unchecked:
 * each run handed out unchecked, which the curve must settle where
 * trace_compact_settle would (its end, its records) and count exactly what
 * the checked run counts. */
static sim_curve *compact_curve(const sim_config *config, sim_level level, uint64_t max_size, const curve_stream *c,
                                uint64_t stream, bool narrow, bool unchecked)
{
	sim_curve *curve = new_curve(config, level, max_size, narrow);
	plumb_status status;
	size_t marker = 0;
	uint64_t *block = unchecked ? malloc((MAX_WORDS + 300) * sizeof *block) : NULL;
	cr_assert(!unchecked || block);
	for (size_t i = 0; i < c->runs; i++) {
		if (c->marker[i]) {
			while (!trace_is_marker(&c->records.records[marker]))
				marker++;
			cr_assert_eq(sim_curve_batch(curve, &c->records.records[marker++], 1, &status), 0, "%s",
			             status.message);
		}
		trace_compact run = {
			.words = c->words + c->run_start[i], .end = c->words + c->run_start[i + 1],
			.thread = c->run_thread[i], .templates = c->templates, .first = c->first, .count = c->count,
			.data = c->data, .definitions = c->run_definitions[i], .stream = stream,
		};
		if (!unchecked) {
			cr_assert_eq(sim_curve_compact(curve, &run, &status), 0, "%s", status.message);
			continue;
		}
		size_t n = c->run_start[i + 1] - c->run_start[i], words = unchecked_block(c, i, block);
		uint64_t records = 0;
		for (size_t w = 0; w < n; w += 1 + c->data[(uint32_t)block[w]])
			records += c->count[(uint32_t)block[w]];
		run.words = block;
		run.end = block + words;
		run.records = 1;
		run.unchecked = true;
		cr_assert_eq(sim_curve_compact(curve, &run, &status), 0, "%s", status.message);
		cr_assert_not(run.unchecked, "run %zu settled", i);
		cr_assert_eq(run.end, block + n, "run %zu ends before the entry after it (%zu words, not %zu)", i,
		             (size_t)(run.end - block), n);
		cr_assert_eq(run.records, records, "run %zu: %llu records", i, (unsigned long long)run.records);
		trace_compact again = run;
		again.end = block + words;
		again.unchecked = true;
		trace_compact_settle(&again);
		cr_assert_eq(again.end, run.end);
		cr_assert_eq(again.records, run.records);
	}
	free(block);
	return curve;
}

static void same_curves(const sim_curve *a, const sim_curve *b, const char *what)
{
	cr_assert_eq(sim_curve_footprint(a), sim_curve_footprint(b), "%s: footprint", what);
	cr_assert_eq(sim_curve_region_count(a), sim_curve_region_count(b), "%s: regions", what);
	size_t regions = sim_curve_region_count(a);
	uint64_t most = sim_curve_max_size(a);
	for (size_t r = 0; r <= regions; r++) {
		size_t region = r == regions ? SIZE_MAX : r;
		if (region != SIZE_MAX) {
			uint32_t ta, tb;
			uint64_t ea, eb;
			cr_assert_str_eq(sim_curve_region_name(a, r, &ta, &ea), sim_curve_region_name(b, r, &tb, &eb));
			cr_assert_eq(ta, tb);
			cr_assert_eq(ea, eb);
		}
		for (uint64_t size = 64; size <= most; size *= 2)
			for (uint32_t ways = 0; ways <= SIM_CURVE_MAX_WAYS; ways = ways ? 2 * ways : 1) {
				uint64_t ma, aa, mb, ab;
				int ra = sim_curve_point(a, region, size, ways, &ma, &aa);
				cr_assert_eq(ra, sim_curve_point(b, region, size, ways, &mb, &ab));
				if (ra != 0)
					continue;
				cr_assert_eq(ma, mb, "%s: region %zu, %llu B %u-way: %llu misses, not %llu", what, r,
				             (unsigned long long)size, ways, (unsigned long long)ma, (unsigned long long)mb);
				cr_assert_eq(aa, ab, "%s: region %zu, %llu B %u-way: references", what, r,
				             (unsigned long long)size, ways);
			}
	}
}

static void compare_levels(uint64_t seed, uint32_t threads, uint64_t lines, uint64_t max_size)
{
	curve_stream *c = malloc(sizeof *c);
	cr_assert_not_null(c);
	make_stream(c, seed, threads, lines, 12000);
	for (int level = SIM_L1I; level <= SIM_L3; level++) {
		sim_config config;
		sim_config_default(&config);
		config.cores = threads > 1 ? 2 : 1;
		config.cache[SIM_L1I].size = 1024;
		config.cache[SIM_L1I].assoc = 2;
		config.cache[SIM_L1D].size = 2048;
		config.cache[SIM_L1D].assoc = 4;
		config.cache[SIM_L2].size = level >= SIM_L2 ? 8192 : 0;
		config.cache[SIM_L3].size = level == SIM_L3 ? 65536 : 0;
		config.l3_inclusion = SIM_NON_INCLUSIVE;
		config.modify = (sim_modify)((seed + (uint64_t)level) % 3);
		char what[64];
		snprintf(what, sizeof what, "%s, seed %llu, modify %d", sim_level_name((sim_level)level),
		         (unsigned long long)seed, (int)config.modify);
		sim_curve *records = new_curve(&config, (sim_level)level, max_size, false);
		plumb_status status;
		cr_assert_eq(sim_curve_batch(records, c->records.records, c->records.count, &status), 0, "%s",
		             status.message);
		sim_curve *entries = compact_curve(&config, (sim_level)level, max_size, c, seed, false, false);
		same_curves(entries, records, what);
		sim_curve *narrow = compact_curve(&config, (sim_level)level, max_size, c, seed, true, false);
		same_curves(narrow, records, what);
		/* as the reader hands the runs out to the curve: unchecked */
		sim_curve *unchecked = compact_curve(&config, (sim_level)level, max_size, c, seed, seed % 2 == 0, true);
		same_curves(unchecked, records, what);
		sim_curve_free(records);
		sim_curve_free(entries);
		sim_curve_free(narrow);
		sim_curve_free(unchecked);
	}
	release(c);
	free(c);
}

Test(sim_curve_compact, one_thread_equals_the_records)
{
	compare_levels(1, 1, 300, 1 << 20);
	compare_levels(2, 1, 3000, 1 << 20);
}

Test(sim_curve_compact, threads_and_regions_equal_the_records)
{
	compare_levels(3, 3, 600, 1 << 20);
}

/* A footprint of thousands of lines in a grid of 64: most references lie
 * beyond the deepest group and every set count's rows are full. */
Test(sim_curve_compact, footprint_larger_than_the_grid)
{
	compare_levels(4, 2, 5000, 4096);
}

/* Another stream under the same definition numbers: made again. */
Test(sim_curve_compact, a_second_stream_is_made_again)
{
	curve_stream *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	cr_assert(a && b);
	make_stream(a, 5, 1, 400, 4000);
	make_stream(b, 6, 1, 400, 4000);
	sim_config config;
	sim_config_default(&config);
	config.cache[SIM_L2].size = 0;
	config.cache[SIM_L3].size = 0;
	sim_curve *entries = compact_curve(&config, SIM_L1D, 1 << 20, a, 1, false, false);
	sim_curve *records = new_curve(&config, SIM_L1D, 1 << 20, false);
	plumb_status status;
	cr_assert_eq(sim_curve_batch(records, a->records.records, a->records.count, &status), 0, "%s", status.message);
	/* b's runs, as another stream, after a's */
	size_t marker = 0;
	for (size_t i = 0; i < b->runs; i++) {
		if (b->marker[i]) {
			while (!trace_is_marker(&b->records.records[marker]))
				marker++;
			cr_assert_eq(sim_curve_batch(entries, &b->records.records[marker++], 1, &status), 0);
		}
		trace_compact run = {
			.words = b->words + b->run_start[i], .end = b->words + b->run_start[i + 1],
			.thread = b->run_thread[i], .templates = b->templates, .first = b->first, .count = b->count,
			.data = b->data, .definitions = b->run_definitions[i], .stream = 2,
		};
		cr_assert_eq(sim_curve_compact(entries, &run, &status), 0, "%s", status.message);
	}
	cr_assert_eq(sim_curve_batch(records, b->records.records, b->records.count, &status), 0, "%s", status.message);
	same_curves(entries, records, "two streams");
	sim_curve_free(entries);
	sim_curve_free(records);
	release(a);
	release(b);
	free(a);
	free(b);
}

Test(sim_curve_compact, filtered_entries_are_refused)
{
	sim_config config;
	sim_config_default(&config);
	config.cache[SIM_L2].size = 0;
	config.cache[SIM_L3].size = 0;
	sim_curve *curve = new_curve(&config, SIM_L1D, 1 << 20, false);
	uint64_t word = 0;
	trace_compact run = { .words = &word, .end = &word + 1, .filtered = true };
	plumb_status status;
	cr_assert_neq(sim_curve_compact(curve, &run, &status), 0);
	cr_assert(strstr(status.message, "filtered") != NULL, "%s", status.message);
	sim_curve_free(curve);
}
