/* The output layer: one in-memory report, three renderings.  Commands fill
 * the report and never print numbers themselves, so table, CSV and JSON
 * always agree, and a cell that is not a number can never turn into 0. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/interrupt.h"
#include "core/escape.h"
#include "core/output.h"

typedef struct cell {
	cell_kind kind;
	int64_t integer;
	double real;
	char *text;      /* CELL_TEXT text, or CELL_STATUS status word */
	char *reason;    /* CELL_STATUS */
} cell;

typedef struct table_column {
	char *name, *unit;
	int decimals;
} table_column;

struct output_table {
	char *name, *title;
	table_column *columns;
	size_t column_count;
	cell *cells;          /* rows * column_count */
	size_t row_count, cell_capacity;
	size_t cursor;        /* next column to fill in the current row */
};

typedef struct meta {
	char *key;
	cell value;
} meta;

struct output_report {
	char *command;
	meta *metas;
	size_t meta_count;
	char **notes;
	size_t note_count;
	output_table **tables;
	size_t table_count;
};

/* Allocation failure in a reporting path has no good recovery: the numbers
 * would be lost silently.  Say so and stop. */
static void *checked(void *p)
{
	if (!p) {
		fputs("plumb: out of memory while building output\n", stderr);
		abort();
	}
	return p;
}

static char *copy_text(const char *s)
{
	return s ? checked(strdup(s)) : NULL;
}

static void *grow(void *p, size_t count, size_t size)
{
	return checked(realloc(p, count * size));
}

output_report *output_report_new(const char *command)
{
	output_report *r = checked(calloc(1, sizeof *r));
	r->command = copy_text(command);
	return r;
}

const char *output_report_command(const output_report *report)
{
	return report->command;
}

static void cell_free(cell *c)
{
	free(c->text);
	free(c->reason);
}

void output_report_free(output_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->meta_count; i++) {
		free(r->metas[i].key);
		cell_free(&r->metas[i].value);
	}
	for (size_t i = 0; i < r->note_count; i++)
		free(r->notes[i]);
	for (size_t t = 0; t < r->table_count; t++) {
		output_table *tb = r->tables[t];
		for (size_t i = 0; i < tb->column_count; i++) {
			free(tb->columns[i].name);
			free(tb->columns[i].unit);
		}
		for (size_t i = 0; i < tb->row_count * tb->column_count; i++)
			cell_free(&tb->cells[i]);
		free(tb->columns);
		free(tb->cells);
		free(tb->name);
		free(tb->title);
		free(tb);
	}
	free(r->metas);
	free(r->notes);
	free(r->tables);
	free(r->command);
	free(r);
}

static cell *meta_slot(output_report *r, const char *key)
{
	for (size_t i = 0; i < r->meta_count; i++)
		if (!strcmp(r->metas[i].key, key)) {
			cell_free(&r->metas[i].value);
			memset(&r->metas[i].value, 0, sizeof(cell));
			return &r->metas[i].value;
		}
	r->metas = grow(r->metas, r->meta_count + 1, sizeof *r->metas);
	meta *m = &r->metas[r->meta_count++];
	memset(m, 0, sizeof *m);
	m->key = copy_text(key);
	return &m->value;
}

void output_meta_text(output_report *r, const char *key, const char *value)
{
	cell *c = meta_slot(r, key);
	c->kind = CELL_TEXT;
	c->text = copy_text(value ? value : "");
}

void output_meta_integer(output_report *r, const char *key, int64_t value)
{
	cell *c = meta_slot(r, key);
	c->kind = CELL_INTEGER;
	c->integer = value;
}

void output_meta_real(output_report *r, const char *key, double value)
{
	cell *c = meta_slot(r, key);
	c->kind = CELL_REAL;
	c->real = value;
}

void output_note(output_report *r, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	char *text = NULL;
	if (vasprintf(&text, format, ap) < 0)
		text = NULL;
	va_end(ap);
	r->notes = grow(r->notes, r->note_count + 1, sizeof *r->notes);
	r->notes[r->note_count++] = checked(text);
}

output_table *output_table_add(output_report *r, const char *name, const char *title)
{
	output_table *t = checked(calloc(1, sizeof *t));
	t->name = copy_text(name);
	t->title = copy_text(title ? title : name);
	r->tables = grow(r->tables, r->table_count + 1, sizeof *r->tables);
	r->tables[r->table_count++] = t;
	return t;
}

void output_column(output_table *t, const char *name, const char *unit, int decimals)
{
	if (t->row_count) {
		fputs("plumb: bug: column added after rows\n", stderr);
		abort();
	}
	t->columns = grow(t->columns, t->column_count + 1, sizeof *t->columns);
	table_column *c = &t->columns[t->column_count++];
	c->name = copy_text(name);
	c->unit = copy_text(unit);
	c->decimals = decimals;
}

void output_row(output_table *t)
{
	size_t need = (t->row_count + 1) * t->column_count;
	if (need > t->cell_capacity) {
		size_t capacity = t->cell_capacity ? t->cell_capacity * 2 : 16 * t->column_count;
		while (capacity < need)
			capacity *= 2;
		t->cells = grow(t->cells, capacity, sizeof *t->cells);
		t->cell_capacity = capacity;
	}
	/* A table without columns (a saved report can have one) stores nothing
	 * per row, and has no cells to index. */
	if (t->column_count)
		memset(&t->cells[t->row_count * t->column_count], 0, t->column_count * sizeof *t->cells);
	t->row_count++;
	t->cursor = 0;
}

static cell *next_cell(output_table *t)
{
	if (!t->row_count || t->cursor >= t->column_count) {
		fprintf(stderr, "plumb: bug: table '%s' row overflow\n", t->name);
		abort();
	}
	return &t->cells[(t->row_count - 1) * t->column_count + t->cursor++];
}

void output_cell_text(output_table *t, const char *text)
{
	cell *c = next_cell(t);
	c->kind = CELL_TEXT;
	c->text = copy_text(text ? text : "");
}

void output_cell_integer(output_table *t, int64_t value)
{
	cell *c = next_cell(t);
	c->kind = CELL_INTEGER;
	c->integer = value;
}

void output_cell_real(output_table *t, double value)
{
	if (!isfinite(value)) {
		output_cell_status(t, "n/a", isnan(value) ? "no value" : "infinite");
		return;
	}
	cell *c = next_cell(t);
	c->kind = CELL_REAL;
	c->real = value;
}

void output_cell_status(output_table *t, const char *status, const char *reason)
{
	cell *c = next_cell(t);
	c->kind = CELL_STATUS;
	c->text = copy_text(status);
	c->reason = copy_text(reason ? reason : "");
}

void output_cell_empty(output_table *t)
{
	next_cell(t)->kind = CELL_EMPTY;
}

/* ---- rendering ---- */

static void format_cell(const cell *c, int decimals, char *buffer, size_t length)
{
	switch (c->kind) {
	case CELL_EMPTY: buffer[0] = 0; break;
	case CELL_TEXT: snprintf(buffer, length, "%s", c->text); break;
	case CELL_INTEGER: snprintf(buffer, length, "%lld", (long long)c->integer); break;
	case CELL_REAL: snprintf(buffer, length, "%.*f", decimals < 0 ? 3 : decimals, c->real); break;
	case CELL_STATUS: snprintf(buffer, length, "%s", c->text); break;
	}
}

static void format_meta(const cell *c, char *buffer, size_t length)
{
	if (c->kind == CELL_REAL)
		snprintf(buffer, length, "%.6g", c->real);
	else
		format_cell(c, 0, buffer, length);
}

/* A column of byte counts: shown to people in binary units (48 KiB,
 * 260 MiB, 1.5 GiB), while CSV and JSON keep the exact number. */
static bool is_bytes_column(const table_column *c)
{
	return c->unit && (!strcmp(c->unit, "bytes") || !strcmp(c->unit, "B"));
}

static void format_bytes(double value, char *buffer, size_t length)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double magnitude = value < 0 ? -value : value;
	int unit = 0;
	while (magnitude >= 1024 && unit < 5) {
		magnitude /= 1024;
		value /= 1024;
		unit++;
	}
	/* A size below 10 KiB that is not a whole number of KiB (a pad of
	 * 3404 bytes) reads better in bytes. */
	if (unit == 1 && magnitude < 10 && value != (double)(long long)value) {
		snprintf(buffer, length, "%.0f B", value * 1024);
		return;
	}
	if (unit == 0 || value == (double)(long long)value)
		snprintf(buffer, length, "%.0f %s", value, units[unit]);
	else
		snprintf(buffer, length, "%.*f %s", magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0, value, units[unit]);
}

/* A count as people read it: digits grouped by thousands.  A column is
 * grouped as a whole, when one of its counts reaches 100,000, so that its
 * digits line up; columns of short numbers (years, CPU numbers, ways) stay
 * as they are. */
const char *output_group_digits(long long value, char *buffer, size_t length)
{
	char digits[32];
	snprintf(digits, sizeof digits, "%lld", value);
	const char *start = digits[0] == '-' ? digits + 1 : digits;
	size_t count = strlen(start);
	char grouped[48];
	size_t out = 0;
	if (start != digits)
		grouped[out++] = '-';
	for (size_t i = 0; i < count; i++) {
		if (i && (count - i) % 3 == 0)
			grouped[out++] = ',';
		grouped[out++] = start[i];
	}
	grouped[out] = 0;
	snprintf(buffer, length, "%s", grouped);
	return buffer;
}

static bool column_has_long_counts(const output_table *t, size_t j)
{
	for (size_t i = 0; i < t->row_count; i++) {
		const cell *c = &t->cells[i * t->column_count + j];
		if (c->kind == CELL_INTEGER && (c->integer >= 100000 || c->integer <= -100000))
			return true;
	}
	return false;
}

/* A cell for the aligned table a person reads. */
static void format_cell_for_people(const cell *c, const table_column *column, bool grouped, char *buffer,
                                   size_t length)
{
	if (is_bytes_column(column) && (c->kind == CELL_INTEGER || (c->kind == CELL_REAL && isfinite(c->real))))
		format_bytes(c->kind == CELL_INTEGER ? (double)c->integer : c->real, buffer, length);
	else if (c->kind == CELL_INTEGER && grouped)
		output_group_digits((long long)c->integer, buffer, length);
	else
		format_cell(c, column->decimals, buffer, length);
}

static void header_text(const table_column *c, bool for_people, char *buffer, size_t length)
{
	if (for_people && is_bytes_column(c))
		snprintf(buffer, length, "%s", c->name);
	else if (c->unit && *c->unit)
		snprintf(buffer, length, "%s[%s]", c->name, c->unit);
	else
		snprintf(buffer, length, "%s", c->name);
}

#define CELL_TEXT_MAX 512

/* prefix then text, broken at spaces into lines of at most width
 * characters (0: one line), the lines after the first indented by indent
 * spaces.  A word longer than a line stands alone on its line. */
void output_write_wrapped(FILE *f, const char *prefix, const char *text, unsigned width, unsigned indent)
{
	size_t column = strlen(prefix);
	escape_terminal_span(f, prefix, column);
	if (!width) {
		escape_terminal_span(f, text, strlen(text));
		fputc('\n', f);
		return;
	}
	const char *p = text;
	bool first = true;
	while (*p) {
		size_t word = strcspn(p, " ");
		if (!first && column + 1 + word > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			column = indent;
		} else if (!first) {
			fputc(' ', f);
			column++;
		}
		escape_terminal_span(f, p, word);
		column += word;
		first = false;
		p += word;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* width 0: every column.  Otherwise the columns from the left that fit in
 * width characters (the first one always), and a line naming the others:
 * columns are left out from the right, the order in which commands list
 * their least needed figures. */
static void write_table_text(const output_table *t, FILE *f, unsigned terminal_width)
{
	size_t n = t->column_count;
	size_t *width = checked(calloc(n ? n : 1, sizeof *width));
	bool *grouped = checked(calloc(n ? n : 1, sizeof *grouped));
	for (size_t j = 0; j < n; j++)
		grouped[j] = column_has_long_counts(t, j);
	char buffer[CELL_TEXT_MAX];
	for (size_t j = 0; j < n; j++) {
		header_text(&t->columns[j], true, buffer, sizeof buffer);
		escape_terminal_in_place(buffer);
		width[j] = strlen(buffer);
	}
	for (size_t i = 0; i < t->row_count; i++)
		for (size_t j = 0; j < n; j++) {
			format_cell_for_people(&t->cells[i * n + j], &t->columns[j], grouped[j], buffer, sizeof buffer);
			escape_terminal_in_place(buffer);
			size_t w = strlen(buffer);
			if (w > width[j])
				width[j] = w;
		}
	size_t shown = n, used = 0;
	if (terminal_width)
		for (size_t j = 0; j < n; j++) {
			used += 2 + width[j];
			if (j > 0 && used > terminal_width) {
				shown = j;
				break;
			}
		}
	output_write_wrapped(f, "", t->title, terminal_width, 2);
	for (size_t j = 0; j < shown; j++) {
		header_text(&t->columns[j], true, buffer, sizeof buffer);
		escape_terminal_in_place(buffer);
		fprintf(f, "  %-*s", j + 1 < shown ? (int)width[j] : 0, buffer);
	}
	fputc('\n', f);
	for (size_t i = 0; i < t->row_count; i++) {
		size_t last = shown;   /* trailing empty cells print nothing, not padding */
		while (last > 0 && t->cells[i * n + last - 1].kind == CELL_EMPTY)
			last--;
		for (size_t j = 0; j < last; j++) {
			const cell *c = &t->cells[i * n + j];
			format_cell_for_people(c, &t->columns[j], grouped[j], buffer, sizeof buffer);
			escape_terminal_in_place(buffer);
			int right = c->kind == CELL_INTEGER || c->kind == CELL_REAL;
			if (j + 1 == last && !right)
				fprintf(f, "  %s", buffer);
			else
				fprintf(f, right ? "  %*s" : "  %-*s", (int)width[j], buffer);
		}
		fputc('\n', f);
	}
	if (shown < n) {
		char *names = NULL;
		size_t names_length = 0;
		FILE *list = open_memstream(&names, &names_length);
		if (list) {
			fprintf(list, "(%zu column%s left out to fit %u columns:", n - shown, n - shown == 1 ? "" : "s",
			        terminal_width);
			for (size_t j = shown; j < n; j++)
				fprintf(list, " %s", t->columns[j].name);   /* escaped by write_wrapped */
			fprintf(list, "; --wide shows every column)");
			fclose(list);
			output_write_wrapped(f, "  ", names, terminal_width, 3);
		}
		free(names);
	}
	/* The reasons behind status cells, each once, so a table stays narrow
	 * and still says why a value is missing. */
	for (size_t i = 0; i < t->row_count * n; i++) {
		const cell *c = &t->cells[i];
		if (c->kind != CELL_STATUS || !c->reason || !*c->reason || i % n >= shown)
			continue;
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++) {
			const cell *d = &t->cells[k];
			seen = d->kind == CELL_STATUS && !strcmp(d->text, c->text) && !strcmp(d->reason, c->reason);
		}
		if (!seen) {
			/* wrapped to the terminal like the notes (topo's "no PMU"
			 * reason ran to 110 columns) */
			char prefix[CELL_TEXT_MAX];
			snprintf(prefix, sizeof prefix, "  %s: ", c->text);
			output_write_wrapped(f, prefix, c->reason, terminal_width, 4);
		}
	}
	free(width);
	free(grouped);
}

static void write_text(const output_report *r, FILE *f, unsigned terminal_width)
{
	char buffer[CELL_TEXT_MAX], key[160];
	for (size_t i = 0; i < r->meta_count; i++) {
		format_meta(&r->metas[i].value, buffer, sizeof buffer);
		snprintf(key, sizeof key, "%s: ", r->metas[i].key);
		output_write_wrapped(f, key, buffer, terminal_width, 4);
	}
	for (size_t t = 0; t < r->table_count; t++) {
		if (t || r->meta_count)
			fputc('\n', f);
		write_table_text(r->tables[t], f, terminal_width);
	}
	if (r->note_count)
		fputc('\n', f);
	for (size_t i = 0; i < r->note_count; i++)
		output_write_wrapped(f, "note: ", r->notes[i], terminal_width, 6);
}

/* RFC 4180, and a cell a spreadsheet would compute shown as text (plumb/escape.h). */
static void write_csv_field(FILE *f, const char *s)
{
	escape_csv(f, s);
}

/* CSV a spreadsheet opens: one table per file, a header line (name[unit])
 * and the rows, no comment lines.  A cell that is not a value is left empty,
 * and its status word and reason go in two columns of their own at the end
 * ("status" and "reason", or "cell_status" and "cell_reason" when the table
 * already has columns of those names); a row with no such cell reads "ok"
 * there.  Reals are written with 15 significant digits.  The metadata and
 * the notes are tables of their own, "meta" (key, value) and "notes". */
static bool table_has_status_cells(const output_table *tb)
{
	for (size_t i = 0; i < tb->row_count * tb->column_count; i++)
		if (tb->cells[i].kind == CELL_STATUS)
			return true;
	return false;
}

/* Appends WORD to LIST ("a; b") unless it is there already. */
static void append_distinct(char *list, size_t length, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || (p >= list + 2 && p[-2] == ';')) && (p[n] == '\0' || p[n] == ';'))
			return;
	size_t used = strlen(list);
	snprintf(list + used, length - used, "%s%s", used ? "; " : "", word);
}

static void write_csv_table(const output_table *tb, FILE *f)
{
	char buffer[CELL_TEXT_MAX + 8];
	bool statuses = table_has_status_cells(tb);
	bool taken = output_column_index(tb, "status") >= 0 || output_column_index(tb, "reason") >= 0;
	for (size_t j = 0; j < tb->column_count; j++) {
		if (j)
			fputc(',', f);
		header_text(&tb->columns[j], false, buffer, sizeof buffer);
		write_csv_field(f, buffer);
	}
	if (statuses)
		fputs(taken ? ",cell_status,cell_reason" : ",status,reason", f);
	fputc('\n', f);
	for (size_t i = 0; i < tb->row_count; i++) {
		char words[CELL_TEXT_MAX] = "", reasons[4 * CELL_TEXT_MAX] = "";
		for (size_t j = 0; j < tb->column_count; j++) {
			const cell *c = &tb->cells[i * tb->column_count + j];
			if (j)
				fputc(',', f);
			if (c->kind == CELL_STATUS) {
				append_distinct(words, sizeof words, c->text);
				if (c->reason && c->reason[0])
					append_distinct(reasons, sizeof reasons, c->reason);
				continue;
			}
			if (c->kind == CELL_REAL) {
				if (isfinite(c->real))
					fprintf(f, "%.*g", 15, c->real);
				continue;
			}
			format_cell(c, 0, buffer, sizeof buffer);
			write_csv_field(f, buffer);
		}
		if (statuses) {
			fputc(',', f);
			write_csv_field(f, words[0] ? words : "ok");
			fputc(',', f);
			write_csv_field(f, reasons);
		}
		fputc('\n', f);
	}
}

static void write_csv_meta(const output_report *r, FILE *f)
{
	char buffer[CELL_TEXT_MAX + 8];
	fputs("key,value\n", f);
	for (size_t i = 0; i < r->meta_count; i++) {
		write_csv_field(f, r->metas[i].key);
		fputc(',', f);
		if (r->metas[i].value.kind == CELL_REAL)
			snprintf(buffer, sizeof buffer, "%.*g", 15, r->metas[i].value.real);
		else
			format_cell(&r->metas[i].value, 0, buffer, sizeof buffer);
		write_csv_field(f, buffer);
		fputc('\n', f);
	}
}

static void write_csv_notes(const output_report *r, FILE *f)
{
	fputs("note\n", f);
	for (size_t i = 0; i < r->note_count; i++) {
		write_csv_field(f, r->notes[i]);
		fputc('\n', f);
	}
}

/* The table NAME renders (NULL: the first table, else the metadata). */
static int write_csv_named(const output_report *r, const char *name, FILE *f, plumb_status *status)
{
	if (!name) {
		if (r->table_count)
			write_csv_table(r->tables[0], f);
		else
			write_csv_meta(r, f);
		return 0;
	}
	const output_table *tb = output_table_find(r, name);
	if (tb)
		write_csv_table(tb, f);
	else if (!strcmp(name, "meta"))
		write_csv_meta(r, f);
	else if (!strcmp(name, "notes"))
		write_csv_notes(r, f);
	else {
		char names[1024] = "";
		for (size_t t = 0; t < r->table_count; t++) {
			size_t used = strlen(names);
			snprintf(names + used, sizeof names - used, "%s, ", r->tables[t]->name);
		}
		return plumb_fail(status, ENOENT, "no table '%s' in this report (%smeta, notes)", name, names);
	}
	return 0;
}

static void write_csv(const output_report *r, FILE *f)
{
	plumb_status ignored;
	write_csv_named(r, NULL, f, &ignored);
}

int output_write_csv_stream(const output_report *r, const char *name, FILE *f, plumb_status *status)
{
	if (write_csv_named(r, name, f, status) != 0)
		return -1;
	if (fflush(f) != 0 || ferror(f))
		return plumb_fail_errno(status, errno ? errno : EIO, "cannot write output");
	return 0;
}

int output_write_csv_table(const output_report *r, const char *name, const char *path, plumb_status *status)
{
	if (name && !output_table_find(r, name) && strcmp(name, "meta") && strcmp(name, "notes"))
		return write_csv_named(r, name, NULL, status);
	if (!path || !strcmp(path, "-")) {
		write_csv_named(r, name, stdout, status);
		if (fflush(stdout) != 0 || ferror(stdout))
			return plumb_fail_errno(status, errno ? errno : EIO, "cannot write output");
		return 0;
	}
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	write_csv_named(r, name, file.stream, status);
	return output_file_commit(&file, status);
}

static json_object *cell_json(const cell *c)
{
	switch (c->kind) {
	case CELL_TEXT: return json_object_new_string(c->text);
	case CELL_INTEGER: return json_object_new_int64(c->integer);
	case CELL_REAL: return json_object_new_double(c->real);
	case CELL_STATUS: {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "status", json_object_new_string(c->text));
		json_object_object_add(o, "reason", json_object_new_string(c->reason));
		return o;
	}
	case CELL_EMPTY: break;
	}
	return NULL;
}

static json_object *report_json(const output_report *r)
{
	json_object *root = json_object_new_object();
	json_object_object_add(root, "schema", json_object_new_string("plumb-report"));
	json_object_object_add(root, "schema_version", json_object_new_int(OUTPUT_SCHEMA_VERSION));
	json_object_object_add(root, "plumb_version", json_object_new_string(PLUMB_VERSION));
	json_object_object_add(root, "command", json_object_new_string(r->command ? r->command : ""));
	json_object *metas = json_object_new_object();
	for (size_t i = 0; i < r->meta_count; i++)
		json_object_object_add(metas, r->metas[i].key, cell_json(&r->metas[i].value));
	json_object_object_add(root, "meta", metas);
	json_object *tables = json_object_new_array();
	for (size_t t = 0; t < r->table_count; t++) {
		const output_table *tb = r->tables[t];
		json_object *to = json_object_new_object();
		json_object_object_add(to, "name", json_object_new_string(tb->name));
		json_object_object_add(to, "title", json_object_new_string(tb->title));
		json_object *columns = json_object_new_array();
		for (size_t j = 0; j < tb->column_count; j++) {
			json_object *co = json_object_new_object();
			json_object_object_add(co, "name", json_object_new_string(tb->columns[j].name));
			json_object_object_add(co, "unit", tb->columns[j].unit ? json_object_new_string(tb->columns[j].unit) : NULL);
			json_object_array_add(columns, co);
		}
		json_object_object_add(to, "columns", columns);
		json_object *rows = json_object_new_array();
		for (size_t i = 0; i < tb->row_count; i++) {
			json_object *ro = json_object_new_object();
			for (size_t j = 0; j < tb->column_count; j++)
				json_object_object_add(ro, tb->columns[j].name, cell_json(&tb->cells[i * tb->column_count + j]));
			json_object_array_add(rows, ro);
		}
		json_object_object_add(to, "rows", rows);
		json_object_array_add(tables, to);
	}
	json_object_object_add(root, "tables", tables);
	json_object *notes = json_object_new_array();
	for (size_t i = 0; i < r->note_count; i++)
		json_object_array_add(notes, json_object_new_string(r->notes[i]));
	json_object_object_add(root, "notes", notes);
	return root;
}

int output_write(const output_report *r, output_format format, FILE *f, plumb_status *status)
{
	if (format == OUTPUT_JSON) {
		json_object *root = report_json(r);
		const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
		fputs(text, f);
		fputc('\n', f);
		json_object_put(root);
	} else if (format == OUTPUT_CSV) {
		write_csv(r, f);
	} else {
		write_text(r, f, 0);
	}
	if (fflush(f) != 0 || ferror(f))
		return plumb_fail_errno(status, errno ? errno : EIO, "cannot write output");
	return 0;
}

int output_write_fitted(const output_report *r, FILE *f, unsigned columns, plumb_status *status)
{
	write_text(r, f, columns);
	if (fflush(f) != 0 || ferror(f))
		return plumb_fail_errno(status, errno ? errno : EIO, "cannot write output");
	return 0;
}

/* PATH without ".csv", then "-NAME.csv". */
static void sibling_path(const char *path, const char *name, char *out, size_t length)
{
	size_t n = strlen(path);
	if (n > 4 && !strcmp(path + n - 4, ".csv"))
		n -= 4;
	snprintf(out, length, "%.*s-%s.csv", (int)n, path, name);
}

bool output_path_takes_siblings(const char *path)
{
	struct stat info;
	if (!path || !strcmp(path, "-"))
		return false;
	if (stat(path, &info) == 0)
		return S_ISREG(info.st_mode);
	return errno == ENOENT;
}

int output_write_csv_tables(const output_report *r, const char *path, plumb_status *status)
{
	/* Decided before the first table is written: a missing path becomes a
	 * regular file, a device stays a device. */
	bool siblings = output_path_takes_siblings(path);
	if (output_write_csv_table(r, NULL, path, status) != 0)
		return -1;
	for (size_t t = 1; siblings && t < r->table_count; t++) {
		char sibling[4096];
		sibling_path(path, r->tables[t]->name, sibling, sizeof sibling);
		if (output_write_csv_table(r, r->tables[t]->name, sibling, status) != 0)
			return -1;
	}
	return 0;
}

/* ---- files ----
 *
 * A regular file (or a path that does not exist yet) is replaced atomically:
 * a temporary TARGET.tmp.RANDOM is created beside it with O_EXCL (never an
 * existing file, FIFO, device or link someone planted: the name is
 * unpredictable and O_EXCL|O_NOFOLLOW refuses anything already there), with
 * mode 0666 less the umask, written, flushed, synced and renamed over the
 * target, so a reader never sees half a file and a failed or interrupted run
 * leaves the old one.  A symlink is followed and its target replaced (the
 * link stays a link), but only where the kernel itself would follow it: the
 * link is opened through the kernel first, so its rules (protected_symlinks
 * in a sticky world-writable folder such as /tmp, ELOOP) decide, and the
 * file reached must be the one the walk below found.  Anything else (a
 * character device such as /dev/null, a FIFO, a socket) is opened as it is
 * and written straight into: renaming a file over /dev/null would replace
 * the device for everyone.  Every write goes through one sink that keeps the
 * first error, so "No space left on device" is reported as such and nothing
 * incomplete is renamed into place. */

typedef struct file_sink {
	int fd;
	int error;        /* the first write error, 0 if none */
} file_sink;

static ssize_t sink_write(void *cookie, const char *buffer, size_t size)
{
	file_sink *sink = cookie;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(sink->fd, buffer + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!sink->error)
				sink->error = n < 0 ? errno : EIO;
			errno = sink->error;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int sink_close(void *cookie)
{
	file_sink *sink = cookie;
	int rc = close(sink->fd);
	if (rc != 0 && !sink->error)
		sink->error = errno;
	free(sink);
	return rc;
}

/* A link in /proc (/proc/self/fd/1, reached from /dev/stdout or /dev/fd/1)
 * names an open descriptor: its "target" (pipe:[123], or a file the shell
 * opened) is not a place to put a temporary beside. */
static bool in_proc(const char *link)
{
	char folder[PATH_MAX], resolved[PATH_MAX];
	const char *slash = strrchr(link, '/');
	if (!slash)
		return false;
	snprintf(folder, sizeof folder, "%.*s", slash == link ? 1 : (int)(slash - link), link);
	return realpath(folder, resolved) && strncmp(resolved, "/proc/", 6) == 0;
}

/* The file a chain of symlinks at path ends at (path itself if it is not a
 * link; a dangling link's missing target).  Relative links resolve against
 * the directory of the link.  *descriptor is set when the chain reaches a
 * descriptor link in /proc, which is then returned as it is. */
static char *follow_symlinks(const char *path, bool *descriptor)
{
	*descriptor = false;
	char *current = checked(strdup(path));
	for (int depth = 0; depth < 40; depth++) {
		struct stat info;
		if (lstat(current, &info) != 0 || !S_ISLNK(info.st_mode))
			return current;
		if (in_proc(current)) {
			*descriptor = true;
			return current;
		}
		char link[PATH_MAX];
		ssize_t n = readlink(current, link, sizeof link - 1);
		if (n < 0)
			return current;
		link[n] = 0;
		char *next;
		const char *slash = strrchr(current, '/');
		if (link[0] == '/' || !slash)
			next = checked(strdup(link));
		else if (asprintf(&next, "%.*s/%s", (int)(slash - current), current, link) < 0)
			next = checked(NULL);
		free(current);
		current = next;
	}
	return current;   /* a loop: open reports ELOOP */
}

static void file_clear(output_file *file)
{
	free(file->temporary);
	free(file->path);
	free(file->target);
	memset(file, 0, sizeof *file);
}

/* The kernel's view of a symlink at path: 0 when it may be followed and
 * leads to the file the walk in user space found (or, dangling, to nothing
 * yet); -1 with errno otherwise: EACCES where the kernel refuses to follow
 * it (protected_symlinks), ELOOP, or EAGAIN when the two walks disagree (the
 * link changed in between). */
static int kernel_follows(const char *path, const char *target)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat reached, found;
	int rc = fstat(fd, &reached);
	int e = errno;
	close(fd);
	if (rc != 0) {
		errno = e;
		return -1;
	}
	if (lstat(target, &found) != 0 || found.st_dev != reached.st_dev || found.st_ino != reached.st_ino) {
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

/* TARGET.tmp. and 12 random characters, created with O_EXCL: a name no one
 * can plant anything at in advance, and never anything already there. */
static int create_temporary(output_file *file)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char bytes[12];
		if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes)
			return -1;
		char suffix[sizeof bytes + 1];
		for (size_t i = 0; i < sizeof bytes; i++)
			suffix[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
		suffix[sizeof bytes] = 0;
		free(file->temporary);
		if (asprintf(&file->temporary, "%s.tmp.%s", file->target, suffix) < 0)
			file->temporary = checked(NULL);
		/* Registered before it exists, so a signal can never leave it behind. */
		interrupt_add_path(file->temporary, false);
		int fd = open(file->temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
		interrupt_remove_path(file->temporary);
	}
	errno = EEXIST;
	return -1;
}

int output_file_open(output_file *file, const char *path, plumb_status *status)
{
	memset(file, 0, sizeof *file);
	file->path = checked(strdup(path));
	bool descriptor;
	file->target = follow_symlinks(path, &descriptor);
	struct stat info, link_info;
	bool exists = stat(file->target, &info) == 0;
	int fd;
	if (exists && S_ISDIR(info.st_mode)) {
		file_clear(file);
		return plumb_fail_errno(status, EISDIR, "cannot write '%s'", path);
	}
	if (exists && descriptor) {
		/* /dev/stdout and the like: whatever the descriptor is (a pipe, a
		 * terminal, a file the shell opened with > or >>), written in place
		 * after what it already holds. */
		fd = open(file->target, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
	} else if (exists && !S_ISREG(info.st_mode)) {
		/* A device, FIFO or socket: written in place, never created or
		 * truncated, and opened through path so the kernel follows any link. */
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	} else if (lstat(path, &link_info) == 0 && S_ISLNK(link_info.st_mode) && kernel_follows(path, file->target) != 0) {
		fd = -1;
		if (errno == EAGAIN) {
			file_clear(file);
			return plumb_fail(status, EAGAIN, "cannot create '%s': the symbolic link changed while it was opened", path);
		}
	} else {
		fd = create_temporary(file);
		/* The replacement keeps the permissions of the file it replaces. */
		if (fd >= 0 && exists)
			fchmod(fd, info.st_mode & 07777);
	}
	if (fd < 0) {
		int e = errno;
		interrupt_remove_path(file->temporary);
		file_clear(file);
		return plumb_fail_errno(status, e, "cannot create '%s'", path);
	}
	file_sink *sink = checked(calloc(1, sizeof *sink));
	sink->fd = fd;
	cookie_io_functions_t functions = { .write = sink_write, .close = sink_close };
	file->stream = fopencookie(sink, "w", functions);
	if (!file->stream) {
		close(fd);
		free(sink);
		if (file->temporary)
			unlink(file->temporary);
		interrupt_remove_path(file->temporary);
		file_clear(file);
		return plumb_fail(status, ENOMEM, "out of memory opening '%s'", path);
	}
	setvbuf(file->stream, NULL, _IOFBF, 1 << 16);
	file->sink = sink;
	return 0;
}

int output_file_commit(output_file *file, plumb_status *status)
{
	file_sink *sink = file->sink;
	int error = 0;
	if (fflush(file->stream) != 0 || ferror(file->stream))
		error = sink->error ? sink->error : errno ? errno : EIO;
	/* fsync before rename: a crash must leave either the old file or the whole new one. */
	if (!error && file->temporary && fsync(sink->fd) != 0)
		error = errno;
	sink->error = 0;
	int close_error = 0;
	if (fclose(file->stream) != 0)   /* frees the sink */
		close_error = errno ? errno : EIO;
	if (!error)
		error = close_error;
	int rc = 0;
	if (error)
		rc = plumb_fail_errno(status, error, "cannot write '%s'", file->path);
	else if (file->temporary && rename(file->temporary, file->target) != 0)
		rc = plumb_fail_errno(status, errno, "cannot replace '%s'", file->path);
	if (rc && file->temporary)
		unlink(file->temporary);
	interrupt_remove_path(file->temporary);
	file_clear(file);
	return rc;
}

int output_file_descriptor(const output_file *file)
{
	return file->sink ? ((const file_sink *)file->sink)->fd : -1;
}

void output_file_abort(output_file *file)
{
	if (file->stream) {
		fclose(file->stream);
		if (file->temporary)
			unlink(file->temporary);
	}
	interrupt_remove_path(file->temporary);
	file_clear(file);
}

int output_write_file(const output_report *r, output_format format, const char *path, plumb_status *status)
{
	if (!path || !strcmp(path, "-"))
		return output_write(r, format, stdout, status);
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	if (output_write(r, format, file.stream, status) != 0 && !ferror(file.stream)) {
		output_file_abort(&file);
		return -1;
	}
	/* A write error is reported by commit, with the file's name, and the
	 * incomplete file is removed. */
	return output_file_commit(&file, status);
}

/* ---- reading back ---- */

size_t output_table_count(const output_report *r) { return r->table_count; }
const output_table *output_table_at(const output_report *r, size_t i) { return i < r->table_count ? r->tables[i] : NULL; }
const char *output_table_name(const output_table *t) { return t->name; }
const char *output_table_title(const output_table *t) { return t->title; }
size_t output_column_count(const output_table *t) { return t->column_count; }
const char *output_column_name(const output_table *t, size_t j) { return j < t->column_count ? t->columns[j].name : NULL; }
const char *output_column_unit(const output_table *t, size_t j) { return j < t->column_count ? t->columns[j].unit : NULL; }
size_t output_row_count(const output_table *t) { return t->row_count; }
size_t output_meta_count(const output_report *r) { return r->meta_count; }
const char *output_meta_key(const output_report *r, size_t i) { return i < r->meta_count ? r->metas[i].key : NULL; }
size_t output_note_count(const output_report *r) { return r->note_count; }
const char *output_note_at(const output_report *r, size_t i) { return i < r->note_count ? r->notes[i] : NULL; }

const output_table *output_table_find(const output_report *r, const char *name)
{
	for (size_t i = 0; i < r->table_count; i++)
		if (!strcmp(r->tables[i]->name, name))
			return r->tables[i];
	return NULL;
}

int output_column_index(const output_table *t, const char *name)
{
	for (size_t j = 0; j < t->column_count; j++)
		if (!strcmp(t->columns[j].name, name))
			return (int)j;
	return -1;
}

static const cell *cell_at(const output_table *t, size_t row, size_t column)
{
	if (row >= t->row_count || column >= t->column_count)
		return NULL;
	return &t->cells[row * t->column_count + column];
}

cell_kind output_cell_kind(const output_table *t, size_t row, size_t column)
{
	const cell *c = cell_at(t, row, column);
	return c ? c->kind : CELL_EMPTY;
}

double output_cell_number(const output_table *t, size_t row, size_t column)
{
	const cell *c = cell_at(t, row, column);
	if (c && c->kind == CELL_INTEGER)
		return (double)c->integer;
	if (c && c->kind == CELL_REAL)
		return c->real;
	return NAN;
}

const char *output_cell_string(const output_table *t, size_t row, size_t column)
{
	const cell *c = cell_at(t, row, column);
	return c && (c->kind == CELL_TEXT || c->kind == CELL_STATUS) ? c->text : NULL;
}

const char *output_cell_reason(const output_table *t, size_t row, size_t column)
{
	const cell *c = cell_at(t, row, column);
	return c && c->kind == CELL_STATUS ? c->reason : NULL;
}

long output_row_where(const output_table *t, const char *column, const char *value)
{
	int k = t ? output_column_index(t, column) : -1;
	for (size_t r = 0; k >= 0 && r < t->row_count; r++) {
		const char *s = output_cell_string(t, r, (size_t)k);
		if (s && !strcmp(s, value))
			return (long)r;
	}
	return -1;
}

double output_number_at(const output_table *t, long row, const char *column)
{
	int c = t && row >= 0 ? output_column_index(t, column) : -1;
	return c < 0 ? NAN : output_cell_number(t, (size_t)row, (size_t)c);
}

const char *output_text_at(const output_table *t, long row, const char *column)
{
	int c = t && row >= 0 ? output_column_index(t, column) : -1;
	return c < 0 ? NULL : output_cell_string(t, (size_t)row, (size_t)c);
}

void output_cell_format(const output_table *t, size_t row, size_t column, char *buffer, size_t length)
{
	const cell *c = cell_at(t, row, column);
	if (!c) {
		buffer[0] = 0;
		return;
	}
	format_cell(c, t->columns[column].decimals, buffer, length);
}

void output_meta_format(const output_report *r, size_t i, char *buffer, size_t length)
{
	if (i >= r->meta_count) {
		buffer[0] = 0;
		return;
	}
	format_meta(&r->metas[i].value, buffer, length);
}

double output_meta_number_of(const output_report *r, const char *key)
{
	char buffer[256];
	for (size_t i = 0; r && i < output_meta_count(r); i++)
		if (!strcmp(output_meta_key(r, i), key)) {
			output_meta_format(r, i, buffer, sizeof buffer);
			char *end;
			double v = strtod(buffer, &end);
			return end != buffer ? v : NAN;
		}
	return NAN;
}

void output_meta_text_of(const output_report *r, const char *key, char *out, size_t length)
{
	out[0] = 0;
	for (size_t i = 0; r && i < output_meta_count(r); i++)
		if (!strcmp(output_meta_key(r, i), key))
			output_meta_format(r, i, out, length);
}

/* JSON reals lose their print precision; 3 decimals is the table default. */
#define PARSED_DECIMALS 3

static int parse_cell(json_object *v, cell *c)
{
	memset(c, 0, sizeof *c);
	if (!v) {
		c->kind = CELL_EMPTY;
		return 0;
	}
	switch (json_object_get_type(v)) {
	case json_type_string:
		c->kind = CELL_TEXT;
		c->text = copy_text(json_object_get_string(v));
		return 0;
	case json_type_int:
		c->kind = CELL_INTEGER;
		c->integer = json_object_get_int64(v);
		return 0;
	case json_type_double:
		c->kind = CELL_REAL;
		c->real = json_object_get_double(v);
		return 0;
	case json_type_boolean:
		c->kind = CELL_TEXT;
		c->text = copy_text(json_object_get_boolean(v) ? "true" : "false");
		return 0;
	case json_type_object: {
		json_object *s, *reason;
		if (!json_object_object_get_ex(v, "status", &s) || !json_object_is_type(s, json_type_string))
			return -1;
		c->kind = CELL_STATUS;
		c->text = copy_text(json_object_get_string(s));
		c->reason = copy_text(json_object_object_get_ex(v, "reason", &reason) ? json_object_get_string(reason) : "");
		return 0;
	}
	default:
		return -1;
	}
}

static const char *json_text(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int output_report_parse_json(const char *text, output_report **out, plumb_status *status)
{
	*out = NULL;
	enum json_tokener_error error;
	json_object *root = json_tokener_parse_verbose(text, &error);
	if (!root)
		return plumb_fail(status, EINVAL, "not JSON: %s", json_tokener_error_desc(error));
	output_report *r = NULL;
	json_object *v, *tables;
	const char *schema = json_text(root, "schema"), *command = json_text(root, "command");
	if (!schema || strcmp(schema, "plumb-report") != 0 || !command) {
		plumb_fail(status, EINVAL, "not a plumb report (no \"schema\": \"plumb-report\")");
		goto fail;
	}
	if (!json_object_object_get_ex(root, "schema_version", &v) || json_object_get_int(v) != OUTPUT_SCHEMA_VERSION) {
		plumb_fail(status, EINVAL, "plumb report schema version %d is not supported (this plumb reads %d)",
		           v ? json_object_get_int(v) : -1, OUTPUT_SCHEMA_VERSION);
		goto fail;
	}
	r = output_report_new(command);
	if (json_object_object_get_ex(root, "meta", &v) && json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, value) {
			cell c;
			if (parse_cell(value, &c) != 0 || c.kind == CELL_STATUS) {
				cell_free(&c);
				plumb_fail(status, EINVAL, "meta '%s' has an unexpected type", key);
				goto fail;
			}
			*meta_slot(r, key) = c;
		}
	}
	if (!json_object_object_get_ex(root, "tables", &tables) || !json_object_is_type(tables, json_type_array)) {
		plumb_fail(status, EINVAL, "report has no \"tables\" array");
		goto fail;
	}
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		json_object *to = json_object_array_get_idx(tables, i), *columns, *rows;
		const char *name = json_text(to, "name");
		if (!name || !json_object_object_get_ex(to, "columns", &columns) || !json_object_is_type(columns, json_type_array)
		    || !json_object_object_get_ex(to, "rows", &rows) || !json_object_is_type(rows, json_type_array)) {
			plumb_fail(status, EINVAL, "table %zu lacks a name, columns or rows", i);
			goto fail;
		}
		output_table *t = output_table_add(r, name, json_text(to, "title"));
		for (size_t j = 0; j < json_object_array_length(columns); j++) {
			json_object *co = json_object_array_get_idx(columns, j);
			const char *cname = json_text(co, "name");
			if (!cname) {
				plumb_fail(status, EINVAL, "table '%s' column %zu has no name", name, j);
				goto fail;
			}
			output_column(t, cname, json_text(co, "unit"), PARSED_DECIMALS);
		}
		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			json_object *ro = json_object_array_get_idx(rows, k);
			if (!json_object_is_type(ro, json_type_object)) {
				plumb_fail(status, EINVAL, "table '%s' row %zu is not an object", name, k);
				goto fail;
			}
			output_row(t);
			for (size_t j = 0; j < t->column_count; j++) {
				json_object *cv = NULL;
				json_object_object_get_ex(ro, t->columns[j].name, &cv);
				cell *c = next_cell(t);
				if (parse_cell(cv, c) != 0) {
					plumb_fail(status, EINVAL, "table '%s' row %zu column '%s' has an unexpected type", name, k, t->columns[j].name);
					goto fail;
				}
			}
		}
	}
	if (json_object_object_get_ex(root, "notes", &v) && json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *n = json_object_array_get_idx(v, i);
			if (json_object_is_type(n, json_type_string))
				output_note(r, "%s", json_object_get_string(n));
		}
	json_object_put(root);
	*out = r;
	return 0;
fail:
	output_report_free(r);
	json_object_put(root);
	return -1;
}
