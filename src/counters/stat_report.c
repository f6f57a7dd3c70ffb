/* plumb stat's report and perf stat's text (src/counters/counter_stat.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "counters/counter_stat.h"

static void command_text(char **command, char *text, size_t length)
{
	text[0] = '\0';
	for (char **word = command; *word; word++) {
		size_t used = strlen(text);
		snprintf(text + used, length - used, "%s%s", used ? " " : "", *word);
	}
}

static const char *domain_name(const counter_stat_request *request)
{
	if (strcmp(request->backend, "perf"))
		return "user";
	return request->options.domain == COUNTER_DOMAIN_ALL ? "user+kernel" : "user";
}

static void cell_real_or_empty(output_table *table, double value)
{
	if (isnan(value))
		output_cell_empty(table);
	else
		output_cell_real(table, value);
}

static void add_counts_table(output_report *report, const counter_stat_request *request,
                             const counter_stat_result *result)
{
	output_table *table = output_table_add(report, "counts", "Event counts over the runs");
	output_column(table, "event", NULL, 0);
	output_column(table, "mean", NULL, 1);
	output_column(table, "stddev", NULL, 1);
	output_column(table, "cv", "%", 2);
	output_column(table, "min", NULL, 0);
	output_column(table, "max", NULL, 0);
	output_column(table, "mean_error", "%", 2);
	output_column(table, "rate", NULL, 3);
	output_column(table, "rate_unit", NULL, 0);
	output_column(table, "unit", NULL, 0);
	output_column(table, "runs", NULL, 0);
	output_column(table, "status", NULL, 0);
	bool kernel_note = false;
	for (size_t e = 0; e < request->event_count; e++) {
		const counter_stat_event *ev = &result->events[e];
		const char *name = request->events[e];
		output_row(table);
		output_cell_text(table, name);
		if (ev->counted == 0) {
			const char *word = ev->worst ? counter_state_name(ev->worst->state) : "unsupported";
			const char *reason = ev->worst ? ev->worst->reason : "no run counted this event";
			for (int k = 0; k < 6; k++)
				output_cell_status(table, word, reason);
			output_cell_empty(table);
			output_cell_empty(table);
			output_cell_empty(table);
			output_cell_integer(table, 0);
			output_cell_text(table, word);
			continue;
		}
		output_cell_real(table, ev->mean);
		output_cell_real(table, ev->stddev);
		output_cell_real(table, isnan(ev->cv) ? NAN : 100.0 * ev->cv);
		output_cell_real(table, ev->min);
		output_cell_real(table, ev->max);
		cell_real_or_empty(table, ev->mean_error_percent);
		cell_real_or_empty(table, ev->rate);
		if (ev->rate_unit)
			output_cell_text(table, ev->rate_unit);
		else
			output_cell_empty(table);
		if (ev->clock)
			output_cell_text(table, "ns");
		else
			output_cell_empty(table);
		output_cell_integer(table, (int64_t)ev->counted);
		/* Multiplexed values are numbers (scaled estimates), flagged here. */
		output_cell_text(table, ev->multiplexed ? "multiplexed"
		                        : ev->counted < result->runs ? "partly-counted"
		                        : ev->kernel_side_user_only ? "user-space-only"
		                        : "ok");
		if (ev->multiplexed)
			for (size_t r = 0; r < result->runs; r++)
				if (result->run[r].values[e].state == COUNTER_MULTIPLEXED) {
					output_note(report, "%s: %s (run %zu)", name, result->run[r].values[e].reason, r + 1);
					break;
				}
		if (ev->counted < result->runs && ev->worst)
			output_note(report, "%s: not counted in %zu of %zu runs: %s", name, result->runs - ev->counted,
			            result->runs, ev->worst->reason);
		kernel_note |= ev->kernel_side_user_only;
	}
	if (kernel_note)
		output_note(report, "user-space-only: context switches and CPU migrations happen in the kernel, so "
		            "counted in user space only they read 0 whatever the command did; perf stat counts "
		            "them for a user the kernel lets count kernel events (--all-domains: root, "
		            "CAP_PERFMON or perf_event_paranoid <= 1; PAPI counts user space only)");
}

/* Every run's value: what a validation analysis needs to tell a random error
 * (some runs off) from a bias (all runs off by the same amount). */
static void add_runs_table(output_report *report, const counter_stat_request *request,
                           const counter_stat_result *result)
{
	output_table *table = output_table_add(report, "runs", "Every run");
	output_column(table, "run", NULL, 0);
	output_column(table, "event", NULL, 0);
	output_column(table, "value", NULL, 0);
	output_column(table, "raw", NULL, 0);
	output_column(table, "time_enabled", "ns", 0);
	output_column(table, "time_running", "ns", 0);
	output_column(table, "status", NULL, 0);
	for (size_t r = 0; r < result->runs; r++)
		for (size_t e = 0; e < request->event_count; e++) {
			const counter_value *v = &result->run[r].values[e];
			output_row(table);
			output_cell_integer(table, (int64_t)(r + 1));
			output_cell_text(table, request->events[e]);
			if (counter_value_usable(v)) {
				if (v->state == COUNTER_OK)
					output_cell_integer(table, (int64_t)v->raw);
				else
					output_cell_real(table, v->value);
				output_cell_integer(table, (int64_t)v->raw);
				output_cell_integer(table, (int64_t)v->time_enabled);
				output_cell_integer(table, (int64_t)v->time_running);
				output_cell_text(table, counter_state_name(v->state));
			} else {
				for (int k = 0; k < 4; k++)
					output_cell_status(table, counter_state_name(v->state), v->reason);
				output_cell_text(table, counter_state_name(v->state));
			}
		}
}

output_report *counter_stat_report(const counter_stat_request *request, const counter_stat_result *result,
                                   bool per_run)
{
	output_report *report = output_report_new("stat");
	if (!report)
		return NULL;
	char text[512];
	command_text(request->command, text, sizeof text);
	output_meta_text(report, "command", text);
	output_meta_text(report, "backend", request->backend);
	output_meta_text(report, "domain", domain_name(request));
	output_meta_integer(report, "runs", (int64_t)result->runs);
	output_meta_integer(report, "elapsed_ns_median", (int64_t)llround(result->elapsed_median_ns));
	output_meta_integer(report, "elapsed_ns_mean", (int64_t)llround(result->elapsed_mean_ns));
	if (!isnan(result->elapsed_error_percent))
		output_meta_real(report, "elapsed_mean_error_percent", result->elapsed_error_percent);
	add_counts_table(report, request, result);
	if (per_run)
		add_runs_table(report, request, result);
	if (result->failed_runs) {
		int w = result->last_bad_status;
		if (WIFSIGNALED(w))
			output_note(report, "the command was killed by signal %d in %zu of %zu runs", WTERMSIG(w),
			            result->failed_runs, result->runs);
		else if (WEXITSTATUS(w) == 126 || WEXITSTATUS(w) == 127)
			output_note(report, "the command did not start in %zu of %zu runs (exit status %d: a missing shared "
			            "library, file or interpreter? its own message went to standard error): the figures of "
			            "those runs are of a failed start, not of the program's work",
			            result->failed_runs, result->runs, WEXITSTATUS(w));
		else
			output_note(report, "the command exited with status %d in %zu of %zu runs", WEXITSTATUS(w),
			            result->failed_runs, result->runs);
	}
	return report;
}

/* perf's scaled rate: 116.732 K/sec. */
static void rate_text(double rate, const char *unit, char *text, size_t length)
{
	if (strcmp(unit, "/sec")) {
		snprintf(text, length, "%8.3f %s", rate, unit);
		return;
	}
	const char *prefix = "";
	if (rate >= 1e9) {
		rate /= 1e9;
		prefix = "G";
	} else if (rate >= 1e6) {
		rate /= 1e6;
		prefix = "M";
	} else if (rate >= 1e3) {
		rate /= 1e3;
		prefix = "K";
	}
	snprintf(text, length, "%8.3f %s/sec", rate, prefix);
}

void counter_stat_print(FILE *f, const counter_stat_request *request, const counter_stat_result *result,
                        const output_report *report)
{
	char text[512];
	command_text(request->command, text, sizeof text);
	fprintf(f, "\n Performance counter stats for '%s'", text);
	if (result->runs > 1)
		fprintf(f, " (%zu runs)", result->runs);
	fprintf(f, " (%s, %s):\n\n", request->backend, domain_name(request));
	for (size_t e = 0; e < request->event_count; e++) {
		const counter_stat_event *ev = &result->events[e];
		const char *name = request->events[e];
		if (ev->counted == 0) {
			bool unsupported = !ev->worst || ev->worst->state == COUNTER_UNSUPPORTED;
			fprintf(f, "%18s      %s\n", unsupported ? "<not supported>" : "<not counted>", name);
			continue;
		}
		/* counts grouped by thousands, as perf stat prints them in a
		 * person's locale */
		char line[256], rate[64] = "", count[40];
		output_group_digits(llround(ev->mean), count, sizeof count);
		if (ev->clock)
			snprintf(line, sizeof line, "%18.2f msec %-24s", ev->mean / 1e6, name);
		else if (!strcmp(name, "duration_time"))
			snprintf(line, sizeof line, "%18s ns   %-24s", count, name);
		else
			snprintf(line, sizeof line, "%18s      %-24s", count, name);
		if (ev->rate_unit && !isnan(ev->rate))
			rate_text(ev->rate, ev->rate_unit, rate, sizeof rate);
		char whole[512];
		int used = rate[0] ? snprintf(whole, sizeof whole, "%s # %-24s", line, rate)
		                   : snprintf(whole, sizeof whole, "%s   %-24s", line, "");
		if (!isnan(ev->mean_error_percent))
			used += snprintf(whole + used, sizeof whole - (size_t)used, "  ( +- %5.2f%% )", ev->mean_error_percent);
		if (ev->multiplexed)
			snprintf(whole + used, sizeof whole - (size_t)used, "  (multiplexed)");
		else if (ev->counted < result->runs)
			snprintf(whole + used, sizeof whole - (size_t)used, "  (counted in %zu of %zu runs)", ev->counted,
			         result->runs);
		else if (ev->kernel_side_user_only)
			snprintf(whole + used, sizeof whole - (size_t)used, "  (user space only)");
		size_t length = strlen(whole);
		while (length && whole[length - 1] == ' ')
			whole[--length] = '\0';
		fprintf(f, "%s\n", whole);
	}
	fprintf(f, "\n");
	if (result->runs > 1)
		fprintf(f, "%18.9f +- %.9f seconds time elapsed  ( +- %5.2f%% )\n\n", result->elapsed_mean_ns / 1e9,
		        result->elapsed_stddev_ns / 1e9,
		        isnan(result->elapsed_error_percent) ? 0.0 : result->elapsed_error_percent);
	else
		fprintf(f, "%18.9f seconds time elapsed\n\n", result->elapsed_mean_ns / 1e9);
	for (size_t e = 0; e < request->event_count; e++) {
		const counter_stat_event *ev = &result->events[e];
		if (ev->counted == 0 && ev->worst)
			fprintf(f, " %s: %s: %s\n", request->events[e], counter_state_name(ev->worst->state),
			        ev->worst->reason);
	}
	for (size_t i = 0; i < output_note_count(report); i++)
		fprintf(f, " %s\n", output_note_at(report, i));
}
