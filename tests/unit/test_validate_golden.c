/* Salayandia's (2002) Appendix B data (tests/data/validate_appendix_b.csv)
 * through plumb's classifier.  Where plumb's reading differs from the
 * thesis's words the test says so with the thesis's own numbers, and
 * docs/validation.md ("Salayandia's classifications, case by case") says
 * why plumb's rule is the one kept. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/validate.h"

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

static validate_verdict classify_with(const char *name, double domain_max, const validate_thresholds *t)
{
	golden_suite s = load_suite(name, domain_max);
	validate_verdict v;
	validate_classify(s.cases, s.count, t, &v);
	return v;
}

static validate_verdict classify(const char *name, double domain_max)
{
	validate_thresholds t;
	validate_thresholds_default(&t);
	return classify_with(name, domain_max, &t);
}

/* The validity limit of a capacity benchmark on Salayandia's R10000 (2002,
 * section 3.1: 1 MB unified L2 of 128-byte lines, 32-byte L1 lines), through
 * the benchmark's own domain rule, so the test is given no number: the
 * largest N the benchmark's in_domain accepts there. */
static double r10000_domain_limit(const char *benchmark_name)
{
	const validate_benchmark *b = validate_benchmark_find(benchmark_name);
	cr_assert_not_null(b);
	validate_machine m;
	validate_machine_default(&m);
	m.page_size = 16384;
	m.l1d_line = 32;
	m.l1d_size = 32768;
	m.l2_line = 128;
	m.l2_size = 1 << 20;
	m.l2_ways = 2;
	uint64_t lo = 1, hi = 1 << 20;   /* in_domain(lo) holds, in_domain(hi) does not */
	char warning[PLUMB_MESSAGE_MAX];
	validate_params p;
	validate_params_init(&p, b, &m, hi);
	cr_assert_not(b->in_domain(&p, warning, sizeof warning));
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		validate_params_init(&p, b, &m, mid);
		if (b->in_domain(&p, warning, sizeof warning)) lo = mid;
		else hi = mid;
	}
	return (double)lo;
}

/* The data agree with the limit: past it the error jumps.  The worst
 * |% difference| of the in-domain cases from 1000 events up is smaller than
 * that of the first case past the limit. */
static void expect_knee_at_limit(const char *suite, double limit)
{
	golden_suite s = load_suite(suite, limit);
	double worst_inside = 0, first_outside = NAN, first_size = INFINITY;
	for (size_t i = 0; i < s.count; i++) {
		const validate_case *c = &s.cases[i];
		if (c->in_domain && c->predicted >= 1000 && fabs(c->percent_difference) > worst_inside)
			worst_inside = fabs(c->percent_difference);
		if (!c->in_domain && c->predicted < first_size) {
			first_size = c->predicted;
			first_outside = fabs(c->percent_difference);
		}
	}
	cr_expect_gt(first_outside, worst_inside, "%s: %.2f%% at %g past the limit %g, %.2f%% worst inside", suite,
	             first_outside * 100, first_size, limit, worst_inside * 100);
}

/* Agrees with Salayandia's section 4.1.4 ("a consistent count of three for
 * the test case of one data reference", tending to 0%); her Table 3's "a
 * multiplicative difference of three for large test cases" matches neither
 * the text nor Appendix B (+0.27% at 10^4). */
Test(validate_golden, power3_dtlb_is_bias_of_about_two)
{
	validate_verdict v = classify("power3_dtlb", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "got %s: %s", validate_class_name(v.cls), v.explanation);
	cr_expect(v.a > 1.5 && v.a < 2.5, "a = %g", v.a);
	cr_expect(fabs(v.b - 1) < 0.01, "b = %g", v.b);
	cr_expect_eq(v.reliable_from, 100);
}

/* A departure: Salayandia's Table 3 calls the R10000 DTLB "very accurate;
 * very low overhead (4%) if event granularity is sufficiently large", and
 * section 4.1.4 ascribes the 3-9% to PAPI's overhead.  Her own Appendix B
 * says +3.0, +4.9, +8.4, +6.0, +6.3% at 1..10^4: the error does not fade
 * with size, so no constant overhead explains it (+628.7 events at 10^4 but
 * +0.03 at 1).  Her definition of overhead ("a constant difference") fits
 * the Power3 suite, not this one; a slope of 1.063 is a multiplicative
 * error by her definition too ("exceed expected counts by a defined
 * factor").  plumb keeps multiplicative. */
Test(validate_golden, r10k_dtlb_is_multiplicative_six_percent)
{
	validate_verdict v = classify("r10k_dtlb", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_MULTIPLICATIVE, "got %s: %s", validate_class_name(v.cls),
	             v.explanation);
	cr_expect(v.b > 1.05 && v.b < 1.08, "b = %g", v.b);
	cr_expect(fabs(v.a) < 0.5, "no overhead to speak of: a = %g", v.a);
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
	cr_expect(p0.r2 > 0.999);
	/* A departure: Salayandia (2002, section 4.2.3) calls counts reliable from
	 * 100 references, by their standard deviation ("below three ... may be
	 * good for test cases with a number of references of 100 and above").
	 * The standard deviation is below three at every size, 1 included
	 * (1.61 at 1), so it cannot mark 100; what changes at 100 is the mean's
	 * error: P1 is +2.34% there and plumb agrees (reliable from 100), but P0
	 * is +6.35% (106.35 for 100), outside the 5% rule, so P0 is reliable
	 * from 1000 (+2.65%).  With a 7% tolerance P0 is reliable from 100 too. */
	cr_expect_eq(p0.reliable_from, 1000);
	cr_expect_eq(p1.reliable_from, 100);
	validate_thresholds seven;
	validate_thresholds_default(&seven);
	seven.reliable_tolerance = 0.07;
	cr_expect_eq(classify_with("r10k_l1_p0", INFINITY, &seven).reliable_from, 100);
}

Test(validate_golden, r10k_l2_misses_are_small_bias)
{
	validate_verdict v = classify("r10k_l2_p1", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect(fabs(v.a) < 0.5, "a = %g", v.a);
	cr_expect_eq(v.reliable_from, 10);
}

/* The limits were once given to the test (4096); now they come from the
 * R10000's geometry through the benchmarks' own domain rule, as Salayandia
 * derived them ("the prediction holds until the cache is half full": 8192
 * lines / 2), and the data must show the knee there. */
Test(validate_golden, capacity_limits_come_from_the_r10000_geometry_and_match_the_data)
{
	cr_expect_eq(r10000_domain_limit("itv"), 4096);
	cr_expect_eq(r10000_domain_limit("shr"), 4096);
	/* ITV: -3.4% at worst from 1000 to 4000, then -19.7% at 5000; SHR: -0.39%,
	 * then -1.55% at 5000 (and below 5% until 8000, as her text says). */
	expect_knee_at_limit("r10k_ca_itv", r10000_domain_limit("itv"));
	expect_knee_at_limit("r10k_ca_shr", r10000_domain_limit("shr"));
}

Test(validate_golden, r10k_interventions_bias_then_capacity_collapse)
{
	double limit = r10000_domain_limit("itv");
	validate_verdict v = classify("r10k_ca_itv", limit);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect_eq(v.cases_used, 7);
	golden_suite s = load_suite("r10k_ca_itv", limit);
	for (size_t i = 0; i < s.count; i++)
		if (!s.cases[i].in_domain) cr_expect_lt(s.cases[i].percent_difference, -0.15);
	/* The whole suite, capacity collapse included, has no linear relation. */
	cr_expect_eq(classify("r10k_ca_itv", INFINITY).cls, VALIDATE_CLASS_UNKNOWN);
}

Test(validate_golden, r10k_shared_line_requests_accurate_in_domain)
{
	validate_verdict v = classify("r10k_ca_shr", r10000_domain_limit("shr"));
	cr_expect_eq(v.cls, VALIDATE_CLASS_ACCURATE, "%s", v.explanation);
	cr_expect_lt(v.max_abs_difference, 0.005);
	/* The whole suite, beyond capacity, is no longer accurate. */
	validate_verdict all = classify("r10k_ca_shr", INFINITY);
	cr_expect_neq(all.cls, VALIDATE_CLASS_ACCURATE);
}

/* Table 3: "constant overhead of approximately 2%"; Appendix B: +0.7 to
 * +1.5% from 1000 up.  A proportional 0.7% is within the 5% slope
 * tolerance, so plumb's class is bias, as hers, with b = 1.007. */
Test(validate_golden, r10k_invalidations_small_positive_overhead)
{
	validate_verdict v = classify("r10k_ca_inv", INFINITY);
	cr_expect_eq(v.cls, VALIDATE_CLASS_BIAS, "%s", v.explanation);
	cr_expect(v.b > 1.005 && v.b < 1.02, "b = %g", v.b);
}

/* Table 3: "constant overhead of approximately 1%"; Appendix B is below the
 * prediction everywhere (-20% at 1, -0.1 to -0.7% after): the same class,
 * bias, with the sign the data have (a = -0.2). */
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
	cr_assert(ones + twos + threes + fours <= 100, "a vector of more than 100 runs");
	/* each loop also bounded by the array (gcc -O3 cannot see the assertion's) */
	for (int i = 0; i < ones && n < 100; i++) values[n++] = 1;
	for (int i = 0; i < twos && n < 100; i++) values[n++] = 2;
	for (int i = 0; i < threes && n < 100; i++) values[n++] = 3;
	for (int i = 0; i < fours && n < 100; i++) values[n++] = 4;
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
