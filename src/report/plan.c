/* Which sections a report runs, in which order: some sections read an
 * earlier one's measurement (include/plumb/report.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "plumb/report.h"

int report_plan_sections(char *list, bool (*known)(const char *name), const char **names, size_t capacity,
                         size_t *count, char notes[2][PLUMB_MESSAGE_MAX], plumb_status *status)
{
	*count = 0;
	notes[0][0] = notes[1][0] = '\0';
	size_t note_count = 0;
	bool has_loaded = false;
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
		/* The model is fitted to loaded's measurements: run loaded first
		 * when the list does not. */
		if (!strcmp(s, "model") && !has_loaded) {
			names[(*count)++] = "loaded";
			has_loaded = true;
			snprintf(notes[note_count++], PLUMB_MESSAGE_MAX,
			         "the model section needs loaded's measurements; adding the loaded section before it");
		}
		has_loaded |= !strcmp(s, "loaded");
		names[(*count)++] = s;
	}
	/* geometry takes its capacities and level latencies from lat's
	 * measurement (one figure per quantity): run lat first. */
	size_t at_geometry = *count, at_lat = *count;
	for (size_t k = 0; k < *count; k++) {
		if (!strcmp(names[k], "geometry"))
			at_geometry = k;
		if (!strcmp(names[k], "lat"))
			at_lat = k;
	}
	if (at_lat < *count && at_geometry < at_lat) {
		const char *lat = names[at_lat];
		for (size_t k = at_lat; k > at_geometry; k--)
			names[k] = names[k - 1];
		names[at_geometry] = lat;
		snprintf(notes[note_count++], PLUMB_MESSAGE_MAX,
		         "the geometry section reads the latency section's measurement; running lat before it");
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
