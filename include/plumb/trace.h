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

#endif
