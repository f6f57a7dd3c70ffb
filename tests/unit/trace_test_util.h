/* Helpers shared by the trace unit tests. */
#ifndef PLUMB_TEST_TRACE_UTIL_H
#define PLUMB_TEST_TRACE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "trace/trace.h"

/* A deterministic mix of every record shape the codec distinguishes. */
void trace_test_records(trace_record *records, size_t count, uint64_t seed);
/* A fresh file name in a private temporary directory. */
const char *trace_test_path(const char *name);
int trace_test_write(const char *path, trace_format format, const trace_record *records, size_t count);
/* Reads everything; returns the count or -1 (message in error). */
long trace_test_read_all(const char *path, trace_format format, trace_record *records, size_t capacity,
                         char *error, size_t error_size);
long trace_test_read_memory(const void *data, size_t size, trace_format format, trace_record *records,
                            size_t capacity, char *error, size_t error_size);
char *trace_test_slurp(const char *path, size_t *size);
void trace_test_spit(const char *path, const void *data, size_t size);
int trace_test_records_equal(const trace_record *a, const trace_record *b);

#endif
