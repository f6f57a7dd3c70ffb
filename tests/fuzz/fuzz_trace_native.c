/* libFuzzer target: the native trace reader, its record decoder and its
 * entry blocks (format 1.3).  The first input byte picks the path:
 *   odd   the rest decoded directly as one block payload of records, which
 *         reaches the record decoder without zstd;
 *   2     the rest as the words of one entry block (plumbgrind's entries)
 *         without zstd: checked whole as a loaded block is
 *         (trace_entries_scan), and walked as the ring's blocks are
 *         (trace_entries_expand and trace_entries_run, in batches of the
 *         second byte's records; with its bit 1 too, the runs handed out
 *         unchecked and settled, trace_compact_settle), whatever the scan
 *         said;
 *   other even  a whole native trace through trace_reader_open_memory
 *         (truncation allowed when the second byte's bit 0 is set; bit 1:
 *         trace_reader_view_compact, as plumb sim reads, else
 *         trace_reader_read; bit 2: its runs unchecked, settled, and given
 *         back unless bit 3 is set).
 * The fuzz build also skips the block checksums (see
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION in trace_native_read.c), so
 * mutated inputs reach zstd and the decoders. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_entries.h"
#include "trace/trace_internal.h"
#include "fuzz_trace_check.h"

/* What a run of uses hands out must hold: every use of a known definition,
 * within the run, standing for the records it says. */
static void check_compact(const trace_compact *c, long got)
{
	uint64_t records = 0;
	const uint64_t *w = c->words;
	while (w < c->end) {
		uint32_t id = (uint32_t)w[0];
		if (w[0] >> 60 != TRACE_ENTRY_USE || id >= c->definitions || c->count[id] == 0 || c->data[id] > c->count[id] ||
		    ((w[0] >> 32) & 0xff) != c->data[id])
			abort();
		for (size_t i = 0; i < c->count[id]; i++)
			fuzz_check_record(&c->templates[c->first[id] + i]);
		records += c->count[id];
		w += 1 + c->data[id];
	}
	if (w != c->end || records != c->records || (uint64_t)got != records)
		abort();
}

static void entry_words(const uint8_t *data, size_t size)
{
	size_t n = (size - 2) / 8;
	uint64_t *words = malloc((n ? n : 1) * sizeof *words);
	if (!words)
		return;
	memcpy(words, data + 2, n * 8);
	trace_names names;
	memset(&names, 0, sizeof names);
	trace_entries scan, walk;
	trace_entries_init(&scan, NULL);
	trace_entries_init(&walk, &names);
	uint64_t records;
	uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
	if (copy) {
		memcpy(copy, words, n * 8);
		(void)trace_entries_scan(&scan, copy, n, NULL, TRACE_SCAN_DECODE, &records);
		free(copy);
	}
	trace_record records_out[300];
	size_t batch = 1 + data[1] % 300;
	const uint64_t *cursor = words, *end = words + n;
	while (cursor < end) {
		trace_compact compact;
		long got = 0;
		if ((data[1] & 3) == 3) {
			got = trace_entries_run_unchecked(&walk, cursor, end, &compact);
			if (got > 0) {
				if (!compact.unchecked || compact.words != cursor || compact.end != end)
					abort();
				trace_compact_settle(&compact);
				if (compact.end <= cursor || (uint64_t)got > compact.records)
					abort();
				check_compact(&compact, (long)compact.records);
				cursor = compact.end;
				continue;
			}
		} else if (data[1] & 1) {
			got = trace_entries_run(&walk, &cursor, end, &compact);
		}
		if (got < 0)
			break;
		if (got > 0) {
			check_compact(&compact, got);
			continue;
		}
		const uint64_t *before = cursor;
		got = trace_entries_expand(&walk, &cursor, end, records_out, batch, (data[1] & 1) != 0);
		if (got < 0 || (size_t)got > batch)
			break;
		for (long i = 0; i < got; i++) {
			/* the ring's calls and returns (a file refuses them: the scan) */
			if (trace_is_call(&records_out[i])) {
				if (records_out[i].size != 0 || records_out[i].flags != 0)
					abort();
				continue;
			}
			fuzz_check_record(&records_out[i]);
		}
		if (cursor == before && got == 0)
			break;   /* a use longer than the batch */
	}
	trace_entries_free(&scan);
	trace_entries_free(&walk);
	trace_names_free(&names);
	free(words);
}

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
	if (data[0] == 2) {
		entry_words(data, size);
		return 0;
	}
	plumb_status status;
	trace_reader *reader;
	if (trace_reader_open_memory(&reader, data + 2, size - 2, TRACE_FORMAT_NATIVE, &status) < 0)
		return 0;
	trace_reader_allow_truncated(reader, data[1] & 1);
	size_t batch = 1 + data[1] % 256;
	long n;
	if (data[1] & 2) {
		const trace_record *lent;
		trace_compact compact;
		if (data[1] & 4)
			trace_reader_want_unchecked_runs(reader);
		while ((n = trace_reader_view_compact(reader, &lent, &compact, batch, &status)) > 0) {
			if (compact.words && compact.unchecked) {
				trace_compact_settle(&compact);
				if ((uint64_t)n > compact.records)
					abort();
				check_compact(&compact, (long)compact.records);
				if (!(data[1] & 8))
					trace_reader_compact_taken(reader, &compact);
				continue;
			}
			if (compact.words) {
				check_compact(&compact, n);
				continue;
			}
			if ((size_t)n > batch)
				abort();
			for (long i = 0; i < n; i++)
				fuzz_check_record(&lent[i]);
		}
	} else {
		while ((n = trace_reader_read(reader, records, batch, &status)) > 0) {
			if ((size_t)n > batch)
				abort();
			for (long i = 0; i < n; i++)
				fuzz_check_record(&records[i]);
		}
	}
	trace_reader_close(reader, &status);
	return 0;
}
