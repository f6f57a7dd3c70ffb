/* plumb instrument's report: plumbgrind's exact counts per thread, while
 * collecting, and per region, with what the run's end says. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "instrument/instrument.h"
#include "core/output.h"

static void counter_columns(output_table *table)
{
	for (int c = 0; c < INSTRUMENT_COUNTERS; c++)
		output_column(table, instrument_counter_name((instrument_counter)c),
		              c >= INSTRUMENT_BYTES_READ ? "bytes" : NULL, 0);
}

static void counter_cells(output_table *table, const instrument_counts *counts)
{
	for (int c = 0; c < INSTRUMENT_COUNTERS; c++)
		output_cell_integer(table, (int64_t)counts->value[c]);
}

output_report *instrument_report(const instrument_summary *summary, const char *source, bool ran)
{
	output_report *report = output_report_new("instrument");
	output_meta_text(report, "source", "plumbgrind (Valgrind tool, exact counts)");
	output_meta_text(report, "command", summary->command ? summary->command : "");
	if (ran)
		output_meta_integer(report, "exit_code", summary->exit_code);
	else
		output_meta_text(report, "summary", source);
	output_meta_integer(report, "threads", (int64_t)summary->thread_count);
	if (summary->traced && !summary->trace_uncounted)
		output_meta_integer(report, "trace_records", (int64_t)summary->trace_records);

	output_table *threads = output_table_add(report, "threads", "Per thread: everything executed");
	output_column(threads, "thread", NULL, 0);
	output_column(threads, "lwp", NULL, 0);
	counter_columns(threads);
	for (size_t i = 0; i < summary->thread_count; i++) {
		output_row(threads);
		output_cell_integer(threads, summary->threads[i].thread);
		output_cell_integer(threads, summary->threads[i].lwp);
		counter_cells(threads, &summary->threads[i].total);
	}
	output_row(threads);
	output_cell_text(threads, "all");
	output_cell_empty(threads);
	counter_cells(threads, &summary->total);

	output_table *collected = output_table_add(report, "collected",
	                                           "Per thread: while collecting, without the markers' own code");
	output_column(collected, "thread", NULL, 0);
	counter_columns(collected);
	for (size_t i = 0; i < summary->thread_count; i++) {
		output_row(collected);
		output_cell_integer(collected, summary->threads[i].thread);
		counter_cells(collected, &summary->threads[i].collected);
	}

	output_table *regions = output_table_add(report, "regions", "Per region and thread (inclusive of nested regions)");
	output_column(regions, "region", NULL, 0);
	output_column(regions, "thread", NULL, 0);
	output_column(regions, "entries", NULL, 0);
	counter_columns(regions);
	for (size_t i = 0; i < summary->region_count; i++) {
		const instrument_region *region = &summary->regions[i];
		output_row(regions);
		output_cell_text(regions, region->name);
		output_cell_integer(regions, region->thread);
		output_cell_integer(regions, (int64_t)region->entries);
		counter_cells(regions, &region->counts);
	}
	if (summary->region_count == 0)
		output_note(report, "no regions: mark them with PLUMB_VG_REGION_BEGIN/END (<plumb/valgrind.h>) or "
		                    "plumb_region_begin/end (<plumb/region.h>)");
	for (size_t i = 0; i < summary->warning_count; i++)
		output_note(report, "plumbgrind: %s", summary->warnings[i]);
	if (summary->trace_error)
		output_note(report, "the trace is incomplete: %s", summary->trace_error);
	if (ran && summary->exit_signal)
		output_note(report, "the command was killed by signal %d (%s)", summary->exit_signal,
		            strsignal(summary->exit_signal));
	else if (ran && (summary->exit_code == 126 || summary->exit_code == 127))
		output_note(report, "the command did not start (exit status %d: a missing shared library, file or "
		            "interpreter? its own message went to standard error): the counts are of a failed start, "
		            "not of the program's work", summary->exit_code);
	else if (ran && summary->exit_code != 0)
		output_note(report, "the command exited with status %d", summary->exit_code);
	return report;
}

