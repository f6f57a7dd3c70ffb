/* The validation's tables: the verdict per (event, source) -- the section
 * "Can I trust my counters?" of the main report -- the per-case summary,
 * and every raw run. */
#include <math.h>
#include <stdio.h>
#include "validate/validate.h"

static const char *status_of(const validate_series *s)
{
	const validate_event *ev = &s->benchmark->events[s->event_index];
	if (!s->supported) return "unsupported";
	if (s->failed) return "failed";
	if (ev->companion) return "companion";
	return "ok";
}

static void real_or_status(output_table *t, double v)
{
	if (isfinite(v)) output_cell_real(t, v);
	else output_cell_empty(t);
}

output_table *validate_verdict_table(output_report *report, const validate_results *results)
{
	output_table *t = output_table_add(report, "verdict", "Can I trust my counters?");
	output_column(t, "event", NULL, 0);
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "source", NULL, 0);
	output_column(t, "class", NULL, 0);
	output_column(t, "a", "events", 2);
	output_column(t, "b", NULL, 4);
	output_column(t, "r2", NULL, 4);
	output_column(t, "reliable_from", "events", 0);
	output_column(t, "max_abs_diff", "%", 2);
	output_column(t, "empty_region", "events", 2);
	output_column(t, "status", NULL, 0);
	output_column(t, "detail", NULL, 0);
	for (size_t i = 0; i < results->series_count; i++) {
		const validate_series *s = &results->series[i];
		const validate_event *ev = &s->benchmark->events[s->event_index];
		const char *status = status_of(s);
		output_row(t);
		output_cell_text(t, ev->name);
		output_cell_text(t, s->benchmark->name);
		output_cell_text(t, validate_source_name(s->source));
		if (!s->supported) {
			output_cell_status(t, "unsupported", s->reason);
			for (int k = 0; k < 6; k++) output_cell_empty(t);
			output_cell_text(t, status);
			output_cell_text(t, s->reason);
			continue;
		}
		if (ev->companion) {
			output_cell_text(t, "companion");
			for (int k = 0; k < 5; k++) output_cell_empty(t);
			real_or_status(t, s->calibration_bias);
			output_cell_text(t, status);
			output_cell_text(t, "counted alongside (Salayandia 2002, Fig. 18), no prediction");
			continue;
		}
		output_cell_text(t, validate_class_name(s->verdict.cls));
		real_or_status(t, s->verdict.a);
		real_or_status(t, s->verdict.b);
		real_or_status(t, s->verdict.r2);
		if (isfinite(s->verdict.reliable_from)) output_cell_real(t, s->verdict.reliable_from);
		else output_cell_status(t, "never", "no size from which every case is within the tolerance");
		real_or_status(t, s->verdict.cases_used ? s->verdict.max_abs_difference * 100 : NAN);
		real_or_status(t, s->calibration_bias);
		output_cell_text(t, status);
		output_cell_text(t, s->failed ? s->reason : s->verdict.explanation);
	}
	return t;
}

output_table *validate_trips_table(output_report *report, const validate_results *results)
{
	output_table *t = output_table_add(report, "iterations",
	                                   "Iteration check: loop trips counted at run time against the model");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "size", NULL, 0);
	output_column(t, "expected", "trips", 0);
	output_column(t, "counted", "trips", 0);
	output_column(t, "status", NULL, 0);
	output_column(t, "detail", NULL, 0);
	for (size_t i = 0; i < results->trip_check_count; i++) {
		const validate_trip_check *c = &results->trip_checks[i];
		const char *state = validate_trip_state_name(c->state);
		output_row(t);
		output_cell_text(t, c->benchmark->name);
		output_cell_integer(t, (int64_t)c->size);
		output_cell_integer(t, (int64_t)c->expected);
		if (c->state == VALIDATE_TRIPS_OK || (c->state == VALIDATE_TRIPS_MISMATCH && c->counted))
			output_cell_integer(t, (int64_t)c->counted);
		else
			output_cell_status(t, state, c->reason);
		output_cell_text(t, state);
		output_cell_text(t, c->reason);
	}
	return t;
}

output_table *validate_case_table(output_report *report, const validate_results *results)
{
	output_table *t = output_table_add(report, "cases", "Test cases: prediction and reported counts");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "event", NULL, 0);
	output_column(t, "source", NULL, 0);
	output_column(t, "size", NULL, 0);
	output_column(t, "predicted", "events", 0);
	output_column(t, "runs", NULL, 0);
	output_column(t, "mean", "events", 2);
	output_column(t, "stddev", "events", 2);
	output_column(t, "min", "events", 0);
	output_column(t, "max", "events", 0);
	output_column(t, "difference", "%", 3);
	output_column(t, "in_domain", NULL, 0);
	output_column(t, "series", NULL, 0);
	for (size_t i = 0; i < results->series_count; i++) {
		const validate_series *s = &results->series[i];
		const validate_event *ev = &s->benchmark->events[s->event_index];
		char series[160];
		snprintf(series, sizeof series, "%s %s (%s)", ev->name, s->benchmark->name, validate_source_name(s->source));
		for (size_t k = 0; k < s->case_count; k++) {
			const validate_case *c = &s->cases[k];
			output_row(t);
			output_cell_text(t, s->benchmark->name);
			output_cell_text(t, ev->name);
			output_cell_text(t, validate_source_name(s->source));
			output_cell_integer(t, (int64_t)c->size);
			if (isfinite(c->predicted)) output_cell_real(t, c->predicted);
			else output_cell_status(t, "n/a", "companion event: not predicted");
			if (!s->supported) {
				for (int j = 0; j < 6; j++) output_cell_status(t, "unsupported", s->reason);
			} else if (c->runs == 0) {
				for (int j = 0; j < 6; j++) output_cell_status(t, "not-counted", s->failed ? s->reason : "no run");
			} else {
				output_cell_integer(t, (int64_t)c->runs);
				output_cell_real(t, c->mean);
				output_cell_real(t, c->stddev);
				output_cell_real(t, c->min);
				output_cell_real(t, c->max);
				if (isfinite(c->percent_difference)) output_cell_real(t, c->percent_difference * 100);
				else output_cell_status(t, "n/a", "no prediction");
			}
			output_cell_text(t, c->in_domain ? "yes" : "no");
			output_cell_text(t, series);   /* one line per (event, benchmark, source) in charts */
		}
	}
	return t;
}

output_table *validate_side_by_side_table(output_report *report, const validate_results *results)
{
	output_table *t = output_table_add(report, "sources", "Every source side by side (mean of the runs)");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "event", NULL, 0);
	output_column(t, "size", NULL, 0);
	output_column(t, "predicted", "events", 0);
	/* The synthetic source has a column only when it was asked for: it is
	 * a check of the classifier, not a source of the machine's counts. */
	bool shown[VALIDATE_SOURCE_COUNT];
	for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) shown[s] = s != VALIDATE_SOURCE_SYNTHETIC;
	for (size_t i = 0; i < results->series_count; i++) shown[results->series[i].source] = true;
	for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++)
		if (shown[s]) output_column(t, validate_source_name((validate_source)s), "events", 2);
	output_column(t, "in_domain", NULL, 0);
	/* Series of one (benchmark, event) are adjacent, one per source, with the same cases. */
	for (size_t i = 0; i < results->series_count;) {
		const validate_series *first = &results->series[i];
		const validate_series *by_source[VALIDATE_SOURCE_COUNT] = { 0 };
		size_t j = i;
		for (; j < results->series_count && results->series[j].benchmark == first->benchmark &&
		       results->series[j].event_index == first->event_index; j++)
			by_source[results->series[j].source] = &results->series[j];
		const validate_event *ev = &first->benchmark->events[first->event_index];
		for (size_t k = 0; k < first->case_count; k++) {
			const validate_case *c = &first->cases[k];
			output_row(t);
			output_cell_text(t, first->benchmark->name);
			output_cell_text(t, ev->name);
			output_cell_integer(t, (int64_t)c->size);
			if (isfinite(c->predicted)) output_cell_real(t, c->predicted);
			else output_cell_status(t, "n/a", "companion event: not predicted");
			for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) {
				if (!shown[s]) continue;
				const validate_series *series = by_source[s];
				if (!series) output_cell_status(t, "skipped", "source not selected (--backend)");
				else if (!series->supported) output_cell_status(t, "unsupported", series->reason);
				else if (series->cases[k].runs == 0)
					output_cell_status(t, "not-counted", series->failed ? series->reason : "no run");
				else output_cell_real(t, series->cases[k].mean);
			}
			output_cell_text(t, c->in_domain ? "yes" : "no");
		}
		i = j;
	}
	return t;
}

output_table *validate_raw_table(output_report *report, const validate_results *results)
{
	output_table *t = output_table_add(report, "runs", "Every raw run");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "event", NULL, 0);
	output_column(t, "source", NULL, 0);
	output_column(t, "size", NULL, 0);
	output_column(t, "run", NULL, 0);
	output_column(t, "predicted", "events", 0);
	output_column(t, "reported", "events", 0);
	for (size_t i = 0; i < results->series_count; i++) {
		const validate_series *s = &results->series[i];
		if (!s->supported) continue;
		const validate_event *ev = &s->benchmark->events[s->event_index];
		for (size_t k = 0; k < s->case_count; k++) {
			const validate_case *c = &s->cases[k];
			for (size_t r = 0; r < c->runs; r++) {
				output_row(t);
				output_cell_text(t, s->benchmark->name);
				output_cell_text(t, ev->name);
				output_cell_text(t, validate_source_name(s->source));
				output_cell_integer(t, (int64_t)c->size);
				output_cell_integer(t, (int64_t)r + 1);
				if (isfinite(c->predicted)) output_cell_real(t, c->predicted);
				else output_cell_status(t, "n/a", "companion event: not predicted");
				output_cell_real(t, c->values[r]);
			}
		}
	}
	return t;
}

void validate_trip_tally_of(const validate_results *results, validate_trip_tally *out)
{
	*out = (validate_trip_tally){ .total = results->trip_check_count };
	for (size_t i = 0; i < results->trip_check_count; i++) {
		const validate_trip_check *c = &results->trip_checks[i];
		out->count[c->state]++;
		if (!out->first_reason[c->state]) out->first_reason[c->state] = c->reason;
	}
}
