/* The verdict table as a reusable output table, and the plot's behaviour
 * without gnuplot. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "validate/validate.h"
#include "../temp_folder.h"

/* Two series of the page-fault benchmark: perf exact, PAPI unsupported. */
static void fake_results(validate_results *r, double *values)
{
	memset(r, 0, sizeof *r);
	validate_machine_default(&r->machine);
	const validate_benchmark *b = validate_benchmark_find("page-faults");
	r->series_count = 2;
	r->series = calloc(2, sizeof *r->series);
	for (int s = 0; s < 2; s++) {
		validate_series *series = &r->series[s];
		series->benchmark = b;
		series->source = s == 0 ? VALIDATE_SOURCE_PERF : VALIDATE_SOURCE_PAPI;
		series->supported = s == 0;
		series->calibration_bias = s == 0 ? 0 : NAN;
		if (s == 1) snprintf(series->reason, sizeof series->reason, "no PAPI here");
		series->case_count = 3;
		series->cases = calloc(3, sizeof *series->cases);
		for (size_t k = 0; k < 3; k++) {
			validate_case *c = &series->cases[k];
			c->size = (uint64_t)pow(10, (double)k + 1);
			c->predicted = (double)c->size;
			c->in_domain = true;
			if (s == 0) {
				c->runs = 2;
				c->values = &values[2 * k];
				c->values[0] = c->values[1] = c->predicted;
			}
			validate_case_summarize(c);
		}
		validate_thresholds t;
		validate_thresholds_default(&t);
		if (s == 0) validate_classify(series->cases, 3, &t, &series->verdict);
	}
}

static void free_fake(validate_results *r)
{
	for (size_t i = 0; i < r->series_count; i++) free(r->series[i].cases);
	free(r->series);
}

static char *render(output_report *report, output_format format)
{
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	plumb_status status;
	cr_assert_eq(output_write(report, format, f, &status), 0);
	fclose(f);
	return text;
}

Test(validate_output, verdict_table_is_a_reusable_output_table)
{
	double values[6];
	validate_results r;
	fake_results(&r, values);
	output_report *report = output_report_new("report");
	output_table *t = validate_verdict_table(report, &r);
	cr_assert_not_null(t);
	validate_side_by_side_table(report, &r);
	char *json = render(report, OUTPUT_JSON);
	cr_expect(strstr(json, "\"name\": \"verdict\"") || strstr(json, "\"name\":\"verdict\""));
	cr_expect(strstr(json, "\"exact\"") != NULL);
	cr_expect(strstr(json, "no PAPI here") != NULL, "the reason travels with the cell");
	char *table = render(report, OUTPUT_TABLE);
	cr_expect(strstr(table, "Can I trust my counters?") != NULL);
	cr_expect(strstr(table, "unsupported") != NULL);
	free(json);
	free(table);
	output_report_free(report);
	free_fake(&r);
}

Test(validate_output, plot_without_gnuplot_says_so_and_keeps_the_data)
{
	double values[6];
	validate_results r;
	fake_results(&r, values);
	char directory[TEMP_PATH_SIZE];
	temp_template(directory, sizeof directory, "plumb-validate-test-XXXXXX");
	cr_assert_not_null(mkdtemp(directory));
	char written[512] = "";
	plumb_status status;
	int rc = validate_plot(&r, directory, "png", "/nonexistent/gnuplot", written, sizeof written, &status);
	cr_expect_eq(rc, -1);
	cr_expect(strstr(status.message, "gnuplot is not installed") != NULL, "%s", status.message);
	char path[600];
	snprintf(path, sizeof path, "%s/validate-plot.gp", directory);
	cr_expect_eq(access(path, R_OK), 0);
	unlink(path);
	snprintf(path, sizeof path, "%s/validate-plot.dat", directory);
	cr_expect_eq(access(path, R_OK), 0);
	unlink(path);
	rmdir(directory);
	cr_expect_eq(validate_plot(&r, "/tmp", "gif", NULL, written, sizeof written, &status), -1);
	free_fake(&r);
}
