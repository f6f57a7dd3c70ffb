/* The one progress format every long command draws (src/core/progress.h). */
#include <criterion/criterion.h>
#include <string.h>
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
