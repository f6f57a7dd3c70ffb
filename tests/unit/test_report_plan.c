/* The sections of plumb report in the order they must run, from the
 * library: loaded before model, lat before geometry, and one clear error
 * for a list that cannot be run. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "plumb/report.h"

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
	char list[] = ",";
	const char *names[4];
	size_t count = 9;
	char notes[2][PLUMB_MESSAGE_MAX];
	plumb_status status;
	cr_expect_eq(report_plan_sections(list, known, names, 4, &count, notes, &status), 0);
	cr_expect_eq(count, 0, "an empty list plans nothing; the caller says so");
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
