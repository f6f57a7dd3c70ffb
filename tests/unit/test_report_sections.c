/* One record per report section (src/report/section_table.c): the default
 * lists, titles, arguments and inputs the report, its page and plumb
 * cluster read all come from the one table. */
#include <criterion/criterion.h>
#include <string.h>
#include "report/report.h"

Test(report_sections, the_default_lists_come_from_the_table)
{
	char list[256];
	report_section_list(REPORT_SECTION_DEFAULT, ",", list, sizeof list);
	cr_expect_str_eq(list, "topo,lat,bw,geometry,c2c,loaded,model,validate");
	report_section_list(REPORT_SECTION_QUICK, ",", list, sizeof list);
	cr_expect_str_eq(list, "topo,lat,bw,c2c,loaded,model");
	report_section_list(REPORT_SECTION_CLUSTER_DEFAULT, ",", list, sizeof list);
	cr_expect_str_eq(list, "topo,lat,bw,c2c,loaded,validate");
	report_section_list(REPORT_SECTION_CLUSTER_QUICK, ",", list, sizeof list);
	cr_expect_str_eq(list, "topo,lat,bw,c2c,loaded");
	report_section_list(REPORT_SECTION_CLUSTER, ", ", list, sizeof list);
	cr_expect_str_eq(list, "topo, lat, bw, geometry, c2c, loaded, model, validate");
	char small[8];
	report_section_list(REPORT_SECTION_DEFAULT, ",", small, sizeof small);
	cr_expect_lt(strlen(small), sizeof small, "a short buffer is cut, never overrun");
}

Test(report_sections, every_entry_is_whole)
{
	size_t count;
	const report_section *table = report_section_table(&count);
	cr_assert_gt(count, 0);
	for (size_t i = 0; i < count; i++) {
		const report_section *s = &table[i];
		cr_expect(s->name && s->title && s->intro, "entry %zu", i);
		cr_expect_eq(report_section_find(s->name), s, "%s is found once", s->name);
		if (s->lists & (REPORT_SECTION_DEFAULT | REPORT_SECTION_QUICK))
			cr_expect_gt(s->seconds, 0, "%s has an expected cost", s->name);
		if (!s->input)
			continue;
		/* what it reads is a section before it in the table, and the plan
		 * can say why it changed the order */
		const report_section *input = report_section_find(s->input);
		cr_expect(input && input < s, "%s reads %s, an earlier section", s->name, s->input);
		cr_expect(s->input_arguments && s->plan_note, "%s", s->name);
		cr_expect(!s->input_required || s->input_missing, "%s", s->name);
	}
	cr_expect_null(report_section_find("nosuch"));
	cr_expect_str_eq(report_section_title("nosuch"), "nosuch");
	cr_expect_str_eq(report_section_title("validate"), "Can I trust my counters?");
}

Test(report_sections, arguments_and_costs_are_the_entries)
{
	cr_expect_str_eq(report_section_arguments("validate")[0], "--runs");
	cr_expect_null(report_section_arguments("topo")[0]);
	cr_expect_null(report_section_arguments("nosuch")[0]);
	cr_expect_str_eq(report_section_arguments_for("lat", true)[0], "--time-cap");
	cr_expect_null(report_section_arguments_for("lat", false)[0]);
	cr_expect_str_eq(report_section_arguments_for("validate", true)[0], "--runs");
	cr_expect_gt(report_section_expected_seconds("validate", false), report_section_expected_seconds("lat", false));
	cr_expect_eq(report_section_expected_seconds("nosuch", false), 5);
}
