/* The real kernel under plumbgrind, plumb's Valgrind tool (docs/valgrind-tool.md).
 *
 * `plumb validate --exec BENCH` runs one case with its region marked for
 * plumbgrind (PLUMB_VG_REGION_BEGIN/END "plumb-validate" around exactly the
 * code the counters see), and its trace is read while it runs:
 *
 *  - exact counts: instructions, loads and stores of the region, attributed
 *    to the benchmark's kernel function by instruction address (the code map
 *    plumbgrind writes), so the harness's calls and returns around the
 *    kernel are left out as cachegrind's per-function counts left them out;
 *  - per-level counts: the whole trace through the simulator with this
 *    machine's caches, the region's figures read for the counted thread:
 *    what the real kernel's references do to the caches, TLB and coherence;
 *  - the emitter check: the simulator column is fed each benchmark's
 *    emitter, a model of the kernel's references.  The counted thread's
 *    region references of the kernel code (functions vk_*, or code with no
 *    symbol: the generated I-cache chains) are compared one by one with the
 *    emitter's: same kind, same size, and the same addresses up to where
 *    each page lies (one shift per emitted page, a whole number of lines).
 *    Repeated reads of one word in a row (a spin loop's) count once in both,
 *    and the kernel's final `ret` reads the stack, which an emitter that
 *    models no stack leaves out. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "instrument/instrument.h"
#include "sim/sim.h"
#include "trace/trace.h"
#include "plumb/valgrind.h"
#include "validate/internal.h"
#include "validate/native.h"

#define REGION_NAME "plumb-validate"
/* References of each stream kept for the one-by-one comparison. */
#define COMPARE_CAPACITY (4u << 20)

/* ---- the marked run (what runs under Valgrind) ---- */

static void marked_begin(void *context)
{
	(void)context;
	PLUMB_VG_REGION_BEGIN(REGION_NAME);
}

static void marked_end(void *context)
{
	(void)context;
	PLUMB_VG_REGION_END(REGION_NAME);
}

int validate_run_marked(const validate_benchmark *benchmark, const validate_params *params, validate_run_info *info,
                        plumb_status *status)
{
	memset(info, 0, sizeof *info);
	validate_region region = { .begin = marked_begin, .end = marked_end };
	return benchmark->run(params, &region, info, status);
}

void validate_exec_request_default(validate_exec_request *request)
{
	*request = (validate_exec_request){ .size = 1, .inner_trips = 10 };
}

int validate_exec(const validate_benchmark *benchmark, const validate_exec_request *request, plumb_status *status)
{
	validate_machine machine;
	if (validate_machine_detect(&machine, status) != 0) return -1;
	validate_params params;
	validate_params_init(&params, benchmark, &machine, request->size);
	if (request->have_pad) params.pad = request->pad;
	if (request->have_base_offset) params.base_offset = request->base_offset;
	params.inner_trips = request->inner_trips;
	params.evict_by_sweep = true;
	validate_run_info info;
	return validate_run_marked(benchmark, &params, &info, status);
}

/* ---- per-instruction counts of the region ---- */

typedef struct code_count {
	uint64_t address;               /* instruction address; 0 = empty slot */
	uint64_t executions, reads, writes;
} code_count;

typedef struct code_table {
	code_count *slots;
	size_t capacity, used;
} code_table;

static code_count *code_slot(code_table *t, uint64_t address)
{
	if (t->used * 2 >= t->capacity) {
		size_t capacity = t->capacity ? t->capacity * 2 : 1024;
		code_count *slots = calloc(capacity, sizeof *slots);
		if (!slots) return NULL;
		for (size_t i = 0; i < t->capacity; i++) {
			if (!t->slots[i].address) continue;
			size_t k = (size_t)(t->slots[i].address * 0x9e3779b97f4a7c15ull >> 20) & (capacity - 1);
			while (slots[k].address) k = (k + 1) & (capacity - 1);
			slots[k] = t->slots[i];
		}
		free(t->slots);
		t->slots = slots;
		t->capacity = capacity;
	}
	size_t k = (size_t)(address * 0x9e3779b97f4a7c15ull >> 20) & (t->capacity - 1);
	while (t->slots[k].address && t->slots[k].address != address) k = (k + 1) & (t->capacity - 1);
	if (!t->slots[k].address) {
		t->slots[k].address = address;
		t->used++;
	}
	return &t->slots[k];
}

/* ---- streams compared ---- */

typedef struct reference {
	uint64_t address, instruction;
	uint16_t size;
	uint8_t kind;
} reference;

typedef struct stream {
	reference *items;
	size_t count, capacity;
	uint64_t total;                 /* appended, including those past the capacity */
	bool has_instructions;
} stream;

static int stream_add(stream *s, uint64_t address, uint64_t instruction, uint16_t size, uint8_t kind)
{
	/* A spin loop's repeated reads of one word are one reference to a cache. */
	if (kind == TRACE_READ && s->count && s->items[s->count - 1].kind == TRACE_READ &&
	    s->items[s->count - 1].address == address && s->items[s->count - 1].size == size)
		return 0;
	s->total++;
	if (s->count == s->capacity) {
		if (s->capacity >= COMPARE_CAPACITY) return 0;
		size_t capacity = s->capacity ? s->capacity * 2 : 4096;
		reference *items = realloc(s->items, capacity * sizeof *items);
		if (!items) return -1;
		s->items = items;
		s->capacity = capacity;
	}
	s->items[s->count++] = (reference){ address, instruction, size, kind };
	return 0;
}

/* The emitter's counted-thread region, into a stream. */
typedef struct emitted_sink {
	stream *s;
	bool in_region;
} emitted_sink;

static int emitted_records(void *context, const trace_record *records, size_t count, plumb_status *status)
{
	emitted_sink *e = context;
	if (!e->in_region) return 0;
	for (size_t i = 0; i < count; i++) {
		if (records[i].thread != 0) continue;
		if (records[i].kind == TRACE_INSTRUCTION) e->s->has_instructions = true;
		if (stream_add(e->s, records[i].address, 0, records[i].size, records[i].kind) != 0)
			return plumb_fail(status, ENOMEM, "out of memory for the emitted stream");
	}
	return 0;
}

static int emitted_mark(void *context, validate_mark mark, plumb_status *status)
{
	(void)status;
	emitted_sink *e = context;
	e->in_region = mark == VALIDATE_REGION_BEGIN;
	return 0;
}

/* Same kinds and sizes, and each emitted page shifted by one whole number
 * of lines wherever it lies (the emitter's stack page stands for wherever
 * the stack is). */
static void compare_streams(const validate_params *params, const stream *emitted, const stream *kernel,
                            validate_traced *out)
{
	uint64_t page = params->machine->page_size ? params->machine->page_size : 4096;
	uint64_t line = params->machine->l1d_line ? params->machine->l1d_line : 64;
	size_t n = emitted->count < kernel->count ? emitted->count : kernel->count;
	code_table shifts = { 0 };
	static const char *const kinds[] = { "fetch", "read", "write", "modify" };
	out->compared = n;
	out->comparison = VALIDATE_EMITTER_AGREES;
	for (size_t i = 0; i < n; i++) {
		const reference *a = &emitted->items[i], *b = &kernel->items[i];
		uint64_t shift = b->address - a->address, emitted_page = a->address / page;
		const char *why = NULL;
		if (a->kind != b->kind || a->size != b->size) why = "another kind or size";
		else if (emitted_page != VALIDATE_EMIT_STACK / page && shift % line != 0) why = "another place in its line";
		else {
			code_count *c = code_slot(&shifts, emitted_page + 1);
			if (!c) why = "out of memory";
			else if (c->executions++ == 0) c->reads = shift;
			else if (c->reads != shift) why = "another page layout";
		}
		if (why) {
			out->comparison = VALIDATE_EMITTER_DIFFERS;
			snprintf(out->comparison_text, sizeof out->comparison_text,
			         "differs at reference %zu of %zu: the emitter has a %u-byte %s at 0x%llx, the kernel a %u-byte %s "
			         "at 0x%llx (%s)", i + 1, n, a->size, a->kind < 4 ? kinds[a->kind] : "?",
			         (unsigned long long)a->address, b->size, b->kind < 4 ? kinds[b->kind] : "?",
			         (unsigned long long)b->address, why);
			free(shifts.slots);
			return;
		}
	}
	free(shifts.slots);
	if (emitted->total != kernel->total) {
		out->comparison = VALIDATE_EMITTER_DIFFERS;
		snprintf(out->comparison_text, sizeof out->comparison_text,
		         "the kernel makes %llu references in the counted thread's region, the emitter %llu (the first %zu agree)",
		         (unsigned long long)kernel->total, (unsigned long long)emitted->total, n);
		return;
	}
	snprintf(out->comparison_text, sizeof out->comparison_text,
	         "agrees: %llu references of the counted thread's region%s, same kinds, sizes and line addresses "
	         "up to where each page lies", (unsigned long long)kernel->total,
	         kernel->total > n ? " (the first 4194304 compared one by one)" : "");
}

/* ---- the plumbgrind run ---- */

static bool is_region_marker(const trace_record *r)
{
	const char *name = trace_is_marker(r) ? trace_region_name(r) : NULL;
	return name && strcmp(name, REGION_NAME) == 0;
}

/* What the run's records tell besides the simulation: thread 0's region
 * markers, and inside the region each code address's counts and the
 * references the kernel made (the stream compared with the emitter's). */
typedef struct kernel_watch {
	code_table table;
	stream real;
	int depth;
	uint64_t last_instruction, markers;
	bool has_instructions;   /* the emitter's stream has fetches */
} kernel_watch;

static int watch_kernel(sim_feed *feed, const trace_record *records, size_t n, const trace_compact *compact,
                        plumb_status *status)
{
	(void)compact;   /* records_only */
	kernel_watch *w = feed->context;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &records[i];
		if (r->thread != 0) continue;
		if (trace_is_marker(r)) {
			if (is_region_marker(r)) {
				w->depth += r->kind == TRACE_REGION_BEGIN ? 1 : -1;
				w->markers++;
			}
			continue;
		}
		if (r->kind == TRACE_INSTRUCTION) w->last_instruction = r->address;
		if (w->depth <= 0) continue;
		uint64_t code = r->kind == TRACE_INSTRUCTION ? r->address
		              : (r->flags & TRACE_HAS_INSTRUCTION_ADDRESS) && r->instruction_address ? r->instruction_address
		              : w->last_instruction;
		code_count *c = code_slot(&w->table, code);
		/* Without the emitter's fetches, only data is kept, so a spin
		 * loop's reads are consecutive and count once. */
		if (!c || ((r->kind != TRACE_INSTRUCTION || w->has_instructions) &&
		           stream_add(&w->real, r->address, code, r->size, r->kind) != 0))
			return plumb_fail(status, ENOMEM, "out of memory for the traced region");
		if (r->kind == TRACE_INSTRUCTION) c->executions++;
		if (r->kind == TRACE_READ || r->kind == TRACE_MODIFY) c->reads++;
		if (r->kind == TRACE_WRITE || r->kind == TRACE_MODIFY) c->writes++;
	}
	return 0;
}

static int self_program(const char *self_path, char *self, size_t length, plumb_status *status)
{
	if (self_path) {
		snprintf(self, length, "%s", self_path);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", self, length - 1);
	if (n <= 0) return plumb_fail_errno(status, errno, "cannot find the plumb program");
	self[n] = 0;
	return 0;
}

bool validate_plumbgrind_available(char *reason, size_t length)
{
	char dir[PATH_MAX], valgrind[PATH_MAX];
	plumb_status status;
	const char *name = secure_getenv("PLUMB_VALGRIND");
	if (instrument_find_valgrind(name && name[0] ? name : "valgrind", valgrind, sizeof valgrind, &status) != 0 ||
	    instrument_find_tool(dir, sizeof dir, &status) != 0) {
		snprintf(reason, length, "%s", status.message);
		return false;
	}
#if !defined(PLUMB_VG_HAVE_VALGRIND_H)
	snprintf(reason, length, "this plumb was built without valgrind.h: its regions carry no plumbgrind markers");
	return false;
#else
	return true;
#endif
}

static bool kernel_function(const char *function)
{
	/* The assembly kernels (kernels.c), and code without a symbol: the
	 * I-cache benchmarks' generated chains. */
	return !strncmp(function, "vk_", 3) || !strcmp(function, "???");
}

int validate_plumbgrind_trace(const validate_benchmark *benchmark, const validate_params *params,
                              const char *self_path, const char *preset, const char *const *settings,
                              size_t setting_count, validate_traced *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	for (int e = 0; e < VALIDATE_MAX_EVENTS; e++) out->instrumented[e] = out->simulated[e] = out->emitted[e] = NAN;
	char reason[PLUMB_MESSAGE_MAX];
	if (!validate_plumbgrind_available(reason, sizeof reason)) return plumb_fail(status, ENOENT, "%s", reason);
	char self[PATH_MAX];
	if (self_program(self_path, self, sizeof self, status) != 0) return -1;
	char size[32], pad[32], base[32], trips[32];
	snprintf(size, sizeof size, "%llu", (unsigned long long)params->size);
	snprintf(pad, sizeof pad, "%llu", (unsigned long long)params->pad);
	snprintf(base, sizeof base, "%llu", (unsigned long long)params->base_offset);
	snprintf(trips, sizeof trips, "%u", params->inner_trips);
	char *argv[] = { self, "validate", "--exec", (char *)benchmark->name, "--exec-size", size, "--exec-pad", pad,
	                 "--exec-base-offset", base, "--exec-inner-trips", trips, NULL };

	/* The emitter's stream first: whether it models instruction fetches
	 * decides what of the real stream is kept. */
	stream emitted = { 0 };
	if (benchmark->emit) {
		emitted_sink es = { &emitted, false };
		validate_sink sink = { emitted_records, emitted_mark, &es };
		if (benchmark->emit(params, &sink, status) != 0) {
			free(emitted.items);
			return -1;
		}
	}
	sim_config config;
	if (validate_sim_configure(benchmark, params, preset, settings, setting_count, &config, status) != 0) {
		free(emitted.items);
		return -1;
	}
	sim *simulator = NULL;
	if (sim_new(&simulator, &config, status) != 0) {
		free(emitted.items);
		return -1;
	}
	trace_reader *reader = NULL;
	/* Valgrind runs one thread at a time: a short quantum lets a spinning
	 * thread hand over soon (the ping-pong of inv needs a switch per round). */
	static const char *const options[] = { "--fair-sched=yes", NULL };
	if (trace_reader_open_command_options(&reader, argv, benchmark->threads > 1 ? options : NULL, status) != 0) {
		sim_free(simulator);
		free(emitted.items);
		return -1;
	}
	kernel_watch watch = { .has_instructions = emitted.has_instructions };
	/* records, which the watch reads, in batches of 4096 */
	sim_feed feed = { .sims = &simulator, .count = 1, .records_only = true, .batch = 4096,
	                  .observe = watch_kernel, .context = &watch };
	int rc = sim_feed_reader(&feed, reader, status);
	code_table table = watch.table;
	stream real = watch.real;
	uint64_t markers = watch.markers;
	trace_code_map *map = NULL;
	if (rc == 0 && trace_reader_code_map(reader, &map, status) != 0) rc = -1;
	plumb_status close_status;
	if (trace_reader_close(reader, &close_status) != 0 && rc == 0) {
		*status = close_status;
		rc = -1;
	}
	if (rc == 0 && markers < 2)
		rc = plumb_fail(status, EIO, "%s: plumbgrind's trace holds no region (the --exec run marked none)",
		                benchmark->name);
	if (rc == 0 && !map) rc = plumb_fail(status, EIO, "plumbgrind wrote no code map: the kernel cannot be named");

	/* Exact counts of the kernel function, and the simulated region. */
	const sim_region_stats *region = NULL;
	for (size_t i = 0; rc == 0 && i < sim_region_count(simulator); i++) {
		const sim_region_stats *candidate = sim_region(simulator, i);
		if (candidate->thread == 0 && strcmp(candidate->name, REGION_NAME) == 0) region = candidate;
	}
	for (int e = 0; rc == 0 && e < benchmark->event_count; e++) {
		const validate_event *ev = &benchmark->events[e];
		bool known = false;
		if (region && ev->sim != VALIDATE_SIM_NONE) {
			uint64_t v = validate_sim_value(&region->stats, ev->sim, &known);
			if (known) out->simulated[e] = (double)v;
		}
		const char *function = ev->instrumented_function;
		double sum = 0;
		switch (ev->instrumented) {
		case VALIDATE_INSTR_INSTRUCTIONS:
		case VALIDATE_INSTR_READS:
		case VALIDATE_INSTR_WRITES:
			for (size_t k = 0; k < table.capacity; k++) {
				const code_count *c = &table.slots[k];
				const char *name, *file;
				uint32_t line;
				if (!c->address || !trace_code_map_lookup(map, c->address, &name, &file, &line) ||
				    strcmp(name, function) != 0)
					continue;
				sum += (double)(ev->instrumented == VALIDATE_INSTR_INSTRUCTIONS ? c->executions
				                : ev->instrumented == VALIDATE_INSTR_READS ? c->reads : c->writes);
			}
			out->instrumented[e] = sum;
			break;
		case VALIDATE_INSTR_D1_MISSES:
		case VALIDATE_INSTR_LL_MISSES:
		case VALIDATE_INSTR_I1_MISSES:
			/* The simulator's misses of the real kernel's region (this machine's
			 * L1I, L1D and L2, no prefetcher). */
			if (region) {
				const sim_core_stats *st = &region->stats;
				out->instrumented[e] = (double)(ev->instrumented == VALIDATE_INSTR_D1_MISSES
				        ? st->cache[SIM_L1D].misses[SIM_READ] + st->cache[SIM_L1D].misses[SIM_WRITE]
				        : ev->instrumented == VALIDATE_INSTR_LL_MISSES
				        ? st->cache[SIM_L2].misses[SIM_READ] + st->cache[SIM_L2].misses[SIM_WRITE]
				        : st->cache[SIM_L1I].misses[SIM_IFETCH]);
			}
			break;
		case VALIDATE_INSTR_BRANCH_MISSES:
			snprintf(out->reasons[e], sizeof out->reasons[e], "plumbgrind counts no branch mispredictions");
			break;
		case VALIDATE_INSTR_NONE:
			break;
		}
	}

	/* The emitter check. */
	if (rc == 0 && !benchmark->emit) {
		out->comparison = VALIDATE_EMITTER_NOT_COMPARED;
		snprintf(out->comparison_text, sizeof out->comparison_text, "%s has no emitter", benchmark->name);
	} else if (rc == 0) {
		/* The real kernel's references, as the emitter models them. */
		stream kernel = { 0 };
		bool emits_stack = false;
		for (size_t i = 0; i < emitted.count; i++)
			emits_stack |= emitted.items[i].address / params->machine->page_size ==
			               VALIDATE_EMIT_STACK / params->machine->page_size;
		for (size_t i = 0; rc == 0 && i < real.count; i++) {
			const reference *r = &real.items[i];
			const char *name, *file;
			uint32_t line;
			if (!trace_code_map_lookup(map, r->instruction, &name, &file, &line) || !kernel_function(name)) continue;
			if (!emits_stack && r->kind == TRACE_READ && r->size == 8 && i + 1 < real.count) {
				/* The kernels are leaves that end in `ret` (kernels.h): the
				 * last reference before the harness's code is its stack read. */
				const char *next_name;
				if (trace_code_map_lookup(map, real.items[i + 1].instruction, &next_name, &file, &line) &&
				    !kernel_function(next_name))
					continue;
			}
			if (stream_add(&kernel, r->address, r->instruction, r->size, r->kind) != 0)
				rc = plumb_fail(status, ENOMEM, "out of memory for the kernel's stream");
		}
		if (rc == 0 && kernel.total == 0 && emitted.total > 0) {
			out->comparison = VALIDATE_EMITTER_NOT_COMPARED;
			snprintf(out->comparison_text, sizeof out->comparison_text,
			         "not compared one by one: the counted thread's region runs no kernel (C code, flag "
			         "handshakes); compare the simulated counts instead");
		} else if (rc == 0) {
			compare_streams(params, &emitted, &kernel, out);
		}
		free(kernel.items);
		/* The simulator on the emitter, for the per-level comparison. */
		char reasons[VALIDATE_MAX_EVENTS][PLUMB_MESSAGE_MAX];
		if (rc == 0)
			rc = validate_simulate(benchmark, params, preset, settings, setting_count, out->emitted, reasons, status);
	}
	/* Where nothing was compared one by one, the per-level counts say what
	 * the real kernel does against the emitter. */
	if (rc == 0 && out->comparison == VALIDATE_EMITTER_NOT_COMPARED && benchmark->emit) {
		for (int e = 0; e < benchmark->event_count; e++) {
			if (isnan(out->simulated[e]) || isnan(out->emitted[e])) continue;
			size_t used = strlen(out->comparison_text);
			snprintf(out->comparison_text + used, sizeof out->comparison_text - used,
			         "; simulated %s: %.0f for the real kernel, %.0f for the emitter", benchmark->events[e].name,
			         out->simulated[e], out->emitted[e]);
		}
	}
	trace_code_map_free(map);
	free(emitted.items);
	free(table.slots);
	free(real.items);
	sim_free(simulator);
	return rc;
}
