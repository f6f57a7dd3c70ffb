/* The cachegrind match: a single-core configuration set up like cachegrind
 * (I1, D1, LL; LRU; write-allocate; 'M' as one read; accesses cut to the
 * smallest line; straddling references counted once per level and looked
 * up on both lines) gives exactly cachegrind's I1, D1 and LL miss counts on
 * the lackey trace of the same program.  Valgrind runs the program twice
 * (cachegrind, then lackey); the two tools see the same instruction and
 * data streams because both run it under the same core with the same
 * layout, which this test verifies by the reference counts too.  The
 * program's standard output goes to a regular file in both runs: glibc
 * runs extra code (an isatty ioctl) when it is a character device such as
 * /dev/null, which would make the two instruction streams differ. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "instrument/instrument.h"
#include "trace/trace.h"
#include "sim_test_util.h"
#include "../temp_folder.h"

typedef struct cachegrind_counts {
	uint64_t i_refs, i1_misses, lli_misses;
	uint64_t d_refs, d_reads, d_writes;
	uint64_t d1_misses, d1_read_misses, d1_write_misses;
	uint64_t lld_misses, lld_read_misses, lld_write_misses;
	uint64_t ll_refs, ll_misses;
} cachegrind_counts;

static uint64_t number(const char *text)
{
	uint64_t v = 0;
	for (; *text == ' '; text++)
		;
	for (; (*text >= '0' && *text <= '9') || *text == ','; text++)
		if (*text != ',')
			v = v * 10 + (uint64_t)(*text - '0');
	return v;
}

/* "... D1  misses:   9,599  ( 7,638 rd   + 1,961 wr)" */
static void split(const char *text, uint64_t *total, uint64_t *reads, uint64_t *writes)
{
	*total = number(text);
	const char *open = strchr(text, '(');
	if (open && reads && writes) {
		*reads = number(open + 1);
		const char *plus = strchr(open, '+');
		*writes = plus ? number(plus + 1) : 0;
	}
}

static void parse_cachegrind(const char *path, cachegrind_counts *c)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char line[512];
	memset(c, 0, sizeof *c);
	while (fgets(line, sizeof line, f)) {
		char *colon;
		if (!(colon = strchr(line, ':')))
			continue;
		if (strstr(line, "I   refs:"))
			c->i_refs = number(colon + 1);
		else if (strstr(line, "I1  misses:"))
			c->i1_misses = number(colon + 1);
		else if (strstr(line, "LLi misses:"))
			c->lli_misses = number(colon + 1);
		else if (strstr(line, "D   refs:"))
			split(colon + 1, &c->d_refs, &c->d_reads, &c->d_writes);
		else if (strstr(line, "D1  misses:"))
			split(colon + 1, &c->d1_misses, &c->d1_read_misses, &c->d1_write_misses);
		else if (strstr(line, "LLd misses:"))
			split(colon + 1, &c->lld_misses, &c->lld_read_misses, &c->lld_write_misses);
		else if (strstr(line, "LL refs:"))
			c->ll_refs = number(colon + 1);
		else if (strstr(line, "LL misses:"))
			c->ll_misses = number(colon + 1);
	}
	fclose(f);
	cr_assert_gt(c->i_refs, 0, "no cachegrind summary in %s", path);
}

static bool have_valgrind(void)
{
	return system("valgrind --version > /dev/null 2>&1") == 0;
}

/* tool_dir: NULL to simulate the lackey trace in dir; else the folder of
 * plumbgrind, whose binary records (trace_reader_open_command) are simulated
 * while the program runs, and cachegrind runs with the same VALGRIND_LIB so
 * the program sees the same environment. */
static void compare_with_filter(const char *dir, const char *i1, const char *d1, const char *ll, const char *tool_dir,
                                bool filter)
{
	char command[PATH_MAX + 1024], out[512], trace_path[512];
	snprintf(out, sizeof out, "%s/cachegrind.txt", dir);
	snprintf(command, sizeof command,
	         "%s%s valgrind --tool=cachegrind --cache-sim=yes --I1=%s --D1=%s --LL=%s "
	         "--cachegrind-out-file=/dev/null %s/prog > %s 2>&1", tool_dir ? "VALGRIND_LIB=" : "",
	         tool_dir ? tool_dir : "", i1, d1, ll, dir, out);
	cr_assert_eq(system(command), 0, "%s", command);
	cachegrind_counts cg;
	parse_cachegrind(out, &cg);

	sim_config c;
	plumb_status status;
	cr_assert_eq(sim_preset(&c, "cachegrind", &status), 0);
	char setting[128];
	const char *levels[3] = { "l1i", "l1d", "l3" }, *values[3] = { i1, d1, ll };
	static const char *const fields[3] = { "size", "assoc", "line" };
	for (int l = 0; l < 3; l++) {
		char copy[64];
		snprintf(copy, sizeof copy, "%s", values[l]);
		char *save = NULL, *part = strtok_r(copy, ",", &save);
		for (int f = 0; f < 3 && part; f++, part = strtok_r(NULL, ",", &save)) {
			snprintf(setting, sizeof setting, "%s.%s=%s", levels[l], fields[f], part);
			cr_assert_eq(sim_config_assign(&c, setting, &status), 0, "%s", status.message);
		}
	}
	c.classify = c.classify && !filter;   /* the filter is for --basic runs */
	sim *s;
	cr_assert_eq(sim_new(&s, &c, &status), 0, "%s", status.message);
	snprintf(trace_path, sizeof trace_path, "%s/trace.lackey", dir);
	trace_reader *reader;
	if (tool_dir) {
		/* The program's output goes to plumb's standard error: make that a
		 * regular file too, as cachegrind's run had. */
		snprintf(trace_path, sizeof trace_path, "%s/prog", dir);
		char *argv[] = { trace_path, NULL };
		char err_path[512];
		snprintf(err_path, sizeof err_path, "%s/plumbgrind.out", dir);
		fflush(stderr);
		int saved = dup(STDERR_FILENO), file = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		cr_assert(saved >= 0 && file >= 0);
		dup2(file, STDERR_FILENO);
		close(file);
		/* with the tool keeping the L1s when filter (plumb sim's way on this machine) */
		char option[256];
		const char *options[2] = { NULL, NULL };
		if (filter) {
			cr_assert_eq(sim_filter_option(&c, option, sizeof option, &status), 1, "%s", status.message);
			options[0] = option;
		}
		int rc = trace_reader_open_command_options(&reader, argv, options, &status);
		dup2(saved, STDERR_FILENO);
		close(saved);
		cr_assert_eq(rc, 0, "%s", status.message);
		cr_assert_eq(trace_reader_format(reader), TRACE_FORMAT_NATIVE, "plumbgrind's binary records");
	} else {
		cr_assert_eq(trace_reader_open(&reader, trace_path, TRACE_FORMAT_LACKEY, &status), 0, "%s", status.message);
	}
	long got;
	if (filter) {
		uint64_t records = 0;
		cr_assert_eq(sim_run_reader(s, reader, NULL, false, &records, &status), 0, "%s", status.message);
		got = 0;
	} else {
		trace_record batch[4096];
		while ((got = trace_reader_read(reader, batch, 4096, &status)) > 0)
			cr_assert_eq(sim_access_batch(s, batch, (size_t)got, &status), 0, "%s", status.message);
	}
	cr_assert_eq(got, 0, "%s", status.message);
	cr_assert_eq(trace_reader_close(reader, &status), 0, "%s", status.message);

	const sim_stats *st = sim_statistics(s);
	const sim_cache_stats *l1i = &st->core[0].cache[SIM_L1I], *l1d = &st->core[0].cache[SIM_L1D], *l3 = &st->l3;
	/* the same streams first: otherwise a difference in misses means nothing */
	cr_assert_eq(l1i->accesses[SIM_IFETCH], cg.i_refs, "I refs %s", i1);
	cr_assert_eq(l1d->accesses[SIM_READ], cg.d_reads, "D reads");
	cr_assert_eq(l1d->accesses[SIM_WRITE], cg.d_writes, "D writes");
	cr_assert_eq(l1i->misses[SIM_IFETCH], cg.i1_misses, "I1 misses with I1=%s", i1);
	cr_assert_eq(l1d->misses[SIM_READ], cg.d1_read_misses, "D1 read misses with D1=%s", d1);
	cr_assert_eq(l1d->misses[SIM_WRITE], cg.d1_write_misses, "D1 write misses with D1=%s", d1);
	cr_assert_eq(l3->misses[SIM_IFETCH], cg.lli_misses, "LLi misses with LL=%s", ll);
	cr_assert_eq(l3->misses[SIM_READ], cg.lld_read_misses, "LLd read misses with LL=%s", ll);
	cr_assert_eq(l3->misses[SIM_WRITE], cg.lld_write_misses, "LLd write misses with LL=%s", ll);
	cr_assert_eq(l3->accesses[0] + l3->accesses[1] + l3->accesses[2], cg.ll_refs, "LL refs");
	cr_assert_eq(l3->misses[0] + l3->misses[1] + l3->misses[2], cg.ll_misses, "LL misses");
	sim_free(s);
}

static void compare_with(const char *dir, const char *i1, const char *d1, const char *ll, const char *tool_dir)
{
	compare_with_filter(dir, i1, d1, ll, tool_dir, false);
}

static void compare(const char *dir, const char *i1, const char *d1, const char *ll)
{
	compare_with(dir, i1, d1, ll, NULL);
}

Test(sim_cachegrind, same_misses_as_cachegrind, .timeout = 120)
{
	const char *source = "tests/data/sim_cachegrind_prog.c";
	struct stat info;
	if (!have_valgrind() || stat(source, &info) != 0)
		cr_skip_test("needs valgrind and %s (run from the source tree)", source);
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-sim-cachegrind-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char command[1024];
	snprintf(command, sizeof command, "cc -O1 -o %s/prog %s", dir, source);
	cr_assert_eq(system(command), 0, "%s", command);
	snprintf(command, sizeof command,
	         "valgrind --tool=lackey --trace-mem=yes --log-file=%s/trace.lackey %s/prog > %s/lackey.out", dir, dir, dir);
	cr_assert_eq(system(command), 0, "%s", command);
	compare(dir, "32768,8,64", "32768,8,64", "262144,8,64");
	/* small, low-associativity caches: many conflicts, many LL misses */
	compare(dir, "4096,2,64", "8192,2,64", "65536,4,64");
	/* 32-byte lines: more straddles; direct-mapped D1 */
	compare(dir, "8192,4,32", "16384,1,32", "131072,8,32");
	/* plumb sim -- PROG's own path: plumbgrind's binary records, while it runs */
	char tool_dir[PATH_MAX];
	plumb_status status;
	if (instrument_find_tool(tool_dir, sizeof tool_dir, &status) == 0) {
		unsetenv("PLUMB_TRACE_LACKEY");
		unsetenv("PLUMB_TRACE_TEXT");
		compare_with(dir, "32768,8,64", "32768,8,64", "262144,8,64", tool_dir);
		compare_with(dir, "4096,2,64", "8192,2,64", "65536,4,64", tool_dir);
		/* and with plumbgrind keeping the L1s itself (--plumb-filter) */
		compare_with_filter(dir, "32768,8,64", "32768,8,64", "262144,8,64", tool_dir, true);
		compare_with_filter(dir, "8192,2,64", "16384,4,64", "65536,4,64", tool_dir, true);
	}
	snprintf(command, sizeof command, "rm -rf '%s'", dir);
	cr_assert_eq(system(command), 0);
}
