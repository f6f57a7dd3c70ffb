/* Shared by the counters tests: N fresh pages, each touched once.  A write
 * to a fresh private anonymous page is exactly one minor fault (THP is off
 * for the mapping, so the kernel cannot back 512 pages with one fault). */
#ifndef PLUMB_TESTS_COUNTERS_PAGES_H
#define PLUMB_TESTS_COUNTERS_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <unistd.h>

/* Not instrumented: under AddressSanitizer each checked store reads the
 * shadow byte of its page, and the first read of a fresh shadow page is one
 * more minor fault, which would make exact counts off by one per 8 pages. */
__attribute__((no_sanitize("address"), noinline, unused))
static void counters_test_touch(char *base, size_t pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < pages; i++)
		((volatile char *)base)[i * page] = 1;
}

/* Writes 64 KiB of stack below the caller's frame.  The stack's top is
 * randomised within a page (ASLR), so whether a counted window's calls, a
 * lazy-binding resolver's xsave area or a signal frame reach a stack page
 * never written before changes from run to run: one extra fault, sometimes. */
__attribute__((no_sanitize("address"), noinline, unused))
static void counters_test_prefault_stack(void)
{
	volatile char pad[64 * 1024];
	for (size_t i = 0; i < sizeof pad; i += 1024)
		pad[i] = 0;
}

/* Makes this thread's rseq area (in glibc's thread descriptor) private now.
 * In a forked child (counters_region's fork test; criterion's own workers
 * are exec'd) that page stays shared copy-on-write with the parent until
 * written; the kernel writes it (the current CPU) on the way back to user
 * space after a preemption or a migration, which under load can fall inside
 * a counted window and count one copy-on-write fault there (measured: the
 * first migration after fork() is exactly 1 page fault, 0 after this
 * write).  Adding 0 writes without changing the value. */
static inline void counters_test_prefault_thread(void)
{
	char *tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	__atomic_fetch_add((volatile uint32_t *)(void *)tp, 0, __ATOMIC_RELAXED);  /* the TCB's first page */
	if (__rseq_size > 0)
		__atomic_fetch_add((volatile uint32_t *)(void *)(tp + __rseq_offset), 0, __ATOMIC_RELAXED);
}

static inline char *counters_test_map(size_t pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	counters_test_prefault_stack();
	counters_test_prefault_thread();
	char *base = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	madvise(base, pages * page, MADV_NOHUGEPAGE);
	/* Run the touching code once now: the first execution of a code page
	 * not yet mapped in this process is a minor fault of its own. */
	counters_test_touch(base, 0);
	return base;
}

static inline void counters_test_unmap(char *base, size_t pages)
{
	munmap(base, pages * (size_t)sysconf(_SC_PAGESIZE));
}

#endif
