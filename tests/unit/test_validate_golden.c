/* The seed's golden data: Appendix B of seed 000 (tests/data/
 * validate_appendix_b.csv) must classify as the thesis did. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/validate.h"

#define MAX_CASES 16

typedef struct golden_suite {
	validate_case cases[MAX_CASES];
	size_t count;
} golden_suite;

/* Loads one suite; cases above domain_max are out of the validity domain. */
static golden_suite load_suite(const char *name, double domain_max)
{
	golden_suite s;
	memset(&s, 0, sizeof s);
	char path[512];
	const char *dir = getenv("PLUMB_SRCDIR");
	snprintf(path, sizeof path, "%s/tests/data/validate_appendix_b.csv", dir ? dir : ".");
	FILE *f = fopen(path, "r");
	if (!f) f = fopen("tests/data/validate_appendix_b.csv", "r");
	cr_assert_not_null(f, "cannot open the golden data");
	char line[256], suite[64];
	double predicted, mean, stddev;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#') continue;
		if (sscanf(line, "%63[^,],%lf,%lf,%lf", suite, &predicted, &mean, &stddev) != 4) continue;
		if (strcmp(suite, name) != 0) continue;
		cr_assert_lt(s.count, MAX_CASES);
		validate_case *c = &s.cases[s.count++];
		c->size = (uint64_t)predicted;
		c->predicted = predicted;
		c->in_domain = predicted <= domain_max;
		c->runs = 100;
		c->mean = mean;
		c->stddev = stddev;
		c->percent_difference = (mean - predicted) / predicted;
	}
	fclose(f);
	cr_assert_gt(s.count, 0, "suite %s not found", name);
	return s;
}

static validate_verdict classify(const char *name, double domain_max)
{
	golden_suite s = load_suite(name, domain_max);
	validate_thresholds t;
	validate_thresholds_default(&t);
	validate_verdict v;
	validate_classify(s.cases, s.count, &t, &v);
	return v;
}

Test(validate_golden, power3_dtlb_is_bias_of_about_two)
{
	validate_verdict v = classify("power3_dtlb", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "got %s: %s", validate_class_name(v.cls), v.explanation);
	cr_expect(v.a > 1.5 && v.a < 2.5, "a = %g", v.a);
	cr_expect(fabs(v.b - 1) < 0.01, "b = %g", v.b);
	cr_expect_eq(v.reliable_from, 100);
}

Test(validate_golden, r10k_dtlb_is_multiplicative_six_percent)
{
	validate_verdict v = classify("r10k_dtlb", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_MULTIPLICATIVE, "got %s: %s", validate_class_name(v.cls),
	             v.explanation);
	cr_expect(v.b > 1.05 && v.b < 1.08, "b = %g", v.b);
	cr_expect(isnan(v.reliable_from), "never within 5%%: %g", v.reliable_from);
}

Test(validate_golden, r10k_l1_misses_are_bias)
{
	validate_verdict p0 = classify("r10k_l1_p0", INFINITY);
	validate_verdict p1 = classify("r10k_l1_p1", INFINITY);
	cr_expect_eq(p0.cls, VALIDATE_CLASS_BIAS, "%s", p0.explanation);
	cr_expect_eq(p1.cls, VALIDATE_CLASS_BIAS, "%s", p1.explanation);
	/* P0 (kernel daemons) carries more overhead than P1. */
	cr_expect_gt(p0.a, p1.a);
	cr_expect(p0.a > 3 && p0.a < 6, "a = %g", p0.a);
	cr_expect_eq(p0.reliable_from, 1000);
	cr_expect(p0.r2 > 0.999);
}

Test(validate_golden, r10k_l2_misses_are_small_bias)
{
	validate_verdict v = classify("r10k_l2_p1", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect(fabs(v.a) < 0.5, "a = %g", v.a);
	cr_expect_eq(v.reliable_from, 10);
}

Test(validate_golden, r10k_interventions_bias_then_capacity_collapse)
{
	/* Valid up to half the R10K L2 (8192 lines / 2 ~ 4000). */
	validate_verdict v = classify("r10k_ca_itv", 4096);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect_eq(v.cases_used, 7);
	golden_suite s = load_suite("r10k_ca_itv", 4096);
	for (size_t i = 0; i < s.count; i++)
		if (!s.cases[i].in_domain) cr_expect_lt(s.cases[i].percent_difference, -0.15);
}

Test(validate_golden, r10k_shared_line_requests_accurate_in_domain)
{
	validate_verdict v = classify("r10k_ca_shr", 4096);
	cr_expect_eq(v.cls, VALIDATE_CLASS_ACCURATE, "%s", v.explanation);
	cr_expect_lt(v.max_abs_difference, 0.005);
	/* The whole suite, beyond capacity, is no longer accurate. */
	validate_verdict all = classify("r10k_ca_shr", INFINITY);
	cr_expect_neq(all.cls, VALIDATE_CLASS_ACCURATE);
}

Test(validate_golden, r10k_invalidations_small_positive_overhead)
{
	validate_verdict v = classify("r10k_ca_inv", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect(v.b > 1.005 && v.b < 1.02, "b = %g", v.b);
}

Test(validate_golden, r10k_clean_line_requests_slight_deficit)
{
	validate_verdict v = classify("r10k_ca_cln", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect_lt(v.a, 0);
	cr_expect_lt(v.b, 1);
	cr_expect_eq(v.reliable_from, 10);
}

/* Seed 000 §4.3 [Note]: single-event cases are Bernoulli-like and their
 * mean/stddev follow from integer run vectors. */
static void check_vector(int ones, int twos, int threes, int fours, double mean, double stddev)
{
	double values[100];
	size_t n = 0;
	for (int i = 0; i < ones; i++) values[n++] = 1;
	for (int i = 0; i < twos; i++) values[n++] = 2;
	for (int i = 0; i < threes; i++) values[n++] = 3;
	for (int i = 0; i < fours; i++) values[n++] = 4;
	while (n < 100) values[n++] = 0;
	validate_case c = { .size = 1, .predicted = 1, .in_domain = true, .runs = 100, .values = values };
	validate_case_summarize(&c);
	cr_expect(fabs(c.mean - mean) < 1e-9, "mean %g", c.mean);
	cr_expect(fabs(c.stddev - stddev) < 0.005, "stddev %g vs %g", c.stddev, stddev);
}

Test(validate_golden, bernoulli_consistency)
{
	check_vector(80, 0, 0, 0, 0.8, 0.40);    /* CA_CLN at 1 */
	check_vector(90, 10, 0, 0, 1.1, 0.30);   /* CA_INV at 1 */
	check_vector(0, 0, 41, 59, 3.59, 0.49);  /* CA_ITV at 1 */
	check_vector(97, 3, 0, 0, 1.03, 0.17);   /* L2 P0 at 1 */
}
