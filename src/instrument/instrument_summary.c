/* Reader of plumbgrind's summary file (format: vg/pg_main.c and
 * docs/valgrind-tool.md).  Strict: every line must be a known record with
 * the right number of fields, counts are unsigned 64-bit decimals, the
 * totals must equal the sum of the threads, and the file must end with
 * "end" (a summary cut short is an error, never a smaller count). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/read_file.h"
#include "instrument/instrument.h"

static const char *const counter_names[INSTRUMENT_COUNTERS] = {
	"instructions", "loads", "stores", "modifies", "bytes_read", "bytes_written"
};

const char *instrument_counter_name(instrument_counter counter)
{
	return (unsigned)counter < INSTRUMENT_COUNTERS ? counter_names[counter] : "unknown";
}

typedef struct parser {
	const char *name;
	unsigned long line_number;
	const char *line, *end;   /* the current line, without its newline */
	const char *p;            /* the next field */
	plumb_status *status;
} parser;

static int parse_error(parser *in, const char *what)
{
	int length = (int)(in->end - in->line);
	if (length > 60)
		length = 60;
	return plumb_fail(in->status, EINVAL, "%s: line %lu: %s: '%.*s'", in->name, in->line_number, what, length,
	                  in->line);
}

/* Next blank-separated field; returns its length, 0 if none. */
static size_t field(parser *in, const char **start)
{
	if (in->p < in->end && *in->p == ' ')
		in->p++;
	*start = in->p;
	while (in->p < in->end && *in->p != ' ')
		in->p++;
	return (size_t)(in->p - *start);
}

static int field_u64(parser *in, uint64_t *out, const char *what)
{
	const char *s;
	size_t n = field(in, &s);
	if (n == 0 || n > 20)
		return parse_error(in, what);
	uint64_t value = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return parse_error(in, what);
		unsigned digit = (unsigned)(s[i] - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return parse_error(in, what);
		value = value * 10 + digit;
	}
	*out = value;
	return 0;
}

static int field_int(parser *in, int *out, const char *what)
{
	const char *s;
	size_t n = field(in, &s);
	bool negative = n > 0 && s[0] == '-';
	if (n == (size_t)negative || n > 11)
		return parse_error(in, what);
	long long value = 0;
	for (size_t i = negative; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return parse_error(in, what);
		value = value * 10 + (s[i] - '0');
	}
	if (negative)
		value = -value;
	if (value < -2147483647LL - 1 || value > 2147483647LL)
		return parse_error(in, what);
	*out = (int)value;
	return 0;
}

static int field_u32(parser *in, uint32_t *out, const char *what)
{
	uint64_t value;
	if (field_u64(in, &value, what) < 0)
		return -1;
	if (value > UINT32_MAX)
		return parse_error(in, what);
	*out = (uint32_t)value;
	return 0;
}

static int field_counts(parser *in, instrument_counts *counts)
{
	for (int i = 0; i < INSTRUMENT_COUNTERS; i++)
		if (field_u64(in, &counts->value[i], "bad or missing count") < 0)
			return -1;
	return 0;
}

static int line_done(parser *in)
{
	if (in->p != in->end)
		return parse_error(in, "unexpected text at the end of the line");
	return 0;
}

/* The rest of the line after one blank: a name or a message. */
static char *rest_copy(parser *in, bool may_be_empty)
{
	if (in->p < in->end && *in->p == ' ')
		in->p++;
	size_t n = (size_t)(in->end - in->p);
	if (n == 0 && !may_be_empty) {
		parse_error(in, "missing text");
		return NULL;
	}
	char *copy = strndup(in->p, n);
	if (!copy)
		plumb_fail(in->status, ENOMEM, "out of memory reading a summary");
	in->p = in->end;
	return copy;
}

static bool keyword_is(const char *s, size_t n, const char *keyword)
{
	return strlen(keyword) == n && memcmp(s, keyword, n) == 0;
}

static instrument_thread *thread_find(instrument_summary *summary, uint32_t thread)
{
	for (size_t i = 0; i < summary->thread_count; i++)
		if (summary->threads[i].thread == thread)
			return &summary->threads[i];
	return NULL;
}

static int grow(void **array, size_t count, size_t element, plumb_status *status)
{
	/* Doubling sizes: grow when count is 0 or a power of two. */
	if (count & (count - 1))
		return 0;
	size_t capacity = count ? 2 * count : 4;
	void *bigger = realloc(*array, capacity * element);
	if (!bigger)
		return plumb_fail(status, ENOMEM, "out of memory reading a summary");
	*array = bigger;
	return 0;
}

static int parse_record(parser *in, instrument_summary *summary, const char *keyword, size_t n, bool *seen_total,
                        bool *seen_fields)
{
	if (keyword_is(keyword, n, "command")) {
		free(summary->command);
		return (summary->command = rest_copy(in, true)) ? 0 : -1;
	}
	if (keyword_is(keyword, n, "pid"))
		return field_int(in, &summary->pid, "bad pid") < 0 ? -1 : line_done(in);
	if (keyword_is(keyword, n, "fields")) {
		for (int i = 0; i < INSTRUMENT_COUNTERS; i++) {
			const char *s;
			size_t length = field(in, &s);
			if (!keyword_is(s, length, counter_names[i]))
				return parse_error(in, "the counters are not the ones this plumb knows");
		}
		*seen_fields = true;
		return line_done(in);
	}
	if (!*seen_fields && (keyword_is(keyword, n, "total") || keyword_is(keyword, n, "thread") ||
	                      keyword_is(keyword, n, "collected") || keyword_is(keyword, n, "region")))
		return parse_error(in, "counts before the 'fields' line");
	if (keyword_is(keyword, n, "total")) {
		*seen_total = true;
		return field_counts(in, &summary->total) < 0 ? -1 : line_done(in);
	}
	if (keyword_is(keyword, n, "thread")) {
		instrument_thread thread = { 0 };
		if (field_u32(in, &thread.thread, "bad thread number") < 0 || field_int(in, &thread.lwp, "bad thread id") < 0 ||
		    field_counts(in, &thread.total) < 0 || line_done(in) < 0)
			return -1;
		if (thread_find(summary, thread.thread))
			return parse_error(in, "thread listed twice");
		if (grow((void **)&summary->threads, summary->thread_count, sizeof thread, in->status) < 0)
			return -1;
		summary->threads[summary->thread_count++] = thread;
		return 0;
	}
	if (keyword_is(keyword, n, "collected")) {
		uint32_t number = 0;
		instrument_counts counts = { { 0 } };
		if (field_u32(in, &number, "bad thread number") < 0 || field_counts(in, &counts) < 0 || line_done(in) < 0)
			return -1;
		instrument_thread *thread = thread_find(summary, number);
		if (!thread)
			return parse_error(in, "collected counts of a thread not listed before");
		thread->collected = counts;
		return 0;
	}
	if (keyword_is(keyword, n, "region")) {
		instrument_region region = { 0 };
		if (field_u32(in, &region.thread, "bad thread number") < 0 ||
		    field_u64(in, &region.entries, "bad entry count") < 0 || field_counts(in, &region.counts) < 0)
			return -1;
		if (!thread_find(summary, region.thread))
			return parse_error(in, "region of a thread not listed before");
		if (!(region.name = rest_copy(in, false)))
			return -1;
		if (instrument_summary_region(summary, region.name, region.thread)) {
			free(region.name);
			return parse_error(in, "region listed twice for one thread");
		}
		if (grow((void **)&summary->regions, summary->region_count, sizeof region, in->status) < 0) {
			free(region.name);
			return -1;
		}
		summary->regions[summary->region_count++] = region;
		return 0;
	}
	if (keyword_is(keyword, n, "trace")) {
		const char *s;
		size_t length = field(in, &s);
		if (keyword_is(s, length, "none"))
			return line_done(in);
		summary->traced = 1;
		if (keyword_is(s, length, "records"))
			return field_u64(in, &summary->trace_records, "bad record count") < 0 ? -1 : line_done(in);
		if (keyword_is(s, length, "uncounted")) {
			summary->trace_uncounted = 1;
			return line_done(in);
		}
		if (keyword_is(s, length, "error")) {
			/* One error per trace: a second would leak the first (fuzzer). */
			if (summary->trace_error)
				return parse_error(in, "a second trace error");
			return (summary->trace_error = rest_copy(in, false)) ? 0 : -1;
		}
		return parse_error(in, "unknown trace record (want none, records, uncounted or error)");
	}
	if (keyword_is(keyword, n, "warning")) {
		char *text = rest_copy(in, false);
		if (!text)
			return -1;
		if (grow((void **)&summary->warnings, summary->warning_count, sizeof text, in->status) < 0) {
			free(text);
			return -1;
		}
		summary->warnings[summary->warning_count++] = text;
		return 0;
	}
	return parse_error(in, "unknown record");
}

int instrument_summary_parse(instrument_summary *out, const char *text, size_t length, const char *name,
                             plumb_status *status)
{
	memset(out, 0, sizeof *out);
	parser in = { .name = name ? name : "summary", .status = status };
	const char *p = text + read_file_bom_length(text, length), *end = text + length;
	bool seen_header = false, seen_end = false, seen_total = false, seen_fields = false;
	while (p < end) {
		const char *newline = memchr(p, '\n', (size_t)(end - p));
		in.line = p;
		in.end = newline ? newline : end;
		in.p = p;
		in.line_number++;
		p = newline ? newline + 1 : end;
		if (memchr(in.line, 0, (size_t)(in.end - in.line))) {
			parse_error(&in, "a NUL byte in the summary");
			goto fail;
		}
		if (seen_end) {
			if (in.end != in.line) {
				parse_error(&in, "text after 'end'");
				goto fail;
			}
			continue;
		}
		const char *keyword;
		size_t n = field(&in, &keyword);
		if (!seen_header) {
			uint64_t version;
			if (!keyword_is(keyword, n, "plumbgrind")) {
				plumb_fail(status, EINVAL, "%s: not a plumbgrind summary (it must start with 'plumbgrind 1')",
				           in.name);
				goto fail;
			}
			if (field_u64(&in, &version, "bad version") < 0 || line_done(&in) < 0)
				goto fail;
			if (version != 1) {
				plumb_fail(status, EINVAL, "%s: summary version %llu is not supported (this plumb reads 1)",
				           in.name, (unsigned long long)version);
				goto fail;
			}
			seen_header = true;
			continue;
		}
		if (keyword_is(keyword, n, "end")) {
			if (line_done(&in) < 0)
				goto fail;
			seen_end = true;
			continue;
		}
		if (parse_record(&in, out, keyword, n, &seen_total, &seen_fields) < 0)
			goto fail;
	}
	if (!seen_header) {
		plumb_fail(status, EINVAL, "%s: empty summary", in.name);
		goto fail;
	}
	if (!seen_end) {
		plumb_fail(status, EINVAL, "%s: summary cut short (no 'end' line after line %lu)", in.name, in.line_number);
		goto fail;
	}
	if (!seen_total || out->thread_count == 0) {
		plumb_fail(status, EINVAL, "%s: summary without %s", in.name, seen_total ? "threads" : "a 'total' line");
		goto fail;
	}
	for (int c = 0; c < INSTRUMENT_COUNTERS; c++) {
		uint64_t sum = 0;
		for (size_t i = 0; i < out->thread_count; i++)
			sum += out->threads[i].total.value[c];
		if (sum != out->total.value[c]) {
			plumb_fail(status, EINVAL, "%s: total %s %llu is not the sum of the threads' (%llu)", in.name,
			           counter_names[c], (unsigned long long)out->total.value[c], (unsigned long long)sum);
			goto fail;
		}
	}
	return 0;
fail:
	instrument_summary_free(out);
	return -1;
}

int instrument_summary_read(instrument_summary *out, const char *path, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	char *text;
	size_t length;
	plumb_status read_status;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, &read_status) != 0) {
		if (!strncmp(read_status.message, "cannot open ", 12))
			return plumb_fail(status, read_status.code, "cannot open the summary %s", read_status.message + 12);
		return plumb_fail(status, read_status.code, "%s", read_status.message);
	}
	int result = instrument_summary_parse(out, text, length, path, status);
	free(text);
	return result;
}

void instrument_summary_free(instrument_summary *summary)
{
	if (!summary)
		return;
	free(summary->command);
	free(summary->threads);
	for (size_t i = 0; i < summary->region_count; i++)
		free(summary->regions[i].name);
	free(summary->regions);
	for (size_t i = 0; i < summary->warning_count; i++)
		free(summary->warnings[i]);
	free(summary->warnings);
	free(summary->trace_error);
	memset(summary, 0, sizeof *summary);
}

const instrument_region *instrument_summary_region(const instrument_summary *summary, const char *name,
                                                   uint32_t thread)
{
	for (size_t i = 0; i < summary->region_count; i++)
		if (summary->regions[i].thread == thread && strcmp(summary->regions[i].name, name) == 0)
			return &summary->regions[i];
	return NULL;
}
