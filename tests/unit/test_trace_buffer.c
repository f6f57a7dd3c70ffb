/* The bounded trace buffer (plumb trace record --buffer) and its collector
 * markers: the oracles of Watson's halting tracer.  With halt nothing is
 * lost and a halt follows every N-th reference; with drop, kept + lost = all;
 * wrap keeps the last N.  A clock of the test's own makes the times exact. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace_test_util.h"

typedef struct fake_program {
	uint64_t now_ns;
	int stops, resumes;
	bool stopped;
} fake_program;

static int fake_pause(void *context, int stop, plumb_status *status)
{
	(void)status;
	fake_program *p = context;
	cr_assert_eq(p->stopped, !stop, "stop and resume alternate");
	p->stopped = stop;
	if (stop)
		p->stops++;
	else
		p->resumes++;
	return 0;
}

static uint64_t fake_now(void *context) { return ((fake_program *)context)->now_ns; }
static void fake_sleep(void *context, uint64_t ns) { ((fake_program *)context)->now_ns += ns; }

/* references only, every shape the codec has */
static trace_record *references(size_t count, uint64_t seed)
{
	trace_record *r = calloc(count, sizeof *r);
	trace_test_records(r, count, seed);
	return r;
}

/* Runs records through a buffer into a native file and reads it back. */
static long run_buffer(const trace_buffer_options *options, fake_program *program, const trace_record *in, size_t count,
                       size_t batch, uint64_t clock_step_ns, trace_record *out, size_t capacity,
                       trace_buffer_totals *totals)
{
	const char *path = trace_test_path("buffered.ptrace");
	trace_writer *writer;
	plumb_status status;
	cr_assert_eq(trace_writer_open(&writer, path, TRACE_FORMAT_NATIVE, &status), 0, "%s", status.message);
	trace_buffer_hooks hooks = { fake_pause, fake_now, fake_sleep, program };
	trace_buffer *buffer;
	cr_assert_eq(trace_buffer_new(&buffer, options, &hooks, writer, &status), 0, "%s", status.message);
	for (size_t i = 0; i < count; i += batch) {
		size_t n = count - i < batch ? count - i : batch;
		cr_assert_eq(trace_buffer_take(buffer, in + i, n, &status), 0, "%s", status.message);
		program->now_ns += clock_step_ns;
	}
	cr_assert_eq(trace_buffer_finish(buffer, &status), 0, "%s", status.message);
	trace_buffer_get_totals(buffer, totals);
	trace_buffer_free(buffer);
	cr_assert_eq(trace_writer_close(writer, &status), 0, "%s", status.message);
	char error[256];
	long n = trace_test_read_all(path, TRACE_FORMAT_NATIVE, out, capacity, error, sizeof error);
	cr_assert_geq(n, 0, "%s", error);
	return n;
}

Test(trace_buffer, halt_loses_nothing_and_halts_every_n_references)
{
	const size_t count = 10007, n = 1000;
	trace_record *in = references(count, 7), *out = calloc(2 * count, sizeof *out);
	fake_program program = { .now_ns = 5000000000ull };
	trace_buffer_options options = { n, TRACE_FULL_HALT, 1000.0, 0.5 };   /* 1 s to drain, 0.5 s more */
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, count, 333, 0, out, 2 * count, &totals);
	cr_assert_eq(totals.offered, count);
	cr_assert_eq(totals.kept, count);
	cr_assert_eq(totals.lost, 0);
	cr_assert_eq(totals.halts, count / n);
	cr_assert_eq(totals.halted_ns, (count / n) * 1500000000ull);
	cr_assert_eq(program.stops, (int)(count / n));
	cr_assert_eq(program.resumes, program.stops);
	cr_assert_eq((size_t)got, count + count / n);
	/* the references in order, a halt after every n-th */
	size_t reference = 0, halts = 0;
	for (long i = 0; i < got; i++) {
		if (out[i].kind == TRACE_HALT) {
			cr_assert_eq(reference % n, 0);
			cr_assert_eq(trace_collector_index(&out[i]), halts);
			cr_assert_eq(trace_collector_count(&out[i]), n);
			cr_assert_eq(trace_collector_end(&out[i]) - trace_collector_start(&out[i]), 1500000000ull);
			cr_assert_eq(out[i].thread, in[reference - 1].thread, "a halt carries the thread before it");
			halts++;
			continue;
		}
		cr_assert(trace_test_records_equal(&out[i], &in[reference]), "record %ld", i);
		reference++;
		if (reference % n == 0)
			cr_assert(i + 1 < got && out[i + 1].kind == TRACE_HALT, "no halt after reference %zu", reference);
	}
	cr_assert_eq(reference, count);
	cr_assert_eq(halts, count / n);
	free(in);
	free(out);
}

Test(trace_buffer, halt_without_a_drain_rate_is_entry_and_exit_only)
{
	const size_t count = 3000;
	trace_record *in = references(count, 8), *out = calloc(2 * count, sizeof *out);
	fake_program program = { 0 };
	trace_buffer_options options = { 1000, TRACE_FULL_HALT, 0, 0 };
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, count, 4096, 0, out, 2 * count, &totals);
	cr_assert_eq(got, 3003);
	cr_assert_eq(totals.halts, 3, "the last reference fills the third buffer");
	cr_assert_eq(totals.halted_ns, 0);
	cr_assert_eq(out[got - 1].kind, TRACE_HALT);
	free(in);
	free(out);
}

Test(trace_buffer, drop_keeps_and_loses_every_reference_once)
{
	const size_t count = 20000, n = 100;
	trace_record *in = references(count, 9), *out = calloc(2 * count, sizeof *out);
	fake_program program = { 0 };
	/* 50 references a batch, 10 ms between batches, 1000 drained a second:
	 * 10 drained per batch, so the buffer fills after the second batch */
	trace_buffer_options options = { n, TRACE_FULL_DROP, 1000.0, 0 };
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, count, 50, 10000000ull, out, 2 * count, &totals);
	cr_assert_eq(totals.offered, count);
	cr_assert_eq(totals.kept + totals.lost, count);
	cr_assert_eq(totals.halts, 0);
	cr_assert_eq(program.stops, 0, "drop never stops the program");
	/* batches: 50 kept (level 50); 10 drained, 50 kept (90); 10 drained, 20
	 * kept and 30 lost (100); then 10 drained and 10 kept a batch */
	cr_assert_eq(totals.kept, 50 + 50 + 20 + 10 * (count / 50 - 3));
	uint64_t kept = 0, lost = 0, runs = 0;
	size_t position = 0;
	for (long i = 0; i < got; i++) {
		if (out[i].kind == TRACE_LOST) {
			cr_assert_eq(trace_collector_index(&out[i]), runs);
			lost += trace_collector_count(&out[i]);
			position += trace_collector_count(&out[i]);
			runs++;
			continue;
		}
		/* a kept reference is the next one the program made after those lost */
		cr_assert(trace_test_records_equal(&out[i], &in[position]), "record %ld", i);
		position++;
		kept++;
	}
	cr_assert_eq(kept, totals.kept);
	cr_assert_eq(lost, totals.lost);
	cr_assert_eq(position, count);
	cr_assert_gt(runs, 0);
	free(in);
	free(out);
}

Test(trace_buffer, drop_without_a_drain_rate_loses_nothing)
{
	const size_t count = 5000;
	trace_record *in = references(count, 10), *out = calloc(2 * count, sizeof *out);
	fake_program program = { 0 };
	trace_buffer_options options = { 10, TRACE_FULL_DROP, 0, 0 };
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, count, 4096, 0, out, 2 * count, &totals);
	cr_assert_eq(got, (long)count);
	cr_assert_eq(totals.lost, 0);
	free(in);
	free(out);
}

Test(trace_buffer, wrap_keeps_the_last_n)
{
	const size_t count = 12345, n = 1000;
	trace_record *in = references(count, 11), *out = calloc(2 * count, sizeof *out);
	fake_program program = { 0 };
	trace_buffer_options options = { n, TRACE_FULL_WRAP, 0, 0 };
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, count, 777, 1000, out, 2 * count, &totals);
	cr_assert_eq(got, (long)n + 1);
	cr_assert_eq(totals.kept, n);
	cr_assert_eq(totals.lost, count - n);
	cr_assert_eq(out[0].kind, TRACE_LOST);
	cr_assert_eq(trace_collector_count(&out[0]), count - n);
	for (size_t i = 0; i < n; i++)
		cr_assert(trace_test_records_equal(&out[1 + i], &in[count - n + i]), "kept reference %zu", i);
	free(in);
	free(out);
}

Test(trace_buffer, wrap_of_a_short_trace_keeps_it_whole)
{
	trace_record *in = references(10, 12), out[32];
	fake_program program = { 0 };
	trace_buffer_options options = { 1000, TRACE_FULL_WRAP, 0, 0 };
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, 10, 3, 0, out, 32, &totals);
	cr_assert_eq(got, 10);
	cr_assert_eq(totals.lost, 0);
	for (int i = 0; i < 10; i++)
		cr_assert(trace_test_records_equal(&out[i], &in[i]));
	free(in);
}

Test(trace_buffer, region_markers_pass_a_halting_buffer)
{
	trace_record in[5], out[16];
	trace_test_records(in, 5, 13);
	trace_region_marker(&in[2], 1, 0, "phase");
	fake_program program = { 0 };
	trace_buffer_options options = { 2, TRACE_FULL_HALT, 0, 0 };
	trace_buffer_totals totals;
	long got = run_buffer(&options, &program, in, 5, 5, 0, out, 16, &totals);
	/* r0 r1 HALT marker r3 r4 HALT: the marker takes no room */
	cr_assert_eq(got, 7);
	cr_assert_eq(out[2].kind, TRACE_HALT);
	cr_assert_eq(out[3].kind, TRACE_REGION_BEGIN);
	cr_assert_eq(out[6].kind, TRACE_HALT);
	cr_assert_eq(totals.halts, 2);
}

Test(trace_buffer, collector_markers_round_trip_every_format_that_has_them)
{
	trace_record in[6], out[16];
	trace_test_records(in, 6, 14);
	trace_collector_marker(&in[1], TRACE_HALT, 3, 0, 123456789ull, 987654321ull, 8u << 20);
	trace_collector_marker(&in[4], TRACE_LOST, 0, TRACE_COLLECTOR_INDEX_MAX, UINT64_MAX - 5, UINT64_MAX,
	                       TRACE_COLLECTOR_COUNT_MAX);
	const char *path = trace_test_path("markers.ptrace");
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_NATIVE, in, 6), 0);
	char error[256];
	long got = trace_test_read_all(path, TRACE_FORMAT_NATIVE, out, 16, error, sizeof error);
	cr_assert_eq(got, 6, "%s", error);
	for (int i = 0; i < 6; i++)
		cr_assert(trace_test_records_equal(&out[i], &in[i]), "record %d", i);
	/* text formats have no place for them: dropped, the references kept */
	path = trace_test_path("markers.lackey");
	cr_assert_eq(trace_test_write(path, TRACE_FORMAT_LACKEY, in, 6), 0);
	got = trace_test_read_all(path, TRACE_FORMAT_LACKEY, out, 16, error, sizeof error);
	cr_assert_eq(got, 4, "%s", error);
}

Test(trace_buffer, a_collector_marker_with_a_bad_field_is_refused)
{
	trace_record r;
	trace_collector_marker(&r, TRACE_HALT, 0, 0, 10, 5, 1);   /* ends before it starts */
	trace_writer *writer;
	plumb_status status;
	cr_assert_eq(trace_writer_open(&writer, trace_test_path("bad.ptrace"), TRACE_FORMAT_NATIVE, &status), 0);
	cr_assert_eq(trace_writer_write(writer, &r, 1, &status), -1);
	cr_assert_str_eq(status.message, "trace record 0 is a collector marker with bad fields");
	trace_writer_abort(writer);
}

Test(trace_buffer, bad_options_say_which)
{
	plumb_status status;
	trace_buffer_options o = { 0, TRACE_FULL_HALT, 0, 0 };
	cr_assert_eq(trace_buffer_check_options(&o, &status), -1);
	cr_assert(strstr(status.message, "holds 1 to"), "%s", status.message);
	o = (trace_buffer_options){ 10, TRACE_FULL_WRAP, 5, 0 };
	cr_assert_eq(trace_buffer_check_options(&o, &status), -1);
	cr_assert(strstr(status.message, "wrap never drains"), "%s", status.message);
	o = (trace_buffer_options){ 10, TRACE_FULL_DROP, 5, 1 };
	cr_assert_eq(trace_buffer_check_options(&o, &status), -1);
	cr_assert(strstr(status.message, "only halt stops the program"), "%s", status.message);
	trace_when_full w;
	cr_assert_eq(trace_when_full_parse("pause", &w, &status), -1);
	cr_assert_str_eq(status.message, "'pause' is not a full-buffer policy (halt, drop or wrap)");
	cr_assert_eq(trace_when_full_parse("wrap", &w, &status), 0);
	cr_assert_eq(w, TRACE_FULL_WRAP);
}

Test(trace_buffer, filter_removes_markers_and_ranges)
{
	trace_record r[6];
	r[0] = (trace_record){ 0x401000, 0x401000, 0, 0, 4, TRACE_INSTRUCTION, TRACE_HAS_INSTRUCTION_ADDRESS };
	r[1] = (trace_record){ 0x900000, 0x401000, 0, 0, 8, TRACE_READ, TRACE_HAS_INSTRUCTION_ADDRESS };
	trace_collector_marker(&r[2], TRACE_HALT, 0, 0, 1, 2, 2);
	/* the collector's code, touching the program's data: dropped by its instruction address */
	r[3] = (trace_record){ 0x500010, 0x800000, 0, 0, 8, TRACE_WRITE, TRACE_HAS_INSTRUCTION_ADDRESS };
	r[4] = (trace_record){ 0x800000, 0x800000, 0, 0, 4, TRACE_INSTRUCTION, TRACE_HAS_INSTRUCTION_ADDRESS };
	/* no instruction address: only its own address counts */
	r[5] = (trace_record){ 0x500010, 0x800000, 0, 0, 8, TRACE_READ, 0 };
	trace_filter filter;
	memset(&filter, 0, sizeof filter);
	plumb_status status;
	filter.drop_collector_markers = 1;
	cr_assert_eq(trace_filter_add_range(&filter, "0x800000-0x801000", &status), 0, "%s", status.message);
	trace_filter_counts counts = { 0, 0, 0 };
	size_t kept = trace_filter_apply(&filter, r, 6, &counts);
	cr_assert_eq(kept, 3);
	cr_assert_eq(r[0].address, 0x401000);
	cr_assert_eq(r[1].address, 0x900000);
	cr_assert_eq(r[2].kind, TRACE_READ);
	cr_assert_eq(counts.references_in, 5);
	cr_assert_eq(counts.references_dropped, 2);
	cr_assert_eq(counts.markers_dropped, 1);
	cr_assert_eq(trace_filter_add_range(&filter, "4096-4096", &status), -1);
	cr_assert_str_eq(status.message, "the range '4096-4096' is empty: its end must be above its start");
	cr_assert_eq(trace_filter_add_range(&filter, "-1-5", &status), -1);
	cr_assert_eq(trace_filter_add_range(&filter, "0x10-0x20junk", &status), -1);
	cr_assert_str_eq(status.message, "'0x10-0x20junk' is not an address range LOW-HIGH (such as 0x400000-0x401000)");
}

/* Issue 29: a leading zero is decimal, as in every number plumb reads
 * ("010-020" was 8-16). */
Test(trace_buffer, a_range_with_leading_zeros_is_decimal)
{
	trace_filter filter;
	memset(&filter, 0, sizeof filter);
	plumb_status status;
	cr_assert_eq(trace_filter_add_range(&filter, "010-020", &status), 0, "%s", status.message);
	cr_assert_eq(filter.low[0], 10);
	cr_assert_eq(filter.high[0], 20);
	cr_assert_eq(trace_filter_add_range(&filter, "0x10-0x20", &status), 0, "%s", status.message);
	cr_assert_eq(filter.low[1], 16);
	cr_assert_eq(filter.high[1], 32);
	cr_assert_eq(trace_filter_add_range(&filter, "5-+9", &status), -1);
}

Test(trace_buffer, a_bad_collector_marker_is_an_error_naming_it)
{
	/* header 0x80, control: collector, type 2 (unknown) */
	const unsigned char bad_type[] = { 0x80, 0x20, 0x02, 0, 0, 0, 0 };
	/* a count of 2^40 */
	const unsigned char bad_count[] = { 0x80, 0x20, 0x00, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20 };
	/* cut inside its varints */
	const unsigned char cut[] = { 0x80, 0x20, 0x00, 0x80 };
	const unsigned char *inputs[] = { bad_type, bad_count, cut };
	const size_t sizes[] = { sizeof bad_type, sizeof bad_count, sizeof cut };
	const char *errors[] = { "bad collector marker type", "a collector marker's index, times or count out of range",
	                         "collector marker runs past the end of the block payload" };
	for (int k = 0; k < 3; k++) {
		trace_codec_state state;
		memset(&state, 0, sizeof state);
		trace_codec_reset(&state);
		const unsigned char *cursor = inputs[k];
		const char *error = NULL;
		trace_record r;
		size_t got = trace_codec_decode(&state, &cursor, inputs[k] + sizes[k], &r, 1, &error);
		cr_assert_eq(got, 0, "input %d", k);
		cr_assert_str_eq(error, errors[k], "input %d", k);
	}
}
