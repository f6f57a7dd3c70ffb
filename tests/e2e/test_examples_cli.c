/* Every EXAMPLES line of every man page, as a user types it (issue 30).
 *
 * The lines are read from man/plumb*.1 and man/libplumb.3 when the test runs, so
 * an example added or changed is checked without editing this file.  Each
 * line runs through sh in a folder of its own, with `plumb` on PATH being the
 * built program, beside the files the examples name but do not make (a
 * program ./prog with region markers, ./solver, ./loop, ./pingpong, a lackey
 * trace prog.lackey, a saved report, ...).
 *
 * A line in the table below whose needs this machine meets is run as it is
 * and must exit 0 (or the status the table allows).  Every other line, and
 * every line the table does not know, is checked for its spelling instead:
 * each `plumb` it runs gets --help before its program ('--') or at its end,
 * so that every option and word before it goes through the command's parser
 * and nothing is measured; an option the parser does not know fails the
 * line.  The whole walk takes about half a minute on a busy 2-CPU machine. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run.h"

enum {
	NEEDS_NOTHING = 0,
	NEEDS_PLUMBGRIND = 1,   /* Valgrind and plumbgrind, and a program linked with libplumb.so */
	NEEDS_LIBRARY = 2,      /* build/libplumb.so to link a program against (not the sanitizer build) */
	NEEDS_NINE_CPUS = 4,    /* CPU 8 among this process's CPUs */
	NEEDS_VALGRIND = 8,     /* valgrind on PATH (lackey) */
};

/* The lines run as they are: the page, the line's start, what it needs, and
 * another exit status it may end with (-1: none) and why. */
typedef struct example_rule {
	const char *page;
	const char *line;
	unsigned needs;
	int other_exit;
} example_rule;

static const example_rule rules[] = {
	{ "plumb-topo.1", "plumb topo", NEEDS_NOTHING, -1 },
	{ "plumb-model.1", "plumb model --service 195", NEEDS_NOTHING, -1 },
	/* 3: the report is written, but PAPI_L1_DCM cannot be counted here */
	{ "plumb-stat.1", "plumb stat -e page-faults,task-clock,PAPI_L1_DCM", NEEDS_LIBRARY, 3 },
	{ "plumb-stat.1", "plumb stat --json -o counts.json", NEEDS_NOTHING, -1 },
	{ "plumb-stat.1", "plumb stat --calibrate", NEEDS_NOTHING, -1 },
	{ "plumb-events.1", "plumb events", NEEDS_NOTHING, -1 },
	{ "plumb-validate.1", "plumb validate itv shr --backend sim", NEEDS_NOTHING, -1 },
	{ "plumb-validate.1", "plumb validate stride --backend synthetic:bias", NEEDS_NOTHING, -1 },
	{ "plumb-validate.1", "plumb events --catalogue --verification v.tsv", NEEDS_NOTHING, -1 },
	{ "plumb-sim.1", "plumb sim --preset cachegrind", NEEDS_NOTHING, -1 },
	{ "plumb-sim.1", "plumb sim --preset zen4 --cores 2 --check", NEEDS_NOTHING, -1 },
	{ "plumb-sim.1", "plumb sim --preset franz08", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-sim.1", "plumb trace record t.ptrace", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-sim.1", "plumb sim --preset zen4 --curve l2", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-trace.1", "plumb trace record loop.ptrace", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-trace.1", "valgrind --tool=lackey", NEEDS_VALGRIND | NEEDS_PLUMBGRIND, -1 },
	{ "plumb-trace.1", "plumb trace convert prog.ptrace", NEEDS_VALGRIND | NEEDS_PLUMBGRIND, -1 },
	{ "plumb-trace.1", "plumb trace stats prog.ptrace", NEEDS_VALGRIND | NEEDS_PLUMBGRIND, -1 },
	{ "plumb-trace.1", "plumb trace record --buffer", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-trace.1", "plumb trace filter", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-instrument.1", "", NEEDS_PLUMBGRIND, -1 },
	{ "plumb-explain.1", "cc ", NEEDS_LIBRARY, -1 },
	{ "plumb-c2c.1", "plumb c2c --matrix", NEEDS_NOTHING, -1 },
	{ "plumb-c2c.1", "plumb c2c --pair 0,8", NEEDS_NINE_CPUS, -1 },
	{ "plumb-c2c.1", "taskset -c 0 plumb c2c", NEEDS_NOTHING, -1 },
	{ "plumb-loaded.1", "plumb loaded --pattern write", NEEDS_NOTHING, -1 },
	{ "plumb-report.1", "plumb report --from", NEEDS_NOTHING, -1 },
	{ "plumb-report.1", "plumb report --compare", NEEDS_NOTHING, -1 },
	{ "plumb.1", "plumb sim -- ./prog", NEEDS_PLUMBGRIND, -1 },
	{ "plumb.1", "plumb stat", NEEDS_LIBRARY, -1 },
};

/* ------------------------------------------------------------ the pages */

/* The man page's text unescaped: \- \e \(aq \(dq \& as a terminal shows them. */
static void unescape(const char *in, char *out, size_t size)
{
	size_t n = 0;
	while (*in && n + 1 < size) {
		if (in[0] == '\\' && in[1] == '-') {
			out[n++] = '-';
			in += 2;
		} else if (in[0] == '\\' && in[1] == 'e') {
			out[n++] = '\\';
			in += 2;
		} else if (in[0] == '\\' && in[1] == '&') {
			in += 2;
		} else if (!strncmp(in, "\\(aq", 4)) {
			out[n++] = '\'';
			in += 4;
		} else if (!strncmp(in, "\\(dq", 4)) {
			out[n++] = '"';
			in += 4;
		} else {
			out[n++] = *in++;
		}
	}
	out[n] = 0;
}

/* A comment at the end of an example ("   # everything, 100 runs per case")
 * is the page's, not the shell's business. */
static void strip_comment(char *line)
{
	bool quoted = false;
	for (char *p = line; *p; p++) {
		if (*p == '"' || *p == '\'')
			quoted = !quoted;
		if (!quoted && *p == '#' && p > line && (p[-1] == ' ' || p[-1] == '\t')) {
			*p = 0;
			break;
		}
	}
	size_t n = strlen(line);
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = 0;
}

#define MAX_EXAMPLES 16
#define EXAMPLE_LENGTH 1024

/* The shell lines of PAGE's EXAMPLES section: the lines of its .nf blocks
 * (a line ending in a backslash continues on the next), and the .B line
 * after each .TP. */
static size_t page_examples(const char *page, char lines[][EXAMPLE_LENGTH], size_t max)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/man/%s", cli_source_dir(), page);
	char *text = cli_read_file(path, NULL);
	cr_assert_not_null(text, "%s: %s", path, strerror(errno));
	size_t count = 0;
	bool in_section = false, in_fill = false, after_tp = false;
	char pending[EXAMPLE_LENGTH] = "";
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, ".SH", 3)) {
			in_section = strstr(line, "EXAMPLE") != NULL;
			continue;
		}
		if (!in_section)
			continue;
		if (!strcmp(line, ".nf")) {
			in_fill = true;
			continue;
		}
		if (!strcmp(line, ".fi")) {
			in_fill = false;
			continue;
		}
		if (!strcmp(line, ".TP")) {
			after_tp = true;
			continue;
		}
		char plain[EXAMPLE_LENGTH];
		if (in_fill) {
			unescape(line, plain, sizeof plain);
			size_t n = strlen(plain);
			bool continues = n && plain[n - 1] == '\\';
			if (continues)
				plain[n - 1] = ' ';
			strncat(pending, plain, sizeof pending - strlen(pending) - 1);
			if (continues)
				continue;
		} else if (after_tp && !strncmp(line, ".B ", 3)) {
			unescape(line + 3, pending, sizeof pending);
		} else {
			after_tp = false;
			continue;
		}
		after_tp = false;
		strip_comment(pending);
		if (*pending && count < max)
			snprintf(lines[count++], EXAMPLE_LENGTH, "%s", pending);
		pending[0] = 0;
	}
	free(text);
	return count;
}

/* --------------------------------------------------------- the machine */

static bool have_program(const char *name)
{
	char command[256];
	snprintf(command, sizeof command, "command -v %s >/dev/null 2>&1", name);
	return system(command) == 0;
}

static bool have_library(void)
{
	char library[4200];
	snprintf(library, sizeof library, "%s/libplumb.so", cli_build_dir());
	if (access(library, R_OK) != 0)
		return false;
	/* the sanitizer build's library cannot run under Valgrind or be preloaded */
	size_t size;
	char *text = cli_read_file(library, &size);
	bool sanitized = text && memmem(text, size, "__asan_init", 11) != NULL;
	free(text);
	return !sanitized;
}

/* What this machine lacks of NEEDS, in words (NULL: nothing). */
static const char *lacking(unsigned needs)
{
	if ((needs & (NEEDS_LIBRARY | NEEDS_PLUMBGRIND)) && !have_library())
		return "this build has no libplumb.so a program can link (the sanitizer build)";
	if ((needs & (NEEDS_PLUMBGRIND | NEEDS_VALGRIND)) && !have_program("valgrind"))
		return "valgrind is not installed";
	if ((needs & NEEDS_PLUMBGRIND) && !cli_plumbgrind_built())
		return "plumbgrind is not built (no Valgrind tool libraries)";
	if (needs & NEEDS_NINE_CPUS) {
		cpu_set_t set;
		if (sched_getaffinity(0, sizeof set, &set) != 0 || !CPU_ISSET(8, &set))
			return "CPU 8 is not one this process may run on";
	}
	return NULL;
}

static const example_rule *rule_for(const char *page, const char *line)
{
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (!strcmp(rules[i].page, page) && !strncmp(line, rules[i].line, strlen(rules[i].line)))
			return &rules[i];
	return NULL;
}

/* ------------------------------------------------------ the examples' folder */

static void write_text(const char *dir, const char *name, const char *text)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static int shell(const char *dir, const char *command)
{
	char line[21000];
	snprintf(line, sizeof line, "cd '%s' && ( %s ) >>setup.log 2>&1", dir, command);
	int status = system(line);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A program that marks two regions, as the pages' ./prog, ./solver and
 * ./a.out; its size is small so that it runs in a moment under Valgrind. */
static const char program_source[] =
	"#include <stdio.h>\n#include <stdlib.h>\n"
	"#if __has_include(<plumb/region.h>)\n#include <plumb/region.h>\n#else\n"
	"#define plumb_region_begin(name) ((void)0)\n#define plumb_region_end(name) ((void)0)\n#endif\n"
	"int main(int argc, char **argv)\n{\n"
	"\tlong n = argc > 1 ? atol(argv[1]) : 0;\n\tif (n <= 0)\n\t\tn = 4096;\n"
	"\tlong *a = calloc((size_t)n, sizeof *a), s = 0;\n\tif (!a)\n\t\treturn 1;\n"
	"\tplumb_region_begin(\"fill\");\n\tfor (long i = 0; i < n; i++)\n\t\ta[i] = i;\n"
	"\tplumb_region_end(\"fill\");\n\tplumb_region_begin(\"sum\");\n"
	"\tfor (long i = 0; i < n; i++)\n\t\ts += a[i];\n\tplumb_region_end(\"sum\");\n"
	"\tprintf(\"%ld\\n\", s);\n\tfree(a);\n\treturn 0;\n}\n";

/* Two threads passing a word back and forth a few hundred times. */
static const char pingpong_source[] =
	"#include <pthread.h>\n#include <sched.h>\n#include <stdatomic.h>\n"
	"static _Atomic int turn;\n"
	"static void *other(void *unused)\n{\n\t(void)unused;\n"
	"\tfor (int i = 0; i < 200; i++) {\n\t\twhile (atomic_load(&turn) != 1)\n\t\t\tsched_yield();\n"
	"\t\tatomic_store(&turn, 0);\n\t}\n\treturn 0;\n}\n"
	"int main(void)\n{\n\tpthread_t t;\n\tpthread_create(&t, 0, other, 0);\n"
	"\tfor (int i = 0; i < 200; i++) {\n\t\twhile (atomic_load(&turn) != 0)\n\t\t\tsched_yield();\n"
	"\t\tatomic_store(&turn, 1);\n\t}\n\tpthread_join(t, 0);\n\treturn 0;\n}\n";

/* The files the examples name but leave to the user, in a fresh folder. */
static const char *examples_folder(void)
{
	static char dir[4200];
	snprintf(dir, sizeof dir, "%s", cli_temp_path("examples"));
	cr_assert(mkdir(dir, 0700) == 0 || errno == EEXIST, "%s: %s", dir, strerror(errno));
	const char *build = cli_build_dir(), *source = cli_source_dir();
	char command[16384];
	/* `plumb` is the built program; `build` is the build tree, as
	 * VALGRIND_LIB=build/vg/lib names it from the source tree */
	snprintf(command, sizeof command, "mkdir -p bin && ln -sf '%s/plumb' bin/plumb && ln -sfn '%s' build", build,
	         build);
	cr_assert_eq(shell(dir, command), 0, "%s", command);
	write_text(dir, "prog.c", program_source);
	write_text(dir, "pingpong.c", pingpong_source);
	write_text(dir, "loop.c", "#include <stdlib.h>\nint main(int argc, char **argv)\n{\n\tvolatile long s = 0;\n"
	                          "\tfor (long i = 0; i < (argc > 1 ? atol(argv[1]) : 1000); i++)\n\t\ts += i;\n"
	                          "\treturn 0;\n}\n");
	write_text(dir, "input.dat", "1000\n");
	if (have_library())
		snprintf(command, sizeof command,
		         "cc -O1 -I'%s/include' -o prog prog.c -L'%s' -lplumb -Wl,-rpath,'%s'", source, build,
		         build);
	else
		snprintf(command, sizeof command, "cc -O1 -o prog prog.c");
	cr_assert_eq(shell(dir, command), 0, "%s", command);
	cr_assert_eq(shell(dir, "cp prog solver && cp prog a.out && cc -O1 -o loop loop.c && "
	                        "cc -O1 -pthread -o pingpong pingpong.c && seq 20000 | sort -R > big.txt"), 0);
	/* a lackey trace, as valgrind --tool=lackey --trace-mem=yes writes it */
	char *trace = malloc(1 << 20);
	cr_assert_not_null(trace);
	size_t n = (size_t)sprintf(trace, "==1== Lackey, an example Valgrind tool\n");
	for (int i = 0; i < 8192; i++)
		n += (size_t)sprintf(trace + n, "I  %08x,4\n L %08x,8\n S %08x,8\n", 0x400000 + 4 * (i % 64),
		                     0x10000000 + 64 * (i % 2048), 0x20000000 + 8 * i);
	write_text(dir, "prog.lackey", trace);
	free(trace);
	snprintf(command, sizeof command, "'%s/plumb' trace convert prog.lackey trace.ptrace", build);
	cr_assert_eq(shell(dir, command), 0, "%s", command);
	/* a saved report (plumb report writes plumb-report.json), and two of them */
	snprintf(command, sizeof command,
	         "'%s/plumb' report --from '%s'/tests/data/report_vm_xeon/*.json -o plumb-report.html && "
	         "cp plumb-report.json monday.json && cp plumb-report.json tuesday.json",
	         build, source);
	cr_assert_eq(shell(dir, command), 0, "%s", command);
	return dir;
}

/* ------------------------------------------------------------- running */

/* The spelling check: `plumb` on PATH is a script that puts --help before
 * the first '--' (or at the end) and runs the real one; a non-zero status
 * is logged with its message. */
static void write_spelling_plumb(const char *dir)
{
	char text[8192];
	snprintf(text, sizeof text,
	         "#!/bin/sh\n"
	         "n=$#; seen=\n"
	         "for a do\n"
	         "  if [ -z \"$seen\" ] && [ \"$a\" = -- ]; then set -- \"$@\" --help --; seen=1; else set -- \"$@\" \"$a\"; fi\n"
	         "done\n"
	         "shift $n\n"
	         "[ -n \"$seen\" ] || set -- \"$@\" --help\n"
	         "'%s/plumb' \"$@\" >/dev/null 2>'%s/spelling.err'; status=$?\n"
	         "if [ $status -ne 0 ]; then echo \"plumb $*: exit $status: $(cat '%s/spelling.err')\" >>'%s/spelling.log'; fi\n"
	         "exit $status\n",
	         cli_build_dir(), dir, dir, dir);
	char path[4200];
	snprintf(path, sizeof path, "%s/spelling/plumb", dir);
	char folder[4200];
	snprintf(folder, sizeof folder, "%s/spelling", dir);
	cr_assert(mkdir(folder, 0700) == 0 || errno == EEXIST);
	write_text(folder, "plumb", text);
	cr_assert_eq(chmod(path, 0755), 0);
}

/* LINE through sh in DIR with BIN first on PATH; its output in out.log. */
static int run_line(const char *dir, const char *bin, const char *line)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(126);
		char path[8192];
		snprintf(path, sizeof path, "%s/%s:%s", dir, bin, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
		setenv("PATH", path, 1);
		/* cc finds plumb's headers and -lplumb here as it would under PREFIX */
		char include[4200], library[4200];
		snprintf(include, sizeof include, "%s/include", cli_source_dir());
		snprintf(library, sizeof library, "%s", cli_build_dir());
		setenv("CPATH", include, 1);
		setenv("LIBRARY_PATH", library, 1);
		setenv("LD_LIBRARY_PATH", library, 1);
		/* the examples' own verification file only, no one else's */
		unsetenv("PLUMB_VERIFICATION");
		setenv("PLUMB_REGION_QUIET", "1", 1);
		int out = open("out.log", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (out < 0)
			_exit(126);
		dup2(out, 1);
		dup2(out, 2);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *folder_file(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *text = cli_read_file(path, NULL);
	return text ? text : strdup("");
}

/* The first word `plumb` of LINE (NULL: none). */
static const char *first_plumb(const char *line)
{
	for (const char *p = strstr(line, "plumb "); p; p = strstr(p + 1, "plumb "))
		if (p == line || strchr(" |&;(", p[-1]))
			return p;
	return NULL;
}

/* Every example of PAGE, in order: run, or checked for spelling. */
static void walk_page(const char *page)
{
	char lines[MAX_EXAMPLES][EXAMPLE_LENGTH];
	size_t count = page_examples(page, lines, MAX_EXAMPLES);
	cr_assert_gt(count, 0, "%s has no EXAMPLES lines", page);
	const char *dir = examples_folder();
	write_spelling_plumb(dir);
	for (size_t i = 0; i < count; i++) {
		const char *line = lines[i];
		const example_rule *rule = rule_for(page, line);
		const char *why = rule ? lacking(rule->needs) : "longer than this test runs, or not in its table";
		if (rule && !why) {
			cr_log_info("%s: run '%s'", page, line);
			int status = run_line(dir, "bin", line);
			char *out = folder_file(dir, "out.log");
			cr_expect(status == 0 || status == rule->other_exit, "%s: '%s' exited %d:\n%.3000s", page, line, status,
			          out);
			if (status == 3)
				cr_expect(strstr(out, "unsupported") || strstr(out, "not supported"), "%s: '%s': %s", page, line,
				          out);
			free(out);
		} else {
			/* from its first `plumb`: what comes before it (mpirun, srun,
			 * taskset, a program piping into it) is not plumb's */
			const char *from = first_plumb(line);
			if (!from) {
				cr_log_info("%s: '%s' not run (%s) and runs no plumb to check", page, line, why);
				continue;
			}
			char log[4200];
			snprintf(log, sizeof log, "%s/spelling.log", dir);
			unlink(log);
			cr_log_info("%s: options of '%s' (%s)", page, from, why);
			int status = run_line(dir, "spelling", from);
			char *out = folder_file(dir, "spelling.log");
			char *all = folder_file(dir, "out.log");
			cr_expect(status == 0 && !*out, "%s: '%s' (its options only, as %s) exited %d: %s%.2000s", page, line,
			          why, status, out, all);
			free(out);
			free(all);
		}
	}
}

Test(examples_cli, plumb_1, .timeout = 120) { walk_page("plumb.1"); }
Test(examples_cli, bw, .timeout = 60) { walk_page("plumb-bw.1"); }
Test(examples_cli, c2c, .timeout = 120) { walk_page("plumb-c2c.1"); }
Test(examples_cli, cluster, .timeout = 60) { walk_page("plumb-cluster.1"); }
Test(examples_cli, events, .timeout = 120) { walk_page("plumb-events.1"); }
Test(examples_cli, explain, .timeout = 120) { walk_page("plumb-explain.1"); }
Test(examples_cli, geometry, .timeout = 60) { walk_page("plumb-geometry.1"); }
Test(examples_cli, instrument, .timeout = 120) { walk_page("plumb-instrument.1"); }
Test(examples_cli, lat, .timeout = 60) { walk_page("plumb-lat.1"); }
Test(examples_cli, loaded, .timeout = 120) { walk_page("plumb-loaded.1"); }
Test(examples_cli, model, .timeout = 60) { walk_page("plumb-model.1"); }
Test(examples_cli, perturb, .timeout = 60) { walk_page("plumb-perturb.1"); }
Test(examples_cli, report, .timeout = 120) { walk_page("plumb-report.1"); }
Test(examples_cli, sim, .timeout = 120) { walk_page("plumb-sim.1"); }
Test(examples_cli, stat, .timeout = 120) { walk_page("plumb-stat.1"); }
Test(examples_cli, topo, .timeout = 60) { walk_page("plumb-topo.1"); }
Test(examples_cli, trace, .timeout = 120) { walk_page("plumb-trace.1"); }
Test(examples_cli, validate, .timeout = 120) { walk_page("plumb-validate.1"); }

/* The model page's second example reproduces Hristea's Table 5.1 curve, and
 * says so with the figures: the command gives them. */
Test(examples_cli, the_model_page_prints_the_figures_it_states)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/man/plumb-model.1", cli_source_dir());
	char *page = cli_read_file(path, NULL);
	cr_assert_not_null(page);
	const char *stated = strstr(page, "Table 5.1 model curve: ");
	cr_assert_not_null(stated, "the page no longer states the curve");
	stated += strlen("Table 5.1 model curve: ");
	cli_run r = cli_run_plumbv(NULL, "model", "--service", "195", "--l0", "338", "--line-size", "128", "--at",
	                           "41,121,233,336,484,538", "--csv", "--table", "predict_contention", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	static const int at[] = { 41, 121, 233, 336, 484, 538 };
	for (int i = 0; i < 6; i++) {
		long expect = strtol(stated, (char **)&stated, 10);
		cr_assert_gt(expect, 0, "%s", stated);
		while (*stated == ',' || *stated == ' ')
			stated++;
		char prefix[32];
		snprintf(prefix, sizeof prefix, "\n%d,", at[i]);
		const char *row = strstr(r.out, prefix);
		cr_assert_not_null(row, "no row at %d MB/s: %s", at[i], r.out);
		double latency = strtod(row + strlen(prefix), NULL);
		cr_expect(labs(lround(latency) - expect) == 0, "at %d MB/s: the page says %ld ns, plumb model %.1f", at[i],
		          expect, latency);
	}
	cli_run_free(&r);
	free(page);
}

/* libplumb(3)'s program, compiled against the build tree and run. */
Test(examples_cli, libplumb_3, .timeout = 60)
{
	if (!have_library())
		cr_skip_test("this build has no libplumb.so a program can link (the sanitizer build)");
	char path[4200];
	snprintf(path, sizeof path, "%s/man/libplumb.3", cli_source_dir());
	char *page = cli_read_file(path, NULL);
	cr_assert_not_null(page);
	const char *section = strstr(page, "\n.SH EXAMPLE");
	cr_assert_not_null(section);
	const char *start = strstr(section, "\n.nf\n"), *end = start ? strstr(start, "\n.fi") : NULL;
	cr_assert(start && end, "no .nf block in libplumb(3)'s EXAMPLE");
	start += 5;
	char *code = strndup(start, (size_t)(end - start) + 1);
	char *plain = malloc(strlen(code) + 1);
	cr_assert(code && plain);
	unescape(code, plain, strlen(code) + 1);
	const char *dir = examples_folder();
	write_text(dir, "example.c", plain);
	free(code);
	free(plain);
	free(page);
	char command[16384];
	snprintf(command, sizeof command, "cc -Wall -Werror -o example example.c -lplumb && ./example");
	int status = run_line(dir, "bin", command);
	char *out = folder_file(dir, "out.log");
	cr_assert_eq(status, 0, "%s:\n%s", command, out);
	cr_expect(strstr(out, "L1D misses"), "%s", out);
	free(out);
}
