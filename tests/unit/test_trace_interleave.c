/* Re-interleaving a trace's threads (src/trace/trace_interleave.c, plumb sim
 * --interleave K): the exact order it produces, and the exact coherence
 * counts of a hand-made two-thread trace with and without it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "trace/trace.h"

/* A lackey trace: each thread's writes one after the other, as Valgrind
 * runs threads by turns (SCHED[n] = thread n-1). */
static char *two_threads(int writes, uint64_t address0, uint64_t address1)
{
	size_t size = (size_t)writes * 2 * 32 + 256;
	char *text = malloc(size), *p = text;
	cr_assert_not_null(text);
	for (int i = 0; i < writes; i++)
		p += sprintf(p, " S %08llx,8\n", (unsigned long long)address0);
	p += sprintf(p, "--1--   SCHED[2]: thread 1\n");
	for (int i = 0; i < writes; i++)
		p += sprintf(p, " S %08llx,8\n", (unsigned long long)address1);
	return text;
}

/* Every record, through an interleaver (quantum 0: none). */
static size_t read_all(const char *text, uint64_t quantum, size_t window, trace_record *out, size_t max)
{
	trace_reader *reader;
	plumb_status status;
	cr_assert_eq(trace_reader_open_memory(&reader, text, strlen(text), TRACE_FORMAT_LACKEY, &status), 0, "%s",
	             status.message);
	trace_interleaver *iv = NULL;
	if (quantum)
		cr_assert_eq(trace_interleaver_new(&iv, quantum, window, &status), 0, "%s", status.message);
	size_t count = 0;
	for (;;) {
		const trace_record *batch;
		/* odd batch sizes: turns and refills cut anywhere */
		long n = iv ? trace_interleaver_view(iv, reader, &batch, 7, &status) : trace_reader_view(reader, &batch, 7, &status);
		cr_assert_geq(n, 0, "%s", status.message);
		if (n == 0)
			break;
		cr_assert_leq(count + (size_t)n, max);
		memcpy(out + count, batch, (size_t)n * sizeof *batch);
		count += (size_t)n;
	}
	trace_interleaver_free(iv);
	trace_reader_close(reader, NULL);
	return count;
}

Test(trace_interleave, turns_of_k_records_in_thread_order)
{
	char *text = two_threads(10, 0x1000, 0x2000);
	static trace_record r[64];
	cr_assert_eq(read_all(text, 3, 1000, r, 64), 20);
	/* 3 of thread 0, 3 of thread 1, ..., then the rest */
	static const uint32_t expected[20] = { 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1 };
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(r[i].thread, expected[i], "record %d: thread %u", i, r[i].thread);
		cr_assert_eq(r[i].address, r[i].thread ? 0x2000u : 0x1000u);
	}
	/* a quantum larger than the trace: each thread's records in one turn */
	cr_assert_eq(read_all(text, 1000, 1000, r, 64), 20);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(r[i].thread, i < 10 ? 0u : 1u);
	free(text);
}

Test(trace_interleave, a_small_window_keeps_every_record_and_each_threads_order)
{
	/* addresses count up within each thread, so order is checkable */
	char *text = malloc(64 * 1024), *p = text;
	for (int i = 0; i < 500; i++)
		p += sprintf(p, " L %08x,4\n", 0x10000 + 4 * i);
	p += sprintf(p, "--1--   SCHED[2]: t\n");
	for (int i = 0; i < 300; i++)
		p += sprintf(p, " L %08x,4\n", 0x80000 + 4 * i);
	p += sprintf(p, "--1--   SCHED[1]: t\n");
	for (int i = 500; i < 700; i++)
		p += sprintf(p, " L %08x,4\n", 0x10000 + 4 * i);
	static trace_record r[1000];
	cr_assert_eq(read_all(text, 1, 64, r, 1000), 1000);
	uint64_t next[2] = { 0x10000, 0x80000 };
	size_t switches = 0;
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(r[i].address, next[r[i].thread], "record %d", i);
		next[r[i].thread] += 4;
		switches += i > 0 && r[i].thread != r[i - 1].thread;
	}
	/* the window of 64 records sees both threads around the switches */
	cr_assert_gt(switches, 20);
	free(text);
}

static uint64_t invalidations(const char *text, uint64_t quantum, uint64_t *false_sharing)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, "default", &status), 0);
	cr_assert_eq(sim_config_assign(&config, "cores=2", &status), 0);
	cr_assert_eq(sim_config_assign(&config, "protocol=mesi", &status), 0);
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	static trace_record r[1024];
	size_t n = read_all(text, quantum, TRACE_INTERLEAVE_WINDOW, r, 1024);
	cr_assert_eq(sim_access_batch(s, r, n, &status), 0, "%s", status.message);
	const sim_stats *st = sim_statistics(s);
	uint64_t sent = 0;
	*false_sharing = 0;
	for (int c = 0; c < 2; c++) {
		sent += st->core[c].coherence.invalidations_sent;
		*false_sharing += st->core[c].cache[SIM_L1D].coherence_false;
	}
	sim_free(s);
	return sent;
}

/* Two threads, 100 writes each to adjacent 8-byte counters of one line: as
 * Valgrind runs them, by turns, one invalidation; in lockstep (--interleave
 * 1) every write after the first takes the line from the other core. */
Test(trace_interleave, adjacent_counters_share_a_line_only_when_interleaved)
{
	char *text = two_threads(100, 0x1000, 0x1008);
	uint64_t false_sharing;
	cr_assert_eq(invalidations(text, 0, &false_sharing), 1);
	cr_assert_eq(false_sharing, 0, "by turns the line moves once, on a write miss that is no coherence miss");
	cr_assert_eq(invalidations(text, 1, &false_sharing), 199);
	cr_assert_eq(false_sharing, 198, "every miss but the first two is false sharing");
	cr_assert_eq(invalidations(text, 10, &false_sharing), 19);
	cr_assert_eq(false_sharing, 18);
	free(text);
}

Test(trace_interleave, bad_arguments)
{
	trace_interleaver *iv;
	plumb_status status;
	cr_assert_eq(trace_interleaver_new(&iv, 0, 100, &status), -1);
	cr_assert_not_null(strstr(status.message, "at least 1"));
	cr_assert_eq(trace_interleaver_new(&iv, 1, 1, &status), -1);
}
