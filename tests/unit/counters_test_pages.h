/* Shared by the counters tests: N fresh pages, each touched once.  A write
 * to a fresh private anonymous page is exactly one minor fault (THP is off
 * for the mapping, so the kernel cannot back 512 pages with one fault). */
#ifndef PLUMB_TESTS_COUNTERS_PAGES_H
#define PLUMB_TESTS_COUNTERS_PAGES_H

#include <stddef.h>
#include <sys/mman.h>
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

static inline char *counters_test_map(size_t pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
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
