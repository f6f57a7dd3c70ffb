/* The counters' sim backend: the ping-pong counted through the counter
 * interface gives the same numbers as the simulator's statistics, and an
 * event the simulator cannot model is unsupported, never 0. */
#include <math.h>
#include "counters/counters.h"
#include "sim_test_util.h"

Test(sim_counters, ping_pong_through_the_counter_interface)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	sim *s;
	plumb_status status;
	cr_assert_eq(sim_new(&s, &c, &status), 0);
	/* warm-up outside the region: not counted */
	sim_trace warm = { 0 };
	trace_add(&warm, 0, TRACE_READ, 0x9000, 8);
	cr_assert_eq(sim_access_batch(s, warm.records, warm.count, &status), 0);

	const char *events[] = { "PAPI_L1_DCM", "PAPI_CA_INV", "PAPI_CA_SHR", "PAPI_BR_MSP", "PAPI_L3_TCM" };
	counter_options options = { 0 };
	options.backend_context = s;
	counter_set *set;
	cr_assert_eq(counter_set_open_backend(&set, &counter_backend_sim, events, 5, &options, &status), 0,
	             "%s", status.message);
	cr_assert_eq(counter_start(set, &status), 0);
	sim_trace t = { 0 };
	for (int i = 0; i < 10; i++)
		for (uint32_t core = 0; core < 2; core++) {
			trace_add(&t, core, TRACE_READ, 0x10000, 4);
			trace_add(&t, core, TRACE_WRITE, 0x10000, 4);
		}
	cr_assert_eq(sim_counter_feed(counter_set_backend_instance(set), t.records, t.count, &status), 0,
	             "%s", status.message);
	cr_assert_eq(counter_stop(set, &status), 0);
	counter_value values[5];
	cr_assert_eq(counter_read(set, values, &status), 0, "%s", status.message);
	cr_assert_eq(values[0].state, COUNTER_OK);
	cr_assert_eq(values[0].raw, 20, "2K L1D misses, the warm-up excluded");
	cr_assert_eq(values[1].raw, 19);
	cr_assert_eq(values[2].raw, 19);
	cr_assert_eq(values[3].state, COUNTER_UNSUPPORTED);
	cr_assert(isnan(values[3].value));
	cr_assert_eq(values[4].state, COUNTER_UNSUPPORTED, "no L3 configured");
	cr_assert_str_eq(counter_set_read_method(set), "simulated");
	counter_close(set);
	sim_free(s);
	trace_release(&warm);
	trace_release(&t);
}

Test(sim_counters, needs_a_simulator)
{
	const char *events[] = { "PAPI_L1_DCM" };
	counter_set *set;
	plumb_status status;
	cr_assert_eq(counter_set_open_backend(&set, &counter_backend_sim, events, 1, NULL, &status), -1);
	cr_assert(strstr(status.message, "simulator"), "%s", status.message);
}
