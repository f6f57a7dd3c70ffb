/* Memory, flushing, the two-thread harness and the emitter shared by the
 * validation benchmarks (see internal.h for why each is built this way). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/arena.h"
#include "validate/internal.h"

int validate_memory_map(validate_memory *m, size_t size, bool prefault, plumb_status *status)
{
	long page_size = sysconf(_SC_PAGESIZE);
	size_t page = page_size > 0 ? (size_t)page_size : 4096;
	if (size == 0) size = page;
	size = (size + page - 1) / page * page;
	/* Pages are touched, so more than the machine has would end in the
	 * OOM killer rather than an error: refuse with the numbers instead. */
	uint64_t available = arena_memory_available();
	if (available && size > available * 9 / 10)
		return plumb_fail(status, ENOMEM, "needs %zu MiB of memory but only %llu MiB are available", size >> 20,
		                  (unsigned long long)(available >> 20));
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	if (p == MAP_FAILED)
		return plumb_fail_errno(status, errno, "cannot map %zu bytes", size);
	/* Best effort: without THP support the call fails and pages are small anyway. */
	(void)madvise(p, size, MADV_NOHUGEPAGE);
	m->base = p;
	m->size = size;
	if (prefault)
		for (size_t offset = 0; offset < size; offset += page)
			((volatile uint8_t *)m->base)[offset] = 0;
	return 0;
}

void validate_memory_unmap(validate_memory *m)
{
	if (m->base) munmap(m->base, m->size);
	m->base = NULL;
	m->size = 0;
}

void validate_flush(const void *p, size_t length, unsigned line)
{
	if (line == 0) line = 64;
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(line - 1), end = (uintptr_t)p + length;
	for (uintptr_t a = start; a < end; a += line)
		__asm__ __volatile__("clflush (%0)" :: "r"(a) : "memory");
	__asm__ __volatile__("mfence" ::: "memory");
}

int validate_evict_sweep(size_t bytes, unsigned line, plumb_status *status)
{
	validate_memory m = { 0 };
	if (validate_memory_map(&m, bytes, true, status) != 0) return -1;
	if (line == 0) line = 64;
	/* Two passes so that an LRU cache of up to bytes/2 holds only sweep lines. */
	uint64_t sum = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t offset = 0; offset < m.size; offset += line)
			sum += ((volatile uint8_t *)m.base)[offset];
	__asm__ __volatile__("" :: "r"(sum) : "memory");
	validate_memory_unmap(&m);
	return 0;
}

int validate_make_uncached(const validate_params *params, const void *p, size_t length,
                           plumb_status *status)
{
	const validate_machine *machine = params->machine;
	if (params->evict_by_sweep) {
		/* Four times the L2, the largest cache Valgrind's model is given. */
		uint64_t bytes = machine->l2_size * 4;
		if (bytes < machine->l1d_size * 4) bytes = machine->l1d_size * 4;
		return validate_evict_sweep(bytes, machine->l1d_line, status);
	}
	validate_flush(p, length, machine->l1d_line < machine->l2_line ? machine->l1d_line : machine->l2_line);
	return 0;
}

void validate_spin_barrier_init(validate_spin_barrier *b)
{
	atomic_init(&b->arrived, 0);
	atomic_init(&b->generation, 0);
}

void validate_spin_barrier_wait(validate_spin_barrier *b)
{
	unsigned generation = atomic_load_explicit(&b->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) == 1) {
		atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
		atomic_store_explicit(&b->generation, generation + 1, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&b->generation, memory_order_acquire) == generation)
		__asm__ __volatile__("pause" ::: "memory");
}

typedef struct role_start {
	validate_role_fn role;
	void *context;
	int cpu;
	int pin_error;
} role_start;

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *second_role(void *argument)
{
	role_start *start = argument;
	start->pin_error = pin(start->cpu);
	start->role(1, start->context);
	return NULL;
}

int validate_two_threads(const validate_machine *machine, validate_role_fn role, void *context,
                         plumb_status *status)
{
	cpu_set_t saved;
	CPU_ZERO(&saved);
	bool restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
	int error = pin(machine->cpus[0]);
	if (error != 0)
		return plumb_fail_errno(status, error, "cannot pin to CPU %d", machine->cpus[0]);
	role_start start = { role, context, machine->cpus[1], 0 };
	pthread_t thread;
	error = pthread_create(&thread, NULL, second_role, &start);
	if (error != 0) {
		if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
		return plumb_fail_errno(status, error, "cannot start the second thread");
	}
	role(0, context);
	pthread_join(thread, NULL);
	if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
	if (start.pin_error != 0)
		return plumb_fail_errno(status, start.pin_error, "cannot pin to CPU %d", machine->cpus[1]);
	return 0;
}

void validate_emitter_init(validate_emitter *e, validate_sink *sink, plumb_status *status)
{
	e->sink = sink;
	e->status = status;
	e->count = 0;
	e->time = 0;
	e->failed = 0;
}

static int flush_records(validate_emitter *e)
{
	if (e->failed) return -1;
	if (e->count && e->sink->records &&
	    e->sink->records(e->sink->context, e->records, e->count, e->status) != 0)
		e->failed = 1;
	e->count = 0;
	return e->failed ? -1 : 0;
}

int validate_emit(validate_emitter *e, uint32_t thread, trace_kind kind, uint64_t address,
                  uint16_t size)
{
	if (e->failed) return -1;
	trace_record *r = &e->records[e->count++];
	memset(r, 0, sizeof *r);
	r->address = address;
	r->time = ++e->time;
	r->thread = thread;
	r->size = size;
	r->kind = (uint8_t)kind;
	r->flags = TRACE_HAS_TIME;
	if (e->count == VALIDATE_EMIT_BATCH) return flush_records(e);
	return 0;
}

int validate_emit_instruction(validate_emitter *e, uint32_t thread, uint64_t address, uint16_t size)
{
	if (validate_emit(e, thread, TRACE_INSTRUCTION, address, size) != 0) return -1;
	return 0;
}

int validate_emit_mark(validate_emitter *e, validate_mark mark)
{
	if (flush_records(e) != 0) return -1;
	if (e->sink->mark && e->sink->mark(e->sink->context, mark, e->status) != 0) {
		e->failed = 1;
		return -1;
	}
	return 0;
}

int validate_emit_finish(validate_emitter *e)
{
	return flush_records(e);
}
