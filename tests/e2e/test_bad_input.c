/* The bad-input table: every way a user can hand plumb something it cannot
 * use, one line each, run end to end through the built program.  Each case
 * checks the exit status and plumb's one-line message: stderr holds exactly
 * one line, starting "plumb", containing the expected text; no sanitizer
 * report, no crash, no child process left running, and nothing left in the
 * case's working folder (an output that was asked for and failed, or its
 * FILE.tmp.RANDOM, must not stay behind).
 *
 * docs/bad-input.md lists the same cases: the test doc_matches_the_table
 * fails when they drift apart, and rewrites the doc's table when run with
 * PLUMB_BAD_INPUT_DOC=docs/bad-input.md.
 *
 * Each case runs in a fresh folder under /tmp holding the fixtures below
 * (a valid lackey trace, broken CSVs, configurations ...), removed after. */
#include <criterion/criterion.h>
#include <limits.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "counters/counters.h"
#include "run.h"
#include "../temp_folder.h"

enum {
	TRACES = 1 << 0,       /* fixtures: native traces, whole and broken (runs plumb trace convert) */
	VALGRIND = 1 << 1,     /* needs valgrind on PATH */
	PLUMBGRIND = 1 << 2,   /* needs plumbgrind and its test program (%T) built */
	ONE_CPU = 1 << 3,      /* started with an affinity mask of one CPU (%C0); %C1 is a CPU outside it */
	NO_PAPI = 1 << 4,      /* shows PAPI unusable: skipped where PAPI counts */
	PROGRAM_STDERR = 1 << 5, /* lines before plumb's may be the traced program's (valgrind's crash report) */
	BIG_MEMORY = 1 << 6,   /* asks for 64 GiB: skipped where that much is available */
	FULL = 1 << 7,         /* %F: a full device, a private copy of /dev/full (see full_device) */
	SIGINT_SENT = 1 << 8,  /* SIGINT once plumb is under way (exit 130) */
	SIGTERM_SENT = 1 << 9, /* SIGTERM once plumb is under way (exit 143) */
	AFTER_CHILD = 1 << 10, /* under way = plumb has started a child process (else: 300 ms after the start) */
	QUIET = 1 << 11,       /* stderr may also be empty (a run stopped by a signal) */
	KEEPS_TRACE = 1 << 12, /* out.ptrace stays, complete: plumb trace stats must read it */
	NOT_SANITIZED = 1 << 13, /* runs plumb itself under valgrind, which cannot run an ASan build */
};

typedef struct bad_case {
	const char *name;
	unsigned flags;
	int exit_code;
	const char *message;    /* in plumb's one stderr line */
	const char *argv[14];   /* %T: the plumbgrind test program; %C0, %C1: allowed CPUs */
	const char *report;     /* in stdout, when the command still prints its report */
} bad_case;

/* 1,024 zeros and a 12: longer than validate's copy of --sizes, which was
 * cut and read as 1 (the hostile sweep, tests/hostile-sweep.sh) */
#define ZEROS_64 "0000000000000000000000000000000000000000000000000000000000000000"
#define ZEROS_1024 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 \
	ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64 ZEROS_64
#define SIMS_5 "sim,sim,sim,sim,sim,"
#define SIMS_60 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5 SIMS_5
#define RO "/sys/plumb-bad-input.out"   /* sysfs refuses new files, even to root */
#define USAGE 2
#define CASE(name, flags, status, message, ...) { name, flags, status, message, { __VA_ARGS__ }, NULL }
#define CASE_REPORT(name, flags, status, message, report, ...) { name, flags, status, message, { __VA_ARGS__ }, report }

static const bad_case cases[] = {
	/* The top level. */
	CASE("top-unknown-command", 0, USAGE, "'frobnicate' is not a command", "frobnicate"),
	CASE("top-misspelled-command", 0, USAGE, "'stats' is not a command; did you mean 'stat'?", "stats", "-e", "page-faults", "--", "true"),
	CASE("sim-short-s", 0, USAGE, "-s is not an option of sim (in other commands it is --sizes); give a setting with --set KEY=VALUE", "sim", "-s", "l1d.size=32K", "t.lackey"),
	CASE("validate-max-size-is-bytes-elsewhere", 0, USAGE, "--max-size is a size in bytes elsewhere; validate's cap is a count of events: --max-count N", "validate", "--max-size", "100"),
	CASE("top-transposed-command", 0, USAGE, "'lta' is not a command; did you mean 'lat'?", "lta"),
	CASE("top-help-misspelled-command", 0, USAGE, "'explian' is not a command; did you mean 'explain'?", "help", "explian"),
	CASE("top-unknown-option", 0, USAGE, "'--bogus' is not a command", "--bogus"),
	CASE("top-help-unknown-command", 0, USAGE, "'nosuch' is not a command", "help", "nosuch"),
	/* topo */
	CASE("topo-unknown-option", 0, USAGE, "unknown option '--bogus'", "topo", "--bogus"),
	CASE("topo-extra-argument", 0, USAGE, "unexpected argument 'extra'", "topo", "extra"),
	CASE("topo-output-needs-value", 0, USAGE, "option '-o' needs a value", "topo", "-o"),
	CASE("topo-output-long-needs-value", 0, USAGE, "option '--output' needs a value", "topo", "--output"),
	/* Hostile input (the security section): nothing made beside a device. */
	CASE("topo-csv-to-a-device", 0, 0, "are not written beside it, as it is not a regular file", "topo", "--csv", "-o", "/dev/null"),
	CASE("topo-output-missing-folder", 0, 1, "cannot create 'nodir/t.txt': No such file or directory", "topo", "-o", "nodir/t.txt"),
	CASE("topo-output-read-only", 0, 1, "Permission denied", "topo", "-o", RO),
	CASE("topo-output-full", FULL, 1, "No space left on device", "topo", "-o", "%F"),
	/* lat */
	CASE("lat-unknown-option", 0, USAGE, "unknown option '--cpus'", "lat", "--cpus", "1"),
	CASE("lat-flag-given-value", 0, USAGE, "option '--single-pass' does not take a value", "lat", "--single-pass=3"),
	CASE("lat-min-size-needs-value", 0, USAGE, "option '--min-size' needs a value", "lat", "--min-size"),
	CASE("lat-min-size-not-a-size", 0, USAGE, "'abc' is not a size", "lat", "--min-size", "abc"),
	CASE("lat-min-size-unknown-unit", 0, USAGE, "'4XB' has an unknown unit", "lat", "--min-size", "4XB"),
	CASE("lat-min-size-negative", 0, USAGE, "'-4K' is not a size", "lat", "--min-size", "-4K"),
	CASE("lat-min-size-zero", 0, 1, "the smallest working set must hold at least one", "lat", "--min-size", "0"),
	CASE("lat-max-overflows", 0, USAGE, "size '99999999999999999999' is too large", "lat", "--max-size", "99999999999999999999"),
	CASE("lat-max-size-below-min-size", 0, USAGE, "--max-size is smaller than --min-size", "lat", "--min-size", "1M", "--max-size", "4K"),
	CASE("lat-max-beyond-memory", 0, 1, "asked for 67108864 MiB but only", "lat", "--max-size", "64T"),
	CASE("lat-pattern-unknown", 0, USAGE, "unknown pattern 'nosuch'", "lat", "--pattern", "nosuch"),
	CASE("lat-pages-unknown", 0, USAGE, "unknown page mode 'nosuch'", "lat", "--pages", "nosuch"),
	CASE("lat-line-not-power-of-two", 0, USAGE, "line size '3' is not a power of two", "lat", "--line-size", "3"),
	CASE("lat-stride-not-multiple", 0, 1, "stride 3 is not a multiple of the", "lat", "--pattern", "strided", "--stride", "3", "--max-size", "8K"),
	CASE("lat-stride-zero", 0, USAGE, "--stride: 0 bytes is not a stride", "lat", "--pattern", "strided", "--stride", "0"),
	CASE("lat-page-group-zero", 0, USAGE, "--page-group: 0 bytes is not a group size", "lat", "--pattern", "page", "--page-group", "0"),
	CASE("lat-max-chains-out-of-range", 0, USAGE, "'33' is out of range [1, 32]", "lat", "--max-chains", "33"),
	CASE("lat-cpu-negative", 0, USAGE, "'-1' is not a non-negative integer", "lat", "--cpu", "-1"),
	CASE("lat-cpu-not-a-number", 0, USAGE, "'abc' is not an integer", "lat", "--cpu", "abc"),
	CASE("lat-repeats-out-of-range", 0, USAGE, "'9' is out of range [0, 8]", "lat", "--repeats", "9"),
	CASE("lat-from-missing-file", 0, 1, "cannot open 'nosuch.json': No such file or directory", "lat", "--from", "nosuch.json"),
	CASE("lat-from-not-a-report", 0, 1, "not-loaded.json: not a plumb report", "lat", "--from", "not-loaded.json"),
	CASE("lat-from-impossible-latency", 0, 1, "bad-latency.json: the lat report's sweep row 2 holds a latency of 1e+300 ns (p10)", "lat", "--from", "bad-latency.json"),
	CASE("geometry-levels-from-missing-file", 0, 1, "cannot open 'nosuch.json': No such file or directory", "geometry", "--levels-from", "nosuch.json"),
	CASE("lat-from-endless", 0, 1, "/dev/zero: larger than 64 MiB", "lat", "--from", "/dev/zero"),
	CASE("geometry-levels-from-endless", 0, 1, "/dev/zero: larger than 64 MiB", "geometry", "--levels-from", "/dev/zero"),
	CASE("lat-cpu-negative-after-space", 0, USAGE, "' -1' is not a non-negative integer", "lat", "--cpu", " -1"),
	CASE("lat-min-size-kilobits", 0, USAGE, "'64Kb' has an unknown unit", "lat", "--min-size", "64Kb"),
	CASE("lat-min-size-kb", 0, USAGE, "'64KB' has an unknown unit", "lat", "--min-size", "64KB"),
	CASE("lat-csv-and-json", 0, USAGE, "--csv and --json ask for two output formats; give one", "lat", "--csv", "--json"),
	CASE("lat-table-and-json", 0, USAGE, "--table and --json ask for two output formats; give one", "lat", "--table", "latency", "--json"),
	CASE("lat-cpu-outside-mask", ONE_CPU, USAGE, "is not one this process may run on (allowed: ", "lat", "--cpu", "%C1"),
	CASE("lat-cpu-does-not-exist", 0, USAGE, "CPU 4095 is not one this process may run on", "lat", "--cpu", "4095"),
	/* bw */
	CASE("bw-kernel-unknown", 0, USAGE, "unknown kernel 'nosuch'", "bw", "-k", "nosuch"),
	CASE("bw-kernels-need-value", 0, USAGE, "option '-k' needs a value", "bw", "-k"),
	CASE("bw-isa-unknown", 0, USAGE, "unknown ISA 'avx1024'", "bw", "-i", "avx1024"),
	CASE("bw-size-out-of-range", 0, USAGE, "size '1T' is out of range (4KiB..64GiB)", "bw", "-s", "1T"),
	CASE("bw-size-not-a-size", 0, USAGE, "'abc' is not a size", "bw", "-s", "abc"),
	CASE("bw-size-beyond-memory", BIG_MEMORY, 1, "would use more than half the available memory", "bw", "-s", "64G", "-t", "1", "-k", "read"),
	CASE("bw-threads-zero", 0, USAGE, "--threads: '0' is out of range [1, 1024]", "bw", "-t", "0"),
	CASE("bw-cpu-does-not-exist", 0, USAGE, "CPU 4095 is not one this process may run on", "bw", "-C", "4095"),
	CASE("bw-cpu-outside-mask", ONE_CPU, USAGE, "is not one this process may run on", "bw", "-C", "%C1"),
	CASE("bw-too-few-cpus", ONE_CPU, USAGE, "2 threads asked, but only 1 CPU to pin them to", "bw", "-t", "2"),
	CASE("bw-cpu-range-reversed", 0, USAGE, "bad CPU range in '5-2'", "bw", "-C", "5-2"),
	CASE("bw-machine-endless", 0, 1, "--machine: /dev/zero: larger than 64 MiB", "bw", "--machine", "/dev/zero"),
	CASE("bw-machine-negative-size", 0, 1, "--machine: bad-model.json: the machine model's L3 usable_bytes is -4096", "bw", "--machine", "bad-model.json"),
	CASE("bw-sizes-empty-item", 0, USAGE, "--sizes: '16K,,32K' has an empty item", "bw", "-s", "16K,,32K"),
	CASE("bw-threads-trailing-comma", 0, USAGE, "--threads: '1,' has an empty item", "bw", "-t", "1,"),
	CASE("bw-kernels-seventeen", 0, USAGE, "--kernels: at most 16 names", "bw", "-k", "read,read,read,read,read,read,read,read,read,read,read,read,read,read,read,read,nosuch"),
	CASE("bw-time-cap-needs-value", 0, USAGE, "option '--time-cap' needs a value", "bw", "--time-cap"),
	/* geometry */
	CASE("geometry-max-size-out-of-range", 0, USAGE, "--max-size must be between 1MiB and 64GiB", "geometry", "--max-size", "1T"),
	CASE("geometry-points-per-octave-zero", 0, USAGE, "--points-per-octave: '0' is out of range", "geometry", "--points-per-octave", "0"),
	CASE("geometry-cpu-does-not-exist", 0, USAGE, "CPU 4095 is not one this process may run on", "geometry", "--cpu", "4095"),
	CASE("geometry-cpu-outside-mask", ONE_CPU, USAGE, "is not one this process may run on", "geometry", "--cpu", "%C1"),
	CASE("geometry-seed-negative", 0, USAGE, "--seed: '-1' is not a non-negative integer", "geometry", "--seed", "-1"),
	CASE("geometry-extra-argument", 0, USAGE, "unexpected argument 'extra'", "geometry", "extra"),
	/* c2c */
	CASE("c2c-cpu-does-not-exist", 0, USAGE, "CPU 4095 is not one this process may run on", "c2c", "--cpu", "4095"),
	CASE("c2c-pair-outside-mask", ONE_CPU, USAGE, "--pair: CPU", "c2c", "--pair", "%C0,%C1"),
	CASE("c2c-pair-same-cpu", 0, USAGE, "CPU 0 appears twice in '0,0'", "c2c", "--pair", "0,0"),
	CASE("c2c-pair-one-cpu", 0, USAGE, "--pair needs two different CPUs", "c2c", "--pair", "0"),
	CASE("c2c-pair-not-cpus", 0, USAGE, "bad CPU list 'a,b'", "c2c", "--pair", "a,b"),
	CASE("c2c-only-unknown", 0, USAGE, "got 'nosuch'", "c2c", "--only", "nosuch"),
	CASE("c2c-only-empty-item", 0, USAGE, "got ',pairs'", "c2c", "--only", ",pairs"),
	CASE("c2c-spacing-not-multiple", 0, USAGE, "--spacing must be a multiple of 64", "c2c", "--spacing", "65"),
	CASE("c2c-lines-not-a-number", 0, USAGE, "'1T' is not an integer", "c2c", "--lines", "1T"),
	CASE("c2c-lines-need-value", 0, USAGE, "option '--lines' needs a value", "c2c", "--lines"),
	/* loaded */
	CASE("loaded-cpu-does-not-exist", 0, USAGE, "CPU 4095 is not one this process may run on", "loaded", "--cpu", "4095"),
	CASE("loaded-pattern-unknown", 0, USAGE, "--pattern takes read, write or mixed, not 'nosuch'", "loaded", "--pattern", "nosuch"),
	CASE("loaded-delays-empty", 0, USAGE, "--delays: empty list", "loaded", "--delays", ""),
	CASE("loaded-delays-empty-value", 0, USAGE, "--delays: an empty value in '16,,0'", "loaded", "--delays", "16,,0"),
	CASE("loaded-delays-not-numbers", 0, USAGE, "'a' is not an integer", "loaded", "--delays", "16,a"),
	CASE("loaded-size-beyond-limit", 0, USAGE, "--size must be between 4KiB and 64GiB", "loaded", "--size", "64T"),
	CASE("loaded-samples-zero", 0, USAGE, "'0' is out of range [1, 1000]", "loaded", "--samples", "0"),
	CASE("loaded-chunk-zero", 0, USAGE, "'0' is out of range [1, 1000000000]", "loaded", "--chunk", "0"),
	CASE("loaded-generators-beyond-cpus", ONE_CPU, USAGE, "--generators 5: only 0 CPUs are left for generators", "loaded", "--generators", "5"),
	/* model */
	CASE("model-nothing-to-do", 0, USAGE, "give --from FILE to fit, or both --service and --l0", "model"),
	CASE("model-from-needs-value", 0, USAGE, "option '--from' needs a value", "model", "--from"),
	CASE("model-from-missing-file", 0, 1, "cannot open 'nosuch.csv': No such file or directory", "model", "--from", "nosuch.csv"),
	CASE("model-from-folder", 0, 1, "Is a directory", "model", "--from", "."),
	CASE("model-from-empty-file", 0, 1, "empty.csv: is empty", "model", "--from", "empty.csv"),
	CASE("model-csv-one-point", 0, 1, "need at least 2 points, got 1", "model", "--from", "one-point.csv"),
	CASE("model-csv-not-a-number", 0, 1, "not-a-number.csv:2: latency 'abc' is not a number", "model", "--from", "not-a-number.csv"),
	CASE("model-csv-infinite", 0, 1, "infinite.csv:2: latency 'inf' is not a number", "model", "--from", "infinite.csv"),
	CASE("model-csv-nan", 0, 1, "nan.csv:2: latency 'nan' is not a number", "model", "--from", "nan.csv"),
	CASE("model-csv-one-bandwidth", 0, 1, "every point is at 100 MB/s; fitting both S and L0 needs two", "model", "--from", "one-bandwidth.csv"),
	CASE("model-csv-negative-latency", 0, 1, "negative.csv:2: latency -5 is not positive", "model", "--from", "negative.csv"),
	CASE("model-csv-unknown-columns", 0, 1, "cannot tell which columns hold bandwidth and latency", "model", "--from", "three-columns.csv"),
	CASE("model-csv-binary", 0, 1, "contains NUL bytes", "model", "--from", "binary.csv"),
	CASE("model-json-no-table", 0, 1, "JSON holds no table with bandwidth and latency columns", "model", "--from", "not-loaded.json"),
	CASE("model-at-empty-item", 0, USAGE, "--at: '100,,200' has an empty item", "model", "--service", "5", "--l0", "80", "--at", "100,,200"),
	CASE("model-service-negative", 0, USAGE, "--service: '-1' is out of range", "model", "--service", "-1", "--l0", "10"),
	CASE("model-service-without-l0", 0, USAGE, "give --from FILE to fit, or both --service and --l0", "model", "--service", "5"),
	CASE("model-service-above-l0", 0, 1, "the service time S = 100 ns exceeds the unloaded latency L0 = 50 ns", "model", "--service", "100", "--l0", "50"),
	CASE("model-from-endless", 0, 1, "/dev/zero: larger than 64 MiB", "model", "--from", "/dev/zero"),
	CASE("model-output-read-only", 0, 1, "Permission denied", "model", "--service", "5", "--l0", "80", "-o", RO),
	CASE("model-output-full", FULL, 1, "No space left on device", "model", "--service", "5", "--l0", "80", "-o", "%F"),
	/* stat */
	CASE("stat-no-command", 0, USAGE, "no command to count", "stat", "-e", "page-faults"),
	CASE("stat-events-need-value", 0, USAGE, "option '-e' needs a value", "stat", "-e"),
	CASE("stat-empty-event-name", 0, USAGE, "-e: empty event name in list ',,'", "stat", "-e", ",,", "--", "true"),
	CASE_REPORT("stat-unknown-event", 0, 3, "1 of 1 events cannot be counted here", "unknown event 'nosuch-event'", "stat", "-o", "-", "-e", "nosuch-event", "--", "true"),
	CASE_REPORT("stat-misspelled-event", 0, 3, "1 of 2 events cannot be counted here", "unknown event 'page-fault'", "stat", "-o", "-", "-e", "page-faults,page-fault", "--", "true"),
	CASE_REPORT("stat-raw-event-too-wide", 0, 3, "1 of 1 events cannot be counted here", "does not fit in 64 bits", "stat", "-o", "-", "-e", "r12345678901234567", "--", "true"),
	CASE_REPORT("stat-papi-disabled", NO_PAPI, 3, "1 of 1 events cannot be counted here", "component is disabled", "stat", "-o", "-", "--backend", "papi", "-e", "perf::MINOR-FAULTS", "--", "true"),
	CASE("stat-backend-unknown", 0, USAGE, "unknown backend 'nosuch'", "stat", "--backend", "nosuch", "--", "true"),
	CASE("stat-repeat-zero", 0, USAGE, "-r: '0' is out of range", "stat", "-r", "0", "--", "true"),
	CASE("stat-repeat-negative-after-space", 0, USAGE, "-r: ' -1' is not a non-negative integer", "stat", "-r", " -1", "--", "true"),
	CASE("stat-repeat-plus-sign", 0, USAGE, "-r: '+3' is not a non-negative integer", "stat", "-r", "+3", "--", "true"),
	CASE("stat-program-missing", 0, 1, "cannot run '/nonexistent/program': No such file or directory", "stat", "-e", "page-faults", "--", "/nonexistent/program"),
	CASE("stat-program-not-executable", 0, 1, "cannot run './t.lackey': Permission denied", "stat", "-e", "page-faults", "--", "./t.lackey"),
	/* issue 30: plumb stat ends with the command's own status, as perf stat does */
	CASE_REPORT("stat-program-exits-3", 0, 3, "the command failed in 1 of 1 runs", "exited with status 3", "stat", "-o", "-", "-e", "page-faults", "--", "sh", "-c", "exit 3"),
	CASE_REPORT("stat-program-segfaults", 0, 139, "the command failed in 1 of 1 runs", "killed by signal 11", "stat", "-o", "-", "-e", "page-faults", "--", "sh", "-c", "kill -SEGV $$"),
	CASE_REPORT("stat-program-aborts", 0, 134, "the command failed in 1 of 1 runs", "killed by signal 6", "stat", "-o", "-", "-e", "page-faults", "--", "sh", "-c", "kill -ABRT $$"),
	CASE_REPORT("stat-program-killed", 0, 137, "the command failed in 1 of 1 runs", "killed by signal 9", "stat", "-o", "-", "-e", "page-faults", "--", "sh", "-c", "kill -KILL $$"),
	CASE_REPORT("stat-program-does-not-start", 0, 127, "the command did not start in 1 of 1 runs (exit status 127", "the command did not start in 1 of 1 runs", "stat", "-o", "-", "-e", "page-faults", "--", "sh", "-c", "exit 127"),
	CASE_REPORT("stat-program-fails", 0, 1, "the command failed in 1 of 1 runs", "exited with status 1", "stat", "-o", "-", "-e", "page-faults", "--", "false"),
	CASE("stat-output-read-only", 0, 1, "Permission denied", "stat", "-e", "page-faults", "-o", RO, "--", "true"),
	CASE("stat-output-full", FULL, 1, "No space left on device", "stat", "-e", "page-faults", "-o", "%F", "--", "true"),
	/* events */
	CASE("events-backend-unknown", 0, USAGE, "unknown backend 'nosuch'", "events", "--backend", "nosuch"),
	CASE("events-extra-argument", 0, USAGE, "unexpected argument 'extra'", "events", "extra"),
	CASE("events-verification-needs-value", 0, USAGE, "option '--verification' needs a value", "events", "--verification"),
	CASE_REPORT("events-verification-foreign", 0, 0, "warning: verification records ignored", "PAPI_L1_DCM", "events", "--no-probe", "--catalogue", "--verification", "t.lackey"),
	CASE("events-output-missing-folder", 0, 1, "cannot create 'nodir/e.txt'", "events", "--no-probe", "-o", "nodir/e.txt"),
	CASE("events-output-full", FULL, 1, "No space left on device", "events", "--no-probe", "-o", "%F"),
	/* sim: traces */
	CASE("sim-trace-missing", 0, 1, "cannot open trace 'nosuch.ptrace': No such file or directory", "sim", "nosuch.ptrace"),
	CASE("sim-trace-folder", 0, 1, "Is a directory", "sim", "."),
	CASE("sim-trace-empty", 0, 1, "empty.trace: empty input: cannot detect the trace format", "sim", "empty.trace"),
	CASE("sim-stdin-empty", 0, 1, "standard input: empty input", "sim", "-"),
	CASE("sim-trace-truncated", TRACES, 1, "cut.ptrace: trace cut short", "sim", "cut.ptrace"),
	CASE("sim-trace-header-cut", TRACES, 1, "native trace header cut short", "sim", "header.ptrace"),
	CASE("sim-trace-corrupt", TRACES, 1, "header checksum mismatch (corrupt)", "sim", "corrupt.ptrace"),
	CASE("sim-trace-foreign", 0, 1, "foreign.elf: cannot detect the trace format", "sim", "foreign.elf"),
	CASE("sim-trace-not-native", 0, 1, "not a plumb native trace (bad magic)", "sim", "-f", "native", "t.lackey"),
	CASE("sim-lackey-bad-address", 0, 1, "lackey line 2: bad address", "sim", "bad.lackey"),
	CASE("sim-curve-level", 0, USAGE, "--curve: 'l4' is not a level: l1d, l1i, l2 or l3", "sim", "--curve", "l4", "t.lackey"),
	CASE("sim-curve-not-lru", 0, USAGE, "not plru replacement in the L1D; for exact figures run one configuration per size: plumb sim --sweep", "sim", "-p", "default", "--set", "l1d.replacement=plru", "--curve", "l1d", "t.lackey"),
	CASE("sim-curve-no-l3", 0, USAGE, "the configuration has no L3", "sim", "-p", "default", "--curve", "l3", "t.lackey"),
	CASE("sim-curve-max-zero", 0, USAGE, "--curve-max: 0 bytes holds no line", "sim", "--curve", "l1d", "--curve-max", "0", "t.lackey"),
	CASE("sim-curve-max-alone", 0, USAGE, "--curve-max goes with --curve LEVEL", "sim", "--curve-max", "1M", "t.lackey"),
	CASE("sim-lackey-size-zero", 0, 1, "lackey line 1: bad size (want 1..65535", "sim", "zero-size.lackey"),
	CASE("sim-lackey-wraps", 0, 1, "lackey line 2: the access runs past the end of the 64-bit address space", "sim", "wraps.lackey"),
	CASE("sim-trace-endless-zeros", 0, 1, "/dev/zero: cannot detect the trace format", "sim", "/dev/zero"),
	CASE("sim-din-bad-label", 0, 1, "din line 2: label is not a din access type", "sim", "bad.din"),
	CASE("sim-format-unknown", 0, USAGE, "unknown trace format 'nosuch'", "sim", "-f", "nosuch", "t.lackey"),
	CASE("sim-extra-argument", 0, USAGE, "unexpected argument 'b'", "sim", "t.lackey", "b"),
	CASE("sim-output-read-only", 0, 1, "Permission denied", "sim", "-o", RO, "t.lackey"),
	CASE("sim-output-full", FULL, 1, "No space left on device", "sim", "-o", "%F", "t.lackey"),
	/* sim: cache geometry */
	CASE("sim-level-empty-field", 0, USAGE, "--l1d: '32K,,8,64' is not SIZE,ASSOC,LINE ('32K,,8,64' has an empty item", "sim", "--l1d", "32K,,8,64", "t.lackey"),
	CASE("sim-level-trailing-comma", 0, USAGE, "--l2: '1M,16,64,' is not SIZE,ASSOC,LINE", "sim", "--l2", "1M,16,64,", "t.lackey"),
	CASE("sim-set-unknown-key", 0, USAGE, "unknown key 'nosuch'", "sim", "--set", "nosuch=1", "t.lackey"),
	CASE("sim-set-not-key-value", 0, USAGE, "'noequals' is not key=value", "sim", "--set", "noequals", "t.lackey"),
	CASE("sim-set-assoc-zero", 0, USAGE, "l1d.assoc: '0' is out of range [1, 1048576]", "sim", "--set", "l1d.assoc=0", "t.lackey"),
	CASE("sim-cores-out-of-range", 0, USAGE, "cores: '65' is out of range [1, 64]", "sim", "--cores", "65", "t.lackey"),
	CASE("sim-preset-unknown", 0, USAGE, "unknown preset 'nosuch'", "sim", "-p", "nosuch", "t.lackey"),
	CASE("sim-protocol-unknown", 0, USAGE, "protocol: 'nosuch' is not one of", "sim", "--protocol", "nosuch", "t.lackey"),
	CASE("sim-level-incomplete", 0, USAGE, "--l1d: '32K,8' is not SIZE,ASSOC,LINE", "sim", "--l1d", "32K,8", "t.lackey"),
	CASE("sim-line-not-power-of-two", 0, USAGE, "the line size 63 is not a power of two", "sim", "--l1d", "32K,8,63", "t.lackey"),
	CASE("sim-l1-absent", 0, USAGE, "the L1I and L1D caches must be present", "sim", "--set", "l1d.size=0", "t.lackey"),
	CASE("sim-l3-too-large", 0, USAGE, "is more than the simulator supports", "sim", "--l3", "64T,16,64", "t.lackey"),
	CASE("sim-config-missing", 0, USAGE, "nosuch.cfg: No such file or directory", "sim", "-c", "nosuch.cfg", "t.lackey"),
	CASE("sim-config-bad-line", 0, USAGE, "bad-line.cfg: line 2: expected key = value", "sim", "-c", "bad-line.cfg", "t.lackey"),
	CASE("sim-config-bad-value", 0, USAGE, "assoc.cfg: line 2: l2.assoc: '0' is out of range", "sim", "-c", "assoc.cfg", "t.lackey"),
	CASE("sim-machine-missing", 0, USAGE, "cannot open 'nosuch.json': No such file or directory", "sim", "--machine", "nosuch.json", "t.lackey"),
	CASE("sim-machine-not-json", 0, USAGE, "'t.lackey' is not JSON (give plumb report's report.json)", "sim", "--machine", "t.lackey", "t.lackey"),
	CASE("sim-machine-endless", 0, USAGE, "/dev/zero: larger than 64 MiB", "sim", "--machine", "/dev/zero", "t.lackey"),
	CASE("sim-machine-negative-size", 0, USAGE, "bad-model.json: the machine model's L3 usable_bytes is -4096, outside what a machine can have", "sim", "--machine", "bad-model.json", "t.lackey"),
	CASE("sim-config-endless", 0, USAGE, "/dev/zero: larger than 1 MiB", "sim", "-c", "/dev/zero", "t.lackey"),
	CASE("sim-machine-other-preset", 0, USAGE, "--machine gives the host preset its measured sizes; it does not apply to preset zen4", "sim", "-p", "zen4", "--machine", "t.lackey", "t.lackey"),
	/* sim: programs */
	CASE("sim-program-missing", VALGRIND, 1, "cannot run '/nonexistent/program': No such file or directory", "sim", "--", "/nonexistent/program"),
	CASE("sim-program-fails", VALGRIND, 1, "the traced program 'false' exited with status 1", "sim", "--", "false"),
	CASE("sim-program-killed", VALGRIND, 1, "the traced program 'sh' was killed by signal 9 (Killed)", "sim", "--", "sh", "-c", "kill -KILL $$"),
	CASE("sim-program-aborts", PLUMBGRIND, 1, "was killed by signal 6 (Aborted)", "sim", "--", "%T", "abort"),
	CASE("sim-program-segfaults", PLUMBGRIND | PROGRAM_STDERR, 1, "was killed by signal 11 (Segmentation fault)", "sim", "--", "%T", "segv"),
	/* sim: sweeps */
	CASE("sim-sweep-unknown-config", 0, USAGE, "--sweep: 'nosuch' is neither a configuration file nor a preset", "sim", "--sweep", "zen4,nosuch", "--traces", "t.lackey", "-o", "sw"),
	CASE("sim-sweep-trace-missing", 0, USAGE, "--traces: cannot read 'nosuch.din': No such file or directory", "sim", "--sweep", "zen4", "--traces", "nosuch.din", "-o", "sw"),
	CASE("sim-sweep-without-traces", 0, USAGE, "--sweep needs --traces LIST", "sim", "--sweep", "zen4", "-o", "sw"),
	CASE("sim-sweep-without-output", 0, USAGE, "--sweep needs the output folder: -o DIR", "sim", "--sweep", "zen4", "--traces", "t.lackey"),
	CASE("sim-sweep-other-option", 0, USAGE, "--sweep takes only --traces and -o DIR (no '--cores')", "sim", "--sweep", "zen4", "--cores", "2", "--traces", "t.lackey", "-o", "sw"),
	CASE("sim-sweep-empty-list", 0, USAGE, "--sweep: the list names nothing", "sim", "--sweep", ",", "--traces", "t.lackey", "-o", "sw"),
	/* trace */
	CASE("trace-no-subcommand", 0, USAGE, "want a subcommand: convert, filter, record or stats", "trace"),
	CASE("trace-unknown-subcommand", 0, USAGE, "'nosuch' is not a trace subcommand", "trace", "nosuch"),
	CASE("trace-stats-missing", 0, 1, "cannot open trace 'nosuch.ptrace'", "trace", "stats", "nosuch.ptrace"),
	CASE("trace-stats-truncated", TRACES, 1, "cut.ptrace: trace cut short", "trace", "stats", "cut.ptrace"),
	CASE("trace-stats-corrupt", TRACES, 1, "header checksum mismatch (corrupt)", "trace", "stats", "corrupt.ptrace"),
	CASE("trace-stats-empty", 0, 1, "empty input: cannot detect the trace format", "trace", "stats", "empty.trace"),
	CASE("trace-stats-foreign", 0, 1, "cannot detect the trace format", "trace", "stats", "foreign.elf"),
	CASE("trace-stats-line-size", 0, USAGE, "line size 3 is not a power of two", "trace", "stats", "--line-size", "3", "t.lackey"),
	CASE("trace-convert-one-argument", 0, USAGE, "want an input and an output trace", "trace", "convert", "t.lackey"),
	CASE("trace-convert-unknown-target", 0, USAGE, "cannot tell a trace format from the name 'out.xyz'", "trace", "convert", "t.lackey", "out.xyz"),
	CASE("trace-convert-truncated", TRACES, 1, "cut.ptrace: trace cut short", "trace", "convert", "cut.ptrace", "out.lackey"),
	CASE("trace-convert-corrupt", TRACES, 1, "header checksum mismatch (corrupt)", "trace", "convert", "corrupt.ptrace", "out.lackey"),
	CASE("trace-convert-bad-lackey", 0, 1, "lackey line 2: bad address", "trace", "convert", "bad.lackey", "out.ptrace"),
	CASE("trace-convert-lackey-wraps", 0, 1, "the access runs past the end of the 64-bit address space", "trace", "convert", "wraps.lackey", "out.ptrace"),
	CASE("trace-convert-missing-folder", 0, 1, "cannot create 'nodir/o.ptrace': No such file or directory", "trace", "convert", "t.lackey", "nodir/o.ptrace"),
	CASE("trace-convert-read-only", 0, 1, "Permission denied", "trace", "convert", "t.lackey", RO ".ptrace"),
	CASE("trace-convert-full", FULL, 1, "No space left on device", "trace", "convert", "t.lackey", "%F", "--to", "lackey"),
	CASE("trace-stats-output-full", FULL, 1, "No space left on device", "trace", "stats", "-o", "%F", "t.lackey"),
	CASE("trace-record-no-program", 0, USAGE, "want an output trace, then '--' and the program", "trace", "record", "out.ptrace"),
	CASE("trace-record-format-after-output", 0, USAGE, "unknown trace format 'nosuch'", "trace", "record", "out.ptrace", "--to", "nosuch", "--", "true"),
	CASE("trace-record-program-missing", VALGRIND, 1, "cannot run '/nonexistent/program'", "trace", "record", "out.ptrace", "--", "/nonexistent/program"),
	CASE("trace-record-program-killed", VALGRIND, 1, "the traced program 'sh' was killed by signal 11", "trace", "record", "out.ptrace", "--", "sh", "-c", "kill -SEGV $$"),
	CASE("trace-record-read-only", VALGRIND, 1, "Permission denied", "trace", "record", RO ".ptrace", "--", "true"),
	CASE("trace-record-to-a-device", PLUMBGRIND, 0, "the code map (names of the program's code) is not written beside the trace", "trace", "record", "--to", "native", "/dev/null", "--", "true"),
	CASE("trace-record-full", VALGRIND | FULL, 1, "No space left on device", "trace", "record", "%F", "--to", "lackey", "--", "true"),
	CASE("trace-record-buffer-zero", 0, USAGE, "--buffer: '0' is out of range", "trace", "record", "--buffer", "0", "out.ptrace", "--", "true"),
	CASE("trace-record-buffer-not-a-number", 0, USAGE, "--buffer: 'lots' is not an integer", "trace", "record", "--buffer", "lots", "out.ptrace", "--", "true"),
	CASE("trace-record-when-full-unknown", 0, USAGE, "--when-full: 'pause' is not a full-buffer policy (halt, drop or wrap)", "trace", "record", "--buffer", "100", "--when-full", "pause", "out.ptrace", "--", "true"),
	CASE("trace-record-when-full-without-buffer", 0, USAGE, "--when-full needs --buffer N", "trace", "record", "--when-full", "drop", "out.ptrace", "--", "true"),
	CASE("trace-record-drain-rate-negative", 0, USAGE, "--drain-rate: '-5' is out of range", "trace", "record", "--buffer", "100", "--drain-rate", "-5", "out.ptrace", "--", "true"),
	CASE("trace-record-drain-rate-with-wrap", 0, USAGE, "wrap never drains while the program runs", "trace", "record", "--buffer", "100", "--when-full", "wrap", "--drain-rate", "1000", "out.ptrace", "--", "true"),
	CASE("trace-record-halt-extra-bad", 0, USAGE, "--halt-extra: 'soon' is not a duration", "trace", "record", "--buffer", "100", "--halt-extra", "soon", "out.ptrace", "--", "true"),
	CASE("trace-record-halt-extra-with-drop", 0, USAGE, "only halt stops the program", "trace", "record", "--buffer", "100", "--when-full", "drop", "--halt-extra", "1ms", "out.ptrace", "--", "true"),
	CASE("trace-filter-nothing-to-remove", 0, USAGE, "nothing to remove: give --drop-collector or --drop-range LOW-HIGH", "trace", "filter", "t.lackey", "out.ptrace"),
	CASE("trace-filter-range-empty", 0, USAGE, "the range '0x2000-0x1000' is empty", "trace", "filter", "--drop-range", "0x2000-0x1000", "t.lackey", "out.ptrace"),
	CASE("trace-filter-range-bad", 0, USAGE, "'0x1000' is not an address range LOW-HIGH", "trace", "filter", "--drop-range", "0x1000", "t.lackey", "out.ptrace"),
	CASE("trace-filter-missing", 0, 1, "cannot open trace 'nosuch.ptrace'", "trace", "filter", "--drop-collector", "nosuch.ptrace", "out.ptrace"),
	/* instrument */
	CASE("instrument-no-command", 0, USAGE, "no command to run", "instrument"),
	CASE("instrument-summary-needs-value", 0, USAGE, "option '--summary' needs a value", "instrument", "--summary"),
	CASE("instrument-summary-and-command", 0, USAGE, "--summary takes no command ('true')", "instrument", "--summary", "t.lackey", "true"),
	CASE("instrument-trace-empty-name", 0, USAGE, "--trace needs a file name", "instrument", "--trace", "", "--", "true"),
	CASE("instrument-summary-missing", 0, 1, "cannot open the summary 'nosuch.out'", "instrument", "--summary", "nosuch.out"),
	CASE("instrument-summary-empty", 0, 1, "empty.trace: empty summary", "instrument", "--summary", "empty.trace"),
	CASE("instrument-summary-foreign", 0, 1, "not a plumbgrind summary", "instrument", "--summary", "t.lackey"),
	CASE("instrument-summary-endless", 0, 1, "/dev/zero: larger than 64 MiB", "instrument", "--summary", "/dev/zero"),
	CASE("instrument-valgrind-missing", PLUMBGRIND, 1, "cannot run valgrind '/nonexistent/valgrind'", "instrument", "--valgrind", "/nonexistent/valgrind", "--", "true"),
	CASE("instrument-program-missing", PLUMBGRIND, 1, "cannot run '/nonexistent/program': No such file or directory", "instrument", "--", "/nonexistent/program"),
	CASE("instrument-program-not-executable", PLUMBGRIND, 1, "cannot run './t.lackey': Permission denied", "instrument", "--", "./t.lackey"),
	CASE_REPORT("instrument-program-does-not-start", PLUMBGRIND, 1, "the command 'sh' did not start (exit status 127", "the command did not start (exit status 127", "instrument", "--", "sh", "-c", "exit 127"),
	CASE_REPORT("instrument-program-fails", PLUMBGRIND, 1, "the command 'false' exited with status 1", "exited with status 1", "instrument", "--", "false"),
	CASE_REPORT("instrument-program-killed", PLUMBGRIND, 1, "the command 'sh' was killed by signal 9 (Killed)", "killed by signal 9", "instrument", "--", "sh", "-c", "kill -KILL $$"),
	CASE_REPORT("instrument-program-aborts", PLUMBGRIND, 1, "was killed by signal 6 (Aborted)", "killed by signal 6", "instrument", "--", "%T", "abort"),
	CASE_REPORT("instrument-program-segfaults", PLUMBGRIND | PROGRAM_STDERR, 1, "was killed by signal 11 (Segmentation fault)", "killed by signal 11", "instrument", "--", "%T", "segv"),
	CASE("instrument-trace-missing-folder", PLUMBGRIND, 1, "cannot create the trace file nodir/t.lackey: No such file or directory", "instrument", "--trace", "nodir/t.lackey", "--", "true"),
	CASE("instrument-trace-read-only", PLUMBGRIND, 1, "Permission denied", "instrument", "--trace", RO, "--", "true"),
	CASE("instrument-output-read-only", PLUMBGRIND, 1, "Permission denied", "instrument", "-o", RO, "--", "true"),
	CASE("instrument-output-full", PLUMBGRIND | FULL, 1, "No space left on device", "instrument", "-o", "%F", "--", "true"),
	CASE("instrument-trace-full", PLUMBGRIND | FULL, 1, "cannot write the trace file", "instrument", "--trace", "%F", "--", "true"),
	/* validate */
	CASE("validate-sizes-empty-item", 0, USAGE, "--sizes: '1,,10' has an empty item", "validate", "--sizes", "1,,10"),
	CASE("validate-sizes-too-long", 0, USAGE, "--sizes: the list '000000000000000000000000000000000000000000000000000000000000...' is longer than 1023 characters", "validate", "--backend", "sim", "--sizes", ZEROS_1024 "12", "itv"),
	CASE("validate-backend-too-long", 0, USAGE, "--backend: the list 'sim,sim,sim,sim,sim,sim,sim,sim,sim,sim,sim,sim,sim,sim,sim,...' is longer than 255 characters", "validate", "--backend", SIMS_60 SIMS_5 "nosuch", "itv"),
	CASE("validate-unknown-benchmark", 0, USAGE, "'nosuch' names no benchmark or event", "validate", "nosuch"),
	CASE("validate-backend-unknown", 0, USAGE, "unknown backend 'nosuch'", "validate", "--backend", "nosuch"),
	CASE("validate-runs-zero", 0, USAGE, "--runs: '0' is out of range", "validate", "--runs", "0"),
	CASE("validate-runs-need-value", 0, USAGE, "option '--runs' needs a value", "validate", "--runs"),
	CASE("validate-sizes-not-numbers", 0, USAGE, "--sizes: 'x' is not an integer", "validate", "--sizes", "x"),
	CASE("validate-cpu-does-not-exist", 0, USAGE, "CPU 4095 is not one this process may run on", "validate", "--cpu", "4095"),
	CASE("validate-cpu-outside-mask", ONE_CPU, USAGE, "is not one this process may run on", "validate", "--cpu", "%C1"),
	CASE("validate-plot-format-unknown", 0, USAGE, "--plot-format must be png or svg, not 'jpg'", "validate", "--plot-format", "jpg"),
	CASE("validate-threshold-unknown", 0, USAGE, "--threshold: unknown name 'x'", "validate", "--threshold", "x=1"),
	CASE("validate-threshold-no-value", 0, USAGE, "--threshold wants NAME=VALUE", "validate", "--threshold", "accurate"),
	CASE("validate-set-unknown-key", 0, USAGE, "--set: unknown key 'nosuch'", "validate", "--backend", "sim", "--set", "nosuch=1", "itv"),
	CASE("validate-set-bad-geometry", 0, USAGE, "--set: l1d.assoc: '0' is out of range", "validate", "--backend", "sim", "--set", "l1d.assoc=0", "itv"),
	CASE("validate-preset-unknown", 0, USAGE, "--preset: unknown preset 'nosuch'", "validate", "--backend", "sim", "--preset", "nosuch", "itv"),
	CASE("validate-verification-foreign", 0, 1, "t.lackey: not a verification file", "validate", "--backend", "sim", "--verification", "t.lackey", "itv"),
	CASE("validate-output-folder-missing", 0, 1, "cannot create nodir/d: No such file or directory", "validate", "--backend", "sim", "-d", "nodir/d", "itv"),
	CASE("validate-output-folder-is-a-file", 0, 1, "cannot create t.lackey: Not a directory", "validate", "--backend", "sim", "-d", "t.lackey", "itv"),
	CASE("validate-base-offset", 0, USAGE, "--base-offset: a multiple of 4 up to 1 MiB, not '1'", "validate", "--base-offset", "1"),
	CASE("validate-valgrind-missing", 0, 1, "cannot run valgrind '/nonexistent': No such file or directory", "validate", "--backend", "instrumented", "--valgrind", "/nonexistent", "instructions"),
	CASE("validate-output-full", FULL, 1, "No space left on device", "validate", "--list", "-o", "%F"),
	/* perturb */
	CASE("perturb-nothing-to-do", 0, USAGE, "give --design NAME, or both --intervals LIST and --halts LIST", "perturb"),
	CASE("perturb-unknown-option", 0, USAGE, "unknown option '--bogus'", "perturb", "--bogus"),
	CASE("perturb-design-unknown", 0, USAGE, "--design: unknown design 'nosuch'", "perturb", "--design", "nosuch", "--", "true"),
	CASE("perturb-interval-not-a-duration", 0, USAGE, "'x' is not a duration", "perturb", "--intervals", "x", "--halts", "0", "--", "true"),
	CASE("perturb-workload-unknown", 0, USAGE, "unknown workload 'nosuch'", "perturb", "--workload", "nosuch", "--design", "full"),
	CASE("perturb-runs-too-few", 0, USAGE, "--runs: '1' is out of range [2, 100]", "perturb", "-r", "1", "--design", "full", "--", "true"),
	CASE("perturb-footprint-incomplete", 0, USAGE, "a footprint is LINES,PAGES,CODE, not '1,2'", "perturb", "--footprint", "1,2", "--design", "full", "--", "true"),
	CASE("perturb-buffers-empty-item", 0, USAGE, "--buffers: '64K,' has an empty item", "perturb", "--simulate", "t.lackey", "--buffers", "64K,"),
	CASE("perturb-intervals-empty-item", 0, USAGE, "the intervals list: ',1/8' has an empty item", "perturb", "--intervals", ",1/8", "--halts", "0", "--", "true"),
	CASE("perturb-buffers-not-sizes", 0, USAGE, "--buffers: 'x' is not a size", "perturb", "--simulate", "t.lackey", "--buffers", "x"),
	CASE("perturb-buffer-too-small", 0, 1, "holds no 16-byte record", "perturb", "--simulate", "t.lackey", "--buffers", "1"),
	CASE("perturb-rate-trace-missing", 0, 1, "cannot open trace 'nosuch.ptrace'", "perturb", "--rate-trace", "nosuch.ptrace", "--design", "full", "--", "true"),
	CASE("perturb-clock-unknown", NOT_SANITIZED, 1, "the halt clock 'nosuch' cannot interrupt the program here", "perturb", "--clock", "nosuch", "--design", "full", "--", "true"),
	CASE("perturb-cpu-does-not-exist", 0, USAGE, "--cpu: CPU 4095 is not one this process may run on", "perturb", "--cpu", "4095", "--design", "full", "--", "true"),
	CASE("perturb-cpu-outside-mask", ONE_CPU, USAGE, "is not one this process may run on (allowed: ", "perturb", "--cpu", "%C1", "--design", "full", "--", "true"),
	CASE("perturb-event-unknown", 0, USAGE, "--events: unknown event 'nosuch'", "perturb", "-e", "nosuch", "--design", "full", "--", "true"),
	CASE("perturb-program-missing", NOT_SANITIZED, 1, "cannot run '/nonexistent/program': No such file or directory", "perturb", "--design", "full", "--", "/nonexistent/program"),
	/* explain */
	CASE("explain-no-program", 0, USAGE, "no program to run", "explain"),
	CASE("explain-unknown-option", 0, USAGE, "unknown option '--bogus'", "explain", "--bogus", "--", "true"),
	CASE("explain-runs-zero", 0, USAGE, "--runs: '0' is out of range [1, 100]", "explain", "-r", "0", "--", "true"),
	CASE("explain-runs-need-value", 0, USAGE, "option '-r' needs a value", "explain", "-r"),
	CASE("explain-backend-unknown", 0, USAGE, "--backend: 'nosuch' is not perf, papi or none", "explain", "--backend", "nosuch", "--", "true"),
	CASE("explain-ipc-out-of-range", 0, USAGE, "--ipc: '-1' is out of range", "explain", "--ipc", "-1", "--", "true"),
	CASE("explain-machine-missing", 0, 1, "--machine: cannot open 'nosuch.json': No such file or directory", "explain", "--machine", "nosuch.json", "--", "true"),
	CASE("explain-machine-not-json", 0, 1, "--machine: 't.lackey' is not a plumb JSON report", "explain", "--machine", "t.lackey", "--", "true"),
	CASE("explain-machine-endless", 0, 1, "--machine: /dev/zero: larger than 64 MiB", "explain", "--machine", "/dev/zero", "--", "true"),
	/* Issue 29, the readers added since: bounded, and a model's figures checked. */
	CASE("explain-on-endless", 0, 1, "--on: /dev/zero: larger than 64 MiB", "explain", "--on", "/dev/zero", "--no-valgrind", "--", "true"),
	CASE("explain-compare-machine-endless", 0, 1, "--compare-machine: /dev/zero: larger than 64 MiB", "explain", "--compare-machine", "/dev/zero", "--", "true"),
	CASE("explain-machine-negative-latency", 0, 1, "--machine: bad-latency.json: L1's latency of -5 ns is not one a load can take", "explain", "--machine", "bad-latency.json", "--no-valgrind", "--", "true"),
	CASE("explain-machine-negative-size", 0, 1, "--machine: bad-model.json: the machine model's L3 usable_bytes is -4096, outside what a machine can have", "explain", "--machine", "bad-model.json", "--no-valgrind", "--", "true"),
	CASE("explain-program-missing", 0, 1, "cannot run '/nonexistent/program': No such file or directory", "explain", "--", "/nonexistent/program"),
	/* issue 30: a program that never started, or failed every run, is no measurement */
	CASE("explain-program-does-not-start", 0, 1, "'sh' did not start: it exited with status 127 in all 2 runs", "explain", "-r", "2", "--machine", "machine.json", "--no-valgrind", "--", "sh", "-c", "exit 127"),
	CASE("explain-program-fails-every-run", 0, 1, "'false' exited with status 1 in all 2 runs: a failed run is not a measurement", "explain", "-r", "2", "--machine", "machine.json", "--no-valgrind", "--", "false"),
	CASE("explain-event-unknown", 0, USAGE, "-e: unknown event 'nosuch'", "explain", "-e", "page-faults,nosuch", "--", "true"),
	CASE("explain-preset-unknown", 0, USAGE, "--preset: unknown preset 'nosuch'", "explain", "--preset", "nosuch", "--", "true"),
	CASE_REPORT("explain-program-crashes", 0, 1, "the program 'sh' was killed by signal 11", "killed by signal 11", "explain", "--machine", "machine.json", "--no-valgrind", "-r", "1", "--", "sh", "-c", "kill -SEGV $$"),
	/* report */
	CASE("report-section-unknown", 0, USAGE, "'nosuch' is not a plumb command", "report", "--sections", "nosuch"),
	CASE("report-sections-empty", 0, USAGE, "',' has an empty item", "report", "--sections", ","),
	CASE("report-section-twice", 0, USAGE, "section 'topo' is listed twice", "report", "--sections", "topo,topo"),
	CASE("report-extra-argument", 0, USAGE, "unexpected argument 'extra'", "report", "extra"),
	CASE("report-from-nothing", 0, USAGE, "--from needs at least one JSON report", "report", "--from"),
	CASE("report-from-missing", 0, 1, "cannot open 'nosuch.json': No such file or directory", "report", "--from", "nosuch.json", "-o", "r.html"),
	CASE("report-from-not-json", 0, 1, "t.lackey: not JSON", "report", "--from", "t.lackey", "-o", "r.html"),
	CASE("report-from-empty", 0, 1, "empty file", "report", "--from", "empty.trace", "-o", "r.html"),
	CASE("report-from-not-a-report", 0, 1, "not-loaded.json: not a plumb report", "report", "--from", "not-loaded.json", "-o", "r.html"),
	CASE("report-from-endless", 0, 1, "/dev/zero: larger than 64 MiB", "report", "--from", "/dev/zero", "-o", "r.html"),
	CASE("report-from-too-many-sections", 0, 1, "many-sections.json: more sections than a report holds (at most 32 in all)", "report", "--from", "many-sections.json", "-o", "r.html"),
	CASE("report-compare-endless", 0, 1, "/dev/zero: larger than 64 MiB", "report", "--compare", "/dev/zero", "not-loaded.json"),
	CASE("report-output-dir-missing", 0, USAGE, "--output-dir 'nodir/d' cannot be created or written", "report", "--output-dir", "nodir/d", "--sections", "topo", "-o", "r.html"),
	CASE("report-output-dir-is-a-file", 0, USAGE, "--output-dir 't.lackey' exists and is not a folder", "report", "--output-dir", "t.lackey", "--sections", "topo", "-o", "r.html"),
	CASE("report-output-dir-is-a-device", 0, USAGE, "--output-dir '/dev/null' exists and is not a folder", "report", "-d", "/dev/null", "--sections", "topo", "-o", "r.html"),
	CASE("report-sections-empty-item", 0, USAGE, "'topo,' has an empty item", "report", "--sections", "topo,", "-o", "r.html"),
	CASE("report-output-missing-folder", 0, 1, "cannot create 'nodir/r.html'", "report", "--sections", "topo", "-o", "nodir/r.html"),
	CASE("report-output-read-only", 0, 1, "Permission denied", "report", "--sections", "topo", "-o", RO),
	CASE("report-output-full", FULL, 1, "No space left on device", "report", "--sections", "topo", "-o", "%F"),
	/* A report file with a gnuplot `command` in a chart's series name (a
	 * PWNED file would change the folder), written to a device: no
	 * report.json beside it. */
	CASE("report-from-null-schema", 0, 1, "null-schema.json: not a plumb report", "report", "--from", "null-schema.json", "-o", "r.html"),
	CASE("report-from-backquotes-to-a-device", 0, 0, "'/dev/null.json' is not written beside '/dev/null'", "report", "--from", "backquote.json", "-o", "/dev/null"),
	/* cluster (refused before MPI starts) */
	CASE("cluster-without-output", 0, USAGE, "give the output folder: -o DIR", "cluster", "--sections", "topo"),
	CASE("cluster-share-unknown", 0, USAGE, "--share must be turns or split, not 'halves'", "cluster", "--share", "halves", "-o", "c"),
	CASE("cluster-rank-timeout-bad", 0, USAGE, "--rank-timeout: ", "cluster", "--rank-timeout", "soon", "-o", "c"),
	/* signals during long runs */
	CASE("stat-sigint", SIGINT_SENT | AFTER_CHILD | QUIET, 130, "", "stat", "-e", "task-clock", "--", "sleep", "30"),
	CASE("stat-sigterm", SIGTERM_SENT | AFTER_CHILD | QUIET, 143, "", "stat", "-e", "task-clock", "--", "sleep", "30"),
	CASE("lat-sigint", SIGINT_SENT | QUIET, 130, "", "lat"),
	CASE("lat-sigterm", SIGTERM_SENT | QUIET, 143, "", "lat", "-o", "lat.txt"),
	CASE("bw-sigterm", SIGTERM_SENT | QUIET, 143, "", "bw", "-o", "bw.txt"),
	CASE("geometry-sigint", SIGINT_SENT | QUIET, 130, "", "geometry"),
	CASE("c2c-sigterm", SIGTERM_SENT | QUIET, 143, "", "c2c", "--only", "false-sharing", "--duration", "5000"),
	CASE("loaded-sigint", SIGINT_SENT | QUIET, 130, "", "loaded"),
	CASE("report-sigint", SIGINT_SENT | AFTER_CHILD | QUIET, 130, "", "report", "--sections", "lat", "-o", "r.html"),
	CASE("report-sigterm", SIGTERM_SENT | AFTER_CHILD | QUIET, 143, "", "report", "--sections", "lat", "-o", "r.html"),
	CASE("validate-sigint", SIGINT_SENT | AFTER_CHILD | QUIET, 130, "", "validate", "--backend", "perf", "--runs", "1000", "minor-faults"),
	CASE("validate-sigterm-valgrind", PLUMBGRIND | NOT_SANITIZED | SIGTERM_SENT | AFTER_CHILD | QUIET, 143, "", "validate", "--backend", "instrumented", "instructions"),
	CASE("sim-program-sigint", VALGRIND | SIGINT_SENT | AFTER_CHILD | QUIET, 130, "", "sim", "--", "sleep", "30"),
	CASE("instrument-sigterm", PLUMBGRIND | SIGTERM_SENT | AFTER_CHILD | QUIET, 143, "", "instrument", "--", "sleep", "30"),
	CASE("trace-record-sigint", VALGRIND | SIGINT_SENT | AFTER_CHILD | KEEPS_TRACE, 130, "interrupted by signal 2", "trace", "record", "out.ptrace", "--", "sleep", "30"),
	/* a halt of 1000 s (1000 references drained at 1 a second) ends at the signal */
	CASE("trace-record-halted-sigterm", VALGRIND | SIGTERM_SENT | AFTER_CHILD | KEEPS_TRACE, 143, "interrupted by signal 15", "trace", "record", "--buffer", "1000", "--drain-rate", "1", "out.ptrace", "--", "true"),
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* ---- fixtures ---- */

static void write_file(const char *dir, const char *name, const void *data, size_t size)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot write %s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);
}

static void write_text(const char *dir, const char *name, const char *text)
{
	write_file(dir, name, text, strlen(text));
}

/* A file built beside the plumb program, e.g. tests/data/instrument_target. */
static const char *built(const char *relative, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", cli_build_dir(), relative);
	return path;
}

typedef struct outcome {
	int exit_code;   /* 128+N when killed by signal N */
	char *out, *err;
	char orphans[256];   /* children plumb left running, found and killed here */
} outcome;

static void append(char **buffer, size_t *length, const char *data, size_t n)
{
	*buffer = realloc(*buffer, *length + n + 1);
	cr_assert_not_null(*buffer);
	memcpy(*buffer + *length, data, n);
	*length += n;
	(*buffer)[*length] = 0;
}

/* Children of this test process other than the one it waits for: plumb's
 * children that outlived it are re-parented here (a child subreaper). */
static void reap_orphans(outcome *o)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return;
	pid_t self = getpid();
	for (struct dirent *entry; (entry = readdir(proc)) != NULL;) {
		char path[300], line[1024];
		if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(line, 1, sizeof line - 1, f);
		fclose(f);
		line[n] = 0;
		char *end = strrchr(line, ')');
		int parent;
		if (!end || sscanf(end + 2, "%*c %d", &parent) != 1 || parent != self)
			continue;
		pid_t pid = (pid_t)atoi(entry->d_name);
		char name[64] = "";
		char *open = strchr(line, '(');
		if (open && end > open)
			snprintf(name, sizeof name, "%.*s", (int)(end - open - 1), open + 1);
		size_t used = strlen(o->orphans);
		snprintf(o->orphans + used, sizeof o->orphans - used, "%s%s (%d)", used ? ", " : "", name, (int)pid);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	closedir(proc);
}

/* A child process of PID, if it has one. */
static bool has_child(pid_t pid)
{
	char path[64], text[256];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool any = fgets(text, sizeof text, f) && text[0] >= '0' && text[0] <= '9';
	fclose(f);
	return any;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Runs plumb with ARGV in DIR (stdin /dev/null, TMPDIR=DIR so its temporary
 * files land where the check looks); with one_cpu >= 0 under an affinity mask
 * of that CPU alone; with a signal, sends it once plumb is under way. */
static outcome run_plumb(const char *dir, const char *const *argv, int one_cpu, int signal_number, bool after_child)
{
	int out[2], err[2];
	cr_assert(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
	char **child_argv = cli_plumb_argv(argv);
	const char *program = child_argv[0];
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 || chdir(dir) != 0)
			_exit(126);
		if (one_cpu >= 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(one_cpu, &set);
			if (sched_setaffinity(0, sizeof set, &set) != 0)
				_exit(126);
		}
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		setenv("TMPDIR", dir, 1);
		execv(program, child_argv);
		_exit(127);
	}
	free(child_argv);
	close(out[1]);
	close(err[1]);
	outcome o = { .exit_code = -1 };
	size_t lengths[2] = { 0, 0 };
	append(&o.out, &lengths[0], "", 0);
	append(&o.err, &lengths[1], "", 0);
	struct pollfd fds[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int status = 0;
	bool exited = false, signalled = false;
	double deadline = 30;
	for (;;) {
		int open_count = (fds[0].fd >= 0) + (fds[1].fd >= 0);
		if (open_count == 0 || exited)
			break;
		int ready = poll(fds, 2, 20);
		for (int i = 0; ready > 0 && i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[65536];
			ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
			if (n > 0) {
				append(i ? &o.err : &o.out, &lengths[i], chunk, (size_t)n);
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
			}
		}
		/* A child plumb left behind may hold the pipes open: stop at plumb's
		 * exit, then take what is already in the pipes. */
		if (waitpid(pid, &status, WNOHANG) == pid) {
			exited = true;
			for (int i = 0; i < 2; i++) {
				if (fds[i].fd < 0)
					continue;
				fcntl(fds[i].fd, F_SETFL, O_NONBLOCK);
				char chunk[65536];
				ssize_t n;
				while ((n = read(fds[i].fd, chunk, sizeof chunk)) > 0)
					append(i ? &o.err : &o.out, &lengths[i], chunk, (size_t)n);
			}
		}
		double elapsed = seconds_since(&start);
		/* Under way: a child started (then a little longer, so that it runs),
		 * or 300 ms gone; polled, so a fast start is not waited for. */
		if (!exited && signal_number && !signalled && elapsed > 0.3 && (!after_child || has_child(pid))) {
			if (after_child)
				usleep(200000);
			kill(pid, signal_number);
			signalled = true;
			deadline = elapsed + 15;
		}
		if (!exited && elapsed > deadline) {
			kill(pid, SIGKILL);
			const char *note = "[test: plumb killed, still running after the deadline]\n";
			append(&o.err, &lengths[1], note, strlen(note));
			deadline += 1000;
		}
	}
	if (!exited)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	reap_orphans(&o);
	return o;
}

static void outcome_free(outcome *o)
{
	free(o->out);
	free(o->err);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

/* The names in DIR with their sizes, sorted: a file appended to changes. */
static char *list_folder(const char *dir)
{
	struct dirent **entries;
	int n = scandir(dir, &entries, NULL, alphasort);
	cr_assert(n >= 0, "scandir %s: %s", dir, strerror(errno));
	char *list = NULL;
	size_t length = 0;
	append(&list, &length, "", 0);
	for (int i = 0; i < n; i++) {
		if (strcmp(entries[i]->d_name, ".") && strcmp(entries[i]->d_name, "..")) {
			char path[4096], entry[600];
			struct stat st;
			snprintf(path, sizeof path, "%s/%s", dir, entries[i]->d_name);
			if (lstat(path, &st) != 0)
				st.st_size = -1;
			snprintf(entry, sizeof entry, "%s:%lld ", entries[i]->d_name, (long long)st.st_size);
			append(&list, &length, entry, strlen(entry));
		}
		free(entries[i]);
	}
	free(entries);
	return list;
}

/* A full device of the case's own: plumb with a broken atomic writer would
 * replace it with a regular file, and as root it could do that to /dev/full
 * itself.  Root (who can make device nodes) gets a private copy; anyone else
 * cannot rename over /dev/full and uses it. */
static const char *full_device(const char *dir, char *path, size_t size)
{
	snprintf(path, size, "%s/full", dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 7)) == 0)
		return path;
	if (geteuid() == 0)
		return NULL;
	snprintf(path, size, "/dev/full");
	return path;
}

static void make_fixtures(const char *dir, unsigned flags)
{
	char lackey[64 * 40] = "", line[64];
	for (int i = 0; i < 32; i++) {
		snprintf(line, sizeof line, " L %x,8\n S %x,4\n", 0x10000 + i * 64, 0x80000 + i * 8);
		strcat(lackey, line);
	}
	write_text(dir, "t.lackey", lackey);
	char full[4096];
	if (flags & FULL)
		full_device(dir, full, sizeof full);
	write_text(dir, "empty.trace", "");
	write_text(dir, "empty.csv", "");
	write_text(dir, "bad.lackey", " L 1000,8\n L zz,8\n");
	write_text(dir, "bad.din", "0 1000\n9 2000\n");
	write_text(dir, "zero-size.lackey", " L 1000,0\n");
	write_text(dir, "wraps.lackey", " L 1000,8\n L ffffffffffffffc0,128\n");
	static const unsigned char elf[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x3e, 0 };
	write_file(dir, "foreign.elf", elf, sizeof elf);
	write_text(dir, "bad-line.cfg", "l1d.size = 32K\nbogus line\n");
	write_text(dir, "assoc.cfg", "# a cache of no ways\nl2.assoc = 0\n");
	write_text(dir, "one-point.csv", "100,50\n");
	write_text(dir, "not-a-number.csv", "100,50\n200,abc\n300,70\n");
	write_text(dir, "infinite.csv", "100,50\n200,inf\n300,70\n");
	write_text(dir, "nan.csv", "100,50\n200,nan\n300,70\n");
	write_text(dir, "one-bandwidth.csv", "100,50\n100,52\n100,51\n");
	write_text(dir, "negative.csv", "100,50\n200,-5\n300,70\n");
	write_text(dir, "three-columns.csv", "first,second,third\n100,50,1\n200,60,2\n");
	write_file(dir, "binary.csv", "100,50\n\0\0\0\n", 11);
	write_text(dir, "not-loaded.json", "{\"command\": \"lat\", \"tables\": []}\n");
	write_text(dir, "null-schema.json", "{\"schema\": null}\n");   /* crashed report --from (found by fuzzing) */
	write_text(dir, "backquote.json",
	           "{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"lat\", \"meta\": {},\n"
	           " \"tables\": [{\"name\": \"mlp_curve\", \"title\": \"t\", \"columns\": [{\"name\": \"chains\"},\n"
	           "   {\"name\": \"bandwidth\", \"unit\": \"GB/s\"}, {\"name\": \"level\"}],\n"
	           "   \"rows\": [{\"chains\": 1, \"bandwidth\": 1, \"level\": \"`touch PWNED`\"},\n"
	           "            {\"chains\": 2, \"bandwidth\": 2, \"level\": \"`touch PWNED`\"}]}], \"notes\": []}\n");
	/* a machine of no figures, for explain --machine: no probe of 2 s or more */
	/* a report.json of 40 sections, more than a report holds (issue 29: refused as usage, leaking every section) */
	char many[4096] = "{\"schema\": \"plumb-machine-report\", \"sections\": [";
	for (int k = 0; k < 40; k++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%s{\"command\": \"topo\", \"reason\": \"not run\"}",
		         k ? ", " : "");
	snprintf(many + strlen(many), sizeof many - strlen(many), "]}\n");
	write_text(dir, "many-sections.json", many);
	/* a machine model whose L3 is -4096 bytes (issue 29: simulated at sysfs's size without a word) */
	write_text(dir, "bad-model.json", "{\"schema\": \"plumb-machine-report\", \"summary\": {\"schema\": \"plumb-report\", "
	           "\"schema_version\": 1, \"command\": \"summary\", \"meta\": {}, \"tables\": [{\"name\": \"machine\", "
	           "\"columns\": [{\"name\": \"level\", \"unit\": null}, {\"name\": \"cache_level\", \"unit\": null}, "
	           "{\"name\": \"usable_bytes\", \"unit\": \"bytes\"}, {\"name\": \"latency\", \"unit\": \"ns\"}], "
	           "\"rows\": [{\"level\": \"L1\", \"cache_level\": 1, \"usable_bytes\": 32768, \"latency\": 1.5}, "
	           "{\"level\": \"L3\", \"cache_level\": 3, \"usable_bytes\": -4096, \"latency\": 40}]}]}}\n");
	/* a lat report with impossible latencies (issue 29: explain priced with -5 ns, lat printed 1e300's 300 digits) */
	write_text(dir, "bad-latency.json", "{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"lat\", "
	           "\"meta\": {\"points_per_octave\": 4}, \"tables\": [{\"name\": \"levels\", \"columns\": "
	           "[{\"name\": \"level\", \"unit\": null}, {\"name\": \"latency\", \"unit\": \"ns\"}, "
	           "{\"name\": \"median\", \"unit\": \"ns\"}], \"rows\": [{\"level\": \"L1\", \"latency\": -5, "
	           "\"median\": -5}]}, {\"name\": \"sweep\", \"columns\": [{\"name\": \"bytes\", \"unit\": \"bytes\"}, "
	           "{\"name\": \"latency\", \"unit\": \"ns\"}, {\"name\": \"p10\", \"unit\": \"ns\"}], \"rows\": "
	           "[{\"bytes\": 4096, \"latency\": 1.5, \"p10\": 1.5}, {\"bytes\": 8192, \"latency\": 1e300, "
	           "\"p10\": 1e300}]}]}\n");
	write_text(dir, "machine.json", "{\"schema\": \"plumb-report\", \"schema_version\": 1, \"command\": \"bw\", \"tables\": []}\n");
	if (flags & TRACES) {
		const char *argv[] = { "trace", "convert", "t.lackey", "t.ptrace", NULL };
		outcome o = run_plumb(dir, argv, -1, 0, false);
		cr_assert_eq(o.exit_code, 0, "cannot make the native trace: %s", o.err);
		outcome_free(&o);
		char path[4096];
		snprintf(path, sizeof path, "%s/t.ptrace", dir);
		size_t size;
		unsigned char *native = (unsigned char *)cli_read_file(path, &size);
		cr_assert(native && size > 48, "the native trace is too short");
		write_file(dir, "header.ptrace", native, 10);
		write_file(dir, "cut.ptrace", native, size - 20);
		native[40] ^= 0xff;   /* inside the first block's header */
		write_file(dir, "corrupt.ptrace", native, size);
		free(native);
	}
}

/* ---- the capabilities a case may need ---- */

static int allowed_cpus(int *first, int *second)
{
	cpu_set_t set;
	*first = *second = -1;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 0;
	int count = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set)) {
			if (count == 0)
				*first = cpu;
			else if (count == 1)
				*second = cpu;
			count++;
		}
	return count;
}

static int on_path(const char *program)
{
	char command[256];
	snprintf(command, sizeof command, "command -v %s >/dev/null 2>&1", program);
	return system(command) == 0;
}

static unsigned long long available_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kib = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib >> 10;
}

/* Whether the plumb program is an AddressSanitizer build (make sanitize). */
static bool sanitized_build(void)
{
	size_t size;
	char *program = cli_read_file(cli_plumb_program(), &size);
	bool sanitized = program && memmem(program, size, "__asan_init", 11) != NULL;
	free(program);
	return sanitized;
}

/* Skips the case, with the reason, when this machine lacks what it needs. */
static void require(const bad_case *c)
{
	char path[4096];
	int first, second;
	if ((c->flags & ONE_CPU) && allowed_cpus(&first, &second) < 2)
		cr_skip_test("%s: needs two allowed CPUs, to have one outside a one-CPU mask", c->name);
	if ((c->flags & VALGRIND) && !on_path("valgrind"))
		cr_skip_test("%s: needs valgrind, which is not installed", c->name);
	if ((c->flags & PLUMBGRIND)
	    && (!cli_plumbgrind_built() || access(built("tests/data/instrument_target", path, sizeof path), X_OK) != 0))
		cr_skip_test("%s: plumbgrind and its test program are not built here", c->name);
	if (c->flags & FULL) {
		char dir[TEMP_PATH_SIZE];
		temp_template(dir, sizeof dir, "plumb-bad-input-XXXXXX");
		bool have = mkdtemp(dir) && full_device(dir, path, sizeof path);
		if (dir[0] && !strstr(dir, "XXXXXX")) {
			unlink(path);
			rmdir(dir);
		}
		if (!have)
			cr_skip_test("%s: running as root without the right to make a private full device", c->name);
	}
	plumb_status status;
	if ((c->flags & NO_PAPI) && counter_backend_usable("papi", &status) == 0)
		cr_skip_test("%s: PAPI counts on this machine, so its unusable-PAPI message cannot be shown", c->name);
	if ((c->flags & NO_PAPI) && sanitized_build())
		cr_skip_test("%s: the sanitizer build has no libplumb.so for PAPI's agent, so PAPI fails earlier", c->name);
	if ((c->flags & NO_PAPI) && !strstr(status.message, "component is disabled"))
		cr_skip_test("%s: PAPI is unusable here for another reason: %s", c->name, status.message);
	if ((c->flags & NOT_SANITIZED) && sanitized_build())
		cr_skip_test("%s: plumb is built with AddressSanitizer (valgrind cannot run it, and no libplumb.so is built to preload)", c->name);
	if ((c->flags & BIG_MEMORY) && available_mib() >= 200ull << 10)
		cr_skip_test("%s: this machine has %llu MiB available, enough to run the case", c->name, available_mib());
}

/* %T, %F, %C0 and %C1 in a case's arguments. */
static const char *expand(const char *argument, const char *dir, char *buffer, size_t size)
{
	int first, second;
	allowed_cpus(&first, &second);
	if (!strcmp(argument, "%T"))
		return built("tests/data/instrument_target", buffer, size);
	if (!strcmp(argument, "%F")) {
		struct stat st;
		snprintf(buffer, size, "%s/full", dir);
		if (lstat(buffer, &st) != 0 || !S_ISCHR(st.st_mode))
			snprintf(buffer, size, "/dev/full");
		return buffer;
	}
	if (!strcmp(argument, "%C1"))
		snprintf(buffer, size, "%d", second);
	else if (!strcmp(argument, "%C0,%C1"))
		snprintf(buffer, size, "%d,%d", first, second);
	else
		return argument;
	return buffer;
}

/* ---- the check every case gets ---- */

static void check_case(const bad_case *c)
{
	require(c);
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-bad-input-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	make_fixtures(dir, c->flags);
	char *before = list_folder(dir);

	const char *argv[16];
	char expanded[14][4096];
	size_t argc = 0;
	for (; argc < 14 && c->argv[argc]; argc++)
		argv[argc] = expand(c->argv[argc], dir, expanded[argc], sizeof expanded[argc]);
	argv[argc] = NULL;
	int first, second;
	allowed_cpus(&first, &second);
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0, "prctl: %s", strerror(errno));
	int signal_number = (c->flags & SIGINT_SENT) ? SIGINT : (c->flags & SIGTERM_SENT) ? SIGTERM : 0;
	outcome o = run_plumb(dir, argv, (c->flags & ONE_CPU) ? first : -1, signal_number, c->flags & AFTER_CHILD);
	char kept[256] = "";
	if (c->flags & KEEPS_TRACE) {
		const char *stats[] = { "trace", "stats", "out.ptrace", NULL };
		outcome read_back = run_plumb(dir, stats, -1, 0, false);
		if (read_back.exit_code != 0)
			snprintf(kept, sizeof kept, "the trace kept is not readable: %.200s", read_back.err);
		outcome_free(&read_back);
		char path[4096];
		snprintf(path, sizeof path, "%s/out.ptrace", dir);
		unlink(path);
	}
	char *after = list_folder(dir);
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

	/* Everything is checked before the first assertion, so that the folder
	 * is gone whatever fails. */
	char failures[8192] = "";
#define FAIL(...) snprintf(failures + strlen(failures), sizeof failures - strlen(failures), __VA_ARGS__)
	if (o.exit_code != c->exit_code)
		FAIL("exit status %d, expected %d\n", o.exit_code, c->exit_code);
	const char *line = o.err;
	if (c->flags & PROGRAM_STDERR) {
		/* plumb's line is the last; the rest is the program's (valgrind's report). */
		size_t length = strlen(o.err);
		const char *last = o.err + length;
		if (last > o.err && last[-1] == '\n')
			last--;
		while (last > o.err && last[-1] != '\n')
			last--;
		line = last;
		if (strstr(o.err, "plumb ") != line && strstr(o.err, "plumb:") != line)
			FAIL("plumb wrote more than its last line\n");
	}
	const char *newline = strchr(line, '\n');
	if ((c->flags & QUIET) && !line[0]) {
		/* stopped by a signal without a word: allowed */
	} else if (!newline || newline[1]) {
		FAIL("stderr is not exactly one line\n");
	} else if (strncmp(line, "plumb ", 6) && strncmp(line, "plumb:", 6)) {
		FAIL("the message does not start with \"plumb\"\n");
	} else if (!strstr(line, c->message)) {
		FAIL("the message lacks \"%s\"\n", c->message);
	}
	if (strstr(o.err, "Sanitizer") || strstr(o.err, "runtime error:"))
		FAIL("a sanitizer report\n");
	if (c->exit_code == USAGE && o.out[0])
		FAIL("a usage error printed on stdout\n");
	if (c->report && !strstr(o.out, c->report))
		FAIL("the report on stdout lacks \"%s\"\n", c->report);
	if (kept[0])
		FAIL("%s\n", kept);
	if (o.orphans[0])
		FAIL("children left running: %s\n", o.orphans);
	if (strcmp(before, after)) {
		/* Name only what changed: entries of one listing missing from the other. */
		FAIL("the folder changed:");
		const char *lists[2] = { after, before };
		for (int side = 0; side < 2; side++)
			for (const char *entry = lists[side]; *entry;) {
				size_t length = strcspn(entry, " ");
				char word[600];
				snprintf(word, sizeof word, "%.*s ", (int)length, entry);
				const char *other = lists[!side];
				bool found = !strncmp(other, word, strlen(word));
				char spaced[604];
				snprintf(spaced, sizeof spaced, " %s", word);
				found = found || strstr(other, spaced);
				if (!found)
					FAIL(" %s%.*s", side ? "-" : "+", (int)length, entry);
				entry += length + (entry[length] == ' ');
			}
		FAIL("\n");
	}
	char command[2048] = "plumb";
	for (size_t i = 0; argv[i]; i++)
		snprintf(command + strlen(command), sizeof command - strlen(command), " %s", argv[i]);
	cr_assert(!failures[0], "case %s: %s\n%sstderr: %s\nstdout (%zu bytes): %.300s", c->name, command, failures,
	          o.err, strlen(o.out), o.out);
#undef FAIL
	free(before);
	free(after);
	outcome_free(&o);
}

/* The parameter is the case's index: Criterion runs each in a process of
 * its own, where the table's pointers stay valid but copied ones may not. */
static void free_indices(struct criterion_test_params *params)
{
	cr_free(params->params);
}

ParameterizedTestParameters(bad_input, table)
{
	size_t *indices = cr_malloc(CASE_COUNT * sizeof *indices);
	for (size_t i = 0; i < CASE_COUNT; i++)
		indices[i] = i;
	return cr_make_param_array(size_t, indices, CASE_COUNT, free_indices);
}

ParameterizedTest(size_t *index, bad_input, table, .timeout = 60)
{
	check_case(&cases[*index]);
}

/* ---- the documentation's table ---- */

static void markdown_code(char **doc, size_t *length, const char *text)
{
	append(doc, length, "`", 1);
	for (const char *p = text; *p; p++)
		append(doc, length, *p == '|' ? "\\|" : p, *p == '|' ? 2 : 1);
	append(doc, length, "`", 1);
}

/* The table as docs/bad-input.md shows it, between its two markers. */
static char *doc_table(void)
{
	char *doc = NULL;
	size_t length = 0;
	const char *head = "| case | command line | exit | message (stderr) |\n|---|---|---|---|\n";
	append(&doc, &length, head, strlen(head));
	for (size_t i = 0; i < CASE_COUNT; i++) {
		const bad_case *c = &cases[i];
		char command[1024] = "plumb";
		for (size_t a = 0; a < 14 && c->argv[a]; a++) {
			const char *argument = c->argv[a];
			size_t used = strlen(command);
			if (!argument[0] || strpbrk(argument, " $"))
				snprintf(command + used, sizeof command - used, " '%s'", argument);
			else
				snprintf(command + used, sizeof command - used, " %s", argument);
		}
		append(&doc, &length, "| ", 2);
		append(&doc, &length, c->name, strlen(c->name));
		append(&doc, &length, " | ", 3);
		markdown_code(&doc, &length, command);
		char exit_text[32];
		snprintf(exit_text, sizeof exit_text, " | %d | ", c->exit_code);
		append(&doc, &length, exit_text, strlen(exit_text));
		markdown_code(&doc, &length, c->message);
		if (c->report) {
			const char *also = " (report: ";
			append(&doc, &length, also, strlen(also));
			markdown_code(&doc, &length, c->report);
			append(&doc, &length, ")", 1);
		}
		append(&doc, &length, " |\n", 3);
	}
	return doc;
}

Test(bad_input, names_are_unique)
{
	for (size_t i = 0; i < CASE_COUNT; i++)
		for (size_t j = i + 1; j < CASE_COUNT; j++)
			cr_assert_str_neq(cases[i].name, cases[j].name, "two cases are named %s", cases[i].name);
	cr_assert_geq(CASE_COUNT, 80);
}

Test(bad_input, doc_matches_the_table)
{
	static const char begin[] = "<!-- the table: generated from tests/e2e/test_bad_input.c -->\n";
	static const char end[] = "<!-- end of the table -->\n";
	char path[4096];
	snprintf(path, sizeof path, "%s/docs/bad-input.md", cli_source_dir());
	const char *rewrite = getenv("PLUMB_BAD_INPUT_DOC");
	if (rewrite && rewrite[0])
		snprintf(path, sizeof path, "%s", rewrite);
	size_t size;
	char *doc = cli_read_file(path, &size);
	cr_assert_not_null(doc, "cannot read %s: %s", path, strerror(errno));
	char *from = strstr(doc, begin), *to = from ? strstr(from, end) : NULL;
	cr_assert(from && to, "%s lacks the markers around the table", path);
	from += strlen(begin);
	char *table = doc_table();
	bool same = (size_t)(to - from) == strlen(table) && !memcmp(from, table, strlen(table));
	if (!same && rewrite && rewrite[0]) {
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fprintf(f, "%.*s%s%s", (int)(from - doc), doc, table, to);
		cr_assert_eq(fclose(f), 0);
		same = true;
	}
	cr_assert(same, "docs/bad-input.md is out of step with the table in tests/e2e/test_bad_input.c; rewrite it "
	                "with: PLUMB_BAD_INPUT_DOC=$PWD/docs/bad-input.md PLUMB_BIN=$PWD/build/plumb "
	                "build/tests/e2e_tests --filter 'bad_input/doc*'");
	free(table);
	free(doc);
}
