/* Named chase patterns for plumb lat: plumb's own, and the chains other
 * latency tools build by default, so a user can compare figures at the same
 * pattern (docs/latency.md, "Patterns of other tools").  The other tools'
 * parameters were read from their sources:
 * - lmbench 3.0-a9, lat_mem_rd.c and lib_mem.c: by default
 *   stride_initialize, addr[i - stride] points to addr[i], the last back to
 *   the first: a forward walk; with -t thrash_initialize: pages
 *   (getpagesize) in random order, one line of each page per round, the
 *   line turning through words_initialize's bit-reversed order from page to
 *   page and round to round; default stride 512 / sizeof(char *) = 64
 *   bytes; malloc'd memory, so the system's THP policy decides the pages;
 * - lmbench's line_initialize (its line-size probe, and lat_mem_rd's chain
 *   in lmbench 3's early versions): random pages, inside each the lines in
 *   bit-reversed order before the next page;
 * - lmbench 2, lat_mem_rd.c: addr[i] points to addr[i - stride], the
 *   first back to the last: a backward walk, same default stride;
 * - multichase (google/multichase, multichase.c and permutation.c
 *   generate_chase): 256 MiB, stride 256 bytes, "TLB locality" 64 base
 *   pages (256 KiB): the blocks in random order and the slots of a block
 *   in random order before the next block, the pointer at a random word
 *   of its slot (the mixer), mmap'd with MADV_NOHUGEPAGE unless -H. */
#include <stddef.h>
#include <string.h>
#include "latency/latency_run.h"

static const latency_pattern_preset presets[] = {
	{ "random", CHASE_RANDOM, 0, 0, false, ARENA_PAGES_THP, "uniformly random over the whole working set" },
	{ "page", CHASE_PAGE_GROUPED, 0, 0, false, ARENA_PAGES_THP, "pages in random order, all lines of a page before the next" },
	{ "page-grouped", CHASE_PAGE_GROUPED, 0, 0, false, ARENA_PAGES_THP, "the same as page" },
	{ "strided", CHASE_STRIDED, 0, 0, false, ARENA_PAGES_THP, "a constant forward stride" },
	{ "lmbench", CHASE_FORWARD, 64, 0, true, ARENA_PAGES_DEFAULT,
	  "lmbench 3.0 lat_mem_rd's default: a forward walk at the stride" },
	{ "lmbench-thrash", CHASE_LMBENCH_THRASH, 64, 0, true, ARENA_PAGES_DEFAULT,
	  "lmbench 3.0 lat_mem_rd -t: another random page at every step, lines in bit-reversed turns" },
	{ "lmbench-line", CHASE_LMBENCH, 64, 0, true, ARENA_PAGES_DEFAULT,
	  "lmbench's line_initialize: random pages, lines of a page in bit-reversed order" },
	{ "lmbench2", CHASE_BACKWARD, 64, 0, true, ARENA_PAGES_DEFAULT, "lmbench 2 lat_mem_rd: a backward stride walk" },
	{ "multichase", CHASE_MULTICHASE, 256, 256 * 1024, true, ARENA_PAGES_SMALL,
	  "multichase's default: random inside 256 KiB blocks, blocks in random order, 4 KiB pages" },
};

const latency_pattern_preset *latency_pattern_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

const char *latency_pattern_names(void)
{
	return "random, page, strided, lmbench, lmbench-thrash, lmbench-line, lmbench2, multichase";
}
