/* What `plumb sim` asks of the library around the simulator: the
 * configuration from a preset, a file and settings in order; a reader fed
 * through; the code map of a run; the annotation file. */
#include <criterion/criterion.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sim/sim.h"
#include "../temp_folder.h"

Test(sim_run, a_geometry_sets_size_ways_and_line_or_removes_a_level)
{
	sim_config config;
	sim_config_default(&config);
	plumb_status status;
	cr_assert_eq(sim_config_set_geometry(&config, "l1d", "64K,4,128", &status), 0, "%s", status.message);
	cr_expect_eq(config.cache[SIM_L1D].size, 65536);
	cr_expect_eq(config.cache[SIM_L1D].assoc, 4);
	cr_expect_eq(config.cache[SIM_L1D].line, 128);
	cr_assert_eq(sim_config_set_geometry(&config, "l2", "none", &status), 0, "%s", status.message);
	cr_expect_eq(config.cache[SIM_L2].size, 0);
	cr_expect_eq(sim_config_set_geometry(&config, "l1d", "64K,4", &status), -1);
	cr_expect_str_eq(status.message, "--l1d: '64K,4' is not SIZE,ASSOC,LINE");
	cr_expect_eq(sim_config_set_geometry(&config, "l1d", "64K,4,64,1", &status), -1);
}

Test(sim_run, settings_apply_in_order_after_the_preset)
{
	sim_setting settings[] = {
		{ NULL, "cores=2", false },
		{ "l1d", "16K,2,64", true },
		{ "protocol", "moesi", false },
		{ NULL, "cores=4", false },
	};
	sim_config config;
	sim_config_origin origin;
	plumb_status status;
	cr_assert_eq(sim_config_choose(&config, "cachegrind", NULL, settings, 4, &origin, &status), 0, "%s",
	             status.message);
	cr_expect_eq(config.cores, 4, "the last setting wins");
	cr_expect_eq(config.cache[SIM_L1D].size, 16384);
	cr_expect_eq(config.protocol, SIM_MOESI);
	cr_expect_str_eq(origin.machine, "", "a named preset is not this machine");
	cr_expect_str_eq(origin.host_problem, "");

	cr_expect_eq(sim_config_choose(&config, "nosuch", NULL, NULL, 0, &origin, &status), -1);
	sim_setting bad = { NULL, "l1d.assoc=3", false };
	cr_expect_eq(sim_config_choose(&config, "cachegrind", NULL, &bad, 1, &origin, &status), -1,
	             "the result is validated");
}

Test(sim_run, without_a_preset_it_is_this_machine_or_the_default_with_why)
{
	sim_setting one = { NULL, "cores=1", false };
	sim_config config;
	sim_config_origin origin;
	plumb_status status;
	cr_assert_eq(sim_config_choose(&config, NULL, NULL, &one, 1, &origin, &status), 0, "%s", status.message);
	cr_expect((origin.machine[0] != 0) != (origin.host_problem[0] != 0), "host, or the reason it is not");
	if (origin.machine[0])
		cr_expect(strstr(origin.machine, ", changed by 1 command-line setting") != NULL, "%s", origin.machine);
}

static const char lackey[] = "I  00400000,4\n L 00001000,8\n S 00001000,8\n L 00002000,8\n";

Test(sim_run, a_reader_runs_through_the_simulator)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, "cachegrind", &status), 0);
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	cr_assert_eq(sim_annotate(s, &status), 0, "%s", status.message);
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_memory(&reader, lackey, sizeof lackey - 1, TRACE_FORMAT_LACKEY, &status), 0,
	             "%s", status.message);
	uint64_t records = 0;
	cr_assert_eq(sim_run_reader(s, reader, NULL, false, &records, &status), 0, "%s", status.message);
	cr_expect_eq(records, 4);
	const sim_stats *stats = sim_statistics(s);
	cr_expect_eq(stats->core[0].cache[SIM_L1D].accesses[SIM_READ], 2);
	cr_expect_eq(stats->core[0].cache[SIM_L1D].misses[SIM_READ], 2);
	cr_expect_eq(stats->core[0].cache[SIM_L1D].misses[SIM_WRITE], 0, "the store hits the line the load brought");

	trace_code_map *map = (trace_code_map *)&map;
	char loaded[256] = "x";
	cr_assert_eq(sim_code_map_find(reader, NULL, &map, loaded, sizeof loaded, &status), 0);
	cr_expect_null(map, "lackey names no code");
	cr_expect_str_eq(loaded, "");
	cr_assert_eq(sim_code_map_find(reader, "/nonexistent/t.lackey", &map, loaded, sizeof loaded, &status), 0);
	cr_expect_null(map, "no TRACE.code beside the trace");
	trace_reader_close(reader, NULL);

	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-sim-run-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(sim_write_annotation_file(path, s, NULL, "t.lackey", false, &status), 0, "%s", status.message);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char text[4096];
	size_t length = fread(text, 1, sizeof text - 1, f);
	text[length] = 0;
	fclose(f);
	cr_expect(strstr(text, "cmd: t.lackey\n") != NULL, "%s", text);
	cr_expect(strstr(text, "events: ") != NULL, "%s", text);
	unlink(path);
	cr_expect_eq(sim_write_annotation_file("/nonexistent/dir/out", s, NULL, "t", false, &status), -1);
	sim_free(s);
}

/* The meta value at key, formatted, or "" when the report has no such key. */
static const char *meta_at(const output_report *report, const char *key, char *buffer, size_t length)
{
	buffer[0] = 0;
	for (size_t i = 0; i < output_meta_count(report); i++)
		if (strcmp(output_meta_key(report, i), key) == 0)
			output_meta_format(report, i, buffer, length);
	return buffer;
}

Test(sim_run, the_report_says_what_was_run_in_its_meta_and_notes)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, "cachegrind", &status), 0);
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	sim_config_origin origin = { "host (hwloc: test)", "no caches in sysfs" };
	sim_run_facts facts = { .trace = "t.lackey", .format = TRACE_FORMAT_LACKEY, .records = 4, .interleave = 8,
		                    .interleave_window = 1024, .fair_sched = true, .origin = &origin,
		                    .code_map = "t.lackey.code", .truncated = true, .truncated_bytes = 12, .checked = true };
	output_report *report = sim_run_report(s, &facts, 10, &status);
	cr_assert_not_null(report, "%s", status.message);
	static const char *const keys[] = { "trace", "format", "records", "interleave", "valgrind scheduling", "machine",
		                                "code_map" };
	cr_assert_geq(output_meta_count(report), 7);
	for (size_t i = 0; i < 7; i++)
		cr_expect_str_eq(output_meta_key(report, i), keys[i], "the meta in its order");
	char value[256];
	cr_expect_str_eq(meta_at(report, "trace", value, sizeof value), "t.lackey");
	cr_expect_str_eq(meta_at(report, "format", value, sizeof value), "lackey");
	cr_expect_str_eq(meta_at(report, "records", value, sizeof value), "4");
	cr_expect_str_eq(meta_at(report, "interleave", value, sizeof value),
	                 "8 references of each thread in turn (window 1024 records)");
	cr_expect_str_eq(meta_at(report, "valgrind scheduling", value, sizeof value), "--fair-sched=yes");
	cr_expect_str_eq(meta_at(report, "machine", value, sizeof value), "host (hwloc: test)");
	cr_expect_str_eq(meta_at(report, "code_map", value, sizeof value), "t.lackey.code");
	size_t notes = output_note_count(report);
	cr_assert_geq(notes, 3);
	cr_expect_str_eq(output_note_at(report, 0), "this machine's caches could not be read (no caches in sysfs): "
	                                             "the generic default machine was simulated");
	cr_expect_str_eq(output_note_at(report, 1), "the trace was cut short: 12 bytes of an incomplete block were ignored");
	cr_expect(strncmp(output_note_at(report, notes - 1), "--check: every invariant held", 29) == 0,
	          "the check's note comes last, after the statistics' own");
	output_report_free(report);

	/* the plain run: a trace in its order, no origin, no code map */
	sim_run_facts plain = { .trace = "-", .format = TRACE_FORMAT_NATIVE, .records = 0 };
	report = sim_run_report(s, &plain, 10, &status);
	cr_assert_not_null(report, "%s", status.message);
	cr_expect_str_eq(meta_at(report, "interleave", value, sizeof value), "");
	cr_expect_str_eq(meta_at(report, "valgrind scheduling", value, sizeof value), "");
	cr_expect_str_eq(meta_at(report, "machine", value, sizeof value), "");
	cr_expect_str_eq(meta_at(report, "code_map", value, sizeof value), "");
	for (size_t i = 0; i < output_note_count(report); i++)
		cr_expect(strncmp(output_note_at(report, i), "--check", 7) != 0, "%s", output_note_at(report, i));
	output_report_free(report);
	sim_free(s);
}

Test(sim_run, the_command_text_is_one_line)
{
	char *words[] = { (char *)"./prog", (char *)"-x", (char *)"a\nb\rc" };
	char *text = sim_command_text(words, 3);
	cr_assert_not_null(text);
	cr_expect_str_eq(text, "./prog -x a b c");
	free(text);
	text = sim_command_text(words, 0);
	cr_assert_not_null(text);
	cr_expect_str_eq(text, "");
	free(text);
}

/* A lackey text of two threads taking turns: fetches, loads, stores and
 * modifies near each other, some far, some shared. */
static char *two_thread_lackey(size_t references)
{
	char *text = malloc(references * 32 + 64), *p = text;
	cr_assert_not_null(text);
	uint64_t x = 88172645463325252ull;
	unsigned thread = 1;
	for (size_t i = 0; i < references; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 500 == 0) {
			thread = 3 - thread;
			p += sprintf(p, "--1--   SCHED[%u]: thread %u\n", thread, thread);
		}
		static const char *const kinds[] = { "I ", " L", " S", " M" };
		unsigned kind = (unsigned)(x >> 8) % 4;
		uint64_t address = kind == 0 ? 0x400000 + (x >> 16) % 4096 : 0x10000 + (x >> 20) % 40000;
		p += sprintf(p, "%s %08llx,%u\n", kinds[kind], (unsigned long long)address, 1u << ((x >> 40) % 4));
	}
	return text;
}

static sim *made(const char *preset, uint32_t cores, bool classify, bool check)
{
	sim_config config;
	plumb_status status;
	cr_assert_eq(sim_preset(&config, preset, &status), 0, "%s", status.message);
	config.cores = cores;
	config.classify = classify;
	config.check = check;
	sim *s;
	cr_assert_eq(sim_new(&s, &config, &status), 0, "%s", status.message);
	return s;
}

static void same_run(const sim *a, const sim *b)
{
	cr_assert(memcmp(sim_statistics(a), sim_statistics(b), sizeof(sim_stats)) == 0, "statistics differ");
	cr_assert_eq(sim_thread_count(a), sim_thread_count(b));
	for (size_t i = 0; i < sim_thread_count(a); i++)
		cr_assert(memcmp(sim_thread(a, i), sim_thread(b, i), sizeof(sim_thread_stats)) == 0, "thread %zu", i);
}

/* One feed of several simulators (sim_feed_reader) gives each what a run of
 * its own gives, whatever the batch size. */
Test(sim_run, one_feed_gives_every_simulator_what_a_run_of_its_own_gives)
{
	char *text = two_thread_lackey(20000);
	plumb_status status;
	sim *together[3] = { made("cachegrind", 1, false, false), made("franz08", 2, true, false),
	                     made("zen4", 2, false, true) };
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_memory(&reader, text, strlen(text), TRACE_FORMAT_LACKEY, &status), 0);
	sim_feed feed = { .sims = together, .count = 3, .batch = 777 };
	cr_assert_eq(sim_feed_reader(&feed, reader, &status), 0, "%s", status.message);
	cr_expect_eq(feed.records, 20000);
	trace_reader_close(reader, NULL);
	sim *alone[3] = { made("cachegrind", 1, false, false), made("franz08", 2, true, false),
	                  made("zen4", 2, false, true) };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(trace_reader_open_memory(&reader, text, strlen(text), TRACE_FORMAT_LACKEY, &status), 0);
		uint64_t records = 0;
		cr_assert_eq(sim_run_reader(alone[i], reader, NULL, false, &records, &status), 0, "%s", status.message);
		cr_expect_eq(records, 20000);
		trace_reader_close(reader, NULL);
		same_run(together[i], alone[i]);
		sim_free(together[i]);
		sim_free(alone[i]);
	}
	free(text);
}

typedef struct watcher {
	uint64_t seen;
	size_t batches;
	sim *late;           /* added after the first batch */
	size_t fail_at;      /* the batch whose observation fails (0: none) */
} watcher;

static int watch(sim_feed *feed, const trace_record *records, size_t n, const trace_compact *compact,
                 plumb_status *status)
{
	watcher *w = feed->context;
	cr_assert_null(compact, "lackey text has no entries");
	cr_assert(n == 0 || records != NULL);
	w->seen += n;
	if (++w->batches == w->fail_at)
		return plumb_fail(status, EIO, "the watcher stops at batch %zu", w->batches);
	if (w->batches == 2 && w->late) {
		feed->sims[feed->count++] = w->late;
		w->late = NULL;
	}
	return 0;
}

/* The observer sees every batch before the simulators do, may add a
 * simulator between batches, and its error stops the feed. */
Test(sim_run, a_feed_observer_sees_every_batch_and_may_add_a_simulator)
{
	char *text = two_thread_lackey(5000);
	plumb_status status;
	sim *sims[2] = { made("cachegrind", 1, false, false), NULL };
	sim *late = made("cachegrind", 1, false, false);
	watcher w = { .late = late };
	trace_reader *reader;
	cr_assert_eq(trace_reader_open_memory(&reader, text, strlen(text), TRACE_FORMAT_LACKEY, &status), 0);
	sim_feed feed = { .sims = sims, .count = 1, .batch = 1000, .observe = watch, .context = &w };
	cr_assert_eq(sim_feed_reader(&feed, reader, &status), 0, "%s", status.message);
	trace_reader_close(reader, NULL);
	cr_expect_eq(w.seen, 5000);
	cr_expect_eq(feed.records, 5000);
	cr_expect_eq(w.batches, 5);
	cr_assert_eq(feed.count, 2);
	/* the late one took the last four batches: 4000 references */
	const sim_stats *all = sim_statistics(sims[0]), *part = sim_statistics(late);
	uint64_t a = 0, b = 0;
	for (int k = 0; k < SIM_KIND_COUNT; k++) {
		a += all->references[k];
		b += part->references[k];
	}
	cr_expect_gt(a, b);
	cr_expect_geq(b, 4000, "every record after the first batch, modifies counted twice");

	watcher failing = { .fail_at = 3 };
	sim *one = made("cachegrind", 1, false, false);
	cr_assert_eq(trace_reader_open_memory(&reader, text, strlen(text), TRACE_FORMAT_LACKEY, &status), 0);
	sim_feed stopped = { .sims = &one, .count = 1, .batch = 1000, .observe = watch, .context = &failing };
	cr_expect_eq(sim_feed_reader(&stopped, reader, &status), -1);
	cr_expect_str_eq(status.message, "the watcher stops at batch 3");
	cr_expect_eq(stopped.records, 2000, "two batches went through");
	trace_reader_close(reader, NULL);
	sim_free(one);
	sim_free(sims[0]);
	sim_free(late);
	free(text);
}
