/* Internal to src/explain: the simulated source's plug. */
#ifndef PLUMB_EXPLAIN_INTERNAL_H
#define PLUMB_EXPLAIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "explain/explain.h"
#include "trace/trace.h"

/* Whether per-region simulation can be done; if not, why (into reason). */
bool explain_simulation_available(char *reason, size_t size);
/* Reads the trace (with region markers) to its end through this machine's
 * caches and fills each region's `simulated` (summed over threads) and the
 * whole program's. */
int explain_simulate_trace(trace_reader *reader, const explain_options *options, explain_result *result,
                           plumb_status *status);

/* The executed code per region (explain_code.c): fed every batch of
 * records and every compact run of the trace the simulator sees, in the
 * trace's order; pid is the process that holds the traced program's code
 * (Valgrind's, trace_reader_pid: its /proc/PID/maps say which files hold
 * the code), 0 if unknown.  A compact run's uses are counted per
 * definition and region, and the definitions' fetches expanded once, at
 * the end: the same counts as the records the run stands for. */
typedef struct explain_code explain_code;
int explain_code_new(explain_code **out, int pid, unsigned line_bytes);
void explain_code_batch(explain_code *code, const trace_record *records, size_t count);
void explain_code_compact(explain_code *code, const trace_compact *run);
/* Fills each region's `core` (blocks priced by llvm-mca when price_blocks;
 * result->core_source or core_error say how or why not). */
int explain_code_finish(explain_code *code, explain_result *result, bool price_blocks);
void explain_code_free(explain_code *code);
/* What explain_code reads from a block's AT&T listing (one instruction a
 * line): a load whose address register is its own destination; whether a
 * store and a load of one address whose registers the block never writes
 * carry a value to the next execution (the (load, store) line pairs, up to
 * 8); the integer twin of an FP add or subtract ("addsd" -> "paddq"). */
bool explain_block_chained_load(const char *line);
bool explain_block_carries_through_memory(const char *text, uint16_t pairs[8][2], unsigned *pair_count);
const char *explain_block_fadd_twin(const char *line, size_t *mnemonic_length);

/* Names the variable of each shared line (explain_symbols.c): the
 * executable's symbol, placed by the code map's main; "unknown (why)". */
void explain_name_data(const char *program, const trace_code_map *map, explain_shared_line *lines, size_t count);

#endif
