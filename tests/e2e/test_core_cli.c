#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run.h"
#include "../capability.h"

Test(core_cli, help_and_version)
{
	cli_run r = cli_run_plumbv(NULL, "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "topo"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "--version", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strncmp(r.out, "plumb ", 6) == 0);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
}

Test(core_cli, unknown_command_one_line)
{
	cli_run r = cli_run_plumbv(NULL, "frobnicate", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert_str_eq(strchr(r.err, '\n') + 1, "", "one error line expected: %s", r.err);
	cli_run_free(&r);
}

Test(core_cli, topo_formats)
{
	cli_run r = cli_run_plumbv(NULL, "topo", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "Caches"));
	cr_assert(strstr(r.out, "L1"));
	cr_assert(strstr(r.out, "hardware_counters"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "--json", NULL);
	cr_assert_eq(r.exit_code, 0);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root);
	json_object *tables;
	cr_assert(json_object_object_get_ex(root, "tables", &tables));
	cr_assert_geq(json_object_array_length(tables), 4);
	json_object_put(root);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "--table", "caches", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strncmp(r.out, "level,type,size[bytes]", 22) == 0, "%s", r.out);
	cli_run_free(&r);
}

Test(core_cli, topo_bad_args)
{
	cli_run r = cli_run_plumbv(NULL, "topo", "--bogus", NULL);
	cr_assert_eq(r.exit_code, 2);
	cr_assert(strstr(r.err, "--bogus"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "extra", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "topo", "-o", "/nonexistent-dir/t.txt", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "nonexistent"));
	cli_run_free(&r);
}

Test(core_cli, topo_help)
{
	cli_run r = cli_run_plumbv(NULL, "topo", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb topo"));
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "help", "topo", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb topo"));
	cli_run_free(&r);
}

Test(core_cli, report_from_sections_and_saved_json)
{
	char html[512], dir[512];
	snprintf(html, sizeof html, "%s", cli_temp_path("r.html"));
	snprintf(dir, sizeof dir, "%s", cli_temp_path("saved"));
	cli_run r = cli_run_plumbv(NULL, "report", "--sections", "topo", "-o", html, "--save-dir", dir, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "(1 section)"), "%s", r.out);
	cli_run_free(&r);
	char saved[600];
	snprintf(saved, sizeof saved, "%s/topo.json", dir);
	r = cli_run_plumbv(NULL, "report", "-o", html, "--from", saved, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	char *page = cli_read_file(html, NULL);
	cr_assert_not_null(page, "cannot read %s", html);
	cr_assert(strstr(page, "The machine"));
	cr_assert(strstr(page, "hardware_counters"));
	free(page);
	r = cli_run_plumbv(NULL, "report", "--sections", "bogus", NULL);
	cr_assert_eq(r.exit_code, 2);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "report", "--from", "/etc/hostname", NULL);
	cr_assert_eq(r.exit_code, 1);
	cr_assert(strstr(r.err, "/etc/hostname"));
	cli_run_free(&r);
}

static void option_error_is(const char *expected, const char *const argv[])
{
	cli_run r = cli_run_plumb(NULL, argv);
	cli_assert_usage_error(&r, argv[0][0] == 't' && !strcmp(argv[0], "trace") ? "trace record" : argv[0]);
	cr_assert_str_eq(r.err, expected);
	cli_run_free(&r);
}

#define OPTION_ERROR_IS(expected, ...) option_error_is(expected, (const char *const[]){ __VA_ARGS__, NULL })

/* A long option without its value was reported as "-\001" (lat --min), "-s" (sim --set)
 * or "-f" (model --from): getopt's internal code printed as a letter. */
Test(core_cli, an_option_error_names_the_option_as_typed)
{
	OPTION_ERROR_IS("plumb lat: option '--min' needs a value (see 'plumb lat --help')\n", "lat", "--min");
	OPTION_ERROR_IS("plumb sim: option '--set' needs a value (see 'plumb sim --help')\n", "sim", "--set");
	OPTION_ERROR_IS("plumb bw: option '-s' needs a value (see 'plumb bw --help')\n", "bw", "-s");
	OPTION_ERROR_IS("plumb model: option '--from' needs a value (see 'plumb model --help')\n", "model", "--from");
	OPTION_ERROR_IS("plumb bw: option '--cpu' needs a value (see 'plumb bw --help')\n", "bw", "--cpu");
	OPTION_ERROR_IS("plumb validate: option '--set' needs a value (see 'plumb validate --help')\n", "validate",
	                "--set");
	OPTION_ERROR_IS("plumb stat: option '--event' needs a value (see 'plumb stat --help')\n", "stat", "--event");
	OPTION_ERROR_IS("plumb topo: option '--output' needs a value (see 'plumb topo --help')\n", "topo", "--output");
	OPTION_ERROR_IS("plumb trace record: option '--output' needs a value (see 'plumb trace record --help')\n", "trace",
	                "record", "--output");
	OPTION_ERROR_IS("plumb lat: unknown option '--bogus' (see 'plumb lat --help')\n", "lat", "--bogus=1");
	OPTION_ERROR_IS("plumb lat: unknown option '-Q' (see 'plumb lat --help')\n", "lat", "-Q");
	OPTION_ERROR_IS("plumb lat: option '--help' does not take a value (see 'plumb lat --help')\n", "lat", "--help=3");
}

/* Runs plumb with argv under an address-space limit (0: none), stderr to a
 * pipe; its exit code, its stderr in err, its peak resident size in KiB. */
static int run_limited(const char *const argv[], unsigned long address_space_mib, char *err, size_t length,
                       long *max_rss_kib)
{
	const char *program = getenv("PLUMB_BIN");
	cr_assert_not_null(program);
	int pipe_fds[2];
	cr_assert_eq(pipe(pipe_fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pipe_fds[1], 2);
		close(pipe_fds[0]);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		if (address_space_mib) {
			struct rlimit limit = { (rlim_t)address_space_mib << 20, (rlim_t)address_space_mib << 20 };
			if (setrlimit(RLIMIT_AS, &limit) != 0)
				_exit(125);
		}
		const char *args[16] = { program };
		for (int i = 0; argv[i] && i < 14; i++)
			args[i + 1] = argv[i];
		execv(program, (char *const *)args);
		_exit(127);
	}
	close(pipe_fds[1]);
	size_t used = 0;
	ssize_t n;
	while (used < length - 1 && (n = read(pipe_fds[0], err + used, length - 1 - used)) > 0)
		used += (size_t)n;
	err[used] = 0;
	close(pipe_fds[0]);
	int status;
	struct rusage usage;
	cr_assert_eq(wait4(pid, &status, 0, &usage), pid);
	*max_rss_kib = usage.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Issue 29: every command that reads a whole file stops at a limit.  From
 * /dev/zero they grew to 9.7 GB resident; under `ulimit -v` some looped for
 * ever, appending to memory they could not get.  Each now fails with one
 * line and exit 1, resident well under the 64 MiB limit's double, and under
 * an address-space limit it fails the same way instead of hanging (the
 * test's timeout catches a hang). */
Test(core_cli, endless_inputs_fail_with_one_line_and_bounded_memory, .timeout = 120)
{
	static const char *const commands[][8] = {
		{ "lat", "--from", "/dev/zero", NULL },
		{ "report", "--from", "/dev/zero", "-o", "/dev/null", NULL },
		{ "report", "--compare", "/dev/zero", "/dev/zero", NULL },
		{ "geometry", "--levels-from", "/dev/zero", NULL },
		{ "explain", "--machine", "/dev/zero", "--", "true", NULL },
		{ "instrument", "--summary", "/dev/zero", NULL },
		{ "model", "--from", "/dev/zero", NULL },
	};
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		char err[2048];
		long rss;
		int code = run_limited(commands[i], 0, err, sizeof err, &rss);
		cr_assert_eq(code, 1, "plumb %s: exit %d: %s", commands[i][0], code, err);
		cr_assert(strstr(err, "/dev/zero: larger than 64 MiB"), "plumb %s: %s", commands[i][0], err);
		cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "plumb %s: not one line: %s", commands[i][0], err);
		cr_assert_lt(rss, 512L << 10, "plumb %s grew to %ld KiB reading /dev/zero", commands[i][0], rss);
#if !PLUMB_TEST_ASAN
		/* AddressSanitizer reserves terabytes of address space: only
		 * the plain build can run under a limit. */
		code = run_limited(commands[i], 96, err, sizeof err, &rss);
		cr_assert_eq(code, 1, "plumb %s under a 96 MiB address space: exit %d: %s", commands[i][0], code, err);
		cr_assert(strstr(err, "/dev/zero: "), "plumb %s: %s", commands[i][0], err);
		cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "plumb %s: not one line: %s", commands[i][0], err);
#endif
	}
}

/* topo's core_model: CPUID's model, unless this is an Intel CPU whose
 * flags (/proc/cpuinfo, as the kernel read CPUID) have AMX or AVX512-FP16
 * under a model without them (a guest given an older model than its
 * host's cores): then 143; or an AMD family 19h CPU with AVX-512 under a
 * Zen 3 model: then 17; and the generation says why. */
Test(core_cli, topo_names_the_model_its_cores_are)
{
	size_t size;
	char *cpuinfo = cli_read_file("/proc/cpuinfo", &size);
	cr_assert_not_null(cpuinfo);
	unsigned family = 0, model = 0;
	const char *f = strstr(cpuinfo, "cpu family"), *m = strstr(cpuinfo, "\nmodel\t");
	if (!f || !m || sscanf(strchr(f, ':') + 1, "%u", &family) != 1 || sscanf(strchr(m, ':') + 1, "%u", &model) != 1) {
		free(cpuinfo);
		cr_skip_test("/proc/cpuinfo names no family and model here");
	}
	const char *flags = strstr(cpuinfo, "\nflags");
	char line[8192] = "";
	if (flags)
		sscanf(flags + 1, "%8191[^\n]", line);
	bool intel = strstr(cpuinfo, "GenuineIntel") != NULL;
	free(cpuinfo);
	bool amx = strstr(line, " amx_tile") != NULL, fp16 = strstr(line, " avx512_fp16") != NULL;
	bool amx_model = model == 0x8F || model == 0xCF || model == 0xAD || model == 0xAE;
	bool corrected = intel && family == 6 && !amx_model && (amx || (fp16 && model != 0x97 && model != 0x9A));
	/* an AMD guest shown a Zen 3 model with AVX-512 (only Zen 4 on has it) */
	bool zen4_model = (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) ||
	                  (model >= 0xA0 && model <= 0xAF);
	bool amd_corrected = !intel && family == 0x19 && strstr(line, " avx512f") && !zen4_model;
	cli_run r = cli_run_plumbv(NULL, "topo", "--table", "machine", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	char expected[64];
	snprintf(expected, sizeof expected, "\ncore_model,%u\n", corrected ? 143 : amd_corrected ? 17 : model);
	cr_assert(strstr(r.out, expected), "expected %s in:\n%s", expected + 1, r.out);
	if (corrected || amd_corrected)
		cr_assert(strstr(r.out, "or later (CPUID says model"), "%s", r.out);
	cli_run_free(&r);
}
