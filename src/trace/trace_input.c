/* Buffered byte input for the trace readers: a file descriptor (file, pipe,
 * stdin, a child's pipe) read in large chunks, or a caller's memory used in
 * place.  The buffer only grows to hold one native block (bounded by the
 * format's limits), so memory never depends on the trace's length. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/interrupt.h"
#include "core/status.h"
#include "trace/trace_internal.h"

/* Largest buffer a reader may ask for: one maximal compressed native block. */
#define TRACE_INPUT_MAX_BUFFER (TRACE_NATIVE_MAX_BLOCK_BYTES + (TRACE_NATIVE_MAX_BLOCK_BYTES >> 7) + 4096)

int trace_input_open_fd(trace_input *input, int fd, bool close_fd, const char *name, plumb_status *status)
{
	memset(input, 0, sizeof *input);
	input->fd = fd;
	input->close_fd = close_fd;
	input->name = name;
	input->capacity = TRACE_INPUT_BUFFER;
	input->data = malloc(input->capacity);
	if (!input->data) {
		if (close_fd)
			close(fd);
		input->fd = -1;
		return plumb_fail(status, ENOMEM, "out of memory for a %zu-byte input buffer", (size_t)TRACE_INPUT_BUFFER);
	}
	return 0;
}

int trace_input_open_memory(trace_input *input, const void *data, size_t length, const char *name,
                            plumb_status *status)
{
	(void)status;
	memset(input, 0, sizeof *input);
	input->fd = -1;
	input->memory = data;
	input->memory_length = length;
	/* Used in place: the parsers only read data[start, end). */
	input->data = (unsigned char *)(uintptr_t)data;
	input->capacity = length;
	input->end = length;
	input->at_eof = true;
	input->name = name;
	return 0;
}

long trace_input_fill(trace_input *input, size_t want, plumb_status *status)
{
	size_t available = input->end - input->start;
	if (available >= want || input->at_eof || input->fd < 0)
		return (long)available;
	if (want > TRACE_INPUT_MAX_BUFFER)
		return plumb_fail(status, EINVAL, "%s: a %zu-byte read exceeds the reader's %zu-byte limit",
		                  input->name, want, (size_t)TRACE_INPUT_MAX_BUFFER);
	if (input->start > 0) {
		memmove(input->data, input->data + input->start, available);
		input->end = available;
		input->start = 0;
	}
	if (want > input->capacity) {
		unsigned char *grown = realloc(input->data, want);
		if (!grown)
			return plumb_fail(status, ENOMEM, "out of memory for a %zu-byte input buffer", want);
		input->data = grown;
		input->capacity = want;
	}
	while (input->end - input->start < want) {
		ssize_t n = read(input->fd, input->data + input->end, input->capacity - input->end);
		if (n < 0) {
			/* A signal: a polling caller stops here (plumb/interrupt.h). */
			if (errno == EINTR && interrupt_pending())
				return plumb_fail(status, EINTR, "reading %s: interrupted by signal %d", input->name,
				                  interrupt_signal());
			if (errno == EINTR)
				continue;
			return plumb_fail_errno(status, errno, "reading %s", input->name);
		}
		if (n == 0) {
			input->at_eof = true;
			break;
		}
		input->end += (size_t)n;
	}
	return (long)(input->end - input->start);
}

void trace_input_close(trace_input *input)
{
	if (input->fd >= 0) {
		if (input->close_fd)
			close(input->fd);
		free(input->data);
	}
	input->fd = -1;
	input->data = NULL;
}
