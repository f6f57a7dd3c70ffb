/* The CLI's command table and the helpers every subcommand shares. */
#ifndef PLUMB_CLI_COMMAND_H
#define PLUMB_CLI_COMMAND_H

#include <stdio.h>
#include "core/output.h"
#include "core/status.h"

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

extern const struct cli_command cli_commands[];

/* Exit status, the same in every command (man plumb, docs/cli.md); 128 + N for
 * signal N comes from interrupt_exit_code(). */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1,     /* the work failed; one line on stderr says why */
	CLI_EXIT_USAGE = 2,       /* bad usage; nothing was done */
	CLI_EXIT_UNCOUNTED = 3,   /* report written, but a value asked for by name is unsupported here */
};

/* Output options every command takes: --csv, --json, -o/--output FILE,
 * --table NAME (CSV of that table only). */
typedef struct cli_output {
	output_format format;
	const char *path;      /* NULL or "-" = stdout */
	const char *table;     /* --table NAME, or NULL */
	const char *first_format;  /* the option that chose format: "--csv", "--json", "--table" */
	bool wide;             /* --wide: every column on a terminal too */
} cli_output;

/* Long options for the shared output flags; splice into a command's table. */
#define CLI_OUTPUT_OPTIONS \
	{ "csv", no_argument, 0, 0x1001 }, \
	{ "json", no_argument, 0, 0x1002 }, \
	{ "output", required_argument, 0, 'o' }, \
	{ "table", required_argument, 0, 0x1003 }, \
	{ "wide", no_argument, 0, 0x1004 }
/* Handles one getopt result for the output flags; returns 1 if handled.
 * Two different formats (--csv and --json, --table and --json) are a usage
 * error: it is printed as from COMMAND and plumb exits 2. */
int cli_output_option(const char *command, cli_output *out, int option, const char *argument);
/* Writes the report as chosen; on failure prints the error and returns 1.
 * A table on a terminal fits its width ($COLUMNS, else the terminal's):
 * columns that do not fit are left out from the right and named, unless
 * --wide; files and pipes get every column.
 * CSV is one table per file (docs/output-schema.md): the first table, or
 * --table NAME; with -o FILE every other table goes to FILE-NAME.csv beside
 * it, and on stdout one line on stderr names the others. */
int cli_output_emit(const cli_output *out, const output_report *report);
/* The width text on standard output should fit: the terminal's ($COLUMNS,
 * else the terminal's own), 0 (every column) with --wide or when standard
 * output is a file or a pipe. */
unsigned cli_output_columns(const cli_output *out);

/* Prints "plumb CMD: message" on stderr; returns the exit code 2 (usage) or 1. */
int cli_usage_error(const char *command, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
int cli_error(const char *command, const plumb_status *status);
/* Prints the error for getopt_long's result OPTION ('?' unknown option, ':' missing
 * value; optstrings start with ':' so the two differ), naming the option as typed. */
int cli_bad_option(const char *command, int option, char **argv);

#endif
