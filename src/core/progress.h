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
	/* How much of step done the step itself says is done, from 0 to 1
	 * (progress_step_part; a report's section tells it over its progress
	 * channel); 0 or less: it says nothing, and step done counts as
	 * started only. */
	double step_fraction;
	/* A command whose own work has expected costs of unequal steps (validate:
	 * a run under Valgrind costs hundreds of native runs) keeps their sum
	 * here (progress_set_cost, progress_add_cost); cost_total 0: none, the
	 * fraction done is the steps' (or their weights'). */
	double cost_done, cost_total;
	/* progress_share: the fraction done also goes to the parent that
	 * started this process (plumb report), mapped into [share_from,
	 * share_to] of the command's work; channel 2 or less: not shared. */
	int channel;
	double share_from, share_to;
	unsigned long long shared_ns;
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
/* The running step's own fraction done (0..1; others are ignored), until
 * the next step: the time left then follows the step's own rate. */
void progress_step_part(progress *p, double fraction);
/* Expected costs of unequal steps: the total, then each step's cost as it
 * is done (with progress_step) or taken off (with progress_skip). */
void progress_set_cost(progress *p, double total);
void progress_add_cost(progress *p, double cost);
void progress_drop_cost(progress *p, double cost);
/* The fraction of the work done: the costs' when set, else the weights',
 * else the steps', plus the running step's own fraction of its share. */
double progress_fraction(const progress *p);

/* ---- The progress channel: how a section that plumb report runs as its
 * own process tells the report how far it is, so that the report's time
 * left follows the section's own rate.  The report passes the write end of
 * a pipe, open across exec, and names it in the environment variable
 * PLUMB_PROGRESS as "FD:PID", PID being the report's process: a
 * grandchild (a program the section runs) sees another parent and stays
 * silent.  Each record is one line, "progress F\n", F the fraction of the
 * section's work done, from 0 to 1, in decimal; anything else on the
 * channel is ignored.  Records go when progress_share begins, at most four
 * times a second after, and at progress_end. */
#define PROGRESS_CHANNEL_VARIABLE "PLUMB_PROGRESS"
#define PROGRESS_RECORD_MAX 32
/* The channel this process was given, or -1 (not given, malformed, given to
 * another process, or not an open pipe).  Marks it close-on-exec and
 * non-blocking: a full pipe drops a record, never stalls the work. */
int progress_channel_open(void);
/* Shares p's fraction, mapped into [from, to] of the command's work (a
 * phase of a command: lat's sweep is its first two thirds), on the channel
 * when this process has one; nothing otherwise. */
void progress_share(progress *p, double from, double to);
/* One record for fraction (clamped to 0..1) in buffer; its length. */
size_t progress_record_format(double fraction, char *buffer, size_t length);
/* A record's line (without its newline): true and *fraction when it is
 * exactly "progress F", F a finite decimal from 0 to 1. */
bool progress_record_parse(const char *line, size_t length, double *fraction);
/* Reads a channel in whatever chunks the pipe gives: lines too long to be
 * a record are skipped whole. */
typedef struct progress_reader {
	char line[PROGRESS_RECORD_MAX];
	size_t used;
	bool overlong;
} progress_reader;
/* Feeds n bytes; true with *fraction the last valid record they complete. */
bool progress_reader_feed(progress_reader *r, const char *data, size_t n, double *fraction);
/* The line progress_step draws, at NOW_NS (timer_monotonic_ns()); for tests.
 * The time left: the rate so far (seconds per unit of expected cost over the
 * steps done, up to when the current step began) times the cost ahead, less
 * the time already spent in the current step, and never less than the
 * steps after it at that rate: so it falls while a long step runs instead
 * of growing with the elapsed time. */
void progress_format(const progress *p, unsigned long long now_ns, char *buffer, size_t length);

#endif
