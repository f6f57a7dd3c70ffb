/* The report's summary: the answer on one screen, built from the sections'
 * own reports (the JSON each section printed, read back).  It is itself an
 * output_report ("summary"), so the terminal, the HTML page, report.json and
 * --compare all read the same tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "machine/machine_model.h"
#include "report/report.h"

static const char *reason(const output_table *t, long row, const char *column)
{
	int c = t && row >= 0 ? output_column_index(t, column) : -1;
	return c < 0 ? NULL : output_cell_reason(t, (size_t)row, (size_t)c);
}

/* A row of the geometry table: property and level. */
static long geometry_row(const output_table *t, const char *property, const char *level)
{
	int p = t ? output_column_index(t, "property") : -1, l = t ? output_column_index(t, "level") : -1;
	if (p < 0 || l < 0)
		return -1;
	for (size_t r = 0; r < output_row_count(t); r++) {
		const char *a = output_cell_string(t, r, (size_t)p), *b = output_cell_string(t, r, (size_t)l);
		if (a && b && !strcmp(a, property) && !strcmp(b, level))
			return (long)r;
	}
	return -1;
}

/* Meta values are only readable formatted; numbers parse back exactly. */

const char *report_format_bytes(double bytes, char *buffer, size_t length)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	if (!isfinite(bytes) || bytes < 0) {
		snprintf(buffer, length, "-");
		return buffer;
	}
	int u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	if (u == 0 || bytes >= 100 || fabs(bytes - round(bytes)) < 0.05)
		snprintf(buffer, length, "%.0f %s", bytes, units[u]);
	else
		snprintf(buffer, length, "%.1f %s", bytes, units[u]);
	return buffer;
}

static void cell_number_or(output_table *t, double v, const char *status, const char *why)
{
	if (isfinite(v))
		output_cell_real(t, v);
	else
		output_cell_status(t, status, why);
}

/* Median of the finite values of column `value` in rows matching threads,
 * kernel and level of bw's per-size table. */
static double bandwidth_spread(const output_table *t, double threads, const char *kernel, const char *level)
{
	int th = t ? output_column_index(t, "threads") : -1, k = t ? output_column_index(t, "kernel") : -1;
	int l = t ? output_column_index(t, "level") : -1, c = t ? output_column_index(t, "cv") : -1;
	if (th < 0 || k < 0 || l < 0 || c < 0)
		return NAN;
	double v[256];
	size_t n = 0;
	for (size_t r = 0; r < output_row_count(t) && n < 256; r++) {
		const char *kk = output_cell_string(t, r, (size_t)k), *ll = output_cell_string(t, r, (size_t)l);
		if (output_cell_number(t, r, (size_t)th) != threads || !kk || strcmp(kk, kernel) || !ll || strcmp(ll, level))
			continue;
		double x = output_cell_number(t, r, (size_t)c);
		if (isfinite(x))
			v[n++] = x;
	}
	if (!n)
		return NAN;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double s = v[j];
			v[j] = v[j - 1];
			v[j - 1] = s;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The sysfs size of a level from topo's cache table (data or unified). */
static double sysfs_size(const output_report *topo, const output_report *lat, const char *level)
{
	const output_table *t = topo ? output_table_find(topo, "caches") : NULL;
	int l = t ? output_column_index(t, "level") : -1, ty = t ? output_column_index(t, "type") : -1;
	int s = t ? output_column_index(t, "size") : -1;
	for (size_t r = 0; l >= 0 && ty >= 0 && s >= 0 && r < output_row_count(t); r++) {
		const char *a = output_cell_string(t, r, (size_t)l), *b = output_cell_string(t, r, (size_t)ty);
		if (a && b && !strcmp(a, level) && strcmp(b, "instruction") != 0)
			return output_cell_number(t, r, (size_t)s);
	}
	const output_table *levels = lat ? output_table_find(lat, "levels") : NULL;
	return output_number_at(levels, output_row_where(levels, "level", level), "sysfs_size");
}

static bool differ(double a, double b, double factor)
{
	return isfinite(a) && isfinite(b) && a > 0 && b > 0 && (a / b > factor || b / a > factor);
}

/* The checks a level's figures broke, appended to its note. */
static void append_flags(char *note, size_t length, const char *level, const machine_check *checks, size_t count)
{
	size_t name = strlen(level);
	for (size_t i = 0; i < count; i++) {
		if (!checks[i].broken || strncmp(checks[i].figure, level, name) || checks[i].figure[name] != ' ')
			continue;
		size_t n = strlen(note);
		if (n + 420 < length)
			snprintf(note + n, length - n, "%sFlagged: %.64s %.3g %.8s is %.320s.", n ? " " : "", checks[i].figure,
			         checks[i].value, checks[i].unit, checks[i].rule);
	}
}

size_t report_working_set_level(const double *knee, const double *capacity, size_t count, bool *unknown)
{
	*unknown = false;
	for (size_t i = 0; i < count; i++) {
		if (knee[i] == 0)
			return i;
		if (!isfinite(knee[i]) && !isfinite(capacity[i]))
			continue;   /* no such level: neither simulated nor listed */
		if (!isfinite(knee[i]) || !isfinite(capacity[i])) {
			*unknown = true;
			return count;
		}
		if (knee[i] <= capacity[i])
			return i;
	}
	return count;
}

/* The program section's (plumb sim --curve data) knee of the whole
 * program's curve at a cache level (0: no capacity removes a miss; NaN: the
 * level was not simulated). */
static double program_knee(const output_report *program, size_t level)
{
	static const char *const words[] = { "l1d", "l2", "l3" };
	const output_table *k = program ? output_table_find(program, "knees") : NULL;
	int rc = k ? output_column_index(k, "region") : -1, lc = k ? output_column_index(k, "level") : -1;
	for (size_t r = 0; rc >= 0 && lc >= 0 && level < 3 && r < output_row_count(k); r++) {
		const char *region = output_cell_string(k, r, (size_t)rc), *word = output_cell_string(k, r, (size_t)lc);
		if (region && word && !strcmp(region, "(all)") && !strcmp(word, words[level])) {
			double knee = output_number_at(k, (long)r, "knee_bytes");
			return isfinite(knee) ? knee : 0;
		}
	}
	return NAN;
}

/* What a cache level holds for a program here: its usable capacity where
 * the one rule applies (machine_usable_bytes), else its sysfs size. */
static double program_capacity(const machine_model *model, const char *name, double claimed)
{
	const machine_level *ml = machine_model_level(model, name);
	double usable = machine_level_usable(ml);
	if (isfinite(usable))
		return usable;
	return isfinite(claimed) ? claimed : ml ? ml->nominal_bytes : NAN;
}

/* The sentence of where the program's working set lands (meta
 * "working_set"), from the levels' knees and capacities. */
static void working_set_sentence(const char *program, const double *knee, const double *capacity, size_t lands,
                                 bool unknown, char *out, size_t length)
{
	static const char *const names[] = { "L1", "L2", "L3", "memory" };
	static const char *const curves[] = { "L1D", "L2", "L3" };
	char a[32], b[32];
	size_t used = (size_t)snprintf(out, length, "The working set of %s ", program && program[0] ? program : "the program");
	if (used >= length)
		return;
	if (unknown) {
		for (size_t i = 0; i < 3; i++)
			if (isfinite(knee[i]) != isfinite(capacity[i])) {
				snprintf(out + used, length - used, "cannot be placed: the %s's %s is unknown%s", names[i],
				         !isfinite(knee[i]) ? "curve" : "capacity",
				         !isfinite(knee[i]) ? " (it was not simulated)" : " (the topo or lat section gives it)");
				break;
			}
		return;
	}
	if (lands < 3 && knee[lands] == 0) {
		snprintf(out + used, length - used, "lands in the %s: no capacity removes one of its %s misses, each is a "
		         "line's first reference (it streams through its data, or reuses no more than a line).",
		         names[lands], curves[lands]);
		return;
	}
	if (lands < 3)
		used += (size_t)snprintf(out + used, length - used, "lands in the %s: the knee of its %s curve, %s, is "
		                         "within the %s the %s holds for a program here", names[lands], curves[lands],
		                         report_format_bytes(knee[lands], a, sizeof a),
		                         report_format_bytes(capacity[lands], b, sizeof b), names[lands]);
	else
		used += (size_t)snprintf(out + used, length - used, "lands in memory: no cache level holds it");
	for (size_t i = 0; i < lands && i < 3 && used < length; i++)
		if (isfinite(knee[i]))
			used += (size_t)snprintf(out + used, length - used, "%s the %s's knee, %s, is beyond its %s",
			                         i == 0 ? "; " : ", ", curves[i], report_format_bytes(knee[i], a, sizeof a),
			                         report_format_bytes(capacity[i], b, sizeof b));
	if (used + 1 < length)
		snprintf(out + used, length - used, ".");
}

static void add_hierarchy(output_report *s, const output_report *topo, const output_report *lat,
                          const output_report *bw, const output_report *geometry, bool virtualised,
                          const machine_model *model, const machine_check *checks, size_t check_count,
                          const output_report *program)
{
	output_table *t = output_table_add(s, "hierarchy", "The memory hierarchy");
	output_column(t, "level", NULL, 0);
	output_column(t, "sysfs_size", "bytes", 0);
	output_column(t, "measured_size", "bytes", 0);
	output_column(t, "measured_size_low", "bytes", 0);
	output_column(t, "measured_size_high", "bytes", 0);
	output_column(t, "size_source", NULL, 0);
	output_column(t, "size_passes", NULL, 0);
	output_column(t, "size_stability", NULL, 0);
	output_column(t, "latency", "ns", 2);
	output_column(t, "latency_low", "ns", 2);
	output_column(t, "latency_high", "ns", 2);
	output_column(t, "latency_cycles", "core cycles", 1);
	output_column(t, "latency_source", NULL, 0);
	output_column(t, "read_1", "GB/s", 1);
	output_column(t, "read_all", "GB/s", 1);
	output_column(t, "write_1", "GB/s", 1);
	output_column(t, "write_all", "GB/s", 1);
	output_column(t, "bandwidth_cv", "%", 1);
	output_column(t, "note", NULL, 0);
	/* With --program: each cache level's knee of the program's curve, what
	 * the level holds for it, and the level its working set lands in. */
	double knee[3], capacity[3];
	size_t lands = 3;
	bool unknown = false;
	if (program) {
		output_column(t, "program_knee", "bytes", 0);
		output_column(t, "program_capacity", "bytes", 0);
		output_column(t, "program_lands", NULL, 0);
		static const char *const cache_names[] = { "L1", "L2", "L3" };
		for (size_t i = 0; i < 3; i++) {
			knee[i] = program_knee(program, i);
			capacity[i] = program_capacity(model, cache_names[i], sysfs_size(topo, lat, cache_names[i]));
		}
		lands = report_working_set_level(knee, capacity, 3, &unknown);
		char sentence[1024], name[256];
		output_meta_text_of(program, "trace", name, sizeof name);
		working_set_sentence(name, knee, capacity, lands, unknown, sentence, sizeof sentence);
		if (name[0])
			output_meta_text(s, "program", name);
		output_meta_text(s, "working_set", sentence);
	}
	const output_table *levels = lat ? output_table_find(lat, "levels") : NULL;
	const output_table *g = geometry ? output_table_find(geometry, "geometry") : NULL;
	const output_table *bl = bw ? output_table_find(bw, "levels") : NULL, *bt = bw ? output_table_find(bw, "bandwidth") : NULL;
	double clock = output_meta_number_of(lat, "core_clock_ghz_estimate"), all = machine_bw_max_threads(bl);
	static const char *const names[] = { "L1", "L2", "L3", "DRAM" };
	for (size_t i = 0; i < 4; i++) {
		const char *name = names[i], *lat_name = i == 3 ? "memory" : name;
		double claimed = i == 3 ? NAN : sysfs_size(topo, lat, name);
		long lr = output_row_where(levels, "level", lat_name);
		long gc = geometry_row(g, "capacity", name), gl = geometry_row(g, "latency", lat_name);
		const machine_level *ml = machine_model_level(model, name);
		if (lr < 0 && gc < 0 && gl < 0 && !isfinite(claimed) && !isfinite(machine_bw_figure(bl, 1, "read", name)) && !ml &&
		    !(program && (i == 3 ? lands == 3 && !unknown : isfinite(knee[i]))))
			continue;
		char note[2048] = "", a[32], b[32];
		output_row(t);
		output_cell_text(t, name);
		if (i == 3)
			output_cell_status(t, "n/a", "main memory has no cache size");
		else
			cell_number_or(t, claimed, "unknown", "sysfs does not list this level");
		/* Size: one measurement and one detector (plumb lat's sweep and
		 * its repeated passes; geometry reads the same when the report
		 * runs it after lat).  The range is the end's spread over the
		 * passes. */
		double gv = output_number_at(g, gc, "measured"), glo = output_number_at(g, gc, "spread_low"), ghi = output_number_at(g, gc, "spread_high");
		double lv = output_number_at(levels, lr, "ends_at"), llow = output_number_at(levels, lr, "ends_low"), lhigh = output_number_at(levels, lr, "ends_high");
		const char *stability = output_text_at(levels, lr, "stability");
		double passes = output_number_at(levels, lr, "passes");
		if (!isfinite(lv)) {
			stability = output_text_at(g, gc, "stability");
			passes = output_number_at(g, gc, "passes");
		}
		double size = isfinite(lv) ? lv : gv;
		double lo = isfinite(lv) ? llow : glo, hi = isfinite(lv) ? lhigh : ghi;
		if (!isfinite(lo))
			lo = size;
		if (!isfinite(hi))
			hi = size;
		char source[96] = "";
		if (isfinite(size))
			snprintf(source, sizeof source, "%s%s", isfinite(lv) ? "latency sweep" : "geometry (plumb lat's sweep)",
			         isfinite(passes) && passes <= 1 ? ", one pass" : "");
		if (isfinite(size) && passes > 1)
			snprintf(source + strlen(source), sizeof source - strlen(source), ", %.0f passes%s", passes,
			         stability && !strcmp(stability, "unstable") ? ": unstable" : "");
		if (stability && !strcmp(stability, "unstable"))
			snprintf(note, sizeof note,
			         "Size: unstable: %.0f repeated passes put the end between %s and %s. %s The size shown is where the quietest passes put it; no verdict against sysfs is given.",
			         passes, report_format_bytes(lo, a, sizeof a), report_format_bytes(hi, b, sizeof b),
			         virtualised && i == 2 ? "Other guests share this virtual machine's last-level cache and evict it between passes, so what a program can use changes from minute to minute."
			                               : "Another program evicted the cache between passes.");
		if (isfinite(lv) && isfinite(gv) && lv != gv) {
			/* Only when geometry measured on its own (sections from two
			 * runs): say so rather than blend two measurements. */
			size_t used = strlen(note);
			snprintf(note + used, sizeof note - used, "%sThe geometry section measured separately and saw %s; the latency sweep's figure is shown.",
			         used ? " " : "Size: ", report_format_bytes(gv, a, sizeof a));
		}
		if (i == 3) {
			output_cell_status(t, "n/a", "main memory has no cache size");
			output_cell_status(t, "n/a", "main memory has no cache size");
			output_cell_status(t, "n/a", "main memory has no cache size");
			output_cell_text(t, "-");
		} else {
			const char *no_end = ml && ml->hidden ? "hidden: the latency sweep shows no plateau of its own for this cache"
			                                      : "no sweep found where this level ends";
			cell_number_or(t, size, "unresolved", no_end);
			cell_number_or(t, lo, "unresolved", no_end);
			cell_number_or(t, hi, "unresolved", no_end);
			output_cell_text(t, source[0] ? source : "-");
		}
		if (i < 3 && isfinite(size) && passes >= 1)
			output_cell_integer(t, (int64_t)passes);
		else
			output_cell_status(t, "n/a", i == 3 ? "main memory has no cache size" : "no repeated passes");
		output_cell_text(t, i < 3 && stability && isfinite(size) ? stability : "-");
		if (ml && ml->hidden) {
			size_t n = strlen(note);
			snprintf(note + n, sizeof note - n,
			         "%sHidden: sysfs lists a %s cache, but the latency sweep shows no plateau of its own for it (a virtual "
			         "machine's host can leave a guest only a sliver of a shared cache); the other levels are named by capacity.",
			         n ? " " : "", report_format_bytes(claimed, a, sizeof a));
		} else if (ml && ml->shared && isfinite(machine_usable_bytes(claimed, size))) {
			/* the one rule (machine_usable_bytes), which sim_preset_apply_machine applies */
			size_t n = strlen(note);
			snprintf(note + n, sizeof note - n,
			         "%sUsable: a program here can use about %s of the %s sysfs lists (other cores and guests share it); "
			         "plumb sim --machine report.json simulates the usable size, --preset host-nominal the nominal one.",
			         n ? " " : "", report_format_bytes(size, a, sizeof a), report_format_bytes(claimed, b, sizeof b));
		}
		/* Latency: the same measurement's plateau (10th percentile) and
		 * its range over the plateau; geometry's only without lat.  The
		 * machine model takes memory's from its plateau past the last
		 * cache, also for a lat report saved before lat did. */
		double lat_ns = output_number_at(levels, lr, "latency"), llo = output_number_at(levels, lr, "low"), lhi = output_number_at(levels, lr, "high");
		if (ml && isfinite(ml->latency_ns) && isfinite(lat_ns)) {
			if (ml->latency_ns != lat_ns) {
				size_t n = strlen(note);
				snprintf(note + n, sizeof note - n, "%sLatency: %s.", n ? " " : "", ml->latency_source);
			}
			lat_ns = ml->latency_ns;
			if (isfinite(ml->latency_low) && isfinite(ml->latency_high)) {
				llo = ml->latency_low;
				lhi = ml->latency_high;
			}
		}
		double gns = output_number_at(g, gl, "measured");
		const char *lsource = isfinite(lat_ns) ? "latency sweep" : isfinite(gns) ? "geometry" : NULL;
		if (!isfinite(lat_ns)) {
			lat_ns = gns;
			llo = lhi = gns;
		}
		if (!isfinite(llo))
			llo = lat_ns;
		if (!isfinite(lhi))
			lhi = lat_ns;
		if (isfinite(gns) && lsource && !strcmp(lsource, "latency sweep") && differ(lat_ns, gns, 1.01)) {
			size_t n = strlen(note);
			snprintf(note + n, sizeof note - n, "%sLatency: the geometry section measured separately and saw %.3g ns; the latency sweep's figure is shown.",
			         n ? " " : "", gns);
		}
		const char *no_latency = ml && ml->hidden ? "hidden: the latency sweep shows no plateau of its own for this cache"
		                         : lat ? "the latency sweep found no plateau for this level"
		                               : "neither the latency nor the geometry section ran";
		cell_number_or(t, lat_ns, "unsupported", no_latency);
		cell_number_or(t, llo, "unsupported", no_latency);
		cell_number_or(t, lhi, "unsupported", no_latency);
		if (isfinite(lat_ns) && isfinite(clock))
			output_cell_real(t, lat_ns * clock);
		else
			output_cell_status(t, "unsupported", isfinite(lat_ns) ? "the latency section did not estimate the core clock" : "no latency measured");
		output_cell_text(t, lsource ? lsource : "-");
		const char *no_bw = bw ? "the bandwidth section has no figure for this level" : "the bandwidth section did not run";
		cell_number_or(t, machine_bw_figure(bl, 1, "read", name), "unsupported", no_bw);
		cell_number_or(t, isfinite(all) && all > 1 ? machine_bw_figure(bl, all, "read", name) : NAN, "unsupported",
		               isfinite(all) && all <= 1 ? "one CPU: no multi-thread run" : no_bw);
		cell_number_or(t, machine_bw_figure(bl, 1, "write", name), "unsupported", no_bw);
		cell_number_or(t, isfinite(all) && all > 1 ? machine_bw_figure(bl, all, "write", name) : NAN, "unsupported",
		               isfinite(all) && all <= 1 ? "one CPU: no multi-thread run" : no_bw);
		double cv = bandwidth_spread(bt, 1, "read", name);
		cell_number_or(t, isfinite(cv) ? 100 * cv : NAN, "unsupported", no_bw);
		append_flags(note, sizeof note, name, checks, check_count);
		output_cell_text(t, note);
		if (program) {
			if (i == 3) {
				output_cell_status(t, "n/a", "main memory has no cache size");
				output_cell_status(t, "n/a", "main memory has no cache size");
			} else {
				if (isfinite(knee[i]) && knee[i] > 0)
					output_cell_real(t, knee[i]);
				else
					output_cell_status(t, "n/a", isfinite(knee[i]) ? "no capacity removes a miss: every miss is a "
					                   "line's first reference" : "the program's run simulated no such level");
				cell_number_or(t, capacity[i], "unknown", "neither sysfs nor the latency sweep gives this level's size");
			}
			output_cell_text(t, unknown ? "unknown" : lands == i ? "yes" : "no");
		}
	}
}

static void figure_status(output_table *t, const char *quantity, double value, const char *unit, const char *detail,
                          const char *status, const char *why_missing)
{
	output_row(t);
	output_cell_text(t, quantity);
	cell_number_or(t, value, status, why_missing);
	output_cell_text(t, unit);
	output_cell_text(t, detail);
}

static void figure(output_table *t, const char *quantity, double value, const char *unit, const char *detail,
                   const char *why_missing)
{
	output_row(t);
	output_cell_text(t, quantity);
	cell_number_or(t, value, "unsupported", why_missing);
	output_cell_text(t, unit);
	output_cell_text(t, detail);
}

static void add_figures(output_report *s, const output_report *c2c, const output_report *loaded, const output_report *model,
                        const output_report *lat, const output_report *perturb, const machine_check *limits, size_t check_count)
{
	output_table *t = output_table_add(s, "figures", "Other figures");
	output_column(t, "quantity", NULL, 0);
	output_column(t, "value", NULL, 1);
	output_column(t, "unit", NULL, 0);
	output_column(t, "detail", NULL, 0);
	char detail[1024];
	if (c2c) {
		const output_table *p = output_table_find(c2c, "pairs");
		long row = -1;
		for (size_t r = 0; p && r < output_row_count(p); r++)
			if (isfinite(output_number_at(p, (long)r, "load_from_modified"))) {
				row = (long)r;
				break;
			}
		const char *d = output_text_at(p, row, "distance");
		snprintf(detail, sizeof detail, "a load of a line another core modified (%s, CPUs %.0f and %.0f); ping-pong round trip %.1f ns",
		         d ? d : "?", output_number_at(p, row, "cpu_a"), output_number_at(p, row, "cpu_b"), output_number_at(p, row, "pingpong_round_trip"));
		figure(t, "cache-to-cache transfer", output_number_at(p, row, "load_from_modified"), "ns", row >= 0 ? detail : "",
		       p && output_row_count(p) ? reason(p, 0, "load_from_modified") : "the coherence section did not measure a pair");
	}
	if (loaded) {
		const output_table *l = output_table_find(loaded, "loaded");
		long idle = output_row_where(l, "delay", "idle"), top = -1;
		double best = -1;
		for (size_t r = 0; l && r < output_row_count(l); r++) {
			double bw = output_number_at(l, (long)r, "total_bandwidth");
			if (isfinite(bw) && bw > best && (long)r != idle) {
				best = bw;
				top = (long)r;
			}
		}
		/* The loaded section's own checks: its idle point against lat's
		 * loop on the same chain, and whether the rise can be queueing. */
		const output_table *checks = output_table_find(loaded, "checks");
		long ic = output_row_where(checks, "check", "idle"), qc = output_row_where(checks, "check", "queueing");
		const char *idle_verdict = output_text_at(checks, ic, "verdict"), *queueing = output_text_at(checks, qc, "verdict");
		double reference_ns = output_number_at(checks, ic, "reference");
		/* The idle point is also the same quantity as the latency
		 * section's memory plateau: say so when the two runs disagree. */
		const output_table *levels = lat ? output_table_find(lat, "levels") : NULL;
		double idle_ns = output_number_at(l, idle, "latency"), memory_ns = output_number_at(levels, output_row_where(levels, "level", "memory"), "latency");
		size_t n = (size_t)snprintf(detail, sizeof detail, "pointer chase through 64 MiB with no other traffic");
		if (idle_verdict && !strcmp(idle_verdict, "agrees") && isfinite(reference_ns))
			n += (size_t)snprintf(detail + n, sizeof detail - n,
			                      "; idle check: agrees with the latency probe's own loop on the same chain (%.0f ns)", reference_ns);
		else if (idle_verdict && !strcmp(idle_verdict, "disagrees") && isfinite(reference_ns))
			n += (size_t)snprintf(detail + n, sizeof detail - n,
			                      "; idle check: %.1fx the latency probe's own loop on the same chain (%.0f ns): the idle point was "
			                      "disturbed, so read this curve for the change under load, not its level",
			                      idle_ns / reference_ns, reference_ns);
		if (differ(idle_ns, memory_ns, 1.5) && n < sizeof detail)
			snprintf(detail + n, sizeof detail - n,
			         "; %.1fx the latency section's DRAM latency (%.0f ns): the two are separate runs, minutes apart, and memory latency "
			         "moves with what other programs do meanwhile; trust the latency section's for an unloaded load",
			         idle_ns / memory_ns, memory_ns);
		figure(t, "loaded latency, idle", idle_ns, "ns", detail, "the loaded section has no idle point");
		n = (size_t)snprintf(detail, sizeof detail, "at the highest load reached: %.0f MB/s in total", best);
		if (queueing && !strcmp(queueing, "consistent"))
			snprintf(detail + n, sizeof detail - n,
			         "; queueing check: every point is within what Hristea's queueing model (1997) allows at its load");
		else if (queueing && !strcmp(queueing, "step-not-queueing"))
			snprintf(detail + n, sizeof detail - n,
			         "; queueing check: a step of %.0f ns at %.0f MB/s that Hristea's queueing model (1997) cannot make (it allows "
			         "%.0f ns there): something other than the generators' traffic made it (a sharer of the latency thread's core "
			         "or time slices, or other programs' memory traffic), so this curve is not queueing behind the generators",
			         output_number_at(checks, qc, "measured") - idle_ns, output_number_at(checks, qc, "at_bandwidth"), output_number_at(checks, qc, "reference"));
		figure(t, "loaded latency, highest load", output_number_at(l, top, "latency"), "ns", top >= 0 ? detail : "",
		       "the loaded section has no loaded point");
	}
	if (model) {
		const output_table *f = output_table_find(model, "fit");
		double service = output_number_at(f, 0, "service_time"), service_low = output_number_at(f, 0, "service_time_low");
		double service_high = output_number_at(f, 0, "service_time_high");
		size_t n = (size_t)snprintf(detail, sizeof detail, "Hristea et al.'s closed queueing model (1997) fitted to the loaded-latency curve");
		if (isfinite(service_low) && isfinite(service_high))
			n += (size_t)snprintf(detail + n, sizeof detail - n, "; 95%% interval %.3g-%.3g ns", service_low, service_high);
		const char *fit_shape = output_text_at(f, 0, "shape");
		if (fit_shape && !strcmp(fit_shape, "at the measured bandwidth"))
			n += (size_t)snprintf(detail + n, sizeof detail - n,
			                      "; held to the DRAM bandwidth measured in the same run, %.0f MB/s (the curve alone "
			                      "gives %.3g ns)", output_number_at(f, 0, "peak_bound"),
			                      output_number_at(f, 0, "free_service_time"));
		snprintf(detail + n, sizeof detail - n, "; peak %.0f MB/s, rms error %.0f ns", output_number_at(f, 0, "peak_bandwidth"),
		         output_number_at(f, 0, "rms_error"));
		/* A fit the physics rules out is no headline figure: its value
		 * goes with the reason, in the cell's status. */
		char why[1024] = "";
		for (size_t i = 0; i < check_count; i++)
			if (limits[i].broken && !strncmp(limits[i].figure, "queueing model", 14)) {
				size_t w = strlen(why);
				if (w < 500)
					snprintf(why + w, sizeof why - w, "%s%.64s %.3g %.8s is %.320s", w ? "; " : "", limits[i].figure,
					         limits[i].value, limits[i].unit, limits[i].rule);
			}
		const char *shape = output_text_at(f, 0, "shape");
		if (why[0] && isfinite(service))
			figure_status(t, "queueing model service time", NAN, "ns", detail, "flagged", why);
		else if (!isfinite(service) && shape && !strcmp(shape, "flat")) {
			/* the model section says why: the curve did not rise */
			int sc = output_column_index(f, "service_time");
			const char *reason = sc >= 0 ? output_cell_reason(f, 0, (size_t)sc) : NULL;
			figure_status(t, "queueing model service time", NAN, "ns",
			              "Hristea et al.'s closed queueing model (1997) fitted to the loaded-latency curve", "not determined",
			              reason ? reason : "not determined: the loaded latency does not rise with bandwidth (a flat curve)");
		} else
			figure(t, "queueing model service time", service, "ns", f && output_row_count(f) ? detail : "",
			       "the model section produced no fit");
	}
	if (perturb) {
		/* Watson's conclusion drawn for the workload: f*, and the buffer it implies */
		char program[256];
		output_meta_text_of(perturb, "program", program, sizeof program);
		double f_star = output_meta_number_of(perturb, "f_star_seconds"), rate = output_meta_number_of(perturb, "reference_rate");
		double buffer = output_meta_number_of(perturb, "buffer_records");
		snprintf(detail, sizeof detail,
		         "the shortest interval between halts at which no event of '%s' differs significantly from unhalted runs "
		         "(Watson's method, 2004: %.0f configurations, %.0f runs each)", program,
		         output_meta_number_of(perturb, "configurations"), output_meta_number_of(perturb, "runs_per_configuration"));
		figure(t, "halts that do not perturb (f*)", 1e3 * f_star, "ms", detail,
		       "no interval tested left every event unchanged: the program needs halts further apart than the longest tried");
		snprintf(detail, sizeof detail, "f* x the workload's %.3g references per second (from a recording of it): a tracer's buffer "
		         "this large halts it no more often than f*", rate);
		figure(t, "trace buffer for f*", buffer, "references", detail,
		       !isfinite(f_star) ? "there is no f*" : !isfinite(rate) ? "no reference rate: recording the workload needs valgrind"
		                                                               : "the perturb section gave no buffer size");
	}
}

/* The counter verdict grid: one row per event, one column per source; a
 * cell lists the error classes over the event's benchmarks, and every
 * distinct reason for "unsupported" becomes one numbered footnote. */
static const char *const grid_sources[] = { "perf_event", "papi", "simulator", "instrumented" };
#define GRID_SOURCES 4

typedef struct grid_reasons { char **text; size_t count; } grid_reasons;

static size_t reason_number(grid_reasons *g, const char *text)
{
	for (size_t i = 0; i < g->count; i++)
		if (!strcmp(g->text[i], text))
			return i + 1;
	char **grown = realloc(g->text, (g->count + 1) * sizeof *grown);
	char *copy = strdup(text);
	if (!grown || !copy) {
		free(copy);
		if (grown)
			g->text = grown;
		return 0;
	}
	g->text = grown;
	g->text[g->count++] = copy;
	return g->count;
}

static bool good_class(const char *c)
{
	return c && (!strcmp(c, "exact") || !strcmp(c, "accurate"));
}

typedef struct source_tally { size_t verified, supported; } source_tally;

static void add_counters(output_report *s, const output_report *validate, const output_report *topo, char *trust, size_t trust_length)
{
	const output_table *v = validate ? output_table_find(validate, "verdict") : NULL;
	int ce = v ? output_column_index(v, "event") : -1, cb = v ? output_column_index(v, "benchmark") : -1;
	int cs = v ? output_column_index(v, "source") : -1, cc = v ? output_column_index(v, "class") : -1;
	const output_table *tc = topo ? output_table_find(topo, "timing_and_counters") : NULL;
	long hw = output_row_where(tc, "property", "hardware_counters");
	const char *hw_status = output_text_at(tc, hw, "value"), *hw_reason = reason(tc, hw, "value");
	bool no_pmu = hw_reason != NULL;
	trust[0] = 0;
	if (!v || ce < 0 || cb < 0 || cs < 0 || cc < 0) {
		if (hw >= 0)
			snprintf(trust, trust_length, "%s The counter validation did not run, so no event was checked against a prediction.",
			         no_pmu ? "No hardware PMU: every hardware event is unavailable." : "Hardware counters open on this machine.");
		(void)hw_status;
		return;
	}
	output_table *t = output_table_add(s, "counters", "Can I trust my counters? Each event against its closed-form prediction, per source");
	output_column(t, "event", NULL, 0);
	output_column(t, "predicted", NULL, 0);
	for (size_t k = 0; k < GRID_SOURCES; k++)
		output_column(t, grid_sources[k], NULL, 0);
	grid_reasons reasons = { 0 };
	source_tally tally[GRID_SOURCES] = { { 0, 0 } };
	size_t events = 0, software_exact = 0, software = 0;
	bool pmu_reason = false;
	for (size_t r = 0; r < output_row_count(v); r++) {
		const char *event = output_cell_string(v, r, (size_t)ce);
		if (!event)
			continue;
		bool seen = false;
		for (size_t q = 0; q < r && !seen; q++) {
			const char *e = output_cell_string(v, q, (size_t)ce);
			seen = e && !strcmp(e, event);
		}
		if (seen)
			continue;
		events++;
		output_row(t);
		output_cell_text(t, event);
		/* predicted: the benchmarks that give the event a closed form. */
		char benchmarks[512] = "";
		for (size_t q = r; q < output_row_count(v); q++) {
			const char *e = output_cell_string(v, q, (size_t)ce), *b = output_cell_string(v, q, (size_t)cb);
			if (!e || strcmp(e, event) || !b || strstr(benchmarks, b))
				continue;
			size_t n = strlen(benchmarks);
			snprintf(benchmarks + n, sizeof benchmarks - n, "%s%s", n ? ", " : "", b);
		}
		output_cell_text(t, benchmarks);
		bool is_software = strncmp(event, "PAPI_", 5) != 0;
		for (size_t k = 0; k < GRID_SOURCES; k++) {
			char cell[256] = "", marks[64] = "";
			size_t classes = 0;
			bool all_good = true, any = false;
			for (size_t q = r; q < output_row_count(v); q++) {
				const char *e = output_cell_string(v, q, (size_t)ce), *src = output_cell_string(v, q, (size_t)cs);
				if (!e || strcmp(e, event) || !src || strcmp(src, grid_sources[k]))
					continue;
				const char *c = output_cell_string(v, q, (size_t)cc), *why = output_cell_reason(v, q, (size_t)cc);
				if (!c)
					continue;
				if (output_cell_kind(v, q, (size_t)cc) == CELL_STATUS) {
					if (why && strstr(why, "no PMU"))
						pmu_reason = true;
					size_t number_of = why ? reason_number(&reasons, why) : 0;
					char mark[32];
					snprintf(mark, sizeof mark, "[%zu]", number_of);
					if (number_of && !strstr(marks, mark)) {
						size_t n = strlen(marks);
						snprintf(marks + n, sizeof marks - n, "%s", mark);
					}
					continue;
				}
				any = true;
				all_good &= good_class(c);
				if (!strstr(cell, c)) {
					size_t n = strlen(cell);
					snprintf(cell + n, sizeof cell - n, "%s%s", classes ? ", " : "", c);
					classes++;
				}
			}
			if (any) {
				tally[k].supported++;
				tally[k].verified += all_good;
				if (k == 0 && is_software) {
					software++;
					software_exact += all_good;
				}
				if (marks[0]) {
					size_t n = strlen(cell);
					snprintf(cell + n, sizeof cell - n, "; elsewhere unsupported %s", marks);
				}
				output_cell_text(t, cell);
			} else if (marks[0]) {
				snprintf(cell, sizeof cell, "unsupported %s", marks);
				output_cell_text(t, cell);
			} else {
				output_cell_text(t, "-");
			}
		}
	}
	output_table *rt = output_table_add(s, "unsupported_reasons", "Why a source cannot count an event (numbered as in the grid)");
	output_column(rt, "note", NULL, 0);
	output_column(rt, "reason", NULL, 0);
	for (size_t i = 0; i < reasons.count; i++) {
		char n[32];
		snprintf(n, sizeof n, "[%zu]", i + 1);
		output_row(rt);
		output_cell_text(rt, n);
		output_cell_text(rt, reasons.text[i]);
		free(reasons.text[i]);
	}
	free(reasons.text);
	size_t n = 0;
	if (no_pmu || pmu_reason)
		n += (size_t)snprintf(trust + n, trust_length - n, "No hardware PMU: every hardware event is unavailable. ");
	else if (hw >= 0)
		n += (size_t)snprintf(trust + n, trust_length - n, "Hardware counters open on this machine. ");
	if (software && n < trust_length)
		n += (size_t)snprintf(trust + n, trust_length - n, "Software events are %s. ",
		                      software_exact == software ? "exact" : "not all exact (see the grid)");
	if (n < trust_length)
		snprintf(trust + n, trust_length - n,
		         "%zu of %zu events verified through perf_event, %zu of %zu through PAPI; the simulator matches the prediction for %zu of %zu, instrumentation for %zu of %zu.",
		         tally[0].verified, events, tally[1].verified, events, tally[2].verified, events, tally[3].verified, events);
}

static void copy_cell(output_table *to, const output_table *from, size_t row, const char *column)
{
	int c = output_column_index(from, column);
	if (c < 0) {
		output_cell_status(to, "unsupported", "the validation did not run this source");
		return;
	}
	switch (output_cell_kind(from, row, (size_t)c)) {
	case CELL_INTEGER:
	case CELL_REAL: output_cell_real(to, output_cell_number(from, row, (size_t)c)); break;
	case CELL_TEXT: output_cell_text(to, output_cell_string(from, row, (size_t)c)); break;
	case CELL_STATUS: output_cell_status(to, output_cell_string(from, row, (size_t)c), output_cell_reason(from, row, (size_t)c)); break;
	default: output_cell_empty(to); break;
	}
}

/* The simulator's view of this machine: the host preset (this machine's
 * caches from hwloc) run on the validation microbenchmarks' own reference
 * streams; for each miss or coherence event, its largest case inside the
 * benchmark's validity domain, with the prediction and what each counter
 * source measured beside it. */
static void add_simulated(output_report *s, const output_report *validate, const output_report *topo)
{
	const output_table *src = validate ? output_table_find(validate, "sources") : NULL;
	int cb = src ? output_column_index(src, "benchmark") : -1, ce = src ? output_column_index(src, "event") : -1;
	int cs = src ? output_column_index(src, "size") : -1, cd = src ? output_column_index(src, "in_domain") : -1;
	if (cb < 0 || ce < 0 || cs < 0)
		return;
	output_table *t = output_table_add(s, "simulated", "The simulator on the microbenchmarks' reference streams, beside the prediction and the counters");
	output_column(t, "benchmark", NULL, 0);
	output_column(t, "event", NULL, 0);
	output_column(t, "size", NULL, 0);
	output_column(t, "predicted", NULL, 0);
	output_column(t, "simulator", NULL, 0);
	output_column(t, "perf_event", NULL, 0);
	output_column(t, "papi", NULL, 0);
	output_column(t, "instrumented", NULL, 0);
	size_t rows = output_row_count(src);
	for (size_t r = 0; r < rows; r++) {
		const char *b = output_cell_string(src, r, (size_t)cb), *e = output_cell_string(src, r, (size_t)ce);
		if (!b || !e || !(strstr(e, "DCM") || strstr(e, "ICM") || strstr(e, "TLB") || strstr(e, "_CA_")))
			continue;
		/* the last in-domain row of this (benchmark, event): its largest case */
		long best = -1;
		bool first = true;
		for (size_t q = 0; q < rows; q++) {
			const char *bb = output_cell_string(src, q, (size_t)cb), *ee = output_cell_string(src, q, (size_t)ce);
			if (!bb || !ee || strcmp(bb, b) || strcmp(ee, e))
				continue;
			if (q < r)
				first = false;
			const char *dom = cd >= 0 ? output_cell_string(src, q, (size_t)cd) : "yes";
			if (dom && !strcmp(dom, "yes") &&
			    (best < 0 || output_cell_number(src, q, (size_t)cs) > output_cell_number(src, (size_t)best, (size_t)cs)))
				best = (long)q;
		}
		if (!first || best < 0)
			continue;
		output_row(t);
		output_cell_text(t, b);
		output_cell_text(t, e);
		copy_cell(t, src, (size_t)best, "size");
		copy_cell(t, src, (size_t)best, "predicted");
		copy_cell(t, src, (size_t)best, "simulator");
		copy_cell(t, src, (size_t)best, "perf_event");
		copy_cell(t, src, (size_t)best, "papi");
		copy_cell(t, src, (size_t)best, "instrumented");
	}
	/* What was simulated: the preset, and this machine's caches as hwloc gives them. */
	char text[512] = "", preset[128];
	output_meta_text_of(validate, "sim_preset", preset, sizeof preset);
	const output_table *caches = topo ? output_table_find(topo, "caches") : NULL;
	size_t n = 0;
	for (size_t r = 0; caches && r < output_row_count(caches) && n < sizeof text; r++) {
		const char *level = output_text_at(caches, (long)r, "level"), *type = output_text_at(caches, (long)r, "type");
		double size = output_number_at(caches, (long)r, "size"), ways = output_number_at(caches, (long)r, "ways");
		char b[32];
		if (!level || !type)
			continue;
		n += (size_t)snprintf(text + n, sizeof text - n, "%s%s%s %s", n ? ", " : "", level,
		                      !strcmp(type, "data") ? "d" : !strcmp(type, "instruction") ? "i" : "", report_format_bytes(size, b, sizeof b));
		if (isfinite(ways) && n < sizeof text)
			n += (size_t)snprintf(text + n, sizeof text - n, " %.0f-way", ways);
	}
	char line[768];
	snprintf(line, sizeof line, "preset %s%s%s%s", preset[0] ? preset : "host", text[0] ? " (this machine's caches from hwloc: " : "",
	         text, text[0] ? ")" : "");
	output_meta_text(s, "simulated_machine", line);
}

output_report *report_summary_build(output_report *const *sections, const char *const *commands, size_t count)
{
	output_report *s = output_report_new("summary");
	if (!s)
		return NULL;
	const output_report *in[REPORT_SUMMARY_INPUTS];
	report_section_summary_inputs(sections, commands, count, in);
	const output_report *topo = in[REPORT_SUMMARY_TOPO], *lat = in[REPORT_SUMMARY_LAT], *bw = in[REPORT_SUMMARY_BW];
	const output_report *geometry = in[REPORT_SUMMARY_GEOMETRY], *c2c = in[REPORT_SUMMARY_C2C];
	const output_report *loaded = in[REPORT_SUMMARY_LOADED], *model = in[REPORT_SUMMARY_MODEL];
	const output_report *validate = in[REPORT_SUMMARY_VALIDATE], *perturb = in[REPORT_SUMMARY_PERTURB];
	const output_report *program = in[REPORT_SUMMARY_PROGRAM];
	const output_table *machine = topo ? output_table_find(topo, "machine") : NULL;
	const char *cpu = output_text_at(machine, output_row_where(machine, "property", "cpu_model"), "value");
	const char *cpus = output_text_at(machine, output_row_where(machine, "property", "cpus"), "value");
	const char *virt = output_text_at(machine, output_row_where(machine, "property", "virtualised"), "value");
	char text[256];
	if (!cpu) {
		output_meta_text_of(validate, "cpu_model", text, sizeof text);
		if (!text[0])
			output_meta_text_of(bw, "cpu", text, sizeof text);
		cpu = text[0] ? text : NULL;
	}
	if (cpu)
		output_meta_text(s, "cpu", cpu);
	/* the generation by name, which a guest's brand string often hides
	 * ("Intel(R) Xeon(R) Processor"); a corrected model's reason (cpu.h)
	 * stays in topo's table */
	const char *generation = output_text_at(machine, output_row_where(machine, "property", "generation"), "value");
	if (generation) {
		char name[128];
		snprintf(name, sizeof name, "%.*s", (int)strcspn(generation, "("), generation);
		for (size_t n = strlen(name); n && name[n - 1] == ' '; n--)
			name[n - 1] = 0;
		if (name[0] && (!cpu || !strstr(cpu, name)))
			output_meta_text(s, "generation", name);
	}
	if (cpus)
		output_meta_text(s, "cpus", cpus);
	bool virtualised = virt && !strncmp(virt, "yes", 3);
	if (virt)
		output_meta_text(s, "virtualised", virtualised ? "yes" : "no");
	double clock = output_meta_number_of(lat, "core_clock_ghz_estimate");
	if (isfinite(clock))
		output_meta_real(s, "core_clock_ghz", clock);
	/* One machine model from the sections, every figure held against
	 * its physical limits; report.json carries both. */
	machine_model m;
	machine_check checks[MACHINE_MODEL_CHECKS];
	size_t check_count = 0, broken = 0;
	plumb_status ignored;
	bool have_model = (topo || lat || bw) && machine_model_build(&m, topo, lat, bw, model, &ignored) == 0;
	if (have_model) {
		if (isfinite(m.clock_low) && isfinite(m.clock_high)) {
			output_meta_real(s, "core_clock_ghz_low", m.clock_low);
			output_meta_real(s, "core_clock_ghz_high", m.clock_high);
		}
		check_count = machine_model_check(&m, checks, MACHINE_MODEL_CHECKS, &broken);
	}
	if (topo || lat || bw || geometry || program)
		add_hierarchy(s, topo, lat, bw, geometry, virtualised, have_model ? &m : NULL, checks, check_count, program);
	if (c2c || loaded || model || perturb)
		add_figures(s, c2c, loaded, model, lat, perturb, checks, check_count);
	if (have_model) {
		machine_model_add_tables(s, &m);
		machine_model_add_checks(s, checks, check_count);
		output_meta_integer(s, "checks_flagged", (int64_t)broken);
	}
	char trust[1024];
	add_counters(s, validate, topo, trust, sizeof trust);
	if (trust[0])
		output_meta_text(s, "counters", trust);
	add_simulated(s, validate, topo);
	return s;
}

/* The summary as a person reads it on a terminal. */
static const char *meta_or(const output_report *r, const char *key, char *buffer, size_t length)
{
	output_meta_text_of(r, key, buffer, length);
	return buffer;
}

/* A number (the column's decimals), or "-" where there is none. */
static void cell_value_or_dash(output_table *t, double v)
{
	if (isfinite(v))
		output_cell_real(t, v);
	else
		output_cell_text(t, "-");
}

/* The hierarchy as a table for the fitted writer (output_write_fitted),
 * which leaves columns out from the right on a narrow terminal (man
 * plumb-report, DESCRIPTION): level, sizes, latency and read bandwidth stay
 * on 80 columns; the bandwidth's spread goes first, then the latency in
 * cycles, the ranges and write bandwidth. */
static output_report *hierarchy_display(const output_table *h)
{
	output_report *d = output_report_new("summary");
	if (!d)
		return NULL;
	/* Named as the summary's own columns in report.json, where it has them. */
	output_table *t = output_table_add(d, "hierarchy", "The hierarchy, level by level (bandwidth from 1 thread and from all)");
	output_column(t, "level", NULL, 0);
	output_column(t, "sysfs_size", NULL, 0);
	output_column(t, "measured_size", NULL, 0);
	output_column(t, "latency", "ns", 3);
	/* with --program: where its working set lands, beside the sizes */
	bool program = output_column_index(h, "program_knee") >= 0;
	if (program)
		output_column(t, "program", NULL, 0);
	output_column(t, "read_1", "GB/s", 1);
	output_column(t, "read_all", "GB/s", 1);
	output_column(t, "write_1", "GB/s", 1);
	output_column(t, "write_all", "GB/s", 1);
	output_column(t, "latency_range", "ns", 0);
	output_column(t, "size_range", NULL, 0);
	output_column(t, "latency_cycles", NULL, 0);
	output_column(t, "bandwidth_cv", NULL, 0);
	for (size_t r = 0; r < output_row_count(h); r++) {
		char text[128], a[32], b[32];
		long row = (long)r;
		output_row(t);
		const char *level = output_text_at(h, row, "level");
		output_cell_text(t, level ? level : "-");
		double sz = output_number_at(h, row, "sysfs_size"), m = output_number_at(h, row, "measured_size");
		output_cell_text(t, isfinite(sz) ? report_format_bytes(sz, text, sizeof text) : "-");
		output_cell_text(t, isfinite(m) ? report_format_bytes(m, text, sizeof text) : "-");
		double l = output_number_at(h, row, "latency");
		if (isfinite(l)) {
			snprintf(text, sizeof text, "%.3g", l);
			output_cell_text(t, text);
		} else {
			output_cell_text(t, "-");
		}
		if (program) {
			/* "knee 32 KiB, lands here" */
			double knee = output_number_at(h, row, "program_knee");
			const char *lands = output_text_at(h, row, "program_lands");
			bool here = lands && !strcmp(lands, "yes");
			if (isfinite(knee))
				snprintf(text, sizeof text, "knee %s%s", report_format_bytes(knee, a, sizeof a), here ? ", lands here" : "");
			else
				snprintf(text, sizeof text, "%s", here ? "lands here" : "-");
			output_cell_text(t, text);
		}
		cell_value_or_dash(t, output_number_at(h, row, "read_1"));
		cell_value_or_dash(t, output_number_at(h, row, "read_all"));
		cell_value_or_dash(t, output_number_at(h, row, "write_1"));
		cell_value_or_dash(t, output_number_at(h, row, "write_all"));
		double llo = output_number_at(h, row, "latency_low"), lhi = output_number_at(h, row, "latency_high");
		if (isfinite(l) && isfinite(llo) && isfinite(lhi))
			snprintf(text, sizeof text, "%.3g-%.3g", llo, lhi);
		else
			snprintf(text, sizeof text, "-");
		output_cell_text(t, text);
		double lo = output_number_at(h, row, "measured_size_low"), hi = output_number_at(h, row, "measured_size_high");
		const char *stability = output_text_at(h, row, "size_stability");
		bool unstable = stability && !strcmp(stability, "unstable");
		if (isfinite(m) && isfinite(lo) && isfinite(hi) && lo != hi)
			snprintf(text, sizeof text, "%s-%s%s", report_format_bytes(lo, a, sizeof a),
			         report_format_bytes(hi, b, sizeof b), unstable ? " unstable" : "");
		else
			snprintf(text, sizeof text, "-");
		output_cell_text(t, text);
		double cycles = output_number_at(h, row, "latency_cycles");
		if (isfinite(cycles)) {
			snprintf(text, sizeof text, "%.0f", cycles);
			output_cell_text(t, text);
		} else {
			output_cell_text(t, "-");
		}
		double cv = output_number_at(h, row, "bandwidth_cv");
		if (isfinite(cv))
			snprintf(text, sizeof text, cv < 1 ? "%.1f%%" : "%.0f%%", cv);
		else
			snprintf(text, sizeof text, "-");
		output_cell_text(t, text);
	}
	return d;
}

int report_summary_write_text(const output_report *s, FILE *f, unsigned columns)
{
	char cpu[256], generation[128], cpus[64], clock[64], line[2048];
	meta_or(s, "cpu", cpu, sizeof cpu);
	meta_or(s, "generation", generation, sizeof generation);
	meta_or(s, "cpus", cpus, sizeof cpus);
	double ghz = output_meta_number_of(s, "core_clock_ghz");
	clock[0] = 0;
	double ghz_low = output_meta_number_of(s, "core_clock_ghz_low"), ghz_high = output_meta_number_of(s, "core_clock_ghz_high");
	if (isfinite(ghz) && isfinite(ghz_low) && isfinite(ghz_high) && ghz_high - ghz_low >= 0.005)
		snprintf(clock, sizeof clock, ", core clock about %.2f GHz (%.2f-%.2f)", ghz, ghz_low, ghz_high);
	else if (isfinite(ghz))
		snprintf(clock, sizeof clock, ", core clock about %.2f GHz", ghz);
	snprintf(line, sizeof line, "%s%s%s%s%s%s%s%s", cpu[0] ? cpu : "this machine", generation[0] ? " (" : "", generation,
	         generation[0] ? ")" : "", cpus[0] ? ", " : "", cpus, cpus[0] ? " CPUs" : "", clock);
	output_write_wrapped(f, "Summary: ", line, columns, 4);
	const output_table *h = output_table_find(s, "hierarchy");
	if (h) {
		output_report *display = hierarchy_display(h);
		plumb_status ignored;
		fputc('\n', f);
		if (display)
			output_write_fitted(display, f, columns, &ignored);
		output_report_free(display);
		for (size_t r = 0; r < output_row_count(h); r++) {
			const char *note = output_text_at(h, (long)r, "note");
			if (note && note[0]) {
				const char *level = output_text_at(h, (long)r, "level");
				snprintf(line, sizeof line, "  %s: ", level ? level : "");
				output_write_wrapped(f, line, note, columns, 4);
			}
		}
		char working_set[1024];
		output_meta_text_of(s, "working_set", working_set, sizeof working_set);
		if (working_set[0]) {
			fputc('\n', f);
			output_write_wrapped(f, "Working set: ", working_set, columns, 4);
		}
	}
	const output_table *fig = output_table_find(s, "figures");
	if (fig) {
		fputc('\n', f);
		for (size_t r = 0; r < output_row_count(fig); r++) {
			double v = output_number_at(fig, (long)r, "value");
			const char *q = output_text_at(fig, (long)r, "quantity"), *u = output_text_at(fig, (long)r, "unit"), *d = output_text_at(fig, (long)r, "detail");
			char prefix[256];
			snprintf(prefix, sizeof prefix, "%s: ", q ? q : "");
			if (isfinite(v)) {
				snprintf(line, sizeof line, v >= 100 ? "%.0f %s%s%s" : "%.3g %s%s%s", v, u ? u : "", d && d[0] ? " - " : "", d ? d : "");
			} else {
				const char *status = output_text_at(fig, (long)r, "value"), *why = reason(fig, (long)r, "value");
				snprintf(line, sizeof line, "%s (%s)", status ? status : "unsupported", why ? why : "no reason given");
			}
			output_write_wrapped(f, prefix, line, columns, 4);
		}
	}
	const output_table *checks = output_table_find(s, "checks");
	if (checks) {
		size_t flagged = 0, rows = output_row_count(checks);
		for (size_t r = 0; r < rows; r++) {
			const char *verdict = output_text_at(checks, (long)r, "verdict");
			flagged += verdict && !strcmp(verdict, "flagged");
		}
		if (flagged)
			snprintf(line, sizeof line, "%zu of %zu figures break a limit that applies to them:", flagged, rows);
		else
			snprintf(line, sizeof line, "all %zu figures are within the limits that apply to them.", rows);
		fputc('\n', f);
		output_write_wrapped(f, "Physics: ", line, columns, 4);
		for (size_t r = 0; r < rows; r++) {
			const char *verdict = output_text_at(checks, (long)r, "verdict");
			if (verdict && !strcmp(verdict, "flagged")) {
				snprintf(line, sizeof line, "%s: %.4g %s is %s", output_text_at(checks, (long)r, "figure"),
				         output_number_at(checks, (long)r, "value"), output_text_at(checks, (long)r, "unit"), output_text_at(checks, (long)r, "rule"));
				output_write_wrapped(f, "  ", line, columns, 4);
			}
		}
	}
	char trust[1024];
	output_meta_text_of(s, "counters", trust, sizeof trust);
	if (trust[0]) {
		fputc('\n', f);
		output_write_wrapped(f, "Can I trust my counters? ", trust, columns, 4);
	}
	return ferror(f) ? -1 : 0;
}
