/* Runs the built plumb program for end-to-end tests and captures its output.
 * PLUMB_BIN names the program (the Makefile sets it). */
#ifndef PLUMB_TESTS_RUN_H
#define PLUMB_TESTS_RUN_H

#include <stddef.h>

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
/* A path under a fresh temporary directory private to this test process. */
const char *cli_temp_path(const char *name);
/* The source tree (PLUMB_SRCDIR), for test data. */
const char *cli_source_dir(void);

#endif
