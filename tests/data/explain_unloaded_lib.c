/* The library tests/data/explain_unloaded.c loads and unloads: a loop of
 * integer work, its code nowhere but in this file's shared object.  Each
 * iteration is one block of about 150 instructions, so that a short trace
 * (a few thousand uses of the block, written before the program unloads
 * the library) carries many instructions. */
#define STEP(x, sum) do { (x) ^= (x) << 13; (x) ^= (x) >> 7; (x) ^= (x) << 17; (sum) += (x) & 0xff; } while (0)
#define STEP8(x, sum) do { STEP(x, sum); STEP(x, sum); STEP(x, sum); STEP(x, sum); \
                           STEP(x, sum); STEP(x, sum); STEP(x, sum); STEP(x, sum); } while (0)

long plugin_mix(long n)
{
	unsigned long x = 88172645463325252ul, sum = 0;
	for (long i = 0; i < n; i++) {
		STEP8(x, sum);
		STEP8(x, sum);
	}
	return (long)sum;
}
