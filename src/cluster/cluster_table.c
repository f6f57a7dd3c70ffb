/* The cluster's table: every rank's row side by side, the spread of each
 * figure over the nodes, the nodes whose figure is an outlier by robust
 * z-score, and the configuration properties that differ between nodes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/cluster.h"

static void meta_text(const output_report *r, const char *key, char *out, size_t length)
{
	out[0] = 0;
	for (size_t i = 0; r && i < output_meta_count(r); i++)
		if (!strcmp(output_meta_key(r, i), key))
			output_meta_format(r, i, out, length);
}

/* Names in order of first appearance over the rows' table `table`, column `column`. */
typedef struct name_list { char **names; char **units; size_t count; } name_list;

static void names_collect(name_list *list, const cluster_row *rows, size_t count, const char *table, const char *unit_column)
{
	for (size_t i = 0; i < count; i++) {
		const output_table *t = rows[i].node ? output_table_find(rows[i].node, table) : NULL;
		int c = t ? output_column_index(t, strcmp(table, "figures") ? "property" : "figure") : -1;
		int u = t && unit_column ? output_column_index(t, unit_column) : -1;
		for (size_t r = 0; c >= 0 && r < output_row_count(t); r++) {
			const char *name = output_cell_string(t, r, (size_t)c);
			bool seen = !name;
			for (size_t k = 0; !seen && k < list->count; k++)
				seen = !strcmp(list->names[k], name);
			if (seen)
				continue;
			char **grown = realloc(list->names, (list->count + 1) * sizeof *grown);
			if (!grown)
				return;
			list->names = grown;
			grown = realloc(list->units, (list->count + 1) * sizeof *grown);
			if (!grown)
				return;
			list->units = grown;
			const char *unit = u >= 0 ? output_cell_string(t, r, (size_t)u) : NULL;
			list->names[list->count] = strdup(name);
			list->units[list->count] = unit && unit[0] ? strdup(unit) : NULL;
			list->count++;
		}
	}
}

static void names_free(name_list *list)
{
	for (size_t k = 0; k < list->count; k++) {
		free(list->names[k]);
		free(list->units[k]);
	}
	free(list->names);
	free(list->units);
}

/* The row of `table` whose first column is name, or -1. */
static long row_of(const output_report *node, const char *table, const char *name, const output_table **t)
{
	*t = node ? output_table_find(node, table) : NULL;
	for (size_t r = 0; *t && r < output_row_count(*t); r++) {
		const char *s = output_cell_string(*t, r, 0);
		if (s && !strcmp(s, name))
			return (long)r;
	}
	return -1;
}

static double figure_number(const cluster_row *row, const char *figure)
{
	const output_table *t;
	long r = row_of(row->node, "figures", figure, &t);
	return r < 0 ? NAN : output_cell_number(t, (size_t)r, 1);
}

/* A figure's cell for a row: its value, its own status and reason, or why the row has none. */
static void figure_cell(output_table *to, const cluster_row *row, const char *figure)
{
	if (!row->node) {
		output_cell_status(to, "missing", row->failure ? row->failure : "this rank sent no results");
		return;
	}
	const output_table *t;
	long r = row_of(row->node, "figures", figure, &t);
	if (r < 0) {
		output_cell_status(to, "missing", "this node did not report this figure");
		return;
	}
	switch (output_cell_kind(t, (size_t)r, 1)) {
	case CELL_INTEGER:
	case CELL_REAL: output_cell_real(to, output_cell_number(t, (size_t)r, 1)); break;
	case CELL_STATUS: output_cell_status(to, output_cell_string(t, (size_t)r, 1), output_cell_reason(t, (size_t)r, 1)); break;
	default: output_cell_status(to, "missing", "this node did not report this figure"); break;
	}
}

static void property_text(const cluster_row *row, const char *property, char *out, size_t length)
{
	const output_table *t;
	long r = row_of(row->node, "configuration", property, &t);
	out[0] = 0;
	if (r >= 0)
		output_cell_format(t, (size_t)r, 1, out, length);
}

static void row_label(const cluster_row *row, char *out, size_t length)
{
	snprintf(out, length, "rank %d (%s)", row->rank, row->host ? row->host : "host unknown");
}

static void add_nodes(output_report *c, const cluster_row *rows, size_t count, const name_list *figures)
{
	output_table *t = output_table_add(c, "nodes", "Every rank's headline figures");
	output_column(t, "rank", NULL, 0);
	output_column(t, "host", NULL, 0);
	output_column(t, "cpus", NULL, 0);
	output_column(t, "sharing", NULL, 0);
	output_column(t, "status", NULL, 0);
	for (size_t k = 0; k < figures->count; k++)
		output_column(t, figures->names[k], figures->units[k], 2);
	for (size_t i = 0; i < count; i++) {
		output_row(t);
		output_cell_integer(t, rows[i].rank);
		if (rows[i].host)
			output_cell_text(t, rows[i].host);
		else
			output_cell_status(t, "unknown", "the rank never reported its host");
		char b[256];
		meta_text(rows[i].node, "cpus", b, sizeof b);
		output_cell_text(t, b[0] ? b : "-");
		meta_text(rows[i].node, "sharing", b, sizeof b);
		output_cell_text(t, b[0] ? b : "-");
		if (!rows[i].node) {
			output_cell_status(t, "failed", rows[i].failure ? rows[i].failure : "this rank sent no results");
		} else {
			/* A node whose sections partly failed says which. */
			const output_table *s = output_table_find(rows[i].node, "sections");
			char failed[256] = "";
			size_t n = 0;
			for (size_t r = 0; s && r < output_row_count(s); r++)
				if (output_cell_kind(s, r, 1) == CELL_STATUS && n < sizeof failed)
					n += (size_t)snprintf(failed + n, sizeof failed - n, "%s%s: %s", n ? "; " : "",
					                      output_cell_string(s, r, 0), output_cell_reason(s, r, 1));
			if (failed[0])
				output_cell_status(t, "partial", failed);
			else
				output_cell_text(t, "ok");
		}
		for (size_t k = 0; k < figures->count; k++)
			figure_cell(t, &rows[i], figures->names[k]);
	}
}

static void add_by_node(output_report *c, const cluster_row *rows, size_t count, const name_list *figures)
{
	output_table *t = output_table_add(c, "figures_by_node", "Each figure, node by node");
	output_column(t, "figure", NULL, 0);
	output_column(t, "unit", NULL, 0);
	for (size_t i = 0; i < count; i++) {
		char label[160];
		row_label(&rows[i], label, sizeof label);
		output_column(t, label, NULL, 2);
	}
	for (size_t k = 0; k < figures->count; k++) {
		output_row(t);
		output_cell_text(t, figures->names[k]);
		output_cell_text(t, figures->units[k] ? figures->units[k] : "");
		for (size_t i = 0; i < count; i++)
			figure_cell(t, &rows[i], figures->names[k]);
	}
}

static void add_spread_and_outliers(output_report *c, const cluster_row *rows, size_t count, const name_list *figures)
{
	output_table *s = output_table_add(c, "spread", "Node-to-node spread of each figure");
	output_column(s, "figure", NULL, 0);
	output_column(s, "unit", NULL, 0);
	output_column(s, "nodes", NULL, 0);
	output_column(s, "median", NULL, 3);
	output_column(s, "mad", NULL, 3);
	output_column(s, "min", NULL, 3);
	output_column(s, "max", NULL, 3);
	output_column(s, "spread", "%", 1);
	output_column(s, "outliers", NULL, 0);
	output_table *o = output_table_add(c, "outliers", "Figures far from the other nodes' (robust z-score beyond 3.5)");
	output_column(o, "rank", NULL, 0);
	output_column(o, "host", NULL, 0);
	output_column(o, "figure", NULL, 0);
	output_column(o, "unit", NULL, 0);
	output_column(o, "value", NULL, 3);
	output_column(o, "median", NULL, 3);
	output_column(o, "robust_z", NULL, 2);
	double *v = calloc(count ? count : 1, sizeof *v), *z = calloc(count ? count : 1, sizeof *z);
	if (!v || !z) {
		free(v);
		free(z);
		return;
	}
	for (size_t k = 0; k < figures->count; k++) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t i = 0; i < count; i++) {
			v[i] = figure_number(&rows[i], figures->names[k]);
			if (isfinite(v[i])) {
				lo = fmin(lo, v[i]);
				hi = fmax(hi, v[i]);
			}
		}
		size_t finite = cluster_robust_z(v, count, z);
		double median = cluster_median(v, count), mad = cluster_mad(v, count);
		size_t outliers = 0;
		for (size_t i = 0; i < count; i++) {
			if (!(fabs(z[i]) > CLUSTER_OUTLIER_Z))
				continue;
			outliers++;
			output_row(o);
			output_cell_integer(o, rows[i].rank);
			output_cell_text(o, rows[i].host ? rows[i].host : "unknown");
			output_cell_text(o, figures->names[k]);
			output_cell_text(o, figures->units[k] ? figures->units[k] : "");
			output_cell_real(o, v[i]);
			output_cell_real(o, median);
			output_cell_real(o, z[i]);
		}
		output_row(s);
		output_cell_text(s, figures->names[k]);
		output_cell_text(s, figures->units[k] ? figures->units[k] : "");
		output_cell_integer(s, (int64_t)finite);
		if (!finite) {
			for (int q = 0; q < 5; q++)
				output_cell_status(s, "unsupported", "no node measured this figure");
		} else {
			output_cell_real(s, median);
			output_cell_real(s, mad);
			output_cell_real(s, lo);
			output_cell_real(s, hi);
			if (median != 0)
				output_cell_real(s, 100 * (hi - lo) / fabs(median));
			else
				output_cell_status(s, "n/a", "the median is 0");
		}
		if (finite < 3)
			output_cell_status(s, "n/a", "fewer than 3 nodes measured this figure: no spread to judge outliers by");
		else
			output_cell_integer(s, (int64_t)outliers);
	}
	free(v);
	free(z);
}

static void add_configuration(output_report *c, const cluster_row *rows, size_t count, const name_list *properties)
{
	output_table *t = output_table_add(c, "configuration", "Each rank's configuration");
	output_column(t, "rank", NULL, 0);
	output_column(t, "host", NULL, 0);
	for (size_t k = 0; k < properties->count; k++)
		output_column(t, properties->names[k], NULL, 0);
	for (size_t i = 0; i < count; i++) {
		output_row(t);
		output_cell_integer(t, rows[i].rank);
		output_cell_text(t, rows[i].host ? rows[i].host : "unknown");
		for (size_t k = 0; k < properties->count; k++) {
			char b[256];
			property_text(&rows[i], properties->names[k], b, sizeof b);
			if (b[0])
				output_cell_text(t, b);
			else
				output_cell_status(t, "missing", rows[i].node ? "this node did not report it" : (rows[i].failure ? rows[i].failure : "no results"));
		}
	}
	/* The properties whose value differs: each distinct value with its ranks. */
	output_table *d = output_table_add(c, "differences", "Configuration that differs between nodes");
	output_column(d, "property", NULL, 0);
	output_column(d, "value", NULL, 0);
	output_column(d, "ranks", NULL, 0);
	for (size_t k = 0; k < properties->count; k++) {
		char first[256] = "";
		bool differs = false, have = false;
		for (size_t i = 0; i < count; i++) {
			char b[256];
			if (!rows[i].node)
				continue;
			property_text(&rows[i], properties->names[k], b, sizeof b);
			if (!have) {
				snprintf(first, sizeof first, "%s", b);
				have = true;
			} else if (strcmp(first, b)) {
				differs = true;
			}
		}
		if (!differs)
			continue;
		for (size_t i = 0; i < count; i++) {
			char b[256];
			if (!rows[i].node)
				continue;
			property_text(&rows[i], properties->names[k], b, sizeof b);
			bool seen = false;
			for (size_t q = 0; q < i && !seen; q++) {
				char e[256];
				if (!rows[q].node)
					continue;
				property_text(&rows[q], properties->names[k], e, sizeof e);
				seen = !strcmp(e, b);
			}
			if (seen)
				continue;
			char ranks[512] = "";
			size_t n = 0;
			for (size_t q = i; q < count && n < sizeof ranks; q++) {
				char e[256];
				if (!rows[q].node)
					continue;
				property_text(&rows[q], properties->names[k], e, sizeof e);
				if (!strcmp(e, b))
					n += (size_t)snprintf(ranks + n, sizeof ranks - n, "%s%d", n ? "," : "", rows[q].rank);
			}
			output_row(d);
			output_cell_text(d, properties->names[k]);
			output_cell_text(d, b[0] ? b : "unknown");
			output_cell_text(d, ranks);
		}
	}
}

output_report *cluster_build(const cluster_row *rows, size_t count)
{
	output_report *c = output_report_new("cluster");
	if (!c)
		return NULL;
	size_t hosts = 0, answered = 0;
	for (size_t i = 0; i < count; i++) {
		answered += rows[i].node != NULL;
		bool seen = !rows[i].host;
		for (size_t q = 0; q < i && !seen; q++)
			seen = rows[q].host && !strcmp(rows[q].host, rows[i].host);
		hosts += !seen;
	}
	output_meta_integer(c, "ranks", (int64_t)count);
	output_meta_integer(c, "hosts", (int64_t)hosts);
	output_meta_integer(c, "ranks_with_results", (int64_t)answered);
	output_meta_real(c, "outlier_robust_z", CLUSTER_OUTLIER_Z);
	name_list figures = { 0 }, properties = { 0 };
	names_collect(&figures, rows, count, "figures", "unit");
	names_collect(&properties, rows, count, "configuration", NULL);
	add_nodes(c, rows, count, &figures);
	add_by_node(c, rows, count, &figures);
	add_spread_and_outliers(c, rows, count, &figures);
	add_configuration(c, rows, count, &properties);
	names_free(&figures);
	names_free(&properties);
	return c;
}
