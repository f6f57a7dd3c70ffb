/* Memory-level parallelism: k independent chains walked in one thread.
 *
 * Each chain is a true dependence (no load of a chain can start before the
 * previous one of the same chain returns), but the k chains are
 * independent, so an out-of-order core can keep up to k misses in flight.
 * Time per load against k shows how many misses the level supports at
 * once.  One kernel per k, fully unrolled, so the walkers live in
 * registers while they fit (beyond ~12 the compiler keeps some on the
 * stack; those L1 accesses are independent of the misses and overlap). */
#include <errno.h>
#include "chase/chase.h"

#define PARALLEL_KERNEL(K) \
	static void chase_parallel_##K(void **positions, size_t steps) \
	{ \
		void *p[K]; \
		for (int j = 0; j < K; j++) \
			p[j] = positions[j]; \
		for (size_t s = 0; s < steps; s++) { \
			_Pragma("GCC unroll 32") \
			for (int j = 0; j < K; j++) \
				p[j] = *(void *const *)p[j]; \
		} \
		for (int j = 0; j < K; j++) \
			positions[j] = p[j]; \
	}

#define PARALLEL_COUNTS(X) \
	X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) \
	X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32)

PARALLEL_COUNTS(PARALLEL_KERNEL)

typedef void (*parallel_kernel)(void **, size_t);
#define PARALLEL_ENTRY(K) chase_parallel_##K,
static const parallel_kernel parallel_kernels[CHASE_MAX_PARALLEL] = { PARALLEL_COUNTS(PARALLEL_ENTRY) };

int chase_run_parallel(void **positions, unsigned chains, size_t steps)
{
	if (chains == 0 || chains > CHASE_MAX_PARALLEL)
		return -1;
	parallel_kernels[chains - 1](positions, steps);
	return 0;
}
