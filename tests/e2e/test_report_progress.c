/* plumb report runs each section as a child and reads, beside its output, a
 * progress channel of its own (core/progress.h): a pipe whose records say
 * how far the section is.  These run real children through the real pipe
 * (report_run_section_watched). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/progress.h"
#include "report/report.h"
#include "run.h"

typedef struct seen {
	double fractions[4096];
	size_t count, ticks;
	double lefts[4096];
	size_t left_count;
} seen;

static void on_left(void *context, double seconds)
{
	seen *s = context;
	if (s->left_count < sizeof s->lefts / sizeof s->lefts[0])
		s->lefts[s->left_count] = seconds;
	s->left_count++;
}

static void on_fraction(void *context, double fraction)
{
	seen *s = context;
	if (s->count < sizeof s->fractions / sizeof s->fractions[0])
		s->fractions[s->count] = fraction;
	s->count++;
}

static void on_tick(void *context)
{
	((seen *)context)->ticks++;
}

/* A child that writes records, garbage and a record split across writes on
 * the channel named by PLUMB_PROGRESS, and a record's text on its stderr
 * (where it must not be taken for one), then prints a report
 * (plumb topo's, so the report parses).  bash, for redirections to any fd. */
Test(report_progress, records_come_through_the_pipe_and_garbage_is_ignored)
{
	if (access("/bin/bash", X_OK) != 0)
		cr_skip_test("no /bin/bash");
	const char *bin = getenv("PLUMB_BIN");
	cr_assert_not_null(bin);
	setenv("PLUMB_TEST_BIN", bin, 1);
	const char *script =
		"fd=${PLUMB_PROGRESS%%:*}\n"
		"echo 'progress 0.98' >&2\n"
		"printf 'progress 0.25\\nleft 90.5\\nleft -3\\nleft 1e3\\n' >&$fd\n"
		"printf 'garbage\\nprogress 7\\nprogress nan\\n\\001\\377\\n' >&$fd\n"
		"printf 'progress 0.' >&$fd; sleep 1.5; printf '5\\n' >&$fd\n"
		"head -c 5000 /dev/zero | tr '\\0' x >&$fd; printf 'progress 0.1\\n' >&$fd\n"
		"printf 'progress 0.75\\n' >&$fd\n"
		"exec \"$PLUMB_TEST_BIN\" topo --json\n";
	const char *const arguments[] = { script, NULL };   /* bash -c SCRIPT --json: $0 is --json */
	seen s = { .count = 0 };
	report_section_watch watch = { .fraction = on_fraction, .tick = on_tick, .context = &s, .left = on_left };
	output_report *report = NULL;
	plumb_status status = { 0 };
	int rc = report_run_section_watched("/bin/bash", "-c", arguments, NULL, NULL, &watch, &report, &status);
	cr_assert_eq(rc, 0, "%s", status.message);
	cr_assert_not_null(report);
	output_report_free(report);
	/* only the valid records, in order; the overlong line ending in a
	 * record's text is skipped whole */
	cr_assert_eq(s.count, 3, "%zu records", s.count);
	cr_assert_float_eq(s.fractions[0], 0.25, 1e-12);
	cr_assert_float_eq(s.fractions[1], 0.5, 1e-12);
	cr_assert_float_eq(s.fractions[2], 0.75, 1e-12);
	/* a section's own time left comes through too, only as a plain decimal */
	cr_assert_eq(s.left_count, 1, "%zu time-left records", s.left_count);
	cr_assert_float_eq(s.lefts[0], 90.5, 1e-12);
	/* the tick comes from the same loop: at its start and once a second
	 * after (the child slept 1.5 s) */
	cr_assert_geq(s.ticks, 2, "%zu ticks", s.ticks);
}

/* The channel the child is told of is the report's own: a value the report
 * itself inherited (it may run as another plumb's child) is replaced. */
Test(report_progress, the_child_is_told_the_reports_own_channel)
{
	if (access("/bin/bash", X_OK) != 0)
		cr_skip_test("no /bin/bash");
	setenv(PROGRESS_CHANNEL_VARIABLE, "9:1", 1);
	seen s = { .count = 0 };
	report_section_watch both = { .fraction = on_fraction, .tick = on_tick, .context = &s };
	const char *const check[] = { "case \"$PLUMB_PROGRESS\" in 9:1) exit 3;; *:$PPID) echo '{}';; *) exit 4;; esac",
	                              NULL };
	output_report *report = NULL;
	plumb_status status = { 0 };
	report_run_section_watched("/bin/bash", "-c", check, NULL, NULL, &both, &report, &status);
	cr_assert(!strstr(status.message, "exit 3") && !strstr(status.message, "exit 4"), "%s", status.message);
	output_report_free(report);
	unsetenv(PROGRESS_CHANNEL_VARIABLE);
}

/* plumb validate, as a report's section, sends its fraction by expected
 * cost: from 0, never backwards, ending at 1. */
Test(report_progress, validate_sends_its_fraction_to_the_report)
{
	const char *bin = getenv("PLUMB_BIN");
	cr_assert_not_null(bin);
	const char *const arguments[] = { "itv", "--backend", "sim", "--sizes", "10,100", "--no-record", NULL };
	seen s = { .count = 0 };
	report_section_watch watch = { .fraction = on_fraction, .context = &s, .left = on_left };
	output_report *report = NULL;
	plumb_status status = { 0 };
	int rc = report_run_section_watched(bin, "validate", arguments, NULL, NULL, &watch, &report, &status);
	cr_assert_eq(rc, 0, "%s", status.message);
	output_report_free(report);
	cr_assert_geq(s.count, 2, "%zu records", s.count);
	cr_assert_float_eq(s.fractions[0], 0, 1e-12);
	for (size_t i = 1; i < s.count && i < 4096; i++)
		cr_assert_geq(s.fractions[i], s.fractions[i - 1], "record %zu went back", i);
	cr_assert_float_eq(s.fractions[s.count - 1], 1, 1e-12);
	/* and its time left by its kinds of step, learned as it runs: one
	 * after each fraction but the first (nothing done, nothing learned),
	 * none at the end */
	cr_assert_geq(s.left_count, 1, "%zu time-left records", s.left_count);
	cr_assert_float_eq(s.lefts[s.left_count < 4096 ? s.left_count - 1 : 4095], 0, 1e-9);
}
