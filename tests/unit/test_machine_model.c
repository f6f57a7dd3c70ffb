/* The machine model: level names by capacity (also when a VM hides a
 * level), the memory plateau, the one clock estimate, every physical limit
 * with injected figures, the host preset's usable capacity, and the model
 * read back from a report.  Recorded sweeps of this project's Xeon KVM
 * guest are in tests/data/ (lat_vm_xeon_run1.json, report_vm_xeon/); the
 * hidden-L3 sweep (lat_vm_hidden_l3.json) is run1 with the L3's plateau
 * replaced by a ramp from the L2's latency to memory's, the curve a guest
 * sees when its host leaves it no usable share of the L3. */
#include <criterion/criterion.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cluster/cluster.h"
#include "explain/explain.h"
#include "latency/latency_run.h"
#include "machine/machine_model.h"
#include "model/model.h"
#include "report/report.h"
#include "sim/sim.h"
#include "../temp_folder.h"

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)

static const double xeon[3] = { 48 * KiB, 2 * MiB, 260 * MiB };

Test(machine_model, plateaus_take_the_names_of_the_caches_they_fit)
{
	double flat[4] = { 38 * KiB, 1.2 * MiB, 7 * MiB, NAN }, ends[4] = { 45 * KiB, 2 * MiB, 9.5 * MiB, NAN };
	int level_of[4];
	bool hidden[3];
	cr_assert_eq(machine_match_levels(flat, ends, 4, xeon, 3, 1024 * MiB, level_of, hidden, NULL), 0);
	cr_expect_eq(level_of[0], 1);
	cr_expect_eq(level_of[1], 2);
	cr_expect_eq(level_of[2], 3, "a shared L3 used far below its nominal size is still the L3");
	cr_expect_eq(level_of[3], 0);
	cr_expect(!hidden[0] && !hidden[1] && !hidden[2]);
}

Test(machine_model, a_level_the_vm_hides_is_named_hidden_not_dropped)
{
	/* L1, L2 (whose transition the L3's sliver stretches to 8 MiB), memory */
	double flat[3] = { 38 * KiB, 1.2 * MiB, NAN }, ends[3] = { 45 * KiB, 8 * MiB, NAN };
	int level_of[3];
	bool hidden[3];
	cr_assert_eq(machine_match_levels(flat, ends, 3, xeon, 3, 1024 * MiB, level_of, hidden, NULL), 0);
	cr_expect_eq(level_of[0], 1);
	cr_expect_eq(level_of[1], 2, "the L2's plateau stays flat only to 1.2 MiB: it is the L2, not the L3");
	cr_expect_eq(level_of[2], 0);
	cr_expect(!hidden[0] && !hidden[1]);
	cr_expect(hidden[2], "the L3 is hidden");
}

Test(machine_model, a_plateau_flat_past_a_cache_is_not_that_cache)
{
	/* the L2's plateau merged away: a plateau flat to 7 MiB cannot be
	 * the 2 MiB L2, so it is the L3 and the L2 is hidden */
	double flat[3] = { 38 * KiB, 7 * MiB, NAN }, ends[3] = { 45 * KiB, 9.5 * MiB, NAN };
	int level_of[3];
	bool hidden[3];
	cr_assert_eq(machine_match_levels(flat, ends, 3, xeon, 3, 1024 * MiB, level_of, hidden, NULL), 0);
	cr_expect_eq(level_of[1], 3);
	cr_expect(hidden[1] && !hidden[2]);
}

Test(machine_model, a_short_sweep_ends_in_a_cache_not_in_memory)
{
	double flat[2] = { 38 * KiB, 256 * KiB }, ends[2] = { 45 * KiB, NAN };
	int level_of[2];
	bool hidden[3];
	cr_assert_eq(machine_match_levels(flat, ends, 2, xeon, 3, 256 * KiB, level_of, hidden, NULL), 0);
	cr_expect_eq(level_of[0], 1);
	cr_expect_eq(level_of[1], 2);
	cr_expect(!hidden[2], "a cache larger than the sweep is beyond it, not hidden");
}

Test(machine_model, no_caches_leaves_plateaus_unnamed_and_bad_input_fails)
{
	double ends[2] = { 45 * KiB, NAN };
	int level_of[2];
	cr_assert_eq(machine_match_levels(NULL, ends, 2, NULL, 0, 0, level_of, NULL, NULL), 0);
	cr_expect_eq(level_of[0], -1);
	cr_expect_eq(level_of[1], 0);
	plumb_status status;
	cr_expect_eq(machine_match_levels(NULL, NULL, 2, xeon, 3, 0, level_of, NULL, &status), -1);
}

Test(machine_model, memory_latency_comes_from_a_plateau_not_a_rising_tail)
{
	double bytes[10], ns[10] = { 130, 135, 139, 142, 150, 160, 190, 238, 246, 250 };
	for (int i = 0; i < 10; i++)
		bytes[i] = (16 << i) * MiB;
	double median, low, high;
	cr_assert_eq(machine_plateau_after(bytes, ns, 10, 16 * MiB, 1.25, 3, &median, &low, &high), 0);
	cr_expect(median >= 135 && median <= 150, "%g", median);
	cr_expect(high < 170, "%g", high);
	double rising[6] = { 10, 14, 20, 28, 40, 56 };
	cr_expect_eq(machine_plateau_after(bytes, rising, 6, 0, 1.25, 3, &median, &low, &high), -1);
}

Test(machine_model, one_clock_estimate_with_its_spread)
{
	double ghz, low, high;
	machine_clock_estimate(1 / 2.99, 1 / 2.87, 1 / 3.01, &ghz, &low, &high);
	cr_expect_float_eq(ghz, 2.99, 1e-9);
	cr_expect_float_eq(low, 2.87, 1e-9);
	cr_expect_float_eq(high, 3.01, 1e-9);
	machine_clock_estimate(NAN, 1 / 3.0, NAN, &ghz, &low, &high);
	cr_expect_float_eq(ghz, 3.0, 1e-9);
	cr_expect_float_eq(low, 3.0, 1e-9);
	cr_expect_float_eq(high, 3.0, 1e-9);
}

/* A machine as the summary saw it in the report of issue 26, before any
 * figure is broken. */
static void synthetic(machine_model *m)
{
	machine_model_clear(m);
	m->clock_ghz = m->clock_low = m->clock_high = 2.99;
	m->vector_bytes = 64;
	m->threads_all = 2;
	static const char *const names[] = { "L1", "L2", "L3", "DRAM" };
	static const double latency[] = { 1.67, 5.3, 34, 140 }, read_1[] = { 255, 120, 45.4, 6.8 }, read_all[] = { 500, 240, 80, 7 };
	for (int k = 0; k < 4; k++) {
		machine_level *l = &m->levels[m->level_count++];
		memset(l, 0, sizeof *l);
		snprintf(l->name, sizeof l->name, "%s", names[k]);
		l->cache_level = k < 3 ? k + 1 : 0;
		l->shared = k == 2;
		l->nominal_bytes = k < 3 ? xeon[k] : NAN;
		l->usable_bytes = l->usable_low = l->usable_high = k < 3 ? xeon[k] : NAN;
		l->latency_ns = latency[k];
		l->latency_low = latency[k] * 0.95;
		l->latency_high = latency[k] * 1.05;
		l->latency_cycles = latency[k] * 2.99;
		l->read_1 = read_1[k];
		l->read_all = read_all[k];
		l->write_1 = read_1[k] / 2;
		l->write_all = read_all[k] / 2;
		l->bandwidth_cv = 0.03;
		l->mlp = NAN;
	}
	m->service_ns = 9;
	m->service_low = 8;
	m->service_high = 10;
	m->peak_mb_s = 7100;
}

static const machine_check *find_check(const machine_check *checks, size_t n, const char *figure)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(checks[i].figure, figure))
			return &checks[i];
	cr_assert_fail("no check of %s", figure);
	return NULL;
}

Test(machine_model, a_possible_machine_breaks_no_limit)
{
	machine_model m;
	synthetic(&m);
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken = 99, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	for (size_t i = 0; i < n; i++)
		cr_expect(!checks[i].broken, "%s %g flagged: %s", checks[i].figure, checks[i].value, checks[i].rule);
	cr_expect_eq(broken, 0);
	cr_expect_gt(n, 20);
}

Test(machine_model, an_l1_figure_above_the_load_ports_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.levels[0].read_1 = 417;   /* two 64-byte loads per cycle at 2.99 GHz allow 383 GB/s */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	const machine_check *c = find_check(checks, n, "L1 read, 1 thread vs load ports");
	cr_expect(c->broken);
	cr_expect_float_eq(c->limit, 128 * 2.99, 1e-6);
	cr_expect(strstr(c->rule, "load ports"), "%s", c->rule);
	cr_expect_eq(broken, 1);
	/* the same figure with AVX2 kernels only: three 32-byte loads */
	m.vector_bytes = 32;
	m.levels[0].read_1 = 290;
	n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "L1 read, 1 thread vs load ports")->broken);
}

Test(machine_model, all_threads_below_one_thread_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.levels[2].read_all = 28.4;   /* L3: 45.4 GB/s with one thread */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "L3 read, all threads vs one thread")->broken);
	cr_expect_eq(broken, 1);
}

Test(machine_model, a_level_faster_than_the_one_nearer_the_core_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.levels[3].read_1 = 60;   /* DRAM above the L3's 45.4 */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "DRAM read, 1 thread vs L3")->broken);
}

/* A report under load: the L1's all-threads figure fell below its
 * one-thread figure (another program held the other CPU).  That figure is
 * flagged; the L2's all-threads figure, above the depressed L1 figure but
 * below what one L1 thread moved, is physics and is not. */
Test(machine_model, a_disturbed_nearer_level_flags_itself_not_the_level_below)
{
	machine_model m;
	synthetic(&m);
	m.levels[0].read_1 = 320.9;
	m.levels[0].read_all = 112.7;
	m.levels[0].bandwidth_cv = 0.30;
	m.levels[1].read_all = 262.4;
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "L1 read, all threads vs one thread")->broken);
	const machine_check *l2 = find_check(checks, n, "L2 read, all threads vs L1");
	cr_expect(!l2->broken, "%s", l2->rule);
	cr_expect(strstr(l2->rule, "one-thread figure"), "%s", l2->rule);
	cr_expect_eq(broken, 1);
	/* beyond even the one-thread bound it is flagged */
	m.levels[1].read_all = 600;
	n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "L2 read, all threads vs L1")->broken);
}

Test(machine_model, latency_that_does_not_grow_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.levels[2].latency_ns = 5;   /* L3 below the L2's 5.3 ns */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "L3 latency vs L2")->broken);
}

Test(machine_model, dram_latency_outside_its_plateau_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.levels[3].latency_ns = 239;   /* plateau 133-147 ns */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "DRAM latency vs plateau")->broken);
}

Test(machine_model, a_queueing_peak_below_the_measured_bandwidth_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.peak_mb_s = 3770;   /* DRAM measured at 7 GB/s */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "queueing model peak")->broken);
	cr_expect_eq(broken, 1);
}

Test(machine_model, a_degenerate_fit_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.service_ns = 4.1e-6;
	m.service_low = m.service_high = NAN;
	m.peak_mb_s = 15614598112.0;
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "queueing model peak")->broken);
	cr_expect(find_check(checks, n, "queueing model service time")->broken);
	cr_expect_eq(broken, 2);
}

Test(machine_model, a_wandering_clock_is_flagged)
{
	machine_model m;
	synthetic(&m);
	m.clock_low = 2.87;
	m.clock_high = 3.59;
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	cr_expect(find_check(checks, n, "core clock")->broken);
}

static output_report *read_report(const char *name)
{
	char path[1024];
	const char *dir = getenv("PLUMB_SRCDIR");
	snprintf(path, sizeof path, "%s/tests/data/%s", dir ? dir : ".", name);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	char *text = NULL;
	size_t length = 0;
	FILE *m = open_memstream(&text, &length);
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	output_report *r = NULL;
	plumb_status status;
	cr_assert_eq(output_report_parse_json(text, &r, &status), 0, "%s: %s", path, status.message);
	free(text);
	return r;
}

/* lat's own analysis of a recorded sweep, as plumb lat --from does it. */
static void analyse(const char *name, latency_run_result *result)
{
	output_report *saved = read_report(name);
	latency_run_options options;
	latency_run_defaults(&options);
	plumb_status status;
	cr_assert_eq(latency_run_from_report(saved, &options, result, &status), 0, "%s", status.message);
	output_report_free(saved);
}

static const latency_level_report *named(const latency_run_result *r, const char *name)
{
	for (size_t k = 0; k < r->level_count; k++)
		if (!strcmp(r->levels[k].name, name))
			return &r->levels[k];
	return NULL;
}

Test(machine_model, recorded_sweeps_of_this_vm_name_every_level)
{
	/* Two recordings of the Xeon guest: a 260 MiB L3 in sysfs of which
	 * the guest uses about 9.5 MiB.  One read memory at 238 ns from its
	 * far tail, which put the L3's end at 45 MiB. */
	static const char *const files[] = { "lat_vm_xeon_run1.json", "report_vm_xeon/lat.json" };
	for (size_t f = 0; f < 2; f++) {
		latency_run_result r;
		analyse(files[f], &r);
		const latency_level_report *l1 = named(&r, "L1"), *l2 = named(&r, "L2"), *l3 = named(&r, "L3");
		const latency_level_report *memory = named(&r, "memory");
		cr_assert(l1 && l2 && l3 && memory, "%s: levels %zu", files[f], r.level_count);
		cr_expect(l3->end_bytes > 4 * MiB && l3->end_bytes < 16 * MiB, "%s: L3 ends at %llu", files[f],
		          (unsigned long long)l3->end_bytes);
		cr_expect(memory->level.ns > 110 && memory->level.ns < 170, "%s: memory at %.0f ns", files[f], memory->level.ns);
		cr_expect(!r.sysfs_hidden[0] && !r.sysfs_hidden[1] && !r.sysfs_hidden[2]);
		latency_run_free(&r);
	}
}

Test(machine_model, a_recorded_sweep_with_the_l3_hidden_keeps_the_other_names)
{
	latency_run_result r;
	analyse("lat_vm_hidden_l3.json", &r);
	cr_assert_eq(r.level_count, 3);
	cr_expect_str_eq(r.levels[0].name, "L1");
	cr_expect_str_eq(r.levels[1].name, "L2");
	cr_expect_str_eq(r.levels[2].name, "memory");
	cr_expect(r.sysfs_hidden[2], "the L3 is recorded as hidden");
	/* lat's report keeps it, named, with its nominal size */
	latency_run_options options;
	latency_run_defaults(&options);
	output_report *report = latency_run_report(&options, &r);
	const output_table *levels = output_table_find(report, "levels");
	cr_assert_eq(output_row_count(levels), 4);
	cr_expect_str_eq(output_cell_string(levels, 2, (size_t)output_column_index(levels, "level")), "L3");
	cr_expect_str_eq(output_cell_string(levels, 2, (size_t)output_column_index(levels, "stability")), "hidden");
	cr_expect_eq(output_cell_number(levels, 2, (size_t)output_column_index(levels, "sysfs_size")), 260 * MiB);
	/* and the summary names all four rows, the L3 as hidden, and says
	 * nothing about the latency section not having run */
	output_report *sections[1] = { report };
	const char *commands[1] = { "lat" };
	output_report *summary = report_summary_build(sections, commands, 1);
	const output_table *h = output_table_find(summary, "hierarchy");
	int level = output_column_index(h, "level"), latency = output_column_index(h, "latency");
	bool saw_l3 = false;
	for (size_t row = 0; row < output_row_count(h); row++) {
		const char *name = output_cell_string(h, row, (size_t)level);
		const char *why = output_cell_reason(h, row, (size_t)latency);
		cr_expect(!why || !strstr(why, "neither"), "%s: %s", name, why);
		if (!strcmp(name, "L3")) {
			saw_l3 = true;
			cr_expect(why && strstr(why, "hidden"), "L3: %s", why ? why : "a number");
		}
	}
	cr_expect(saw_l3);
	machine_model m;
	cr_assert_eq(machine_model_from_report(summary, &m, NULL), 0);
	const machine_level *l3 = machine_model_level(&m, "L3");
	cr_assert_not_null(l3);
	cr_expect(l3->hidden);
	cr_expect_eq(l3->nominal_bytes, 260 * MiB);
	output_report_free(summary);
	output_report_free(report);
	latency_run_free(&r);
}

/* The first count of a report's sections recorded on the Xeon guest
 * (tests/data/report_vm_xeon/NAME.json), in the order of names. */
static void read_recorded_sections(output_report **sections, const char *const *names, size_t count)
{
	char file[64];
	for (size_t i = 0; i < count; i++) {
		snprintf(file, sizeof file, "report_vm_xeon/%s.json", names[i]);
		sections[i] = read_report(file);
	}
}

/* The sections of a report recorded on the Xeon guest, built into a
 * summary as plumb report does. */
static output_report *recorded_summary(void)
{
	static const char *const names[] = { "topo", "lat", "bw", "loaded", "model" };
	output_report *sections[5];
	read_recorded_sections(sections, names, 5);
	output_report *summary = report_summary_build(sections, names, 5);
	for (size_t i = 0; i < 5; i++)
		output_report_free(sections[i]);
	return summary;
}

/* The same sections with the model fitted now: the recorded loaded curve
 * is flat, so the model section gives no service time and no peak, and
 * the summary says "not determined" with the reason instead of flagging
 * the search's bottom as a figure beyond physics. */
Test(machine_model, a_flat_loaded_curve_gives_no_flag_but_not_determined)
{
	static const char *const names[] = { "topo", "lat", "bw", "loaded", "model" };
	output_report *sections[5];
	char path[1024];
	read_recorded_sections(sections, names, 4);
	const char *dir = getenv("PLUMB_SRCDIR");
	snprintf(path, sizeof path, "%s/tests/data/report_vm_xeon/loaded.json", dir ? dir : ".");
	model_input in;
	plumb_status status;
	cr_assert_eq(model_input_read(path, &in, &status), 0, "%s", status.message);
	model_report_options o = { .input = &in, .source = "loaded" };
	sections[4] = output_report_new("model");
	cr_assert_eq(model_report(&o, sections[4], &status), 0, "%s", status.message);
	model_input_free(&in);
	cr_assert_str_eq(output_text_at(output_table_find(sections[4], "fit"), 0, "shape"), "flat");
	output_report *summary = report_summary_build(sections, names, 5);
	for (size_t i = 0; i < 5; i++)
		output_report_free(sections[i]);
	const output_table *checks = output_table_find(summary, "checks");
	int figure = output_column_index(checks, "figure"), verdict = output_column_index(checks, "verdict");
	for (size_t r = 0; r < output_row_count(checks); r++)
		if (!strncmp(output_cell_string(checks, r, (size_t)figure), "queueing model", 14))
			cr_expect_str_neq(output_cell_string(checks, r, (size_t)verdict), "flagged", "%s",
			                  output_cell_string(checks, r, (size_t)figure));
	const output_table *figures = output_table_find(summary, "figures");
	int quantity = output_column_index(figures, "quantity"), value = output_column_index(figures, "value");
	bool said = false;
	for (size_t r = 0; r < output_row_count(figures); r++)
		if (!strcmp(output_cell_string(figures, r, (size_t)quantity), "queueing model service time")) {
			cr_expect_str_eq(output_cell_string(figures, r, (size_t)value), "not determined");
			const char *why = output_cell_reason(figures, r, (size_t)value);
			cr_expect(why && strstr(why, "does not rise"), "%s", why ? why : "no reason");
			said = true;
		}
	cr_expect(said);
	output_report_free(summary);
}

Test(machine_model, the_summary_flags_the_degenerate_fit_and_keeps_the_model)
{
	output_report *summary = recorded_summary();
	const output_table *checks = output_table_find(summary, "checks");
	cr_assert_not_null(checks);
	int figure = output_column_index(checks, "figure"), verdict = output_column_index(checks, "verdict");
	bool service = false;
	for (size_t r = 0; r < output_row_count(checks); r++)
		if (!strcmp(output_cell_string(checks, r, (size_t)figure), "queueing model service time"))
			service = !strcmp(output_cell_string(checks, r, (size_t)verdict), "flagged");
	cr_expect(service, "the recorded fit (4e-06 ns) is flagged");
	/* not a headline figure */
	const output_table *figures = output_table_find(summary, "figures");
	int quantity = output_column_index(figures, "quantity"), value = output_column_index(figures, "value");
	for (size_t r = 0; r < output_row_count(figures); r++)
		if (!strcmp(output_cell_string(figures, r, (size_t)quantity), "queueing model service time"))
			cr_expect(!isfinite(output_cell_number(figures, r, (size_t)value)));
	machine_model m;
	cr_assert_eq(machine_model_from_report(summary, &m, NULL), 0);
	const machine_level *memory = machine_model_level(&m, "DRAM");
	cr_assert_not_null(memory);
	cr_expect(memory->latency_ns < 170, "DRAM from its plateau, not the 238 ns tail: %.0f", memory->latency_ns);
	output_report_free(summary);
}

/* The simulator's default machine with the Xeon guest's L3 as sysfs lists
 * it: 260 MiB, 20 ways, 64-byte lines. */
static void nominal_xeon_l3(sim_config *config)
{
	sim_config_default(config);
	config->cache[SIM_L3].size = 260ull << 20;
	config->cache[SIM_L3].assoc = 20;
	config->cache[SIM_L3].line = 64;
}

Test(machine_model, the_host_preset_takes_the_usable_size_from_a_saved_model)
{
	sim_config config;
	nominal_xeon_l3(&config);
	machine_model m;
	synthetic(&m);
	snprintf(m.source, sizeof m.source, "report.json");
	m.levels[2].usable_bytes = 9975808;   /* 9.5 MiB measured */
	char note[512];
	cr_assert_eq(sim_preset_apply_machine(&config, &m, note, sizeof note), 1);
	cr_expect_leq(config.cache[SIM_L3].size, 9975808);
	cr_expect_gt(config.cache[SIM_L3].size, 9975808 - 20 * 64);
	cr_expect_eq(config.cache[SIM_L3].size % (20 * 64), 0);
	cr_expect(strstr(note, "usable") && strstr(note, "260 MiB") && strstr(note, "report.json"), "%s", note);
	plumb_status status;
	cr_expect_eq(sim_config_validate(&config, &status), 0, "%s", status.message);
	/* where the measured end is the nominal size, nothing changes */
	config.cache[SIM_L3].size = 260ull << 20;
	m.levels[2].usable_bytes = 250 * MiB;
	cr_expect_eq(sim_preset_apply_machine(&config, &m, note, sizeof note), 0);
	cr_expect_eq(config.cache[SIM_L3].size, 260ull << 20);
	/* nor for a hidden level, which has no usable size */
	m.levels[2].usable_bytes = NAN;
	m.levels[2].hidden = true;
	cr_expect_eq(sim_preset_apply_machine(&config, &m, note, sizeof note), 0);
	cr_expect_eq(config.cache[SIM_L3].size, 260ull << 20);
	cr_expect(strstr(note, "nominal"), "%s", note);
}

/* The host preset's cycle costs are the measured latencies (issue: the
 * simulator priced an L3 hit at a fixed 50 cycles beside lat's figure). */
Test(machine_model, the_host_preset_takes_the_measured_latencies_from_a_saved_model)
{
	sim_config config;
	nominal_xeon_l3(&config);
	machine_model m;
	synthetic(&m);
	snprintf(m.source, sizeof m.source, "report.json");
	char note[512];
	sim_preset_apply_machine(&config, &m, note, sizeof note);
	cr_expect_eq(config.cache[SIM_L1D].latency, 5);     /* 1.67 ns x 2.99 GHz */
	cr_expect_eq(config.cache[SIM_L1I].latency, 5);
	cr_expect_eq(config.cache[SIM_L2].latency, 16);     /* 5.3 ns */
	cr_expect_eq(config.cache[SIM_L3].latency, 102);    /* 34 ns */
	cr_expect_eq(config.memory_latency, 419);           /* 140 ns */
	cr_expect(strstr(note, "latencies measured") && strstr(note, "L3 102") && strstr(note, "DRAM 419"), "%s", note);
	/* a hidden level keeps the preset's figure; without cycles, ns x clock */
	nominal_xeon_l3(&config);
	uint32_t preset_l3 = config.cache[SIM_L3].latency = 50;
	m.levels[2].hidden = true;
	m.levels[2].usable_bytes = NAN;
	m.levels[1].latency_cycles = NAN;
	sim_preset_apply_machine(&config, &m, note, sizeof note);
	cr_expect_eq(config.cache[SIM_L3].latency, preset_l3);
	cr_expect_eq(config.cache[SIM_L2].latency, 16);
	cr_expect(strstr(note, "nominal") && strstr(note, "latencies measured"), "%s", note);
	plumb_status status;
	cr_expect_eq(sim_config_validate(&config, &status), 0, "%s", status.message);
}

/* report.json written as plumb report writes it, from the recorded
 * sections: explain, the simulator's host preset and the model read the
 * same capacities and latencies back. */
Test(machine_model, explain_and_the_host_preset_read_the_model_from_report_json)
{
	static const char *const names[] = { "topo", "lat", "bw", "loaded", "model" };
	output_report *sections[5];
	read_recorded_sections(sections, names, 5);
	output_report *summary = report_summary_build(sections, names, 5);
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-machine-model-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	plumb_status status;
	cr_assert_eq(report_write_json(path, "test", summary, sections, names, NULL, 5, &status), 0, "%s", status.message);
	for (size_t i = 0; i < 5; i++)
		output_report_free(sections[i]);
	machine_model saved;
	cr_assert_eq(machine_model_from_report(summary, &saved, NULL), 0);
	output_report_free(summary);

	machine_model m;
	cr_assert_eq(machine_model_load(path, &m, &status), 0, "%s", status.message);
	const machine_level *l3 = machine_model_level(&m, "L3"), *memory = machine_model_level(&m, "DRAM");
	cr_assert(l3 && memory);
	cr_expect_eq(l3->usable_bytes, machine_model_level(&saved, "L3")->usable_bytes);
	cr_expect(l3->usable_bytes < l3->nominal_bytes / 2, "usable %g of %g", l3->usable_bytes, l3->nominal_bytes);

	explain_machine e;
	cr_assert_eq(explain_machine_load(path, &e, &status), 0, "%s", status.message);
	cr_expect_float_eq(e.clock_ghz, m.clock_ghz, 1e-9);
	cr_expect_float_eq(e.latency_ns[EXPLAIN_L2], machine_model_level(&m, "L2")->latency_ns, 1e-9);
	cr_expect_float_eq(e.latency_ns[EXPLAIN_MEMORY], memory->latency_ns, 1e-9);
	cr_expect_eq(e.size_bytes[EXPLAIN_L3], (uint64_t)l3->usable_bytes);
	cr_expect(strstr(e.source, "usable"), "%s", e.source);

	sim_config config;
	sim_config_origin origin;
	int rc = sim_config_choose_machine(&config, "host", NULL, path, NULL, 0, &origin, &status);
	if (rc != 0 && strstr(status.message, "sysfs"))
		cr_skip_test("no caches in sysfs here: %s", status.message);
	cr_assert_eq(rc, 0, "%s", status.message);
	sim_config nominal;
	cr_assert_eq(sim_preset(&nominal, "host-nominal", &status), 0, "%s", status.message);
	if (nominal.cache[SIM_L3].size && (double)nominal.cache[SIM_L3].size > 2 * l3->usable_bytes) {
		/* this machine's own L3 is more than twice the recorded usable
		 * size: the preset takes the usable size and says so */
		cr_expect_leq((double)config.cache[SIM_L3].size, l3->usable_bytes);
		cr_expect(strstr(origin.machine, "usable"), "%s", origin.machine);
	} else {
		cr_expect_eq(config.cache[SIM_L3].size, nominal.cache[SIM_L3].size);
	}
	cr_expect(strstr(origin.machine, "host (hwloc"), "%s", origin.machine);
	unlink(path);
}

/* plumb cluster flattens each rank's summary: with lat's levels named by
 * capacity, a rank whose VM hides its L3 keeps its L1, L2 and DRAM
 * latencies, and its L3 latency says why it has none. */
Test(machine_model, cluster_keeps_every_ranks_latency_figures)
{
	static const char *const files[] = { "lat_vm_xeon_run1.json", "lat_vm_hidden_l3.json", "lat_vm_hidden_l3.json" };
	output_report *nodes[3];
	for (int rank = 0; rank < 3; rank++) {
		latency_run_result r;
		analyse(files[rank], &r);
		latency_run_options options;
		latency_run_defaults(&options);
		output_report *lat = latency_run_report(&options, &r);
		latency_run_free(&r);
		output_report *sections[] = { lat };
		const char *commands[] = { "lat" }, *failures[] = { NULL };
		cluster_placement p = { rank, "n", "0-1", "turns", "turns on n", 3 };
		nodes[rank] = cluster_node_report(&p, sections, commands, failures, 1);
		output_report_free(lat);
		const output_table *f = output_table_find(nodes[rank], "figures");
		int figure = output_column_index(f, "figure"), value = output_column_index(f, "value");
		for (size_t row = 0; row < output_row_count(f); row++) {
			const char *name = output_cell_string(f, row, (size_t)figure);
			if (!strstr(name, "_latency") || strstr(name, "loaded") || strstr(name, "c2c"))
				continue;
			double v = output_cell_number(f, row, (size_t)value);
			if (rank > 0 && !strcmp(name, "L3_latency")) {
				const char *why = output_cell_reason(f, row, (size_t)value);
				cr_expect(!isfinite(v) && why && strstr(why, "hidden"), "rank %d L3: %s", rank, why ? why : "a number");
			} else if (!strcmp(name, "L1_latency") || !strcmp(name, "L2_latency") || !strcmp(name, "L3_latency") ||
			           !strcmp(name, "DRAM_latency")) {
				cr_expect(isfinite(v), "rank %d %s: %s", rank, name, output_cell_reason(f, row, (size_t)value));
			}
		}
	}
	for (int rank = 0; rank < 3; rank++)
		output_report_free(nodes[rank]);
}

/* A fresh measurement says where it differs from a saved model beyond
 * both spreads, and only there. */
Test(machine_model, a_fresh_figure_beyond_the_saved_spread_is_said)
{
	machine_model saved, fresh;
	synthetic(&saved);
	synthetic(&fresh);
	char lines[8][256];
	cr_expect_eq(machine_model_compare(&fresh, &saved, lines, 8), 0);
	fresh.levels[2].latency_ns = 36;   /* within 34's plateau range widened by 5%: 32.3-35.7 */
	fresh.levels[2].latency_low = 34.2;
	fresh.levels[2].latency_high = 37.8;
	cr_expect_eq(machine_model_compare(&fresh, &saved, lines, 8), 0);
	fresh.levels[2].latency_ns = fresh.levels[2].latency_low = fresh.levels[2].latency_high = 126;   /* mostly memory */
	fresh.clock_ghz = fresh.clock_low = fresh.clock_high = 3.59;
	size_t n = machine_model_compare(&fresh, &saved, lines, 8);
	cr_assert_eq(n, 2);
	cr_expect(strstr(lines[0], "core clock"), "%s", lines[0]);
	cr_expect(strstr(lines[1], "L3 latency"), "%s", lines[1]);
	fresh.levels[2].hidden = true;
	n = machine_model_compare(&fresh, &saved, lines, 8);
	cr_expect(strstr(lines[n - 1], "L3: hidden now"), "%s", lines[n - 1]);
}

/* Recorded at load 14 on the Xeon guest: the other tenants kept the L3
 * empty, so the sweep went 5 ns (L2), 129 ns flat to 362 MiB, then 294 ns
 * (page walks).  No cache holds 362 MiB: the 129 ns plateau is memory and
 * the L3 is hidden, not an "L3" of 129 ns with "memory" at 294 ns. */
Test(machine_model, a_plateau_flat_past_every_cache_is_memory)
{
	latency_run_result r;
	analyse("lat_vm_xeon_busy.json", &r);
	const latency_level_report *memory = named(&r, "memory");
	cr_assert_not_null(memory);
	cr_expect(memory->level.ns > 100 && memory->level.ns < 170, "memory at %.0f ns", memory->level.ns);
	cr_expect_null(named(&r, "L3"), "no plateau is the L3");
	cr_expect(r.sysfs_hidden[2], "the L3 is hidden");
	cr_expect_str_eq(r.levels[r.level_count - 1].name, "level 4");
	latency_run_free(&r);
	double flat[4] = { 46336, 1482880, 379625088, 1276901440 }, ends[4] = { 46336, 2965824, 379625088, NAN };
	int level_of[4];
	bool hidden[3];
	cr_assert_eq(machine_match_levels(flat, ends, 4, xeon, 3, 1276901440, level_of, hidden, NULL), 0);
	cr_expect_eq(level_of[2], 0);
	cr_expect_eq(level_of[3], -1);
	cr_expect(hidden[2]);
}

/* The one usable-capacity rule that the host preset, explain, bw and the
 * summary's "Usable:" sentence all apply. */
Test(machine_model, one_usable_capacity_rule)
{
	cr_expect_float_eq(machine_usable_bytes(260 * MiB, 9.5 * MiB), 9.5 * MiB, 1e-9);
	cr_expect(isnan(machine_usable_bytes(260 * MiB, 131 * MiB)), "half the nominal size or more is the nominal cache");
	cr_expect(isnan(machine_usable_bytes(NAN, 9.5 * MiB)));
	cr_expect(isnan(machine_usable_bytes(260 * MiB, NAN)));
	cr_expect(isnan(machine_usable_bytes(260 * MiB, 0)));
	machine_model m;
	synthetic(&m);
	m.levels[2].usable_bytes = 9.5 * MiB;
	cr_expect_float_eq(machine_level_usable(&m.levels[2]), 9.5 * MiB, 1e-9);
	m.levels[1].usable_bytes = 0.5 * MiB;
	cr_expect(isnan(machine_level_usable(&m.levels[1])), "a private L2 is never shared by others");
	m.levels[2].hidden = true;
	cr_expect(isnan(machine_level_usable(&m.levels[2])), "a hidden level has no usable size");
}

/* plumb explain's fresh figures against a saved model: within both
 * spreads no note; beyond them a note naming the figure with both values
 * and both ranges (latency per level, one thread's read bandwidth, clock). */
Test(machine_model, explain_notes_a_figure_beyond_both_spreads_with_both_values)
{
	machine_model saved, fresh;
	synthetic(&saved);
	synthetic(&fresh);
	char notes[8][400];
	/* L2 read 120 GB/s saved (cv 3%: 113-127); 126 now overlaps */
	fresh.levels[1].read_1 = 126;
	cr_expect_eq(machine_model_difference_notes(&fresh, &saved, "saved.json", notes, 8), 0);
	cr_expect(strstr(notes[0], "agree with the saved machine model (saved.json)"), "%s", notes[0]);
	/* half of it: beyond both spreads */
	fresh.levels[1].read_1 = 60;
	cr_assert_eq(machine_model_difference_notes(&fresh, &saved, "saved.json", notes, 8), 1);
	cr_expect(strstr(notes[0], "saved.json") && strstr(notes[0], "L2 read, 1 thread: 60 GB/s (56.4-63.6) now, 120 GB/s "
	          "(113-127) saved"), "%s", notes[0]);
	/* a figure the fresh run lacks is not compared */
	fresh.levels[1].read_1 = NAN;
	cr_expect_eq(machine_model_difference_notes(&fresh, &saved, "saved.json", notes, 8), 0);
	/* latency and clock, each with both values and ranges */
	fresh.levels[0].latency_ns = fresh.levels[0].latency_low = fresh.levels[0].latency_high = 2.5;
	fresh.clock_ghz = 2.5;
	fresh.clock_low = 2.4;
	fresh.clock_high = 2.6;
	size_t n = machine_model_difference_notes(&fresh, &saved, "saved.json", notes, 8);
	cr_assert_eq(n, 2);
	cr_expect(strstr(notes[0], "core clock: 2.50 GHz (2.40-2.60) now, 2.99 GHz (2.99-2.99) saved"), "%s", notes[0]);
	cr_expect(strstr(notes[1], "L1 latency: 2.5 ns (2.5-2.5) now, 1.67 ns (1.59-1.75) saved"), "%s", notes[1]);
}

/* The all-threads row of a shared level below one thread's: when bw's
 * working sets together outgrew the usable size the reason says so (the
 * row is partly memory; bw --machine sizes them from it), otherwise
 * another program ran. */
Test(machine_model, all_threads_below_one_says_when_the_working_sets_outgrew_the_usable_cache)
{
	machine_model m;
	synthetic(&m);
	m.levels[2].usable_bytes = 6 * MiB;
	m.levels[2].read_all = 28.4;   /* one thread: 45.4 */
	m.levels[2].footprint_all = 4 * MiB;   /* the sysfs default, twice the L2: 8 MiB for two threads */
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t broken, n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	const machine_check *c = find_check(checks, n, "L3 read, all threads vs one thread");
	cr_expect(c->broken);
	cr_expect(strstr(c->rule, "bw's 2 threads x 4.00 MiB outgrew the usable 6.0 MiB") && strstr(c->rule, "--machine"), "%s",
	          c->rule);
	m.levels[2].footprint_all = 2.4 * MiB;   /* sized from the usable size: both fit */
	n = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	c = find_check(checks, n, "L3 read, all threads vs one thread");
	cr_expect(c->broken);
	cr_expect(strstr(c->rule, "another program") && !strstr(c->rule, "outgrew"), "%s", c->rule);
}

/* The model read back from a report.json, which may come from someone else
 * (issue 29): each figure present must be one a machine can have.  A
 * negative or zero size, an infinite latency, a clock of 0, a line of 63
 * bytes or a cache level of 100 is an error naming the figure; before, the
 * host preset took sysfs's size instead without a word and explain printed
 * a clock of nan. */
static int read_back(const machine_model *m, plumb_status *status)
{
	output_report *r = output_report_new("summary");
	machine_model_add_tables(r, m);
	machine_model back;
	int rc = machine_model_from_report(r, &back, status);
	output_report_free(r);
	return rc;
}

Test(machine_model, a_saved_model_with_an_impossible_figure_is_refused)
{
	machine_model m;
	plumb_status status;
	synthetic(&m);
	cr_assert_eq(read_back(&m, &status), 0, "%s", status.message);
	/* what each case below is refused for */
	static const char *const said[] = {
		"L3 usable_bytes is -4096", "L3 usable_bytes is 0", "L3 usable_bytes is 4097.5", "L1 latency is -2",
		"L2 read_1 is -1", "clock (machine_clock_ghz) is 0", "line size (machine_line_bytes) is 63",
		"L1 cache_level is 100",
	};
	for (size_t i = 0; i < sizeof said / sizeof said[0]; i++) {
		synthetic(&m);
		switch (i) {
		case 0: m.levels[2].usable_bytes = -4096; break;
		case 1: m.levels[2].usable_bytes = 0; break;
		case 2: m.levels[2].usable_bytes = 4097.5; break;
		case 3: m.levels[0].latency_ns = -2; break;
		case 4: m.levels[1].read_1 = -1; break;
		case 5: m.clock_ghz = 0; break;
		case 6: m.line_bytes = 63; break;
		case 7: m.levels[0].cache_level = 100; break;
		}
		cr_expect_eq(read_back(&m, &status), -1, "case %zu was taken", i);
		cr_expect_eq(status.code, EINVAL, "case %zu", i);
		cr_expect(strstr(status.message, said[i]), "case %zu: %s", i, status.message);
	}
	/* an absent figure (n/a) is not an error: it is simply not used */
	synthetic(&m);
	m.levels[2].latency_ns = m.levels[2].latency_low = m.levels[2].latency_high = NAN;
	cr_expect_eq(read_back(&m, &status), 0, "%s", status.message);
}

/* The report gives the model section the DRAM bandwidth its bw section
 * measured (report_measured_memory_mb_s, plumb model --peak-at-least): a
 * loaded curve that rises like a memory of half that bandwidth, fitted
 * alone, puts the peak below what was measured and the summary flags it
 * (seen in half of one guest's reports: 28.0 GB/s against 31.0); fitted
 * with the bound, S sits at it, the summary says so and flags nothing. */
Test(machine_model, the_measured_bandwidth_bounds_the_queueing_fit)
{
	static const char *const names[] = { "topo", "lat", "bw", "loaded", "model" };
	output_report *sections[5];
	read_recorded_sections(sections, names, 4);
	double memory = report_measured_memory_mb_s(sections[0], sections[1], sections[2]);
	cr_assert(memory > 1000 && memory < 1e6, "DRAM %g MB/s", memory);
	cr_expect_eq(report_measured_memory_mb_s(sections[0], sections[1], NULL), 0);
	model_params truth = { 150, 2 * 64 / (memory * 1e-3), 64 };   /* a peak of half the bandwidth measured */
	model_point points[8];
	for (int i = 0; i < 8; i++) {
		points[i].contention_mb_s = memory / 20 * i;
		cr_assert_eq(model_latency(&truth, points[i].contention_mb_s, &points[i].latency_ns, NULL), 0);
	}
	model_input in = { .points = points, .count = 8, .line_bytes = 64 };
	plumb_status status;
	for (int bounded = 0; bounded < 2; bounded++) {
		model_report_options o = { .input = &in, .source = "loaded", .min_peak_mb_s = bounded ? memory : 0 };
		sections[4] = output_report_new("model");
		cr_assert_eq(model_report(&o, sections[4], &status), 0, "%s", status.message);
		const output_table *fit = output_table_find(sections[4], "fit");
		cr_expect_str_eq(output_text_at(fit, 0, "shape"), bounded ? "at the measured bandwidth" : "fitted");
		output_report *summary = report_summary_build(sections, names, 5);
		output_report_free(sections[4]);
		const output_table *checks = output_table_find(summary, "checks");
		int figure = output_column_index(checks, "figure"), verdict = output_column_index(checks, "verdict");
		bool flagged = false;
		for (size_t r = 0; r < output_row_count(checks); r++)
			if (!strcmp(output_cell_string(checks, r, (size_t)figure), "queueing model peak"))
				flagged = !strcmp(output_cell_string(checks, r, (size_t)verdict), "flagged");
		cr_expect_eq(flagged, !bounded, "bounded %d", bounded);
		const output_table *figures = output_table_find(summary, "figures");
		int quantity = output_column_index(figures, "quantity"), detail = output_column_index(figures, "detail");
		for (size_t r = 0; bounded && r < output_row_count(figures); r++)
			if (!strcmp(output_cell_string(figures, r, (size_t)quantity), "queueing model service time"))
				cr_expect(strstr(output_cell_string(figures, r, (size_t)detail), "held to the DRAM bandwidth measured"),
				          "%s", output_cell_string(figures, r, (size_t)detail));
		output_report_free(summary);
	}
	for (size_t i = 0; i < 4; i++)
		output_report_free(sections[i]);
}
