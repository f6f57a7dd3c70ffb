/* The configuration benchmark's sweep as a report (seed 000 §3.2): the pad
 * that halves the minor faults, the model's pad beside it, and the faults
 * of every pad. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "validate/validate.h"

/* A row the table format may leave out: it agrees with the model, is not
 * at the aligned count, and its neighbours count the same (a plateau). */
static bool plateau_row(const validate_padding_point *points, size_t count, size_t i, uint64_t pairs)
{
	return points[i].faults == points[i].predicted && points[i].faults != (double)pairs &&
	       (i + 1 >= count || points[i + 1].faults == points[i].faults) &&
	       (i == 0 || points[i - 1].faults == points[i].faults);
}

void validate_padding_report(output_report *report, size_t page_size, uint64_t base_offset, uint64_t pairs,
                             const validate_padding_point *points, size_t count, uint64_t found, bool every_pad)
{
	uint64_t expected = validate_padding_aligned(base_offset, page_size);
	output_meta_integer(report, "page_size", (int64_t)page_size);
	output_meta_integer(report, "base_offset", (int64_t)base_offset);
	output_meta_integer(report, "pairs", (int64_t)pairs);
	output_table *summary = output_table_add(report, "padding_found", "Padding configuration benchmark");
	output_column(summary, "found_pad", "bytes", 0);
	output_column(summary, "start_index", "ints", 0);
	output_column(summary, "faults_at_found", "events", 0);
	output_column(summary, "expected_pad", "bytes", 0);
	output_column(summary, "agrees", NULL, 0);
	output_row(summary);
	output_cell_integer(summary, (int64_t)found);
	output_cell_integer(summary, (int64_t)(1 + found / 4));
	double at_found = NAN;
	for (size_t i = 0; i < count; i++)
		if (points[i].pad == found) at_found = points[i].faults;
	output_cell_real(summary, at_found);
	output_cell_integer(summary, (int64_t)expected);
	output_cell_text(summary, found == expected ? "yes" : "no");
	output_table *sweep = output_table_add(report, "padding_sweep", "Minor faults per pad");
	output_column(sweep, "pad", "bytes", 0);
	output_column(sweep, "faults", "events", 0);
	output_column(sweep, "predicted", "events", 0);
	size_t mismatches = 0;
	for (size_t i = 0; i < count; i++) {
		mismatches += points[i].faults != points[i].predicted;
		if (!every_pad && plateau_row(points, count, i, pairs)) continue;
		output_row(sweep);
		output_cell_integer(sweep, (int64_t)points[i].pad);
		output_cell_real(sweep, points[i].faults);
		output_cell_real(sweep, points[i].predicted);
	}
	output_note(report, "%zu pads swept, %zu differ from the model (pairs if aligned, else 2 x pairs)", count,
	            mismatches);
}

int validate_find_padding(uint64_t base_offset, uint64_t pairs, bool every_pad, output_report **out,
                          plumb_status *status)
{
	*out = NULL;
	validate_machine machine;
	if (validate_machine_detect(&machine, status) != 0) return -1;
	size_t capacity = machine.page_size / 4, count = 0;
	validate_padding_point *points = calloc(capacity, sizeof *points);
	if (!points) return plumb_fail(status, ENOMEM, "out of memory");
	uint64_t found;
	if (validate_padding_search(&machine, base_offset, pairs, points, capacity, &count, &found, status) != 0) {
		free(points);
		return -1;
	}
	output_report *report = output_report_new("validate");
	validate_padding_report(report, machine.page_size, base_offset, pairs, points, count, found, every_pad);
	free(points);
	*out = report;
	return 0;
}
