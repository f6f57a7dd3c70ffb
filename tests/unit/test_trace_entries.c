/* Native traces that keep plumbgrind's entries (format 1.3, entry blocks):
 * a file written from the ring's entries and a records file of the same run
 * (its text trace, written beside the ring) hold the same records, give the
 * same trace statistics, convert to the same lackey text and simulate to
 * the same statistics, the entries walked as a live run's are; entry blocks
 * built here check the reader's limits (a newer version, bad entries, a
 * wrong record count) and its small batches; a file of many entry blocks
 * opened from a path loads them ahead in a worker and gives the same
 * records, the same error at the same record and a clean early close. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "instrument/instrument.h"
#include "sim/sim.h"
#include "trace/trace.h"
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"
#include "trace/trace_stats.h"
#include "instrument_target.h"
#include "trace_test_util.h"
#include "../temp_folder.h"

#define BATCH 4096

static char target[PATH_MAX + 64];

static void find_target_and_tool(void)
{
	char tool_dir[PATH_MAX];
	instrument_target_find(target, sizeof target, tool_dir, sizeof tool_dir);
}

/* Every record of a file, markers' names copied. */
static trace_record *read_all(const char *path, size_t *count)
{
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	size_t capacity = 1 << 16, n = 0;
	trace_record *all = malloc(capacity * sizeof *all);
	long got;
	while ((got = trace_reader_read(reader, all + n, capacity - n < BATCH ? capacity - n : BATCH, &status)) > 0) {
		for (size_t i = n; i < n + (size_t)got; i++)
			if (trace_is_marker(&all[i]))
				all[i].address = (uint64_t)(uintptr_t)strdup(trace_region_name(&all[i]));
		n += (size_t)got;
		if (n == capacity)
			cr_assert_not_null(all = realloc(all, (capacity *= 2) * sizeof *all));
	}
	cr_assert_eq(got, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	*count = n;
	return all;
}

static void free_all(trace_record *all, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (trace_is_marker(&all[i]))
			free((char *)(uintptr_t)all[i].address);
	free(all);
}

static void copy_file(const char *from, trace_format from_format, const char *to, trace_format to_format)
{
	trace_reader *reader;
	trace_writer *writer;
	plumb_status status;
	cr_assert_eq(trace_reader_open(&reader, from, from_format, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_open(&writer, to, to_format, &status), 0, "%s", status.message);
	static trace_record batch[BATCH];
	long n;
	while ((n = trace_reader_read(reader, batch, BATCH, &status)) > 0)
		cr_assert_eq(trace_writer_write(writer, batch, (size_t)n, &status), 0, "%s", status.message);
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_close(writer, &status), 0, "%s", status.message);
}

static void stats_of(const char *path, trace_stats *stats)
{
	plumb_status status;
	cr_assert_eq(trace_stats_init(stats, 64, 4096, 1u << 20, &status), 0, "%s", status.message);
	size_t count;
	trace_record *all = read_all(path, &count);
	cr_assert_eq(trace_stats_add(stats, all, count, &status), 0, "%s", status.message);
	free_all(all, count);
}

/* The simulator's statistics and code table; through the compact path where
 * the file has entries (and *compact_runs counts the runs it took). */
static void simulate_file(const char *path, const char *preset, const char *setting, sim_stats *stats,
                          sim_code_stats *code, size_t *code_count, size_t *compact_runs)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, preset, &status), 0, "%s", status.message);
	if (setting)
		cr_assert_eq(sim_config_assign(&config, setting, &status), 0, "%s", status.message);
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	const trace_record *batch;
	trace_compact compact;
	long n;
	*compact_runs = 0;
	while ((n = trace_reader_view_compact(reader, &batch, &compact, BATCH, &status)) > 0) {
		if (compact.words) {
			(*compact_runs)++;
			cr_assert_eq(sim_access_compact(s, &compact, &status), 0, "%s", status.message);
		} else {
			cr_assert_eq(sim_access_batch(s, batch, (size_t)n, &status), 0, "%s", status.message);
		}
	}
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	memcpy(stats, sim_statistics(s), sizeof *stats);
	*code_count = sim_hot_code(s, code, 64);
	sim_free(s);
}

static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *data = malloc((size_t)n + 1);
	cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return data;
}

/* One run: the ring's entries into an entry-block file, the same run's
 * lackey text (--plumb-trace beside the ring) into a records file. */
static void record_both(char *const argv[], const char *dir, char *compact_path, char *records_path)
{
	char text_path[256], option[300];
	snprintf(text_path, sizeof text_path, "%s/run.lackey", dir);
	snprintf(compact_path, 256, "%s/compact.ptrace", dir);
	snprintf(records_path, 256, "%s/records.ptrace", dir);
	snprintf(option, sizeof option, "--plumb-trace=%s", text_path);
	const char *const options[] = { option, NULL };
	trace_reader *reader;
	trace_writer *writer;
	plumb_status status;
	cr_assert_eq(trace_reader_open_command_options(&reader, argv, options, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_open(&writer, compact_path, TRACE_FORMAT_NATIVE, &status), 0, "%s", status.message);
	cr_assert(trace_writer_can_take_entries(writer, reader), "the ring's entries go to a native writer");
	long n;
	uint64_t records = 0;
	while ((n = trace_writer_take_entries(writer, reader, &status)) > 0)
		records += (uint64_t)n;
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	cr_assert_eq(trace_writer_close(writer, &status), 0, "%s", status.message);
	cr_assert_gt(records, 20000);
	copy_file(text_path, TRACE_FORMAT_LACKEY, records_path, TRACE_FORMAT_NATIVE);
	unlink(text_path);
	/* the first is entries (version 1.3, a TCMP block), the second records */
	size_t size;
	unsigned char *bytes = (unsigned char *)slurp(compact_path, &size);
	cr_assert_eq(bytes[10], 3, "version 1.3");
	cr_assert_eq(trace_get_u32(bytes + 16), TRACE_NATIVE_ENTRIES_MAGIC);
	free(bytes);
	bytes = (unsigned char *)slurp(records_path, &size);
	cr_assert_eq(trace_get_u32(bytes + 16), TRACE_NATIVE_BLOCK_MAGIC);
	free(bytes);
}

static void records_equal(const char *a_path, const char *b_path)
{
	size_t na, nb;
	trace_record *a = read_all(a_path, &na), *b = read_all(b_path, &nb);
	cr_assert_eq(na, nb, "%zu records against %zu", na, nb);
	size_t markers = 0;
	for (size_t i = 0; i < na; i++) {
		const trace_record *x = &a[i], *y = &b[i];
		cr_assert(x->kind == y->kind && x->thread == y->thread && x->size == y->size && x->flags == y->flags &&
		          x->instruction_address == y->instruction_address && x->time == y->time, "record %zu differs", i);
		if (trace_is_marker(x)) {
			markers++;
			cr_assert_str_eq(trace_region_name(x), trace_region_name(y), "marker %zu", i);
		} else {
			cr_assert_eq(x->address, y->address, "record %zu: %#llx against %#llx", i, (unsigned long long)x->address,
			             (unsigned long long)y->address);
		}
	}
	cr_assert_gt(markers, 0, "the region markers");
	free_all(a, na);
	free_all(b, nb);
}

Test(trace_entries, a_compact_file_and_a_records_file_of_one_run_agree, .init = find_target_and_tool, .timeout = 240)
{
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-entries-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char compact[256], records[256];
	char *threads[] = { target, "threads", "3", "4000", NULL };
	record_both(threads, dir, compact, records);

	/* every reader's records: the same, one by one */
	records_equal(compact, records);

	/* trace stats */
	trace_stats x, y;
	stats_of(compact, &x);
	stats_of(records, &y);
	cr_assert_eq(x.records, y.records);
	cr_assert_eq(x.region_markers, y.region_markers);
	cr_assert_gt(x.region_markers, 0);
	cr_assert(memcmp(x.by_kind, y.by_kind, sizeof x.by_kind) == 0 &&
	          memcmp(x.bytes_by_kind, y.bytes_by_kind, sizeof x.bytes_by_kind) == 0 &&
	          memcmp(x.sizes, y.sizes, sizeof x.sizes) == 0 && x.line_straddles == y.line_straddles &&
	          x.with_instruction_address == y.with_instruction_address && x.with_time == y.with_time &&
	          memcmp(x.min_address, y.min_address, sizeof x.min_address) == 0 &&
	          memcmp(x.max_address, y.max_address, sizeof x.max_address) == 0, "the statistics differ");
	cr_assert_eq(x.thread_count, y.thread_count);
	cr_assert_eq(x.thread_count, 4);
	cr_assert(memcmp(x.threads, y.threads, x.thread_count * sizeof *x.threads) == 0, "the threads differ");
	bool ex, ey;
	cr_assert_eq(trace_distinct_count(&x.lines, &ex), trace_distinct_count(&y.lines, &ey));
	cr_assert_eq(trace_distinct_count(&x.pages, &ex), trace_distinct_count(&y.pages, &ey));
	trace_stats_free(&x);
	trace_stats_free(&y);

	/* trace convert: the same lackey text, byte for byte */
	char lackey_a[300], lackey_b[300];
	snprintf(lackey_a, sizeof lackey_a, "%s/a.lackey", dir);
	snprintf(lackey_b, sizeof lackey_b, "%s/b.lackey", dir);
	copy_file(compact, TRACE_FORMAT_AUTO, lackey_a, TRACE_FORMAT_LACKEY);
	copy_file(records, TRACE_FORMAT_AUTO, lackey_b, TRACE_FORMAT_LACKEY);
	size_t sa, sb;
	char *ta = slurp(lackey_a, &sa), *tb = slurp(lackey_b, &sb);
	cr_assert_eq(sa, sb);
	cr_assert(memcmp(ta, tb, sa) == 0, "the lackey texts differ");
	free(ta);
	free(tb);

	/* the simulator: entries walked as a live run's against the records */
	static const char *const machines[][2] = { { "cachegrind", "classify=no" }, { "default", "cores=2" },
	                                           { "default", "l3.size=1M" }, { "default", "check=yes" } };
	for (size_t m = 0; m < sizeof machines / sizeof machines[0]; m++) {
		static sim_stats sx, sy;
		static sim_code_stats cx[64], cy[64];
		size_t nx, ny, runs_x, runs_y;
		simulate_file(compact, machines[m][0], machines[m][1], &sx, cx, &nx, &runs_x);
		simulate_file(records, machines[m][0], machines[m][1], &sy, cy, &ny, &runs_y);
		cr_assert_gt(runs_x, 0, "the entries as they are");
		cr_assert_eq(runs_y, 0);
		cr_assert_gt(sx.references[0], 20000);
		cr_assert(memcmp(&sx, &sy, sizeof sx) == 0, "%s %s: the statistics differ", machines[m][0], machines[m][1]);
		cr_assert_eq(nx, ny);
		cr_assert(memcmp(cx, cy, nx * sizeof *cx) == 0, "the code tables differ");
	}
	unlink(lackey_a);
	unlink(lackey_b);
	unlink(compact);
	unlink(records);
	rmdir(dir);
}

/* ---- Entry blocks built here ---- */

static uint64_t event(uint64_t iaddr, unsigned size, unsigned kind)
{
	return iaddr | (uint64_t)size << 48 | (uint64_t)kind << 62;
}

/* A loop's entries: two definitions, a thread switch, a marker pair, a
 * single reference and `uses` uses of a fetch-read-fetch-write flush. */
static size_t loop_words(uint64_t *w, size_t uses)
{
	size_t n = 0;
	w[n++] = (uint64_t)TRACE_ENTRY_DEFINE << 60 | 4ull << 32 | 0;
	w[n++] = event(0x401000, 4, 0);
	w[n++] = event(0x401000, 8, 1);
	w[n++] = event(0x401004, 3, 0);
	w[n++] = event(0x401004, 4, 2);
	w[n++] = (uint64_t)TRACE_ENTRY_DEFINE << 60 | 2ull << 32 | 1;
	w[n++] = event(0x401007, 2, 0);
	w[n++] = event(0x401007, 4, 3);
	w[n++] = (uint64_t)TRACE_ENTRY_MARKER << 60 | 1ull << 56 | 4ull << 32 | 0;
	memcpy(&w[n++], "loop\0\0\0\0", 8);
	for (size_t i = 0; i < uses; i++) {
		w[n++] = (uint64_t)TRACE_ENTRY_USE << 60 | 2ull << 32 | 0;
		w[n++] = 0x7ff000 + 8 * i;
		w[n++] = 0x601000 + 4 * i;
	}
	w[n++] = (uint64_t)TRACE_ENTRY_THREAD << 60 | 1;
	w[n++] = (uint64_t)TRACE_ENTRY_USE << 60 | 1ull << 32 | 1;
	w[n++] = 0x602000;
	w[n++] = (uint64_t)TRACE_ENTRY_SINGLE << 60 | 1ull << 16 | 8;
	w[n++] = 0x603000;
	w[n++] = 0x401010;
	w[n++] = (uint64_t)TRACE_ENTRY_THREAD << 60 | 0;
	w[n++] = (uint64_t)TRACE_ENTRY_MARKER << 60 | 0ull << 56 | 4ull << 32 | 0;
	memcpy(&w[n++], "loop\0\0\0\0", 8);
	return n;
}

/* A 1.`minor` trace of one entry block of words (encoded as the writer
 * does unless raw), its header saying `records` (0: what they stand for). */
static unsigned char *entry_file(const uint64_t *words, size_t n, unsigned minor, uint32_t records, bool raw,
                                 size_t *size)
{
	uint64_t *out = malloc(n * 8 + 8), *copy = malloc(n * 8 + 8);
	memcpy(copy, words, n * 8);
	uint64_t stood_for = 0;
	trace_entries e;
	trace_entries_init(&e, NULL);
	if (raw)
		memcpy(out, words, n * 8);
	else
		cr_assert_eq(trace_entries_scan(&e, copy, n, out, TRACE_SCAN_ENCODE, &stood_for), 0, "%s", e.error);
	trace_entries_free(&e);
	if (records == 0)
		records = (uint32_t)stood_for;
	size_t bound = ZSTD_compressBound(n * 8);
	unsigned char *file = calloc(1, 16 + 32 + bound + 32);
	memcpy(file, TRACE_NATIVE_MAGIC, 8);
	file[8] = 1;
	file[10] = (unsigned char)minor;
	trace_put_u32(file + 12, 16);
	unsigned char *b = file + 16;
	size_t packed = ZSTD_compress(b + 32, bound, out, n * 8, 3);
	cr_assert(!ZSTD_isError(packed));
	trace_put_u32(b, TRACE_NATIVE_ENTRIES_MAGIC);
	trace_put_u32(b + 8, records);
	trace_put_u32(b + 12, (uint32_t)(n * 8));
	trace_put_u32(b + 16, (uint32_t)packed);
	trace_put_u64(b + 24, trace_checksum(b + 32, packed, 0));
	trace_put_u32(b + 20, trace_block_header_check(b));
	unsigned char *end = b + 32 + packed;
	trace_put_u32(end, TRACE_NATIVE_END_MAGIC);
	trace_put_u32(end + 4, 1);
	trace_put_u64(end + 24, records);
	trace_put_u32(end + 20, trace_block_header_check(end));
	*size = (size_t)(end + 32 - file);
	free(out);
	free(copy);
	return file;
}

static long read_memory(const unsigned char *file, size_t size, size_t batch, trace_record *all, size_t capacity,
                        plumb_status *status)
{
	trace_reader *reader;
	if (trace_reader_open_memory(&reader, file, size, TRACE_FORMAT_NATIVE, status) < 0)
		return -1;
	size_t n = 0;
	long got;
	while ((got = trace_reader_read(reader, all + n, capacity - n < batch ? capacity - n : batch, status)) > 0)
		n += (size_t)got;
	trace_reader_close(reader, NULL);
	return got < 0 ? -1 : (long)n;
}

Test(trace_entries, small_batches_expand_the_same_records)
{
	static uint64_t words[4096];
	size_t n = loop_words(words, 1000);
	size_t size;
	unsigned char *file = entry_file(words, n, 3, 0, false, &size);
	static trace_record whole[8192], part[8192];
	plumb_status status;
	long count = read_memory(file, size, BATCH, whole, 8192, &status);
	cr_assert_eq(count, 1 + 4000 + 2 + 1 + 1, "%s", count < 0 ? status.message : "");
	cr_assert_eq(whole[0].kind, TRACE_REGION_BEGIN);
	cr_assert_eq(whole[1].kind, TRACE_INSTRUCTION);
	cr_assert_eq(whole[1].address, 0x401000);
	cr_assert_eq(whole[2].address, 0x7ff000);
	cr_assert_eq(whole[4].address, 0x601000);
	cr_assert_eq(whole[4 * 999 + 2].address, 0x7ff000 + 8 * 999, "the differences undone");
	cr_assert_eq(whole[4001].thread, 1);
	cr_assert_eq(whole[4001].kind, TRACE_INSTRUCTION);
	cr_assert_eq(whole[4002].kind, TRACE_MODIFY);
	cr_assert_eq(whole[4003].kind, TRACE_READ);
	cr_assert_eq(whole[4003].address, 0x603000);
	cr_assert_eq(whole[4004].kind, TRACE_REGION_END);
	cr_assert_eq(whole[4004].thread, 0);
	for (size_t batch = 1; batch < 9; batch++) {
		cr_assert_eq(read_memory(file, size, batch, part, 8192, &status), count, "batch %zu", batch);
		for (long i = 0; i < count; i++)
			cr_assert(part[i].address == whole[i].address || trace_is_marker(&part[i]), "batch %zu, record %ld",
			          batch, i);
	}
	free(file);
}

static void expect_error(const unsigned char *file, size_t size, const char *message)
{
	static trace_record all[8192];
	plumb_status status;
	cr_assert_eq(read_memory(file, size, BATCH, all, 8192, &status), -1, "no error; wanted '%s'", message);
	cr_assert(strstr(status.message, message), "'%s' does not say '%s'", status.message, message);
}

Test(trace_entries, bad_entry_blocks_are_errors)
{
	static uint64_t words[4096];
	size_t n = loop_words(words, 10), size;
	/* a newer version: one clear error before anything is read */
	unsigned char *file = entry_file(words, n, 4, 0, false, &size);
	expect_error(file, size, "memory: native trace version 1.4 is newer than this plumb reads (versions 1.0 to 1.3)");
	free(file);
	/* the header's record count against what the entries stand for */
	file = entry_file(words, n, 3, 12345, false, &size);
	expect_error(file, size, "block 0 at offset 16: its entries stand for 45 records, its header says 12345 (corrupt)");
	free(file);
	/* a use of a definition never made */
	uint64_t saved = words[10];
	words[10] = (uint64_t)TRACE_ENTRY_USE << 60 | 7;
	file = entry_file(words, n, 3, 45, true, &size);
	expect_error(file, size, "block 0 at offset 16: a use of an unknown definition (corrupt)");
	free(file);
	words[10] = saved;
	/* an entry cut by the block's end */
	file = entry_file(words, n - 1, 3, 45, true, &size);
	expect_error(file, size, "an entry cut by the block's end");
	free(file);
	/* a kind no entry has */
	words[n] = 0xfull << 60;
	file = entry_file(words, n + 1, 3, 45, true, &size);
	expect_error(file, size, "an entry of an unknown kind");
	free(file);
	/* calls and returns are not kept in files */
	words[n] = (uint64_t)TRACE_ENTRY_RETURN << 60 | 1;
	file = entry_file(words, n + 1, 3, 45, true, &size);
	expect_error(file, size, "a call or return entry");
	free(file);
}

/* ---- Many entry blocks, loaded ahead ---- */

#define AHEAD_BLOCKS 12
#define AHEAD_USES 2000

/* A 1.3 trace of AHEAD_BLOCKS entry blocks: the first is loop_words', the
 * others `AHEAD_USES` uses of its first definition (their differences run
 * on from block to block, as the writer's do); block `bad` (if below
 * AHEAD_BLOCKS) gets a wrong payload checksum.  *total: the records. */
static unsigned char *ahead_file(size_t bad, size_t *size, uint64_t *total)
{
	static uint64_t words[4 * AHEAD_USES + 64], encoded[4 * AHEAD_USES + 64];
	size_t bound = ZSTD_compressBound(sizeof words);
	unsigned char *file = calloc(1, 16 + AHEAD_BLOCKS * (32 + bound) + 32);
	memcpy(file, TRACE_NATIVE_MAGIC, 8);
	file[8] = 1;
	file[10] = 3;
	trace_put_u32(file + 12, 16);
	unsigned char *b = file + 16;
	trace_entries e;
	trace_entries_init(&e, NULL);
	*total = 0;
	for (size_t k = 0; k < AHEAD_BLOCKS; k++) {
		size_t n = 0;
		if (k == 0)
			n = loop_words(words, AHEAD_USES);
		else
			for (size_t i = 0; i < AHEAD_USES; i++) {
				words[n++] = (uint64_t)TRACE_ENTRY_USE << 60 | 2ull << 32 | 0;
				words[n++] = 0x7ff000 + 8 * (i + k);
				words[n++] = 0x601000 + 4 * (i * k);
			}
		uint64_t records;
		cr_assert_eq(trace_entries_scan(&e, words, n, encoded, TRACE_SCAN_ENCODE, &records), 0, "%s", e.error);
		size_t packed = ZSTD_compress(b + 32, bound, encoded, n * 8, 3);
		cr_assert(!ZSTD_isError(packed));
		trace_put_u32(b, TRACE_NATIVE_ENTRIES_MAGIC);
		trace_put_u32(b + 4, (uint32_t)k);
		trace_put_u32(b + 8, (uint32_t)records);
		trace_put_u32(b + 12, (uint32_t)(n * 8));
		trace_put_u32(b + 16, (uint32_t)packed);
		trace_put_u64(b + 24, trace_checksum(b + 32, packed, (uint32_t)k) + (k == bad));
		trace_put_u32(b + 20, trace_block_header_check(b));
		b += 32 + packed;
		*total += records;
	}
	trace_entries_free(&e);
	trace_put_u32(b, TRACE_NATIVE_END_MAGIC);
	trace_put_u32(b + 4, AHEAD_BLOCKS);
	trace_put_u64(b + 24, *total);
	trace_put_u32(b + 20, trace_block_header_check(b));
	*size = (size_t)(b + 32 - file);
	return file;
}

typedef struct ahead_outcome {
	long records;                  /* handed out before the end or the error */
	long last;                     /* the last call's result: 0 or -1 */
	char message[PLUMB_MESSAGE_MAX];
	int ahead;                     /* trace_reader_set_background's answer */
	trace_reader_info info;
} ahead_outcome;

/* Reads path (ahead or not) in batches of `batch` records, or as the
 * simulator does (trace_reader_view_compact) when compact. */
static ahead_outcome read_ahead(const char *path, int ahead, size_t batch, bool compact, trace_record *out,
                                size_t capacity)
{
	ahead_outcome o;
	memset(&o, 0, sizeof o);
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	o.ahead = trace_reader_set_background(reader, ahead);
	for (;;) {
		long n;
		if (compact) {
			const trace_record *lent;
			trace_compact c;
			n = trace_reader_view_compact(reader, &lent, &c, batch, &status);
			if (n > 0 && c.words) {
				/* the run's records, expanded as the simulator would see them */
				for (const uint64_t *w = c.words; w < c.end;) {
					uint32_t id = (uint32_t)*w;
					const trace_record *t = c.templates + c.first[id];
					size_t data = 0;
					for (size_t i = 0; i < c.count[id]; i++) {
						cr_assert_lt((size_t)o.records, capacity);
						trace_record r = t[i];
						if (r.kind != TRACE_INSTRUCTION)
							r.address = w[1 + data++];
						r.thread = c.thread;
						out[o.records++] = r;
					}
					w += 1 + c.data[id];
				}
				continue;
			}
			if (n > 0) {
				cr_assert_leq((size_t)o.records + (size_t)n, capacity);
				memcpy(out + o.records, lent, (size_t)n * sizeof *out);
			}
		} else {
			size_t want = batch;
			if ((size_t)o.records + want > capacity)
				want = capacity - (size_t)o.records;
			n = trace_reader_read(reader, out + o.records, want, &status);
		}
		if (n <= 0) {
			o.last = n;
			if (n < 0)
				snprintf(o.message, sizeof o.message, "%s", status.message);
			break;
		}
		o.records += n;
	}
	trace_reader_get_info(reader, &o.info);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);
	return o;
}

static void same_records(const trace_record *a, const trace_record *b, long n, const char *what)
{
	for (long i = 0; i < n; i++)
		cr_assert((a[i].address == b[i].address || trace_is_marker(&a[i])) && a[i].kind == b[i].kind &&
		          a[i].thread == b[i].thread && a[i].size == b[i].size, "%s: record %ld differs", what, i);
}

Test(trace_entries, blocks_loaded_ahead_give_the_same_records)
{
	size_t size;
	uint64_t total;
	unsigned char *file = ahead_file(AHEAD_BLOCKS, &size, &total);
	const char *path = trace_test_path("ahead.ptrace");
	trace_test_spit(path, file, size);
	size_t capacity = (size_t)total + 16;
	trace_record *in_thread = malloc(capacity * sizeof *in_thread), *ahead = malloc(capacity * sizeof *ahead);
	ahead_outcome base = read_ahead(path, 0, BATCH, false, in_thread, capacity);
	cr_assert_eq(base.ahead, 0);
	cr_assert_eq(base.last, 0, "%s", base.message);
	cr_assert_eq((uint64_t)base.records, total);
	cr_assert_eq(base.info.blocks, AHEAD_BLOCKS);
	cr_assert(base.info.complete);
	size_t batches[] = { 1, 7, 255, 256, BATCH, 100000 };
	for (size_t k = 0; k < sizeof batches / sizeof *batches; k++)
		for (int compact = 0; compact < 2; compact++) {
			ahead_outcome o = read_ahead(path, 1, batches[k], compact, ahead, capacity);
			cr_assert_eq(o.ahead, 1, "a file of entries loads ahead");
			cr_assert_eq(o.last, 0, "%s", o.message);
			cr_assert_eq(o.records, base.records, "batch %zu, compact %d", batches[k], compact);
			same_records(in_thread, ahead, o.records, "ahead");
			cr_assert_eq(o.info.blocks, base.info.blocks);
			cr_assert_eq(o.info.bytes, base.info.bytes);
			cr_assert(o.info.complete);
		}
	free(in_thread);
	free(ahead);
	free(file);
	unlink(path);
}

Test(trace_entries, a_bad_block_loaded_ahead_fails_after_the_blocks_before_it)
{
	size_t size;
	uint64_t total;
	unsigned char *file = ahead_file(7, &size, &total);
	const char *path = trace_test_path("ahead_bad.ptrace");
	trace_test_spit(path, file, size);
	size_t capacity = (size_t)total + 16;
	trace_record *records = malloc(capacity * sizeof *records);
	ahead_outcome base = read_ahead(path, 0, BATCH, false, records, capacity);
	cr_assert_eq(base.last, -1);
	cr_assert(strstr(base.message, "block 7 at offset") && strstr(base.message, "payload checksum mismatch"), "%s",
	          base.message);
	/* block 0: the loop's 4 * uses + 5 records; blocks 1-6: 4 * uses each */
	cr_assert_eq(base.records, 4 * AHEAD_USES + 5 + 6 * 4 * AHEAD_USES);
	for (int compact = 0; compact < 2; compact++)
		for (size_t batch = 1; batch <= BATCH; batch *= 64) {
			ahead_outcome o = read_ahead(path, 1, batch, compact, records, capacity);
			cr_assert_eq(o.ahead, 1);
			cr_assert_eq(o.last, -1);
			cr_assert_eq(o.records, base.records, "batch %zu, compact %d", batch, compact);
			cr_assert_str_eq(o.message, base.message);
			cr_assert_eq(o.info.blocks, 7);
		}
	free(records);
	free(file);
	unlink(path);
}

Test(trace_entries, closing_while_blocks_load_ahead_stops_the_loader)
{
	size_t size;
	uint64_t total;
	unsigned char *file = ahead_file(AHEAD_BLOCKS, &size, &total);
	const char *path = trace_test_path("ahead_close.ptrace");
	trace_test_spit(path, file, size);
	plumb_status status;
	trace_reader *reader;
	/* closed before the first read: no worker was started */
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	/* closed after a few records, the worker waiting for a free slot or loading */
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
		trace_record r[3];
		cr_assert_eq(trace_reader_read(reader, r, 3, &status), 3, "%s", status.message);
		cr_assert_eq(r[0].kind, TRACE_REGION_BEGIN);
		cr_assert_eq(trace_reader_set_background(reader, 0), 1, "decided at the first read");
		cr_assert_eq(trace_reader_close(reader, &status), 0);
	}
	/* a truncated file, allowed: the complete blocks, then a quiet end */
	const char *cut = trace_test_path("ahead_cut.ptrace");
	trace_test_spit(cut, file, size - 32 - 10);
	cr_assert_eq(trace_reader_open(&reader, cut, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	trace_reader_allow_truncated(reader, 1);
	trace_record *all = malloc(((size_t)total + 16) * sizeof *all);
	long n = 0, got;
	while ((got = trace_reader_read(reader, all + n, BATCH, &status)) > 0)
		n += got;
	cr_assert_eq(got, 0, "%s", status.message);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	cr_assert(info.truncated);
	cr_assert_eq(info.blocks, AHEAD_BLOCKS - 1);
	cr_assert_eq((uint64_t)n, total - 4 * AHEAD_USES);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	free(all);
	free(file);
	unlink(path);
	unlink(cut);
}
