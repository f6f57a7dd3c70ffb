/* The halting experiment on a CPU the program does not own, with made-up
 * runs: Eq. 2.1 with the halts counted (running time and wall time), the
 * halts' measured length, the agent's own cost measured at t = 0 and taken
 * out of f*, and the trace buffer in bus transactions as well as CPU
 * references. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perturb/perturb.h"
#include "../temp_folder.h"

static const perturb_measure *measure(const perturb_analysis *a, const char *name)
{
	for (size_t i = 0; i < a->n_measures; i++)
		if (!strcmp(a->measures[i].name, name))
			return &a->measures[i];
	return NULL;
}

/* A program of x = 40 ms running time that gets a tenth of its CPU (wall
 * 400 ms), halted every 1 ms of its running time for 0 or 1 ms of CPU; the
 * agent's entry and exit cost 100 us of running time per halt, which the
 * halt clock counts (so 1 ms of clock holds 0.9 ms of the program: 44
 * halts); the CPU is taken away in some halts, so a halt of 1 ms of CPU
 * lasts 1.5 ms on the wall clock, and the wall time is the running time
 * served at a tenth of the CPU. */
static perturb_result *shared_cpu_result(void)
{
	perturb_result *r = calloc(1, sizeof *r);
	plumb_status st;
	cr_assert_eq(perturb_design_from_lists("0.001", "0,0.001", 1, &r->design, &st), 0, "%s", st.message);
	r->n_events = 1;
	strcpy(r->events[0], "task-clock");
	r->opened[0].state = COUNTER_OK;
	r->options.runs = 5;
	r->runs = calloc(3 * 5, sizeof *r->runs);
	const double x = 0.040, share = 0.1, cost = 100e-6, preempted_length = 0.0015;
	for (size_t rep = 0; rep < 5; rep++)
		for (size_t c = 0; c < 3; c++) {
			perturb_run *run = &r->runs[r->n_runs++];
			const perturb_config *cfg = &r->design.configs[c];
			run->config = c;
			run->repetition = rep;
			double jitter = 1e-6 * ((double)rep - 2);
			uint64_t h = cfg->baseline ? 0 : 44;
			run->halts = h;
			run->halted_cpu_seconds = (double)h * cfg->halt;
			run->halted_seconds = cfg->halt > 0 ? (double)h * preempted_length : (double)h * 1e-6;
			double outside = x + (double)h * cost + jitter;    /* running time outside the handler */
			run->running_seconds = outside + run->halted_cpu_seconds;
			/* the running time, halts included, served at the program's share */
			run->wall_seconds = run->running_seconds / share;
			run->raw[0].state = run->excluded[0].state = COUNTER_OK;
			run->raw[0].value = 1e9 * run->running_seconds;
			run->excluded[0].value = 1e9 * outside;
		}
	return r;
}

Test(perturb_shared, eq_2_1_counts_the_halts_that_happened)
{
	perturb_result *r = shared_cpu_result();
	perturb_analysis *a = calloc(1, sizeof *a);
	perturb_analyze(r, 0, a);
	/* The agent's cost, fitted over the baseline and t = 0. */
	cr_assert_float_eq(a->agent_cost_seconds, 100e-6, 1e-9, "agent cost %g", a->agent_cost_seconds);
	cr_assert_str_eq(a->agent_cost_from, "task-clock:excluded");
	/* x/(f − cost) halts: 0.040 / 0.0009 = 44.4. */
	cr_assert_float_eq(a->expected_halts[1], 0.040 / 0.0009, 0.01, "expected %g", a->expected_halts[1]);
	for (size_t c = 1; c < 3; c++) {
		double running = a->measured_running[c] / a->predicted_running[c];
		double wall = a->measured_wall[c] / a->predicted_wall[c];
		cr_assert(fabs(running - 1) < 0.01, "%s: running time / Eq. 2.1 = %g", r->design.configs[c].name, running);
		cr_assert(fabs(wall - 1) < 0.01, "%s: wall time / Eq. 2.1 = %g", r->design.configs[c].name, wall);
	}
	/* The halts' measured length: t of CPU each, 1.5 ms on the wall clock. */
	cr_assert_float_eq(a->halt_cpu[2], 0.001, 1e-12);
	cr_assert_float_eq(a->halt_length[2], 0.0015, 1e-12);
	/* x/f with x the baseline's wall time, as Eq. 2.1 had it, counts 400
	 * halts where 44 happened. */
	cr_assert_gt(perturb_expected_halts(a->x_wall, 0.001), 9 * a->measured_halts[2]);
	free(a);
	free(r->runs);
	free(r);
}

/* Intervals 0.2, 1 and 4 ms at t = 0; the agent's 100 us per halt is all
 * that changes the running time, and a second event changes only at the
 * 0.2 ms interval.  Judged with the agent's cost, no interval is clean;
 * without it, f* is 1 ms, decided by the program's own event. */
Test(perturb_shared, f_star_without_the_agents_own_cost)
{
	perturb_result *r = calloc(1, sizeof *r);
	plumb_status st;
	cr_assert_eq(perturb_design_from_lists("0.0002,0.001,0.004", "0", 1, &r->design, &st), 0);
	r->n_events = 2;
	strcpy(r->events[0], "task-clock");
	strcpy(r->events[1], "itlb");
	r->opened[0].state = r->opened[1].state = COUNTER_OK;
	r->options.runs = 5;
	r->runs = calloc(4 * 5, sizeof *r->runs);
	const double halts[] = { 0, 200, 40, 10 };
	for (size_t rep = 0; rep < 5; rep++)
		for (size_t c = 0; c < 4; c++) {
			perturb_run *run = &r->runs[r->n_runs++];
			run->config = c;
			run->repetition = rep;
			run->halts = (uint64_t)halts[c];
			run->wall_seconds = 0.05;
			double jitter = (double)rep - 2;
			double task = 40e6 + 100e3 * halts[c] + 1000 * jitter;   /* ns */
			double itlb = (c == 1 ? 5000 : 1000) + jitter;
			run->raw[0].state = run->excluded[0].state = run->raw[1].state = run->excluded[1].state = COUNTER_OK;
			run->raw[0].value = run->excluded[0].value = task;
			run->raw[1].value = run->excluded[1].value = itlb;
			run->running_seconds = task / 1e9;
		}
	perturb_analysis *a = calloc(1, sizeof *a);
	perturb_analyze(r, 0, a);
	cr_assert_float_eq(a->agent_cost_seconds, 100e-6, 1e-9);
	const perturb_measure *program = measure(a, "task-clock:program"), *excluded = measure(a, "task-clock:excluded");
	cr_assert(program && excluded);
	cr_assert(program->judged && !excluded->judged);
	cr_assert_eq(program->significant_configs, 0, "the agent's cost is out");
	cr_assert_eq(excluded->significant_configs, 3, "the agent's cost is in");
	cr_assert(a->have_f_star);
	cr_assert_float_eq(a->f_star, 0.001, 1e-12, "f* %g", a->f_star);
	cr_assert(!a->f_star_bounded_by_agent, "1 ms is ten times the agent's 100 us");
	cr_assert(!a->have_f_star_with_agent, "with the agent's cost every interval differs");
	free(a);
	free(r->runs);
	free(r);
}

/* Without a t = 0 configuration the cost is not measured, nothing is
 * subtracted, and both f* agree. */
Test(perturb_shared, no_t0_configuration_no_agent_cost)
{
	perturb_result *r = calloc(1, sizeof *r);
	plumb_status st;
	cr_assert_eq(perturb_design_from_lists("0.001,0.004", "0.0005", 1, &r->design, &st), 0);
	r->n_events = 1;
	strcpy(r->events[0], "task-clock");
	r->opened[0].state = COUNTER_OK;
	r->options.runs = 3;
	r->runs = calloc(3 * 3, sizeof *r->runs);
	for (size_t rep = 0; rep < 3; rep++)
		for (size_t c = 0; c < 3; c++) {
			perturb_run *run = &r->runs[r->n_runs++];
			run->config = c;
			run->halts = c == 0 ? 0 : c == 1 ? 40 : 10;
			run->wall_seconds = 0.05;
			run->raw[0].state = run->excluded[0].state = COUNTER_OK;
			run->raw[0].value = run->excluded[0].value = 40e6 + (double)rep;
		}
	perturb_analysis *a = calloc(1, sizeof *a);
	perturb_analyze(r, 0, a);
	cr_assert(isnan(a->agent_cost_seconds));
	cr_assert_null(measure(a, "task-clock:program"));
	cr_assert_eq(a->have_f_star, a->have_f_star_with_agent);
	cr_assert_float_eq(a->f_star, a->f_star_with_agent, 1e-12);
	free(a);
	free(r->runs);
	free(r);
}

Test(perturb_shared, buffer_in_bus_transactions)
{
	/* 3 M fills and 1 M write-backs in 0.5 s of running time: 8 M bus
	 * transactions per second; at f* = 1/2 s, a 4 M-transaction buffer. */
	cr_assert_float_eq(perturb_bus_rate(3000000, 1000000, 0.5), 8e6, 1e-6);
	cr_assert(isnan(perturb_bus_rate(1, 1, 0)));
	perturb_analysis *a = calloc(1, sizeof *a);
	a->have_f_star = true;
	a->f_star = 0.5;
	perturb_analysis_rates(a, 16e6, perturb_bus_rate(3000000, 1000000, 0.5));
	cr_assert_float_eq(a->buffer_records, 8e6, 1e-6);            /* BACH's 8 M references */
	cr_assert_float_eq(a->buffer_bus_transactions, 4e6, 1e-6);
	a->have_f_star = false;
	perturb_analysis_rates(a, 16e6, 8e6);
	cr_assert(isnan(a->buffer_records) && isnan(a->buffer_bus_transactions));
	free(a);
}

/* The bus transactions of a trace, simulated: 40000 lines written once
 * each (2.5 MiB) through the default caches (32 KiB L1D, 1 MiB L2, no L3,
 * write-back write-allocate): every line is filled from memory once, and
 * every dirty line the L2 cannot keep is written back. */
Test(perturb_shared, trace_traffic_counts_fills_and_writebacks)
{
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-perturb-traffic-XXXXXX.din");
	int fd = mkstemps(path, 4);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_not_null(f);
	const unsigned lines = 40000;
	for (unsigned i = 0; i < lines; i++)
		fprintf(f, "1 %x\n", 0x1000000 + 64 * i);
	cr_assert_eq(fclose(f), 0);
	perturb_traffic traffic;
	plumb_status st;
	cr_assert_eq(perturb_trace_traffic(path, "default", &traffic, &st), 0, "%s", st.message);
	cr_assert_eq(traffic.references, lines);
	cr_assert_eq(traffic.fills, lines);
	/* The L2 keeps at most 16384 of them dirty. */
	cr_assert(traffic.writebacks >= lines - 16384 - 512 && traffic.writebacks <= lines - 16384,
	          "%llu write-backs", (unsigned long long)traffic.writebacks);
	cr_assert(strstr(traffic.caches, "L2 1 MiB"), "%s", traffic.caches);
	cr_assert_neq(perturb_trace_traffic("/nonexistent/t.din", "default", &traffic, &st), 0);
	remove(path);
}

/* f* within four times the agent's cost is bounded by the agent. */
Test(perturb_shared, f_star_near_the_agents_cost_is_bounded_by_it)
{
	perturb_result *r = calloc(1, sizeof *r);
	plumb_status st;
	cr_assert_eq(perturb_design_from_lists("0.0002,0.001", "0", 1, &r->design, &st), 0);
	r->n_events = 1;
	strcpy(r->events[0], "task-clock");
	r->opened[0].state = COUNTER_OK;
	r->options.runs = 4;
	r->runs = calloc(3 * 4, sizeof *r->runs);
	const double halts[] = { 0, 400, 44 };
	for (size_t rep = 0; rep < 4; rep++)
		for (size_t c = 0; c < 3; c++) {
			perturb_run *run = &r->runs[r->n_runs++];
			run->config = c;
			run->halts = (uint64_t)halts[c];
			run->wall_seconds = 0.05;
			run->raw[0].state = run->excluded[0].state = COUNTER_OK;
			run->raw[0].value = run->excluded[0].value = 40e6 + 100e3 * halts[c] + (double)rep;
		}
	perturb_analysis *a = calloc(1, sizeof *a);
	perturb_analyze(r, 0, a);
	cr_assert(a->have_f_star);
	cr_assert_float_eq(a->f_star, 0.0002, 1e-12);
	cr_assert(a->f_star_bounded_by_agent, "100 us is half of 0.2 ms");
	free(a);
	free(r->runs);
	free(r);
}
