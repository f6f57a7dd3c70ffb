/* A saved `plumb lat --json` report read back as a measurement: the sweep,
 * every pass's 10th percentiles and the sysfs sizes it was judged against,
 * analysed again by the one detector (latency_run_analyze).  This is how
 * plumb geometry and the report take their capacities and level latencies
 * from the same measurement as plumb lat, so a quantity has one figure. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "latency/latency_run.h"

/* A meta value as text, "" when absent (output_meta_text_of); true when present. */
static bool meta_text(const output_report *report, const char *key, char *buffer, size_t length)
{
	output_meta_text_of(report, key, buffer, length);
	return buffer[0] != 0;
}

/* v when it is a number in [low, high], else fallback: a saved report is
 * outside input, and a cast of NaN or of a value out of range is
 * undefined. */
static double within(double v, double low, double high, double fallback)
{
	return v >= low && v <= high ? v : fallback;
}

static double cell(const output_table *t, size_t row, int column)
{
	return column < 0 ? NAN : output_cell_number(t, row, (size_t)column);
}

int latency_run_from_report(const output_report *report, latency_run_options *o, latency_run_result *r,
                            plumb_status *status)
{
	latency_run_defaults(o);
	memset(r, 0, sizeof *r);
	const char *command = report ? output_report_command(report) : NULL;
	if (!command || strcmp(command, "lat") != 0)
		return plumb_fail(status, EINVAL, "not a 'plumb lat' report (it is %s's)", command ? command : "no command");
	const output_table *sweep = output_table_find(report, "sweep");
	int bytes_column = sweep ? output_column_index(sweep, "bytes") : -1;
	int p10_column = sweep ? output_column_index(sweep, "p10") : -1;
	if (bytes_column < 0 || p10_column < 0 || output_row_count(sweep) == 0)
		return plumb_fail(status, EINVAL, "the lat report has no sweep table with bytes and p10 columns");
	double ppo = output_meta_number_of(report, "points_per_octave");
	if (!(ppo >= 1 && ppo <= 64))
		return plumb_fail(status, EINVAL, "the lat report does not say its points per octave");
	o->points_per_octave = (unsigned)ppo;
	char text[512];
	if (meta_text(report, "pattern", text, sizeof text))
		for (int p = 0; p < 16; p++)
			if (!strcmp(chase_pattern_name((chase_pattern)p), text))
				o->pattern = (chase_pattern)p;
	if (meta_text(report, "seed", text, sizeof text))
		o->seed = strtoull(text, NULL, 10);
	o->repeats = (unsigned)within(output_meta_number_of(report, "repeats"), 0, 64, o->repeats);
	o->measure.time_cap_ns = (uint64_t)(within(output_meta_number_of(report, "time_cap_ms"), 0, 1e9, 150) * 1e6);
	o->measure.target_relative_ci = within(output_meta_number_of(report, "target_ci95_relative"), 0, 100, 0.02);
	r->cpu = (int)within(output_meta_number_of(report, "cpu"), -1, 1 << 20, -1);
	r->line_bytes = (size_t)within(output_meta_number_of(report, "line_bytes"), 0, 1 << 30, 0);
	/* The meta holds the TSC rate to 6 digits; the sweep's cycles and ns
	 * columns give it to the last bit. */
	r->timer.ticks_per_ns = output_meta_number_of(report, "timer_ticks_per_ns");
	int cycles_column = output_column_index(sweep, "tsc_cycles"), ns_column = output_column_index(sweep, "latency");
	double cycles = cell(sweep, 0, cycles_column), first_ns = cell(sweep, 0, ns_column);
	if (cycles > 0 && first_ns > 0)
		r->timer.ticks_per_ns = cycles / first_ns;
	double ghz = output_meta_number_of(report, "core_clock_ghz_estimate");
	r->work_unit.ns = ghz > 0 ? 1 / ghz : NAN;
	r->clock_ghz = ghz > 0 ? ghz : NAN;
	r->clock_low_ghz = output_meta_number_of(report, "core_clock_ghz_low");
	r->clock_high_ghz = output_meta_number_of(report, "core_clock_ghz_high");
	if (!(r->clock_low_ghz > 0))
		r->clock_low_ghz = r->clock_ghz;
	if (!(r->clock_high_ghz > 0))
		r->clock_high_ghz = r->clock_ghz;
	r->sweep_seconds = output_meta_number_of(report, "sweep_seconds");
	r->total_seconds = output_meta_number_of(report, "total_seconds");
	r->remeasured = (size_t)within(output_meta_number_of(report, "remeasured_points"), 0, 1e12, 0);
	meta_text(report, "pages_obtained", r->pages_obtained, sizeof r->pages_obtained);
	if (meta_text(report, "sysfs_data_caches", text, sizeof text)) {
		char *cursor = text;
		while (*cursor && r->sysfs_levels < 8) {
			char *end;
			unsigned long long size = strtoull(cursor, &end, 10);
			if (end == cursor || size == 0)
				break;
			r->sysfs_sizes[r->sysfs_levels++] = size;
			cursor = *end == ',' ? end + 1 : end;
		}
	}

	size_t n = output_row_count(sweep);
	const output_table *passes = output_table_find(report, "passes");
	int pass_column = passes ? output_column_index(passes, "pass") : -1;
	int pass_bytes = passes ? output_column_index(passes, "bytes") : -1;
	int pass_p10 = passes ? output_column_index(passes, "p10") : -1;
	size_t pass_count = 1;
	for (size_t row = 0; pass_column >= 0 && row < output_row_count(passes); row++) {
		double p = cell(passes, row, pass_column);
		if (p >= 0 && p < 64 && (size_t)p + 1 > pass_count)
			pass_count = (size_t)p + 1;
	}
	r->sizes = calloc(n, sizeof *r->sizes);
	r->points = calloc(n, sizeof *r->points);
	r->pass_ns = calloc(n * pass_count, sizeof *r->pass_ns);
	if (!r->sizes || !r->points || !r->pass_ns)
		return plumb_fail_errno(status, ENOMEM, "out of memory");
	r->point_count = n;
	r->passes = pass_count;
	enum { SAVED_MAX_NS = 1000000000 };
	int median = output_column_index(sweep, "latency"), minimum = output_column_index(sweep, "min");
	int cv = output_column_index(sweep, "cv"), ci = output_column_index(sweep, "ci95");
	int samples = output_column_index(sweep, "samples"), label = output_column_index(sweep, "label");
	for (size_t i = 0; i < n; i++) {
		double b = cell(sweep, i, bytes_column), p10 = cell(sweep, i, p10_column);
		if (!(b > 0 && b < 1e18) || isnan(p10))
			return plumb_fail(status, EINVAL, "the lat report's sweep row %zu has no size or no p10", i + 1);
		/* A saved report may come from someone else: a latency that is not
		 * one a load can take (negative, infinite, 1e300 ns) is refused by
		 * name, not analysed into a 300-digit plateau. */
		double median_ns = cell(sweep, i, median), min_ns = cell(sweep, i, minimum);
		if (!(p10 > 0 && p10 <= SAVED_MAX_NS) || !(isnan(median_ns) || (median_ns > 0 && median_ns <= SAVED_MAX_NS)) ||
		    !(isnan(min_ns) || (min_ns > 0 && min_ns <= SAVED_MAX_NS)))
			return plumb_fail(status, EINVAL, "the lat report's sweep row %zu holds a latency of %g ns (p10), %g "
			                  "(latency) or %g (min): a load takes more than 0 and at most 1 s", i + 1, p10,
			                  median_ns, min_ns);
		latency_point *p = &r->points[i];
		r->sizes[i] = p->bytes = (uint64_t)llround(b);
		p->latency.ns_p10 = p10;
		p->latency.ns = cell(sweep, i, median);
		p->latency.ns_min = cell(sweep, i, minimum);
		p->latency.cv = cell(sweep, i, cv);
		p->latency.ci95_relative = cell(sweep, i, ci) / 100;
		p->latency.samples = (size_t)within(cell(sweep, i, samples), 0, 1e12, 0);
		const char *l = label >= 0 ? output_cell_string(sweep, i, (size_t)label) : NULL;
		p->latency.noisy = l && !strcmp(l, "noisy");
		for (size_t k = 0; k < pass_count; k++)
			r->pass_ns[k * n + i] = NAN;
	}
	/* The sweep table holds each point's best pass; pass 0 is in the
	 * passes table (older reports have none: the sweep is the one pass). */
	bool have_first = false;
	for (size_t row = 0; pass_column >= 0 && pass_bytes >= 0 && pass_p10 >= 0 && row < output_row_count(passes); row++) {
		double p = within(cell(passes, row, pass_column), 0, 63, -1), b = cell(passes, row, pass_bytes);
		for (size_t i = 0; p >= 0 && (size_t)p < pass_count && i < n; i++)
			if ((double)r->sizes[i] == b) {
				r->pass_ns[(size_t)p * n + i] = cell(passes, row, pass_p10);
				have_first |= p == 0;
				break;
			}
	}
	for (size_t i = 0; i < n; i++)
		if (!have_first || !(r->pass_ns[i] > 0))
			r->pass_ns[i] = r->points[i].latency.ns_p10;
	return latency_run_analyze(o, r, status);
}
