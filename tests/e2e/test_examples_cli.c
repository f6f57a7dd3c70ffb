/* Every EXAMPLES section of the man pages, run as written.
 *
 * The examples are read from the pages themselves (the roff between
 * ".SH EXAMPLES" and the next ".SH": the lines of a .nf/.fi block, and the
 * .B line after each .TP), unescaped as man renders them (.B's quotes group
 * words and are dropped, so a quote that must reach the shell is \(dq), and
 * run by sh in one scratch folder per page, in order, with the built plumb
 * first on PATH.  The programs the pages name as the user's (./prog,
 * ./solver, ./pingpong, ...) are stand-ins built here; every other file an
 * example reads must be made by an earlier example of the same page.
 *
 * Quick examples must exit 0.  Long ones (a measurement of this machine:
 * report, lat, bw, loaded, c2c, geometry, cluster, full validate, perturb's
 * experiments, explain measuring the machine) are given 5 seconds, all of a
 * page's at once, and must not end in a usage error (exit 2); what they would
 * have written for a later example is made from tests/data instead.  An
 * example that needs what this machine lacks (valgrind, plumbgrind, MPI, a
 * cluster, gnuplot, a CPU it names) is skipped with the reason, and so are the
 * later ones that read its files. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run.h"
#include "../capability.h"

#define MAX_EXAMPLES 32
#define MAX_WORDS 64
#define LONG_SECONDS 5

typedef struct words { char *w[MAX_WORDS]; size_t n; } words;

/* ---- the pages ---------------------------------------------------------- */

static char *page_text(const char *page)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/man/%s", cli_source_dir(), page);
	char *text = cli_read_file(path, NULL);
	cr_assert_not_null(text, "cannot read %s: %s", path, strerror(errno));
	return text;
}

/* roff escapes as man renders them in an example. */
static void unescape(const char *in, char *out, size_t size)
{
	static const struct { const char *from, *to; } table[] = {
		{ "\\-", "-" }, { "\\e", "\\" }, { "\\(dq", "\"" }, { "\\(aq", "'" }, { "\\(ti", "~" },
		{ "\\&", "" }, { "\\ ", " " }, { "\\\\", "\\" },
	};
	size_t o = 0;
	while (*in && o + 1 < size) {
		bool done = false;
		for (size_t i = 0; i < sizeof table / sizeof table[0] && !done; i++) {
			size_t n = strlen(table[i].from);
			if (strncmp(in, table[i].from, n) == 0) {
				for (const char *t = table[i].to; *t && o + 1 < size; t++)
					out[o++] = *t;
				in += n;
				done = true;
			}
		}
		if (!done)
			out[o++] = *in++;
	}
	out[o] = 0;
}

/* A macro line's arguments as roff reads them: quotes group words ("" is a
 * quote inside), joined by one space, the quotes gone. */
static void macro_arguments(const char *in, char *out, size_t size)
{
	size_t o = 0;
	while (*in) {
		while (*in == ' ')
			in++;
		if (!*in)
			break;
		if (o && o + 1 < size)
			out[o++] = ' ';
		if (*in == '"') {
			for (in++; *in; in++) {
				if (*in == '"' && in[1] == '"') {
					in++;
				} else if (*in == '"') {
					in++;
					break;
				}
				if (o + 1 < size)
					out[o++] = *in;
			}
		} else {
			for (; *in && *in != ' '; in++)
				if (o + 1 < size)
					out[o++] = *in;
		}
	}
	out[o] = 0;
}

/* The page's examples, as a reader types them; the count. */
static size_t page_examples(const char *page, char examples[][1024])
{
	char *text = page_text(page);
	char *start = strstr(text, "\n.SH EXAMPLES\n");
	cr_assert_not_null(start, "%s has no EXAMPLES section", page);
	size_t count = 0;
	bool fill = true, after_tp = false;
	char pending[1024] = "";
	for (char *line = strchr(start + 1, '\n') + 1; *line;) {
		char *end = strchr(line, '\n');
		size_t length = end ? (size_t)(end - line) : strlen(line);
		char raw[1024];
		snprintf(raw, sizeof raw, "%.*s", (int)length, line);
		line = end ? end + 1 : line + length;
		if (strncmp(raw, ".SH", 3) == 0)
			break;
		char example[1024] = "";
		if (strcmp(raw, ".nf") == 0) {
			fill = false;
		} else if (strcmp(raw, ".fi") == 0) {
			fill = true;
		} else if (!fill && raw[0] != '.' && raw[0]) {
			unescape(raw, example, sizeof example);
		} else if (after_tp && strncmp(raw, ".B ", 3) == 0) {
			char arguments[1024];
			macro_arguments(raw + 3, arguments, sizeof arguments);
			unescape(arguments, example, sizeof example);
		}
		after_tp = strcmp(raw, ".TP") == 0;
		if (!example[0])
			continue;
		/* a line ending in a backslash goes on on the next */
		char joined[1024];
		snprintf(joined, sizeof joined, "%s%s", pending, example);
		size_t n = strlen(joined);
		if (n && joined[n - 1] == '\\') {
			joined[n - 1] = ' ';
			snprintf(pending, sizeof pending, "%s", joined);
			continue;
		}
		pending[0] = 0;
		cr_assert_lt(count, MAX_EXAMPLES, "%s: too many examples for this test", page);
		snprintf(examples[count++], 1024, "%s", joined);
	}
	free(text);
	cr_assert_gt(count, 0, "%s: no example found in its EXAMPLES section", page);
	return count;
}

/* ---- shell words -------------------------------------------------------- */

/* The commands of an example: split at && and ; outside quotes, a comment
 * dropped.  Pipelines stay whole. */
static size_t split_commands(const char *example, char commands[][1024], size_t max)
{
	size_t n = 0, o = 0;
	char quote = 0;
	char current[1024];
	for (const char *p = example;; p++) {
		bool cut = false;
		if (!*p) {
			cut = true;
		} else if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		} else if (*p == '#' && (p == example || isspace((unsigned char)p[-1]))) {
			while (p[1])
				p++;
			cut = true;
			p++;
		} else if (*p == ';' || (*p == '&' && p[1] == '&')) {
			if (*p == '&')
				p++;
			cut = true;
		}
		if (cut) {
			current[o] = 0;
			char *s = current;
			while (isspace((unsigned char)*s))
				s++;
			for (size_t e = strlen(s); e && isspace((unsigned char)s[e - 1]); e--)
				s[e - 1] = 0;
			if (*s && n < max)
				snprintf(commands[n++], 1024, "%s", s);
			o = 0;
			if (!*p)
				break;
			continue;
		}
		if (o + 1 < sizeof current)
			current[o++] = *p;
	}
	return n;
}

/* Shell words, quotes removed (no expansion: the examples use none). */
static words split_words(const char *command)
{
	words w = { .n = 0 };
	const char *p = command;
	while (*p && w.n < MAX_WORDS) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		char word[1024];
		size_t o = 0;
		char quote = 0;
		for (; *p && (quote || !isspace((unsigned char)*p)); p++) {
			if (quote && *p == quote)
				quote = 0;
			else if (!quote && (*p == '\'' || *p == '"'))
				quote = *p;
			else if (o + 1 < sizeof word)
				word[o++] = *p;
		}
		word[o] = 0;
		w.w[w.n++] = strdup(word);
	}
	return w;
}

static void free_words(words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->w[i]);
	w->n = 0;
}

static bool has_word(const words *w, const char *word)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->w[i], word) == 0)
			return true;
	return false;
}

static bool has_prefix_word(const words *w, const char *prefix)
{
	for (size_t i = 0; i < w->n; i++)
		if (strncmp(w->w[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* The value after OPTION (or NULL). */
static const char *option_value(const words *w, const char *option)
{
	for (size_t i = 0; i + 1 < w->n; i++)
		if (strcmp(w->w[i], option) == 0)
			return w->w[i + 1];
	return NULL;
}

/* The first plumb command's words: "plumb" and what follows, to the end of
 * the command or of its pipeline stage. */
static words plumb_words(const words *all)
{
	words w = { .n = 0 };
	size_t i = 0;
	while (i < all->n && strcmp(all->w[i], "plumb") != 0)
		i++;
	for (; i < all->n && strcmp(all->w[i], "|") != 0 && strcmp(all->w[i], ">") != 0; i++)
		w.w[w.n++] = all->w[i];
	return w;
}

/* ---- what an example needs ---------------------------------------------- */

static bool on_path(const char *program)
{
	const char *path = getenv("PATH");
	char copy[8192];
	snprintf(copy, sizeof copy, "%s", path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char full[8400];
		snprintf(full, sizeof full, "%s/%s", dir, program);
		if (access(full, X_OK) == 0)
			return true;
	}
	return false;
}

static bool cpu_allowed(long cpu)
{
	cpu_set_t set;
	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0)
		return false;
	return CPU_ISSET((int)cpu, &set);
}

/* Whether every CPU of a list like 0-3,8 may be used here. */
static bool cpus_allowed(const char *list)
{
	char copy[256];
	snprintf(copy, sizeof copy, "%s", list);
	for (char *save = NULL, *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		char *end;
		long low = strtol(part, &end, 10), high = low;
		if (*end == '-')
			high = strtol(end + 1, &end, 10);
		for (long cpu = low; cpu <= high; cpu++)
			if (!cpu_allowed(cpu))
				return false;
	}
	return true;
}

static bool built_with_mpi(void)
{
	cli_run r = cli_run_plumbv(NULL, "cluster", "--sections", "topo", "-o", cli_temp_path("mpi-probe"), NULL);
	bool without = strstr(r.err, "built without MPI") != NULL;
	cli_run_free(&r);
	return !without;
}

/* Why this command cannot run here, or NULL. */
static const char *missing(const words *all, const words *plumb, char *why, size_t size)
{
	const char *sub = plumb->n > 1 ? plumb->w[1] : "";
	bool valgrind = has_word(all, "valgrind");
	bool plumbgrind = has_word(all, "--tool=plumbgrind") ||
	                  (strcmp(sub, "instrument") == 0 && !has_word(plumb, "--summary")) ||
	                  strcmp(sub, "explain") == 0 || (strcmp(sub, "sim") == 0 && has_word(plumb, "--")) ||
	                  (strcmp(sub, "trace") == 0 && has_word(plumb, "record")) ||
	                  (strcmp(sub, "report") == 0 && has_word(plumb, "--program"));
	if ((valgrind || plumbgrind) && PLUMB_TEST_ASAN)
		return "runs under valgrind, which cannot run the AddressSanitizer build";
	if (PLUMB_TEST_ASAN && strcmp(sub, "perturb") == 0 && has_word(plumb, "--") && !has_word(plumb, "--simulate"))
		return "preloads libplumb.so into the program, which the AddressSanitizer build does not make";
	if (valgrind && !on_path("valgrind"))
		return "needs valgrind";
	if (plumbgrind && !cli_plumbgrind_built())
		return "needs plumbgrind (built only where valgrind's tool libraries are installed)";
	if (strcmp(all->w[0], "cc") == 0 && (PLUMB_TEST_ASAN || !on_path("cc")))
		return PLUMB_TEST_ASAN ? "links the AddressSanitizer build's libplumb, which a program run under valgrind cannot"
		                       : "needs a C compiler (cc)";
	if (has_word(all, "mpirun")) {
		if (has_prefix_word(all, "ppr:1:node"))
			return "needs a cluster, one node per rank";
		if (!on_path("mpirun"))
			return "needs mpirun (Debian: openmpi-bin)";
		if (!built_with_mpi())
			return "plumb was built without MPI";
	}
	if (strcmp(sub, "validate") == 0 && (has_word(plumb, "-d") || has_word(plumb, "--plot-format")) &&
	    !on_path("gnuplot"))
		return "draws its plots with gnuplot, which is absent";
	/* counting through perf_event_open (software events do on any Linux that allows it) */
	const char *backend = option_value(plumb, "--backend");
	bool simulated = backend && (!strcmp(backend, "sim") || !strncmp(backend, "synthetic", 9));
	bool counts = (!strcmp(sub, "validate") && !simulated) || (!strcmp(sub, "stat") && !has_word(plumb, "--calibrate")) ||
	              (!strcmp(sub, "perturb") && !has_word(plumb, "--simulate") && !has_word(plumb, "--once"));
	plumb_status status;
	if (counts && counter_backend_usable("perf", &status) != 0) {
		snprintf(why, size, "counts through perf, unusable here: %s", status.message);
		return why;
	}
	const char *pair = option_value(plumb, "--pair");
	if (pair && !cpus_allowed(pair)) {
		snprintf(why, size, "needs CPUs %s, and this process may not run on them all", pair);
		return why;
	}
	if (strcmp(all->w[0], "taskset") == 0 && all->n > 2 && strcmp(all->w[1], "-c") == 0 &&
	    !cpus_allowed(all->w[2])) {
		snprintf(why, size, "needs CPU %s, and this process may not run on it", all->w[2]);
		return why;
	}
	return NULL;
}

/* Whether the command measures this machine for longer than a test may wait. */
static bool is_long(const words *plumb)
{
	if (plumb->n < 2)
		return false;
	const char *sub = plumb->w[1];
	if (!strcmp(sub, "bw") || !strcmp(sub, "loaded") || !strcmp(sub, "c2c") || !strcmp(sub, "geometry") ||
	    !strcmp(sub, "cluster"))
		return true;
	if (!strcmp(sub, "lat"))
		return !has_word(plumb, "--from");
	if (!strcmp(sub, "report"))
		return !has_word(plumb, "--from") && !has_word(plumb, "--compare");
	if (!strcmp(sub, "explain"))
		return !has_word(plumb, "--machine");
	if (!strcmp(sub, "perturb"))
		return has_word(plumb, "--design") || has_word(plumb, "--simulate");
	if (!strcmp(sub, "validate")) {
		const char *backend = option_value(plumb, "--backend");
		const char *runs = option_value(plumb, "--runs");
		if (backend && (!strcmp(backend, "sim") || !strncmp(backend, "synthetic", 9)))
			return false;
		return !(runs && atoi(runs) <= 3);
	}
	return false;
}

/* ---- running ------------------------------------------------------------ */

typedef struct page_run {
	char dir[4096];
	char data[4096];          /* tests/data/report_vm_xeon */
	char skipped_files[32][256];
	size_t skipped_count;
	pid_t pids[MAX_EXAMPLES * 2];
	char long_commands[MAX_EXAMPLES * 2][1024];
	size_t long_count;
	size_t ran, skipped;
} page_run;

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static int shell(const char *command)
{
	int status = system(command);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The user's programs the pages name: one stand-in that touches some memory
 * and passes a flag between two threads a few times (pingpong). */
static const char stand_in[] =
	"#include <pthread.h>\n#include <sched.h>\n#include <stdatomic.h>\n#include <stdlib.h>\n"
	"static atomic_int flag;\n"
	"static void *other(void *a) { (void)a; for (int i = 0; i < 10; i++) { while (atomic_load(&flag) != 1) sched_yield();"
	" atomic_store(&flag, 0); } return 0; }\n"
	"int main(void) { pthread_t t; if (pthread_create(&t, 0, other, 0)) return 1;"
	" for (int i = 0; i < 10; i++) { atomic_store(&flag, 1); while (atomic_load(&flag) != 0) sched_yield(); }"
	" pthread_join(t, 0); volatile char *p = calloc(4096, 64); if (!p) return 1;"
	" for (int r = 0; r < 2; r++) for (int i = 0; i < 4096; i++) p[i * 64]++; return 0; }\n";

/* The source explain's first example compiles: one marked region. */
static const char user_source[] =
	"#include <stdlib.h>\n#include <plumb/region.h>\n"
	"int main(void) { volatile char *p = calloc(4096, 64); if (!p) return 1; plumb_region_begin(\"sweep\");"
	" for (int i = 0; i < 4096; i++) p[i * 64]++; plumb_region_end(\"sweep\"); return 0; }\n";

static void prepare(page_run *run, const char *page)
{
	snprintf(run->dir, sizeof run->dir, "%s", cli_temp_path(page));
	snprintf(run->data, sizeof run->data, "%s/tests/data/report_vm_xeon", cli_source_dir());
	cr_assert_eq(mkdir(run->dir, 0700), 0, "%s: %s", run->dir, strerror(errno));
	char path[4300], command[16384];
	snprintf(path, sizeof path, "%s/bin", run->dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	char plumb[4096];
	cr_assert_not_null(realpath(getenv("PLUMB_BIN"), plumb));
	snprintf(command, sizeof command, "%s/plumb", path);
	cr_assert_eq(symlink(plumb, command), 0);
	char *old_path = getenv("PATH");
	snprintf(command, sizeof command, "%s:%s", path, old_path ? old_path : "/usr/bin:/bin");
	setenv("PATH", command, 1);
	/* cc -lplumb finds the built library and its headers, as an installed one */
	char build[4096], include[4200];
	cr_assert_not_null(realpath(cli_build_dir(), build));
	snprintf(include, sizeof include, "%s/include", cli_source_dir());
	setenv("CPATH", include, 1);
	setenv("LIBRARY_PATH", build, 1);
	setenv("LD_LIBRARY_PATH", build, 1);
	/* mpirun as the test runs it (root in a container, no cross-memory attach) */
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	setenv("OMPI_MCA_btl", "self,vader", 1);
	setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
	if (PLUMB_TEST_ASAN)
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	snprintf(path, sizeof path, "%s/stand-in.c", run->dir);
	write_text(path, stand_in);
	snprintf(path, sizeof path, "%s/prog.c", run->dir);
	write_text(path, user_source);
	snprintf(path, sizeof path, "%s/big.txt", run->dir);
	write_text(path, "pear\napple\nfig\n");
	snprintf(path, sizeof path, "%s/input.dat", run->dir);
	write_text(path, "1\n");
	snprintf(command, sizeof command,
	         "cd %s && cc -O1 -pthread -o prog stand-in.c && for p in solver loop a.out myprog pingpong; do "
	         "cp prog $p || exit 1; done",
	         run->dir);
	cr_assert_eq(shell(command), 0, "cannot build the stand-in programs: %s", command);
}

/* COMMAND for sh -c, quoted for a shell command line. */
static void quote(const char *command, char *out, size_t size)
{
	size_t o = 0;
	out[o++] = '\'';
	for (const char *p = command; *p && o + 5 < size; p++) {
		if (*p == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *p;
		}
	}
	out[o++] = '\'';
	out[o] = 0;
}

/* The installed plumbgrind's folder in an example is the built one here. */
static void built_paths(const char *command, char *out, size_t size)
{
	cr_assert_lt(strlen(command), 1024);
	static const char installed[] = "/usr/local/lib/plumb/valgrind";
	const char *at = strstr(command, installed);
	char build[4096];
	cr_assert_not_null(realpath(cli_build_dir(), build));
	if (!at)
		snprintf(out, size, "%s", command);
	else
		snprintf(out, size, "%.*s%s/vg/lib%s", (int)(at - command), command, build, at + strlen(installed));
}

/* What a long command stopped by the test would have written for the page's
 * later examples, made from tests/data instead (atomically: the command may
 * yet write it itself). */
static void stand_in_outputs(page_run *run, const words *plumb)
{
	const char *sub = plumb->n > 1 ? plumb->w[1] : "";
	const char *output = option_value(plumb, "-o");
	char command[16384];
	if ((!strcmp(sub, "lat") || !strcmp(sub, "loaded")) && output && has_word(plumb, "--json")) {
		snprintf(command, sizeof command, "cd %s && [ -e %s ] || { cp %s/%s.json %s.tmp && mv %s.tmp %s; }",
		         run->dir, output, run->data, sub, output, output, output);
		cr_assert_eq(shell(command), 0, "%s", command);
	} else if (!strcmp(sub, "report")) {
		char html[512];
		snprintf(html, sizeof html, "%s", output ? output : "plumb-report.html");
		snprintf(command, sizeof command, "cd %s && plumb report --from %s/*.json -o %s >/dev/null", run->dir,
		         run->data, html);
		cr_assert_eq(shell(command), 0, "%s", command);
	}
}

/* The files a skipped command names, so that later commands reading them are
 * skipped too. */
static void remember_files(page_run *run, const words *all)
{
	for (size_t i = 0; i < all->n; i++) {
		const char *w = all->w[i];
		const char *equals = strchr(w, '=');
		if (w[0] == '-' && equals)
			w = equals + 1;
		if (w[0] == '-' || !strchr(w, '.') || strncmp(w, "./", 2) == 0 || strchr(w, '/'))
			continue;
		if (run->skipped_count < 32)
			snprintf(run->skipped_files[run->skipped_count++], 256, "%s", w);
	}
}

static const char *reads_skipped(const page_run *run, const words *all)
{
	for (size_t i = 0; i < all->n; i++)
		for (size_t k = 0; k < run->skipped_count; k++)
			if (strcmp(all->w[i], run->skipped_files[k]) == 0 ||
			    (strchr(all->w[i], '=') && strcmp(strchr(all->w[i], '=') + 1, run->skipped_files[k]) == 0))
				return run->skipped_files[k];
	return NULL;
}

/* The files a command reads must be there when it runs: made by an earlier
 * example of the page (or, for a long one the test stopped, from tests/data).
 * plumb validate writes its --verification file; everything else reads the
 * files these options name. */
static void expect_inputs(const page_run *run, const char *page, const char *command, const words *plumb)
{
	static const char *const reading[] = { "--verification", "--from", "--summary", "--machine", "--on",
	                                       "--levels-from", "--simulate", "--rate-trace", "--compare" };
	bool validate = plumb->n > 1 && strcmp(plumb->w[1], "validate") == 0;
	for (size_t i = 2; i + 1 < plumb->n; i++) {
		if (strcmp(plumb->w[i], "--") == 0)
			break;
		for (size_t k = 0; k < sizeof reading / sizeof reading[0]; k++) {
			if (strcmp(plumb->w[i], reading[k]) != 0 || (validate && k == 0))
				continue;
			size_t values = strcmp(reading[k], "--compare") == 0 ? 2 : 1;
			for (size_t v = 1; v <= values && i + v < plumb->n; v++) {
				const char *file = plumb->w[i + v];
				char path[8400];
				snprintf(path, sizeof path, "%s/%s", run->dir, file);
				cr_expect(strcmp(file, "-") == 0 || access(path, F_OK) == 0,
				          "%s: '%s' reads %s, which no earlier example of the page makes", page, command, file);
			}
		}
	}
}

static char *last_line(char *text)
{
	if (!text)
		return "";
	size_t n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = 0;
	char *line = strrchr(text, '\n');
	return line ? line + 1 : text;
}

/* Runs one command of an example; OUT_NAME gets its standard output. */
static void run_command(page_run *run, const char *page, const char *example, const char *command, size_t index)
{
	words all = split_words(command);
	if (all.n == 0)
		return;
	words plumb = plumb_words(&all);
	char why[512];
	const char *reason = missing(&all, &plumb, why, sizeof why);
	const char *file = reads_skipped(run, &all);
	char file_reason[512];
	if (!reason && file) {
		snprintf(file_reason, sizeof file_reason, "reads %s, which a skipped example makes", file);
		reason = file_reason;
	}
	if (reason) {
		cr_log_info("%s: skipped '%s': %s", page, command, reason);
		remember_files(run, &all);
		run->skipped++;
		free_words(&all);
		return;
	}
	expect_inputs(run, page, command, &plumb);
	char actual[8192], quoted[16400], line[24576];
	built_paths(command, actual, sizeof actual);
	quote(actual, quoted, sizeof quoted);
	bool long_one = is_long(&plumb);
	if (long_one) {
		cr_assert_lt(run->long_count, MAX_EXAMPLES * 2);
		snprintf(line, sizeof line, "cd %s && exec timeout -k 2 %d nice -n 19 sh -c %s >long%zu.out 2>long%zu.err </dev/null",
		         run->dir, LONG_SECONDS, quoted, run->long_count, run->long_count);
		pid_t pid = fork();
		cr_assert(pid >= 0);
		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", line, (char *)NULL);
			_exit(127);
		}
		run->pids[run->long_count] = pid;
		snprintf(run->long_commands[run->long_count++], 1024, "%s", command);
		stand_in_outputs(run, &plumb);
	} else {
		snprintf(line, sizeof line, "cd %s && timeout -k 2 120 sh -c %s >ex%zu.out 2>ex%zu.err </dev/null", run->dir,
		         quoted, index, index);
		int code = shell(line);
		char path[4400];
		snprintf(path, sizeof path, "%s/ex%zu.err", run->dir, index);
		char *err = cli_read_file(path, NULL);
		bool uncountable = code == 3 && plumb.n > 1 && !strcmp(plumb.w[1], "stat") && err &&
		                   strstr(err, "cannot be counted here");
		if (uncountable)
			cr_log_info("%s: '%s': exit 3, an event this machine cannot count", page, command);
		cr_expect(code == 0 || uncountable, "%s: example '%s': '%s' exited %d: %s", page, example, command, code,
		          last_line(err));
		free(err);
	}
	run->ran++;
	free_words(&all);
}

static void finish(page_run *run, const char *page)
{
	for (size_t i = 0; i < run->long_count; i++) {
		int status = 0;
		while (waitpid(run->pids[i], &status, 0) < 0 && errno == EINTR)
			;
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		char path[4400];
		snprintf(path, sizeof path, "%s/long%zu.err", run->dir, i);
		char *err = cli_read_file(path, NULL);
		cr_expect(code != 2 && code != 126 && code != 127, "%s: '%s' exited %d within %d s: %s", page,
		          run->long_commands[i], code, LONG_SECONDS, last_line(err));
		free(err);
	}
	cr_log_info("%s: %zu commands ran (%zu of them for %d s at most), %zu skipped", page, run->ran, run->long_count,
	            LONG_SECONDS, run->skipped);
}

/* Every example of PAGE, in order, in one folder. */
static void check_page(const char *page)
{
	static page_run run;
	memset(&run, 0, sizeof run);
	prepare(&run, page);
	static char examples[MAX_EXAMPLES][1024];
	size_t count = page_examples(page, examples);
	size_t index = 0;
	for (size_t e = 0; e < count; e++) {
		char commands[8][1024];
		size_t n = split_commands(examples[e], commands, 8);
		for (size_t c = 0; c < n; c++)
			run_command(&run, page, examples[e], commands[c], index++);
	}
	finish(&run, page);
}

/* ---- the tests ---------------------------------------------------------- */

static const char *const pages[] = {
	"plumb.1", "plumb-bw.1", "plumb-c2c.1", "plumb-cluster.1", "plumb-events.1", "plumb-explain.1",
	"plumb-geometry.1", "plumb-instrument.1", "plumb-lat.1", "plumb-loaded.1", "plumb-model.1",
	"plumb-perturb.1", "plumb-report.1", "plumb-sim.1", "plumb-stat.1", "plumb-topo.1", "plumb-trace.1",
	"plumb-validate.1",
};

Test(examples_cli, every_page_is_here)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/man", cli_source_dir());
	DIR *dir = opendir(path);
	cr_assert_not_null(dir, "%s: %s", path, strerror(errno));
	for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
		size_t n = strlen(entry->d_name);
		if (n < 3 || strcmp(entry->d_name + n - 2, ".1") != 0)
			continue;
		bool listed = false;
		for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
			listed |= strcmp(pages[i], entry->d_name) == 0;
		cr_expect(listed, "man/%s is not in this test's list of pages", entry->d_name);
	}
	closedir(dir);
}

/* The reading of the pages itself: .B's quotes and roff's escapes. */
Test(examples_cli, examples_read_as_man_renders_them)
{
	char out[1024], plain[1024];
	macro_arguments("plumb report \\-\\-quick \\-\\-program \"./solver \\-\\-grid 256\"", out, sizeof out);
	unescape(out, plain, sizeof plain);
	cr_assert_str_eq(plain, "plumb report --quick --program ./solver --grid 256");
	macro_arguments("\"plumb report \\-\\-program \\(dq./solver \\-\\-grid 256\\(dq\"", out, sizeof out);
	unescape(out, plain, sizeof plain);
	cr_assert_str_eq(plain, "plumb report --program \"./solver --grid 256\"");
	char commands[8][1024];
	size_t n = split_commands("plumb lat --json -o l.json && plumb geometry --levels-from l.json   # comment", commands,
	                          8);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(commands[1], "plumb geometry --levels-from l.json");
	n = split_commands("a ';' b; c \"x && y\" | d", commands, 8);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(commands[1], "c \"x && y\" | d");
	static char examples[MAX_EXAMPLES][1024];
	n = page_examples("plumb-trace.1", examples);
	bool pipeline = false;
	for (size_t i = 0; i < n; i++)
		pipeline |= strstr(examples[i], "--log-fd=3 ./prog 3>&1 >/dev/null | plumb trace convert - prog.ptrace") != NULL;
	cr_assert(pipeline, "the continued lackey line of plumb-trace(1) is one example");
}

#define PAGE_TEST(name, file) \
	Test(examples_cli, name, .timeout = 600) { check_page(file); }

PAGE_TEST(plumb, "plumb.1")
PAGE_TEST(bw, "plumb-bw.1")
PAGE_TEST(c2c, "plumb-c2c.1")
PAGE_TEST(cluster, "plumb-cluster.1")
PAGE_TEST(events, "plumb-events.1")
PAGE_TEST(explain, "plumb-explain.1")
PAGE_TEST(geometry, "plumb-geometry.1")
PAGE_TEST(instrument, "plumb-instrument.1")
PAGE_TEST(lat, "plumb-lat.1")
PAGE_TEST(loaded, "plumb-loaded.1")
PAGE_TEST(perturb, "plumb-perturb.1")
PAGE_TEST(report, "plumb-report.1")
PAGE_TEST(sim, "plumb-sim.1")
PAGE_TEST(stat, "plumb-stat.1")
PAGE_TEST(topo, "plumb-topo.1")
PAGE_TEST(trace, "plumb-trace.1")
PAGE_TEST(validate, "plumb-validate.1")

/* plumb-model(1) also says what its second example prints: Hristea's (1997)
 * Table 5.1 curve, to the nanosecond. */
Test(examples_cli, model, .timeout = 600)
{
	check_page("plumb-model.1");
	char *text = page_text("plumb-model.1");
	const char *claim = strstr(text, "model curve:");
	cr_assert_not_null(claim, "plumb-model(1) no longer quotes the curve its example prints");
	double expected[16];
	size_t n = 0;
	for (const char *p = claim + strlen("model curve:"); n < 16;) {
		char *end;
		double v = strtod(p, &end);
		if (end == p)
			break;
		expected[n++] = v;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	free(text);
	cr_assert_eq(n, 6, "the page quotes %zu figures", n);
	static char examples[MAX_EXAMPLES][1024];
	size_t count = page_examples("plumb-model.1", examples);
	cr_assert_geq(count, 2);
	words w = split_words(examples[1]);
	const char *at = option_value(&w, "--at");
	cr_assert_not_null(at);
	cli_run r = cli_run_plumb(NULL, (const char *const *)w.w + 1);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	/* the rows of --at's contentions: contention, latency, ... */
	const char *table = strstr(r.out, "Predicted latency against generator contention");
	cr_assert_not_null(table, "%s", r.out);
	char list[256];
	snprintf(list, sizeof list, "%s", at);
	size_t k = 0;
	for (char *save = NULL, *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save), k++) {
		double contention = atof(item), latency = NAN;
		for (const char *line = table; line && *line && isnan(latency); line = strchr(line, '\n')) {
			line += *line == '\n';
			double c, l;
			if (sscanf(line, "%lf %lf", &c, &l) == 2 && fabs(c - contention) < 0.05)
				latency = l;
			if (*line == '\n')
				break;   /* the table's end */
		}
		cr_assert(!isnan(latency), "no row for contention %s MB/s in:\n%s", item, table);
		cr_expect_eq(lround(latency), lround(expected[k]), "at %s MB/s: %.1f ns, the page says %.0f", item, latency,
		             expected[k]);
	}
	cr_assert_eq(k, n, "--at lists %zu contentions, the page quotes %zu latencies", k, n);
	cli_run_free(&r);
	free_words(&w);
}

/* libplumb(3)'s example program compiles against the built library and runs. */
Test(examples_cli, libplumb_example_program)
{
	REQUIRE_NO_ASAN("the program would need the sanitizer runtime first");
	if (!on_path("cc"))
		cr_skip_test("needs a C compiler (cc)");
	char *text = page_text("libplumb.3");
	char *start = strstr(text, "\n.SH EXAMPLE\n");
	cr_assert_not_null(start, "libplumb(3) has no EXAMPLE section");
	char *nf = strstr(start, "\n.nf\n"), *fi = strstr(start, "\n.fi\n");
	cr_assert(nf && fi && nf < fi);
	char source_path[4200], program[4200], command[32768];
	snprintf(source_path, sizeof source_path, "%s", cli_temp_path("example.c"));
	snprintf(program, sizeof program, "%s", cli_temp_path("example"));
	FILE *f = fopen(source_path, "w");
	cr_assert_not_null(f);
	for (char *line = nf + 5; line < fi + 1;) {
		char *end = strchr(line, '\n');
		char raw[1024], plain[1024];
		snprintf(raw, sizeof raw, "%.*s", (int)(end - line), line);
		unescape(raw, plain, sizeof plain);
		fprintf(f, "%s\n", plain);
		line = end + 1;
	}
	cr_assert_eq(fclose(f), 0);
	free(text);
	char build[4096];
	cr_assert_not_null(realpath(cli_build_dir(), build));
	snprintf(command, sizeof command, "cc -std=c11 -Wall -Wextra -Werror -I%s/include -o %s %s -L%s -lplumb -Wl,-rpath,%s",
	         cli_source_dir(), program, source_path, build, build);
	cr_assert_eq(shell(command), 0, "%s", command);
	snprintf(command, sizeof command, "%s > %s.out", program, program);
	cr_assert_eq(shell(command), 0, "%s", command);
	snprintf(command, sizeof command, "%s.out", program);
	char *out = cli_read_file(command, NULL);
	cr_assert_not_null(out);
	unsigned long long misses = 0;
	cr_expect_eq(sscanf(out, "%llu L1D misses", &misses), 1, "%s", out);
	cr_expect_eq(misses, 1, "one read of a cold line is one L1D miss: %s", out);
	free(out);
}
