/* Each benchmark's predictor against its own emitted address stream, run
 * through small independent models written here (distinct pages, distinct
 * lines, a two-core MESI with unbounded caches), and each kernel run for
 * real: natively (exact page faults through perf_event and PAPI) and
 * uncounted (every kernel, including the two-thread ones, completes and
 * runs the iterations its model expects). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <signal.h>
#include "validate/validate.h"
#include "validate/internal.h"
#include "validate/kernels.h"
#include "../capability.h"

/* ---- a checking sink: counts per kind and tiny cache models ---- */

#define MODEL_LINES (1u << 22)

typedef struct model {
	bool in_region, marked_end;
	uint64_t page_size, line;
	uint64_t reads, writes, instructions;
	/* first touches in the region, by page and by line (open addressing) */
	uint64_t *pages, *lines;
	size_t page_count, line_count, capacity;
	uint64_t distinct_pages, distinct_lines, distinct_ilines;
	/* two-core MESI with unbounded caches: state per (core, line) */
	uint8_t *state[2];
	uint64_t *state_keys;
	uint64_t interventions0, invalidations0, upgrades_shared0, upgrades_clean0, misses0;
} model;

enum { I = 0, S, E, M };

static size_t slot_of(uint64_t *table, size_t capacity, uint64_t key, bool *fresh)
{
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (capacity - 1);
	while (table[h] != 0 && table[h] != key + 1) h = (h + 1) & (capacity - 1);
	*fresh = table[h] == 0;
	table[h] = key + 1;
	return h;
}

static int model_records(void *context, const trace_record *r, size_t n, plumb_status *status)
{
	(void)status;
	model *m = context;
	for (size_t i = 0; i < n; i++) {
		uint64_t line = r[i].address / m->line;
		bool fresh;
		size_t s = slot_of(m->state_keys, m->capacity, line, &fresh);
		if (fresh) m->state[0][s] = m->state[1][s] = I;
		unsigned c = r[i].thread & 1, o = 1 - c;
		uint8_t *mine = &m->state[c][s], *other = &m->state[o][s];
		bool count = m->in_region;
		if (r[i].kind == TRACE_INSTRUCTION) {
			if (count) {
				m->instructions++;
				bool f;
				slot_of(m->lines, m->capacity, line | (1ull << 62), &f);
				m->distinct_ilines += f;
			}
			continue;
		}
		if (count) {
			bool f;
			slot_of(m->pages, m->capacity, r[i].address / m->page_size, &f);
			m->distinct_pages += f;
			slot_of(m->lines, m->capacity, line, &f);
			m->distinct_lines += f;
			if (r[i].kind == TRACE_READ) m->reads++;
			else m->writes++;
		}
		if (r[i].kind == TRACE_READ) {
			if (*mine != I) continue;
			if (count && c == 0) m->misses0++;
			if (*other == M || *other == E) {
				if (count && o == 0) m->interventions0++;
				*other = S;
				*mine = S;
			} else {
				*mine = *other == S ? S : E;
			}
		} else {
			if (*mine == M) continue;
			if (*mine == E) {
				if (count && c == 0) m->upgrades_clean0++;
			} else if (*mine == S) {
				if (count && c == 0) m->upgrades_shared0++;
			} else {
				if (count && c == 0) m->misses0++;
				if (count && o == 0 && (*other == M || *other == E)) m->interventions0++;
			}
			if (*other != I && count && o == 0) m->invalidations0++;
			*other = I;
			*mine = M;
		}
	}
	return 0;
}

static int model_mark(void *context, validate_mark mark, plumb_status *status)
{
	(void)status;
	model *m = context;
	m->in_region = mark == VALIDATE_REGION_BEGIN;
	if (mark == VALIDATE_REGION_END) m->marked_end = true;
	return 0;
}

static model *model_run(const char *name, uint64_t size, const validate_machine *machine)
{
	const validate_benchmark *b = validate_benchmark_find(name);
	cr_assert_not_null(b, "%s", name);
	model *m = calloc(1, sizeof *m);
	m->capacity = MODEL_LINES;
	m->pages = calloc(m->capacity, sizeof *m->pages);
	m->lines = calloc(m->capacity, sizeof *m->lines);
	m->state_keys = calloc(m->capacity, sizeof *m->state_keys);
	m->state[0] = calloc(m->capacity, 1);
	m->state[1] = calloc(m->capacity, 1);
	m->page_size = machine->page_size;
	m->line = machine->l1d_line;
	validate_params p;
	validate_params_init(&p, b, machine, size);
	validate_sink sink = { model_records, model_mark, m };
	plumb_status status;
	cr_assert_eq(b->emit(&p, &sink, &status), 0, "%s: %s", name, status.message);
	cr_assert(m->marked_end, "%s: no region end", name);
	return m;
}

static void model_free(model *m)
{
	free(m->pages);
	free(m->lines);
	free(m->state_keys);
	free(m->state[0]);
	free(m->state[1]);
	free(m);
}

static double predicted(const char *name, int event, uint64_t size, const validate_machine *machine)
{
	const validate_benchmark *b = validate_benchmark_find(name);
	validate_params p;
	validate_params_init(&p, b, machine, size);
	return b->events[event].predict(&p);
}

static const uint64_t sizes[] = { 1, 10, 100, 1000, 10000 };

Test(validate_benchmarks, padding_offsets_reproduce_the_thesis)
{
	/* Notes 000 §8.1: bases 4752 mod 32 KiB, 1832 mod 4 KiB, 16 mod 16 KiB. */
	cr_expect_eq(validate_padding_aligned(4752, 32768), 28012);
	cr_expect_eq(validate_padding_aligned(1832, 4096), 2260);
	cr_expect_eq(validate_padding_aligned(16, 16384), 16364);
	cr_expect_eq(validate_padding_aligned(16, 4096), 4076);   /* measured on this VM */
	for (uint64_t pad = 4076; pad <= 4079; pad++) cr_expect(validate_padding_is_aligned(16, pad, 4096));
	cr_expect(!validate_padding_is_aligned(16, 4072, 4096));
	cr_expect(!validate_padding_is_aligned(16, 4080, 4096));
}

Test(validate_benchmarks, page_benchmarks_touch_the_predicted_pages)
{
	validate_machine machine;
	validate_machine_default(&machine);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		const char *names[] = { "page-faults", "dtlb", "padding", "padding-misaligned" };
		for (int k = 0; k < 4; k++) {
			model *m = model_run(names[k], sizes[i], &machine);
			int event = k == 0 ? 0 : 1;
			cr_expect_eq((double)m->distinct_pages, predicted(names[k], event, sizes[i], &machine),
			             "%s at %llu: %llu pages", names[k], (unsigned long long)sizes[i],
			             (unsigned long long)m->distinct_pages);
			model_free(m);
		}
	}
	cr_expect_eq(predicted("padding-misaligned", 1, 100, &machine), 200);
	cr_expect_eq(predicted("padding", 1, 100, &machine), 100);
}

Test(validate_benchmarks, dtlb_iterations_are_n_for_any_pad)
{
	validate_machine machine;
	validate_machine_default(&machine);
	const validate_benchmark *b = validate_benchmark_find("dtlb");
	for (uint64_t pad = 0; pad < 8192; pad += 372) {
		validate_params p;
		validate_params_init(&p, b, &machine, 100);
		p.pad = pad;
		cr_expect_eq(b->expected_iterations(&p), 100, "pad %llu", (unsigned long long)pad);
	}
}

Test(validate_benchmarks, cache_benchmarks_touch_one_new_line_per_predicted_miss)
{
	validate_machine machine;
	validate_machine_default(&machine);
	const char *names[] = { "stride", "random", "page-crossing", "shared", "shared-control" };
	for (int k = 0; k < 5; k++)
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			model *m = model_run(names[k], sizes[i], &machine);
			cr_expect_eq((double)m->misses0, predicted(names[k], 0, sizes[i], &machine), "%s at %llu: %llu",
			             names[k], (unsigned long long)sizes[i], (unsigned long long)m->misses0);
			model_free(m);
		}
}

Test(validate_benchmarks, coherence_streams_match_their_predictions_under_mesi)
{
	validate_machine machine;
	validate_machine_default(&machine);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		uint64_t n = sizes[i];
		model *m = model_run("itv", n, &machine);
		cr_expect_eq((double)m->interventions0, predicted("itv", 0, n, &machine), "itv %llu: %llu",
		             (unsigned long long)n, (unsigned long long)m->interventions0);
		model_free(m);
		m = model_run("inv", n, &machine);
		cr_expect_eq((double)m->invalidations0, predicted("inv", 0, n, &machine));
		model_free(m);
		m = model_run("shr", n, &machine);
		cr_expect_eq((double)m->upgrades_shared0, predicted("shr", 0, n, &machine));
		cr_expect_eq(m->upgrades_clean0, 0);
		model_free(m);
		m = model_run("cln", n, &machine);
		cr_expect_eq((double)m->upgrades_clean0, predicted("cln", 0, n, &machine));
		cr_expect_eq(m->upgrades_shared0, 0);
		model_free(m);
	}
}

Test(validate_benchmarks, instruction_streams_match_their_predictions)
{
	validate_machine machine;
	validate_machine_default(&machine);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		uint64_t n = sizes[i];
		model *m = model_run("instructions", n, &machine);
		cr_expect_eq((double)m->instructions, predicted("instructions", 0, n, &machine));
		model_free(m);
		m = model_run("loads", n, &machine);
		cr_expect_eq((double)m->reads, predicted("loads", 0, n, &machine));
		cr_expect_eq(m->writes, 0);
		model_free(m);
		m = model_run("stores", n, &machine);
		cr_expect_eq((double)m->writes, predicted("stores", 0, n, &machine));
		model_free(m);
		m = model_run("icache", n, &machine);
		cr_expect_eq(m->instructions, 3 * n);
		/* Below the block count every block is a new line: compulsory misses. */
		if (n <= 2 * machine.l1i_size / machine.l1i_line)
			cr_expect_eq((double)m->distinct_ilines, predicted("icache", 0, n, &machine));
		model_free(m);
	}
}

Test(validate_benchmarks, suites_and_domains)
{
	uint64_t s[64];
	const validate_benchmark *itv = validate_benchmark_find("itv");
	size_t n = validate_suite_sizes(itv, 1000, s, 64);
	uint64_t expected[] = { 1, 10, 100, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000 };
	cr_assert_eq(n, 13);
	for (size_t i = 0; i < n; i++) cr_expect_eq(s[i], expected[i]);
	n = validate_suite_sizes(validate_benchmark_find("stride"), 1000000, s, 64);
	cr_expect_eq(n, 7);
	validate_machine machine;
	validate_machine_default(&machine);   /* 1 MiB L2 / 64 B = 16384 lines: half is 8192 */
	char warning[256];
	validate_params p;
	validate_params_init(&p, itv, &machine, 8192);
	cr_expect(itv->in_domain(&p, warning, sizeof warning));
	validate_params_init(&p, itv, &machine, 9000);
	cr_expect(!itv->in_domain(&p, warning, sizeof warning));
	cr_expect(strstr(warning, "half the L2") != NULL);
	cr_expect_null(validate_benchmark_find("no-such-benchmark"));
}

/* The iterations a kernel really runs, counted by the hardware: an execute
 * breakpoint (perf_event_open, PERF_TYPE_BREAKPOINT, which works without a
 * PMU, under KVM too) on the branch that closes the kernel's loop, enabled only inside
 * the benchmark's region and inherited by the threads it starts.  Its count
 * is independent of the formula the benchmark reports (this test once
 * compared that formula with itself). */
typedef struct loop_counter {
	int fd;
} loop_counter;

static int loop_counter_open(void *context, plumb_status *status)
{
	(void)context;
	(void)status;
	return 0;
}

static void loop_counter_begin(void *context)
{
	loop_counter *c = context;
	ioctl(c->fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void loop_counter_end(void *context)
{
	loop_counter *c = context;
	ioctl(c->fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* The offset in function of the conditional jump that closes its loop (the
 * last jne/jnz in it, from objdump of this test program): it runs once per
 * trip.  Not the loop's first instruction: a load or store there can fault
 * and restart, and an execute breakpoint counts each start. */
static long loop_branch_offset(const char *function)
{
	char command[512];
	snprintf(command, sizeof command,
	         "objdump -d --no-show-raw-insn --disassemble=%s /proc/%d/exe 2>/dev/null", function, (int)getpid());
	FILE *p = popen(command, "r");
	if (!p)
		return -1;
	char line[512], header[128];
	snprintf(header, sizeof header, " <%s>:", function);
	unsigned long start = 0, branch = 0;
	bool inside = false;
	while (fgets(line, sizeof line, p)) {
		if (strstr(line, header)) {
			start = strtoul(line, NULL, 16);
			inside = true;
			continue;
		}
		char *tab = strchr(line, '\t');
		if (inside && tab && (!strncmp(tab + 1, "jne", 3) || !strncmp(tab + 1, "jnz", 3)))
			branch = strtoul(line, NULL, 16);
	}
	pclose(p);
	return inside && branch > start ? (long)(branch - start) : -1;
}

/* The threads of this process now (/proc/self/status). */
static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int threads = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &threads) == 1)
			break;
	if (f)
		fclose(f);
	return threads;
}

static int breakpoint_open(void *address, bool inherit, char *why, size_t length)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof attr;
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = (uint64_t)(uintptr_t)address;
	attr.bp_len = sizeof(long);
	attr.disabled = 1;
	attr.inherit = inherit;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		snprintf(why, length, "an execute breakpoint cannot be opened here: %s", strerror(errno));
	return fd;
}

/* Criterion reports a test that dies of a signal as "CRASH!" without the
 * signal or the step: the kernel tests run many benchmarks, so the step
 * running is kept here and named on stderr before the signal ends the test
 * (it ended one in CI once, under load, and never here).  A signal handler
 * can only reach it through a static. */
static char running_step[160];

static void name_the_step_and_die(int signal_number)
{
	char line[256];
	int length = snprintf(line, sizeof line, "signal %d (%s) while running %s\n", signal_number,
	                      strsignal(signal_number), running_step);
	if (length > 0) (void)!write(STDERR_FILENO, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
	raise(signal_number);
}

static void name_the_step_on_signals(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT };
	struct sigaction action;
	memset(&action, 0, sizeof action);
	action.sa_handler = name_the_step_and_die;
	action.sa_flags = (int)SA_RESETHAND;
	for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &action, NULL);
}

Test(validate_benchmarks, every_kernel_runs_the_iterations_its_model_expects, .timeout = 120)
{
	/* The kernel whose loop a benchmark's iterations are; for two-thread
	 * benchmarks, both threads together (roles run it once each). */
	/* counted_thread_only: the other thread runs the same kernel (cln,
	 * shared) or its own (inv, shr) partly outside the region, so only the
	 * counted thread's trips are the model's: no inherit. */
	static const struct {
		const char *benchmark;
		const char *kernel;
		void *function;
		bool counted_thread_only;
	} table[] = {
		{ "page-faults", "vk_touch_stride", (void *)vk_touch_stride, true },
		{ "dtlb", "vk_store_int_stride", (void *)vk_store_int_stride, true },
		{ "dtlb-prefault", "vk_store_int_stride", (void *)vk_store_int_stride, true },
		{ "padding", "vk_store_int_pairs", (void *)vk_store_int_pairs, true },
		{ "padding-misaligned", "vk_store_int_pairs", (void *)vk_store_int_pairs, true },
		{ "stride", "vk_load_stride", (void *)vk_load_stride, true },
		{ "page-crossing", "vk_load_stride", (void *)vk_load_stride, true },
		{ "random", "vk_chase", (void *)vk_chase, true },
		{ "branch", "vk_branch_loops", (void *)vk_branch_loops, true },
		{ "branch-long", "vk_branch_loops", (void *)vk_branch_loops, true },
		{ "cycles", "vk_cycles", (void *)vk_cycles, true },
		{ "instructions", "vk_instructions", (void *)vk_instructions, true },
		{ "issued", "vk_issued", (void *)vk_issued, true },
		{ "loads", "vk_loads", (void *)vk_loads, true },
		{ "stores", "vk_stores", (void *)vk_stores, true },
		{ "fp", "vk_fp_ops", (void *)vk_fp_ops, true },
		{ "fp-single", "vk_fp_single", (void *)vk_fp_single, true },
		{ "fp-div", "vk_fp_div", (void *)vk_fp_div, true },
		{ "sqrt", "vk_sqrt", (void *)vk_sqrt, true },
		/* two threads: the reader's loop (the other thread) runs between the
		 * region's begin and end, which the first thread marks */
		{ "itv", "vk_itv_reader", (void *)vk_itv_reader, false },
		{ "shr", "vk_read_increment_stride", (void *)vk_read_increment_stride, true },
		{ "cln", "vk_read_increment_stride", (void *)vk_read_increment_stride, true },
		{ "inv", "vk_pingpong_serve", (void *)vk_pingpong_serve, true },
		{ "shared", "vk_load_stride", (void *)vk_load_stride, true },
		{ "shared-control", "vk_load_stride", (void *)vk_load_stride, true },
		/* icache and icache-l2 jump through generated code, which objdump
		 * cannot see: icache_chains_run_the_blocks_their_model_expects. */
	};
	name_the_step_on_signals();
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	size_t checked = 0;
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
		const validate_benchmark *b = validate_benchmark_find(table[k].benchmark);
		cr_assert_not_null(b, "no benchmark %s", table[k].benchmark);
		snprintf(running_step, sizeof running_step, "objdump of %s", table[k].kernel);
		long offset = loop_branch_offset(table[k].kernel);
		if (offset < 0)
			cr_skip_test("objdump cannot disassemble %s in this test program", table[k].kernel);
		char why[160];
		/* two spinning threads hand off slowly when the tests' other job
		 * holds a CPU: keep their sizes small */
		uint64_t run_sizes[] = { 1, 10, b->threads > 1 ? 100 : 1000 };
		for (size_t i = 0; i < 3; i++) {
			/* a fresh event per run: PERF_EVENT_IOC_RESET does not clear what
			 * an earlier run's threads added to it */
			loop_counter counter = { breakpoint_open((char *)table[k].function + offset,
			                                         !table[k].counted_thread_only, why, sizeof why) };
			if (counter.fd < 0)
				cr_skip_test("%s", why);
			validate_region region = { .open = loop_counter_open, .begin = loop_counter_begin, .end = loop_counter_end, .context = &counter };
			validate_params p;
			validate_params_init(&p, b, &machine, run_sizes[i]);
			validate_run_info info;
			memset(&info, 0, sizeof info);
			snprintf(running_step, sizeof running_step, "%s at size %llu", b->name,
			         (unsigned long long)run_sizes[i]);
			int threads = thread_count();
			cr_assert_eq(b->run(&p, &region, &info, &status), 0, "%s at %llu: %s", b->name,
			             (unsigned long long)run_sizes[i], status.message);
			/* A second thread's count joins the event when the thread is gone
			 * from the kernel, a moment after pthread_join returns (which only
			 * waits for its stack): wait for that before reading. */
			for (int wait = 0; wait < 10000 && thread_count() > threads; wait++)
				usleep(100);
			uint64_t counted = 0;
			cr_assert_eq(read(counter.fd, &counted, sizeof counted), (ssize_t)sizeof counted);
			cr_assert_eq(counted, b->expected_iterations(&p),
			             "%s at size %llu: the loop of %s ran %llu times in the region, the model expects %llu",
			             b->name, (unsigned long long)run_sizes[i], table[k].kernel, (unsigned long long)counted,
			             (unsigned long long)b->expected_iterations(&p));
			close(counter.fd);
			checked++;
		}
	}
	cr_assert_eq(checked, 3 * sizeof table / sizeof table[0]);
}

/* The generated block chains of icache and icache-l2: the kernel names
 * the first instruction and the ret of the block its model runs last;
 * this test checks those bytes are a block's dec and ret, puts its own
 * breakpoints there, and expects the dec once per lap of the chain that
 * reaches it and the ret once. */
typedef struct chain_counter {
	int fd[2];
	bool named;
	char why[160];
} chain_counter;

static int chain_watch(void *context, const validate_trip_points *points, plumb_status *status)
{
	(void)status;
	chain_counter *c = context;
	static const uint8_t dec_rdi[] = { 0x48, 0xff, 0xcf };
	cr_assert_eq(points->count, 2);
	cr_assert_eq(memcmp(points->address[0], dec_rdi, sizeof dec_rdi), 0, "not a block's dec %%rdi");
	cr_assert_eq(*(const uint8_t *)points->address[1], 0xc3, "not a block's ret");
	for (int i = 0; i < 2; i++) {
		c->fd[i] = breakpoint_open((void *)(uintptr_t)points->address[i], false, c->why, sizeof c->why);
		if (c->fd[i] < 0) return -1;
	}
	c->named = true;
	return 0;
}

static void chain_begin(void *context)
{
	chain_counter *c = context;
	for (int i = 0; i < 2; i++) {
		ioctl(c->fd[i], PERF_EVENT_IOC_RESET, 0);
		ioctl(c->fd[i], PERF_EVENT_IOC_ENABLE, 0);
	}
}

static void chain_end(void *context)
{
	chain_counter *c = context;
	for (int i = 0; i < 2; i++) ioctl(c->fd[i], PERF_EVENT_IOC_DISABLE, 0);
}

Test(validate_benchmarks, icache_chains_run_the_blocks_their_model_expects, .timeout = 60)
{
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	const char *names[] = { "icache", "icache-l2" };
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		const validate_benchmark *b = validate_benchmark_find(names[k]);
		cr_assert_not_null(b, "no benchmark %s", names[k]);
		uint64_t line = k == 0 ? machine.l1i_line : machine.l2_line;
		uint64_t blocks = 2 * (k == 0 ? machine.l1i_size : machine.l2_size) / line;
		uint64_t run_sizes[] = { 1, 10, blocks, blocks + 1, 2 * blocks + 5 };
		for (size_t i = 0; i < sizeof run_sizes / sizeof run_sizes[0]; i++) {
			chain_counter c = { .fd = { -1, -1 } };
			validate_region region = { .begin = chain_begin, .end = chain_end, .context = &c, .watch = chain_watch };
			validate_params p;
			validate_params_init(&p, b, &machine, run_sizes[i]);
			validate_run_info info;
			if (b->run(&p, &region, &info, &status) != 0) {
				if (c.why[0]) cr_skip_test("%s", c.why);
				cr_assert_fail("%s at %llu: %s", b->name, (unsigned long long)run_sizes[i], status.message);
			}
			cr_assert(c.named, "%s names no blocks to count", b->name);
			uint64_t dec = 0, ret = 0;
			cr_assert_eq(read(c.fd[0], &dec, sizeof dec), (ssize_t)sizeof dec);
			cr_assert_eq(read(c.fd[1], &ret, sizeof ret), (ssize_t)sizeof ret);
			uint64_t n = run_sizes[i];
			cr_expect_eq(ret, 1, "%s at %llu: the chain ended elsewhere", b->name, (unsigned long long)n);
			cr_expect_eq(dec, (n - 1) / blocks + 1, "%s at %llu: the last block ran %llu times", b->name,
			             (unsigned long long)n, (unsigned long long)dec);
			cr_expect_eq(b->expected_iterations(&p), n);
			close(c.fd[0]);
			close(c.fd[1]);
		}
	}
}

/* The library's own iteration check (validate_check_trips): every kernel
 * runs, in a fresh process, the loop trips its model expects, counted by
 * execute breakpoints on the instructions the kernel names. */
Test(validate_benchmarks, every_benchmark_passes_the_library_iteration_check, .timeout = 120)
{
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	size_t count, checked = 0;
	const validate_benchmark *const *all = validate_benchmarks(&count);
	for (size_t k = 0; k < count; k++) {
		const validate_benchmark *b = all[k];
		if (b->threads > machine.cpu_count)
			continue;   /* the runner does not run these either */
		uint64_t check_sizes[] = { 1, 10, b->threads > 1 ? 100 : 1000 };
		for (size_t i = 0; i < 3; i++) {
			validate_params p;
			validate_params_init(&p, b, &machine, check_sizes[i]);
			validate_trip_check check;
			cr_assert_eq(validate_check_trips(b, &p, VALIDATE_TRIP_CHECK_MAX, &check, &status), 0, "%s at %llu: %s", b->name,
			             (unsigned long long)check_sizes[i], status.message);
			if (check.state == VALIDATE_TRIPS_UNSUPPORTED)
				cr_skip_test("the iteration check is unsupported here: %s", check.reason);
			cr_assert_eq(check.state, VALIDATE_TRIPS_OK, "%s at %llu: %s (%s)", b->name,
			             (unsigned long long)check_sizes[i], validate_trip_state_name(check.state), check.reason);
			cr_assert_eq(check.counted, b->expected_iterations(&p));
			cr_assert_eq(check.expected, b->expected_iterations(&p));
			checked++;
		}
	}
	cr_assert_gt(checked, 3 * 16);
}

/* icache's trips come from two breakpoints on the block the model says
 * runs last: check them past one lap of the chain too. */
Test(validate_benchmarks, icache_trips_are_counted_across_laps_of_the_chain, .timeout = 60)
{
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	const validate_benchmark *b = validate_benchmark_find("icache");
	uint64_t blocks = 2 * machine.l1i_size / machine.l1i_line;
	uint64_t check_sizes[] = { blocks - 1, blocks, blocks + 1, 3 * blocks + 7 };
	for (size_t i = 0; i < 4; i++) {
		validate_params p;
		validate_params_init(&p, b, &machine, check_sizes[i]);
		validate_trip_check check;
		cr_assert_eq(validate_check_trips(b, &p, VALIDATE_TRIP_CHECK_MAX, &check, &status), 0, "%s", status.message);
		if (check.state == VALIDATE_TRIPS_UNSUPPORTED)
			cr_skip_test("the iteration check is unsupported here: %s", check.reason);
		cr_expect_eq(check.state, VALIDATE_TRIPS_OK, "at %llu: %s", (unsigned long long)check_sizes[i], check.reason);
		cr_expect_eq(check.counted, check_sizes[i]);
	}
}

/* A kernel that runs a wrong number of trips is caught, whichever side is
 * wrong: the wrapper (it passes the kernel one trip too many) or the model
 * (it expects half the trips the wrapper runs). */
static int off_by_one_run(const validate_params *p, validate_region *region, validate_run_info *info,
                          plumb_status *status)
{
	static uint64_t words[2048];
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, vk_load_stride_trip, false, status) != 0)
		return -1;
	validate_region_begin(region);
	info->checksum = vk_load_stride(words, 8, p->size + 1);   /* the injected mismatch */
	validate_region_end(region);
	return 0;
}

static uint64_t size_trips(const validate_params *p)
{
	return p->size;
}

static uint64_t half_of_cycles_trips(const validate_params *p)
{
	return validate_iterations_for(p->size, 2 * VK_CYCLES_PER_ITERATION);
}

Test(validate_benchmarks, a_kernel_running_the_wrong_number_of_trips_is_caught)
{
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	validate_benchmark wrapper = { .name = "off-by-one", .threads = 1, .event_count = 0, .run = off_by_one_run,
	                               .expected_iterations = size_trips };
	validate_params p;
	validate_params_init(&p, &wrapper, &machine, 100);
	validate_trip_check check;
	cr_assert_eq(validate_check_trips(&wrapper, &p, VALIDATE_TRIP_CHECK_MAX, &check, &status), 0, "%s", status.message);
	if (check.state == VALIDATE_TRIPS_UNSUPPORTED)
		cr_skip_test("the iteration check is unsupported here: %s", check.reason);
	cr_expect_eq(check.state, VALIDATE_TRIPS_MISMATCH);
	cr_expect_eq(check.expected, 100);
	cr_expect_eq(check.counted, 101);
	cr_expect(strstr(check.reason, "ran 101 trips, the model expects 100") != NULL, "%s", check.reason);

	validate_benchmark wrong_model = *validate_benchmark_find("cycles");
	wrong_model.expected_iterations = half_of_cycles_trips;   /* a model that disagrees with the kernel */
	validate_params_init(&p, &wrong_model, &machine, 1600);
	cr_assert_eq(validate_check_trips(&wrong_model, &p, VALIDATE_TRIP_CHECK_MAX, &check, &status), 0, "%s", status.message);
	cr_expect_eq(check.state, VALIDATE_TRIPS_MISMATCH);
	cr_expect_eq(check.expected, 50);
	cr_expect_eq(check.counted, 100);
}

/* Where no breakpoint can be opened, the check says unsupported with the
 * reason: it never falls back to the model's own count. */
static int unwatchable_run(const validate_params *p, validate_region *region, validate_run_info *info,
                           plumb_status *status)
{
	/* A kernel address: no user-space breakpoint may watch it. */
	if (validate_region_open(region, status) != 0 ||
	    validate_watch_loop(region, (const void *)(uintptr_t)0xffffffff81000000ull, false, status) != 0)
		return -1;
	validate_region_begin(region);
	info->checksum = vk_cycles(p->size);
	validate_region_end(region);
	return 0;
}

Test(validate_benchmarks, an_uncountable_loop_is_unsupported_never_the_formula)
{
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	validate_benchmark b = { .name = "unwatchable", .threads = 1, .run = unwatchable_run,
	                         .expected_iterations = size_trips };
	validate_params p;
	validate_params_init(&p, &b, &machine, 10);
	validate_trip_check check;
	cr_assert_eq(validate_check_trips(&b, &p, VALIDATE_TRIP_CHECK_MAX, &check, &status), 0, "%s", status.message);
	cr_expect_eq(check.state, VALIDATE_TRIPS_UNSUPPORTED, "%s", validate_trip_state_name(check.state));
	cr_expect_eq(check.counted, 0);
	cr_expect_eq(check.expected, 10);
	cr_expect(strstr(check.reason, "execute breakpoint cannot be opened") != NULL, "%s", check.reason);
	/* And a benchmark whose model has no trips is not checked, with why. */
	b.expected_iterations = NULL;
	cr_assert_eq(validate_check_trips(&b, &p, VALIDATE_TRIP_CHECK_MAX, &check, &status), 0);
	cr_expect_eq(check.state, VALIDATE_TRIPS_NOT_CHECKED);
	cr_expect(strstr(check.reason, "no iteration model") != NULL, "%s", check.reason);
}

/* The page-fault kernels through one source (0 perf, 1 PAPI): the count is
 * exactly the model's; a hardware event that cannot be counted is NaN. */
static void page_faults_are_exact_through(int source)
{
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	const char *names[] = { "page-faults", "dtlb", "padding", "padding-misaligned" };
	const char *source_name = source == 0 ? "perf" : "papi";
	for (int k = 0; k < 4; k++) {
		const validate_benchmark *b = validate_benchmark_find(names[k]);
		int event = k == 0 ? 0 : 1;
		for (uint64_t n = 1; n <= 1000; n *= 10) {
			validate_params p;
			validate_params_init(&p, b, &machine, n);
			bool sources[2] = { source == 0, source == 1 };
			double values[2][VALIDATE_MAX_EVENTS];
			validate_run_info info;
			cr_assert_eq(validate_run_once(b, &p, sources, values, NULL, &info, &status), 0, "%s", status.message);
			double expected = b->events[event].predict(&p);
			cr_expect_eq(values[source][event], expected, "%s %s at %llu: %g", names[k], source_name,
			             (unsigned long long)n, values[source][event]);
			/* The other source was not asked: never a number. */
			cr_expect(isnan(values[1 - source][event]));
		}
	}
}

Test(validate_benchmarks, page_faults_are_exact_through_perf)
{
	REQUIRE_COUNTER_BACKEND("perf");
	page_faults_are_exact_through(0);
}

Test(validate_benchmarks, page_faults_are_exact_through_papi)
{
	REQUIRE_COUNTER_BACKEND("papi");
	page_faults_are_exact_through(1);
}

/* No PMU: the hardware event of the padding kernels is unsupported through
 * every source that runs, NaN and never 0. */
Test(validate_benchmarks, uncountable_hardware_events_are_nan_not_zero)
{
	counter_environment environment;
	counter_environment_read(&environment);
	if (environment.cpu_pmu_present)
		cr_skip_test("this machine has a CPU PMU: its hardware events count");
	validate_machine machine;
	plumb_status status;
	cr_assert_eq(validate_machine_detect(&machine, &status), 0);
	const validate_benchmark *b = validate_benchmark_find("padding");
	validate_params p;
	validate_params_init(&p, b, &machine, 10);
	bool sources[2] = { counter_backend_usable("perf", &status) == 0, counter_backend_usable("papi", &status) == 0 };
	if (!sources[0] && !sources[1])
		cr_skip_test("neither perf_event nor PAPI counts here: %s", status.message);
	double values[2][VALIDATE_MAX_EVENTS];
	validate_run_info info;
	cr_assert_eq(validate_run_once(b, &p, sources, values, NULL, &info, &status), 0, "%s", status.message);
	cr_expect(isnan(values[0][0]), "perf: %g", values[0][0]);
	cr_expect(isnan(values[1][0]), "papi: %g", values[1][0]);
}

/* A stray breakpoint trap (SIGTRAP the kernel's handler did not claim)
 * once ended padding-misaligned's iteration check in a full test run: the
 * check is now run again.  The benchmark below is padding's, dying of
 * SIGTRAP in its first `trap_runs` runs (counted in memory the forked
 * runs share). */
static volatile int *trap_run_count;
static int trap_runs;

static int trapping_padding_run(const validate_params *p, validate_region *region, validate_run_info *info,
                                plumb_status *status)
{
	if (__atomic_fetch_add(trap_run_count, 1, __ATOMIC_SEQ_CST) < trap_runs)
		raise(SIGTRAP);
	return validate_bench_padding.run(p, region, info, status);
}

static int trip_check_with_traps(int traps, validate_trip_check *check, plumb_status *status,
                                 validate_machine *machine)
{
	trap_run_count = mmap(NULL, sizeof *trap_run_count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq((void *)trap_run_count, MAP_FAILED);
	*trap_run_count = 0;
	trap_runs = traps;
	validate_benchmark trapping = validate_bench_padding;
	trapping.run = trapping_padding_run;
	cr_assert_eq(validate_machine_detect(machine, status), 0);
	validate_params p;
	validate_params_init(&p, &trapping, machine, 10);
	return validate_check_trips(&trapping, &p, VALIDATE_TRIP_CHECK_MAX, check, status);
}

Test(validate_benchmarks, a_stray_breakpoint_trap_is_tried_again)
{
	validate_machine machine;
	validate_trip_check check;
	plumb_status status;
	int rc = trip_check_with_traps(VALIDATE_TRIP_TRIES - 1, &check, &status, &machine);
	cr_assert_eq(rc, 0, "%s", status.message);
	cr_assert_eq(*trap_run_count, VALIDATE_TRIP_TRIES, "the check ran %d times", *trap_run_count);
	if (check.state == VALIDATE_TRIPS_UNSUPPORTED)
		cr_skip_test("the iteration check is unsupported here: %s", check.reason);
	cr_assert_eq(check.state, VALIDATE_TRIPS_OK, "%s", check.reason);
	cr_assert_eq(check.counted, 10);
	munmap((void *)trap_run_count, sizeof *trap_run_count);
}

Test(validate_benchmarks, a_trap_in_every_try_fails_the_check_with_the_signal)
{
	validate_machine machine;
	validate_trip_check check;
	plumb_status status;
	int rc = trip_check_with_traps(VALIDATE_TRIP_TRIES, &check, &status, &machine);
	cr_assert_eq(rc, -1);
	cr_assert_eq(*trap_run_count, VALIDATE_TRIP_TRIES, "the check ran %d times", *trap_run_count);
	cr_assert(strstr(status.message, "signal 5"), "%s", status.message);
	munmap((void *)trap_run_count, sizeof *trap_run_count);
}
