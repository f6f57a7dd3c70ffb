/* The line loop and small parsers shared by the text formats (lackey, din).
 * Lines are parsed in place in the input buffer, never copied. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/status.h"
#include "trace/trace_internal.h"

#define H(c) ((c) >= '0' && (c) <= '9' ? (c) - '0' : (c) >= 'a' && (c) <= 'f' ? (c) - 'a' + 10 : \
              (c) >= 'A' && (c) <= 'F' ? (c) - 'A' + 10 : -1)
#define H4(c) H(c), H(c + 1), H(c + 2), H(c + 3)
#define H16(c) H4(c), H4(c + 4), H4(c + 8), H4(c + 12)
const signed char trace_hex_value[256] = {
	H16(0), H16(16), H16(32), H16(48), H16(64), H16(80), H16(96), H16(112),
	H16(128), H16(144), H16(160), H16(176), H16(192), H16(208), H16(224), H16(240)
};

int trace_parse_hex(const unsigned char **cursor, const unsigned char *end, uint64_t *out)
{
	const unsigned char *p = *cursor;
	while (p < end && *p == '0' && p + 1 < end && trace_hex_value[p[1]] >= 0)
		p++;   /* leading zeros do not count against the 16 digits */
	const unsigned char *first = p;
	uint64_t value = 0;
	int digit;
	while (p < end && (digit = trace_hex_value[*p]) >= 0) {
		value = value << 4 | (uint64_t)digit;
		p++;
	}
	if (p == first || p - first > 16)
		return -1;
	*cursor = p;
	*out = value;
	return 0;
}

int trace_parse_size(const unsigned char **cursor, const unsigned char *end, uint16_t *out)
{
	const unsigned char *p = *cursor;
	uint32_t value = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		value = value * 10 + (uint32_t)(*p - '0');
		if (value > UINT16_MAX)
			return -1;
		p++;
	}
	if (p == *cursor || value == 0)
		return -1;
	*cursor = p;
	*out = (uint16_t)value;
	return 0;
}

const char *trace_quote_line(const unsigned char *line, const unsigned char *line_end, char *buffer, size_t size)
{
	size_t o = 0;
	for (const unsigned char *p = line; p < line_end && o + 5 < size && p - line < 40; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buffer[o++] = (char)*p;
		else
			o += (size_t)snprintf(buffer + o, size - o, "\\x%02x", *p);
	}
	if (line_end - line > 40 && o + 4 < size) {
		memcpy(buffer + o, "...", 3);
		o += 3;
	}
	buffer[o < size ? o : size - 1] = 0;
	return buffer;
}

long trace_text_read(trace_reader *reader, trace_line_parser parse_line, trace_record *records, size_t capacity)
{
	trace_input *in = &reader->input;
	size_t produced = 0;
	while (produced < capacity) {
		const unsigned char *p = in->data + in->start, *end = in->data + in->end;
		const unsigned char *newline = memchr(p, '\n', (size_t)(end - p));
		const unsigned char *line_end;
		size_t consumed;
		if (!newline) {
			if (!in->at_eof && in->fd >= 0) {
				size_t available = (size_t)(end - p);
				if (available >= TRACE_INPUT_BUFFER) {
					plumb_fail(&reader->failure, EINVAL, "%s: line %llu is longer than %u bytes",
					           in->name, (unsigned long long)reader->text.line + 1, TRACE_INPUT_BUFFER);
					reader->failed = true;
					break;
				}
				if (trace_input_fill(in, available + 1, &reader->failure) < 0) {
					reader->failed = true;
					break;
				}
				continue;
			}
			if (p == end)
				break;
			line_end = end;   /* a last line without its newline */
			consumed = (size_t)(end - p);
		} else {
			line_end = newline;
			consumed = (size_t)(newline - p) + 1;
		}
		reader->text.line++;
		if (line_end > p && line_end[-1] == '\r')
			line_end--;
		int made = parse_line(reader, p, line_end, &records[produced]);
		if (made < 0) {
			reader->failed = true;
			break;
		}
		trace_input_consume(in, consumed);
		produced += (size_t)made;
	}
	reader->info.lines = reader->text.line;
	return (long)produced;
}
