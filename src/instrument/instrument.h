/* Exact instrumented counts from plumbgrind, plumb's Valgrind tool.
 *
 * instrument_run() runs a command under the tool and parses the summary it
 * writes at exit: per thread and per named region (include/plumb/valgrind.h
 * markers, or plumb_region_begin/end), the exact number of guest
 * instructions, loads, stores, modifies (read-modify-write accesses, as
 * lackey merges them) and bytes read and written.  The counts are what
 * Valgrind executes, which is what the program executes: they equal the
 * line counts of a lackey --trace-mem=yes trace of the same run.
 * docs/valgrind-tool.md describes the tool and the summary format. */
#ifndef PLUMB_INSTRUMENT_H
#define PLUMB_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

typedef enum instrument_counter {
	INSTRUMENT_INSTRUCTIONS,
	INSTRUMENT_LOADS,
	INSTRUMENT_STORES,
	INSTRUMENT_MODIFIES,
	INSTRUMENT_BYTES_READ,
	INSTRUMENT_BYTES_WRITTEN,
	INSTRUMENT_COUNTERS
} instrument_counter;

/* "instructions", "loads", "stores", "modifies", "bytes_read", "bytes_written". */
const char *instrument_counter_name(instrument_counter counter);

typedef struct instrument_counts {
	uint64_t value[INSTRUMENT_COUNTERS];
} instrument_counts;

typedef struct instrument_thread {
	uint32_t thread;              /* 0 = main, then in order of creation */
	int lwp;                      /* the kernel's thread id (0 if it never ran) */
	instrument_counts total;      /* everything the thread executed */
	instrument_counts collected;  /* while collection was on, without the markers' own code */
} instrument_thread;

typedef struct instrument_region {
	char *name;
	uint32_t thread;
	uint64_t entries;             /* completed BEGIN..END pairs */
	instrument_counts counts;     /* summed over the entries */
} instrument_region;

typedef struct instrument_summary {
	char *command;
	int pid;
	int exit_code;                /* instrument_run: the program's exit status (128 + signal if
	                                 killed); 0 from a parsed file */
	int exit_signal;              /* instrument_run: the signal that killed it, else 0 */
	instrument_counts total;
	instrument_thread *threads;
	size_t thread_count;
	instrument_region *regions;
	size_t region_count;
	char **warnings;              /* mismatched markers, regions open at exit, ... */
	size_t warning_count;
	int traced;                   /* a trace was requested */
	int trace_uncounted;          /* its references were not counted (--plumb-count-records=no) */
	uint64_t trace_records;
	char *trace_error;            /* NULL, or why the trace stopped early */
} instrument_summary;

/* Parses a summary held in memory; name is used in messages.  A malformed,
 * truncated (no "end") or inconsistent summary fails with the line. */
int instrument_summary_parse(instrument_summary *out, const char *text, size_t length, const char *name,
                             plumb_status *status);
int instrument_summary_read(instrument_summary *out, const char *path, plumb_status *status);
void instrument_summary_free(instrument_summary *summary);
/* The region of that name and thread, or NULL. */
const instrument_region *instrument_summary_region(const instrument_summary *summary, const char *name,
                                                   uint32_t thread);

typedef struct instrument_options {
	const char *valgrind;         /* program; NULL: "valgrind" from PATH */
	const char *tool_dir;         /* VALGRIND_LIB holding the tool; NULL: instrument_find_tool */
	const char *trace_path;       /* NULL: no trace; else lackey-format references */
	int trace_fd;                 /* >= 0: trace to this descriptor instead (inherited) */
	int collect_at_start;         /* 0: only between PLUMB_VG_START and PLUMB_VG_STOP */
	int quiet;                    /* pass -q: Valgrind's banner off */
	char *const *extra_arguments; /* more valgrind options, NULL-terminated, or NULL */
	int program_stdout;           /* >= 0: the program's (and valgrind's) standard output goes
	                                 to this descriptor; -1: inherited */
} instrument_options;

void instrument_options_init(instrument_options *options);

/* Finds the folder to use as VALGRIND_LIB: $PLUMB_VALGRIND_LIB, else vg/lib
 * beside or above the running program (the build tree), else
 * ../lib/plumb/valgrind from it (an installed plumb).  Fails saying where it
 * looked. */
int instrument_find_tool(char *dir, size_t size, plumb_status *status);

/* The valgrind program NAME (a path, or a name found on PATH as execvp would)
 * into out.  Fails with one line when it cannot be run. */
int instrument_find_valgrind(const char *name, char *out, size_t size, plumb_status *status);

/* Runs argv under plumbgrind and parses its summary.  The program's own
 * output goes where plumb's goes.  Fails if valgrind or the tool is missing,
 * or no summary appeared (the program could not start, or Valgrind died);
 * a program that exits non-zero is not a failure: see exit_code. */
int instrument_run(char *const argv[], const instrument_options *options, instrument_summary *out,
                   plumb_status *status);

/* The same in two steps, for a caller that consumes the trace while the
 * program runs (plumb sim -- ./prog, the fast path beside lackey).  With
 * trace_pipe set, the references arrive in lackey's text format on
 * process->trace_fd (a pipe; plumb's lackey reader reads it, for instance
 * trace_reader_open("/proc/self/fd/N", TRACE_FORMAT_LACKEY)); read it to
 * its end, then call instrument_finish, which closes it, waits and parses
 * the summary.  options->trace_path and trace_fd must then be unset. */
typedef struct instrument_process {
	int pid;
	int trace_fd;                 /* read end of the trace pipe, or -1 */
	char *folder, *summary;       /* private */
} instrument_process;

int instrument_start(char *const argv[], const instrument_options *options, int trace_pipe,
                     instrument_process *process, plumb_status *status);
int instrument_finish(instrument_process *process, instrument_summary *out, plumb_status *status);

/* plumb instrument's report: meta (the command, its exit code when ran,
 * else the summary file named by source), the tables "threads" (each
 * thread's counts and all), "collected" (while collecting) and "regions"
 * (per region and thread), and notes: no regions, plumbgrind's warnings,
 * an incomplete trace, and (ran) how the command ended. */
struct output_report;
struct output_report *instrument_report(const instrument_summary *summary, const char *source, bool ran);

#endif
