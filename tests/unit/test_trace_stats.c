/* trace_stats: exact counts, and the HyperLogLog fallback past the limit. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "trace/trace_stats.h"

Test(trace_stats, exact_counts_and_straddles)
{
	trace_stats s;
	plumb_status status;
	cr_assert_eq(trace_stats_init(&s, 64, 4096, 1000, &status), 0);
	trace_record r[4] = {
		{ .address = 0x1000, .size = 8, .kind = TRACE_READ },
		{ .address = 0x103c, .size = 8, .kind = TRACE_WRITE, .thread = 3 },   /* straddles 0x1000/0x1040 */
		{ .address = 0x400000, .size = 5, .kind = TRACE_INSTRUCTION },
		{ .address = 0xffffffffffffffffull, .size = 4, .kind = TRACE_READ },   /* wraps: counted to the end */
	};
	cr_assert_eq(trace_stats_add(&s, r, 4, &status), 0);
	bool exact;
	cr_assert_eq(trace_distinct_count(&s.lines, &exact), 4);
	cr_assert(exact);
	cr_assert_eq(trace_distinct_count(&s.pages, &exact), 3);
	cr_assert_eq(s.line_straddles, 1);
	cr_assert_eq(s.thread_count, 2);
	cr_assert_eq(s.threads[1].thread, 3);
	cr_assert_eq(s.max_address[1], 0xffffffffffffffffull);
	cr_assert_eq(s.sizes[7], 1);   /* the 5-byte fetch */
	trace_stats_free(&s);
}

Test(trace_stats, estimate_past_the_limit_is_close_and_marked)
{
	trace_stats s;
	plumb_status status;
	cr_assert_eq(trace_stats_init(&s, 64, 4096, 10000, &status), 0);
	enum { N = 1000000 };
	trace_record *r = calloc(N, sizeof *r);
	for (uint64_t i = 0; i < N; i++)
		r[i] = (trace_record){ .address = (i * 2654435761u % N) * 64, .size = 8, .kind = TRACE_READ };
	cr_assert_eq(trace_stats_add(&s, r, N, &status), 0);
	bool exact;
	uint64_t lines = trace_distinct_count(&s.lines, &exact);
	cr_assert(!exact);
	cr_assert(lines > N * 0.97 && lines < N * 1.03, "estimate %llu for %d", (unsigned long long)lines, N);
	uint64_t pages = trace_distinct_count(&s.pages, &exact);
	cr_assert(!exact);   /* 15625 pages, over the limit too */
	cr_assert(pages > 15625 * 0.97 && pages < 15625 * 1.03, "estimate %llu for 15625", (unsigned long long)pages);
	free(r);
	trace_stats_free(&s);
}
