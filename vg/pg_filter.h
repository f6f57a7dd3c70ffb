/* plumbgrind's L1 filter: the L1I and L1D of a one-core machine, kept by the
 * tool so that only what they do not settle crosses to plumb.
 *
 * Plain C with no library (plumbgrind links no libc): plain data and tight
 * loops, in cachegrind's style.  vg/pg_filter.c includes it, and so does a unit
 * test of plumb (tests/unit/test_sim_compact.c, suite sim_filter), which runs
 * it inside plumb's process against the simulator itself.
 *
 * The copy is laid out as plumb's sim_cache (src/sim/sim_internal.h): per L1
 * one array of sets * ways line numbers (set-major, each set most recent
 * first, PGF_NO_TAG for an empty way, empty ways at the back) and one of
 * metadata bytes (the coherence state in the low bits, then the dirty bit).
 * What it does is what plumb's simulator does (src/sim/sim.c, compact_mru and
 * mru_other, and sim_engine.c for the rest) for the machines plumb hands it
 * (sim_filter_option: one core, LRU L1s of at least 64 sets with the same
 * line size, write-back write-allocate L1D, MESI or MOESI, no L2, no
 * prefetcher, no TLB, no inclusive L3):
 *
 *   a hit (the line anywhere in its set, its metadata as the kind of access
 *   wants: plumb's need/want masks, sim.c mru_load) moves the line to the
 *   front of its set and sets the kind's dirty bits; a reference across two
 *   lines is a hit when both are; such references are only counted (COUNTS);
 *
 *   everything else is GENERAL: sent to plumb with the back (least recent)
 *   way of each set it touches as this copy has it (plumb's copy sees no hits,
 *   so its recency order differs; the contents and the metadata do not), then
 *   applied here as plumb's engine will do it: per line in order, a line
 *   present moves to the front; a line absent evicts the back way (an M victim
 *   still held by the other L1 leaves that copy clean_state) and goes to the
 *   front with the other L1's state for it, or read_state (write_state for a
 *   write) when the other L1 does not hold it; a write then makes both copies
 *   owned_state and its own copy dirty.
 *
 * The entries it writes (64-bit words, the tag in bits 60-63, as the ring's):
 *   COUNTS  8<<60, then fetches, reads, writes (references settled here),
 *           straddles among them, trace records since the last COUNTS
 *           (settled or not): 6 words
 *   GENERAL 9<<60 | lines<<32 | kind<<16 | size, address, then per line (in
 *           order) the back way of its set: meta<<56 | line (PGF_NO_TAG's
 *           low 56 bits for an empty way); 2 + lines words
 * (src/trace/trace_entries.h TRACE_ENTRY_COUNTS and TRACE_ENTRY_GENERAL). */
#ifndef PG_FILTER_H
#define PG_FILTER_H

typedef unsigned long long pgf_u64;
typedef unsigned int pgf_u32;
typedef unsigned char pgf_u8;

#include "trace/ring_format.h"

#define PGF_TAG_COUNTS ((pgf_u64)PLUMB_RING_COUNTS)   /* src/trace/ring_format.h */
#define PGF_TAG_GENERAL ((pgf_u64)PLUMB_RING_GENERAL)
#define PGF_TAG_SHIFT PLUMB_RING_TAG_SHIFT
#define PGF_COUNTS_WORDS 6
#define PGF_NO_TAG (~0ull)
#define PGF_LINE_FIELD ((1ull << 56) - 1)
#define PGF_MAX_LINES 64                    /* the engine's cut (sim_engine.c MAX_LINES) */
#define PGF_GENERAL_MAX_WORDS (2 + PGF_MAX_LINES)
/* the words one record can write: a modify is a read and a write */
#define PGF_RECORD_MAX_WORDS (2 * PGF_GENERAL_MAX_WORDS)
#define PGF_FIELDS 23                       /* numbers in the option */

enum { PGF_FETCH = 0, PGF_READ = 1, PGF_WRITE = 2 };          /* plumb's sim_access_kind */
enum { PGF_RECORD_FETCH = 0, PGF_RECORD_READ, PGF_RECORD_WRITE, PGF_RECORD_MODIFY };   /* trace_kind */
enum { PGF_MODIFY_READ = 0, PGF_MODIFY_WRITE, PGF_MODIFY_READ_WRITE };               /* sim_modify */

typedef struct pgf_cache {
	pgf_u64 *tags;          /* sets * assoc */
	pgf_u8 *meta;
	pgf_u64 sets, set_mask;
	pgf_u32 assoc, line_bits;
} pgf_cache;

typedef struct pgf_model {
	pgf_cache l1[2];        /* 0: L1I, 1: L1D */
	pgf_u8 need[3], want[3], dirty[3];   /* per access kind: a hit's test and the bits it sets */
	pgf_u8 read_state;      /* a fetch or read miss of a line the other L1 does not hold */
	pgf_u8 write_state;     /* a write miss of such a line */
	pgf_u8 owned_state;     /* after a write */
	pgf_u8 clean_state;     /* an owned line the other L1 keeps when this one's copy leaves */
	pgf_u8 state_mask, dirty_bit;
	pgf_u32 max_size;       /* larger references are cut to it; 0: never */
	pgf_u32 modify;         /* PGF_MODIFY_* */
	/* since the last COUNTS entry */
	pgf_u64 settled[3], straddles, records;
	pgf_u64 total_records;  /* all of them (the tool's summary) */
} pgf_model;

/* The option plumb passes (sim_filter_option), PGF_FIELDS decimal numbers
 * separated by commas:
 *   L1I sets, ways, line bits, L1D sets, ways, line bits,
 *   need, want, dirty of a fetch, of a read, of a write,
 *   read_state, write_state, owned_state, clean_state, state_mask, dirty_bit,
 *   max_size, modify
 * Returns 1 and fills m's geometry and rules (not its arrays), 0 when the
 * text is not such a list or describes a machine this model cannot be. */
static inline int pgf_parse(pgf_model *m, const char *text)
{
	pgf_u64 v[PGF_FIELDS];
	const char *p = text;
	for (int i = 0; i < PGF_FIELDS; i++) {
		pgf_u64 x = 0;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9') {
			if (x > (1ull << 40))
				return 0;
			x = x * 10 + (pgf_u64)(*p++ - '0');
		}
		v[i] = x;
		if (i + 1 < PGF_FIELDS && *p++ != ',')
			return 0;
	}
	if (*p)
		return 0;
	for (int l = 0; l < 2; l++) {
		pgf_u64 sets = v[3 * l], ways = v[3 * l + 1], bits = v[3 * l + 2];
		if (sets < PGF_MAX_LINES || sets > (1ull << 24) || (sets & (sets - 1)) || ways < 1 || ways > 64 ||
		    bits < 2 || bits > 16)
			return 0;
		m->l1[l].sets = sets;
		m->l1[l].set_mask = sets - 1;
		m->l1[l].assoc = (pgf_u32)ways;
		m->l1[l].line_bits = (pgf_u32)bits;
	}
	if (m->l1[0].line_bits != m->l1[1].line_bits)
		return 0;
	for (int i = 6; i < 21; i++)
		if (v[i] > 255)
			return 0;
	for (int k = 0; k < 3; k++) {
		m->need[k] = (pgf_u8)v[6 + 3 * k];
		m->want[k] = (pgf_u8)v[7 + 3 * k];
		m->dirty[k] = (pgf_u8)v[8 + 3 * k];
	}
	m->read_state = (pgf_u8)v[15];
	m->write_state = (pgf_u8)v[16];
	m->owned_state = (pgf_u8)v[17];
	m->clean_state = (pgf_u8)v[18];
	m->state_mask = (pgf_u8)v[19];
	m->dirty_bit = (pgf_u8)v[20];
	if (v[21] > (1u << 16) || v[22] > 2)
		return 0;
	m->max_size = (pgf_u32)v[21];
	m->modify = (pgf_u32)v[22];
	return 1;
}

/* Entries (tags, metadata) of an L1 of m. */
static inline pgf_u64 pgf_ways(const pgf_model *m, int level)
{
	return m->l1[level].sets * m->l1[level].assoc;
}

/* Empties both L1s (the arrays set by the caller) and the counts. */
static inline void pgf_reset(pgf_model *m)
{
	for (int l = 0; l < 2; l++)
		for (pgf_u64 i = 0; i < pgf_ways(m, l); i++) {
			m->l1[l].tags[i] = PGF_NO_TAG;
			m->l1[l].meta[i] = 0;
		}
	for (int k = 0; k < 3; k++)
		m->settled[k] = 0;
	m->straddles = m->records = m->total_records = 0;
}

/* The way of line in its set (0: the front), or -1. */
static inline int pgf_find(const pgf_cache *c, pgf_u64 line)
{
	const pgf_u64 *t = c->tags + (line & c->set_mask) * c->assoc;
	for (pgf_u32 w = 0; w < c->assoc; w++)
		if (t[w] == line)
			return (int)w;
	return -1;
}

/* Moves way w of the set at base to its front with metadata meta. */
static inline void pgf_to_front(pgf_cache *c, pgf_u64 base, pgf_u32 w, pgf_u64 line, pgf_u8 meta)
{
	pgf_u64 *t = c->tags + base;
	pgf_u8 *mt = c->meta + base;
	for (pgf_u32 i = w; i > 0; i--) {
		t[i] = t[i - 1];
		mt[i] = mt[i - 1];
	}
	t[0] = line;
	mt[0] = meta;
}

/* A hit of one line (mru_other's): moved to the front, the kind's dirty
 * bits set; 0 when not a hit. */
static inline int pgf_hit(pgf_cache *c, pgf_u64 line, pgf_u8 need, pgf_u8 want, pgf_u8 dirty)
{
	pgf_u64 base = (line & c->set_mask) * c->assoc;
	pgf_u64 *t = c->tags + base;
	pgf_u8 *mt = c->meta + base;
	if (t[0] == line) {
		if ((mt[0] & need) != want)
			return 0;
		mt[0] |= dirty;
		return 1;
	}
	for (pgf_u32 w = 1; w < c->assoc; w++) {
		if (t[w] != line)
			continue;
		pgf_u8 found = mt[w];
		if ((found & need) != want)
			return 0;
		pgf_to_front(c, base, w, line, (pgf_u8)(found | dirty));
		return 1;
	}
	return 0;
}

/* The common case, inline: a reference within one line in the first two ways
 * of its set (moved to the front), its metadata as wanted; 0: pgf_reference's
 * to decide (it counts).  The geometry comes as values, so that a caller's
 * loop keeps it in registers (a store of a metadata byte may alias anything). */
static inline __attribute__((always_inline)) int pgf_hit2(pgf_u64 *tags, pgf_u8 *metas, pgf_u64 set_mask,
                                                          pgf_u32 assoc, pgf_u32 line_bits, pgf_u8 need, pgf_u8 want,
                                                          pgf_u8 dirty, pgf_u64 address, pgf_u32 size)
{
	pgf_u64 line = address >> line_bits;
	if (size == 0 || ((address + size - 1) >> line_bits) != line)
		return 0;
	pgf_u64 front = (line & set_mask) * assoc;
	pgf_u64 *t = tags + front;
	pgf_u8 *mt = metas + front;
	if (__builtin_expect(t[0] == line, 1)) {
		pgf_u8 meta = mt[0];
		if ((meta & need) != want)
			return 0;
		if (__builtin_expect(dirty & ~meta, 0))
			mt[0] = (pgf_u8)(meta | dirty);
		return 1;
	}
	/* the second way: the move to the front is a swap */
	if (assoc > 1 && t[1] == line) {
		pgf_u8 meta = mt[1];
		if ((meta & need) != want)
			return 0;
		t[1] = t[0];
		mt[1] = mt[0];
		t[0] = line;
		mt[0] = (pgf_u8)(meta | dirty);
		return 1;
	}
	return 0;
}

/* The engine's work on one line of a general reference in L1 x (see the
 * top of this file). */
static inline void pgf_engine_line(pgf_model *m, int x, unsigned kind, pgf_u64 line)
{
	pgf_cache *c = &m->l1[x], *o = &m->l1[1 - x];
	pgf_u64 base = (line & c->set_mask) * c->assoc;
	pgf_u8 keep = (pgf_u8)~m->state_mask;
	int w = pgf_find(c, line);
	if (w >= 0) {
		pgf_to_front(c, base, (pgf_u32)w, line, c->meta[base + (pgf_u32)w]);
	} else {
		pgf_u64 back = base + c->assoc - 1;
		pgf_u64 victim = c->tags[back];
		if (victim != PGF_NO_TAG && (c->meta[back] & m->state_mask) == m->owned_state) {
			int ow = pgf_find(o, victim);
			if (ow >= 0) {
				pgf_u8 *om = &o->meta[(victim & o->set_mask) * o->assoc + (pgf_u32)ow];
				*om = (pgf_u8)((*om & keep) | m->clean_state);
			}
		}
		int ow = pgf_find(o, line);
		pgf_u8 own = ow >= 0 ? (pgf_u8)(o->meta[(line & o->set_mask) * o->assoc + (pgf_u32)ow] & m->state_mask) : 0;
		pgf_u8 state = own ? own : kind == PGF_WRITE ? m->write_state : m->read_state;
		pgf_to_front(c, base, c->assoc - 1, line, state);
	}
	if (kind == PGF_WRITE) {
		if ((c->meta[base] & m->state_mask) != m->owned_state) {
			c->meta[base] = (pgf_u8)((c->meta[base] & keep) | m->owned_state);
			int ow = pgf_find(o, line);
			if (ow >= 0) {
				pgf_u8 *om = &o->meta[(line & o->set_mask) * o->assoc + (pgf_u32)ow];
				*om = (pgf_u8)((*om & keep) | m->owned_state);
			}
		}
		c->meta[base] |= m->dirty_bit;
	}
}

/* A general reference: its entry at out, then the engine's work here.
 * Returns the words written. */
static inline pgf_u32 pgf_general(pgf_model *m, pgf_u64 *out, unsigned kind, pgf_u64 address, pgf_u32 size)
{
	int x = kind == PGF_FETCH ? 0 : 1;
	pgf_cache *c = &m->l1[x];
	pgf_u32 bytes = size ? size : 1;
	if (address + bytes - 1 < address)
		bytes = (pgf_u32)(~0ull - address + 1);   /* never wrap around (sim_reference_caches) */
	pgf_u64 first = address >> c->line_bits, last = (address + bytes - 1) >> c->line_bits;
	if (last - first >= PGF_MAX_LINES)
		last = first + PGF_MAX_LINES - 1;
	pgf_u32 lines = (pgf_u32)(last - first + 1);
	out[0] = PGF_TAG_GENERAL << PGF_TAG_SHIFT | (pgf_u64)lines << 32 | (pgf_u64)kind << 16 | size;
	out[1] = address;
	/* the lines are in different sets (at least 64 sets): the backs first */
	for (pgf_u32 i = 0; i < lines; i++) {
		pgf_u64 back = ((first + i) & c->set_mask) * c->assoc + c->assoc - 1;
		out[2 + i] = (pgf_u64)c->meta[back] << 56 | (c->tags[back] & PGF_LINE_FIELD);
	}
	for (pgf_u32 i = 0; i < lines; i++)
		pgf_engine_line(m, x, kind, first + i);
	return 2 + lines;
}

/* One reference of access kind `kind` (size already cut) when the L1
 * settles it: moved, counted, 1; else 0 and nothing changed. */
static inline int pgf_settle(pgf_model *m, unsigned kind, pgf_u64 address, pgf_u32 size)
{
	pgf_cache *c = &m->l1[kind == PGF_FETCH ? 0 : 1];
	pgf_u64 line = address >> c->line_bits, last = (address + size - 1) >> c->line_bits;
	if (size != 0 && last == line) {
		if (pgf_hit(c, line, m->need[kind], m->want[kind], m->dirty[kind])) {
			m->settled[kind]++;
			return 1;
		}
	} else if (size != 0 && last == line + 1 && address + size - 1 > address) {
		/* mru_straddle: both lines hit, both moved to the front in order */
		int a = pgf_find(c, line), b = pgf_find(c, last);
		if (a >= 0 && b >= 0) {
			pgf_u64 base_a = (line & c->set_mask) * c->assoc, base_b = (last & c->set_mask) * c->assoc;
			pgf_u8 meta_a = c->meta[base_a + (pgf_u32)a], meta_b = c->meta[base_b + (pgf_u32)b];
			if ((meta_a & m->need[kind]) == m->want[kind] && (meta_b & m->need[kind]) == m->want[kind]) {
				pgf_to_front(c, base_a, (pgf_u32)a, line, (pgf_u8)(meta_a | m->dirty[kind]));
				pgf_to_front(c, base_b, (pgf_u32)b, last, (pgf_u8)(meta_b | m->dirty[kind]));
				m->settled[kind]++;
				m->straddles++;
				return 1;
			}
		}
	}
	return 0;
}

/* One reference of access kind `kind` (size already cut): settled and
 * counted, or general (written at out).  Returns the words written. */
static inline pgf_u32 pgf_reference(pgf_model *m, pgf_u64 *out, unsigned kind, pgf_u64 address, pgf_u32 size)
{
	if (pgf_settle(m, kind, address, size))
		return 0;
	return pgf_general(m, out, kind, address, size);
}

/* One trace record (kind PGF_RECORD_*, as the trace holds it): its
 * references as plumb's simulator makes them (the size cut to max_size, a
 * modify by the modify rule).  Returns the words written at out (at most
 * PGF_RECORD_MAX_WORDS). */
static inline pgf_u32 pgf_record(pgf_model *m, pgf_u64 *out, unsigned kind, pgf_u64 address, pgf_u32 size)
{
	if (m->max_size && size > m->max_size)
		size = m->max_size;
	m->records++;
	m->total_records++;
	if (kind == PGF_RECORD_MODIFY) {
		if (m->modify == PGF_MODIFY_READ)
			return pgf_reference(m, out, PGF_READ, address, size);
		if (m->modify == PGF_MODIFY_WRITE)
			return pgf_reference(m, out, PGF_WRITE, address, size);
		pgf_u32 n = pgf_reference(m, out, PGF_READ, address, size);
		return n + pgf_reference(m, out + n, PGF_WRITE, address, size);
	}
	return pgf_reference(m, out, kind, address, size);
}

/* The COUNTS entry of what was settled since the last one (PGF_COUNTS_WORDS
 * at out), and the counts start again; 0 words when there is nothing. */
static inline pgf_u32 pgf_counts(pgf_model *m, pgf_u64 *out)
{
	if (!m->records && !m->settled[0] && !m->settled[1] && !m->settled[2])
		return 0;
	out[0] = PGF_TAG_COUNTS << PGF_TAG_SHIFT;
	out[1] = m->settled[0];
	out[2] = m->settled[1];
	out[3] = m->settled[2];
	out[4] = m->straddles;
	out[5] = m->records;
	m->settled[0] = m->settled[1] = m->settled[2] = 0;
	m->straddles = m->records = 0;
	return PGF_COUNTS_WORDS;
}

#endif
