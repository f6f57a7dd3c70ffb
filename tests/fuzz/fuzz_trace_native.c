/* libFuzzer target: the native trace reader and its record decoder.
 * The first input byte picks the path: even = a whole native trace through
 * trace_reader_open_memory (truncation allowed on odd second bytes); odd =
 * the rest decoded directly as one block payload, which reaches the record
 * decoder without zstd (the fuzz build also skips the block checksums; see
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION in trace_native_read.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "plumb/trace.h"
#include "trace/trace_internal.h"
#include "fuzz_trace_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	trace_record records[257];
	if (data[0] & 1) {
		/* One payload: data[1] records requested from the rest. */
		/* trace_codec_reset keeps the names table: the state starts zeroed. */
		trace_names names;
		memset(&names, 0, sizeof names);
		trace_codec_state state;
		memset(&state, 0, sizeof state);
		state.names = &names;
		trace_codec_reset(&state);
		const unsigned char *cursor = data + 2, *end = data + size;
		const char *error = NULL;
		size_t got = trace_codec_decode(&state, &cursor, end, records, data[1], &error);
		if (got > data[1] || cursor > end || (got < data[1] && !error))
			abort();
		for (size_t i = 0; i < got; i++)
			fuzz_check_record(&records[i]);
		trace_names_free(&names);
		return 0;
	}
	plumb_status status;
	trace_reader *reader;
	if (trace_reader_open_memory(&reader, data + 2, size - 2, TRACE_FORMAT_NATIVE, &status) < 0)
		return 0;
	trace_reader_allow_truncated(reader, data[1] & 1);
	size_t batch = 1 + data[1] % 256;
	long n;
	while ((n = trace_reader_read(reader, records, batch, &status)) > 0) {
		if ((size_t)n > batch)
			abort();
		for (long i = 0; i < n; i++)
			fuzz_check_record(&records[i]);
	}
	trace_reader_close(reader, &status);
	return 0;
}
