/* A bounded trace buffer between a reader and a writer (plumb trace record
 * --buffer N --when-full halt|drop|wrap): what a hardware address tracer's
 * buffer does to the trace it collects (Watson 2004: BYU's BACH halts the
 * traced machine while its logic analyzer's 8 M-reference buffer drains).
 *
 * Only wrap holds references: halt and drop decide each reference's fate as
 * it arrives (kept or lost, in order), so writing it at once gives the same
 * trace as writing it when the buffer would have drained, without holding
 * N records.  The buffer's level is kept as a number: drop drains it at the
 * drain rate by the wall clock at every batch (plumb takes references in
 * batches, so that is the drain's resolution); halt empties it at every halt,
 * which lasts the drain time of a full buffer (N / rate) plus the extra
 * pause, with the program stopped. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/status.h"
#include "trace/trace.h"

#define OUT_RECORDS 4096u

struct trace_buffer {
	trace_buffer_options options;
	trace_buffer_hooks hooks;
	trace_writer *writer;
	uint64_t origin_ns;            /* the recording's start: markers' times count from it */
	uint64_t level;                /* references in the buffer (halt, drop) */
	uint64_t drained_at_ns;        /* drop: the drain has been applied up to here */
	double drain_credit;           /* drop: a fraction of a reference drained */
	uint32_t thread;               /* the last reference's thread, for markers */
	uint32_t halt_index, lost_index;
	bool losing;                   /* drop: a run of lost references is open */
	uint64_t lost_start_ns, lost_end_ns, lost_run;
	trace_record *ring;            /* wrap: the last N references, oldest at ring_start */
	uint64_t ring_count, ring_start;
	trace_record out[OUT_RECORDS];
	size_t out_count;
	trace_buffer_totals totals;
};

static uint64_t monotonic_ns(void *context)
{
	(void)context;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_for_ns(void *context, uint64_t ns)
{
	(void)context;
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

const char *trace_when_full_name(trace_when_full when_full)
{
	switch (when_full) {
	case TRACE_FULL_HALT: return "halt";
	case TRACE_FULL_DROP: return "drop";
	case TRACE_FULL_WRAP: return "wrap";
	}
	return "?";
}

int trace_when_full_parse(const char *text, trace_when_full *out, plumb_status *status)
{
	for (int w = TRACE_FULL_HALT; w <= TRACE_FULL_WRAP; w++)
		if (!strcmp(text, trace_when_full_name((trace_when_full)w))) {
			*out = (trace_when_full)w;
			return 0;
		}
	return plumb_fail(status, EINVAL, "'%s' is not a full-buffer policy (halt, drop or wrap)", text);
}

int trace_buffer_check_options(const trace_buffer_options *o, plumb_status *status)
{
	if (o->capacity < 1 || o->capacity > TRACE_BUFFER_CAPACITY_MAX)
		return plumb_fail(status, EINVAL, "a trace buffer holds 1 to %llu references, not %llu",
		                  (unsigned long long)TRACE_BUFFER_CAPACITY_MAX, (unsigned long long)o->capacity);
	if (!(o->drain_rate >= 0) || !isfinite(o->drain_rate))
		return plumb_fail(status, EINVAL, "the drain rate must be a positive number of references per second");
	if (!(o->halt_extra >= 0) || o->halt_extra > 86400)
		return plumb_fail(status, EINVAL, "the extra halt time must be 0 to 86400 seconds");
	if (o->when_full == TRACE_FULL_WRAP && o->drain_rate > 0)
		return plumb_fail(status, EINVAL, "wrap never drains while the program runs: a drain rate applies to halt "
		                  "and drop");
	if (o->when_full != TRACE_FULL_HALT && o->halt_extra > 0)
		return plumb_fail(status, EINVAL, "only halt stops the program: an extra halt time applies to halt");
	if (o->when_full == TRACE_FULL_WRAP && o->capacity > (SIZE_MAX / 2) / sizeof(trace_record))
		return plumb_fail(status, EINVAL, "a wrap buffer of %llu references does not fit in memory",
		                  (unsigned long long)o->capacity);
	return 0;
}

int trace_buffer_new(trace_buffer **out, const trace_buffer_options *options, const trace_buffer_hooks *hooks,
                     trace_writer *writer, plumb_status *status)
{
	*out = NULL;
	if (trace_buffer_check_options(options, status) < 0)
		return -1;
	trace_buffer *b = calloc(1, sizeof *b);
	if (!b)
		return plumb_fail(status, ENOMEM, "out of memory for the trace buffer");
	b->options = *options;
	if (hooks)
		b->hooks = *hooks;
	if (!b->hooks.now_ns)
		b->hooks.now_ns = monotonic_ns;
	if (!b->hooks.sleep_ns)
		b->hooks.sleep_ns = sleep_for_ns;
	b->writer = writer;
	if (options->when_full == TRACE_FULL_WRAP &&
	    !(b->ring = malloc((size_t)options->capacity * sizeof *b->ring))) {
		free(b);
		return plumb_fail(status, ENOMEM, "out of memory for a wrap buffer of %llu references (%llu MiB)",
		                  (unsigned long long)options->capacity,
		                  (unsigned long long)(options->capacity * sizeof(trace_record) >> 20));
	}
	b->origin_ns = b->hooks.now_ns(b->hooks.context);
	b->drained_at_ns = b->origin_ns;
	*out = b;
	return 0;
}

void trace_buffer_free(trace_buffer *buffer)
{
	if (!buffer)
		return;
	free(buffer->ring);
	free(buffer);
}

void trace_buffer_get_totals(const trace_buffer *buffer, trace_buffer_totals *totals)
{
	*totals = buffer->totals;
}

static uint64_t since_origin(trace_buffer *b)
{
	uint64_t now = b->hooks.now_ns(b->hooks.context);
	return now > b->origin_ns ? now - b->origin_ns : 0;
}

static int flush_out(trace_buffer *b, plumb_status *status)
{
	if (b->out_count == 0)
		return 0;
	int rc = trace_writer_write(b->writer, b->out, b->out_count, status);
	b->out_count = 0;
	return rc;
}

static int put(trace_buffer *b, const trace_record *record, plumb_status *status)
{
	if (b->out_count == OUT_RECORDS && flush_out(b, status) < 0)
		return -1;
	b->out[b->out_count++] = *record;
	return 0;
}

static int put_marker(trace_buffer *b, trace_kind kind, uint32_t *index, uint64_t start, uint64_t end, uint64_t count,
                      plumb_status *status)
{
	if (*index > TRACE_COLLECTOR_INDEX_MAX)
		return plumb_fail(status, EOVERFLOW, "more than %u %s in one trace: use a larger buffer",
		                  TRACE_COLLECTOR_INDEX_MAX + 1u, kind == TRACE_HALT ? "halts" : "runs of lost references");
	if (count > TRACE_COLLECTOR_COUNT_MAX)
		return plumb_fail(status, EOVERFLOW, "more than %llu references lost in one run",
		                  (unsigned long long)TRACE_COLLECTOR_COUNT_MAX);
	trace_record marker;
	trace_collector_marker(&marker, kind, b->thread, (*index)++, start, end < start ? start : end, count);
	return put(b, &marker, status);
}

/* The buffer is full: stop the program, drain, resume. */
static int halt(trace_buffer *b, plumb_status *status)
{
	const trace_buffer_options *o = &b->options;
	uint64_t start = since_origin(b);
	if (b->hooks.pause && b->hooks.pause(b->hooks.context, 1, status) < 0)
		return -1;
	/* the references plumb holds go out while the program is stopped */
	int rc = flush_out(b, status);
	if (rc == 0) {
		uint64_t want = 0;
		if (o->drain_rate > 0)
			want += (uint64_t)llround((double)b->level / o->drain_rate * 1e9);
		want += (uint64_t)llround(o->halt_extra * 1e9);
		uint64_t spent = since_origin(b) - start;
		if (want > spent)
			b->hooks.sleep_ns(b->hooks.context, want - spent);
	}
	plumb_status ignored;
	if (b->hooks.pause && b->hooks.pause(b->hooks.context, 0, rc == 0 ? status : &ignored) < 0)
		rc = -1;
	if (rc < 0)
		return -1;
	uint64_t end = since_origin(b);
	uint64_t drained = b->level;
	b->level = 0;
	b->totals.halts++;
	b->totals.halted_ns += end - start;
	return put_marker(b, TRACE_HALT, &b->halt_index, start, end, drained, status);
}

/* drop: what the drain has taken out since the last batch. */
static void drain_by_clock(trace_buffer *b)
{
	uint64_t now = since_origin(b) + b->origin_ns;
	if (b->options.drain_rate <= 0) {
		b->level = 0;
		b->drained_at_ns = now;
		return;
	}
	if (now <= b->drained_at_ns)
		return;
	double drained = (double)(now - b->drained_at_ns) * b->options.drain_rate / 1e9 + b->drain_credit;
	b->drained_at_ns = now;
	if (drained >= (double)b->level) {
		b->level = 0;
		b->drain_credit = 0;   /* an empty buffer saves no drain for later */
		return;
	}
	uint64_t whole = (uint64_t)drained;
	b->level -= whole;
	b->drain_credit = drained - (double)whole;
}

static int close_loss(trace_buffer *b, plumb_status *status)
{
	if (!b->losing)
		return 0;
	b->losing = false;
	return put_marker(b, TRACE_LOST, &b->lost_index, b->lost_start_ns, b->lost_end_ns, b->lost_run, status);
}

static int take_drop(trace_buffer *b, const trace_record *r, plumb_status *status)
{
	if (!trace_is_reference(r))
		return put(b, r, status);   /* a region marker takes no room */
	b->thread = r->thread;
	b->totals.offered++;
	if (b->options.drain_rate <= 0 || b->level < b->options.capacity) {
		if (close_loss(b, status) < 0)
			return -1;
		if (b->options.drain_rate > 0)
			b->level++;
		b->totals.kept++;
		return put(b, r, status);
	}
	uint64_t now = since_origin(b);
	if (!b->losing) {
		b->losing = true;
		b->lost_start_ns = now;
		b->lost_run = 0;
	}
	b->lost_end_ns = now;
	b->lost_run++;
	b->totals.lost++;
	return 0;
}

static int take_halt(trace_buffer *b, const trace_record *r, plumb_status *status)
{
	if (put(b, r, status) < 0)
		return -1;
	if (!trace_is_reference(r))
		return 0;
	b->thread = r->thread;
	b->totals.offered++;
	b->totals.kept++;
	if (++b->level == b->options.capacity)
		return halt(b, status);
	return 0;
}

static void take_wrap(trace_buffer *b, const trace_record *r)
{
	if (!trace_is_reference(r)) {
		b->totals.region_markers_lost += trace_is_marker(r) != 0;
		return;
	}
	b->totals.offered++;
	uint64_t n = b->options.capacity;
	if (b->ring_count < n) {
		b->ring[(b->ring_start + b->ring_count++) % n] = *r;
		return;
	}
	uint64_t now = since_origin(b);
	if (!b->losing) {
		b->losing = true;
		b->lost_start_ns = now;
		b->lost_run = 0;
	}
	b->lost_end_ns = now;
	b->lost_run++;
	b->totals.lost++;
	b->ring[b->ring_start] = *r;
	b->ring_start = (b->ring_start + 1) % n;
}

int trace_buffer_take(trace_buffer *buffer, const trace_record *records, size_t count, plumb_status *status)
{
	trace_buffer *b = buffer;
	if (b->options.when_full == TRACE_FULL_DROP)
		drain_by_clock(b);
	for (size_t i = 0; i < count; i++) {
		int rc = 0;
		switch (b->options.when_full) {
		case TRACE_FULL_HALT: rc = take_halt(b, &records[i], status); break;
		case TRACE_FULL_DROP: rc = take_drop(b, &records[i], status); break;
		case TRACE_FULL_WRAP: take_wrap(b, &records[i]); break;
		}
		if (rc < 0)
			return -1;
	}
	/* halt and drop write as they go: nothing waits in plumb between batches */
	return flush_out(b, status);
}

int trace_buffer_finish(trace_buffer *buffer, plumb_status *status)
{
	trace_buffer *b = buffer;
	if (b->options.when_full == TRACE_FULL_WRAP) {
		if (b->ring_count)
			b->thread = b->ring[b->ring_start].thread;
		if (close_loss(b, status) < 0)
			return -1;
		for (uint64_t i = 0; i < b->ring_count; i++)
			if (put(b, &b->ring[(b->ring_start + i) % b->options.capacity], status) < 0)
				return -1;
		b->totals.kept = b->ring_count;
		b->ring_count = 0;
	} else if (close_loss(b, status) < 0) {
		return -1;
	}
	return flush_out(b, status);
}
