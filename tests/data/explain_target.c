/* A program of known behaviour for plumb explain (tests/e2e/test_explain_cli.c):
 *
 *   explain_target SWEEP_BYTES CHASE_BYTES CHASE_LAPS COMPUTE_ITERATIONS
 *
 * Three regions, each a loop in inline asm so that its instruction, load and
 * store counts are exact closed forms whatever the compiler:
 *   "sweep"    reads the first 8 bytes of every line of SWEEP_BYTES once, in
 *              order: 4 instructions and 1 load per line, one L1D miss per
 *              line (the buffer was only touched once per page before).
 *   "chase"    a random single cycle (Sattolo's shuffle) over the lines of
 *              CHASE_BYTES (huge pages where available), walked CHASE_LAPS
 *              times after one untimed lap: 3 instructions and 1 dependent
 *              load per step.
 *   "stride"   (with STRIDE_BYTES) the same load as the sweep, 17 lines
 *              apart, column after column: every line once, 4 instructions
 *              and 1 load per line.
 *   "compute"  x = x * a + c, COMPUTE_ITERATIONS times: 4 instructions, no
 *              memory reference; the multiply and add depend on the last
 *              iteration, so about 4 cycles per iteration (IPC about 1).
 * The line size is read from sysfs (64 if unreadable). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <plumb/region.h>

static size_t line_size(void)
{
	long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	return line >= 16 && line <= 1024 ? (size_t)line : 64;
}

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static uint64_t sweep(const char *p, size_t lines, size_t line)
{
	uint64_t sum = 0;
	if (!lines)
		return 0;
	__asm__ __volatile__("1:\n\t"
	                     "add (%[p]), %[sum]\n\t"
	                     "add %[line], %[p]\n\t"
	                     "dec %[n]\n\t"
	                     "jnz 1b"
	                     : [sum] "+r"(sum), [p] "+r"(p), [n] "+r"(lines)
	                     : [line] "r"(line)
	                     : "cc", "memory");
	return sum;
}

static void *chase(void *p, size_t steps)
{
	if (!steps)
		return p;
	__asm__ __volatile__("1:\n\t"
	                     "mov (%[p]), %[p]\n\t"
	                     "dec %[n]\n\t"
	                     "jnz 1b"
	                     : [p] "+r"(p), [n] "+r"(steps)
	                     :
	                     : "cc", "memory");
	return p;
}

static uint64_t compute(uint64_t x, size_t iterations)
{
	if (!iterations)
		return x;
	uint64_t a = 6364136223846793005ull, c = 1442695040888963407ull;
	__asm__ __volatile__("1:\n\t"
	                     "imul %[a], %[x]\n\t"
	                     "add %[c], %[x]\n\t"
	                     "dec %[n]\n\t"
	                     "jnz 1b"
	                     : [x] "+r"(x), [n] "+r"(iterations)
	                     : [a] "r"(a), [c] "r"(c)
	                     : "cc");
	return x;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: explain_target SWEEP_BYTES CHASE_BYTES CHASE_LAPS COMPUTE_ITERATIONS [STRIDE_BYTES]\n");
		return 2;
	}
	size_t sweep_bytes = strtoull(argv[1], NULL, 0), chase_bytes = strtoull(argv[2], NULL, 0);
	size_t laps = strtoull(argv[3], NULL, 0), iterations = strtoull(argv[4], NULL, 0);
	size_t line = line_size(), page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t result = 0;

	if (sweep_bytes >= line) {
		char *buffer = map(sweep_bytes);
		/* Small pages, each written once: resident, but only one line of each
		 * page was ever cached (a THP would be zeroed whole, in cache). */
		madvise(buffer, sweep_bytes, MADV_NOHUGEPAGE);
		for (size_t offset = 0; offset < sweep_bytes; offset += page)
			buffer[offset] = 1;
		plumb_region_begin("sweep");
		result += sweep(buffer, sweep_bytes / line, line);
		plumb_region_end("sweep");
		munmap(buffer, sweep_bytes);
	}

	size_t lines = chase_bytes / line;
	if (lines >= 2) {
		char *buffer = map(chase_bytes);
		/* Huge pages where the system gives them, as plumb lat's chains
		 * have: the chase then measures the caches and memory, not page
		 * walks (docs/explain.md). */
		madvise(buffer, chase_bytes, MADV_HUGEPAGE);
		size_t *order = malloc(lines * sizeof *order);
		if (!order)
			return 1;
		for (size_t i = 0; i < lines; i++)
			order[i] = i;
		uint64_t state = 88172645463325252ull;
		for (size_t i = lines - 1; i > 0; i--) {   /* Sattolo: one cycle through every line */
			state ^= state << 13, state ^= state >> 7, state ^= state << 17;
			size_t j = (size_t)(state % i);
			size_t swap = order[i];
			order[i] = order[j];
			order[j] = swap;
		}
		for (size_t i = 0; i < lines; i++)
			*(void **)(buffer + i * line) = buffer + order[i] * line;
		free(order);
		void *p = chase(buffer, lines);   /* warm: one lap */
		plumb_region_begin("chase");
		p = chase(p, lines * laps);
		plumb_region_end("chase");
		result += (uintptr_t)p & 1;
		munmap(buffer, chase_bytes);
	}

	/* "stride": the first 8 bytes of every line of STRIDE_BYTES, once, in
	 * column order: 17 lines apart (past a page every few steps), one column
	 * after another: a constant-stride stream per column. */
	size_t stride_bytes = argc == 6 ? strtoull(argv[5], NULL, 0) : 0, stride = 17 * line;
	if (stride_bytes >= stride) {
		char *buffer = map(stride_bytes);
		madvise(buffer, stride_bytes, MADV_NOHUGEPAGE);
		for (size_t offset = 0; offset < stride_bytes; offset += page)
			buffer[offset] = 1;
		size_t rows = stride_bytes / stride;
		plumb_region_begin("stride");
		for (size_t column = 0; column < 17; column++)
			result += sweep(buffer + column * line, rows, stride);
		plumb_region_end("stride");
		munmap(buffer, stride_bytes);
	}

	plumb_region_begin("compute");
	result += compute(result, iterations);
	plumb_region_end("compute");
	printf("%llu\n", (unsigned long long)(result & 0xff));
	return 0;
}
