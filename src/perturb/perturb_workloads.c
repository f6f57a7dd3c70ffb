/* Small deterministic workloads with distinct memory behaviour, so that a
 * halting experiment can be run without SPEC CPU2000 (which Watson, 2004,
 * used, and which is licensed).  Every one computes a checksum from its
 * work so the compiler keeps the work, and uses fixed seeds so that two
 * runs do the same thing.
 *
 *   simplemisses  Watson's SimpleMisses.c: per iteration MISS_TIMES loads
 *                 32 KiB apart (same L1 set) then 64 - MISS_TIMES hits:
 *                 loads are the same for every MISS_TIMES, misses above
 *                 the associativity grow by one per extra MISS_TIMES.
 *   spin          register-only loop: no memory, the control.
 *   chase         pointer chase through a random cycle over 32 MiB: every
 *                 load a cache and TLB miss (mcf-like).
 *   code          code-heavy: calls a chain of stubs one per 4 KiB page over
 *                 8 MiB of generated code, pressing the ITLB and I-cache.
 *   compress      LZ77 greedy compressor with a hash table over generated
 *                 text (gzip-like): table lookups plus sequential streams.
 *   sort          merge sort of 32-bit keys (sort-like): sequential passes. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "perturb/perturb.h"

static uint64_t lcg(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 17;
}

/* ------------------------------------------------------------ simplemisses */

#define SIMPLE_STRIDE 0x2000   /* ints: 32 KiB, the same L1 set on any L1 of 32 KiB or less per way */

static uint64_t run_simplemisses(uint64_t iterations, uint64_t miss_times, perturb_trace_fn trace, void *context)
{
	if (miss_times == 0)
		miss_times = 8;
	if (miss_times > 64)
		miss_times = 64;
	size_t count = 64 * SIMPLE_STRIDE;
	int *buffer = calloc(count, sizeof *buffer);
	if (!buffer)
		return 0;
	for (size_t i = 0; i < count; i += 1024)
		buffer[i] = (int)i;
	volatile int *b = buffer;
	uint64_t x = 0;
	for (uint64_t y = 0; y < iterations; y++) {
		uint64_t a;
		for (a = 0; a < miss_times; a++) {
			x += (uint64_t)b[a * SIMPLE_STRIDE];
			if (trace)
				trace(context, (uint64_t)(uintptr_t)&buffer[a * SIMPLE_STRIDE], sizeof(int));
		}
		a--;
		for (uint64_t z = 0; z < 64 - miss_times; z++) {
			x += (uint64_t)b[a * SIMPLE_STRIDE];
			if (trace)
				trace(context, (uint64_t)(uintptr_t)&buffer[a * SIMPLE_STRIDE], sizeof(int));
		}
	}
	free(buffer);
	return x;
}

uint64_t perturb_simplemisses_extra_misses(uint64_t iterations, uint64_t miss_times, unsigned associativity)
{
	return miss_times > associativity ? iterations * miss_times : 0;
}

/* -------------------------------------------------------------------- spin */

static uint64_t run_spin(uint64_t iterations, uint64_t parameter, perturb_trace_fn trace, void *context)
{
	uint64_t a = 1, b = 3;
	for (uint64_t i = 0; i < iterations; i++) {
		a = a * 2862933555777941757ull + b;
		b ^= a >> 29;
		__asm__ volatile("" : "+r"(a), "+r"(b));
	}
	return a ^ b;
}

/* ------------------------------------------------------------------- chase */

#define CHASE_BYTES (32u << 20)

static uint64_t run_chase(uint64_t steps, uint64_t parameter, perturb_trace_fn trace, void *context)
{
	size_t nodes = CHASE_BYTES / 64;
	uint64_t *memory = malloc((size_t)CHASE_BYTES);
	uint32_t *order = malloc(nodes * sizeof *order);
	if (!memory || !order) {
		free(memory);
		free(order);
		return 0;
	}
	/* Sattolo's shuffle: one cycle through every node. */
	for (size_t i = 0; i < nodes; i++)
		order[i] = (uint32_t)i;
	uint64_t state = 42;
	for (size_t i = nodes - 1; i > 0; i--) {
		size_t j = lcg(&state) % i;
		uint32_t swap = order[i];
		order[i] = order[j];
		order[j] = swap;
	}
	for (size_t i = 0; i < nodes; i++)
		memory[(size_t)i * 8] = (uint64_t)order[i] * 8;
	free(order);
	uint64_t p = 0;
	for (uint64_t s = 0; s < steps; s++)
		p = ((volatile uint64_t *)memory)[p];
	free(memory);
	return p;
}

/* -------------------------------------------------------------------- code */

#define CODE_PAGES 2048

static uint64_t run_code(uint64_t calls, uint64_t parameter, perturb_trace_fn trace, void *context)
{
	size_t bytes = (size_t)CODE_PAGES * 4096;
	unsigned char *code = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 0;
	/* One stub per page, at a line that moves from page to page so the stubs
	 * spread over the I-cache's sets; the pages are chained in a shuffled
	 * order so no next-page prefetch helps.  Stub: add rax, imm32; jmp next.
	 * The first page starts with mov rax, rdi; the last stub returns. */
	uint32_t order[CODE_PAGES];
	for (uint32_t i = 0; i < CODE_PAGES; i++)
		order[i] = i;
	uint64_t state = 7;
	for (uint32_t i = CODE_PAGES - 1; i > 1; i--) {
		uint32_t j = 1 + (uint32_t)(lcg(&state) % i);
		uint32_t swap = order[i];
		order[i] = order[j];
		order[j] = swap;
	}
	size_t offset[CODE_PAGES];
	for (uint32_t k = 0; k < CODE_PAGES; k++)
		offset[k] = (size_t)order[k] * 4096 + (k == 0 ? 0 : ((size_t)k * 64 * 5) % 4032);
	unsigned char *entry = code + offset[0];
	unsigned char *p = entry;
	*p++ = 0x48; *p++ = 0x89; *p++ = 0xf8;                 /* mov rax, rdi */
	for (uint32_t k = 0; k < CODE_PAGES; k++) {
		if (k > 0)
			p = code + offset[k];
		*p++ = 0x48; *p++ = 0x05;                          /* add rax, imm32 */
		uint32_t imm = k * 2654435761u;
		memcpy(p, &imm, 4);
		p += 4;
		if (k + 1 == CODE_PAGES) {
			*p++ = 0xc3;                                   /* ret */
		} else {
			unsigned char *next = code + offset[k + 1];
			int32_t rel = (int32_t)(next - (p + 5));
			*p++ = 0xe9;                                   /* jmp rel32 */
			memcpy(p, &rel, 4);
			p += 4;
		}
	}
	if (mprotect(code, bytes, PROT_READ | PROT_EXEC) != 0) {
		munmap(code, bytes);
		return 0;
	}
	uint64_t (*function)(uint64_t);
	memcpy(&function, &entry, sizeof function);
	uint64_t x = 0;
	for (uint64_t c = 0; c < calls; c++)
		x = function(x);
	munmap(code, bytes);
	return x;
}

/* ---------------------------------------------------------------- compress */

#define COMPRESS_INPUT (4u << 20)
#define COMPRESS_HASH_BITS 15

static uint64_t run_compress(uint64_t passes, uint64_t parameter, perturb_trace_fn trace, void *context)
{
	unsigned char *input = malloc(COMPRESS_INPUT), *output = malloc(COMPRESS_INPUT + COMPRESS_INPUT / 8 + 16);
	uint32_t *table = malloc(sizeof(uint32_t) << COMPRESS_HASH_BITS);
	if (!input || !output || !table) {
		free(input);
		free(output);
		free(table);
		return 0;
	}
	/* Text from a 64-word vocabulary, so matches exist at many distances. */
	static const char *words[] = { "the ", "cache ", "line ", "miss ", "halt ", "buffer ", "trace ",
		"drain ", "of ", "and ", "to ", "a ", "memory ", "bus ", "spin ", "loop " };
	uint64_t state = 3;
	for (size_t i = 0; i < COMPRESS_INPUT;) {
		const char *w = words[lcg(&state) % 16];
		while (*w && i < COMPRESS_INPUT)
			input[i++] = (unsigned char)*w++;
	}
	uint64_t total = 0;
	for (uint64_t pass = 0; pass < passes; pass++) {
		memset(table, 0, sizeof(uint32_t) << COMPRESS_HASH_BITS);
		size_t in = 0, out = 0;
		while (in + 4 <= COMPRESS_INPUT) {
			uint32_t word;
			memcpy(&word, input + in, 4);
			uint32_t hash = (word * 2654435761u) >> (32 - COMPRESS_HASH_BITS);
			size_t candidate = table[hash];
			table[hash] = (uint32_t)in;
			size_t length = 0;
			if (candidate < in && in - candidate < 65536)
				while (in + length < COMPRESS_INPUT && length < 255 &&
				       input[candidate + length] == input[in + length])
					length++;
			if (length >= 4) {
				output[out++] = 0xff;
				output[out++] = (unsigned char)length;
				output[out++] = (unsigned char)((in - candidate) & 0xff);
				output[out++] = (unsigned char)((in - candidate) >> 8);
				in += length;
			} else {
				output[out++] = input[in++];
			}
		}
		total += out + output[out / 2];
	}
	free(input);
	free(output);
	free(table);
	return total;
}

/* -------------------------------------------------------------------- sort */

#define SORT_KEYS (1u << 20)

static uint64_t run_sort(uint64_t rounds, uint64_t parameter, perturb_trace_fn trace, void *context)
{
	uint32_t *keys = malloc(SORT_KEYS * sizeof *keys), *scratch = malloc(SORT_KEYS * sizeof *scratch);
	if (!keys || !scratch) {
		free(keys);
		free(scratch);
		return 0;
	}
	uint64_t total = 0, state = 11;
	for (uint64_t r = 0; r < rounds; r++) {
		for (size_t i = 0; i < SORT_KEYS; i++)
			keys[i] = (uint32_t)lcg(&state);
		/* Bottom-up merge sort. */
		uint32_t *from = keys, *to = scratch;
		for (size_t width = 1; width < SORT_KEYS; width *= 2) {
			for (size_t low = 0; low < SORT_KEYS; low += 2 * width) {
				size_t mid = low + width < SORT_KEYS ? low + width : SORT_KEYS;
				size_t high = low + 2 * width < SORT_KEYS ? low + 2 * width : SORT_KEYS;
				size_t i = low, j = mid, k = low;
				while (i < mid && j < high)
					to[k++] = from[i] <= from[j] ? from[i++] : from[j++];
				while (i < mid)
					to[k++] = from[i++];
				while (j < high)
					to[k++] = from[j++];
			}
			uint32_t *swap = from;
			from = to;
			to = swap;
		}
		total += from[0] + from[SORT_KEYS / 2] + from[SORT_KEYS - 1];
	}
	free(keys);
	free(scratch);
	return total;
}

/* Default sizes: about half a second each on a 2026 server core. */
static const perturb_workload workloads[] = {
	{ "simplemisses", "Watson's SimpleMisses: MISS_TIMES loads 32 KiB apart, 64 per iteration",
	  "iterations", 8000000, run_simplemisses },
	{ "spin", "register-only loop (the control: no memory)", "iterations", 200000000, run_spin },
	{ "chase", "pointer chase through a random cycle over 32 MiB", "loads", 2000000, run_chase },
	{ "code", "calls through 8 MiB of generated code, one stub per page (ITLB, I-cache)",
	  "calls", 80000, run_code },
	{ "compress", "LZ77 compression of 4 MiB of generated text", "passes", 12, run_compress },
	{ "sort", "merge sort of 2^20 32-bit keys", "rounds", 3, run_sort },
};

const perturb_workload *perturb_workloads(size_t *n)
{
	*n = sizeof workloads / sizeof workloads[0];
	return workloads;
}

const perturb_workload *perturb_workload_find(const char *name)
{
	for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
		if (name && !strcmp(workloads[i].name, name))
			return &workloads[i];
	return NULL;
}
