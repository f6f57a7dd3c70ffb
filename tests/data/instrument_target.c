/* A program whose memory references are known exactly, for plumbgrind's
 * tests.  Every region holds a loop written in inline asm: per iteration two
 * 8-byte loads, one 8-byte store and two loop instructions, so a loop of K
 * iterations is exactly 5K instructions, 2K loads, K stores, 16K bytes read
 * and 8K bytes written.  Its operands sit in registers the markers do not
 * touch (r12, r13), so no compiler glue lands inside a region.
 *
 *   instrument_target loop K R        region "loop" entered R times
 *   instrument_target nested K1 K2    "outer" holds "inner" (K1) and a loop of K2:
 *                                     5(K1+K2) instructions, no glue in between
 *   instrument_target threads T K     thread i runs "worker" with K*(i+1), main "main" with K
 *   instrument_target collect K       PLUMB_VG_START, loop K, PLUMB_VG_STOP
 *   instrument_target misuse          mismatched and unclosed markers
 *   instrument_target running         prints PLUMB_VG_RUNNING()
 *   instrument_target exit N          a loop of 10, then exit status N
 *   instrument_target abort           a loop of 20, then abort()
 *   instrument_target segv            a loop of 20, then a store through a null pointer
 *   instrument_target recover N       N times: a loop, a branch, then a store through a
 *                                     null pointer that a SIGSEGV handler jumps back from */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/valgrind.h"

static uint64_t buffers[64][4];
/* Null, through a volatile pointer the compiler cannot see through. */
static volatile uint64_t *volatile nowhere;

static inline __attribute__((always_inline)) void loop(uint64_t *buffer, uint64_t iterations)
{
	register uint64_t *p __asm__("r12") = buffer;
	register uint64_t k __asm__("r13") = iterations;
	__asm__ __volatile__("" : "+r"(p), "+r"(k));
	__asm__ __volatile__("1:\n\t"
	                     "mov (%0), %%r14\n\t"
	                     "add 8(%0), %%r14\n\t"
	                     "mov %%r14, 16(%0)\n\t"
	                     "dec %1\n\t"
	                     "jnz 1b"
	                     : "+r"(p), "+r"(k)
	                     :
	                     : "r14", "memory", "cc");
}

/* The region's operands are placed before BEGIN, so nothing but the loop
 * runs between the markers. */
#define REGION_LOOP(name, buffer, iterations)                              \
	do {                                                               \
		register uint64_t *p_ __asm__("r12") = (buffer);           \
		register uint64_t k_ __asm__("r13") = (iterations);        \
		__asm__ __volatile__("" : "+r"(p_), "+r"(k_));             \
		PLUMB_VG_REGION_BEGIN(name);                               \
		__asm__ __volatile__("1:\n\t"                              \
		                     "mov (%0), %%r14\n\t"                 \
		                     "add 8(%0), %%r14\n\t"                \
		                     "mov %%r14, 16(%0)\n\t"               \
		                     "dec %1\n\t"                          \
		                     "jnz 1b"                              \
		                     : "+r"(p_), "+r"(k_)                  \
		                     :                                     \
		                     : "r14", "memory", "cc");             \
		PLUMB_VG_REGION_END(name);                                 \
	} while (0)

static uint64_t number(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (!s[0] || *end || v == 0) {
		fprintf(stderr, "instrument_target: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static sigjmp_buf recovered;

static void on_fault(int signal_number)
{
	(void)signal_number;
	siglongjmp(recovered, 1);
}

typedef struct worker { int index; uint64_t iterations; } worker;

static void *worker_main(void *argument)
{
	worker *w = argument;
	REGION_LOOP("worker", buffers[w->index + 1], w->iterations);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "loop")) {
		uint64_t k = number(argv[2]), r = number(argv[3]);
		for (uint64_t i = 0; i < r; i++)
			REGION_LOOP("loop", buffers[0], k);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "nested")) {
		/* The outer loop's operands get their own registers (r15, rbx),
		 * placed before "outer" begins, like the inner loop's. */
		uint64_t k1 = number(argv[2]), k2 = number(argv[3]);
		register uint64_t *p __asm__("r12") = buffers[0];
		register uint64_t k __asm__("r13") = k1;
		register uint64_t *q __asm__("r15") = buffers[1];
		register uint64_t n __asm__("rbx") = k2;
		__asm__ __volatile__("" : "+r"(p), "+r"(k), "+r"(q), "+r"(n));
		PLUMB_VG_REGION_BEGIN("outer");
		PLUMB_VG_REGION_BEGIN("inner");
		__asm__ __volatile__("1:\n\t"
		                     "mov (%0), %%r14\n\t"
		                     "add 8(%0), %%r14\n\t"
		                     "mov %%r14, 16(%0)\n\t"
		                     "dec %1\n\t"
		                     "jnz 1b"
		                     : "+r"(p), "+r"(k)
		                     :
		                     : "r14", "memory", "cc");
		PLUMB_VG_REGION_END("inner");
		__asm__ __volatile__("2:\n\t"
		                     "mov (%0), %%r14\n\t"
		                     "add 8(%0), %%r14\n\t"
		                     "mov %%r14, 16(%0)\n\t"
		                     "dec %1\n\t"
		                     "jnz 2b"
		                     : "+r"(q), "+r"(n)
		                     :
		                     : "r14", "memory", "cc");
		PLUMB_VG_REGION_END("outer");
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "threads")) {
		uint64_t t = number(argv[2]), k = number(argv[3]);
		if (t > 32)
			return 2;
		pthread_t threads[32];
		worker workers[32];
		for (uint64_t i = 0; i < t; i++) {
			workers[i] = (worker){ (int)i, k * (i + 1) };
			/* One at a time, so thread numbers follow creation order. */
			if (pthread_create(&threads[i], NULL, worker_main, &workers[i]) != 0 ||
			    pthread_join(threads[i], NULL) != 0)
				return 1;
		}
		REGION_LOOP("main", buffers[0], k);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "collect")) {
		uint64_t k = number(argv[2]);
		register uint64_t *p __asm__("r12") = buffers[0];
		register uint64_t n __asm__("r13") = k;
		__asm__ __volatile__("" : "+r"(p), "+r"(n));
		PLUMB_VG_START;
		loop(p, n);
		PLUMB_VG_STOP;
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "misuse")) {
		PLUMB_VG_REGION_BEGIN("a");
		PLUMB_VG_REGION_END("b");
		PLUMB_VG_REGION_END("a");
		PLUMB_VG_REGION_END("never-begun");
		PLUMB_VG_REGION_BEGIN("");
		PLUMB_VG_REGION_BEGIN("left open");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "running")) {
		printf("%d\n", PLUMB_VG_RUNNING());
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "exit")) {
		REGION_LOOP("loop", buffers[0], 10);
		return (int)number(argv[2]);
	}
	if (argc >= 2 && !strcmp(argv[1], "abort")) {
		REGION_LOOP("loop", buffers[0], 20);
		abort();
	}
	if (argc >= 2 && !strcmp(argv[1], "segv")) {
		REGION_LOOP("loop", buffers[0], 20);
		*nowhere = 1;
		return 1;
	}
	if (argc >= 3 && !strcmp(argv[1], "recover")) {
		/* faults in the middle of a superblock: the references of its
		 * parts before the fault are the trace's, in the binary records as
		 * in the text */
		struct sigaction action;
		memset(&action, 0, sizeof action);
		action.sa_handler = on_fault;
		sigaction(SIGSEGV, &action, NULL);
		uint64_t times = number(argv[2]);
		volatile uint64_t faults = 0;
		for (uint64_t i = 0; i < times; i++) {
			if (sigsetjmp(recovered, 1) == 0) {
				loop(buffers[2], 1 + i % 5);
				if (buffers[2][2] & 1)
					buffers[3][0]++;
				*nowhere = i;
			} else {
				faults++;
			}
		}
		return faults == times ? 0 : 1;
	}
	fprintf(stderr, "usage: instrument_target loop K R | nested K1 K2 | threads T K | collect K | misuse | running | exit N | abort | segv | recover N\n");
	return 2;
}
