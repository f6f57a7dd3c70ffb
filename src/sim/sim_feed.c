/* The one loop from a trace reader into simulators (src/sim/sim.h,
 * sim_feed_reader): every batch the reader gives, as records or as
 * plumbgrind's entries, to each simulator in turn through the loop variant
 * chosen when it was made (sim_loop.h). */
#include "core/progress.h"
#include "sim/sim.h"

#define BATCH 65536

/* One batch into one simulator: plumbgrind's entries as they came through
 * the ring or the file (its L1 filter's when it kept the L1s), or records. */
static int feed_one(sim *s, const trace_record *records, size_t n, trace_compact *compact, plumb_status *status)
{
	if (compact->filtered)
		return sim_access_filtered(s, compact, status);
	if (compact->words)
		return sim_access_compact(s, compact, status);
	return sim_access_batch(s, records, n, status);
}

int sim_feed_reader(sim_feed *feed, trace_reader *reader, plumb_status *status)
{
	progress p;
	progress_begin(&p, "plumb sim: records", 0);
	p.enabled = p.enabled && feed->show_progress;
	size_t max = feed->batch ? feed->batch : BATCH;
	/* One simulator and nothing else reading the runs of uses (or an
	 * observer that walks them through its own, observer_walks): they are
	 * checked as the simulator walks them, not walked twice. */
	bool unchecked = !feed->interleaver && !feed->records_only &&
	                 ((feed->count == 1 && !feed->observe) || (feed->count == 0 && feed->observe && feed->observer_walks));
	if (unchecked)
		trace_reader_want_unchecked_runs(reader);
	int rc = 0;
	for (;;) {
		/* Lent, not copied: a native file's records come straight from the
		 * reader's background decoder (docs/trace-format.md). */
		const trace_record *records = NULL;
		trace_compact compact = { 0 };
		long got = feed->interleaver ? trace_interleaver_view(feed->interleaver, reader, &records, max, status)
		           : feed->records_only ? trace_reader_view(reader, &records, max, status)
		                                : trace_reader_view_compact(reader, &records, &compact, max, status);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		size_t n = compact.words ? 0 : (size_t)got;
		if (feed->observe &&
		    feed->observe(feed, compact.words ? NULL : records, n, compact.words ? &compact : NULL, status) != 0) {
			rc = -1;
			break;
		}
		/* each simulator walks its own copy of the run (a walk may settle it) */
		const trace_compact given = compact;
		for (size_t i = 0; i < feed->count && rc == 0; i++) {
			trace_compact copy = given;
			if (feed_one(feed->sims[i], records, n, i == 0 ? &compact : &copy, status) != 0)
				rc = -1;
		}
		if (rc != 0)
			break;
		/* the run as the first simulator that walked it left it (settled) */
		const trace_compact *taken = feed->observer_walks && feed->count == 0 ? &feed->walked : &compact;
		if (compact.words && !compact.filtered)
			trace_reader_compact_taken(reader, taken);
		feed->records += compact.words ? taken->records : (uint64_t)got;
		progress_step(&p, (size_t)feed->records);
	}
	progress_end(&p);
	return rc;
}
