/* Which sections a report runs, in which order: some sections read an
 * earlier one's measurement (src/report/report.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/parse.h"
#include "report/report.h"

int report_plan_sections(char *list, bool (*known)(const char *name), const char **names, size_t capacity,
                         size_t *count, char notes[2][PLUMB_MESSAGE_MAX], plumb_status *status)
{
	*count = 0;
	notes[0][0] = notes[1][0] = '\0';
	size_t note_count = 0;
	if (parse_list_check(list, 0, status) != 0)
		return -1;
	for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		if (*count + 1 >= capacity)
			return plumb_fail(status, EINVAL, "at most %zu sections", capacity - 1);
		if (!strcmp(s, "report"))
			return plumb_fail(status, EINVAL, "a report cannot contain itself");
		if (!known(s))
			return plumb_fail(status, EINVAL, "'%s' is not a plumb command", s);
		for (size_t k = 0; k < *count; k++)
			if (!strcmp(names[k], s))
				return plumb_fail(status, EINVAL, "section '%s' is listed twice", s);
		/* A section that cannot run without an earlier one's report (the
		 * model, fitted to loaded's measurements) gets it before it. */
		const report_section *section = report_section_find(s);
		if (section && section->input && section->input_required) {
			bool listed = false;
			for (size_t k = 0; k < *count; k++)
				listed |= !strcmp(names[k], section->input);
			if (!listed) {
				if (*count + 2 >= capacity)
					return plumb_fail(status, EINVAL, "at most %zu sections", capacity - 1);
				names[(*count)++] = section->input;
				if (note_count < 2)
					snprintf(notes[note_count++], PLUMB_MESSAGE_MAX, "%s", section->plan_note ? section->plan_note : "");
			}
		}
		names[(*count)++] = s;
	}
	/* A section that reads an earlier one's report when the list has it
	 * (geometry, lat's capacities and level latencies) runs after it. */
	for (size_t at = 0; at < *count; at++) {
		const report_section *section = report_section_find(names[at]);
		if (!section || !section->input || section->input_required)
			continue;
		size_t at_input = *count;
		for (size_t k = at + 1; k < *count; k++)
			if (!strcmp(names[k], section->input))
				at_input = k;
		if (at_input == *count)
			continue;
		const char *input = names[at_input];
		for (size_t k = at_input; k > at; k--)
			names[k] = names[k - 1];
		names[at] = input;
		if (note_count < 2)
			snprintf(notes[note_count++], PLUMB_MESSAGE_MAX, "%s", section->plan_note ? section->plan_note : "");
	}
	return 0;
}

void report_json_path_for(const char *html, char *out, size_t length)
{
	size_t n = strlen(html);
	if (n > 5 && !strcmp(html + n - 5, ".html"))
		snprintf(out, length, "%.*s.json", (int)(n - 5), html);
	else if (n > 4 && !strcmp(html + n - 4, ".htm"))
		snprintf(out, length, "%.*s.json", (int)(n - 4), html);
	else
		snprintf(out, length, "%s.json", html);
}
