/* Background decoding of native traces (docs/trace-format.md, "Background
 * decoding").
 *
 * Reading a native trace (file reads, checksums, zstd, the record decoder)
 * costs about as much CPU per record as simulating it, so on a machine with
 * a second core the two can overlap.  A native reader opened from a file is
 * therefore an outer reader that hands out records which a worker thread
 * decodes ahead with the ordinary (inner) reader, into a small ring of
 * fixed-size chunks.
 *
 * - Deterministic: one worker reads the inner reader sequentially into the
 *   ring, the caller takes chunks in ring order, so the records and their
 *   order are exactly those of a synchronous read.
 * - Bounded: TRACE_BACKGROUND_CHUNKS chunks of TRACE_BACKGROUND_RECORDS
 *   records, whatever the trace's length; the worker waits when all are full.
 * - Errors: a chunk carries the inner reader's error (and its records before
 *   it); the caller gets those records, then the error on the next call, as
 *   with a synchronous reader.  The worker stops after an error or the end.
 * - Early close: trace_reader_close tells the worker to stop, wakes it and
 *   joins it before anything is freed.
 * - Optional: trace_reader_set_background(reader, 0) before the first read
 *   makes the outer reader call the inner one directly (no thread).
 * The worker starts at the first read, so trace_reader_allow_truncated still
 * works between open and the first read (later calls have no effect). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/status.h"
#include "trace/trace_internal.h"

typedef struct trace_chunk {
	trace_record *records;
	size_t count;
	trace_reader_info info;        /* the inner reader's info after this chunk */
	bool failed;                   /* the inner reader failed after these records */
	bool last;                     /* no chunk follows (end, or error) */
	plumb_status failure;
} trace_chunk;

struct trace_background {
	trace_reader *inner;
	/* trace_reader_close, given by the reader that wraps (it sits above
	 * this file, which never calls it by name) */
	int (*close_inner)(trace_reader *inner, plumb_status *status);
	bool enabled;                  /* use a thread (decided at the first read) */
	bool started, joined;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;        /* a chunk was filled or emptied, or stop was set */
	trace_chunk chunk[TRACE_BACKGROUND_CHUNKS];
	size_t filled;                 /* chunks filled so far (the worker's count) */
	size_t taken;                  /* chunks fully handed out (the caller's count) */
	size_t offset;                 /* records of chunk[taken % N] already handed out */
	bool lent;                     /* chunk[taken % N] is used up but lent out by a view */
	bool stop;
	bool finished;                 /* the caller has seen the last chunk */
	trace_record *own;             /* views of an in-thread reader */
};

static void *worker(void *argument)
{
	trace_background *b = argument;
	trace_reader *inner = b->inner;
	for (size_t next = 0;; next++) {
		pthread_mutex_lock(&b->lock);
		while (!b->stop && next - b->taken >= TRACE_BACKGROUND_CHUNKS)
			pthread_cond_wait(&b->changed, &b->lock);
		bool stop = b->stop;
		pthread_mutex_unlock(&b->lock);
		if (stop)
			return NULL;
		/* The slot is the worker's alone until it publishes it below. */
		trace_chunk *c = &b->chunk[next % TRACE_BACKGROUND_CHUNKS];
		long got = inner->read(inner, c->records, TRACE_BACKGROUND_RECORDS);
		c->count = got > 0 ? (size_t)got : 0;
		inner->info.records += c->count;
		inner->info.bytes = inner->input.offset;
		c->info = inner->info;
		c->failed = inner->failed;
		if (inner->failed)
			c->failure = inner->failure;
		c->last = inner->failed || got <= 0;
		pthread_mutex_lock(&b->lock);
		b->filled = next + 1;
		pthread_cond_broadcast(&b->changed);
		pthread_mutex_unlock(&b->lock);
		if (c->last)
			return NULL;
	}
}

static void stop_worker(trace_background *b)
{
	if (!b->started || b->joined)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->changed);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->thread, NULL);
	b->joined = true;
}

static void background_destroy(trace_reader *reader)
{
	trace_background *b = reader->background;
	if (!b)
		return;
	stop_worker(b);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->changed);
	for (int i = 0; i < TRACE_BACKGROUND_CHUNKS; i++)
		free(b->chunk[i].records);
	free(b->own);
	b->close_inner(b->inner, NULL);
	free(b);
	reader->background = NULL;
}

/* Takes the inner reader's view after records were handed out. */
static void adopt(trace_reader *reader, const trace_reader_info *info, bool failed, const plumb_status *failure)
{
	uint64_t records = reader->info.records;
	reader->info = *info;
	reader->info.records = records;   /* trace_reader_read counts what it hands out */
	if (failed) {
		reader->failed = true;
		reader->failure = *failure;
	}
}

/* The in-thread path: the inner reader straight into records. */
static long read_inner(trace_reader *reader, trace_record *records, size_t capacity)
{
	trace_reader *inner = reader->background->inner;
	inner->allow_truncated = reader->allow_truncated;
	long got = inner->read(inner, records, capacity);
	inner->info.records += (uint64_t)(got > 0 ? got : 0);
	inner->info.bytes = inner->input.offset;
	adopt(reader, &inner->info, inner->failed, &inner->failure);
	return got;
}

/* Starts the worker at the first read; false if the reader stays in-thread. */
static bool start(trace_reader *reader)
{
	trace_background *b = reader->background;
	if (b->started)
		return true;
	if (!b->enabled)
		return false;
	b->inner->allow_truncated = reader->allow_truncated;
	if (pthread_create(&b->thread, NULL, worker, b) != 0) {
		b->enabled = false;   /* no thread to be had: the same records in-thread */
		return false;
	}
	b->started = true;
	return true;
}

/* Gives the used-up current chunk back to the worker. */
static void release(trace_background *b)
{
	b->offset = 0;
	b->lent = false;
	pthread_mutex_lock(&b->lock);
	b->taken++;
	pthread_cond_broadcast(&b->changed);
	pthread_mutex_unlock(&b->lock);
}

/* The current chunk (waiting for the worker to fill it), or NULL after the last. */
static trace_chunk *current(trace_background *b)
{
	if (b->lent)
		release(b);
	if (b->finished)
		return NULL;
	pthread_mutex_lock(&b->lock);
	while (b->filled == b->taken)
		pthread_cond_wait(&b->changed, &b->lock);
	pthread_mutex_unlock(&b->lock);
	return &b->chunk[b->taken % TRACE_BACKGROUND_CHUNKS];
}

/* n records of c were handed out; at the chunk's end its info and error
 * become the reader's. */
static void handed_out(trace_reader *reader, trace_chunk *c, size_t n)
{
	trace_background *b = reader->background;
	b->offset += n;
	if (b->offset < c->count)
		return;
	adopt(reader, &c->info, c->failed, &c->failure);
	b->finished = c->last;
	b->lent = true;
}

static long background_read(trace_reader *reader, trace_record *records, size_t capacity)
{
	trace_background *b = reader->background;
	if (!start(reader))
		return read_inner(reader, records, capacity);
	size_t produced = 0;
	trace_chunk *c;
	while (produced < capacity && (c = current(b)) != NULL) {
		size_t n = c->count - b->offset;
		if (n > capacity - produced)
			n = capacity - produced;
		memcpy(records + produced, c->records + b->offset, n * sizeof *records);
		produced += n;
		handed_out(reader, c, n);
		if (reader->failed)
			break;   /* the records before the error now, the error next call */
	}
	return (long)produced;
}

long trace_background_view(trace_reader *reader, const trace_record **records, size_t max)
{
	trace_background *b = reader->background;
	if (!start(reader)) {
		if (!b->own && !(b->own = malloc(TRACE_BACKGROUND_RECORDS * sizeof *b->own)))
			return -2;
		*records = b->own;
		return read_inner(reader, b->own, max < TRACE_BACKGROUND_RECORDS ? max : TRACE_BACKGROUND_RECORDS);
	}
	/* An empty chunk is only ever the last: skip to it so 0 means the end. */
	trace_chunk *c;
	while ((c = current(b)) != NULL && c->count == 0)
		handed_out(reader, c, 0);
	if (!c)
		return 0;
	size_t n = c->count - b->offset;
	if (n > max)
		n = max;
	*records = c->records + b->offset;
	handed_out(reader, c, n);
	return (long)n;
}

int trace_background_wrap(trace_reader *outer, trace_reader *inner,
                          int (*close_inner)(trace_reader *inner, plumb_status *status), plumb_status *status)
{
	trace_background *b = calloc(1, sizeof *b);
	if (!b)
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader");
	for (int i = 0; i < TRACE_BACKGROUND_CHUNKS; i++) {
		b->chunk[i].records = malloc(TRACE_BACKGROUND_RECORDS * sizeof(trace_record));
		if (!b->chunk[i].records) {
			for (int k = 0; k < i; k++)
				free(b->chunk[k].records);
			free(b);
			return plumb_fail(status, ENOMEM, "out of memory for a trace reader's buffers");
		}
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->changed, NULL);
	b->inner = inner;
	b->close_inner = close_inner;
	b->enabled = true;
	outer->format = inner->format;
	outer->input.fd = -1;
	outer->background = b;
	outer->read = background_read;
	outer->destroy = background_destroy;
	return 0;
}

int trace_reader_set_background(trace_reader *reader, int enable)
{
	if (reader && !reader->background && reader->native)
		return trace_native_set_ahead(reader, enable);   /* a file of entries loads its blocks ahead */
	if (!reader || !reader->background)
		return 0;
	trace_background *b = reader->background;
	if (!b->started)
		b->enabled = enable != 0;
	return b->started ? 1 : b->enabled;
}
