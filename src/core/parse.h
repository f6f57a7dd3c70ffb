/* Parsers for the values users type: sizes, counts, lists.  Each rejects
 * trailing junk, overflow and empty input with a message naming the text. */
#ifndef PLUMB_PARSE_H
#define PLUMB_PARSE_H

#include <stdint.h>
#include "core/status.h"

/* "4096", "4K", "4KiB", "64k", "64kib", "1M", "1MiB", "2G", "1.5M": binary
 * multiples, the unit K/KiB, M/MiB, G/GiB, T/TiB in capitals or all in lower
 * case (or B); "64Kb", "64KB" are refused.  No sign, also after white space. */
int parse_size(const char *text, uint64_t *out, plumb_status *status);
/* Integers are decimal unless written 0x ("010" is ten).  Unsigned integer
 * in [min, max]: a sign anywhere, also after leading white space, is refused. */
int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out, plumb_status *status);
int parse_int(const char *text, long min, long max, long *out, plumb_status *status);
/* Finite double in [min, max]. */
int parse_double(const char *text, double min, double max, double *out, plumb_status *status);
/* A comma-separated list as typed: refuses an empty list, an empty item
 * (",16K", "16K,", "16K,,32K": strtok_r would pass over it, and in a list
 * of fields in a fixed order the next field would move into its place) and,
 * with longest > 0, a list longer than longest characters (rather than cut
 * it and read what is left). */
int parse_list_check(const char *text, size_t longest, plumb_status *status);
/* CPU list "0-3,6,8-9" into cpus[] (at most max entries); count in *n. */
int parse_cpu_list(const char *text, int *cpus, int max, int *n, plumb_status *status);
/* A command line typed as one word ("./prog --size '24 KiB' 3") into an
 * argument vector, as a POSIX shell quotes, and nothing else: words split
 * at blanks; '...' keeps everything; "..." keeps everything but \" \\ \$
 * \` (backslash-newline is dropped); \ outside quotes keeps the next
 * character.  No variable, glob, tilde or command is expanded, so what a
 * shell would expand is refused rather than passed on changed: an
 * unquoted | & ; < > ( ) $ ` * ? [ anywhere, or # ~ at a word's start,
 * and an unclosed quote.  *argv (NULL-terminated, *argc words, at least
 * one) is one allocation: free(*argv). */
int parse_command_line(const char *text, char ***argv, size_t *argc, plumb_status *status);
/* Formats a byte count as "32 KiB", "1 MiB", "1.5 MiB", "100 B". */
const char *format_size(uint64_t bytes, char *buffer, size_t length);

#endif
