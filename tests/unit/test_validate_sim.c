/* The quality bar: inside each validity domain the simulator (host preset,
 * no prefetcher) counts exactly what every closed form predicts. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "validate/validate.h"
#include "validate/native.h"

Test(validate_sim, simulator_counts_equal_the_predictions, .timeout = 120)
{
	char reason[256];
	if (!validate_simulator_available(reason, sizeof reason)) cr_skip_test("%s", reason);
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	size_t count;
	const validate_benchmark *const *all = validate_benchmarks(&count);
	size_t checked = 0;
	for (size_t k = 0; k < count; k++) {
		const validate_benchmark *b = all[k];
		uint64_t sizes[] = { 1, 10, 100, 1000, 5000 };
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			validate_params p;
			validate_params_init(&p, b, &machine, sizes[i]);
			char warning[256];
			if (b->in_domain && !b->in_domain(&p, warning, sizeof warning)) continue;
			double values[VALIDATE_MAX_EVENTS];
			char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
			int rc = validate_simulate(b, &p, "host", NULL, 0, values, reasons, &status);
			cr_assert_eq(rc, 0, "%s: %s", b->name, status.message);
			for (int e = 0; e < b->event_count; e++) {
				if (b->events[e].sim == VALIDATE_SIM_NONE) {
					cr_expect(isnan(values[e]), "%s %s: unmodelled but %g", b->name, b->events[e].name, values[e]);
					continue;
				}
				double predicted = b->events[e].predict(&p);
				cr_expect_eq(values[e], predicted, "%s %s at %llu: simulated %g, predicted %g", b->name,
				             b->events[e].name, (unsigned long long)sizes[i], values[e], predicted);
				checked++;
			}
		}
	}
	cr_expect_gt(checked, 100);
}

/* icache-l2's chain covers twice the L2 in a random order that repeats
 * every lap: with LRU every block is a new line for both levels on every
 * lap, so both columns are N past the first lap too (the sizes above stop
 * inside it). */
Test(validate_sim, icache_l2_chain_misses_both_levels_on_every_lap)
{
	char reason[256];
	if (!validate_simulator_available(reason, sizeof reason)) cr_skip_test("%s", reason);
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	const validate_benchmark *b = validate_benchmark_find("icache-l2");
	cr_assert_not_null(b);
	cr_assert_eq(b->event_count, 2);
	cr_assert_str_eq(b->events[0].name, "PAPI_L2_ICM");
	cr_assert_str_eq(b->events[1].name, "PAPI_L1_ICM");
	uint64_t blocks = 2 * machine.l2_size / machine.l2_line;
	validate_params p;
	validate_params_init(&p, b, &machine, 2 * blocks + 3);
	char warning[256];
	if (!b->in_domain(&p, warning, sizeof warning)) cr_skip_test("icache-l2 is outside its domain here: %s", warning);
	double values[VALIDATE_MAX_EVENTS];
	char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
	cr_assert_eq(validate_simulate(b, &p, "host", NULL, 0, values, reasons, &status), 0, "%s", status.message);
	cr_expect_eq(values[0], (double)p.size, "L2 instruction misses over %llu blocks: %g for %llu trips",
	             (unsigned long long)blocks, values[0], (unsigned long long)p.size);
	cr_expect_eq(values[1], (double)p.size, "L1I misses: %g for %llu trips", values[1], (unsigned long long)p.size);
}

Test(validate_sim, origin2000_preset_reproduces_the_thesis_l2_line_effect)
{
	/* Notes 000 §8.3: with R10K geometry (32 B L1 lines, 128 B L2 lines),
	 * a stride of the larger line gives one L1 and one L2 miss per read. */
	char reason[256];
	if (!validate_simulator_available(reason, sizeof reason)) cr_skip_test("%s", reason);
	validate_machine machine;
	validate_machine_default(&machine);
	machine.l1d_line = 32;
	machine.l2_line = 128;
	const validate_benchmark *b = validate_benchmark_find("shared");
	validate_params p;
	validate_params_init(&p, b, &machine, 1000);
	double values[VALIDATE_MAX_EVENTS];
	char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
	plumb_status status;
	cr_assert_eq(validate_simulate(b, &p, "origin2000", NULL, 0, values, reasons, &status), 0, "%s", status.message);
	cr_expect_eq(values[0], 1000);
	cr_expect_eq(values[1], 1000);
}

Test(validate_sim, stream_buffers_hide_the_stride_misses_as_the_thesis_saw)
{
	/* Notes 000 s5.2: on processors with stream buffers the line-stride
	 * benchmark's misses "approached zero as the number of array references
	 * increased".  With the simulator's stream buffers only the first read
	 * misses the L1D; the L2 sees the buffer's 4 lines ahead as misses too. */
	char reason[256];
	if (!validate_simulator_available(reason, sizeof reason)) cr_skip_test("%s", reason);
	validate_machine machine;
	validate_machine_default(&machine);
	const validate_benchmark *b = validate_benchmark_find("stride");
	validate_params p;
	validate_params_init(&p, b, &machine, 1000);
	double values[VALIDATE_MAX_EVENTS];
	char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
	plumb_status status;
	const char *settings[] = { "prefetch=stream" };
	cr_assert_eq(validate_simulate(b, &p, "host", settings, 1, values, reasons, &status), 0, "%s", status.message);
	cr_expect_eq(values[0], 1, "L1D misses %g", values[0]);
	cr_expect_eq(values[1], 1000 + 4, "L2 misses %g", values[1]);
	const char *bad[] = { "prefetch=psychic" };
	cr_assert_neq(validate_simulate(b, &p, "host", bad, 1, values, reasons, &status), 0);
	cr_expect(strstr(status.message, "psychic") != NULL, "%s", status.message);
}

Test(validate_sim, the_thesis_hypothesis_as_a_switch)
{
	/* Seed 000: "shared data is not prefetched", so the shared benchmark's
	 * misses are exact even on a machine that prefetches.  With stream
	 * buffers that skip lines another core holds (unshared_only) the
	 * simulated shared benchmark is exact while its control (nothing
	 * shared) still loses its misses to the buffers; with buffers that do
	 * not care, the shared benchmark loses them too. */
	char reason[256];
	if (!validate_simulator_available(reason, sizeof reason)) cr_skip_test("%s", reason);
	validate_machine machine;
	validate_machine_default(&machine);
	const validate_benchmark *shared = validate_benchmark_find("shared");
	const validate_benchmark *control = validate_benchmark_find("shared-control");
	const char *skipping[] = { "prefetch=stream", "prefetch.unshared_only=yes" };
	const char *blind[] = { "prefetch=stream" };
	double values[VALIDATE_MAX_EVENTS];
	char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
	plumb_status status;
	validate_params p;
	validate_params_init(&p, shared, &machine, 1000);
	cr_assert_eq(validate_simulate(shared, &p, "host", skipping, 2, values, reasons, &status), 0, "%s", status.message);
	cr_expect_eq(values[0], 1000, "shared, unshared_only: L1D misses %g", values[0]);
	cr_assert_eq(validate_simulate(shared, &p, "host", blind, 1, values, reasons, &status), 0, "%s", status.message);
	cr_expect_lt(values[0], 10, "shared, blind buffers: L1D misses %g", values[0]);
	validate_params_init(&p, control, &machine, 1000);
	cr_assert_eq(validate_simulate(control, &p, "host", skipping, 2, values, reasons, &status), 0, "%s", status.message);
	cr_expect_lt(values[0], 10, "control: L1D misses %g", values[0]);
}
