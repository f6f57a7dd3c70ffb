/* A small deterministic program for the cachegrind comparison
 * (tests/unit/test_sim_cachegrind.c): strided and sequential sweeps of an
 * array bigger than the L1s, a conflict pattern, unaligned (line-straddling)
 * loads and stores, read-modify-write, and enough code to exercise the I1. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N (96 * 1024)

static unsigned char buffer[N + 64];
static volatile uint64_t sink;

static uint64_t sweep(size_t stride, int rounds)
{
	uint64_t sum = 0;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < N; i += stride)
			sum += buffer[i];
	return sum;
}

static void straddle(void)
{
	/* 8-byte accesses at every offset of a few lines: some cross a line */
	for (size_t offset = 0; offset < 4 * 64; offset++) {
		uint64_t v;
		memcpy(&v, buffer + 1000 + offset, sizeof v);
		v += offset;
		memcpy(buffer + 5000 + offset, &v, sizeof v);
	}
}

static void modify(void)
{
	/* read-modify-write of words: lackey 'M', cachegrind's Dm */
	uint32_t *words = (uint32_t *)(void *)buffer;
	for (size_t i = 0; i < N / 4; i += 5)
		words[i] += (uint32_t)i;
}

int main(void)
{
	for (size_t i = 0; i < sizeof buffer; i++)
		buffer[i] = (unsigned char)(i * 7);
	sink = sweep(64, 2);
	sink += sweep(4096, 8);     /* same sets: conflicts in the L1 */
	sink += sweep(1, 1);
	straddle();
	modify();
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
