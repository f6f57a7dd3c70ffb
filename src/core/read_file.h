/* Reading a whole input file into memory, never more than a stated limit:
 * every file plumb reads whole (a saved report, a --machine or --levels-from
 * file, a plumbgrind summary, a CSV, a configuration) goes through here, so
 * /dev/zero, a FIFO that never ends or a huge file fails with one line
 * instead of filling memory, and running out of memory under `ulimit -v`
 * is reported instead of looping.  The limits are in docs/bad-input.md. */
#ifndef PLUMB_READ_FILE_H
#define PLUMB_READ_FILE_H

#include <stddef.h>
#include "core/status.h"

/* The limit for reports, machine descriptions, summaries and tables. */
#define READ_FILE_MAX_BYTES ((size_t)64 << 20)
/* The limit for a simulator configuration file. */
#define READ_FILE_MAX_CONFIG_BYTES ((size_t)1 << 20)

/* Reads all of path ("-": standard input) into *text, NUL-terminated (the
 * file may hold NULs: *length is the byte count).  Fails, with *text NULL,
 * when the file cannot be opened or read ("cannot open 'PATH': ..."), holds
 * more than limit bytes ("PATH: larger than 64 MiB") or memory runs out
 * ("PATH: out of memory after reading N MiB"). */
int read_file_limited(const char *path, size_t limit, char **text, size_t *length, plumb_status *status);

/* The number of bytes a UTF-8 byte-order mark takes at the start of text
 * (3, or 0 when there is none): text readers skip it, so that a CSV saved
 * by a spreadsheet keeps its first row. */
size_t read_file_bom_length(const char *text, size_t length);

#endif
