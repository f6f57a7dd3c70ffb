/* Re-interleaving the threads of a trace (plumb sim --interleave K).
 *
 * Valgrind runs one guest thread at a time and switches every scheduling
 * quantum (100,000 superblocks by default), so in a trace recorded under it
 * two threads that share lines every few instructions take turns of a million
 * references or more, and the simulator sees a handful of sharing events where
 * hardware running them at once would see one per few references.  This
 * merges the per-thread streams round robin, K references of each thread in
 * turn, to model threads that run at once, in lockstep.
 *
 * Each thread's own order is kept; only the order between threads changes.
 * The trace is read ahead into per-thread queues holding at most `window`
 * records in all; the merge takes from the queues that hold records and reads
 * more when they hold half the window or less.  So threads whose references
 * lie within about half the window of each other in the trace are interleaved
 * (a window larger than a few scheduling quanta interleaves threads that
 * Valgrind ran by turns); a thread that has no record in the window (not
 * started yet, or finished) is not waited for.  Threads take turns in the
 * order of their first record. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/status.h"
#include "trace/trace.h"

typedef struct thread_queue {
	uint32_t thread;
	trace_record *records;
	size_t head, tail, capacity;   /* records[head, tail) are queued */
} thread_queue;

struct trace_interleaver {
	uint64_t quantum;
	size_t window;
	thread_queue *queues;
	size_t queue_count, queue_capacity;
	size_t total;                  /* queued records in all queues */
	size_t current;                /* the queue whose turn it is */
	uint64_t left;                 /* of its turn */
	int at_end;                    /* the source is exhausted */
	trace_record *out;
	size_t out_capacity;
};

int trace_interleaver_new(trace_interleaver **out, uint64_t quantum, size_t window, plumb_status *status)
{
	*out = NULL;
	if (quantum == 0)
		return plumb_fail(status, EINVAL, "the interleaving quantum must be at least 1 reference");
	if (window < 2)
		return plumb_fail(status, EINVAL, "the interleaving window must hold at least 2 records");
	trace_interleaver *iv = calloc(1, sizeof *iv);
	if (!iv)
		return plumb_fail(status, ENOMEM, "out of memory for the interleaver");
	iv->quantum = quantum;
	iv->window = window;
	iv->left = quantum;   /* the first thread's turn */
	*out = iv;
	return 0;
}

void trace_interleaver_free(trace_interleaver *iv)
{
	if (!iv)
		return;
	for (size_t i = 0; i < iv->queue_count; i++)
		free(iv->queues[i].records);
	free(iv->queues);
	free(iv->out);
	free(iv);
}

static thread_queue *queue_of(trace_interleaver *iv, uint32_t thread, plumb_status *status)
{
	for (size_t i = 0; i < iv->queue_count; i++)
		if (iv->queues[i].thread == thread)
			return &iv->queues[i];
	if (iv->queue_count == iv->queue_capacity) {
		size_t capacity = iv->queue_capacity ? 2 * iv->queue_capacity : 8;
		thread_queue *grown = realloc(iv->queues, capacity * sizeof *grown);
		if (!grown) {
			plumb_fail(status, ENOMEM, "out of memory for the interleaver's queues");
			return NULL;
		}
		iv->queues = grown;
		iv->queue_capacity = capacity;
	}
	thread_queue *q = &iv->queues[iv->queue_count++];
	memset(q, 0, sizeof *q);
	q->thread = thread;
	return q;
}

static int queue_push(thread_queue *q, const trace_record *records, size_t n, plumb_status *status)
{
	if (q->tail + n > q->capacity) {
		/* Slide the queued records to the front first, when that moves no
		 * more than it frees: the reader lends a few thousand records at a
		 * time, and sliding a window of millions for each was quadratic. */
		if (q->head > 0 && q->head >= q->tail - q->head) {
			memmove(q->records, q->records + q->head, (q->tail - q->head) * sizeof *q->records);
			q->tail -= q->head;
			q->head = 0;
		}
		if (q->tail + n > q->capacity) {
			size_t capacity = q->capacity ? q->capacity : 4096;
			while (capacity < q->tail + n)
				capacity *= 2;
			trace_record *grown = realloc(q->records, capacity * sizeof *grown);
			if (!grown)
				return plumb_fail(status, ENOMEM, "out of memory for the interleaver's queues");
			q->records = grown;
			q->capacity = capacity;
		}
	}
	memcpy(q->records + q->tail, records, n * sizeof *records);
	q->tail += n;
	return 0;
}

/* Reads until the queues hold the window or the source ends. */
static int refill(trace_interleaver *iv, trace_reader *reader, plumb_status *status)
{
	while (!iv->at_end && iv->total < iv->window) {
		const trace_record *batch;
		long got = trace_reader_view(reader, &batch, iv->window - iv->total, status);
		if (got < 0)
			return -1;
		if (got == 0) {
			iv->at_end = 1;
			break;
		}
		/* runs of one thread go in with one copy */
		size_t start = 0;
		for (size_t i = 1; i <= (size_t)got; i++) {
			if (i < (size_t)got && batch[i].thread == batch[start].thread)
				continue;
			thread_queue *q = queue_of(iv, batch[start].thread, status);
			if (!q || queue_push(q, batch + start, i - start, status) < 0)
				return -1;
			start = i;
		}
		iv->total += (size_t)got;
	}
	return 0;
}

long trace_interleaver_view(trace_interleaver *iv, trace_reader *reader, const trace_record **records, size_t max,
                            plumb_status *status)
{
	*records = NULL;
	if (max == 0)
		return 0;
	if (iv->total <= iv->window / 2 && !iv->at_end && refill(iv, reader, status) < 0)
		return -1;
	if (iv->total == 0)
		return 0;
	if (iv->out_capacity < max) {
		size_t capacity = max < 65536 ? max : 65536;
		if (capacity > iv->out_capacity) {
			trace_record *grown = realloc(iv->out, capacity * sizeof *grown);
			if (!grown)
				return plumb_fail(status, ENOMEM, "out of memory for the interleaver's output");
			iv->out = grown;
			iv->out_capacity = capacity;
		}
		if (max > iv->out_capacity)
			max = iv->out_capacity;
	}
	size_t done = 0;
	/* Stop at half the window (unless the source has ended), so the queues
	 * always hold records of every thread running near this point. */
	while (done < max && iv->total > 0 && (iv->at_end || iv->total > iv->window / 2)) {
		thread_queue *q = &iv->queues[iv->current];
		if (iv->left == 0 || q->head == q->tail) {
			do
				iv->current = (iv->current + 1) % iv->queue_count;
			while (iv->queues[iv->current].head == iv->queues[iv->current].tail);
			iv->left = iv->quantum;
			continue;
		}
		size_t n = q->tail - q->head;
		if (n == iv->total) {
			/* Only this thread has records queued: its turns follow each
			 * other, so take them at once and keep the count of the turn. */
			if (n > max - done)
				n = max - done;
			if (!iv->at_end && n > iv->total - iv->window / 2)
				n = iv->total - iv->window / 2;
			if (n > iv->left) {
				uint64_t past = (n - iv->left) % iv->quantum;
				iv->left = past ? iv->quantum - past : 0;
			} else {
				iv->left -= n;
			}
			memcpy(iv->out + done, q->records + q->head, n * sizeof *q->records);
			q->head += n;
			if (q->head == q->tail)
				q->head = q->tail = 0;
			iv->total -= n;
			done += n;
			continue;
		}
		if (n > iv->left)
			n = (size_t)iv->left;
		if (n > max - done)
			n = max - done;
		if (!iv->at_end && n > iv->total - iv->window / 2)
			n = iv->total - iv->window / 2;
		memcpy(iv->out + done, q->records + q->head, n * sizeof *q->records);
		q->head += n;
		if (q->head == q->tail)
			q->head = q->tail = 0;
		iv->left -= n;
		iv->total -= n;
		done += n;
	}
	*records = iv->out;
	return (long)done;
}
