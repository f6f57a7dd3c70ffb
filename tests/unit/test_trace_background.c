/* Background decoding of native files: the same records, info and errors as
 * decoding in the caller's thread, whatever the caller's batch size, and a
 * clean close at any point. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace_test_util.h"

#define RECORDS 200000   /* > 3 native blocks, > 12 background chunks */

typedef struct outcome {
	long records;           /* handed out before the end or the error */
	long last;              /* the final trace_reader_read result: 0 or -1 */
	char message[PLUMB_MESSAGE_MAX];
	trace_reader_info info;
	int background;
} outcome;

/* Reads path in batches of `batch`, background on or off. */
static outcome read_file(const char *path, int background, size_t batch, bool allow_truncated, trace_record *out,
                         size_t capacity)
{
	outcome o;
	memset(&o, 0, sizeof o);
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	trace_reader_allow_truncated(reader, allow_truncated);
	o.background = trace_reader_set_background(reader, background);
	for (;;) {
		size_t want = batch;
		if ((size_t)o.records + want > capacity)
			want = capacity - (size_t)o.records;
		long n = trace_reader_read(reader, out + o.records, want, &status);
		if (n <= 0) {
			o.last = n;
			if (n < 0)
				snprintf(o.message, sizeof o.message, "%s", status.message);
			break;
		}
		o.records += n;
		cr_assert_leq((size_t)o.records, capacity);
	}
	/* A failed reader stays failed. */
	if (o.last < 0)
		cr_assert_eq(trace_reader_read(reader, out, 1, &status), -1);
	trace_reader_get_info(reader, &o.info);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	return o;
}

static void expect_same(const outcome *a, const outcome *b, const trace_record *ra, const trace_record *rb)
{
	cr_assert_eq(a->records, b->records);
	cr_assert_eq(a->last, b->last);
	cr_assert_str_eq(a->message, b->message);
	cr_assert_eq(a->info.records, b->info.records);
	cr_assert_eq(a->info.bytes, b->info.bytes, "bytes %llu vs %llu (records %ld)", (unsigned long long)a->info.bytes, (unsigned long long)b->info.bytes, a->records);
	cr_assert_eq(a->info.blocks, b->info.blocks);
	cr_assert_eq(a->info.truncated, b->info.truncated);
	cr_assert_eq(a->info.truncated_bytes, b->info.truncated_bytes);
	cr_assert_eq(a->info.complete, b->info.complete);
	for (long i = 0; i < a->records; i++)
		cr_assert(trace_test_records_equal(&ra[i], &rb[i]), "record %ld differs", i);
}

static const char *write_trace(const char *name, trace_record **records)
{
	trace_record *in = calloc(RECORDS, sizeof *in);
	cr_assert(in);
	trace_test_records(in, RECORDS, 99);
	const char *path = trace_test_path(name);
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_NATIVE, in, RECORDS), 0);
	*records = in;
	return path;
}

Test(trace_background, same_records_and_info_as_the_callers_thread)
{
	trace_record *in;
	const char *path = write_trace("bg_same.ptrace", &in);
	trace_record *sync_out = calloc(RECORDS + 1, sizeof *sync_out), *bg_out = calloc(RECORDS + 1, sizeof *bg_out);
	outcome sync = read_file(path, 0, 65536, false, sync_out, RECORDS + 1);
	cr_assert_eq(sync.background, 0);
	cr_assert_eq(sync.records, RECORDS);
	cr_assert_eq(sync.info.complete, 1);
	for (long i = 0; i < RECORDS; i++)
		cr_assert(trace_test_records_equal(&in[i], &sync_out[i]), "record %ld differs", i);
	/* Batches smaller than, equal to, and larger than a chunk, and odd. */
	static const size_t batches[] = { 7, 4096, TRACE_BACKGROUND_RECORDS, TRACE_BACKGROUND_RECORDS + 1, 65536,
	                                  RECORDS + 1 };
	for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
		memset(bg_out, 0, (RECORDS + 1) * sizeof *bg_out);
		outcome bg = read_file(path, 1, batches[k], false, bg_out, RECORDS + 1);
		cr_assert_eq(bg.background, 1);
		expect_same(&bg, &sync, bg_out, sync_out);
	}
	free(in);
	free(sync_out);
	free(bg_out);
}

Test(trace_background, one_record_at_a_time_then_early_close)
{
	trace_record *in;
	const char *path = write_trace("bg_early.ptrace", &in);
	plumb_status status;
	/* Close after 0, 1, a chunk's worth and a few chunks' worth of records:
	 * the worker may be blocked on a full ring, mid-block or not started. */
	static const long stops[] = { 0, 1, TRACE_BACKGROUND_RECORDS, 3 * TRACE_BACKGROUND_RECORDS + 5 };
	for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
		trace_reader *reader;
		cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0);
		cr_assert_eq(trace_reader_set_background(reader, 1), 1);
		for (long i = 0; i < stops[k]; i++) {
			trace_record r;
			cr_assert_eq(trace_reader_read(reader, &r, 1, &status), 1);
			cr_assert(trace_test_records_equal(&r, &in[i]), "record %ld differs", i);
		}
		cr_assert_eq(trace_reader_close(reader, &status), 0);
	}
	free(in);
}

Test(trace_background, errors_come_after_the_same_records)
{
	trace_record *in;
	const char *path = write_trace("bg_corrupt.ptrace", &in);
	size_t size;
	unsigned char *data = (unsigned char *)trace_test_slurp(path, &size);
	/* Block 2's payload: flip a byte well inside it (blocks 0 and 1 stay good). */
	size_t at = 16;
	for (int b = 0; b < 2; b++) {
		uint32_t packed;
		memcpy(&packed, data + at + 16, 4);
		at += 32 + packed;
	}
	data[at + 40] ^= 0x55;
	const char *bad = trace_test_path("bg_corrupt_bad.ptrace");
	trace_test_spit(bad, data, size);
	trace_record *a = calloc(RECORDS, sizeof *a), *b = calloc(RECORDS, sizeof *b);
	outcome sync = read_file(bad, 0, 65536, false, a, RECORDS);
	cr_assert_eq(sync.last, -1);
	cr_assert_eq(sync.records, 2 * 65536);
	cr_assert(strstr(sync.message, "block 2") != NULL, "%s", sync.message);
	outcome bg = read_file(bad, 1, 10000, false, b, RECORDS);
	expect_same(&bg, &sync, b, a);

	/* Cut inside block 2: an error by default, a quiet end when allowed. */
	trace_test_spit(bad, data, at + 100);
	sync = read_file(bad, 0, 65536, false, a, RECORDS);
	bg = read_file(bad, 1, 3000, false, b, RECORDS);
	cr_assert_eq(sync.last, -1);
	cr_assert(strstr(sync.message, "trace cut short") != NULL, "%s", sync.message);
	expect_same(&bg, &sync, b, a);
	sync = read_file(bad, 0, 65536, true, a, RECORDS);
	bg = read_file(bad, 1, 3000, true, b, RECORDS);
	cr_assert_eq(sync.last, 0);
	cr_assert_eq(sync.info.truncated, 1);
	cr_assert_eq(sync.records, 2 * 65536);
	expect_same(&bg, &sync, b, a);
	free(data);
	free(a);
	free(b);
	free(in);
}

Test(trace_background, only_native_files)
{
	trace_record in[100];
	trace_test_records(in, 100, 5);
	const char *lackey = trace_test_path("bg.lackey");
	cr_assert_eq(trace_test_write(lackey, TRACE_FORMAT_LACKEY, in, 100), 0);
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, lackey, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	cr_assert_eq(trace_reader_set_background(reader, 1), 0);
	cr_assert_eq(trace_reader_close(reader, &status), 0);

	const char *native = trace_test_path("bg_small.ptrace");
	cr_assert_eq(trace_test_write(native, TRACE_FORMAT_NATIVE, in, 100), 0);
	size_t size;
	char *data = trace_test_slurp(native, &size);
	cr_assert_eq(trace_reader_open_memory(&reader, data, size, TRACE_FORMAT_AUTO, &status), 0);
	cr_assert_eq(trace_reader_set_background(reader, 1), 0);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	free(data);

	/* After the first read the choice is made. */
	cr_assert_eq(trace_reader_open(&reader, native, TRACE_FORMAT_AUTO, &status), 0);
	trace_record r;
	cr_assert_eq(trace_reader_read(reader, &r, 1, &status), 1);
	cr_assert_eq(trace_reader_set_background(reader, 0), 1);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	cr_assert_eq(trace_reader_set_background(NULL, 1), 0);
}

/* Views: the same records as reads, lent rather than copied, in any reader. */
static outcome view_file(const char *path, int background, size_t max, trace_record *out, size_t capacity)
{
	outcome o;
	memset(&o, 0, sizeof o);
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status), 0, "%s", status.message);
	o.background = trace_reader_set_background(reader, background);
	for (;;) {
		const trace_record *lent;
		long n = trace_reader_view(reader, &lent, max, &status);
		if (n <= 0) {
			o.last = n;
			cr_assert_null(lent);
			if (n < 0)
				snprintf(o.message, sizeof o.message, "%s", status.message);
			break;
		}
		cr_assert_leq((size_t)n, max);
		cr_assert_leq((size_t)(o.records + n), capacity);
		memcpy(out + o.records, lent, (size_t)n * sizeof *lent);
		o.records += n;
	}
	trace_reader_get_info(reader, &o.info);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	return o;
}

Test(trace_background, views_lend_the_same_records)
{
	trace_record *in;
	const char *path = write_trace("bg_view.ptrace", &in);
	trace_record *a = calloc(RECORDS + 1, sizeof *a), *b = calloc(RECORDS + 1, sizeof *b);
	outcome sync = read_file(path, 0, 65536, false, a, RECORDS + 1);
	static const size_t maxima[] = { 5, 1000, TRACE_BACKGROUND_RECORDS, 1u << 20 };
	for (size_t k = 0; k < sizeof maxima / sizeof maxima[0]; k++)
		for (int background = 0; background < 2; background++) {
			memset(b, 0, (RECORDS + 1) * sizeof *b);
			outcome v = view_file(path, background, maxima[k], b, RECORDS + 1);
			cr_assert_eq(v.background, background);
			expect_same(&v, &sync, b, a);
		}
	/* A corrupt block: the same records, then the same error. */
	size_t size;
	unsigned char *data = (unsigned char *)trace_test_slurp(path, &size);
	uint32_t packed;
	memcpy(&packed, data + 16 + 16, 4);
	data[16 + 32 + packed + 32 + 10] ^= 0x21;   /* inside block 1's payload */
	const char *bad = trace_test_path("bg_view_bad.ptrace");
	trace_test_spit(bad, data, size);
	sync = read_file(bad, 0, 65536, false, a, RECORDS + 1);
	cr_assert_eq(sync.last, -1);
	cr_assert_eq(sync.records, 65536);
	for (int background = 0; background < 2; background++) {
		outcome v = view_file(bad, background, 3000, b, RECORDS + 1);
		expect_same(&v, &sync, b, a);
	}
	/* Other readers lend from a buffer of their own. */
	const char *lackey = trace_test_path("bg_view.lackey");
	cr_assert_eq(trace_test_write(lackey, TRACE_FORMAT_LACKEY, in, 50000), 0);
	outcome lr = read_file(lackey, 1, TRACE_BACKGROUND_RECORDS, false, a, RECORDS + 1);
	outcome lv = view_file(lackey, 1, 1u << 20, b, RECORDS + 1);
	cr_assert_eq(lv.background, 0);
	expect_same(&lv, &lr, b, a);
	free(data);
	free(a);
	free(b);
	free(in);
}
