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

/* One kind of step's expected cost (in the command's own unit) planned and
 * done, and the seconds its done steps took: its learned rate. */
#define PROGRESS_KINDS 8
typedef struct progress_kind {
	double planned, done, seconds;
	size_t steps;
	double recent_done, recent_seconds;   /* the same, fading with time (PROGRESS_RECENT_SECONDS) */
} progress_kind;

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
	/* Work of several kinds (validate: native runs, simulations, Valgrind
	 * runs), each kind's rate learned as it runs (progress_kind_plan,
	 * progress_kind_done): kind_count 0, none.  kind_mark_ns: when the
	 * last step of a kind ended (or the work began), the start of the
	 * next one's seconds; next_kind, next_cost: the step now running, when
	 * said (progress_kind_next; next_kind -1: not said). */
	progress_kind kinds[PROGRESS_KINDS];
	int kind_count;
	unsigned long long kind_mark_ns, recent_ns;
	int next_kind;
	double next_cost;
	/* The running step's own time left, as it said it on its channel
	 * (progress_step_left), and when: told_ns 0, it said none. */
	double told_left;
	unsigned long long told_ns;
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
/* ---- Kinds of steps whose rates are learned as the work runs (validate: a
 * native run, a cachegrind run, a plumbgrind run, a simulated stream...).
 * The expected costs are a table's, timed at one load; load changes their
 * ratios (runs that want the second CPU against one-thread Valgrind runs)
 * and, as it rises and falls during a run, the pace of all of them.  So a
 * step's seconds are taken as its cost x its kind's ratio x the machine's
 * pace now: a kind's ratio is its seconds per unit of cost over the run
 * against all the kinds' (1 for a kind not yet seen: the table's ratios as
 * the prior), blended with 1 by the weight of PROGRESS_PRIOR_STEPS of its
 * own average steps so that one odd step does not swing it; the pace is
 * seconds per unit of ratio-weighted cost over the recent steps, each
 * step's weight falling by a factor e every PROGRESS_RECENT_SECONDS.  What
 * is left of each kind is priced at its ratio x the pace.  Kinds are
 * numbered from 0 to PROGRESS_KINDS - 1; the costs also set the fraction
 * done (progress_set_cost's total). */
#define PROGRESS_PRIOR_STEPS 2.0
#define PROGRESS_RECENT_SECONDS 20.0
/* COST more of KIND is planned (progress_set_cost first: it clears them). */
void progress_kind_plan(progress *p, int kind, double cost);
/* COST of KIND will not be done (a source that cannot run, a series stopped). */
void progress_kind_drop(progress *p, int kind, double cost);
/* The step about to run is of KIND and costs COST: the time left counts
 * the time it has run against its share, not past it. */
void progress_kind_next(progress *p, int kind, double cost);
/* A step of KIND, of expected cost COST, ended at NOW_NS (timer_monotonic_ns()):
 * its seconds are those since the last one ended. */
void progress_kind_done_at(progress *p, int kind, double cost, unsigned long long now_ns);
void progress_kind_done(progress *p, int kind, double cost);
/* A kind's seconds per unit of cost now: its ratio x the recent pace; 0
 * before any step is done. */
double progress_kind_rate(const progress *p, int kind);
/* The seconds left at NOW_NS by the kinds' learned rates; negative when
 * nothing is known yet (no step done, or no kinds). */
double progress_kind_left(const progress *p, unsigned long long now_ns);
/* The running step (a report's section) says it has SECONDS left, at
 * NOW_NS: its time left follows that, less the time since. */
void progress_step_left(progress *p, double seconds, unsigned long long now_ns);

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
 * section's work done, from 0 to 1, in decimal, followed (from a command
 * whose steps are of learned kinds, progress_kind_plan) by "left S\n", S
 * the seconds it reckons it has left, in decimal; anything else on the
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
/* The same for "left S" (S clamped to 0..PROGRESS_LEFT_MAX seconds). */
#define PROGRESS_LEFT_MAX 360000.0
size_t progress_left_record_format(double seconds, char *buffer, size_t length);
bool progress_left_record_parse(const char *line, size_t length, double *seconds);
/* Reads a channel in whatever chunks the pipe gives: lines too long to be
 * a record are skipped whole. */
typedef struct progress_reader {
	char line[PROGRESS_RECORD_MAX];
	size_t used;
	bool overlong;
	/* told_left: a "left S" record was completed by the last feed, S in left */
	bool told_left;
	double left;
} progress_reader;
/* Feeds n bytes; true with *fraction the last valid "progress F" record
 * they complete (and told_left, left, for the last "left S" one). */
bool progress_reader_feed(progress_reader *r, const char *data, size_t n, double *fraction);
/* The line progress_step draws, at NOW_NS (timer_monotonic_ns()); for tests.
 * The time left: the rate so far (seconds per unit of expected cost over the
 * steps done, up to when the current step began) times the cost ahead, less
 * the time already spent in the current step, and never less than the
 * steps after it at that rate: so it falls while a long step runs instead
 * of growing with the elapsed time. */
void progress_format(const progress *p, unsigned long long now_ns, char *buffer, size_t length);

#endif
