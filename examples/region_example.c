/* An example of plumb's region markers in a user's program.
 *
 *   PLUMB_EVENTS=page-faults,task-clock,PAPI_L1_DCM build/examples/region_example [pages] [threads]
 *   PLUMB_REGION_JSON=regions.json build/examples/region_example
 *   PLUMB_BACKEND=papi PLUMB_EVENTS=perf::PAGE-FAULTS build/examples/region_example
 *   build/examples/region_example 1000 0     (0 threads: the main thread does the work)
 *
 * Each thread first-touches `pages` fresh pages in region "touch" (exactly
 * one minor fault per page), then sums them in region "sum" (no faults),
 * both inside region "thread".  The summary at exit shows one row per
 * (thread, region); events this machine cannot count say "unsupported". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <plumb/region.h>

static size_t pages = 1000;

/* The first write to each page, in a function of its own so that a
 * sanitizer build can leave it uninstrumented: AddressSanitizer's shadow
 * memory would add a fault of its own every 8 pages. */
__attribute__((no_sanitize("address"), noinline))
static void touch_pages(char *data, size_t page)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)data)[i * page] = (char)i;
}

static void *work(void *unused)
{
	(void)unused;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *data = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	/* Small pages, so that each page is one fault (no THP). */
	madvise(data, pages * page, MADV_NOHUGEPAGE);
	plumb_region_begin("thread");
	plumb_region_begin("touch");
	touch_pages(data, page);
	plumb_region_end("touch");
	plumb_region_begin("sum");
	unsigned long sum = 0;
	for (size_t i = 0; i < pages; i++)
		sum += ((volatile char *)data)[i * page];
	plumb_region_end("sum");
	plumb_region_end("thread");
	munmap(data, pages * page);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long threads = 2;
	if (argc > 1 && (pages = strtoul(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: region_example [pages > 0] [threads 0-64]\n");
		return 2;
	}
	if (argc > 2 && ((threads = strtol(argv[2], NULL, 10)) < 0 || threads > 64)) {
		fprintf(stderr, "usage: region_example [pages > 0] [threads 0-64]\n");
		return 2;
	}
	if (threads == 0) {
		work(NULL);
		return 0;
	}
	pthread_t team[64];
	for (long t = 0; t < threads; t++)
		pthread_create(&team[t], NULL, work, NULL);
	for (long t = 0; t < threads; t++)
		pthread_join(team[t], NULL);
	return 0;   /* the summary is written at exit */
}
