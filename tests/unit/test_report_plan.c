/* The sections of plumb report in the order they must run, from the
 * library: loaded before model, lat before geometry and bw, and one clear error
 * for a list that cannot be run. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/progress.h"
#include "report/report.h"

static bool known(const char *name)
{
	static const char *const commands[] = { "topo", "lat", "bw", "geometry", "c2c", "loaded", "model", "validate",
		                                    "report", NULL };
	for (size_t i = 0; commands[i]; i++)
		if (!strcmp(commands[i], name))
			return true;
	return false;
}

static void expect_order(const char *list_text, const char *expected, int changes)
{
	char list[256];
	snprintf(list, sizeof list, "%s", list_text);
	const char *names[32];
	size_t count;
	char notes[2][PLUMB_MESSAGE_MAX];
	plumb_status status;
	cr_assert_eq(report_plan_sections(list, known, names, 32, &count, notes, &status), 0, "%s", status.message);
	char got[256] = "";
	for (size_t i = 0; i < count; i++) {
		size_t used = strlen(got);
		snprintf(got + used, sizeof got - used, "%s%s", i ? "," : "", names[i]);
	}
	cr_expect_str_eq(got, expected);
	cr_expect_eq((notes[0][0] != 0) + (notes[1][0] != 0), changes, "%s | %s", notes[0], notes[1]);
}

Test(report_plan, sections_run_after_what_they_read)
{
	expect_order("topo,lat,bw", "topo,lat,bw", 0);
	expect_order("model,topo", "loaded,model,topo", 1);
	expect_order("loaded,model", "loaded,model", 0);
	expect_order("geometry,bw,lat", "lat,geometry,bw", 1);
	expect_order("geometry,model,lat", "lat,geometry,loaded,model", 2);
	/* bw sizes its working sets from lat's usable capacities */
	expect_order("bw,lat", "lat,bw", 1);
	expect_order("bw,geometry,lat", "lat,bw,geometry", 1);
	expect_order("bw,c2c", "bw,c2c", 0);   /* without lat it runs on its own */
}

static const char *plan_error(const char *list_text, size_t capacity)
{
	static plumb_status status;
	char list[256];
	snprintf(list, sizeof list, "%s", list_text);
	const char *names[32];
	size_t count;
	char notes[2][PLUMB_MESSAGE_MAX];
	cr_assert_eq(report_plan_sections(list, known, names, capacity, &count, notes, &status), -1);
	return status.message;
}

Test(report_plan, a_list_that_cannot_run_is_one_error)
{
	cr_expect_str_eq(plan_error("topo,nosuch", 32), "'nosuch' is not a plumb command");
	cr_expect_str_eq(plan_error("topo,report", 32), "a report cannot contain itself");
	cr_expect_str_eq(plan_error("topo,lat,topo", 32), "section 'topo' is listed twice");
	cr_expect_str_eq(plan_error("topo,lat,bw", 3), "at most 2 sections");
	/* an empty item is refused as every list's is (it once planned nothing) */
	cr_expect_str_eq(plan_error(",", 32), "',' has an empty item (items are separated by single commas)");
	cr_expect_str_eq(plan_error("topo,,lat", 32), "'topo,,lat' has an empty item (items are separated by single commas)");
}

Test(report_plan, the_json_sits_beside_the_page)
{
	char out[64];
	report_json_path_for("r.html", out, sizeof out);
	cr_expect_str_eq(out, "r.json");
	report_json_path_for("dir/r.htm", out, sizeof out);
	cr_expect_str_eq(out, "dir/r.json");
	report_json_path_for("page", out, sizeof out);
	cr_expect_str_eq(out, "page.json");
}

/* The report's time left, with a fake clock: the default sections, each
 * taking its expected cost (report_section_expected_seconds) times a
 * machine factor with its own error of 3% either way, the progress line
 * redrawn every second.  From the halfway point of the run until its last
 * quarter the time left shown is within 30% of the true one, and to the
 * end within 10% of the whole run.  (Counted by sections it said "0:19
 * left" with 4:55 to go.)  No estimate made before validate can know how
 * much faster or slower than its table validate will run than the sections
 * before it: a larger error of validate's own shows in the last quarter. */
static void time_left_errors(double factor, double jitter, double *relative, double *absolute)
{
	static const char *const names[] = { "topo", "lat", "bw", "geometry", "c2c", "loaded", "model", "validate" };
	enum { N = 8 };
	double weights[N], actual[N], start[N + 1];
	start[0] = 0;
	for (size_t i = 0; i < N; i++) {
		weights[i] = report_section_expected_seconds(names[i], false);
		actual[i] = weights[i] * factor * (1 + (i % 2 ? -jitter : jitter));
		start[i + 1] = start[i] + actual[i];
	}
	double total = start[N];
	const unsigned long long origin = 1000;
	*relative = *absolute = 0;
	for (double t = total / 2; t < total - 1; t += 1) {
		size_t step = 0;
		while (step + 1 < N && start[step + 1] <= t)
			step++;
		progress p = { .enabled = false, .label = "plumb report", .total = N, .done = step, .started_ns = origin };
		p.step_ns = origin + (unsigned long long)(start[step] * 1e9);
		progress_set_weights(&p, weights);
		char line[256];
		progress_format(&p, origin + (unsigned long long)(t * 1e9), line, sizeof line);
		const char *at = strstr(line, "about ");
		cr_assert_not_null(at, "no time left at %.0f s: %s", t, line);
		unsigned minutes = 0, secs = 0;
		cr_assert_eq(sscanf(at, "about %u:%u left", &minutes, &secs), 2, "%s", line);
		double shown = minutes * 60.0 + secs, truth = total - t;
		if (truth >= total / 4 && fabs(shown - truth) / truth > *relative)
			*relative = fabs(shown - truth) / truth;
		if (fabs(shown - truth) / total > *absolute)
			*absolute = fabs(shown - truth) / total;
	}
}

Test(report_plan, time_left_is_within_30_percent_from_halfway)
{
	double factors[] = { 0.5, 1, 1.7, 3 }, jitters[] = { -0.03, 0, 0.03 };
	for (size_t f = 0; f < 4; f++)
		for (size_t j = 0; j < 3; j++) {
			double relative, absolute;
			time_left_errors(factors[f], jitters[j], &relative, &absolute);
			cr_assert_leq(relative, 0.30, "factor %.1f, error %+.0f%%: the time left was off by %.0f%%", factors[f],
			              100 * jitters[j], 100 * relative);
			cr_assert_leq(absolute, 0.10, "factor %.1f, error %+.0f%%: the time left was off by %.0f%% of the run",
			              factors[f], 100 * jitters[j], 100 * absolute);
		}
}
