/* Geometry probes on the real machine: orderings with wide margins only. */
#include <criterion/criterion.h>
#include "core/cpu.h"
#include "geometry/geometry.h"

static void options(geometry_options *o, timer_calibration *timer)
{
	plumb_status status;
	if (timer_calibrate(timer, 20, &status) != 0)
		timer_calibration_clock(timer);
	geometry_options_defaults(o, timer);
	o->point_cap_ns = 20u * 1000 * 1000;
}

/* The capacity sweep is plumb lat's (latency_run): its timing tests are
 * test_lat_timing.c's. */

Test(geometry_timing, one_line_per_page_costs_more_than_dense_lines, .timeout = 60)
{
	timer_calibration timer;
	geometry_options o;
	options(&o, &timer);
	geometry_curve pages, control;
	plumb_status status;
	for (int attempt = 0;; attempt++) {
		cr_assert_eq(geometry_probe_tlb(&o, 16, 4096, 1, 4096, &pages, &control, &status), 0, "%s",
		             status.message);
		if (attempt == 4 || (pages.n == 9 && pages.ns[8] > 1.2 * control.ns[8]))
			break;
		geometry_curve_free(&pages);
		geometry_curve_free(&control);
	}
	cr_assert_eq(pages.n, 9);
	/* 4096 pages overflow every first-level TLB there is. */
	cr_assert_gt(pages.ns[8], 1.2 * control.ns[8], "%.2f vs %.2f ns", pages.ns[8], control.ns[8]);
	geometry_curve_free(&pages);
	geometry_curve_free(&control);
}

Test(geometry_timing, probes_reject_bad_parameters)
{
	timer_calibration timer;
	timer_calibration_clock(&timer);
	geometry_options o;
	geometry_options_defaults(&o, &timer);
	geometry_curve c, d;
	plumb_status status;
	cr_assert_eq(geometry_probe_line(&o, 256 << 10, 4096, &c, &status), -1);
	cr_assert_eq(geometry_probe_conflict(&o, 100, 8, &c, &status), -1);
	cr_assert_eq(geometry_probe_tlb(&o, 16, 1u << 30, 4, 4096, &c, &d, &status), -1);
	cr_assert_eq(geometry_probe_page_size(&o, 8, 65536, 65536, ARENA_PAGES_SMALL, NULL, &c, &status), -1);
}
