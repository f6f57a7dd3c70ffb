/* The in-core time of a region from its own code (docs/explain.md, "The
 * in-core time"): the instruction fetches of the trace the simulator sees
 * are counted per address and per region, grouped into basic blocks
 * (contiguous instructions executed the same number of times), and the
 * hottest blocks (99% of the executed instructions) are priced by LLVM's
 * scheduling model of this CPU: llvm-mc disassembles their bytes, read from
 * the files the program had mapped, and llvm-mca gives each block's
 * steady-state cycles per execution.  A region's in-core cycles are the sum
 * of its blocks' cycles times their executions; the few blocks left over are
 * priced at the priced ones' average cycles per instruction.
 *
 * The same pass watches each load and store instruction's addresses: a
 * reference to a new line by an instruction whose address moved by the same
 * stride as the time before is a constant-stride stream, the kind the
 * instruction-pointer stride prefetchers of current cores (and the L2
 * streamers for unit stride) fetch ahead; the share of new lines such
 * streams touch is the region's prefetchable fraction.
 *
 * llvm-mc and llvm-mca run through an argument vector (posix_spawnp, never
 * a shell) with a time limit, a few runs per pricing (many texts to a run),
 * their answers kept in the user's cache folder (run_llvm); without them
 * the region keeps the base rate and the result says why. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/cpu.h"
#include "core/interrupt.h"
#include "core/tempdir.h"
#include "explain/explain_internal.h"

extern char **environ;

#define MAX_DEPTH 16            /* open regions per thread that are told apart */
#define MAX_THREADS 4096
#define MAX_BLOCK 256           /* instructions per priced block */
#define MAX_PRICED 4000         /* blocks given to llvm-mca */
#define COVER 0.99              /* of the executed instructions, priced by their own block */
#define TOOL_TIMEOUT_S 120
#define NEST_HEAD 3             /* blocks from a loop nest's head to its inner body */

typedef struct code_slot {
	uint64_t key;               /* context << 48 | address; 0: empty */
	uint64_t count;
	uint16_t size;
} code_slot;

/* An instruction's stride state: its previous address and stride.  A
 * reference continues a constant stride when its stride is the previous
 * one (and not 0). */
typedef struct stride_state {
	uint64_t last;
	int64_t stride;
} stride_state;

/* The hash of instructions to their states, which never move (states only
 * grows), so that a definition's data reference keeps its state's index. */
typedef struct stride_slot {
	uint64_t pc;                /* 0: empty */
	uint32_t state;             /* index into states */
} stride_slot;

#define NO_STRIDE UINT32_MAX    /* a data reference without an instruction address */

typedef struct code_context {
	unsigned depth;
	unsigned ids[MAX_DEPTH];    /* region ids (into names), outermost first */
	uint64_t lines, strided_lines;   /* new lines referenced, and those by a constant-stride instruction */
	uint64_t *uses;                  /* per definition of the compact stream: its uses in this context */
	size_t use_capacity;
} code_context;

typedef struct code_thread {
	unsigned depth;
	unsigned ids[MAX_DEPTH];
	unsigned context;
} code_thread;

/* A definition of plumbgrind's compact stream (trace_compact), copied from
 * its templates: its fetches and the instruction addresses of its data
 * references, in order. */
typedef struct code_definition {
	uint32_t fetch_first, data_first;
	uint8_t fetch_count, data_count;
} code_definition;

typedef struct code_fetch {
	uint64_t address;
	uint16_t size;
} code_fetch;

typedef struct code_mapping {
	uint64_t start, end, offset;    /* end exclusive */
	char *path;
} code_mapping;

struct explain_code {
	code_slot *slots;
	size_t slot_count, slot_used;      /* slot_count a power of two */
	stride_slot *strides;
	size_t stride_count, stride_used;   /* stride_used: also the states in use */
	stride_state *states;
	size_t state_capacity;
	code_context *contexts;
	size_t context_count, context_capacity;
	char **names;
	size_t name_count, name_capacity;
	code_thread *threads;
	size_t thread_count;
	code_mapping *maps;
	size_t map_count, map_capacity;   /* the code map's file segments (explain_code_add_segments) */
	/* the compact stream's definitions (explain_code_compact) */
	uint64_t stream;
	code_definition *definitions;
	size_t definition_count, definition_capacity;
	code_fetch *fetches;
	size_t fetch_count, fetch_capacity;
	uint64_t *data_pcs;
	size_t data_count, data_capacity;
	/* per data_pcs entry, its stride state's index + 1 (0: not looked up;
	 * NO_STRIDE: no instruction address), so that a use costs no hash
	 * lookup (the lookup per reference was an eighth of explain's time on
	 * md5sum) */
	uint32_t *data_states;
	size_t data_state_capacity;
	unsigned line_shift;
	unsigned page_shift;                /* the base page's size, log 2 */
	bool failed;                        /* out of memory: no prices */
	struct llvm_prep *prep;             /* LLVM's tools found and asked early (explain_code_prepare) */
};

static void llvm_prep_free(struct llvm_prep *p);

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static unsigned intern_name(explain_code *c, const char *name)
{
	for (size_t i = 0; i < c->name_count; i++)
		if (!strcmp(c->names[i], name))
			return (unsigned)i;
	if (c->name_count == c->name_capacity) {
		size_t capacity = c->name_capacity ? 2 * c->name_capacity : 16;
		char **grown = realloc(c->names, capacity * sizeof *grown);
		if (!grown) {
			c->failed = true;
			return 0;
		}
		c->names = grown;
		c->name_capacity = capacity;
	}
	char *copy = strdup(name);
	if (!copy) {
		c->failed = true;
		return 0;
	}
	c->names[c->name_count] = copy;
	return (unsigned)c->name_count++;
}

/* The context of a stack of open regions (context 0: none open). */
static unsigned intern_context(explain_code *c, const unsigned *ids, unsigned depth)
{
	for (size_t i = 0; i < c->context_count; i++)
		if (c->contexts[i].depth == depth && !memcmp(c->contexts[i].ids, ids, depth * sizeof *ids))
			return (unsigned)i;
	if (c->context_count >= 0xffff) {
		c->failed = true;
		return 0;
	}
	if (c->context_count == c->context_capacity) {
		size_t capacity = c->context_capacity ? 2 * c->context_capacity : 16;
		code_context *grown = realloc(c->contexts, capacity * sizeof *grown);
		if (!grown) {
			c->failed = true;
			return 0;
		}
		c->contexts = grown;
		c->context_capacity = capacity;
	}
	code_context *k = &c->contexts[c->context_count];
	memset(k, 0, sizeof *k);
	k->depth = depth;
	if (depth)   /* the program outside every region: no ids, and memcpy may not take NULL */
		memcpy(k->ids, ids, depth * sizeof *ids);
	return (unsigned)c->context_count++;
}

int explain_code_new(explain_code **out, unsigned line_bytes)
{
	*out = NULL;
	explain_code *c = calloc(1, sizeof *c);
	if (!c)
		return -1;
	c->slot_count = 1u << 16;
	c->slots = calloc(c->slot_count, sizeof *c->slots);
	c->stride_count = 1u << 12;
	c->strides = calloc(c->stride_count, sizeof *c->strides);
	c->state_capacity = c->stride_count / 2;
	c->states = malloc(c->state_capacity * sizeof *c->states);
	c->line_shift = 6;
	while (line_bytes > 1 && (1u << c->line_shift) < line_bytes && c->line_shift < 12)
		c->line_shift++;
	/* the base page: hardware prefetchers stop at its boundary */
	long page = sysconf(_SC_PAGESIZE);
	c->page_shift = c->line_shift + 1;
	while (page > 0 && (1l << c->page_shift) < page && c->page_shift < 30)
		c->page_shift++;
	if (!c->slots || !c->strides || !c->states) {
		explain_code_free(c);
		return -1;
	}
	intern_context(c, NULL, 0);
	*out = c;
	return 0;
}

void explain_code_free(explain_code *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->name_count; i++)
		free(c->names[i]);
	for (size_t i = 0; i < c->map_count; i++)
		free(c->maps[i].path);
	for (size_t i = 0; i < c->context_count; i++)
		free(c->contexts[i].uses);
	free(c->definitions);
	free(c->fetches);
	free(c->data_pcs);
	free(c->data_states);
	free(c->names);
	free(c->maps);
	free(c->contexts);
	free(c->threads);
	free(c->slots);
	free(c->strides);
	free(c->states);
	llvm_prep_free(c->prep);
	free(c);
}

static bool grow_slots(explain_code *c)
{
	size_t count = 2 * c->slot_count;
	code_slot *slots = calloc(count, sizeof *slots);
	if (!slots)
		return false;
	for (size_t i = 0; i < c->slot_count; i++) {
		if (!c->slots[i].key)
			continue;
		size_t j = mix(c->slots[i].key) & (count - 1);
		while (slots[j].key)
			j = (j + 1) & (count - 1);
		slots[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = slots;
	c->slot_count = count;
	return true;
}

static void count_fetch(explain_code *c, unsigned context, uint64_t address, uint16_t size, uint64_t times)
{
	uint64_t key = ((uint64_t)context << 48) | (address & 0xffffffffffffULL);
	if (!key)
		return;
	size_t mask = c->slot_count - 1, i = mix(key) & mask;
	while (c->slots[i].key && c->slots[i].key != key)
		i = (i + 1) & mask;
	if (!c->slots[i].key) {
		if (2 * (c->slot_used + 1) > c->slot_count) {
			if (!grow_slots(c)) {
				c->failed = true;
				return;
			}
			count_fetch(c, context, address, size, times);
			return;
		}
		c->slots[i].key = key;
		c->slots[i].size = size;
		c->slot_used++;
	}
	c->slots[i].count += times;
}

static bool grow_strides(explain_code *c)
{
	size_t count = 2 * c->stride_count;
	stride_slot *slots = calloc(count, sizeof *slots);
	if (!slots)
		return false;
	for (size_t i = 0; i < c->stride_count; i++) {
		if (!c->strides[i].pc)
			continue;
		size_t j = mix(c->strides[i].pc) & (count - 1);
		while (slots[j].pc)
			j = (j + 1) & (count - 1);
		slots[j] = c->strides[i];
	}
	free(c->strides);
	c->strides = slots;
	c->stride_count = count;
	return true;
}

/* The stride state of instruction pc, made if new (*fresh); NULL when the
 * tables cannot grow.  A state made is at index stride_used - 1. */
static stride_state *stride_of(explain_code *c, uint64_t pc, bool *fresh)
{
	*fresh = false;
	size_t mask = c->stride_count - 1, i = mix(pc) & mask;
	while (c->strides[i].pc && c->strides[i].pc != pc)
		i = (i + 1) & mask;
	if (c->strides[i].pc)
		return &c->states[c->strides[i].state];
	if (2 * (c->stride_used + 1) > c->stride_count)
		return grow_strides(c) ? stride_of(c, pc, fresh) : NULL;
	if (c->stride_used == c->state_capacity) {
		stride_state *states = realloc(c->states, 2 * c->state_capacity * sizeof *states);
		if (!states)
			return NULL;
		c->states = states;
		c->state_capacity *= 2;
	}
	c->strides[i].pc = pc;
	c->strides[i].state = (uint32_t)c->stride_used;
	*fresh = true;
	return &c->states[c->stride_used++];
}

/* A data reference at address by the instruction of state s: whether it
 * is a new line for this instruction (*lines), and whether that line
 * continues a constant stride (*strided).  A stride prefetcher fetches
 * ahead within the page of the address that trained it, never across (it
 * works on physical addresses, and the next page's frame is not known to
 * it): a stride longer than a line reaches a line on another page
 * unfetched, and a stride of a page or more never gets one fetched (a
 * column walk with 2 KB rows crosses a page every second step).
 * Consecutive lines are the L2 streamers' and the next-page prefetcher's,
 * which follow a stream into the next page.  Inline: one call per data
 * reference was most of the watch's time. */
static inline void step_stride(stride_state *s, uint64_t address, unsigned line_shift, unsigned page_shift,
                               uint64_t *lines, uint64_t *strided)
{
	uint64_t last = s->last;
	int64_t stride = (int64_t)(address - last);
	bool constant = stride == s->stride && stride != 0;
	s->stride = stride;
	s->last = address;
	if ((address ^ last) >> line_shift) {
		++*lines;
		uint64_t distance = stride < 0 ? 0 - (uint64_t)stride : (uint64_t)stride;
		if (constant && (distance <= (1ull << line_shift) || ((address ^ last) >> page_shift) == 0))
			++*strided;
	}
}

static void watch_stride(explain_code *c, unsigned context, uint64_t pc, uint64_t address)
{
	bool fresh;
	stride_state *s = pc ? stride_of(c, pc, &fresh) : NULL;
	if (!s)
		return;
	code_context *x = &c->contexts[context];
	if (fresh) {
		s->last = address;
		s->stride = 0;
		x->lines++;
		return;
	}
	step_stride(s, address, c->line_shift, c->page_shift, &x->lines, &x->strided_lines);
}

/* The state of the k-th data reference of the compact stream's
 * definitions, looked up (and remembered) the first time: its index + 1,
 * or NO_STRIDE (no instruction address, or the tables cannot grow).  A
 * fresh state takes address as its first and counts a new line. */
static uint32_t find_stride(explain_code *c, size_t k, uint64_t address, uint64_t *lines, bool *fresh)
{
	uint64_t pc = c->data_pcs[k];
	*fresh = false;
	stride_state *s = pc ? stride_of(c, pc, fresh) : NULL;
	if (!s)
		return c->data_states[k] = NO_STRIDE;
	if (*fresh) {
		s->last = address;
		s->stride = 0;
		++*lines;
	}
	return c->data_states[k] = (uint32_t)(s - c->states) + 1;
}

static code_thread *thread_of(explain_code *c, uint32_t thread)
{
	size_t t = thread % MAX_THREADS;
	if (t >= c->thread_count) {
		size_t count = t + 1 > 2 * c->thread_count ? t + 1 : 2 * c->thread_count;
		if (count > MAX_THREADS)
			count = MAX_THREADS;
		code_thread *grown = realloc(c->threads, count * sizeof *grown);
		if (!grown) {
			c->failed = true;
			return NULL;
		}
		memset(grown + c->thread_count, 0, (count - c->thread_count) * sizeof *grown);
		c->threads = grown;
		c->thread_count = count;
	}
	return &c->threads[t];
}

void explain_code_add_segments(explain_code *c, const trace_code_map *map)
{
	if (!c)
		return;
	const trace_code_segment *segments;
	size_t n = trace_code_map_segments(map, &segments);
	for (size_t i = 0; i < n; i++) {
		const trace_code_segment *g = &segments[i];
		bool seen = false;
		for (size_t m = 0; m < c->map_count && !seen; m++)
			seen = c->maps[m].start == g->start && c->maps[m].end == g->end + 1 && c->maps[m].offset == g->offset &&
			       !strcmp(c->maps[m].path, g->path);
		if (seen || g->end == UINT64_MAX)
			continue;
		if (c->map_count == c->map_capacity) {
			size_t capacity = c->map_capacity ? 2 * c->map_capacity : 32;
			code_mapping *grown = realloc(c->maps, capacity * sizeof *grown);
			if (!grown)
				return;   /* the blocks of the segments left out are said to be unreadable */
			c->maps = grown;
			c->map_capacity = capacity;
		}
		char *copy = strdup(g->path);
		if (!copy)
			return;
		c->maps[c->map_count++] = (code_mapping){ .start = g->start, .end = g->end + 1, .offset = g->offset,
		                                          .path = copy };
	}
}

void explain_code_batch(explain_code *c, const trace_record *records, size_t n)
{
	if (!c || c->failed)
		return;
	for (size_t r = 0; r < n && !c->failed; r++) {
		const trace_record *rec = &records[r];
		code_thread *t = thread_of(c, rec->thread);
		if (!t)
			return;
		switch (rec->kind) {
		case TRACE_INSTRUCTION:
			count_fetch(c, t->context, rec->address, rec->size, 1);
			break;
		case TRACE_READ:
		case TRACE_WRITE:
		case TRACE_MODIFY:
			if (rec->flags & TRACE_HAS_INSTRUCTION_ADDRESS)
				watch_stride(c, t->context, rec->instruction_address, rec->address);
			break;
		case TRACE_REGION_BEGIN: {
			unsigned id = intern_name(c, trace_region_name(rec));
			bool open = false;
			for (unsigned i = 0; i < t->depth; i++)
				open = open || t->ids[i] == id;
			if (!open && t->depth < MAX_DEPTH)
				t->ids[t->depth++] = id;
			t->context = intern_context(c, t->ids, t->depth);
			break;
		}
		case TRACE_REGION_END: {
			unsigned id = intern_name(c, trace_region_name(rec));
			for (unsigned i = t->depth; i-- > 0;) {
				if (t->ids[i] != id)
					continue;
				memmove(&t->ids[i], &t->ids[i + 1], (t->depth - i - 1) * sizeof t->ids[0]);
				t->depth--;
				break;
			}
			t->context = intern_context(c, t->ids, t->depth);
			break;
		}
		default:
			break;
		}
	}
}

/* The compact stream's uses counted so far, as the fetches they stand for
 * (each definition's once per context), and the counts cleared. */
static void flush_uses(explain_code *c)
{
	for (size_t k = 0; k < c->context_count && !c->failed; k++) {
		code_context *x = &c->contexts[k];
		size_t n = x->use_capacity < c->definition_count ? x->use_capacity : c->definition_count;
		for (size_t d = 0; d < n && !c->failed; d++) {
			uint64_t times = x->uses[d];
			if (!times)
				continue;
			const code_definition *def = &c->definitions[d];
			for (unsigned i = 0; i < def->fetch_count; i++)
				count_fetch(c, (unsigned)k, c->fetches[def->fetch_first + i].address,
				            c->fetches[def->fetch_first + i].size, times);
			x->uses[d] = 0;
		}
	}
}

/* array with room for need elements of size (the new ones zero), or NULL
 * (array kept) when out of memory. */
static void *grow(void *array, size_t *capacity, size_t need, size_t size)
{
	if (need <= *capacity)
		return array;
	size_t count = *capacity ? *capacity : 1024;
	while (count < need)
		count *= 2;
	unsigned char *grown = realloc(array, count * size);
	if (!grown)
		return NULL;
	memset(grown + *capacity * size, 0, (count - *capacity) * size);
	*capacity = count;
	return grown;
}

/* The run's new definitions, copied from its templates. */
static bool learn_definitions(explain_code *c, const trace_compact *run)
{
	if (run->stream != c->stream || run->definitions < c->definition_count) {
		/* another stream: its numbers mean other code */
		flush_uses(c);
		c->stream = run->stream;
		c->definition_count = c->fetch_count = c->data_count = 0;
	}
	if (run->definitions == c->definition_count)
		return true;
	code_definition *definitions = grow(c->definitions, &c->definition_capacity, run->definitions,
	                                    sizeof *definitions);
	if (!definitions)
		return false;
	c->definitions = definitions;
	for (size_t d = c->definition_count; d < run->definitions; d++) {
		const trace_record *t = run->templates + run->first[d];
		size_t count = run->count[d];
		code_fetch *fetches = grow(c->fetches, &c->fetch_capacity, c->fetch_count + count, sizeof *fetches);
		if (fetches)
			c->fetches = fetches;
		uint64_t *data_pcs = grow(c->data_pcs, &c->data_capacity, c->data_count + count, sizeof *data_pcs);
		if (data_pcs)
			c->data_pcs = data_pcs;
		uint32_t *data_states = grow(c->data_states, &c->data_state_capacity, c->data_count + count,
		                             sizeof *data_states);
		if (data_states)
			c->data_states = data_states;
		if (!fetches || !data_pcs || !data_states)
			return false;
		code_definition *def = &c->definitions[d];
		*def = (code_definition){ .fetch_first = (uint32_t)c->fetch_count, .data_first = (uint32_t)c->data_count };
		for (size_t i = 0; i < count; i++) {
			if (t[i].kind == TRACE_INSTRUCTION) {
				c->fetches[c->fetch_count++] = (code_fetch){ .address = t[i].address, .size = t[i].size };
				def->fetch_count++;
			} else {
				c->data_states[c->data_count] = 0;
				c->data_pcs[c->data_count++] = (t[i].flags & TRACE_HAS_INSTRUCTION_ADDRESS) ? t[i].instruction_address : 0;
				def->data_count++;
			}
		}
	}
	c->definition_count = run->definitions;
	return true;
}

void explain_code_compact(explain_code *c, const trace_compact *run)
{
	if (!c || c->failed || !run->words)
		return;
	if (run->filtered) {
		c->failed = true;   /* the L1 filter's entries do not say which instructions ran */
		return;
	}
	code_thread *t = thread_of(c, run->thread);
	if (!t || !learn_definitions(c, run)) {
		c->failed = true;
		return;
	}
	code_context *x = &c->contexts[t->context];
	uint64_t *uses = grow(x->uses, &x->use_capacity, c->definition_count, sizeof *uses);
	if (!uses) {
		c->failed = true;
		return;
	}
	x->uses = uses;
	/* the run's counts in locals, into its context at the end */
	uint64_t lines = 0, strided = 0;
	const unsigned line_shift = c->line_shift, page_shift = c->page_shift;
	const code_definition *definitions = c->definitions;
	uint32_t *data_states = c->data_states;   /* does not move here (learn_definitions grows it) */
	stride_state *states = c->states;         /* moves when a state is made */
	const uint64_t *end = run->end;
	const size_t known = run->definitions;
	const uint8_t *data_of = run->data;
	for (const uint64_t *w = run->words; w < end;) {
		/* a run handed out unchecked (trace_compact.unchecked) ends at its
		 * first entry that is not a good use, as trace_compact_settle ends
		 * it; a checked one never stops here */
		uint64_t head = w[0];
		uint32_t id = (uint32_t)head;
		size_t data = (size_t)(head >> 32) & 0xff;
		if (__builtin_expect((head >> 40) != TRACE_COMPACT_USE_HIGH || id >= known || data_of[id] != data ||
		                     (size_t)(end - w) <= data, 0))
			break;
		uses[id]++;
		size_t first = definitions[id].data_first;
		for (size_t i = 0; i < data; i++) {
			uint32_t k = data_states[first + i];
			if (__builtin_expect(k == 0, 0)) {
				bool fresh;
				k = find_stride(c, first + i, w[1 + i], &lines, &fresh);
				states = c->states;
				if (fresh)
					continue;
			}
			if (k != NO_STRIDE)
				step_stride(&states[k - 1], w[1 + i], line_shift, page_shift, &lines, &strided);
		}
		w += 1 + data;
	}
	c->contexts[t->context].lines += lines;
	c->contexts[t->context].strided_lines += strided;
}

/* ------------------------------------------------------ the LLVM CPU name */

size_t explain_llvm_cpus(const char *vendor, unsigned family, unsigned model, const char **names, size_t max)
{
	size_t n = 0;
#define ADD(x) do { if (n < max) names[n++] = (x); } while (0)
	if (!strcmp(vendor, "GenuineIntel") && family == 6) {
		switch (model) {
		case 0xCF: ADD("emeraldrapids"); ADD("sapphirerapids"); break;
		case 0x8F: ADD("sapphirerapids"); break;
		case 0xAD: case 0xAE: ADD("graniterapids"); ADD("sapphirerapids"); break;
		case 0x97: case 0x9A: case 0xB7: case 0xBA: case 0xBF:
			ADD("alderlake"); break;
		case 0x6A: case 0x6C: ADD("icelake-server"); break;
		case 0x7D: case 0x7E: ADD("icelake-client"); break;
		case 0x8C: case 0x8D: ADD("tigerlake"); ADD("icelake-client"); break;
		case 0xA7: ADD("rocketlake"); ADD("icelake-client"); break;
		case 0x55: ADD("cascadelake"); ADD("skylake-avx512"); break;
		case 0x4E: case 0x5E: case 0x8E: case 0x9E: case 0xA5: case 0xA6:
			ADD("skylake"); break;
		case 0x3D: case 0x47: case 0x4F: case 0x56: ADD("broadwell"); break;
		case 0x3C: case 0x3F: case 0x45: case 0x46: ADD("haswell"); break;
		case 0x3A: case 0x3E: ADD("ivybridge"); break;
		case 0x2A: case 0x2D: ADD("sandybridge"); break;
		case 0x5C: case 0x5F: case 0x7A: ADD("goldmont"); break;
		default: break;
		}
		if (model >= 0x8F)
			ADD("sapphirerapids");
		ADD("skylake");
	} else if (!strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine")) {
		if (family >= 0x1A) {
			ADD("znver5"); ADD("znver4"); ADD("znver3");
		} else if (family == 0x19) {
			bool zen4 = (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) ||
			            (model >= 0xA0 && model <= 0xAF);
			if (zen4)
				ADD("znver4");
			ADD("znver3");
		} else if (family == 0x17) {
			if (model >= 0x30)
				ADD("znver2");
			ADD("znver1");
		} else if (family == 0x16) {
			ADD("btver2");
		} else if (family == 0x15) {
			ADD("bdver2");
		}
		ADD("znver3");
	}
	ADD("x86-64");
#undef ADD
	return n;
}

/* ------------------------------------------------------ running llvm tools */

/* Runs argv with stdin from `in` and stdout, stderr to `out`, `err`
 * (paths), killed after timeout_s.  0 and *exit_code, or -1 with why. */
static int run_tool(char *const argv[], const char *in, const char *out, const char *err, int timeout_s,
                    int *exit_code, char *why, size_t why_size)
{
	posix_spawn_file_actions_t actions;
	if (posix_spawn_file_actions_init(&actions) != 0) {
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	posix_spawn_file_actions_addopen(&actions, 0, in, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (rc != 0) {
		snprintf(why, why_size, "%s: %s", argv[0], strerror(rc));
		return -1;
	}
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int wstatus;
		pid_t got = waitpid(pid, &wstatus, WNOHANG);
		if (got == pid) {
			if (WIFEXITED(wstatus)) {
				*exit_code = WEXITSTATUS(wstatus);
				/* posix_spawnp reports a missing program as exit 127 */
				if (*exit_code == 127) {
					snprintf(why, why_size, "%s could not be run (exit status 127)", argv[0]);
					return -1;
				}
				return 0;
			}
			snprintf(why, why_size, "%s was killed by signal %d", argv[0],
			         WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
			return -1;
		}
		if (got < 0 && errno != EINTR) {
			snprintf(why, why_size, "waitpid: %s", strerror(errno));
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &wstatus, 0);
			snprintf(why, why_size, "%s took more than %d s and was stopped", argv[0], timeout_s);
			return -1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
}

/* The tool's program: $PLUMB_LLVM_MCA / $PLUMB_LLVM_MC, else the first of
 * the names found on PATH. */
static bool find_tool(const char *variable, const char *const *names, char *out, size_t size)
{
	const char *given = secure_getenv(variable);
	if (given && given[0]) {
		snprintf(out, size, "%s", given);
		return access(given, X_OK) == 0;
	}
	const char *path = secure_getenv("PATH");
	if (!path || !path[0])
		path = "/usr/bin:/bin";
	for (size_t n = 0; names[n]; n++) {
		const char *p = path;
		while (*p) {
			const char *colon = strchr(p, ':');
			size_t len = colon ? (size_t)(colon - p) : strlen(p);
			char candidate[4096];
			if (len > 0 && len < 3000) {
				snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, p, names[n]);
				if (access(candidate, X_OK) == 0) {
					snprintf(out, size, "%s", candidate);
					return true;
				}
			}
			p += len + (colon ? 1 : 0);
		}
	}
	return false;
}

static char *read_all(const char *path, size_t *length)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t capacity = 1 << 16, used = 0;
	char *text = malloc(capacity);
	while (text) {
		if (used + 4096 + 1 > capacity) {
			char *grown = realloc(text, capacity * 2);
			if (!grown) {
				free(text);
				text = NULL;
				break;
			}
			text = grown;
			capacity *= 2;
		}
		size_t got = fread(text + used, 1, capacity - used - 1, f);
		used += got;
		if (got == 0)
			break;
	}
	fclose(f);
	if (text) {
		text[used] = 0;
		if (length)
			*length = used;
	}
	return text;
}

/* ------------------------------------------------ LLVM's tools, one run */

/* What one CPU name's model says, asked once (probe_cpu): whether this
 * llvm-mca knows the name, a dependent FP add's latency, and the load
 * latencies a value carried through memory needs. */
typedef struct mca_probe {
	const char *cpu;
	bool known;
	double fadd;                /* an addsd's cycles in a chain of them (100 runs), -1 if not priced */
	double int_load, fp_load;   /* the model's latencies of "movq (%rax), %rax" and "movsd (%rax), %xmm0"; 0 if unsaid */
} mca_probe;

/* One run of explain's pricing: the tools, their folder, the folder of
 * their kept answers ("" for none: llvm_cache_open), and what was learnt of
 * them (LLVM's version, each CPU name's probe), kept so that a second
 * pricing (the other machine's core, --on) asks nothing twice. */
typedef struct mca_context {
	const char *mca, *mc, *dir;
	char cache[4096];
	int version;                /* LLVM's major version; -1: not asked yet, 0: unknown */
	mca_probe probes[8];
	size_t probe_count;
} mca_context;

/* A run of llvm-mca or llvm-mc is a function of the tool, its arguments
 * and its input: the answers are kept, whole, in a folder of the user's
 * own ($XDG_CACHE_HOME/plumb/llvm, else ~/.cache/plumb/llvm), so that
 * explaining the same program again runs neither (on md5sum the blocks'
 * run alone is 0.25 s of CPU).  An entry holds the tool's identity (its
 * file's device, inode, size and time), the arguments and the input in
 * full, and is used only when all three are equal: a hash names the file,
 * never stands for its content.  The folders must be the user's own
 * directories that no one else can write (no link, mode 0700 when made
 * here); an entry must be a regular file of the user's.  Anything else, or
 * $PLUMB_EXPLAIN_CACHE=0, and the tools run every time.  At most
 * CACHE_ENTRIES entries are kept, the least recently used removed first. */
#define CACHE_ENTRIES 400

static bool private_folder(const char *path, bool make)
{
	if (make && mkdir(path, 0700) != 0 && errno != EEXIST)
		return false;
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0;
}

static void llvm_cache_open(mca_context *x)
{
	x->cache[0] = 0;
	const char *off = secure_getenv("PLUMB_EXPLAIN_CACHE");
	if (off && !strcmp(off, "0"))
		return;
	const char *xdg = secure_getenv("XDG_CACHE_HOME"), *home = secure_getenv("HOME");
	char base[3900];
	if (xdg && xdg[0] == '/')   /* the XDG rule: a relative path is ignored */
		snprintf(base, sizeof base, "%.3800s", xdg);
	else if (home && home[0] == '/')
		snprintf(base, sizeof base, "%.3800s/.cache", home);
	else
		return;
	char plumb[sizeof base + 16];
	snprintf(plumb, sizeof plumb, "%s/plumb", base);
	if ((mkdir(base, 0700) != 0 && errno != EEXIST) || !private_folder(plumb, true))
		return;
	snprintf(x->cache, sizeof x->cache, "%s/llvm", plumb);
	if (!private_folder(x->cache, true))
		x->cache[0] = 0;
}

static void hash_into(uint64_t h[2], const void *data, size_t length)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < length; i++) {
		h[0] = (h[0] ^ p[i]) * 0x100000001b3ULL;            /* FNV-1a */
		h[1] = (h[1] + p[i] + 1) * 0x9e3779b97f4a7c15ULL;    /* another, for the file's name only */
	}
}

/* The key of a run: the tool's identity, its arguments and its input, in
 * one malloc'd text (*length bytes); its entry's path into path.  NULL
 * when the tool or the input cannot be read. */
static char *cache_key(const mca_context *x, char *const argv[], const char *in, size_t *length, char *path,
                       size_t path_size)
{
	struct stat st;
	if (stat(argv[0], &st) != 0)
		return NULL;
	size_t input_length = 0;
	char *input = NULL;
	if (strcmp(in, "/dev/null") != 0 && !(input = read_all(in, &input_length)))
		return NULL;
	char *key = NULL;
	FILE *f = open_memstream(&key, length);
	if (!f) {
		free(input);
		return NULL;
	}
	fprintf(f, "plumb-llvm 1\n%llu %llu %lld %lld.%09ld\n", (unsigned long long)st.st_dev,
	        (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	for (size_t i = 1; argv[i]; i++)
		fprintf(f, "%s%c", argv[i], 0x1f);
	fprintf(f, "\n%zu\n", input_length);
	if (input_length)
		fwrite(input, 1, input_length, f);
	free(input);
	if (fclose(f) != 0) {
		free(key);
		return NULL;
	}
	uint64_t h[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
	hash_into(h, key, *length);
	snprintf(path, path_size, "%s/%016llx%016llx", x->cache, (unsigned long long)h[0], (unsigned long long)h[1]);
	return key;
}

/* An entry's output into out (and nothing into err) when the entry is
 * there, the user's, and its key is key. */
static bool cache_take(const char *path, const char *key, size_t key_length, const char *out, const char *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < key_length || st.st_size > (1 << 30)) {
		close(fd);
		return false;
	}
	char *entry = malloc((size_t)st.st_size + 1);
	ssize_t got = entry ? read(fd, entry, (size_t)st.st_size) : -1;
	if (got == st.st_size)
		futimens(fd, NULL);   /* used: the last to go */
	close(fd);
	bool taken = false;
	if (got == st.st_size && !memcmp(entry, key, key_length)) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		size_t left = (size_t)st.st_size - key_length;
		taken = o >= 0 && e >= 0 && write(o, entry + key_length, left) == (ssize_t)left;
		if (o >= 0)
			close(o);
		if (e >= 0)
			close(e);
	}
	free(entry);
	return taken;
}

typedef struct cache_file {
	time_t used;
	char name[40];
} cache_file;

static int by_use(const void *a, const void *b)
{
	const cache_file *x = a, *y = b;
	return (x->used > y->used) - (x->used < y->used);
}

/* The least recently used entries removed, down to 3/4 of CACHE_ENTRIES,
 * once there are more than CACHE_ENTRIES. */
static void cache_trim(const char *folder)
{
	DIR *d = opendir(folder);
	if (!d)
		return;
	cache_file files[CACHE_ENTRIES + 64];
	size_t n = 0, seen = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strlen(e->d_name) != 32 || e->d_name[0] == '.')
			continue;
		seen++;
		struct stat st;
		if (n < sizeof files / sizeof files[0] && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			files[n].used = st.st_mtime;
			snprintf(files[n].name, sizeof files[n].name, "%s", e->d_name);
			n++;
		}
	}
	if (seen > CACHE_ENTRIES) {
		qsort(files, n, sizeof *files, by_use);
		for (size_t i = 0; i < n && seen > CACHE_ENTRIES * 3 / 4; i++, seen--)
			unlinkat(dirfd(d), files[i].name, 0);
	}
	closedir(d);
}

/* A run's key and output kept as the entry at path (written aside, then
 * renamed into place). */
static void cache_keep(const char *folder, const char *path, const char *key, size_t key_length, const char *out)
{
	size_t length;
	char *output = read_all(out, &length);
	if (!output)
		return;
	char temp[4200];
	snprintf(temp, sizeof temp, "%s/.new-XXXXXX", folder);
	int fd = mkstemp(temp);
	if (fd >= 0) {
		bool written = write(fd, key, key_length) == (ssize_t)key_length &&
		               write(fd, output, length) == (ssize_t)length;
		if (close(fd) != 0 || !written || rename(temp, path) != 0)
			unlink(temp);
		else
			cache_trim(folder);
	}
	free(output);
}

/* run_tool through the kept answers: an answer kept for the same tool,
 * arguments and input is written to out (exit status 0, nothing on
 * standard error); a run that exits 0 with nothing on standard error is
 * kept. */
static int run_llvm(const mca_context *x, char *const argv[], const char *in, const char *out, const char *err,
                    int timeout_s, int *exit_code, char *why, size_t why_size)
{
	char path[4200];
	size_t key_length = 0;
	char *key = x->cache[0] ? cache_key(x, argv, in, &key_length, path, sizeof path) : NULL;
	if (key && cache_take(path, key, key_length, out, err)) {
		free(key);
		*exit_code = 0;
		return 0;
	}
	int rc = run_tool(argv, in, out, err, timeout_s, exit_code, why, why_size);
	struct stat st;
	if (key && rc == 0 && *exit_code == 0 && stat(err, &st) == 0 && st.st_size == 0)
		cache_keep(x->cache, path, key, key_length, out);
	free(key);
	return rc;
}

/* ------------------------------------------------------------- pricing */

typedef struct code_entry {
	unsigned context;
	uint64_t address, count;
	uint16_t size;
} code_entry;

typedef struct code_block {
	uint64_t start;
	uint32_t bytes, instructions;
	uint64_t weight;            /* executed instructions, all contexts */
	double cycles;              /* per execution (llvm-mca); < 0: not priced */
	uint32_t chained_loads;     /* loads whose address register is their destination */
	uint32_t loads;
	bool through_memory;        /* a value carried from one execution to the next through memory */
	uint16_t carried[8][2];     /* (load, store) line pairs that carry it */
	bool has_fadd;              /* an SSE/AVX floating-point add or subtract */
	double fast_cycles;         /* per execution with those adds at latency 1 (fast adders) */
	double uops;                /* per execution, as llvm-mca counts them (unfused) */
	double pressure;            /* the busiest resource's cycles per execution (llvm-mca) */
	double dispatch_width;      /* llvm-mca's model: micro-ops dispatched per cycle */
	double rob_entries;         /* llvm-mca's model: the reorder buffer */
	bool in_loop;               /* priced with its neighbour as one loop (price_two_block_loops) */
	bool in_nest;               /* its runs overlapped in the loop around (price_nests) */
	double once_cycles;         /* a one-block loop's cycles per execution as llvm-mca gave them, */
	double twice_cycles;        /* and of its text written twice (price_steady_loops); 0: none */
	unsigned carried_count;
	char *text;                 /* the disassembly, one instruction a line */
} code_block;

typedef struct code_use {
	unsigned context;
	size_t block;
	uint64_t count;
} code_use;

static int by_context_address(const void *a, const void *b)
{
	const code_entry *x = a, *y = b;
	if (x->context != y->context)
		return x->context < y->context ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

static int by_start(const void *a, const void *b)
{
	const code_block *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static int by_weight(const void *a, const void *b)
{
	const code_block *const *x = a, *const *y = b;
	return (*x)->weight > (*y)->weight ? -1 : (*x)->weight < (*y)->weight;
}

/* "%rax", "%eax", "%ax", "%al" -> "a"; "%r8", "%r8d" -> "r8"; else "". */
static void register_family(const char *reg, size_t len, char *out, size_t size)
{
	out[0] = 0;
	if (len < 2 || reg[0] != '%')
		return;
	reg++, len--;
	if (reg[0] == 'r' && len >= 2 && reg[1] >= '0' && reg[1] <= '9') {
		size_t n = 1;
		while (n < len && reg[n] >= '0' && reg[n] <= '9')
			n++;
		snprintf(out, size, "%.*s", (int)n, reg);
		return;
	}
	if ((reg[0] == 'r' || reg[0] == 'e') && len == 3)
		reg++, len--;
	if (len == 2 && (reg[1] == 'x' || reg[1] == 'l' || reg[1] == 'h'))
		len = 1;   /* ax, al, ah -> a */
	else if (len == 2 && reg[1] == 'i')
		len = 2;   /* si, di */
	else if (len == 3 && reg[2] == 'l')
		len = 2;   /* sil, dil, spl, bpl */
	snprintf(out, size, "%.*s", (int)len, reg);
}

/* A load whose address depends on its own previous result: "mov (%rax),
 * %rax", "mov 8(%rdx,%rcx), %rdx" (a pointer chase), counted per block. */
bool explain_block_chained_load(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (!strncmp(line, "lea", 3) || !strncmp(line, "nop", 3) || !strncmp(line, "prefetch", 8))
		return false;
	const char *open = strchr(line, '('), *close = open ? strchr(open, ')') : NULL;
	const char *last = strrchr(line, ',');
	if (!open || !close || !last || last < close)
		return false;   /* no memory operand, or it is the destination */
	const char *dest = last + 1;
	while (*dest == ' ')
		dest++;
	size_t dlen = strcspn(dest, " \t#\n");
	char want[8], have[8];
	register_family(dest, dlen, want, sizeof want);
	if (!want[0])
		return false;
	for (const char *p = open + 1; p < close;) {
		size_t len = strcspn(p, ",)");
		register_family(p, len, have, sizeof have);
		if (have[0] && !strcmp(have, want))
			return true;
		p += len + 1;
	}
	return false;
}

static bool has_memory_source(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (!strncmp(line, "lea", 3) || !strncmp(line, "nop", 3))
		return false;
	const char *open = strchr(line, '('), *last = strrchr(line, ',');
	return open && last && open < last;
}

/* Replaces what llvm-mca cannot model as straight-line code (calls and
 * returns: "a latency of 100cy"; jumps) by a nop of the same slot, and
 * stack-pointer updates by what the core's stack engine makes of them
 * (explain_block_stack_engine); the line to give llvm-mca, which may be
 * `buffer`. */
static const char *mca_line(const char *line, char *buffer, size_t size)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (!strncmp(line, "call", 4) || !strncmp(line, "ret", 3) || !strncmp(line, "jmp", 3) ||
	    !strncmp(line, "syscall", 7) || !strncmp(line, "ud2", 3) || !strncmp(line, "int", 3) ||
	    !strncmp(line, "hlt", 3) || !strncmp(line, "cpuid", 5) || !strncmp(line, "rdtsc", 5) ||
	    !strncmp(line, "endbr", 5) || !strncmp(line, "rep", 3) || !strncmp(line, "lock", 4) ||
	    !strncmp(line, "xgetbv", 6) || !strncmp(line, "xsave", 5) || !strncmp(line, "xrstor", 6))
		return "nop";
	const char *stack = explain_block_stack_engine(line, buffer, size);
	return stack ? stack : line;
}

const char *explain_block_stack_engine(const char *line, char *buffer, size_t size)
{
	line += strspn(line, " \t");
	size_t mnemonic = strcspn(line, " \t");
	const char *operands = line + mnemonic;
	operands += strspn(operands, " \t");
	size_t operand = strcspn(operands, " \t\n#");
	bool push = (mnemonic == 4 && !strncmp(line, "push", 4)) || (mnemonic == 5 && !strncmp(line, "pushq", 5));
	bool pop = (mnemonic == 3 && !strncmp(line, "pop", 3)) || (mnemonic == 4 && !strncmp(line, "popq", 4));
	/* a 64-bit register: %rax..%r15 (not %eax, %ax) */
	bool full = operand >= 3 && operands[0] == '%' && operands[1] == 'r' && !memchr(operands, ',', operand) &&
	            operands[operand - 1] != 'd' && operands[operand - 1] != 'w' && operands[operand - 1] != 'b';
	if ((push || pop) && full) {
		snprintf(buffer, size, push ? "movq\t%.*s, -8(%%rsp)" : "movq\t(%%rsp), %.*s", (int)operand, operands);
		return buffer;
	}
	/* "addq $8, %rsp", "subq $4096, %rsp" */
	bool adjust = (mnemonic == 3 || (mnemonic == 4 && line[3] == 'q')) &&
	              (!strncmp(line, "add", 3) || !strncmp(line, "sub", 3));
	if (adjust && operands[0] == '$') {
		const char *comma = strchr(operands, ',');
		if (comma) {
			comma++;
			comma += strspn(comma, " \t");
			if (!strncmp(comma, "%rsp", 4) && strcspn(comma + 4, " \t\n#") == 0)
				return "nop";
		}
	}
	return NULL;
}

/* The operands of one AT&T line (commas inside parentheses kept), into
 * operand[] as [start, end) pairs; the count. */
static int split_operands(const char *line, const char **begin, const char **end, int max)
{
	while (*line == ' ' || *line == '\t')
		line++;
	while (*line && *line != ' ' && *line != '\t')
		line++;   /* the mnemonic */
	int n = 0, depth = 0;
	const char *start = NULL;
	for (const char *p = line;; p++) {
		if (!start && *p && *p != ' ' && *p != '\t' && *p != ',')
			start = p;
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if (!*p || *p == '\n' || (*p == ',' && depth == 0)) {
			if (start && n < max) {
				const char *e = p;
				while (e > start && (e[-1] == ' ' || e[-1] == '\t'))
					e--;
				begin[n] = start, end[n] = e, n++;
			}
			start = NULL;
			if (!*p || *p == '\n')
				break;
		}
	}
	return n;
}

/* The next register operand in [p, end) ("%rax", or one of an address's),
 * *length its length; NULL when there is none. */
static const char *next_register(const char *p, const char *end, size_t *length)
{
	while (p < end && *p != '%')
		p++;
	if (p >= end)
		return NULL;
	size_t len = strcspn(p, ",) \t\n");
	*length = p + len > end ? (size_t)(end - p) : len;
	return p;
}

static bool register_in(const char *begin, const char *end, const char *family)
{
	size_t len;
	for (const char *p = next_register(begin, end, &len); p; p = next_register(p + 1, end, &len)) {
		char have[8];
		register_family(p, len, have, sizeof have);
		if (have[0] && !strcmp(have, family))
			return true;
	}
	return false;
}

/* Whether a block carries a value from one execution to the next through
 * memory: a store to an address whose registers the block never writes,
 * and a load of the same address ("addsd (%rdx), %xmm0; movsd %xmm0,
 * (%rdx)": an accumulator the compiler keeps in memory).  llvm-mca assumes
 * loads and stores do not alias unless told otherwise (-noalias=false). */
static bool writes_nothing(const char *mnemonic);

/* An AT&T memory operand, "disp(base,index,scale)": its parts (registers
 * by family, "" when absent); false if [b, e) is not one. */
typedef struct memory_operand {
	long long displacement, scale;
	char base[8], index[8];
} memory_operand;

static bool parse_memory(const char *b, const char *e, memory_operand *m)
{
	memset(m, 0, sizeof *m);
	m->scale = 1;
	const char *open = memchr(b, '(', (size_t)(e - b)), *close = open ? memchr(open, ')', (size_t)(e - open)) : NULL;
	if (!open || !close || memchr(b, '%', (size_t)(open - b)))
		return false;   /* no address, or a segment prefix */
	if (open > b) {
		char *end;
		m->displacement = strtoll(b, &end, 0);
		if (end != open)
			return false;   /* a symbol */
	}
	const char *part = open + 1;
	for (int k = 0; k < 3 && part < close; k++) {
		size_t length = strcspn(part, ",)");
		if (k < 2 && length)
			register_family(part, length, k == 0 ? m->base : m->index, 8);
		else if (k == 2)
			m->scale = strtoll(part, NULL, 0);
		part += length + 1;
	}
	return m->base[0] || m->index[0];
}

static bool pair_listed(uint16_t pairs[8][2], unsigned count, int load, int store)
{
	for (unsigned k = 0; k < count; k++)
		if (pairs[k][0] == load && pairs[k][1] == store)
			return true;
	return false;
}

/* What a register is stepped by before line `line` of the listing (all of
 * the listing: line < 0), and whether every write to it in the listing is
 * such a step ("addq $8, %rax", "subq $1600, %rbp"). */
static bool register_steps(const char *text, const char *family, int line, long long *step)
{
	*step = 0;
	bool only_steps = true;
	int index = 0;
	for (const char *p = text; p && *p; index++) {
		const char *nl = strchr(p, '\n');
		const char *b[4], *e[4];
		int n = split_operands(p, b, e, 4);
		const char *mnemonic = p + strspn(p, " \t");
		char written[8] = "";
		if (n > 0 && b[n - 1][0] == '%' && !writes_nothing(mnemonic))
			register_family(b[n - 1], (size_t)(e[n - 1] - b[n - 1]), written, sizeof written);
		if (written[0] && !strcmp(written, family)) {
			bool add = !strncmp(mnemonic, "add", 3), sub = !strncmp(mnemonic, "sub", 3);
			if ((add || sub) && n == 2 && b[0][0] == '$') {
				if (line < 0 || index < line)
					*step += (sub ? -1 : 1) * strtoll(b[0] + 1, NULL, 0);
			} else {
				only_steps = false;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	return only_steps;
}

/* A value one execution stores and the next loads through registers the
 * block steps by constants: adi's "movsd %xmm1, 8(%rsi,%rax)" and, after
 * "addq $8, %rax", the next execution's "movsd (%rsi,%rax), %xmm11" (q[j]
 * from q[j-1]).  The store's address at its line in execution n equals the
 * load's at its line in execution n + 1: d_st + steps before st ==
 * d_ld + steps before ld + a whole execution's steps. */
static void carried_by_steps(const char *text, const char *const *stores, const char *const *store_ends,
                             const int *store_line, int store_count, const char *const *loads,
                             const char *const *load_ends, const int *load_line, int load_count, uint16_t pairs[8][2],
                             unsigned *pair_count)
{
	for (int st = 0; st < store_count; st++) {
		memory_operand to;
		if (!parse_memory(stores[st], store_ends[st], &to))
			continue;
		long long step_base = 0, step_index = 0, before_base = 0, before_index = 0;
		if ((to.base[0] && !register_steps(text, to.base, -1, &step_base)) ||
		    (to.index[0] && !register_steps(text, to.index, -1, &step_index)))
			continue;
		if (step_base == 0 && step_index == 0)
			continue;   /* a fixed address: the identical-operand rule */
		if (to.base[0])
			register_steps(text, to.base, store_line[st], &before_base);
		if (to.index[0])
			register_steps(text, to.index, store_line[st], &before_index);
		long long stored = to.displacement + before_base + to.scale * before_index;
		for (int ld = 0; ld < load_count && *pair_count < 8; ld++) {
			memory_operand from;
			if (!parse_memory(loads[ld], load_ends[ld], &from))
				continue;
			if (from.scale == 1 && to.scale == 1 && !strcmp(from.base, to.index) && !strcmp(from.index, to.base)) {
				char swap[8];   /* (%rdx,%rdi) is (%rdi,%rdx) */
				memcpy(swap, from.base, sizeof swap);
				memcpy(from.base, from.index, sizeof swap);
				memcpy(from.index, swap, sizeof swap);
			}
			if (strcmp(from.base, to.base) || strcmp(from.index, to.index) || from.scale != to.scale)
				continue;
			long long load_base = 0, load_index = 0;
			if (from.base[0])
				register_steps(text, from.base, load_line[ld], &load_base);
			if (from.index[0])
				register_steps(text, from.index, load_line[ld], &load_index);
			long long next = from.displacement + load_base + step_base + from.scale * (load_index + step_index);
			if (next == stored && !pair_listed(pairs, *pair_count, load_line[ld], store_line[st])) {
				pairs[*pair_count][0] = (uint16_t)load_line[ld];
				pairs[*pair_count][1] = (uint16_t)store_line[st];
				(*pair_count)++;
			}
		}
	}
}

bool explain_block_carries_through_memory(const char *text, uint16_t pairs[8][2], unsigned *pair_count)
{
	*pair_count = 0;
	int store_line[MAX_BLOCK], load_line[MAX_BLOCK], index = 0;
	enum { LINES = MAX_BLOCK };
	const char *stores[LINES], *store_ends[LINES], *loads[LINES], *load_ends[LINES];
	char written[LINES][8];
	int store_count = 0, load_count = 0, written_count = 0;
	for (const char *line = text; *line && store_count < LINES && load_count < LINES && written_count < LINES;) {
		const char *nl = strchr(line, '\n');
		const char *b[4], *e[4];
		int n = split_operands(line, b, e, 4);
		const char *mnemonic = line;
		while (*mnemonic == ' ' || *mnemonic == '\t')
			mnemonic++;
		bool lea = !strncmp(mnemonic, "lea", 3) || !strncmp(mnemonic, "nop", 3);
		bool mov = !strncmp(mnemonic, "mov", 3) || !strncmp(mnemonic, "vmov", 4);
		for (int k = 0; k < n && !lea; k++) {
			if (!memchr(b[k], '(', (size_t)(e[k] - b[k])))
				continue;
			if (k == n - 1) {
				store_line[store_count] = index;
				stores[store_count] = b[k], store_ends[store_count++] = e[k];
				if (!mov && load_count < LINES) {   /* read-modify-write */
					load_line[load_count] = index;
					loads[load_count] = b[k], load_ends[load_count++] = e[k];
				}
			} else {
				load_line[load_count] = index;
				loads[load_count] = b[k], load_ends[load_count++] = e[k];
			}
		}
		if (n > 0 && b[n - 1][0] == '%') {
			register_family(b[n - 1], (size_t)(e[n - 1] - b[n - 1]), written[written_count], 8);
			if (written[written_count][0])
				written_count++;
		}
		index++;
		if (!nl)
			break;
		line = nl + 1;
	}
	carried_by_steps(text, stores, store_ends, store_line, store_count, loads, load_ends, load_line, load_count, pairs,
	                 pair_count);
	for (int st = 0; st < store_count; st++) {
		size_t len = (size_t)(store_ends[st] - stores[st]);
		bool moves = false;
		for (int w = 0; w < written_count && !moves; w++)
			moves = register_in(stores[st], store_ends[st], written[w]);
		if (moves)
			continue;
		for (int ld = 0; ld < load_count && *pair_count < 8; ld++)
			if ((size_t)(load_ends[ld] - loads[ld]) == len && !memcmp(loads[ld], stores[st], len) &&
			    load_line[ld] <= store_line[st] && !pair_listed(pairs, *pair_count, load_line[ld], store_line[st])) {
				pairs[*pair_count][0] = (uint16_t)load_line[ld];
				pairs[*pair_count][1] = (uint16_t)store_line[st];
				(*pair_count)++;
			}
	}
	return *pair_count > 0;
}

/* x ^ x, x - x: a new value, whatever x held (the core does not wait for x) */
static bool zero_idiom(const char *mnemonic, int n, const char *const *b, const char *const *e)
{
	bool zeroing = !strncmp(mnemonic, "xor", 3) || !strncmp(mnemonic, "pxor", 4) || !strncmp(mnemonic, "sub", 3) ||
	               !strncmp(mnemonic, "vxor", 4) || !strncmp(mnemonic, "vpxor", 5) || !strncmp(mnemonic, "psub", 4);
	return zeroing && n >= 2 && e[n - 1] - b[n - 1] == e[n - 2] - b[n - 2] &&
	       !memcmp(b[n - 1], b[n - 2], (size_t)(e[n - 1] - b[n - 1]));
}

/* Whether an AT&T instruction with n operands also reads its destination
 * (the last): two-operand arithmetic does; moves, loads of an address,
 * conversions, zero idioms ("pxor %xmm1, %xmm1") and three-operand VEX
 * forms other than FMA write it only; compares and tests write nothing. */
static bool reads_destination(const char *mnemonic, int n, const char *const *b, const char *const *e)
{
	static const char *const write_only[] = { "mov", "vmov", "lea", "cvt", "vcvt", "set", "pop", "vbroadcast",
	                                          "pmovzx", "pmovsx", "vpmovzx", "vpmovsx", "pinsr", NULL };
	for (int k = 0; write_only[k]; k++)
		if (!strncmp(mnemonic, write_only[k], strlen(write_only[k])))
			return false;
	if (zero_idiom(mnemonic, n, b, e))
		return false;
	if (mnemonic[0] == 'v' && n >= 3 && strncmp(mnemonic, "vfmadd", 6) && strncmp(mnemonic, "vfmsub", 6) &&
	    strncmp(mnemonic, "vfnmadd", 7) && strncmp(mnemonic, "vfnmsub", 7))
		return false;
	return true;
}

static bool writes_nothing(const char *mnemonic)
{
	return !strncmp(mnemonic, "cmp", 3) || !strncmp(mnemonic, "test", 4) || !strncmp(mnemonic, "ucomis", 6) ||
	       !strncmp(mnemonic, "comis", 5) || !strncmp(mnemonic, "vucomis", 7) || !strncmp(mnemonic, "vcomis", 6) ||
	       mnemonic[0] == 'j' || !strncmp(mnemonic, "nop", 3) || !strncmp(mnemonic, "push", 4) ||
	       !strncmp(mnemonic, "prefetch", 8);
}

/* A step by a constant: "addq $8, %r15", "subl $1, %eax", "incq %rcx". */
static bool steps_by_constant(const char *mnemonic, int n, const char *const *b)
{
	if (!strncmp(mnemonic, "inc", 3) || !strncmp(mnemonic, "dec", 3) || !strncmp(mnemonic, "lea", 3))
		return true;
	return (!strncmp(mnemonic, "add", 3) || !strncmp(mnemonic, "sub", 3)) && n == 2 && b[0][0] == '$';
}

enum { REGISTER_UNSEEN, REGISTER_READ_FIRST, REGISTER_WRITTEN_FIRST };

typedef struct register_use {
	char family[8];
	int first;             /* REGISTER_* */
	bool written, stepped_only, written_fresh;
} register_use;

static register_use *use_of(register_use *uses, int *count, int max, const char *begin, const char *end)
{
	char family[8];
	register_family(begin, (size_t)(end - begin), family, sizeof family);
	if (!family[0])
		return NULL;
	for (int k = 0; k < *count; k++)
		if (!strcmp(uses[k].family, family))
			return &uses[k];
	if (*count >= max)
		return NULL;
	register_use *u = &uses[(*count)++];
	*u = (register_use){ .first = REGISTER_UNSEEN, .stepped_only = true };
	snprintf(u->family, sizeof u->family, "%s", family);
	return u;
}

/* Every register operand of [begin, end) (a register, or the registers of
 * an address) marked read. */
static void mark_reads(register_use *uses, int *count, int max, const char *begin, const char *end)
{
	size_t len;
	for (const char *p = next_register(begin, end, &len); p; p = next_register(p + (len ? len : 1), end, &len)) {
		register_use *u = use_of(uses, count, max, p, p + len);
		if (u && u->first == REGISTER_UNSEEN)
			u->first = REGISTER_READ_FIRST;
	}
}

/* The registers of a listing: which are read before written, which are
 * written, whether only by steps by a constant, whether by an instruction
 * that does not read them.  The count. */
static int register_uses(const char *text, register_use *uses, int max)
{
	int count = 0;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		const char *mnemonic = line + strspn(line, " \t");
		const char *b[4], *e[4];
		int n = split_operands(line, b, e, 4);
		if (*mnemonic && !writes_nothing(mnemonic) && n > 0 && b[n - 1][0] == '%') {
			bool reads = reads_destination(mnemonic, n, b, e), zeroing = zero_idiom(mnemonic, n, b, e);
			for (int k = 0; k < n - 1 && !zeroing; k++)
				mark_reads(uses, &count, max, b[k], e[k]);
			if (reads)
				mark_reads(uses, &count, max, b[n - 1], e[n - 1]);
			register_use *u = use_of(uses, &count, max, b[n - 1], e[n - 1]);
			for (int k = 0; k < n - 1 && u && !reads && !zeroing; k++)
				reads = register_in(b[k], e[k], u->family);   /* "vaddsd %xmm2, %xmm1, %xmm1" */
			if (u) {
				if (u->first == REGISTER_UNSEEN)
					u->first = REGISTER_WRITTEN_FIRST;
				u->written = true;
				u->stepped_only = u->stepped_only && steps_by_constant(mnemonic, n, b);
				u->written_fresh = u->written_fresh || !reads;
			}
		} else {
			for (int k = 0; k < n; k++)
				mark_reads(uses, &count, max, b[k], e[k]);
		}
		line = nl ? nl + 1 : NULL;
	}
	return count;
}

bool explain_nest_runs_independent(const char *before, const char *body)
{
	if (!before || !body)
		return false;
	register_use in_body[64], in_before[64];
	int body_count = register_uses(body, in_body, 64), before_count = register_uses(before, in_before, 64);
	int chains = 0;
	for (int k = 0; k < body_count; k++) {
		const register_use *u = &in_body[k];
		if (u->first != REGISTER_READ_FIRST || !u->written || u->stepped_only)
			continue;   /* not carried, or a counter */
		chains++;
		bool reset = false;
		for (int j = 0; j < before_count && !reset; j++)
			reset = !strcmp(in_before[j].family, u->family) && in_before[j].written_fresh;
		if (!reset)
			return false;   /* the chain goes on from the last run */
	}
	return chains > 0;
}

double explain_block_memory_chain(const char *text, const double *latency, unsigned rows, unsigned load,
                                  unsigned store, const explain_chain_costs *costs)
{
	if (!text || load >= rows || store >= rows)
		return 0;
	double chain = 0;
	/* follow the loaded value from register to register up to the store */
	char carrier[8] = "";
	unsigned line_no = 0;
	for (const char *line = text; line && *line && line_no <= store; line_no++) {
		const char *nl = strchr(line, '\n');
		const char *mnemonic = line + strspn(line, " \t");
		const char *b[4], *e[4];
		int n = split_operands(line, b, e, 4);
		bool destination_register = n > 0 && b[n - 1][0] == '%';
		size_t twin_length;
		bool fadd = explain_block_fadd_twin(mnemonic, &twin_length) != NULL;
		if (line_no == load) {
			/* the value comes back from the store (forwarding); a load that
			 * also operates adds the operation's own latency */
			double forward = costs && costs->forward > 0 ? costs->forward : latency[load];
			bool plain = !strncmp(mnemonic, "mov", 3) || !strncmp(mnemonic, "vmov", 4);
			double operation = 0;
			if (!plain) {
				size_t length = nl ? (size_t)(nl - line) : strlen(line);
				bool vector = memmem(line, length, "%xmm", 4) || memmem(line, length, "%ymm", 4) ||
				              memmem(line, length, "%zmm", 4);
				double load_only = costs ? (vector ? costs->fp_load : costs->int_load) : 0;
				operation = load_only > 0 && latency[load] > load_only ? latency[load] - load_only : 1;
				if (fadd && costs && costs->fadd > 0 && operation > costs->fadd)
					operation = costs->fadd;
			}
			chain = (costs && costs->forward > 0) || plain ? forward + operation : latency[load];
			if (store == load)
				return chain;   /* one read-modify-write instruction */
			if (destination_register)
				register_family(b[n - 1], (size_t)(e[n - 1] - b[n - 1]), carrier, sizeof carrier);
		} else if (line_no > load && carrier[0] && n > 0) {
			bool reads = false;
			for (int k = 0; k < n - 1 && !reads; k++)   /* the last is the destination */
				reads = register_in(b[k], e[k], carrier);
			if (!reads && destination_register && reads_destination(mnemonic, n, b, e))
				reads = register_in(b[n - 1], e[n - 1], carrier);
			if (line_no < store && reads && destination_register && !writes_nothing(mnemonic)) {
				double cost = latency[line_no];
				if (fadd && costs && costs->fadd > 0 && cost > costs->fadd)
					cost = costs->fadd;
				chain += cost;
				register_family(b[n - 1], (size_t)(e[n - 1] - b[n - 1]), carrier, sizeof carrier);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	/* the store's own latency in some models (12 cycles in LLVM 16's Golden
	 * Cove) is the time to write the cache, off the chain: a cycle */
	return chain + 1;
}

/* The FP add or subtract's integer twin (same operands, latency 1 in every
 * LLVM x86 model), or NULL: "addsd" -> "paddq", "vsubpd" -> "vpsubq". */
const char *explain_block_fadd_twin(const char *line, size_t *mnemonic_length)
{
	static const char *const adds[] = { "addsd", "addss", "addpd", "addps", NULL };
	static const char *const subs[] = { "subsd", "subss", "subpd", "subps", NULL };
	while (*line == ' ' || *line == '\t')
		line++;
	size_t len = strcspn(line, " \t\n");
	*mnemonic_length = len;
	bool vex = line[0] == 'v';
	const char *m = vex ? line + 1 : line;
	size_t mlen = vex ? len - 1 : len;
	for (int k = 0; adds[k]; k++) {
		if (mlen == 5 && !strncmp(m, adds[k], 5))
			return vex ? "vpaddq" : "paddq";
		if (mlen == 5 && !strncmp(m, subs[k], 5))
			return vex ? "vpsubq" : "psubq";
	}
	return NULL;
}

typedef struct file_cache {
	const char *path;
	int fd;
} file_cache;

/* The block's bytes from the file mapped at its addresses (false if none). */
static bool block_bytes(const explain_code *c, const code_block *b, file_cache *files, size_t *file_count,
                        size_t file_max, unsigned char *out)
{
	for (size_t m = 0; m < c->map_count; m++) {
		const code_mapping *map = &c->maps[m];
		if (b->start < map->start || b->start + b->bytes > map->end)
			continue;
		int fd = -1;
		for (size_t f = 0; f < *file_count && fd < 0; f++)
			if (!strcmp(files[f].path, map->path))
				fd = files[f].fd;
		if (fd < 0) {
			fd = open(map->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (*file_count < file_max)
				files[(*file_count)++] = (file_cache){ map->path, fd };
			else {
				ssize_t got = pread(fd, out, b->bytes, (off_t)(b->start - map->start + map->offset));
				close(fd);
				return got == (ssize_t)b->bytes;
			}
		}
		ssize_t got = pread(fd, out, b->bytes, (off_t)(b->start - map->start + map->offset));
		if (got == (ssize_t)b->bytes)
			return true;
	}
	return false;
}

/* The disassembly of each block (llvm-mc), a ud2 between blocks. */
static int disassemble(const mca_context *x, code_block **blocks, size_t n, const explain_code *c, char *why,
                       size_t why_size)
{
	const char *mc = x->mc, *dir = x->dir;
	char in[4200], out[4200], err[4200];
	snprintf(in, sizeof in, "%s/blocks.hex", dir);
	snprintf(out, sizeof out, "%s/blocks.s", dir);
	snprintf(err, sizeof err, "%s/mc.err", dir);
	FILE *f = fopen(in, "w");
	if (!f) {
		snprintf(why, why_size, "%.200s: %s", in, strerror(errno));
		return -1;
	}
	file_cache files[64];
	size_t file_count = 0;
	unsigned char bytes[MAX_BLOCK * 16];
	bool *have = calloc(n ? n : 1, sizeof *have);
	if (!have) {
		fclose(f);
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	size_t readable = 0;
	for (size_t i = 0; i < n; i++) {
		if (blocks[i]->bytes > sizeof bytes)
			continue;
		have[i] = block_bytes(c, blocks[i], files, &file_count, 64, bytes);
		if (!have[i])
			continue;
		readable++;
		for (uint32_t k = 0; k < blocks[i]->bytes; k++)
			fprintf(f, "0x%02x ", bytes[k]);
		fprintf(f, "0x0f 0x0b\n");
	}
	for (size_t k = 0; k < file_count; k++)
		close(files[k].fd);
	if (fclose(f) != 0) {
		free(have);
		snprintf(why, why_size, "%.200s: %s", in, strerror(errno));
		return -1;
	}
	/* Said for what it is, not as "no block could be disassembled" after
	 * the pricing found nothing to price: no block's bytes could be read,
	 * or llvm-mc failed. */
	if (n && !readable) {
		free(have);
		snprintf(why, why_size, "no executed block's bytes could be read from the program's files "
		                        "(%zu executable file segment%s in plumbgrind's code map)", c->map_count,
		         c->map_count == 1 ? "" : "s");
		return -1;
	}
	char *argv[] = { (char *)mc, "--disassemble", "-triple=x86_64-unknown-linux-gnu", NULL };
	int code;
	if (run_llvm(x, argv, in, out, err, TOOL_TIMEOUT_S, &code, why, why_size) != 0) {
		free(have);
		return -1;
	}
	if (code != 0) {
		char *message = read_all(err, NULL);
		char *nl = message ? strchr(message, '\n') : NULL;
		if (nl)
			*nl = 0;
		snprintf(why, why_size, "%.80s --disassemble failed (exit status %d): %.100s", mc, code,
		         message && message[0] ? message : "(no message)");
		free(message);
		free(have);
		return -1;
	}
	char *text = read_all(out, NULL);
	if (!text) {
		free(have);
		snprintf(why, why_size, "%.200s gave no output", mc);
		return -1;
	}
	/* Split at the ud2s: block i's lines must be its instruction count. */
	size_t i = 0;
	while (i < n && !have[i])
		i++;
	char *block_text = NULL;
	size_t block_len = 0, lines = 0;
	FILE *acc = open_memstream(&block_text, &block_len);
	for (char *line = strtok(text, "\n"); line && acc && i < n; line = strtok(NULL, "\n")) {
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '.' || *p == '#')
			continue;
		char *hash = strchr(p, '#');
		if (hash)
			*hash = 0;
		if (!strncmp(p, "ud2", 3)) {
			fclose(acc);
			acc = NULL;
			if (lines == blocks[i]->instructions) {
				blocks[i]->through_memory = explain_block_carries_through_memory(block_text, blocks[i]->carried,
				                                                    &blocks[i]->carried_count);
				blocks[i]->text = block_text;
				block_text = NULL;
			} else {
				free(block_text);
				block_text = NULL;
			}
			do
				i++;
			while (i < n && !have[i]);
			lines = 0;
			acc = open_memstream(&block_text, &block_len);
			continue;
		}
		fprintf(acc, "\t%s\n", p);
		lines++;
		size_t mnemonic_length;
		if (explain_block_fadd_twin(p, &mnemonic_length))
			blocks[i]->has_fadd = true;
		if (explain_block_chained_load(p))
			blocks[i]->chained_loads++;
		if (has_memory_source(p))
			blocks[i]->loads++;
	}
	if (acc)
		fclose(acc);
	free(block_text);
	free(text);
	free(have);
	return 0;
}

/* From one region of llvm-mca's output ([region, next), next NULL for the
 * last): micro-ops per execution, the dispatch width, the reorder buffer's
 * entries and the busiest resource's cycles per execution ("Resource
 * pressure per iteration": a row of names, then a row of cycles or "-"). */
static void read_model_view(const char *region, const char *next, double iterations, code_block *b)
{
	const char *end = next ? next : region + strlen(region);
	const char *at = strstr(region, "Total uOps:");
	if (at && at < end && iterations > 0)
		b->uops = strtod(at + 11, NULL) / iterations;
	at = strstr(region, "Dispatch Width:");
	if (at && at < end)
		b->dispatch_width = strtod(at + 15, NULL);
	at = strstr(region, "Total ROB Entries:");
	if (at && at < end)
		b->rob_entries = strtod(at + 18, NULL);
	at = strstr(region, "Resource pressure per iteration:");
	if (!at || at >= end)
		return;
	const char *row = strchr(at, '\n');
	row = row ? strchr(row + 1, '\n') : NULL;   /* past the names */
	if (!row || row >= end)
		return;
	row++;
	double busiest = 0;
	for (const char *p = row; *p && *p != '\n';) {
		p += strspn(p, " \t");
		char *after;
		double cycles = strtod(p, &after);
		if (after == p) {
			p += strcspn(p, " \t\n");   /* "-" */
			continue;
		}
		if (cycles > busiest)
			busiest = cycles;
		p = after;
	}
	b->pressure = busiest;
}

/* One llvm-mca input text: its region's name ("r12": a letter and an
 * index), and whether its FP adds and subtracts go as their integer twins
 * (latency 1, explain_block_fadd_twin). */
typedef struct mca_text {
	const char *text;
	char name[24];
	bool twin;
} mca_text;

/* Runs llvm-mca over texts[0..n) as one region each, each line as mca_line
 * gives it (or its FP add's twin); a text llvm-mca rejects
 * ("<stdin>:LINE:COL: error") is left out and the rest run again, up to
 * `attempts` runs.  llvm-mca prices each region alone (a pipeline of its
 * own), so one run over many texts gives what a run per text gives, for
 * one process.  views: the resource pressure and retire statistics too;
 * instruction_info: each instruction's latency.  Its output (malloc'd), or
 * NULL: with why set when llvm-mca could not run, empty when no text was
 * left to run. */
static char *run_mca(const mca_context *x, const char *cpu, const mca_text *texts, size_t n, unsigned iterations,
                     bool views, bool instruction_info, int attempts, char *why, size_t why_size)
{
	const char *mca = x->mca, *dir = x->dir;
	char in[4200], out[4200], err[4200], mcpu[64], runs[32];
	snprintf(in, sizeof in, "%s/blocks.mca.s", dir);
	snprintf(out, sizeof out, "%s/mca.out", dir);
	snprintf(err, sizeof err, "%s/mca.err", dir);
	snprintf(mcpu, sizeof mcpu, "-mcpu=%s", cpu);
	snprintf(runs, sizeof runs, "-iterations=%u", iterations);
	why[0] = 0;
	bool *skip = calloc(n ? n : 1, sizeof *skip);
	size_t *first = calloc(n + 1, sizeof *first);   /* each text's first line, to find the one an error names */
	if (!skip || !first) {
		free(skip), free(first);
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	char *output = NULL;
	for (int attempt = 0; attempt < attempts; attempt++) {
		FILE *f = fopen(in, "w");
		if (!f) {
			snprintf(why, why_size, "%.200s: %s", in, strerror(errno));
			break;
		}
		size_t line_no = 1, regions = 0;
		for (size_t i = 0; i < n; i++) {
			first[i] = line_no;
			if (!texts[i].text || skip[i])
				continue;
			fprintf(f, "# LLVM-MCA-BEGIN %s\n", texts[i].name);
			line_no++;
			for (const char *p = texts[i].text; *p;) {
				size_t len = strcspn(p, "\n");
				char one[512], rewritten[600];
				snprintf(one, sizeof one, "%.*s", (int)(len < 500 ? len : 500), p);
				size_t mnemonic_length;
				const char *twin = texts[i].twin ? explain_block_fadd_twin(one, &mnemonic_length) : NULL;
				const char *rest = one + strspn(one, " \t");
				if (twin)
					fprintf(f, "\t%s%s\n", twin, rest + mnemonic_length);
				else if (*rest)
					fprintf(f, "\t%s\n", mca_line(one, rewritten, sizeof rewritten));
				else
					fprintf(f, "\tnop\n");
				line_no++;
				p += len + (p[len] == '\n');
			}
			fprintf(f, "# LLVM-MCA-END %s\n", texts[i].name);
			line_no++;
			regions++;
		}
		first[n] = line_no;
		if (fclose(f) != 0) {
			snprintf(why, why_size, "%.200s: %s", in, strerror(errno));
			break;
		}
		if (!regions)
			break;   /* nothing to run: not an error */
		char *argv[] = { (char *)mca, mcpu, runs, views ? "-resource-pressure=true" : "-resource-pressure=false",
		                 instruction_info ? "-instruction-info=true" : "-instruction-info=false",
		                 views ? "-retire-stats" : NULL, NULL };
		int code;
		if (run_llvm(x, argv, in, out, err, TOOL_TIMEOUT_S, &code, why, why_size) != 0)
			break;
		if (code != 0) {
			char *message = read_all(err, NULL);
			const char *at = message ? strstr(message, "<stdin>:") : NULL;
			size_t bad = at ? strtoul(at + 8, NULL, 10) : 0, culprit = n;
			for (size_t i = 0; bad && i < n; i++)
				if (bad >= first[i] && bad < first[i + 1])
					culprit = i;
			if (culprit == n) {
				char *nl = message ? strchr(message, '\n') : NULL;
				if (nl)
					*nl = 0;
				snprintf(why, why_size, "llvm-mca failed: %.200s", message ? message : "(no message)");
				free(message);
				break;
			}
			free(message);
			skip[culprit] = true;
			continue;
		}
		output = read_all(out, NULL);
		if (!output)
			snprintf(why, why_size, "llvm-mca gave no output");
		break;
	}
	free(skip), free(first);
	return output;
}

/* LLVM's major version from `llvm-mca --version` ("LLVM version 14.0.6"), 0 if unknown. */
static int llvm_version(const mca_context *x)
{
	const char *mca = x->mca, *dir = x->dir;
	char in[4200], out[4200], err[4200], why[256];
	snprintf(in, sizeof in, "/dev/null");
	snprintf(out, sizeof out, "%s/probe.out", dir);
	snprintf(err, sizeof err, "%s/probe.err", dir);
	char *argv[] = { (char *)mca, "--version", NULL };
	int code;
	if (run_llvm(x, argv, in, out, err, 30, &code, why, sizeof why) != 0)
		return 0;
	char *text = read_all(out, NULL);
	const char *at = text ? strstr(text, "LLVM version ") : NULL;
	int major = at ? atoi(at + 13) : 0;
	free(text);
	return major;
}

static int mca_version(mca_context *x)
{
	if (x->version < 0)
		x->version = llvm_version(x);
	return x->version;
}

/* The name's probe: one llvm-mca run of two regions, a chain of FP adds
 * (their latency, from 100 runs) and the two loads (their latencies, from
 * the instruction info), which also says whether llvm-mca knows the name.
 * Taken from the context when it was asked before. */
static mca_probe probe_cpu(mca_context *x, const char *name)
{
	for (size_t i = 0; i < x->probe_count; i++)
		if (!strcmp(x->probes[i].cpu, name))
			return x->probes[i];
	mca_probe probe = { .cpu = name, .fadd = -1 };
	char in[4200], out[4200], err[4200], mcpu[64], why[256];
	snprintf(in, sizeof in, "%s/probe.s", x->dir);
	snprintf(out, sizeof out, "%s/probe.out", x->dir);
	snprintf(err, sizeof err, "%s/probe.err", x->dir);
	snprintf(mcpu, sizeof mcpu, "-mcpu=%s", name);
	FILE *f = fopen(in, "w");
	if (!f)
		return probe;
	fputs("# LLVM-MCA-BEGIN fadd\n\taddsd\t%xmm1, %xmm0\n# LLVM-MCA-END fadd\n"
	      "# LLVM-MCA-BEGIN chain\n\tmovq\t(%rax), %rax\n\tmovsd\t(%rax), %xmm0\n# LLVM-MCA-END chain\n", f);
	if (fclose(f) != 0)
		return probe;
	char *argv[] = { (char *)x->mca, mcpu, "-iterations=100", "-resource-pressure=false", "-instruction-info=true",
		         NULL };
	int code;
	if (run_llvm(x, argv, in, out, err, TOOL_TIMEOUT_S, &code, why, sizeof why) != 0 || code != 0)
		return probe;
	char *message = read_all(err, NULL);
	probe.known = !(message && strstr(message, "not a recognized processor"));
	free(message);
	char *text = read_all(out, NULL);
	const char *fadd = text ? strstr(text, "Code Region - fadd") : NULL;
	const char *chain = text ? strstr(text, "Code Region - chain") : NULL;
	if (fadd) {
		const char *iter = strstr(fadd, "Iterations:"), *total = strstr(fadd, "Total Cycles:");
		double runs_done = iter ? strtod(iter + 11, NULL) : 0, sum = total ? strtod(total + 13, NULL) : 0;
		if (runs_done > 0 && sum > 0)
			probe.fadd = sum / runs_done;
	}
	const char *info = chain ? strstr(chain, "Instructions:\n") : NULL;
	const char *row = info ? strchr(info, '\n') + 1 : NULL;
	double latency[2] = { 0, 0 };
	for (int k = 0; k < 2 && row && *row == ' '; k++) {
		unsigned uops;
		if (sscanf(row, " %u %lf", &uops, &latency[k]) != 2)
			break;
		row = strchr(row, '\n');
		row = row ? row + 1 : NULL;
	}
	free(text);
	probe.int_load = latency[0];
	probe.fp_load = latency[1];
	if (x->probe_count < sizeof x->probes / sizeof x->probes[0])
		x->probes[x->probe_count++] = probe;
	return probe;
}

/* Golden Cove and later Intel P-cores (Alder Lake, Sapphire and Emerald
 * Rapids, Raptor Lake) add and subtract floating point in 2 cycles on their
 * fast adders (measured here: a chain of dependent addsd runs at 2.0 cycles
 * each); LLVM prices them at its model's latency L, probed here (Ice Lake's
 * 4 in LLVM 14's sapphirerapids, 3 in LLVM 16's alderlake).  For such a CPU
 * each block with FP adds is priced again with them at latency 1 (their
 * integer twins), and its cycles taken at latency 2 by linear
 * interpolation: c(2) = c(1) + (c(L) - c(1)) / (L - 1), kept in *divisor
 * (L - 1; 0 when no correction applies).  Exact for a block bound by an add
 * chain, and no change for one bound by throughput. */
static bool golden_cove(const cpu_features *cpu)
{
	static const unsigned models[] = { 0x8F, 0xCF, 0xAD, 0xAE, 0x97, 0x9A, 0xB7, 0xBA, 0xBF, 0xAA, 0xAC };
	if (strcmp(cpu->vendor, "GenuineIntel") || cpu->family != 6)
		return false;
	for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
		if (cpu->core_model == models[k])
			return true;
	return false;
}

/* The divisor of the fast adders' correction (golden_cove): the probed
 * latency L less 1, or 0 when the core has no fast adders or the model
 * already knows them. */
static double fadd_divisor_of(const cpu_features *cpu, const mca_probe *probe)
{
	if (!golden_cove(cpu))
		return 0;
	double latency = (double)(long)(probe->fadd + 0.5);   /* 100 runs: 403 cycles is 4 */
	return latency > 2 ? latency - 1 : 0;
}

/* The hot one-block loops at llvm-mca's steady state.  llvm-mca's total
 * cycles for 100 iterations include the pipeline's fill: the first
 * iteration's whole latency, a load, its operations and the store at the
 * end (35 cycles for syrk's 9-instruction body, against 2 an iteration in
 * the steady state), which the core pays once a run of the loop and
 * overlaps with the code around it.  Each loop body is priced again as two
 * copies of itself (200 iterations in 100), in the blocks' own llvm-mca run
 * (price_blocks): the difference is the steady
 * state's cycles per iteration, and what the single text costs more is
 * the fill, taken off its cycles (explain_loop_fill_cycles).  Bodies
 * carrying a value through memory keep their chain, a loop priced with its
 * neighbour keeps that price, and one whose runs overlap in its nest has
 * its fill overlapped already.  After the nests: the test of whether
 * llvm-mca found a block bound by its unfused dispatch is made on the
 * figures it gives, fill included (gemm's body, 1.66 cycles in llvm-mca's
 * steady state, 1.82 measured, is not held to its fused micro-ops' 1.17).
 * The count of loops so priced. */
static size_t price_steady_loops(code_block **hot, size_t take)
{
	size_t priced = 0;
	for (size_t i = 0; i < take; i++) {
		code_block *b = hot[i];
		if (!b->text || !(b->cycles > 0) || b->through_memory || b->in_loop || b->in_nest)
			continue;
		double fill = explain_loop_fill_cycles(b->once_cycles, b->twice_cycles);
		/* never below its throughput: the busiest resource, and its fused
		 * micro-ops over the width */
		double floor = b->pressure > 0 ? b->pressure : 0;
		if (b->dispatch_width > 0 && explain_block_fused_uops(b->text, b->instructions) / b->dispatch_width > floor)
			floor = explain_block_fused_uops(b->text, b->instructions) / b->dispatch_width;
		double steady = b->cycles - fill < floor ? floor : b->cycles - fill;
		if (fill > 0 && steady < b->cycles) {
			b->cycles = steady;
			priced++;
		}
	}
	return priced;
}

/* A loop of two blocks: a hot block A and the block B right after it,
 * whose last instruction jumps back to A's start (a body that ends in a
 * branch out, then the register moves and the jump back that compilers put
 * after it).  Priced alone, each block loses the chain that runs through
 * the other (deriche's recurrences: the moves that carry y[j-1] to the next
 * iteration are in B, so A alone repeats with no chain at all); priced as
 * one text, the loop's cycles per iteration C go to both blocks in the
 * share that makes executions x cycles sum to C per iteration of A.
 * find_two_block_loops picks them (from the listings alone) and makes their
 * texts, which llvm-mca prices in the blocks' run (price_blocks);
 * apply_two_block_loops then shares their cycles. */
enum { LOOPS = 256 };
typedef struct two_block_loops {
	code_block *first[LOOPS], *second[LOOPS];
	char *texts[LOOPS];
	double cycles[LOOPS], fast[LOOPS];   /* per iteration (llvm-mca); -1 where not priced */
	size_t n;
	bool any_fadd;
} two_block_loops;

static void find_two_block_loops(code_block *unique, size_t unique_count, code_block **hot, size_t take,
                                 two_block_loops *loops)
{
	loops->n = 0;
	loops->any_fadd = false;
	for (size_t i = 0; i < take && loops->n < LOOPS; i++) {
		code_block *a = hot[i];
		size_t at = (size_t)(a - unique);
		if (!a->text || a->in_loop || at + 1 >= unique_count || !a->instructions ||
		    explain_block_jumps_to(a->text, a->start + a->bytes, a->start))
			continue;
		/* A, then B jumping back to A; or P, then A jumping back to P (the
		 * loop entered at A the first time).  first and second in loop
		 * order; A is run at least as often as the other */
		code_block *b = &unique[at + 1], *p = at > 0 ? &unique[at - 1] : NULL;
		uint64_t a_runs = a->weight / a->instructions, b_runs = b->instructions ? b->weight / b->instructions : 0;
		uint64_t p_runs = p && p->instructions ? p->weight / p->instructions : 0;
		code_block *head, *tail;
		if (b->text && !b->in_loop && b->start == a->start + a->bytes && b_runs <= a_runs && 2 * b_runs >= a_runs &&
		    explain_block_jumps_back(b->text, b->start + b->bytes, a->start)) {
			head = a, tail = b;
		} else if (p && p->text && !p->in_loop && p->start + p->bytes == a->start && p_runs <= a_runs &&
		           2 * p_runs >= a_runs && explain_block_jumps_back(a->text, a->start + a->bytes, p->start)) {
			head = p, tail = a;
		} else {
			continue;
		}
		size_t length = strlen(head->text) + strlen(tail->text) + 2;
		char *text = malloc(length);
		if (!text)
			break;
		size_t head_length = strlen(head->text);
		snprintf(text, length, "%s%s%s", head->text, head_length && head->text[head_length - 1] != '\n' ? "\n" : "",
		         tail->text);
		size_t n = loops->n++;
		loops->first[n] = head, loops->second[n] = tail, loops->texts[n] = text;
		loops->cycles[n] = loops->fast[n] = -1;
		loops->any_fadd = loops->any_fadd || head->has_fadd || tail->has_fadd;
		head->in_loop = tail->in_loop = true;
	}
}

/* The count of loops priced so. */
static size_t apply_two_block_loops(two_block_loops *loops, double fadd_divisor)
{
	size_t priced = 0;
	double *cycles = loops->cycles, *fast = loops->fast;
	code_block **first = loops->first, **second = loops->second;
	size_t n = loops->n;
	if (fadd_divisor > 0 && loops->any_fadd)
		for (size_t k = 0; k < n; k++)
			if (cycles[k] > 0 && fast[k] > 0 && fast[k] < cycles[k])
				cycles[k] = fast[k] + (cycles[k] - fast[k]) / fadd_divisor;
	for (size_t k = 0; k < n; k++) {
		if (!(cycles[k] > 0))
			continue;
		double first_runs = (double)(first[k]->weight / first[k]->instructions);
		double second_runs = (double)(second[k]->weight / second[k]->instructions);
		double iterations = first_runs > second_runs ? first_runs : second_runs;
		double share = cycles[k] * iterations / (first_runs + second_runs);
		/* a value carried through memory (priced above, which llvm-mca
		 * cannot see) keeps its chain */
		for (int side = 0; side < 2; side++) {
			const code_block *x = side ? second[k] : first[k];
			if (x->through_memory && x->cycles > share)
				share = x->cycles;
		}
		first[k]->cycles = second[k]->cycles = share;
		priced++;
	}
	return priced;
}

static void free_two_block_loops(two_block_loops *loops)
{
	for (size_t k = 0; k < loops->n; k++)
		free(loops->texts[k]);
	loops->n = 0;
}

/* The latencies of a block's instructions from llvm-mca's instruction
 * info in [region, next): rows filled, at most MAX_BLOCK. */
static unsigned read_latencies(const char *region, const char *next, double *latency)
{
	const char *info = strstr(region, "Instructions:\n");
	if (!info || (next && info >= next))
		return 0;
	unsigned rows = 0;
	const char *q = strchr(info, '\n') + 1;
	while (rows < MAX_BLOCK && q && *q == ' ') {
		unsigned uops;
		double lat;
		if (sscanf(q, " %u %lf", &uops, &lat) == 2)
			latency[rows++] = lat;
		else
			break;
		q = strchr(q, '\n');
		q = q ? q + 1 : NULL;
	}
	return rows;
}

/* Each hot block's cycles per execution (llvm-mca's total cycles over its
 * iterations, steady state), in one llvm-mca run with every other text a
 * pass prices: each block with FP adds again at their twins' latency
 * (fast adders, fadd_divisor > 0), and the two-block loops (and their
 * twins).  Then, in the order of the passes: the fast adders' correction;
 * a value carried through memory from one execution to the next, which
 * llvm-mca takes not to alias: at least the latency of the load that reads
 * it (with the operation it feeds) and of the store that writes it back
 * (explain_block_memory_chain, from the instruction info); and the loops'
 * cycles into loops->cycles and fast.  0, or -1 with why. */
static int price_blocks(mca_context *x, const char *cpu, code_block **blocks, size_t n, two_block_loops *loops,
                        double fadd_divisor, const explain_chain_costs *costs, char *why, size_t why_size)
{
	size_t capacity = 3 * n + 2 * loops->n, count = 0;
	mca_text *texts = calloc(capacity ? capacity : 1, sizeof *texts);
	char **doubled = calloc(n ? n : 1, sizeof *doubled);
	double *plain = malloc((n ? n : 1) * sizeof *plain), *fast = malloc((n ? n : 1) * sizeof *fast);
	double **latency = calloc(n ? n : 1, sizeof *latency);
	unsigned *rows = calloc(n ? n : 1, sizeof *rows);
	if (!texts || !plain || !fast || !latency || !rows || !doubled) {
		free(texts), free(plain), free(fast), free(latency), free(rows), free(doubled);
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	int groups = 1;
	for (size_t i = 0; i < n; i++) {
		plain[i] = fast[i] = -1;
		if (blocks[i]->text) {
			texts[count].text = blocks[i]->text;
			snprintf(texts[count++].name, sizeof texts[0].name, "r%zu", i);
		}
	}
	if (fadd_divisor > 0) {
		groups++;
		for (size_t i = 0; i < n; i++)
			if (blocks[i]->text && blocks[i]->has_fadd) {
				texts[count] = (mca_text){ .text = blocks[i]->text, .twin = true };
				snprintf(texts[count++].name, sizeof texts[0].name, "f%zu", i);
			}
	}
	if (loops->n) {
		groups++;
		for (size_t k = 0; k < loops->n; k++) {
			texts[count].text = loops->texts[k];
			snprintf(texts[count++].name, sizeof texts[0].name, "l%zu", k);
		}
	}
	if (loops->n && fadd_divisor > 0 && loops->any_fadd) {
		groups++;
		/* a loop with no FP add is its own twin: its cycles would be the same */
		for (size_t k = 0; k < loops->n; k++)
			if (loops->first[k]->has_fadd || loops->second[k]->has_fadd) {
				texts[count] = (mca_text){ .text = loops->texts[k], .twin = true };
				snprintf(texts[count++].name, sizeof texts[0].name, "m%zu", k);
			}
	}
	/* each one-block loop written twice, for its steady state
	 * (price_steady_loops) */
	bool any_doubled = false;
	for (size_t i = 0; i < n; i++) {
		code_block *b = blocks[i];
		b->once_cycles = b->twice_cycles = 0;
		if (!b->text || b->through_memory || b->in_loop || !explain_block_jumps_to(b->text, b->start + b->bytes, b->start))
			continue;
		size_t length = strlen(b->text);
		if (!(doubled[i] = malloc(2 * length + 2)))
			continue;
		bool newline = length && b->text[length - 1] == '\n';
		snprintf(doubled[i], 2 * length + 2, "%s%s%s", b->text, newline ? "" : "\n", b->text);
		texts[count].text = doubled[i];
		snprintf(texts[count++].name, sizeof texts[0].name, "d%zu", i);
		any_doubled = true;
	}
	groups += any_doubled;
	char *text = run_mca(x, cpu, texts, count, 100, true, true, 40 * groups, why, why_size);
	free(texts);
	for (size_t i = 0; i < n; i++)
		free(doubled[i]);
	free(doubled);
	if (!text) {
		free(plain), free(fast), free(latency), free(rows);
		if (!why[0])
			snprintf(why, why_size, "no block could be disassembled");
		return -1;
	}
	for (const char *p = strstr(text, "Code Region - "); p;) {
		const char *next = strstr(p + 1, "Code Region - ");
		char kind = p[14];
		size_t i = strtoul(p + 15, NULL, 10);
		const char *iter = strstr(p, "Iterations:"), *total = strstr(p, "Total Cycles:");
		double iterations = iter ? strtod(iter + 11, NULL) : 0, sum = total ? strtod(total + 13, NULL) : 0;
		double cycles = iterations > 0 && sum > 0 ? sum / iterations : -1;
		if (kind == 'd' && i < n) {
			blocks[i]->twice_cycles = cycles > 0 ? cycles : 0;
		} else if ((kind == 'r' || kind == 'f') && i < n) {
			code_block *b = blocks[i];
			if (kind == 'f') {
				fast[i] = cycles;
			} else {
				plain[i] = cycles;
				b->once_cycles = cycles > 0 ? cycles : 0;
				if (cycles > b->cycles)
					b->cycles = cycles;
				read_model_view(p, next, iterations, b);
				if (b->through_memory && b->carried_count) {
					latency[i] = malloc(MAX_BLOCK * sizeof **latency);
					if (latency[i])
						rows[i] = read_latencies(p, next, latency[i]);
				}
			}
		} else if ((kind == 'l' || kind == 'm') && i < loops->n) {
			(kind == 'l' ? loops->cycles : loops->fast)[i] = cycles;
		}
		p = next;
	}
	free(text);
	/* the fast adders: each block with FP adds, as priced with them at
	 * latency 1, its cycles at latency 2 */
	if (fadd_divisor > 0)
		for (size_t i = 0; i < n; i++) {
			code_block *b = blocks[i];
			if (b->text && b->has_fadd && b->cycles > 0 && fast[i] > 0)
				b->fast_cycles = fast[i];
			if (b->has_fadd && b->cycles > 0 && b->fast_cycles > 0 && b->fast_cycles < b->cycles)
				b->cycles = b->fast_cycles + (b->cycles - b->fast_cycles) / fadd_divisor;
		}
	/* a value carried through memory: the block's cycles as llvm-mca gave
	 * them, and each chain's */
	for (size_t i = 0; i < n; i++) {
		code_block *b = blocks[i];
		if (!b->text || !b->through_memory || !(b->cycles > 0))
			continue;
		if (plain[i] > b->cycles)
			b->cycles = plain[i];
		for (unsigned k = 0; latency[i] && k < b->carried_count; k++) {
			unsigned ld = b->carried[k][0], st = b->carried[k][1];
			if (ld >= rows[i] || st >= rows[i])
				continue;
			double chain = explain_block_memory_chain(b->text, latency[i], rows[i], ld, st, costs);
			if (chain > b->cycles)
				b->cycles = chain;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(latency[i]);
	free(plain), free(fast), free(latency), free(rows);
	return 0;
}

/* The blocks just before and after each hot block, which loop nests and
 * two-block loops are read from: into list after the take hot ones (where
 * not among them), so that one llvm-mc run disassembles both; the new
 * count. */
static size_t add_neighbours(code_block *unique, size_t unique_count, code_block **list, size_t take)
{
	bool *listed = calloc(unique_count ? unique_count : 1, sizeof *listed);
	if (!listed)
		return take;
	for (size_t i = 0; i < take; i++)
		listed[list[i] - unique] = true;
	size_t count = take;
	for (size_t i = 0; i < take; i++) {
		size_t at = (size_t)(list[i] - unique);
		/* the block after, and up to NEST_HEAD blocks before (a loop nest's
		 * head and the test of the trip count between it and the body) */
		size_t outer[NEST_HEAD + 1] = { at + 1 };
		for (size_t back = 1; back <= NEST_HEAD; back++)
			outer[back] = at >= back ? at - back : unique_count;
		for (int k = 0; k <= NEST_HEAD; k++) {
			if (outer[k] >= unique_count || listed[outer[k]] || unique[outer[k]].instructions > MAX_BLOCK)
				continue;
			listed[outer[k]] = true;
			list[count++] = &unique[outer[k]];
		}
	}
	free(listed);
	return count;
}

/* The hot one-block loops that sit in a two-level nest, their cycles
 * lowered by the overlap of consecutive runs (explain_nest.c says why);
 * the count of bodies priced so.  Every block is first held to its
 * fused-domain dispatch: llvm-mca dispatches the unfused micro-ops (a load
 * and its operation are two), the core its fused ones, so a block that
 * llvm-mca finds bound by dispatch runs at the larger of its busiest
 * resource and its fused micro-ops over the width. */
static size_t price_nests(const char *mc, const char *dir, const explain_code *c, code_block *unique,
                          size_t unique_count, code_block **hot, size_t take)
{
	for (size_t i = 0; i < take; i++) {
		code_block *b = hot[i];
		if (!b->text || !(b->cycles > 0) || !(b->uops > 0) || !(b->dispatch_width > 0))
			continue;
		double fused = explain_block_fused_uops(b->text, b->instructions);
		double unfused_bound = b->uops / b->dispatch_width, fused_bound = fused / b->dispatch_width;
		if (fused < b->uops && b->cycles <= 1.02 * unfused_bound) {
			double floor = b->pressure > fused_bound ? b->pressure : fused_bound;
			if (floor < b->cycles)
				b->cycles = floor;
		}
	}
	size_t priced = 0;
	for (size_t i = 0; i < take; i++) {
		code_block *body = hot[i];
		if (!body->text || !(body->cycles > 0) || body->instructions == 0 || !(body->rob_entries > 0) ||
		    !explain_block_jumps_to(body->text, body->start + body->bytes, body->start))
			continue;
		size_t at = (size_t)(body - unique);
		if (at == 0 || at + 1 >= unique_count)
			continue;
		code_block *before = &unique[at - 1], *after = &unique[at + 1];
		if (before->start + before->bytes != body->start || after->start != body->start + body->bytes ||
		    !before->instructions || !after->instructions || !before->text || !after->text)
			continue;
		/* the loop around jumps back to the block before, or to a head a
		 * few blocks earlier (explain_nest.c) */
		explain_nest_block chain[NEST_HEAD], next = { after->start, after->bytes, after->weight / after->instructions,
		                                              after->text };
		int listed = 0;
		for (; listed < NEST_HEAD && (size_t)listed < at && unique[at - 1 - listed].instructions; listed++) {
			const code_block *b = &unique[at - 1 - listed];
			chain[listed] = (explain_nest_block){ b->start, b->bytes, b->weight / b->instructions, b->text };
		}
		int found = explain_nest_head(chain, listed, &next);
		if (found < 0)
			continue;
		uint64_t entries = chain[0].runs;
		size_t head = at - 1 - (size_t)found;
		/* what the head and the blocks after it write afresh before each run */
		size_t length = 1;
		for (size_t k = head; k < at; k++)
			length += strlen(unique[k].text) + 1;
		char *entry = malloc(length);
		if (!entry)
			continue;
		entry[0] = 0;
		for (size_t k = head, used = 0; k < at; k++) {
			size_t n = strlen(unique[k].text);
			memcpy(entry + used, unique[k].text, n);
			used += n;
			if (n && unique[k].text[n - 1] != '\n')
				entry[used++] = '\n';
			entry[used] = 0;
		}
		bool independent = explain_nest_runs_independent(entry, body->text);
		free(entry);
		if (!independent)
			continue;
		double trips = (double)(body->weight / body->instructions) / (double)entries;
		double fused = explain_block_fused_uops(body->text, body->instructions);
		double floor = body->dispatch_width > 0 ? fused / body->dispatch_width : 0;
		if (body->pressure > floor)
			floor = body->pressure;
		double cycles = explain_nest_overlap_cycles(body->cycles, floor, body->rob_entries, fused, trips);
		if (cycles < body->cycles) {
			body->cycles = cycles;
			body->in_nest = true;
			priced++;
		}
	}
	return priced;
}

/* Every file LLVM's runs make in the preparation's folder. */
static const char *const llvm_files[] = { "blocks.hex", "blocks.s", "mc.err", "blocks.mca.s", "mca.out", "mca.err",
                                          "probe.s", "probe.out", "probe.err", "blocks.tsv" };
#define LLVM_FILES (sizeof llvm_files / sizeof llvm_files[0])

/* A signal removes the folder and whatever LLVM left in it: each file is
 * registered (unlinking one never made is harmless), as the handler only
 * rmdirs a folder, which fails while files remain.  A signal during the
 * pricing once left plumb-explain-XXXXXX/blocks.hex behind in TMPDIR. */
static void register_dir(const char *dir)
{
	char path[4200];
	interrupt_add_path(dir, true);
	for (size_t i = 0; i < LLVM_FILES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, llvm_files[i]);
		interrupt_add_path(path, false);
	}
}

/* The folder's files and the folder no longer removed on a signal; with
 * delete, removed now too (without, the folder is kept for a person). */
static void release_dir(const char *dir, bool delete)
{
	char path[4200];
	for (size_t i = 0; i < LLVM_FILES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, llvm_files[i]);
		if (delete)
			unlink(path);
		interrupt_remove_path(path);
	}
	if (delete)
		rmdir(dir);
	interrupt_remove_path(dir);
}

static void forget_dir(const char *dir) { release_dir(dir, false); }
static void remove_dir(const char *dir) { release_dir(dir, true); }

/* The first of the candidate CPUs this llvm-mca knows (its probe into *probe). */
static const char *choose_cpu(mca_context *x, const char *const *names, size_t n, mca_probe *probe)
{
	for (size_t i = 0; i < n; i++) {
		*probe = probe_cpu(x, names[i]);
		if (probe->known)
			return names[i];
	}
	return NULL;
}

/* The CPU names to try for cpu, best first (`forced`: the one a person
 * chose), and, in *core_model, words for a first name that is not the
 * CPU's own. */
static size_t cpu_names(mca_context *x, const cpu_features *cpu, const char *forced, const char *names[8],
                        const char **core_model)
{
	size_t count = explain_llvm_cpus(cpu->vendor, cpu->family, cpu->core_model, names, 8);
	if (forced && forced[0]) {
		names[0] = forced;
		count = 1;
	}
	/* LLVM 16 has a Golden Cove model under "alderlake" (its
	 * sapphirerapids is still Ice Lake's, 224-entry reorder buffer and
	 * 4-cycle FP adds); LLVM 17 gave Sapphire Rapids its own */
	*core_model = "";
	if (!(forced && forced[0]) && golden_cove(cpu) && cpu->core_model != 0x97 && cpu->core_model != 0x9A &&
	    cpu->core_model != 0xB7 && cpu->core_model != 0xBA && cpu->core_model != 0xBF && mca_version(x) == 16 && count < 8) {
		memmove(names + 1, names, count * sizeof *names);
		names[0] = "alderlake";
		count++;
		*core_model = " (LLVM 16's Golden Cove model; its sapphirerapids is Ice Lake's)";
	}
	return count;
}

static void remove_dir(const char *dir);

/* What a pricing needs before the blocks are known, none of it the
 * program's: the tools, their folder, LLVM's version and this CPU's name
 * and probe.  explain_code_prepare asks it on a thread of its own while the
 * program runs under Valgrind (two llvm-mca runs, about 0.1 s of wall time
 * after the run on md5sum); explain_code_finish otherwise. */
typedef struct llvm_prep {
	pthread_t thread;
	bool started;                 /* the thread runs (joined by llvm_prep_take) */
	bool done;                    /* llvm_prepare ran */
	char mca[4096], mc[4096], dir[4096];
	bool have_dir;                /* dir made (and not yet removed) */
	char why[PLUMB_MESSAGE_MAX];  /* "" when the tools are there */
	mca_context tools;
	cpu_features cpu;
} llvm_prep;

static void llvm_prepare(llvm_prep *p)
{
	/* the newest LLVM first: its models of recent cores are better
	 * (Debian 12's default llvm is 14, and it has llvm-16 beside it) */
	static const char *const mca_names[] = { "llvm-mca-19", "llvm-mca-18", "llvm-mca-17", "llvm-mca-16",
	                                         "llvm-mca", "llvm-mca-15", "llvm-mca-14", NULL };
	static const char *const mc_names[] = { "llvm-mc-19", "llvm-mc-18", "llvm-mc-17", "llvm-mc-16",
	                                        "llvm-mc", "llvm-mc-15", "llvm-mc-14", NULL };
	p->done = true;
	p->why[0] = 0;
	snprintf(p->dir, sizeof p->dir, "%s/plumb-explain-XXXXXX", temp_dir());
	if (!find_tool("PLUMB_LLVM_MCA", mca_names, p->mca, sizeof p->mca)) {
		snprintf(p->why, sizeof p->why, "llvm-mca was not found (Debian package llvm; or $PLUMB_LLVM_MCA)");
		return;
	}
	if (!find_tool("PLUMB_LLVM_MC", mc_names, p->mc, sizeof p->mc)) {
		snprintf(p->why, sizeof p->why, "llvm-mc was not found (Debian package llvm; or $PLUMB_LLVM_MC)");
		return;
	}
	if (!mkdtemp(p->dir)) {
		snprintf(p->why, sizeof p->why, "%.200s: %s", p->dir, strerror(errno));
		return;
	}
	p->have_dir = true;
	/* a signal during the Valgrind run or the pricing removes it, and its files */
	register_dir(p->dir);
	p->tools = (mca_context){ .mca = p->mca, .mc = p->mc, .dir = p->dir, .version = -1 };
	llvm_cache_open(&p->tools);
	cpu_features_detect(&p->cpu);
	/* this CPU's name and probe, kept in the context: the pricing asks
	 * choose_cpu again and finds them there */
	const char *names[8], *core_model;
	size_t count = cpu_names(&p->tools, &p->cpu, secure_getenv("PLUMB_LLVM_CPU"), names, &core_model);
	mca_probe probe;
	(void)choose_cpu(&p->tools, names, count, &probe);
	/* the answers are in the context: the folder waits empty for the
	 * blocks (kept for a person to read with $PLUMB_EXPLAIN_KEEP_BLOCKS) */
	const char *keep = secure_getenv("PLUMB_EXPLAIN_KEEP_BLOCKS");
	if (!(keep && keep[0] == '1')) {
		static const char *const probe_files[] = { "probe.s", "probe.out", "probe.err" };
		char path[4200];
		for (size_t i = 0; i < sizeof probe_files / sizeof probe_files[0]; i++) {
			snprintf(path, sizeof path, "%s/%s", p->dir, probe_files[i]);
			unlink(path);
		}
	}
}

static void *llvm_prepare_thread(void *arg)
{
	llvm_prepare(arg);
	return NULL;
}

/* The preparation, done: the thread's, joined, or made here. */
static llvm_prep *llvm_prep_take(explain_code *c)
{
	if (!c->prep && !(c->prep = calloc(1, sizeof *c->prep)))
		return NULL;
	llvm_prep *p = c->prep;
	if (p->started) {
		pthread_join(p->thread, NULL);
		p->started = false;
	}
	if (!p->done)
		llvm_prepare(p);
	return p;
}

/* A preparation no pricing took (the run failed, or the code watch did)
 * is waited for and its folder removed. */
static void llvm_prep_free(llvm_prep *p)
{
	if (!p)
		return;
	if (p->started)
		pthread_join(p->thread, NULL);
	if (p->have_dir)
		remove_dir(p->dir);
	free(p);
}

void explain_code_prepare(explain_code *c)
{
	if (!c || c->prep || !(c->prep = calloc(1, sizeof *c->prep)))
		return;
	c->prep->started = pthread_create(&c->prep->thread, NULL, llvm_prepare_thread, c->prep) == 0;
}

/* Each region's in-core cycles: its blocks' cycles (this CPU's, or the
 * other machine's core's: `other`, per unique block) times their
 * executions, the blocks left unpriced at the priced ones' average. */
static void sum_cores(const explain_code *c, explain_result *result, const code_block *unique, const code_use *uses,
                      size_t use_count, const double *other)
{
	for (size_t k = 0; k < c->context_count; k++) {
		explain_core sum = { 0 };
		for (size_t u = 0; u < use_count; u++) {
			if (uses[u].context != k)
				continue;
			const code_block *b = &unique[uses[u].block];
			uint64_t executed = uses[u].count * b->instructions;
			sum.instructions += executed;
			sum.blocks++;
			double cycles = other ? other[uses[u].block] : b->cycles;
			if (cycles > 0) {
				sum.cycles += (double)uses[u].count * cycles;
				sum.priced_instructions += executed;
				sum.chained_loads += uses[u].count * b->chained_loads;
				sum.decoded_loads += uses[u].count * b->loads;
			}
		}
		const code_context *x = &c->contexts[k];
		size_t into[MAX_DEPTH + 1];
		unsigned m = 0;
		into[m++] = 0;
		for (unsigned d = 0; d < x->depth; d++) {
			explain_region *r = explain_result_region(result, c->names[x->ids[d]]);
			if (r)
				into[m++] = (size_t)(r - result->regions);
		}
		for (unsigned i = 0; i < m; i++) {
			explain_region *region = &result->regions[into[i]];
			explain_core *core = other ? &region->other_core : &region->core;
			core->instructions += sum.instructions;
			core->priced_instructions += sum.priced_instructions;
			core->cycles += sum.cycles;
			core->blocks += sum.blocks;
			core->chained_loads += sum.chained_loads;
			core->decoded_loads += sum.decoded_loads;
		}
	}
	for (size_t r = 0; r < result->region_count; r++) {
		explain_core *core = other ? &result->regions[r].other_core : &result->regions[r].core;
		if (core->priced_instructions > 0 && core->cycles > 0) {
			double cpi = core->cycles / (double)core->priced_instructions;
			core->cycles += cpi * (double)(core->instructions - core->priced_instructions);
			core->done = true;
		}
	}
}

/* The hot blocks' cycles for one CPU: its llvm-mca name (or `forced`),
 * then each pricing pass (docs/explain.md, "The in-core time"); how, in
 * words, into source.  The hot blocks and their neighbours are
 * disassembled.  0, or -1 with why. */
static int price_for_cpu(mca_context *x, const cpu_features *cpu, const char *forced, code_block *unique,
                         size_t unique_count, code_block **hot, size_t take, char *source, size_t source_size,
                         char *why, size_t why_size)
{
	const char *names[8], *core_model;
	size_t count = cpu_names(x, cpu, forced, names, &core_model);
	mca_probe probe;
	const char *chosen = choose_cpu(x, names, count, &probe);
	if (!chosen) {
		snprintf(why, why_size, "%.120s knows none of the CPU names for %s family %u model %u", x->mca, cpu->vendor,
		         cpu->family, cpu->core_model);
		return -1;
	}
	double fadd_divisor = fadd_divisor_of(cpu, &probe);
	/* the model's latencies a value carried through memory needs
	 * (explain_block_memory_chain): an integer load (taken as the store's
	 * forwarding to the next load), an FP load; FP adds at 2 cycles where
	 * the core has fast adders */
	explain_chain_costs costs = { .forward = probe.int_load, .int_load = probe.int_load, .fp_load = probe.fp_load,
		                      .fadd = fadd_divisor > 0 ? 2 : 0 };
	two_block_loops *loops = malloc(sizeof *loops);
	if (!loops) {
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	find_two_block_loops(unique, unique_count, hot, take, loops);
	if (price_blocks(x, chosen, hot, take, loops, fadd_divisor, &costs, why, why_size) != 0) {
		free_two_block_loops(loops);
		free(loops);
		return -1;
	}
	size_t priced_loops = apply_two_block_loops(loops, fadd_divisor);
	free_two_block_loops(loops);
	free(loops);
	size_t nests = price_nests(x->mc, x->dir, NULL, unique, unique_count, hot, take);
	(void)price_steady_loops(hot, take);
	char nearest[96] = "", nested[160] = "";
	if (chosen != names[0])
		snprintf(nearest, sizeof nearest, "; %s is the nearest it knows to %s", chosen, names[0]);
	if (nests || priced_loops)
		snprintf(nested, sizeof nested, "; %zu inner loop%s priced in %s nest, %zu two-block loop%s as one", nests,
		         nests == 1 ? "" : "s", nests == 1 ? "its" : "their", priced_loops, priced_loops == 1 ? "" : "s");
	char corrected[160] = "";
	if (cpu->core_model != cpu->model && cpu->core_model_reason[0])
		snprintf(corrected, sizeof corrected, " (%s)", cpu->core_model_reason);
	snprintf(source, source_size, "llvm-mca -mcpu=%s%s for %s family %u model %u%s%s%s%s", chosen,
	         chosen == names[0] ? core_model : "", cpu->vendor, cpu->family, cpu->model, corrected, nearest,
	         fadd_divisor > 0 ? "; FP adds at this core's 2 cycles" : "", nested);
	return 0;
}

/* The hot blocks priced again for the other machine's core: its cycles per
 * unique block (NULL where that fails, with a note), this CPU's kept in the
 * blocks.  Every figure a pass reads is reset first, so nothing of this
 * CPU's model leaks into the other's. */
static double *price_other(mca_context *x, explain_result *result, code_block *unique, size_t unique_count,
                           code_block **hot, size_t take)
{
	code_block *mine = malloc((unique_count ? unique_count : 1) * sizeof *mine);
	double *other = malloc((unique_count ? unique_count : 1) * sizeof *other);
	if (!mine || !other) {
		free(mine), free(other);
		return NULL;
	}
	memcpy(mine, unique, unique_count * sizeof *mine);
	for (size_t i = 0; i < take; i++) {
		code_block *b = hot[i];
		b->cycles = -1;
		b->fast_cycles = b->uops = b->pressure = b->dispatch_width = b->rob_entries = 0;
		b->once_cycles = b->twice_cycles = 0;
	}
	/* every block's pairing, not only the hot ones': a neighbour this CPU's
	 * pass paired into a two-block loop or a nest would otherwise refuse to
	 * pair again for the other core */
	for (size_t i = 0; i < unique_count; i++)
		unique[i].in_loop = unique[i].in_nest = false;
	cpu_features cpu = { 0 };
	snprintf(cpu.vendor, sizeof cpu.vendor, "%s", result->other_cpu);
	cpu.family = result->other_cpu_family;
	cpu.model = result->other_cpu_model;
	/* other_cpu_model is its report's core_model already (its CPUID model
	 * in an older report); with no features to read, settling keeps it */
	cpu_core_model_settle(&cpu);
	char source[320], why[PLUMB_MESSAGE_MAX];
	if (price_for_cpu(x, &cpu, NULL, unique, unique_count, hot, take, source, sizeof source, why, sizeof why) == 0) {
		for (size_t i = 0; i < unique_count; i++)
			other[i] = unique[i].cycles;
		explain_result_note(result, "on the other machine: its core's cycles from %s", source);
	} else {
		explain_result_note(result, "on the other machine: its core could not be priced (%s), so its in-core time "
		                    "is this CPU's cycles at its clock", why);
		free(other);
		other = NULL;
	}
	for (size_t i = 0; i < unique_count; i++) {   /* this CPU's figures back; the texts were never copied out */
		char *text = unique[i].text;
		unique[i] = mine[i];
		unique[i].text = text;
	}
	free(mine);
	return other;
}

int explain_code_finish(explain_code *c, explain_result *result, bool price_blocks)
{
	if (!c)
		return 0;
	flush_uses(c);
	/* what the strides said, per region */
	for (size_t k = 0; k < c->context_count; k++) {
		code_context *x = &c->contexts[k];
		for (unsigned d = 0; d < x->depth; d++) {
			explain_region *r = explain_result_region(result, c->names[x->ids[d]]);
			if (r) {
				r->core.lines += x->lines;
				r->core.strided_lines += x->strided_lines;
				r->core.watched = true;
			}
		}
		explain_region *program = &result->regions[0];
		program->core.lines += x->lines;
		program->core.strided_lines += x->strided_lines;
		program->core.watched = true;
	}
	if (c->failed) {
		snprintf(result->core_error, sizeof result->core_error, "out of memory counting the executed code");
		return 0;
	}
	/* the entries, sorted by context and address */
	code_entry *entries = malloc((c->slot_used ? c->slot_used : 1) * sizeof *entries);
	if (!entries) {
		snprintf(result->core_error, sizeof result->core_error, "out of memory");
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < c->slot_count; i++)
		if (c->slots[i].key)
			entries[n++] = (code_entry){ .context = (unsigned)(c->slots[i].key >> 48),
			                             .address = c->slots[i].key & 0xffffffffffffULL,
			                             .count = c->slots[i].count,
			                             .size = c->slots[i].size };
	qsort(entries, n, sizeof *entries, by_context_address);
	/* blocks: contiguous, executed equally often */
	code_use *uses = malloc((n ? n : 1) * sizeof *uses);
	code_block *blocks = malloc((n ? n : 1) * sizeof *blocks);
	if (!uses || !blocks) {
		free(entries), free(uses), free(blocks);
		snprintf(result->core_error, sizeof result->core_error, "out of memory");
		return 0;
	}
	size_t use_count = 0, block_count = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		uint64_t end = entries[i].address + entries[i].size;
		while (j < n && j - i < MAX_BLOCK && entries[j].context == entries[i].context && entries[j].address == end &&
		       entries[j].count == entries[i].count) {
			end += entries[j].size;
			j++;
		}
		blocks[block_count] = (code_block){ .start = entries[i].address, .bytes = (uint32_t)(end - entries[i].address),
		                                    .instructions = (uint32_t)(j - i), .cycles = -1 };
		uses[use_count++] = (code_use){ .context = entries[i].context, .block = block_count, .count = entries[i].count };
		block_count++;
		i = j;
	}
	free(entries);
	/* one block per code range, whatever regions ran it */
	size_t *order = malloc((block_count ? block_count : 1) * sizeof *order);
	code_block *unique = malloc((block_count ? block_count : 1) * sizeof *unique);
	if (!order || !unique) {
		free(uses), free(blocks), free(order), free(unique);
		snprintf(result->core_error, sizeof result->core_error, "out of memory");
		return 0;
	}
	if (block_count) {   /* memcpy and qsort may not take NULL, even for nothing */
		memcpy(unique, blocks, block_count * sizeof *unique);
		qsort(unique, block_count, sizeof *unique, by_start);
	}
	size_t unique_count = 0;
	for (size_t i = 0; i < block_count; i++)
		if (!unique_count || unique[unique_count - 1].start != unique[i].start ||
		    unique[unique_count - 1].bytes != unique[i].bytes)
			unique[unique_count++] = unique[i];
	for (size_t u = 0; u < use_count; u++) {
		const code_block *b = &blocks[uses[u].block];
		size_t lo = 0, hi = unique_count;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (by_start(&unique[mid], b) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		uses[u].block = lo;
		unique[lo].weight += uses[u].count * unique[lo].instructions;
	}
	free(blocks);
	free(order);
	uint64_t total = 0;
	for (size_t u = 0; u < use_count; u++)
		total += uses[u].count * unique[uses[u].block].instructions;

	double *other_cycles = NULL;   /* per unique block, for the other machine's core */
	if (price_blocks) {
		code_block **hot = malloc((unique_count ? unique_count : 1) * sizeof *hot);
		llvm_prep *prep = hot ? llvm_prep_take(c) : NULL;
		char why[PLUMB_MESSAGE_MAX] = "";
		size_t hot_count_kept = 0;   /* the blocks given to llvm-mca */
		if (!hot || !prep) {
			snprintf(why, sizeof why, "out of memory");
		} else if (prep->why[0]) {
			snprintf(why, sizeof why, "%s", prep->why);
		} else {
			const char *dir = prep->dir;
			const cpu_features cpu = prep->cpu;
			size_t hot_count = 0;
			for (size_t i = 0; i < unique_count; i++)
				hot[hot_count++] = &unique[i];
			qsort(hot, hot_count, sizeof *hot, by_weight);
			uint64_t covered = 0;
			size_t take = 0;
			while (take < hot_count && take < MAX_PRICED && (double)covered < COVER * (double)total)
				covered += hot[take++]->weight;
			hot_count_kept = take;
			/* $PLUMB_LLVM_CPU: the -mcpu a person chose (checked like the others) */
			const char *forced = secure_getenv("PLUMB_LLVM_CPU");
			/* the hot blocks and their neighbours, in one llvm-mc run */
			code_block **listed = malloc(((NEST_HEAD + 2) * take + 1) * sizeof *listed);
			size_t listed_count = 0;
			if (listed) {
				memcpy(listed, hot, take * sizeof *listed);
				listed_count = add_neighbours(unique, unique_count, listed, take);
			}
			mca_context tools = prep->tools;
			if (!listed)
				snprintf(why, sizeof why, "out of memory");
			else if (disassemble(&tools, listed, listed_count, c, why, sizeof why) == 0 &&
			         price_for_cpu(&tools, &cpu, forced, unique, unique_count, hot, take, result->core_source,
			                       sizeof result->core_source, why, sizeof why) == 0)
				why[0] = 0;
			free(listed);
			if (!why[0] && result->have_other && result->other_cpu[0]) {
				/* the other machine's core (--on), when it is not this one:
				 * the same blocks, priced again for it */
				other_cycles = price_other(&tools, result, unique, unique_count, hot, take);
			}
			/* $PLUMB_EXPLAIN_KEEP_BLOCKS: leave the listings for a person to read */
			const char *keep = secure_getenv("PLUMB_EXPLAIN_KEEP_BLOCKS");
			if (keep && keep[0] == '1') {
				/* each priced block's executions and cycles, so that another
				 * model's cycles for blocks.mca.s can be weighed by hand */
				char table[4200];
				snprintf(table, sizeof table, "%s/blocks.tsv", dir);
				FILE *f = fopen(table, "w");
				if (f) {
					fprintf(f, "block\tstart\tinstructions\texecutions\tcycles\tfast_add_cycles\tuops\tfused_uops"
					           "\tpressure\tdispatch_width\tloop\n");
					for (size_t i = 0; i < hot_count_kept; i++)
						fprintf(f, "b%zu\t%#llx\t%u\t%llu\t%.3f\t%.3f\t%.2f\t%.0f\t%.2f\t%.0f\t%d\n", i,
						        (unsigned long long)hot[i]->start, hot[i]->instructions,
						        (unsigned long long)(hot[i]->instructions ? hot[i]->weight / hot[i]->instructions : 0),
						        hot[i]->cycles, hot[i]->fast_cycles, hot[i]->uops,
						        explain_block_fused_uops(hot[i]->text, hot[i]->instructions), hot[i]->pressure,
						        hot[i]->dispatch_width,
						        explain_block_jumps_to(hot[i]->text, hot[i]->start + hot[i]->bytes, hot[i]->start));
					fclose(f);
				}
				explain_result_note(result, "in-core: the blocks and llvm-mca's output are in %s", dir);
				forget_dir(dir);   /* kept */
			}
			else
				remove_dir(dir);
			prep->have_dir = false;
		}
		free(hot);
		if (why[0])
			snprintf(result->core_error, sizeof result->core_error, "%s", why);
	}
	/* per region: priced cycles, and the rest at the priced average */
	sum_cores(c, result, unique, uses, use_count, NULL);
	if (other_cycles)
		sum_cores(c, result, unique, uses, use_count, other_cycles);
	free(other_cycles);
	for (size_t i = 0; i < unique_count; i++)
		free(unique[i].text);
	free(unique);
	free(uses);
	return 0;
}
