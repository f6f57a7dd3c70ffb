/* Parser robustness for `plumb model --from`: what it accepts, and that
 * every rejection names the line and the reason. */
#include <criterion/criterion.h>
#include <string.h>
#include "model/model.h"

static int parse(const char *text, model_input *in, plumb_status *status)
{
	return model_input_parse(text, strlen(text), "t.csv", in, status);
}

Test(mp_model_input, plain_pairs_without_header)
{
	model_input in;
	cr_assert_eq(parse("0,100\n# comment\n\n500, 120\r\n1000;150\n", &in, NULL), 0);
	cr_assert_eq(in.count, 3);
	cr_expect_float_eq(in.points[1].contention_mb_s, 500, 1e-12);
	cr_expect_float_eq(in.points[2].latency_ns, 150, 1e-12);
	cr_expect_str_eq(in.source, "csv");
	model_input_free(&in);
}

Test(mp_model_input, whitespace_and_tabs)
{
	model_input in;
	cr_assert_eq(parse("  0   100\n 10\t 110 \n", &in, NULL), 0);
	cr_assert_eq(in.count, 2);
	cr_expect_float_eq(in.points[1].latency_ns, 110, 1e-12);
	model_input_free(&in);
}

Test(mp_model_input, header_picks_named_columns)
{
	model_input in;
	cr_assert_eq(parse("delay,latency_ns,\"generator_bandwidth\",total_bandwidth\n"
	                   "100,90,0,10\n0,140,2000,2100\n", &in, NULL), 0);
	cr_assert_eq(in.count, 2);
	cr_expect_float_eq(in.points[1].contention_mb_s, 2000, 1e-12);
	cr_expect_float_eq(in.points[1].latency_ns, 140, 1e-12);
	model_input_free(&in);
}

Test(mp_model_input, gigabytes_are_scaled)
{
	model_input in;
	cr_assert_eq(parse("bandwidth_GB/s,latency\n1.5,100\n", &in, NULL), 0);
	cr_expect_float_eq(in.points[0].contention_mb_s, 1500, 1e-9);
	model_input_free(&in);
}

Test(mp_model_input, status_cells_are_skipped)
{
	model_input in;
	cr_assert_eq(parse("bandwidth,latency\n0,100\nskipped,n/a\n10,101\n", &in, NULL), 0);
	cr_expect_eq(in.count, 2);
	model_input_free(&in);
}

static void expect_error(const char *text, const char *fragment)
{
	model_input in;
	plumb_status status = { 0 };
	cr_expect_neq(parse(text, &in, &status), 0, "accepted: %s", text);
	cr_expect(strstr(status.message, fragment) != NULL, "message '%s' lacks '%s'", status.message, fragment);
	cr_expect_null(in.points);
}

Test(mp_model_input, rejections_name_line_and_reason)
{
	expect_error("", "empty");
	expect_error("  \n\n", "empty");
	expect_error("0,100\n5,abc\n", "t.csv:2: latency 'abc'");
	expect_error("0,100\nx5,10\n", "t.csv:2: bandwidth 'x5'");
	expect_error("0,100\n-5,10\n", "negative");
	expect_error("0,100\n5,0\n", "not positive");
	expect_error("0,100\n5,inf\n", "not a number");
	expect_error("0,100\n5\n", "t.csv:2: expected at least 2 fields");
	expect_error("7\n", "expected two columns");
	expect_error("alpha,beta,gamma\n1,2,3\n", "cannot tell which columns");
	expect_error("bandwidth,latency\n", "no (bandwidth, latency) rows");
	expect_error("bandwidth,latency\nn/a,n/a\n", "unmeasured");
	expect_error("1e999,5\n", "not a number");
}

/* NaN rows were once dropped in silence while inf was rejected with its line. */
Test(mp_model_input, nan_is_rejected_with_its_line_like_inf)
{
	model_input in;
	plumb_status status = { 0 };
	cr_assert_neq(parse("bandwidth,latency\n0,100\n10,nan\n20,120\n", &in, &status), 0);
	cr_assert_str_eq(status.message, "t.csv:3: latency 'nan' is not a number");
	cr_assert_neq(parse("0,100\nNaN,110\n", &in, &status), 0);
	cr_assert_str_eq(status.message, "t.csv:2: bandwidth 'NaN' is not a number");
	cr_assert_neq(parse("0,100\n5,-nan\n", &in, &status), 0);
	cr_assert_str_eq(status.message, "t.csv:2: latency '-nan' is not a number");
	cr_assert_neq(parse("0,100\n5,inf\n", &in, &status), 0);
	cr_assert_str_eq(status.message, "t.csv:2: latency 'inf' is not a number");
}

Test(mp_model_input, nul_bytes_are_rejected)
{
	model_input in;
	plumb_status status = { 0 };
	const char text[] = "0,100\n\0\n5,10\n";
	cr_expect_neq(model_input_parse(text, sizeof text - 1, "bin", &in, &status), 0);
	cr_expect(strstr(status.message, "NUL") != NULL, "%s", status.message);
}

Test(mp_model_input, long_line_is_rejected)
{
	char *text = malloc(10000);
	memset(text, '1', 9999);
	text[9999] = 0;
	expect_error(text, "longer than");
	free(text);
}

Test(mp_model_input, json_columns_and_rows)
{
	const char *json = "{\"schema_version\":1,\"command\":\"loaded\",\"meta\":{\"line_bytes\":64},"
	                   "\"tables\":{\"loaded\":{\"columns\":[{\"name\":\"delay\"},{\"name\":\"generator_bandwidth\",\"unit\":\"MB/s\"},"
	                   "{\"name\":\"latency\",\"unit\":\"ns\"}],"
	                   "\"rows\":[[0,0,90.5],[10,{\"status\":\"skipped\",\"reason\":\"x\"},100],[0,2500,{\"value\":130}]]}}}";
	model_input in;
	plumb_status status;
	cr_assert_eq(model_input_parse(json, strlen(json), "l.json", &in, &status), 0, "%s", status.message);
	cr_assert_eq(in.count, 2);
	cr_expect_float_eq(in.points[1].contention_mb_s, 2500, 1e-12);
	cr_expect_float_eq(in.points[1].latency_ns, 130, 1e-12);
	cr_expect_float_eq(in.line_bytes, 64, 1e-12);
	cr_expect_str_eq(in.source, "plumb-loaded-json");
	model_input_free(&in);
}

Test(mp_model_input, json_row_objects)
{
	const char *json = "{\"tables\":[{\"name\":\"loaded\",\"rows\":[{\"generator_bandwidth\":0,\"latency\":90},"
	                   "{\"generator_bandwidth\":100,\"latency\":95}]}]}";
	model_input in;
	cr_assert_eq(model_input_parse(json, strlen(json), "l.json", &in, NULL), 0);
	cr_expect_eq(in.count, 2);
	model_input_free(&in);
}

/* plumb report's report.json: the summary's hierarchy table has latency
 * and bandwidth columns too, and came first; only the loaded section may
 * be read (the fit was once made to the hierarchy's levels). */
Test(mp_model_input, a_machine_report_is_read_from_its_loaded_section)
{
	const char *json = "{\"schema\":\"plumb-machine-report\",\"summary\":{\"tables\":{\"hierarchy\":{\"columns\":"
	                   "[\"level\",\"latency\",\"read_bandwidth\"],\"rows\":[[\"L1\",1.7,319],[\"L2\",5.6,137]]}}},"
	                   "\"sections\":[{\"command\":\"lat\",\"report\":{\"tables\":{\"x\":{\"columns\":[\"bandwidth\",\"latency\"],"
	                   "\"rows\":[[1,2],[3,4]]}}}},{\"command\":\"loaded\",\"report\":{\"meta\":{\"line_bytes\":64},"
	                   "\"tables\":{\"loaded\":{\"columns\":[\"generator_bandwidth\",\"latency\"],\"rows\":[[0,150],[900,151],"
	                   "[5000,152]]}}}}]}";
	model_input in;
	plumb_status status;
	cr_assert_eq(model_input_parse(json, strlen(json), "report.json", &in, &status), 0, "%s", status.message);
	cr_assert_eq(in.count, 3);
	cr_expect_float_eq(in.points[0].latency_ns, 150, 1e-12);
	cr_expect_float_eq(in.points[2].contention_mb_s, 5000, 1e-12);
	model_input_free(&in);
	const char *without = "{\"schema\":\"plumb-machine-report\",\"sections\":[{\"command\":\"lat\",\"report\":"
	                      "{\"tables\":{\"x\":{\"columns\":[\"bandwidth\",\"latency\"],\"rows\":[[1,2],[3,4]]}}}}]}";
	cr_expect_neq(model_input_parse(without, strlen(without), "report.json", &in, &status), 0);
	cr_expect(strstr(status.message, "without a loaded section") != NULL, "%s", status.message);
}

Test(mp_model_input, json_rejections)
{
	const char *cases[][2] = {
		{ "{\"a\":", "unexpected end" },
		{ "{\"a\":1} x", "trailing" },
		{ "{\"a\":[1,2,3]}", "no table" },
		{ "{\"rows\":[{\"bandwidth\":\"x\",\"latency\":5}]}", "row 1" },
		{ "[{\"bandwidth\":-1,\"latency\":5}]", "row 1" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		model_input in;
		plumb_status status = { 0 };
		cr_expect_neq(model_input_parse(cases[i][0], strlen(cases[i][0]), "j", &in, &status), 0, "%s", cases[i][0]);
		cr_expect(strstr(status.message, cases[i][1]) != NULL, "'%s' -> '%s'", cases[i][0], status.message);
	}
}

Test(mp_model_input, missing_file)
{
	model_input in;
	plumb_status status = { 0 };
	cr_expect_neq(model_input_read("/nonexistent/plumb.csv", &in, &status), 0);
	cr_expect(strstr(status.message, "/nonexistent/plumb.csv") != NULL);
}
