/* plumb geometry end to end: help, a short JSON run, bad arguments. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

Test(geometry_cli, help)
{
	cli_run r = cli_run_plumbv(NULL, "geometry", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb geometry"));
	cli_run_free(&r);
}

Test(geometry_cli, bad_arguments_give_one_line_and_exit_2)
{
	const char *cases[][4] = {
		{ "geometry", "--max-size", "12Q", NULL },
		{ "geometry", "--max-size", "4K", NULL },
		{ "geometry", "--points", "0", NULL },
		{ "geometry", "--points", "x", NULL },
		{ "geometry", "--cpu", "100000", NULL },
		{ "geometry", "--target-ci", "-1", NULL },
		{ "geometry", "--bogus", NULL, NULL },
		{ "geometry", "extra", NULL, NULL },
		{ "geometry", "--repeats", "9", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cli_run r = cli_run_plumb(NULL, cases[i]);
		cr_assert_eq(r.exit_code, 2, "%s %s: exit %d, %s", cases[i][1], cases[i][2] ? cases[i][2] : "", r.exit_code, r.err);
		cr_assert(strncmp(r.err, "plumb geometry: ", 16) == 0, "%s", r.err);
		cr_assert_str_eq(strchr(r.err, '\n') + 1, "", "one error line expected: %s", r.err);
		cr_assert_str_eq(r.out, "");
		cli_run_free(&r);
	}
}

/* A sysfs attribute of CPU 0's cache at level (1 = the data cache), or -1. */
static double sysfs_cache(int level, const char *name)
{
	for (int index = 0; index < 8; index++) {
		char path[128], text[64];
		double value[3] = { -1, -1, -1 };
		const char *names[3] = { "level", "type", name };
		for (int k = 0; k < 3; k++) {
			snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, names[k]);
			FILE *f = fopen(path, "r");
			if (!f)
				return -1;
			if (!fgets(text, sizeof text, f))
				text[0] = 0;
			fclose(f);
			if (k == 1)
				value[1] = strncmp(text, "Instruction", 11) != 0;
			else
				value[k] = strtod(text, NULL) * (strchr(text, 'K') ? 1024 : strchr(text, 'M') ? 1048576 : 1);
		}
		if ((int)value[0] == level && value[1] > 0)
			return value[2];
	}
	return -1;
}

static json_object *column(json_object *row, const char *name)
{
	json_object *v;
	cr_assert(json_object_object_get_ex(row, name, &v), "no %s in %s", name, json_object_to_json_string(row));
	return v;
}

static bool is_status(json_object *cell)
{
	return json_object_is_type(cell, json_type_object);
}

static json_object *finding(json_object *rows, const char *property, const char *level)
{
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		if (!strcmp(json_object_get_string(column(row, "property")), property) &&
		    !strcmp(json_object_get_string(column(row, "level")), level))
			return row;
	}
	return NULL;
}

/* What geometry computes, not only that it answers: every verdict follows
 * from the numbers printed beside it, the references are sysfs's, the line
 * size it measures is sysfs's, and the capacities it finds are ordered.
 * (It once accepted any verdict.) */
Test(geometry_cli, short_json_run, .timeout = 90)
{
	cli_run r = cli_run_plumbv(NULL, "geometry", "--max-size", "2M", "--points", "2", "--time-cap", "5",
	                           "--curves", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "not JSON: %s", r.out);
	json_object *rows = cli_json_rows(root, "geometry");
	const char *wanted[] = { "capacity", "line size", "associativity", "page size", "tlb entries" };
	for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; w++) {
		bool seen = false;
		for (size_t i = 0; i < json_object_array_length(rows); i++)
			seen |= !strcmp(json_object_get_string(column(json_object_array_get_idx(rows, i), "property")),
			                wanted[w]);
		cr_assert(seen, "no %s row", wanted[w]);
	}
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		const char *text = json_object_to_json_string(row);
		const char *property = json_object_get_string(column(row, "property"));
		const char *verdict = json_object_get_string(column(row, "verdict"));
		json_object *measured = column(row, "measured"), *low = column(row, "low"), *high = column(row, "high"),
		            *claimed = column(row, "claimed");
		if (is_status(measured)) {
			/* never a silent 0: a status with its reason, and no verdict on it */
			cr_assert(json_object_object_get_ex(measured, "reason", NULL), "%s", text);
			cr_assert_str_eq(verdict, "unresolved", "%s", text);
			continue;
		}
		double m = json_object_get_double(measured), lo = json_object_get_double(low),
		       hi = json_object_get_double(high);
		cr_assert(m > 0 && lo <= m && m <= hi, "%s", text);
		if (is_status(claimed)) {
			cr_assert_str_eq(verdict, "no reference", "%s", text);
			continue;
		}
		double c = json_object_get_double(claimed);
		if (!strcmp(property, "capacity")) {
			/* agreement within the sweep's resolution: never further than a factor of 2 */
			if (!strcmp(verdict, "agree"))
				cr_assert(c >= lo / 2 && c <= hi * 2, "%s", text);
			else if (!strcmp(verdict, "unstable"))
				/* the passes disagree: no verdict, and the spread says by how much */
				cr_assert_str_eq(json_object_get_string(column(row, "stability")), "unstable", "%s", text);
			else
				cr_assert_str_eq(verdict, "DISAGREE", "%s", text);
		} else {
			cr_assert_str_eq(verdict, c >= lo && c <= hi ? "agree" : "DISAGREE", "%s", text);
		}
	}
	/* the references are this machine's: sysfs's L1D size and line */
	double l1_size = sysfs_cache(1, "size"), l1_line = sysfs_cache(1, "coherency_line_size");
	json_object *capacity = finding(rows, "capacity", "L1"), *line = finding(rows, "line size", "L1");
	cr_assert(capacity && line, "no L1 capacity or line size row");
	if (l1_size > 0 && l1_line > 0) {
		cr_assert_float_eq(json_object_get_double(column(capacity, "claimed")), l1_size, 0.5);
		cr_assert_float_eq(json_object_get_double(column(line, "claimed")), l1_line, 0.5);
		/* the line size is measured exactly, or not at all: never another number */
		if (!is_status(column(line, "measured")))
			cr_assert_float_eq(json_object_get_double(column(line, "measured")), l1_line, 0.5, "%s",
			                   json_object_to_json_string(line));
	}
	/* capacities found grow with the level */
	double previous = 0;
	const char *levels[] = { "L1", "L2", "L3" };
	for (int k = 0; k < 3; k++) {
		json_object *row = finding(rows, "capacity", levels[k]);
		if (!row || is_status(column(row, "measured")))
			continue;
		double m = json_object_get_double(column(row, "measured"));
		cr_assert_gt(m, previous, "%s capacity %g after %g", levels[k], m, previous);
		previous = m;
	}
	cr_assert_not_null(cli_json_table(root, "capacity_curve"));
	cr_assert_not_null(cli_json_table(root, "tlb_curve"));
	json_object_put(root);
	cli_run_free(&r);
}

static double real(json_object *cell)
{
	cr_assert(!is_status(cell), "a status where a number belongs: %s", json_object_to_json_string(cell));
	return json_object_get_double(cell);
}

/* One figure per quantity: one saved lat measurement, analysed by plumb
 * lat --from and by plumb geometry --levels-from, gives the same capacity,
 * spread, stability, verdict and latency for every level, and the same as
 * the run that saved it.  Sizes are whatever this machine's are. */
Test(geometry_cli, lat_and_geometry_give_one_figure_from_one_measurement, .timeout = 120)
{
	const char *saved = cli_temp_path("lat.json");
	cli_run m = cli_run_plumbv(NULL, "lat", "--max-size", "4M", "--time-cap", "10", "--repeats", "2", "--json", "-o", saved,
	                           NULL);
	cr_assert_eq(m.exit_code, 0, "%s", m.err);
	cli_run_free(&m);
	char *saved_text = cli_read_file(saved, NULL);
	cr_assert_not_null(saved_text, "cannot read %s: %s", saved, strerror(errno));
	json_object *original = json_tokener_parse(saved_text);
	cr_assert_not_null(original);
	cli_run l = cli_run_plumbv(NULL, "lat", "--from", saved, "--json", NULL);
	cr_assert_eq(l.exit_code, 0, "%s", l.err);
	json_object *lat = json_tokener_parse(l.out);
	cr_assert_not_null(lat, "not JSON: %s", l.out);
	/* stdin, as the report feeds it */
	cli_run g = cli_run_plumbv(saved_text, "geometry", "--levels-from", "-", "--time-cap", "5", "--json", NULL);
	cr_assert_eq(g.exit_code, 0, "%s", g.err);
	json_object *geometry = json_tokener_parse(g.out);
	cr_assert_not_null(geometry, "not JSON: %s", g.out);

	json_object *levels = cli_json_rows(lat, "levels"), *before = cli_json_rows(original, "levels");
	json_object *rows = cli_json_rows(geometry, "geometry");
	size_t count = json_object_array_length(levels);
	cr_assert_geq(count, 2, "a cache level and memory at least");
	cr_assert_eq(json_object_array_length(before), count, "re-analysis finds the saved run's levels");
	for (size_t k = 0; k < count; k++) {
		json_object *level = json_object_array_get_idx(levels, k), *was = json_object_array_get_idx(before, k);
		const char *text = json_object_to_json_string(level);
		static const char *const same[] = { "level", "latency", "median", "low", "high", "plateau_from", "plateau_to",
		                                    "ends_at", "sysfs_size", "sysfs", "ends_low", "ends_high", "spread_steps",
		                                    "passes", "stability" };
		for (size_t c = 0; c < sizeof same / sizeof same[0]; c++)
			cr_assert_str_eq(json_object_to_json_string(column(level, same[c])),
			                 json_object_to_json_string(column(was, same[c])), "lat --from changed %s: %s", same[c], text);
		char name[32];
		if (k + 1 == count)
			snprintf(name, sizeof name, "memory");
		else
			snprintf(name, sizeof name, "L%zu", k + 1);
		json_object *latency = finding(rows, "latency", name);
		cr_assert_not_null(latency, "geometry has no %s latency", name);
		cr_assert_eq(real(column(latency, "measured")), real(column(level, "latency")), "%s latency: %s", name, text);
		if (k + 1 == count)
			continue;
		json_object *capacity = finding(rows, "capacity", name);
		cr_assert_not_null(capacity, "geometry has no %s capacity", name);
		const char *both = json_object_to_json_string(capacity);
		cr_assert_eq(real(column(capacity, "measured")), real(column(level, "ends_at")), "%s | %s", text, both);
		cr_assert_eq(real(column(capacity, "spread_low")), real(column(level, "ends_low")), "%s | %s", text, both);
		cr_assert_eq(real(column(capacity, "spread_high")), real(column(level, "ends_high")), "%s | %s", text, both);
		cr_assert_eq(real(column(capacity, "passes")), real(column(level, "passes")), "%s | %s", text, both);
		cr_assert_str_eq(json_object_get_string(column(capacity, "stability")),
		                 json_object_get_string(column(level, "stability")), "%s | %s", text, both);
		/* the claim is sysfs's, and the verdicts are one */
		double claimed = sysfs_cache((int)k + 1, "size");
		const char *sysfs = json_object_get_string(column(level, "sysfs"));
		if (claimed > 0 && strncmp(json_object_get_string(column(level, "level")), "L", 1) == 0) {
			cr_assert_eq(real(column(capacity, "claimed")), claimed, "%s", both);
			cr_assert_eq(real(column(level, "sysfs_size")), claimed, "%s", text);
			const char *verdict = json_object_get_string(column(capacity, "verdict"));
			const char *expected = !strcmp(sysfs, "agrees") ? "agree" : !strcmp(sysfs, "unstable") ? "unstable" : "DISAGREE";
			cr_assert_str_eq(verdict, expected, "%s | %s", text, both);
		}
	}
	json_object_put(original);
	free(saved_text);
	json_object_put(lat);
	json_object_put(geometry);
	cli_run_free(&l);
	cli_run_free(&g);
}

/* The rows of table name in one section of a report.json bundle. */
static json_object *bundle_rows(json_object *bundle, const char *command, const char *name)
{
	json_object *sections;
	if (!strcmp(command, "summary")) {
		json_object *summary;
		cr_assert(json_object_object_get_ex(bundle, "summary", &summary));
		return cli_json_rows(summary, name);
	}
	cr_assert(json_object_object_get_ex(bundle, "sections", &sections));
	for (size_t i = 0; i < json_object_array_length(sections); i++) {
		json_object *s = json_object_array_get_idx(sections, i), *c, *report;
		if (json_object_object_get_ex(s, "command", &c) && !strcmp(json_object_get_string(c), command) &&
		    json_object_object_get_ex(s, "report", &report))
			return cli_json_rows(report, name);
	}
	cr_assert_fail("no %s section", command);
	return NULL;
}

/* In one report, the latency section, the geometry section and the summary
 * give the same size and latency for every level: geometry reads the
 * latency section's measurement instead of sweeping again. */
Test(geometry_cli, one_report_gives_one_figure_per_quantity, .timeout = 180)
{
	char html[512], json[600];
	snprintf(html, sizeof html, "%s", cli_temp_path("report.html"));
	snprintf(json, sizeof json, "%.*s.json", (int)strlen(html) - 5, html);
	/* listed geometry first: the report runs lat before it */
	cli_run r = cli_run_plumbv(NULL, "report", "--quick", "--sections", "geometry,lat", "-o", html, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_assert(strstr(r.err, "running lat before it"), "%s", r.err);
	cli_run_free(&r);
	char *text = cli_read_file(json, NULL);
	cr_assert_not_null(text, "cannot read %s: %s", json, strerror(errno));
	json_object *bundle = json_tokener_parse(text);
	free(text);
	cr_assert_not_null(bundle);
	json_object *levels = bundle_rows(bundle, "lat", "levels"), *rows = bundle_rows(bundle, "geometry", "geometry");
	json_object *hierarchy = bundle_rows(bundle, "summary", "hierarchy");
	json_object *sections = json_object_object_get(bundle, "sections");
	json_object *geometry = json_object_object_get(json_object_array_get_idx(sections, 1), "report");
	json_object *meta = json_object_object_get(geometry, "meta");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(meta, "levels_from")), "a saved plumb lat report");
	size_t count = json_object_array_length(levels), compared = 0;
	cr_assert_geq(count, 2);
	for (size_t k = 0; k < count; k++) {
		json_object *level = json_object_array_get_idx(levels, k);
		const char *name = json_object_get_string(column(level, "level"));
		if (strncmp(name, "L", 1) != 0 && strcmp(name, "memory") != 0)
			continue;   /* "level N": the count differs from sysfs, rows are not named */
		json_object *summary_row = NULL;
		for (size_t i = 0; i < json_object_array_length(hierarchy); i++) {
			json_object *h = json_object_array_get_idx(hierarchy, i);
			if (!strcmp(json_object_get_string(column(h, "level")), strcmp(name, "memory") ? name : "DRAM"))
				summary_row = h;
		}
		cr_assert_not_null(summary_row, "no summary row for %s", name);
		json_object *stability = column(level, "stability");
		if (stability && !is_status(stability) && !strcmp(json_object_get_string(stability), "hidden")) {
			/* a cache with no plateau of its own: no figure, and the
			 * summary says why */
			json_object *latency = column(summary_row, "latency");
			cr_assert(is_status(latency) && strstr(json_object_to_json_string(latency), "hidden"), "%s: %s", name,
			          json_object_to_json_string(latency));
			continue;
		}
		double ns = real(column(level, "latency"));
		cr_assert_eq(real(column(finding(rows, "latency", name), "measured")), ns, "%s latency", name);
		json_object *source = column(summary_row, "latency_source");
		const char *from = source && !is_status(source) ? json_object_get_string(source) : "";
		if (!strcmp(name, "memory") && from && strstr(from, "plateau past the last cache")) {
			/* lat's memory level came from points still rising (a busy
			 * sweep, beside another test): the summary takes memory's
			 * plateau instead, and says so (machine_model, "DRAM latency
			 * from a plateau") */
			cr_assert(strstr(from, "points still rising"), "%s", from);
			compared++;
			continue;
		}
		cr_assert_eq(real(column(summary_row, "latency")), ns, "%s latency in the summary (%s)", name, from);
		compared++;
		if (!strcmp(name, "memory") || k + 1 == count)
			continue;
		double end = real(column(level, "ends_at"));
		cr_assert_eq(real(column(finding(rows, "capacity", name), "measured")), end, "%s size", name);
		cr_assert_eq(real(column(summary_row, "measured_size")), end, "%s size in the summary", name);
		cr_assert_eq(real(column(summary_row, "measured_size_low")), real(column(level, "ends_low")), "%s", name);
		cr_assert_eq(real(column(summary_row, "measured_size_high")), real(column(level, "ends_high")), "%s", name);
		cr_assert_str_eq(json_object_get_string(column(summary_row, "size_stability")),
		                 json_object_get_string(column(level, "stability")), "%s", name);
	}
	cr_assert_geq(compared, 1, "no level compared");
	json_object_put(bundle);
}
