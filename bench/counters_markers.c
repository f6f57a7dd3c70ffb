/* Cost of one plumb_region_begin/plumb_region_end pair (two counter reads
 * and the bookkeeping), per backend: run with PLUMB_BACKEND and PLUMB_EVENTS
 * set.  Prints the median over batches of 1000 pairs, in ns per pair. */
#include <stdio.h>
#include <stdlib.h>
#include "plumb/region.h"
#include "core/stats.h"
#include "core/timer.h"

int main(int argc, char **argv)
{
	long batches = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	if (batches < 1 || batches > 100000) {
		fprintf(stderr, "usage: counters_markers [batches 1-100000]\n");
		return 2;
	}
	setenv("PLUMB_REGION_QUIET", "1", 0);
	timer_calibration timer;
	plumb_status status;
	if (timer_calibrate(&timer, 50, &status) != 0) {
		fprintf(stderr, "counters_markers: %s\n", status.message);
		return 1;
	}
	double *per_pair = malloc((size_t)batches * sizeof *per_pair);
	if (!per_pair)
		return 1;
	plumb_region_begin("warm");
	plumb_region_end("warm");
	for (long b = 0; b < batches; b++) {
		uint64_t t0 = timer_begin(&timer);
		for (int i = 0; i < 1000; i++) {
			plumb_region_begin("pair");
			plumb_region_end("pair");
		}
		per_pair[b] = timer_ticks_to_ns(&timer, (double)(timer_end(&timer) - t0)) / 1000.0;
	}
	printf("backend %s, events %s: %.0f ns per begin/end pair (median of %ld batches of 1000)\n",
	       getenv("PLUMB_BACKEND") ? getenv("PLUMB_BACKEND") : "perf",
	       getenv("PLUMB_EVENTS") ? getenv("PLUMB_EVENTS") : "task-clock,page-faults",
	       stats_median(per_pair, (size_t)batches), batches);
	free(per_pair);
	return 0;
}
