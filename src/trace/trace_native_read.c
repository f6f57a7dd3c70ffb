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
 * trace_reader_view_compact (the simulator).
 *
 * Loading a block (reading it, checksums, zstd, the entries' check) is a
 * "loader" with its own state (the input, the decompressor, the loader's
 * trace_entries, its own block count) that writes a native_block slot; the
 * caller's side installs a loaded slot as the current block and walks it.
 * A file of entries (trace_reader_open) loads ahead: a worker thread, started
 * at the first read, fills NATIVE_AHEAD slots in order while the caller walks
 * the current one (docs/trace-format.md, "Background decoding").  A slot
 * carries its block, or the end, or the loader's error, so records and errors
 * come in the same order as in-thread; the worker stops after the end or an
 * error, and the destroyer stops and joins it before anything is freed. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "core/status.h"
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"

/* Fuzzing builds skip the checksums so mutated inputs reach zstd and the
 * record decoder (which must be safe on any bytes anyway). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define TRACE_SKIP_CHECKSUMS 1
#else
#define TRACE_SKIP_CHECKSUMS 0
#endif

/* A loaded block, the end, or an error, as the loader left it. */
typedef enum { BLOCK_ERROR = -1, BLOCK_END = 0, BLOCK_RECORDS = 1, BLOCK_ENTRIES = 2 } block_kind;

typedef struct native_block {
	block_kind kind;
	unsigned char *buffer;         /* the payload, decompressed (entries: their words, addresses restored) */
	size_t capacity, size;         /* bytes */
	uint32_t records;              /* the header's */
	uint64_t offset;               /* input offset of its header */
	uint64_t after;                /* input offset after it (or after the end marker) */
	int truncated, complete;       /* BLOCK_END: as trace_reader_info says them */
	uint64_t truncated_bytes;
	plumb_status failure;          /* BLOCK_ERROR */
} native_block;

#define NATIVE_AHEAD 3

struct trace_native_state {
	/* the loader's (the worker's while it runs) */
	ZSTD_DCtx *decompressor;
	uint64_t load_sequence;        /* the next block to load */
	uint64_t load_records;         /* records of the complete blocks loaded */
	bool load_allow_truncated;
	bool load_entries_started;
	trace_entries loader;          /* the blocks as they are loaded (checks, differences) */
	/* loaded blocks: slot[0] alone in-thread, a ring of them ahead */
	native_block slot[NATIVE_AHEAD];
	bool may_ahead;                /* opened from a path (trace_reader_open) */
	bool ahead;                    /* load ahead in a worker (decided at the first block) */
	bool decided, started, joined, holding;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;        /* a slot was filled or given back, or stop was set */
	size_t filled, taken;          /* slots filled by the worker, given back by the caller */
	bool stop;
	/* the caller's */
	uint64_t bytes;                /* input offset after the current block */
	const unsigned char *cursor, *payload_end;
	uint32_t records_left;         /* in the current block */
	uint32_t block_records;
	uint64_t block_offset;         /* input offset of the current block's header */
	uint64_t next_sequence;        /* expected sequence number of the next block */
	trace_codec_state codec;
	bool ended;                    /* end marker read */
	/* entry blocks */
	bool in_entries;               /* the current block is an entry block */
	const uint64_t *word, *word_end;   /* the rest of it */
	bool entries_started;
	trace_entries walker;          /* the blocks as they are handed out */
	trace_record *out;             /* expanded records lent by native_lend_compact */
	size_t out_count, out_position;
};

#define OUT_RECORDS 4096u

static void stop_worker(trace_native_state *n)
{
	if (!n->started || n->joined)
		return;
	pthread_mutex_lock(&n->lock);
	n->stop = true;
	pthread_cond_broadcast(&n->changed);
	pthread_mutex_unlock(&n->lock);
	pthread_join(n->thread, NULL);
	n->joined = true;
}

static void native_destroy(trace_reader *reader)
{
	trace_native_state *n = reader->native;
	if (!n)
		return;
	stop_worker(n);
	pthread_mutex_destroy(&n->lock);
	pthread_cond_destroy(&n->changed);
	ZSTD_freeDCtx(n->decompressor);
	for (int i = 0; i < NATIVE_AHEAD; i++)
		free(n->slot[i].buffer);
	free(n->out);
	if (n->load_entries_started)
		trace_entries_free(&n->loader);
	if (n->entries_started)
		trace_entries_free(&n->walker);
	free(n);
	reader->native = NULL;
}

/* ---- The loader: the input, the decompressor and the loader's entries
 * into a slot; nothing of the caller's side (it may run in the worker). */

static int load_fail(native_block *b, int error, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int load_fail(native_block *b, int error, const char *format, ...)
{
	char message[sizeof b->failure.message];
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(message, sizeof message, format, arguments);
	va_end(arguments);
	plumb_fail(&b->failure, error, "%s", message);
	b->kind = BLOCK_ERROR;
	return -1;
}

/* The input ended where a block should be complete. */
static int load_truncated(trace_reader *reader, native_block *b, size_t have, const char *what, size_t need)
{
	trace_native_state *n = reader->native;
	b->truncated = 1;
	b->truncated_bytes = have;
	if (n->load_allow_truncated) {
		b->kind = BLOCK_END;
		return 0;
	}
	if (what == NULL)
		return load_fail(b, EPIPE, "%s: trace cut short: no end marker after block %llu "
		                 "(offset %llu); %llu records of complete blocks were read",
		                 reader->input.name, (unsigned long long)n->load_sequence,
		                 (unsigned long long)reader->input.offset, (unsigned long long)n->load_records);
	return load_fail(b, EPIPE, "%s: trace cut short: block %llu at offset %llu has %zu of %zu %s bytes; "
	                 "%llu records of complete blocks were read",
	                 reader->input.name, (unsigned long long)n->load_sequence,
	                 (unsigned long long)reader->input.offset, have, need, what,
	                 (unsigned long long)n->load_records);
}

static int load_end_marker(trace_reader *reader, native_block *b, const unsigned char *header)
{
	trace_native_state *n = reader->native;
	uint64_t offset = reader->input.offset;
	uint32_t blocks = trace_get_u32(header + 4);
	uint64_t total = trace_get_u64(header + 24);
	if (blocks != n->load_sequence || total != n->load_records)
		return load_fail(b, EINVAL, "%s: end marker at offset %llu says %u blocks and %llu records, "
		                 "but the trace held %llu blocks and %llu records (corrupt)",
		                 reader->input.name, (unsigned long long)offset, blocks, (unsigned long long)total,
		                 (unsigned long long)n->load_sequence, (unsigned long long)n->load_records);
	trace_input_consume(&reader->input, TRACE_NATIVE_BLOCK_HEADER_SIZE);
	long more = trace_input_fill(&reader->input, 1, &b->failure);
	if (more < 0)
		return b->kind = BLOCK_ERROR, -1;
	if (more > 0)
		return load_fail(b, EINVAL, "%s: data after the end marker at offset %llu (corrupt or concatenated)",
		                 reader->input.name, (unsigned long long)offset);
	b->kind = BLOCK_END;
	b->complete = 1;
	return 0;
}

/* Loads the next block into b (b->kind says what came: a block, the end or
 * an error); 1 = a block, 0 = the end, -1 = an error. */
static int load_block(trace_reader *reader, native_block *b)
{
	trace_native_state *n = reader->native;
	trace_input *in = &reader->input;
	b->truncated = b->complete = 0;
	b->truncated_bytes = 0;
	long have = trace_input_fill(in, TRACE_NATIVE_BLOCK_HEADER_SIZE, &b->failure);
	if (have < 0)
		return b->kind = BLOCK_ERROR, -1;
	if (have == 0)
		return load_truncated(reader, b, 0, NULL, 0);
	if (have < TRACE_NATIVE_BLOCK_HEADER_SIZE)
		return load_truncated(reader, b, (size_t)have, "header", TRACE_NATIVE_BLOCK_HEADER_SIZE);
	const unsigned char *header = in->data + in->start;
	uint64_t offset = in->offset;
	unsigned long long block = (unsigned long long)n->load_sequence;
	uint32_t magic = trace_get_u32(header);
	if (magic != TRACE_NATIVE_BLOCK_MAGIC && magic != TRACE_NATIVE_END_MAGIC && magic != TRACE_NATIVE_ENTRIES_MAGIC)
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: bad block magic 0x%08x (corrupt)",
		                 in->name, block, (unsigned long long)offset, magic);
	if (trace_get_u32(header + 20) != trace_block_header_check(header) && !TRACE_SKIP_CHECKSUMS)
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: header checksum mismatch (corrupt)",
		                 in->name, block, (unsigned long long)offset);
	if (magic == TRACE_NATIVE_END_MAGIC)
		return load_end_marker(reader, b, header);
	uint32_t sequence = trace_get_u32(header + 4);
	uint32_t records = trace_get_u32(header + 8);
	uint32_t raw_size = trace_get_u32(header + 12);
	uint32_t packed_size = trace_get_u32(header + 16);
	uint64_t payload_check = trace_get_u64(header + 24);
	if (sequence != n->load_sequence)
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: sequence number %u (blocks missing or reordered)",
		                 in->name, block, (unsigned long long)offset, sequence);
	bool entries = magic == TRACE_NATIVE_ENTRIES_MAGIC;
	if (entries ? raw_size > TRACE_NATIVE_MAX_ENTRY_BYTES || raw_size % 8 != 0 ||
	              packed_size > ZSTD_compressBound(TRACE_NATIVE_MAX_ENTRY_BYTES)
	            : records > TRACE_NATIVE_MAX_BLOCK_RECORDS || raw_size > TRACE_NATIVE_MAX_BLOCK_BYTES ||
	              packed_size > ZSTD_compressBound(TRACE_NATIVE_MAX_BLOCK_BYTES))
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: sizes beyond the format's limits "
		                 "(%u records, %u bytes, %u compressed)", in->name, block, (unsigned long long)offset,
		                 records, raw_size, packed_size);
	size_t need = TRACE_NATIVE_BLOCK_HEADER_SIZE + (size_t)packed_size;
	have = trace_input_fill(in, need, &b->failure);
	if (have < 0)
		return b->kind = BLOCK_ERROR, -1;
	if ((size_t)have < need)
		return load_truncated(reader, b, (size_t)have, "block", need);
	const unsigned char *packed = in->data + in->start + TRACE_NATIVE_BLOCK_HEADER_SIZE;
	if (trace_checksum(packed, packed_size, sequence) != payload_check && !TRACE_SKIP_CHECKSUMS)
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: payload checksum mismatch (corrupt)",
		                 in->name, block, (unsigned long long)offset);
	if (raw_size > b->capacity || !b->buffer) {
		size_t capacity = raw_size ? raw_size : 8;
		unsigned char *grown = realloc(b->buffer, capacity);
		if (!grown)
			return load_fail(b, ENOMEM, "out of memory for a %u-byte trace block", raw_size);
		b->buffer = grown;
		b->capacity = capacity;
	}
	size_t got = ZSTD_decompressDCtx(n->decompressor, b->buffer, raw_size, packed, packed_size);
	if (ZSTD_isError(got))
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: zstd: %s", in->name, block,
		                 (unsigned long long)offset, ZSTD_getErrorName(got));
	if (got != raw_size)
		return load_fail(b, EINVAL, "%s: block %llu at offset %llu: decompressed to %zu bytes, header says %u",
		                 in->name, block, (unsigned long long)offset, got, raw_size);
	if (entries) {
		/* checked whole, its stored differences turned back into addresses */
		if (!n->load_entries_started) {
			trace_entries_init(&n->loader, NULL);
			n->load_entries_started = true;
		}
		uint64_t stood_for;
		if (trace_entries_scan(&n->loader, (uint64_t *)(void *)b->buffer, raw_size / 8, NULL, TRACE_SCAN_DECODE,
		                       &stood_for) < 0)
			return load_fail(b, EINVAL, "%s: block %llu at offset %llu: %s (corrupt)", in->name, block,
			                 (unsigned long long)offset, n->loader.error);
		if (stood_for != records)
			return load_fail(b, EINVAL, "%s: block %llu at offset %llu: its entries stand for %llu records, "
			                 "its header says %u (corrupt)", in->name, block, (unsigned long long)offset,
			                 (unsigned long long)stood_for, records);
	}
	trace_input_consume(in, need);
	b->kind = entries ? BLOCK_ENTRIES : BLOCK_RECORDS;
	b->size = raw_size;
	b->records = records;
	b->offset = offset;
	n->load_sequence++;
	n->load_records += records;
	return 1;
}

/* ---- Loading ahead: the worker fills the slots in order. */

static void *worker(void *argument)
{
	trace_reader *reader = argument;
	trace_native_state *n = reader->native;
	for (size_t next = 0;; next++) {
		pthread_mutex_lock(&n->lock);
		while (!n->stop && next - n->taken >= NATIVE_AHEAD)
			pthread_cond_wait(&n->changed, &n->lock);
		bool stop = n->stop;
		pthread_mutex_unlock(&n->lock);
		if (stop)
			return NULL;
		/* The slot is the worker's alone until it publishes it below. */
		native_block *b = &n->slot[next % NATIVE_AHEAD];
		int loaded = load_block(reader, b);
		b->after = reader->input.offset;
		pthread_mutex_lock(&n->lock);
		n->filled = next + 1;
		pthread_cond_broadcast(&n->changed);
		pthread_mutex_unlock(&n->lock);
		if (loaded <= 0)
			return NULL;
	}
}

/* Starts the worker at the first block; false if loading stays in-thread. */
static bool start_worker(trace_reader *reader)
{
	trace_native_state *n = reader->native;
	if (n->started)
		return true;
	if (!n->ahead || n->decided)
		return false;
	n->decided = true;
	n->load_allow_truncated = reader->allow_truncated;
	/* signals go to the caller's thread, which decides what they stop */
	sigset_t all, previous;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &previous);
	int error = pthread_create(&n->thread, NULL, worker, reader);
	pthread_sigmask(SIG_SETMASK, &previous, NULL);
	if (error != 0) {
		n->ahead = false;
		return false;   /* no thread to be had: the same blocks in-thread */
	}
	n->started = true;
	return true;
}

/* The next loaded block: the worker's next slot (the current one given
 * back), or slot 0 loaded here. */
static native_block *next_loaded(trace_reader *reader)
{
	trace_native_state *n = reader->native;
	if (!start_worker(reader)) {
		n->decided = true;
		n->load_allow_truncated = reader->allow_truncated;
		native_block *b = &n->slot[0];
		load_block(reader, b);
		b->after = reader->input.offset;
		return b;
	}
	pthread_mutex_lock(&n->lock);
	if (n->holding) {
		n->taken++;
		pthread_cond_broadcast(&n->changed);
	}
	while (n->filled == n->taken)
		pthread_cond_wait(&n->changed, &n->lock);
	pthread_mutex_unlock(&n->lock);
	n->holding = true;
	return &n->slot[n->taken % NATIVE_AHEAD];
}

/* ---- The caller's side. */

/* The current block is used up: checks that a records block had no bytes
 * left, takes the next.  1 = a block is ready, 0 = the end, -1 = an error
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
	native_block *b = next_loaded(reader);
	n->bytes = b->after;
	reader->info.bytes = n->bytes;
	if (b->truncated) {
		reader->info.truncated = 1;
		reader->info.truncated_bytes = b->truncated_bytes;
	}
	if (b->kind == BLOCK_ERROR) {
		*status = b->failure;
		reader->failed = true;
		return -1;
	}
	if (b->kind == BLOCK_END) {
		n->ended = true;
		if (b->complete)
			reader->info.complete = 1;
		return 0;
	}
	n->in_entries = b->kind == BLOCK_ENTRIES;
	if (n->in_entries && !n->out && !(n->out = malloc(OUT_RECORDS * sizeof *n->out))) {
		plumb_fail(status, ENOMEM, "out of memory for a trace reader's buffer");
		reader->failed = true;
		return -1;
	}
	if (n->in_entries) {
		if (!n->entries_started) {
			trace_entries_init(&n->walker, &reader->names);
			n->entries_started = true;
		}
		n->word = (const uint64_t *)(const void *)b->buffer;
		n->word_end = n->word + b->size / 8;
		n->cursor = n->payload_end = NULL;
		n->records_left = 0;
	} else {
		n->cursor = b->buffer;
		n->payload_end = b->buffer + b->size;
		n->records_left = b->records;
		n->word = n->word_end = NULL;
		trace_codec_reset(&n->codec);
	}
	n->block_records = b->records;
	n->block_offset = b->offset;
	n->next_sequence++;
	reader->info.blocks++;
	return 1;
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
			reader->info.bytes = n->bytes;
			return (long)k;
		}
		n->out_position = n->out_count = 0;
		if (n->ended || reader->failed)
			return 0;
		if (n->in_entries && n->word < n->word_end) {
			long got = trace_entries_next_run(reader, &n->walker, &n->word, n->word_end, compact);
			if (got < 0)
				return entries_failed(reader), 0;
			if (got > 0) {
				reader->info.bytes = n->bytes;
				return got;
			}
			/* definitions, thread switches, single references, markers */
			got = trace_entries_expand(&n->walker, &n->word, n->word_end, n->out, OUT_RECORDS, true);
			if (got < 0)
				return entries_failed(reader), 0;
			n->out_count = (size_t)got;
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

void trace_native_allow_ahead(trace_reader *reader)
{
	if (reader->native)
		reader->native->may_ahead = reader->native->ahead = true;
}

int trace_native_set_ahead(trace_reader *reader, int enable)
{
	trace_native_state *n = reader->native;
	if (!n)
		return 0;
	if (!n->started && !n->decided)
		n->ahead = n->may_ahead && enable != 0;
	return n->started || n->ahead;
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
	if (!n || !(n->decompressor = ZSTD_createDCtx())) {
		free(n);
		return plumb_fail(status, ENOMEM, "out of memory for a trace decompressor");
	}
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->changed, NULL);
	n->bytes = in->offset;
	n->codec.names = &reader->names;
	reader->native = n;
	reader->read = native_read;
	reader->lend_compact = native_lend_compact;
	reader->destroy = native_destroy;
	return 0;
}
