/* A program of two known working sets for plumb explain --curve
 * (tests/e2e/test_explain_valgrind_cli.c):
 *
 *   working_sets SMALL_BYTES LARGE_BYTES PASSES
 *
 * Region "small" reads the first byte of every 64-byte piece of a buffer of
 * SMALL_BYTES, PASSES times in order; region "large" does the same over
 * LARGE_BYTES.  Read in a cycle, an LRU cache of at least a working set
 * misses each line once, one smaller misses every read: the knee of each
 * region's curve is the smallest capacity of the grid that holds its set. */
#include <stdio.h>
#include <stdlib.h>
#include <plumb/region.h>

static unsigned long sweep(const volatile unsigned char *buffer, size_t bytes, unsigned passes)
{
	unsigned long sum = 0;
	for (unsigned p = 0; p < passes; p++)
		for (size_t i = 0; i < bytes; i += 64)
			sum += buffer[i];
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: working_sets SMALL_BYTES LARGE_BYTES PASSES\n");
		return 2;
	}
	size_t small = strtoul(argv[1], NULL, 0), large = strtoul(argv[2], NULL, 0);
	unsigned passes = (unsigned)strtoul(argv[3], NULL, 0);
	unsigned char *a = calloc(1, small), *b = calloc(1, large);
	if (!a || !b)
		return 1;
	plumb_region_begin("small");
	unsigned long sum = sweep(a, small, passes);
	plumb_region_end("small");
	plumb_region_begin("large");
	sum += sweep(b, large, passes);
	plumb_region_end("large");
	free(a);
	free(b);
	return sum == 0 ? 0 : 3;
}
