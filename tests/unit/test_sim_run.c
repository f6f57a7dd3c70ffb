/* What `plumb sim` asks of the library around the simulator: the
 * configuration from a preset, a file and settings in order; a reader fed
 * through; the code map of a run; the annotation file. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plumb/sim.h"

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

	char path[] = "/tmp/plumb-sim-run-XXXXXX";
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
