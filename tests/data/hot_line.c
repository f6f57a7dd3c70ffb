/* A program whose hottest line is known, for source attribution: built with
 * -g (DWARF 4, which Valgrind 3.19 reads); the test finds the line by its
 * marker comment, never by number.  walk() reads one word per 4 KiB page of
 * a 4 MiB table, so every reference of its loop misses every cache. */
#include <stdlib.h>

static long table[1 << 19];

__attribute__((noinline)) static long walk(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += table[(i * 512) & ((1 << 19) - 1)];   /* HOT LINE */
	return sum;
}

int main(int argc, char **argv)
{
	return (int)(walk(argc > 1 ? atol(argv[1]) : 20000) & 1);
}
