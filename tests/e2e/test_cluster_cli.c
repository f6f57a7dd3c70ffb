/* plumb cluster under mpirun with several ranks on this one machine
 * (loopback): the gathered table, ranks that share a node, a bad argument
 * said once, and a rank that dies.  Skipped, with the reason, where mpirun
 * is absent or plumb was built without MPI. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run.h"
#include "../capability.h"

/* Open MPI does not free everything it allocates (its components are
 * unloaded at MPI_Finalize, their allocations kept): in the AddressSanitizer
 * build the leak check is off for processes that start MPI, and every other
 * ASan check stays on. */
static void quiet_mpi_leaks(void)
{
	if (PLUMB_TEST_ASAN)
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
}

static const char *mpirun(void)
{
	static const char *const candidates[] = { "/usr/bin/mpirun", "/usr/local/bin/mpirun", NULL };
	for (size_t i = 0; candidates[i]; i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* Skips unless mpirun exists and plumb was built with MPI (a plumb without
 * it says so when asked for a cluster run). */
static void require_mpi(void)
{
	if (!mpirun())
		cr_skip_test("needs mpirun (Debian: openmpi-bin, installed by make deps)");
	quiet_mpi_leaks();
	cli_run r = cli_run_plumbv(NULL, "cluster", "--sections", "topo", "-o", cli_temp_path("probe"), NULL);
	bool without = strstr(r.err, "built without MPI") != NULL;
	cli_run_free(&r);
	if (without)
		cr_skip_test("plumb was built without MPI (libopenmpi-dev absent at build time)");
}

/* mpirun OPTIONS plumb ARGS, with stdout and stderr kept; the exit code. */
static int run_mpi(const char *options, const char *arguments, char **out, char **err)
{
	char o[512], e[512];
	snprintf(o, sizeof o, "%s", cli_temp_path("mpi.out"));
	snprintf(e, sizeof e, "%s", cli_temp_path("mpi.err"));
	char command[8192];
	/* A container may forbid one process reading another's memory (CMA):
	 * the shared-memory transport then copies through its buffers. */
	snprintf(command, sizeof command,
	         "timeout 120 %s --allow-run-as-root --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none %s %s %s %s >%s 2>%s",
	         mpirun(), PLUMB_TEST_ASAN ? "-x ASAN_OPTIONS" : "", options, getenv("PLUMB_BIN"), arguments, o, e);
	int status = system(command);
	*out = cli_read_file(o, NULL);
	*err = cli_read_file(e, NULL);
	cr_assert_not_null(*out);
	cr_assert_not_null(*err);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static json_object *read_cluster(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/cluster.json", dir);
	json_object *root = json_object_from_file(path);
	cr_assert_not_null(root, "no readable %s", path);
	return root;
}

static const char *row_text(json_object *row, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(row, key, &v))
		return NULL;
	if (json_object_is_type(v, json_type_object)) {
		json_object *s;
		return json_object_object_get_ex(v, "status", &s) ? json_object_get_string(s) : NULL;
	}
	return json_object_get_string(v);
}

static const char *row_reason(json_object *row, const char *key)
{
	json_object *v, *s;
	if (!json_object_object_get_ex(row, key, &v) || !json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, "reason", &s))
		return NULL;
	return json_object_get_string(s);
}

static size_t count_lines_with(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(cluster_cli, help_and_usage_errors_without_mpirun)
{
	cli_run r = cli_run_plumbv(NULL, "cluster", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "mpirun -n N plumb cluster"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "cluster", NULL);
	cli_assert_usage_error(&r, "cluster");
	cr_assert(strstr(r.err, "-o DIR"), "%s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "cluster", "--share", "halves", "-o", cli_temp_path("x"), NULL);
	cli_assert_usage_error(&r, "cluster");
	cli_run_free(&r);
}

Test(cluster_cli, without_mpi_it_says_what_to_install, .timeout = 60)
{
	/* One rank without mpirun (an MPI singleton), or, in a plumb built
	 * without MPI, one line naming the packages. */
	quiet_mpi_leaks();
	cli_run r = cli_run_plumbv(NULL, "cluster", "--sections", "topo", "-o", cli_temp_path("single"), NULL);
	if (strstr(r.err, "built without MPI")) {
		cr_assert_eq(r.exit_code, 1);
		cr_assert(strstr(r.err, "libopenmpi-dev openmpi-bin"));
		cr_assert_eq(count_lines_with(r.err, "\n"), 1, "%s", r.err);
	} else {
		cr_assert_eq(r.exit_code, 0, "%s", r.err);
		json_object *root = read_cluster(cli_temp_path("single"));
		cr_assert_eq(json_object_array_length(cli_json_rows(root, "nodes")), 1);
		json_object_put(root);
	}
	cli_run_free(&r);
}

Test(cluster_cli, an_output_folder_that_is_a_file_is_refused_before_the_run, .timeout = 60)
{
	/* Found by the hostile sweep: -o FILE passed the check (mkdir failed
	 * with EEXIST, and the file was writable) and the run failed at its
	 * end; and an empty item in --sections was passed over. */
	quiet_mpi_leaks();
	const char *file = cli_temp_path("a-file");
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs("keep\n", f);
	cr_assert_eq(fclose(f), 0);
	cli_run r = cli_run_plumbv(NULL, "cluster", "--sections", "topo", "-o", file, NULL);
	if (strstr(r.err, "built without MPI")) {
		cli_run_free(&r);
		cr_skip_test("plumb was built without MPI");
	}
	cr_assert_eq(r.exit_code, 1, "%s", r.err);
	cr_assert(strstr(r.err, "it exists and is not a folder"), "%s", r.err);
	cr_assert_eq(count_lines_with(r.err, "\n"), 1, "%s", r.err);
	size_t size;
	char *text = cli_read_file(file, &size);
	cr_assert_str_eq(text, "keep\n");
	free(text);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "cluster", "--sections", ",topo", "-o", cli_temp_path("c"), NULL);
	cr_assert_eq(r.exit_code, 2, "%s", r.err);
	cr_assert(strstr(r.err, "',topo' has an empty item"), "%s", r.err);
	cli_run_free(&r);
}

/* Under `ulimit -f 1` Open MPI's start failed with a dozen lines of its
 * own (PMIx's store needs files of a few MiB), or hung in the hostile
 * sweep: plumb now refuses a limit under 8 MiB before MPI starts, in one
 * line.  Found by the hostile-input sweep. */
Test(cluster_cli, a_small_file_size_limit_is_one_line_before_mpi_starts, .timeout = 60)
{
	quiet_mpi_leaks();
	char text[4096];
	const char *const argv[] = { "cluster", "--sections", "topo", "-o", cli_temp_path("limited"), NULL };
	int wait_status = cli_run_plumb_file_limited(1024, text, sizeof text, argv);
	if (strstr(text, "built without MPI"))
		cr_skip_test("plumb was built without MPI");
	cr_assert(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 1, "status %d: %s", wait_status, text);
	cr_assert(strstr(text, "the file size limit (ulimit -f) is 1 KiB"), "%s", text);
	cr_assert_eq(count_lines_with(text, "\n"), 1, "%s", text);
}

Test(cluster_cli, three_ranks_on_one_node_take_turns, .timeout = 150)
{
	require_mpi();
	char *out, *err, arguments[4096];
	char dir[512];
	snprintf(dir, sizeof dir, "%s", cli_temp_path("three"));
	snprintf(arguments, sizeof arguments, "cluster --sections topo -o %s", dir);
	int rc = run_mpi("-n 3", arguments, &out, &err);
	cr_assert_eq(rc, 0, "stdout: %s\nstderr: %s", out, err);
	cr_assert(strstr(out, "cluster: 3 ranks; 0 outliers"), "%s", out);
	json_object *root = read_cluster(dir);
	json_object *rows = cli_json_rows(root, "nodes");
	cr_assert_eq(json_object_array_length(rows), 3);
	for (size_t i = 0; i < 3; i++) {
		json_object *row = json_object_array_get_idx(rows, i), *rank;
		cr_assert(json_object_object_get_ex(row, "rank", &rank));
		cr_assert_eq(json_object_get_int(rank), (int)i);
		cr_assert_str_eq(row_text(row, "status"), "ok");
		cr_assert_str_eq(row_text(row, "sharing"), "turns");
		cr_assert_gt(strlen(row_text(row, "host")), 0);
		/* lat did not run: its figures say so instead of a number */
		cr_assert_str_eq(row_text(row, "DRAM_latency"), "unsupported");
		cr_assert_str_eq(row_reason(row, "DRAM_latency"), "the lat section was not run");
	}
	/* Same machine: no configuration differs, and the ranks' L3 agree. */
	cr_assert_eq(json_object_array_length(cli_json_rows(root, "differences")), 0);
	cr_assert_eq(json_object_array_length(cli_json_rows(root, "configuration")), 3);
	cli_json_rows(root, "outliers");
	cli_json_rows(root, "spread");
	json_object_put(root);
	char path[4096];
	snprintf(path, sizeof path, "%s/cluster.html", dir);
	char *html = cli_read_file(path, NULL);
	cr_assert_not_null(html);
	cr_assert(strstr(html, "Each figure, node by node") && strstr(html, "rank 2 ("));
	free(html);
	free(out);
	free(err);
}

Test(cluster_cli, split_gives_each_rank_its_own_cpus, .timeout = 150)
{
	require_mpi();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char *out, *err, arguments[4096];
	char dir[512];
	snprintf(dir, sizeof dir, "%s", cli_temp_path("split"));
	snprintf(arguments, sizeof arguments, "cluster --share split --sections topo -o %s", dir);
	int rc = run_mpi("-n 2", arguments, &out, &err);
	cr_assert_eq(rc, 0, "stdout: %s\nstderr: %s", out, err);
	json_object *root = read_cluster(dir);
	json_object *rows = cli_json_rows(root, "nodes");
	cr_assert_eq(json_object_array_length(rows), 2);
	const char *a = row_text(json_object_array_get_idx(rows, 0), "cpus"), *b = row_text(json_object_array_get_idx(rows, 1), "cpus");
	if (cpus >= 2) {
		cr_assert_str_eq(row_text(json_object_array_get_idx(rows, 0), "sharing"), "split");
		cr_assert_str_neq(a, b);
	} else {
		cr_assert_str_eq(row_text(json_object_array_get_idx(rows, 0), "sharing"), "turns");
	}
	json_object_put(root);
	free(out);
	free(err);
}

Test(cluster_cli, a_bad_argument_is_said_once, .timeout = 150)
{
	require_mpi();
	char *out, *err;
	/* refused while parsing, before MPI starts */
	int rc = run_mpi("-n 3", "cluster --share halves -o /tmp", &out, &err);
	cr_assert_eq(rc, 2, "%s", err);
	cr_assert_eq(count_lines_with(err, "plumb cluster:"), 1, "%s", err);
	free(out);
	free(err);
	/* refused after MPI started */
	rc = run_mpi("-n 3", "cluster --sections topo,nonsense -o /tmp", &out, &err);
	cr_assert_eq(rc, 2, "%s", err);
	cr_assert_eq(count_lines_with(err, "plumb cluster: 'nonsense' is not a cluster section"), 1, "%s", err);
	cr_assert_eq(count_lines_with(err, "plumb cluster:"), 1, "%s", err);
	free(out);
	free(err);
}

Test(cluster_cli, a_rank_that_dies_leaves_its_row_with_the_reason, .timeout = 150)
{
	require_mpi();
	char *out, *err, arguments[4096];
	char dir[512];
	snprintf(dir, sizeof dir, "%s", cli_temp_path("dead"));
	snprintf(arguments, sizeof arguments, "cluster --sections topo -o %s", dir);
	/* --enable-recovery: mpirun keeps the job when a rank dies. */
	/* (mpirun's own exit code under --enable-recovery says nothing reliable.) */
	run_mpi("--enable-recovery -x PLUMB_CLUSTER_KILL_RANK=1 -n 3", arguments, &out, &err);
	cr_assert(strstr(out, "cluster: 3 ranks, 1 without results"), "stdout: %s\nstderr: %s", out, err);
	json_object *root = read_cluster(dir);
	json_object *rows = cli_json_rows(root, "nodes");
	cr_assert_eq(json_object_array_length(rows), 3);
	cr_assert_str_eq(row_text(json_object_array_get_idx(rows, 0), "status"), "ok");
	cr_assert_str_eq(row_text(json_object_array_get_idx(rows, 2), "status"), "ok");
	json_object *dead = json_object_array_get_idx(rows, 1);
	cr_assert_str_eq(row_text(dead, "status"), "failed");
	cr_assert(strstr(row_reason(dead, "status"), "rank 1 died"), "%s", row_reason(dead, "status"));
	json_object_put(root);
	free(out);
	free(err);
}

/* Two small din traces: a stride through 1 MiB, and 4 KiB pages at random. */
static void write_traces(char *a, char *b, char *bad, size_t length)
{
	snprintf(a, length, "%s", cli_temp_path("stride.din"));
	snprintf(b, length, "%s", cli_temp_path("pages.din"));
	snprintf(bad, length, "%s", cli_temp_path("broken.din"));
	FILE *f = fopen(a, "w"), *g = fopen(b, "w"), *h = fopen(bad, "w");
	cr_assert(f && g && h);
	unsigned long x = 12345;
	for (unsigned i = 0; i < 20000; i++) {
		fprintf(f, "%u %x\n", i % 2, 0x10000 + (i * 64) % (1u << 20));
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		fprintf(g, "%u %lx\n", (unsigned)(x >> 63), 0x200000 + ((x >> 20) % (1ul << 22)));
	}
	fputs("this is not a trace\n", h);
	fclose(f);
	fclose(g);
	fclose(h);
}

Test(cluster_cli, a_sweep_spread_over_ranks_is_the_serial_sweep_byte_for_byte, .timeout = 150)
{
	char a[512], b[512], bad[512], serial[512], spread[512];
	write_traces(a, b, bad, sizeof a);
	snprintf(serial, sizeof serial, "%s", cli_temp_path("sweep-serial"));
	snprintf(spread, sizeof spread, "%s", cli_temp_path("sweep-spread"));
	char traces[2048];
	snprintf(traces, sizeof traces, "%s,%s,%s", a, b, bad);
	cli_run r = cli_run_plumbv(NULL, "sim", "--sweep", "origin2000,power3,cachegrind,zen4", "--traces", traces, "-o", serial, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "sweep: 12 jobs (3 traces x 4 configurations)"), "%s", r.out);
	cli_run_free(&r);
	char path[1024];
	snprintf(path, sizeof path, "%s/sweep.json", serial);
	json_object *root = json_object_from_file(path);
	cr_assert_not_null(root);
	json_object *rows = cli_json_rows(root, "sweep");
	cr_assert_eq(json_object_array_length(rows), 12);
	/* trace by trace, each through every configuration in order */
	cr_assert_str_eq(row_text(json_object_array_get_idx(rows, 5), "config"), "power3");
	cr_assert(strstr(row_text(json_object_array_get_idx(rows, 5), "trace"), "pages.din"));
	cr_assert_str_eq(row_text(json_object_array_get_idx(rows, 0), "status"), "ok");
	/* the broken trace's jobs keep their rows, with the reason */
	json_object *broken = json_object_array_get_idx(rows, 8);
	cr_assert_str_eq(row_text(broken, "status"), "failed");
	cr_assert_not_null(row_reason(broken, "status"));
	json_object *refs;
	cr_assert(json_object_object_get_ex(json_object_array_get_idx(rows, 0), "references", &refs));
	cr_assert_eq(json_object_get_int64(refs), 20000);
	json_object_put(root);

	require_mpi();
	char *out, *err, arguments[4096];
	snprintf(arguments, sizeof arguments, "sim --sweep origin2000,power3,cachegrind,zen4 --traces %s -o %s", traces, spread);
	int rc = run_mpi("-n 3", arguments, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(strstr(out, "on 3 ranks"), "%s", out);
	static const char *const files[] = { "sweep.json", "sweep.csv" };
	for (size_t i = 0; i < 2; i++) {
		char p1[1024], p2[1024];
		snprintf(p1, sizeof p1, "%s/%s", serial, files[i]);
		snprintf(p2, sizeof p2, "%s/%s", spread, files[i]);
		char *one = cli_read_file(p1, NULL), *two = cli_read_file(p2, NULL);
		cr_assert(one && two && one[0]);
		cr_assert_str_eq(one, two, "%s differs between the serial and the spread sweep", files[i]);
		free(one);
		free(two);
	}
	free(out);
	free(err);
	/* a bad list fails on every rank, said once */
	snprintf(arguments, sizeof arguments, "sim --sweep origin2000,nosuchpreset --traces %s -o %s", a, spread);
	rc = run_mpi("-n 3", arguments, &out, &err);
	cr_assert_eq(rc, 2, "%s", err);
	cr_assert_eq(count_lines_with(err, "plumb sim:"), 1, "%s", err);
	cr_assert(strstr(err, "'nosuchpreset' is neither a configuration file nor a preset"), "%s", err);
	free(out);
	free(err);
}
