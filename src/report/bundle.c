/* report.json: everything the page shows (the summary and each section's
 * own report, or why it could not run) in one file beside report.html. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "core/read_file.h"
#include "report/report.h"

static int write_report(FILE *f, const output_report *r, plumb_status *status)
{
	char *text = NULL;
	size_t length = 0;
	FILE *m = open_memstream(&text, &length);
	if (!m)
		return plumb_fail_errno(status, errno, "out of memory");
	int rc = output_write(r, OUTPUT_JSON, m, status);
	fclose(m);
	if (rc == 0) {
		/* Indent the section's document by one level for readability. */
		while (length && text[length - 1] == '\n')
			text[--length] = 0;
		for (const char *s = text; *s; s++) {
			fputc(*s, f);
			if (*s == '\n')
				fputs("      ", f);
		}
	}
	free(text);
	return rc;
}

static void json_string(FILE *f, const char *s)
{
	json_object *o = json_object_new_string(s ? s : "");
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), f);
	json_object_put(o);
}

int report_write_json(const char *path, const char *title, const output_report *summary,
                      output_report *const *sections, const char *const *commands, const char *const *failures,
                      size_t count, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	FILE *f = file.stream;
	char when[64];
	time_t now = time(NULL);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fputs("{\n  \"schema\": \"plumb-machine-report\",\n  \"schema_version\": 1,\n  \"plumb_version\": ", f);
	json_string(f, PLUMB_VERSION);
	fputs(",\n  \"title\": ", f);
	json_string(f, title);
	fprintf(f, ",\n  \"generated\": \"%s\",\n  \"summary\": ", when);
	int rc = 0;
	if (summary) {
		fputs("\n      ", f);
		rc = write_report(f, summary, status);
	} else {
		fputs("null", f);
	}
	fputs(",\n  \"sections\": [", f);
	for (size_t i = 0; i < count && rc == 0; i++) {
		fputs(i ? ",\n    {\"command\": " : "\n    {\"command\": ", f);
		json_string(f, commands[i]);
		if (sections[i]) {
			fputs(", \"status\": \"ok\", \"report\":\n      ", f);
			rc = write_report(f, sections[i], status);
		} else {
			fputs(", \"status\": \"failed\", \"reason\": ", f);
			json_string(f, failures && failures[i] ? failures[i] : "not run");
		}
		fputs("}", f);
	}
	fputs("\n  ]\n}\n", f);
	if (rc != 0) {
		output_file_abort(&file);
		return -1;
	}
	return output_file_commit(&file, status);
}

void report_bundle_free(report_bundle *b)
{
	if (!b)
		return;
	output_report_free(b->summary);
	for (size_t i = 0; i < b->count; i++) {
		output_report_free(b->sections[i]);
		free(b->commands[i]);
		free(b->failures[i]);
	}
	free(b->sections);
	free(b->commands);
	free(b->failures);
	memset(b, 0, sizeof *b);
}

/* The member key of o when it is a JSON string, else NULL: a file from
 * someone else may hold null, a number or an object anywhere. */
static const char *string_member(json_object *o, const char *key)
{
	json_object *member = NULL;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &member) ||
	    !json_object_is_type(member, json_type_string))
		return NULL;
	return json_object_get_string(member);
}

static int parse_object(json_object *o, output_report **out, plumb_status *status)
{
	return output_report_parse_json(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), out, status);
}

int report_bundle_read(const char *path, report_bundle *b, plumb_status *status)
{
	memset(b, 0, sizeof *b);
	char *text;
	size_t length;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, status) != 0)
		return -1;
	if (!length) {
		free(text);
		return plumb_fail(status, EINVAL, "cannot read '%s': empty file", path);
	}
	json_object *root = json_tokener_parse(text);
	json_object *sections = NULL;
	if (!root) {
		free(text);
		return plumb_fail(status, EINVAL, "%s: not JSON (a report.json or a section's --json output)", path);
	}
	const char *schema = string_member(root, "schema");
	if (!schema) {
		json_object_put(root);
		free(text);
		return plumb_fail(status, EINVAL, "%s: not a plumb report (JSON with a \"schema\")", path);
	}
	int rc = 0;
	if (!strcmp(schema, "plumb-report")) {
		/* One section's own JSON. */
		b->sections = calloc(1, sizeof *b->sections);
		b->commands = calloc(1, sizeof *b->commands);
		b->failures = calloc(1, sizeof *b->failures);
		if (!b->sections || !b->commands || !b->failures) {
			rc = plumb_fail(status, ENOMEM, "out of memory");
		} else if ((rc = output_report_parse_json(text, &b->sections[0], status)) == 0) {
			/* its section: the program's is a plumb sim report */
			b->commands[0] = strdup(report_section_of(b->sections[0]));
			b->count = 1;
		}
	} else if (strcmp(schema, "plumb-machine-report") != 0 ||
	           !json_object_object_get_ex(root, "sections", &sections) || !json_object_is_type(sections, json_type_array)) {
		rc = plumb_fail(status, EINVAL, "%s: not a plumb report (schema \"%.80s\")", path, schema);
	} else {
		size_t count = json_object_array_length(sections);
		b->sections = calloc(count + 1, sizeof *b->sections);
		b->commands = calloc(count + 1, sizeof *b->commands);
		b->failures = calloc(count + 1, sizeof *b->failures);
		if (!b->sections || !b->commands || !b->failures)
			rc = plumb_fail(status, ENOMEM, "out of memory");
		for (size_t i = 0; i < count && rc == 0; i++, b->count++) {
			json_object *s = json_object_array_get_idx(sections, i), *report = NULL;
			const char *command = string_member(s, "command");
			if (!command) {
				rc = plumb_fail(status, EINVAL, "%s: section %zu has no command", path, i + 1);
				break;
			}
			b->commands[i] = strdup(command);
			if (json_object_object_get_ex(s, "report", &report) && json_object_is_type(report, json_type_object)) {
				rc = parse_object(report, &b->sections[i], status);
			} else {
				const char *why = string_member(s, "reason");
				b->failures[i] = strdup(why ? why : "not run");
			}
		}
		json_object *summary = NULL;
		if (rc == 0 && json_object_object_get_ex(root, "summary", &summary) && json_object_is_type(summary, json_type_object))
			rc = parse_object(summary, &b->summary, status);
	}
	if (rc == 0 && !b->summary)
		b->summary = report_summary_build(b->sections, (const char *const *)b->commands, b->count);
	if (rc != 0) {
		char message[PLUMB_MESSAGE_MAX];
		snprintf(message, sizeof message, "%s", status ? status->message : "");
		report_bundle_free(b);
		if (!strstr(message, path))
			plumb_fail(status, EINVAL, "%s: %s", path, message);
		rc = -1;
	}
	json_object_put(root);
	free(text);
	return rc;
}
