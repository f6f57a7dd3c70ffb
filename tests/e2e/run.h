/* Runs the built plumb program for end-to-end tests and captures its output.
 * PLUMB_BIN names the program (the Makefile sets it). */
#ifndef PLUMB_TESTS_RUN_H
#define PLUMB_TESTS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

typedef struct cli_run {
	int exit_code;     /* exit status, or 128+signal if killed */
	char *out;         /* captured stdout, NUL-terminated */
	char *err;         /* captured stderr */
} cli_run;

/* argv excludes the program name and ends with NULL.  stdin_text may be NULL
 * (stdin is then /dev/null).  Aborts the test if the program cannot start. */
cli_run cli_run_plumb(const char *stdin_text, const char *const argv[]);
/* Convenience: cli_run_plumbv(NULL, "lat", "--help", NULL). */
cli_run cli_run_plumbv(const char *stdin_text, ...);
void cli_run_free(cli_run *run);
/* plumb ARGV (as cli_run_plumb's) under a file size limit of BYTES
 * (RLIMIT_FSIZE, SIGXFSZ at its default action, as a shell's `ulimit -f`
 * leaves it), its stderr a pipe, which the limit does not cover, read into
 * TEXT (at most LENGTH - 1 bytes, NUL-terminated); returns its wait status. */
int cli_run_plumb_file_limited(unsigned long bytes, char *text, size_t length, const char *const argv[]);
/* The plumb program (PLUMB_BIN); aborts the test when it is not set. */
const char *cli_plumb_program(void);
/* plumb, then argv (as cli_run_plumb's): the vector to exec, which the
 * caller frees (the strings are not copied). */
char **cli_plumb_argv(const char *const argv[]);
/* A path under a fresh temporary directory private to this test process. */
const char *cli_temp_path(const char *name);
/* The build folder: the one plumb (PLUMB_BIN) is in. */
const char *cli_build_dir(void);
/* Whether plumbgrind (VALGRIND_LIB's tool, built only where Valgrind's tool
 * libraries are installed) is in the build folder; cli_need_plumbgrind skips
 * the test, with that reason, when it is not. */
bool cli_plumbgrind_built(void);
void cli_need_plumbgrind(void);
/* The source tree (PLUMB_SRCDIR), for test data. */
const char *cli_source_dir(void);
/* The whole content of the file at PATH, in memory the caller frees, with a
 * NUL after its last byte (so text files read as strings; binary files may
 * hold NULs of their own, hence LENGTH, which may be NULL).  NULL with errno
 * set when the file cannot be opened or read: the caller decides whether that
 * fails the test. */
char *cli_read_file(const char *path, size_t *length);

/* The table NAME of a plumb JSON report, and its rows; both fail the test
 * when the report has no such table. */
json_object *cli_json_table(json_object *root, const char *name);
json_object *cli_json_rows(json_object *root, const char *name);
/* A usage error as every command must give it: exit 2, nothing on stdout,
 * exactly one stderr line, starting "plumb COMMAND: ". */
void cli_assert_usage_error(const cli_run *run, const char *command);

#endif
