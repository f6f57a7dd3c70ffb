/* Simulator throughput: references per CPU second through sim_access_batch.
 *
 *   sim_throughput [--refs N] [--cores 1|2] [--workload typical|stream]
 *                  [--switch N] [--repeat R] [--classify]
 *   sim_throughput --trace FILE [--passes P] [--cores 1|2] [--repeat R] [--classify] [--sync] [--copy]
 *   sim_throughput --command [--passes P] [--cores 1|2] [--repeat R] [--classify] -- PROGRAM [ARGS]
 *
 * With --trace the references come from a trace file (native, lackey or
 * din) read P times through trace_reader_view_compact (records lent, not copied,
 * or plumbgrind's entries as they are from a file that keeps them;
 * --copy: trace_reader_read into a 64 Ki-record batch) in batches of up to
 * 64 Ki records; wall
 * time, process CPU time and the calling thread's reading and simulating
 * CPU times are reported (see replay()).  --sync turns the native reader's
 * background decoding off.
 *
 * The references come from a generator shaped like a lackey trace: one
 * instruction fetch per instruction (half the references, a 4 KiB loop),
 * data references to a hot 16 KiB region (stack and small heap objects) and
 * a sequential stream of 8-byte elements through 64 MiB.
 *   typical: 20% of data references stream (L1 miss rate ~1.3%, the streamed
 *            lines miss every level: a compute loop reading an array);
 *   stream:  50% of data references stream (miss rate ~3%: a STREAM-like
 *            memory-bound loop, the simulator's slow path dominates).
 * The generator fills one 4096-record batch that is reused, so only the
 * simulator is timed and memory stays flat however many references run.
 * Two cores: threads 0 and 1 alternate every --switch references (lackey's
 * scheduler switches threads only every few thousand blocks) and a quarter
 * of the hot region is shared and written, so coherence traffic happens. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "sim/sim.h"
#include "trace/trace.h"

#define BATCH 4096

/* Thread CPU time: on a shared machine the wall clock also counts the time
 * other jobs held the CPU; the simulator is single-threaded, so its CPU
 * time is its cost. */
static double clock_seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
	return clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

typedef struct generator {
	uint64_t pc, stream, seed;
	uint64_t step;
	uint32_t stream_percent;   /* of data references */
	uint32_t switch_every;     /* references between thread switches */
} generator;

static uint64_t next_random(generator *g)
{
	g->seed ^= g->seed << 13;
	g->seed ^= g->seed >> 7;
	g->seed ^= g->seed << 17;
	return g->seed;
}

static void generate(generator *g, trace_record *r, size_t n, uint32_t cores)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t thread = cores > 1 ? (uint32_t)(g->step / g->switch_every) & 1 : 0;
		uint64_t x = next_random(g);
		memset(&r[i], 0, sizeof r[i]);
		r[i].thread = thread;
		r[i].size = 8;
		if ((g->step++ & 1) == 0) {
			/* an instruction of a 4 KiB loop, 4 bytes each */
			g->pc = (g->pc + 4) & 4095;
			r[i].kind = TRACE_INSTRUCTION;
			r[i].address = 0x400000 + g->pc;
			r[i].size = 4;
		} else if ((x >> 32) % 100 >= g->stream_percent) {
			/* the hot region: 16 KiB per thread, its first 4 KiB shared */
			uint64_t offset = (x >> 8) & (16383 & ~7ull);
			r[i].kind = (x & 3) == 0 ? TRACE_WRITE : TRACE_READ;
			r[i].address = 0x7ff000000000ull + (offset < 4096 ? offset : ((uint64_t)thread << 20) + offset);
		} else {
			/* a stream through 64 MiB per thread, one write in eight */
			r[i].kind = (x & 7) == 0 ? TRACE_WRITE : TRACE_READ;
			g->stream = (g->stream + 8) & ((64ull << 20) - 1);
			r[i].address = 0x10000000000ull + ((uint64_t)thread << 32) + g->stream;
		}
	}
}

static long peak_rss_kib(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, compare);
	return v[n / 2];
}

/* Replays a trace file.  The reader decodes native traces in a worker
 * thread unless --sync, so four figures per repeat:
 *   wall      records / elapsed wall-clock time of the whole replay (the
 *             figure a user waits for; it is what overlapping buys);
 *   cpu       records / CPU time of all the process's threads (the reader's
 *             worker included: the total work);
 *   simulate  records / CPU time of the calling thread inside sim_access_batch;
 *   read      records / CPU time of the calling thread inside
 *             trace_reader_view/read (with the worker: waiting for a ready
 *             chunk, and with --copy copying it out).
 * With --sync, cpu is the read + simulate figure the earlier tables gave.
 * With --command, each pass runs the program under plumbgrind (valgrind is
 * another process: cpu is then plumb's side of a live plumb sim -- PROGRAM,
 * the consumer a recorded run's replay is compared with). */
static int replay(const char *path, char **command, int passes, int repeat, bool sync, bool copy,
                  const sim_config *config)
{
	enum { REPLAY_BATCH = 65536 };
	trace_record *batch = malloc(REPLAY_BATCH * sizeof *batch);
	double *wall = calloc((size_t)repeat, sizeof *wall), *cpu = calloc((size_t)repeat, sizeof *cpu);
	double *simulate = calloc((size_t)repeat, sizeof *simulate), *read = calloc((size_t)repeat, sizeof *read);
	if (!batch || !wall || !cpu || !simulate || !read)
		return 1;
	plumb_status status;
	uint64_t records = 0;
	int background = 0;
	for (int r = 0; r < repeat; r++) {
		sim *s;
		if (sim_new(&s, config, &status) != 0) {
			fprintf(stderr, "sim_throughput: %s\n", status.message);
			return 1;
		}
		double reading = 0, simulating = 0;
		double wall_start = clock_seconds(CLOCK_MONOTONIC), cpu_start = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
		records = 0;
		for (int p = 0; p < passes; p++) {
			trace_reader *reader;
			if ((command ? trace_reader_open_command(&reader, command, &status)
			             : trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, &status)) != 0) {
				fprintf(stderr, "sim_throughput: %s\n", status.message);
				return 1;
			}
			background = trace_reader_set_background(reader, !sync);
			for (;;) {
				double start = now();
				const trace_record *records_now = batch;
				/* as plumb sim reads: a file of plumbgrind's entries (format
				 * 1.3) hands them out as they are */
				trace_compact compact = { 0 };
				long got = copy ? trace_reader_read(reader, batch, REPLAY_BATCH, &status)
				                : trace_reader_view_compact(reader, &records_now, &compact, REPLAY_BATCH, &status);
				double middle = now();
				reading += middle - start;
				if (got < 0) {
					fprintf(stderr, "sim_throughput: %s\n", status.message);
					return 1;
				}
				if (got == 0)
					break;
				if ((compact.words ? sim_access_compact(s, &compact, &status)
				                   : sim_access_batch(s, records_now, (size_t)got, &status)) != 0) {
					fprintf(stderr, "sim_throughput: %s\n", status.message);
					return 1;
				}
				simulating += now() - middle;
				records += (uint64_t)got;
			}
			if (trace_reader_close(reader, &status) != 0) {
				fprintf(stderr, "sim_throughput: %s\n", status.message);
				return 1;
			}
		}
		wall[r] = (double)records / (clock_seconds(CLOCK_MONOTONIC) - wall_start);
		cpu[r] = (double)records / (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start);
		read[r] = (double)records / reading;
		simulate[r] = (double)records / simulating;
		sim_free(s);
	}
	double wall_median = median(wall, repeat), cpu_median = median(cpu, repeat);
	printf("trace=%s passes=%d cores=%u protocol=%s l3=%s classify=%s reader=%s%s repeat=%d records=%llu\n"
	       "  wall median=%.1f Mrefs/s (min %.1f max %.1f)  cpu median=%.1f Mrefs/s (min %.1f max %.1f)  "
	       "simulate=%.1f read=%.1f peak_rss=%ld KiB\n",
	       path, passes, config->cores, sim_protocol_name(config->protocol), sim_inclusion_name(config->l3_inclusion),
	       config->classify ? "yes" : "no", background ? "background" : "sync", copy ? ",copy" : ",view", repeat,
	       (unsigned long long)records, wall_median / 1e6, wall[0] / 1e6, wall[repeat - 1] / 1e6,
	       cpu_median / 1e6, cpu[0] / 1e6, cpu[repeat - 1] / 1e6, median(simulate, repeat) / 1e6,
	       median(read, repeat) / 1e6, peak_rss_kib());
	free(batch);
	free(wall);
	free(cpu);
	free(simulate);
	free(read);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t refs = 100000000;
	uint32_t cores = 1;
	int repeat = 3;
	bool classify = false, sync = false, copy = false, run_command = false;
	char **command = NULL;
	const char *workload = "typical", *trace_path = NULL;
	int passes = 1;
	uint32_t switch_every = 4096;
	static const struct option options[] = {
		{ "workload", required_argument, 0, 'w' }, { "switch", required_argument, 0, 's' },
		{ "trace", required_argument, 0, 't' }, { "passes", required_argument, 0, 'p' },
		{ "refs", required_argument, 0, 'n' }, { "cores", required_argument, 0, 'c' },
		{ "repeat", required_argument, 0, 'r' }, { "classify", no_argument, 0, 'k' },
		{ "sync", no_argument, 0, 'y' }, { "copy", no_argument, 0, 'o' }, { "command", no_argument, 0, 'C' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	int option;
	while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (option) {
		case 'n': refs = strtoull(optarg, NULL, 0); break;
		case 'c': cores = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': repeat = atoi(optarg); break;
		case 'k': classify = true; break;
		case 'y': sync = true; break;
		case 'o': copy = true; break;
		case 'C': run_command = true; break;
		case 'w': workload = optarg; break;
		case 't': trace_path = optarg; break;
		case 'p': passes = atoi(optarg); break;
		case 's': switch_every = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'h':
			printf("usage: sim_throughput [--refs N] [--cores 1|2] [--workload typical|stream] [--switch N]\n"
			       "                      [--repeat R] [--classify]\n"
			       "       sim_throughput --trace FILE [--passes P] [--cores 1|2] [--repeat R] [--classify] [--sync] [--copy]\n"
			       "       sim_throughput --command [--passes P] [--cores 1|2] [--repeat R] [--classify] -- PROGRAM [ARGS]\n");
			return 0;
		default: return 2;
		}
	}
	if (run_command) {
		if (optind >= argc) {
			fprintf(stderr, "sim_throughput: --command wants the program after --\n");
			return 2;
		}
		command = argv + optind;
	}
	uint32_t stream_percent = strcmp(workload, "typical") == 0 ? 20 : strcmp(workload, "stream") == 0 ? 50 : 101;
	if (cores < 1 || cores > 2 || repeat < 1 || refs == 0 || stream_percent > 100 || switch_every == 0 ||
	    passes < 1) {
		fprintf(stderr, "sim_throughput: bad arguments\n");
		return 2;
	}
	/* Zen 4 geometry: 32 KiB L1s, 1 MiB L2, 32 MiB shared L3, MESI. */
	sim_config config;
	plumb_status status;
	if (sim_preset(&config, "zen4", &status) != 0) {
		fprintf(stderr, "sim_throughput: %s\n", status.message);
		return 1;
	}
	config.cores = cores;
	config.protocol = SIM_MESI;
	config.l3_inclusion = SIM_INCLUSIVE;
	config.classify = classify;
	for (int t = 0; t < SIM_TLB_COUNT; t++)
		config.tlb[t].entries = 0;
	if (trace_path || command)
		return replay(trace_path ? trace_path : command[0], command, passes, repeat, sync, copy, &config);
	trace_record *batch = malloc(BATCH * sizeof *batch);
	double *rates = calloc((size_t)repeat, sizeof *rates);
	if (!batch || !rates)
		return 1;
	uint64_t l1_misses = 0, coherence = 0;
	for (int r = 0; r < repeat; r++) {
		sim *s;
		if (sim_new(&s, &config, &status) != 0) {
			fprintf(stderr, "sim_throughput: %s\n", status.message);
			return 1;
		}
		generator g = { .pc = 0, .stream = 0, .seed = 88172645463325252ull, .step = 0,
		                .stream_percent = stream_percent, .switch_every = switch_every };
		double elapsed = 0;
		for (uint64_t done = 0; done < refs; done += BATCH) {
			size_t n = refs - done < BATCH ? (size_t)(refs - done) : BATCH;
			generate(&g, batch, n, cores);
			double start = now();
			if (sim_access_batch(s, batch, n, &status) != 0) {
				fprintf(stderr, "sim_throughput: %s\n", status.message);
				return 1;
			}
			elapsed += now() - start;
		}
		rates[r] = (double)refs / elapsed;
		uint64_t v;
		sim_event_count(s, "PAPI_L1_TCM", -1, &v, &status);
		l1_misses = v;
		sim_event_count(s, "PAPI_CA_INV", -1, &v, &status);
		coherence = v;
		sim_free(s);
	}
	qsort(rates, (size_t)repeat, sizeof *rates, compare);
	printf("workload=%s switch=%u cores=%u refs=%llu classify=%s repeat=%d median=%.1f Mrefs/s min=%.1f max=%.1f "
	       "l1_misses=%llu invalidations=%llu peak_rss=%ld KiB\n",
	       workload, switch_every, cores, (unsigned long long)refs, classify ? "yes" : "no", repeat, rates[repeat / 2] / 1e6,
	       rates[0] / 1e6, rates[repeat - 1] / 1e6, (unsigned long long)l1_misses,
	       (unsigned long long)coherence, peak_rss_kib());
	free(batch);
	free(rates);
	return 0;
}
