/* Seed 003's cross-platform set: branch mispredictions, instruction-cache
 * misses, cycles, instructions, loads, stores, floating-point operations
 * and square roots.  The kernels are assembly (kernels.c), so each
 * prediction is a closed form of the iteration count that the
 * instruction-mix tests check against the disassembly and exact Valgrind
 * counts; seed 003 needed objdump and Perl scripts for the same job. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "validate/internal.h"
#include "validate/kernels.h"

static bool any_domain(const validate_params *p, char *warning, size_t length)
{
	(void)p;
	(void)warning;
	(void)length;
	return true;
}

/* ---- branch mispredictions (seed 003 Fig. 3) ---- */

static void branch_configure(validate_params *p)
{
	p->inner_trips = 10;
}

static uint64_t branch_iterations(const validate_params *p)
{
	return p->size ? p->size - 1 : 0;
}

static double branch_predict(const validate_params *p)
{
	/* n - 1 inner-loop exits plus one outer-loop exit. */
	return (double)p->size;
}

static bool branch_domain(const validate_params *p, char *warning, size_t length)
{
	if (p->inner_trips < 2) {
		snprintf(warning, length, "an inner trip count below 2 has no loop exit to mispredict");
		return false;
	}
	return true;
}

static int branch_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_branch_loops_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	vk_branch_loops(branch_iterations(p), p->inner_trips);
	validate_region_end(region);
	return 0;
}

const validate_benchmark validate_bench_branch = {
	.name = "branch",
	.title = "branch mispredictions: n-1 runs of a 10-trip inner loop (Aguilera et al. 2005, Fig. 3)",
	.defeats = "nothing beyond a bimodal predictor: history-based predictors learn a fixed "
	           "trip count, so the model 'one miss per loop exit' may fail on modern cores",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_BR_MSP", .perf_name = "branch-misses", .papi_name = "PAPI_BR_MSP",
	              .instrumented = VALIDATE_INSTR_BRANCH_MISSES,
	              .instrumented_function = "vk_branch_loops", .predict = branch_predict } },
	.configure = branch_configure,
	.in_domain = branch_domain,
	.run = branch_run,
	.expected_iterations = branch_iterations,
};

/* The same kernel with 64 trips: a predictor that indexes by fewer than 64
 * branches of global history sees an all-taken history at every exit and
 * cannot tell the exit from another iteration, so it mispredicts each exit
 * once (seed 003's model), where it learns the 10-trip loop perfectly. */
static void branch_long_configure(validate_params *p)
{
	p->inner_trips = 64;
}

const validate_benchmark validate_bench_branch_long = {
	.name = "branch-long",
	.title = "branch mispredictions: n-1 runs of a 64-trip inner loop",
	.defeats = "global-history predictors with fewer than 64 branches of history (not loop predictors)",
	.threads = 1,
	.default_max_size = 100000,
	.event_count = 1,
	.events = { { .name = "PAPI_BR_MSP", .perf_name = "branch-misses", .papi_name = "PAPI_BR_MSP",
	              .instrumented = VALIDATE_INSTR_BRANCH_MISSES,
	              .instrumented_function = "vk_branch_loops", .predict = branch_predict } },
	.configure = branch_long_configure,
	.in_domain = branch_domain,
	.run = branch_run,
	.expected_iterations = branch_iterations,
};

/* ---- instruction-cache misses (seed 003 §3.2), generated code ---- */

/* One block per I-cache line: dec %rdi; jz +5; jmp next; ret.  Three
 * instructions fetched per block, all in one line, and the exit (ret) is
 * in the same line, so lines fetched = blocks executed.  The blocks cover
 * twice the L1I and are chained in a random order, so an LRU cache misses
 * every line and next-line instruction prefetch fetches the wrong line. */
#define BLOCK_DEC 0
#define BLOCK_JZ 3
#define BLOCK_JMP 5
#define BLOCK_RET 10

static uint32_t *block_order(uint64_t blocks, plumb_status *status)
{
	uint32_t *order = calloc(blocks, sizeof *order);
	if (!order) {
		plumb_fail(status, 12, "out of memory");
		return NULL;
	}
	for (uint64_t i = 0; i < blocks; i++) order[i] = (uint32_t)i;
	uint64_t state = 0x2545f4914f6cdd1dull;
	for (uint64_t i = blocks; i > 1; i--) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		uint64_t j = state % i;
		uint32_t t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	return order;
}

/* The chain's geometry: one block per line of the cache level it targets
 * (the L1I, or the L2 for icache-l2), over twice its size. */
typedef struct chain_geometry {
	uint64_t line, blocks;
} chain_geometry;

static chain_geometry chain_for(const validate_params *p, bool l2)
{
	chain_geometry g = { l2 ? p->machine->l2_line : p->machine->l1i_line, 0 };
	uint64_t size = l2 ? p->machine->l2_size : p->machine->l1i_size;
	g.blocks = 2 * size / (g.line ? g.line : 64);
	if (g.blocks < 2) g.blocks = 2;
	return g;
}

static double icache_predict(const validate_params *p)
{
	return (double)p->size;
}

static uint64_t icache_iterations(const validate_params *p)
{
	return p->size;
}

static bool icache_domain(const validate_params *p, char *warning, size_t length)
{
	if (p->machine->l1i_line < 16) {
		snprintf(warning, length, "an I-cache line of %u bytes cannot hold a block",
		         p->machine->l1i_line);
		return false;
	}
	return true;
}

/* Trips of the block chain from the executions of the last block's dec
 * (laps) and ret (1 if the chain ended there): N = (laps - 1) x blocks +
 * position + 1.  Exposed through validate_trip_points. */
static bool icache_trips(const uint64_t executions[VALIDATE_TRIP_POINTS], const uint64_t parameters[2],
                         uint64_t *trips, char *why, size_t length)
{
	uint64_t blocks = parameters[0], position = parameters[1];
	if (executions[1] != 1 || executions[0] == 0) {
		snprintf(why, length, "the chain did not end at block %llu of %llu (its first instruction ran "
		         "%llu times, its ret %llu times)", (unsigned long long)position, (unsigned long long)blocks,
		         (unsigned long long)executions[0], (unsigned long long)executions[1]);
		return false;
	}
	*trips = (executions[0] - 1) * blocks + position + 1;
	return true;
}

static int chain_run(const validate_params *p, bool l2, validate_region *region, plumb_status *status)
{
	const char *name = l2 ? "icache-l2" : "icache";
	if (p->size == 0) return plumb_fail(status, 22, "%s: size must be at least 1", name);
	chain_geometry g = chain_for(p, l2);
	uint64_t line = g.line, blocks = g.blocks;
	if (line < 16) return plumb_fail(status, 22, "%s: cache line too small for a block", name);
	uint32_t *order = block_order(blocks, status);
	if (!order) return -1;
	validate_memory m = { 0 };
	if (validate_memory_map(&m, blocks * line, true, status) != 0) {
		free(order);
		return -1;
	}
	memset(m.base, 0xcc, m.size);   /* int3 everywhere but the blocks */
	for (uint64_t k = 0; k < blocks; k++) {
		uint8_t *a = m.base + (uint64_t)order[k] * line;
		uint8_t *next = m.base + (uint64_t)order[(k + 1) % blocks] * line;
		static const uint8_t head[] = { 0x48, 0xff, 0xcf, 0x74, 0x05, 0xe9 };
		memcpy(a, head, sizeof head);
		int32_t rel = (int32_t)(next - (a + BLOCK_RET));
		memcpy(a + BLOCK_JMP + 1, &rel, 4);
		a[BLOCK_RET] = 0xc3;
	}
	void *entry = m.base + (uint64_t)order[0] * line;
	/* The trips are counted on the block the model says runs last (position
	 * (N-1) mod blocks of the chain): its dec runs once per lap through
	 * the chain that reaches it, its ret once if the chain ends there. */
	uint64_t last = (p->size - 1) % blocks;
	uint8_t *last_block = m.base + (uint64_t)order[last] * line;
	validate_trip_points trips = { .count = 2, .address = { last_block + BLOCK_DEC, last_block + BLOCK_RET },
	                               .trips = icache_trips, .parameters = { blocks, last } };
	free(order);
	if (mprotect(m.base, m.size, PROT_READ | PROT_EXEC) != 0) {
		validate_memory_unmap(&m);
		return plumb_fail_errno(status, errno, "%s: cannot make generated code executable", name);
	}
	void (*blocks_entry)(uint64_t);
	memcpy(&blocks_entry, &entry, sizeof entry);
	if (validate_region_open(region, status) != 0 ||
	    validate_region_watch(region, &trips, status) != 0) {
		validate_memory_unmap(&m);
		return -1;
	}
	validate_region_begin(region);
	blocks_entry(p->size);
	validate_region_end(region);
	validate_memory_unmap(&m);
	return 0;
}

static int icache_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	(void)info;
	return chain_run(p, false, region, status);
}

static int chain_emit(const validate_params *p, bool l2, validate_sink *sink, plumb_status *status)
{
	chain_geometry g = chain_for(p, l2);
	uint64_t line = g.line, blocks = g.blocks;
	uint32_t *order = block_order(blocks, status);
	if (!order) return -1;
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t k = 0; k < p->size; k++) {
		uint64_t a = VALIDATE_EMIT_BASE + (uint64_t)order[k % blocks] * line;
		validate_emit_instruction(&e, 0, a + BLOCK_DEC, 3);
		validate_emit_instruction(&e, 0, a + BLOCK_JZ, 2);
		if (k + 1 < p->size) validate_emit_instruction(&e, 0, a + BLOCK_JMP, 5);
		else validate_emit_instruction(&e, 0, a + BLOCK_RET, 1);
	}
	validate_emit_mark(&e, VALIDATE_REGION_END);
	free(order);
	return validate_emit_finish(&e);
}

static int icache_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	return chain_emit(p, false, sink, status);
}

const validate_benchmark validate_bench_icache = {
	.name = "icache",
	.title = "L1 I-cache misses: N one-line blocks of generated code over twice the L1I",
	.defeats = "next-line instruction prefetch (random block order); compiler layout (generated code)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_L1_ICM", .perf_name = "L1-icache-load-misses", .papi_name = "PAPI_L1_ICM",
	              .sim = VALIDATE_SIM_L1I_MISSES, .predict = icache_predict } },
	.in_domain = icache_domain,
	.run = icache_run,
	.emit = icache_emit,
	.expected_iterations = icache_iterations,
};

/* ---- L2 instruction-cache misses (Aguilera et al. 2005, §4.2: "the same
 * microbenchmark counts L2 I-cache misses"): the chain resized to twice
 * the L2, one block per L2 line.  Every block is then a new line for the
 * L1I as well, so both levels miss once per block. ---- */

static bool icache_l2_domain(const validate_params *p, char *warning, size_t length)
{
	const validate_machine *m = p->machine;
	if (m->l2_line < 16) {
		snprintf(warning, length, "an L2 line of %u bytes cannot hold a block", m->l2_line);
		return false;
	}
	if (m->l2_line < m->l1i_line) {
		snprintf(warning, length, "L2 lines (%u B) shorter than L1I lines (%u B): one block per L2 line "
		         "shares L1I lines", m->l2_line, m->l1i_line);
		return false;
	}
	if (m->l2_size <= 2 * m->l1i_size) {
		snprintf(warning, length, "an L2 of %llu bytes is not larger than twice the L1I: its misses are "
		         "not separate from the L1I's", (unsigned long long)m->l2_size);
		return false;
	}
	return true;
}

static int icache_l2_run(const validate_params *p, validate_region *region, validate_run_info *info,
                         plumb_status *status)
{
	(void)info;
	return chain_run(p, true, region, status);
}

static int icache_l2_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	return chain_emit(p, true, sink, status);
}

const validate_benchmark validate_bench_icache_l2 = {
	.name = "icache-l2",
	.title = "L2 I-cache misses: N one-line blocks of generated code over twice the L2 (Aguilera et al. 2005, §4.2)",
	.defeats = "next-line instruction prefetch (random block order); compiler layout (generated code)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 2,
	.events = {
		{ .name = "PAPI_L2_ICM", .papi_name = "PAPI_L2_ICM", .sim = VALIDATE_SIM_L2_INSTRUCTION_MISSES,
		  .predict = icache_predict },
		{ .name = "PAPI_L1_ICM", .perf_name = "L1-icache-load-misses", .papi_name = "PAPI_L1_ICM",
		  .sim = VALIDATE_SIM_L1I_MISSES, .predict = icache_predict },
	},
	.in_domain = icache_l2_domain,
	.run = icache_l2_run,
	.emit = icache_l2_emit,
	.expected_iterations = icache_iterations,
};

/* ---- register-only loops: cycles, instructions, FP, sqrt; loads, stores ---- */

static uint64_t cycles_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_CYCLES_PER_ITERATION);
}

static double cycles_predict(const validate_params *p)
{
	/* A chain of dependent 1-cycle adds: the loop's dec/jnz run beside it
	 * on another ALU and the chain alone sets the pace. */
	return (double)(VK_CYCLES_PER_ITERATION * cycles_iterations(p));
}

static int cycles_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_cycles_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	info->checksum = vk_cycles(cycles_iterations(p));
	validate_region_end(region);
	return 0;
}

const validate_benchmark validate_bench_cycles = {
	.name = "cycles",
	.title = "core cycles: register-only chain of 16 dependent adds per iteration (Aguilera et al. 2005, §3.3)",
	.defeats = "memory (no loads or stores), ALU parallelism (one dependent chain)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_TOT_CYC", .perf_name = "cycles", .papi_name = "PAPI_TOT_CYC",
	              .predict = cycles_predict } },
	.in_domain = any_domain,
	.run = cycles_run,
	.expected_iterations = cycles_iterations,
};

static uint64_t instructions_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_INSTRUCTIONS_PER_ITERATION);
}

static double instructions_predict(const validate_params *p)
{
	return (double)(VK_INSTRUCTIONS_FIXED + VK_INSTRUCTIONS_PER_ITERATION * instructions_iterations(p));
}

static int instructions_run(const validate_params *p, validate_region *region, validate_run_info *info,
                            plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_instructions_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	info->checksum = vk_instructions(instructions_iterations(p));
	validate_region_end(region);
	return 0;
}

/* Code layout of vk_instructions (bytes), for the emitted fetches. */
static int instructions_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	uint64_t code = VALIDATE_EMIT_BASE - 0x100000, n = instructions_iterations(p);
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	validate_emit_instruction(&e, 0, code, 3);        /* test */
	validate_emit_instruction(&e, 0, code + 3, 2);    /* jz */
	for (uint64_t i = 0; i < n; i++) {
		for (int k = 0; k < 8; k++) validate_emit_instruction(&e, 0, code + 5 + 4 * k, 4);
		validate_emit_instruction(&e, 0, code + 37, 3);   /* dec */
		validate_emit_instruction(&e, 0, code + 40, 2);   /* jnz */
	}
	validate_emit_instruction(&e, 0, code + 42, 1);   /* ret */
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_instructions = {
	.name = "instructions",
	.title = "instructions: 8 register adds + dec + jnz per iteration, 3 fixed (Aguilera et al. 2005, §3.6)",
	.defeats = "compiler-inserted instructions (assembly kernel, counted from its disassembly)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_TOT_INS", .perf_name = "instructions", .papi_name = "PAPI_TOT_INS",
	              .sim = VALIDATE_SIM_INSTRUCTIONS, .instrumented = VALIDATE_INSTR_INSTRUCTIONS,
	              .instrumented_function = "vk_instructions", .predict = instructions_predict } },
	.in_domain = any_domain,
	.run = instructions_run,
	.emit = instructions_emit,
	.expected_iterations = instructions_iterations,
};

/* ---- instructions issued (Aguilera et al. 2005, §4.6) ---- */

static uint64_t issued_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_ISSUED_PER_ITERATION);
}

static double issued_predict(const validate_params *p)
{
	/* The dynamic instructions between start and stop, as the paper
	 * predicted both events; each is one micro-op and none fuse. */
	return (double)(VK_ISSUED_FIXED + VK_ISSUED_PER_ITERATION * issued_iterations(p));
}

static int issued_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_issued_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	info->checksum = vk_issued(issued_iterations(p));
	validate_region_end(region);
	return 0;
}

/* Code layout of vk_issued (bytes, from its disassembly): test 3, jz 2,
 * 16 adds of 4, dec 3, mov 3, jnz 2, ret 1. */
static int issued_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	uint64_t code = VALIDATE_EMIT_BASE - 0x100000 + 0x1000, n = issued_iterations(p);
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	validate_emit_instruction(&e, 0, code, 3);        /* test */
	validate_emit_instruction(&e, 0, code + 3, 2);    /* jz */
	for (uint64_t i = 0; i < n; i++) {
		for (int k = 0; k < 16; k++) validate_emit_instruction(&e, 0, code + 5 + 4 * k, 4);
		validate_emit_instruction(&e, 0, code + 69, 3);   /* dec */
		validate_emit_instruction(&e, 0, code + 72, 3);   /* mov */
		validate_emit_instruction(&e, 0, code + 75, 2);   /* jnz */
	}
	validate_emit_instruction(&e, 0, code + 77, 1);   /* ret */
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_issued = {
	.name = "issued",
	.title = "instructions issued and completed: 16 register adds, dec, mov, jnz per iteration, 3 fixed "
	         "(Aguilera et al. 2005, §4.6)",
	.defeats = "compiler NOP padding (Itanium's +17%) and memory operands (Power4's +400%): register-only "
	           "assembly; micro-op fusion (dec and jnz kept apart)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 2,
	.events = {
		{ .name = "PAPI_TOT_IIS", .papi_name = "PAPI_TOT_IIS", .predict = issued_predict },
		{ .name = "PAPI_TOT_INS", .perf_name = "instructions", .papi_name = "PAPI_TOT_INS",
		  .sim = VALIDATE_SIM_INSTRUCTIONS, .instrumented = VALIDATE_INSTR_INSTRUCTIONS,
		  .instrumented_function = "vk_issued", .predict = issued_predict },
	},
	.in_domain = any_domain,   /* wrong-path micro-ops after the exit's misprediction show as a bias */
	.run = issued_run,
	.emit = issued_emit,
	.expected_iterations = issued_iterations,
};

static uint64_t loads_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_LOADS_PER_ITERATION);
}

static double loads_predict(const validate_params *p)
{
	/* Four loads per iteration, plus the ret that pops the return address. */
	return (double)(VK_LOADS_PER_ITERATION * loads_iterations(p) + 1);
}

static int loads_run(const validate_params *p, validate_region *region, validate_run_info *info,
                     plumb_status *status)
{
	_Alignas(64) uint64_t line[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_loads_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	info->checksum = vk_loads(line, loads_iterations(p));
	validate_region_end(region);
	return 0;
}

static int loads_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < loads_iterations(p); i++)
		for (int k = 0; k < VK_LOADS_PER_ITERATION; k++)
			validate_emit(&e, 0, TRACE_READ, VALIDATE_EMIT_BASE + 8 * (uint64_t)k, 8);
	validate_emit(&e, 0, TRACE_READ, VALIDATE_EMIT_STACK, 8);   /* ret */
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_loads = {
	.name = "loads",
	.title = "load instructions: 4 loads from one line per iteration, plus ret",
	.defeats = "-O0 spills and compiler reordering (assembly kernel)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_LD_INS", .papi_name = "PAPI_LD_INS", .sim = VALIDATE_SIM_READS,
	              .instrumented = VALIDATE_INSTR_READS, .instrumented_function = "vk_loads",
	              .predict = loads_predict } },
	.in_domain = any_domain,
	.run = loads_run,
	.emit = loads_emit,
	.expected_iterations = loads_iterations,
};

static uint64_t stores_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_STORES_PER_ITERATION);
}

static double stores_predict(const validate_params *p)
{
	return (double)(VK_STORES_PER_ITERATION * stores_iterations(p));
}

static int stores_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	_Alignas(64) uint64_t line[8];
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_stores_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	vk_stores(line, stores_iterations(p));
	validate_region_end(region);
	info->checksum = line[0];
	return 0;
}

static int stores_emit(const validate_params *p, validate_sink *sink, plumb_status *status)
{
	validate_emitter e;
	validate_emitter_init(&e, sink, status);
	validate_emit_mark(&e, VALIDATE_REGION_BEGIN);
	for (uint64_t i = 0; i < stores_iterations(p); i++)
		for (int k = 0; k < VK_STORES_PER_ITERATION; k++)
			validate_emit(&e, 0, TRACE_WRITE, VALIDATE_EMIT_BASE + 8 * (uint64_t)k, 8);
	validate_emit_mark(&e, VALIDATE_REGION_END);
	return validate_emit_finish(&e);
}

const validate_benchmark validate_bench_stores = {
	.name = "stores",
	.title = "store instructions: 4 stores to one line per iteration",
	.defeats = "-O0 spills and compiler reordering (assembly kernel)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_SR_INS", .papi_name = "PAPI_SR_INS", .sim = VALIDATE_SIM_WRITES,
	              .instrumented = VALIDATE_INSTR_WRITES, .instrumented_function = "vk_stores",
	              .predict = stores_predict } },
	.in_domain = any_domain,
	.run = stores_run,
	.emit = stores_emit,
	.expected_iterations = stores_iterations,
};

static uint64_t fp_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_FP_OPS_PER_ITERATION);
}

static double fp_predict(const validate_params *p)
{
	return (double)(VK_FP_OPS_PER_ITERATION * fp_iterations(p));
}

static int fp_run(const validate_params *p, validate_region *region, validate_run_info *info,
                  plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_fp_ops_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	double result = vk_fp_ops(fp_iterations(p));
	validate_region_end(region);
	info->checksum = (uint64_t)result;
	return 0;
}

const validate_benchmark validate_bench_fp = {
	.name = "fp",
	.title = "FP operations: 2 addsd + 2 mulsd per iteration (scalar double)",
	.defeats = "compiler-inserted conversions and rounding (Aguilera et al.'s 2005 Power lesson)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_FP_OPS", .papi_name = "PAPI_FP_OPS", .predict = fp_predict } },
	.in_domain = any_domain,
	.run = fp_run,
	.expected_iterations = fp_iterations,
};

/* ---- single precision (Aguilera et al. 2005, Fig. 7: the Pentium III
 * reported 5 of 9 single-precision multiplies) ---- */

static uint64_t fp_single_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_FP_SINGLE_PER_ITERATION);
}

static double fp_single_predict(const validate_params *p)
{
	return (double)(VK_FP_SINGLE_PER_ITERATION * fp_single_iterations(p));
}

static double fp_single_multiplies(const validate_params *p)
{
	return (double)(VK_FP_SINGLE_PER_ITERATION / 2 * fp_single_iterations(p));
}

static int fp_single_run(const validate_params *p, validate_region *region, validate_run_info *info,
                         plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_fp_single_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	float result = vk_fp_single(fp_single_iterations(p));
	validate_region_end(region);
	info->checksum = (uint64_t)result;
	return 0;
}

const validate_benchmark validate_bench_fp_single = {
	.name = "fp-single",
	.title = "single-precision FP: 2 addss + 2 mulss per iteration (Aguilera et al. 2005, Fig. 7)",
	.defeats = "x87 and compiler conversions (scalar SSE in assembly); the undercount of single-precision "
	           "multiplies the paper saw on the Pentium III is what it looks for",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 2,
	.events = {
		{ .name = "PAPI_SP_OPS", .papi_name = "PAPI_SP_OPS", .predict = fp_single_predict },
		{ .name = "PAPI_FML_INS", .papi_name = "PAPI_FML_INS", .predict = fp_single_multiplies },
	},
	.in_domain = any_domain,
	.run = fp_single_run,
	.expected_iterations = fp_single_iterations,
};

/* ---- divides (Aguilera et al. 2005, §4.4: add, multiply and divide) ---- */

static uint64_t fp_div_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_FP_DIV_PER_ITERATION);
}

static double fp_div_predict(const validate_params *p)
{
	return (double)(VK_FP_DIV_PER_ITERATION * fp_div_iterations(p));
}

static int fp_div_run(const validate_params *p, validate_region *region, validate_run_info *info,
                      plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_fp_div_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	double result = vk_fp_div(fp_div_iterations(p));
	validate_region_end(region);
	info->checksum = (uint64_t)result;
	return 0;
}

const validate_benchmark validate_bench_fp_div = {
	.name = "fp-div",
	.title = "FP divides: 2 independent divsd per iteration, 2.0 / 1.0 (Aguilera et al. 2005, §4.4)",
	.defeats = "libm and special operands (no denormals, zeros or NaNs: no microcode assists)",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 2,
	.events = {
		{ .name = "PAPI_FDV_INS", .papi_name = "PAPI_FDV_INS", .predict = fp_div_predict },
		{ .name = "PAPI_FP_OPS", .papi_name = "PAPI_FP_OPS", .predict = fp_div_predict },
	},
	.in_domain = any_domain,
	.run = fp_div_run,
	.expected_iterations = fp_div_iterations,
};

static uint64_t sqrt_iterations(const validate_params *p)
{
	return validate_iterations_for(p->size, VK_SQRT_PER_ITERATION);
}

static double sqrt_predict(const validate_params *p)
{
	return (double)(VK_SQRT_PER_ITERATION * sqrt_iterations(p));
}

static int sqrt_run(const validate_params *p, validate_region *region, validate_run_info *info,
                    plumb_status *status)
{
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_sqrt_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	double result = vk_sqrt(sqrt_iterations(p));
	validate_region_end(region);
	info->checksum = (uint64_t)result;
	return 0;
}

const validate_benchmark validate_bench_sqrt = {
	.name = "sqrt",
	.title = "square roots: 2 sqrtsd per iteration (hardware sqrt, no libm call)",
	.defeats = "libm's errno path (sqrtsd in assembly, not sqrt())",
	.threads = 1,
	.default_max_size = 1000000,
	.event_count = 1,
	.events = { { .name = "PAPI_FSQ_INS", .papi_name = "PAPI_FSQ_INS", .predict = sqrt_predict } },
	.in_domain = any_domain,
	.run = sqrt_run,
	.expected_iterations = sqrt_iterations,
};
