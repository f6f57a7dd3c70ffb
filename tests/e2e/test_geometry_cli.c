/* plumb geometry end to end: help, a short JSON run, bad arguments. */
#include <criterion/criterion.h>
#include <json-c/json.h>
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

Test(geometry_cli, short_json_run, .timeout = 90)
{
	cli_run r = cli_run_plumbv(NULL, "geometry", "--max-size", "2M", "--points", "2", "--time-cap", "5",
	                           "--curves", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "not JSON: %s", r.out);
	json_object *rows, *table = cli_json_table(root, "geometry");
	cr_assert_not_null(table);
	cr_assert(json_object_object_get_ex(table, "rows", &rows));
	const char *wanted[] = { "capacity", "line size", "associativity", "page size", "tlb entries" };
	for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; w++) {
		bool seen = false;
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			json_object *row = json_object_array_get_idx(rows, i), *v;
			cr_assert(json_object_object_get_ex(row, "property", &v));
			if (strcmp(json_object_get_string(v), wanted[w]) != 0)
				continue;
			seen = true;
			cr_assert(json_object_object_get_ex(row, "verdict", &v));
			const char *verdict = json_object_get_string(v);
			cr_assert(strcmp(verdict, "agree") == 0 || strcmp(verdict, "DISAGREE") == 0 ||
			          strcmp(verdict, "unresolved") == 0 || strcmp(verdict, "no reference") == 0, "%s", verdict);
			cr_assert(json_object_object_get_ex(row, "measured", &v));
			/* A number, or a status object: never a silent 0. */
			if (json_object_is_type(v, json_type_object)) {
				json_object *status;
				cr_assert(json_object_object_get_ex(v, "status", &status));
			} else {
				cr_assert_gt(json_object_get_double(v), 0);
			}
		}
		cr_assert(seen, "no %s row", wanted[w]);
	}
	cr_assert_not_null(cli_json_table(root, "capacity_curve"));
	cr_assert_not_null(cli_json_table(root, "tlb_curve"));
	json_object_put(root);
	cli_run_free(&r);
}
