#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/arena.h"

#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif

uint64_t arena_memory_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[256];
	unsigned long long kib = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

int arena_create(arena *a, const arena_request *request, plumb_status *status)
{
	memset(a, 0, sizeof *a);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t huge = 2u << 20;
	if (request->size == 0)
		return plumb_fail(status, EINVAL, "arena size must be positive");
	uint64_t available = arena_memory_available();
	size_t needed = request->touched && request->touched < request->size ? request->touched : request->size;
	if (available && needed > available)
		return plumb_fail(status, ENOMEM, "asked for %zu MiB but only %llu MiB are available",
		                  needed >> 20, (unsigned long long)(available >> 20));
	size_t alignment = request->alignment ? request->alignment : page;
	if (alignment & (alignment - 1))
		return plumb_fail(status, EINVAL, "arena alignment %zu is not a power of two", alignment);
	/* THP can only back 2 MiB-aligned extents, so THP arenas align to 2 MiB. */
	if (request->pages == ARENA_PAGES_THP && alignment < huge)
		alignment = huge;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	size_t size = round_up(request->size, page);
	size_t map_size = size + (alignment > page ? alignment : 0);
	if (request->pages == ARENA_PAGES_HUGETLB) {
		/* Without MAP_NORESERVE the kernel reserves the huge pages at
		 * mmap time and fails cleanly (ENOMEM) when the pool is short;
		 * with it, mmap succeeds and the first touch dies of SIGBUS. */
		flags = (flags & ~MAP_NORESERVE) | MAP_HUGETLB;
		size = round_up(request->size, huge);
		map_size = size;
	}
	void *m = mmap(NULL, map_size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (m == MAP_FAILED) {
		if (request->pages == ARENA_PAGES_HUGETLB)
			return plumb_fail_errno(status, errno, "cannot map %zu MiB of hugetlb pages (are any reserved in /proc/sys/vm/nr_hugepages?)", size >> 20);
		return plumb_fail_errno(status, errno, "cannot map %zu bytes", map_size);
	}
	a->map_base = m;
	a->map_size = map_size;
	a->base = (void *)round_up((size_t)m, alignment);
	a->size = size;
	a->pages = request->pages;
	if (request->pages == ARENA_PAGES_THP && madvise(a->base, size, MADV_HUGEPAGE) != 0) {
		int e = errno;
		arena_destroy(a);
		return plumb_fail_errno(status, e, "madvise(MADV_HUGEPAGE) refused (THP disabled?)");
	}
	if (request->pages == ARENA_PAGES_SMALL)
		madvise(a->base, size, MADV_NOHUGEPAGE);
	if (request->fault == ARENA_FAULT_PREFAULT) {
		/* A write per page: a read would map the shared zero page and the
		 * first timed write would still fault. */
		volatile char *p = a->base;
		for (size_t i = 0; i < size; i += page)
			p[i] = 0;
	}
	return 0;
}

void arena_destroy(arena *a)
{
	if (a->map_base)
		munmap(a->map_base, a->map_size);
	memset(a, 0, sizeof *a);
}

/* smaps has one block per mapping; the arena's block is the one whose range
 * contains its base.  The kernel may have merged it with a neighbour, so
 * AnonHugePages can cover a little more than the arena: report as is. */
int arena_inspect(arena *a, plumb_status *status)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return plumb_fail_errno(status, errno, "cannot read /proc/self/smaps");
	char line[512];
	int inside = 0, found = 0;
	uintptr_t base = (uintptr_t)a->base;
	a->kernel_page_size = a->anon_huge_bytes = a->resident_bytes = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (inside)
				break;
			inside = base >= lo && base < hi;
			found |= inside;
			continue;
		}
		if (!inside)
			continue;
		unsigned long kib;
		if (sscanf(line, "KernelPageSize: %lu kB", &kib) == 1)
			a->kernel_page_size = kib * 1024;
		else if (sscanf(line, "AnonHugePages: %lu kB", &kib) == 1)
			a->anon_huge_bytes = kib * 1024;
		else if (sscanf(line, "Rss: %lu kB", &kib) == 1)
			a->resident_bytes = kib * 1024;
	}
	fclose(f);
	if (!found)
		return plumb_fail(status, ENOENT, "arena at %p not found in /proc/self/smaps", a->base);
	return 0;
}

const char *arena_describe(const arena *a, char *buffer, size_t length)
{
	if (a->kernel_page_size > 4096)
		snprintf(buffer, length, "%zu KiB hugetlb pages", a->kernel_page_size >> 10);
	else if (a->anon_huge_bytes)
		snprintf(buffer, length, "4 KiB pages, %.0f%% backed by 2 MiB THP",
		         100.0 * (double)(a->anon_huge_bytes < a->size ? a->anon_huge_bytes : a->size) / (double)a->size);
	else
		snprintf(buffer, length, "%zu KiB pages", (a->kernel_page_size ? a->kernel_page_size : 4096) >> 10);
	return buffer;
}
