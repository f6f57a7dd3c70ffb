/* Every command's --help, walked from plumb --help's own list: it prints
 * its usage on stdout and exits 0, its usage says "[options]" where the
 * command takes options (some did not, some said "[OPTIONS]"), and lat's
 * stated run time is the man page's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

/* The commands plumb --help lists: lines "  NAME  what it does". */
static size_t listed_commands(char names[][32], size_t max)
{
	cli_run r = cli_run_plumbv(NULL, "--help", NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	size_t n = 0;
	for (const char *line = r.out; *line && n < max;) {
		size_t length = strcspn(line, "\n");
		if (length > 3 && line[0] == ' ' && line[1] == ' ' && line[2] >= 'a' && line[2] <= 'z') {
			size_t word = strcspn(line + 2, " \n");
			if (word < 32 && line[2 + word] == ' ') {
				snprintf(names[n], 32, "%.*s", (int)word, line + 2);
				n++;
			}
		}
		line += length + (line[length] == '\n');
	}
	cli_run_free(&r);
	return n;
}

Test(help_cli, every_command_usage_says_options)
{
	char names[64][32];
	size_t n = listed_commands(names, 64);
	cr_assert_geq(n, 15, "plumb --help lists %zu commands", n);
	for (size_t i = 0; i < n; i++) {
		cli_run r = cli_run_plumbv(NULL, names[i], "--help", NULL);
		cr_assert_eq(r.exit_code, 0, "plumb %s --help: exit %d: %s", names[i], r.exit_code, r.err);
		cr_assert_str_eq(r.err, "", "plumb %s --help wrote on stderr: %s", names[i], r.err);
		cr_assert(!strncmp(r.out, "usage: ", 7), "plumb %s --help: %s", names[i], r.out);
		cr_assert_null(strstr(r.out, "[OPTIONS]"), "plumb %s --help says [OPTIONS], the others [options]", names[i]);
		/* the usage block: up to the first empty line */
		const char *end = strstr(r.out, "\n\n");
		size_t usage = end ? (size_t)(end - r.out) : strlen(r.out);
		char *block = strndup(r.out, usage);
		cr_assert_not_null(block);
		size_t first = strcspn(block, "\n");
		if (!strcmp(names[i], "trace")) {
			/* trace's subcommands each list every option they take */
			cr_assert(strstr(block, "[--"), "%s", block);
		} else {
			cr_assert(memmem(block, first, "[options]", 9), "plumb %s: the usage does not say [options]: %.*s",
			          names[i], (int)first, block);
		}
		/* every command takes -h, --help and says so */
		cr_assert(strstr(r.out, "--help"), "plumb %s --help does not list --help", names[i]);
		free(block);
		cli_run_free(&r);
	}
}

/* lat's help said one run time and its man page another. */
Test(help_cli, lat_help_and_man_page_give_one_run_time)
{
	cli_run r = cli_run_plumbv(NULL, "lat", "--help", NULL);
	cr_assert_eq(r.exit_code, 0);
	const char *at = strstr(r.out, "takes ");
	cr_assert_not_null(at, "%s", r.out);
	int low = 0, high = 0;
	cr_assert_eq(sscanf(at, "takes %d-%d s", &low, &high), 2, "%s", at);
	cli_run_free(&r);
	char path[1024];
	snprintf(path, sizeof path, "%s/man/plumb-lat.1", cli_source_dir());
	char *man = cli_read_file(path, NULL);
	cr_assert_not_null(man);
	char expect[64];
	snprintf(expect, sizeof expect, "in %d to %d seconds", low, high);
	cr_assert(strstr(man, expect), "the help says %d-%d s, the man page not '%s'", low, high, expect);
	free(man);
}

/* The longest line of TEXT, in characters (bytes: the help is ASCII). */
static size_t longest_line(const char *text, char *line_out, size_t line_size)
{
	size_t longest = 0;
	for (const char *line = text; *line;) {
		size_t length = strcspn(line, "\n");
		if (length > longest) {
			longest = length;
			snprintf(line_out, line_size, "%.*s", (int)length, line);
		}
		line += length + (line[length] == '\n');
	}
	return longest;
}

/* perf's, git's and likwid's help fit an 80-column terminal; plumb's ran to
 * 105 columns (report --sections), 102 (trace filter's usage) and 93 (the
 * command list's c2c line), and wrapped into a ragged block there. */
Test(help_cli, every_help_fits_80_columns)
{
	char names[64][32];
	size_t n = listed_commands(names, 64);
	char line[512];
	cli_run top = cli_run_plumbv(NULL, "--help", NULL);
	cr_assert_leq(longest_line(top.out, line, sizeof line), 80, "plumb --help: %s", line);
	cli_run_free(&top);
	for (size_t i = 0; i < n; i++) {
		cli_run r = cli_run_plumbv(NULL, names[i], "--help", NULL);
		cr_assert_eq(r.exit_code, 0, "plumb %s --help: %s", names[i], r.err);
		cr_assert_leq(longest_line(r.out, line, sizeof line), 80, "plumb %s --help, %zu columns: %s", names[i],
		              strlen(line), line);
		cli_run_free(&r);
	}
	static const char *const subcommands[][2] = { { "trace", "convert" }, { "trace", "record" },
	                                              { "trace", "filter" }, { "trace", "stats" } };
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
		cli_run r = cli_run_plumbv(NULL, subcommands[i][0], subcommands[i][1], "--help", NULL);
		cr_assert_eq(r.exit_code, 0, "plumb %s %s --help: %s", subcommands[i][0], subcommands[i][1], r.err);
		cr_assert_leq(longest_line(r.out, line, sizeof line), 80, "plumb %s %s --help: %s", subcommands[i][0],
		              subcommands[i][1], line);
		cli_run_free(&r);
	}
}
