/* Reader of Dinero's "din" text format.
 *
 * A din line is "LABEL ADDRESS" in hex (Dinero IV also skips a "0x" prefix);
 * Dinero ignores the rest of the line, so it may carry comments.  Labels:
 * 0 read, 1 write, 2 instruction fetch, 3 "escape: unknown access type",
 * 4 "escape: flush the cache".  Dinero IV's traditional din reader fixes the
 * size at 4 bytes and clears the address's low two bits; plumb keeps the
 * address exact and, as its own extension, reads a third field of decimal
 * digits as the size (plumb's din writer puts it there; Dinero ignores it).
 * Without it the size is 4.  Label 3 becomes a read (as Dinero IV's
 * simulator treats its "misc" type) and is counted; label 4 has no
 * equivalent in a reference stream, so it is skipped and counted.  din has
 * no threads: every record is thread 0.  Blank lines are skipped. */
#include <errno.h>
#include <string.h>
#include "core/status.h"
#include "trace/trace_internal.h"

static int din_error(trace_reader *reader, const unsigned char *line, const unsigned char *line_end, const char *what)
{
	char quoted[200];
	return plumb_fail(&reader->failure, EINVAL, "%s: din line %llu: %s: '%s'", reader->input.name,
	                  (unsigned long long)reader->text.line, what,
	                  trace_quote_line(line, line_end, quoted, sizeof quoted));
}

static inline const unsigned char *skip_blanks(const unsigned char *p, const unsigned char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static inline void skip_0x(const unsigned char **p, const unsigned char *end)
{
	if (end - *p > 2 && (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X') && trace_hex_value[(*p)[2]] >= 0)
		*p += 2;
}

static int din_line(trace_reader *reader, const unsigned char *line, const unsigned char *line_end,
                    trace_record *record)
{
	const unsigned char *p = skip_blanks(line, line_end);
	if (p == line_end)
		return 0;
	uint64_t label, address;
	skip_0x(&p, line_end);
	if (trace_parse_hex(&p, line_end, &label) < 0 || p == line_end || (*p != ' ' && *p != '\t'))
		return din_error(reader, line, line_end, "bad label (want a hex label, then the address)");
	p = skip_blanks(p, line_end);
	skip_0x(&p, line_end);
	if (trace_parse_hex(&p, line_end, &address) < 0 || (p < line_end && *p != ' ' && *p != '\t'))
		return din_error(reader, line, line_end, "bad address (want at most 16 hex digits)");
	uint16_t size = 4;
	p = skip_blanks(p, line_end);
	if (p < line_end && *p >= '0' && *p <= '9') {
		const unsigned char *q = p;
		while (q < line_end && *q >= '0' && *q <= '9')
			q++;
		if (q == line_end || *q == ' ' || *q == '\t') {   /* a number, not a comment */
			if (trace_parse_size(&p, line_end, &size) < 0)
				return din_error(reader, line, line_end, "bad size (want 1..65535)");
		}
	}
	switch (label) {
	case 0: record->kind = TRACE_READ; break;
	case 1: record->kind = TRACE_WRITE; break;
	case 2: record->kind = TRACE_INSTRUCTION; break;
	case 3: record->kind = TRACE_READ; reader->info.unknown_as_read++; break;
	case 4: reader->info.skipped++; return 0;
	default:
		return din_error(reader, line, line_end,
		                 "label is not a din access type (0 read, 1 write, 2 fetch, 3 unknown, 4 flush)");
	}
	if (address > UINT64_MAX - (size - 1u))
		return din_error(reader, line, line_end, "the access runs past the end of the 64-bit address space");
	record->address = address;
	record->size = size;
	record->thread = 0;
	record->instruction_address = 0;
	record->time = 0;
	record->flags = 0;
	return 1;
}

static long din_read(trace_reader *reader, trace_record *records, size_t capacity)
{
	return trace_text_read(reader, din_line, records, capacity);
}

int trace_din_reader_init(trace_reader *reader, plumb_status *status)
{
	(void)status;
	reader->read = din_read;
	return 0;
}
