/* plumb geometry end to end: help, a short JSON run, bad arguments. */
#include <criterion/criterion.h>
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
