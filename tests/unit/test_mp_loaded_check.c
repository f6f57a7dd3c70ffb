/* The loaded-latency checks on synthetic curves: exact arithmetic on
 * made-up points, so exact verdicts (plumb/loaded.h). */
#include <criterion/criterion.h>
#include <math.h>
#include "loaded/loaded.h"
#include "model/model.h"

static loaded_point idle_at(double ns)
{
	return (loaded_point){ .idle = true, .latency_ns = ns, .generator_mb_s = 0 };
}

static loaded_point load_at(double mb_s, double ns)
{
	return (loaded_point){ .generators = 1, .latency_ns = ns, .generator_mb_s = mb_s };
}

/* A curve the model itself produces (L0 150 ns, S 4 ns, 64-byte lines)
 * is queueing by construction: never flagged. */
Test(loaded_check, model_curve_is_consistent)
{
	const model_params p = { .unloaded_latency_ns = 150, .service_ns = 4, .line_bytes = 64 };
	const double loads[] = { 28, 119, 464, 1784, 7271, 15000 };
	loaded_point points[7] = { idle_at(150) };
	for (int i = 0; i < 6; i++) {
		double l;
		cr_assert_eq(model_latency(&p, loads[i], &l, NULL), 0);
		points[i + 1] = load_at(loads[i], l);
	}
	loaded_queueing_check q;
	loaded_check_queueing(points, 7, 64, &q);
	cr_assert(q.checked);
	cr_expect(!q.step_not_queueing, "worst excess %.3f ns", q.worst_excess_ns);
	/* The bound on S is at least the true S: the highest load did not
	 * saturate a resource with S = 4 ns. */
	cr_expect(q.service_bound_ns >= 4.0, "S_max %.3f", q.service_bound_ns);
	cr_expect(q.worst_excess_ns <= 1e-9, "a model curve never exceeds the bound: %.6f", q.worst_excess_ns);
}

/* The VM's curve: 85 ns up at 60 MB/s, then flat to 11 GB/s.  At 60 MB/s
 * queueing allows a few hundredths of a ns: flagged, at that point. */
Test(loaded_check, step_at_tiny_load_then_flat_is_flagged)
{
	const loaded_point points[] = { idle_at(152), load_at(60, 237), load_at(300, 238), load_at(2000, 239),
		                        load_at(11000, 240) };
	loaded_queueing_check q;
	loaded_check_queueing(points, 5, 64, &q);
	cr_assert(q.checked);
	cr_expect(q.step_not_queueing);
	/* S_max = 1 / (11000e-3/64 + 1/240) */
	cr_expect(fabs(q.service_bound_ns - 1 / (11.0 / 64 + 1 / 240.0)) < 1e-9, "%.6f", q.service_bound_ns);
	cr_expect(q.worst_index == 2 || q.worst_index == 3, "worst at index %zu", q.worst_index);
	cr_expect(q.worst_bound_ns < 153, "bound %.3f", q.worst_bound_ns);
	cr_expect(q.worst_excess_ns > 80 && q.worst_excess_ns < 90, "%.3f", q.worst_excess_ns);
	cr_expect(fabs(q.tolerance_ns - 0.2 * 152) < 1e-9);
	/* Without the high loads S is not bounded below L0 and queueing at
	 * such a slow resource could make the step: the flat part is what
	 * rules it out. */
	loaded_check_queueing(points, 2, 64, &q);
	cr_expect(q.checked && !q.step_not_queueing);
	cr_expect_eq(q.service_bound_ns, 152);
}

Test(loaded_check, flat_curve_and_thesis_table_are_consistent)
{
	const loaded_point flat[] = { idle_at(150), load_at(28, 150), load_at(1784, 151), load_at(15000, 149) };
	loaded_queueing_check q;
	loaded_check_queueing(flat, 4, 64, &q);
	cr_expect(q.checked && !q.step_not_queueing);
	/* Hristea's Table 5.1 (Origin 2000 memory, 128-byte lines): real
	 * queueing, with the thesis's own scatter (about 14 ns above the bound
	 * at 41 MB/s, inside the tolerance). */
	const loaded_point origin[] = { idle_at(338), load_at(41, 371), load_at(121, 421), load_at(233, 483),
		                        load_at(336, 572), load_at(484, 915), load_at(538, 1462) };
	loaded_check_queueing(origin, 7, 128, &q);
	cr_expect(q.checked && !q.step_not_queueing, "excess %.1f at index %zu", q.worst_excess_ns, q.worst_index);
	cr_expect_eq(q.worst_index, 2);
	cr_expect(q.service_bound_ns > 195, "S_max %.1f is above the thesis's fitted 195 ns", q.service_bound_ns);
}

Test(loaded_check, needs_an_idle_and_a_loaded_point)
{
	loaded_queueing_check q;
	const loaded_point only_idle[] = { idle_at(150) };
	loaded_check_queueing(only_idle, 1, 64, &q);
	cr_expect(!q.checked);
	cr_expect_str_eq(q.why_not, "no loaded point");
	const loaded_point no_idle[] = { load_at(100, 150) };
	loaded_check_queueing(no_idle, 1, 64, &q);
	cr_expect(!q.checked);
	cr_expect_str_eq(q.why_not, "no idle point");
}

Test(loaded_check, idle_against_the_reference)
{
	const loaded_point points[] = { idle_at(150), load_at(100, 160) };
	loaded_reference reference = { .measured = true, .ns = 120 };
	loaded_idle_check c;
	loaded_check_idle(points, 2, &reference, &c);
	cr_assert(c.checked);
	cr_expect_eq(c.ratio, 1.25);
	cr_expect(c.agrees, "1.25 is inside the agreement factor");
	reference.ns = 100;
	loaded_check_idle(points, 2, &reference, &c);
	cr_expect(c.checked && !c.agrees && c.ratio == 1.5);
	/* The VM's 395 ns idle against lat's 152 ns disagrees, and so does a
	 * reference far above the idle point. */
	const loaded_point busy[] = { idle_at(395) };
	reference.ns = 152;
	loaded_check_idle(busy, 1, &reference, &c);
	cr_expect(c.checked && !c.agrees);
	reference.ns = 400;
	loaded_check_idle(points, 2, &reference, &c);
	cr_expect(c.checked && !c.agrees);
	reference.measured = false;
	loaded_check_idle(points, 2, &reference, &c);
	cr_expect(!c.checked);
	loaded_check_idle(points, 2, NULL, &c);
	cr_expect(!c.checked);
}
