/* Reads (bandwidth, latency) measurements for the model: the JSON that
 * `plumb loaded --json` writes, or any CSV (comma, semicolon, tab or space
 * separated; optional header; '#' comments).  Every rejection names the
 * file, the line and what was wrong, because a model fitted to a silently
 * misread column is worse than no model. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <json-c/json.h>
#include "model/model.h"
#include "core/read_file.h"

#define INPUT_MAX_BYTES READ_FILE_MAX_BYTES
#define INPUT_MAX_FIELDS 64
#define INPUT_MAX_LINE 4096

static int append_point(model_input *in, size_t *capacity, double c, double l, plumb_status *status)
{
	if (in->count == *capacity) {
		size_t grown = *capacity ? *capacity * 2 : 64;
		model_point *points = realloc(in->points, grown * sizeof *points);
		if (!points)
			return plumb_fail(status, ENOMEM, "model input: out of memory");
		in->points = points;
		*capacity = grown;
	}
	in->points[in->count++] = (model_point){ c, l };
	return 0;
}

static bool contains_word(const char *haystack, const char *needle)
{
	return strcasestr(haystack, needle) != NULL;
}

/* Column roles chosen from header names.  Generator bandwidth is the
 * model's contention; a "total" column includes the measuring thread's own
 * traffic, so it is only a fallback. */
static int bandwidth_rank(const char *name)
{
	bool bandwidth = contains_word(name, "bandwidth") || contains_word(name, "contention")
	                 || contains_word(name, "mb/s") || contains_word(name, "gb/s") || contains_word(name, "mbps")
	                 || contains_word(name, "gbps") || contains_word(name, "mb_s") || contains_word(name, "gb_s");
	if (!bandwidth)
		return 0;
	if (contains_word(name, "latency_thread") || contains_word(name, "own"))
		return 0;   /* the measuring thread's own traffic is not contention */
	if (contains_word(name, "generator") || contains_word(name, "contention"))
		return 3;
	if (contains_word(name, "total"))
		return 1;
	return 2;
}

static bool is_latency_name(const char *name)
{
	return contains_word(name, "latency") && !contains_word(name, "bandwidth")
	       && !contains_word(name, "min") && !contains_word(name, "max");
}

static double bandwidth_scale(const char *name)
{
	return contains_word(name, "gb/s") || contains_word(name, "gbps") || contains_word(name, "gb_s") ? 1e3 : 1.0;
}

static bool is_status_word(const char *text)
{
	/* "nan" is not among them: plumb writes an unmeasured cell as a status
	 * word (n/a, unsupported, ...), so a NaN is a broken number, rejected with
	 * its line like inf, not a row to drop in silence. */
	static const char *const words[] = { "n/a", "na", "skipped", "unsupported", "noisy",
	                                     "not-counted", "" };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (!strcasecmp(text, words[i]))
			return true;
	return false;
}

/* Parses a whole field as a finite number; 1 = number, 0 = not. */
static int parse_number(const char *text, double *out)
{
	if (!*text)
		return 0;
	char *end;
	errno = 0;
	double value = strtod(text, &end);
	if (end == text || *end || errno == ERANGE || !isfinite(value))
		return 0;
	*out = value;
	return 1;
}

/* Whether a field is written as a number (even one out of range), so an
 * overflowing value is reported as such rather than taken for a header. */
static bool looks_numeric(const char *text)
{
	char *end;
	strtod(text, &end);
	return *text && end != text && !*end;
}

/* Splits line in place into fields; strips quotes and spaces. */
static int split_fields(char *line, char **fields, int max)
{
	bool has_strong = strpbrk(line, ",;\t") != NULL;
	int count = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || (!has_strong && *p == '\t'))
			p++;
		if (!*p && (!has_strong || count == 0))
			break;
		if (count == max)
			return -1;
		char *start = p;
		if (*p == '"') {
			start = ++p;
			while (*p && *p != '"')
				p++;
			if (*p == '"')
				*p++ = 0;
		}
		while (*p && !(has_strong ? (*p == ',' || *p == ';' || *p == '\t') : *p == ' '))
			p++;
		char separator = *p;
		if (*p)
			*p++ = 0;
		char *end = start + strlen(start);
		while (end > start && isspace((unsigned char)end[-1]))
			*--end = 0;
		fields[count++] = start;
		if (!separator)
			break;
	}
	return count;
}

static int parse_csv(const char *text, size_t length, const char *name, model_input *out,
                     plumb_status *status)
{
	size_t capacity = 0;
	int bandwidth_column = -1, latency_column = -1;
	double scale = 1.0;
	bool seen_first = false;
	size_t line_number = 0, skipped = 0;
	char line[INPUT_MAX_LINE + 1];
	for (size_t pos = 0; pos < length;) {
		size_t end = pos;
		while (end < length && text[end] != '\n')
			end++;
		line_number++;
		size_t n = end - pos;
		if (n > INPUT_MAX_LINE)
			return plumb_fail(status, EINVAL, "%s:%zu: line longer than %d bytes", name, line_number,
			                  INPUT_MAX_LINE);
		memcpy(line, text + pos, n);
		line[n] = 0;
		pos = end + 1;
		if (n && line[n - 1] == '\r')
			line[--n] = 0;
		char *start = line;
		while (isspace((unsigned char)*start))
			start++;
		if (!*start || *start == '#')
			continue;
		char *fields[INPUT_MAX_FIELDS];
		int count = split_fields(start, fields, INPUT_MAX_FIELDS);
		if (count < 0)
			return plumb_fail(status, EINVAL, "%s:%zu: more than %d fields", name, line_number,
			                  INPUT_MAX_FIELDS);
		if (!seen_first) {
			seen_first = true;
			bool header = false;
			for (int i = 0; i < count; i++)
				if (!looks_numeric(fields[i]) && !is_status_word(fields[i]))
					header = true;
			if (header) {
				int best_rank = 0;
				for (int i = 0; i < count; i++) {
					int rank = bandwidth_rank(fields[i]);
					if (rank > best_rank) {
						best_rank = rank;
						bandwidth_column = i;
						scale = bandwidth_scale(fields[i]);
					}
					if (latency_column < 0 && is_latency_name(fields[i]))
						latency_column = i;
				}
				if ((bandwidth_column < 0 || latency_column < 0) && count == 2) {
					bandwidth_column = 0;
					latency_column = 1;
				}
				if (bandwidth_column < 0 || latency_column < 0)
					return plumb_fail(status, EINVAL,
					                  "%s:%zu: cannot tell which columns hold bandwidth and latency; "
					                  "name them 'bandwidth' and 'latency' or give exactly two columns",
					                  name, line_number);
				continue;
			}
			if (count < 2)
				return plumb_fail(status, EINVAL, "%s:%zu: expected two columns (bandwidth, latency), got %d",
				                  name, line_number, count);
			bandwidth_column = 0;
			latency_column = 1;
		}
		int needed = bandwidth_column > latency_column ? bandwidth_column : latency_column;
		if (count <= needed)
			return plumb_fail(status, EINVAL, "%s:%zu: expected at least %d fields, got %d", name,
			                  line_number, needed + 1, count);
		const char *bandwidth_text = fields[bandwidth_column], *latency_text = fields[latency_column];
		if (is_status_word(bandwidth_text) || is_status_word(latency_text)) {
			skipped++;   /* a cell plumb could not measure; not a point */
			continue;
		}
		double c, l;
		if (!parse_number(bandwidth_text, &c))
			return plumb_fail(status, EINVAL, "%s:%zu: bandwidth '%.40s' is not a number", name,
			                  line_number, bandwidth_text);
		if (!parse_number(latency_text, &l))
			return plumb_fail(status, EINVAL, "%s:%zu: latency '%.40s' is not a number", name,
			                  line_number, latency_text);
		c *= scale;
		if (c < 0)
			return plumb_fail(status, EINVAL, "%s:%zu: bandwidth %g is negative", name, line_number, c);
		if (!(l > 0))
			return plumb_fail(status, EINVAL, "%s:%zu: latency %g is not positive", name, line_number, l);
		if (append_point(out, &capacity, c, l, status) != 0)
			return -1;
	}
	if (out->count == 0)
		return plumb_fail(status, EINVAL, "%s: no (bandwidth, latency) rows found%s", name,
		                  skipped ? " (every row had an unmeasured cell)" : "");
	snprintf(out->source, sizeof out->source, "csv");
	return 0;
}

/* A JSON cell: a number, or an object {"value": x} / {"status": ...}.
 * 1 = number, 0 = a status cell (skip the row), -1 = something else. */
static int json_cell_number(json_object *cell, double *out)
{
	if (!cell)
		return -1;
	enum json_type type = json_object_get_type(cell);
	if (type == json_type_double || type == json_type_int) {
		*out = json_object_get_double(cell);
		return isfinite(*out) ? 1 : -1;
	}
	if (type == json_type_object) {
		json_object *value;
		if (json_object_object_get_ex(cell, "value", &value))
			return json_cell_number(value, out);
		if (json_object_object_get_ex(cell, "status", NULL))
			return 0;
	}
	if (type == json_type_null)
		return 0;
	return -1;
}

typedef struct json_search {
	model_input *out;
	size_t capacity;
	const char *name;
	plumb_status *status;
	int found;          /* 1 when a table was read */
	int failed;
} json_search;

static int pick_columns(const char *const *names, int n, int *bandwidth, int *latency)
{
	int best_rank = 0;
	*bandwidth = *latency = -1;
	for (int i = 0; i < n; i++) {
		if (!names[i])
			continue;
		int rank = bandwidth_rank(names[i]);
		if (rank > best_rank) {
			best_rank = rank;
			*bandwidth = i;
		}
		if (*latency < 0 && is_latency_name(names[i]))
			*latency = i;
	}
	return *bandwidth >= 0 && *latency >= 0 ? 0 : -1;
}

static void take_point(json_search *search, json_object *bandwidth_cell, json_object *latency_cell,
                       double scale, size_t row)
{
	double c, l;
	int rc = json_cell_number(bandwidth_cell, &c), rl = json_cell_number(latency_cell, &l);
	if (rc == 0 || rl == 0)
		return;
	if (rc < 0 || rl < 0 || c < 0 || !(l > 0)) {
		plumb_fail(search->status, EINVAL, "%s: row %zu: bandwidth and latency must be numbers "
		           "(bandwidth >= 0, latency > 0)", search->name, row + 1);
		search->failed = 1;
		return;
	}
	if (append_point(search->out, &search->capacity, c * scale, l, search->status) != 0)
		search->failed = 1;
}

/* A table as {"columns": [names or {"name": ...}], "rows": [[...] or {...}]}. */
static void read_columns_rows(json_search *search, json_object *columns, json_object *rows)
{
	size_t n = json_object_array_length(columns);
	if (n == 0 || n > INPUT_MAX_FIELDS)
		return;
	const char *names[INPUT_MAX_FIELDS] = { 0 };
	for (size_t i = 0; i < n; i++) {
		json_object *column = json_object_array_get_idx(columns, i), *name;
		if (json_object_is_type(column, json_type_string))
			names[i] = json_object_get_string(column);
		else if (json_object_is_type(column, json_type_object)
		         && json_object_object_get_ex(column, "name", &name))
			names[i] = json_object_get_string(name);
	}
	int bandwidth, latency;
	if (pick_columns(names, (int)n, &bandwidth, &latency) != 0)
		return;
	search->found = 1;
	double scale = bandwidth_scale(names[bandwidth]);
	size_t count = json_object_array_length(rows);
	for (size_t r = 0; r < count && !search->failed; r++) {
		json_object *row = json_object_array_get_idx(rows, r), *bc = NULL, *lc = NULL;
		if (json_object_is_type(row, json_type_array)) {
			bc = json_object_array_get_idx(row, bandwidth);
			lc = json_object_array_get_idx(row, latency);
		} else if (json_object_is_type(row, json_type_object)) {
			json_object_object_get_ex(row, names[bandwidth], &bc);
			json_object_object_get_ex(row, names[latency], &lc);
		}
		take_point(search, bc, lc, scale, r);
	}
}

/* A table as an array of row objects with named fields. */
static void read_object_rows(json_search *search, json_object *rows)
{
	json_object *first = json_object_array_get_idx(rows, 0);
	if (!json_object_is_type(first, json_type_object))
		return;
	const char *names[INPUT_MAX_FIELDS] = { 0 };
	int n = 0;
	json_object_object_foreach(first, key, value) {
		(void)value;
		if (n < INPUT_MAX_FIELDS)
			names[n++] = key;
	}
	int bandwidth, latency;
	if (pick_columns(names, n, &bandwidth, &latency) != 0)
		return;
	search->found = 1;
	double scale = bandwidth_scale(names[bandwidth]);
	size_t count = json_object_array_length(rows);
	for (size_t r = 0; r < count && !search->failed; r++) {
		json_object *row = json_object_array_get_idx(rows, r), *bc = NULL, *lc = NULL;
		if (json_object_is_type(row, json_type_object)) {
			json_object_object_get_ex(row, names[bandwidth], &bc);
			json_object_object_get_ex(row, names[latency], &lc);
		}
		take_point(search, bc, lc, scale, r);
	}
}

static void search_json(json_search *search, json_object *node, int depth)
{
	if (search->found || search->failed || depth > 32 || !node)
		return;
	if (json_object_is_type(node, json_type_object)) {
		json_object *columns, *rows, *line;
		if (json_object_object_get_ex(node, "line_bytes", &line)
		    && (json_object_is_type(line, json_type_int) || json_object_is_type(line, json_type_double))
		    && search->out->line_bytes == 0)
			search->out->line_bytes = json_object_get_double(line);
		if (json_object_object_get_ex(node, "columns", &columns) && json_object_object_get_ex(node, "rows", &rows)
		    && json_object_is_type(columns, json_type_array) && json_object_is_type(rows, json_type_array)) {
			read_columns_rows(search, columns, rows);
			if (search->found || search->failed)
				return;
		}
		json_object_object_foreach(node, key, value) {
			(void)key;
			search_json(search, value, depth + 1);
		}
	} else if (json_object_is_type(node, json_type_array)) {
		if (json_object_array_length(node) > 0) {
			read_object_rows(search, node);
			if (search->found || search->failed)
				return;
		}
		size_t n = json_object_array_length(node);
		for (size_t i = 0; i < n && !search->found && !search->failed; i++)
			search_json(search, json_object_array_get_idx(node, i), depth + 1);
	}
}

static int parse_json(const char *text, size_t length, const char *name, model_input *out,
                      plumb_status *status)
{
	json_tokener *tokener = json_tokener_new_ex(64);
	if (!tokener)
		return plumb_fail(status, ENOMEM, "model input: out of memory");
	json_object *root = json_tokener_parse_ex(tokener, text, (int)length);
	enum json_tokener_error error = json_tokener_get_error(tokener);
	size_t offset = tokener->char_offset;
	json_tokener_free(tokener);
	if (!root || error != json_tokener_success) {
		json_object_put(root);
		size_t line = 1;
		for (size_t i = 0; i < offset && i < length; i++)
			line += text[i] == '\n';
		return plumb_fail(status, EINVAL, "%s:%zu: not valid JSON (%s)", name, line,
		                  error == json_tokener_continue ? "unexpected end of input"
		                                                  : json_tokener_error_desc(error));
	}
	for (size_t i = offset; i < length; i++)
		if (!isspace((unsigned char)text[i])) {
			json_object_put(root);
			return plumb_fail(status, EINVAL, "%s: trailing data after the JSON document", name);
		}
	/* A whole machine report (plumb report's report.json) holds other
	 * sections' tables with bandwidth and latency columns too (the
	 * summary's hierarchy, lat, bw): only its loaded section is read. */
	json_object *node = root, *schema, *sections;
	if (json_object_is_type(root, json_type_object) && json_object_object_get_ex(root, "schema", &schema) &&
	    json_object_is_type(schema, json_type_string) && !strcmp(json_object_get_string(schema), "plumb-machine-report")) {
		node = NULL;
		if (json_object_object_get_ex(root, "sections", &sections) && json_object_is_type(sections, json_type_array))
			for (size_t i = 0; i < json_object_array_length(sections) && !node; i++) {
				json_object *section = json_object_array_get_idx(sections, i), *command, *report;
				if (json_object_object_get_ex(section, "command", &command) &&
				    json_object_is_type(command, json_type_string) && !strcmp(json_object_get_string(command), "loaded") &&
				    json_object_object_get_ex(section, "report", &report))
					node = report;
			}
		if (!node) {
			json_object_put(root);
			return plumb_fail(status, EINVAL, "%s: a plumb report without a loaded section (the model is fitted "
			                  "to plumb loaded's measurements)", name);
		}
	}
	json_search search = { .out = out, .name = name, .status = status };
	search_json(&search, node, 0);
	json_object_put(root);
	if (search.failed)
		return -1;
	if (!search.found)
		return plumb_fail(status, EINVAL, "%s: JSON holds no table with bandwidth and latency columns "
		                  "(expected 'plumb loaded --json' output)", name);
	if (out->count == 0)
		return plumb_fail(status, EINVAL, "%s: the table has no measured (bandwidth, latency) rows", name);
	snprintf(out->source, sizeof out->source, "plumb-loaded-json");
	return 0;
}

int model_input_parse(const char *text, size_t length, const char *name, model_input *out,
                      plumb_status *status)
{
	*out = (model_input){ 0 };
	size_t bom = read_file_bom_length(text, length);
	text += bom;
	length -= bom;
	if (memchr(text, 0, length))
		return plumb_fail(status, EINVAL, "%s: contains NUL bytes; expected text (CSV or JSON)", name);
	size_t first = 0;
	while (first < length && isspace((unsigned char)text[first]))
		first++;
	if (first == length)
		return plumb_fail(status, EINVAL, "%s: is empty", name);
	if (length > INPUT_MAX_BYTES)
		return plumb_fail(status, EFBIG, "%s: larger than %zu MiB", name, INPUT_MAX_BYTES >> 20);
	int rc = text[first] == '{' || text[first] == '['
	         ? parse_json(text, length, name, out, status)
	         : parse_csv(text, length, name, out, status);
	if (rc != 0)
		model_input_free(out);
	return rc;
}

int model_input_read(const char *path, model_input *out, plumb_status *status)
{
	*out = (model_input){ 0 };
	bool standard_input = !strcmp(path, "-");
	char *text;
	size_t length;
	int rc = read_file_limited(path, INPUT_MAX_BYTES, &text, &length, status);
	if (rc == 0)
		rc = model_input_parse(text, length, standard_input ? "<stdin>" : path, out, status);
	free(text);
	return rc;
}

void model_input_free(model_input *in)
{
	free(in->points);
	in->points = NULL;
	in->count = 0;
}
