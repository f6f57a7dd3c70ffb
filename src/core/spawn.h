/* Starting a helper program (gnuplot) and reading what it prints. */
#ifndef PLUMB_SPAWN_H
#define PLUMB_SPAWN_H

#include <stdbool.h>
#include <stddef.h>

/* Runs argv[0], looked up on PATH as execvp does, with the argument vector
 * argv: never through a shell, so no word of argv (a folder name, a title
 * from a report file) is ever read as shell syntax.  Standard input is
 * /dev/null; standard output is collected into *output (malloc'd, NUL
 * terminated, *length bytes without the NUL); standard error goes there
 * too with merge_stderr, else to /dev/null.  The child is plumb's
 * (interrupt_fork), so a signal to plumb stops it.  Returns 0 with the
 * child's wait status in *wait_status, or -1 with errno and *output NULL:
 * ENOENT when the program is not installed. */
int spawn_capture(char *const argv[], bool merge_stderr, char **output, size_t *length, int *wait_status);

#endif
