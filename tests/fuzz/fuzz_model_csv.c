/* Fuzzes the reader behind `plumb model --from`: CSV and loaded-JSON
 * measurements.  Any input must give points or a one-line error, never a
 * crash, a leak or a non-finite point. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	model_input input;
	plumb_status status;
	if (model_input_parse((const char *)data, size, "fuzz", &input, &status) == 0) {
		for (size_t i = 0; i < input.count; i++)
			if (!isfinite(input.points[i].contention_mb_s) || !isfinite(input.points[i].latency_ns)
			    || input.points[i].contention_mb_s < 0 || !(input.points[i].latency_ns > 0))
				abort();
		/* The fit must cope with whatever the reader accepts.  L0 is given
		 * (the first point's latency) so one grid search runs, not the slower
		 * joint fit of L0: the fuzzer stays fast. */
		model_fit fit;
		if (input.count >= 2 && input.count <= 16)
			(void)model_fit_points(input.points, input.count, 64, input.points[0].latency_ns, &fit, &status);
		model_input_free(&input);
	} else if (!status.message[0]) {
		abort();   /* a rejection must say why */
	}
	return 0;
}
