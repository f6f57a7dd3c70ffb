/* The halting experiment's arithmetic against Watson's (2004) numbers and
 * Jain's (1991) formulas, the designs of Tables 2.1 and 2.2, the parsers,
 * the analysis on made-up runs, and SimpleMisses' exact oracle through the
 * simulator. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "perturb/perturb.h"
#include "sim/sim.h"

Test(perturb_math, eq_2_1_slowdown_17x)
{
	/* Halting every 1/8 s for 2 s makes a program 17 times slower. */
	cr_assert_float_eq(perturb_slowdown(0.125, 2), 17.0, 1e-12);
	cr_assert_float_eq(perturb_total_time(10.0, 0.125, 2), 170.0, 1e-9);
	cr_assert_float_eq(perturb_slowdown(0.5, 8), 17.0, 1e-12);
	cr_assert_float_eq(perturb_slowdown(0.1, 0.5), 6.0, 1e-12);
	cr_assert_float_eq(perturb_slowdown(8, 0.5), 1.0625, 1e-12);
	/* Halts h ≈ x/f. */
	cr_assert_float_eq(perturb_expected_halts(10.0, 0.5), 20.0, 1e-12);
	cr_assert_float_eq(perturb_expected_halts(6.4e9 / 16e6, 0.5), 800.0, 1e-9);
}

Test(perturb_math, t_quantile_and_p)
{
	cr_assert_float_eq(perturb_t_quantile(0.975, 4), 2.776, 5e-4);
	cr_assert_float_eq(perturb_t_quantile(0.975, 1), 12.706, 5e-3);
	cr_assert_float_eq(perturb_t_quantile(0.975, 1e6), 1.960, 1e-3);
	cr_assert_float_eq(perturb_t_two_sided_p(2.776, 4), 0.05, 1e-4);
	/* Fractional degrees of freedom (Welch) lie between their neighbours. */
	double q = perturb_t_quantile(0.975, 4.5);
	cr_assert(q < 2.776 && q > 2.571);
}

Test(perturb_math, branch_correction_example)
{
	/* t = 500 ms, h = 100, 1.2 M inner iterations per ms, one branch each
	 * and one per ms from the outer loop: 50,000 × 1,200,001 branches. */
	double branches = perturb_spin_correction(500, 100, 1.2e6, 1, 1);
	cr_assert_eq((long long)branches, 60000050000LL);
}

Test(perturb_math, eq_2_3_sample_size_squared)
{
	/* n = ceil((100·z·s / (r·x̄))²): 1.96² = 3.84 -> 4 runs; twice the spread 16. */
	cr_assert_float_eq(perturb_sample_size(100, 5, 1.96, 5), 4, 1e-12);
	cr_assert_float_eq(perturb_sample_size(100, 10, 1.96, 5), 16, 1e-12);
	cr_assert_float_eq(perturb_sample_size(100, 0, 1.96, 5), 1, 1e-12);
	cr_assert(isnan(perturb_sample_size(100, 5, 1.96, 0)));
}

Test(perturb_math, confidence_interval_and_tests)
{
	double a[] = { 1, 2, 3, 4, 5 };
	perturb_sample_stats s;
	perturb_sample_stats_compute(a, 5, &s);
	double half = 2.776 * sqrt(2.5) / sqrt(5.0);
	cr_assert_float_eq(s.mean, 3, 1e-12);
	cr_assert_float_eq(s.ci_high - s.mean, half, 2e-3);
	double b[] = { 11, 12, 13, 14, 15 }, c[] = { 2, 3, 4, 5, 6 };
	perturb_sample_stats sb, sc;
	perturb_sample_stats_compute(b, 5, &sb);
	perturb_sample_stats_compute(c, 5, &sc);
	cr_assert(perturb_ci_disjoint(&s, &sb));
	cr_assert(!perturb_ci_disjoint(&s, &sc));
	double t, df, p;
	cr_assert_eq(perturb_welch(&s, &sc, &t, &df, &p), 0);
	cr_assert_float_eq(t, -1 / sqrt(1.0), 1e-12);   /* diff -1 over sqrt(0.5 + 0.5) */
	cr_assert_float_eq(df, 8, 1e-12);
	cr_assert(p > 0.3 && p < 0.4);
	cr_assert_eq(perturb_welch(&s, &sb, &t, &df, &p), 0);
	cr_assert(p < 0.001);
}

Test(perturb_math, designs_of_tables_2_1_and_2_2)
{
	perturb_design d;
	plumb_status st;
	cr_assert_eq(perturb_design_builtin("halt-time", 1, &d, &st), 0);
	cr_assert_eq(d.n, 1 + 3 + 6);
	cr_assert(d.configs[0].baseline);
	cr_assert_float_eq(d.configs[3].interval, 0.125, 1e-12);
	cr_assert_float_eq(d.configs[3].halt, 2, 1e-12);
	cr_assert_eq(perturb_design_builtin("halt-frequency", 0.001, &d, &st), 0);
	cr_assert_eq(d.n, 1 + 5 + 2);
	cr_assert_float_eq(d.configs[1].interval, 0.0001, 1e-15);
	cr_assert_float_eq(d.configs[1].halt, 0.0005, 1e-15);
	/* Both tables share (1/2, 1/2) and (1/2, 2): run once. */
	cr_assert_eq(perturb_design_builtin("full", 1, &d, &st), 0);
	cr_assert_eq(d.n, 1 + 9 + 7 - 2);
	cr_assert_neq(perturb_design_builtin("table-9", 1, &d, &st), 0);
	cr_assert_neq(perturb_design_builtin("full", 0, &d, &st), 0);
	/* Full scaled design's slowdown sum, the figure docs/PERFORMANCE.md uses. */
	double sum = 0;
	perturb_design_builtin("full", 1, &d, &st);
	for (size_t i = 0; i < d.n; i++)
		sum += d.configs[i].baseline ? 1 : perturb_slowdown(d.configs[i].interval, d.configs[i].halt);
	cr_assert_float_eq(sum, 65.3125, 1e-9);
}

Test(perturb_math, lists_and_durations)
{
	double v;
	plumb_status st;
	cr_assert_eq(perturb_parse_seconds("1/8", &v, &st), 0);
	cr_assert_float_eq(v, 0.125, 1e-15);
	cr_assert_eq(perturb_parse_seconds("2ms", &v, &st), 0);
	cr_assert_float_eq(v, 0.002, 1e-15);
	cr_assert_eq(perturb_parse_seconds("125us", &v, &st), 0);
	cr_assert_float_eq(v, 125e-6, 1e-18);
	cr_assert_neq(perturb_parse_seconds("abc", &v, &st), 0);
	cr_assert_neq(perturb_parse_seconds("-1", &v, &st), 0);
	cr_assert_neq(perturb_parse_seconds("1/0", &v, &st), 0);
	cr_assert_neq(perturb_parse_seconds("3h", &v, &st), 0);
	perturb_design d;
	cr_assert_eq(perturb_design_from_lists("1/8,1/2", "0,1/2,2", 0.001, &d, &st), 0);
	cr_assert_eq(d.n, 7);
	cr_assert_neq(perturb_design_from_lists("0,1", "0", 1, &d, &st), 0);
	cr_assert_neq(perturb_design_from_lists("1us", "0", 1, &d, &st), 0);
	cr_assert_neq(perturb_design_from_lists("1,", "", 1, &d, &st), 0);
}

Test(perturb_math, footprint_parse)
{
	perturb_footprint f;
	plumb_status st;
	cr_assert_eq(perturb_footprint_parse("512,16,64K", &f, &st), 0);
	cr_assert_eq(f.lines, 512);
	cr_assert_eq(f.pages, 16);
	cr_assert_eq(f.code_bytes, 65536);
	cr_assert_neq(perturb_footprint_parse("512,16", &f, &st), 0);
	cr_assert_neq(perturb_footprint_parse("1,2,3,4", &f, &st), 0);
	cr_assert_neq(perturb_footprint_parse("a,2,3", &f, &st), 0);
	cr_assert_neq(perturb_footprint_parse(",2,3", &f, &st), 0);
	cr_assert_neq(perturb_footprint_parse("1,2,1G", &f, &st), 0);
}

/* A made-up experiment: an event that rises by 10 per halt, one that steps
 * up whenever the program is halted, one that never changes. */
Test(perturb_analysis, trends_tallies_and_f_star)
{
	perturb_result *r = calloc(1, sizeof *r);
	plumb_status st;
	cr_assert_eq(perturb_design_from_lists("0.001,0.01,0.1", "0", 1, &r->design, &st), 0);
	r->n_events = 3;
	strcpy(r->events[0], "linear");
	strcpy(r->events[1], "step");
	strcpy(r->events[2], "flat");
	r->options.runs = 5;
	for (size_t e = 0; e < 3; e++)
		r->opened[e].state = COUNTER_OK;
	r->runs = calloc(4 * 5, sizeof *r->runs);
	const double halts[] = { 0, 1000, 100, 10 };
	for (size_t rep = 0; rep < 5; rep++)
		for (size_t c = 0; c < 4; c++) {
			perturb_run *run = &r->runs[r->n_runs++];
			run->config = c;
			run->repetition = rep;
			run->halts = (uint64_t)halts[c];
			run->wall_seconds = 1.0 + 0.01 * (double)rep;
			double jitter = (double)rep - 2;   /* -2..2 */
			double values[3] = { 1e6 + 10 * halts[c] + jitter, c ? 5000 + jitter : 1000 + jitter, 777 + jitter };
			for (size_t e = 0; e < 3; e++) {
				run->raw[e].state = run->excluded[e].state = COUNTER_OK;
				run->raw[e].value = run->excluded[e].value = values[e];
			}
		}
	for (size_t c = 0; c < 4; c++)
		for (size_t e = 0; e < 3; e++)
			r->calibrations[c].per_halt[e] = 0;
	perturb_analysis *a = calloc(1, sizeof *a);
	perturb_analyze(r, 2e6, a);
	const perturb_measure *linear = NULL, *step = NULL, *flat = NULL;
	for (size_t i = 0; i < a->n_measures; i++) {
		if (!strcmp(a->measures[i].name, "linear:excluded"))
			linear = &a->measures[i];
		if (!strcmp(a->measures[i].name, "step:excluded"))
			step = &a->measures[i];
		if (!strcmp(a->measures[i].name, "flat:excluded"))
			flat = &a->measures[i];
	}
	cr_assert(linear && step && flat);
	cr_assert_float_eq(linear->slope_per_halt, 10, 1e-6);
	cr_assert_eq(linear->trend, PERTURB_TREND_LINEAR_THRESHOLD, "linear: %s", perturb_trend_name(linear->trend));
	cr_assert_eq(step->trend, PERTURB_TREND_STEP, "step: %s", perturb_trend_name(step->trend));
	cr_assert_eq(flat->trend, PERTURB_TREND_NONE);
	/* linear differs at 1000 and 100 halts (+10000, +1000), not at 10 (+100 within ±2.5·... no: CI ±1.96). */
	cr_assert(linear->cells[1].significant && linear->cells[2].significant && linear->cells[3].significant);
	/* The step differs everywhere: no interval is clean, no f*. */
	cr_assert(!a->have_f_star);
	/* Most affected first: step and linear (3 configurations each), flat last. */
	cr_assert_eq(a->n_order, 3);
	cr_assert(!strcmp(a->measures[a->order[2]].name, "flat:excluded"));
	free(a);
	free(r->runs);
	free(r);
}

Test(perturb_analysis, f_star_and_buffer)
{
	perturb_result *r = calloc(1, sizeof *r);
	plumb_status st;
	cr_assert_eq(perturb_design_from_lists("0.1,0.5,1,2", "0.5", 1, &r->design, &st), 0);
	r->n_events = 1;
	strcpy(r->events[0], "itlb");
	r->opened[0].state = COUNTER_OK;
	r->options.runs = 5;
	r->runs = calloc(5 * 5, sizeof *r->runs);
	for (size_t rep = 0; rep < 5; rep++)
		for (size_t c = 0; c < 5; c++) {
			perturb_run *run = &r->runs[r->n_runs++];
			run->config = c;
			run->halts = c == 0 ? 0 : (uint64_t)(10.0 / r->design.configs[c].interval);
			run->wall_seconds = 10;
			/* Only the most frequent halting (every 0.1 s) changes the count. */
			double v = (c == 1 ? 2000 : 1000) + (double)rep;
			run->raw[0].state = run->excluded[0].state = COUNTER_OK;
			run->raw[0].value = run->excluded[0].value = v;
		}
	perturb_analysis *a = calloc(1, sizeof *a);
	perturb_analyze(r, 16e6, a);
	cr_assert(a->have_f_star);
	cr_assert_float_eq(a->f_star, 0.5, 1e-12);
	cr_assert_float_eq(a->buffer_records, 8e6, 1e-3);   /* BACH's 8 M references */
	cr_assert_float_eq(a->expected_halts[1], 100, 1e-9);
	free(a);
	free(r->runs);
	free(r);
}

typedef struct miss_count { sim *s; } miss_count;
static void feed_load(void *context, uint64_t address, uint32_t size)
{
	miss_count *m = context;
	plumb_status st;
	sim_access(m->s, 0, SIM_READ, address, size, &st);
}

static uint64_t simplemisses_l1d_misses(uint64_t iterations, uint64_t miss_times)
{
	sim_config config;
	sim_config_default(&config);
	config.cache[SIM_L1D].size = 8192;
	config.cache[SIM_L1D].assoc = 4;
	config.cache[SIM_L1D].line = 64;
	config.cache[SIM_L2].size = 0;
	plumb_status st;
	miss_count m;
	cr_assert_eq(sim_new(&m.s, &config, &st), 0, "%s", st.message);
	const perturb_workload *w = perturb_workload_find("simplemisses");
	cr_assert_not_null(w);
	w->run(iterations, miss_times, feed_load, &m);
	const sim_stats *stats = sim_statistics(m.s);
	uint64_t misses = stats->core[0].cache[SIM_L1D].misses[SIM_READ];
	uint64_t loads = stats->core[0].cache[SIM_L1D].accesses[SIM_READ];
	cr_assert_eq(loads, iterations * 64, "the loads are the same for every MISS_TIMES");
	sim_free(m.s);
	return misses;
}

Test(perturb_workloads, simplemisses_exact_oracle)
{
	/* 8 KiB 4-way L1D, 64 B lines (the Pentium 4's): misses above the
	 * compulsory ones = iterations × MISS_TIMES once MISS_TIMES > 4. */
	const uint64_t iterations = 2000;
	const uint64_t cases[] = { 2, 4, 5, 8, 16 };
	for (size_t i = 0; i < 5; i++) {
		uint64_t mt = cases[i];
		uint64_t misses = simplemisses_l1d_misses(iterations, mt);
		uint64_t compulsory = mt;   /* the MISS_TIMES lines, once each */
		uint64_t extra = misses >= compulsory ? misses - compulsory : 0;
		uint64_t want = perturb_simplemisses_extra_misses(iterations, mt, 4);
		/* Above the associativity every iteration misses all MISS_TIMES lines,
		 * the first iteration's being the compulsory ones. */
		if (mt > 4)
			cr_assert_eq(misses, want, "MISS_TIMES %llu: %llu misses", (unsigned long long)mt,
			             (unsigned long long)misses);
		else
			cr_assert_eq(extra, 0, "MISS_TIMES %llu", (unsigned long long)mt);
	}
}

Test(perturb_workloads, deterministic_checksums)
{
	size_t n;
	const perturb_workload *w = perturb_workloads(&n);
	cr_assert_geq(n, 6);
	const char *names[] = { "simplemisses", "spin", "chase", "code", "compress", "sort" };
	for (size_t i = 0; i < 6; i++) {
		const perturb_workload *one = perturb_workload_find(names[i]);
		cr_assert_not_null(one, "%s", names[i]);
		uint64_t a = one->run(3, 8, NULL, NULL), b = one->run(3, 8, NULL, NULL);
		cr_assert_eq(a, b, "%s is deterministic", names[i]);
	}
	(void)w;
	cr_assert_null(perturb_workload_find("gcc"));
}
