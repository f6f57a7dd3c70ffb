#include <criterion/criterion.h>
#include <limits.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/output.h"
#include "../temp_folder.h"

static output_report *sample_report(void)
{
	output_report *r = output_report_new("test");
	output_meta_text(r, "machine", "unit test");
	output_meta_integer(r, "runs", 3);
	output_table *t = output_table_add(r, "events", "Events");
	output_column(t, "event", NULL, 0);
	output_column(t, "count", NULL, 0);
	output_column(t, "ratio", "%", 2);
	output_row(t);
	output_cell_text(t, "page-faults");
	output_cell_integer(t, 1024);
	output_cell_real(t, 0.126);
	output_row(t);
	output_cell_text(t, "PAPI_L1_DCM");
	output_cell_status(t, "unsupported", "ENOENT: no PMU");
	output_cell_real(t, NAN);
	output_note(r, "a note with %d", 42);
	return r;
}

static char *render(output_report *r, output_format format)
{
	char *text = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&text, &length);
	cr_assert_eq(output_write(r, format, f, NULL), 0);
	fclose(f);
	return text;
}

Test(core_output, table_shows_status_and_reason)
{
	output_report *r = sample_report();
	char *text = render(r, OUTPUT_TABLE);
	cr_assert(strstr(text, "page-faults") && strstr(text, "1024") && strstr(text, "0.13"));
	cr_assert(strstr(text, "unsupported"));
	cr_assert(strstr(text, "unsupported: ENOENT: no PMU"));
	cr_assert(strstr(text, "note: a note with 42"));
	/* An unsupported value must never print as a number. */
	const char *row = strstr(text, "PAPI_L1_DCM");
	cr_assert(row);
	cr_assert_null(strstr(row, " 0 "));
	free(text);
	output_report_free(r);
}

/* People read bytes in binary units and long counts grouped; files keep
 * the exact numbers.  topo printed an L3 of 272629760 bytes. */
Test(core_output, tables_for_people_use_units_and_groups_files_keep_numbers)
{
	output_report *r = output_report_new("test");
	output_table *t = output_table_add(r, "caches", "Caches");
	output_column(t, "size", "bytes", 0);
	output_column(t, "references", NULL, 0);
	output_column(t, "year", NULL, 0);
	int64_t sizes[] = { 49152, 272629760, 64, 1536, 3 * 1024 * 1024 + 1, 12800 };
	for (int i = 0; i < 6; i++) {
		output_row(t);
		output_cell_integer(t, sizes[i]);
		output_cell_integer(t, i == 0 ? 123456789 : i == 1 ? 4082 : -1234567);
		output_cell_integer(t, 2026);
	}
	char *text = render(r, OUTPUT_TABLE);
	cr_assert(strstr(text, "48 KiB") && strstr(text, "260 MiB") && strstr(text, "64 B") && strstr(text, "1536 B") &&
	          strstr(text, "3.00 MiB") && strstr(text, "12.5 KiB"), "%s", text);
	cr_assert(strstr(text, "123,456,789") && strstr(text, "-1,234,567") && strstr(text, "2026"), "%s", text);
	/* A grouped column is grouped throughout, so its digits line up. */
	cr_assert(strstr(text, "4,082") && !strstr(text, "2,026"), "%s", text);
	cr_assert_null(strstr(text, "size[bytes]"), "%s", text);
	cr_assert_null(strstr(text, "272629760"), "%s", text);
	free(text);
	text = render(r, OUTPUT_CSV);
	cr_assert(strstr(text, "272629760") && strstr(text, "123456789") && !strstr(text, "MiB"), "%s", text);
	cr_assert(strstr(text, "size[bytes]"), "%s", text);
	free(text);
	text = render(r, OUTPUT_JSON);
	cr_assert(strstr(text, "272629760") && !strstr(text, "MiB"), "%s", text);
	free(text);
	output_report_free(r);
}

Test(core_output, csv)
{
	output_report *r = sample_report();
	char *text = render(r, OUTPUT_CSV);
	/* one table, no comment lines; a cell that is not a value is empty, its
	 * status and reason in columns of their own */
	cr_assert_null(strchr(text, '#'), "%s", text);
	cr_assert_str_eq(text, "event,count,ratio[%],status,reason\n"
	                       "page-faults,1024,0.126,ok,\n"
	                       "PAPI_L1_DCM,,,unsupported; n/a,ENOENT: no PMU; no value\n");
	free(text);
	output_report_free(r);
}

Test(core_output, json_round_trip)
{
	output_report *r = sample_report();
	char *text = render(r, OUTPUT_JSON);
	json_object *root = json_tokener_parse(text);
	cr_assert_not_null(root, "JSON does not parse: %s", text);
	json_object *v, *tables, *rows, *row, *cell;
	cr_assert(json_object_object_get_ex(root, "schema_version", &v));
	cr_assert_eq(json_object_get_int(v), OUTPUT_SCHEMA_VERSION);
	cr_assert(json_object_object_get_ex(root, "command", &v));
	cr_assert_str_eq(json_object_get_string(v), "test");
	cr_assert(json_object_object_get_ex(root, "tables", &tables));
	json_object *t0 = json_object_array_get_idx(tables, 0);
	cr_assert(json_object_object_get_ex(t0, "rows", &rows));
	row = json_object_array_get_idx(rows, 0);
	cr_assert(json_object_object_get_ex(row, "count", &cell));
	cr_assert_eq(json_object_get_int64(cell), 1024);
	row = json_object_array_get_idx(rows, 1);
	cr_assert(json_object_object_get_ex(row, "count", &cell));
	cr_assert(json_object_is_type(cell, json_type_object));
	cr_assert(json_object_object_get_ex(cell, "status", &v));
	cr_assert_str_eq(json_object_get_string(v), "unsupported");
	cr_assert(json_object_object_get_ex(cell, "reason", &v));
	cr_assert_str_eq(json_object_get_string(v), "ENOENT: no PMU");
	json_object_put(root);
	free(text);
	output_report_free(r);
}

Test(core_output, atomic_file)
{
	char dir[TEMP_PATH_SIZE];
	temp_template(dir, sizeof dir, "plumb-output-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/out.json", dir);
	output_file f;
	cr_assert_eq(output_file_open(&f, path, NULL), 0);
	fputs("partial", f.stream);
	cr_assert_eq(access(path, F_OK), -1, "final file must not exist before commit");
	output_file_abort(&f);
	cr_assert_eq(access(path, F_OK), -1);
	output_report *r = sample_report();
	cr_assert_eq(output_write_file(r, OUTPUT_JSON, path, NULL), 0);
	cr_assert_eq(access(path, F_OK), 0);
	output_report_free(r);
	plumb_status st;
	cr_assert_eq(output_write_file(r = sample_report(), OUTPUT_CSV, "/nonexistent-dir/x.csv", &st), -1);
	cr_assert(strstr(st.message, "/nonexistent-dir/x.csv"));
	output_report_free(r);
	unlink(path);
	rmdir(dir);
}

Test(core_output, json_parse_round_trip_is_identical)
{
	output_report *r = sample_report();
	char *first = render(r, OUTPUT_JSON);
	output_report *back = NULL;
	plumb_status st;
	cr_assert_eq(output_report_parse_json(first, &back, &st), 0, "%s", st.message);
	char *second = render(back, OUTPUT_JSON);
	cr_assert_str_eq(first, second);
	const output_table *t = output_table_find(back, "events");
	cr_assert_not_null(t);
	cr_assert_eq(output_row_count(t), 2);
	cr_assert_eq(output_column_index(t, "count"), 1);
	cr_assert_float_eq(output_cell_number(t, 0, 1), 1024.0, 1e-12);
	cr_assert_str_eq(output_cell_string(t, 1, 1), "unsupported");
	cr_assert_str_eq(output_cell_reason(t, 1, 1), "ENOENT: no PMU");
	cr_assert(isnan(output_cell_number(t, 1, 1)));
	free(first);
	free(second);
	output_report_free(back);
	output_report_free(r);
}

Test(core_output, json_parse_rejects_bad_input)
{
	const char *bad[] = {
		"", "{", "[]", "{\"schema\":\"other\"}",
		"{\"schema\":\"plumb-report\",\"command\":\"x\",\"schema_version\":99,\"tables\":[]}",
		"{\"schema\":\"plumb-report\",\"command\":\"x\",\"schema_version\":1}",
		"{\"schema\":\"plumb-report\",\"command\":\"x\",\"schema_version\":1,\"tables\":[{\"name\":\"t\"}]}",
		"{\"schema\":\"plumb-report\",\"command\":\"x\",\"schema_version\":1,\"tables\":[{\"name\":\"t\",\"columns\":[{\"name\":\"a\"}],\"rows\":[{\"a\":[1]}]}]}",
		"{\"schema\":\"plumb-report\",\"command\":\"x\",\"schema_version\":1,\"tables\":[{\"name\":\"t\",\"columns\":[{\"name\":\"a\"}],\"rows\":[{\"a\":{\"nostatus\":1}}]}]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		output_report *r = (output_report *)1;
		plumb_status st;
		cr_assert_eq(output_report_parse_json(bad[i], &r, &st), -1, "accepted: %s", bad[i]);
		cr_assert_null(r);
		cr_assert(strlen(st.message) > 0);
	}
}

/* Found by the lat_saved fuzzer (its 30-minute run): a saved report whose
 * table lists rows but no columns made output_row index a null cell array
 * (UBSan: applying zero offset to null pointer). */
Test(core_output, rows_of_a_table_without_columns)
{
	output_report *r = output_report_new("test");
	output_table *t = output_table_add(r, "empty", "No columns");
	output_row(t);
	output_row(t);
	cr_assert_eq(output_row_count(t), 2);
	char *text = render(r, OUTPUT_JSON);
	cr_assert_not_null(text);
	free(text);
	output_report_free(r);
}

#include "core/cpu.h"
/* A guest's brand string hides the model ("Intel(R) Xeon(R) Processor"):
 * topo names the generation from CPUID's family and model. */
Test(core_output, cpu_generations_are_named_from_family_and_model)
{
	cr_assert_str_eq(cpu_generation_name("GenuineIntel", 6, 207), "Emerald Rapids");
	cr_assert_str_eq(cpu_generation_name("GenuineIntel", 6, 143), "Sapphire Rapids");
	cr_assert_str_eq(cpu_generation_name("AuthenticAMD", 25, 17), "Zen 4");
	cr_assert_str_eq(cpu_generation_name("AuthenticAMD", 26, 2), "Zen 5");
	cr_assert_null(cpu_generation_name("GenuineIntel", 6, 1));
	cr_assert_null(cpu_generation_name("HygonGenuine", 24, 0));
	cr_assert_null(cpu_generation_name(NULL, 6, 207));
}

/* A KVM guest of a Sapphire Rapids host was given CPUID model 167 (Rocket
 * Lake, no AMX, doubles added in 4 cycles): its AMX or AVX512-FP16 make it
 * model 143 for what depends on the core (explain's LLVM model), said in
 * words; a model that has them, another vendor and Alder Lake's first parts
 * (AVX512-FP16 without AMX) keep theirs. */
Test(core_output, a_hidden_sapphire_rapids_core_is_told_by_its_features)
{
	cpu_features cpu = { .vendor = "GenuineIntel", .family = 6, .model = 167, .amx_tile = true, .avx512_fp16 = true };
	cpu_core_model_settle(&cpu);
	cr_assert_eq(cpu.core_model, 143);
	cr_assert(strstr(cpu.core_model_reason, "AMX"), "%s", cpu.core_model_reason);
	cpu = (cpu_features){ .vendor = "GenuineIntel", .family = 6, .model = 106, .avx512_fp16 = true };
	cpu_core_model_settle(&cpu);
	cr_assert_eq(cpu.core_model, 143);
	cr_assert(strstr(cpu.core_model_reason, "AVX512-FP16"), "%s", cpu.core_model_reason);
	/* an AMD guest shown Zen 3 (EPYC-Milan, model 1) with AVX-512: a Zen 4 */
	cpu = (cpu_features){ .vendor = "AuthenticAMD", .family = 0x19, .model = 1, .avx512f = true };
	cpu_core_model_settle(&cpu);
	cr_assert_eq(cpu.core_model, 0x11);
	cr_assert(strstr(cpu.core_model_reason, "AVX-512 says Zen 4"), "%s", cpu.core_model_reason);
	cr_assert_str_eq(cpu_generation_name(cpu.vendor, cpu.family, cpu.core_model), "Zen 4");
	static const cpu_features kept[] = {
		{ .vendor = "AuthenticAMD", .family = 0x19, .model = 1 },
		{ .vendor = "AuthenticAMD", .family = 0x19, .model = 0x61, .avx512f = true },
		{ .vendor = "AuthenticAMD", .family = 0x1A, .model = 2, .avx512f = true },
		{ .vendor = "GenuineIntel", .family = 6, .model = 167 },
		{ .vendor = "GenuineIntel", .family = 6, .model = 207, .amx_tile = true, .avx512_fp16 = true },
		{ .vendor = "GenuineIntel", .family = 6, .model = 0x97, .avx512_fp16 = true },
		{ .vendor = "AuthenticAMD", .family = 25, .model = 17, .avx512_fp16 = true },
	};
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
		cpu = kept[i];
		cpu_core_model_settle(&cpu);
		cr_assert_eq(cpu.core_model, kept[i].model);
		cr_assert_str_eq(cpu.core_model_reason, "");
	}
}

/* On a terminal of 40 columns the table keeps what fits from the left and
 * names the rest; without a width (files, --wide) every column. */
Test(core_output, a_table_fits_the_terminal_it_is_given)
{
	output_report *r = output_report_new("test");
	output_table *t = output_table_add(r, "wide", "Wide");
	const char *names[] = { "event", "total", "read", "write", "rate", "description" };
	for (int j = 0; j < 6; j++)
		output_column(t, names[j], NULL, 0);
	output_row(t);
	output_cell_text(t, "D1 misses");
	output_cell_integer(t, 4082);
	output_cell_integer(t, 3136);
	output_cell_integer(t, 946);
	output_cell_status(t, "unsupported", "the reason of a hidden column");
	output_cell_text(t, "first-level data cache misses, as cachegrind counts them");
	char *text = NULL;
	size_t text_length = 0;
	FILE *stream = open_memstream(&text, &text_length);
	cr_assert_eq(output_write_fitted(r, stream, 40, NULL), 0);
	fclose(stream);
	const char *line = text;
	while (*line) {
		size_t length = strcspn(line, "\n");
		cr_assert_leq(length, 40, "line of %zu: %.*s", length, (int)length, line);
		line += length + (line[length] == '\n');
	}
	cr_assert(strstr(text, "columns left out to fit 40") && strstr(text, "rate description;") &&
	          strstr(text, "--wide shows every"), "%s", text);
	cr_assert_null(strstr(text, "the reason of a hidden column"), "%s", text);
	free(text);
	text = render(r, OUTPUT_TABLE);
	cr_assert(strstr(text, "as cachegrind counts them") && !strstr(text, "left out"), "%s", text);
	free(text);
	output_report_free(r);
}

/* The reason under a table is wrapped to the terminal too: topo's "no PMU"
 * line ran to 110 columns on an 80-column terminal. */
Test(core_output, a_status_reason_is_wrapped_to_the_terminal)
{
	output_report *r = output_report_new("test");
	output_table *t = output_table_add(r, "timer", "Timer and counters");
	output_column(t, "property", NULL, 0);
	output_column(t, "value", NULL, 0);
	output_row(t);
	output_cell_text(t, "hardware_counters");
	output_cell_status(t, "unsupported", "ENOENT: no PMU (the kernel knows no hardware cycles event; typical of "
	                                     "a VM without PMU passthrough)");
	char *text = NULL;
	size_t text_length = 0;
	FILE *stream = open_memstream(&text, &text_length);
	cr_assert_eq(output_write_fitted(r, stream, 40, NULL), 0);
	fclose(stream);
	for (const char *line = text; *line;) {
		size_t length = strcspn(line, "\n");
		cr_assert_leq(length, 40, "line of %zu: %.*s", length, (int)length, line);
		line += length + (line[length] == '\n');
	}
	cr_assert(strstr(text, "  unsupported: ENOENT: no PMU") && strstr(text, "\n    ") &&
	          strstr(text, "passthrough)"), "%s", text);
	free(text);
	output_report_free(r);
}

/* Names come from traces, reports and programs someone handed over: in the
 * table a person reads, an escape sequence in a title, a cell, a reason, a
 * meta value or a note is shown as text, never sent to the terminal; the
 * JSON keeps the name as it is. */
Test(core_output, text_for_a_terminal_holds_no_escape_sequence)
{
	output_report *r = output_report_new("test");
	output_meta_text(r, "program", "ls\x1b]0;PWNED\x07");
	output_table *t = output_table_add(r, "regions", "Regions of \x1b[2Jthe run");
	output_column(t, "region", NULL, 0);
	output_column(t, "misses", NULL, 0);
	output_row(t);
	output_cell_text(t, "hot\x1b[31m\rloop");
	output_cell_status(t, "unsupported", "no PMU\x1b[A");
	output_note(r, "note \x1b[H\xc2\x9b" "1m");
	char *text = render(r, OUTPUT_TABLE);
	cr_assert_null(strchr(text, '\x1b'), "%s", text);
	cr_assert_null(strchr(text, '\r'));
	cr_assert_null(strstr(text, "\xc2\x9b"));
	cr_assert(strstr(text, "hot?[31m?loop") && strstr(text, "ls?]0;PWNED?") && strstr(text, "Regions of ?[2Jthe run") &&
	          strstr(text, "unsupported: no PMU?[A") && strstr(text, "note ?[H?1m"), "%s", text);
	free(text);
	char *json = render(r, OUTPUT_JSON);
	cr_assert(strstr(json, "hot\\u001b[31m\\rloop"), "%s", json);
	free(json);
	output_report_free(r);
}

/* The readers' lookups by name (the summary and the machine model share
 * them): a row by a text column, a cell by column name, and NaN/NULL for
 * anything missing, a NULL table included. */
Test(core_output, rows_and_cells_by_name)
{
	output_report *r = sample_report();
	const output_table *t = output_table_find(r, "events");
	cr_expect_eq(output_row_where(t, "event", "PAPI_L1_DCM"), 1);
	cr_expect_eq(output_row_where(t, "event", "cycles"), -1);
	cr_expect_eq(output_row_where(t, "nope", "page-faults"), -1);
	cr_expect_eq(output_row_where(NULL, "event", "page-faults"), -1);
	cr_expect_float_eq(output_number_at(t, 0, "count"), 1024, 1e-12);
	cr_expect(isnan(output_number_at(t, 1, "count")), "a status cell is no number");
	cr_expect(isnan(output_number_at(t, -1, "count")));
	cr_expect(isnan(output_number_at(t, 0, "nope")));
	cr_expect(isnan(output_number_at(NULL, 0, "count")));
	cr_expect_str_eq(output_text_at(t, 0, "event"), "page-faults");
	cr_expect_str_eq(output_text_at(t, 1, "count"), "unsupported");
	cr_expect_null(output_text_at(t, -1, "event"));
	cr_expect_null(output_text_at(NULL, 0, "event"));
	output_report_free(r);
}
