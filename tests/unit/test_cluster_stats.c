/* The cluster table's robust statistics and its tables, from hand-made node
 * rows whose figures are known. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "cluster/cluster.h"

#define EPS 1e-12

Test(cluster_stats, median_and_mad_odd_even_and_nan)
{
	double odd[] = { 4, 1, 100, 3, 2 };
	cr_assert_eq(cluster_median(odd, 5), 3.0);
	cr_assert_eq(cluster_mad(odd, 5), 1.0);
	double even[] = { 4, 1, 3, 2 };
	cr_assert_eq(cluster_median(even, 4), 2.5);
	cr_assert_eq(cluster_mad(even, 4), 1.0);
	double holes[] = { NAN, 10, INFINITY, 30, 20 };
	cr_assert_eq(cluster_median(holes, 5), 20.0);
	cr_assert_eq(cluster_mad(holes, 5), 10.0);
	double none[] = { NAN, NAN };
	cr_assert(isnan(cluster_median(none, 2)));
	cr_assert(isnan(cluster_mad(none, 2)));
	cr_assert(isnan(cluster_median(none, 0)));
}

Test(cluster_stats, modified_z_score_with_a_mad)
{
	/* median 3, MAD 1: z = 0.6745 (x - 3) */
	double v[] = { 1, 2, 3, 4, 100 }, z[5];
	cr_assert_eq(cluster_robust_z(v, 5, z), 5);
	cr_assert_float_eq(z[0], -1.349, EPS);
	cr_assert_float_eq(z[1], -0.6745, EPS);
	cr_assert_eq(z[2], 0.0);
	cr_assert_float_eq(z[3], 0.6745, EPS);
	cr_assert_float_eq(z[4], 65.4265, 1e-9);
	cr_assert(fabs(z[4]) > CLUSTER_OUTLIER_Z && fabs(z[0]) < CLUSTER_OUTLIER_Z);
}

Test(cluster_stats, mean_absolute_deviation_when_the_mad_is_zero)
{
	/* median 5, MAD 0 (four equal values); mean absolute deviation 4/5:
	 * z = (x - 5) / (1.253314 * 0.8) */
	double v[] = { 5, 5, 9, 5, 5 }, z[5];
	cr_assert_eq(cluster_robust_z(v, 5, z), 5);
	cr_assert_float_eq(z[2], 4 / (1.253314 * 0.8), EPS);
	cr_assert_float_eq(z[2], 3.989423241103187, 1e-9);
	cr_assert_eq(z[0], 0.0);
	double same[] = { 7, 7, 7 }, zs[3];
	cr_assert_eq(cluster_robust_z(same, 3, zs), 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(zs[i], 0.0);
}

Test(cluster_stats, too_few_values_or_holes_give_nan)
{
	double two[] = { 1, 50 }, z2[2];
	cr_assert_eq(cluster_robust_z(two, 2, z2), 2);
	cr_assert(isnan(z2[0]) && isnan(z2[1]));
	double holes[] = { 1, NAN, 2, 3 }, z[4];
	cr_assert_eq(cluster_robust_z(holes, 4, z), 3);
	cr_assert_float_eq(z[0], -0.6745, EPS);
	cr_assert(isnan(z[1]));
	cr_assert_eq(z[2], 0.0);
}

Test(cluster_sections, parse_adds_loaded_before_model_and_refuses_bad_lists)
{
	const char *names[CLUSTER_MAX_SECTIONS];
	size_t n;
	plumb_status st;
	char list[] = "topo,model";
	cr_assert_eq(cluster_sections_parse(list, names, CLUSTER_MAX_SECTIONS, &n, &st), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(names[0], "topo");
	cr_assert_str_eq(names[1], "loaded");
	cr_assert_str_eq(names[2], "model");
	char unknown[] = "topo,report";
	cr_assert_eq(cluster_sections_parse(unknown, names, CLUSTER_MAX_SECTIONS, &n, &st), -1);
	cr_assert(strstr(st.message, "'report' is not a cluster section"), "%s", st.message);
	char twice[] = "lat,lat";
	cr_assert_eq(cluster_sections_parse(twice, names, CLUSTER_MAX_SECTIONS, &n, &st), -1);
	cr_assert(strstr(st.message, "listed twice"), "%s", st.message);
	char empty[] = ",";
	cr_assert_eq(cluster_sections_parse(empty, names, CLUSTER_MAX_SECTIONS, &n, &st), -1);
}

/* A node row as a rank sends it: figures and configuration. */
static output_report *node(int rank, double dram_ns, const char *kernel)
{
	output_report *r = output_report_new("cluster-node");
	output_meta_integer(r, "rank", rank);
	output_meta_text(r, "cpus", "0-1");
	output_meta_text(r, "sharing", "alone");
	output_table *f = output_table_add(r, "figures", "Figures");
	output_column(f, "figure", NULL, 0);
	output_column(f, "value", NULL, 3);
	output_column(f, "unit", NULL, 0);
	output_row(f);
	output_cell_text(f, "DRAM_latency");
	output_cell_real(f, dram_ns);
	output_cell_text(f, "ns");
	output_row(f);
	output_cell_text(f, "c2c_latency");
	output_cell_status(f, "unsupported", "one CPU");
	output_cell_text(f, "ns");
	output_table *c = output_table_add(r, "configuration", "Configuration");
	output_column(c, "property", NULL, 0);
	output_column(c, "value", NULL, 0);
	output_row(c);
	output_cell_text(c, "kernel");
	output_cell_text(c, kernel);
	output_table *s = output_table_add(r, "sections", "Sections");
	output_column(s, "section", NULL, 0);
	output_column(s, "result", NULL, 0);
	output_row(s);
	output_cell_text(s, "lat");
	output_cell_text(s, "ok");
	return r;
}

static long find(const output_table *t, size_t column, const char *value)
{
	for (size_t r = 0; r < output_row_count(t); r++) {
		const char *s = output_cell_string(t, r, column);
		if (s && !strcmp(s, value))
			return (long)r;
	}
	return -1;
}

Test(cluster_table, outliers_spread_differences_and_a_dead_rank)
{
	double dram[] = { 100, 101, 99, 100, 200 };
	output_report *nodes[5];
	cluster_row rows[6];
	const char *hosts[] = { "n0", "n1", "n2", "n3", "n4" };
	for (int i = 0; i < 5; i++) {
		nodes[i] = node(i, dram[i], i == 4 ? "6.2.0" : "6.1.0");
		rows[i] = (cluster_row){ i, hosts[i], nodes[i], NULL };
	}
	rows[5] = (cluster_row){ 5, "n5", NULL, "rank 5 died: its process 42 on n5 ended without sending results" };
	output_report *c = cluster_build(rows, 6);
	cr_assert_not_null(c);
	const output_table *n = output_table_find(c, "nodes");
	cr_assert_eq(output_row_count(n), 6);
	int status = output_column_index(n, "status"), dl = output_column_index(n, "DRAM_latency");
	cr_assert_geq(status, 0);
	cr_assert_geq(dl, 0);
	cr_assert_str_eq(output_cell_string(n, 0, (size_t)status), "ok");
	cr_assert_eq(output_cell_kind(n, 5, (size_t)status), CELL_STATUS);
	cr_assert(strstr(output_cell_reason(n, 5, (size_t)status), "rank 5 died"));
	cr_assert_eq(output_cell_kind(n, 5, (size_t)dl), CELL_STATUS);
	cr_assert_eq(output_cell_number(n, 4, (size_t)dl), 200.0);

	/* median 100, MAD 1: rank 4 is 0.6745 * 100 = 67.45 robust z away */
	const output_table *o = output_table_find(c, "outliers");
	cr_assert_eq(output_row_count(o), 1);
	cr_assert_eq(output_cell_number(o, 0, 0), 4.0);
	cr_assert_str_eq(output_cell_string(o, 0, 2), "DRAM_latency");
	cr_assert_float_eq(output_cell_number(o, 0, (size_t)output_column_index(o, "robust_z")), 67.45, 1e-9);

	const output_table *s = output_table_find(c, "spread");
	long row = find(s, 0, "DRAM_latency");
	cr_assert_geq(row, 0);
	cr_assert_eq(output_cell_number(s, (size_t)row, (size_t)output_column_index(s, "nodes")), 5.0);
	cr_assert_eq(output_cell_number(s, (size_t)row, (size_t)output_column_index(s, "median")), 100.0);
	cr_assert_eq(output_cell_number(s, (size_t)row, (size_t)output_column_index(s, "mad")), 1.0);
	cr_assert_float_eq(output_cell_number(s, (size_t)row, (size_t)output_column_index(s, "spread")), 101.0, EPS);
	long c2c = find(s, 0, "c2c_latency");
	cr_assert_eq(output_cell_number(s, (size_t)c2c, (size_t)output_column_index(s, "nodes")), 0.0);

	const output_table *d = output_table_find(c, "differences");
	cr_assert_eq(output_row_count(d), 2);
	cr_assert_str_eq(output_cell_string(d, 0, 1), "6.1.0");
	cr_assert_str_eq(output_cell_string(d, 0, 2), "0,1,2,3");
	cr_assert_str_eq(output_cell_string(d, 1, 1), "6.2.0");
	cr_assert_str_eq(output_cell_string(d, 1, 2), "4");
	output_report_free(c);
	for (int i = 0; i < 5; i++)
		output_report_free(nodes[i]);
}

Test(cluster_table, a_failed_section_is_kept_with_its_reason)
{
	output_report *topo = output_report_new("topo");
	output_table *m = output_table_add(topo, "machine", "Machine");
	output_column(m, "property", NULL, 0);
	output_column(m, "value", NULL, 0);
	output_row(m);
	output_cell_text(m, "cpu_model");
	output_cell_text(m, "Test CPU");
	output_report *sections[] = { topo, NULL };
	const char *commands[] = { "topo", "lat" }, *failures[] = { NULL, "'plumb lat' died with signal 9" };
	cluster_placement p = { 3, "n3", "0-1", "alone", "alone on n3", 1 };
	output_report *r = cluster_node_report(&p, sections, commands, failures, 2);
	cr_assert_not_null(r);
	const output_table *f = output_table_find(r, "figures");
	long row = find(f, 0, "L1_latency");
	if (row < 0)
		row = find(f, 0, "DRAM_latency");
	cr_assert_geq(row, 0);
	cr_assert_eq(output_cell_kind(f, (size_t)row, 1), CELL_STATUS);
	cr_assert(strstr(output_cell_reason(f, (size_t)row, 1), "the lat section failed on this node: 'plumb lat' died with signal 9"),
	          "%s", output_cell_reason(f, (size_t)row, 1));
	const output_table *c = output_table_find(r, "configuration");
	cr_assert_str_eq(output_cell_string(c, (size_t)find(c, 0, "cpu_model"), 1), "Test CPU");
	const output_table *s = output_table_find(r, "sections");
	cr_assert_eq(output_cell_kind(s, 1, 1), CELL_STATUS);
	cr_assert_str_eq(output_cell_string(s, 0, 1), "ok");

	cluster_row rows[] = { { 3, "n3", r, NULL } };
	output_report *cl = cluster_build(rows, 1);
	const output_table *n = output_table_find(cl, "nodes");
	int st = output_column_index(n, "status");
	cr_assert_str_eq(output_cell_string(n, 0, (size_t)st), "partial");
	cr_assert(strstr(output_cell_reason(n, 0, (size_t)st), "lat: 'plumb lat' died with signal 9"));
	output_report_free(cl);
	output_report_free(r);
	output_report_free(topo);
}
