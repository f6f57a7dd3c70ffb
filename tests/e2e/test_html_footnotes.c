/* The HTML pages (plumb report, plumb explain --html) as printed: a reason
 * shown on hover (title=) vanishes in print and PDF, so each one is also a
 * visible footnote; explain's headers say each unit once, and its ratio
 * column stands beside the measurement instead of past a screen's width. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "run.h"
#include "../temp_folder.h"

static void temp_path(char *out, size_t length, const char *name)
{
	snprintf(out, length, "%s/plumb-fn-%ld-%s", temp_root(), (long)getpid(), name);
}

/* Every title="REASON" in the page is also a footnote <li>REASON</li>;
 * returns how many titles there were. */
static size_t assert_titles_are_footnotes(const char *page)
{
	size_t titles = 0;
	for (const char *p = strstr(page, "title=\""); p; p = strstr(p + 1, "title=\"")) {
		const char *start = p + 7, *end = strchr(start, '"');
		cr_assert_not_null(end);
		char item[2048];
		snprintf(item, sizeof item, "<li>%.*s</li>", (int)(end - start), start);
		cr_assert(strstr(page, item), "a reason only on hover: %.*s", (int)(end - start), start);
		/* and a footnote mark right after the cell's text */
		const char *close = strstr(end, "</td>"), *mark = strstr(end, "<sup class=fn>");
		cr_assert(mark && close && mark < close, "no footnote mark for: %.*s", (int)(end - start), start);
		titles++;
	}
	return titles;
}

Test(html_footnotes, report_reasons_on_hover_are_footnotes_too, .timeout = 120)
{
	char page[512], json[512], dir[1024], files[5][1100];
	temp_path(page, sizeof page, "report.html");
	temp_path(json, sizeof json, "report.json");
	snprintf(dir, sizeof dir, "%s/tests/data/report_vm_xeon", cli_source_dir());
	const char *names[] = { "topo", "lat", "bw", "loaded", "model" };
	for (int i = 0; i < 5; i++)
		snprintf(files[i], sizeof files[i], "%s/%s.json", dir, names[i]);
	cli_run r = cli_run_plumbv(NULL, "report", "-o", page, "--from", files[0], files[1], files[2], files[3], files[4], NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cli_run_free(&r);
	char *text = cli_read_file(page, NULL);
	cr_assert_not_null(text);
	/* these saved sections have no c2c, geometry or validate: their
	 * figures are missing, with reasons */
	cr_assert_gt(assert_titles_are_footnotes(text), 0, "no reason on hover to check");
	cr_assert(strstr(text, "<ol class=footnotes>"));
	free(text);
	unlink(page);
	unlink(json);
}

/* explain's page said "latency ns ns" (a column named latency_ns with its
 * unit beside it) and put the ratio seventeenth, off the screen. */
Test(html_footnotes, explain_page_units_once_ratio_in_view_reasons_printed, .timeout = 180)
{
	if (access("/bin/true", X_OK) != 0)
		cr_skip_test("no /bin/true");
	char page[512], machine[1024];
	temp_path(page, sizeof page, "explain.html");
	snprintf(machine, sizeof machine, "%s/tests/data/report_vm_xeon/lat.json", cli_source_dir());
	cli_run r = cli_run_plumbv(NULL, "explain", "--runs", "1", "--machine", machine, "--html", page, "--", "/bin/true",
	                           NULL);
	if (r.exit_code != 0 && strstr(r.err, "valgrind"))
		cr_skip_test("explain cannot run here: %s", r.err);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	/* the table on the terminal: the ratio beside the measurement */
	const char *measured = strstr(r.out, "measured_ns"), *ratio = strstr(r.out, "ratio["), *mean = strstr(r.out, "mean_ns");
	cr_assert(measured && ratio && mean && measured < ratio && ratio < mean, "%s", r.out);
	cli_run_free(&r);
	char *text = cli_read_file(page, NULL);
	cr_assert_not_null(text);
	cr_assert_null(strstr(text, "ns <span class=unit>ns</span>"), "a unit said twice");
	cr_assert_null(strstr(text, "bytes <span class=unit>bytes</span>"), "a unit said twice");
	cr_assert(strstr(text, "<th>measured <span class=unit>ns</span></th>"), "%s", text);
	/* ratio is among the regions table's first six headers */
	const char *table = strstr(text, "<th>region</th>");
	cr_assert_not_null(table);
	const char *th = table;
	int column = 0;
	while (th && column < 6 && strncmp(th, "<th>ratio", 9) != 0) {
		th = strstr(th + 1, "<th>");
		column++;
	}
	cr_assert(th && !strncmp(th, "<th>ratio", 9), "ratio is not among the first six columns");
	assert_titles_are_footnotes(text);
	free(text);
	unlink(page);
}
