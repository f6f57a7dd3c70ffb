/* Progress on stderr, only when stderr is a terminal, so logs and pipes stay
 * clean.  One format for every long command:
 *     plumb validate: 2181/16422 (13%), 1:05 elapsed, about 7:10 left
 * (without a known total: "plumb sim: 1234567 done, 0:05 elapsed").  The
 * total must be honest: work that will not be done is taken off it with
 * progress_skip, so a run that finishes shows 100%. */
#ifndef PLUMB_PROGRESS_H
#define PLUMB_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct progress {
	bool enabled;
	const char *label;         /* "plumb COMMAND" or "plumb COMMAND: phase" */
	size_t total, done;        /* total 0: not known */
	unsigned long long started_ns, last_ns;
	unsigned long long step_ns;  /* when step done began (progress_step); 0: not known */
	const double *weights;     /* NULL, or each step's expected cost (progress_set_weights) */
} progress;

void progress_begin(progress *p, const char *label, size_t total);
/* Redraws at most 10 times a second, and always at the last step. */
void progress_step(progress *p, size_t done);
/* For work whose total is known only as it goes (a callback that reports
 * both): sets the total, then steps. */
void progress_step_of(progress *p, size_t done, size_t total);
/* STEPS of the total will not be done (a source that cannot run here, a
 * series stopped by a failure): the total drops by them. */
void progress_skip(progress *p, size_t steps);
/* Steps of unequal length (a report's sections: topo takes a second,
 * validate a minute): weights[i] is step i's expected cost, in any unit,
 * for each of the total steps; the percentage and the time left then follow
 * the expected cost done, not the count of steps.  The array must outlive
 * the progress. */
void progress_set_weights(progress *p, const double *weights);
void progress_end(progress *p);
/* The line progress_step draws, at NOW_NS (timer_monotonic_ns()); for tests.
 * The time left: the rate so far (seconds per unit of expected cost over the
 * steps done, up to when the current step began) times the cost ahead, less
 * the time already spent in the current step, and never less than the
 * steps after it at that rate: so it falls while a long step runs instead
 * of growing with the elapsed time. */
void progress_format(const progress *p, unsigned long long now_ns, char *buffer, size_t length);

#endif
