/* Each classification rule on synthetic suites, including the edges the
 * thesis's data do not reach. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "validate/validate.h"

static validate_case make(double predicted, double mean, double stddev)
{
	validate_case c;
	memset(&c, 0, sizeof c);
	c.size = (uint64_t)predicted;
	c.predicted = predicted;
	c.in_domain = true;
	c.runs = 100;
	c.mean = mean;
	c.stddev = stddev;
	c.percent_difference = (mean - predicted) / predicted;
	return c;
}

static validate_verdict classify(const validate_case *cases, size_t n)
{
	validate_thresholds t;
	validate_thresholds_default(&t);
	validate_verdict v;
	validate_classify(cases, n, &t, &v);
	return v;
}

Test(validate_classify, exact_and_accurate)
{
	validate_case c[] = { make(1, 1, 0), make(10, 10, 0), make(100, 100, 0), make(1000, 1000, 0) };
	validate_verdict v = classify(c, 4);
	cr_expect_eq(v.cls, VALIDATE_CLASS_EXACT);
	cr_expect_eq(v.reliable_from, 1);
	cr_expect(fabs(v.a) < 1e-9 && fabs(v.b - 1) < 1e-12 && v.r2 == 1);
	c[3].mean = 1005;
	c[3].percent_difference = 0.005;
	v = classify(c, 4);
	cr_expect_eq(v.cls, VALIDATE_CLASS_ACCURATE);
}

Test(validate_classify, pure_overhead_is_bias_with_its_size)
{
	validate_case c[] = { make(1, 4, 0.5), make(10, 13, 0.5), make(100, 103, 0.5), make(1000, 1003, 0.5),
	                      make(10000, 10003, 0.5) };
	validate_verdict v = classify(c, 5);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect(fabs(v.a - 3) < 1e-6, "a = %g", v.a);
	cr_expect(fabs(v.b - 1) < 1e-9);
	cr_expect_eq(v.reliable_from, 100);
	cr_expect(strstr(v.explanation, "+300.0% at 1 events") != NULL, "%s", v.explanation);
}

Test(validate_classify, constant_factor_is_multiplicative)
{
	validate_case c[] = { make(10, 12, 0), make(100, 120, 0), make(1000, 1200, 0), make(10000, 12000, 0) };
	validate_verdict v = classify(c, 4);
	cr_expect_eq(v.cls, VALIDATE_CLASS_MULTIPLICATIVE);
	cr_expect(fabs(v.b - 1.2) < 1e-9);
	cr_expect(isnan(v.reliable_from));
}

Test(validate_classify, spread_in_one_case_is_random_but_poisson_noise_is_not)
{
	validate_case c[] = { make(10, 10, 3), make(100, 100, 9), make(1000, 1000, 30), make(10000, 10000, 80) };
	cr_expect_neq(classify(c, 4).cls, VALIDATE_CLASS_RANDOM, "Poisson-size spreads are not random errors");
	c[2].stddev = 400;   /* 40% CV, variance far above the mean */
	validate_verdict v = classify(c, 4);
	cr_expect_eq(v.cls, VALIDATE_CLASS_RANDOM, "%s", v.explanation);
	cr_expect_eq(v.noisy_cases, 1);
}

Test(validate_classify, no_relation_or_too_few_cases_is_unknown)
{
	validate_case flat[] = { make(1, 19, 0), make(10, 19, 0), make(100, 19, 0), make(1000, 19, 0),
	                         make(10000, 19, 0) };
	validate_verdict v = classify(flat, 5);
	cr_expect_eq(v.cls, VALIDATE_CLASS_UNKNOWN);
	cr_expect(strstr(v.explanation, "does not grow with the prediction") != NULL, "%s", v.explanation);
	v = classify(flat, 2);
	cr_expect_eq(v.cls, VALIDATE_CLASS_UNKNOWN);
	cr_expect(strstr(v.explanation, "at least 3") != NULL);
	validate_case same[] = { make(10, 10, 0), make(10, 11, 0), make(10, 10, 0) };
	cr_expect_eq(classify(same, 3).cls, VALIDATE_CLASS_UNKNOWN);
}

Test(validate_classify, out_of_domain_and_empty_cases_are_left_out)
{
	validate_case c[] = { make(10, 10, 0), make(100, 100, 0), make(1000, 1000, 0), make(10000, 5000, 0),
	                      make(100000, 0, 0) };
	c[3].in_domain = false;
	c[4].runs = 0;
	c[4].mean = NAN;
	validate_verdict v = classify(c, 5);
	cr_expect_eq(v.cls, VALIDATE_CLASS_EXACT);
	cr_expect_eq(v.cases_used, 3);
}

Test(validate_classify, thresholds_move_the_boundaries)
{
	validate_case c[] = { make(10, 10.3, 0), make(100, 103, 0), make(1000, 1030, 0), make(10000, 10300, 0) };
	validate_thresholds t;
	validate_thresholds_default(&t);
	validate_verdict v;
	validate_classify(c, 4, &t, &v);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS);   /* 3% is within the default 5% slope tolerance */
	t.slope_tolerance = 0.02;
	validate_classify(c, 4, &t, &v);
	cr_expect_eq(v.cls, VALIDATE_CLASS_MULTIPLICATIVE);
	t.accurate_tolerance = 0.05;
	t.slope_tolerance = 0.05;
	validate_classify(c, 4, &t, &v);
	cr_expect_eq(v.cls, VALIDATE_CLASS_ACCURATE);
}

/* Salayandia's "unknown" is "no apparent relationship": a count that stays
 * flat whatever the prediction.  Before the flat rule, a flat line with a
 * little noise over three cases fitted a chance slope with R^2 >= 0.9 and was
 * called multiplicative with b ~ 0. */
Test(validate_classify, a_flat_count_is_unknown_even_when_noise_fits_a_line)
{
	validate_case noisy[] = { make(1, 24, 2.5), make(10, 24, 2.5), make(100, 27, 2.5) };
	noisy[0].runs = noisy[1].runs = noisy[2].runs = 3;
	validate_verdict v = classify(noisy, 3);
	cr_expect(v.r2 >= 0.9, "the chance line fits: R^2 = %g", v.r2);
	cr_expect_eq(v.cls, VALIDATE_CLASS_UNKNOWN, "%s: %s", validate_class_name(v.cls), v.explanation);
	/* one miss per run whatever the size (a stream prefetcher serving every later line) */
	validate_case one[] = { make(1, 1, 0), make(10, 1, 0), make(100, 1, 0), make(1000, 1, 0) };
	v = classify(one, 4);
	cr_expect_eq(v.cls, VALIDATE_CLASS_UNKNOWN, "%s: %s", validate_class_name(v.cls), v.explanation);
	/* one event in a thousand is a relation: multiplicative */
	validate_case sampled[] = { make(1000, 1, 0), make(10000, 10, 0), make(100000, 100, 0), make(1000000, 1000, 0) };
	v = classify(sampled, 4);
	cr_expect_eq(v.cls, VALIDATE_CLASS_MULTIPLICATIVE, "%s: %s", validate_class_name(v.cls), v.explanation);
}
