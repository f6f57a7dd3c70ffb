/* The curve's test-only switch (src/sim/sim_curve.c). */
#ifndef PLUMB_SIM_CURVE_INTERNAL_H
#define PLUMB_SIM_CURVE_INTERNAL_H

/* Tests: the curve moves its sets' rows with the portable code even where
 * the CPU has AVX-512. */
struct sim_curve;
void sim_curve_narrow_rows(struct sim_curve *c);

#endif
