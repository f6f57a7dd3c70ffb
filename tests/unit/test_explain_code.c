/* plumb explain's reading of the program's code (explain_code.c): what a
 * block's listing says (chained loads, values carried through memory, FP
 * adds), and the per-region counts of a made-up trace: executed
 * instructions, and new lines reached at a constant stride. */
#include <criterion/criterion.h>
#include <limits.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "explain/explain_internal.h"
#include "../temp_folder.h"

Test(explain_code, a_load_into_its_own_address_register_chains)
{
	cr_expect(explain_block_chained_load("\tmovq\t(%rax), %rax"));
	cr_expect(explain_block_chained_load("movq 8(%rdx,%rcx,8), %rdx"));
	cr_expect(explain_block_chained_load("movl (%rax), %eax"));   /* the same register, narrower */
	cr_expect(explain_block_chained_load("movq (%r8), %r8"));
	cr_expect_not(explain_block_chained_load("addq (%rdi), %rax"));
	cr_expect_not(explain_block_chained_load("leaq (%rax), %rax"));   /* no load */
	cr_expect_not(explain_block_chained_load("movq %rax, (%rax)"));   /* a store */
	cr_expect_not(explain_block_chained_load("movq (%r8), %r9"));
}

Test(explain_code, an_accumulator_in_memory_carries_a_value)
{
	uint16_t pairs[8][2];
	unsigned n;
	/* gesummv at -O2: two sums kept in memory, addresses fixed in the loop */
	const char *gesummv = "\tmovsd\t(%r14,%rax), %xmm0\n\tmulsd\t(%r12,%rax), %xmm0\n\taddsd\t(%rdx), %xmm0\n"
	                      "\tmovsd\t%xmm0, (%rdx)\n\tmovsd\t(%r15,%rax), %xmm0\n\tmulsd\t(%r12,%rax), %xmm0\n"
	                      "\taddq\t$8, %rax\n\taddsd\t(%rcx), %xmm0\n\tmovsd\t%xmm0, (%rcx)\n\tcmpq\t$2000, %rax\n"
	                      "\tjne\t-52\n";
	cr_assert(explain_block_carries_through_memory(gesummv, pairs, &n));
	cr_assert_eq(n, 2);
	cr_expect_eq(pairs[0][0], 2);
	cr_expect_eq(pairs[0][1], 3);
	cr_expect_eq(pairs[1][0], 7);
	cr_expect_eq(pairs[1][1], 8);
	/* A store through a pointer the loop moves carries nothing. */
	const char *copy = "\tmovsd\t(%rsi), %xmm0\n\taddsd\t(%rdi), %xmm0\n\tmovsd\t%xmm0, (%rdi)\n\taddq\t$8, %rdi\n"
	                   "\taddq\t$8, %rsi\n\tcmpq\t%rdi, %rdx\n\tjne\t-30\n";
	cr_expect_not(explain_block_carries_through_memory(copy, pairs, &n));
	cr_expect_eq(n, 0);
	/* A read-modify-write of a fixed address carries itself. */
	cr_expect(explain_block_carries_through_memory("\taddl\t$1, 16(%rbx)\n\tdecq\t%rcx\n\tjne\t-8\n", pairs, &n));
	cr_expect_eq(n, 1);
	cr_expect_eq(pairs[0][0], 0);
	cr_expect_eq(pairs[0][1], 0);
	/* A plain store and no load of it: nothing. */
	cr_expect_not(explain_block_carries_through_memory("\tmovq\t%rax, (%rbx)\n", pairs, &n));
}

/* adi's sweeps: q[j] computed from q[j-1], stored at 8(%rsi,%rax) and,
 * after the step of %rax by 8, loaded by the next execution at
 * (%rsi,%rax): a chain through memory across executions (store
 * forwarding, a multiply, a subtract and a divide: 26 cycles, not the 4.4
 * llvm-mca gives the block alone). */
Test(explain_code, a_value_stored_for_the_next_step_of_a_pointer_carries)
{
	uint16_t pairs[8][2];
	unsigned n;
	const char *adi = "\tmovsd\t(%rsi,%rax), %xmm11\n\tmulsd\t%xmm3, %xmm11\n\tsubsd\t%xmm11, %xmm1\n"
	                  "\tdivsd\t%xmm10, %xmm1\n\tmovsd\t%xmm1, 8(%rsi,%rax)\n\taddq\t$8, %rax\n"
	                  "\tcmpq\t$1584, %rax\n\tjne\t-40\n";
	cr_assert(explain_block_carries_through_memory(adi, pairs, &n));
	cr_assert_eq(n, 1);
	cr_expect_eq(pairs[0][0], 0);
	cr_expect_eq(pairs[0][1], 4);
	/* the other sweep writes the registers the other way round */
	const char *swapped = "\tmovsd\t-8(%rdx,%rdi), %xmm11\n\tmulsd\t%xmm2, %xmm11\n\tsubsd\t%xmm11, %xmm1\n"
	                      "\tmovsd\t%xmm1, (%rdi,%rdx)\n\taddq\t$8, %rdx\n\tcmpq\t$1592, %rdx\n\tjne\t-36\n";
	cr_assert(explain_block_carries_through_memory(swapped, pairs, &n));
	cr_expect_eq(pairs[0][0], 0);
	cr_expect_eq(pairs[0][1], 3);
	/* a load of an element ahead of the one stored carries nothing */
	const char *ahead = "\tmovsd\t16(%rsi,%rax), %xmm11\n\taddsd\t%xmm11, %xmm1\n\tmovsd\t%xmm1, 8(%rsi,%rax)\n"
	                    "\taddq\t$8, %rax\n\tjne\t-30\n";
	cr_expect_not(explain_block_carries_through_memory(ahead, pairs, &n));
	/* nor does an address register written other than by a constant step */
	const char *moved = "\tmovsd\t(%rsi,%rax), %xmm11\n\taddsd\t%xmm11, %xmm1\n\tmovsd\t%xmm1, 8(%rsi,%rax)\n"
	                    "\taddq\t%rbx, %rax\n\tjne\t-30\n";
	cr_expect_not(explain_block_carries_through_memory(moved, pairs, &n));
}

Test(explain_code, fp_adds_have_integer_twins)
{
	size_t len;
	cr_expect_str_eq(explain_block_fadd_twin("\taddsd\t%xmm1, %xmm0", &len), "paddq");
	cr_expect_eq(len, 5);
	cr_expect_str_eq(explain_block_fadd_twin("vsubpd %ymm2, %ymm1, %ymm0", &len), "vpsubq");
	cr_expect_eq(len, 6);
	cr_expect_str_eq(explain_block_fadd_twin("addps (%rax), %xmm3", &len), "paddq");
	cr_expect_null(explain_block_fadd_twin("mulsd %xmm1, %xmm0", &len));
	cr_expect_null(explain_block_fadd_twin("addq $8, %rax", &len));
	cr_expect_null(explain_block_fadd_twin("vaddsubpd %xmm1, %xmm2, %xmm3", &len));
	cr_expect_null(explain_block_fadd_twin("addsdx %xmm1, %xmm0", &len));
}

static trace_record fetch(uint64_t address, uint16_t size)
{
	return (trace_record){ .address = address, .size = size, .kind = TRACE_INSTRUCTION };
}

static trace_record load(uint64_t pc, uint64_t address)
{
	return (trace_record){ .address = address, .instruction_address = pc, .size = 8, .kind = TRACE_READ,
	                       .flags = TRACE_HAS_INSTRUCTION_ADDRESS };
}

/* An empty result for /bin/true and a code watch of 64-byte lines. */
static explain_code *code_watch(explain_result *result)
{
	char *argv[] = { "/bin/true", NULL };
	explain_options options;
	explain_options_init(&options);
	plumb_status status;
	cr_assert_eq(explain_result_init(result, argv, &options, &status), 0, "%s", status.message);
	explain_code *code;
	cr_assert_eq(explain_code_new(&code, 64), 0);
	return code;
}

/* A loop of 3 instructions whose load (at 0x1000) walks a column (a
 * constant stride of 1600 bytes: 25 lines) in region "column", then one
 * whose load jumps about at random in region "random". */
Test(explain_code, column_walks_are_constant_strides_and_random_walks_are_not)
{
	explain_result result;
	explain_code *code = code_watch(&result);
	size_t steps = 1000, n = 0;
	trace_record *trace = calloc(8 * steps + 8, sizeof *trace);
	cr_assert_not_null(trace);
	trace_region_marker(&trace[n++], 1, 0, "column");
	for (size_t i = 0; i < steps; i++) {
		trace[n++] = fetch(0x1000, 4);
		trace[n++] = load(0x1000, 0x100000 + i * 1600);
		trace[n++] = fetch(0x1004, 3);
		trace[n++] = fetch(0x1007, 2);
	}
	trace_region_marker(&trace[n++], 0, 0, "column");
	trace_region_marker(&trace[n++], 1, 0, "random");
	uint64_t state = 88172645463325252ull;
	for (size_t i = 0; i < steps; i++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		trace[n++] = fetch(0x2000, 4);
		trace[n++] = load(0x2000, 0x4000000 + (state % (1u << 24)) * 64);
	}
	trace_region_marker(&trace[n++], 0, 0, "random");
	explain_code_batch(code, trace, n / 2);   /* in two batches, as a reader lends them */
	explain_code_batch(code, trace + n / 2, n - n / 2);
	cr_assert_eq(explain_code_finish(code, &result, false), 0);
	explain_code_free(code);
	free(trace);
	explain_region *column = explain_result_region(&result, "column"), *random = explain_result_region(&result, "random");
	cr_assert(column->core.watched && random->core.watched);
	cr_expect_eq(column->core.instructions, 3 * steps);
	cr_expect_eq(random->core.instructions, steps);
	cr_expect_eq(result.regions[0].core.instructions, 4 * steps);
	cr_expect_eq(column->core.blocks, 1);   /* three contiguous instructions run equally often */
	cr_expect_eq(column->core.lines, steps);
	/* the first two references train the stride; every later one follows
	 * it, and is fetched ahead unless it is on another page than the one
	 * before (a prefetcher stops at the page's end) */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), same_page = 0;
	for (size_t i = 2; i < steps; i++)
		same_page += (0x100000 + i * 1600) / page == (0x100000 + (i - 1) * 1600) / page;
	cr_expect_eq(column->core.strided_lines, same_page);
	cr_expect_lt(column->core.strided_lines, steps * 3 / 4);
	cr_expect_leq(random->core.strided_lines, steps / 100);
	cr_expect_not(column->core.done);   /* not priced: no llvm-mca asked for */
	explain_result_free(&result);
}

/* A stride prefetcher fetches ahead within a page, never across: a walk
 * that steps a page or more is never fetched ahead, a sweep of
 * consecutive addresses is (the streamers follow it into the next page),
 * and so is a walk of two lines a step, up to the page's end. */
Test(explain_code, strides_are_fetched_ahead_within_a_page_only)
{
	explain_result result;
	explain_code *code = code_watch(&result);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t steps = 4096, n = 0;
	trace_record *trace = calloc(6 * steps + 8, sizeof *trace);
	cr_assert_not_null(trace);
	static const char *const names[] = { "pages", "sweep", "lines" };
	const uint64_t strides[] = { page + 64, 8, 128 };
	for (int r = 0; r < 3; r++) {
		trace_region_marker(&trace[n++], 1, 0, names[r]);
		for (size_t i = 0; i < steps; i++) {
			trace[n++] = fetch(0x1000 + 0x100 * (uint64_t)r, 4);
			trace[n++] = load(0x1000 + 0x100 * (uint64_t)r, 0x10000000 * (uint64_t)(r + 1) + i * strides[r]);
		}
		trace_region_marker(&trace[n++], 0, 0, names[r]);
	}
	explain_code_batch(code, trace, n);
	cr_assert_eq(explain_code_finish(code, &result, false), 0);
	explain_code_free(code);
	free(trace);
	explain_region *pages = explain_result_region(&result, "pages"), *sweep = explain_result_region(&result, "sweep"),
	               *lines = explain_result_region(&result, "lines");
	cr_expect_eq(pages->core.lines, steps);
	cr_expect_eq(pages->core.strided_lines, 0);
	cr_expect_eq(sweep->core.lines, steps * 8 / 64);
	cr_expect_geq(sweep->core.strided_lines, sweep->core.lines - 1);   /* across every page */
	/* 128-byte steps: all but the first line of each page, and the two that train */
	uint64_t crossings = steps * 128 / page;
	cr_expect_eq(lines->core.lines, steps);
	cr_expect_eq(lines->core.strided_lines, steps - 2 - crossings + 1);
	explain_result_free(&result);
}

/* A use of definition id with one data address, as plumbgrind's ring has it. */
static size_t put_use(uint64_t *words, size_t n, uint32_t id, uint64_t address)
{
	words[n++] = (uint64_t)1 << 60 | (uint64_t)1 << 32 | id;
	words[n++] = address;
	return n;
}

static void expect_same_core(const explain_core *a, const explain_core *b, const char *what)
{
	cr_expect_eq(a->instructions, b->instructions, "%s: instructions", what);
	cr_expect_eq(a->blocks, b->blocks, "%s: blocks", what);
	cr_expect_eq(a->lines, b->lines, "%s: lines", what);
	cr_expect_eq(a->strided_lines, b->strided_lines, "%s: strided lines", what);
	cr_expect_eq(a->watched, b->watched, "%s: watched", what);
}

/* plumbgrind's ring gives runs of uses of superblock definitions, not
 * records (explain's simulation feeds them as they come): counted per
 * definition and region, they give what the same trace's records give,
 * region by region, across runs split anywhere and a change of stream. */
Test(explain_code, compact_runs_count_what_their_records_count)
{
	char *argv[] = { "/bin/true", NULL };
	explain_options options;
	explain_options_init(&options);
	explain_result by_records, by_runs;
	plumb_status status;
	cr_assert_eq(explain_result_init(&by_records, argv, &options, &status), 0, "%s", status.message);
	cr_assert_eq(explain_result_init(&by_runs, argv, &options, &status), 0, "%s", status.message);
	size_t steps = 1000;
	/* the records */
	trace_record *trace = calloc(8 * steps + 8, sizeof *trace);
	cr_assert_not_null(trace);
	size_t n = 0;
	trace_region_marker(&trace[n++], 1, 0, "column");
	for (size_t i = 0; i < steps; i++) {
		trace[n++] = fetch(0x1000, 4);
		trace[n++] = load(0x1000, 0x100000 + i * 1600);
		trace[n++] = fetch(0x1004, 3);
		trace[n++] = fetch(0x1007, 2);
	}
	trace_region_marker(&trace[n++], 0, 0, "column");
	trace_region_marker(&trace[n++], 1, 0, "random");
	uint64_t state = 88172645463325252ull, *addresses = calloc(steps, sizeof *addresses);
	cr_assert_not_null(addresses);
	for (size_t i = 0; i < steps; i++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		addresses[i] = 0x4000000 + (state % (1u << 24)) * 64;
		trace[n++] = fetch(0x2000, 4);
		trace[n++] = load(0x2000, addresses[i]);
	}
	trace_region_marker(&trace[n++], 0, 0, "random");
	explain_code *code;
	cr_assert_eq(explain_code_new(&code, 64), 0);
	explain_code_batch(code, trace, n);
	cr_assert_eq(explain_code_finish(code, &by_records, false), 0);
	explain_code_free(code);
	/* the same as definitions and their uses: the column's loop is
	 * definition 0 of one stream, the random walk's definition 0 of another */
	trace_record templates[6] = { fetch(0x1000, 4), load(0x1000, 0), fetch(0x1004, 3), fetch(0x1007, 2),
	                              fetch(0x2000, 4), load(0x2000, 0) };
	uint32_t first_a[1] = { 0 }, first_b[1] = { 4 };
	uint8_t count_a[1] = { 4 }, count_b[1] = { 2 }, data[1] = { 1 };
	uint64_t *words = calloc(2 * steps, sizeof *words);
	cr_assert_not_null(words);
	cr_assert_eq(explain_code_new(&code, 64), 0);
	explain_code_batch(code, &trace[0], 1);   /* the markers come as records */
	size_t w = 0;
	for (size_t i = 0; i < steps; i++)
		w = put_use(words, w, 0, 0x100000 + i * 1600);
	trace_compact run = { .words = words, .end = words + 2 * 300, .thread = 0, .records = 4 * 300,
	                      .templates = templates, .first = first_a, .count = count_a, .data = data,
	                      .definitions = 1, .stream = 1 };
	explain_code_compact(code, &run);   /* in two runs, as the ring's blocks cut them */
	run.words = run.end;
	run.end = words + w;
	run.records = 4 * (steps - 300);
	explain_code_compact(code, &run);
	explain_code_batch(code, &trace[1 + 4 * steps], 2);
	w = 0;
	for (size_t i = 0; i < steps; i++)
		w = put_use(words, w, 0, addresses[i]);
	run = (trace_compact){ .words = words, .end = words + w, .thread = 0, .records = 2 * steps,
	                       .templates = templates, .first = first_b, .count = count_b, .data = data,
	                       .definitions = 1, .stream = 2 };
	explain_code_compact(code, &run);
	explain_code_batch(code, &trace[n - 1], 1);
	cr_assert_eq(explain_code_finish(code, &by_runs, false), 0);
	explain_code_free(code);
	cr_assert_str_empty(by_runs.core_error);
	expect_same_core(&by_runs.regions[0].core, &by_records.regions[0].core, "program");
	const char *names[] = { "column", "random" };
	for (size_t i = 0; i < 2; i++) {
		explain_region *a = explain_result_region(&by_runs, names[i]), *b = explain_result_region(&by_records, names[i]);
		cr_assert(a && b);
		expect_same_core(&a->core, &b->core, names[i]);
	}
	cr_expect_eq(explain_result_region(&by_runs, "column")->core.instructions, 3 * steps);
	cr_expect_eq(explain_result_region(&by_runs, "random")->core.instructions, steps);
	free(words);
	free(addresses);
	free(trace);
	explain_result_free(&by_records);
	explain_result_free(&by_runs);
}

/* The entries left in folder (., .. not counted). */
static int entries_in(const char *folder)
{
	DIR *d = opendir(folder);
	cr_assert_not_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* LLVM's questions asked while the program runs (explain_code_prepare):
 * the pricing says the same as without them, and a preparation no pricing
 * takes (a failed run) is waited for and leaves no folder behind. */
Test(explain_code, an_early_preparation_prices_alike_and_leaves_nothing)
{
	char folder[TEMP_PATH_SIZE];
	temp_template(folder, sizeof folder, "plumb-prepare-XXXXXX");
	cr_assert_not_null(mkdtemp(folder));
	cr_assert_eq(setenv("TMPDIR", folder, 1), 0);
	cr_assert_eq(setenv("PLUMB_EXPLAIN_CACHE", "0", 1), 0);
	char sources[2][320], errors[2][PLUMB_MESSAGE_MAX];
	for (int prepared = 0; prepared < 2; prepared++) {
		explain_result result;
		explain_code *code = code_watch(&result);
		if (prepared)
			explain_code_prepare(code);
		trace_record trace[] = { fetch(0x1000, 4), load(0x1000, 0x100000), fetch(0x1004, 3) };
		explain_code_batch(code, trace, 3);
		/* no process holds the code (pid 0): nothing can be disassembled */
		cr_assert_eq(explain_code_finish(code, &result, true), 0);
		explain_code_free(code);
		snprintf(sources[prepared], sizeof sources[prepared], "%s", result.core_source);
		snprintf(errors[prepared], sizeof errors[prepared], "%s", result.core_error);
		explain_result_free(&result);
		cr_expect_eq(entries_in(folder), 0, "the pricing's folder is removed");
	}
	cr_expect_str_eq(sources[1], sources[0]);
	cr_expect_str_eq(errors[1], errors[0]);
	cr_expect(errors[0][0], "code that cannot be read is not priced, and the result says why");
	explain_result result;
	explain_code *code = code_watch(&result);
	explain_code_prepare(code);
	explain_code_free(code);   /* the run failed: no pricing */
	explain_result_free(&result);
	cr_expect_eq(entries_in(folder), 0, "an untaken preparation's folder is removed");
	cr_expect_eq(rmdir(folder), 0);
}
