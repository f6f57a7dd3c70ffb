/* One memory reference, as every trace source (native file, lackey, din,
 * Valgrind tool, microbenchmark emitter) hands it to the simulator. */
#ifndef PLUMB_TRACE_H
#define PLUMB_TRACE_H

#include <stdint.h>

typedef enum trace_kind {
	TRACE_INSTRUCTION = 0,  /* instruction fetch */
	TRACE_READ = 1,
	TRACE_WRITE = 2,
	TRACE_MODIFY = 3        /* read then write of the same bytes (lackey 'M') */
} trace_kind;

typedef struct trace_record {
	uint64_t address;
	uint64_t instruction_address;  /* 0 when unknown */
	uint64_t time;                 /* time or instruction count; 0 when unknown */
	uint32_t thread;               /* 0-based thread index */
	uint16_t size;                 /* bytes */
	uint8_t kind;                  /* trace_kind */
	uint8_t flags;                 /* TRACE_HAS_* */
} trace_record;

#define TRACE_HAS_INSTRUCTION_ADDRESS 0x1
#define TRACE_HAS_TIME 0x2


/* Streaming trace sources and sinks.  Readers hand out records in batches so
 * the simulator's inner loop never pays a call per reference; memory use is
 * a fixed buffer, whatever the trace's length. */
#include <stddef.h>
#include "plumb/status.h"

typedef enum trace_format {
	TRACE_FORMAT_AUTO,     /* readers: sniff the magic; writers: from the file name */
	TRACE_FORMAT_NATIVE,   /* plumb's framed, zstd-compressed binary format */
	TRACE_FORMAT_LACKEY,   /* valgrind --tool=lackey --trace-mem=yes text */
	TRACE_FORMAT_DIN       /* Dinero III/IV "din" text: label address */
} trace_format;

typedef struct trace_reader trace_reader;
typedef struct trace_writer trace_writer;

/* path "-" reads standard input; pipes work (no seeking). */
int trace_reader_open(trace_reader **out, const char *path, trace_format format, plumb_status *status);
/* Runs argv under Valgrind's lackey and streams its references. */
int trace_reader_open_command(trace_reader **out, char *const argv[], plumb_status *status);
/* Up to capacity records; returns the count, 0 at the end, -1 on error
 * (a corrupt or truncated input says where). */
long trace_reader_read(trace_reader *reader, trace_record *records, size_t capacity, plumb_status *status);
trace_format trace_reader_format(const trace_reader *reader);
/* Closes; for a command source, fails if the program or valgrind failed. */
int trace_reader_close(trace_reader *reader, plumb_status *status);

/* Writers are atomic: nothing appears at path until trace_writer_close succeeds. */
int trace_writer_open(trace_writer **out, const char *path, trace_format format, plumb_status *status);
int trace_writer_write(trace_writer *writer, const trace_record *records, size_t count, plumb_status *status);
int trace_writer_close(trace_writer *writer, plumb_status *status);
void trace_writer_abort(trace_writer *writer);

#endif
