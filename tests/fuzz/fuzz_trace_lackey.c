/* libFuzzer target: the lackey text reader (and format detection on odd
 * first bytes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "trace/trace.h"
#include "fuzz_trace_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	trace_record records[64];
	plumb_status status;
	trace_reader *reader;
	trace_format format = data[0] & 1 ? TRACE_FORMAT_AUTO : TRACE_FORMAT_LACKEY;
	if (trace_reader_open_memory(&reader, data + 1, size - 1, format, &status) < 0)
		return 0;
	size_t batch = 1 + data[0] % 64;
	long n;
	while ((n = trace_reader_read(reader, records, batch, &status)) > 0)
		for (long i = 0; i < n; i++)
			fuzz_check_record(&records[i]);
	trace_reader_close(reader, &status);
	return 0;
}
