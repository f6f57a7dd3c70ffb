/* One vocabulary across commands (docs/cli.md): one name per idea, the old
 * names kept as aliases for one release.  For every alias: the old and the new
 * name reach the same parser (the same bad value gives the same error line,
 * exit 2, never "unknown option"), --help shows only the new name, and the man
 * page still documents the old one as an alias. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

typedef struct alias {
	const char *command;
	const char *old_name;
	const char *new_name;
	const char *value;          /* a value the option's parser refuses */
	const char *rest[6];        /* further arguments the command needs */
} alias;

static const alias aliases[] = {
	{ "lat", "--min", "--min-size", "abc", { NULL } },
	{ "lat", "--max", "--max-size", "abc", { NULL } },
	{ "lat", "--line", "--line-size", "3", { NULL } },
	{ "lat", "--ci", "--target-ci", "0", { NULL } },
	{ "bw", "--cpus", "--cpu", "5-2", { NULL } },
	{ "bw", "-c", "-C", "5-2", { NULL } },
	{ "bw", "--min-runs", "--min-samples", "1", { NULL } },
	{ "c2c", "--cpus", "--cpu", "5-2", { NULL } },
	{ "c2c", "--trials", "--samples", "0", { NULL } },
	{ "loaded", "--cpus", "--cpu", "5-2", { NULL } },
	{ "geometry", "--points", "--points-per-octave", "0", { NULL } },
	{ "model", "--line", "--line-size", "x", { "--service", "100", NULL } },
	{ "validate", "--sim-preset", "--preset", "nosuch", { "--backend", "sim", "itv", NULL } },
	{ "validate", "--sim-set", "--set", "nosuch=1", { "--backend", "sim", "itv", NULL } },
	{ "report", "--save-dir", "--output-dir", "/proc/plumb-no-such/dir", { "--sections", "topo", "-o", "/proc/plumb-no-such/r.html", NULL } },
	{ "stat", "--repeat", "--runs", "0", { "--", "true", NULL } },
};

/* The short options the common vocabulary added, beside their long names. */
static const alias shorts[] = {
	{ "lat", "-C", "--cpu", "abc", { NULL } },
	{ "geometry", "-C", "--cpu", "abc", { NULL } },
	{ "c2c", "-C", "--cpu", "5-2", { NULL } },
	{ "loaded", "-C", "--cpu", "5-2", { NULL } },
	{ "perturb", "-C", "--cpu", "abc", { "--", "true", NULL } },
	{ "validate", "-C", "--cpu", "abc", { NULL } },
	{ "validate", "-r", "--runs", "0", { NULL } },
	{ "report", "-d", "--output-dir", "/proc/plumb-no-such/dir", { "--sections", "topo", "-o", "/proc/plumb-no-such/r.html", NULL } },
};

static cli_run run_with(const alias *a, const char *name)
{
	const char *argv[16];
	int n = 0;
	argv[n++] = a->command;
	argv[n++] = name;
	argv[n++] = a->value;
	for (int i = 0; a->rest[i]; i++)
		argv[n++] = a->rest[i];
	argv[n] = NULL;
	return cli_run_plumb(NULL, argv);
}

/* The stderr line with the option's name as typed replaced by NAME. */
static void assert_same_parser(const alias *a)
{
	cli_run old_run = run_with(a, a->old_name);
	cli_run new_run = run_with(a, a->new_name);
	cli_assert_usage_error(&new_run, a->command);
	cli_assert_usage_error(&old_run, a->command);
	cr_expect_null(strstr(old_run.err, "unknown option"), "plumb %s %s: %s", a->command, a->old_name, old_run.err);
	cr_expect_str_eq(old_run.err, new_run.err, "plumb %s: %s and %s answer differently", a->command,
	                 a->old_name, a->new_name);
	cli_run_free(&old_run);
	cli_run_free(&new_run);
}

/* Whether TEXT names the option NAME as a whole word ("--max" is not in "--max-size"). */
static bool names_option(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
		bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-' || p[-1] == '\\');
		bool end = !(isalnum((unsigned char)p[n]) || p[n] == '-');
		if (start && end)
			return true;
	}
	return false;
}

Test(vocabulary_cli, every_old_name_still_works_as_its_new_name)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		assert_same_parser(&aliases[i]);
	for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++)
		assert_same_parser(&shorts[i]);
}

Test(vocabulary_cli, help_shows_the_new_names_only)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
		const alias *a = &aliases[i];
		cli_run r = cli_run_plumbv(NULL, a->command, "--help", NULL);
		cr_assert_eq(r.exit_code, 0);
		cr_expect(names_option(r.out, a->new_name), "plumb %s --help lacks %s", a->command, a->new_name);
		/* stat keeps perf's --repeat in a parenthesis: the option line names --runs */
		if (strcmp(a->old_name, "--repeat") != 0)
			cr_expect(!names_option(r.out, a->old_name), "plumb %s --help still shows %s", a->command,
			          a->old_name);
		cli_run_free(&r);
	}
	for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
		cli_run r = cli_run_plumbv(NULL, shorts[i].command, "--help", NULL);
		char both[64];
		snprintf(both, sizeof both, "%s, %s", shorts[i].old_name, shorts[i].new_name);
		cr_expect_not_null(strstr(r.out, both), "plumb %s --help lacks \"%s\"", shorts[i].command, both);
		cli_run_free(&r);
	}
}

/* man pages write a dash as "\-": "\-\-min" for --min. */
static void man_form(const char *name, char *out, size_t size)
{
	size_t used = 0;
	for (const char *p = name; *p && used + 3 < size; p++) {
		if (*p == '-')
			out[used++] = '\\';
		out[used++] = *p;
	}
	out[used] = '\0';
}

Test(vocabulary_cli, man_pages_document_the_aliases)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
		const alias *a = &aliases[i];
		char path[4096];
		snprintf(path, sizeof path, "%s/man/plumb-%s.1", cli_source_dir(), a->command);
		FILE *f = fopen(path, "r");
		cr_assert_not_null(f, "cannot open %s", path);
		char line[4096], old_name[64];
		man_form(a->old_name, old_name, sizeof old_name);
		bool documented = false;
		while (fgets(line, sizeof line, f))
			if (strstr(line, old_name) && strstr(line, "alias"))
				documented = true;
		fclose(f);
		cr_expect(documented, "%s: no line names %s as an alias", path, a->old_name);
	}
}
