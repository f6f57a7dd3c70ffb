/* Fuzzes the reader of a saved `plumb lat --json` report
 * (latency_run_from_report, behind plumb lat --from and plumb geometry
 * --levels-from): any input must either be refused with a message, or give
 * levels that are consistent (in increasing latency, inside the sweep, each
 * boundary inside its spread over the passes): never a crash or a leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "latency/latency_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	output_report *report = NULL;
	plumb_status status;
	memset(&status, 0, sizeof status);
	if (output_report_parse_json(text, &report, &status) == 0) {
		latency_run_options options;
		latency_run_result result;
		memset(&status, 0, sizeof status);
		if (latency_run_from_report(report, &options, &result, &status) == 0) {
			if (result.level_count > LATENCY_MAX_LEVELS || result.passes < 1)
				abort();
			for (size_t k = 0; k < result.level_count; k++) {
				const latency_level_report *l = &result.levels[k];
				if (l->level.first_index > l->level.end_index || l->level.end_index >= result.point_count)
					abort();
				if (k > 0 && !(l->level.ns > result.levels[k - 1].level.ns))
					abort();
				if (!l->level.open_ended &&
				    (l->spread.low_bytes > l->end_bytes || l->spread.high_bytes < l->end_bytes || !l->verdict))
					abort();
			}
		} else if (!status.message[0]) {
			abort();   /* a refusal says why */
		}
		latency_run_free(&result);
		output_report_free(report);
	}
	free(text);
	return 0;
}
