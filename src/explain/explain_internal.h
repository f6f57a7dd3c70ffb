/* Internal to src/explain: the simulated source's plug. */
#ifndef PLUMB_EXPLAIN_INTERNAL_H
#define PLUMB_EXPLAIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "plumb/explain.h"
#include "plumb/trace.h"

/* Whether per-region simulation can be done; if not, why (into reason). */
bool explain_simulation_available(char *reason, size_t size);
/* Reads the trace (with region markers) to its end through this machine's
 * caches and fills each region's `simulated` (summed over threads) and the
 * whole program's. */
int explain_simulate_trace(trace_reader *reader, const explain_options *options, explain_result *result,
                           plumb_status *status);

/* Names the variable of each shared line (explain_symbols.c): the
 * executable's symbol, placed by the code map's main; "unknown (why)". */
void explain_name_data(const char *program, const trace_code_map *map, explain_shared_line *lines, size_t count);

#endif
