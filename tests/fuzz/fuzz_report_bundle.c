/* Fuzzes the reader of report.json (report_bundle_read, behind plumb report
 * --from and --compare, plumb explain --machine): the file a user is handed
 * by someone else.  Any input must either be refused with a message, or be
 * read into sections that the page's tables render (report_html_table, with
 * every text escaped) and that plumb writes back as report.json and reads
 * again: never a crash, a leak or undefined behaviour.  No chart is drawn
 * (that starts gnuplot, a process per input). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "report/report.h"

/* An in-memory file that report_bundle_read and output_file_open can name. */
static int memory_file(const uint8_t *data, size_t size, char *path, size_t length)
{
	int fd = memfd_create("report", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, length, "/proc/self/fd/%d", fd);
	return fd;
}

static void render(const report_bundle *b)
{
	char *page = NULL;
	size_t length = 0;
	FILE *f = open_memstream(&page, &length);
	if (!f)
		return;
	for (size_t i = 0; i < b->count; i++)
		for (size_t t = 0; b->sections[i] && t < output_table_count(b->sections[i]); t++)
			report_html_table(f, output_table_at(b->sections[i], t), t > 0);
	for (size_t t = 0; b->summary && t < output_table_count(b->summary); t++)
		report_html_table(f, output_table_at(b->summary, t), false);
	fclose(f);
	/* Every '<' in the page is one of the page's own tags (the tables',
	 * and the footnotes' ol, li and sup). */
	for (const char *p = page; p && (p = strchr(p, '<')); p++)
		if (!p[1] || !strchr("/tdhspbfol", p[1]))
			abort();
	free(page);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = memory_file(data, size, path, sizeof path);
	if (fd < 0)
		return 0;
	report_bundle b;
	plumb_status status;
	memset(&status, 0, sizeof status);
	if (report_bundle_read(path, &b, &status) == 0) {
		render(&b);
		char written[64];
		int out = memory_file(NULL, 0, written, sizeof written);
		if (out >= 0) {
			if (report_write_json(written, "fuzz", b.summary, b.sections, (const char *const *)b.commands,
			                      (const char *const *)b.failures, b.count, &status) == 0) {
				report_bundle again;
				if (report_bundle_read(written, &again, &status) != 0)
					abort();   /* what plumb wrote, it reads back */
				report_bundle_free(&again);
			}
			close(out);
		}
		report_bundle_free(&b);
	} else if (!status.message[0]) {
		abort();   /* a refusal says why */
	}
	close(fd);
	return 0;
}
