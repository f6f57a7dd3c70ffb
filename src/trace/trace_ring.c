/* The binary trace from plumbgrind (vg/pg_ring.c): a stream of 64-bit words
 * written by the instrumented program into a ring of blocks in shared memory
 * (a memfd), expanded here into records for the caller (the simulator).  The
 * protocol:
 *
 *   memory  BLOCKS blocks of BLOCK_BYTES, used in order, cyclically;
 *   full    a pipe from the tool: a 4-byte count of the words written in each
 *           block in turn (little-endian), then RING_END when the program
 *           exits (not when it exec'd another: Valgrind does not follow an
 *           exec, and the tool never sees its end); end of file = end of
 *           the trace;
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
 * number.  With --plumb-filter (trace_ring_set_filtered) the tool keeps a
 * one-core machine's L1s itself and the blocks hold its COUNTS and GENERAL
 * entries, thread switches and markers instead (vg/pg_filter.h), handed out
 * as filtered runs (trace_compact.filtered) for sim_access_filtered. */
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
#include "trace/ring_format.h"
#include "core/status.h"
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"

#define OUT_RECORDS 4096u
#define RING_END PLUMB_RING_END


struct trace_ring {
	uint64_t *memory;
	size_t blocks, block_words;
	int memory_fd;                 /* the child's ends, closed once it has them */
	int full_write, free_read;
	int full_read, free_write;     /* ours */
	uint64_t sequence;             /* the block being read */
	const uint64_t *word, *end;    /* the rest of the block being expanded */
	bool holding;                  /* a block is being read, not yet given back */
	bool ended;                    /* RING_END came: the program exited */
	char exec_name[PLUMB_RING_EXEC_NAME_MAX + 1];   /* the last program it called execve on ("": none) */
	trace_entries entries;         /* what the entries have said (trace_entries.c) */
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
	trace_entries_free(&ring->entries);
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
	trace_entries_init(&ring->entries, NULL);
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

void trace_ring_set_filtered(trace_ring *ring)
{
	ring->entries.filtered = true;
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
	if (ring->ended)
		return 0;
	long have;
	uint32_t words;
	for (;;) {
		have = trace_input_fill(&reader->input, 4, &reader->failure);
		if (have < 0) {
			reader->failed = true;
			return -1;
		}
		if (have == 0)
			return 0;
		if (have < 4)
			return (int)ring_fail(reader, "cut short inside a block's length");
		words = trace_get_u32(reader->input.data + reader->input.start);
		trace_input_consume(&reader->input, 4);
		if (words != PLUMB_RING_EXEC)
			break;
		/* the program calls execve: the name (the trace ends here if it succeeds) */
		have = trace_input_fill(&reader->input, 4, &reader->failure);
		if (have < 0) {
			reader->failed = true;
			return -1;
		}
		if (have < 4)
			return (int)ring_fail(reader, "cut short inside an exec's name");
		uint32_t length = trace_get_u32(reader->input.data + reader->input.start);
		if (length > PLUMB_RING_EXEC_NAME_MAX)
			return (int)ring_fail(reader, "an exec's name longer than the tool sends");
		trace_input_consume(&reader->input, 4);
		have = length ? trace_input_fill(&reader->input, length, &reader->failure) : 0;
		if (have < 0) {
			reader->failed = true;
			return -1;
		}
		if ((uint32_t)have < length)
			return (int)ring_fail(reader, "cut short inside an exec's name");
		memcpy(ring->exec_name, reader->input.data + reader->input.start, length);
		ring->exec_name[length] = 0;
		for (uint32_t i = 0; i < length; i++)
			if ((unsigned char)ring->exec_name[i] < 0x20)
				ring->exec_name[i] = '?';
		trace_input_consume(&reader->input, length);
	}
	if (words == RING_END) {
		have = trace_input_fill(&reader->input, 1, &reader->failure);
		if (have < 0) {
			reader->failed = true;
			return -1;
		}
		if (have > 0)
			return (int)ring_fail(reader, "more after the end");
		ring->ended = true;
		return 0;
	}
	if (words > ring->block_words)
		return (int)ring_fail(reader, "a block longer than the ring's blocks");
	ring->word = ring->memory + (ring->sequence % ring->blocks) * ring->block_words;
	ring->end = ring->word + words;
	ring->holding = true;
	return 1;
}

/* Expands entries into out[0, max) (trace_entries_expand); -1 on an error. */
static long expand(trace_reader *reader, trace_record *out, size_t max, bool stop_at_use)
{
	trace_ring *ring = reader->ring;
	long n = trace_entries_expand(&ring->entries, &ring->word, ring->end, out, max, stop_at_use);
	return n < 0 ? ring_fail(reader, ring->entries.error) : n;
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

/* The run of use entries at the ring's position (trace_entries_run). */
static long compact_run(trace_reader *reader, trace_compact *compact)
{
	trace_ring *ring = reader->ring;
	long n = trace_entries_next_run(reader, &ring->entries, &ring->word, ring->end, compact);
	if (n < 0)
		return ring_fail(reader, ring->entries.error);
	reader->info.bytes += compact->records * sizeof(trace_record);
	return n;
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

bool trace_ring_program_exited(const trace_reader *reader)
{
	return reader->ring && reader->ring->ended;
}

const char *trace_ring_exec_name(const trace_reader *reader)
{
	return reader->ring && reader->ring->exec_name[0] ? reader->ring->exec_name : NULL;
}

int trace_ring_take_block(trace_reader *reader, const uint64_t **words, size_t *count)
{
	trace_ring *ring = reader->ring;
	if (reader->failed)
		return -1;
	if (ring->out_position < ring->out_count || (ring->holding && ring->word < ring->end))
		return ring_fail(reader, "blocks taken whole after records were read");
	int got = next_block(reader);
	if (got <= 0)
		return got;
	*words = ring->word;
	*count = (size_t)(ring->end - ring->word);
	ring->word = ring->end;   /* given back at the next call */
	return 1;
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
	ring->entries.names = &reader->names;
	reader->ring = ring;
	reader->format = TRACE_FORMAT_NATIVE;
	reader->read = ring_read;
	reader->lend = ring_lend;
	reader->lend_compact = ring_lend_compact;
	reader->destroy = ring_destroy;
	return 0;
}
