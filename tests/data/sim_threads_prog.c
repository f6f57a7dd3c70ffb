/* A two-thread program for the simulator's two-core benchmark and tests:
 * each thread sweeps its own array (private data), adds into a counter next
 * to the other thread's (false sharing), and every 64 elements takes a
 * mutex to add into a shared total (true sharing). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define N (64 * 1024)
#define ROUNDS 8

static uint32_t data[2][N];
static volatile uint64_t counters[2];     /* one line: falsely shared */
static uint64_t total;                     /* truly shared */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *argument)
{
	int id = (int)(intptr_t)argument;
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < N; i++) {
			data[id][i] += (uint32_t)(i ^ r);
			counters[id] += data[id][i];
			if ((i & 63) == 0) {
				pthread_mutex_lock(&lock);
				total += counters[id];
				pthread_mutex_unlock(&lock);
			}
		}
	return NULL;
}

int main(void)
{
	pthread_t threads[2];
	for (int t = 0; t < 2; t++)
		pthread_create(&threads[t], NULL, work, (void *)(intptr_t)t);
	for (int t = 0; t < 2; t++)
		pthread_join(threads[t], NULL);
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
