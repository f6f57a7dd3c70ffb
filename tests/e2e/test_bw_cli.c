/* plumb bw end to end: help, a short JSON run, bad arguments, and a check
 * of the generated kernel code in the built program. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bandwidth/bandwidth.h"
#include "run.h"

Test(bw_cli, help)
{
	cli_run r = cli_run_plumbv(NULL, "bw", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	cr_assert(strstr(r.out, "usage: plumb bw"));
	cr_assert(strstr(r.out, "--kernels"));
	cli_run_free(&r);
}

Test(bw_cli, bad_arguments_give_one_line_and_exit_2)
{
	const char *cases[][4] = {
		{ "bw", "--sizes", "12Q", NULL },
		{ "bw", "--sizes", "1K", NULL },
		{ "bw", "--kernels", "read,bogus", NULL },
		{ "bw", "--isa", "sse9", NULL },
		{ "bw", "--threads", "0", NULL },
		{ "bw", "--threads", "4096", NULL },
		{ "bw", "--pages", "giant", NULL },
		{ "bw", "--time-cap", "-5", NULL },
		{ "bw", "--cpus", "0,0", NULL },
		{ "bw", "--cpus", "0-", NULL },
		{ "bw", "--bogus", NULL, NULL },
		{ "bw", "extra", NULL, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cli_run r = cli_run_plumb(NULL, cases[i]);
		cli_assert_usage_error(&r, "bw");
		cli_run_free(&r);
	}
}

Test(bw_cli, more_threads_than_cpus_is_a_usage_error)
{
	cli_run r = cli_run_plumbv(NULL, "bw", "--threads", "1000", NULL);
	cli_assert_usage_error(&r, "bw");
	cr_assert(strstr(r.err, "CPUs"));
	cli_run_free(&r);
}

Test(bw_cli, short_json_run, .timeout = 60)
{
	cli_run r = cli_run_plumbv(NULL, "bw", "--threads", "1", "--kernels", "read,copy-nt", "--sizes", "16K,8M",
	                           "--time-cap", "20", "--json", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	json_object *root = json_tokener_parse(r.out);
	cr_assert_not_null(root, "not JSON: %s", r.out);
	json_object *command;
	cr_assert(json_object_object_get_ex(root, "command", &command));
	cr_assert_str_eq(json_object_get_string(command), "bw");
	json_object *rows, *table = cli_json_table(root, "bandwidth");
	cr_assert(json_object_object_get_ex(table, "rows", &rows));
	cr_assert_eq(json_object_array_length(rows), 4, "2 sizes x 2 kernels");
	for (size_t i = 0; i < 4; i++) {
		json_object *row = json_object_array_get_idx(rows, i), *v;
		cr_assert(json_object_object_get_ex(row, "gbps_median", &v));
		cr_assert(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int));
		cr_assert_gt(json_object_get_double(v), 0);
		cr_assert(json_object_object_get_ex(row, "quality", &v));
		const char *quality = json_object_get_string(v);
		cr_assert(strcmp(quality, "ok") == 0 || strcmp(quality, "noisy") == 0);
		cr_assert(json_object_object_get_ex(row, "cv", &v));
		cr_assert(json_object_object_get_ex(row, "level", &v));
	}
	json_object *level_rows, *levels = cli_json_table(root, "levels");
	cr_assert(json_object_object_get_ex(levels, "rows", &level_rows));
	cr_assert_eq(json_object_array_length(level_rows), 2);
	json_object *first = json_object_array_get_idx(level_rows, 0), *l1;
	cr_assert(json_object_object_get_ex(first, "L1", &l1));
	cr_assert_gt(json_object_get_double(l1), 0);
	json_object_put(root);
	cli_run_free(&r);
}

/* The kernels must be what their source says: the vector width of their
 * ISA, streaming stores where they claim them, and no call out to
 * memcpy/memset (which a compiler may substitute for a copy loop). */
static char *disassemble(const char *symbol)
{
	char command[1024];
	snprintf(command, sizeof command, "objdump -d --no-show-raw-insn --disassemble=%s '%s' 2>/dev/null",
	         symbol, getenv("PLUMB_BIN"));
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	size_t capacity = 1 << 16, length = 0;
	char *text = malloc(capacity);
	size_t n;
	while ((n = fread(text + length, 1, capacity - length - 1, pipe)) > 0) {
		length += n;
		if (capacity - length < 2) {
			capacity *= 2;
			text = realloc(text, capacity);
		}
	}
	text[length] = 0;
	pclose(pipe);
	return text;
}

Test(bw_cli, kernels_compile_to_what_they_claim)
{
	if (system("objdump --version >/dev/null 2>&1") != 0)
		cr_skip_test("objdump is not installed");
	for (int isa = 0; isa < BANDWIDTH_ISAS; isa++)
		for (int k = 0; bandwidth_kernel_names[k]; k++) {
			const bandwidth_kernel *kernel = bandwidth_kernel_by_name(bandwidth_kernel_names[k], (bandwidth_isa)isa);
			char *code = disassemble(kernel->symbol);
			cr_assert(strstr(code, "ret"), "%s not found in the program", kernel->symbol);
			cr_assert_null(strstr(code, "<memcpy"), "%s calls memcpy", kernel->symbol);
			cr_assert_null(strstr(code, "<memset"), "%s calls memset", kernel->symbol);
			cr_assert_null(strstr(code, "<memmove"), "%s calls memmove", kernel->symbol);
			if (isa == BANDWIDTH_ISA_AVX512)
				cr_assert(strstr(code, "zmm"), "%s uses no 512-bit register", kernel->symbol);
			else if (isa == BANDWIDTH_ISA_AVX2)
				cr_assert(strstr(code, "ymm") && !strstr(code, "zmm"), "%s is not 256-bit", kernel->symbol);
			else
				cr_assert(!strstr(code, "ymm") && !strstr(code, "zmm"), "%s is not scalar", kernel->symbol);
			if (kernel->nontemporal) {
				/* clang writes vmovntps for the same store; either is a
				 * streaming store of the whole register. */
				cr_assert(isa == BANDWIDTH_ISA_SCALAR ? strstr(code, "movnti") != NULL
				          : strstr(code, "vmovntpd") != NULL || strstr(code, "vmovntps") != NULL,
				          "%s has no streaming store", kernel->symbol);
				cr_assert(strstr(code, "sfence"), "%s has no sfence", kernel->symbol);
			} else {
				cr_assert_null(strstr(code, "movnt"), "%s streams", kernel->symbol);
			}
			if (kernel->operation == BANDWIDTH_READ)
				cr_assert(strstr(code, "addpd") || strstr(code, "addsd"), "%s has no adds", kernel->symbol);
			if (kernel->operation == BANDWIDTH_TRIAD)
				cr_assert(strstr(code, "fmadd") || strstr(code, "mulpd") || strstr(code, "mulsd"),
				          "%s has no multiply", kernel->symbol);
			free(code);
		}
}
