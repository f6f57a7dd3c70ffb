/* The binary trace from plumbgrind (vg/pg_ring.c): a stream of 64-bit words
 * written by the instrumented program into a ring of blocks in shared memory
 * (a memfd), expanded here into records for the caller (the simulator).  The
 * protocol:
 *
 *   memory  BLOCKS blocks of BLOCK_BYTES, used in order, cyclically;
 *   full    a pipe from the tool: a 4-byte count of the words written in each
 *           block in turn (little-endian); end of file = end of the trace;
 *   free    a socket to the tool: one byte per block read; the tool writes
 *           block k >= BLOCKS only after reading one.
 *
 * Both sides block in read(), so neither spins on a shared core.  The words
 * are entries (vg/pg_ring.c has their layout): a definition, sent once when a
 * superblock is instrumented, says what a flush of its events holds (kinds,
 * sizes, instruction addresses); a use names the definition and gives only the
 * data addresses; thread switches, single references and region markers are
 * entries of their own.  So the instrumented code stores one word per flush
 * plus one per data reference, and this side writes the records.  A block is
 * expanded into the reader's buffer and given back at once.  The tool is
 * plumb's own, but everything is still checked as it comes (tags, numbers,
 * lengths, names): a bad entry is an error naming the block, never a wrong
 * number. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "plumb/status.h"
#include "trace/trace_internal.h"

#define TAG_USE 1u
#define TAG_DEFINE 2u
#define TAG_THREAD 3u
#define TAG_SINGLE 4u
#define TAG_MARKER 5u
#define TAG_CALL 6u
#define TAG_RETURN 7u
#define OUT_RECORDS 4096u


struct trace_ring {
	uint64_t *memory;
	size_t blocks, block_words;
	int memory_fd;                 /* the child's ends, closed once it has them */
	int full_write, free_read;
	int full_read, free_write;     /* ours */
	uint64_t sequence;             /* the block being read */
	const uint64_t *word, *end;    /* the rest of the block being expanded */
	bool holding;                  /* a block is being read, not yet given back */
	uint32_t thread;
	/* definitions: number i's records (thread 0, data addresses 0) are
	 * templates[first[i], first[i] + count[i]); data_at[first[i] + k] is the
	 * position of its k-th data reference among them */
	uint32_t *first;
	uint8_t *count, *data;
	size_t definitions, definitions_capacity;
	trace_record *templates;
	uint8_t *data_at;
	size_t event_count, events_capacity;
	uint64_t stream;               /* trace_compact's identity of this stream */
	trace_record *out;             /* expanded records, lent to the caller */
	size_t out_count, out_position;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void trace_ring_free(trace_ring *ring)
{
	if (!ring)
		return;
	if (ring->memory)
		munmap(ring->memory, ring->blocks * ring->block_words * 8);
	close_fd(&ring->memory_fd);
	close_fd(&ring->full_write);
	close_fd(&ring->free_read);
	close_fd(&ring->full_read);
	close_fd(&ring->free_write);
	free(ring->first);
	free(ring->count);
	free(ring->data);
	free(ring->templates);
	free(ring->data_at);
	free(ring->out);
	free(ring);
}

int trace_ring_new(trace_ring **out, size_t blocks, size_t block_bytes, plumb_status *status)
{
	*out = NULL;
	trace_ring *ring = calloc(1, sizeof *ring);
	if (!ring || !(ring->out = malloc(OUT_RECORDS * sizeof *ring->out))) {
		free(ring);
		return plumb_fail(status, ENOMEM, "out of memory for the trace ring");
	}
	ring->memory_fd = ring->full_write = ring->free_read = ring->full_read = ring->free_write = -1;
	/* the ring's address and when it was made: two rings at one address
	 * were made at different times */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ring->stream = (uint64_t)(uintptr_t)ring * 0x9e3779b97f4a7c15ull ^ ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	ring->blocks = blocks;
	ring->block_words = block_bytes / 8;
	size_t bytes = blocks * ring->block_words * 8;
	int full[2], free_pair[2];
	if ((ring->memory_fd = memfd_create("plumb-trace-ring", MFD_CLOEXEC)) < 0 ||
	    ftruncate(ring->memory_fd, (off_t)bytes) < 0) {
		int error = errno;
		trace_ring_free(ring);
		return plumb_fail_errno(status, error, "cannot create the trace ring's shared memory");
	}
	void *memory = mmap(NULL, bytes, PROT_READ, MAP_SHARED, ring->memory_fd, 0);
	if (memory == MAP_FAILED) {
		int error = errno;
		trace_ring_free(ring);
		return plumb_fail_errno(status, error, "cannot map the trace ring");
	}
	ring->memory = memory;
	if (pipe2(full, O_CLOEXEC) < 0) {
		int error = errno;
		trace_ring_free(ring);
		return plumb_fail_errno(status, error, "pipe");
	}
	ring->full_read = full[0];
	ring->full_write = full[1];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, free_pair) < 0) {
		int error = errno;
		trace_ring_free(ring);
		return plumb_fail_errno(status, error, "socketpair");
	}
	ring->free_write = free_pair[0];
	ring->free_read = free_pair[1];
	*out = ring;
	return 0;
}

int trace_ring_tool_option(const trace_ring *ring, char *option, size_t size)
{
	int n = snprintf(option, size, "--plumb-ring=%d,%d,%d,%zu,%zu", ring->memory_fd, ring->full_write,
	                 ring->free_read, ring->blocks, ring->block_words * 8);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

void trace_ring_child_keep(const trace_ring *ring)
{
	fcntl(ring->memory_fd, F_SETFD, 0);
	fcntl(ring->full_write, F_SETFD, 0);
	fcntl(ring->free_read, F_SETFD, 0);
}

void trace_ring_parent_started(trace_ring *ring)
{
	close_fd(&ring->memory_fd);
	close_fd(&ring->full_write);
	close_fd(&ring->free_read);
}

static long ring_fail(trace_reader *reader, const char *what)
{
	reader->failed = true;
	plumb_fail(&reader->failure, EPROTO, "plumbgrind's binary trace, block %llu: %s",
	           (unsigned long long)reader->ring->sequence, what);
	return -1;
}

static int define(trace_reader *reader, const uint64_t *w, uint32_t id, uint32_t n)
{
	trace_ring *ring = reader->ring;
	if (id != ring->definitions)
		return (int)ring_fail(reader, "a definition out of order");
	if (n == 0 || n > 255)
		return (int)ring_fail(reader, "a definition of a bad length");
	if (ring->definitions == ring->definitions_capacity) {
		size_t capacity = ring->definitions_capacity ? 2 * ring->definitions_capacity : 4096;
		uint32_t *first = realloc(ring->first, capacity * sizeof *first);
		if (first)
			ring->first = first;
		uint8_t *count = realloc(ring->count, capacity);
		if (count)
			ring->count = count;
		uint8_t *data = realloc(ring->data, capacity);
		if (data)
			ring->data = data;
		if (!first || !count || !data)
			return (int)ring_fail(reader, "out of memory for definitions");
		ring->definitions_capacity = capacity;
	}
	if (ring->event_count + n > ring->events_capacity) {
		size_t capacity = ring->events_capacity ? 2 * ring->events_capacity : 65536;
		trace_record *templates = realloc(ring->templates, capacity * sizeof *templates);
		if (templates)
			ring->templates = templates;
		uint8_t *data_at = realloc(ring->data_at, capacity);
		if (data_at)
			ring->data_at = data_at;
		if (!templates || !data_at)
			return (int)ring_fail(reader, "out of memory for definitions");
		ring->events_capacity = capacity;
	}
	if (ring->event_count > UINT32_MAX - n)
		return (int)ring_fail(reader, "too many definitions");
	uint8_t data = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t word = w[i];
		trace_record *r = &ring->templates[ring->event_count + i];
		r->instruction_address = word & ((1ull << 48) - 1);
		r->size = (uint16_t)((word >> 48) & 0x3fff);
		r->kind = (uint8_t)(word >> 62);
		r->address = r->kind == TRACE_INSTRUCTION ? r->instruction_address : 0;
		r->time = 0;
		r->thread = 0;
		r->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		if (r->size == 0)
			return (int)ring_fail(reader, "an event of size 0");
		if (r->kind != TRACE_INSTRUCTION)
			ring->data_at[ring->event_count + data++] = (uint8_t)i;
	}
	ring->first[id] = (uint32_t)ring->event_count;
	ring->count[id] = (uint8_t)n;
	ring->data[id] = data;
	ring->event_count += n;
	ring->definitions++;
	return 0;
}

/* Takes the next block; 0 at the end, -1 on an error, 1 with a block. */
static int next_block(trace_reader *reader)
{
	trace_ring *ring = reader->ring;
	if (ring->holding) {
		/* Expanded: give it back.  MSG_NOSIGNAL: the tool may have exited. */
		static const char token = 0;
		ssize_t n;
		while ((n = send(ring->free_write, &token, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
			;
		ring->holding = false;
		ring->sequence++;
	}
	long have = trace_input_fill(&reader->input, 4, &reader->failure);
	if (have < 0) {
		reader->failed = true;
		return -1;
	}
	if (have == 0)
		return 0;
	if (have < 4)
		return (int)ring_fail(reader, "cut short inside a block's length");
	uint32_t words = trace_get_u32(reader->input.data + reader->input.start);
	trace_input_consume(&reader->input, 4);
	if (words > ring->block_words)
		return (int)ring_fail(reader, "a block longer than the ring's blocks");
	ring->word = ring->memory + (ring->sequence % ring->blocks) * ring->block_words;
	ring->end = ring->word + words;
	ring->holding = true;
	return 1;
}

/* Expands entries into out[0, max); returns the count (0: the block is done).
 * With stop_at_use, stops before a use entry (trace_reader_view_compact
 * hands those out as they are). */
static long expand(trace_reader *reader, trace_record *out, size_t max, bool stop_at_use)
{
	trace_ring *ring = reader->ring;
	const uint64_t *w = ring->word, *end = ring->end;
	size_t n = 0;
	while (w < end) {
		uint64_t head = w[0];
		unsigned tag = (unsigned)(head >> 60);
		if (tag == TAG_USE) {
			if (stop_at_use)
				break;
			uint64_t id = head & ((1ull << 60) - 1);
			if (id >= ring->definitions)
				return ring_fail(reader, "a use of an unknown definition");
			size_t count = ring->count[id];
			if (n + count > max)
				break;
			size_t data = ring->data[id];
			if ((size_t)(end - w) < 1 + data)
				return ring_fail(reader, "an entry cut by the block's end");
			/* the definition's records, then what only the run knew */
			trace_record *r = out + n;
			memcpy(r, ring->templates + ring->first[id], count * sizeof *r);
			const uint8_t *at = ring->data_at + ring->first[id];
			for (size_t i = 0; i < data; i++)
				r[at[i]].address = w[1 + i];
			if (ring->thread)
				for (size_t i = 0; i < count; i++)
					r[i].thread = ring->thread;
			n += count;
			w += 1 + data;
			continue;
		}
		if (tag == TAG_DEFINE) {
			uint32_t count = (uint32_t)((head >> 32) & 0xffff);
			if ((size_t)(end - w) < 1 + (size_t)count)
				return ring_fail(reader, "an entry cut by the block's end");
			if (define(reader, w + 1, (uint32_t)(head & 0xffffffffu), count) < 0)
				return -1;
			w += 1 + count;
		} else if (tag == TAG_THREAD) {
			ring->thread = (uint32_t)head;
			w++;
		} else if (tag == TAG_SINGLE) {
			if (n == max)
				break;
			if (end - w < 3)
				return ring_fail(reader, "an entry cut by the block's end");
			trace_record *r = &out[n++];
			r->address = w[1];
			r->instruction_address = w[2];
			r->time = 0;
			r->thread = ring->thread;
			r->size = (uint16_t)head;
			r->kind = (uint8_t)(head >> 16);
			r->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
			if (r->kind > TRACE_MODIFY || r->size == 0)
				return ring_fail(reader, "a bad single reference");
			w += 3;
		} else if (tag == TAG_MARKER) {
			if (n == max)
				break;
			size_t length = (size_t)((head >> 32) & 0xff), words = 1 + (length + 7) / 8;
			if ((size_t)(end - w) < words)
				return ring_fail(reader, "an entry cut by the block's end");
			const char *text = (const char *)(w + 1);
			if (trace_region_name_problem(text, length))
				return ring_fail(reader, "a bad region marker");
			const char *name = trace_names_intern(&reader->names, text, length);
			if (!name)
				return ring_fail(reader, "out of memory for region names");
			trace_region_marker(&out[n++], (int)((head >> 56) & 1), (uint32_t)head, name);
			w += words;
		} else if (tag == TAG_CALL || tag == TAG_RETURN) {
			if (n == max)
				break;
			size_t words = tag == TAG_CALL ? 3 : 1;
			if ((size_t)(end - w) < words)
				return ring_fail(reader, "an entry cut by the block's end");
			trace_record *r = &out[n++];
			r->address = tag == TAG_CALL ? w[2] : (head & 0xffffffffu);
			r->instruction_address = tag == TAG_CALL ? w[1] : 0;
			r->time = 0;
			r->thread = ring->thread;
			r->size = 0;
			r->kind = tag == TAG_CALL ? TRACE_CALL : TRACE_RETURN;
			r->flags = 0;
			w += words;
		} else {
			return ring_fail(reader, "an entry of an unknown kind");
		}
	}
	ring->word = w;
	return (long)n;
}

static long ring_lend(trace_reader *reader, const trace_record **records, size_t max)
{
	trace_ring *ring = reader->ring;
	while (ring->out_position == ring->out_count) {
		ring->out_position = ring->out_count = 0;
		if (ring->holding) {
			long n = expand(reader, ring->out, OUT_RECORDS, false);
			if (n < 0)
				return 0;
			if (n > 0) {
				ring->out_count = (size_t)n;
				break;
			}
		}
		if (next_block(reader) <= 0)
			return 0;
	}
	size_t n = ring->out_count - ring->out_position;
	if (n > max)
		n = max;
	*records = ring->out + ring->out_position;
	ring->out_position += n;
	reader->info.bytes += n * sizeof(trace_record);
	return (long)n;
}

/* The run of use entries at the ring's position, checked: every number
 * defined, no entry cut by the block's end (the ids are below 2^32: the tool
 * counts them in 32 bits).  0 when the next entry is not a use. */
static long compact_run(trace_reader *reader, trace_compact *compact)
{
	trace_ring *ring = reader->ring;
	const uint64_t *w = ring->word, *end = ring->end;
	const uint64_t *start = w;
	uint64_t records = 0;
	const size_t definitions = ring->definitions;
	while (w < end && (w[0] >> 60) == TAG_USE) {
		/* the words come from the other core's cache: ask for them early */
		__builtin_prefetch(w + 64);
		uint64_t id = w[0] & ((1ull << 60) - 1);
		if (id >= definitions)
			return ring_fail(reader, "a use of an unknown definition");
		size_t data = ring->data[id];
		if ((size_t)(end - w) < 1 + data)
			return ring_fail(reader, "an entry cut by the block's end");
		records += ring->count[id];
		w += 1 + data;
	}
	if (w == start)
		return 0;
	ring->word = w;
	compact->words = start;
	compact->end = w;
	compact->thread = ring->thread;
	compact->records = records;
	compact->templates = ring->templates;
	compact->first = ring->first;
	compact->count = ring->count;
	compact->data = ring->data;
	compact->definitions = definitions;
	compact->stream = ring->stream;
	reader->info.bytes += records * sizeof(trace_record);
	return (long)(records > LONG_MAX ? LONG_MAX : records);
}

static long ring_lend_compact(trace_reader *reader, const trace_record **records, trace_compact *compact, size_t max)
{
	trace_ring *ring = reader->ring;
	for (;;) {
		if (ring->out_position < ring->out_count)
			return ring_lend(reader, records, max);
		ring->out_position = ring->out_count = 0;
		if (ring->holding && ring->word < ring->end) {
			long n = compact_run(reader, compact);
			if (n != 0)
				return n < 0 ? 0 : n;
			/* definitions, thread switches, single references, markers */
			n = expand(reader, ring->out, OUT_RECORDS, true);
			if (n < 0)
				return 0;
			ring->out_count = (size_t)n;
			continue;
		}
		if (next_block(reader) <= 0)
			return 0;
	}
}

static long ring_read(trace_reader *reader, trace_record *records, size_t capacity)
{
	size_t done = 0;
	while (done < capacity) {
		const trace_record *lent;
		long n = ring_lend(reader, &lent, capacity - done);
		if (n <= 0)
			break;
		memcpy(records + done, lent, (size_t)n * sizeof *lent);
		done += (size_t)n;
	}
	return (long)done;
}

static void ring_destroy(trace_reader *reader)
{
	trace_ring_free(reader->ring);
	reader->ring = NULL;
}

int trace_ring_reader_init(trace_reader *reader, trace_ring *ring, plumb_status *status)
{
	if (trace_input_open_fd(&reader->input, ring->full_read, true, "plumbgrind's binary trace", status) < 0)
		return -1;
	ring->full_read = -1;   /* the input closes it */
	reader->ring = ring;
	reader->format = TRACE_FORMAT_NATIVE;
	reader->read = ring_read;
	reader->lend = ring_lend;
	reader->lend_compact = ring_lend_compact;
	reader->destroy = ring_destroy;
	return 0;
}
