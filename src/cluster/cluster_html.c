/* cluster.html: the cluster table as a page, written with the report's
 * HTML pieces (its style, tables and escaping). */
#include <stdio.h>
#include <string.h>
#include "cluster/cluster.h"
#include "report/report.h"

static void table_if(FILE *f, const output_report *c, const char *name, const char *intro, bool collapsed)
{
	const output_table *t = output_table_find(c, name);
	if (!t)
		return;
	fputs("<section><h2>", f);
	report_html_text(f, output_table_title(t));
	fputs("</h2>\n<p class=intro>", f);
	report_html_text(f, intro);
	fputs("</p>\n<div class=scroll>\n", f);
	if (output_row_count(t))
		report_html_table(f, t, collapsed);
	else
		fputs("<p>None.</p>\n", f);
	fputs("</div></section>\n", f);
}

int cluster_write_html(const char *path, const output_report *c, plumb_status *status)
{
	output_file file;
	if (output_file_open(&file, path, status) != 0)
		return -1;
	FILE *f = file.stream;
	report_html_begin(f, "plumb: cluster report");
	char ranks[32] = "", hosts[32] = "", answered[32] = "";
	for (size_t i = 0; i < output_meta_count(c); i++) {
		const char *k = output_meta_key(c, i);
		if (!strcmp(k, "ranks"))
			output_meta_format(c, i, ranks, sizeof ranks);
		else if (!strcmp(k, "hosts"))
			output_meta_format(c, i, hosts, sizeof hosts);
		else if (!strcmp(k, "ranks_with_results"))
			output_meta_format(c, i, answered, sizeof answered);
	}
	fputs("<p>", f);
	report_html_text(f, ranks);
	fputs(" ranks on ", f);
	report_html_text(f, hosts);
	fputs(" hosts; ", f);
	report_html_text(f, answered);
	fputs(" sent results. ", f);
	fputs("Each node ran the same sections as <code>plumb report</code>; the figures below are the report summary's, "
	      "one column per figure. An outlier is a node whose figure lies more than 3.5 robust z-scores from the median of "
	      "all nodes (Iglewicz and Hoaglin's modified z-score, 1993: 0.6745 times the distance from the median over the "
	      "median absolute deviation), so one slow node cannot hide by moving the yardstick.</p>\n", f);
	table_if(f, c, "outliers", "A figure far from the other nodes'. With fewer than 3 nodes no outlier can be judged.", false);
	table_if(f, c, "differences", "Configuration that is not the same on every node: CPU model, cache sizes, transparent huge pages, kernel, counter availability.", false);
	table_if(f, c, "figures_by_node", "Every headline figure, the nodes side by side.", false);
	table_if(f, c, "spread", "How far apart the nodes are: spread is (max - min) over the median.", false);
	table_if(f, c, "nodes", "One row per rank: where it ran, how it shared its node, and whether every section ran.", true);
	table_if(f, c, "configuration", "Each rank's configuration.", true);
	report_html_end(f);
	return output_file_commit(&file, status);
}
