/* Writer of plumb's native trace format (docs/trace-format.md): records are
 * encoded into a block buffer; a full block is zstd-compressed and written
 * with its header, so at most one block is ever held in memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "plumb/status.h"
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
};

static int put(trace_writer *writer, const void *data, size_t length, plumb_status *status)
{
	if (length && fwrite(data, 1, length, writer->stream) != length)
		return plumb_fail_errno(status, errno ? errno : EIO, "writing the trace");
	return 0;
}

static int flush_block(trace_writer *writer, plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
	if (n->block_records == 0)
		return 0;
	size_t packed = ZSTD_compressCCtx(n->compressor, n->packed, n->packed_capacity, n->payload, n->payload_length,
	                                  TRACE_ZSTD_LEVEL);
	if (ZSTD_isError(packed))
		return plumb_fail(status, EIO, "zstd: %s", ZSTD_getErrorName(packed));
	unsigned char header[TRACE_NATIVE_BLOCK_HEADER_SIZE];
	trace_put_u32(header, TRACE_NATIVE_BLOCK_MAGIC);
	trace_put_u32(header + 4, n->sequence);
	trace_put_u32(header + 8, n->block_records);
	trace_put_u32(header + 12, (uint32_t)n->payload_length);
	trace_put_u32(header + 16, (uint32_t)packed);
	trace_put_u64(header + 24, trace_checksum(n->packed, packed, n->sequence));
	trace_put_u32(header + 20, trace_block_header_check(header));
	if (put(writer, header, sizeof header, status) < 0 || put(writer, n->packed, packed, status) < 0)
		return -1;
	n->sequence++;
	n->total_records += n->block_records;
	n->block_records = 0;
	n->payload_length = 0;
	trace_codec_reset(&n->codec);
	return 0;
}

static int native_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status)
{
	trace_native_writer_state *n = writer->native;
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

static void native_destroy(trace_writer *writer)
{
	trace_native_writer_state *n = writer->native;
	if (!n)
		return;
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
