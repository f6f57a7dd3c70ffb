/* One output layer for every command: a report holds metadata and tables of
 * typed cells, and renders as an aligned table, CSV or JSON (schema in
 * docs/output-schema.md).  A cell that could not be measured carries its
 * status and reason instead of a value, and never renders as 0. */
#ifndef PLUMB_OUTPUT_H
#define PLUMB_OUTPUT_H

#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/status.h"

#define OUTPUT_SCHEMA_VERSION 1

typedef enum output_format { OUTPUT_TABLE, OUTPUT_CSV, OUTPUT_JSON } output_format;

typedef enum cell_kind { CELL_EMPTY, CELL_TEXT, CELL_INTEGER, CELL_REAL, CELL_STATUS } cell_kind;

typedef struct output_report output_report;
typedef struct output_table output_table;

output_report *output_report_new(const char *command);
void output_report_free(output_report *report);
const char *output_report_command(const output_report *report);


/* Metadata: key/value pairs about the run (machine, timer calibration, options). */
void output_meta_text(output_report *report, const char *key, const char *value);
void output_meta_integer(output_report *report, const char *key, int64_t value);
void output_meta_real(output_report *report, const char *key, double value);
/* A free-text note printed under the tables (table format) or in "notes" (JSON). */
void output_note(output_report *report, const char *format, ...)
	__attribute__((format(printf, 2, 3)));

/* Tables.  name is a stable identifier (JSON key, CSV section); title is for people. */
output_table *output_table_add(output_report *report, const char *name, const char *title);
/* unit may be NULL.  decimals applies to real cells in table/CSV format. */
void output_column(output_table *table, const char *name, const char *unit, int decimals);
/* Cells fill the current row left to right; output_row() starts a new row. */
void output_row(output_table *table);
void output_cell_text(output_table *table, const char *text);
void output_cell_integer(output_table *table, int64_t value);
void output_cell_real(output_table *table, double value);   /* NaN renders as status "n/a" */
/* status is a short word ("unsupported", "not-counted", "skipped", "noisy");
 * reason is one line.  Renders as the status word in table/CSV, and as
 * {"status": ..., "reason": ...} in JSON. */
void output_cell_status(output_table *table, const char *status, const char *reason);
void output_cell_empty(output_table *table);

/* Renders to a stream. */
int output_write(const output_report *report, output_format format, FILE *stream, plumb_status *status);
/* The aligned table format for a terminal of columns characters: each
 * table keeps the columns from the left that fit (the first always) and
 * names the ones left out; columns 0 shows every column, as output_write
 * and files do.  CSV and JSON are never cut. */
int output_write_fitted(const output_report *report, FILE *stream, unsigned columns, plumb_status *status);
/* PREFIX then TEXT, broken at spaces into lines of at most COLUMNS
 * characters (0: one line), the lines after the first indented by INDENT
 * spaces; a word longer than a line stands alone.  The fitted tables' notes
 * use it, and so does any text that goes with them (the report's summary). */
void output_write_wrapped(FILE *stream, const char *prefix, const char *text, unsigned columns, unsigned indent);
/* Renders to path through output_file_open/commit (atomically for a regular
 * file, in place for a device or FIFO). "-" = stdout. */
int output_write_file(const output_report *report, output_format format, const char *path, plumb_status *status);

/* CSV of one table NAME (NULL: the first) to PATH ("-" or NULL: stdout),
 * atomically; "meta" and "notes" name the metadata (key, value) and the
 * notes.  -1 with ENOENT and the table names when there is no such table. */
int output_write_csv_table(const output_report *report, const char *name, const char *path, plumb_status *status);
/* The same to an open stream (plumb stat's stderr). */
int output_write_csv_stream(const output_report *report, const char *name, FILE *stream, plumb_status *status);

/* Every table, one CSV file each: the first to PATH (a file, not "-"), each
 * other to PATH without ".csv" plus "-NAME.csv" (lat.csv, lat-levels.csv).
 * The others only where output_path_takes_siblings(PATH): to /dev/null or a
 * FIFO only the first table goes (the caller says so, see below). */
int output_write_csv_tables(const output_report *report, const char *path, plumb_status *status);

/* Whether files may be made beside PATH, named after it (PATH-NAME.csv,
 * report.json beside report.html, TRACE.code): only when PATH is a regular
 * file or does not exist yet (a symlink counts as what it leads to).  Never
 * beside a device, FIFO, socket or "-": /dev/null-caches.csv would be a
 * regular file in /dev. */
bool output_path_takes_siblings(const char *path);

/* Reading a report back: from JSON text that output_write produced (schema
 * version 1), and read-only access to tables and cells.  The main report
 * uses these to assemble sections from saved or fresh runs. */
int output_report_parse_json(const char *text, output_report **out, plumb_status *status);
size_t output_table_count(const output_report *report);
const output_table *output_table_at(const output_report *report, size_t index);
const output_table *output_table_find(const output_report *report, const char *name);
const char *output_table_name(const output_table *table);
const char *output_table_title(const output_table *table);
size_t output_column_count(const output_table *table);
const char *output_column_name(const output_table *table, size_t column);
const char *output_column_unit(const output_table *table, size_t column);
int output_column_index(const output_table *table, const char *name);   /* -1 if absent */
size_t output_row_count(const output_table *table);
/* A count as people read it, digits grouped by thousands (1,234,567). */
const char *output_group_digits(long long value, char *buffer, size_t length);
cell_kind output_cell_kind(const output_table *table, size_t row, size_t column);
/* Numeric value of an integer or real cell; NaN for any other kind. */
double output_cell_number(const output_table *table, size_t row, size_t column);
/* Text of a text cell, or the status word of a status cell; NULL otherwise. */
const char *output_cell_string(const output_table *table, size_t row, size_t column);
const char *output_cell_reason(const output_table *table, size_t row, size_t column);
/* By name, for readers of a report (table may be NULL): the first row whose
 * text column equals value (-1 if none), and a cell's number (NaN) or text
 * (NULL) by row (-1: none) and column name. */
long output_row_where(const output_table *table, const char *column, const char *value);
double output_number_at(const output_table *table, long row, const char *column);
const char *output_text_at(const output_table *table, long row, const char *column);
/* The cell as the table format prints it. */
void output_cell_format(const output_table *table, size_t row, size_t column, char *buffer, size_t length);
size_t output_meta_count(const output_report *report);
const char *output_meta_key(const output_report *report, size_t index);
void output_meta_format(const output_report *report, size_t index, char *buffer, size_t length);
/* The metadata value KEY as a number (NaN when absent or not a number) and
 * as text ("" when absent; the last of equal keys); report may be NULL. */
double output_meta_number_of(const output_report *report, const char *key);
void output_meta_text_of(const output_report *report, const char *key, char *out, size_t length);
size_t output_note_count(const output_report *report);
const char *output_note_at(const output_report *report, size_t index);

/* Writing a file the user named, for any producer: output_file_open, write
 * to stream, then output_file_commit (or output_file_abort on failure).
 * A regular file or a missing path is replaced atomically through
 * TARGET.tmp.RANDOM beside it (created with O_EXCL under an unpredictable
 * name, mode 0666 less the umask; removed on failure, abort, or a signal); a
 * symlink's target is replaced and the link kept, where the kernel follows
 * the link (protected_symlinks decides in a sticky folder such as /tmp);
 * a character device, FIFO or socket is written in place.  Every write error is kept, so commit fails
 * with its cause ("cannot write 'F': No space left on device") and an
 * incomplete file is never renamed into place. */
typedef struct output_file {
	FILE *stream;
	char *path;        /* as the caller named it, for messages */
	char *target;      /* path with its symlinks followed */
	char *temporary;   /* NULL when written in place */
	void *sink;
} output_file;
int output_file_open(output_file *file, const char *path, plumb_status *status);
int output_file_commit(output_file *file, plumb_status *status);
/* The descriptor the stream writes to, for a producer in another process
 * (flush the stream first if it was written to). */
int output_file_descriptor(const output_file *file);
void output_file_abort(output_file *file);

#endif
