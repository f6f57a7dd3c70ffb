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
 * whole program's.  *code_map: plumbgrind's code map as read once the trace
 * ended (the caller frees it), or NULL where it could not be had (after an
 * exec: trace_reader_code_map says why). */
int explain_simulate_trace(trace_reader *reader, const explain_options *options, explain_result *result,
                           trace_code_map **code_map, plumb_status *status);

/* The executed code per region (explain_code.c): fed every batch of
 * records and every compact run of the trace the simulator sees, in the
 * trace's order.  A compact run's uses are counted per definition and
 * region, and the definitions' fetches expanded once, at the end: the same
 * counts as the records the run stands for. */
typedef struct explain_code explain_code;
int explain_code_new(explain_code **out, unsigned line_bytes);
/* The files the code ran from, for the blocks' bytes: the executable file
 * segments of plumbgrind's code map (trace_code_map_segments), which it
 * writes as the program runs, so that they are whole however soon the
 * program ends. */
void explain_code_add_segments(explain_code *code, const trace_code_map *map);
void explain_code_batch(explain_code *code, const trace_record *records, size_t count);
void explain_code_compact(explain_code *code, const trace_compact *run);
/* Fills each region's `core` (blocks priced by llvm-mca when price_blocks;
 * result->core_source or core_error say how or why not). */
int explain_code_finish(explain_code *code, explain_result *result, bool price_blocks);
void explain_code_free(explain_code *code);
/* Finds LLVM's tools and asks what a pricing needs of them before the
 * blocks are known (LLVM's version, this CPU's name and probe: nothing of
 * the program), on a thread of its own, so that it is done while the
 * program runs under Valgrind; explain_code_finish waits for it.  Call it
 * only when the blocks will be priced, and after the measured runs. */
void explain_code_prepare(explain_code *code);
/* What explain_code reads from a block's AT&T listing (one instruction a
 * line): a load whose address register is its own destination; whether a
 * store and a load of one address whose registers the block never writes
 * carry a value to the next execution (the (load, store) line pairs, up to
 * 8); the integer twin of an FP add or subtract ("addsd" -> "paddq"). */
bool explain_block_chained_load(const char *line);
bool explain_block_carries_through_memory(const char *text, uint16_t pairs[8][2], unsigned *pair_count);
const char *explain_block_fadd_twin(const char *line, size_t *mnemonic_length);
/* What the stack engine of every x86 core since the Pentium M makes of a
 * stack-pointer update (tracked in the front end, no dependence through
 * %rsp): "pushq %rbx" -> "movq %rbx, -8(%rsp)", "popq %rbx" -> "movq
 * (%rsp), %rbx", "addq $8, %rsp" -> "nop"; into buffer, or a literal; NULL
 * for any other line.  llvm-mca's models chain them through %rsp, so that a
 * function's prologue or epilogue, repeated as llvm-mca repeats a block,
 * costs a chain of 6 to 30 cycles that the core never waits for. */
const char *explain_block_stack_engine(const char *line, char *buffer, size_t size);

/* Loop nests (explain_nest.c): whether a listing's last instruction is a
 * conditional jump to target, its displacement counted from end_address
 * (the block's end); whether a loop body's runs are independent: every
 * register it carries from one iteration to the next, other than counters
 * stepped by a constant, is written afresh (not read) by the block before
 * it; a chained body's cycles per iteration when runs of `trips`
 * iterations overlap in a reorder buffer of rob_entries fused micro-ops,
 * never below floor (its throughput) nor above cycles. */
bool explain_block_jumps_to(const char *text, uint64_t end_address, uint64_t target);
/* The same for any jump, jmp too (the jump back of a two-block loop). */
bool explain_block_jumps_back(const char *text, uint64_t end_address, uint64_t target);
bool explain_nest_runs_independent(const char *before, const char *body);
/* The cycles a value carried through memory (loaded by line `load`,
 * stored by line `store` of the listing) takes per execution: the store's
 * forwarding to the next load (costs->forward, the model's integer load
 * latency; the load's own latency where 0), the operation of a load that
 * also operates (its latency less the model's load latency, fp_load or
 * int_load), each instruction the value passes through on its way to the
 * store (FP adds at costs->fadd where > 0: the fast adders), and a cycle
 * for the store.  costs may be NULL: the model's latencies as they are. */
typedef struct explain_chain_costs {
	double forward, int_load, fp_load, fadd;
} explain_chain_costs;
double explain_block_memory_chain(const char *text, const double *latency, unsigned rows, unsigned load,
                                  unsigned store, const explain_chain_costs *costs);
double explain_nest_overlap_cycles(double cycles, double floor, double rob_entries, double fused_uops, double trips);
/* A block as the nest rule sees it: its address, length in bytes, runs
 * (executions) and listing. */
typedef struct explain_nest_block {
	uint64_t start, bytes, runs;
	const char *text;
} explain_nest_block;
/* The head of the loop around a one-block inner loop: before[0] is the
 * block just before the body, before[1] the one before it, and so on (n of
 * them); after the block right after the body.  The head is the block
 * after jumps back to: before[0], or one a few blocks earlier that falls
 * through to it (a test of the trip count between them that skips an
 * empty run).  It must run as often as after (once a round of the loop
 * around), and before[0] no more often (once an entry of the body).  Its
 * index in before, or -1 when the blocks are not such a nest. */
int explain_nest_head(const explain_nest_block *before, int n, const explain_nest_block *after);
/* The pipeline's fill in llvm-mca's cycles per execution of a loop body:
 * once, its cycles per execution over N iterations; twice, the cycles per
 * execution of the body written twice, over the same N.  2 once - twice
 * (what the first iteration's latency adds to N iterations, over N), 0
 * when the figures do not say. */
double explain_loop_fill_cycles(double once, double twice);
/* The block's micro-ops in the core's fused domain: one per instruction,
 * less one where its closing conditional jump fuses with the instruction
 * before (cmp, test, add, sub, and, inc, dec). */
double explain_block_fused_uops(const char *text, unsigned instructions);

/* Names the variable of each shared line (explain_symbols.c): the
 * executable's symbol, placed by the code map's main; "unknown (why)". */
void explain_name_data(const char *program, const trace_code_map *map, explain_shared_line *lines, size_t count);

#endif
