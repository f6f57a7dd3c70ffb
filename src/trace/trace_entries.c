/* plumbgrind's compact entries: definitions, the expander into records, runs
 * of uses for the simulator, and the whole-block check of a native file's
 * entry blocks (trace_entries.h).  The ring (trace_ring.c) and the native
 * reader (trace_native_read.c) both walk entries with these functions, so a
 * recorded run and a live one become the same records.  Everything is
 * checked as it comes (tags, numbers, lengths, names): a bad entry is an
 * error, never a wrong number. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"

static inline unsigned tag_of(uint64_t head)
{
	return (unsigned)(head >> TRACE_ENTRY_TAG_SHIFT);
}

static int fail(trace_entries *e, const char *what)
{
	e->error = what;
	return -1;
}

/* A use's definition and data count, checked against what was defined
 * (bits 40-59 are 0); the number of data words, or -1 after e->error. */
static inline long use_data(trace_entries *e, uint64_t head)
{
	uint64_t id = head & 0xffffffffu;
	size_t data = (size_t)(head >> 32) & 0xff;
	if ((head >> 40) != (uint64_t)TRACE_ENTRY_USE << (TRACE_ENTRY_TAG_SHIFT - 40) || id >= e->definitions)
		return fail(e, "a use of an unknown definition");
	if (e->data[id] != data)
		return fail(e, "a use whose data count is not its definition's");
	return (long)data;
}

void trace_entries_init(trace_entries *e, trace_names *names)
{
	memset(e, 0, sizeof *e);
	e->names = names;
	/* the state's address and when it was made: two streams at one
	 * address were made at different times */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	e->stream = (uint64_t)(uintptr_t)e * 0x9e3779b97f4a7c15ull ^
	            ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
}

void trace_entries_free(trace_entries *e)
{
	free(e->first);
	free(e->count);
	free(e->data);
	free(e->templates);
	free(e->data_at);
	free(e->last);
	memset(e, 0, sizeof *e);
}


static int define(trace_entries *e, const uint64_t *w, uint64_t id, uint32_t n)
{
	if (id != e->definitions)
		return fail(e, "a definition out of order");
	if (n == 0 || n > 255)
		return fail(e, "a definition of a bad length");
	if (e->definitions == e->definitions_capacity) {
		size_t capacity = e->definitions_capacity ? 2 * e->definitions_capacity : 4096;
		uint32_t *first = realloc(e->first, capacity * sizeof *first);
		if (first)
			e->first = first;
		uint8_t *count = realloc(e->count, capacity);
		if (count)
			e->count = count;
		uint8_t *data = realloc(e->data, capacity);
		if (data)
			e->data = data;
		if (!first || !count || !data)
			return fail(e, "out of memory for definitions");
		e->definitions_capacity = capacity;
	}
	if (e->event_count > UINT32_MAX - n)
		return fail(e, "too many definitions");
	if (e->event_count + n > e->events_capacity) {
		size_t capacity = e->events_capacity ? 2 * e->events_capacity : 65536;
		trace_record *templates = realloc(e->templates, capacity * sizeof *templates);
		if (templates)
			e->templates = templates;
		uint8_t *data_at = realloc(e->data_at, capacity);
		if (data_at)
			e->data_at = data_at;
		uint64_t *last = realloc(e->last, capacity * sizeof *last);
		if (last)
			e->last = last;
		if (!templates || !data_at || !last)
			return fail(e, "out of memory for definitions");
		e->events_capacity = capacity;
	}
	uint8_t data = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t word = w[i];
		trace_record *r = &e->templates[e->event_count + i];
		r->instruction_address = word & ((1ull << 48) - 1);
		r->size = (uint16_t)((word >> 48) & 0x3fff);
		r->kind = (uint8_t)(word >> 62);
		r->address = r->kind == TRACE_INSTRUCTION ? r->instruction_address : 0;
		r->time = 0;
		r->thread = 0;
		r->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
		e->last[e->event_count + i] = 0;
		if (r->size == 0)
			return fail(e, "an event of size 0");
		if (r->kind != TRACE_INSTRUCTION)
			e->data_at[e->event_count + data++] = (uint8_t)i;
	}
	e->first[id] = (uint32_t)e->event_count;
	e->count[id] = (uint8_t)n;
	e->data[id] = data;
	e->event_count += n;
	e->definitions++;
	return 0;
}

/* The words an entry other than a use takes, checked against the block's
 * end; 0 after an error (e->error). */
static size_t entry_words(trace_entries *e, const uint64_t *w, const uint64_t *end)
{
	uint64_t head = w[0];
	size_t words;
	if (e->filtered && tag_of(head) != TRACE_ENTRY_THREAD && tag_of(head) != TRACE_ENTRY_MARKER) {
		fail(e, "an entry the L1 filter's stream does not hold");
		return 0;
	}
	switch (tag_of(head)) {
	case TRACE_ENTRY_DEFINE: words = 1 + (size_t)((head >> 32) & 0xffff); break;
	case TRACE_ENTRY_THREAD: words = 1; break;
	case TRACE_ENTRY_SINGLE: words = 3; break;
	case TRACE_ENTRY_MARKER: words = 1 + (((size_t)(head >> 32) & 0xff) + 7) / 8; break;
	case TRACE_ENTRY_CALL: words = 3; break;
	case TRACE_ENTRY_RETURN: words = 1; break;
	default: fail(e, "an entry of an unknown kind"); return 0;
	}
	if ((size_t)(end - w) < words) {
		fail(e, "an entry cut by the block's end");
		return 0;
	}
	return words;
}

long trace_entries_expand(trace_entries *e, const uint64_t **cursor, const uint64_t *end, trace_record *out,
                          size_t max, bool stop_at_use)
{
	const uint64_t *w = *cursor;
	size_t n = 0;
	while (w < end) {
		uint64_t head = w[0];
		unsigned tag = tag_of(head);
		if (e->filtered && (tag == TRACE_ENTRY_COUNTS || tag == TRACE_ENTRY_GENERAL)) {
			if (stop_at_use)
				break;
			return fail(e, "the L1 filter's entries where records are read");
		}
		if (tag == TRACE_ENTRY_USE && !e->filtered) {
			if (stop_at_use)
				break;
			long checked = use_data(e, head);
			if (checked < 0)
				return -1;
			uint64_t id = head & 0xffffffffu;
			size_t count = e->count[id];
			if (n + count > max)
				break;
			size_t data = (size_t)checked;
			if ((size_t)(end - w) < 1 + data)
				return fail(e, "an entry cut by the block's end");
			/* the definition's records, then what only the run knew */
			trace_record *r = out + n;
			memcpy(r, e->templates + e->first[id], count * sizeof *r);
			const uint8_t *at = e->data_at + e->first[id];
			for (size_t i = 0; i < data; i++)
				r[at[i]].address = w[1 + i];
			if (e->thread)
				for (size_t i = 0; i < count; i++)
					r[i].thread = e->thread;
			n += count;
			w += 1 + data;
			continue;
		}
		if (tag != TRACE_ENTRY_DEFINE && tag != TRACE_ENTRY_THREAD && n == max)
			break;
		size_t words = entry_words(e, w, end);
		if (words == 0)
			return -1;
		if (tag == TRACE_ENTRY_DEFINE) {
			if (define(e, w + 1, head & 0xffffffffu, (uint32_t)(words - 1)) < 0)
				return -1;
		} else if (tag == TRACE_ENTRY_THREAD) {
			e->thread = (uint32_t)head;
		} else if (tag == TRACE_ENTRY_SINGLE) {
			trace_record *r = &out[n++];
			r->address = w[1];
			r->instruction_address = w[2];
			r->time = 0;
			r->thread = e->thread;
			r->size = (uint16_t)head;
			r->kind = (uint8_t)(head >> 16);
			r->flags = TRACE_HAS_INSTRUCTION_ADDRESS;
			if (r->kind > TRACE_MODIFY || r->size == 0)
				return fail(e, "a bad single reference");
		} else if (tag == TRACE_ENTRY_MARKER) {
			size_t length = (size_t)((head >> 32) & 0xff);
			const char *text = (const char *)(w + 1);
			if (trace_region_name_problem(text, length) || memchr(text, 0, length))
				return fail(e, "a bad region marker");
			const char *name = e->names ? trace_names_intern(e->names, text, length) : NULL;
			if (!name)
				return fail(e, e->names ? "out of memory for region names" : "a region marker where none can be read");
			trace_region_marker(&out[n++], (int)((head >> 56) & 1), (uint32_t)head, name);
		} else {
			trace_record *r = &out[n++];
			bool call = tag == TRACE_ENTRY_CALL;
			r->address = call ? w[2] : (head & 0xffffffffu);
			r->instruction_address = call ? w[1] : 0;
			r->time = 0;
			r->thread = e->thread;
			r->size = 0;
			r->kind = call ? TRACE_CALL : TRACE_RETURN;
			r->flags = 0;
		}
		w += words;
	}
	*cursor = w;
	return (long)n;
}

/* A run of the L1 filter's COUNTS and GENERAL entries (vg/pg_filter.h). */
static long run_filtered(trace_entries *e, const uint64_t **cursor, const uint64_t *end, trace_compact *compact)
{
	const uint64_t *w = *cursor;
	const uint64_t *start = w;
	uint64_t records = 0;
	while (w < end) {
		uint64_t head = w[0];
		unsigned tag = tag_of(head);
		if (tag == TRACE_ENTRY_COUNTS) {
			if ((size_t)(end - w) < 6)
				return fail(e, "an entry cut by the block's end");
			/* counts of one stage of the tool: far below 2^48 each */
			if ((head << 4) || ((w[1] | w[2] | w[3] | w[4] | w[5]) >> 48) || w[4] > w[1] + w[2] + w[3] ||
			    records + w[5] < records)
				return fail(e, "a bad count entry");
			records += w[5];
			w += 6;
		} else if (tag == TRACE_ENTRY_GENERAL) {
			unsigned lines = (unsigned)(head >> 32) & 0xff, kind = (unsigned)(head >> 16) & 0xff;
			if (((head >> 40) & 0xfffff) || kind > 2 || lines == 0 || lines > 64)
				return fail(e, "a bad general reference");
			if ((size_t)(end - w) < 2 + (size_t)lines)
				return fail(e, "an entry cut by the block's end");
			w += 2 + lines;
		} else {
			break;
		}
	}
	if (w == start)
		return 0;
	*cursor = w;
	memset(compact, 0, sizeof *compact);
	compact->words = start;
	compact->end = w;
	compact->thread = e->thread;
	compact->records = records;
	compact->stream = e->stream;
	compact->filtered = true;
	return records == 0 ? 1 : (long)(records > LONG_MAX ? LONG_MAX : records);
}

long trace_entries_run(trace_entries *e, const uint64_t **cursor, const uint64_t *end, trace_compact *compact)
{
	if (e->filtered)
		return run_filtered(e, cursor, end, compact);
	const uint64_t *w = *cursor;
	const uint64_t *start = w;
	uint64_t records = 0;
	const size_t definitions = e->definitions;
	const uint8_t *data_of = e->data, *count_of = e->count;
	/* A use carries its data count: the step to the next entry waits for one
	 * load, and the definition's checks are off that chain. */
	while (w < end) {
		/* the ring's words come from the other core's cache: ask for them early */
		__builtin_prefetch(w + 64);
		uint64_t head = w[0];
		if (tag_of(head) != TRACE_ENTRY_USE)
			break;
		uint32_t id = (uint32_t)head;
		size_t data = (size_t)(head >> 32) & 0xff;
		if (__builtin_expect((head >> 40) != (uint64_t)TRACE_ENTRY_USE << (TRACE_ENTRY_TAG_SHIFT - 40) ||
		                     id >= definitions || data_of[id] != data || (size_t)(end - w) <= data, 0)) {
			if (use_data(e, head) < 0)
				return -1;
			return fail(e, "an entry cut by the block's end");
		}
		records += count_of[id];
		w += 1 + data;
	}
	if (w == start)
		return 0;
	*cursor = w;
	compact->words = start;
	compact->end = w;
	compact->thread = e->thread;
	compact->records = records;
	compact->templates = e->templates;
	compact->first = e->first;
	compact->count = e->count;
	compact->data = e->data;
	compact->definitions = definitions;
	compact->stream = e->stream;
	compact->filtered = false;
	compact->unchecked = false;
	return (long)(records > LONG_MAX ? LONG_MAX : records);
}

long trace_entries_run_unchecked(trace_entries *e, const uint64_t *w, const uint64_t *end, trace_compact *compact)
{
	if (w == end || tag_of(w[0]) != TRACE_ENTRY_USE)
		return 0;
	long data = use_data(e, w[0]);
	if (data < 0)
		return -1;
	if (end - w <= data)
		return fail(e, "an entry cut by the block's end");
	uint32_t id = (uint32_t)w[0];
	compact->words = w;
	compact->end = end;
	compact->thread = e->thread;
	compact->records = e->count[id];
	compact->templates = e->templates;
	compact->first = e->first;
	compact->count = e->count;
	compact->data = e->data;
	compact->definitions = e->definitions;
	compact->stream = e->stream;
	compact->filtered = false;
	compact->unchecked = true;
	return e->count[id];
}

/* The records of the run out beyond those counted when it was handed out. */
static void count_rest_of_run(trace_reader *reader, uint64_t records)
{
	if (records <= reader->run_counted)
		return;
	uint64_t more = records - reader->run_counted;
	reader->info.records += more;
	if (reader->ring)
		reader->info.bytes += more * sizeof(trace_record);   /* as the ring counts a run's */
}

long trace_entries_next_run(trace_reader *reader, trace_entries *e, const uint64_t **cursor, const uint64_t *end,
                            trace_compact *compact)
{
	if (reader->run_cursor) {
		trace_compact skipped;
		long n = trace_entries_run(e, reader->run_cursor, reader->run_end, &skipped);
		reader->run_cursor = NULL;
		if (n < 0)
			return -1;
		count_rest_of_run(reader, skipped.records);
	}
	if (e->filtered || !reader->unchecked_runs)
		return trace_entries_run(e, cursor, end, compact);
	long n = trace_entries_run_unchecked(e, *cursor, end, compact);
	if (n > 0) {
		reader->run_cursor = cursor;
		reader->run_words = *cursor;
		reader->run_end = end;
		reader->run_counted = (uint64_t)n;
	}
	return n;
}

void trace_reader_want_unchecked_runs(trace_reader *reader)
{
	if (reader)
		reader->unchecked_runs = true;
}

void trace_reader_compact_taken(trace_reader *reader, const trace_compact *c)
{
	if (!reader || !reader->run_cursor || c->unchecked || c->words != reader->run_words || c->end <= c->words ||
	    c->end > reader->run_end)
		return;   /* not the run out, or not settled: the reader walks it at its next call */
	*reader->run_cursor = c->end;
	reader->run_cursor = NULL;
	count_rest_of_run(reader, c->records);
}

void trace_compact_settle(trace_compact *c)
{
	if (!c->unchecked)
		return;
	const uint64_t *w = c->words, *end = c->end;
	uint64_t records = 0;
	while (w < end) {
		uint64_t head = w[0];
		uint32_t id = (uint32_t)head;
		size_t data = (size_t)(head >> 32) & 0xff;
		if ((head >> 40) != TRACE_COMPACT_USE_HIGH || id >= c->definitions || c->data[id] != data ||
		    (size_t)(end - w) <= data)
			break;
		records += c->count[id];
		w += 1 + data;
	}
	c->end = w;
	c->records = records;
	c->unchecked = false;
}

int trace_entries_scan(trace_entries *e, uint64_t *words, size_t n, uint64_t *out, trace_scan_mode mode,
                       uint64_t *records)
{
	const uint64_t *end = words + n;
	uint64_t *w = words;
	uint64_t total = 0;
	while (w < end) {
		uint64_t head = w[0];
		unsigned tag = tag_of(head);
		if (tag == TRACE_ENTRY_USE) {
			long checked = use_data(e, head);
			if (checked < 0)
				return -1;
			uint64_t id = head & 0xffffffffu;
			size_t data = (size_t)checked;
			if ((size_t)(end - w) < 1 + data)
				return fail(e, "an entry cut by the block's end");
			total += e->count[id];
			uint64_t *last = e->last + e->first[id];
			if (mode == TRACE_SCAN_ENCODE) {
				uint64_t *o = out + (w - words);
				o[0] = head;
				for (size_t i = 0; i < data; i++) {
					o[1 + i] = w[1 + i] - last[i];
					last[i] = w[1 + i];
				}
			} else if (mode == TRACE_SCAN_DECODE) {
				for (size_t i = 0; i < data; i++)
					last[i] = w[1 + i] += last[i];
			}
			w += 1 + data;
			continue;
		}
		size_t size = entry_words(e, w, end);
		if (size == 0)
			return -1;
		if (tag == TRACE_ENTRY_DEFINE) {
			if (define(e, w + 1, head & 0xffffffffu, (uint32_t)(size - 1)) < 0)
				return -1;
		} else if (tag == TRACE_ENTRY_THREAD) {
			e->thread = (uint32_t)head;
		} else if (tag == TRACE_ENTRY_SINGLE) {
			/* as trace_entries_expand reads it */
			unsigned kind = (uint8_t)(head >> 16), bytes = (uint16_t)head;
			if (kind > TRACE_MODIFY || bytes == 0)
				return fail(e, "a bad single reference");
			total++;
		} else if (tag == TRACE_ENTRY_MARKER) {
			size_t length = (size_t)((head >> 32) & 0xff);
			const char *text = (const char *)(w + 1);
			if (trace_region_name_problem(text, length) || memchr(text, 0, length))
				return fail(e, "a bad region marker");
			total++;
		} else if (mode != TRACE_SCAN_CHECK) {
			/* calls and returns have no record in a file (trace_writer_write
			 * refuses them, trace stats would count them): not kept */
			return fail(e, "a call or return entry, which a trace file does not keep");
		} else {
			total++;
		}
		if (mode == TRACE_SCAN_ENCODE)
			memcpy(out + (w - words), w, size * sizeof *w);
		w += size;
	}
	*records = total;
	return 0;
}
