/* Reader of plumb's native trace format (docs/trace-format.md).
 *
 * Blocks are checked before they are trusted: the header has its own
 * checksum (so a corrupt size never drives an allocation), the compressed
 * payload has a checksum (so corruption is reported as such, not as a zstd
 * oddity), and the decoded payload must hold exactly the records the header
 * announced.  Every error names the block and its byte offset.  Records of
 * complete blocks are always handed out before an error about a later one.
 *
 * An entry block (format 1.3) holds plumbgrind's entries: it is checked
 * whole when it is loaded (trace_entries_scan, which also turns the stored
 * differences back into addresses and counts the records), then walked by
 * the same code as the live ring's entries: expanded into records for
 * trace_reader_read, handed out as runs of uses for
 * trace_reader_view_compact (the simulator). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "plumb/status.h"
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"

/* Fuzzing builds skip the checksums so mutated inputs reach zstd and the
 * record decoder (which must be safe on any bytes anyway). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define TRACE_SKIP_CHECKSUMS 1
#else
#define TRACE_SKIP_CHECKSUMS 0
#endif

struct trace_native_state {
	ZSTD_DCtx *decompressor;
	unsigned char *payload;        /* the current block, decompressed */
	size_t payload_capacity;
	const unsigned char *cursor, *payload_end;
	uint32_t records_left;         /* in the current block */
	uint32_t block_records;
	uint64_t block_offset;         /* input offset of the current block's header */
	uint64_t next_sequence;        /* expected sequence number of the next block */
	trace_codec_state codec;
	bool ended;                    /* end marker read */
	uint64_t records_decoded;
	/* entry blocks */
	bool in_entries;               /* the current block is an entry block */
	uint64_t *words;               /* its words, addresses restored */
	size_t words_capacity;         /* bytes */
	const uint64_t *word, *word_end;   /* the rest of it */
	bool entries_started;
	trace_entries loader;          /* the blocks as they are loaded (checks, differences) */
	trace_entries walker;          /* the blocks as they are handed out */
	trace_record *out;             /* expanded records lent by native_lend_compact */
	size_t out_count, out_position;
};

#define OUT_RECORDS 4096u

static void native_destroy(trace_reader *reader)
{
	trace_native_state *n = reader->native;
	if (!n)
		return;
	ZSTD_freeDCtx(n->decompressor);
	free(n->payload);
	free(n->words);
	free(n->out);
	if (n->entries_started) {
		trace_entries_free(&n->loader);
		trace_entries_free(&n->walker);
	}
	free(n);
	reader->native = NULL;
}

/* The input ended where a block should be complete. */
static int native_truncated(trace_reader *reader, size_t have, const char *what, size_t need, plumb_status *status)
{
	trace_native_state *n = reader->native;
	reader->info.truncated = 1;
	reader->info.truncated_bytes = have;
	if (reader->allow_truncated) {
		n->ended = true;
		return 0;
	}
	if (what == NULL)
		return plumb_fail(status, EPIPE, "%s: trace cut short: no end marker after block %llu "
		                  "(offset %llu); %llu records of complete blocks were read",
		                  reader->input.name, (unsigned long long)n->next_sequence,
		                  (unsigned long long)reader->input.offset, (unsigned long long)n->records_decoded);
	return plumb_fail(status, EPIPE, "%s: trace cut short: block %llu at offset %llu has %zu of %zu %s bytes; "
	                  "%llu records of complete blocks were read",
	                  reader->input.name, (unsigned long long)n->next_sequence,
	                  (unsigned long long)reader->input.offset, have, need, what,
	                  (unsigned long long)n->records_decoded);
}

static int native_end_marker(trace_reader *reader, const unsigned char *header, plumb_status *status)
{
	trace_native_state *n = reader->native;
	uint64_t offset = reader->input.offset;
	uint32_t blocks = trace_get_u32(header + 4);
	uint64_t total = trace_get_u64(header + 24);
	if (blocks != n->next_sequence || total != n->records_decoded)
		return plumb_fail(status, EINVAL, "%s: end marker at offset %llu says %u blocks and %llu records, "
		                  "but the trace held %llu blocks and %llu records (corrupt)",
		                  reader->input.name, (unsigned long long)offset, blocks, (unsigned long long)total,
		                  (unsigned long long)n->next_sequence, (unsigned long long)n->records_decoded);
	trace_input_consume(&reader->input, TRACE_NATIVE_BLOCK_HEADER_SIZE);
	long more = trace_input_fill(&reader->input, 1, status);
	if (more < 0)
		return -1;
	if (more > 0)
		return plumb_fail(status, EINVAL, "%s: data after the end marker at offset %llu (corrupt or concatenated)",
		                  reader->input.name, (unsigned long long)offset);
	n->ended = true;
	reader->info.complete = 1;
	return 0;
}

/* An entry block (its header checked, its compressed payload at packed):
 * decompressed and checked whole, its records counted against the header. */
static int load_entries(trace_reader *reader, const unsigned char *packed, uint32_t packed_size, uint32_t raw_size,
                        uint32_t records, uint64_t offset, plumb_status *status)
{
	trace_native_state *n = reader->native;
	trace_input *in = &reader->input;
	unsigned long long block = (unsigned long long)n->next_sequence;
	if (!n->out && !(n->out = malloc(OUT_RECORDS * sizeof *n->out)))
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader's buffer");
	if (!n->entries_started) {
		trace_entries_init(&n->loader, NULL);
		trace_entries_init(&n->walker, &reader->names);
		n->entries_started = true;
	}
	if (raw_size > n->words_capacity || !n->words) {
		size_t capacity = raw_size ? raw_size : 8;
		uint64_t *grown = realloc(n->words, capacity);
		if (!grown)
			return plumb_fail(status, ENOMEM, "out of memory for a %u-byte trace block", raw_size);
		n->words = grown;
		n->words_capacity = capacity;
	}
	size_t got = ZSTD_decompressDCtx(n->decompressor, n->words, raw_size, packed, packed_size);
	if (ZSTD_isError(got))
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: zstd: %s", in->name, block,
		                  (unsigned long long)offset, ZSTD_getErrorName(got));
	if (got != raw_size)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: decompressed to %zu bytes, header says %u",
		                  in->name, block, (unsigned long long)offset, got, raw_size);
	size_t count = raw_size / 8;
	uint64_t stood_for;
	if (trace_entries_scan(&n->loader, n->words, count, NULL, TRACE_SCAN_DECODE, &stood_for) < 0)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: %s (corrupt)", in->name, block,
		                  (unsigned long long)offset, n->loader.error);
	if (stood_for != records)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: its entries stand for %llu records, "
		                  "its header says %u (corrupt)", in->name, block, (unsigned long long)offset,
		                  (unsigned long long)stood_for, records);
	trace_input_consume(in, TRACE_NATIVE_BLOCK_HEADER_SIZE + (size_t)packed_size);
	n->in_entries = true;
	n->word = n->words;
	n->word_end = n->words + count;
	n->cursor = n->payload_end = n->payload;
	n->records_left = 0;
	n->block_records = records;
	n->block_offset = offset;
	n->next_sequence++;
	reader->info.blocks++;
	return 1;
}

/* Loads the next block; 1 = a block is ready, 0 = end of trace, -1 = error. */
static int native_next_block(trace_reader *reader, plumb_status *status)
{
	trace_native_state *n = reader->native;
	trace_input *in = &reader->input;
	long have = trace_input_fill(in, TRACE_NATIVE_BLOCK_HEADER_SIZE, status);
	if (have < 0)
		return -1;
	if (have == 0)
		return native_truncated(reader, 0, NULL, 0, status);
	if (have < TRACE_NATIVE_BLOCK_HEADER_SIZE)
		return native_truncated(reader, (size_t)have, "header", TRACE_NATIVE_BLOCK_HEADER_SIZE, status);
	const unsigned char *header = in->data + in->start;
	uint64_t offset = in->offset;
	unsigned long long block = (unsigned long long)n->next_sequence;
	uint32_t magic = trace_get_u32(header);
	if (magic != TRACE_NATIVE_BLOCK_MAGIC && magic != TRACE_NATIVE_END_MAGIC && magic != TRACE_NATIVE_ENTRIES_MAGIC)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: bad block magic 0x%08x (corrupt)",
		                  in->name, block, (unsigned long long)offset, magic);
	if (trace_get_u32(header + 20) != trace_block_header_check(header) && !TRACE_SKIP_CHECKSUMS)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: header checksum mismatch (corrupt)",
		                  in->name, block, (unsigned long long)offset);
	if (magic == TRACE_NATIVE_END_MAGIC)
		return native_end_marker(reader, header, status) < 0 ? -1 : 0;
	uint32_t sequence = trace_get_u32(header + 4);
	uint32_t records = trace_get_u32(header + 8);
	uint32_t raw_size = trace_get_u32(header + 12);
	uint32_t packed_size = trace_get_u32(header + 16);
	uint64_t payload_check = trace_get_u64(header + 24);
	if (sequence != n->next_sequence)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: sequence number %u (blocks missing or reordered)",
		                  in->name, block, (unsigned long long)offset, sequence);
	bool entries = magic == TRACE_NATIVE_ENTRIES_MAGIC;
	if (entries ? raw_size > TRACE_NATIVE_MAX_ENTRY_BYTES || raw_size % 8 != 0 ||
	              packed_size > ZSTD_compressBound(TRACE_NATIVE_MAX_ENTRY_BYTES)
	            : records > TRACE_NATIVE_MAX_BLOCK_RECORDS || raw_size > TRACE_NATIVE_MAX_BLOCK_BYTES ||
	              packed_size > ZSTD_compressBound(TRACE_NATIVE_MAX_BLOCK_BYTES))
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: sizes beyond the format's limits "
		                  "(%u records, %u bytes, %u compressed)", in->name, block, (unsigned long long)offset,
		                  records, raw_size, packed_size);
	size_t need = TRACE_NATIVE_BLOCK_HEADER_SIZE + (size_t)packed_size;
	have = trace_input_fill(in, need, status);
	if (have < 0)
		return -1;
	if ((size_t)have < need)
		return native_truncated(reader, (size_t)have, "block", need, status);
	const unsigned char *packed = in->data + in->start + TRACE_NATIVE_BLOCK_HEADER_SIZE;
	if (trace_checksum(packed, packed_size, sequence) != payload_check && !TRACE_SKIP_CHECKSUMS)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: payload checksum mismatch (corrupt)",
		                  in->name, block, (unsigned long long)offset);
	if (entries)
		return load_entries(reader, packed, packed_size, raw_size, records, offset, status);
	if (raw_size > n->payload_capacity) {
		unsigned char *grown = realloc(n->payload, raw_size);
		if (!grown)
			return plumb_fail(status, ENOMEM, "out of memory for a %u-byte trace block", raw_size);
		n->payload = grown;
		n->payload_capacity = raw_size;
	}
	size_t got = ZSTD_decompressDCtx(n->decompressor, n->payload, raw_size, packed, packed_size);
	if (ZSTD_isError(got))
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: zstd: %s", in->name, block,
		                  (unsigned long long)offset, ZSTD_getErrorName(got));
	if (got != raw_size)
		return plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: decompressed to %zu bytes, header says %u",
		                  in->name, block, (unsigned long long)offset, got, raw_size);
	trace_input_consume(in, need);
	n->in_entries = false;
	n->cursor = n->payload;
	n->payload_end = n->payload + raw_size;
	n->records_left = records;
	n->block_records = records;
	n->block_offset = offset;
	n->next_sequence++;
	trace_codec_reset(&n->codec);
	reader->info.blocks++;
	return 1;
}

/* The current block is used up: checks that a records block had no bytes
 * left, loads the next.  1 = a block is ready, 0 = the end, -1 = an error
 * (reader->failed set). */
static int native_advance(trace_reader *reader)
{
	trace_native_state *n = reader->native;
	plumb_status *status = &reader->failure;
	if (n->ended)
		return 0;
	if (!n->in_entries && n->cursor != n->payload_end) {
		plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: %zu bytes left after its %u records (corrupt)",
		           reader->input.name, (unsigned long long)(n->next_sequence - 1),
		           (unsigned long long)n->block_offset, (size_t)(n->payload_end - n->cursor), n->block_records);
		reader->failed = true;
		return -1;
	}
	int loaded = native_next_block(reader, status);
	if (loaded < 0)
		reader->failed = true;
	return loaded;
}

/* What went wrong walking an entry block (the loader checked it: out of
 * memory for a name, say). */
static long entries_failed(trace_reader *reader)
{
	trace_native_state *n = reader->native;
	plumb_fail(&reader->failure, EINVAL, "%s: block %llu at offset %llu: %s", reader->input.name,
	           (unsigned long long)(n->next_sequence - 1), (unsigned long long)n->block_offset, n->walker.error);
	reader->failed = true;
	return -1;
}

/* Records of an entry block into records[0, capacity): straight in while a
 * whole use (up to 255 records) fits, else through n->out. */
static long entries_read(trace_reader *reader, trace_record *records, size_t capacity)
{
	trace_native_state *n = reader->native;
	size_t produced = 0;
	while (produced < capacity) {
		if (n->out_position < n->out_count) {
			size_t k = n->out_count - n->out_position;
			if (k > capacity - produced)
				k = capacity - produced;
			memcpy(records + produced, n->out + n->out_position, k * sizeof *records);
			n->out_position += k;
			produced += k;
			continue;
		}
		if (n->word == n->word_end)
			break;
		long got;
		if (capacity - produced >= 256) {
			got = trace_entries_expand(&n->walker, &n->word, n->word_end, records + produced, capacity - produced, false);
			if (got < 0)
				return entries_failed(reader);
			produced += (size_t)got;
		} else {
			n->out_position = n->out_count = 0;
			got = trace_entries_expand(&n->walker, &n->word, n->word_end, n->out, OUT_RECORDS, false);
			if (got < 0)
				return entries_failed(reader);
			n->out_count = (size_t)got;
		}
		if (got == 0 && n->out_count == 0 && n->word < n->word_end)
			break;   /* cannot happen: 256 records hold any entry */
	}
	n->records_decoded += produced;
	return (long)produced;
}

/* Errors go to reader->failure with reader->failed set; records decoded
 * before the error are still returned (trace_reader_read reports the error
 * on the next call). */
static long native_read(trace_reader *reader, trace_record *records, size_t capacity)
{
	trace_native_state *n = reader->native;
	plumb_status *status = &reader->failure;
	size_t produced = 0;
	while (produced < capacity && !n->ended) {
		if (n->in_entries) {
			if (n->word < n->word_end || n->out_position < n->out_count) {
				long got = entries_read(reader, records + produced, capacity - produced);
				if (got < 0)
					break;
				produced += (size_t)got;
				continue;
			}
		} else if (n->records_left > 0) {
			size_t want = capacity - produced;
			if (want > n->records_left)
				want = n->records_left;
			const char *error = NULL;
			size_t got = trace_codec_decode(&n->codec, &n->cursor, n->payload_end, records + produced, want, &error);
			produced += got;
			n->records_left -= (uint32_t)got;
			n->records_decoded += got;
			if (got < want) {
				plumb_fail(status, EINVAL, "%s: block %llu at offset %llu: record %u: %s (corrupt)",
				           reader->input.name, (unsigned long long)(n->next_sequence - 1),
				           (unsigned long long)n->block_offset, n->block_records - n->records_left,
				           error ? error : "undecodable");
				reader->failed = true;
				break;
			}
			continue;
		}
		if (native_advance(reader) <= 0)
			break;
	}
	return (long)produced;
}

/* trace_reader_view_compact: runs of uses of entry blocks as they are,
 * everything else as records lent from n->out. */
static long native_lend_compact(trace_reader *reader, const trace_record **records, trace_compact *compact, size_t max)
{
	trace_native_state *n = reader->native;
	if (!n->out && !(n->out = malloc(OUT_RECORDS * sizeof *n->out))) {
		plumb_fail(&reader->failure, ENOMEM, "out of memory for a trace reader's buffer");
		reader->failed = true;
		return 0;
	}
	for (;;) {
		if (n->out_position < n->out_count) {
			size_t k = n->out_count - n->out_position;
			if (k > max)
				k = max;
			*records = n->out + n->out_position;
			n->out_position += k;
			reader->info.bytes = reader->input.offset;
			return (long)k;
		}
		n->out_position = n->out_count = 0;
		if (n->ended || reader->failed)
			return 0;
		if (n->in_entries && n->word < n->word_end) {
			long got = trace_entries_run(&n->walker, &n->word, n->word_end, compact);
			if (got < 0)
				return entries_failed(reader), 0;
			if (got > 0) {
				n->records_decoded += compact->records;
				reader->info.bytes = reader->input.offset;
				return got;
			}
			/* definitions, thread switches, single references, markers */
			got = trace_entries_expand(&n->walker, &n->word, n->word_end, n->out, OUT_RECORDS, true);
			if (got < 0)
				return entries_failed(reader), 0;
			n->out_count = (size_t)got;
			n->records_decoded += (uint64_t)got;
			continue;
		}
		if (!n->in_entries && n->records_left > 0) {
			long got = native_read(reader, n->out, n->records_left < OUT_RECORDS ? n->records_left : OUT_RECORDS);
			n->out_count = got > 0 ? (size_t)got : 0;
			if (got <= 0)
				return 0;
			continue;
		}
		if (native_advance(reader) <= 0)
			return 0;
	}
}

bool trace_native_starts_with_entries(trace_reader *reader)
{
	plumb_status ignored;
	long have = trace_input_fill(&reader->input, 4, &ignored);
	return have >= 4 && trace_get_u32(reader->input.data + reader->input.start) == TRACE_NATIVE_ENTRIES_MAGIC;
}

int trace_native_reader_init(trace_reader *reader, plumb_status *status)
{
	trace_input *in = &reader->input;
	long have = trace_input_fill(in, TRACE_NATIVE_HEADER_SIZE, status);
	if (have < 0)
		return -1;
	if (have == 0)
		return plumb_fail(status, EINVAL, "%s: empty input, not a native trace", in->name);
	const unsigned char *p = in->data + in->start;
	size_t compare = (size_t)have < TRACE_NATIVE_MAGIC_LENGTH ? (size_t)have : TRACE_NATIVE_MAGIC_LENGTH;
	if (memcmp(p, TRACE_NATIVE_MAGIC, compare) != 0)
		return plumb_fail(status, EINVAL, "%s: not a plumb native trace (bad magic)", in->name);
	if (have < TRACE_NATIVE_HEADER_SIZE)
		return plumb_fail(status, EINVAL, "%s: native trace header cut short (%ld of %d bytes)", in->name, have,
		                  TRACE_NATIVE_HEADER_SIZE);
	unsigned major = (unsigned)p[8] | (unsigned)p[9] << 8;
	unsigned minor = (unsigned)p[10] | (unsigned)p[11] << 8;
	uint32_t header_size = trace_get_u32(p + 12);
	if (major != TRACE_NATIVE_VERSION_MAJOR)
		return plumb_fail(status, EINVAL, "%s: unsupported native trace version %u.%u (this plumb reads version %d.x)",
		                  in->name, major, minor, TRACE_NATIVE_VERSION_MAJOR);
	/* A newer minor version may hold blocks this reader cannot tell from
	 * corruption: say so at once rather than fail in the middle. */
	if (minor > TRACE_NATIVE_VERSION_MINOR)
		return plumb_fail(status, EINVAL, "%s: native trace version %u.%u is newer than this plumb reads "
		                  "(versions %d.0 to %d.%d): read it with a newer plumb", in->name, major, minor,
		                  TRACE_NATIVE_VERSION_MAJOR, TRACE_NATIVE_VERSION_MAJOR, TRACE_NATIVE_VERSION_MINOR);
	if (header_size < TRACE_NATIVE_HEADER_SIZE || header_size > 65536)
		return plumb_fail(status, EINVAL, "%s: native trace header size %u is invalid (corrupt)", in->name, header_size);
	/* Later minor versions may append header fields this reader skips. */
	have = trace_input_fill(in, header_size, status);
	if (have < 0)
		return -1;
	if ((size_t)have < header_size)
		return plumb_fail(status, EINVAL, "%s: native trace header cut short (%ld of %u bytes)", in->name, have,
		                  header_size);
	trace_input_consume(in, header_size);
	trace_native_state *n = calloc(1, sizeof *n);
	if (!n || !(n->decompressor = ZSTD_createDCtx()) || !(n->payload = malloc(TRACE_NATIVE_WRITER_BLOCK_BYTES))) {
		if (n)
			ZSTD_freeDCtx(n->decompressor);
		free(n);
		return plumb_fail(status, ENOMEM, "out of memory for a trace decompressor");
	}
	n->payload_capacity = TRACE_NATIVE_WRITER_BLOCK_BYTES;
	n->cursor = n->payload_end = n->payload;
	n->codec.names = &reader->names;
	reader->native = n;
	reader->read = native_read;
	reader->lend_compact = native_lend_compact;
	reader->destroy = native_destroy;
	return 0;
}
