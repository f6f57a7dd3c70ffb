/* Fuzzes plumbgrind's summary reader (plumb instrument --summary).  Any
 * input must parse to a consistent summary (totals equal the threads' sum,
 * every region and collected line belongs to a listed thread) or fail with
 * a message: never a crash, a leak or a partial result. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "instrument/instrument.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	instrument_summary summary;
	plumb_status status;
	memset(&status, 0, sizeof status);
	if (instrument_summary_parse(&summary, (const char *)data, size, "fuzz", &status) == 0) {
		if (summary.thread_count == 0)
			abort();
		for (int c = 0; c < INSTRUMENT_COUNTERS; c++) {
			uint64_t sum = 0;
			for (size_t i = 0; i < summary.thread_count; i++)
				sum += summary.threads[i].total.value[c];
			if (sum != summary.total.value[c])
				abort();
		}
		for (size_t i = 0; i < summary.region_count; i++) {
			const instrument_region *r = &summary.regions[i];
			if (!r->name || !r->name[0] || instrument_summary_region(&summary, r->name, r->thread) != r)
				abort();
		}
		instrument_summary_free(&summary);
	} else if (!status.message[0] || summary.threads || summary.regions || summary.command) {
		abort();   /* a rejection must say why, and leave nothing behind */
	}
	return 0;
}
