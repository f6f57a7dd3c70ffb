/* A program of one known working set for plumb report --program
 * (tests/e2e/test_report_program_cli.c):
 *
 *   reread BYTES PASSES
 *
 * reads the first byte of every 64-byte piece of a buffer of BYTES, PASSES
 * times in order.  Read in a cycle, an LRU cache of at least BYTES misses
 * each line once and one smaller misses every read, so the knee of its
 * L1D curve is the smallest capacity of the grid (powers of two) that
 * holds BYTES.  It links nothing of plumb's. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: reread BYTES PASSES\n");
		return 2;
	}
	size_t bytes = strtoul(argv[1], NULL, 10);
	unsigned long passes = strtoul(argv[2], NULL, 10);
	volatile unsigned char *buffer = calloc(1, bytes);
	if (!buffer)
		return 1;
	unsigned long sum = 0;
	for (unsigned long p = 0; p < passes; p++)
		for (size_t i = 0; i < bytes; i += 64)
			sum += buffer[i];
	free((void *)buffer);
	return sum == 0 ? 0 : 3;
}
