/* User-facing text cites papers by author and year (Hristea 1997, Salayandia
 * 2002, ...), never the project's internal names for them ("seed 001", "the
 * thesis", "the seeds").  Checks every command's --help, the README and the
 * man pages, so those words do not come back. */
#include <criterion/criterion.h>
#include <errno.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

static const char *const banned[] = {"seed 0", "seed00", "thesis", "the seeds", "seeds'"};

/* The banned phrase TEXT contains (case-insensitive), or NULL. */
static const char *banned_in(const char *text)
{
	size_t n = strlen(text);
	char *lower = malloc(n + 1);
	cr_assert_not_null(lower);
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)tolower((unsigned char)text[i]);
	const char *found = NULL;
	for (size_t i = 0; i < sizeof banned / sizeof banned[0] && !found; i++)
		if (strstr(lower, banned[i]))
			found = banned[i];
	free(lower);
	return found;
}

static void check_file(const char *path)
{
	char *text = cli_read_file(path, NULL);
	cr_assert_not_null(text, "cannot read %s: %s", path, strerror(errno));
	const char *word = banned_in(text);
	cr_expect_null(word, "%s says \"%s\": cite the paper by author and year", path, word);
	free(text);
}

Test(wording_cli, help_texts_cite_authors)
{
	cli_run top = cli_run_plumbv(NULL, "--help", NULL);
	cr_assert_eq(top.exit_code, 0);
	cr_expect_null(banned_in(top.out), "plumb --help: %s", top.out);
	const char *table = strstr(top.out, "Commands:\n");
	cr_assert_not_null(table, "no command table in plumb --help");
	int commands = 0;
	for (const char *line = strchr(table, '\n') + 1; strncmp(line, "  ", 2) == 0;
	     line = strchr(line, '\n') + 1) {
		char name[32];
		cr_assert_eq(sscanf(line, " %31s", name), 1);
		cli_run r = cli_run_plumbv(NULL, name, "--help", NULL);
		cr_expect_eq(r.exit_code, 0, "plumb %s --help exits %d", name, r.exit_code);
		const char *word = banned_in(r.out);
		cr_expect_null(word, "plumb %s --help says \"%s\": cite the paper by author and year",
		               name, word);
		cli_run_free(&r);
		commands++;
	}
	cr_assert_geq(commands, 10, "only %d commands found in plumb --help", commands);
	cli_run_free(&top);
}

Test(wording_cli, readme_and_man_pages_cite_authors)
{
	char path[4096 + 512];
	snprintf(path, sizeof path, "%s/README.md", cli_source_dir());
	check_file(path);
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/man", cli_source_dir());
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "cannot open %s", dir);
	int pages = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n < 3 || strcmp(e->d_name + n - 2, ".1") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		check_file(path);
		pages++;
	}
	closedir(d);
	cr_assert_geq(pages, 10, "only %d man pages in %s", pages, dir);
}

/* Every section-1 page shows how the command is used: bw, geometry, report,
 * topo and plumb(1) itself had no EXAMPLES. */
Test(wording_cli, every_man_page_has_examples)
{
	char dir[4096], path[4096 + 512];
	snprintf(dir, sizeof dir, "%s/man", cli_source_dir());
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "cannot open %s", dir);
	int pages = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n < 3 || strcmp(e->d_name + n - 2, ".1") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		char *text = cli_read_file(path, NULL);
		cr_assert_not_null(text, "cannot read %s", path);
		cr_expect(strstr(text, "\n.SH EXAMPLES\n"), "%s has no EXAMPLES section", e->d_name);
		free(text);
		pages++;
	}
	closedir(d);
	cr_assert_geq(pages, 10);
}
