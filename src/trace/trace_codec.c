/* The native format's record encoding (docs/trace-format.md, "Records").
 *
 * Each record is a header byte, then only what the predictors cannot guess:
 * addresses are zigzag deltas against the previous address of the same
 * stream (instruction fetches and data apart, since they live in different
 * regions and interleave), the instruction address of a data reference is
 * usually "the last fetch" and costs no byte, and thread and time appear only
 * when present or changed.  Typical lackey traces need 2-3 bytes a record
 * before zstd, so decoding is a tight byte loop. */
#include <stddef.h>
#include <string.h>
#include "trace/trace_internal.h"

void trace_codec_reset(trace_codec_state *state)
{
	trace_names *names = state->names;
	memset(state, 0, sizeof *state);
	state->names = names;
}

static inline unsigned char *put_varint(unsigned char *p, uint64_t value)
{
	while (value >= 0x80) {
		*p++ = (unsigned char)(value | 0x80);
		value >>= 7;
	}
	*p++ = (unsigned char)value;
	return p;
}

static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t unzigzag(uint64_t value)
{
	return (value >> 1) ^ (0 - (value & 1));
}

/* Sizes the header can name without a varint: instruction fetches are 1-7
 * bytes long on x86 most of the time, data references powers of two.  Code 0
 * means an explicit varint size follows. */
static const uint16_t size_of_code[2][8] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7 },     /* instruction fetch */
	{ 0, 1, 2, 4, 8, 16, 32, 64 },  /* read, write, modify */
};

static inline unsigned size_code(unsigned kind, uint16_t size)
{
	const uint16_t *table = size_of_code[kind != TRACE_INSTRUCTION];
	for (unsigned code = 1; code < 8; code++)
		if (table[code] == size)
			return code;
	return TRACE_CODE_SIZE_EXPLICIT;
}

/* Picks the predictor closer to address; when neither is near (a new
 * region), replaces the one used less recently so a live region survives. */
static inline unsigned choose_predictor(const uint64_t predictor[2], uint8_t *recent, uint64_t address)
{
	uint64_t d0 = address - predictor[0], d1 = address - predictor[1];
	d0 = (int64_t)d0 < 0 ? 0 - d0 : d0;
	d1 = (int64_t)d1 < 0 ? 0 - d1 : d1;
	unsigned pick = d1 < d0 ? 1u : 0u;
	if ((d0 < d1 ? d0 : d1) >= (1u << 20))
		pick = *recent ^ 1u;
	*recent = (uint8_t)pick;
	return pick;
}

size_t trace_codec_encode(trace_codec_state *state, const trace_record *record, unsigned char *out)
{
	unsigned char *p = out;
	unsigned kind = record->kind & TRACE_CODE_KIND_MASK;
	unsigned code = size_code(kind, record->size);
	unsigned header = kind | code << TRACE_CODE_SIZE_SHIFT;
	bool is_fetch = kind == TRACE_INSTRUCTION;
	uint64_t *predictors = is_fetch ? state->fetch : state->data;
	unsigned pick = choose_predictor(predictors, is_fetch ? &state->fetch_recent : &state->data_recent,
	                                 record->address);
	if (pick)
		header |= TRACE_CODE_PREDICTOR;
	uint64_t fetch = is_fetch ? record->address : state->last_fetch_address;
	unsigned control = 0;
	if (record->flags & TRACE_HAS_INSTRUCTION_ADDRESS) {
		if (record->instruction_address == fetch)
			header |= TRACE_CODE_LAST_FETCH;
		else if (record->instruction_address == state->last_instruction_address)
			control |= TRACE_CONTROL_IADDR_REPEAT;
		else
			control |= TRACE_CONTROL_IADDR_DELTA;
	}
	if (record->thread != state->thread)
		control |= TRACE_CONTROL_THREAD;
	if (record->flags & TRACE_HAS_TIME)
		control |= TRACE_CONTROL_TIME;
	if (control)
		header |= TRACE_CODE_EXTENDED;
	*p++ = (unsigned char)header;
	if (control) {
		*p++ = (unsigned char)control;
		if (control & TRACE_CONTROL_THREAD) {
			p = put_varint(p, record->thread);
			state->thread = record->thread;
		}
		if (control & TRACE_CONTROL_TIME) {
			p = put_varint(p, zigzag(record->time - state->last_time));
			state->last_time = record->time;
		}
	}
	if (code == TRACE_CODE_SIZE_EXPLICIT)
		p = put_varint(p, record->size);
	p = put_varint(p, zigzag(record->address - predictors[pick]));
	predictors[pick] = record->address;
	if (is_fetch)
		state->last_fetch_address = record->address;
	if (control & TRACE_CONTROL_IADDR_DELTA)
		p = put_varint(p, zigzag(record->instruction_address - state->last_instruction_address));
	if (record->flags & TRACE_HAS_INSTRUCTION_ADDRESS)
		state->last_instruction_address = record->instruction_address;
	return (size_t)(p - out);
}

/* A region marker (format 1.1): header 0x80, a control byte with
 * TRACE_CONTROL_REGION (and the thread bit when the thread changes), the
 * thread, a type byte (0 begin, 1 end), the name's length (1..255) in one
 * byte and the name.  Predictors are untouched. */
size_t trace_codec_encode_marker(trace_codec_state *state, const trace_record *record, unsigned char *out)
{
	unsigned char *p = out;
	const char *name = trace_region_name(record);
	size_t length = strlen(name);
	unsigned control = TRACE_CONTROL_REGION;
	if (record->thread != state->thread)
		control |= TRACE_CONTROL_THREAD;
	*p++ = TRACE_CODE_EXTENDED;
	*p++ = (unsigned char)control;
	if (control & TRACE_CONTROL_THREAD) {
		p = put_varint(p, record->thread);
		state->thread = record->thread;
	}
	*p++ = record->kind == TRACE_REGION_BEGIN ? TRACE_MARKER_BEGIN : TRACE_MARKER_END;
	*p++ = (unsigned char)length;
	memcpy(p, name, length);
	return (size_t)(p + length - out);
}

/* A collector marker (format 1.2): header 0x80, a control byte with
 * TRACE_CONTROL_COLLECTOR (and the thread bit when the thread changes), the
 * thread, a type byte (0 halt, 1 lost), then varints: the index, the start
 * (ns), the duration (end - start, ns) and the count.  Predictors are
 * untouched. */
size_t trace_codec_encode_collector(trace_codec_state *state, const trace_record *record, unsigned char *out)
{
	unsigned char *p = out;
	unsigned control = TRACE_CONTROL_COLLECTOR;
	if (record->thread != state->thread)
		control |= TRACE_CONTROL_THREAD;
	*p++ = TRACE_CODE_EXTENDED;
	*p++ = (unsigned char)control;
	if (control & TRACE_CONTROL_THREAD) {
		p = put_varint(p, record->thread);
		state->thread = record->thread;
	}
	*p++ = record->kind == TRACE_HALT ? TRACE_COLLECTOR_HALT : TRACE_COLLECTOR_LOST;
	p = put_varint(p, trace_collector_index(record));
	p = put_varint(p, trace_collector_start(record));
	p = put_varint(p, trace_collector_end(record) - trace_collector_start(record));
	p = put_varint(p, trace_collector_count(record));
	return (size_t)(p - out);
}

/* Reads a varint without bounds checks: callers guarantee
 * TRACE_NATIVE_RECORD_MAX_BYTES readable bytes (the last record of a block is
 * decoded from a zero-padded copy).  NULL if longer than 10 bytes. */
static inline const unsigned char *get_varint(const unsigned char *p, uint64_t *out)
{
	uint64_t byte = *p++;
	if (__builtin_expect(byte < 0x80, 1)) {
		*out = byte;
		return p;
	}
	uint64_t value = byte & 0x7f;
	unsigned shift = 7;
	for (int i = 1; i < 10; i++, shift += 7) {
		byte = *p++;
		value |= (byte & 0x7f) << shift;
		if (byte < 0x80) {
			*out = value;
			return p;
		}
	}
	return NULL;
}

/* Decodes one record from p (which has TRACE_NATIVE_RECORD_MAX_BYTES readable
 * bytes); returns the byte after it, or NULL with *error set.  The common
 * record (no control byte, power-of-two size, one-byte delta) takes no
 * unpredictable branch. */
static inline __attribute__((always_inline)) const unsigned char *
decode_one(trace_codec_state *state, const unsigned char *p, trace_record *r, const char **error)
{
	unsigned header = *p++;
	unsigned kind = header & TRACE_CODE_KIND_MASK;
	unsigned code = (header & TRACE_CODE_SIZE_MASK) >> TRACE_CODE_SIZE_SHIFT;
	unsigned control = 0;
	uint64_t value;
	unsigned flags = 0;
	uint64_t time = 0;
	if (__builtin_expect(header & TRACE_CODE_EXTENDED, 0)) {
		control = *p++;
		if (control & ~TRACE_CONTROL_KNOWN || control == 0 ||
		    ((control & TRACE_CONTROL_IADDR_DELTA) && (control & TRACE_CONTROL_IADDR_REPEAT)) ||
		    ((control & (TRACE_CONTROL_IADDR_DELTA | TRACE_CONTROL_IADDR_REPEAT)) && (header & TRACE_CODE_LAST_FETCH))) {
			*error = "bad control byte";
			return NULL;
		}
		if (control & TRACE_CONTROL_THREAD) {
			if (!(p = get_varint(p, &value)) || value > UINT32_MAX) {
				*error = "bad thread number";
				return NULL;
			}
			state->thread = (uint32_t)value;
		}
		if (control & TRACE_CONTROL_TIME) {
			if (!(p = get_varint(p, &value))) {
				*error = "bad time delta";
				return NULL;
			}
			state->last_time += unzigzag(value);
			time = state->last_time;
			flags |= TRACE_HAS_TIME;
		}
	}
	uint64_t size = size_of_code[kind != TRACE_INSTRUCTION][code];
	if (__builtin_expect(size == 0, 0)) {
		if (!(p = get_varint(p, &size)) || size == 0 || size > UINT16_MAX) {
			*error = "bad size";
			return NULL;
		}
	}
	if (!(p = get_varint(p, &value))) {
		*error = "bad address delta";
		return NULL;
	}
	unsigned pick = (header & TRACE_CODE_PREDICTOR) ? 1 : 0;
	uint64_t *predictor = kind == TRACE_INSTRUCTION ? &state->fetch[pick] : &state->data[pick];
	uint64_t address = *predictor += unzigzag(value);
	if (kind == TRACE_INSTRUCTION)
		state->last_fetch_address = address;
	uint64_t instruction_address = 0;
	if (header & TRACE_CODE_LAST_FETCH) {
		instruction_address = state->last_instruction_address = state->last_fetch_address;
		flags |= TRACE_HAS_INSTRUCTION_ADDRESS;
	} else if (__builtin_expect(control & (TRACE_CONTROL_IADDR_DELTA | TRACE_CONTROL_IADDR_REPEAT), 0)) {
		if (control & TRACE_CONTROL_IADDR_DELTA) {
			if (!(p = get_varint(p, &value))) {
				*error = "bad instruction address delta";
				return NULL;
			}
			state->last_instruction_address += unzigzag(value);
		}
		instruction_address = state->last_instruction_address;
		flags |= TRACE_HAS_INSTRUCTION_ADDRESS;
	}
	*r = (trace_record){ .address = address, .instruction_address = instruction_address, .time = time,
	                     .thread = state->thread, .size = (uint16_t)size, .kind = (uint8_t)kind,
	                     .flags = (uint8_t)flags };
	return p;
}

/* The common record has no control byte and a size code.  For its header
 * byte h, RECORD_TAIL(h) is the 32 bits of the decoded trace_record after
 * the thread (size, kind, flags), and 0 for a header that needs decode_one.
 * The sizes are size_of_code's: 1-7 bytes for a fetch, 1 << (code - 1) for
 * data. */
#define HEADER_CODE(h) (((h) & TRACE_CODE_SIZE_MASK) >> TRACE_CODE_SIZE_SHIFT)
#define HEADER_SIZE(h) (((h) & TRACE_CODE_KIND_MASK) == TRACE_INSTRUCTION ? HEADER_CODE(h) : \
                        HEADER_CODE(h) == 0 ? 0u : 1u << ((HEADER_CODE(h) - 1) & 7))
#define RECORD_TAIL(h) (((h) & TRACE_CODE_EXTENDED) || HEADER_SIZE(h) == 0 ? 0u : \
                        HEADER_SIZE(h) | ((h) & TRACE_CODE_KIND_MASK) << 16 | \
                        ((h) & TRACE_CODE_LAST_FETCH ? (unsigned)TRACE_HAS_INSTRUCTION_ADDRESS << 24 : 0u))
#define TAIL4(h) RECORD_TAIL(h), RECORD_TAIL((h) + 1), RECORD_TAIL((h) + 2), RECORD_TAIL((h) + 3)
#define TAIL16(h) TAIL4(h), TAIL4((h) + 4), TAIL4((h) + 8), TAIL4((h) + 12)
#define TAIL64(h) TAIL16(h), TAIL16((h) + 16), TAIL16((h) + 32), TAIL16((h) + 48)
static const uint32_t record_tail[256] = { TAIL64(0u), TAIL64(64u), TAIL64(128u), TAIL64(192u) };

_Static_assert(offsetof(trace_record, thread) == 24 && offsetof(trace_record, size) == 28 &&
               offsetof(trace_record, kind) == 30 && offsetof(trace_record, flags) == 31 &&
               sizeof(trace_record) == 32, "decode_run writes thread, size, kind and flags as one 64-bit word");

static inline bool is_marker(const unsigned char *p, const unsigned char *end)
{
	return end - p >= 2 && p[0] == TRACE_CODE_EXTENDED && (p[1] & (TRACE_CONTROL_REGION | TRACE_CONTROL_COLLECTOR));
}

/* A varint within [*p, end); NULL at a bad or cut one. */
static const unsigned char *get_varint_bounded(const unsigned char *p, const unsigned char *end, uint64_t *out)
{
	uint64_t value = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return NULL;
		unsigned byte = *p++;
		if (shift == 63 && byte > 1)
			return NULL;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (byte < 0x80) {
			*out = value;
			return p;
		}
	}
	return NULL;
}

/* A collector marker at p (control byte checked by the caller's caller). */
static const unsigned char *decode_collector(trace_codec_state *state, const unsigned char *p,
                                             const unsigned char *end, trace_record *r, const char **error)
{
	unsigned control = p[1];
	p += 2;
	if (control & ~(TRACE_CONTROL_COLLECTOR | TRACE_CONTROL_THREAD)) {
		*error = "bad control byte of a collector marker";
		return NULL;
	}
	if (control & TRACE_CONTROL_THREAD) {
		uint64_t value;
		if (!(p = get_varint_bounded(p, end, &value)) || value > UINT32_MAX) {
			*error = "bad thread number";
			return NULL;
		}
		state->thread = (uint32_t)value;
	}
	if (p >= end || p[0] > TRACE_COLLECTOR_LOST) {
		*error = "bad collector marker type";
		return NULL;
	}
	unsigned type = *p++;
	uint64_t index, start, duration, count;
	if (!(p = get_varint_bounded(p, end, &index)) || !(p = get_varint_bounded(p, end, &start)) ||
	    !(p = get_varint_bounded(p, end, &duration)) || !(p = get_varint_bounded(p, end, &count))) {
		*error = "collector marker runs past the end of the block payload";
		return NULL;
	}
	if (index > TRACE_COLLECTOR_INDEX_MAX || count > TRACE_COLLECTOR_COUNT_MAX || start + duration < start) {
		*error = "a collector marker's index, times or count out of range";
		return NULL;
	}
	trace_collector_marker(r, type == TRACE_COLLECTOR_HALT ? TRACE_HALT : TRACE_LOST, state->thread, (uint32_t)index,
	                       start, start + duration, count);
	return p;
}

/* A region marker at p (is_marker), bounded by end; its name is interned in
 * state->names. */
static const unsigned char *decode_marker(trace_codec_state *state, const unsigned char *p, const unsigned char *end,
                                          trace_record *r, const char **error)
{
	if (p[1] & TRACE_CONTROL_COLLECTOR)
		return decode_collector(state, p, end, r, error);
	unsigned control = p[1];
	p += 2;
	if (control & ~(TRACE_CONTROL_REGION | TRACE_CONTROL_THREAD)) {
		*error = "bad control byte of a region marker";
		return NULL;
	}
	if (control & TRACE_CONTROL_THREAD) {
		uint64_t value = 0;
		unsigned shift = 0;
		for (;;) {
			if (p >= end || shift > 63) {
				*error = "bad thread number";
				return NULL;
			}
			unsigned byte = *p++;
			value |= (uint64_t)(byte & 0x7f) << shift;
			shift += 7;
			if (byte < 0x80)
				break;
		}
		if (value > UINT32_MAX) {
			*error = "bad thread number";
			return NULL;
		}
		state->thread = (uint32_t)value;
	}
	if (end - p < 2 || p[0] > TRACE_MARKER_END) {
		*error = "bad region marker type";
		return NULL;
	}
	unsigned type = p[0];
	size_t length = p[1];
	p += 2;
	if ((size_t)(end - p) < length) {
		*error = "region marker runs past the end of the block payload";
		return NULL;
	}
	const char *problem = trace_region_name_problem((const char *)p, length);
	if (problem) {
		*error = problem;
		return NULL;
	}
	if (memchr(p, 0, length)) {
		*error = "a NUL byte in a region name";
		return NULL;
	}
	const char *name = state->names ? trace_names_intern(state->names, (const char *)p, length) : NULL;
	if (!name) {
		*error = state->names ? "out of memory for a region name" : "a region marker where none can be read";
		return NULL;
	}
	trace_region_marker(r, type == TRACE_MARKER_BEGIN, state->thread, name);
	return p + length;
}

/* Everything but the common record, out of line so the common loop keeps
 * its values in registers. */
static __attribute__((noinline)) const unsigned char *
decode_other(trace_codec_state *state, const unsigned char *p, const unsigned char *end, trace_record *r,
             const char **error)
{
	if (is_marker(p, end))
		return decode_marker(state, p, end, r, error);
	return decode_one(state, p, r, error);
}

/* The common records from locals (the compiler cannot keep the state in
 * registers across the record stores, which may alias it) without a branch
 * on the kind: the four predictors are one array indexed by stream and
 * pick, and the last fetch and the instruction address are selected, not
 * branched to.  Only a multi-byte address delta branches.  Other records
 * go through decode_other with the state written back.  While a whole
 * worst-case record is in reach, no bounds checks.  *failed on an error. */
#if defined(__GNUC__) && !defined(__clang__)
/* gcc 12 otherwise pairs last_fetch and last_iaddr in one vector register
 * (they are stored side by side at the end) and shuffles it every record. */
__attribute__((optimize("no-tree-slp-vectorize")))
#endif
static size_t decode_run(trace_codec_state *state, const unsigned char **cursor, const unsigned char *end,
                         trace_record *records, size_t count, const char **error, bool *failed)
{
	const unsigned char *p = *cursor;
	const unsigned char *safe_end = end - TRACE_NATIVE_RECORD_MAX_BYTES;
	uint64_t fetch0 = state->fetch[0], fetch1 = state->fetch[1], data0 = state->data[0], data1 = state->data[1];
	uint64_t last_fetch = state->last_fetch_address, last_iaddr = state->last_instruction_address;
	uint64_t thread = state->thread;
	size_t i = 0;
	while (i < count && p <= safe_end) {
		/* a record is at most TRACE_NATIVE_RECORD_MAX_BYTES long: this many
		 * start inside the safe part whatever their lengths */
		size_t stop = i + (size_t)(safe_end - p) / TRACE_NATIVE_RECORD_MAX_BYTES + 1;
		if (stop > count)
			stop = count;
		for (; i < stop; i++) {
			unsigned header = p[0];
			uint64_t tail = record_tail[header];
			if (__builtin_expect(tail == 0, 0)) {
				state->fetch[0] = fetch0;
				state->fetch[1] = fetch1;
				state->data[0] = data0;
				state->data[1] = data1;
				state->last_fetch_address = last_fetch;
				state->last_instruction_address = last_iaddr;
				state->thread = (uint32_t)thread;
				const unsigned char *next = decode_other(state, p, end, &records[i], error);
				if (!next) {
					*failed = true;
					break;
				}
				p = next;
				fetch0 = state->fetch[0];
				fetch1 = state->fetch[1];
				data0 = state->data[0];
				data1 = state->data[1];
				last_fetch = state->last_fetch_address;
				last_iaddr = state->last_instruction_address;
				thread = state->thread;
				/* A region marker can be longer than a record's worst
				 * case, so stop was counted for bytes it has used: count
				 * again what is in reach (the fuzzer found the overread). */
				i++;
				break;
			}
			uint64_t value;
			const unsigned char *next = get_varint(p + 1, &value);
			if (__builtin_expect(!next, 0)) {
				*error = "bad address delta";
				*failed = true;
				break;
			}
			p = next;
			uint64_t delta = unzigzag(value), address;
			if ((header & TRACE_CODE_KIND_MASK) == TRACE_INSTRUCTION) {
				if (header & TRACE_CODE_PREDICTOR)
					address = fetch1 += delta;
				else
					address = fetch0 += delta;
				last_fetch = address;
			} else {
				if (header & TRACE_CODE_PREDICTOR)
					address = data1 += delta;
				else
					address = data0 += delta;
			}
			uint64_t instruction_address = 0;
			if (header & TRACE_CODE_LAST_FETCH)
				instruction_address = last_iaddr = last_fetch;
			trace_record *r = &records[i];
			r->address = address;
			r->instruction_address = instruction_address;
			r->time = 0;
			uint64_t last_word = thread | tail << 32;   /* thread, size, kind, flags */
			memcpy(&r->thread, &last_word, sizeof last_word);
		}
		if (*failed)
			break;
	}
	state->fetch[0] = fetch0;
	state->fetch[1] = fetch1;
	state->data[0] = data0;
	state->data[1] = data1;
	state->last_fetch_address = last_fetch;
	state->last_instruction_address = last_iaddr;
	state->thread = (uint32_t)thread;
	*cursor = p;
	return i;
}

size_t trace_codec_decode(trace_codec_state *state, const unsigned char **cursor, const unsigned char *end,
                          trace_record *records, size_t count, const char **error)
{
	const unsigned char *p = *cursor;
	size_t i = 0;
	if ((size_t)(end - p) >= TRACE_NATIVE_RECORD_MAX_BYTES) {
		bool failed = false;
		i = decode_run(state, &p, end, records, count, error, &failed);
		if (failed) {
			*cursor = p;
			return i;
		}
	}
	/* The last few records: decode from a zero-padded copy, then check that
	 * the record really ended inside the payload. */
	while (i < count) {
		size_t left = (size_t)(end - p);
		unsigned char padded[2 * TRACE_NATIVE_RECORD_MAX_BYTES];
		memset(padded, 0, sizeof padded);
		memcpy(padded, p, left);
		if (left == 0) {
			*error = "payload ends before the block's last record";
			*cursor = p;
			return i;
		}
		if (is_marker(p, end)) {
			const unsigned char *next = decode_marker(state, p, end, &records[i], error);
			if (!next) {
				*cursor = p;
				return i;
			}
			p = next;
			i++;
			continue;
		}
		trace_codec_state saved = *state;
		const unsigned char *next = decode_one(state, padded, &records[i], error);
		if (!next || (size_t)(next - padded) > left) {
			if (next) {
				*state = saved;
				*error = "record runs past the end of the block payload";
			}
			*cursor = p;
			return i;
		}
		p += next - padded;
		i++;
	}
	*cursor = p;
	return i;
}

/* A fast 64-bit checksum (four independent multiply-rotate lanes, so it runs
 * at several bytes a cycle) over a block's compressed bytes: it catches
 * corruption before the decompressor sees it.  Not cryptographic. */
static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

uint64_t trace_checksum(const void *data, size_t length, uint64_t seed)
{
	const uint64_t p1 = 0x9E3779B185EBCA87ull, p2 = 0xC2B2AE3D27D4EB4Full, p3 = 0x165667B19E3779F9ull;
	const unsigned char *p = data;
	uint64_t lane[4] = { seed + p1 + p2, seed + p2, seed, seed - p1 };
	size_t n = length;
	while (n >= 32) {
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, p + 8 * k, 8);
			lane[k] = rotl64(lane[k] + w * p2, 31) * p1;
		}
		p += 32;
		n -= 32;
	}
	uint64_t h = rotl64(lane[0], 1) + rotl64(lane[1], 7) + rotl64(lane[2], 12) + rotl64(lane[3], 18);
	h += (uint64_t)length * p3;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = rotl64(h ^ (rotl64(w * p2, 31) * p1), 27) * p1 + p3;
		p += 8;
		n -= 8;
	}
	while (n--) {
		h ^= (uint64_t)*p++ * p3;
		h = rotl64(h, 11) * p1;
	}
	h ^= h >> 33;
	h *= p2;
	h ^= h >> 29;
	h *= p3;
	h ^= h >> 32;
	return h;
}

uint32_t trace_block_header_check(const unsigned char *header)
{
	unsigned char copy[TRACE_NATIVE_BLOCK_HEADER_SIZE];
	memcpy(copy, header, sizeof copy);
	memset(copy + 20, 0, 4);
	return (uint32_t)trace_checksum(copy, sizeof copy, 0x74726163u);
}
