/* The native format: round trips, truncation, corruption, versions. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace_test_util.h"

#define MANY 200000   /* > 3 blocks of 65536 */

Test(trace_native, round_trip_every_record_shape)
{
	trace_record *in = calloc(MANY, sizeof *in), *out = calloc(MANY + 1, sizeof *out);
	trace_test_records(in, MANY, 42);
	const char *path = trace_test_path("round.ptrace");
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_AUTO, in, MANY), 0);
	char error[256];
	long n = trace_test_read_all(path, TRACE_FORMAT_AUTO, out, MANY + 1, error, sizeof error);
	cr_assert_eq(n, MANY, "read %ld: %s", n, error);
	for (size_t i = 0; i < MANY; i++)
		cr_assert(trace_test_records_equal(&in[i], &out[i]), "record %zu differs", i);
	free(in);
	free(out);
}

Test(trace_native, empty_trace_round_trips)
{
	const char *path = trace_test_path("empty.ptrace");
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_NATIVE, NULL, 0), 0);
	trace_record r;
	char error[256];
	cr_assert_eq(trace_test_read_all(path, TRACE_FORMAT_AUTO, &r, 1, error, sizeof error), 0, "%s", error);
}

/* A native trace of MANY records in memory. */
static char *native_image(size_t *size, trace_record **records)
{
	trace_record *in = calloc(MANY, sizeof *in);
	trace_test_records(in, MANY, 7);
	const char *path = trace_test_path("image.ptrace");
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_NATIVE, in, MANY), 0);
	*records = in;
	return trace_test_slurp(path, size);
}

/* Offsets of the block headers, found by walking the file. */
static size_t block_offsets(const unsigned char *data, size_t size, size_t *offsets, size_t max)
{
	size_t n = 0, at = 16;
	while (at + 32 <= size && n < max) {
		offsets[n++] = at;
		if (memcmp(data + at, "TEND", 4) == 0)
			break;
		uint32_t packed;
		memcpy(&packed, data + at + 16, 4);
		at += 32 + packed;
	}
	return n;
}

Test(trace_native, truncated_trace_reads_up_to_last_complete_block)
{
	size_t size;
	trace_record *in;
	unsigned char *data = (unsigned char *)native_image(&size, &in);
	size_t offsets[16];
	size_t blocks = block_offsets(data, size, offsets, 16);
	cr_assert_eq(blocks, 5, "4 data blocks and the end marker, got %zu", blocks);
	trace_record *out = calloc(MANY, sizeof *out);
	char error[256];
	/* Cut in the middle of block 2's payload: blocks 0 and 1 are whole. */
	size_t cut = offsets[2] + 100;
	long n = trace_test_read_memory(data, cut, TRACE_FORMAT_NATIVE, out, MANY, error, sizeof error);
	cr_assert_lt(n, 0);
	cr_assert_eq(-1 - n, 2 * 65536, "records before the error: %ld", -1 - n);
	for (size_t i = 0; i < 2 * 65536; i++)
		cr_assert(trace_test_records_equal(&in[i], &out[i]), "record %zu differs", i);
	char expect[256];
	snprintf(expect, sizeof expect, "memory: trace cut short: block 2 at offset %zu has 100 of %zu block bytes; "
	         "131072 records of complete blocks were read", offsets[2], offsets[3] - offsets[2]);
	cr_assert_str_eq(error, expect);

	/* Cut inside a block header. */
	n = trace_test_read_memory(data, offsets[1] + 10, TRACE_FORMAT_NATIVE, out, MANY, error, sizeof error);
	cr_assert_eq(-1 - n, 65536);
	snprintf(expect, sizeof expect, "memory: trace cut short: block 1 at offset %zu has 10 of 32 header bytes; "
	         "65536 records of complete blocks were read", offsets[1]);
	cr_assert_str_eq(error, expect);

	/* Cut exactly at a block boundary: the end marker is missing. */
	n = trace_test_read_memory(data, offsets[3], TRACE_FORMAT_NATIVE, out, MANY, error, sizeof error);
	cr_assert_eq(-1 - n, 3 * 65536);
	snprintf(expect, sizeof expect, "memory: trace cut short: no end marker after block 3 (offset %zu); "
	         "196608 records of complete blocks were read", offsets[3]);
	cr_assert_str_eq(error, expect);
	free(data);
	free(in);
	free(out);
}

Test(trace_native, truncation_allowed_ends_quietly)
{
	size_t size;
	trace_record *in;
	unsigned char *data = (unsigned char *)native_image(&size, &in);
	size_t offsets[16];
	block_offsets(data, size, offsets, 16);
	plumb_status status;
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_memory(&reader, data, offsets[2] + 5000, TRACE_FORMAT_AUTO, &status), 0);
	trace_reader_allow_truncated(reader, 1);
	trace_record *out = calloc(MANY, sizeof *out);
	long n, total = 0;
	while ((n = trace_reader_read(reader, out + total, 10000, &status)) > 0)
		total += n;
	cr_assert_eq(n, 0, "%s", status.message);
	cr_assert_eq(total, 2 * 65536);
	trace_reader_info info;
	trace_reader_get_info(reader, &info);
	cr_assert_eq(info.truncated, 1);
	cr_assert_eq(info.truncated_bytes, 5000);
	cr_assert_eq(info.complete, 0);
	cr_assert_eq(info.blocks, 2);
	cr_assert_eq(trace_reader_close(reader, &status), 0);
	free(data);
	free(in);
	free(out);
}

static void expect_error(const unsigned char *data, size_t size, long records_before, const char *message)
{
	trace_record *out = calloc(MANY, sizeof *out);
	char error[256];
	long n = trace_test_read_memory(data, size, TRACE_FORMAT_AUTO, out, MANY, error, sizeof error);
	cr_assert_lt(n, 0, "no error");
	cr_assert_eq(-1 - n, records_before, "records before the error: %ld", -1 - n);
	cr_assert_str_eq(error, message);
	free(out);
}

Test(trace_native, corrupt_payload_names_the_block)
{
	size_t size;
	trace_record *in;
	unsigned char *data = (unsigned char *)native_image(&size, &in);
	size_t offsets[16];
	block_offsets(data, size, offsets, 16);
	data[offsets[1] + 32 + 7] ^= 0x10;
	char expect[256];
	snprintf(expect, sizeof expect, "memory: block 1 at offset %zu: payload checksum mismatch (corrupt)", offsets[1]);
	expect_error(data, size, 65536, expect);
	free(data);
	free(in);
}

Test(trace_native, corrupt_header_names_the_block)
{
	size_t size;
	trace_record *in;
	unsigned char *data = (unsigned char *)native_image(&size, &in);
	size_t offsets[16];
	block_offsets(data, size, offsets, 16);
	char expect[256];
	data[offsets[2] + 12] ^= 0x01;   /* the uncompressed size */
	snprintf(expect, sizeof expect, "memory: block 2 at offset %zu: header checksum mismatch (corrupt)", offsets[2]);
	expect_error(data, size, 2 * 65536, expect);
	data[offsets[2] + 12] ^= 0x01;
	data[offsets[2]] = 'X';
	snprintf(expect, sizeof expect, "memory: block 2 at offset %zu: bad block magic 0x4b4c4258 (corrupt)", offsets[2]);
	expect_error(data, size, 2 * 65536, expect);
	free(data);
	free(in);
}

Test(trace_native, bad_magic_and_version)
{
	size_t size;
	trace_record *in;
	unsigned char *data = (unsigned char *)native_image(&size, &in);
	data[8] = 2;   /* major version 2 */
	data[10] = 0;  /* minor 0 (plumb writes 1.1) */
	expect_error(data, size, 0, "memory: unsupported native trace version 2.0 (this plumb reads version 1.x)");
	data[8] = 1;
	data[1] = 'Q';
	trace_record r;
	char error[256];
	cr_assert_eq(trace_test_read_memory(data, size, TRACE_FORMAT_NATIVE, &r, 1, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: not a plumb native trace (bad magic)");
	cr_assert_eq(trace_test_read_memory(data, 5, TRACE_FORMAT_NATIVE, &r, 1, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: not a plumb native trace (bad magic)");
	data[1] = 'P';
	cr_assert_eq(trace_test_read_memory(data, 12, TRACE_FORMAT_AUTO, &r, 1, error, sizeof error), -1);
	cr_assert_str_eq(error, "memory: native trace header cut short (12 of 16 bytes)");
	free(data);
	free(in);
}

Test(trace_native, end_marker_count_is_checked)
{
	size_t size;
	trace_record *in;
	unsigned char *data = (unsigned char *)native_image(&size, &in);
	/* Drop block 3 entirely: the sequence check catches it at the end marker. */
	size_t offsets[16];
	block_offsets(data, size, offsets, 16);
	size_t gap = offsets[4] - offsets[3];
	memmove(data + offsets[3], data + offsets[4], size - offsets[4]);
	char expect[256];
	snprintf(expect, sizeof expect, "memory: end marker at offset %zu says 4 blocks and 200000 records, "
	         "but the trace held 3 blocks and 196608 records (corrupt)", offsets[3]);
	expect_error(data, size - gap, 3 * 65536, expect);
	free(data);
	free(in);
}

Test(trace_native, files_on_disk_name_their_path)
{
	const char *path = trace_test_path("garbage.ptrace");
	trace_test_spit(path, "\x89PLUMBTR\x01\x00\x00\x00\x10\x00\x00\x00TBLKjunk", 24);
	char error[256], expect[512];
	trace_record r;
	cr_assert_lt(trace_test_read_all(path, TRACE_FORMAT_AUTO, &r, 1, error, sizeof error), 0);
	snprintf(expect, sizeof expect, "%s: trace cut short: block 0 at offset 16 has 8 of 32 header bytes; "
	         "0 records of complete blocks were read", path);
	cr_assert_str_eq(error, expect);
	cr_assert_lt(trace_test_read_all("/nonexistent/x.ptrace", TRACE_FORMAT_AUTO, &r, 1, error, sizeof error), 0);
	cr_assert_str_eq(error, "cannot open trace '/nonexistent/x.ptrace': No such file or directory");
}

Test(trace_native, writer_is_atomic_and_checks_records)
{
	const char *path = trace_test_path("atomic.ptrace");
	plumb_status status;
	trace_writer *writer;
	cr_assert_eq(trace_writer_open(&writer, path, TRACE_FORMAT_AUTO, &status), 0);
	trace_record bad = { .address = 1, .size = 0, .kind = TRACE_READ };
	cr_assert_eq(trace_writer_write(writer, &bad, 1, &status), -1);
	cr_assert_str_eq(status.message, "trace record 0 is invalid (kind 1, size 0, flags 0x0)");
	FILE *f = fopen(path, "rb");
	cr_assert_null(f, "the file must not appear before close");
	trace_writer_abort(writer);
	cr_assert_null(fopen(path, "rb"));
	cr_assert_eq(trace_writer_open(&writer, trace_test_path("x.txt"), TRACE_FORMAT_AUTO, &status), -1);
	cr_assert(strstr(status.message, "cannot tell a trace format from the name") != NULL, "%s", status.message);
}

/* The values docs/trace-format.md gives to reimplementers. */
Test(trace_native, checksum_test_vectors)
{
	cr_assert_eq(trace_checksum("", 0, 0), 0x9090306c6e91ed59ull);
	cr_assert_eq(trace_checksum("plumb", 5, 0), 0x59fdc7fec1787326ull);
	static const char text[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	cr_assert_eq(trace_checksum(text, strlen(text), 7), 0x57b9aad530d7aec6ull);
}

/* The worked example of docs/trace-format.md, byte for byte before zstd. */
Test(trace_native, worked_example_payload)
{
	trace_record r[2] = {
		{ .address = 0x401000, .instruction_address = 0x401000, .size = 4, .kind = TRACE_INSTRUCTION,
		  .flags = TRACE_HAS_INSTRUCTION_ADDRESS },
		{ .address = 0x7ff000, .instruction_address = 0x401000, .size = 8, .kind = TRACE_READ,
		  .flags = TRACE_HAS_INSTRUCTION_ADDRESS },
	};
	trace_codec_state state;
	trace_codec_reset(&state);
	unsigned char out[2 * TRACE_NATIVE_RECORD_MAX_BYTES];
	size_t n = trace_codec_encode(&state, &r[0], out);
	n += trace_codec_encode(&state, &r[1], out + n);
	static const unsigned char expect[] = { 0x70, 0x80, 0xc0, 0x80, 0x04, 0x71, 0x80, 0xc0, 0xff, 0x07 };
	cr_assert_eq(n, sizeof expect);
	cr_assert_arr_eq(out, expect, sizeof expect);
}

/* The decoder takes common records (no control byte, a size code) in a
 * loop of its own and hands the others to the general one: every mix of
 * the two, decoded in pieces of any count (so each piece starts in either
 * loop, near the end too, where records are decoded from a padded copy),
 * gives back the records encoded. */
Test(trace_native, decoding_in_pieces_gives_the_records_encoded)
{
	enum { COUNT = 6000 };
	trace_record *in = calloc(COUNT, sizeof *in), *out = calloc(COUNT, sizeof *out);
	unsigned char *payload = malloc(COUNT * TRACE_NATIVE_RECORD_MAX_BYTES);
	cr_assert(in && out && payload);
	trace_test_records(in, COUNT, 7);
	/* runs of common records between the random ones: fetches one after
	 * the other, reads and writes near them, both predictors */
	for (size_t i = 0; i < COUNT; i++) {
		if (i % 100 >= 60)
			continue;
		trace_record *r = &in[i];
		memset(r, 0, sizeof *r);
		r->kind = (uint8_t)(i % 3 == 0 ? TRACE_INSTRUCTION : i % 3 == 1 ? TRACE_READ : TRACE_WRITE);
		r->address = r->kind == TRACE_INSTRUCTION ? 0x401000 + 3 * i : (i % 2 ? 0x7ff000 : 0x601000) + 8 * (i % 50);
		r->size = r->kind == TRACE_INSTRUCTION ? 3 : 8;
		r->thread = 0;
		if (i % 7) {
			r->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
			r->instruction_address = r->kind == TRACE_INSTRUCTION ? r->address : 0x401000 + 3 * (i - i % 3);
		}
	}
	trace_codec_state state;
	trace_codec_reset(&state);
	size_t bytes = 0;
	for (size_t i = 0; i < COUNT; i++)
		bytes += trace_codec_encode(&state, &in[i], payload + bytes);
	static const size_t pieces[] = { COUNT, 1, 2, 3, 7, 64, 1000 };
	for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
		memset(out, 0xa5, COUNT * sizeof *out);
		trace_codec_reset(&state);
		const unsigned char *cursor = payload;
		size_t done = 0;
		while (done < COUNT) {
			size_t want = COUNT - done < pieces[k] ? COUNT - done : pieces[k];
			const char *error = NULL;
			size_t got = trace_codec_decode(&state, &cursor, payload + bytes, out + done, want, &error);
			cr_assert_eq(got, want, "pieces of %zu: record %zu: %s", pieces[k], done + got, error ? error : "");
			done += got;
		}
		cr_assert_eq(cursor, payload + bytes);
		for (size_t i = 0; i < COUNT; i++)
			cr_assert(trace_test_records_equal(&in[i], &out[i]), "pieces of %zu: record %zu differs", pieces[k], i);
	}
	free(in);
	free(out);
	free(payload);
}
