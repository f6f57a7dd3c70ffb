/* Writer of plumb's native trace format (docs/trace-format.md): records are
 * encoded into a block buffer; a full block is zstd-compressed and written
 * with its header, so at most one block is ever held in memory.  Entries of
 * plumbgrind's ring go into entry blocks instead (format 1.3, "Entry
 * blocks"): the words as the tool wrote them, each use's data addresses as
 * differences from the same data event's last address (a loop's stride
 * repeats, which zstd keeps in a few bits). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "core/status.h"
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"

/* zstd's default level: a good ratio at several hundred MB/s; decoding speed
 * barely depends on the level. */
#define TRACE_ZSTD_LEVEL 3

struct trace_native_writer_state {
	ZSTD_CCtx *compressor;
	trace_codec_state codec;
	unsigned char *payload;
	size_t payload_length;
	uint32_t block_records;
	uint32_t sequence;
	uint64_t total_records;
	unsigned char *packed;
	size_t packed_capacity;
	/* entry blocks (trace_writer_take_entries) */
	bool entries_started;
	trace_entries entries;
	uint64_t *words;               /* the block being filled, its data addresses as differences */
	size_t word_count;
	uint64_t word_records;         /* the records its entries stand for */
};

#define ENTRY_BLOCK_WORDS (TRACE_NATIVE_WRITER_BLOCK_BYTES / 8)
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "entry blocks hold little-endian words as they are in memory");

static int put(trace_writer *writer, const void *data, size_t length, plumb_status *status)
{
	if (length && fwrite(data, 1, length, writer->stream) != length)
		return plumb_fail_errno(status, errno ? errno : EIO, "writing the trace");
	return 0;
}

/* Compresses and writes one block of either kind. */
static int put_block(trace_writer *writer, uint32_t magic, const void *payload, size_t length, uint32_t records,
                     plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
	size_t packed = ZSTD_compressCCtx(n->compressor, n->packed, n->packed_capacity, payload, length, TRACE_ZSTD_LEVEL);
	if (ZSTD_isError(packed))
		return plumb_fail(status, EIO, "zstd: %s", ZSTD_getErrorName(packed));
	unsigned char header[TRACE_NATIVE_BLOCK_HEADER_SIZE];
	trace_put_u32(header, magic);
	trace_put_u32(header + 4, n->sequence);
	trace_put_u32(header + 8, records);
	trace_put_u32(header + 12, (uint32_t)length);
	trace_put_u32(header + 16, (uint32_t)packed);
	trace_put_u64(header + 24, trace_checksum(n->packed, packed, n->sequence));
	trace_put_u32(header + 20, trace_block_header_check(header));
	if (put(writer, header, sizeof header, status) < 0 || put(writer, n->packed, packed, status) < 0)
		return -1;
	n->sequence++;
	n->total_records += records;
	return 0;
}

static int flush_entries(trace_writer *writer, plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
	if (n->word_count == 0)
		return 0;
	if (put_block(writer, TRACE_NATIVE_ENTRIES_MAGIC, n->words, n->word_count * sizeof *n->words,
	              (uint32_t)n->word_records, status) < 0)
		return -1;
	n->word_count = 0;
	n->word_records = 0;
	return 0;
}

static int flush_block(trace_writer *writer, plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
	if (flush_entries(writer, status) < 0)
		return -1;
	if (n->block_records == 0)
		return 0;
	if (put_block(writer, TRACE_NATIVE_BLOCK_MAGIC, n->payload, n->payload_length, n->block_records, status) < 0)
		return -1;
	n->block_records = 0;
	n->payload_length = 0;
	trace_codec_reset(&n->codec);
	return 0;
}

static int native_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
	/* records after entries: the entries' block first, so the order stays */
	if (count && flush_entries(writer, status) < 0)
		return -1;
	for (size_t i = 0; i < count; i++) {
		if (n->block_records == TRACE_NATIVE_WRITER_BLOCK_RECORDS ||
		    n->payload_length + TRACE_NATIVE_MARKER_MAX_BYTES > TRACE_NATIVE_WRITER_BLOCK_BYTES) {
			if (flush_block(writer, status) < 0)
				return -1;
		}
		unsigned char *at = n->payload + n->payload_length;
		n->payload_length += trace_is_marker(&records[i]) ? trace_codec_encode_marker(&n->codec, &records[i], at)
		                     : trace_is_collector_marker(&records[i]) ? trace_codec_encode_collector(&n->codec, &records[i], at)
		                     : trace_codec_encode(&n->codec, &records[i], at);
		n->block_records++;
	}
	return 0;
}

static int native_finish(trace_writer *writer, plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
	if (flush_block(writer, status) < 0)
		return -1;
	unsigned char end[TRACE_NATIVE_BLOCK_HEADER_SIZE] = { 0 };
	trace_put_u32(end, TRACE_NATIVE_END_MAGIC);
	trace_put_u32(end + 4, n->sequence);
	trace_put_u64(end + 24, n->total_records);
	trace_put_u32(end + 20, trace_block_header_check(end));
	return put(writer, end, sizeof end, status);
}

int trace_writer_can_take_entries(const trace_writer *writer, const trace_reader *reader)
{
	return writer && reader && writer->native && reader->ring && !reader->failed && reader->info.records == 0;
}

long trace_writer_take_entries(trace_writer *writer, trace_reader *reader, plumb_status *status)
{
	if (!writer || !writer->native || !reader || !reader->ring)
		return plumb_fail(status, EINVAL, "entries go from plumbgrind's ring to a native trace writer");
	trace_native_writer_state *n = writer->native;
	if (!n->entries_started) {
		/* records written before: their block first */
		if (n->block_records && flush_block(writer, status) < 0)
			return -1;
		if (!n->words && !(n->words = malloc(ENTRY_BLOCK_WORDS * sizeof *n->words)))
			return plumb_fail(status, ENOMEM, "out of memory for a trace writer");
		trace_entries_init(&n->entries, NULL);
		n->entries_started = true;
	}
	if (n->block_records && flush_block(writer, status) < 0)
		return -1;
	const uint64_t *words;
	size_t count;
	int got = trace_ring_take_block(reader, &words, &count);
	if (got <= 0) {
		if (got < 0 && status)
			*status = reader->failure;
		return got;
	}
	if (count > ENTRY_BLOCK_WORDS)
		return plumb_fail(status, EPROTO, "plumbgrind's binary trace: a block of %zu words, more than an entry block's %zu",
		                  count, (size_t)ENTRY_BLOCK_WORDS);
	if (n->word_count + count > ENTRY_BLOCK_WORDS && flush_entries(writer, status) < 0)
		return -1;
	uint64_t records;
	/* checked as the ring's reader would (the words are the tool's) */
	if (trace_entries_scan(&n->entries, (uint64_t *)words, count, n->words + n->word_count, TRACE_SCAN_ENCODE,
	                       &records) < 0)
		return plumb_fail(status, EPROTO, "plumbgrind's binary trace: %s", n->entries.error);
	/* at most 255 records a word: a block's 32-bit record count holds them */
	n->word_count += count;
	n->word_records += records;
	writer->records += records;
	reader->info.records += records;
	return records > LONG_MAX ? LONG_MAX : (long)records;
}

static void native_destroy(trace_writer *writer)
{
	trace_native_writer_state *n = writer->native;
	if (!n)
		return;
	if (n->entries_started)
		trace_entries_free(&n->entries);
	free(n->words);
	ZSTD_freeCCtx(n->compressor);
	free(n->payload);
	free(n->packed);
	free(n);
	writer->native = NULL;
}

int trace_native_writer_init(trace_writer *writer, plumb_status *status)
{
	trace_native_writer_state *n = calloc(1, sizeof *n);
	if (!n)
		return plumb_fail(status, ENOMEM, "out of memory for a trace writer");
	writer->native = n;
	writer->write = native_write;
	writer->finish = native_finish;
	writer->destroy = native_destroy;
	n->packed_capacity = ZSTD_compressBound(TRACE_NATIVE_WRITER_BLOCK_BYTES);
	n->payload = malloc(TRACE_NATIVE_WRITER_BLOCK_BYTES);
	n->packed = malloc(n->packed_capacity);
	n->compressor = ZSTD_createCCtx();
	if (!n->payload || !n->packed || !n->compressor)
		return plumb_fail(status, ENOMEM, "out of memory for a trace writer");
	unsigned char header[TRACE_NATIVE_HEADER_SIZE];
	memcpy(header, TRACE_NATIVE_MAGIC, TRACE_NATIVE_MAGIC_LENGTH);
	header[8] = TRACE_NATIVE_VERSION_MAJOR;
	header[9] = 0;
	header[10] = TRACE_NATIVE_VERSION_MINOR;
	header[11] = 0;
	trace_put_u32(header + 12, TRACE_NATIVE_HEADER_SIZE);
	return put(writer, header, sizeof header, status);
}
