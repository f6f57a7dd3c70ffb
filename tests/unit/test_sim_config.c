/* The configuration format: parsing, clear errors naming the line, presets,
 * geometry validation and the writer's round trip; and the event names. */
#include <errno.h>
#include <stdio.h>
#include "sim_test_util.h"

static int parse(sim_config *c, const char *text, plumb_status *status)
{
	sim_config_default(c);
	return sim_config_parse(c, text, strlen(text), "test.conf", status);
}

Test(sim_config, parses_sections_and_comments)
{
	sim_config c;
	plumb_status status;
	const char *text =
		"# two cores of a small machine\n"
		"cores = 2\n"
		"protocol = moesi   # dirty sharing\n"
		"[l1d]\n"
		"size = 16K\n"
		"assoc = 4\n"
		"replacement = plru\n"
		"[l3]\n"
		"size = 2M\n"
		"inclusion = exclusive\n"
		"[general]\n"
		"prefetch = stream\n"
		"dtlb.entries = 64\n";
	cr_assert_eq(parse(&c, text, &status), 0, "%s", status.message);
	cr_assert_eq(c.cores, 2);
	cr_assert_eq(c.protocol, SIM_MOESI);
	cr_assert_eq(c.cache[SIM_L1D].size, 16384);
	cr_assert_eq(c.cache[SIM_L1D].assoc, 4);
	cr_assert_eq(c.cache[SIM_L1D].replacement, SIM_PLRU);
	cr_assert_eq(c.cache[SIM_L3].size, 2 << 20);
	cr_assert_eq(c.l3_inclusion, SIM_EXCLUSIVE);
	cr_assert_eq(c.prefetch.kind, SIM_PREFETCH_STREAM);
	cr_assert_eq(c.tlb[SIM_DTLB].entries, 64);
	cr_assert_eq(sim_config_validate(&c, &status), 0, "%s", status.message);
}

static void rejects(const char *text, const char *needle)
{
	sim_config c;
	plumb_status status;
	cr_assert_eq(parse(&c, text, &status), -1, "accepted: %s", text);
	cr_assert(strstr(status.message, needle), "'%s' not in '%s'", needle, status.message);
}

Test(sim_config, errors_name_the_line)
{
	rejects("cores = 2\nl1d.sise = 4K\n", "line 2: unknown key 'l1d.sise'");
	rejects("cores = 65\n", "line 1: cores");
	rejects("protocol = mosi\n", "not one of mesi, msi, moesi, esi");
	rejects("[l1d\n", "line 1: a section is [name]");
	rejects("just words\n", "expected key = value");
	rejects(" = 3\n", "missing key");
	rejects("l2.size = lots\n", "l2.size");
	rejects("classify = maybe\n", "not yes or no");
	rejects("cores =\n", "empty value");
	rejects("l1d.size = none\n", "cannot be absent");
	rejects("preset = vax\n", "unknown preset 'vax'");
}

static void invalid(const char *assignment, const char *needle)
{
	sim_config c;
	plumb_status status;
	sim_config_default(&c);
	/* Several assignments are separated by ';'. */
	char copy[256];
	snprintf(copy, sizeof copy, "%s", assignment);
	for (char *save = NULL, *one = strtok_r(copy, ";", &save); one; one = strtok_r(NULL, ";", &save))
		cr_assert_eq(sim_config_assign(&c, one, &status), 0, "%s", status.message);
	cr_assert_eq(sim_config_validate(&c, &status), -1, "accepted %s", assignment);
	cr_assert(strstr(status.message, needle), "'%s' not in '%s'", needle, status.message);
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), -1);
}

Test(sim_config, bad_geometry_is_rejected)
{
	invalid("l1d.line=48", "not a power of two");
	invalid("l1d.size=1000", "not a multiple of the line size");
	invalid("l1d.assoc=1024", "1024 ways but only 512 lines");
	invalid("l2.line=32", "must not be longer than the L2's");
	invalid("l1d.assoc=7", "do not divide into 7 ways");
	/* Found by 30 minutes of the configuration fuzzer: an inclusive L3
	 * with lines shorter than the L2's held only the missed part of an L2
	 * line, and --check failed on the first reference. */
	invalid("l3.size=1M;l2.line=8K", "an inclusive L3 needs lines at least as long");
	invalid("l3.size=1M;l2.size=none;l1d.line=128;l1i.line=128", "an inclusive L3 needs lines");
}

/* Where an inclusive L3's lines are as long as the level above's or
 * longer, inclusion holds reference by reference. */
Test(sim_config, an_inclusive_l3_with_longer_lines_keeps_inclusion)
{
	sim_config c;
	plumb_status status;
	sim_config_default(&c);
	cr_assert_eq(sim_config_parse(&c, "cores=2\nl3.size=64K\nl3.line=256\nl2.line=64\n", 42, "t", &status), 0,
	             "%s", status.message);
	cr_assert_eq(sim_config_validate(&c, &status), 0, "%s", status.message);
	c.check = true;
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
	for (uint64_t i = 0; i < 20000; i++) {
		trace_record r = { .thread = (uint32_t)(i % 2), .kind = (uint8_t)(i % 3),
		                   .address = 0x10000 + (i * 4168) % (1u << 20), .size = 8 };
		cr_assert_eq(sim_access_batch(s, &r, 1, &status), 0, "%s", status.message);
	}
	cr_assert_eq(sim_check(s, &status), 0, "%s", status.message);
	sim_free(s);
}

Test(sim_config, more_bad_geometry)
{
	sim_config c;
	plumb_status status;
	sim_config_default(&c);
	cr_assert_eq(sim_config_assign(&c, "dtlb.entries=6", &status), 0);
	cr_assert_eq(sim_config_validate(&c, &status), 0, "%s", status.message);
	cr_assert_eq(sim_config_assign(&c, "dtlb.assoc=4", &status), 0);
	cr_assert_eq(sim_config_validate(&c, &status), -1);
	cr_assert(strstr(status.message, "DTLB"), "%s", status.message);
	sim_config_default(&c);
	cr_assert_eq(sim_config_assign(&c, "protocol=esi", &status), 0);
	cr_assert_eq(sim_config_validate(&c, &status), 0, "esi sets write-through: %s", status.message);
	cr_assert_eq(sim_config_assign(&c, "l2.write=back", &status), 0);
	cr_assert_eq(sim_config_validate(&c, &status), -1);
	cr_assert(strstr(status.message, "write-through"), "%s", status.message);
}

Test(sim_config, every_preset_is_valid_and_round_trips)
{
	const char *const *names = sim_preset_names();
	for (size_t i = 0; names[i]; i++) {
		sim_config c, back;
		plumb_status status;
		if (sim_preset(&c, names[i], &status) != 0) {
			cr_assert_str_eq(names[i], "host", "%s: %s", names[i], status.message);
			continue;
		}
		cr_assert_not_null(sim_preset_description(names[i]));
		cr_assert_eq(sim_config_validate(&c, &status), 0, "%s: %s", names[i], status.message);
		char *text = NULL;
		size_t length = 0;
		FILE *f = open_memstream(&text, &length);
		cr_assert_eq(sim_config_write(&c, f), 0);
		fclose(f);
		sim_config_default(&back);
		cr_assert_eq(sim_config_parse(&back, text, length, names[i], &status), 0, "%s: %s", names[i], status.message);
		snprintf(back.name, sizeof back.name, "%s", c.name);
		cr_assert(memcmp(&c, &back, sizeof c) == 0, "%s does not round-trip:\n%s", names[i], text);
		free(text);
		sim *s;
		cr_assert_eq(sim_new(&s, &c, &status), 0, "%s: %s", names[i], status.message);
		sim_free(s);
	}
}

Test(sim_config, event_names)
{
	sim_config c;
	small_config(&c, 1, SIM_MESI);
	sim_trace t = { 0 };
	trace_add(&t, 0, TRACE_READ, 0x1000, 8);
	sim *s = run_trace(&c, &t);
	uint64_t v;
	plumb_status status;
	cr_assert_eq(sim_event_count(s, "PAPI_L1_DCM", 0, &v, &status), 0);
	cr_assert_eq(v, 1);
	cr_assert_eq(sim_event_count(s, "PAPI_L3_TCM", 0, &v, &status), -1);
	cr_assert_eq(status.code, ENOTSUP);
	cr_assert(strstr(status.message, "no L3"), "%s", status.message);
	cr_assert_eq(sim_event_count(s, "PAPI_BR_MSP", 0, &v, &status), -1);
	cr_assert_eq(status.code, ENOTSUP);
	cr_assert_eq(sim_event_count(s, "PAPI_NOPE", 0, &v, &status), -1);
	cr_assert_eq(status.code, ENOENT);
	cr_assert_eq(sim_event_count(s, "PAPI_L1_DCM", 3, &v, &status), -1);
	for (size_t i = 0; sim_event_name(i); i++)
		cr_assert_not_null(sim_event_description(sim_event_name(i)));
	sim_free(s);
	trace_release(&t);
}

Test(sim_config, thread_map_error_mode)
{
	sim_config c;
	small_config(&c, 2, SIM_MESI);
	c.thread_map = SIM_MAP_ERROR;
	sim_trace t = { 0 };
	for (uint32_t thread = 0; thread < 3; thread++)
		trace_add(&t, thread * 10, TRACE_READ, 0x1000, 8);
	sim *s;
	plumb_status status;
	cr_assert_eq(sim_new(&s, &c, &status), 0);
	cr_assert_eq(sim_access_batch(s, t.records, t.count, &status), -1);
	cr_assert(strstr(status.message, "2 cores"), "%s", status.message);
	sim_free(s);
	c.thread_map = SIM_MAP_MODULO;
	s = run_trace(&c, &t);
	cr_assert_eq(sim_thread_count(s), 3);
	cr_assert_eq(sim_thread(s, 2)->core, 0, "the third thread folds onto core 0");
	sim_free(s);
	trace_release(&t);
}

static void assign_fails_with(const char *assignment, const char *expected)
{
	sim_config c;
	plumb_status status;
	sim_config_default(&c);
	cr_assert_eq(sim_config_assign(&c, assignment, &status), -1, "accepted %s", assignment);
	cr_assert_str_eq(status.message, expected);
}

/* The key's parse error was once formatted into its own buffer
 * ("l1d.assoc: l1d.assoc: of range [1, 1048576]"): each message names the key once. */
Test(sim_config, a_bad_number_names_its_key_once)
{
	assign_fails_with("l1d.assoc=0", "l1d.assoc: '0' is out of range [1, 1048576]");
	assign_fails_with("prefetch.depth=99999", "prefetch.depth: '99999' is out of range [1, 64]");
	assign_fails_with("memory.latency=x", "memory.latency: 'x' is not an integer");
	assign_fails_with("cores=0", "cores: '0' is out of range [1, 64]");
	assign_fails_with("max_access_size=70000", "max_access_size: '70000' is out of range [0, 65535]");
	assign_fails_with("seed=-1", "seed: '-1' is not a non-negative integer");
	assign_fails_with("l2.size=lots", "l2.size: 'lots' is not a size (examples: 4096, 32K, 1MiB, 2G)");
	sim_config c;
	plumb_status status;
	sim_config_default(&c);
	cr_assert_eq(sim_config_parse(&c, "[l1d]\nassoc = 0\n", 19, "my.cfg", &status), -1);
	cr_assert_str_eq(status.message, "my.cfg: line 2: l1d.assoc: '0' is out of range [1, 1048576]");
}

/* explain --on: another machine's caches from its report's topo section */
static output_report *topo_of(const char *caches_rows)
{
	char text[4096];
	snprintf(text, sizeof text,
	         "{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"topo\", \"tables\": ["
	         "{\"name\": \"machine\", \"columns\": [{\"name\": \"property\"}, {\"name\": \"value\"}],"
	         " \"rows\": [{\"property\": \"cores\", \"value\": \"4\"}]},"
	         "{\"name\": \"caches\", \"columns\": [{\"name\": \"level\"}, {\"name\": \"type\"}, {\"name\": \"size\"},"
	         " {\"name\": \"line\"}, {\"name\": \"ways\"}], \"rows\": [%s]}]}", caches_rows);
	output_report *r = NULL;
	plumb_status st;
	cr_assert_eq(output_report_parse_json(text, &r, &st), 0, "%s", st.message);
	return r;
}

Test(sim_config, preset_from_topo_takes_every_level)
{
	output_report *topo = topo_of(
	    "{\"level\": \"L1\", \"type\": \"data\", \"size\": 32768, \"line\": 64, \"ways\": 8},"
	    "{\"level\": \"L1\", \"type\": \"instruction\", \"size\": 65536, \"line\": 64, \"ways\": 4},"
	    "{\"level\": \"L2\", \"type\": \"unified\", \"size\": 524288, \"line\": 64, \"ways\": 8},"
	    "{\"level\": \"L3\", \"type\": \"unified\", \"size\": 8388608, \"line\": 64, \"ways\": 16}");
	sim_config c;
	plumb_status st;
	cr_assert_eq(sim_preset_from_topo(&c, topo, &st), 0, "%s", st.message);
	cr_expect_eq(c.cache[SIM_L1D].size, 32768);
	cr_expect_eq(c.cache[SIM_L1I].assoc, 4);
	cr_expect_eq(c.cache[SIM_L2].size, 524288);
	cr_expect_eq(c.cache[SIM_L3].size, 8388608);
	cr_expect_eq(c.cache[SIM_L3].assoc, 16);
	cr_expect_eq(c.cores, 4);
	cr_expect_eq(sim_config_validate(&c, &st), 0, "%s", st.message);
	output_report_free(topo);
}

Test(sim_config, preset_from_topo_without_l1_says_so)
{
	output_report *topo = topo_of("{\"level\": \"L2\", \"type\": \"unified\", \"size\": 524288, \"line\": 64, \"ways\": 8}");
	sim_config c;
	plumb_status st;
	cr_expect_eq(sim_preset_from_topo(&c, topo, &st), -1);
	cr_expect(strstr(st.message, "L1"), "%s", st.message);
	output_report_free(topo);
}
