/* A call tree with known costs, for the callgrind file's inclusive costs
 * (tests/e2e/test_instrument_cli.c, "callgrind"): main calls f 3 times, f
 * calls g once per call, g reads TABLE words (volatile: one load each); main
 * calls depth(DEPTH) once, a recursive function that calls itself
 * DEPTH - 1 times.  Built with gcc -O0 -g: every call stays a call. */
#include <stdio.h>

#define TABLE 1000
#define DEPTH 50
static volatile long table[TABLE];

__attribute__((noinline)) static long g(void)
{
	long sum = 0;
	for (int i = 0; i < TABLE; i++)
		sum += table[i];
	return sum;
}

__attribute__((noinline)) static long f(void)
{
	return g() + 1;
}

__attribute__((noinline)) static long depth(int n)
{
	return n <= 1 ? table[0] : table[n] + depth(n - 1);
}

int main(void)
{
	long total = 0;
	for (int i = 0; i < 3; i++)
		total += f();
	total += depth(DEPTH);
	printf("%ld\n", total);
	return 0;
}
