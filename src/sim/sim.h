/* The multicore cache, TLB and coherence simulator.
 *
 * A trace of references (plumb/trace.h records) goes through N cores, each
 * with private L1I, L1D and an optional L2, an optional shared L3, per-core
 * TLBs and an optional prefetcher, kept coherent by MSI, MESI, MOESI or the
 * write-through ESI protocol of Franz (2008).  Everything is counted: hits and
 * misses per kind, the 3C+coherence classification of misses, coherence
 * events, a state-transition matrix, per-thread and per-line and per-code-
 * address statistics.  The model and every statistic are defined in
 * docs/simulator.md.
 *
 *   sim_config config;
 *   sim_preset(&config, "zen4", &status);
 *   sim_config_set(&config, "cores", "2", &status);
 *   sim *s;
 *   sim_new(&s, &config, &status);
 *   sim_access_batch(s, records, n, &status);   // as many batches as needed
 *   const sim_stats *stats = sim_statistics(s);
 *   sim_free(s);
 *
 * The simulator is single-threaded, allocates nothing per reference (the
 * optional classification tables grow with the footprint, never with the
 * trace's length) and is deterministic: the same trace and configuration
 * give the same counts, bit for bit. */
#ifndef PLUMB_SIM_H
#define PLUMB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "trace/trace.h"
#include "core/output.h"

#define SIM_MAX_CORES 64
#define SIM_NAME_MAX 64

/* ------------------------------------------------------------ configuration */

typedef enum sim_level { SIM_L1I = 0, SIM_L1D, SIM_L2, SIM_L3, SIM_LEVEL_COUNT } sim_level;
typedef enum sim_tlb_level { SIM_ITLB = 0, SIM_DTLB, SIM_STLB, SIM_TLB_COUNT } sim_tlb_level;

typedef enum sim_replacement {
	SIM_LRU = 0, SIM_PLRU, SIM_FIFO, SIM_RANDOM, SIM_SRRIP
} sim_replacement;

typedef enum sim_inclusion { SIM_INCLUSIVE = 0, SIM_NON_INCLUSIVE, SIM_EXCLUSIVE } sim_inclusion;
typedef enum sim_protocol { SIM_MESI = 0, SIM_MSI, SIM_MOESI, SIM_ESI } sim_protocol;
/* next-line and stride prefetch into the L1D; stream: Jouppi's stream buffers beside it. */
typedef enum sim_prefetcher {
	SIM_PREFETCH_NONE = 0, SIM_PREFETCH_NEXT_LINE, SIM_PREFETCH_STREAM, SIM_PREFETCH_STRIDE
} sim_prefetcher;
/* Which entries of a stream buffer an L1D miss is compared with: the head
 * only (Jouppi 1990), or every entry (quasi-sequential; the ones before a
 * hit are dropped). */
typedef enum sim_stream_lookup { SIM_LOOKUP_HEAD = 0, SIM_LOOKUP_ANY } sim_stream_lookup;
/* What a trace 'M' (modify) is: one read (cachegrind), one write, or a read then a write. */
typedef enum sim_modify { SIM_MODIFY_READ = 0, SIM_MODIFY_WRITE, SIM_MODIFY_READ_WRITE } sim_modify;
/* More threads than cores: fold them round-robin, or stop with an error (the thesis). */
typedef enum sim_thread_map { SIM_MAP_MODULO = 0, SIM_MAP_ERROR } sim_thread_map;

/* Coherence states, in the order of the transition matrix. */
typedef enum sim_state { SIM_STATE_I = 0, SIM_STATE_S, SIM_STATE_E, SIM_STATE_O, SIM_STATE_M, SIM_STATE_COUNT } sim_state;

typedef struct sim_cache_config {
	uint64_t size;               /* bytes; 0 = this level is absent (L2, L3 only) */
	uint32_t line;               /* bytes, a power of two */
	uint32_t assoc;              /* ways; 0 = fully associative */
	uint32_t latency;            /* cycles for a hit at this level */
	sim_replacement replacement;
	bool write_back;             /* false: write-through */
	bool write_allocate;         /* false: no-write-allocate */
} sim_cache_config;

typedef struct sim_tlb_config {
	uint32_t entries;            /* 0 = absent */
	uint32_t assoc;              /* 0 = fully associative */
	uint64_t page_size;          /* bytes, a power of two */
	uint32_t latency;            /* cycles added by a miss that this level could not serve */
	sim_replacement replacement;
} sim_tlb_config;

typedef struct sim_prefetch_config {
	sim_prefetcher kind;
	uint32_t streams;            /* stream buffers (stream) or trackers (stride) per core */
	uint32_t depth;              /* lines per stream buffer, or lines kept ahead (stride) */
	sim_stream_lookup lookup;    /* stream buffers: head-only or any-entry comparison */
	bool unshared_only;          /* never prefetch a line another core holds */
} sim_prefetch_config;

typedef struct sim_config {
	char name[SIM_NAME_MAX];     /* the preset or file it came from */
	uint32_t cores;              /* 1..64 */
	sim_cache_config cache[SIM_LEVEL_COUNT];
	sim_inclusion l3_inclusion;
	sim_protocol protocol;
	sim_tlb_config tlb[SIM_TLB_COUNT];
	sim_prefetch_config prefetch;
	sim_modify modify;
	uint32_t max_access_size;    /* larger accesses are cut to this many bytes; 0 = never (cachegrind: min line) */
	uint32_t memory_latency;     /* cycles for a line from memory */
	uint32_t transfer_latency;   /* cycles for a line from another core's cache */
	uint32_t upgrade_latency;    /* cycles for an upgrade (S->M, O->M) */
	uint64_t seed;               /* random replacement */
	bool classify;               /* 3C+coherence classes, true/false sharing, hot lines, code addresses */
	bool check;                  /* check coherence invariants after every transaction */
	sim_thread_map thread_map;
} sim_config;

/* The default configuration: one core, 32 KiB 8-way L1I/L1D, 1 MiB 16-way L2,
 * no L3, LRU, write-back write-allocate, MESI, no TLB, no prefetcher. */
void sim_config_default(sim_config *config);
/* Presets: "host", "origin2000" (SGI Origin 2000 / MIPS R10000), "power3",
 * "itanium", "zen4", "intel" (a Golden Cove core), "cachegrind" (cachegrind's
 * I1/D1/LL model with its defaults), "franz08" (the thesis's private
 * write-through ESI hierarchy). */
int sim_preset(sim_config *config, const char *name, plumb_status *status);
/* The host preset from a measured machine model (machine_model.h): when
 * the shared cache's usable size (where the latency sweep puts its end) is
 * under half its nominal size, config's shared cache takes the usable size
 * (rounded down to whole sets); every level the model measured, memory
 * included, takes its measured latency in cycles (ns at the measured
 * clock), so the simulator's cycle estimate prices hits as plumb lat
 * measured them.  note gets what was done and why; returns 1 when the size
 * changed.  host-nominal is the preset that never does. */
struct machine_model;
int sim_preset_apply_machine(sim_config *config, const struct machine_model *model, char *note, size_t length);
/* The same rule for a usable size known otherwise (explain's machine
 * figures): the shared cache (L3, else L2) takes usable_bytes, rounded down
 * to whole sets, when that is under half the nominal size; the note names
 * source (length 0: no note).  Returns 1 when the size changed. */
int sim_preset_apply_usable(sim_config *config, double usable_bytes, const char *source, char *note, size_t length);
/* Another machine's caches, from the topo section of the report.json plumb
 * report wrote there (its table "caches": level, type, size, line, ways;
 * its "machine" property cores), set as the host preset sets this
 * machine's: one simulated core per core (at most SIM_MAX_CORES), a
 * non-inclusive L3 shared by all, LRU.  Fails naming what is missing;
 * sim_config_validate checks the rest (a size that is no whole number of
 * sets, say). */
struct output_report;
int sim_preset_from_topo(sim_config *config, const struct output_report *topo, plumb_status *status);
/* A one-line description of a configuration's caches, e.g. "L1d 48 KiB
 * 12-way, L1i 32 KiB 8-way, L2 1 MiB 16-way, L3 32 MiB 16-way shared,
 * 64 B lines, 2 cores" (levels in that order, absent ones left out; line
 * sizes per level when they differ).  Returns text. */
const char *sim_config_describe(const sim_config *config, char *text, size_t size);
/* A cache's size as people read it and exactly: "48 KiB", "260 MiB", or
 * bytes where no binary unit divides it ("11796480 B" is "11 MiB" only
 * when it is). */
const char *sim_size_text(uint64_t bytes, char *text, size_t size);
/* NULL-terminated list of preset names, and a one-line description of each. */
const char *const *sim_preset_names(void);
const char *sim_preset_description(const char *name);
/* One setting, with the keys of the configuration file format
 * ("l1d.size", "protocol", ...; docs/simulator.md). */
int sim_config_set(sim_config *config, const char *key, const char *value, plumb_status *status);
/* A "key=value" string, as on the command line. */
int sim_config_assign(sim_config *config, const char *assignment, plumb_status *status);
/* Parses configuration text (the file format) on top of *config.  Errors
 * name the line: "line 3: unknown key 'l1d.sise'". */
int sim_config_parse(sim_config *config, const char *text, size_t length, const char *origin,
                     plumb_status *status);
int sim_config_load(sim_config *config, const char *path, plumb_status *status);
/* Rejects impossible geometry and combinations with a message naming the level. */
int sim_config_validate(const sim_config *config, plumb_status *status);
/* Writes the configuration in the file format (parsing it back gives the same). */
int sim_config_write(const sim_config *config, FILE *stream);
/* A level's geometry as cachegrind takes it: "SIZE,ASSOC,LINE" ("32K,8,64")
 * into level.size, level.assoc and level.line, or "none" (l2, l3). */
int sim_config_set_geometry(sim_config *config, const char *level, const char *text, plumb_status *status);

/* A setting from the command line, applied after the preset and the file:
 * key NULL: value is "key=value"; geometry: value is a level's geometry
 * (sim_config_set_geometry, key the level "l1d"); else sim_config_set. */
typedef struct sim_setting {
	const char *key;
	const char *value;
	bool geometry;
} sim_setting;

/* Where the configuration came from when none was named. */
typedef struct sim_config_origin {
	char machine[512];                    /* "host (hwloc: ...)[, changed by N settings]", or "" */
	char host_problem[PLUMB_MESSAGE_MAX]; /* why this machine's caches could not be read, or "" */
} sim_config_origin;

/* The configuration plumb sim runs: the preset (or none), the file (or
 * none), then the settings in order, validated.  Without a preset or a
 * file: this machine's caches (the host preset), or the generic default
 * when they cannot be read (origin says which, and why). */
int sim_config_choose(sim_config *config, const char *preset, const char *path, const sim_setting *settings,
                      size_t setting_count, sim_config_origin *origin, plumb_status *status);
/* The same with a machine model read from machine_path (plumb report's
 * report.json; NULL: none) applied to the host preset
 * (sim_preset_apply_machine); origin->machine says what was simulated. */
int sim_config_choose_machine(sim_config *config, const char *preset, const char *path, const char *machine_path,
                              const sim_setting *settings, size_t setting_count, sim_config_origin *origin,
                              plumb_status *status);

const char *sim_level_name(sim_level level);          /* "L1I", "L1D", "L2", "L3" */
const char *sim_tlb_level_name(sim_tlb_level level);  /* "ITLB", "DTLB", "STLB" */
const char *sim_replacement_name(sim_replacement r);
const char *sim_protocol_name(sim_protocol p);
const char *sim_inclusion_name(sim_inclusion i);
const char *sim_state_name(sim_state s);               /* "I", "S", "E", "O", "M" */
const char *sim_prefetcher_name(sim_prefetcher p);

/* ---------------------------------------------------------------- statistics */

typedef enum sim_access_kind { SIM_IFETCH = 0, SIM_READ, SIM_WRITE, SIM_KIND_COUNT } sim_access_kind;

typedef struct sim_cache_stats {
	/* A reference is counted once per level it reaches, whatever the number
	 * of lines it touches there; it misses if any of its lines misses. */
	uint64_t accesses[SIM_KIND_COUNT];
	uint64_t misses[SIM_KIND_COUNT];
	uint64_t evictions;           /* valid lines replaced */
	uint64_t writebacks;          /* dirty lines written to the next level or memory */
	/* Classification of misses (classify on); they sum to the misses. */
	uint64_t compulsory, capacity, conflict;
	uint64_t coherence_true, coherence_false;   /* lost to another core's write */
	uint64_t inclusion_victim;    /* lost to back-invalidation by the inclusive L3 */
	uint64_t back_invalidations;  /* lines this cache lost to the inclusive L3 */
	uint64_t prefetch_fills;      /* lines the prefetcher brought in */
	uint64_t prefetch_useful;     /* of those, lines a demand reference then hit */
} sim_cache_stats;

typedef struct sim_tlb_stats {
	uint64_t accesses, misses;
	uint64_t compulsory, capacity, conflict;   /* classify on */
} sim_tlb_stats;

typedef struct sim_coherence_stats {
	uint64_t bus_reads;               /* read misses of the private hierarchy (BusRd) */
	uint64_t bus_read_exclusive;      /* write misses (BusRdX, read-for-ownership) */
	uint64_t upgrades_shared;         /* S -> M upgrade requests: PAPI_CA_SHR */
	uint64_t upgrades_clean;          /* E -> M, silent: PAPI_CA_CLN */
	uint64_t upgrades_owned;          /* O -> M (MOESI) */
	uint64_t bus_writes;              /* writes that reach memory (write-through, ESI) */
	uint64_t interventions_received;  /* a remote request found this core the owner (M/E/O): PAPI_CA_ITV */
	uint64_t invalidations_sent;      /* copies this core's requests invalidated */
	uint64_t invalidations_received;  /* copies this core lost to remote writes: PAPI_CA_INV */
	uint64_t transfers_supplied;      /* lines this core sent to another cache (dirty M/O data) */
	uint64_t transfers_received;      /* misses served by another core's cache */
	uint64_t downgrades;              /* M/E -> S or M -> O on a remote read */
	uint64_t writebacks;              /* dirty lines leaving the private hierarchy */
	uint64_t shared_reads;            /* thesis: another core bus-read a line this core held */
	uint64_t reads_with_sharers;      /* this core's bus reads that found other holders */
	uint64_t fanout[SIM_MAX_CORES];   /* requests that invalidated exactly k copies (k >= 1) */
	/* [cause][from][to]: cause 0 = this core's reference, 1 = another core's request
	 * or a back-invalidation. */
	uint64_t transitions[2][SIM_STATE_COUNT][SIM_STATE_COUNT];
} sim_coherence_stats;

typedef struct sim_prefetch_stats {
	uint64_t issued;                  /* lines requested by the prefetcher */
	uint64_t skipped_shared;          /* not issued: another core held the line (unshared_only) */
	uint64_t useful;                  /* demand references served by a prefetched line */
	uint64_t stream_hits;             /* L1D misses served from a stream buffer (not counted as misses) */
	uint64_t allocations;             /* stream buffers (re)started by a miss */
	uint64_t dropped_unused;          /* buffered lines discarded unused: flushes, lines passed over */
	uint64_t dropped_invalidated;     /* buffered lines lost to another core's write or an eviction below */
} sim_prefetch_stats;

typedef struct sim_core_stats {
	uint64_t references[SIM_KIND_COUNT];
	uint64_t straddles;               /* references that touched two or more L1 lines */
	sim_cache_stats cache[3];         /* L1I, L1D, L2 (indexed by sim_level) */
	sim_tlb_stats tlb[SIM_TLB_COUNT];
	sim_coherence_stats coherence;
	sim_prefetch_stats prefetch;
	uint64_t l3_accesses, l3_misses;  /* this core's share of the shared L3's */
	uint64_t memory_reads;            /* lines this core fetched from memory */
	uint64_t memory_writes;           /* writebacks and write-through traffic this core sent to memory */
} sim_core_stats;

typedef struct sim_stats {
	uint32_t cores;
	uint64_t references[SIM_KIND_COUNT];
	sim_core_stats core[SIM_MAX_CORES];
	sim_cache_stats l3;
	uint64_t l3_back_invalidations;   /* L3 evictions that removed private copies */
	uint64_t memory_reads, memory_writes;
} sim_stats;

typedef struct sim_thread_stats {
	uint32_t thread;                  /* the trace's thread id */
	uint32_t core;
	uint64_t references[SIM_KIND_COUNT];
	uint64_t l1_misses;               /* I1 + D1 */
	uint64_t last_level_misses;       /* references that went to memory (or another core) */
	uint64_t coherence_misses;
	uint64_t invalidations_sent;
} sim_thread_stats;

typedef struct sim_line_stats {
	uint64_t address;                 /* of the coherence line */
	uint64_t cores;                   /* bit i: core i took part */
	uint64_t reads, writes;           /* references that reached the coherence layer */
	uint64_t coherence_true, coherence_false;
	uint64_t invalidations, transfers, upgrades;
} sim_line_stats;

typedef struct sim_code_stats {
	uint64_t address;                 /* instruction address */
	uint64_t l1_misses, last_level_misses, coherence_misses, invalidations_sent;
} sim_code_stats;

/* Per-region results.  A trace may hold region markers (trace.h:
 * TRACE_REGION_BEGIN / TRACE_REGION_END records, written by plumbgrind for
 * plumb_region_begin/end and PLUMB_VG_REGION_BEGIN/END, and kept by the
 * native and lackey formats).  Regions are per thread, nest, and may be
 * entered many times, as in plumbgrind: a region's figures are everything
 * the thread's core counted between its BEGIN and its END, summed over its
 * entries (inclusive: an outer region includes its inner ones).  An END
 * that does not name the innermost open region of its thread is ignored and
 * counted as a mismatch; a region still open at the end is not counted.
 * When more threads than cores fold onto one core, a region also counts the
 * references of the other threads of its core (sim_region_folded says so).
 * The whole-program statistics are unchanged by markers. */
typedef struct sim_region_stats {
	const char *name;                 /* the simulator's own copy, valid until sim_free */
	uint32_t thread;                  /* the trace's thread id */
	uint32_t core;                    /* the core that thread runs on */
	uint64_t entries;                 /* completed BEGIN..END pairs */
	/* What the core counted while the region was open: references by kind,
	 * cache[SIM_L1I/L1D/L2].accesses/misses[kind] (and their classes),
	 * l3_accesses/l3_misses (the core's share of the shared L3), TLBs,
	 * coherence (invalidations sent and received, bus requests, upgrades,
	 * transfers), prefetches, memory_reads/writes. */
	sim_core_stats stats;
	/* Coherence misses (true + false sharing) over the core's private
	 * levels: L1I + L1D, plus L2 (classify on; 0 otherwise). */
	uint64_t coherence_misses;
} sim_region_stats;

/* --------------------------------------------------------------- simulation */

typedef struct sim sim;

int sim_new(sim **out, const sim_config *config, plumb_status *status);
void sim_free(sim *s);
const sim_config *sim_configuration(const sim *s);
/* Runs records through the simulator in order.  Fails only on an invariant
 * violation (check on), a thread map error, or a record with a bad kind. */
int sim_access_batch(sim *s, const trace_record *records, size_t n, plumb_status *status);
/* The same for a run of plumbgrind's compact entries (trace_reader_view_compact):
 * exactly what sim_access_batch does with the records they stand for.  With
 * one-line LRU L1s and no classification, TLB, check or annotation, the
 * entries are simulated as they are (the definitions made into the
 * simulator's own form once); otherwise they are expanded into records. */
/* An unchecked run (compact->unchecked) is walked up to its first entry
 * that is not a good use and settled (trace_compact_settle: end, records);
 * the classifying loop checks each use as it takes it. */
int sim_access_compact(sim *s, trace_compact *compact, plumb_status *status);
/* plumbgrind's L1 filter (docs/valgrind-tool.md, "L1 filtering"): for a
 * configuration whose L1s the tool can keep itself (one core, LRU L1s of at
 * least 64 sets and one line size, a write-back write-allocate L1D, MESI or
 * MOESI, no L2, no prefetcher, no TLB, no inclusive L3, no classification or
 * check), writes the tool's option (--plumb-filter=...: the L1s' geometry,
 * the metadata tests of a hit, and the metadata the engine gives a line on a
 * miss and a write, taken from the engine itself) and returns 1; returns 0
 * when the configuration cannot be filtered, -1 on an error. */
int sim_filter_option(const sim_config *config, char *option, size_t size, plumb_status *status);
/* A filtered run (compact->filtered): the COUNTS entries added as the MRU
 * loop adds its hits, every GENERAL reference through the engine after its
 * sets' least recent ways are checked against the tool's (a difference is an
 * error: "the tool's L1s and plumb's disagree"). */
int sim_access_filtered(sim *s, const trace_compact *compact, plumb_status *status);
/* One reference by core (not thread) core, for callers that make their own streams. */
int sim_access(sim *s, uint32_t core, sim_access_kind kind, uint64_t address, uint32_t size,
               plumb_status *status);
/* Places the trace's thread on its core now, as its first reference would
 * (threads go to cores round robin in the order they first appear): a
 * consumer that starts a simulator partway through a trace places the
 * threads it saw before, in their order, so that each keeps its core. */
int sim_thread_enter(sim *s, uint32_t thread, uint32_t *core, plumb_status *status);
/* Clears every statistic (the caches keep their contents): for counting a region. */
void sim_reset_statistics(sim *s);
const sim_stats *sim_statistics(const sim *s);
/* Estimated cycles of a core from the configured latencies (docs/simulator.md),
 * and the part of them spent on coherence (transfers and upgrades). */
uint64_t sim_core_cycles(const sim *s, uint32_t core, uint64_t *coherence_cycles);
size_t sim_thread_count(const sim *s);
const sim_thread_stats *sim_thread(const sim *s, size_t index);
/* The k hottest lines (by coherence misses + invalidations + transfers, then
 * address), k at most max; classify must be on.  Returns the count. */
size_t sim_hot_lines(const sim *s, sim_line_stats *out, size_t max);
/* The code addresses with most misses; classify on and a trace with
 * instruction addresses.  Returns the count. */
size_t sim_hot_code(const sim *s, sim_code_stats *out, size_t max);
/* Regions (see sim_region_stats), in order of first entry.  The typical use,
 * "simulated misses per region":
 *   for (size_t i = 0; i < sim_region_count(s); i++) {
 *       const sim_region_stats *r = sim_region(s, i);
 *       uint64_t l1d = r->stats.cache[SIM_L1D].misses[SIM_READ] + r->stats.cache[SIM_L1D].misses[SIM_WRITE];
 *       uint64_t l3 = r->stats.l3_misses;  ...
 *   }
 * Feed markers with sim_access_batch (a reader's records, or records made
 * with trace_region_marker()). */
size_t sim_region_count(const sim *s);
const sim_region_stats *sim_region(const sim *s, size_t index);
/* Misses of a region at a level (all kinds): SIM_L1I, SIM_L1D, SIM_L2, or
 * SIM_L3 (the core's share of the shared L3). */
uint64_t sim_region_misses(const sim_region_stats *region, sim_level level);
uint64_t sim_region_accesses(const sim_region_stats *region, sim_level level);
/* ENDs ignored because they did not name the innermost open region. */
uint64_t sim_region_mismatches(const sim *s);
/* Regions open now (at the end of a trace: never closed, not counted). */
size_t sim_region_open_count(const sim *s);
/* True when some core runs more than one thread, so regions on it include
 * the other threads' references. */
bool sim_region_folded(const sim *s);

/* Source names for the code table: the function, file and line of each
 * code address (trace_reader_code_map, from plumbgrind's debug
 * information).  Not copied: the map must outlive the reports.  Without a
 * map the code table's function, file and line are "unknown". */
void sim_set_code_map(sim *s, const trace_code_map *map);

/* ------------------------------------------------------------ annotation */

/* Costs per instruction address, for cachegrind's and callgrind's file
 * formats (sim_write_cachegrind, sim_write_callgrind).  Every data reference
 * is charged to the instruction that made it (the record's instruction
 * address), as cachegrind does. */
typedef enum sim_annotation_event {
	SIM_AN_IR = 0,      /* instruction fetches (L1I accesses) */
	SIM_AN_I1MR, SIM_AN_I2MR, SIM_AN_I3MR,  /* fetch misses at L1I, L2, L3 */
	SIM_AN_DR,          /* reads (L1D accesses) */
	SIM_AN_D1MR, SIM_AN_D2MR, SIM_AN_D3MR,
	SIM_AN_DW,          /* writes */
	SIM_AN_D1MW, SIM_AN_D2MW, SIM_AN_D3MW,
	SIM_AN_COHERENCE,   /* coherence misses (classify on) */
	SIM_AN_TRUE_SHARING, SIM_AN_FALSE_SHARING,
	SIM_AN_INV_SENT,    /* copies this instruction's requests invalidated */
	SIM_AN_INV_RECEIVED, /* copies its core lost while this was its last instruction */
	SIM_AN_EVENTS
} sim_annotation_event;

typedef struct sim_annotation {
	uint64_t address;
	uint64_t count[SIM_AN_EVENTS];
} sim_annotation;

/* Turns on the per-instruction costs; call before the first reference.  The
 * simulation then takes the general path for every reference (slower, the
 * same counts). */
int sim_annotate(sim *s, plumb_status *status);
/* The instructions with costs, sorted by address: returns how many; fills
 * out (when not NULL) with up to max of them. */
size_t sim_annotations(const sim *s, sim_annotation *out, size_t max);
/* cachegrind's output format (cg_annotate reads it): desc, cmd, events
 * (cachegrind's Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw, with I2mr/D2mr/D2mw
 * when an L2 sits above the L3, then plumb's CohM TrueSh FalseSh (classify
 * on), InvSent InvRecv), fl=/fn= blocks of "line costs", summary.  Names come
 * from map (trace_reader_code_map); without it every cost is in file "???",
 * function "0x<address>". */
int sim_write_cachegrind(const sim *s, const trace_code_map *map, const char *command, FILE *out,
                         plumb_status *status);
/* callgrind's format (KCachegrind, callgrind_annotate): the same costs as
 * self costs of each function and line, and the calls followed (TRACE_CALL /
 * TRACE_RETURN records: `plumb sim --callgrind-out -- PROG`): cfl=/cfn=/calls=
 * lines under the caller's line, with each call's inclusive cost (what its
 * thread was charged between call and return; a call to a function already
 * active in the thread counts but costs nothing, so recursion is counted
 * once; calls still open at the end are closed there).  Without call
 * records inclusive costs equal self costs. */
int sim_write_callgrind(const sim *s, const trace_code_map *map, const char *command, FILE *out,
                        plumb_status *status);
/* Call and return records taken (TRACE_CALL, TRACE_RETURN: not references;
 * plumbgrind sends them for the callgrind file's inclusive costs). */
uint64_t sim_call_records(const sim *s);

/* ---- Feeding a trace reader to simulators ---- */

/* The one loop from a trace reader (a native file, lackey or din text, the
 * ring of a program run under plumbgrind) into any number of simulators
 * (several configurations, say): each batch the reader gives goes to every
 * simulator in turn, as records or as plumbgrind's entries as they are
 * (sim_access_batch, sim_access_compact, sim_access_filtered), each through
 * the loop variant chosen when it was made.  plumb sim, the sweep, explain
 * and the API's plumb_sim_run_trace all read through it:
 *   sim *sims[2] = { a, b };
 *   sim_feed feed = { .sims = sims, .count = 2 };
 *   if (sim_feed_reader(&feed, reader, &status) != 0) ...   // feed.records: the records read */
typedef struct sim_feed sim_feed;
/* Called with each batch before the simulators take it: n records, or (with
 * n 0) plumbgrind's entries in compact, which it must not change.  It may
 * add simulators to sims (count, within the array's room) and set the
 * interleaver for the batches after.  Non-zero stops the feed (status filled). */
typedef int (*sim_feed_observer)(sim_feed *feed, const trace_record *records, size_t n, const trace_compact *compact,
                                 plumb_status *status);
struct sim_feed {
	sim **sims;                     /* fed in this order */
	size_t count;
	trace_interleaver *interleaver; /* the threads in lockstep (NULL: the reader's order) */
	bool records_only;              /* records (trace_reader_view), never entries: for an observer that reads records */
	bool show_progress;             /* a progress line on a terminal */
	size_t batch;                   /* records a read at most (0: 65536) */
	sim_feed_observer observe;      /* NULL: none */
	void *context;                  /* the observer's */
	uint64_t records;               /* out: the records read */
	/* The observer walks each run of uses through a simulator of its own
	 * (sim_access_compact, whose entry loops check an unchecked run as they
	 * walk it) and leaves its settled copy in `walked` (end and records):
	 * while sims is empty, runs are then handed out unchecked too, and
	 * anything else that reads a run must check it as it goes. */
	bool observer_walks;
	trace_compact walked;
};
/* Reads reader to its end into feed's simulators.  With one simulator, no
 * interleaver and no observer (or no simulator and an observer that walks
 * the runs itself: observer_walks), plumbgrind's runs of uses are checked
 * as the simulator walks them (trace_reader_want_unchecked_runs).  0, or
 * -1 with status filled (the reader's error or a simulator's). */
int sim_feed_reader(sim_feed *feed, trace_reader *reader, plumb_status *status);

/* ---- Running a trace (plumb sim) ---- */

/* Feeds everything reader gives through s (the interleaver's lockstep
 * order when not NULL; plumbgrind's entries as they are), with a progress
 * line on a terminal when show_progress (not while a live program writes
 * to the same terminal: its lines would land in the middle of the
 * progress line); *records counts what was read. */
int sim_run_reader(sim *s, trace_reader *reader, trace_interleaver *interleaver, bool show_progress,
                   uint64_t *records, plumb_status *status);
/* The code map of a run: plumbgrind's, from the reader, else the file
 * beside trace_path that plumb trace record wrote (TRACE.code; its path in
 * loaded_from, else ""); *map NULL when there is none.  trace_path NULL:
 * the reader ran a program. */
int sim_code_map_find(trace_reader *reader, const char *trace_path, trace_code_map **map, char *loaded_from,
                      size_t length, plumb_status *status);
/* Whether a run's outputs name code, so that it needs a code map: the
 * report's code table (classified runs, top > 0) and the cachegrind and
 * callgrind files.  Without, plumb sim -- PROGRAM asks plumbgrind for none
 * (TRACE_NO_CODE_MAP): sqlite3's tool time is 4% less. */
bool sim_run_names_code(const sim_config *config, size_t top, bool annotation_files);
/* What plumb sim's report says about its run besides the statistics. */
typedef struct sim_run_facts {
	const char *trace;                 /* the trace file, or the program run */
	trace_format format;               /* the format read */
	uint64_t records;                  /* references simulated */
	uint64_t interleave;               /* references of each thread in turn; 0: the trace's order */
	uint64_t interleave_window;        /* records read ahead for interleave */
	bool fair_sched;                   /* Valgrind ran the program with --fair-sched=yes */
	const sim_config_origin *origin;   /* where the configuration came from */
	const char *code_map;              /* the code map file read beside the trace, or NULL */
	bool truncated;                    /* the trace ended inside a block (--allow-truncated) */
	uint64_t truncated_bytes;          /* the bytes of that block, ignored */
	bool checked;                      /* --check ran and every invariant held */
} sim_run_facts;
/* plumb sim's report: the run's meta (trace, format, records, interleave,
 * scheduling, machine, code map) and notes around sim_report's sections.
 * NULL (status says why) when the report cannot be made. */
output_report *sim_run_report(const sim *s, const sim_run_facts *facts, size_t top, plumb_status *status);
/* The program and its arguments (count words) as one line, for the
 * annotation files' cmd: line; newlines become spaces.  Free it; NULL when
 * out of memory. */
char *sim_command_text(char *const *words, size_t count);
/* Writes the cachegrind (or callgrind) annotation file to path atomically. */
int sim_write_annotation_file(const char *path, const sim *s, const trace_code_map *map, const char *command,
                              bool callgrind, plumb_status *status);

/* Checks every invariant over the whole state: single writer, inclusion,
 * directory = cache contents, the counting identities. */
int sim_check(const sim *s, plumb_status *status);

/* The value of a PAPI preset or plumb event name from the statistics:
 * PAPI_L1_DCM, PAPI_L1_ICM, PAPI_L2_DCM, PAPI_L3_TCM, PAPI_TLB_DM, PAPI_CA_SHR,
 * PAPI_CA_CLN, PAPI_CA_ITV, PAPI_CA_INV, ... (docs/simulator.md lists them).
 * core -1 sums all cores.  An event the simulator cannot answer fails with
 * ENOTSUP and a reason; an unknown name with ENOENT. */
int sim_event_count(const sim *s, const char *event, int core, uint64_t *value, plumb_status *status);
/* The event names sim_event_count answers (NULL past the last), and what each means. */
const char *sim_event_name(size_t index);
const char *sim_event_description(const char *event);

/* The counters' "sim" backend (plumb/counters.h): pass it to
 * counter_set_open_backend with counter_options.backend_context = a sim *.
 * Events are the names above; start() takes a baseline, read() returns the
 * counts since start().  Feed the region's references with sim_counter_feed
 * (instance = counter_set_backend_instance(set)) or straight to the sim. */
struct counter_backend;
extern const struct counter_backend counter_backend_sim;
int sim_counter_feed(void *instance, const trace_record *records, size_t n, plumb_status *status);

/* The report plumb sim prints: configuration, per core and level, classes,
 * coherence, transitions, threads, regions (when the trace has markers),
 * hot lines, code addresses, cycles. */
int sim_report(const sim *s, output_report *report, size_t top, plumb_status *status);

#endif
