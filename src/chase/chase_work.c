/* Restart-latency kernels: a dependent chase with k dependent ALU
 * operations after each load (seed 001 section 3.3).
 *
 * Each step is `p = *p` followed by k times `add zero, p`: the work
 * depends on the loaded value and the next load's address depends on the
 * work, so load, work and next load run strictly in sequence.  `zero` is 0
 * at run time but comes from the caller, so the compiler cannot fold it;
 * the adds are emitted by the assembler (.rept) so the compiler cannot
 * combine k adds into one multiply either.  One kernel is compiled per
 * work count, so no inner loop or branch sits next to the work. */
#include "chase/chase.h"

#define WORK_STEP(p, zero, K) \
	do { \
		(p) = *(const uintptr_t *)(p); \
		__asm__(".rept " #K "\n\taddq %1, %0\n\t.endr" : "+r"(p) : "r"(zero)); \
	} while (0)

#define WORK_KERNEL(K) \
	static void *chase_work_##K(void *position, size_t loads, uintptr_t zero) \
	{ \
		uintptr_t p = (uintptr_t)position; \
		for (size_t blocks = loads / 4; blocks; blocks--) { \
			WORK_STEP(p, zero, K); \
			WORK_STEP(p, zero, K); \
			WORK_STEP(p, zero, K); \
			WORK_STEP(p, zero, K); \
		} \
		for (size_t rest = loads % 4; rest; rest--) \
			WORK_STEP(p, zero, K); \
		return (void *)p; \
	}

#define WORK_COUNTS(X) \
	X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) \
	X(20) X(24) X(28) X(32) X(40) X(48) X(56) X(64) X(80) X(96) X(112) X(128) X(160) X(192) \
	X(224) X(256) X(320) X(384) X(448) X(512)

WORK_COUNTS(WORK_KERNEL)

typedef void *(*work_kernel)(void *, size_t, uintptr_t);

#define WORK_COUNT_ENTRY(K) K,
#define WORK_KERNEL_ENTRY(K) chase_work_##K,
static const unsigned work_counts[] = { WORK_COUNTS(WORK_COUNT_ENTRY) };
static const work_kernel work_kernels[] = { WORK_COUNTS(WORK_KERNEL_ENTRY) };
#define WORK_KERNEL_COUNT (sizeof work_counts / sizeof work_counts[0])

const unsigned *chase_work_counts(size_t *count)
{
	*count = WORK_KERNEL_COUNT;
	return work_counts;
}

static work_kernel find_kernel(unsigned work)
{
	for (size_t i = 0; i < WORK_KERNEL_COUNT; i++)
		if (work_counts[i] == work)
			return work_kernels[i];
	return 0;
}

bool chase_work_supported(unsigned work)
{
	return find_kernel(work) != 0;
}

void *chase_run_work(void *position, size_t loads, unsigned work, uintptr_t zero)
{
	work_kernel kernel = find_kernel(work);
	return kernel ? kernel(position, loads, zero) : 0;
}

uintptr_t chase_run_adds(uintptr_t value, size_t adds, uintptr_t zero)
{
	for (size_t blocks = adds / 64; blocks; blocks--)
		__asm__(".rept 64\n\taddq %1, %0\n\t.endr" : "+r"(value) : "r"(zero));
	for (size_t rest = adds % 64; rest; rest--)
		__asm__("addq %1, %0" : "+r"(value) : "r"(zero));
	return value;
}
