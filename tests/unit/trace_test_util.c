#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace_test_util.h"
#include "../temp_folder.h"

static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 11;
}

void trace_test_records(trace_record *records, size_t count, uint64_t seed)
{
	static const uint16_t sizes[] = { 1, 2, 4, 8, 16, 32, 64, 3, 6, 10, 4096, 65535 };
	uint64_t state = seed, pc = 0x400000, data = 0x7ffd0000, time = 1000;
	uint32_t thread = 0;
	for (size_t i = 0; i < count; i++) {
		trace_record *r = &records[i];
		memset(r, 0, sizeof *r);
		uint64_t x = next_random(&state);
		if (x % 97 == 0)
			thread = (uint32_t)(next_random(&state) % 5) * (x % 3 == 0 ? 1000003u : 1u);
		r->thread = thread;
		r->kind = (uint8_t)(x >> 8) % 4;
		r->size = (x >> 12) % 5 == 0 ? sizes[(x >> 16) % 12] : (r->kind == TRACE_INSTRUCTION ? 4 : 8);
		if (r->kind == TRACE_INSTRUCTION) {
			pc += (x >> 20) % 300 == 0 ? (next_random(&state) << 20) : (x >> 24) % 8;
			r->address = pc;
		} else {
			switch ((x >> 20) % 4) {
			case 0: data += 8; r->address = data; break;
			case 1: r->address = 0x601000 + (x >> 30) % 4096; break;
			case 2: r->address = next_random(&state) | (x & 1 ? 0xffff000000000000ull : 0); break;
			default: r->address = data - (x >> 40) % 256; break;
			}
		}
		switch ((x >> 44) % 5) {
		case 0: break;
		case 1: r->flags |= TRACE_HAS_INSTRUCTION_ADDRESS; r->instruction_address = pc; break;
		case 2: r->flags |= TRACE_HAS_INSTRUCTION_ADDRESS; r->instruction_address = pc + (x >> 50) % 40; break;
		case 3: r->flags |= TRACE_HAS_INSTRUCTION_ADDRESS; r->instruction_address = i ? records[i - 1].instruction_address : 7; break;
		default: r->flags |= TRACE_HAS_INSTRUCTION_ADDRESS; r->instruction_address = r->address; break;
		}
		if ((x >> 54) % 3 == 0) {
			time += (x >> 56) % 3 == 0 ? (uint64_t)-(int64_t)((x >> 58) % 5) : (x >> 58) % 10;
			r->flags |= TRACE_HAS_TIME;
			r->time = time;
		}
		if (!(r->flags & TRACE_HAS_INSTRUCTION_ADDRESS))
			r->instruction_address = 0;
	}
}

const char *trace_test_path(const char *name)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", temp_folder("plumb-trace-test"), name);
	return path;
}

int trace_test_write(const char *path, trace_format format, const trace_record *records, size_t count)
{
	plumb_status status;
	trace_writer *writer;
	cr_assert_eq(trace_writer_open(&writer, path, format, &status), 0, "%s", status.message);
	/* Uneven batches, so batch edges fall anywhere. */
	for (size_t done = 0; done < count;) {
		size_t n = 1 + (done * 7919) % 5000;
		if (n > count - done)
			n = count - done;
		if (trace_writer_write(writer, records + done, n, &status) < 0) {
			trace_writer_abort(writer);
			return -1;
		}
		done += n;
	}
	cr_assert_eq(trace_writer_close(writer, &status), 0, "%s", status.message);
	return 0;
}

static long drain(trace_reader *reader, trace_record *records, size_t capacity, char *error, size_t error_size)
{
	plumb_status status;
	size_t total = 0;
	long n;
	size_t step = 1;
	while ((n = trace_reader_read(reader, records + total, capacity - total < step ? capacity - total : step, &status)) > 0) {
		total += (size_t)n;
		step = step * 3 + 1;   /* small and large batches */
		if (step > 100000)
			step = 777;
		if (total == capacity)
			break;
	}
	if (n < 0) {
		snprintf(error, error_size, "%s", status.message);
		trace_reader_close(reader, NULL);
		return -1 - (long)total;
	}
	if (trace_reader_close(reader, &status) < 0) {
		snprintf(error, error_size, "%s", status.message);
		return -1 - (long)total;
	}
	return (long)total;
}

long trace_test_read_all(const char *path, trace_format format, trace_record *records, size_t capacity,
                         char *error, size_t error_size)
{
	plumb_status status;
	trace_reader *reader;
	if (trace_reader_open(&reader, path, format, &status) < 0) {
		snprintf(error, error_size, "%s", status.message);
		return -1;
	}
	return drain(reader, records, capacity, error, error_size);
}

long trace_test_read_memory(const void *data, size_t size, trace_format format, trace_record *records,
                            size_t capacity, char *error, size_t error_size)
{
	plumb_status status;
	trace_reader *reader;
	if (trace_reader_open_memory(&reader, data, size, format, &status) < 0) {
		snprintf(error, error_size, "%s", status.message);
		return -1;
	}
	return drain(reader, records, capacity, error, error_size);
}

char *trace_test_slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *data = malloc((size_t)n + 1);
	cr_assert(data != NULL);
	cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = 0;
	fclose(f);
	*size = (size_t)n;
	return data;
}

void trace_test_spit(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f != NULL);
	cr_assert_eq(fwrite(data, 1, size, f), size);
	fclose(f);
}

int trace_test_records_equal(const trace_record *a, const trace_record *b)
{
	return a->address == b->address && a->instruction_address == b->instruction_address && a->time == b->time &&
	       a->thread == b->thread && a->size == b->size && a->kind == b->kind && a->flags == b->flags;
}
