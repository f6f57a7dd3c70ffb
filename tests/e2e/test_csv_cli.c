/* CSV a spreadsheet opens, from every command: one table per file, no
 * comment lines, every record as wide as the header, numbers alone in a
 * numeric column and the status in a column of its own.  Each command writes
 * -o DIR/NAME.csv (its first table) and DIR/NAME-TABLE.csv (each other), and
 * every file is parsed strictly (RFC 4180). */
#include <criterion/criterion.h>
#include <errno.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

#define MAX_FIELDS 128

typedef struct csv_record {
	int count;
	char *field[MAX_FIELDS];
} csv_record;

/* Reads one record at *P (quoted fields may hold commas, quotes and line
 * breaks); false at the end.  Fails the test on a malformed field. */
static bool next_record(const char **p, csv_record *record, const char *file)
{
	if (**p == '\0')
		return false;
	record->count = 0;
	for (;;) {
		char *value = malloc(strlen(*p) + 1);
		size_t used = 0;
		if (**p == '"') {
			(*p)++;
			for (;;) {
				cr_assert(**p != '\0', "%s: a quoted field is not closed", file);
				if (**p == '"' && (*p)[1] == '"') {
					value[used++] = '"';
					*p += 2;
				} else if (**p == '"') {
					(*p)++;
					break;
				} else {
					value[used++] = *(*p)++;
				}
			}
			cr_assert(**p == ',' || **p == '\n', "%s: text after a closing quote: %.20s", file, *p);
		} else {
			while (**p != ',' && **p != '\n' && **p != '\0') {
				cr_assert(**p != '"', "%s: a quote inside an unquoted field", file);
				value[used++] = *(*p)++;
			}
		}
		value[used] = '\0';
		cr_assert_lt(record->count, MAX_FIELDS);
		record->field[record->count++] = value;
		if (**p == ',') {
			(*p)++;
			continue;
		}
		cr_assert(**p == '\n', "%s: the last record has no line end", file);
		(*p)++;
		return true;
	}
}

static void record_free(csv_record *record)
{
	for (int i = 0; i < record->count; i++)
		free(record->field[i]);
	record->count = 0;
}

static bool is_number(const char *text)
{
	if (!*text)
		return false;
	char *end;
	strtod(text, &end);
	return *end == '\0' && strcmp(text, "nan") && strcmp(text, "inf") && strcmp(text, "-nan");
}

static bool is_cpu_list(const char *text)
{
	size_t digits = strspn(text, "0123456789,-");
	return digits > 0 && text[digits] == '\0' && text[0] != '-';
}

/* Checks TEXT as one spreadsheet table; returns its row count. */
static int check_csv_text(const char *text, const char *file)
{
	cr_assert(text[0] != '\0', "%s is empty", file);
	const char *p = text;
	csv_record header, row;
	cr_assert(next_record(&p, &header, file));
	cr_assert(header.field[0][0] != '#', "%s: a comment line: %s", file, header.field[0]);
	for (int i = 0; i < header.count; i++) {
		cr_assert(header.field[i][0] != '\0', "%s: column %d has no name", file, i + 1);
		for (int j = 0; j < i; j++)
			cr_assert(strcmp(header.field[i], header.field[j]), "%s: two columns named %s", file, header.field[i]);
	}
	int numbers[MAX_FIELDS] = { 0 }, words[MAX_FIELDS] = { 0 }, cpu_lists[MAX_FIELDS] = { 0 };
	char *word_seen[MAX_FIELDS] = { 0 };
	int rows = 0;
	while (next_record(&p, &row, file)) {
		rows++;
		cr_assert(row.field[0][0] != '#' || row.count > 1, "%s: a comment line inside the data", file);
		cr_assert_eq(row.count, header.count, "%s: row %d has %d fields, the header %d", file, rows, row.count,
		             header.count);
		for (int i = 0; i < row.count; i++) {
			if (is_number(row.field[i]))
				numbers[i]++;
			else if (row.field[i][0]) {
				words[i]++;
				cpu_lists[i] += is_cpu_list(row.field[i]);
				if (!word_seen[i])
					word_seen[i] = strdup(row.field[i]);
			}
		}
		record_free(&row);
	}
	/* Text columns by nature: the value of a property table, and CPU lists
	 * ("0-1", "0,2"; "0" alone is a list of one). */
	bool properties = header.count >= 2 && (!strcmp(header.field[0], "property") || !strcmp(header.field[0], "key")) &&
	                  !strcmp(header.field[1], "value");
	for (int i = 0; i < header.count; i++) {
		bool text_column = (properties && i == 1) || cpu_lists[i] == words[i];
		cr_expect(text_column || !(numbers[i] && words[i]), "%s: column %s mixes numbers with text such as \"%s\"",
		          file, header.field[i], word_seen[i] ? word_seen[i] : "");
		free(word_seen[i]);
	}
	record_free(&header);
	return rows;
}

/* Runs plumb with -o DIR/NAME.csv and checks every file it wrote. */
static void check_command(const char *name, const char *const args[])
{
	char path[4096];
	snprintf(path, sizeof path, "%s", cli_temp_path(name));
	const char *dir_end = strrchr(path, '/');
	char dir[4096 + 8];
	snprintf(dir, sizeof dir, "%.*s", (int)(dir_end - path), path);
	char output[4096 + 8];
	snprintf(output, sizeof output, "%s.csv", path);
	const char *argv[40];
	int n = 0;
	argv[n++] = args[0];
	argv[n++] = "--csv";
	argv[n++] = "-o";
	argv[n++] = output;
	for (int i = 1; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cli_run r = cli_run_plumb(NULL, argv);
	cr_assert(r.exit_code == 0 || r.exit_code == 3, "plumb %s: exit %d: %s", name, r.exit_code, r.err);
	cli_run_free(&r);
	char *text = cli_read_file(output, NULL);
	cr_assert_not_null(text, "cannot read %s: %s", output, strerror(errno));
	check_csv_text(text, output);
	free(text);
	/* the other tables, beside it */
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	char prefix[256];
	snprintf(prefix, sizeof prefix, "%s-", strrchr(path, '/') + 1);
	int files = 1;
	for (struct dirent *e; (e = readdir(d));) {
		size_t length = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, strlen(prefix)) || length < 4 || strcmp(e->d_name + length - 4, ".csv"))
			continue;
		char other[4096 + 256];
		snprintf(other, sizeof other, "%s/%s", dir, e->d_name);
		text = cli_read_file(other, NULL);
		cr_assert_not_null(text, "cannot read %s: %s", other, strerror(errno));
		check_csv_text(text, other);
		free(text);
		files++;
	}
	closedir(d);
	cr_log_info("plumb %s: %d CSV files", name, files);
}

Test(csv_cli, topo_events_model_stat)
{
	check_command("topo", (const char *const[]){ "topo", NULL });
	check_command("events", (const char *const[]){ "events", "--no-probe", NULL });
	check_command("model", (const char *const[]){ "model", "--service", "195", "--l0", "338", "--at", "41,121",
	                                             "--processors", "4", NULL });
	check_command("stat", (const char *const[]){ "stat", "--per-run", "-r", "2", "-e", "page-faults,cycles",
	                                            "--", "true", NULL });
}

Test(csv_cli, lat_bw_c2c, .timeout = 120)
{
	check_command("lat", (const char *const[]){ "lat", "--min-size", "4K", "--max-size", "64K",
	                                           "--points-per-octave", "1", "--time-cap", "5", "--single-pass",
	                                           "--restart", NULL });
	check_command("bw", (const char *const[]){ "bw", "-k", "read", "-s", "16K", "-t", "1", "--time-cap", "10",
	                                          "-i", "scalar", NULL });
	check_command("c2c", (const char *const[]){ "c2c", "--lines", "128", "--samples", "2", "--round-trips", "100",
	                                           "--duration", "5", NULL });
}

Test(csv_cli, validate_sim)
{
	check_command("validate", (const char *const[]){ "validate", "itv", "--backend", "sim", "--sizes", "10,100",
	                                                "--cases", NULL });
}

/* On stdout: the first table, and one line on stderr naming the others;
 * --table NAME picks one (meta and notes too); an unknown one is a usage error. */
Test(csv_cli, one_table_on_stdout_and_table_picks_it)
{
	cli_run r = cli_run_plumbv(NULL, "model", "--service", "195", "--l0", "338", "--at", "41", "--csv", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	check_csv_text(r.out, "model --csv");
	cr_assert(strstr(r.err, "plumb model: the CSV is the table '"), "%s", r.err);
	cr_assert_null(strchr(strchr(r.err, '\n') + 1, '\n'), "one line: %s", r.err);
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "model", "--service", "195", "--l0", "338", "--at", "41", "--table", "meta", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strncmp(r.out, "key,value\n", 10) == 0, "%s", r.out);
	cr_assert_str_eq(r.err, "");
	cli_run_free(&r);
	r = cli_run_plumbv(NULL, "model", "--service", "195", "--l0", "338", "--table", "nosuch", NULL);
	cli_assert_usage_error(&r, "model");
	cr_assert(strstr(r.err, "--table: no table 'nosuch' in this report ("), "%s", r.err);
	cli_run_free(&r);
}

/* A cell that is not a value: empty in its column, its status and reason in
 * columns of their own. */
Test(csv_cli, status_has_its_own_column)
{
	cli_run r = cli_run_plumbv(NULL, "stat", "-o", "-", "--csv", "-e", "page-faults,no-such-event", "--", "true", NULL);
	cr_assert_eq(r.exit_code, 3, "%s", r.err);
	check_csv_text(r.out, "stat --csv");
	const char *header_end = strchr(r.out, '\n');
	cr_assert(header_end && strstr(r.out, ",cell_status,cell_reason\n") == header_end - strlen(",cell_status,cell_reason"),
	          "%s", r.out);
	const char *row = strstr(r.out, "\nno-such-event,");
	cr_assert_not_null(row, "%s", r.out);
	cr_assert(strncmp(row, "\nno-such-event,,,,,,,", 21) == 0, "no empty cells: %.80s", row);
	cr_assert(strstr(row, ",unsupported,") && strstr(row, "unknown event 'no-such-event'"), "%.200s", row);
	cli_run_free(&r);
}
