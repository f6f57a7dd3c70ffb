/* The reader interface: opening a source, sniffing its format, batches.
 * The formats' names are in trace_format.c (the writers use them too); a
 * reader over a program's run is ended by trace_command_end.c; native files
 * are decoded ahead by trace_background.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/read_file.h"
#include "core/status.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

/* Native traces start with a fixed magic; text formats are told apart by
 * their first non-blank line: lackey lines start "I  ", " L ", " S ", " M ",
 * "==" or "--", din lines with a hex label and a blank. */
int trace_detect_format(trace_input *input, trace_format *out, plumb_status *status)
{
	long have = trace_input_fill(input, TRACE_NATIVE_MAGIC_LENGTH, status);
	if (have < 0)
		return -1;
	if (have == 0)
		return plumb_fail(status, EINVAL, "%s: empty input: cannot detect the trace format", input->name);
	const unsigned char *p = input->data + input->start;
	size_t prefix = (size_t)have < TRACE_NATIVE_MAGIC_LENGTH ? (size_t)have : TRACE_NATIVE_MAGIC_LENGTH;
	if (memcmp(p, TRACE_NATIVE_MAGIC, prefix) == 0) {
		*out = TRACE_FORMAT_NATIVE;
		return 0;
	}
	/* Enough text to see the first non-blank line (lines are short; 4 KiB is plenty). */
	for (;;) {
		p = input->data + input->start;
		size_t available = trace_input_available(input);
		const unsigned char *end = p + available;
		const unsigned char *line = p;
		while (line < end) {
			const unsigned char *newline = memchr(line, '\n', (size_t)(end - line));
			const unsigned char *line_end = newline ? newline : end;
			if (!newline && !input->at_eof && input->fd >= 0 && available < 4096)
				break;   /* need the whole line */
			const unsigned char *q = line;
			while (q < line_end && (*q == ' ' || *q == '\t' || *q == '\r'))
				q++;
			if (q == line_end) {
				if (!newline)
					break;
				line = newline + 1;
				continue;
			}
			size_t n = (size_t)(line_end - line);
			if (n >= 3 && ((line[0] == 'I' && line[1] == ' ' && line[2] == ' ') ||
			               (line[0] == ' ' && (line[1] == 'L' || line[1] == 'S' || line[1] == 'M') && line[2] == ' ') ||
			               (line[0] == '=' && line[1] == '=') || (line[0] == '-' && line[1] == '-'))) {
				*out = TRACE_FORMAT_LACKEY;
				return 0;
			}
			const unsigned char *h = q;
			while (h < line_end && trace_hex_value[*h] >= 0)
				h++;
			if (h == q + 1 && h < line_end && (*h == 'x' || *h == 'X') && *q == '0') {
				h++;
				while (h < line_end && trace_hex_value[*h] >= 0)
					h++;
			}
			if (h > q && h < line_end && (*h == ' ' || *h == '\t')) {
				*out = TRACE_FORMAT_DIN;
				return 0;
			}
			char quoted[200];
			return plumb_fail(status, EINVAL, "%s: cannot detect the trace format: '%s' is neither a lackey "
			                  "nor a din line, and the input has no native trace magic", input->name,
			                  trace_quote_line(line, line_end, quoted, sizeof quoted));
		}
		if (input->at_eof || input->fd < 0 || available >= 4096)
			return plumb_fail(status, EINVAL, "%s: cannot detect the trace format: no trace lines%s", input->name,
			                  available >= 4096 ? " in the first 4 KiB" : "");
		if (trace_input_fill(input, available + 1, status) < 0)
			return -1;
	}
}

static int reader_setup(trace_reader *reader, trace_format format, plumb_status *status)
{
	/* A text trace saved by an editor may start with a UTF-8 byte-order
	 * mark: skipped, so that its first line is read and not refused. */
	if (format != TRACE_FORMAT_NATIVE) {
		long have = trace_input_fill(&reader->input, 3, status);
		if (have < 0)
			return -1;
		reader->input.start += read_file_bom_length((const char *)reader->input.data + reader->input.start,
		                                            (size_t)have);
	}
	if (format == TRACE_FORMAT_AUTO && trace_detect_format(&reader->input, &format, status) < 0)
		return -1;
	reader->format = format;
	switch (format) {
	case TRACE_FORMAT_NATIVE: return trace_native_reader_init(reader, status);
	case TRACE_FORMAT_LACKEY: return trace_lackey_reader_init(reader, status);
	case TRACE_FORMAT_DIN: return trace_din_reader_init(reader, status);
	default: return plumb_fail(status, EINVAL, "unknown trace format %d", (int)format);
	}
}

static void reader_free(trace_reader *reader)
{
	if (reader->destroy)
		reader->destroy(reader);
	trace_input_close(&reader->input);
	free(reader->view);
	free(reader->command.program);
	trace_command_forget_code(reader);
	trace_names_free(&reader->names);
	free(reader);
}

int trace_reader_open(trace_reader **out, const char *path, trace_format format, plumb_status *status)
{
	*out = NULL;
	if (!path)
		return plumb_fail(status, EINVAL, "no trace path given");
	trace_reader *reader = calloc(1, sizeof *reader + strlen(path) + 1);
	if (!reader)
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader");
	char *name = (char *)(reader + 1);
	strcpy(name, path);
	int fd;
	bool is_stdin = strcmp(path, "-") == 0;
	if (is_stdin) {
		fd = STDIN_FILENO;
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		int error = errno;
		free(reader);
		return plumb_fail_errno(status, error, "cannot open trace '%s'", path);
	}
	if (trace_input_open_fd(&reader->input, fd, !is_stdin, is_stdin ? "standard input" : name, status) < 0) {
		free(reader);
		return -1;
	}
	if (reader_setup(reader, format, status) < 0) {
		reader_free(reader);
		return -1;
	}
	/* Native files decode ahead in a worker thread (trace_background.c):
	 * the records are the same, the caller's CPU time is not spent on them.
	 * A file of plumbgrind's entries is walked in the caller's thread, so
	 * that trace_reader_view_compact hands the entries out as they are; its
	 * blocks are loaded (read, zstd, checked) ahead by the native reader's
	 * own worker. */
	if (reader->format == TRACE_FORMAT_NATIVE && trace_native_starts_with_entries(reader))
		trace_native_allow_ahead(reader);
	else if (reader->format == TRACE_FORMAT_NATIVE) {
		trace_reader *outer = calloc(1, sizeof *outer);
		if (!outer || trace_background_wrap(outer, reader, trace_reader_close, status) < 0) {
			free(outer);
			reader_free(reader);
			return outer ? -1 : plumb_fail(status, ENOMEM, "out of memory for a trace reader");
		}
		reader = outer;
	}
	*out = reader;
	return 0;
}

int trace_reader_open_memory(trace_reader **out, const void *data, size_t size, trace_format format,
                             plumb_status *status)
{
	*out = NULL;
	trace_reader *reader = calloc(1, sizeof *reader);
	if (!reader)
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader");
	trace_input_open_memory(&reader->input, data, size, "memory", status);
	if (reader_setup(reader, format, status) < 0) {
		reader_free(reader);
		return -1;
	}
	*out = reader;
	return 0;
}

/* Used by trace_command.c: a reader over a pipe from a child. */
int trace_reader_open_pipe(trace_reader **out, int fd, const char *program, plumb_status *status)
{
	*out = NULL;
	trace_reader *reader = calloc(1, sizeof *reader);
	if (!reader || !(reader->command.program = strdup(program))) {
		free(reader);
		close(fd);
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader");
	}
	if (trace_input_open_fd(&reader->input, fd, true, "valgrind lackey output", status) < 0) {
		free(reader->command.program);
		free(reader);
		return -1;
	}
	if (reader_setup(reader, TRACE_FORMAT_LACKEY, status) < 0) {
		reader_free(reader);
		return -1;
	}
	*out = reader;
	return 0;
}

int trace_reader_open_ring(trace_reader **out, trace_ring *ring, const char *program, plumb_status *status)
{
	*out = NULL;
	trace_reader *reader = calloc(1, sizeof *reader);
	if (!reader || !(reader->command.program = strdup(program))) {
		free(reader);
		trace_ring_free(ring);
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader");
	}
	if (trace_ring_reader_init(reader, ring, status) < 0) {
		trace_ring_free(ring);
		reader_free(reader);
		return -1;
	}
	*out = reader;
	return 0;
}

long trace_reader_read(trace_reader *reader, trace_record *records, size_t capacity, plumb_status *status)
{
	if (!reader)
		return plumb_fail(status, EINVAL, "no trace reader");
	if (reader->failed) {
		if (status)
			*status = reader->failure;
		return -1;
	}
	if (capacity == 0)
		return 0;
	long got = reader->read(reader, records, capacity);
	reader->info.records += (uint64_t)(got > 0 ? got : 0);
	if (!reader->background && !reader->lend && !reader->native)
		reader->info.bytes = reader->input.offset;   /* the native reader keeps its own (a worker reads the input) */
	if (got > 0)
		return got;   /* an error after these records is reported on the next call */
	if (reader->failed) {
		if (status)
			*status = reader->failure;
		return -1;
	}
	return 0;
}

long trace_reader_view(trace_reader *reader, const trace_record **records, size_t max, plumb_status *status)
{
	*records = NULL;
	if (!reader)
		return plumb_fail(status, EINVAL, "no trace reader");
	if (reader->failed) {
		if (status)
			*status = reader->failure;
		return -1;
	}
	if (max == 0)
		return 0;
	if (reader->lend) {
		long got = reader->lend(reader, records, max);
		reader->info.records += (uint64_t)(got > 0 ? got : 0);
		if (got > 0)
			return got;
		*records = NULL;
		if (reader->failed) {
			if (status)
				*status = reader->failure;
			return -1;
		}
		return 0;
	}
	if (!reader->background) {
		/* No records of its own to lend: read into a buffer of the reader's. */
		if (!reader->view && !(reader->view = malloc(TRACE_BACKGROUND_RECORDS * sizeof *reader->view)))
			return plumb_fail(status, ENOMEM, "out of memory for a trace reader's buffer");
		long got = trace_reader_read(reader, reader->view, max < TRACE_BACKGROUND_RECORDS ? max : TRACE_BACKGROUND_RECORDS,
		                             status);
		if (got > 0)
			*records = reader->view;
		return got;
	}
	long got = trace_background_view(reader, records, max);
	if (got == -2)
		return plumb_fail(status, ENOMEM, "out of memory for a trace reader's buffer");
	reader->info.records += (uint64_t)(got > 0 ? got : 0);
	if (got > 0)
		return got;   /* an error after these records is reported on the next call */
	*records = NULL;
	if (reader->failed) {
		if (status)
			*status = reader->failure;
		return -1;
	}
	return 0;
}

long trace_reader_view_compact(trace_reader *reader, const trace_record **records, trace_compact *compact, size_t max,
                               plumb_status *status)
{
	compact->words = compact->end = NULL;
	compact->records = 0;
	compact->filtered = false;
	compact->unchecked = false;
	if (!reader || !reader->lend_compact || reader->failed || max == 0)
		return trace_reader_view(reader, records, max, status);
	*records = NULL;
	long got = reader->lend_compact(reader, records, compact, max);
	reader->info.records += got > 0 && compact->words && compact->filtered ? compact->records : (uint64_t)(got > 0 ? got : 0);
	if (got > 0)
		return got;
	*records = NULL;
	compact->words = compact->end = NULL;
	if (reader->failed) {
		if (status)
			*status = reader->failure;
		return -1;
	}
	return 0;
}

trace_format trace_reader_format(const trace_reader *reader)
{
	return reader ? reader->format : TRACE_FORMAT_AUTO;
}

void trace_reader_allow_truncated(trace_reader *reader, int allow)
{
	if (reader)
		reader->allow_truncated = allow != 0;
}

void trace_reader_get_info(const trace_reader *reader, trace_reader_info *info)
{
	if (reader)
		*info = reader->info;
	else
		memset(info, 0, sizeof *info);
}

int trace_reader_close(trace_reader *reader, plumb_status *status)
{
	if (!reader)
		return 0;
	int result = 0;
	if (reader->command.running) {
		/* plumbgrind's ring, or lackey's exit line, says the program exited
		 * rather than exec'd another (plumbgrind's text: its code map does) */
		bool image_ended = !reader->input.at_eof || reader->failed ||
		                   (reader->ring ? trace_ring_program_exited(reader)
		                                 : !reader->command.lackey || reader->text.exited);
		result = trace_command_finish_image(reader, image_ended, trace_ring_exec_name(reader), status);
	}
	reader_free(reader);
	return result;
}
