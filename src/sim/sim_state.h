/* The simulator object (struct sim, made in sim.c): its cores' caches,
 * the shared L3, the directory, the threads, and the parts of it that
 * regions (sim_regions.c) and annotation (sim_annotate.c) keep. */
#ifndef PLUMB_SIM_STATE_H
#define PLUMB_SIM_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim.h"
#include "sim/sim_cache.h"
#include "sim/sim_prefetch.h"
#include "sim/sim_table.h"

/* The lines of one reference the engine simulates; a longer one is cut. */
#define SIM_MAX_LINES 64

typedef struct sim_invalidation_record {
	uint64_t written;       /* words other cores wrote since this core lost the line */
	uint8_t inclusion;      /* lost to back-invalidation rather than coherence */
} sim_invalidation_record;

typedef struct sim_directory_entry {
	uint64_t sharers;       /* cores whose private hierarchy holds the line */
	uint64_t recorded;      /* cores with an invalidation record for it (classify) */
} sim_directory_entry;

typedef struct sim_core {
	sim_cache cache[3];     /* L1I, L1D, L2 */
	sim_cache tlb[SIM_TLB_COUNT];
	sim_table invalidated;  /* line -> sim_invalidation_record (classify) */
	sim_stream_position *streams;   /* stride prefetcher and stream buffers */
	sim_stream_buffer *buffers;     /* stream buffers (one per stream) */
	uint64_t *buffer_lines;         /* streams * depth slots, shared by the buffers */
	uint8_t *buffer_states;
	uint32_t buffered;              /* lines held by all buffers (a lookup skips empty ones) */
	uint64_t stream_clock;
} sim_core;

/* A loop variant (sim_loop.h): records, or plumbgrind's entries. */
typedef int (*sim_batch_loop)(sim *s, const trace_record *records, size_t n, plumb_status *status);
typedef int (*sim_compact_loop)(sim *s, trace_compact *c, plumb_status *status);

typedef struct sim_thread_slot {
	sim_thread_stats stats;
	bool used;
} sim_thread_slot;

struct sim {
	sim_config config;
	sim_stats stats;
	sim_shadow_worker *shadow_worker;   /* the L1 shadows' thread, or NULL */
	sim_core core[SIM_MAX_CORES];
	sim_cache l3;
	bool has_l2, has_l3, has_tlb;
	uint32_t granule_bits;          /* coherence line: L2's, or L1D's without L2 */
	uint32_t word_bits;             /* sharing-mask word: line / 64, at least 4 bytes */
	sim_table directory;            /* granule -> sim_directory_entry (cores > 1) */
	sim_table lines;                /* granule -> sim_line_stats (classify) */
	sim_table code;                 /* ip -> sim_code_stats (classify) */
	sim_thread_slot *threads;       /* indexed by trace thread id */
	size_t thread_capacity;
	uint32_t *thread_core;          /* thread id -> core + 1 (0 = unmapped) */
	uint32_t next_core;
	/* the reference being simulated */
	sim_thread_stats *current_thread;
	uint64_t current_ip;
	bool fast;                      /* no classification, no TLB: the hit path is a few instructions */
	bool narrow_sets;               /* tests: the entries' portable loops even with AVX-512 (then
	                                 * sim_loop_choose again) */
	sim_batch_loop batch_loop;      /* the variants sim_loop_choose picked: for records, */
	sim_compact_loop compact_loop;  /* for plumbgrind's entries, */
	bool compact_program;           /* which walks s->program (the definitions made into ops), */
	bool compact_checks;            /* and checks an unchecked run as it walks */
	bool lean;                      /* no classification, check or prefetcher: one-line references
	                                 * take sim_engine.c's reference_one_line */
	bool single;                    /* one core without an L2, LRU L1s, MESI or MOESI, no check,
	                                 * prefetcher or annotation: one-line references with
	                                 * classification take sim_engine.c's reference_single
	                                 * (sim_loop_choose) */
	struct sim_regions *regions;    /* sim_regions.c; NULL until the first marker */
	const trace_code_map *code_map; /* names for the code table, or NULL */
	struct sim_program *program;    /* plumbgrind's definitions made into ops (sim_access_compact) */
	bool annotate;                  /* per-instruction costs (sim_annotate.c) */
	sim_table annotation;           /* ip -> sim_annotation */
	uint64_t last_ip[SIM_MAX_CORES]; /* annotate: each core's last instruction */
	uint32_t trace_thread;          /* annotate: the thread of the reference being simulated */
	struct sim_calls *calls;        /* annotate: calls followed (sim_annotate.c); NULL until the first */
	const sim_prefetch_hooks *prefetcher; /* sim_prefetch_policy, set by sim_new */
	/* the first invariant violation (check on) */
	bool failed;
	char failure[PLUMB_MESSAGE_MAX];
};

/* n references of kind made by core, counted for the core, the current
 * thread and the whole run (the loops that count them locally flush here). */
static inline void sim_count_references(sim *s, uint32_t core, int kind, uint64_t n)
{
	s->stats.core[core].references[kind] += n;
	if (s->current_thread)
		s->current_thread->references[kind] += n;
	s->stats.references[kind] += n;
}

/* sim_regions.c: a region marker of the thread on core (its slot is
 * current); the batch loops flush their local counts first. */
int sim_region_marker(sim *s, uint32_t core, const trace_record *record, plumb_status *status);
void sim_regions_free(sim *s);
void sim_regions_reset(sim *s);

/* sim_annotate.c: one completed demand reference (annotate on). */
void sim_annotate_reference(sim *s, uint32_t core, sim_access_kind kind, const bool reached[3], const bool missed[3],
                            bool coherence_true, bool coherence_false, uint64_t invalidations);
void sim_annotate_received(sim *s, uint32_t core);
/* A call or return record (trace_is_call) of the trace. */
int sim_annotate_call(sim *s, const trace_record *record, plumb_status *status);
void sim_annotate_free(sim *s);

#endif
