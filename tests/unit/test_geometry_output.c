/* plumb geometry's tables and notes from the library: a finding per row,
 * the curves only when asked, and a note for each kind of doubt. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "geometry/geometry.h"
#include "core/output.h"

static geometry_report *two_findings(void)
{
	geometry_report *g = calloc(1, sizeof *g);
	cr_assert_not_null(g);
	g->finding_count = 2;
	geometry_finding *f = &g->findings[0];
	snprintf(f->property, sizeof f->property, "capacity");
	snprintf(f->level, sizeof f->level, "L1");
	f->measured_ok = true;
	f->measured = f->low = f->high = 32768;
	f->has_reference = true;
	f->reference = 49152;
	f->verdict = GEOMETRY_DISAGREE;
	f = &g->findings[1];
	snprintf(f->property, sizeof f->property, "capacity");
	snprintf(f->level, sizeof f->level, "L2");
	f->measured_ok = false;
	f->verdict = GEOMETRY_UNSTABLE;
	f->has_spread = true;
	return g;
}

static bool has_note(const output_report *report, const char *start)
{
	for (size_t i = 0; i < output_note_count(report); i++)
		if (strncmp(output_note_at(report, i), start, strlen(start)) == 0)
			return true;
	return false;
}

Test(geometry_output, findings_and_a_note_for_each_doubt)
{
	geometry_report *g = two_findings();
	output_report *report = output_report_new("geometry");
	geometry_report_tables(report, g, false, false);
	cr_assert_eq(output_table_count(report), 1, "no curves unless asked");
	const output_table *t = output_table_find(report, "geometry");
	cr_assert_eq(output_row_count(t), 2);
	cr_expect_eq(output_cell_number(t, 0, (size_t)output_column_index(t, "measured")), 32768);
	cr_expect_str_eq(output_cell_string(t, 1, (size_t)output_column_index(t, "measured")), "unresolved");
	cr_expect_str_eq(output_cell_string(t, 1, (size_t)output_column_index(t, "stability")), "unstable");
	cr_expect_eq(output_note_count(report), 3);
	cr_expect(has_note(report, "measured = from timing alone"));
	cr_expect(has_note(report, "1 capacity is unstable"));
	cr_expect(has_note(report, "1 finding(s) disagree"));
	cr_expect(!has_note(report, "running under a hypervisor"));
	output_report_free(report);

	report = output_report_new("geometry");
	geometry_report_tables(report, g, true, true);
	cr_expect_not_null(output_table_find(report, "capacity_curve"));
	cr_expect_not_null(output_table_find(report, "tlb_curve"));
	cr_expect_null(output_table_find(report, "page_thp_curve"), "no THP curve without its points");
	cr_expect(has_note(report, "running under a hypervisor"));
	output_report_free(report);
	free(g);
}
