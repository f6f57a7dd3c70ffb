/* The one progress format every long command draws (src/core/progress.h). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/progress.h"

static progress at(size_t done, size_t total)
{
	progress p = { .enabled = false, .label = "plumb validate", .total = total, .done = done, .started_ns = 1000 };
	return p;
}

Test(core_progress, the_line_says_done_total_percent_elapsed_and_time_left)
{
	progress p = at(2181, 16422);
	char line[256];
	/* 65 s for 2181 steps: 14241 more at that rate are 424 s */
	progress_format(&p, 1000 + 65000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2181/16422 (13%), 1:05 elapsed, about 7:04 left");
	p = at(16422, 16422);
	progress_format(&p, 1000 + 3725000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 16422/16422 (100%), 1:02:05 elapsed");
	p = at(0, 10);
	progress_format(&p, 1000 + 2000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 0/10 (0%), 0:02 elapsed");
	p = at(1234567, 0);
	progress_format(&p, 1000, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 1234567 done, 0:00 elapsed");
}

Test(core_progress, skipped_work_comes_off_the_total)
{
	progress p = at(10, 100);
	progress_skip(&p, 50);
	cr_assert_eq(p.total, 50);
	progress_skip(&p, 45);          /* never below what is done */
	cr_assert_eq(p.total, 10);
	p = at(3, 0);
	progress_skip(&p, 5);           /* an unknown total stays unknown */
	cr_assert_eq(p.total, 0);
	p = at(0, 0);
	progress_step_of(&p, 4, 9);
	cr_assert_eq(p.total, 9);
	cr_assert_eq(p.done, 4);
}

/* A report's sections are of very unequal length: counting sections said
 * "0:19 left" with 4:55 to go (validate last).  Weighted by each step's
 * expected cost, the time left follows the cost still ahead. */
Test(core_progress, weighted_steps_estimate_by_expected_cost)
{
	static const double seconds[] = { 1, 10, 10, 60 };
	progress p = at(3, 4);
	progress_set_weights(&p, seconds);
	char line[256];
	/* 21 s for 21 expected seconds: 60 expected seconds are ahead */
	progress_format(&p, 1000 + 21000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 3/4 (26%), 0:21 elapsed, about 1:00 left");
	/* Unweighted, the same moment reads 0:07 left. */
	p.weights = NULL;
	progress_format(&p, 1000 + 21000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 3/4 (75%), 0:21 elapsed, about 0:07 left");
}

/* Within a long step the time left falls as the step runs: it said what it
 * said when the step began, and grew with the elapsed time if redrawn. */
Test(core_progress, time_left_falls_while_a_long_step_runs)
{
	static const double seconds[] = { 10, 10, 80 };
	progress p = at(2, 3);
	progress_set_weights(&p, seconds);
	p.step_ns = 1000 + 20000000000ull;   /* the last step began at 0:20, on time */
	char line[256];
	progress_format(&p, 1000 + 20000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (20%), 0:20 elapsed, about 1:20 left");
	progress_format(&p, 1000 + 60000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (20%), 1:00 elapsed, about 0:40 left");
	/* overrun: nothing else is ahead, so no time is promised past the step */
	progress_format(&p, 1000 + 130000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (20%), 2:10 elapsed, about 0:00 left");
}

/* ---- In-section progress: a report whose last section runs at a rate the
 * sections before it do not predict (validate under Valgrind: a clean-clone
 * run said 1:30 left with 0:53 to go).  The section says how far it is, and
 * the time left follows its own rate. */

/* The seconds of "about M:SS left" (or H:MM:SS) in a line; -1 if none. */
static double seconds_left(const char *line)
{
	const char *at = strstr(line, "about ");
	if (!at)
		return -1;
	unsigned a = 0, b = 0, c = 0;
	int n = sscanf(at, "about %u:%u:%u left", &a, &b, &c);
	return n == 3 ? a * 3600.0 + b * 60.0 + c : n == 2 ? a * 60.0 + b : -1;
}

/* Sections of expected cost SECONDS (four); the first three run at 1 s per
 * expected second, the last, most of the run, at SLOWER s per expected
 * second.
 * From halfway through the whole run to near its end, every time left
 * (fake clock, the section's fraction as it would send it) is within 30%
 * of the truth; without the fraction, returns how far off the worst was. */
static double worst_error_from_halfway(const double seconds[4], double slower, bool told)
{
	const unsigned long long start = 1000, second = 1000000000ull;
	double before = seconds[0] + seconds[1] + seconds[2], section = seconds[3] * slower;
	double total = before + section, worst = 0;
	for (int k = 0; k <= 9; k++) {
		double now = total / 2 + k * (total / 2 - 2) / 9;   /* halfway to 2 s before the end */
		progress p = at(3, 4);
		progress_set_weights(&p, seconds);
		p.step_ns = start + (unsigned long long)(before * 1e9);
		if (told)
			progress_step_part(&p, (now - before) / section);
		char line[256];
		progress_format(&p, start + (unsigned long long)(now * (double)second), line, sizeof line);
		double left = seconds_left(line), truth = total - now;
		cr_assert_geq(left, 0, "no time left in \"%s\"", line);
		double error = fabs(left - truth) / truth;
		if (told)
			cr_expect_leq(error, 0.3, "%.0f s in, %.0f s to go (section %.1fx slower): \"%s\"", now, truth, slower,
			              line);
		if (error > worst)
			worst = error;
	}
	return worst;
}

Test(core_progress, a_section_three_times_slower_is_estimated_within_30_percent_from_halfway)
{
	static const double seconds[] = { 1, 10, 10, 60 };
	worst_error_from_halfway(seconds, 3, true);
	/* today's estimate, which a section that says nothing keeps, was off by far more */
	cr_assert_gt(worst_error_from_halfway(seconds, 3, false), 0.3);
}

Test(core_progress, a_section_three_times_faster_is_estimated_within_30_percent_from_halfway)
{
	static const double seconds[] = { 1, 2, 2, 60 };   /* the last section still most of the run */
	worst_error_from_halfway(seconds, 1.0 / 3, true);
	cr_assert_gt(worst_error_from_halfway(seconds, 1.0 / 3, false), 0.3);
}

/* A section that reports nothing keeps today's line, character for character. */
Test(core_progress, a_silent_section_keeps_the_estimate_by_expected_cost)
{
	static const double seconds[] = { 10, 10, 80 };
	progress p = at(2, 3);
	progress_set_weights(&p, seconds);
	p.step_ns = 1000 + 20000000000ull;
	char line[256];
	progress_format(&p, 1000 + 60000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (20%), 1:00 elapsed, about 0:40 left");
	/* a fraction out of range is no fraction */
	progress_step_part(&p, 1.5);
	progress_step_part(&p, -0.5);
	progress_step_part(&p, NAN);
	progress_format(&p, 1000 + 60000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (20%), 1:00 elapsed, about 0:40 left");
	/* told half: the percentage counts it, the time left is the step's own */
	progress_step_part(&p, 0.5);
	progress_format(&p, 1000 + 60000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (60%), 1:00 elapsed, about 0:40 left");
	progress_step_part(&p, 0.8);
	progress_format(&p, 1000 + 60000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 2/3 (84%), 1:00 elapsed, about 0:10 left");
	/* the next step forgets the last one's fraction */
	p.enabled = false;
	progress_step(&p, 3);
	cr_assert_eq(p.step_fraction, 0);
}

/* Steps of unequal expected cost (validate: a Valgrind run costs hundreds of
 * native ones): the fraction and the time left follow the cost. */
Test(core_progress, costs_of_unequal_steps_set_the_fraction)
{
	progress p = at(0, 3);
	progress_set_cost(&p, 100);
	progress_add_cost(&p, 1);
	p.done = 1;
	cr_assert_float_eq(progress_fraction(&p), 0.01, 1e-12);
	progress_drop_cost(&p, 49);   /* a source that cannot run */
	cr_assert_float_eq(progress_fraction(&p), 1.0 / 51, 1e-12);
	progress_drop_cost(&p, 1000); /* never below what is done */
	cr_assert_float_eq(progress_fraction(&p), 1, 1e-12);
	progress_add_cost(&p, NAN);
	progress_add_cost(&p, -3);
	cr_assert_float_eq(p.cost_done, 1, 1e-12);
	p = at(1, 4);
	progress_set_cost(&p, 40);
	progress_add_cost(&p, 10);
	p.step_ns = 1000 + 5000000000ull;
	char line[256];
	/* 10 of 40 in 5 s: 30 more are 15 s */
	progress_format(&p, 1000 + 5000000000ull, line, sizeof line);
	cr_assert_str_eq(line, "plumb validate: 1/4 (25%), 0:05 elapsed, about 0:15 left");
}

/* The channel's records: exactly "progress F", F a decimal from 0 to 1;
 * everything else is ignored, whatever chunks it comes in. */
Test(core_progress, records_are_parsed_strictly)
{
	double f = -1;
	cr_assert(progress_record_parse("progress 0.5", 12, &f));
	cr_assert_float_eq(f, 0.5, 1e-12);
	cr_assert(progress_record_parse("progress 1", 10, &f));
	cr_assert_float_eq(f, 1, 1e-12);
	cr_assert(progress_record_parse("progress 0", 10, &f));
	cr_assert_float_eq(f, 0, 1e-12);
	static const char *const bad[] = {
		"", "progress", "progress ", "progress 1.5", "progress -0.1", "progress nan", "progress inf",
		"progress 0x0.8", "progress 5e-1", "progress .5", "progress 0.", "progress 0.5 ", " progress 0.5",
		"progress  0.5", "progress 0..5", "progress 0.5.1", "Progress 0.5", "progress\t0.5", "progress +0.5",
		"progress 0.5x", "progress 0.99999999999999999999999999",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = -1;
		cr_assert_not(progress_record_parse(bad[i], strlen(bad[i]), &f), "\"%s\" was taken", bad[i]);
		cr_assert_eq(f, -1);
	}
	cr_assert_not(progress_record_parse("progress 0.5\0junk", 17, &f));   /* a NUL inside */

	char buffer[PROGRESS_RECORD_MAX];
	cr_assert_eq(progress_record_format(0.25, buffer, sizeof buffer), strlen("progress 0.2500\n"));
	cr_assert_str_eq(buffer, "progress 0.2500\n");
	progress_record_format(NAN, buffer, sizeof buffer);
	cr_assert_str_eq(buffer, "progress 0.0000\n");
	progress_record_format(7, buffer, sizeof buffer);
	cr_assert_str_eq(buffer, "progress 1.0000\n");
}

Test(core_progress, the_reader_takes_records_in_any_chunks_and_skips_garbage)
{
	progress_reader r = { .used = 0 };
	double f = -1;
	/* a record split over three reads */
	cr_assert_not(progress_reader_feed(&r, "progr", 5, &f));
	cr_assert_not(progress_reader_feed(&r, "ess 0.2", 7, &f));
	cr_assert(progress_reader_feed(&r, "5\n", 2, &f));
	cr_assert_float_eq(f, 0.25, 1e-12);
	/* garbage lines between records; the last valid record of a chunk wins */
	const char chunk[] = "hello\nprogress 2\n\x01\xff\xfe\nprogress 0.5\nprogress 0.75\nprogress 0.9";
	f = -1;
	cr_assert(progress_reader_feed(&r, chunk, sizeof chunk - 1, &f));
	cr_assert_float_eq(f, 0.75, 1e-12);
	cr_assert(progress_reader_feed(&r, "\n", 1, &f));
	cr_assert_float_eq(f, 0.9, 1e-12);
	/* an overlong line that ends in a record's text is skipped whole */
	char longer[300];
	memset(longer, 'x', sizeof longer);
	memcpy(longer + sizeof longer - 13, "progress 0.1\n", 13);
	f = -1;
	cr_assert_not(progress_reader_feed(&r, longer, sizeof longer, &f));
	cr_assert_eq(f, -1);
	cr_assert(progress_reader_feed(&r, "progress 0.3\n", 13, &f));
	cr_assert_float_eq(f, 0.3, 1e-12);
	/* random bytes, in random chunks: never a crash, never a fraction out of range */
	unsigned long long state = 88172645463325252ull;
	char noise[4096];
	for (int round = 0; round < 200; round++) {
		size_t n = 0;
		while (n < sizeof noise) {
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			/* mostly the record's own alphabet, so near misses are common */
			static const char alphabet[] = "progress 0.123456789\n\n-+e.x\r\t";
			noise[n++] = state % 5 ? alphabet[(state >> 8) % (sizeof alphabet - 1)] : (char)(state >> 16);
		}
		for (size_t at_byte = 0; at_byte < n;) {
			size_t take = 1 + (size_t)((state >> (at_byte % 40)) % 97);
			if (take > n - at_byte)
				take = n - at_byte;
			f = -1;
			if (progress_reader_feed(&r, noise + at_byte, take, &f))
				cr_assert(f >= 0 && f <= 1, "fraction %g", f);
			cr_assert_lt(r.used, sizeof r.line);
			at_byte += take;
		}
	}
}

/* The channel is this process's only when the variable names its parent and
 * an open pipe's write end: a grandchild, or a stale or forged value, is
 * silent. */
Test(core_progress, the_channel_is_taken_only_when_given_to_this_process)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	char value[64];
	unsetenv(PROGRESS_CHANNEL_VARIABLE);
	cr_assert_eq(progress_channel_open(), -1);
	snprintf(value, sizeof value, "%d:%ld", fds[1], (long)getppid() + 1);
	setenv(PROGRESS_CHANNEL_VARIABLE, value, 1);
	cr_assert_eq(progress_channel_open(), -1, "another process's channel");
	snprintf(value, sizeof value, "%d:%ld", fds[0], (long)getppid());
	setenv(PROGRESS_CHANNEL_VARIABLE, value, 1);
	cr_assert_eq(progress_channel_open(), -1, "the read end");
	static const char *const malformed[] = { "", ":", "x:1", "5", "5:", "5:1x", "-5:1", "2:1", "99999999999999999999:1" };
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
		setenv(PROGRESS_CHANNEL_VARIABLE, malformed[i], 1);
		cr_assert_eq(progress_channel_open(), -1, "\"%s\"", malformed[i]);
	}
	snprintf(value, sizeof value, "%d:%ld", fds[1], (long)getppid());
	setenv(PROGRESS_CHANNEL_VARIABLE, value, 1);
	cr_assert_eq(progress_channel_open(), fds[1]);
	cr_assert(fcntl(fds[1], F_GETFD) & FD_CLOEXEC, "a program the command runs must not inherit it");

	/* shared: the fraction, mapped into the phase's range, then 1 at the end */
	progress p;
	progress_begin(&p, "plumb lat: sweep", 4);
	p.enabled = false;
	progress_share(&p, 0.5, 1);
	progress_step(&p, 2);   /* within a quarter second of the first: not sent */
	progress_end(&p);
	char got[256] = "";
	ssize_t n = read(fds[0], got, sizeof got - 1);
	cr_assert_gt(n, 0);
	got[n] = 0;
	cr_assert_str_eq(got, "progress 0.5000\nprogress 0.7500\n");
	unsetenv(PROGRESS_CHANNEL_VARIABLE);
	close(fds[0]);
	close(fds[1]);
}

/* ---- Kinds of step learned as they run (progress_kind_plan): validate's
 * table of expected costs was timed at one load, and load changes the
 * ratio of its kinds (native runs and two-thread simulations want the
 * second CPU, Valgrind runs one thread): on a quiet machine the time left
 * read 33-40% high from halfway.  Each kind's rate is learned from its own
 * steps; the times here are a fake clock's. */

#define SECOND 1000000000ull

/* A progress of two kinds of 100 expected units each, started at 0. */
static progress two_kinds(void)
{
	progress p = at(0, 200);
	p.started_ns = 1000;
	progress_set_cost(&p, 0);
	p.kind_mark_ns = 1000;
	progress_kind_plan(&p, 0, 100);
	progress_kind_plan(&p, 1, 100);
	return p;
}

Test(core_progress, a_kind_twice_as_slow_as_its_prior_is_learned)
{
	progress p = two_kinds();
	/* kind 0 at 1 s per unit, kind 1 at 2 s (the table says equal):
	 * steps of 5 units, 4 of each, interleaved */
	unsigned long long now = 1000;
	for (int i = 0; i < 4; i++) {
		now += 5 * SECOND;
		progress_kind_done_at(&p, 0, 5, now);
		now += 10 * SECOND;
		progress_kind_done_at(&p, 1, 5, now);
	}
	cr_assert_float_eq(progress_fraction(&p), 0.2, 1e-12);
	/* blended with the pooled 1.5 s by two steps' weight: 1.17 and 1.83 */
	cr_assert_float_eq(progress_kind_rate(&p, 0), (20 + 10 * 1.5) / 30.0, 1e-9);
	cr_assert_float_eq(progress_kind_rate(&p, 1), (40 + 10 * 1.5) / 30.0, 1e-9);
	/* 80 units of each left: truly 80 + 160 = 240 s.  At the plain rate
	 * (60 s for 40 units) it reads 240 s only because the kinds are
	 * left in the proportion they were done: with kind 0 finished first,
	 * the plain rate is 25% short, the learned one right within the blend. */
	double left = progress_kind_left(&p, now);
	cr_assert_float_eq(left, 80 * (35.0 / 30) + 80 * (55.0 / 30), 1e-6);
	for (int i = 0; i < 16; i++) {
		now += 5 * SECOND;
		progress_kind_done_at(&p, 0, 5, now);
	}
	for (int i = 0; i < 4; i++) {
		now += 10 * SECOND;
		progress_kind_done_at(&p, 1, 5, now);
	}
	/* kind 0 done (100 s), kind 1: 40 done in 80 s, 60 left, truly 120 s */
	double truth = 120, learned = progress_kind_left(&p, now);
	double plain = (double)(now - 1000) / 1e9 / 140 * 60;
	cr_assert_lt(fabs(learned - truth) / truth, 0.1, "learned %.1f s, truly %.0f", learned, truth);
	cr_assert_gt(fabs(plain - truth) / truth, 0.3, "the plain rate %.1f s was as good", plain);
	/* the line shows it */
	char line[256];
	p.done = 28;
	progress_format(&p, now, line, sizeof line);
	cr_assert_eq(seconds_left(line), round(learned), "%s", line);
}

Test(core_progress, a_kind_not_yet_seen_is_priced_at_the_rate_of_those_seen)
{
	progress p = two_kinds();
	cr_assert_lt(progress_kind_left(&p, 1000), 0, "nothing known before a step is done");
	progress_kind_done_at(&p, 0, 10, 1000 + 30 * SECOND);   /* 3 s a unit */
	cr_assert_float_eq(progress_kind_rate(&p, 1), 3, 1e-9);
	cr_assert_float_eq(progress_kind_left(&p, 1000 + 30 * SECOND), 90 * 3 + 100 * 3, 1e-6);
	/* a kind dropped (a source that cannot run) is priced no more */
	progress_kind_drop(&p, 1, 100);
	cr_assert_float_eq(progress_kind_left(&p, 1000 + 30 * SECOND), 90 * 3, 1e-6);
	cr_assert_float_eq(progress_fraction(&p), 0.1, 1e-12);
	progress_kind_drop(&p, 0, 1000);   /* never below what is done */
	cr_assert_float_eq(progress_fraction(&p), 1, 1e-12);
	cr_assert_float_eq(progress_kind_left(&p, 1000 + 30 * SECOND), 0, 1e-12);
}

/* One odd step (a run that lost its CPU for a while) moves its kind's rate
 * by a third, not all the way. */
Test(core_progress, one_odd_step_does_not_swing_its_kind)
{
	progress p = two_kinds();
	unsigned long long now = 1000;
	for (int i = 0; i < 10; i++) {
		now += 5 * SECOND;
		progress_kind_done_at(&p, 0, 5, now);
	}
	now += 50 * SECOND;   /* kind 1's first step: ten times the rate */
	progress_kind_done_at(&p, 1, 5, now);
	double pooled = 100.0 / 55, rate = progress_kind_rate(&p, 1);
	cr_assert_float_eq(rate, (50 + 10 * pooled) / 15, 1e-9);
	cr_assert_lt(rate, 5, "one step of 10 s a unit read %.2f s a unit", rate);
}

/* The step running counts against its own share, and no further: the time
 * left falls while it runs, and stops at what the steps after it cost. */
Test(core_progress, the_running_step_counts_against_its_share)
{
	progress p = two_kinds();
	progress_kind_done_at(&p, 0, 10, 1000 + 10 * SECOND);   /* 1 s a unit */
	progress_kind_next(&p, 1, 20);
	cr_assert_float_eq(progress_kind_left(&p, 1000 + 10 * SECOND), 190, 1e-6);
	cr_assert_float_eq(progress_kind_left(&p, 1000 + 25 * SECOND), 175, 1e-6);
	cr_assert_float_eq(progress_kind_left(&p, 1000 + 100 * SECOND), 170, 1e-6);
}

/* A report whose sections all run 1.5 times slower than expected, the
 * running one telling its own time left: the line follows, the sections
 * after it priced at the finished ones' pace. */
Test(core_progress, a_report_running_slower_than_expected_is_followed)
{
	static const double seconds[] = { 10, 10, 60, 20 };
	progress p = at(2, 4);
	progress_set_weights(&p, seconds);
	p.step_ns = 1000 + 30 * SECOND;   /* 20 expected seconds took 30 */
	char line[256];
	/* 30 s into the third section (expected 60, truly 90), which says 60 s left */
	unsigned long long now = 1000 + 60 * SECOND;
	progress_step_part(&p, 1.0 / 3);
	progress_step_left(&p, 60, now);
	progress_format(&p, now, line, sizeof line);
	double truth = 60 + 20 * 1.5;
	cr_assert_lt(fabs(seconds_left(line) - truth) / truth, 0.05, "%s (truly %.0f s)", line, truth);
	/* ten seconds on, no new record: ten seconds less */
	progress_format(&p, now + 10 * SECOND, line, sizeof line);
	cr_assert_lt(fabs(seconds_left(line) - (truth - 10)) / (truth - 10), 0.05, "%s", line);
	/* at the plain expected costs it would have said 20 + 20 = 40 s */
	progress q = at(2, 4);
	progress_set_weights(&q, seconds);
	q.step_ns = 1000 + 20 * SECOND;
	progress_format(&q, 1000 + 40 * SECOND, line, sizeof line);
	cr_assert_float_eq(seconds_left(line), 60, 1e-9, "%s", line);
	/* the next section forgets what the last one said */
	progress_step(&p, 3);
	cr_assert_eq(p.told_ns, 0);
}

Test(core_progress, time_left_records_are_parsed_strictly)
{
	double s = -1;
	cr_assert(progress_left_record_parse("left 12.5", 9, &s));
	cr_assert_float_eq(s, 12.5, 1e-12);
	cr_assert(progress_left_record_parse("left 0", 6, &s));
	cr_assert_float_eq(s, 0, 1e-12);
	static const char *const bad[] = { "left", "left ", "left -1", "left nan", "left 1e3", "left 1.", "left .5",
	                                   "left 9999999", "Left 1", "left 1 " };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_not(progress_left_record_parse(bad[i], strlen(bad[i]), &s), "\"%s\" was taken", bad[i]);
	char buffer[PROGRESS_RECORD_MAX];
	progress_left_record_format(75.25, buffer, sizeof buffer);
	cr_assert_str_eq(buffer, "left 75.2\n");
	progress_left_record_format(-4, buffer, sizeof buffer);
	cr_assert_str_eq(buffer, "left 0.0\n");
	/* the reader takes both kinds of record, in any chunks */
	progress_reader r = { .used = 0 };
	double f = -1;
	cr_assert(progress_reader_feed(&r, "progress 0.5\nle", 15, &f));
	cr_assert_not(r.told_left);
	cr_assert_not(progress_reader_feed(&r, "ft 30.0\n", 8, &f));
	cr_assert(r.told_left);
	cr_assert_float_eq(r.left, 30, 1e-12);
}

/* Load that falls during the run (another program ends) speeds every kind
 * at once: the time left follows the recent pace, not the run's average
 * (a report whose load fell from 3 to 1.9 read 35-50% high all through
 * validate's second half at the run's average rates). */
Test(core_progress, a_machine_that_speeds_up_is_followed)
{
	progress p = at(0, 400);
	p.started_ns = 1000;
	progress_set_cost(&p, 0);
	p.kind_mark_ns = 1000;
	progress_kind_plan(&p, 0, 200);
	progress_kind_plan(&p, 1, 200);
	unsigned long long now = 1000;
	/* 1 unit of each kind a step, kind 1 twice kind 0's seconds: 30
	 * rounds at twice the seconds (90 s), then 40 rounds at the normal
	 * pace (3 s a round, 120 s) */
	for (int i = 0; i < 70; i++) {
		double slow = i < 30 ? 2 : 1;
		now += (unsigned long long)(1 * slow * SECOND);
		progress_kind_done_at(&p, 0, 1, now);
		now += (unsigned long long)(2 * slow * SECOND);
		progress_kind_done_at(&p, 1, 1, now);
	}
	/* 130 units of each left at the pace now: 130 + 260 s */
	double truth = 390, left = progress_kind_left(&p, now);
	double average = (double)(now - 1000) / 1e9 / 140 * 260;   /* the run's average pace */
	cr_assert_lt(fabs(left - truth) / truth, 0.1, "%.0f s left, truly %.0f", left, truth);
	cr_assert_gt(fabs(average - truth) / truth, 0.3, "the average pace read %.0f s, as good", average);
	/* the kinds' ratio is the run's: kind 1 costs twice kind 0 */
	cr_assert_float_eq(progress_kind_rate(&p, 1) / progress_kind_rate(&p, 0), 2, 0.05);
}
