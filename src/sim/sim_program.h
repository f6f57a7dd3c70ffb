/* plumbgrind's definitions made into the simulator's own form
 * (sim_program.c), for the entries' loops (sim_loop_compact.c,
 * sim_loop_classify.c). */
#ifndef PLUMB_SIM_PROGRAM_H
#define PLUMB_SIM_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sim/sim_state.h"

/* A use entry names a definition (the records of one flush of the
 * instrumented code) and gives its data addresses.  For the MRU loop each
 * definition becomes ops once: a fetch knows its line and the front way of
 * its set already, so a fetch hit is a tag and a metadata compare with
 * nothing read from the trace; a read or write takes the next address word.
 * A fetch followed directly by fetches of the same line (no reference in
 * between) carries their number: once it is a hit at the front of its set,
 * they are too and change nothing, so they are counted at once; otherwise
 * each is simulated in turn.  A fetch across two lines (OP_FETCH2, in two
 * sets) is a hit when both are at the front of their sets.  A modify is a read, a write, or a read then
 * a write of the same address word, as the configuration says.  Anything
 * else (size 0, a fetch across two lines) is made into its record and goes
 * to mru_special. */
enum { OP_FETCH = 0, OP_READ = 1, OP_WRITE = 2, OP_OTHER = 3, OP_FETCH2 = 4 };

typedef struct sim_op {
	uint64_t line;          /* OP_FETCH, OP_FETCH2: the (first) L1I line */
	uint64_t address;       /* a fetch's address; a data reference's instruction address */
	uint32_t front;         /* OP_FETCH, OP_FETCH2: the index of the front way of its set */
	uint32_t front2;        /* OP_FETCH2: the same for the next line */
	uint16_t size;          /* cut to max_access_size, except OP_OTHER's */
	uint8_t kind;           /* OP_* */
	uint8_t trace_kind;     /* the record's kind */
	uint8_t index;          /* its record's in the definition (error messages) */
	uint8_t advance;        /* OP_READ, OP_WRITE: address words to pass after it (0: the read of a read-write modify) */
	uint16_t repeat;        /* OP_FETCH: fetches of the same line right after this one */
} sim_op;

/* A definition's fast form (sim_loop_compact.c): the distinct L1I lines of its
 * fetches, all checked at the front of their sets before anything else.
 * When they are, every fetch of the definition is a hit (only a reference
 * that leaves the L1s can change the L1I, and the data references that hit
 * do not), so the fetches are counted at once and only the data references
 * are walked; the first data reference that does not hit in the L1D takes
 * back the fetches after it, and the ops after it go one by one. */
typedef struct sim_fetch_line {
	uint64_t line;
	uint32_t front;         /* the index of the front way of its set */
} sim_fetch_line;

typedef struct sim_data_op {
	uint16_t size;
	uint8_t kind;           /* OP_READ or OP_WRITE */
	uint8_t advance;        /* as sim_op's */
	uint8_t index;          /* its record's in the definition (error messages) */
	uint8_t need, want, dirty;   /* the classifying loop's hit test for its kind (classify_masks) */
	uint16_t resume;        /* the op after it in the definition's ops */
	uint16_t fetches_after; /* fetches of the definition after it */
	uint16_t straddles_after;
	uint16_t unused;        /* 16 bytes: an op's address is a shift of its index */
} sim_data_op;

#define SIM_NO_FAST_FORM 0xff

/* What a use needs, in the order the classifying loop reads it: the head
 * check, the first fetch line (most definitions have one), the rest. */
typedef struct sim_definition {
	uint32_t head_high;     /* a use's head >> 32: the use tag and the data count (one compare) */
	uint32_t front;         /* lines[0]'s front way, below */
	uint64_t line;          /* the first of its fast form's fetch lines (p->lines[line_first]) */
	uint8_t lines;          /* its distinct fetch lines, SIM_NO_FAST_FORM: none (one by one) */
	uint8_t data_ops;
	uint8_t data_words;     /* a use's data addresses (trace_compact data[]): checked in the loop */
	uint8_t records;        /* the records a use stands for (trace_compact count[]) */
	uint16_t fetches;       /* its fetches (records) */
	uint16_t straddles;     /* those across two lines */
	uint32_t data_first;    /* its data ops in the program's data ops */
	uint32_t line_first;    /* its fetch lines in the program's lines */
	uint32_t first;         /* its first op */
	uint32_t count;         /* its ops: one per record, two for a read-write modify */
} sim_definition;

typedef struct sim_program {
	uint64_t stream;        /* trace_compact's identity of the stream compiled */
	size_t definitions;     /* definitions made into ops */
	sim_op *ops;
	size_t op_count, op_capacity;
	sim_definition *definition;   /* per definition: its ops */
	size_t capacity;
	sim_fetch_line *lines;        /* the definitions' fast forms' lines, each definition's in
	                               * the order of their last fetches (compact_classify touches
	                               * the L1I's shadow so) */
	size_t line_count, line_capacity;
	sim_data_op *data_ops;
	size_t data_op_count, data_op_capacity;
} sim_program;

/* Brings s->program up to the definitions of c's stream.  0, or -1 with
 * status filled (out of memory). */
int sim_program_update(sim *s, const trace_compact *c, plumb_status *status);
/* The records of the run's entries before `entry`, for an error message
 * (counted only then, so the loops need not). */
uint64_t sim_records_before(const trace_compact *c, const uint64_t *entry);
/* What makes a data reference of kind a hit in the classifying loop (as
 * sim_mru_masks, but no write is one when every write is general). */
void sim_classify_masks(const sim *s, unsigned kind, uint8_t *need, uint8_t *want, uint8_t *dirty);

/* A use's data count (trace_compact: bits 32-39 of its word). */
static inline size_t sim_use_data(uint64_t word)
{
	return (size_t)(word >> 32) & 0xff;
}

#endif
