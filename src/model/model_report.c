/* The `plumb model` report as a library call: fit (or evaluate) the closed
 * M/D/1 model, compare it with the points, and predict latency against
 * contention and processor count (docs/model.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include "model/model.h"

static void add_prediction_row(output_table *t, const model_params *p, double contention, double measured_max)
{
	double latency;
	plumb_status status;
	output_row(t);
	output_cell_real(t, contention);
	if (model_latency(p, contention, &latency, &status) == 0) {
		output_cell_real(t, latency);
		output_cell_real(t, model_utilization(p, contention, latency));
	} else {
		output_cell_status(t, "n/a", status.message);
		output_cell_status(t, "n/a", status.message);
	}
	output_cell_text(t, measured_max < 0 ? "-" : contention > measured_max ? "yes" : "no");
}

int model_report(const model_report_options *o, output_report *r, plumb_status *status)
{
	const model_input *input = o->input;
	const char *from = input ? (o->source ? o->source : "input") : NULL;
	double service = o->service_ns, l0 = o->unloaded_latency_ns, line = o->line_bytes;
	unsigned processors = o->processors ? o->processors : 16;
	model_fit fit = { 0 };
	double measured_max = -1;
	plumb_status point_status;
	if (!input && !(service > 0 && l0 > 0))
		return plumb_fail(status, EINVAL, "model: give measurements to fit, or both S and L0 to evaluate");
	if (input) {
		if (line <= 0)
			line = input->line_bytes > 0 ? input->line_bytes : 64;
		for (size_t i = 0; i < input->count; i++)
			measured_max = fmax(measured_max, input->points[i].contention_mb_s);
		if (service > 0) {
			/* Evaluate the given S against the file instead of fitting. */
			fit.params = (model_params){ .service_ns = service, .line_bytes = line };
			double zero_sum = 0;
			int zeros = 0;
			for (size_t i = 0; i < input->count; i++)
				if (input->points[i].contention_mb_s == 0) {
					zero_sum += input->points[i].latency_ns;
					zeros++;
				}
			fit.params.unloaded_latency_ns = l0 > 0 ? l0 : zeros ? zero_sum / zeros : NAN;
			if (!(fit.params.unloaded_latency_ns > 0))
				return plumb_fail(status, EINVAL, "%s has no zero-bandwidth point; give L0 (--l0)", from);
			fit.least_squares = model_least_squares(&fit.params, input->points, input->count);
			fit.error_per_sample = sqrt(fit.least_squares) / (double)input->count;
			fit.rms_error = sqrt(fit.least_squares / (double)input->count);
			fit.points = input->count;
		} else if (model_fit_points_bounded(input->points, input->count, line, l0, o->min_peak_mb_s, &fit,
		                                    &point_status) != 0) {
			return plumb_fail(status, point_status.code, "%s: %s", from, point_status.message);
		}
	} else {
		fit.params = (model_params){ .unloaded_latency_ns = l0, .service_ns = service,
		                             .line_bytes = line > 0 ? line : 64 };
	}
	/* S is part of L0: with S > L0 the model's latency at no contention is S,
	 * not the L0 the report shows (the fit never goes there). */
	if (fit.params.service_ns > fit.params.unloaded_latency_ns)
		return plumb_fail(status, EINVAL,
		                  "the service time S = %g ns exceeds the unloaded latency L0 = %g ns, of which "
		                  "it is a part",
		                  fit.params.service_ns, fit.params.unloaded_latency_ns);

	output_meta_text(r, "model", "closed M/D/1 (Hristea 1997, eq. 5.18-5.22, larger root)");
	if (from) {
		output_meta_text(r, "source", from);
		output_meta_text(r, "source_format", input->source);
	}
	output_table *t = output_table_add(r, "fit", from && service <= 0 ? "Least-squares fit" : "Model parameters");
	output_column(t, "service_time", "ns", 2);
	output_column(t, "unloaded_latency", "ns", 2);
	output_column(t, "unloaded_latency_source", NULL, 0);
	output_column(t, "line", "bytes", 0);
	output_column(t, "peak_bandwidth", "MB/s", 1);
	output_column(t, "points", NULL, 0);
	output_column(t, "error_per_sample", "ns", 2);
	output_column(t, "rms_error", "ns", 2);
	output_column(t, "max_abs_error", "ns", 2);
	output_column(t, "service_time_low", "ns", 3);
	output_column(t, "service_time_high", "ns", 3);
	output_column(t, "shape", NULL, 0);
	output_column(t, "peak_bound", "MB/s", 1);
	output_column(t, "free_service_time", "ns", 2);
	/* A flat curve determines no service time: the fit's S sits at the
	 * bottom of its search, a number of the search's making, and the peak
	 * line / S would be beyond any machine.  Neither is printed as a
	 * figure; the reason takes their place. */
	bool flat = from && service <= 0 && fit.at_bound < 0;
	char flat_service[384], flat_peak[256];
	if (isfinite(fit.service_low))
		snprintf(flat_service, sizeof flat_service,
		         "the latency does not rise with bandwidth beyond its noise up to %.0f MB/s, the highest load "
		         "measured: S's 95%% interval, %.3g to %.3g ns, reaches 0, so the fit's %.3g ns is no service time",
		         measured_max, fit.service_low, fit.service_high, fit.params.service_ns);
	else
		snprintf(flat_service, sizeof flat_service,
		         "the latency does not rise with bandwidth up to %.0f MB/s, the highest load measured, so the fit "
		         "has no service time to find (its search stopped at its bottom, %.3g ns)",
		         measured_max, fit.params.service_ns);
	snprintf(flat_peak, sizeof flat_peak,
	         "not determined: above %.0f MB/s, the highest load measured (a flat curve has no service time)", measured_max);
	output_row(t);
	if (flat)
		output_cell_status(t, "n/a", flat_service);
	else
		output_cell_real(t, fit.params.service_ns);
	output_cell_real(t, fit.params.unloaded_latency_ns);
	output_cell_text(t, l0 > 0 ? "given" : fit.l0_fitted ? "fitted" : "zero-bandwidth point");
	output_cell_real(t, fit.params.line_bytes);
	if (flat)
		output_cell_status(t, "n/a", flat_peak);
	else
		output_cell_real(t, model_peak_bandwidth(&fit.params));
	if (from) {
		output_cell_integer(t, (int64_t)fit.points);
		output_cell_real(t, fit.error_per_sample);
		output_cell_real(t, fit.rms_error);
		output_cell_real(t, fit.max_abs_error);
	} else {
		for (int i = 0; i < 4; i++)
			output_cell_status(t, "n/a", "no measurements given (--from)");
	}
	/* S's 95% interval, and whether the data determine S at all */
	bool fitted = from && service <= 0;
	const char *shape = !fitted ? "given" : fit.at_bound < 0 ? "flat" : fit.at_bound > 0 ? "at upper bound"
	                    : fit.at_peak_bound ? "at the measured bandwidth" : "fitted";
	const char *no_interval = !fitted ? "S was given, not fitted"
	                          : fit.at_bound < 0 ? "flat: latency does not rise with bandwidth, so S is not determined"
	                          : fit.at_peak_bound ? "S sits at the bound the measured bandwidth sets"
	                          : fit.at_bound > 0 ? "S is at the top of its range" : "no degree of freedom left for an interval";
	if (fitted && isfinite(fit.service_low) && isfinite(fit.service_high)) {
		output_cell_real(t, fit.service_low);
		output_cell_real(t, fit.service_high);
	} else {
		output_cell_status(t, "n/a", no_interval);
		output_cell_status(t, "n/a", no_interval);
	}
	output_cell_text(t, shape);
	if (fitted && isfinite(fit.peak_bound_mb_s))
		output_cell_real(t, fit.peak_bound_mb_s);
	else
		output_cell_status(t, "n/a", "no bandwidth bound given (--peak-at-least)");
	if (fit.at_peak_bound)
		output_cell_real(t, fit.free_service_ns);
	else
		output_cell_status(t, "n/a", !(fitted && isfinite(fit.peak_bound_mb_s)) ? "no bandwidth bound given (--peak-at-least)"
		                             : flat ? "a flat curve has no service time to hold to the bound"
		                                    : "the fit is within the bound: S is the loaded curve's own");
	if (from) {
		output_table *pt = output_table_add(r, "points", "Measured against model");
		output_column(pt, "contention", "MB/s", 1);
		output_column(pt, "measured_latency", "ns", 1);
		output_column(pt, "model_latency", "ns", 1);
		output_column(pt, "residual", "ns", 1);
		for (size_t i = 0; i < input->count; i++) {
			double latency;
			output_row(pt);
			output_cell_real(pt, input->points[i].contention_mb_s);
			output_cell_real(pt, input->points[i].latency_ns);
			if (model_latency(&fit.params, input->points[i].contention_mb_s, &latency, &point_status) == 0) {
				output_cell_real(pt, latency);
				output_cell_real(pt, input->points[i].latency_ns - latency);
			} else {
				output_cell_status(pt, "n/a", point_status.message);
				output_cell_status(pt, "n/a", point_status.message);
			}
		}
	}
	output_table *ct = output_table_add(r, "predict_contention", "Predicted latency against generator contention");
	output_column(ct, "contention", "MB/s", 1);
	output_column(ct, "latency", "ns", 1);
	output_column(ct, "utilization", NULL, 3);
	output_column(ct, "beyond_measured", NULL, 0);
	/* With a flat fit the model says only that nothing queues up to the
	 * highest load measured: predictions stay within it. */
	double saturation = flat ? measured_max : model_saturation_contention(&fit.params);
	static const double fractions[] = { 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99 };
	for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++)
		add_prediction_row(ct, &fit.params, fractions[i] * saturation, measured_max);
	for (size_t i = 0; i < o->at_count; i++)
		add_prediction_row(ct, &fit.params, o->at[i], measured_max);
	output_table *xt = output_table_add(r, "predict_processors",
	                                    "Predicted latency when P processors all chase dependent misses (Hristea 1997: "
	                                    "generators as extra masters)");
	output_column(xt, "processors", NULL, 0);
	output_column(xt, "latency", "ns", 1);
	output_column(xt, "per_processor_bandwidth", "MB/s", 1);
	output_column(xt, "total_bandwidth", "MB/s", 1);
	output_column(xt, "utilization", NULL, 3);
	/* 1..16, then powers of two, then the requested count. */
	unsigned counts[64];
	size_t count_n = 0;
	for (unsigned p = 1; p <= processors && count_n < 63; p = p < 16 ? p + 1 : p * 2)
		counts[count_n++] = p;
	if (counts[count_n - 1] != processors)
		counts[count_n++] = processors;
	for (size_t i = 0; i < count_n; i++) {
		unsigned p = counts[i];
		double latency;
		output_row(xt);
		output_cell_integer(xt, (int64_t)p);
		if (flat) {
			for (int k = 0; k < 4; k++)
				output_cell_status(xt, "n/a", "the service time is not determined (a flat curve), so no processor count can be priced");
			break;   /* one row says it */
		} else if (model_latency_processors(&fit.params, p, &latency, &point_status) == 0) {
			double each = fit.params.line_bytes / latency * 1e3;
			output_cell_real(xt, latency);
			output_cell_real(xt, each);
			output_cell_real(xt, each * (double)p);
			output_cell_real(xt, fit.params.service_ns * (double)p / latency);
		} else {
			for (int k = 0; k < 4; k++)
				output_cell_status(xt, "n/a", point_status.message);
		}
	}
	output_note(r, "peak bandwidth = line / S (eq. 5.13); the model has no solution at or beyond it");
	if (flat)
		output_note(r, "S is at the bottom of its search range: latency does not rise with bandwidth in these "
		               "data, so S (and the peak bandwidth) is not determined and neither is printed; the "
		               "predictions stay within the loads measured; measure closer to saturation (more "
		               "generators, or a machine with more cores to load its memory)");
	if (from && service <= 0 && fit.at_bound > 0)
		output_note(r, "S is at the top of its search range (L0, or the saturation limit of the largest "
		               "bandwidth): the data rise faster than the model allows");
	if (fit.at_peak_bound) {
		/* within the free fit's interval the two agree; beyond it the
		 * curve rises faster than queueing at that memory can make it */
		bool agrees = isfinite(fit.free_service_low) && fit.free_service_low <= fit.params.service_ns;
		char interval[96] = "";
		if (isfinite(fit.free_service_low) && isfinite(fit.free_service_high))
			snprintf(interval, sizeof interval, ", 95%% interval %.3g-%.3g ns", fit.free_service_low,
			         fit.free_service_high);
		output_note(r, "S is held to line / %.0f MB/s = %.3g ns, the bandwidth the memory was measured to sustain: "
		               "the loaded curve alone puts it at %.3g ns%s (a peak of %.0f MB/s, below what was measured)%s",
		            fit.peak_bound_mb_s, fit.params.service_ns, fit.free_service_ns, interval,
		            fit.params.line_bytes / fit.free_service_ns * 1e3,
		            agrees ? ", and the bound lies within that interval"
		                   : ": part of the curve's rise is not queueing at the memory");
	}
	if (from && fit.l0_fitted)
		output_note(r, "no zero-bandwidth point: L0 was fitted together with S");
	return 0;
}
