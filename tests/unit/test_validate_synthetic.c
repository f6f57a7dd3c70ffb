/* The classifier on hardware-like errors: the synthetic source injects a
 * bias, a slope, a spread or no relation at all, seeded, and each must be
 * classified as what was injected, whatever the region sizes of the suite
 * and the number of runs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "validate/validate.h"

typedef struct suite {
	const char *name;
	uint64_t sizes[16];
	size_t count;
} suite;

static const suite suites[] = {
	{ "1..10^6", { 1, 10, 100, 1000, 10000, 100000, 1000000 }, 7 },
	{ "1..100", { 1, 10, 100 }, 3 },
	{ "1..10^4", { 1, 10, 100, 1000, 10000 }, 5 },
	{ "10^3..10^6", { 1000, 10000, 100000, 1000000 }, 4 },
	{ "10^4..10^6", { 10000, 100000, 1000000 }, 3 },
	{ "capacity 1000..10000", { 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000 }, 10 },
};

static const validate_synthetic_kind kinds[] = { VALIDATE_SYNTHETIC_EXACT, VALIDATE_SYNTHETIC_BIAS,
                                                 VALIDATE_SYNTHETIC_MULTIPLICATIVE, VALIDATE_SYNTHETIC_RANDOM,
                                                 VALIDATE_SYNTHETIC_UNKNOWN };

/* One suite with the injection; returns the verdict.  values receive the
 * raw runs (count * runs) when not NULL. */
static validate_verdict classify_injected(validate_synthetic_kind kind, uint64_t seed, const suite *s, size_t runs,
                                          double *values)
{
	validate_synthetic synthetic = { kind, NAN, seed };
	validate_case cases[16];
	memset(cases, 0, sizeof cases);
	for (size_t i = 0; i < s->count; i++) {
		cases[i].size = s->sizes[i];
		cases[i].predicted = (double)s->sizes[i];
		cases[i].in_domain = true;
		cases[i].values = calloc(runs, sizeof *cases[i].values);
		cr_assert_not_null(cases[i].values);
	}
	char detail[64];
	validate_synthetic_fill(&synthetic, 7, cases, s->count, runs, detail, sizeof detail);
	for (size_t i = 0; i < s->count; i++) {
		cr_assert_eq(cases[i].runs, runs);
		validate_case_summarize(&cases[i]);
	}
	validate_thresholds t;
	validate_thresholds_default(&t);
	validate_verdict v;
	validate_classify(cases, s->count, &t, &v);
	for (size_t i = 0; i < s->count; i++) {
		if (values) memcpy(values + i * runs, cases[i].values, runs * sizeof *values);
		free(cases[i].values);
	}
	return v;
}

Test(validate_synthetic, each_injected_error_is_classified_as_injected_across_region_sizes)
{
	/* 100 runs is the default, 10 the fewest that hold: with 3 runs a
	 * sample variance is too uncertain (chi-square with 2 degrees of
	 * freedom) and 1 in 20 bias or slope suites look random or tilted
	 * (300 seeds tried). */
	static const size_t run_counts[] = { 100, 10 };
	size_t checked = 0;
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
			for (size_t r = 0; r < sizeof run_counts / sizeof run_counts[0]; r++)
				for (uint64_t seed = 1; seed <= 20; seed++) {
					validate_verdict v = classify_injected(kinds[k], seed, &suites[s], run_counts[r], NULL);
					validate_class expected = validate_synthetic_expected_class(kinds[k]);
					cr_expect_eq(v.cls, expected, "%s injected, suite %s, %zu runs, seed %llu: classified %s (%s)",
					             validate_synthetic_kind_name(kinds[k]), suites[s].name, run_counts[r],
					             (unsigned long long)seed, validate_class_name(v.cls), v.explanation);
					checked++;
				}
	cr_expect_eq(checked, 5 * 6 * 2 * 20);
}

Test(validate_synthetic, the_fit_recovers_the_injected_numbers)
{
	/* bias: the default overhead is a quarter of the smallest prediction (at
	 * least 3), and the fit's intercept finds it; multiplicative: b = 1.25. */
	validate_verdict v = classify_injected(VALIDATE_SYNTHETIC_BIAS, 1, &suites[0], 100, NULL);
	cr_expect(fabs(v.a - 3) < 0.5 && fabs(v.b - 1) < 0.01, "bias: a = %g, b = %g", v.a, v.b);
	v = classify_injected(VALIDATE_SYNTHETIC_BIAS, 1, &suites[3], 100, NULL);
	cr_expect(fabs(v.a - 250) < 5 && fabs(v.b - 1) < 0.01, "bias from 1000: a = %g, b = %g", v.a, v.b);
	v = classify_injected(VALIDATE_SYNTHETIC_MULTIPLICATIVE, 1, &suites[0], 100, NULL);
	cr_expect(fabs(v.b - 1.25) < 0.01, "multiplicative: b = %g", v.b);
	v = classify_injected(VALIDATE_SYNTHETIC_RANDOM, 1, &suites[0], 100, NULL);
	cr_expect(fabs(v.b - 1) < 0.05 && v.noisy_cases >= 1, "random: b = %g, %zu noisy", v.b, v.noisy_cases);
}

Test(validate_synthetic, the_same_seed_gives_the_same_counts)
{
	double a[7 * 10], b[7 * 10], c[7 * 10];
	for (size_t k = 1; k < sizeof kinds / sizeof kinds[0]; k++) {
		classify_injected(kinds[k], 42, &suites[0], 10, a);
		classify_injected(kinds[k], 42, &suites[0], 10, b);
		classify_injected(kinds[k], 43, &suites[0], 10, c);
		cr_expect_eq(memcmp(a, b, sizeof a), 0, "%s: seed 42 twice differs", validate_synthetic_kind_name(kinds[k]));
		cr_expect_neq(memcmp(a, c, sizeof a), 0, "%s: seeds 42 and 43 agree", validate_synthetic_kind_name(kinds[k]));
		for (size_t i = 0; i < 7 * 10; i++)
			cr_expect(a[i] >= 0 && a[i] == floor(a[i]), "counts are whole and never negative: %g", a[i]);
	}
}

Test(validate_synthetic, parse_accepts_kinds_and_magnitudes_and_refuses_the_rest)
{
	validate_synthetic s;
	plumb_status status;
	cr_expect_eq(validate_synthetic_parse("bias", &s, &status), 0);
	cr_expect_eq(s.kind, VALIDATE_SYNTHETIC_BIAS);
	cr_expect(isnan(s.magnitude));
	cr_expect_eq(validate_synthetic_parse("Multiplicative=0.8", &s, &status), 0);
	cr_expect_eq(s.kind, VALIDATE_SYNTHETIC_MULTIPLICATIVE);
	cr_expect_eq(s.magnitude, 0.8);
	cr_expect_eq(validate_synthetic_parse("random=0.2", &s, &status), 0);
	cr_expect_neq(validate_synthetic_parse("random=3", &s, &status), 0, "a spread above half the count can make it negative");
	cr_expect_neq(validate_synthetic_parse("noise", &s, &status), 0);
	cr_expect(strstr(status.message, "noise") != NULL, "%s", status.message);
	cr_expect_neq(validate_synthetic_parse("exact=2", &s, &status), 0);
	cr_expect_neq(validate_synthetic_parse("bias=x", &s, &status), 0);
	cr_expect_neq(validate_synthetic_parse("", &s, &status), 0);
}

Test(validate_synthetic, the_runner_classifies_a_benchmark_suite_as_injected)
{
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		validate_options o;
		validate_options_default(&o);
		cr_expect_not(o.sources[VALIDATE_SOURCE_SYNTHETIC], "synthetic is never a default source");
		for (int s = 0; s < VALIDATE_SOURCE_COUNT; s++) o.sources[s] = s == VALIDATE_SOURCE_SYNTHETIC;
		o.synthetic.kind = kinds[k];
		o.runs = 20;
		o.progress = false;
		const char *selectors[] = { "stride" };
		o.selectors = selectors;
		o.selector_count = 1;
		uint64_t sizes[] = { 1, 10, 100, 1000, 10000 };
		o.sizes = sizes;
		o.size_count = 5;
		validate_results results;
		plumb_status status;
		cr_assert_eq(validate_run(&o, &results, &status), 0, "%s", status.message);
		cr_expect_eq(results.total_runs, 0, "the synthetic source forks nothing");
		cr_assert_eq(results.series_count, 2);
		for (size_t i = 0; i < results.series_count; i++) {
			const validate_series *series = &results.series[i];
			cr_expect_eq(series->source, VALIDATE_SOURCE_SYNTHETIC);
			cr_expect_eq(series->verdict.cls, validate_synthetic_expected_class(kinds[k]), "%s: %s (%s)",
			             validate_synthetic_kind_name(kinds[k]), validate_class_name(series->verdict.cls),
			             series->verdict.explanation);
			cr_expect(strstr(series->detail, validate_synthetic_kind_name(kinds[k])) != NULL, "%s", series->detail);
		}
		validate_results_free(&results);
	}
}
