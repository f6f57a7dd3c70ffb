/* Jouppi stream buffers: hand-counted oracles for head-only and any-entry
 * lookup, strides, coherence taking lines out of a buffer, the L2 evicting
 * them, and seed 000's "shared data is not prefetched" switch.  Every run
 * has --check on, which also checks the buffers' bookkeeping. */
#include "sim_test_util.h"

#define BASE 0x200000ull

static void stream_config(sim_config *c, uint32_t cores, bool with_l2, uint32_t streams, uint32_t depth,
                          sim_stream_lookup lookup)
{
	small_config(c, cores, SIM_MESI);
	c->cache[SIM_L2].size = with_l2 ? 256 * 1024 : 0;
	c->prefetch.kind = SIM_PREFETCH_STREAM;
	c->prefetch.streams = streams;
	c->prefetch.depth = depth;
	c->prefetch.lookup = lookup;
}

static const sim_cache_stats *l1d(const sim *s, uint32_t core)
{
	return &sim_statistics(s)->core[core].cache[SIM_L1D];
}

static const sim_prefetch_stats *pf(const sim *s, uint32_t core)
{
	return &sim_statistics(s)->core[core].prefetch;
}

/* Seed 000's uniprocessor L1 miss benchmark (one read per new line): with a
 * stream buffer only the first read misses, which is why its hardware counts
 * "approached zero" (notes 000, s5.2). */
Test(sim_stream, sequential_lines_miss_once)
{
	for (int with_l2 = 0; with_l2 < 2; with_l2++) {
		sim_config c;
		stream_config(&c, 1, with_l2, 1, 4, SIM_LOOKUP_HEAD);
		sim_trace t = { 0 };
		for (int i = 0; i < 100; i++)
			trace_add(&t, 0, TRACE_READ, BASE + 64ull * i, 8);
		sim *s = run_trace(&c, &t);
		cr_assert_eq(l1d(s, 0)->accesses[SIM_READ], 100);
		cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 1);
		cr_assert_eq(pf(s, 0)->stream_hits, 99);
		cr_assert_eq(pf(s, 0)->useful, 99);
		cr_assert_eq(pf(s, 0)->allocations, 1);
		cr_assert_eq(pf(s, 0)->issued, 99 + 4, "4 at the start, then one per hit");
		cr_assert_eq(pf(s, 0)->dropped_unused, 0);
		if (with_l2) {
			const sim_cache_stats *l2 = &sim_statistics(s)->core[0].cache[SIM_L2];
			cr_assert_eq(l2->accesses[SIM_READ], 1 + 103, "the demand miss and every prefetch");
		}
		/* Without prefetching every read is a compulsory miss. */
		c.prefetch.kind = SIM_PREFETCH_NONE;
		sim *plain = run_trace(&c, &t);
		cr_assert_eq(l1d(plain, 0)->misses[SIM_READ], 100);
		sim_free(plain);
		sim_free(s);
		trace_release(&t);
	}
}

/* A stride of 3 lines.  Head-only: the first miss starts a stride-1 buffer;
 * the second (3 lines on) is not at its head, so it drops its copy of that
 * line and retrains the buffer to stride 3, dropping the 3 other lines; the
 * other 18 reads hit the head.  Any-entry: the second read is found in the
 * stride-1 buffer (the 2 lines before it dropped), and so is every later
 * one, each dropping the 2 lines passed over. */
Test(sim_stream, a_stride_of_three_lines)
{
	sim_config c;
	stream_config(&c, 1, true, 2, 4, SIM_LOOKUP_HEAD);
	sim_trace t = { 0 };
	for (int i = 0; i < 20; i++)
		trace_add(&t, 0, TRACE_READ, BASE + 64ull * 3 * i, 8);
	sim *s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 2);
	cr_assert_eq(pf(s, 0)->stream_hits, 18);
	cr_assert_eq(pf(s, 0)->allocations, 2);
	cr_assert_eq(pf(s, 0)->dropped_unused, 4);
	cr_assert_eq(pf(s, 0)->issued, 4 + 4 + 18);
	sim_free(s);

	c.prefetch.lookup = SIM_LOOKUP_ANY;
	s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 1);
	cr_assert_eq(pf(s, 0)->stream_hits, 19);
	cr_assert_eq(pf(s, 0)->allocations, 1);
	cr_assert_eq(pf(s, 0)->dropped_unused, 2 * 19);
	sim_free(s);
	trace_release(&t);
}

/* Two interleaved streams need two buffers: with one, each miss of one
 * stream restarts the buffer the other was using. */
Test(sim_stream, interleaved_streams_need_a_buffer_each)
{
	sim_config c;
	stream_config(&c, 1, true, 2, 4, SIM_LOOKUP_HEAD);
	sim_trace t = { 0 };
	for (int i = 0; i < 50; i++) {
		trace_add(&t, 0, TRACE_READ, BASE + 64ull * i, 8);
		trace_add(&t, 0, TRACE_READ, BASE + 0x100000 + 64ull * i, 8);
	}
	sim *s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 2);
	cr_assert_eq(pf(s, 0)->stream_hits, 98);
	sim_free(s);
	c.prefetch.streams = 1;
	s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 100);
	cr_assert_eq(pf(s, 0)->stream_hits, 0);
	cr_assert_eq(pf(s, 0)->allocations, 100);
	sim_free(s);
	trace_release(&t);
}

/* A buffered line is a private copy: another core's write takes it out of
 * the buffer (an invalidation the writer sends), and the next read of it
 * misses.  With and without an L2 (then the buffer's own state is the
 * core's copy, and the directory lists the core while the buffer holds it). */
Test(sim_stream, a_remote_write_takes_a_buffered_line)
{
	for (int with_l2 = 0; with_l2 < 2; with_l2++) {
		sim_config c;
		stream_config(&c, 2, with_l2, 1, 4, SIM_LOOKUP_HEAD);
		sim_trace t = { 0 };
		trace_add(&t, 0, TRACE_READ, BASE, 8);             /* core 0 misses, buffers lines 1..4 */
		trace_add(&t, 1, TRACE_WRITE, BASE + 64, 8);       /* core 1 writes line 1 */
		trace_add(&t, 0, TRACE_READ, BASE + 64, 8);        /* a coherence miss for core 0 */
		sim *s = run_trace(&c, &t);
		const sim_stats *st = sim_statistics(s);
		cr_assert_eq(st->core[1].coherence.invalidations_sent, 1, "with_l2=%d", with_l2);
		cr_assert_eq(st->core[0].coherence.invalidations_received, 1);
		cr_assert_eq(pf(s, 0)->dropped_invalidated, 1);
		cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 2);
		cr_assert_eq(l1d(s, 0)->coherence_true, 1);
		cr_assert_eq(pf(s, 0)->stream_hits, 0);
		sim_free(s);
		trace_release(&t);
	}
}

/* Seed 000's hypothesis as a switch: with unshared_only a buffer skips the
 * lines another core holds.  Core 0 writes the even lines 14, 12, .., 0
 * (its own buffer, depth 1, retrains to stride -2 and also holds line 15
 * in its L2); core 1 then reads lines 0..15 in order.  Unshared only: core 1
 * misses the 8 even lines and line 15, whose prefetches were skipped.
 * Otherwise only line 0 misses, and the prefetches take core 0's lines. */
Test(sim_stream, unshared_only_skips_lines_another_core_holds)
{
	for (int unshared = 0; unshared < 2; unshared++) {
		sim_config c;
		stream_config(&c, 2, true, 1, 1, SIM_LOOKUP_HEAD);
		c.prefetch.unshared_only = unshared;
		sim_trace t = { 0 };
		for (int i = 14; i >= 0; i -= 2)   /* thread 1 appears first: core 0 */
			trace_add(&t, 1, TRACE_WRITE, BASE + 64ull * i, 8);
		for (int i = 0; i < 16; i++)
			trace_add(&t, 0, TRACE_READ, BASE + 64ull * i, 8);   /* core 1 */
		sim *s = run_trace(&c, &t);
		if (unshared) {
			cr_assert_eq(l1d(s, 1)->misses[SIM_READ], 9, "misses %lu hits %lu alloc %lu issued %lu du %lu di %lu",
			             l1d(s, 1)->misses[SIM_READ], pf(s, 1)->stream_hits, pf(s, 1)->allocations, pf(s, 1)->issued,
			             pf(s, 1)->dropped_unused, pf(s, 1)->dropped_invalidated);
			cr_assert_eq(pf(s, 1)->skipped_shared, 8);
		} else {
			cr_assert_eq(l1d(s, 1)->misses[SIM_READ], 1, "misses %lu hits %lu alloc %lu issued %lu du %lu di %lu",
			             l1d(s, 1)->misses[SIM_READ], pf(s, 1)->stream_hits, pf(s, 1)->allocations, pf(s, 1)->issued,
			             pf(s, 1)->dropped_unused, pf(s, 1)->dropped_invalidated);
			cr_assert_eq(pf(s, 1)->skipped_shared, 0);
			cr_assert_geq(sim_statistics(s)->core[0].coherence.interventions_received, 8);
		}
		sim_free(s);
		trace_release(&t);
	}
}

/* The private L2 includes the buffers: a buffered line the L2 evicts leaves
 * the buffer too.  One L2 set of 2 ways: after the miss on line 0 the buffer
 * fetches lines 1, 2 and 3, and the L2 makes room for 2 by evicting 0, then
 * for 3 by evicting 1, which leaves the buffer; the read of line 1 misses. */
Test(sim_stream, the_l2_evicting_a_buffered_line_takes_it)
{
	sim_config c;
	stream_config(&c, 1, true, 1, 3, SIM_LOOKUP_HEAD);
	c.cache[SIM_L2].size = 128;
	c.cache[SIM_L2].assoc = 2;
	c.cache[SIM_L1D].size = c.cache[SIM_L1I].size = 128;
	c.cache[SIM_L1D].assoc = c.cache[SIM_L1I].assoc = 2;
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_READ, BASE, 8);
	sim *s = run_trace(&c, &t);
	cr_assert_eq(pf(s, 0)->issued, 3);
	cr_assert_eq(pf(s, 0)->dropped_invalidated, 1, "line 1 left with the L2's victim");
	sim_free(s);
	trace_add(&t, 0, TRACE_READ, BASE + 64, 8);
	s = run_trace(&c, &t);
	cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 2);
	cr_assert_eq(pf(s, 0)->stream_hits, 0);
	sim_free(s);
	trace_release(&t);
}

/* A write-around (no-write-allocate L1D) must not leave a stale copy in
 * the buffer. */
Test(sim_stream, a_write_around_drops_the_buffered_copy)
{
	for (int with_l2 = 0; with_l2 < 2; with_l2++) {
		sim_config c;
		stream_config(&c, 1, with_l2, 1, 4, SIM_LOOKUP_HEAD);
		c.cache[SIM_L1D].write_allocate = false;
		sim_trace t = { 0 };
		trace_add(&t, 0, TRACE_READ, BASE, 8);
		trace_add(&t, 0, TRACE_WRITE, BASE + 64, 8);
		trace_add(&t, 0, TRACE_READ, BASE + 64, 8);
		sim *s = run_trace(&c, &t);
		cr_assert_eq(pf(s, 0)->dropped_invalidated, 1);
		cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 2);
		sim_free(s);
		trace_release(&t);
	}
}

Test(sim_stream, configuration)
{
	sim_config c;
	sim_config_default(&c);
	plumb_status status;
	cr_assert_eq(sim_config_assign(&c, "prefetch = stream", &status), 0);
	cr_assert_eq(sim_config_assign(&c, "prefetch.lookup = any", &status), 0);
	cr_assert_eq(c.prefetch.lookup, SIM_LOOKUP_ANY);
	cr_assert_eq(sim_config_assign(&c, "prefetch = stride", &status), 0);
	cr_assert_eq(c.prefetch.kind, SIM_PREFETCH_STRIDE);
	cr_assert_neq(sim_config_assign(&c, "prefetch.lookup = middle", &status), 0);
	cr_assert(strstr(status.message, "prefetch.lookup") != NULL, "%s", status.message);
}

/* One tracker or buffer, two streams one after the other: the second
 * stream takes over the first one's tracker and is prefetched from its own
 * first miss on (a reused tracker must not keep the old stream's window). */
Test(sim_stream, a_reused_stream_starts_afresh)
{
	for (int kind = 0; kind < 2; kind++) {
		sim_config c;
		stream_config(&c, 1, true, 1, 4, SIM_LOOKUP_HEAD);
		c.prefetch.kind = kind ? SIM_PREFETCH_STREAM : SIM_PREFETCH_STRIDE;
		sim_trace t = { 0 };
		for (int i = 0; i < 20; i++)
			trace_add(&t, 0, TRACE_READ, BASE + 64ull * i, 8);
		for (int i = 0; i < 20; i++)   /* below the first: its old window is ahead of it */
			trace_add(&t, 0, TRACE_READ, BASE - 0x100000 + 64ull * i, 8);
		sim *s = run_trace(&c, &t);
		cr_assert_eq(l1d(s, 0)->misses[SIM_READ], 2, "%s: one miss per stream",
		             kind ? "stream" : "stride");
		sim_free(s);
		trace_release(&t);
	}
}
