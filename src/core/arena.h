/* Memory arenas for measurement buffers.  What a kernel measures depends on
 * the pages under it, so an arena records what the kernel actually gave
 * (read back from /proc/self/smaps), not just what was asked for. */
#ifndef PLUMB_ARENA_H
#define PLUMB_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

typedef enum arena_pages {
	ARENA_PAGES_DEFAULT,   /* whatever the THP mode gives */
	ARENA_PAGES_SMALL,     /* madvise(MADV_NOHUGEPAGE) */
	ARENA_PAGES_THP,       /* madvise(MADV_HUGEPAGE) */
	ARENA_PAGES_HUGETLB    /* MAP_HUGETLB; fails if none are reserved */
} arena_pages;

typedef enum arena_fault {
	ARENA_FAULT_PREFAULT,  /* touch every page now (write), so timing sees no faults */
	ARENA_FAULT_FIRST_TOUCH /* leave pages unbacked until first use */
} arena_fault;

typedef struct arena_request {
	size_t size;
	arena_pages pages;
	arena_fault fault;
	size_t alignment;      /* of the returned base; 0 = page size */
	size_t touched;        /* bytes that will ever be touched, when far fewer than size (a
	                        * sparse arena: a few lines far apart, first touch); 0 = size.
	                        * The check against available memory is on this. */
} arena_request;

typedef struct arena {
	void *base;            /* aligned start of usable memory */
	size_t size;           /* usable bytes (>= requested) */
	void *map_base;        /* what munmap takes */
	size_t map_size;
	arena_pages pages;
	/* Filled by arena_inspect(): */
	size_t kernel_page_size;   /* KernelPageSize of the mapping */
	size_t anon_huge_bytes;    /* AnonHugePages: bytes backed by THP */
	size_t resident_bytes;     /* Rss */
} arena;

/* Maps an arena.  Refuses sizes above MemAvailable with a clear message. */
int arena_create(arena *a, const arena_request *request, plumb_status *status);
void arena_destroy(arena *a);
/* Reads the mapping's smaps entry into the kernel_page_size/anon_huge/resident fields. */
int arena_inspect(arena *a, plumb_status *status);
/* "4KiB pages", "2MiB THP (97% of range)", ... */
const char *arena_describe(const arena *a, char *buffer, size_t length);
/* Bytes of memory available to allocate now (MemAvailable), or 0 if unknown. */
uint64_t arena_memory_available(void);

#endif
