/* One escaping function per sink (src/core/escape.c): each is fed every
 * metacharacter of its language, and the gnuplot one is also run through
 * gnuplot itself, which must print the text back and run nothing. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/escape.h"
#include "../temp_folder.h"

typedef void (*escape_function)(FILE *, const char *);

static char *escaped(escape_function escape, const char *text)
{
	static char buffer[4096];
	memset(buffer, 0, sizeof buffer);
	FILE *f = fmemopen(buffer, sizeof buffer, "w");
	cr_assert_not_null(f);
	escape(f, text);
	cr_assert_eq(fclose(f), 0);
	return buffer;
}

Test(core_escape, gnuplot_strings_are_single_quoted)
{
	cr_assert_str_eq(escaped(escape_gnuplot, "plain"), "'plain'");
	cr_assert_str_eq(escaped(escape_gnuplot, ""), "''");
	cr_assert_str_eq(escaped(escape_gnuplot, "it's"), "('it'.\"'\".'s')");
	cr_assert_str_eq(escaped(escape_gnuplot, "''"), "(''.\"'\".''.\"'\".'')");
	/* Nothing is special in a single-quoted gnuplot string but the quote. */
	cr_assert_str_eq(escaped(escape_gnuplot, "`touch x` \"a\" \\n $1 @m"), "'`touch x` \"a\" \\n $1 @m'");
	/* A line break would end the command: the rest would be a command of its own. */
	cr_assert_str_eq(escaped(escape_gnuplot, "a\nsystem(id)\r\tb"), "'a system(id)  b'");
	cr_assert_str_eq(escaped(escape_gnuplot, NULL), "''");
}

/* gnuplot runs `...` in double-quoted strings; in single-quoted ones it must
 * not, and the string must come back as it went in. */
Test(core_escape, gnuplot_prints_the_text_back_and_runs_nothing)
{
	if (system("gnuplot --version >/dev/null 2>&1") != 0)
		cr_skip_test("gnuplot is not installed");
	char folder[TEMP_PATH_SIZE];
	temp_template(folder, sizeof folder, "plumb-escape-XXXXXX");
	cr_assert_not_null(mkdtemp(folder));
	char script[256], marker[256], command[600];
	snprintf(script, sizeof script, "%s/t.gp", folder);
	snprintf(marker, sizeof marker, "%s/PWNED", folder);
	char text[1024];
	snprintf(text, sizeof text, "x `touch %s` $(touch %s) \"q\" 'a''b' \\\" \\ @var ;system(\"touch %s\")\nprint 1", marker,
	         marker, marker);
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs("var = 'macro'\nprint ", f);
	escape_gnuplot(f, text);
	fputc('\n', f);
	cr_assert_eq(fclose(f), 0);
	snprintf(command, sizeof command, "gnuplot %s 2>&1", script);
	FILE *p = popen(command, "r");   /* the test's own fixed command */
	cr_assert_not_null(p);
	char line[2048] = "";
	cr_assert_not_null(fgets(line, sizeof line, p));
	pclose(p);
	line[strcspn(line, "\n")] = 0;
	char expected[1024];
	snprintf(expected, sizeof expected, "%s", text);
	expected[strcspn(expected, "\n")] = ' ';
	cr_assert_str_eq(line, expected);
	struct stat info;
	cr_assert_neq(stat(marker, &info), 0, "gnuplot ran a command from the text");
	unlink(script);
	rmdir(folder);
}

Test(core_escape, html_metacharacters_become_entities)
{
	cr_assert_str_eq(escaped(escape_html, "<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
	cr_assert_str_eq(escaped(escape_html, "a&b \"c\" 'd'"), "a&amp;b &quot;c&quot; &#39;d&#39;");
	cr_assert_str_eq(escaped(escape_html, "&lt;"), "&amp;lt;");
	cr_assert_str_eq(escaped(escape_html, NULL), "");   /* nothing written */
	char buffer[64];
	FILE *f = fmemopen(buffer, sizeof buffer, "w");
	escape_html_span(f, "<b>bold</b>", 4);
	fclose(f);
	cr_assert_str_eq(buffer, "&lt;b&gt;b");
}

Test(core_escape, csv_fields_follow_rfc_4180)
{
	cr_assert_str_eq(escaped(escape_csv, "plain"), "plain");
	cr_assert_str_eq(escaped(escape_csv, ""), "");
	cr_assert_str_eq(escaped(escape_csv, "a,b"), "\"a,b\"");
	cr_assert_str_eq(escaped(escape_csv, "say \"hi\""), "\"say \"\"hi\"\"\"");
	cr_assert_str_eq(escaped(escape_csv, "two\nlines"), "\"two\nlines\"");
	cr_assert_str_eq(escaped(escape_csv, "cr\rhere"), "\"cr\rhere\"");
}

/* OWASP's CSV injection: a cell starting with = + - @ tab or CR is a
 * formula to Excel and LibreOffice (=HYPERLINK, =cmd|...). */
Test(core_escape, csv_formulas_are_shown_as_text)
{
	cr_assert_str_eq(escaped(escape_csv, "=1+2"), "\"'=1+2\"");
	cr_assert_str_eq(escaped(escape_csv, "=cmd|' /C calc'!A0"), "\"'=cmd|' /C calc'!A0\"");
	cr_assert_str_eq(escaped(escape_csv, "+SUM(A1)"), "\"'+SUM(A1)\"");
	cr_assert_str_eq(escaped(escape_csv, "-2+3"), "\"'-2+3\"");
	cr_assert_str_eq(escaped(escape_csv, "@SUM(A1)"), "\"'@SUM(A1)\"");
	cr_assert_str_eq(escaped(escape_csv, "\t=1"), "\"'\t=1\"");
	cr_assert_str_eq(escaped(escape_csv, "\r=1"), "\"'\r=1\"");
	cr_assert_str_eq(escaped(escape_csv, "=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
	cr_assert_str_eq(escaped(escape_csv, "-0x1p3"), "\"'-0x1p3\"");
	/* Numbers stay numbers, and a lone sign is no formula. */
	cr_assert_str_eq(escaped(escape_csv, "-2.5"), "-2.5");
	cr_assert_str_eq(escaped(escape_csv, "+3"), "+3");
	cr_assert_str_eq(escaped(escape_csv, "-1e-09"), "-1e-09");
	cr_assert_str_eq(escaped(escape_csv, "-inf"), "-inf");
	cr_assert_str_eq(escaped(escape_csv, "-"), "-");
}

static void terminal(FILE *f, const char *text)
{
	escape_terminal_span(f, text, strlen(text));
}

Test(core_escape, terminal_control_characters_become_question_marks)
{
	/* OSC retitles the window, CSI moves the cursor and erases, CR and a
	 * C1 CSI (U+009B) overwrite the line; UTF-8 letters stay */
	cr_assert_str_eq(escaped(terminal, "a\x1b]0;PWNED\x07z"), "a?]0;PWNED?z");
	cr_assert_str_eq(escaped(terminal, "\x1b[2J\x1b[H\r\n\t\x7f"), "?[2J?[H????");
	cr_assert_str_eq(escaped(terminal, "caf\xc3\xa9 \xc2\x9b" "31m \xc2\xa0"), "caf\xc3\xa9 ?31m \xc2\xa0");
	char text[] = "x\x1b[31my\xc2\x9bz";
	escape_terminal_in_place(text);
	cr_assert_str_eq(text, "x?[31my?z");
	char lone[] = "end\xc2";
	escape_terminal_in_place(lone);
	cr_assert_str_eq(lone, "end\xc2", "a cut UTF-8 sequence is left as it is");
}

/* A name escape_gnuplot would change (a control character becomes a
 * space) is one plumb must not hand to gnuplot as a file name. */
Test(core_escape, gnuplot_exact_tells_a_name_gnuplot_would_change)
{
	cr_expect(escape_gnuplot_exact("v';touch X;'`y`$(z)"));
	cr_expect(escape_gnuplot_exact(""));
	cr_expect(escape_gnuplot_exact(NULL));
	cr_expect_not(escape_gnuplot_exact("v\nx"));
	cr_expect_not(escape_gnuplot_exact("v\rx"));
	cr_expect_not(escape_gnuplot_exact("v\x1b[2J"));
	cr_expect_not(escape_gnuplot_exact("v\x7f"));
	cr_expect(escape_gnuplot_exact("v\xc3\xa9"));   /* UTF-8 stays */
}
