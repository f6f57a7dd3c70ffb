/* The native record decoder must never read past its payload, whatever the
 * records' lengths.  A region marker (up to 269 bytes) is longer than a
 * record's worst case (64), which the unchecked fast loop counts on; the
 * trace_native fuzzer found the decoder reading past the end of a block
 * after a long marker. */
#include <criterion/criterion.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"

/* BEFORE records, a marker with the longest name, AFTER records, the last
 * of them cut after its first byte. */
static void cut_after_a_marker(int BEFORE, int AFTER)
{
	unsigned char encoded[8192];
	size_t length = 0, last_length = 0;
	trace_codec_state encoder;
	memset(&encoder, 0, sizeof encoder);
	trace_codec_reset(&encoder);
	char name[TRACE_REGION_NAME_MAX + 1];
	memset(name, 'r', TRACE_REGION_NAME_MAX);
	name[TRACE_REGION_NAME_MAX] = 0;
	for (int i = 0; i < BEFORE + 1 + AFTER; i++) {
		trace_record r;
		memset(&r, 0, sizeof r);
		if (i == BEFORE) {
			trace_region_marker(&r, 1, 0, name);
			length += trace_codec_encode_marker(&encoder, &r, encoded + length);
			continue;
		}
		r.kind = TRACE_READ;
		r.size = 8;
		r.address = 0x1000 + 8 * (uint64_t)i;
		last_length = trace_codec_encode(&encoder, &r, encoded + length);
		length += last_length;
	}
	cr_assert_geq(last_length, 2, "the last record must be cut inside itself");
	/* The payload ends inside the last record; what follows it in memory
	 * would decode as the rest of that record. */
	size_t payload = length - (last_length - 1);
	unsigned char memory[8192];
	memset(memory, 0x02, sizeof memory);
	memcpy(memory, encoded, payload);

	trace_names names;
	memset(&names, 0, sizeof names);
	trace_codec_state decoder;
	memset(&decoder, 0, sizeof decoder);
	decoder.names = &names;
	trace_codec_reset(&decoder);
	trace_record records[1024];
	const unsigned char *cursor = memory, *end = memory + payload;
	const char *error = NULL;
	size_t got = trace_codec_decode(&decoder, &cursor, end, records, BEFORE + 1 + AFTER, &error);
	cr_assert_eq(got, (size_t)(BEFORE + AFTER), "%d before, %d after: decoded %zu records, the cut one "
	             "read from past the end", BEFORE, AFTER, got);
	cr_assert_leq(cursor, end);
	cr_assert_not_null(error);
	cr_assert(strstr(error, "past the end"), "%s", error);
	cr_assert(trace_is_marker(&records[BEFORE]));
	trace_names_free(&names);
}

Test(trace_codec_bounds, a_record_cut_after_a_long_marker_is_not_read_past_the_end)
{
	/* Wherever the marker falls in the fast loop's batches. */
	for (int before = 0; before < 300; before += 1)
		for (int after = 1; after <= 6; after++)
			cut_after_a_marker(before, after);
}
