/* Two threads that share a line, for plumb explain's sharing checks
 * (tests/e2e/test_explain_valgrind_cli.c):
 *
 *   explain_sharing false N   each thread adds N times into its own counter
 *                             of `pair` (two counters in one line: false sharing)
 *   explain_sharing true N    both add N times into `shared_total` (true sharing)
 *
 * Each thread's loop is the region "work".  The adds are atomic, so the
 * program is correct either way; the line still moves between the cores. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <plumb/region.h>

struct pair {
	uint64_t first, second;
};
struct pair pair __attribute__((aligned(64)));
uint64_t shared_total __attribute__((aligned(64)));

static int true_sharing;
static long iterations;

static void *work(void *argument)
{
	uint64_t *counter = true_sharing ? &shared_total : argument ? &pair.second : &pair.first;
	plumb_region_begin("work");
	for (long i = 0; i < iterations; i++)
		__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
	plumb_region_end("work");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "true") && strcmp(argv[1], "false"))) {
		fprintf(stderr, "usage: explain_sharing true|false ITERATIONS\n");
		return 2;
	}
	true_sharing = !strcmp(argv[1], "true");
	iterations = atol(argv[2]);
	pthread_t threads[2];
	for (intptr_t t = 0; t < 2; t++)
		pthread_create(&threads[t], NULL, work, (void *)t);
	for (int t = 0; t < 2; t++)
		pthread_join(threads[t], NULL);
	printf("%llu %llu %llu\n", (unsigned long long)pair.first, (unsigned long long)pair.second,
	       (unsigned long long)shared_total);
	return 0;
}
