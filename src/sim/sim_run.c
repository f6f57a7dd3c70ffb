/* What plumb sim does around the simulator: the configuration it runs
 * (this machine's caches unless told otherwise, then a file and settings),
 * a trace reader fed through it, the code map of the run, and the
 * annotation files (src/sim/sim.h, "Running a trace"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/output.h"
#include "core/parse.h"
#include "machine/machine_model.h"
#include "sim/sim.h"

int sim_config_set_geometry(sim_config *config, const char *level, const char *text, plumb_status *status)
{
	char key[32];
	if (strcmp(text, "none") == 0) {
		snprintf(key, sizeof key, "%s.size", level);
		return sim_config_set(config, key, "none", status);
	}
	char copy[128];
	if (strlen(text) >= sizeof copy)
		return plumb_fail(status, EINVAL, "--%s: too long", level);
	/* "32K,,8,64" is not 32K,8,64: an empty field would let the next one
	 * take its place */
	plumb_status list_status;
	if (parse_list_check(text, 0, &list_status) != 0)
		return plumb_fail(status, EINVAL, "--%s: '%s' is not SIZE,ASSOC,LINE (%s)", level, text, list_status.message);
	strcpy(copy, text);
	char *fields[3];
	char *save = NULL;
	int n = 0;
	for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
		if (n == 3)
			return plumb_fail(status, EINVAL, "--%s: '%s' is not SIZE,ASSOC,LINE", level, text);
		fields[n++] = part;
	}
	if (n != 3)
		return plumb_fail(status, EINVAL, "--%s: '%s' is not SIZE,ASSOC,LINE", level, text);
	static const char *const names[3] = { "size", "assoc", "line" };
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof key, "%s.%s", level, names[i]);
		if (sim_config_set(config, key, fields[i], status) != 0)
			return -1;
	}
	return 0;
}

int sim_config_choose(sim_config *config, const char *preset, const char *path, const sim_setting *settings,
                      size_t setting_count, sim_config_origin *origin, plumb_status *status)
{
	return sim_config_choose_machine(config, preset, path, NULL, settings, setting_count, origin, status);
}

int sim_config_choose_machine(sim_config *config, const char *preset, const char *path, const char *machine_path,
                              const sim_setting *settings, size_t setting_count, sim_config_origin *origin,
                              plumb_status *status)
{
	origin->machine[0] = origin->host_problem[0] = '\0';
	bool host = (!preset && !path) || (preset && !strcmp(preset, "host"));
	if (machine_path && !host)
		return plumb_fail(status, EINVAL, "--machine gives the host preset its measured sizes; it does not apply to %s%s",
		                  preset ? "preset " : "a configuration file", preset ? preset : "");
	machine_model model;
	if (machine_path && machine_model_load(machine_path, &model, status) != 0)
		return -1;
	/* Without a preset or a file: this machine's caches (the host preset),
	 * or the generic default with a note when they cannot be read. */
	if (!preset && !path) {
		char described[400];
		if (sim_preset(config, "host", status) == 0 && sim_config_validate(config, status) == 0) {
			snprintf(origin->machine, sizeof origin->machine, "host (hwloc: %s)",
			         sim_config_describe(config, described, sizeof described));
		} else {
			snprintf(origin->host_problem, sizeof origin->host_problem, "%s", status->message);
			preset = "default";
		}
	}
	if (preset && sim_preset(config, preset, status) != 0)
		return -1;
	if (!machine_path && preset && !strcmp(preset, "host") && !origin->machine[0]) {
		char described[400];
		snprintf(origin->machine, sizeof origin->machine, "host (hwloc: %s); caches at the nominal sizes sysfs lists "
		         "(--machine report.json: a shared cache at its measured usable size)",
		         sim_config_describe(config, described, sizeof described));
	}
	if (machine_path && !origin->host_problem[0]) {
		/* the shared cache at its measured usable size, said wherever the
		 * configuration is described */
		char note[400], described[400];
		int applied = sim_preset_apply_machine(config, &model, note, sizeof note);
		snprintf(origin->machine, sizeof origin->machine, "host (hwloc: %s)%s%s",
		         sim_config_describe(config, described, sizeof described), note[0] ? "; " : "", note);
		(void)applied;
	}
	if (!preset && path)
		sim_config_default(config);
	if (path && sim_config_load(config, path, status) != 0)
		return -1;
	for (size_t i = 0; i < setting_count; i++) {
		const sim_setting *setting = &settings[i];
		int rc = !setting->key      ? sim_config_assign(config, setting->value, status)
		         : setting->geometry ? sim_config_set_geometry(config, setting->key, setting->value, status)
		                             : sim_config_set(config, setting->key, setting->value, status);
		if (rc != 0)
			return -1;
	}
	if (origin->machine[0] && setting_count > 0) {
		size_t used = strlen(origin->machine);
		snprintf(origin->machine + used, sizeof origin->machine - used, ", changed by %zu command-line setting%s",
		         setting_count, setting_count == 1 ? "" : "s");
	}
	return sim_config_validate(config, status);
}

int sim_run_reader(sim *s, trace_reader *reader, trace_interleaver *interleaver, bool show_progress,
                   uint64_t *records, plumb_status *status)
{
	sim_feed feed = { .sims = &s, .count = 1, .interleaver = interleaver, .show_progress = show_progress };
	int rc = sim_feed_reader(&feed, reader, status);
	*records += feed.records;
	return rc;
}

int sim_code_map_find(trace_reader *reader, const char *trace_path, trace_code_map **out, char *loaded_from,
                      size_t length, plumb_status *status)
{
	*out = NULL;
	if (length)
		loaded_from[0] = '\0';
	/* plumbgrind's function, file and line of every instruction run */
	if (trace_reader_code_map(reader, out, status) != 0)
		return -1;
	/* a trace recorded by plumb trace record keeps them in TRACE.code */
	if (!*out && trace_path && strcmp(trace_path, "-") != 0 &&
	    trace_code_map_path_for(trace_path, loaded_from, length) && access(loaded_from, R_OK) == 0)
		return trace_code_map_load(out, loaded_from, status);
	if (length)
		loaded_from[0] = '\0';
	return 0;
}

bool sim_run_names_code(const sim_config *config, size_t top, bool annotation_files)
{
	return annotation_files || (config->classify && top > 0);
}

int sim_write_annotation_file(const char *path, const sim *s, const trace_code_map *map, const char *command,
                              bool callgrind, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	int rc = callgrind ? sim_write_callgrind(s, map, command, file.stream, status)
	                   : sim_write_cachegrind(s, map, command, file.stream, status);
	if (rc != 0) {
		output_file_abort(&file);
		return -1;
	}
	return output_file_commit(&file, status);
}

output_report *sim_run_report(const sim *s, const sim_run_facts *facts, size_t top, plumb_status *status)
{
	output_report *report = output_report_new("sim");
	output_meta_text(report, "trace", facts->trace);
	output_meta_text(report, "format", trace_format_name(facts->format));
	output_meta_integer(report, "records", (int64_t)facts->records);
	if (facts->interleave) {
		char text[160];
		snprintf(text, sizeof text, "%llu references of each thread in turn (window %llu records)",
		         (unsigned long long)facts->interleave, (unsigned long long)facts->interleave_window);
		output_meta_text(report, "interleave", text);
	}
	if (facts->fair_sched)
		output_meta_text(report, "valgrind scheduling", "--fair-sched=yes");
	if (facts->origin && facts->origin->machine[0])
		output_meta_text(report, "machine", facts->origin->machine);
	if (facts->code_map)
		output_meta_text(report, "code_map", facts->code_map);
	if (facts->origin && facts->origin->host_problem[0])
		output_note(report, "this machine's caches could not be read (%s): the generic default machine was "
		            "simulated", facts->origin->host_problem);
	if (facts->truncated)
		output_note(report, "the trace was cut short: %llu bytes of an incomplete block were ignored",
		            (unsigned long long)facts->truncated_bytes);
	if (sim_report(s, report, top, status) != 0) {
		output_report_free(report);
		return NULL;
	}
	if (facts->checked)
		output_note(report, "--check: every invariant held (single writer, inclusion, directory = contents, "
		                    "counting identities)");
	return report;
}

char *sim_command_text(char *const *words, size_t count)
{
	size_t length = 1;
	for (size_t i = 0; i < count; i++)
		length += strlen(words[i]) + 1;
	char *text = malloc(length);
	if (!text)
		return NULL;
	text[0] = 0;
	for (size_t i = 0; i < count; i++) {
		if (i > 0)
			strcat(text, " ");
		strcat(text, words[i]);
	}
	for (char *p = text; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return text;
}
