/* Exact instrumented counts: the benchmark runs once under Valgrind's
 * cachegrind (plumb validate --exec), and the counts cachegrind attributes
 * to the kernel's own function are read from its output file.  Ir, Dr and
 * Dw are exact dynamic counts (no sampling, no interface in the way);
 * D1/LL misses and Bcm come from cachegrind's models, given this machine's
 * L1I/L1D/L2 geometry explicitly (on this VM it would otherwise guess a
 * meaningless 256 MiB LL).  Lines are prepared by an eviction sweep in
 * this mode, since cachegrind ignores clflush. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/tempdir.h"
#include "core/interrupt.h"
#include "trace/trace_internal.h"
#include "validate/native.h"

/* Waits for a child started by spawn or run_valgrind: 0 when it exited 0. */
static int wait_for(pid_t pid, const char *name, plumb_status *status)
{
	int wait_status;
	if (interrupt_waitpid(pid, &wait_status) < 0) return plumb_fail_errno(status, errno, "waitpid");
	if (!WIFEXITED(wait_status)) return plumb_fail(status, EIO, "%s died of a signal", name);
	if (WEXITSTATUS(wait_status) == 127) return plumb_fail(status, ENOENT, "cannot run %s", name);
	if (WEXITSTATUS(wait_status) != 0)
		return plumb_fail(status, EIO, "%s exited with status %d", name, WEXITSTATUS(wait_status));
	return 0;
}

/* A helper program, its output on /dev/null (valgrind --version). */
static int spawn(char *const argv[], plumb_status *status)
{
	fflush(NULL);
	pid_t pid = interrupt_fork(true);
	if (pid < 0) return plumb_fail_errno(status, errno, "fork");
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return wait_for(pid, argv[0], status);
}

/* A program under Valgrind's tool, through the one launcher
 * (trace_valgrind_start), its output on /dev/null. */
static int run_valgrind(const char *valgrind, const char *tool, const char *const *options, char *const argv[],
                        plumb_status *status)
{
	trace_valgrind run = {
		.valgrind = valgrind ? valgrind : "valgrind", .tool = tool, .options = options, .argv = argv,
		.program_stdout = -1, .silent = true, .own_group = true,
	};
	pid_t pid;
	if (trace_valgrind_start(&run, &pid, status) != 0) return -1;
	return wait_for(pid, run.valgrind, status);
}

static int self_program(const char *self_path, char *self, size_t length, plumb_status *status)
{
	if (self_path) {
		snprintf(self, length, "%s", self_path);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", self, length - 1);
	if (n <= 0) return plumb_fail_errno(status, errno, "cannot find the plumb program");
	self[n] = 0;
	return 0;
}

bool validate_valgrind_available(const char *valgrind, const char *self_path, char *reason, size_t length)
{
	char *version[] = { (char *)(valgrind ? valgrind : "valgrind"), "--version", NULL };
	plumb_status status;
	if (spawn(version, &status) != 0) {
		snprintf(reason, length, "valgrind is not available: %s", status.message);
		return false;
	}
	/* Valgrind cannot run every build of plumb (an ASan build maps its
	 * shadow memory where Valgrind lives): try the smallest kernel. */
	char self[PATH_MAX];
	if (self_program(self_path, self, sizeof self, &status) != 0) {
		snprintf(reason, length, "%s", status.message);
		return false;
	}
	char *probe[] = { self, "validate", "--exec", "loads", "--exec-size", "1", NULL };
	if (run_valgrind(valgrind, "none", NULL, probe, &status) != 0) {
		snprintf(reason, length, "valgrind cannot run this plumb program (an ASan build?): %s", status.message);
		return false;
	}
	return true;
}

/* Column of each cachegrind event in the "events:" line. */
typedef struct cachegrind_columns {
	int ir, dr, dw, i1mr, d1mr, d1mw, dlmr, dlmw, bcm;
} cachegrind_columns;

#define MAX_COLUMNS 16

static int column_of(const char *events_line, const char *name)
{
	char copy[512];
	snprintf(copy, sizeof copy, "%s", events_line);
	int index = 0;
	for (char *save = NULL, *token = strtok_r(copy, " \t\n", &save); token;
	     token = strtok_r(NULL, " \t\n", &save), index++)
		if (strcmp(token, name) == 0) return index;
	return -1;
}

/* Sums the counts cachegrind attributed to function (in any file). */
static int parse_cachegrind(const char *path, const char *function, double totals[MAX_COLUMNS],
                            char *events, size_t events_length, plumb_status *status)
{
	FILE *f = fopen(path, "r");
	if (!f) return plumb_fail_errno(status, errno, "cannot read cachegrind output %s", path);
	for (int i = 0; i < MAX_COLUMNS; i++) totals[i] = 0;
	char line[1024];
	bool in_function = false, found = false;
	events[0] = 0;
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "events:", 7)) {
			size_t n = strlen(line + 7);
			if (n >= events_length) n = events_length - 1;
			memcpy(events, line + 7, n);
			events[n] = 0;
			continue;
		}
		if (!strncmp(line, "fn=", 3)) {
			line[strcspn(line, "\n")] = 0;
			in_function = strcmp(line + 3, function) == 0;
			found |= in_function;
			continue;
		}
		if (!strncmp(line, "fl=", 3)) {
			in_function = false;
			continue;
		}
		if (!in_function || line[0] < '0' || line[0] > '9') continue;
		char *cursor = line;
		strtoull(cursor, &cursor, 10);   /* the source line number */
		for (int i = 0; i < MAX_COLUMNS; i++) {
			char *end;
			unsigned long long v = strtoull(cursor, &end, 10);
			if (end == cursor) break;
			totals[i] += (double)v;
			cursor = end;
		}
	}
	fclose(f);
	if (!events[0]) return plumb_fail(status, EINVAL, "%s has no events line", path);
	if (!found) return plumb_fail(status, ENOENT, "cachegrind attributed nothing to %s", function);
	return 0;
}

int validate_instrumented_counts(const validate_benchmark *benchmark, const validate_params *params,
                                 const char *valgrind, const char *self_path,
                                 double values[VALIDATE_MAX_EVENTS], plumb_status *status)
{
	for (int e = 0; e < VALIDATE_MAX_EVENTS; e++) values[e] = NAN;
	const char *function = NULL;
	for (int e = 0; e < benchmark->event_count; e++)
		if (benchmark->events[e].instrumented != VALIDATE_INSTR_NONE)
			function = benchmark->events[e].instrumented_function;
	if (!function) return 0;

	char self[PATH_MAX];
	if (self_program(self_path, self, sizeof self, status) != 0) return -1;
	/* In $TMPDIR like every temporary folder plumb makes (plumbgrind's too). */
	char directory[PATH_MAX - 64];
	if (temp_folder(directory, sizeof directory, "plumb-validate-XXXXXX", status) != 0) return -1;
	char out[sizeof directory + 32], out_option[sizeof out + 32];
	snprintf(out, sizeof out, "%s/cachegrind.out", directory);
	/* A signal removes both (plumb/interrupt.h). */
	interrupt_add_path(out, false);
	snprintf(out_option, sizeof out_option, "--cachegrind-out-file=%s", out);
	const validate_machine *m = params->machine;
	char i1[64], d1[64], ll[64], size[32], pad[32], base[32], trips[32];
	snprintf(i1, sizeof i1, "--I1=%llu,%d,%u", (unsigned long long)m->l1i_size, m->l1i_ways, m->l1i_line);
	snprintf(d1, sizeof d1, "--D1=%llu,%d,%u", (unsigned long long)m->l1d_size, m->l1d_ways, m->l1d_line);
	snprintf(ll, sizeof ll, "--LL=%llu,%d,%u", (unsigned long long)m->l2_size, m->l2_ways, m->l2_line);
	snprintf(size, sizeof size, "%llu", (unsigned long long)params->size);
	snprintf(pad, sizeof pad, "%llu", (unsigned long long)params->pad);
	snprintf(base, sizeof base, "%llu", (unsigned long long)params->base_offset);
	snprintf(trips, sizeof trips, "%u", params->inner_trips);
	const char *options[] = { "--cache-sim=yes", "--branch-sim=yes", i1, d1, ll, out_option, NULL };
	char *argv[] = { self, "validate", "--exec", (char *)benchmark->name, "--exec-size", size, "--exec-pad", pad,
	                 "--exec-base-offset", base, "--exec-inner-trips", trips, NULL };
	double totals[MAX_COLUMNS];
	char events[512];
	int rc = run_valgrind(valgrind, "cachegrind", options, argv, status);
	if (rc == 0) rc = parse_cachegrind(out, function, totals, events, sizeof events, status);
	unlink(out);
	rmdir(directory);
	interrupt_remove_path(out);
	interrupt_remove_path(directory);
	if (rc != 0) return -1;

	for (int e = 0; e < benchmark->event_count; e++) {
		const char *a = NULL, *b = NULL;
		switch (benchmark->events[e].instrumented) {
		case VALIDATE_INSTR_INSTRUCTIONS: a = "Ir"; break;
		case VALIDATE_INSTR_READS: a = "Dr"; break;
		case VALIDATE_INSTR_WRITES: a = "Dw"; break;
		case VALIDATE_INSTR_D1_MISSES: a = "D1mr"; b = "D1mw"; break;
		case VALIDATE_INSTR_LL_MISSES: a = "DLmr"; b = "DLmw"; break;
		case VALIDATE_INSTR_I1_MISSES: a = "I1mr"; break;
		case VALIDATE_INSTR_BRANCH_MISSES: a = "Bcm"; break;
		case VALIDATE_INSTR_NONE: break;
		}
		if (!a) continue;
		int ca = column_of(events, a), cb = b ? column_of(events, b) : -1;
		if (ca < 0 || ca >= MAX_COLUMNS) continue;
		values[e] = totals[ca] + (cb >= 0 && cb < MAX_COLUMNS ? totals[cb] : 0);
	}
	return 0;
}
