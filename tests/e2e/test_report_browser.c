/* The report as a person sees it: rendered by Debian's headless Chromium,
 * the DOM checked for the summary and every section, printed to PDF (pages
 * counted), photographed, and its visible text searched for raw identifiers
 * (column names like gbps_median, PAPI error codes, absolute paths). */
#include <criterion/criterion.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run.h"
#include "../temp_folder.h"

#define MAX_PAGES 12

static const char *chromium(void)
{
	static const char *const candidates[] = { "/usr/bin/chromium", "/usr/bin/chromium-browser", NULL };
	for (size_t i = 0; candidates[i]; i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* Runs chromium headless on url with one action; its chatter goes to a log
 * in its profile folder, removed after (it once went to STDOUT_PATH.log,
 * which for /dev/null made a regular file /dev/null.log on the machine). */
static int run_chromium(const char *browser, const char *action, const char *url, const char *stdout_path)
{
	char profile[TEMP_PATH_SIZE];
	temp_template(profile, sizeof profile, "plumb-chromium-XXXXXX");
	cr_assert_not_null(mkdtemp(profile));
	char command[4096];
	snprintf(command, sizeof command,
	         "timeout 90 %s --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
	         "--disable-sync --no-first-run --disable-dev-shm-usage --user-data-dir=%s %s '%s' >%s 2>%s/chromium.log",
	         browser, profile, action, url, stdout_path, profile);
	int rc = system(command);
	snprintf(command, sizeof command, "rm -rf %s", profile);
	if (system(command) != 0)
		cr_log_warn("could not remove %s", profile);
	return rc;
}

/* The text a reader sees: no markup, no <style>, and no content of a
 * collapsed <details> beyond its <summary> line. */
static char *visible_text(const char *dom)
{
	size_t n = strlen(dom);
	char *out = malloc(n + 1);
	cr_assert_not_null(out);
	size_t o = 0;
	int details = 0;
	for (size_t i = 0; i < n;) {
		if (!strncmp(dom + i, "<style", 6)) {
			const char *end = strstr(dom + i, "</style>");
			i = end ? (size_t)(end - dom) + 8 : n;
			continue;
		}
		if (!strncmp(dom + i, "<details", 8) && strncmp(dom + i, "<details open", 13) != 0) {
			details++;
			i += 8;
			continue;
		}
		if (!strncmp(dom + i, "</details>", 10)) {
			details -= details > 0;
			i += 10;
			continue;
		}
		if (details && !strncmp(dom + i, "<summary>", 9)) {
			const char *end = strstr(dom + i, "</summary>");
			size_t stop = end ? (size_t)(end - dom) : n;
			for (i += 9; i < stop; i++)
				out[o++] = dom[i];
			out[o++] = '\n';
			continue;
		}
		if (dom[i] == '<') {
			const char *end = strchr(dom + i, '>');
			i = end ? (size_t)(end - dom) + 1 : n;
			out[o++] = ' ';
			continue;
		}
		if (!details)
			out[o++] = dom[i];
		i++;
	}
	out[o] = 0;
	return out;
}

/* Names a reader has to type as they are: the kernel's interface and
 * libpfm4's native event names. */
static int allowed_identifier(const char *word)
{
	static const char *const allowed[] = { "perf_event", "perf_event_open", "perf_event_paranoid", NULL };
	for (size_t i = 0; allowed[i]; i++)
		if (!strcmp(word, allowed[i]))
			return 1;
	return 0;
}

static void assert_no_raw_identifiers(const char *text)
{
	regex_t snake, papi_code, path;
	cr_assert_eq(regcomp(&snake, "(^|[^A-Za-z0-9_:])([a-z][a-z0-9]*_[a-z0-9_]+)($|[^A-Za-z0-9_:])", REG_EXTENDED), 0);
	cr_assert_eq(regcomp(&papi_code, "\\(-[0-9]+\\)", REG_EXTENDED), 0);
	cr_assert_eq(regcomp(&path, "(^|[^A-Za-z0-9_.~])/(home|tmp|root)/", REG_EXTENDED), 0);
	regmatch_t m[4];
	for (const char *p = text; regexec(&snake, p, 4, m, 0) == 0; p += m[2].rm_eo) {
		char word[128];
		snprintf(word, sizeof word, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
		/* libpfm4 names (amd64_fam19h_zen4::EVENT) are a source's own names. */
		if (!allowed_identifier(word) && strncmp(p + m[2].rm_eo, "::", 2) != 0) {
			char context[160];
			const char *from = p + m[2].rm_so > text + 60 ? p + m[2].rm_so - 60 : text;
			snprintf(context, sizeof context, "%.*s", 140, from);
			cr_assert_fail("raw identifier '%s' in the visible text: ...%s...", word, context);
		}
	}
	cr_assert_neq(regexec(&papi_code, text, 1, m, 0), 0, "an error code in the visible text: %.40s", text + m[0].rm_so);
	cr_assert_neq(regexec(&path, text, 1, m, 0), 0, "an absolute path in the visible text: %.60s", text + m[0].rm_so);
	regfree(&snake);
	regfree(&papi_code);
	regfree(&path);
}

/* Pages in a PDF: pdfinfo when installed, else the /Type /Page objects. */
static int pdf_pages(const char *pdf)
{
	char command[1024], out[1024];
	snprintf(command, sizeof command, "pdfinfo '%s' 2>/dev/null", pdf);
	FILE *p = popen(command, "r");
	int pages = -1;
	while (p && fgets(out, sizeof out, p))
		if (sscanf(out, "Pages: %d", &pages) == 1)
			break;
	if (p)
		pclose(p);
	if (pages >= 0)
		return pages;
	size_t length;
	char *data = cli_read_file(pdf, &length);
	cr_assert_not_null(data);
	pages = 0;
	for (size_t i = 0; i + 10 < length; i++)
		if (!memcmp(data + i, "/Type", 5)) {
			size_t j = i + 5;
			while (j < length && data[j] == ' ')
				j++;
			if (j + 5 <= length && !memcmp(data + j, "/Page", 5) && (j + 5 == length || data[j + 5] != 's'))
				pages++;
		}
	free(data);
	return pages;
}

Test(report_browser, quick_report_reads_and_prints, .timeout = 180)
{
	const char *browser = chromium();
	if (!browser)
		cr_skip_test("chromium is not installed (apt-get install chromium): the report cannot be rendered as a reader sees it");
	char html[512], dom[600], pdf[600], png[600], json[600];
	snprintf(html, sizeof html, "%s", cli_temp_path("report.html"));
	snprintf(json, sizeof json, "%.*s.json", (int)strlen(html) - 5, html);
	cli_run r = cli_run_plumbv(NULL, "report", "--quick", "-o", html, NULL);
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	/* The terminal gets the summary, then the files. */
	cr_assert(strstr(r.out, "Summary:"), "%s", r.out);
	cr_assert(strstr(r.out, "L1 "), "%s", r.out);
	cr_assert(strstr(r.out, "Can I trust my counters?"), "%s", r.out);
	cr_assert(strstr(r.out, html) > strstr(r.out, "Summary:"), "%s", r.out);
	cr_assert(strstr(r.out, json), "%s", r.out);
	cli_run_free(&r);
	struct stat st;
	cr_assert_eq(stat(json, &st), 0, "report.json is written beside the page");

	char url[700];
	snprintf(url, sizeof url, "file://%s", html);
	snprintf(dom, sizeof dom, "%s.dom", html);
	snprintf(pdf, sizeof pdf, "%s.pdf", html);
	snprintf(png, sizeof png, "%s.png", html);
	cr_assert_eq(run_chromium(browser, "--dump-dom", url, dom), 0, "chromium --dump-dom failed");
	char *text = cli_read_file(dom, NULL);
	cr_assert_not_null(text);
	const char *summary = strstr(text, "id=\"summary\"");
	cr_assert_not_null(summary, "no #summary in the rendered page");
	static const char *const sections[] = { "topo", "lat", "bw", "c2c", "loaded", "model" };
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		char id[64];
		snprintf(id, sizeof id, "<section id=\"%s\"", sections[i]);
		const char *at = strstr(text, id);
		cr_assert_not_null(at, "section %s missing from the rendered page", sections[i]);
		cr_assert(at > summary, "the summary comes before section %s", sections[i]);
	}
	cr_assert_null(strstr(text, "Not measured"), "a section failed in the quick report");
	cr_assert(strstr(text, "<svg"), "no chart rendered");
	/* Opens without a network: nothing loaded from elsewhere. */
	cr_assert_null(strstr(text, "src=\"http"), "an external resource");
	cr_assert_null(strstr(text, "<link"), "an external stylesheet");
	cr_assert_null(strstr(text, "<script src"), "an external script");
	char *visible = visible_text(text);
	assert_no_raw_identifiers(visible);
	free(visible);
	free(text);

	char action[700];
	snprintf(action, sizeof action, "--no-pdf-header-footer --print-to-pdf=%s", pdf);
	cr_assert_eq(run_chromium(browser, action, url, "/dev/null"), 0, "chromium --print-to-pdf failed");
	int pages = pdf_pages(pdf);
	cr_assert_gt(pages, 0, "no pages in the PDF");
	cr_assert_leq(pages, MAX_PAGES, "the report prints to %d pages (at most %d)", pages, MAX_PAGES);

	snprintf(action, sizeof action, "--window-size=1400,2400 --screenshot=%s", png);
	cr_assert_eq(run_chromium(browser, action, url, "/dev/null"), 0, "chromium --screenshot failed");
	size_t length = 0;
	char *image = cli_read_file(png, &length);
	cr_assert(image && length > 8 && !memcmp(image, "\x89PNG", 4), "the screenshot is not a PNG");
	free(image);
}
