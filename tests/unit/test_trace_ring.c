/* plumbgrind's binary trace (vg/pg_ring.c, src/trace/trace_ring.c) against
 * its old lackey text, written by the same run (--plumb-trace=FILE beside
 * the ring): the same records, field by field, and the same simulation, on
 * test programs with threads, regions, marker no-ops and a collection
 * switch.  One run, because two runs of a program under Valgrind are not
 * always the same: the loader's strcspn reads a few bytes past the end of a
 * string at the top of the stack, where Valgrind puts the random AT_RANDOM
 * bytes, and uses them as table indexes; and threads' exit paths vary. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "instrument/instrument.h"
#include "core/output.h"
#include "trace/ring_format.h"
#include "sim/sim.h"
#include "sim/sim_curve.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "instrument_target.h"
#include "../temp_folder.h"

static char target[PATH_MAX + 64];

static void find_target_and_tool(void)
{
	char tool_dir[PATH_MAX];
	instrument_target_find(target, sizeof target, tool_dir, sizeof tool_dir);
}

typedef struct both {
	trace_record *binary;          /* every record of the ring */
	size_t count;
	char text_path[256];           /* the same run's lackey text */
} both;

#define BATCH 4096

/* Runs argv once with the ring and a text trace file.  With fed, reads the
 * ring's compact entries (trace_reader_view_compact), gives them to each
 * simulator of fed (NULL-terminated) as they come, and keeps the records
 * they stand for. */
static void run_both_fed(char *const argv[], both *out, sim *const *fed, size_t block_bytes)
{
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-ring-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(out->text_path, sizeof out->text_path, "%s/trace.lackey", dir);
	char option[300];
	snprintf(option, sizeof option, "--plumb-trace=%s", out->text_path);
	const char *const options[] = { option, NULL };
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_command_blocks(&reader, argv, options, 0, block_bytes, &status), 0, "%s",
	             status.message);
	cr_assert_eq(trace_reader_format(reader), TRACE_FORMAT_NATIVE, "the binary ring by default");
	size_t capacity = 1 << 16;
	out->binary = malloc(capacity * sizeof *out->binary);
	out->count = 0;
	const trace_record *batch;
	trace_compact compact = { 0 };
	long n;
	while ((n = fed ? trace_reader_view_compact(reader, &batch, &compact, BATCH, &status)
	                : trace_reader_view(reader, &batch, BATCH, &status)) > 0) {
		while (out->count + (size_t)n > capacity) {
			capacity *= 2;
			out->binary = realloc(out->binary, capacity * sizeof *out->binary);
			cr_assert_not_null(out->binary);
		}
		if (fed && compact.words) {
			for (sim *const *s = fed; *s; s++)
				cr_assert_eq(sim_access_compact(*s, &compact, &status), 0, "%s", status.message);
			/* the records the entries stand for */
			trace_record *r = out->binary + out->count;
			for (const uint64_t *w = compact.words; w < compact.end;) {
				uint32_t id = (uint32_t)w[0];
				cr_assert_eq(w[0] >> 60, 1, "a use entry");
				cr_assert_lt(id, compact.definitions);
				const uint64_t *data = w + 1;
				for (size_t i = 0; i < compact.count[id]; i++, r++) {
					*r = compact.templates[compact.first[id] + i];
					r->thread = compact.thread;
					if (r->kind != TRACE_INSTRUCTION)
						r->address = *data++;
				}
				cr_assert_eq(data, w + 1 + compact.data[id]);
				w = data;
			}
			cr_assert_eq((size_t)(r - (out->binary + out->count)), (size_t)n, "the run's record count");
			out->count += (size_t)n;
			continue;
		}
		if (fed)
			for (sim *const *s = fed; *s; s++)
				cr_assert_eq(sim_access_batch(*s, batch, (size_t)n, &status), 0, "%s", status.message);
		memcpy(out->binary + out->count, batch, (size_t)n * sizeof *batch);
		/* a marker's name lives in the reader, closed below: keep a copy */
		for (size_t i = out->count; i < out->count + (size_t)n; i++)
			if (trace_is_marker(&out->binary[i]))
				out->binary[i].address = (uint64_t)(uintptr_t)strdup(trace_region_name(&out->binary[i]));
		out->count += (size_t)n;
	}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
}

static void run_both(char *const argv[], both *out)
{
	run_both_fed(argv, out, NULL, 0);
}

static void both_free(both *b)
{
	for (size_t i = 0; i < b->count; i++)
		if (trace_is_marker(&b->binary[i]))
			free((char *)(uintptr_t)b->binary[i].address);
	free(b->binary);
	unlink(b->text_path);
	*strrchr(b->text_path, '/') = 0;
	rmdir(b->text_path);
}

static size_t compare_with_text(char *const argv[], both b, size_t at_least);

static size_t compare_records(char *const argv[], size_t at_least)
{
	both b;
	run_both(argv, &b);
	return compare_with_text(argv, b, at_least);
}

static size_t compare_with_text(char *const argv[], both b, size_t at_least)
{
	size_t markers = 0;
	cr_assert_geq(b.count, at_least, "%s %s: %zu records", argv[1], argv[2], b.count);
	trace_reader *text;
	plumb_status status;
	cr_assert_eq(trace_reader_open(&text, b.text_path, TRACE_FORMAT_LACKEY, &status), 0, "%s", status.message);
	static trace_record y[BATCH];
	size_t at = 0;
	long n;
	while ((n = trace_reader_read(text, y, BATCH, &status)) > 0) {
		cr_assert_leq(at + (size_t)n, b.count, "%s %s: the text trace has more records", argv[1], argv[2]);
		for (long i = 0; i < n; i++) {
			const trace_record *x = &b.binary[at + (size_t)i];
			if (trace_is_marker(x) && trace_is_marker(&y[i])) {
				cr_assert(x->kind == y[i].kind && x->thread == y[i].thread && x->size == y[i].size &&
				          x->flags == y[i].flags && x->instruction_address == y[i].instruction_address &&
				          strcmp(trace_region_name(x), trace_region_name(&y[i])) == 0,
				          "%s %s: marker %zu differs: binary %d %s thread %u, text %d %s thread %u", argv[1], argv[2],
				          at + (size_t)i, x->kind, trace_region_name(x), x->thread, y[i].kind, trace_region_name(&y[i]),
				          y[i].thread);
				markers++;
				continue;
			}
			cr_assert(x->address == y[i].address && x->instruction_address == y[i].instruction_address &&
			          x->time == y[i].time && x->thread == y[i].thread && x->size == y[i].size &&
			          x->kind == y[i].kind && x->flags == y[i].flags,
			          "%s %s: record %zu differs: binary %d %#llx,%u iaddr %#llx thread %u flags %u; "
			          "text %d %#llx,%u iaddr %#llx thread %u flags %u",
			          argv[1], argv[2], at + (size_t)i, x->kind, (unsigned long long)x->address, x->size,
			          (unsigned long long)x->instruction_address, x->thread, x->flags, y[i].kind,
			          (unsigned long long)y[i].address, y[i].size, (unsigned long long)y[i].instruction_address,
			          y[i].thread, y[i].flags);
		}
		at += (size_t)n;
	}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(at, b.count, "%s %s: the text trace ends after %zu of %zu records", argv[1], argv[2], at, b.count);
	trace_reader_close(text, NULL);
	both_free(&b);
	return markers;
}

Test(trace_ring, binary_records_equal_the_text_records, .init = find_target_and_tool, .timeout = 180)
{
	/* region markers: a BEGIN and an END per repetition, where the text has them */
	char *loop[] = { target, "loop", "20000", "3", NULL };
	cr_assert_eq(compare_records(loop, 8 * 60000), 6);
	/* threads 1..3 run one after another, then the main thread again; a region each */
	char *threads[] = { target, "threads", "3", "5000", NULL };
	cr_assert_eq(compare_records(threads, 8 * 30000), 8);
	/* the collection switch: nothing after PLUMB_VG_STOP */
	char *collect[] = { target, "collect", "7000", NULL };
	compare_records(collect, 8 * 7000);
	char *nested[] = { target, "nested", "3000", "4000", NULL };
	cr_assert_eq(compare_records(nested, 8 * 7000), 4);
	/* faults in mid-superblock, a handler jumping back: a superblock's parts
	 * make one use in the ring, yet the references before each fault are
	 * the same */
	char *recover[] = { target, "recover", "300", NULL };
	compare_records(recover, 300 * 8);
}

/* A marker whose code straddles the end of a ring block: the ring put it at
 * the end of the marker's code while the text put it in its place, so the
 * two traces of one run differed, in a way that moved with the threads'
 * interleaving (CI failed on it under load).  The ring now makes room for a
 * marker's code at its first no-op.  Small blocks put a block's end inside
 * some of the 4,000 markers' code here, every run. */
Test(trace_ring, markers_at_a_block_end_go_where_the_text_puts_them, .init = find_target_and_tool, .timeout = 180)
{
	char *loop[] = { target, "loop", "30", "2000", NULL };
	both b;
	run_both_fed(loop, &b, NULL, 4096);
	cr_assert_eq(compare_with_text(loop, b, 8 * 30 * 2000), 4000);
}

static void simulate(const char *preset, const char *setting, const trace_record *records, size_t count,
                     const char *text_path, sim_stats *stats, sim_code_stats *code, size_t *code_count)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, preset, &status), 0, "%s", status.message);
	if (setting)
		cr_assert_eq(sim_config_assign(&config, setting, &status), 0, "%s", status.message);
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	if (records) {
		for (size_t i = 0; i < count; i += BATCH)
			cr_assert_eq(sim_access_batch(s, records + i, count - i < BATCH ? count - i : BATCH, &status), 0, "%s",
			             status.message);
	} else {
		trace_reader *reader;
		cr_assert_eq(trace_reader_open(&reader, text_path, TRACE_FORMAT_LACKEY, &status), 0, "%s", status.message);
		const trace_record *batch;
		long n;
		while ((n = trace_reader_view(reader, &batch, BATCH, &status)) > 0)
			cr_assert_eq(sim_access_batch(s, batch, (size_t)n, &status), 0, "%s", status.message);
		cr_assert_eq(n, 0, "%s", status.message);
		trace_reader_close(reader, NULL);
	}
	memcpy(stats, sim_statistics(s), sizeof *stats);
	*code_count = sim_hot_code(s, code, 64);
	sim_free(s);
}

/* Two cores (the main thread and the workers on different cores), MESI, a
 * shared L3, miss classification; and cachegrind's machine: every statistic
 * and the code table. */
static void simulate_both(char *const argv[])
{
	both b;
	run_both(argv, &b);
	static const char *const machines[][2] = { { "default", "cores=2" }, { "default", "l3.size=1M" },
	                                           { "cachegrind", NULL } };
	for (size_t m = 0; m < 3; m++) {
		static sim_stats x, y;
		static sim_code_stats code_x[64], code_y[64];
		size_t nx, ny;
		simulate(machines[m][0], machines[m][1], b.binary, b.count, NULL, &x, code_x, &nx);
		simulate(machines[m][0], machines[m][1], NULL, 0, b.text_path, &y, code_y, &ny);
		cr_assert_gt(x.references[0], 20000);
		cr_assert(memcmp(&x, &y, sizeof x) == 0, "%s %s: the statistics differ", machines[m][0],
		          machines[m][1] ? machines[m][1] : "");
		cr_assert_eq(nx, ny);
		cr_assert_gt(nx, 0);
		cr_assert(memcmp(code_x, code_y, nx * sizeof *code_x) == 0, "the code tables differ");
	}
	both_free(&b);
}

Test(trace_ring, binary_path_simulates_like_the_text_path, .init = find_target_and_tool, .timeout = 180)
{
	char *threads[] = { target, "threads", "3", "4000", NULL };
	simulate_both(threads);
	char *loop[] = { target, "loop", "30000", "2", NULL };
	simulate_both(loop);
}

/* The ring's compact entries (trace_reader_view_compact), as plumb sim takes
 * them: they stand for the records of the same run's text trace, one by one,
 * and simulators fed the entries (sim_access_compact: cachegrind's machine,
 * two cores with and without classification) count exactly what the same
 * machines count from those records. */
Test(trace_ring, compact_entries_stand_for_the_records, .init = find_target_and_tool, .timeout = 180)
{
	static const char *const machines[][2] = { { "cachegrind", "classify=no" }, { "default", "cores=2" },
	                                           { "default", "classify=no" } };
	char *threads[] = { target, "threads", "3", "4000", NULL };
	sim *fed[4] = { NULL };
	sim_config config[3];
	plumb_status status;
	for (size_t m = 0; m < 3; m++) {
		cr_assert_eq(sim_preset(&config[m], machines[m][0], &status), 0, "%s", status.message);
		cr_assert_eq(sim_config_assign(&config[m], machines[m][1], &status), 0, "%s", status.message);
		cr_assert_eq(sim_new(&fed[m], &config[m], &status), 0, "%s", status.message);
	}
	both b;
	run_both_fed(threads, &b, fed, 0);
	for (size_t m = 0; m < 3; m++) {
		sim *s;
		cr_assert_eq(sim_new(&s, &config[m], &status), 0, "%s", status.message);
		for (size_t i = 0; i < b.count; i += BATCH)
			cr_assert_eq(sim_access_batch(s, b.binary + i, b.count - i < BATCH ? b.count - i : BATCH, &status), 0,
			             "%s", status.message);
		cr_assert_gt(sim_statistics(s)->references[0], 20000);
		cr_assert(memcmp(sim_statistics(s), sim_statistics(fed[m]), sizeof(sim_stats)) == 0,
		          "%s %s: the statistics differ", machines[m][0], machines[m][1]);
		sim_free(s);
		sim_free(fed[m]);
	}
	cr_assert_gt(compare_with_text(threads, b, 20000), 0, "the region markers");
}

/* PLUMB_TRACE_TEXT: the old path, the lackey text through a pipe.  Two runs,
 * so the counts agree to a few start-up references (the loader's path can
 * differ by an instruction or a load between runs under Valgrind). */
Test(trace_ring, text_path_on_request, .init = find_target_and_tool, .timeout = 120)
{
	char *loop[] = { target, "loop", "5000", "1", NULL };
	uint64_t kinds[2][6] = { { 0 } };   /* with the region markers */
	for (int text = 0; text < 2; text++) {
		if (text)
			setenv("PLUMB_TRACE_TEXT", "1", 1);
		trace_reader *reader;
		plumb_status status;
		cr_assert_eq(trace_reader_open_command(&reader, loop, &status), 0, "%s", status.message);
		unsetenv("PLUMB_TRACE_TEXT");
		cr_assert_eq(trace_reader_format(reader), text ? TRACE_FORMAT_LACKEY : TRACE_FORMAT_NATIVE);
		const trace_record *batch;
		long n;
		while ((n = trace_reader_view(reader, &batch, BATCH, &status)) > 0)
			for (long i = 0; i < n; i++)
				kinds[text][batch[i].kind]++;
		cr_assert_eq(n, 0, "%s", status.message);
		cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	}
	for (int k = 0; k < 4; k++) {
		uint64_t a = kinds[0][k], b = kinds[1][k], difference = a > b ? a - b : b - a;
		cr_expect_leq(difference, 10 + a / 1000, "kind %d: binary %llu, text %llu", k, (unsigned long long)a,
		              (unsigned long long)b);
	}
	cr_assert_gt(kinds[0][TRACE_INSTRUCTION], 5 * 5000);
}

/* plumb instrument --trace FILE.ptrace: the ring, encoded by plumb into the
 * native format while the program runs; every counted reference is in the
 * file (collection on throughout), with the region markers. */
Test(trace_ring, instrument_writes_a_native_trace_file, .init = find_target_and_tool, .timeout = 120)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	temp_template(dir, sizeof dir, "plumb-ring-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/run.ptrace", dir);
	char *argv[] = { target, "threads", "2", "3000", NULL };
	instrument_options options;
	instrument_options_init(&options);
	options.trace_path = path;
	instrument_summary s;
	plumb_status status;
	cr_assert_eq(instrument_run(argv, &options, &s, &status), 0, "%s", status.message);
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	cr_assert_eq(trace_reader_format(reader), TRACE_FORMAT_NATIVE);
	uint64_t kinds[6] = { 0 }, threads = 0;
	const trace_record *batch;
	long n;
	while ((n = trace_reader_view(reader, &batch, BATCH, &status)) > 0)
		for (long i = 0; i < n; i++) {
			kinds[batch[i].kind]++;
			if (batch[i].thread + 1 > threads)
				threads = batch[i].thread + 1;
		}
	cr_assert_eq(n, 0, "%s", status.message);
	trace_reader_close(reader, NULL);
	cr_expect_eq(kinds[TRACE_INSTRUCTION], s.total.value[INSTRUMENT_INSTRUCTIONS]);
	cr_expect_eq(kinds[TRACE_READ], s.total.value[INSTRUMENT_LOADS]);
	cr_expect_eq(kinds[TRACE_WRITE], s.total.value[INSTRUMENT_STORES]);
	cr_expect_eq(kinds[TRACE_MODIFY], s.total.value[INSTRUMENT_MODIFIES]);
	cr_expect_eq(kinds[0] + kinds[1] + kinds[2] + kinds[3], s.trace_records);
	cr_expect_eq(kinds[TRACE_REGION_BEGIN], 3, "a region per thread");
	cr_expect_eq(kinds[TRACE_REGION_END], 3);
	cr_expect_eq(threads, 3);
	instrument_summary_free(&s);
	unlink(path);
	rmdir(dir);
}

/* A ring written by hand, as the tool would: one block of `words`, of the
 * L1 filter's stream when `filtered`.  Returns the reader over it (the tool
 * side closed: its end of file ends the trace). */
static trace_reader *hand_written_ring_ending(const uint64_t *words, uint32_t count, bool filtered,
                                              const uint32_t *tail, size_t tail_count)
{
	trace_ring *ring;
	plumb_status status;
	cr_assert_eq(trace_ring_new(&ring, 2, 4096, &status), 0, "%s", status.message);
	if (filtered)
		trace_ring_set_filtered(ring);
	char option[128];
	cr_assert_eq(trace_ring_tool_option(ring, option, sizeof option), 0);
	int memory_fd, full_fd, free_fd;
	cr_assert_eq(sscanf(option, "--plumb-ring=%d,%d,%d,", &memory_fd, &full_fd, &free_fd), 3);
	uint64_t *memory = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memory_fd, 0);
	cr_assert_neq(memory, MAP_FAILED);
	memcpy(memory, words, count * sizeof *words);
	munmap(memory, 2 * 4096);
	cr_assert_eq(write(full_fd, &count, sizeof count), (ssize_t)sizeof count);
	for (size_t i = 0; i < tail_count; i++)
		cr_assert_eq(write(full_fd, &tail[i], sizeof tail[i]), (ssize_t)sizeof tail[i]);
	trace_ring_parent_started(ring);
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_ring(&reader, ring, "hand-written", &status), 0, "%s", status.message);
	return reader;
}

static trace_reader *hand_written_ring_of(const uint64_t *words, uint32_t count, bool filtered)
{
	return hand_written_ring_ending(words, count, filtered, NULL, 0);
}

static trace_reader *hand_written_ring(const uint64_t *words, uint32_t count)
{
	return hand_written_ring_of(words, count, false);
}

#define USE(data, id) (1ull << 60 | (uint64_t)(data) << 32 | (id))
/* definition 0: a fetch, a load of 8 bytes, a fetch, a store of 4 */
static const uint64_t definition[] = {
	2ull << 60 | 4ull << 32 | 0, 0x401000 | 3ull << 48 | 0ull << 62, 0x401000 | 8ull << 48 | 1ull << 62,
	0x401003 | 2ull << 48 | 0ull << 62, 0x401003 | 4ull << 48 | 2ull << 62,
};

/* Writes definition 0 and `uses` good uses of it (loads from 0x7000 a line
 * further each time, stores to 0x9000) into words; returns the words. */
static size_t definition_and_uses(uint64_t *words, int uses)
{
	memcpy(words, definition, sizeof definition);
	size_t n = sizeof definition / sizeof *definition;
	for (int i = 0; i < uses; i++) {
		words[n++] = USE(2, 0);
		words[n++] = 0x7000 + 64u * (unsigned)i;
		words[n++] = 0x9000;
	}
	return n;
}

/* A use carries its definition's data count (so that the reader and the
 * simulator step over it without looking the definition up): the run of
 * uses is handed out as it is, with the records it stands for. */
Test(trace_ring, uses_carry_their_data_count)
{
	uint64_t words[16];
	size_t n = definition_and_uses(words, 3);
	trace_reader *reader = hand_written_ring(words, (uint32_t)n);
	const trace_record *records;
	trace_compact compact;
	plumb_status status;
	long got = trace_reader_view_compact(reader, &records, &compact, 4096, &status);
	cr_assert_eq(got, 12, "three uses of four records (%ld: %s)", got, got < 0 ? status.message : "");
	cr_assert_not_null(compact.words);
	cr_assert_eq(compact.end - compact.words, 9);
	cr_assert_eq(compact.definitions, 1);
	cr_assert_eq(trace_reader_view_compact(reader, &records, &compact, 4096, &status), 0);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	/* handed out unchecked: the first use checked, the run to the block's
	 * end; settled and given back, or walked by the reader when it is not */
	for (int given_back = 0; given_back < 2; given_back++) {
		reader = hand_written_ring(words, (uint32_t)n);
		trace_reader_want_unchecked_runs(reader);
		got = trace_reader_view_compact(reader, &records, &compact, 4096, &status);
		cr_assert_eq(got, 4, "the first use's records (%ld)", got);
		cr_assert(compact.unchecked);
		cr_assert_eq(compact.end - compact.words, 9);
		trace_compact_settle(&compact);
		cr_assert_not(compact.unchecked);
		cr_assert_eq(compact.end - compact.words, 9);
		cr_assert_eq(compact.records, 12);
		if (given_back)
			trace_reader_compact_taken(reader, &compact);
		cr_assert_eq(trace_reader_view_compact(reader, &records, &compact, 4096, &status), 0, "%s", status.message);
		trace_reader_info info;
		trace_reader_get_info(reader, &info);
		cr_assert_eq(info.records, 12, "every record counted once (%llu)", (unsigned long long)info.records);
		cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	}
}

/* The tool's last word, 0xffffffff after the last block, says the program
 * exited (plumb asks for no code map when no output names code, and then
 * only this word tells an exit from an exec); anything after it is an
 * error, and without it the program did not exit under the tool. */
Test(trace_ring, the_last_word_says_the_program_exited)
{
	uint64_t words[8];
	size_t n = definition_and_uses(words, 1);
	static const uint32_t end[] = { 0xffffffffu, 3 };
	for (size_t tail = 0; tail < 3; tail++) {
		trace_reader *reader = hand_written_ring_ending(words, (uint32_t)n, false, end, tail);
		trace_record records[16];
		plumb_status status;
		long got = trace_reader_read(reader, records, 16, &status);
		cr_assert_eq(got, 4, "tail %zu: %ld", tail, got);
		got = trace_reader_read(reader, records, 16, &status);
		if (tail == 2) {
			cr_assert_eq(got, -1, "a word after the end");
			cr_assert(strstr(status.message, "more after the end"), "%s", status.message);
		} else {
			cr_assert_eq(got, 0, "%s", status.message);
			cr_assert_eq(trace_ring_program_exited(reader), tail == 1);
		}
		trace_reader_close(reader, &status);
	}
}

/* Before an execve the tool sends PLUMB_RING_EXEC, the name's length and the
 * name: kept when the trace then ends without the end word (the exec
 * succeeded), harmless when the end word follows (it failed); a name longer
 * than the tool sends, or cut short, is an error. */
Test(trace_ring, an_exec_names_its_program)
{
	uint64_t words[8];
	size_t n = definition_and_uses(words, 1);
	/* tag, length, "/usr/bin/env" (12 bytes: 3 words), then the end word or not */
	uint32_t message[6] = { PLUMB_RING_EXEC, 12, 0, 0, 0, PLUMB_RING_END };
	memcpy(&message[2], "/usr/bin/env", 12);
	for (int ended = 0; ended < 2; ended++) {
		trace_reader *reader = hand_written_ring_ending(words, (uint32_t)n, false, message, ended ? 6 : 5);
		trace_record records[16];
		plumb_status status;
		cr_assert_eq(trace_reader_read(reader, records, 16, &status), 4);
		cr_assert_eq(trace_reader_read(reader, records, 16, &status), 0, "%s", status.message);
		/* the exec failed when the end word came: the program went on and exited */
		cr_assert_eq(trace_ring_program_exited(reader), ended == 1);
		cr_assert_str_eq(trace_ring_exec_name(reader), "/usr/bin/env");
		trace_reader_close(reader, &status);
	}
	/* a name longer than the tool sends, or cut short: an error */
	static const uint32_t too_long[] = { PLUMB_RING_EXEC, PLUMB_RING_EXEC_NAME_MAX + 1 };
	static const uint32_t cut[] = { PLUMB_RING_EXEC, 12, 0 };
	for (int k = 0; k < 2; k++) {
		trace_reader *reader = hand_written_ring_ending(words, (uint32_t)n, false, k ? cut : too_long, k ? 3 : 2);
		trace_record records[16];
		plumb_status status;
		cr_assert_eq(trace_reader_read(reader, records, 16, &status), 4);
		cr_assert_eq(trace_reader_read(reader, records, 16, &status), -1);
		cr_assert(strstr(status.message, k ? "cut short inside an exec's name" : "an exec's name longer"), "%s",
		          status.message);
		trace_reader_close(reader, &status);
	}
}

/* A use whose data count is not its definition's, or of a definition not
 * sent, or cut by the block's end, is an error naming the block, never a
 * wrong number: compact runs and records alike. */
Test(trace_ring, a_bad_use_is_an_error)
{
	static const struct {
		uint64_t use;
		int words;   /* address words after it */
		const char *says;
	} bad[] = {
		{ USE(1, 0), 1, "data count" },
		{ USE(3, 0), 3, "data count" },
		{ USE(2, 1), 2, "unknown definition" },
		{ USE(2, 0) | 1ull << 45, 2, "unknown definition" },
		{ USE(2, 0), 1, "cut by the block's end" },
	};
	for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
		/* 0: records; 1: compact runs; 2: unchecked runs, settled and given
		 * back; 3: unchecked runs not given back (the reader walks them) */
		for (int compact_way = 0; compact_way < 4; compact_way++) {
			uint64_t words[16];
			size_t n = definition_and_uses(words, 1);
			words[n++] = bad[b].use;
			for (int i = 0; i < bad[b].words; i++)
				words[n++] = 0x7040;
			trace_reader *reader = hand_written_ring(words, (uint32_t)n);
			const trace_record *records;
			trace_compact compact;
			plumb_status status;
			long got;
			if (compact_way >= 2) {
				trace_reader_want_unchecked_runs(reader);
				got = trace_reader_view_compact(reader, &records, &compact, 4096, &status);
				cr_assert_eq(got, 4, "the good use, checked (%ld)", got);
				cr_assert(compact.unchecked);
				trace_compact_settle(&compact);
				cr_assert_eq(compact.end - compact.words, 3, "bad use %zu: the run ends before it", b);
				cr_assert_eq(compact.records, 4);
				if (compact_way == 2)
					trace_reader_compact_taken(reader, &compact);
				got = trace_reader_view_compact(reader, &records, &compact, 4096, &status);
			} else if (compact_way) {
				got = trace_reader_view_compact(reader, &records, &compact, 4096, &status);
			} else {
				trace_record out[64];
				got = trace_reader_read(reader, out, 64, &status);
				if (got == 4)   /* the good use's records first */
					got = trace_reader_read(reader, out, 64, &status);
			}
			cr_assert_eq(got, -1, "bad use %zu (%s): %ld", b, compact_way ? "compact" : "records", got);
			cr_assert(strstr(status.message, bad[b].says) && strstr(status.message, "block 0"), "%s", status.message);
			trace_reader_close(reader, NULL);
		}
	}
}

/* plumb sim's loop (sim_run_reader) takes the ring's runs unchecked and
 * the simulator checks the uses: a bad use after a good one is still the
 * reader's error naming the block, with a classifying machine (its loop
 * checks) and without (the run settled first); good uses count their records. */
Test(trace_ring, plumb_sims_loop_reports_a_bad_use)
{
	static const struct {
		uint64_t use;
		int words;
		const char *says;
	} bad[] = {
		{ USE(1, 0), 1, "data count" },
		{ USE(3, 0), 3, "data count" },
		{ USE(2, 1), 2, "unknown definition" },
		{ USE(2, 0) | 1ull << 45, 2, "unknown definition" },
		{ USE(2, 0), 1, "cut by the block's end" },
		{ 0, 0, NULL },   /* none: three good uses */
	};
	for (int classify = 0; classify < 2; classify++) {
		sim_config config;
		plumb_status status;
		cr_assert_eq(sim_preset(&config, "default", &status), 0, "%s", status.message);
		config.cores = 2;
		config.classify = classify != 0;
		for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
			uint64_t words[24];
			size_t n = definition_and_uses(words, 2);
			if (bad[b].says) {
				words[n++] = bad[b].use;
				for (int i = 0; i < bad[b].words; i++)
					words[n++] = 0x7040;
			} else {
				words[n++] = USE(2, 0);
				words[n++] = 0x7080;
				words[n++] = 0x9000;
			}
			trace_reader *reader = hand_written_ring(words, (uint32_t)n);
			sim *s;
			cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
			uint64_t records = 0;
			int rc = sim_run_reader(s, reader, NULL, false, &records, &status);
			if (bad[b].says) {
				cr_assert_neq(rc, 0, "bad use %zu (classify %d) is accepted", b, classify);
				cr_assert(strstr(status.message, bad[b].says) && strstr(status.message, "block 0"),
				          "bad use %zu: %s", b, status.message);
			} else {
				cr_assert_eq(rc, 0, "%s", status.message);
				cr_assert_eq(records, 12, "three uses of four records (%llu)", (unsigned long long)records);
				cr_assert_eq(sim_statistics(s)->references[SIM_IFETCH], 6);
				trace_reader_info info;
				trace_reader_get_info(reader, &info);
				cr_assert_eq(info.records, 12);
			}
			sim_free(s);
			trace_reader_close(reader, NULL);
		}
	}
}

/* plumb sim --curve's loop (sim_curve_run_reader_all) takes the ring's runs
 * unchecked and the first curve checks the uses as it walks them: a bad use
 * after good ones is still the reader's error naming the block, with one
 * curve and with two (the second sees the run the first settled); good uses
 * count their records and their data references. */
Test(trace_ring, plumb_sim_curves_loop_reports_a_bad_use)
{
	static const struct {
		uint64_t use;
		int words;
		const char *says;
	} bad[] = {
		{ USE(1, 0), 1, "data count" },
		{ USE(3, 0), 3, "data count" },
		{ USE(2, 1), 2, "unknown definition" },
		{ USE(2, 0) | 1ull << 45, 2, "unknown definition" },
		{ USE(2, 0), 1, "cut by the block's end" },
		{ 0, 0, NULL },   /* none: three good uses */
	};
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, "cachegrind", &status), 0, "%s", status.message);
	for (int levels = 1; levels <= 2; levels++) {
		for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
			uint64_t words[24];
			size_t n = definition_and_uses(words, 2);
			if (bad[b].says) {
				words[n++] = bad[b].use;
				for (int i = 0; i < bad[b].words; i++)
					words[n++] = 0x7040;
			} else {
				words[n++] = USE(2, 0);
				words[n++] = 0x7080;
				words[n++] = 0x9000;
			}
			trace_reader *reader = hand_written_ring(words, (uint32_t)n);
			sim_curve *curves[SIM_LEVEL_COUNT];
			size_t count;
			cr_assert_eq(sim_curve_new_levels(curves, &count, &config, levels == 1 ? "l1d" : "l1d,l3", 0, &status),
			             0, "%s", status.message);
			cr_assert_eq(count, (size_t)levels);
			uint64_t records = 0;
			int rc = sim_curve_run_reader_all(curves, count, reader, NULL, &records, &status);
			if (bad[b].says) {
				cr_assert_neq(rc, 0, "bad use %zu (%d curves) is accepted", b, levels);
				cr_assert(strstr(status.message, bad[b].says) && strstr(status.message, "block 0"),
				          "bad use %zu: %s", b, status.message);
			} else {
				cr_assert_eq(rc, 0, "%s", status.message);
				cr_assert_eq(records, 12, "three uses of four records (%llu)", (unsigned long long)records);
				uint64_t misses, accesses;
				cr_assert_eq(sim_curve_point(curves[0], SIZE_MAX, 64, 0, &misses, &accesses), 0);
				cr_assert_eq(accesses, 6, "the L1D's data references (%llu)", (unsigned long long)accesses);
				cr_assert_eq(misses, 6, "a load and a store each time, one line apart");
				trace_reader_info info;
				trace_reader_get_info(reader, &info);
				cr_assert_eq(info.records, 12);
			}
			for (size_t i = 0; i < count; i++)
				sim_curve_free(curves[i]);
			trace_reader_close(reader, NULL);
		}
	}
}

/* One feed of several simulators (sim_feed_reader) on the ring's entries:
 * each walks its own copy of every run (the classifying loop, the plain
 * entries' loop, the records they stand for under --check) and counts what
 * a run of its own counts; a bad use is still the reader's error. */
Test(trace_ring, a_feed_of_several_simulators_gives_each_its_own_run)
{
	plumb_status status;
	sim_config config[3];
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(sim_preset(&config[i], "default", &status), 0, "%s", status.message);
		config[i].cores = 1;
		config[i].classify = i == 0;
		config[i].check = i == 2;
	}
	uint64_t words[600];
	size_t n = definition_and_uses(words, 150);
	sim *together[3], *alone[3];
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(sim_new(&together[i], &config[i], &status), 0, "%s", status.message);
		cr_assert_eq(sim_new(&alone[i], &config[i], &status), 0, "%s", status.message);
	}
	trace_reader *reader = hand_written_ring(words, (uint32_t)n);
	sim_feed feed = { .sims = together, .count = 3 };
	cr_assert_eq(sim_feed_reader(&feed, reader, &status), 0, "%s", status.message);
	cr_assert_eq(feed.records, 600, "150 uses of four records (%llu)", (unsigned long long)feed.records);
	trace_reader_close(reader, NULL);
	for (int i = 0; i < 3; i++) {
		reader = hand_written_ring(words, (uint32_t)n);
		uint64_t records = 0;
		cr_assert_eq(sim_run_reader(alone[i], reader, NULL, false, &records, &status), 0, "%s", status.message);
		cr_assert_eq(records, 600);
		trace_reader_close(reader, NULL);
		cr_assert(memcmp(sim_statistics(together[i]), sim_statistics(alone[i]), sizeof(sim_stats)) == 0,
		          "simulator %d: fed with the others, it counts differently", i);
		cr_assert_eq(sim_statistics(together[i])->references[SIM_IFETCH], 300);
		sim_free(alone[i]);
	}
	n = definition_and_uses(words, 3);
	words[n++] = USE(1, 0);   /* one data word where the definition has two */
	words[n++] = 0x7040;
	reader = hand_written_ring(words, (uint32_t)n);
	sim_feed bad = { .sims = together, .count = 2 };
	cr_assert_neq(sim_feed_reader(&bad, reader, &status), 0, "a bad use is accepted");
	cr_assert(strstr(status.message, "data count") && strstr(status.message, "block 0"), "%s", status.message);
	trace_reader_close(reader, NULL);
	for (int i = 0; i < 3; i++)
		sim_free(together[i]);
}

/* plumb explain's feed: no simulator in sims, an observer that walks each
 * run through simulators of its own and gives back the first one's settled
 * copy (observer_walks).  The runs come unchecked; each simulator counts
 * what a feed of it alone counts, the plain entries' loop and the
 * classifying one alike, the records are the uses', and a bad use after
 * good ones is still the reader's error. */
typedef struct walking_observer {
	sim *own[2];
	size_t unchecked;   /* runs that came unchecked */
} walking_observer;

static int walk_own(sim_feed *feed, const trace_record *records, size_t n, const trace_compact *compact,
                    plumb_status *status)
{
	walking_observer *o = feed->context;
	for (int i = 0; i < 2; i++) {
		if (!compact) {
			if (sim_access_batch(o->own[i], records, n, status) != 0)
				return -1;
			continue;
		}
		trace_compact copy = *compact;
		o->unchecked += i == 0 && copy.unchecked;
		if (sim_access_compact(o->own[i], &copy, status) != 0)
			return -1;
		if (i == 0)
			feed->walked = copy;
	}
	return 0;
}

Test(trace_ring, an_observer_that_walks_the_runs_gets_them_unchecked)
{
	plumb_status status;
	sim_config config[2];
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(sim_preset(&config[i], "default", &status), 0, "%s", status.message);
		config[i].cores = 1;
		config[i].classify = i == 1;
		config[i].check = false;
	}
	/* runs of uses between other entries: a thread switch, a second
	 * definition, a single reference */
	uint64_t words[600];
	size_t n = definition_and_uses(words, 90);
	words[n++] = 3ull << 60 | 0;   /* thread 0 again */
	for (int i = 0; i < 40; i++) {
		words[n++] = USE(2, 0);
		words[n++] = 0x7000 + 64u * (unsigned)i;
		words[n++] = 0x9000 + 64u * (unsigned)i;
	}
	words[n++] = 4ull << 60 | 2ull << 16 | 8;   /* SINGLE: a write of 8 bytes */
	words[n++] = 0xa000;
	words[n++] = 0x401003;
	for (int i = 0; i < 20; i++) {
		words[n++] = USE(2, 0);
		words[n++] = 0xb000 + 64u * (unsigned)i;
		words[n++] = 0x9000;
	}
	cr_assert_lt(n, 512, "one block");
	walking_observer o;
	for (int i = 0; i < 2; i++)
		cr_assert_eq(sim_new(&o.own[i], &config[i], &status), 0, "%s", status.message);
	o.unchecked = 0;
	trace_reader *reader = hand_written_ring(words, (uint32_t)n);
	sim *none[1] = { NULL };
	sim_feed feed = { .sims = none, .count = 0, .observe = walk_own, .context = &o, .observer_walks = true };
	cr_assert_eq(sim_feed_reader(&feed, reader, &status), 0, "%s", status.message);
	cr_assert_eq(feed.records, 4 * 150 + 1, "150 uses of four records and a single (%llu)",
	             (unsigned long long)feed.records);
	cr_expect_geq(o.unchecked, 3, "the runs came unchecked (%zu)", o.unchecked);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	cr_expect_eq(info.records, 4 * 150 + 1);
	trace_reader_close(reader, NULL);
	for (int i = 0; i < 2; i++) {
		sim *alone;
		cr_assert_eq(sim_new(&alone, &config[i], &status), 0, "%s", status.message);
		reader = hand_written_ring(words, (uint32_t)n);
		sim_feed one = { .sims = &alone, .count = 1 };
		cr_assert_eq(sim_feed_reader(&one, reader, &status), 0, "%s", status.message);
		trace_reader_close(reader, NULL);
		cr_assert(memcmp(sim_statistics(o.own[i]), sim_statistics(alone), sizeof(sim_stats)) == 0,
		          "simulator %d: walked by the observer, it counts differently", i);
		cr_assert_eq(sim_statistics(alone)->references[SIM_IFETCH], 2 * 150);
		sim_free(alone);
		sim_free(o.own[i]);
	}
	/* a bad use after good ones */
	n = definition_and_uses(words, 3);
	words[n++] = USE(1, 0);   /* one data word where the definition has two */
	words[n++] = 0x7040;
	for (int i = 0; i < 2; i++)
		cr_assert_eq(sim_new(&o.own[i], &config[i], &status), 0, "%s", status.message);
	reader = hand_written_ring(words, (uint32_t)n);
	sim_feed bad = { .sims = none, .count = 0, .observe = walk_own, .context = &o, .observer_walks = true };
	cr_assert_neq(sim_feed_reader(&bad, reader, &status), 0, "a bad use is accepted");
	cr_assert(strstr(status.message, "data count") && strstr(status.message, "block 0"), "%s", status.message);
	trace_reader_close(reader, NULL);
	for (int i = 0; i < 2; i++)
		sim_free(o.own[i]);
}

/* ---- plumbgrind's L1 filter (--plumb-filter, vg/pg_filter.h) ---- */

static sim_config basic_cachegrind(void)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, "cachegrind", &status), 0, "%s", status.message);
	config.classify = false;
	config.thread_map = SIM_MAP_MODULO;
	return config;
}

/* Machines the tool's L1s can be besides cachegrind's: a 12-way L1D (its
 * sets' offsets a multiplication in the inline checks), a modify that is a
 * read then a write, MOESI; a 4-way L1D, a modify that is a write, accesses
 * cut to 16 bytes; 3 is cachegrind's again, run with --plumb-vector=no (the
 * scalar search for deeper hits, which an AVX-512 host never takes). */
static sim_config filter_machine(int which)
{
	sim_config config = basic_cachegrind();
	if (which == 1) {
		config.cache[SIM_L1D].size = 48 * 1024;
		config.cache[SIM_L1D].assoc = 12;
		config.modify = SIM_MODIFY_READ_WRITE;
		config.protocol = SIM_MOESI;
	} else if (which == 2) {
		config.cache[SIM_L1D].size = 16 * 1024;
		config.cache[SIM_L1D].assoc = 4;
		config.cache[SIM_L1I].size = 16 * 1024;
		config.cache[SIM_L1I].assoc = 2;
		config.modify = SIM_MODIFY_WRITE;
		config.max_access_size = 16;
	}
	return config;
}

/* plumb sim's JSON report of what reader gives, on cachegrind's machine
 * (--basic, as `plumb sim -p cachegrind --basic -- PROG`) or another. */
static char *report_on(trace_reader *reader, sim_config config)
{
	plumb_status status;
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	uint64_t records = 0;
	cr_assert_eq(sim_run_reader(s, reader, NULL, false, &records, &status), 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	sim_run_facts facts = { .trace = "program", .format = TRACE_FORMAT_NATIVE, .records = records };
	output_report *report = sim_run_report(s, &facts, 10, &status);
	cr_assert_not_null(report, "%s", status.message);
	char *text = NULL;
	size_t length = 0;
	FILE *stream = open_memstream(&text, &length);
	cr_assert_not_null(stream);
	cr_assert_eq(output_write(report, OUTPUT_JSON, stream, &status), 0, "%s", status.message);
	fclose(stream);
	output_report_free(report);
	sim_free(s);
	return text;
}

/* The L1 filter changes no figure of plumb sim's report (every table,
 * records, threads, regions), on programs with threads, nested regions, the
 * collection switch and region markers entered many times: one run with the
 * tool keeping the L1s (sim_filter_option's option) writes its lackey text
 * too, and the text's records, every one simulated, give the same report. */
Test(trace_ring, the_l1_filter_changes_no_figure, .init = find_target_and_tool, .timeout = 240)
{
	char *threads[] = { target, "threads", "3", "5000", NULL };
	char *loop[] = { target, "loop", "20000", "40", NULL };
	char *collect[] = { target, "collect", "7000", NULL };
	char *nested[] = { target, "nested", "3000", "4000", NULL };
	char *const *programs[] = { threads, loop, collect, nested };
	for (int machine = 0; machine < 4; machine++)
		for (size_t p = 0; p < 4; p++) {
			sim_config config = filter_machine(machine);
			plumb_status status;
			char filter[256];
			cr_assert_eq(sim_filter_option(&config, filter, sizeof filter, &status), 1, "machine %d: %s", machine,
			             status.message);
			char dir[PATH_MAX], text_path[PATH_MAX + 16], option[PATH_MAX + 32];
			temp_template(dir, sizeof dir, "plumb-filter-XXXXXX");
			cr_assert_not_null(mkdtemp(dir));
			snprintf(text_path, sizeof text_path, "%s/trace.lackey", dir);
			snprintf(option, sizeof option, "--plumb-trace=%s", text_path);
			const char *const options[] = { filter, option, machine == 3 ? "--plumb-vector=no" : NULL, NULL };
			trace_reader *reader;
			cr_assert_eq(trace_reader_open_command_options(&reader, programs[p], options, &status), 0, "%s",
			             status.message);
			char *with = report_on(reader, config);
			cr_assert_eq(trace_reader_open(&reader, text_path, TRACE_FORMAT_LACKEY, &status), 0, "%s", status.message);
			char *without = report_on(reader, config);
			cr_assert(strstr(with, "\"records\""));
			cr_assert_str_eq(with, without, "machine %d, %s %s: the reports differ", machine, programs[p][1],
			                 programs[p][2]);
			free(with);
			free(without);
			unlink(text_path);
			rmdir(dir);
		}
}

/* A ring of the filter's entries written by hand: a bad one is an error
 * naming the block (the reader's checks, then the simulator's: a least
 * recent way the simulator's L1 does not have). */
Test(trace_ring, a_bad_filter_entry_is_an_error)
{
	static const struct {
		uint64_t words[8];
		int count;
		const char *says;
	} bad[] = {
		{ { 8ull << 60, 1, 2, 3, 4 }, 5, "cut by the block's end" },
		{ { 8ull << 60 | 1, 1, 2, 3, 0, 6 }, 6, "a bad count entry" },
		{ { 8ull << 60, 1, 0, 0, 5, 1 }, 6, "a bad count entry" },
		{ { 9ull << 60 | 1ull << 32 | 3ull << 16 | 4, 0x7000, 0xffffffffffffffull }, 3, "a bad general reference" },
		{ { 9ull << 60 | 0ull << 32 | 1ull << 16 | 4, 0x7000 }, 2, "a bad general reference" },
		{ { 9ull << 60 | 2ull << 32 | 1ull << 16 | 4, 0x7000, 0xffffffffffffffull }, 3, "cut by the block's end" },
		{ { 1ull << 60, 0x7000 }, 2, "does not hold" },
		/* the simulator's L1D is empty: its least recent way is no line 0x1c0 */
		{ { 9ull << 60 | 1ull << 32 | 1ull << 16 | 4, 0x7000, 0x1c0 }, 3, "the tool's L1s and plumb's disagree" },
		/* a reference of one line said to touch two */
		{ { 9ull << 60 | 2ull << 32 | 1ull << 16 | 4, 0x7000, 0xffffffffffffffull, 0xffffffffffffffull }, 4, "2 lines" },
	};
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, "cachegrind", &status), 0, "%s", status.message);
	config.classify = false;
	for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
		trace_reader *reader = hand_written_ring_of(bad[b].words, (uint32_t)bad[b].count, true);
		sim *s;
		cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
		uint64_t records = 0;
		cr_assert_neq(sim_run_reader(s, reader, NULL, false, &records, &status), 0, "entry %zu is accepted", b);
		cr_assert(strstr(status.message, bad[b].says), "entry %zu: %s", b, status.message);
		sim_free(s);
		trace_reader_close(reader, NULL);
	}
}
