/* plumb geometry's report: the findings beside what the machine claims,
 * the curves they were read from, and what the notes must say. */
#include <math.h>
#include <stdio.h>
#include "geometry/geometry.h"
#include "core/output.h"

static void cell_number_or_status(output_table *t, bool ok, double value, const char *status, const char *reason)
{
	if (ok && !isnan(value))
		output_cell_real(t, value);
	else
		output_cell_status(t, status, reason);
}

static void add_findings(output_report *report, const geometry_report *g)
{
	output_table *t = output_table_add(report, "geometry", "Geometry from timing, beside what the machine claims");
	output_column(t, "property", NULL, 0);
	output_column(t, "level", NULL, 0);
	output_column(t, "measured", NULL, 2);
	output_column(t, "low", NULL, 2);
	output_column(t, "high", NULL, 2);
	output_column(t, "unit", NULL, 0);
	output_column(t, "claimed", NULL, 0);
	output_column(t, "source", NULL, 0);
	output_column(t, "verdict", NULL, 0);
	output_column(t, "cv", NULL, 3);
	output_column(t, "quality", NULL, 0);
	output_column(t, "note", NULL, 0);
	output_column(t, "spread_low", NULL, 2);
	output_column(t, "spread_high", NULL, 2);
	output_column(t, "spread_steps", "steps", 1);
	output_column(t, "passes", NULL, 0);
	output_column(t, "stability", NULL, 0);
	for (int i = 0; i < g->finding_count; i++) {
		const geometry_finding *f = &g->findings[i];
		output_row(t);
		output_cell_text(t, f->property);
		output_cell_text(t, f->level);
		const char *reason = f->note[0] ? f->note : "timing gave no clear answer";
		cell_number_or_status(t, f->measured_ok, f->measured, "unresolved", reason);
		cell_number_or_status(t, f->measured_ok, f->low, "unresolved", reason);
		cell_number_or_status(t, f->measured_ok, f->high, "unresolved", reason);
		output_cell_text(t, f->unit);
		if (f->has_reference)
			output_cell_real(t, f->reference);
		else
			output_cell_status(t, "unknown", "sysfs/CPUID do not say");
		output_cell_text(t, f->has_reference ? f->reference_source : "-");
		output_cell_text(t, geometry_verdict_name(f->verdict));
		output_cell_real(t, f->cv_median);
		if (f->noisy_points) {
			char quality[48];
			snprintf(quality, sizeof quality, "noisy: %d of %d points", f->noisy_points, f->points);
			output_cell_text(t, quality);
		} else {
			output_cell_text(t, "ok");
		}
		output_cell_text(t, f->note);
		if (f->has_spread) {
			output_cell_real(t, f->spread_low);
			output_cell_real(t, f->spread_high);
			output_cell_real(t, f->spread_steps);
			output_cell_integer(t, f->passes);
			output_cell_text(t, f->stable ? "stable" : "unstable");
		} else {
			for (int c = 0; c < 3; c++)
				output_cell_status(t, "n/a", "only capacities are measured in repeated passes");
			output_cell_integer(t, 0);
			output_cell_text(t, "-");
		}
	}
}

static void add_curve(output_report *report, const char *name, const char *title, const char *x_name,
                      const char *x_unit, const geometry_curve *c)
{
	output_table *t = output_table_add(report, name, title);
	output_column(t, x_name, x_unit, 0);
	output_column(t, "ns_per_load", "ns", 2);
	output_column(t, "cv", NULL, 3);
	output_column(t, "quality", NULL, 0);
	for (size_t i = 0; i < c->n; i++) {
		output_row(t);
		output_cell_real(t, c->x[i]);
		output_cell_real(t, c->ns[i]);
		output_cell_real(t, c->cv[i]);
		output_cell_text(t, c->noisy[i] ? "noisy" : "ok");
	}
}

static void add_curves(output_report *report, const geometry_report *g)
{
	add_curve(report, "capacity_curve", "Random-chain latency against working set", "working_set", "bytes", &g->capacity);
	add_curve(report, "line_curve", "Two loads per block, d bytes apart", "distance", "bytes", &g->line);
	output_table *t = output_table_add(report, "conflict_curves", "Lines one stride apart (same set)");
	output_column(t, "level", NULL, 0);
	output_column(t, "stride", "bytes", 0);
	output_column(t, "lines", NULL, 0);
	output_column(t, "ns_per_load", "ns", 2);
	output_column(t, "quality", NULL, 0);
	for (int l = 0; l < g->conflict_count; l++)
		for (size_t i = 0; i < g->conflict[l].n; i++) {
			char level[16];
			if (g->levels[l].name[0])
				snprintf(level, sizeof level, "%s", g->levels[l].name);
			else
				snprintf(level, sizeof level, "L%d", l + 1);
			output_row(t);
			output_cell_text(t, level);
			output_cell_integer(t, (int64_t)g->conflict_stride[l]);
			output_cell_real(t, g->conflict[l].x[i]);
			output_cell_real(t, g->conflict[l].ns[i]);
			output_cell_text(t, g->conflict[l].noisy[i] ? "noisy" : "ok");
		}
	t = output_table_add(report, "tlb_curve", "One line per page against the same lines packed densely");
	output_column(t, "pages", NULL, 0);
	output_column(t, "ns_per_load", "ns", 2);
	output_column(t, "control_ns", "ns", 2);
	output_column(t, "penalty_ns", "ns", 2);
	output_column(t, "quality", NULL, 0);
	for (size_t i = 0; i < g->tlb_pages.n; i++) {
		output_row(t);
		output_cell_real(t, g->tlb_pages.x[i]);
		output_cell_real(t, g->tlb_pages.ns[i]);
		output_cell_real(t, g->tlb_control.ns[i]);
		output_cell_real(t, g->tlb_pages.ns[i] - g->tlb_control.ns[i]);
		output_cell_text(t, g->tlb_pages.noisy[i] || g->tlb_control.noisy[i] ? "noisy" : "ok");
	}
	add_curve(report, "page_curve", "Fixed line count against stride", "stride", "bytes", &g->page);
	if (g->page_thp.n)
		add_curve(report, "page_thp_curve", "The same on a 2 MiB (THP) mapping", "stride", "bytes", &g->page_thp);
}

void geometry_report_tables(output_report *report, const geometry_report *g, bool curves, bool hypervisor)
{
	add_findings(report, g);
	if (curves)
		add_curves(report, g);
	output_note(report, "measured = from timing alone; claimed = what sysfs, CPUID or sysconf say; capacities are bracketed by the sweep points [low, high].");
	int disagreements = 0;
	for (int i = 0; i < g->finding_count; i++)
		disagreements += g->findings[i].verdict == GEOMETRY_DISAGREE;
	int unstable = 0;
	for (int i = 0; i < g->finding_count; i++)
		unstable += g->findings[i].verdict == GEOMETRY_UNSTABLE;
	if (unstable)
		output_note(report, "%d capacit%s unstable: repeated passes put the end more than %.0f sweep steps apart, so another program evicted the cache between them; the spread columns give the range and no verdict against sysfs is given.",
		            unstable, unstable == 1 ? "y is" : "ies are", LATENCY_STABLE_STEPS);
	if (disagreements)
		output_note(report, "%d finding(s) disagree with what the machine claims; the note column says why timing differs.", disagreements);
	if (hypervisor)
		output_note(report, "running under a hypervisor: the host's page size and other guests shape what timing sees.");
}
