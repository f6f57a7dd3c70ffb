/* sim_access_compact takes plumbgrind's entries as they come through the
 * ring (a definition per flush of instrumented code, a use per run of it
 * with only the data addresses): it must count exactly what sim_access_batch
 * counts for the records they stand for, whole statistics compared byte for
 * byte, for machines that take its own loops (LRU L1s with power-of-two
 * sets, with and without classification; 8-way L1s with AVX-512 and
 * without) and those it expands for, with runs of fetches in one
 * line, fetches across two lines, modifies under each rule, size-0 and
 * cut references, thread switches, definitions that appear as the stream
 * goes, and a second stream with other definitions under the same numbers. */
#include "sim_test_util.h"
#include "sim/sim_loop.h"
#include "../../vg/pg_filter.h"

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#define MAX_DEFINITIONS 64
#define MAX_WORDS 400000

typedef struct compact_stream {
	trace_record templates[MAX_DEFINITIONS * 40];
	uint32_t first[MAX_DEFINITIONS];
	uint8_t count[MAX_DEFINITIONS], data[MAX_DEFINITIONS];
	size_t definitions, events;
	uint64_t *words;
	size_t word_count;
	/* runs: [run_start[i], run_start[i + 1]) of one thread, definitions known */
	size_t run_start[40000], run_definitions[40000];
	uint32_t run_thread[40000];
	size_t runs;
	sim_trace records;   /* what the entries stand for */
} compact_stream;

/* A definition: instructions from pc on (sizes 1-15, so some cross a line),
 * each followed by up to two data references (any kind, sizes 0-64). */
static void define(compact_stream *c, uint64_t *x, uint64_t pc)
{
	size_t id = c->definitions++;
	c->first[id] = (uint32_t)c->events;
	uint8_t n = 0, data = 0;
	size_t instructions = 1 + next(x) % 12;
	for (size_t i = 0; i < instructions && n < 38; i++) {
		uint64_t r = next(x);
		trace_record *t = &c->templates[c->events + n++];
		memset(t, 0, sizeof *t);
		t->kind = TRACE_INSTRUCTION;
		t->size = (uint16_t)(1 + r % 15);
		t->address = t->instruction_address = pc;
		t->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		for (unsigned d = 0; d < (r >> 8) % 3 && n < 38; d++) {
			trace_record *e = &c->templates[c->events + n++];
			memset(e, 0, sizeof *e);
			unsigned pick = (unsigned)(r >> (12 + 4 * d)) % 8;
			e->kind = pick < 4 ? TRACE_READ : pick < 7 ? TRACE_WRITE : TRACE_MODIFY;
			e->size = (r >> (20 + 6 * d)) % 32 == 0 ? 0 : (uint16_t)(1u << ((r >> (30 + 3 * d)) % 7));
			e->instruction_address = pc;
			e->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
			data++;
		}
		pc += t->size;
	}
	c->count[id] = n;
	c->data[id] = data;
	c->events += n;
}

static void make_stream(compact_stream *c, uint64_t seed, uint32_t cores, size_t entries)
{
	memset(c, 0, sizeof *c);
	c->words = calloc(MAX_WORDS, sizeof *c->words);
	cr_assert_not_null(c->words);
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 11, address = 0x10000;
	uint32_t thread = 0;
	define(c, &x, 0x400000 + next(&x) % 4096);
	for (size_t e = 0; e < entries; e++) {
		uint64_t r = next(&x);
		bool cut = r % 97 == 0, switched = r % 211 == 0;
		if (e == 0 || cut || switched) {
			if (switched)
				thread = (uint32_t)((r >> 8) % (cores + 1));
			c->run_start[c->runs] = c->word_count;
			c->run_thread[c->runs] = thread;
			c->runs++;
		}
		/* sometimes a new definition, mostly the hot ones again */
		if (c->definitions < MAX_DEFINITIONS && (r >> 16) % 50 == 0)
			define(c, &x, 0x400000 + (r >> 24) % 8192);
		size_t id = (r >> 32) % 8 == 0 ? (size_t)((r >> 36) % c->definitions) : (size_t)((r >> 40) % 4) % c->definitions;
		c->words[c->word_count++] = 1ull << 60 | (uint64_t)c->data[id] << 32 | id;
		const trace_record *t = &c->templates[c->first[id]];
		for (size_t i = 0; i < c->count[id]; i++) {
			trace_record record = t[i];
			record.thread = thread;
			if (record.kind != TRACE_INSTRUCTION) {
				uint64_t q = next(&x);
				/* near the last data reference, sometimes anywhere in 24 KiB */
				address = q % 8 == 0 ? 0x10000 + (q >> 8) % 24576 : address + (q >> 20) % 40 - 16;
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

/* Each run as trace_compact_settle would end it when handed out unchecked
 * (trace_reader_want_unchecked_runs): followed by an entry that is not a
 * good use, by turns another kind of entry, a use of an unknown
 * definition, one whose data count is not its definition's, one with bits
 * 40-59 set, one cut by the block's end, or the block's end itself.  The
 * simulator must stop before it, settle the run (its end, its records) and
 * count exactly what the checked run counts. */
static void feed_unchecked(sim *s, const compact_stream *c, uint64_t stream)
{
	static uint64_t block[MAX_WORDS + 300];
	plumb_status status;
	for (size_t i = 0; i < c->runs; i++) {
		size_t n = c->run_start[i + 1] - c->run_start[i], definitions = c->run_definitions[i];
		memcpy(block, c->words + c->run_start[i], n * sizeof *block);
		uint64_t records = 0;
		for (size_t w = 0; w < n; w += 1 + c->data[(uint32_t)block[w]])
			records += c->count[(uint32_t)block[w]];
		size_t with = c->data[0] ? 0 : definitions;   /* a definition with data words, if any */
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
		trace_compact run = {
			.words = block, .end = block + words, .thread = c->run_thread[i], .records = 1,
			.templates = c->templates, .first = c->first, .count = c->count, .data = c->data,
			.definitions = definitions, .stream = stream, .unchecked = true,
		};
		cr_assert_eq(sim_access_compact(s, &run, &status), 0, "%s", status.message);
		cr_assert_not(run.unchecked, "run %zu settled", i);
		cr_assert_eq(run.end, block + n, "run %zu ends before the entry after it (%zu words, not %zu)", i,
		             (size_t)(run.end - block), n);
		cr_assert_eq(run.records, records, "run %zu: %llu records", i, (unsigned long long)run.records);
		/* trace_compact_settle ends it in the same place */
		trace_compact again = run;
		again.end = block + words;
		again.unchecked = true;
		trace_compact_settle(&again);
		cr_assert_eq(again.end, run.end);
		cr_assert_eq(again.records, run.records);
	}
}

static void feed_compact(sim *s, const compact_stream *c, uint64_t stream, bool unchecked)
{
	if (unchecked) {
		feed_unchecked(s, c, stream);
		return;
	}
	plumb_status status;
	for (size_t i = 0; i < c->runs; i++) {
		trace_compact run = {
			.words = c->words + c->run_start[i], .end = c->words + c->run_start[i + 1], .thread = c->run_thread[i],
			.templates = c->templates, .first = c->first, .count = c->count, .data = c->data,
			.definitions = c->run_definitions[i], .stream = stream,
		};
		cr_assert_eq(sim_access_compact(s, &run, &status), 0, "%s", status.message);
	}
}

static void same_statistics(const sim *a, const sim *b)
{
	cr_assert(memcmp(sim_statistics(a), sim_statistics(b), sizeof(sim_stats)) == 0, "statistics differ");
	cr_assert_eq(sim_thread_count(a), sim_thread_count(b));
	for (size_t i = 0; i < sim_thread_count(a); i++)
		cr_assert(memcmp(sim_thread(a, i), sim_thread(b, i), sizeof(sim_thread_stats)) == 0, "thread %zu", i);
	/* the code table: each miss charged to its instruction */
	static sim_code_stats code_a[4096], code_b[4096];
	size_t na = sim_hot_code(a, code_a, 4096), nb = sim_hot_code(b, code_b, 4096);
	cr_assert_eq(na, nb);
	cr_assert(memcmp(code_a, code_b, na * sizeof *code_a) == 0, "code tables differ");
	static sim_line_stats lines_a[4096], lines_b[4096];
	na = sim_hot_lines(a, lines_a, 4096);
	nb = sim_hot_lines(b, lines_b, 4096);
	cr_assert_eq(na, nb);
	cr_assert(memcmp(lines_a, lines_b, na * sizeof *lines_a) == 0, "line tables differ");
}

/* The entries' loop variants (sim_loop.h), as compact_case reports which it ran. */
enum { RAN_EXPANDED = 1, RAN_MRU = 2, RAN_MRU_WIDE = 4, RAN_CLASSIFY = 8, RAN_CLASSIFY_WIDE = 16 };

static unsigned compact_variant(const sim *s)
{
	return s->compact_loop == sim_compact_expanded ? RAN_EXPANDED
	       : s->compact_loop == sim_compact_mru_narrow ? RAN_MRU
	       : s->compact_loop == sim_compact_classify_narrow ? RAN_CLASSIFY
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	       : s->compact_loop == sim_compact_mru_wide ? RAN_MRU_WIDE
	       : s->compact_loop == sim_compact_classify_wide ? RAN_CLASSIFY_WIDE
#endif
	       : 0;
}

static unsigned compact_case(unsigned variant, uint64_t seed, bool unchecked)
{
	sim_config c;
	uint32_t cores = 1 + variant % 2;
	small_config(&c, cores, variant == 11 ? SIM_MOESI : variant == 13 ? SIM_ESI : SIM_MESI);
	c.classify = false;
	c.check = false;
	c.cache[SIM_L1I].size = 1024;
	c.cache[SIM_L1I].assoc = 2;
	c.cache[SIM_L1D].size = 2048;
	c.cache[SIM_L1D].assoc = 4;
	c.cache[SIM_L2].size = 8192;
	c.cache[SIM_L3].size = 16384;
	c.modify = (sim_modify)(seed % 3);
	switch (variant) {
	case 2:   /* 32-byte L1I lines, accesses cut to 8 bytes */
		c.cache[SIM_L1I].line = 32;
		c.max_access_size = 8;
		break;
	case 3:   /* a write-through L1D, inclusive L3 */
		c.cache[SIM_L1D].write_back = false;
		c.l3_inclusion = SIM_INCLUSIVE;
		break;
	case 4:   /* classification: its own loop, one core and two */
	case 9:
		c.classify = true;
		break;
	case 11:   /* classification, two cores, MOESI and ESI (every write general) */
	case 13:
		c.classify = true;
		break;
	case 10:   /* TLBs: expanded into records */
		c.tlb[SIM_DTLB].entries = 4;
		c.tlb[SIM_ITLB].entries = 2;
		c.tlb[SIM_DTLB].page_size = c.tlb[SIM_ITLB].page_size = 512;
		break;
	case 5:   /* FIFO L1s: expanded */
		c.cache[SIM_L1I].replacement = c.cache[SIM_L1D].replacement = SIM_FIFO;
		break;
	case 6:   /* --check: expanded */
		c.check = true;
		break;
	case 7:   /* 12 sets: expanded */
		c.cache[SIM_L1D].size = 1536;
		c.cache[SIM_L1D].assoc = 2;
		break;
	case 14:   /* 8-way L1Ds: a set's tags as one vector where AVX-512 is there */
	case 15:
		c.cache[SIM_L1D].assoc = 8;
		break;
	case 16:   /* the same, write-through */
		c.cache[SIM_L1D].assoc = 8;
		c.cache[SIM_L1D].write_back = false;
		break;
	case 17:   /* 8-way L1Ds through the portable loop */
		c.cache[SIM_L1D].assoc = 8;
		break;
	case 18:   /* classification with 8-way L1s (a vector search of the L1I's sets too), */
	case 19:   /* one core and two; a small L1I, so fetch lines leave the front of their sets */
	case 20:   /* the same through the portable loop */
	case 21:
		c.classify = true;
		c.cache[SIM_L1D].assoc = 8;
		c.cache[SIM_L1I].assoc = 8;
		c.cache[SIM_L1I].size = variant < 20 ? 1024 : 2048;
		break;
	case 22:   /* classification with an L2 hardly larger than the L1s: its victims take */
	case 23:   /* fetch lines out of the L1I between a use's data references, which then */
	case 24:   /* miss; an L1I of 4 or 8 lines, fewer than the hot code's, so that such a */
	case 25:   /* miss is a capacity miss unless a later fetch was touched too early */
		c.classify = true;
		c.cache[SIM_L2].size = 4096;
		c.cache[SIM_L2].assoc = variant < 24 ? 2 : 4;
		c.cache[SIM_L1I].size = variant < 24 ? 256 : 512;
		c.cache[SIM_L1I].assoc = variant < 24 ? 2 : 8;
		c.cache[SIM_L1D].assoc = variant < 24 ? 4 : 8;
		break;
	case 26:   /* classification on cachegrind's machine: one core (two for 27 and 29), no */
	case 27:   /* L2, a non-inclusive L3, 8-way L1s; one core's misses take the engine's */
	case 28:   /* one-core path (reference_single), which must count what the general */
	case 29:   /* path counts too (below); 28 and 29 through the portable loop */
		c.classify = true;
		c.cache[SIM_L2].size = 0;
		c.l3_inclusion = SIM_NON_INCLUSIVE;
		c.cache[SIM_L1D].assoc = 8;
		c.cache[SIM_L1I].assoc = 8;
		break;
	default:
		break;
	}
	compact_stream *stream = malloc(sizeof *stream), *other = malloc(sizeof *other);
	cr_assert(stream && other);
	make_stream(stream, seed, cores, 12000);
	make_stream(other, seed + 1000, cores, 3000);
	plumb_status status;
	sim *compact, *records;
	cr_assert_eq(sim_new(&compact, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_new(&records, &c, &status), 0, "%s", status.message);
	compact->narrow_sets = variant == 17 || (variant >= 20 && variant < 26) || variant >= 28;
	sim_loop_choose(compact);   /* the variant is chosen when the simulator is made */
	unsigned ran = compact_variant(compact);
	bool expanded = variant == 5 || variant == 6 || variant == 7 || variant == 10;
	cr_assert_eq(ran == RAN_EXPANDED, expanded, "case %u: entries expanded only for TLBs, FIFO, --check, 12 sets",
	             variant);
	cr_assert(expanded || ((ran & (RAN_CLASSIFY | RAN_CLASSIFY_WIDE)) != 0) == c.classify,
	          "case %u: the classifying loop exactly when classifying", variant);
	if (compact->narrow_sets || c.cache[SIM_L1D].assoc != 8)
		cr_assert((ran & (RAN_MRU_WIDE | RAN_CLASSIFY_WIDE)) == 0, "case %u: no vector search", variant);
	feed_compact(compact, stream, 1, unchecked);
	cr_assert_eq(sim_access_batch(records, stream->records.records, stream->records.count, &status), 0, "%s",
	             status.message);
	same_statistics(compact, records);
	/* another stream, its own definitions under the same numbers */
	feed_compact(compact, other, 2, unchecked);
	cr_assert_eq(sim_access_batch(records, other->records.records, other->records.count, &status), 0, "%s",
	             status.message);
	same_statistics(compact, records);
	cr_assert_eq(sim_check(compact, &status), 0, "%s", status.message);
	cr_assert_eq(compact->single, variant == 26 || variant == 28, "case %u: the one-core miss path", variant);
	if (variant >= 26) {
		/* and what the general path counts (--check takes it for every reference) */
		sim *general;
		c.check = true;
		cr_assert_eq(sim_new(&general, &c, &status), 0, "%s", status.message);
		cr_assert_eq(sim_access_batch(general, stream->records.records, stream->records.count, &status), 0, "%s",
		             status.message);
		cr_assert_eq(sim_access_batch(general, other->records.records, other->records.count, &status), 0, "%s",
		             status.message);
		same_statistics(compact, general);
		sim_free(general);
	}
	sim_free(compact);
	sim_free(records);
	for (compact_stream *s = stream; s; s = s == stream ? other : NULL) {
		free(s->words);
		trace_release(&s->records);
	}
	free(stream);
	free(other);
	return ran;
}

Test(sim_compact, counts_what_the_records_count)
{
	unsigned ran = 0;
	for (unsigned variant = 0; variant < 30; variant++)
		for (uint64_t seed = 1; seed <= 3; seed++)
			ran |= compact_case(variant, seed + 10 * (uint64_t)variant, false);
	/* every loop variant for entries was compared (the vector ones where
	 * this CPU has AVX-512) */
	unsigned every = RAN_EXPANDED | RAN_MRU | RAN_CLASSIFY;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (__builtin_cpu_supports("avx512f"))
		every |= RAN_MRU_WIDE | RAN_CLASSIFY_WIDE;
#endif
	cr_expect_eq(ran, every, "variants compared: %#x of %#x", ran, every);
}

/* Runs handed out unchecked (trace_reader_want_unchecked_runs): the
 * entries' loops (classifying or not) check each use as they walk, the
 * expanded one settles the run first; either way the run ends before the first entry that is not a good
 * use and counts what the checked run counts. */
Test(sim_compact, an_unchecked_run_ends_before_the_first_entry_not_a_good_use)
{
	static const unsigned variants[] = { 0, 4, 6, 9, 10, 11, 13, 14, 17, 18, 19, 20, 21, 22, 25 };
	for (size_t v = 0; v < sizeof variants / sizeof *variants; v++)
		compact_case(variants[v], 7 + 10 * (uint64_t)variants[v], true);
}

Test(sim_compact, an_empty_run_does_nothing)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	c.classify = false;
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
	uint64_t word = 0;
	trace_compact run = { .words = &word, .end = &word };
	cr_assert_eq(sim_access_compact(s, &run, &status), 0);
	cr_assert_eq(sim_statistics(s)->references[SIM_IFETCH], 0);
	sim_free(s);
}

/* One run of a thread writes a line another core held (its copy goes, with
 * an invalidation record), then writes another word of it, a hit in M: the
 * loop must note that word for the record made in the same run, so the
 * other core's next read of it is a true-sharing miss. */
Test(sim_compact, a_record_made_in_a_run_notes_its_later_write_hits)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.check = false;
	trace_record templates[4];
	memset(templates, 0, sizeof templates);
	for (int i = 0; i < 4; i++) {
		templates[i].flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		templates[i].instruction_address = 0x400000 + 16 * (uint64_t)(i / 2);
	}
	templates[0] = (trace_record){ .kind = TRACE_INSTRUCTION, .size = 4, .address = 0x400000,
	                               .instruction_address = 0x400000, .flags = TRACE_HAS_INSTRUCTION_ADDRESS };
	templates[1].kind = TRACE_WRITE;
	templates[1].size = 8;
	templates[2] = (trace_record){ .kind = TRACE_INSTRUCTION, .size = 4, .address = 0x400010,
	                               .instruction_address = 0x400010, .flags = TRACE_HAS_INSTRUCTION_ADDRESS };
	templates[3].kind = TRACE_READ;
	templates[3].size = 8;
	uint32_t first[2] = { 0, 2 };
	uint8_t count[2] = { 2, 2 }, data[2] = { 1, 1 };
	const uint64_t line = 0x20000;
	/* thread 1 reads word 2; thread 0 writes words 0-1, then 2-3; thread 1 reads word 2 again */
	uint64_t reader[2] = { 1ull << 60 | 1ull << 32 | 1, line + 8 };
	uint64_t writer[4] = { 1ull << 60 | 1ull << 32 | 0, line, 1ull << 60 | 1ull << 32 | 0, line + 8 };
	struct { const uint64_t *words; size_t n; uint32_t thread; } runs[3] = {
		{ reader, 2, 1 }, { writer, 4, 0 }, { reader, 2, 1 },
	};
	plumb_status status;
	sim *compact, *records;
	cr_assert_eq(sim_new(&compact, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_new(&records, &c, &status), 0, "%s", status.message);
	for (int r = 0; r < 3; r++) {
		trace_compact run = { .words = runs[r].words, .end = runs[r].words + runs[r].n, .thread = runs[r].thread,
		                      .templates = templates, .first = first, .count = count, .data = data,
		                      .definitions = 2, .stream = 1 };
		cr_assert_eq(sim_access_compact(compact, &run, &status), 0, "%s", status.message);
		for (size_t u = 0; u < runs[r].n; u += 2) {
			size_t id = (uint32_t)runs[r].words[u];
			trace_record pair[2] = { templates[first[id]], templates[first[id] + 1] };
			pair[0].thread = pair[1].thread = runs[r].thread;
			pair[1].address = runs[r].words[u + 1];
			cr_assert_eq(sim_access_batch(records, pair, 2, &status), 0, "%s", status.message);
		}
	}
	same_statistics(compact, records);
	uint64_t true_sharing = 0;
	for (uint32_t core = 0; core < 2; core++)
		true_sharing += sim_statistics(compact)->core[core].cache[SIM_L1D].coherence_true;
	cr_assert_eq(true_sharing, 1);
	sim_free(compact);
	sim_free(records);
}

/* ---- plumbgrind's L1 filter (vg/pg_filter.h, sim_access_filtered) ----
 * The tool's L1 model run here, inside plumb's process, on the same random
 * definitions and uses: the COUNTS and GENERAL entries it writes, given to
 * sim_access_filtered, must give every statistic sim_access_batch gives for
 * the records (threads, straddles, evictions, writebacks, the L3, memory:
 * the whole sim_stats and every thread's, byte for byte), count every
 * record, and leave plumb's L1s holding what the tool's hold (the same lines
 * with the same metadata in every set; the recency order is the tool's to
 * keep: plumb never sees the hits). */

typedef struct filter_run {
	pgf_model model;
	pgf_u64 *out;           /* the tool's words (unsigned long long, as Valgrind's ULong) */
	size_t count, capacity;
	uint64_t records;       /* what the COUNTS entries counted */
	uint32_t thread;
	int failed;             /* sim_access_filtered failed */
	char message[PLUMB_MESSAGE_MAX];
} filter_run;

static void filter_flush(sim *s, filter_run *f)
{
	for (size_t i = 0; i < f->count;) {
		unsigned tag = (unsigned)(f->out[i] >> 60);
		cr_assert(tag == 8 || tag == 9, "an entry of tag %u", tag);
		if (tag == 8) {
			f->records += f->out[i + 5];
			i += PGF_COUNTS_WORDS;
		} else {
			i += 2 + ((f->out[i] >> 32) & 0xff);
		}
	}
	const uint64_t *words = (const uint64_t *)(const void *)f->out;
	trace_compact run = { .words = words, .end = words + f->count, .thread = f->thread, .filtered = true };
	plumb_status status;
	if (!f->failed && sim_access_filtered(s, &run, &status) != 0) {
		f->failed = 1;
		snprintf(f->message, sizeof f->message, "%s", status.message);
	}
	f->count = 0;
}

static void filter_setup(filter_run *f, const sim_config *c)
{
	memset(f, 0, sizeof *f);
	char option[512];
	plumb_status status;
	cr_assert_eq(sim_filter_option(c, option, sizeof option, &status), 1, "not filterable: %s", status.message);
	cr_assert(strncmp(option, "--plumb-filter=", 15) == 0);
	cr_assert(pgf_parse(&f->model, option + 15), "the tool cannot take %s", option);
	for (int l = 0; l < 2; l++) {
		f->model.l1[l].tags = malloc(pgf_ways(&f->model, l) * sizeof(uint64_t));
		f->model.l1[l].meta = malloc(pgf_ways(&f->model, l));
		cr_assert(f->model.l1[l].tags && f->model.l1[l].meta);
	}
	pgf_reset(&f->model);
	f->capacity = 4096;
	f->out = malloc(f->capacity * sizeof *f->out);
	cr_assert_not_null(f->out);
}

static void filter_release(filter_run *f)
{
	for (int l = 0; l < 2; l++) {
		free(f->model.l1[l].tags);
		free(f->model.l1[l].meta);
	}
	free(f->out);
}

/* The records through the tool's model into s; seed picks where runs end
 * (a block's end can fall anywhere, even before a COUNTS). */
static void filter_feed(sim *s, filter_run *f, const sim_trace *t, uint64_t seed)
{
	uint64_t x = seed * 0x2545F4914F6CDD1Dull + 7;
	f->thread = t->count ? t->records[0].thread : 0;
	for (size_t i = 0; i < t->count; i++) {
		const trace_record *r = &t->records[i];
		if (r->thread != f->thread) {
			f->count += pgf_counts(&f->model, f->out + f->count);
			filter_flush(s, f);
			f->thread = r->thread;
		}
		uint64_t cut = next(&x) % 600;
		if (cut == 0)
			f->count += pgf_counts(&f->model, f->out + f->count);
		if (cut < 2 || f->count + PGF_RECORD_MAX_WORDS + PGF_COUNTS_WORDS > f->capacity)
			filter_flush(s, f);
		f->count += pgf_record(&f->model, f->out + f->count, r->kind, r->address, r->size);
	}
	f->count += pgf_counts(&f->model, f->out + f->count);
	filter_flush(s, f);
}

/* Every set of plumb's L1s holds the lines of the tool's, with the same
 * metadata, and the same least recent way. */
static void same_l1s(const sim *s, const pgf_model *m)
{
	for (int l = 0; l < 2; l++) {
		const sim_cache *c = &s->core[0].cache[l == 0 ? SIM_L1I : SIM_L1D];
		const pgf_cache *f = &m->l1[l];
		cr_assert_eq(c->sets, f->sets);
		cr_assert_eq(c->assoc, f->assoc);
		for (uint64_t set = 0; set < f->sets; set++) {
			size_t base = (size_t)set * f->assoc;
			for (uint32_t w = 0; w < f->assoc; w++) {
				uint64_t tag = f->tags[base + w];
				uint32_t v = 0;
				while (v < c->assoc && c->tags[base + v] != tag)
					v++;
				cr_assert_lt(v, c->assoc, "L1%c set %llu: plumb lacks the tool's line 0x%llx", l ? 'D' : 'I',
				             (unsigned long long)set, (unsigned long long)tag);
				cr_assert_eq(c->meta[base + v], f->meta[base + w], "L1%c set %llu line 0x%llx: metadata",
				             l ? 'D' : 'I', (unsigned long long)set, (unsigned long long)tag);
			}
			uint64_t tool_valid = 0, plumb_valid = 0;
			for (uint32_t w = 0; w < f->assoc; w++) {
				tool_valid += f->tags[base + w] != PGF_NO_TAG;
				plumb_valid += c->tags[base + w] != SIM_NO_TAG;
			}
			cr_assert_eq(tool_valid, plumb_valid);
		}
	}
}

/* Machines the filter takes. */
static void filter_config(sim_config *c, unsigned variant)
{
	small_config(c, 1, variant == 2 ? SIM_MOESI : SIM_MESI);
	c->classify = false;
	c->check = false;
	c->thread_map = SIM_MAP_MODULO;
	c->cache[SIM_L2].size = 0;
	switch (variant) {
	case 0:   /* cachegrind's: 32 KiB 8-way, an L3, 'M' one read, cut to a line */
		c->cache[SIM_L3].size = 256 * 1024;
		c->cache[SIM_L3].assoc = 16;
		c->l3_inclusion = SIM_NON_INCLUSIVE;
		c->modify = SIM_MODIFY_READ;
		c->max_access_size = 64;
		break;
	case 1:   /* small: a direct-mapped L1I, a 2-way L1D, 'M' a read and a write */
		c->cache[SIM_L1I].size = 4096;
		c->cache[SIM_L1I].assoc = 1;
		c->cache[SIM_L1D].size = 8192;
		c->cache[SIM_L1D].assoc = 2;
		c->modify = SIM_MODIFY_READ_WRITE;
		break;
	case 2:   /* MOESI, an exclusive L3, 'M' a write, cut to 8 bytes */
		c->cache[SIM_L1I].size = 8192;
		c->cache[SIM_L1I].assoc = 2;
		c->cache[SIM_L1D].size = 16384;
		c->cache[SIM_L1D].assoc = 4;
		c->cache[SIM_L3].size = 65536;
		c->cache[SIM_L3].assoc = 8;
		c->l3_inclusion = SIM_EXCLUSIVE;
		c->modify = SIM_MODIFY_WRITE;
		c->max_access_size = 8;
		break;
	default:   /* 32-byte lines, 12-way L1D (not a power of two), 128-byte-line L3 */
		c->cache[SIM_L1I].line = c->cache[SIM_L1D].line = 32;
		c->cache[SIM_L1I].size = 2048;
		c->cache[SIM_L1I].assoc = 1;
		c->cache[SIM_L1D].size = 32 * 12 * 64;
		c->cache[SIM_L1D].assoc = 12;
		c->cache[SIM_L3].size = 65536;
		c->cache[SIM_L3].line = 128;
		c->l3_inclusion = SIM_NON_INCLUSIVE;
		c->modify = SIM_MODIFY_READ_WRITE;
		break;
	}
}

/* shared: data references also fall in the code's lines, so the L1I and the
 * L1D hold the same lines (the engine's coupling of their states). */
static void filter_case(unsigned variant, uint64_t seed, bool shared)
{
	sim_config c;
	filter_config(&c, variant);
	compact_stream *stream = malloc(sizeof *stream);
	cr_assert_not_null(stream);
	make_stream(stream, seed, 1, 12000);
	if (shared)
		for (size_t i = 0; i < stream->records.count; i++) {
			trace_record *r = &stream->records.records[i];
			if (r->kind != TRACE_INSTRUCTION && (r->address & 3))
				r->address = 0x400000 + (r->address & 0x3fff);
		}
	plumb_status status;
	sim *filtered, *records;
	cr_assert_eq(sim_new(&filtered, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_new(&records, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_access_batch(records, stream->records.records, stream->records.count, &status), 0, "%s",
	             status.message);
	filter_run f;
	filter_setup(&f, &c);
	filter_feed(filtered, &f, &stream->records, seed);
	cr_assert_not(f.failed, "variant %u seed %llu: %s", variant, (unsigned long long)seed, f.message);
	cr_assert_eq(f.records, stream->records.count);
	cr_assert_eq(f.model.total_records, stream->records.count);
	same_statistics(filtered, records);
	same_l1s(filtered, &f.model);
	filter_release(&f);
	sim_free(filtered);
	sim_free(records);
	free(stream->words);
	trace_release(&stream->records);
	free(stream);
}

Test(sim_filter, counts_what_the_records_count)
{
	for (unsigned variant = 0; variant < 4; variant++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			filter_case(variant, seed + 100 * (uint64_t)variant, false);
			filter_case(variant, seed + 100 * (uint64_t)variant + 50, true);
		}
}

/* The rules the tool keeps are the engine's: a read or fetch miss installs
 * E, a write miss M and dirty, a write to a clean line makes it M and dirty,
 * an owned line the other L1 keeps becomes E when the L1D's copy leaves; a
 * hit's tests are the MRU loop's. */
Test(sim_filter, the_option_says_what_the_engine_does)
{
	sim_config c;
	filter_config(&c, 0);
	filter_run f;
	filter_setup(&f, &c);
	const pgf_model *m = &f.model;
	cr_assert_eq(m->read_state, SIM_STATE_E);
	cr_assert_eq(m->write_state, SIM_STATE_M);
	cr_assert_eq(m->owned_state, SIM_STATE_M);
	cr_assert_eq(m->clean_state, SIM_STATE_E);
	cr_assert_eq(m->state_mask, META_STATE);
	cr_assert_eq(m->dirty_bit, META_DIRTY);
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		uint8_t need, want, dirty;
		sim_mru_masks((sim_access_kind)k, true, &need, &want, &dirty);
		cr_assert(m->need[k] == need && m->want[k] == want && m->dirty[k] == dirty, "kind %d", k);
	}
	cr_assert_eq(m->l1[0].sets, 64);
	cr_assert_eq(m->l1[1].assoc, 8);
	cr_assert_eq(m->max_size, 64);
	cr_assert_eq(m->modify, PGF_MODIFY_READ);
	filter_release(&f);
}

Test(sim_filter, only_machines_whose_l1s_the_tool_can_keep)
{
	char option[512];
	plumb_status status;
	for (unsigned variant = 0; variant < 9; variant++) {
		sim_config c;
		filter_config(&c, 0);
		switch (variant) {
		case 0: c.cores = 2; break;
		case 1: c.cache[SIM_L2].size = 256 * 1024; break;
		case 2: c.l3_inclusion = SIM_INCLUSIVE; break;
		case 3: c.classify = true; break;
		case 4: c.check = true; break;
		case 5: cr_assert_eq(sim_config_set(&c, "protocol", "esi", &status), 0); break;
		case 6: c.cache[SIM_L1D].replacement = SIM_FIFO; break;
		case 7: c.cache[SIM_L1D].size = 8192; c.cache[SIM_L1D].assoc = 4; break;   /* 32 sets */
		default: c.prefetch.kind = SIM_PREFETCH_STRIDE; c.prefetch.depth = 2; c.prefetch.streams = 4; break;
		}
		if (sim_config_validate(&c, &status) != 0)
			continue;
		cr_assert_eq(sim_filter_option(&c, option, sizeof option, &status), 0, "variant %u", variant);
	}
}

/* A tool whose model is wrong (here: a read miss installed as M) is caught:
 * the first least recent way whose metadata differs is an error. */
Test(sim_filter, a_wrong_model_is_an_error)
{
	sim_config c;
	filter_config(&c, 1);
	compact_stream *stream = malloc(sizeof *stream);
	cr_assert_not_null(stream);
	make_stream(stream, 5, 1, 4000);
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
	filter_run f;
	filter_setup(&f, &c);
	f.model.read_state = f.model.write_state;
	filter_feed(s, &f, &stream->records, 5);
	cr_assert(f.failed);
	cr_assert(strstr(f.message, "the tool's L1s and plumb's disagree"), "%s", f.message);
	/* a run of filtered entries is not compact_mru's */
	uint64_t word = 8ull << 60;
	trace_compact run = { .words = &word, .end = &word + 1, .filtered = true };
	cr_assert_neq(sim_access_compact(s, &run, &status), 0);
	filter_release(&f);
	sim_free(s);
	free(stream->words);
	trace_release(&stream->records);
	free(stream);
}

/* A use whose fetch lines are all hits: its data reference misses, and the
 * L2's victim is the line of a fetch after it, which then misses.  The
 * L1I's shadow must not have seen that later fetch yet: two other lines
 * were fetched since its last use, so in a shadow of two lines it is a
 * capacity miss (it was a conflict miss while the loop touched a use's
 * lines before walking its data references). */
Test(sim_compact, a_fetch_after_a_miss_finds_the_shadow_as_it_was)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	c.check = false;
	c.cache[SIM_L1I].size = 128;   /* two sets of one way: lines a and c share set 0, b has set 1 */
	c.cache[SIM_L1I].assoc = 1;
	c.cache[SIM_L1D].size = 64;
	c.cache[SIM_L1D].assoc = 1;
	c.cache[SIM_L2].size = 192;    /* one set of three ways, the L1s' lines inside */
	c.cache[SIM_L2].assoc = 3;
	const uint64_t a = 0x400000, b = 0x400040, x = 0x20000;
	trace_record templates[6];
	memset(templates, 0, sizeof templates);
	const uint64_t fetched[6] = { b, 0x400080, a, a, a, b };   /* b; c; a; then a, the read, b */
	for (int i = 0; i < 6; i++) {
		templates[i].kind = TRACE_INSTRUCTION;
		templates[i].size = 4;
		templates[i].address = templates[i].instruction_address = fetched[i];
		templates[i].flags = TRACE_HAS_INSTRUCTION_ADDRESS;
	}
	templates[4].kind = TRACE_READ;
	templates[4].size = 8;
	uint32_t first[4] = { 0, 1, 2, 3 };
	uint8_t count[4] = { 1, 1, 1, 3 }, data[4] = { 0, 0, 0, 1 };
	uint64_t words[5] = { 1ull << 60 | 0, 1ull << 60 | 1, 1ull << 60 | 2, 1ull << 60 | 1ull << 32 | 3, x };
	plumb_status status;
	sim *compact, *records;
	cr_assert_eq(sim_new(&compact, &c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_new(&records, &c, &status), 0, "%s", status.message);
	trace_compact run = { .words = words, .end = words + 5, .templates = templates, .first = first, .count = count,
	                      .data = data, .definitions = 4, .stream = 1 };
	cr_assert_eq(sim_access_compact(compact, &run, &status), 0, "%s", status.message);
	trace_record expanded[6];
	memcpy(expanded, templates, sizeof expanded);
	expanded[4].address = x;
	cr_assert_eq(sim_access_batch(records, expanded, 6, &status), 0, "%s", status.message);
	same_statistics(compact, records);
	const sim_cache_stats *l1i = &sim_statistics(compact)->core[0].cache[SIM_L1I];
	cr_assert_eq(l1i->misses[SIM_IFETCH], 4, "%llu misses", (unsigned long long)l1i->misses[SIM_IFETCH]);   /* b, c, a, b */
	cr_assert_eq(l1i->capacity, 1, "capacity %llu conflict %llu compulsory %llu", (unsigned long long)l1i->capacity, (unsigned long long)l1i->conflict, (unsigned long long)l1i->compulsory);
	cr_assert_eq(l1i->conflict, 0);
	sim_free(compact);
	sim_free(records);
}
