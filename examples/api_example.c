/* libplumb's public API from a user's program (docs/library.md):
 *
 *   build/examples/api_example
 *   cc examples/api_example.c $(pkg-config --cflags --libs plumb)   (installed)
 *
 * Simulates a read of every 8 bytes of growing arrays on the default
 * machine and prints the L1D and L2 miss ratios (one miss per 64-byte line
 * once the array outgrows a cache), then counts the page faults of touching
 * fresh memory with the counters, saying "unsupported" and why when this
 * machine cannot count them. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <plumb/plumb.h>

int main(void)
{
	plumb_error error;
	printf("libplumb %s\n", plumb_version());
	for (uint64_t bytes = 16 << 10; bytes <= 4 << 20; bytes *= 4) {
		plumb_sim *sim;
		if (plumb_sim_new(&sim, NULL, NULL, &error) != 0) {
			fprintf(stderr, "api_example: %s\n", error.message);
			return 1;
		}
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1)
				plumb_sim_reset_counts(sim);   /* the second pass: warm caches */
			for (uint64_t a = 0; a < bytes; a += 8)
				plumb_sim_access(sim, 0, PLUMB_ACCESS_READ, 0x100000 + a, 8, &error);
		}
		plumb_sim_counts counts;
		plumb_sim_counts_get(sim, 0, &counts, &error);
		printf("%6llu KiB  L1D misses %5.3f  L2 misses %5.3f per reference\n",
		       (unsigned long long)(bytes >> 10), (double)counts.l1d.misses / (double)counts.l1d.accesses,
		       (double)counts.l2.misses / (double)counts.l1d.accesses);
		plumb_sim_free(sim);
	}

	plumb_counters *counters;
	if (plumb_counters_open(&counters, NULL, "page-faults,task-clock", &error) != 0) {
		fprintf(stderr, "api_example: %s\n", error.message);
		return 1;
	}
	size_t size = 4 << 20;
	/* Fresh pages straight from the kernel (malloc may hand back memory the
	 * simulator used and freed, already faulted in), small ones: one fault each. */
	char *memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memory == MAP_FAILED)
		memory = NULL;
	else
		madvise(memory, size, MADV_NOHUGEPAGE);
	plumb_counters_start(counters, &error);
	if (memory)
		memset(memory, 1, size);
	plumb_counters_stop(counters, &error);
	plumb_count values[2];
	int n = plumb_counters_read(counters, values, 2, &error);
	for (int i = 0; i < n; i++) {
		if (values[i].state == PLUMB_COUNT_OK || values[i].state == PLUMB_COUNT_MULTIPLEXED)
			printf("%-12s %.0f\n", values[i].event, values[i].value);
		else
			printf("%-12s %s: %s\n", values[i].event, plumb_count_state_name(values[i].state), values[i].reason);
	}
	plumb_counters_close(counters);
	if (memory)   /* use the memory, so the compiler keeps the memset */
		printf("(touched %zu KiB, last byte %d)\n", size >> 10, ((volatile char *)memory)[size - 1]);
	if (memory)
		munmap(memory, size);
	return 0;
}
