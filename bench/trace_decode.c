/* Trace format throughput: how fast plumb reads its native format (and the
 * text formats) through the public reader API, as the simulator does.
 *
 * The synthetic trace imitates a lackey trace of a loop: 8-instruction loop
 * body (fetches of 2-7 bytes), a streaming 8-byte load, a stack store every
 * other instruction, a modify now and then, two threads switching every 64Ki
 * references.  Every record carries its instruction address (as lackey's
 * do), so the instruction-address path of the codec is exercised too.  The
 * files live in a temporary directory (page cache), so the figures are the
 * decoder's, not the disk's.
 *
 * usage: trace_decode [RECORDS] [REPEATS]   (defaults 50000000 and 3)
 *        trace_decode --file TRACE [REPEATS]
 * The second form reads a real trace (any format), converts it to native in a
 * temporary directory and reads that: real traces compress less than the
 * synthetic one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "trace/trace.h"

#define BATCH 4096

/* CPU time of this thread: eight developers share the machine's two cores,
 * so wall time mostly measures the neighbours.  Reading is single-threaded
 * and CPU-bound (the files sit in the page cache), so CPU time is the
 * decoder's cost. */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void generate(trace_record *batch, size_t count, uint64_t *state, int threads)
{
	static const uint16_t fetch_sizes[8] = { 3, 4, 7, 2, 5, 3, 4, 6 };
	uint64_t i = *state;
	for (size_t k = 0; k < count; k++, i++) {
		trace_record *r = &batch[k];
		uint64_t instruction = i / 2;
		uint64_t slot = instruction % 8;
		uint64_t pc = 0x401000 + slot * 5;
		memset(r, 0, sizeof *r);
		r->thread = threads > 1 ? (uint32_t)((i >> 16) & 1) : 0;
		r->instruction_address = pc;
		r->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		if (i % 2 == 0) {
			r->kind = TRACE_INSTRUCTION;
			r->address = pc;
			r->size = fetch_sizes[slot];
		} else if (slot % 4 == 1) {
			r->kind = TRACE_WRITE;
			r->address = 0x1ffefff000 + r->thread * 0x100000 + (slot * 8);
			r->size = 8;
		} else if (slot == 7) {
			r->kind = TRACE_MODIFY;
			r->address = 0x601040;
			r->size = 4;
		} else {
			r->kind = TRACE_READ;
			r->address = 0x10000000 + r->thread * 0x4000000 + (instruction * 8) % (256u << 20);
			r->size = 8;
		}
	}
	*state = i;
}

static int write_trace(const char *path, trace_format format, uint64_t records, double *seconds)
{
	/* din has no threads. */
	int threads = format == TRACE_FORMAT_DIN ? 1 : 2;
	plumb_status status;
	trace_writer *writer;
	trace_record *batch = malloc(BATCH * sizeof *batch);
	uint64_t state = 0;
	double start = now();
	if (!batch || trace_writer_open(&writer, path, format, &status) < 0) {
		fprintf(stderr, "trace_decode: %s\n", status.message);
		return -1;
	}
	for (uint64_t done = 0; done < records; done += BATCH) {
		size_t n = records - done < BATCH ? (size_t)(records - done) : BATCH;
		generate(batch, n, &state, threads);
		if (trace_writer_write(writer, batch, n, &status) < 0) {
			fprintf(stderr, "trace_decode: %s\n", status.message);
			trace_writer_abort(writer);
			return -1;
		}
	}
	if (trace_writer_close(writer, &status) < 0) {
		fprintf(stderr, "trace_decode: %s\n", status.message);
		return -1;
	}
	*seconds = now() - start;
	free(batch);
	return 0;
}

/* One full read; returns seconds, or -1.  The checksum keeps the compiler
 * from skipping the records. */
static double read_trace(const char *path, trace_format format, uint64_t expect, uint64_t *checksum)
{
	plumb_status status;
	trace_reader *reader;
	trace_record *batch = malloc(BATCH * sizeof *batch);
	double start = now();
	if (!batch || trace_reader_open(&reader, path, format, &status) < 0) {
		fprintf(stderr, "trace_decode: %s\n", status.message);
		return -1;
	}
	/* This thread's CPU time is the decoder's cost only if it decodes:
	 * keep native files off the background worker. */
	trace_reader_set_background(reader, 0);
	uint64_t total = 0, sum = 0;
	long n;
	while ((n = trace_reader_read(reader, batch, BATCH, &status)) > 0) {
		total += (uint64_t)n;
		sum += batch[n - 1].address;
	}
	double seconds = now() - start;
	if (n < 0 || trace_reader_close(reader, &status) < 0) {
		fprintf(stderr, "trace_decode: %s\n", status.message);
		return -1;
	}
	free(batch);
	if (expect && total != expect) {
		fprintf(stderr, "trace_decode: read %llu records, wrote %llu\n", (unsigned long long)total,
		        (unsigned long long)expect);
		return -1;
	}
	*checksum += sum;
	return seconds;
}

static int convert(const char *in, const char *out, trace_format format, uint64_t *records, double *seconds)
{
	plumb_status status;
	trace_reader *reader;
	trace_writer *writer;
	trace_record *batch = malloc(BATCH * sizeof *batch);
	double start = now();
	if (trace_reader_open(&reader, in, TRACE_FORMAT_AUTO, &status) < 0 ||
	    trace_writer_open(&writer, out, format, &status) < 0) {
		fprintf(stderr, "trace_decode: %s\n", status.message);
		return -1;
	}
	trace_reader_set_background(reader, 0);   /* as in read_trace */
	long n;
	*records = 0;
	while ((n = trace_reader_read(reader, batch, BATCH, &status)) > 0) {
		*records += (uint64_t)n;
		if (trace_writer_write(writer, batch, (size_t)n, &status) < 0)
			break;
	}
	if (n < 0 || trace_writer_close(writer, &status) < 0 || trace_reader_close(reader, &status) < 0) {
		fprintf(stderr, "trace_decode: %s\n", status.message);
		return -1;
	}
	*seconds = now() - start;
	free(batch);
	return 0;
}

static int bench_file(const char *path, int repeats)
{
	char directory[] = "/tmp/plumb-trace-bench-XXXXXX";
	if (!mkdtemp(directory)) {
		perror("mkdtemp");
		return 1;
	}
	char native[256];
	snprintf(native, sizeof native, "%s/file.ptrace", directory);
	uint64_t records, checksum = 0;
	double seconds, best = -1, source_best = -1;
	int failed = convert(path, native, TRACE_FORMAT_NATIVE, &records, &seconds) < 0;
	for (int r = 0; !failed && r < repeats; r++) {
		double s = read_trace(path, TRACE_FORMAT_AUTO, records, &checksum);
		double t = read_trace(native, TRACE_FORMAT_NATIVE, records, &checksum);
		failed = s < 0 || t < 0;
		if (source_best < 0 || s < source_best)
			source_best = s;
		if (best < 0 || t < best)
			best = t;
	}
	struct stat source, converted;
	if (!failed && stat(path, &source) == 0 && stat(native, &converted) == 0) {
		printf("source %s: %llu records, %.2f bytes/record, read %.1f Mrec/s (best of %d, %.3f s)\n", path,
		       (unsigned long long)records, (double)source.st_size / (double)records, (double)records / source_best / 1e6,
		       repeats, source_best);
		printf("native: %.3f bytes/record, converted at %.1f Mrec/s, read %.1f Mrec/s (best of %d, %.3f s)\n",
		       (double)converted.st_size / (double)records, (double)records / seconds / 1e6, (double)records / best / 1e6,
		       repeats, best);
	}
	unlink(native);
	rmdir(directory);
	fprintf(stderr, "(checksum %llx)\n", (unsigned long long)checksum);
	return failed;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--file") == 0)
		return bench_file(argv[2], argc > 3 ? atoi(argv[3]) : 3);
	uint64_t records = argc > 1 ? strtoull(argv[1], NULL, 10) : 50000000ull;
	int repeats = argc > 2 ? atoi(argv[2]) : 3;
	if (records == 0 || repeats < 1) {
		fprintf(stderr, "usage: trace_decode [RECORDS] [REPEATS]\n");
		return 2;
	}
	char directory[] = "/tmp/plumb-trace-bench-XXXXXX";
	if (!mkdtemp(directory)) {
		perror("mkdtemp");
		return 1;
	}
	static const struct { trace_format format; const char *name; uint64_t divisor; } formats[] = {
		{ TRACE_FORMAT_NATIVE, "native", 1 },
		{ TRACE_FORMAT_LACKEY, "lackey", 5 },   /* text formats: a fifth of the records, they are slower */
		{ TRACE_FORMAT_DIN, "din", 5 },
	};
	printf("%-7s %12s %10s %12s %12s %12s\n", "format", "records", "bytes/rec", "write Mrec/s", "read Mrec/s",
	       "read best s");
	uint64_t checksum = 0;
	int failed = 0;
	for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
		uint64_t n = records / formats[f].divisor;
		char path[256];
		snprintf(path, sizeof path, "%s/bench.%s", directory, formats[f].name);
		double write_seconds;
		if (write_trace(path, formats[f].format, n, &write_seconds) < 0) {
			failed = 1;
			continue;
		}
		struct stat st;
		stat(path, &st);
		double best = -1;
		for (int r = 0; r < repeats; r++) {
			/* din writes a modify as a read and a write, so its count differs. */
			double s = read_trace(path, formats[f].format, formats[f].format == TRACE_FORMAT_DIN ? 0 : n, &checksum);
			if (s < 0) {
				failed = 1;
				break;
			}
			if (best < 0 || s < best)
				best = s;
		}
		unlink(path);
		if (best > 0)
			printf("%-7s %12llu %10.3f %12.1f %12.1f %12.3f\n", formats[f].name, (unsigned long long)n,
			       (double)st.st_size / (double)n, (double)n / write_seconds / 1e6, (double)n / best / 1e6, best);
	}
	rmdir(directory);
	fprintf(stderr, "(checksum %llx)\n", (unsigned long long)checksum);
	return failed;
}
