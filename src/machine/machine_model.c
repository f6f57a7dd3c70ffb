/* The machine model: one description of this machine built from the
 * sections' own reports, its levels matched to sysfs by capacity, and
 * the physical limits every figure is held against (machine_model.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "machine/machine_model.h"
#include <json-c/json.h>
#include "core/read_file.h"
#include "core/stats.h"

void machine_model_clear(machine_model *m)
{
	memset(m, 0, sizeof *m);
	m->clock_ghz = m->clock_low = m->clock_high = NAN;
	m->line_bytes = 64;
	m->page_bytes = 4096;
	m->threads_all = NAN;
	m->service_ns = m->service_low = m->service_high = m->peak_mb_s = NAN;
}

static void level_clear(machine_level *l)
{
	memset(l, 0, sizeof *l);
	l->cache_level = -1;
	l->nominal_bytes = l->usable_bytes = l->usable_low = l->usable_high = NAN;
	l->latency_ns = l->latency_low = l->latency_high = l->latency_cycles = NAN;
	l->read_1 = l->read_all = l->write_1 = l->write_all = l->bandwidth_cv = l->mlp = NAN;
	l->footprint_all = NAN;
}

void machine_clock_estimate(double ns_p10, double ns_median, double ns_min, double *ghz, double *low, double *high)
{
	double quiet = ns_p10 > 0 && isfinite(ns_p10) ? ns_p10 : ns_median;
	*ghz = quiet > 0 && isfinite(quiet) ? 1.0 / quiet : NAN;
	*low = ns_median > 0 && isfinite(ns_median) ? 1.0 / ns_median : *ghz;
	*high = ns_min > 0 && isfinite(ns_min) ? 1.0 / ns_min : *ghz;
	if (*low > *ghz)
		*low = *ghz;
	if (*high < *ghz)
		*high = *ghz;
}

/* ------------------------------------------------------------ level names */

/* A plateau stays flat past its cache's size by at most one sweep step
 * (2^(1/4) at the default density) and the rounding of sizes to lines. */
#define MATCH_SLACK 1.25

/* How far an end is from a cache's nominal size, in octaves; infinite when
 * the plateau stays flat well past the cache (a cache cannot hold more
 * than its size).  The end (half the loads hit) can lie past the size when
 * a hidden level's sliver stretches the transition; the flat part cannot. */
static double match_cost(double flat_to, double end, double nominal)
{
	if (!(end > 0) || !(nominal > 0) || !isfinite(end) || !isfinite(nominal))
		return INFINITY;
	if (!(flat_to > 0) || !isfinite(flat_to))
		flat_to = end;
	if (flat_to > MATCH_SLACK * nominal)
		return INFINITY;
	return fabs(log2(end / nominal));
}

int machine_match_levels(const double *flat_to, const double *end_bytes, size_t plateaus, const double *nominal,
                         size_t caches, double swept_bytes, int *level_of, bool *hidden, plumb_status *status)
{
	if (plateaus == 0) {
		for (size_t c = 0; hidden && c < caches; c++)
			hidden[c] = true;
		return 0;
	}
	if (!end_bytes || !level_of || (caches && !nominal))
		return plumb_fail(status, EINVAL, "machine_match_levels: missing input");
	if (plateaus > 64 || caches > 16)
		return plumb_fail(status, EINVAL, "machine_match_levels: %zu plateaus and %zu caches are too many", plateaus, caches);
	/* The last plateau is memory when the sweep went past every cache's
	 * nominal size; otherwise it may be a cache the sweep ended in. */
	bool short_sweep = swept_bytes > 0 && caches > 0 && swept_bytes < nominal[caches - 1];
	size_t found = short_sweep ? plateaus : plateaus - 1;
	/* Order-preserving matching: score[p][c] over the first p plateaus and
	 * c caches; a match is worth more than any total cost, so the most
	 * matches win and the closest ends break ties. */
	enum { P = 65, C = 17 };
	double score[P][C];
	unsigned char move[P][C];   /* 0: skip plateau, 1: skip cache, 2: match */
	const double match_value = 1000;
	for (size_t p = 0; p <= found; p++)
		for (size_t c = 0; c <= caches; c++) {
			if (p == 0 && c == 0) {
				score[p][c] = 0;
				continue;
			}
			double best = -INFINITY;
			unsigned char how = 0;
			if (p > 0 && score[p - 1][c] > best) {
				best = score[p - 1][c];
				how = 0;
			}
			if (c > 0 && score[p][c - 1] > best) {
				best = score[p][c - 1];
				how = 1;
			}
			if (p > 0 && c > 0) {
				double end = p == plateaus ? (flat_to ? flat_to[p - 1] : NAN) : end_bytes[p - 1];
				double cost = match_cost(flat_to ? flat_to[p - 1] : NAN, end, nominal[c - 1]);
				if (isfinite(cost) && score[p - 1][c - 1] + match_value - cost > best) {
					best = score[p - 1][c - 1] + match_value - cost;
					how = 2;
				}
			}
			score[p][c] = best;
			move[p][c] = how;
		}
	for (size_t c = 0; hidden && c < caches; c++)
		hidden[c] = !(short_sweep && nominal[c] > swept_bytes);
	for (size_t k = 0; k < plateaus; k++)
		level_of[k] = -1;
	size_t p = found, c = caches;
	while (p > 0 || c > 0) {
		unsigned char how = move[p][c];
		if (p == 0)
			how = 1;
		else if (c == 0)
			how = 0;
		if (how == 2) {
			level_of[p - 1] = (int)c;
			if (hidden)
				hidden[c - 1] = false;
			p--;
			c--;
		} else if (how == 1)
			c--;
		else
			p--;
	}
	if (level_of[plateaus - 1] < 0)
		level_of[plateaus - 1] = 0;   /* past every cache: memory */
	/* A plateau before the last that stays flat past every cache's size
	 * is memory (no cache holds it), and what comes after it is memory
	 * too, slowed by page walks (a host's nested paging): on the Xeon
	 * guest at load 14 the sweep went 5 ns (L2), 129 ns flat to 362 MiB,
	 * 294 ns; the 129 ns plateau is memory, not the 260 MiB L3. */
	double largest = 0;
	for (size_t i = 0; i < caches; i++)
		if (nominal[i] > largest)
			largest = nominal[i];
	for (size_t k = 0; caches && k + 1 < plateaus; k++) {
		double flat = flat_to && isfinite(flat_to[k]) ? flat_to[k] : end_bytes[k];
		if (level_of[k] < 0 && isfinite(flat) && flat > MATCH_SLACK * largest) {
			level_of[k] = 0;
			for (size_t j = k + 1; j < plateaus; j++)
				level_of[j] = -1;
			break;
		}
	}
	return 0;
}

int machine_plateau_after(const double *bytes, const double *ns, size_t n, double from_bytes, double flat_ratio,
                          size_t min_points, double *median, double *low, double *high)
{
	if (!bytes || !ns || n == 0 || !(flat_ratio > 1) || min_points == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (bytes[i] < from_bytes || !(ns[i] > 0))
			continue;
		double lo = ns[i], hi = ns[i];
		size_t j = i;
		while (j + 1 < n && ns[j + 1] > 0) {
			double v = ns[j + 1], nlo = v < lo ? v : lo, nhi = v > hi ? v : hi;
			if (nhi > flat_ratio * nlo)
				break;
			lo = nlo;
			hi = nhi;
			j++;
		}
		if (j - i + 1 >= min_points) {
			*median = stats_median(ns + i, j - i + 1);
			*low = lo;
			*high = hi;
			return 0;
		}
	}
	return -1;
}

/* --------------------------------------------------- reading the sections */


/* The data caches' nominal sizes: topo's cache table, else lat's record
 * of the sysfs sizes it judged against. */
static size_t nominal_sizes(const output_report *topo, const output_report *lat, double *sizes, size_t capacity)
{
	size_t n = 0;
	const output_table *t = topo ? output_table_find(topo, "caches") : NULL;
	for (int level = 1; t && level <= (int)capacity; level++) {
		char name[8];
		snprintf(name, sizeof name, "L%d", level);
		double size = NAN;
		int l = output_column_index(t, "level"), ty = output_column_index(t, "type");
		for (size_t r = 0; l >= 0 && ty >= 0 && r < output_row_count(t); r++) {
			const char *a = output_cell_string(t, r, (size_t)l), *b = output_cell_string(t, r, (size_t)ty);
			if (a && b && !strcmp(a, name) && strcmp(b, "instruction") != 0)
				size = output_number_at(t, (long)r, "size");
		}
		if (!(size > 0))
			break;
		sizes[n++] = size;
	}
	if (n)
		return n;
	char text[256];
	output_meta_text_of(lat, "sysfs_data_caches", text, sizeof text);
	for (char *s = text; *s && n < capacity;) {
		char *end;
		double v = strtod(s, &end);
		if (end == s || !(v > 0))
			break;
		sizes[n++] = v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

double machine_bw_figure(const output_table *t, double threads, const char *kernel, const char *level)
{
	int th = t ? output_column_index(t, "threads") : -1, k = t ? output_column_index(t, "kernel") : -1;
	int l = t ? output_column_index(t, level) : -1;
	for (size_t r = 0; th >= 0 && k >= 0 && l >= 0 && r < output_row_count(t); r++) {
		const char *kk = output_cell_string(t, r, (size_t)k);
		if (output_cell_number(t, r, (size_t)th) == threads && kk && !strcmp(kk, kernel))
			return output_cell_number(t, r, (size_t)l);
	}
	return NAN;
}

double machine_bw_max_threads(const output_table *t)
{
	int th = t ? output_column_index(t, "threads") : -1;
	double m = NAN;
	for (size_t r = 0; th >= 0 && r < output_row_count(t); r++) {
		double x = output_cell_number(t, r, (size_t)th);
		if (isfinite(x) && !(x <= m))
			m = x;
	}
	return m;
}

double machine_usable_bytes(double nominal, double usable)
{
	/* Far below: a sweep step is 1.19x and the passes spread by two;
	 * half the nominal size is beyond any of that. */
	if (!(nominal > 0) || !(usable > 0) || !isfinite(usable) || !(usable < nominal / 2))
		return NAN;
	return usable;
}

double machine_level_usable(const machine_level *l)
{
	if (!l || l->hidden || !l->shared)
		return NAN;
	return machine_usable_bytes(l->nominal_bytes, l->usable_bytes);
}

/* Median cv of one thread's read at a level in bw's per-size table. */
static double bandwidth_cv(const output_table *t, const char *level)
{
	int th = t ? output_column_index(t, "threads") : -1, k = t ? output_column_index(t, "kernel") : -1;
	int l = t ? output_column_index(t, "level") : -1, c = t ? output_column_index(t, "cv") : -1;
	double v[256];
	size_t n = 0;
	for (size_t r = 0; th >= 0 && k >= 0 && l >= 0 && c >= 0 && r < output_row_count(t) && n < 256; r++) {
		const char *kk = output_cell_string(t, r, (size_t)k), *ll = output_cell_string(t, r, (size_t)l);
		double x = output_cell_number(t, r, (size_t)c);
		if (output_cell_number(t, r, (size_t)th) == 1 && kk && !strcmp(kk, "read") && ll && !strcmp(ll, level) && isfinite(x))
			v[n++] = x;
	}
	return n ? stats_median(v, n) : NAN;
}

/* The widest load bw's kernels used, from the isa column. */
static unsigned vector_bytes(const output_table *t)
{
	int c = t ? output_column_index(t, "isa") : -1;
	unsigned widest = 0;
	for (size_t r = 0; c >= 0 && r < output_row_count(t); r++) {
		const char *isa = output_cell_string(t, r, (size_t)c);
		unsigned w = !isa ? 0 : !strcmp(isa, "avx512") ? 64 : !strcmp(isa, "avx2") ? 32 : 16;
		if (w > widest)
			widest = w;
	}
	return widest;
}

static void set_name(machine_level *l)
{
	if (l->cache_level > 0)
		snprintf(l->name, sizeof l->name, "L%d", l->cache_level);
	else if (l->cache_level == 0)
		snprintf(l->name, sizeof l->name, "DRAM");
}

/* lat's levels, matched to the caches by capacity.  A report whose levels
 * lat already named L1.. (and hidden) is read as it is; one with levels
 * numbered ("level 2") is matched here, by the same rule lat uses. */
static void levels_from_lat(machine_model *m, const output_report *lat, const double *nominal, size_t caches)
{
	const output_table *t = lat ? output_table_find(lat, "levels") : NULL;
	size_t rows = t ? output_row_count(t) : 0;
	double ends[MACHINE_MODEL_LEVELS * 2], flat[MACHINE_MODEL_LEVELS * 2];
	long row_of[MACHINE_MODEL_LEVELS * 2];
	size_t plateaus = 0;
	for (size_t r = 0; r < rows && plateaus < sizeof ends / sizeof *ends; r++) {
		if (!isfinite(output_number_at(t, (long)r, "latency")))
			continue;   /* a hidden level's row: no plateau */
		ends[plateaus] = output_number_at(t, (long)r, "ends_at");
		flat[plateaus] = output_number_at(t, (long)r, "plateau_to");
		row_of[plateaus++] = (long)r;
	}
	int level_of[MACHINE_MODEL_LEVELS * 2];
	bool hidden[16] = { false };
	plumb_status ignored;
	double swept = output_meta_number_of(lat, "max_bytes");
	if (plateaus == 0 ||
	    machine_match_levels(flat, ends, plateaus, nominal, caches, isfinite(swept) ? swept : 0, level_of, hidden, &ignored) != 0) {
		plateaus = 0;
		for (size_t c = 0; c < caches; c++)
			hidden[c] = false;
	}
	/* the plateaus in order, each hidden cache in its place before the
	 * first plateau past it; with no sweep, the caches as sysfs lists them */
	size_t next_cache = 1;
	for (size_t k = 0; k <= plateaus && m->level_count < MACHINE_MODEL_LEVELS; k++) {
		size_t upto = k == plateaus ? caches : level_of[k] > 0 ? (size_t)level_of[k] - 1 : level_of[k] == 0 ? caches : 0;
		for (; next_cache <= upto && m->level_count < MACHINE_MODEL_LEVELS; next_cache++) {
			if (plateaus && !hidden[next_cache - 1])
				continue;
			machine_level *l = &m->levels[m->level_count++];
			level_clear(l);
			l->cache_level = (int)next_cache;
			set_name(l);
			l->hidden = plateaus > 0;
			l->shared = next_cache == caches;
			l->nominal_bytes = nominal[next_cache - 1];
		}
		if (k == plateaus) {
			if (plateaus == 0 && t && m->level_count < MACHINE_MODEL_LEVELS) {
				machine_level *l = &m->levels[m->level_count++];
				level_clear(l);
				l->cache_level = 0;
				set_name(l);
			}
			break;
		}
		if (m->level_count >= MACHINE_MODEL_LEVELS)
			break;
		machine_level *l = &m->levels[m->level_count++];
		level_clear(l);
		long r = row_of[k];
		l->cache_level = level_of[k];
		if (l->cache_level > 0)
			next_cache = (size_t)l->cache_level + 1;
		if (l->cache_level < 0)
			snprintf(l->name, sizeof l->name, "level %zu", k + 1);
		else
			set_name(l);
		l->nominal_bytes = l->cache_level > 0 ? nominal[l->cache_level - 1] : NAN;
		l->shared = l->cache_level > 0 && (size_t)l->cache_level == caches;
		l->usable_bytes = l->cache_level != 0 ? output_number_at(t, r, "ends_at") : NAN;
		l->usable_low = l->cache_level != 0 ? output_number_at(t, r, "ends_low") : NAN;
		l->usable_high = l->cache_level != 0 ? output_number_at(t, r, "ends_high") : NAN;
		if (!isfinite(l->usable_low))
			l->usable_low = l->usable_bytes;
		if (!isfinite(l->usable_high))
			l->usable_high = l->usable_bytes;
		l->latency_ns = output_number_at(t, r, "latency");
		l->latency_low = output_number_at(t, r, "low");
		l->latency_high = output_number_at(t, r, "high");
		snprintf(l->latency_source, sizeof l->latency_source, "latency sweep (plateau, 10th percentile)");
	}
	/* DRAM latency from a plateau: the first flat run past twice the last
	 * cache's end.  Far past it, the latency keeps rising with the page
	 * walks of a host's nested paging, which is not memory's latency. */
	const output_table *sweep = lat ? output_table_find(lat, "sweep") : NULL;
	size_t n = sweep ? output_row_count(sweep) : 0;
	machine_level *memory = NULL;
	double last_end = NAN;
	for (size_t k = 0; k < m->level_count; k++) {
		if (m->levels[k].cache_level == 0)
			memory = &m->levels[k];
		else if (isfinite(m->levels[k].usable_bytes))
			last_end = m->levels[k].usable_bytes;
	}
	if (memory && n >= 3 && isfinite(last_end)) {
		double *b = malloc(n * sizeof *b), *v = malloc(n * sizeof *v);
		size_t used = 0;
		for (size_t i = 0; b && v && i < n; i++) {
			double x = output_number_at(sweep, (long)i, "p10");
			if (!isfinite(x))
				x = output_number_at(sweep, (long)i, "latency");
			b[used] = output_number_at(sweep, (long)i, "bytes");
			v[used] = x;
			used += isfinite(x) && isfinite(b[used]);
		}
		double median, low, high;
		if (b && v && machine_plateau_after(b, v, used, 2 * last_end, 1.25, 3, &median, &low, &high) == 0) {
			if (!isfinite(memory->latency_ns) || memory->latency_ns > high || memory->latency_ns < low) {
				snprintf(memory->latency_source, sizeof memory->latency_source,
				         "the latency sweep's plateau past the last cache (lat's level said %.0f ns, from points still rising)", memory->latency_ns);
				memory->latency_ns = median;
			}
			memory->latency_low = low;
			memory->latency_high = high;
		}
		free(b);
		free(v);
	}
	const output_table *mlp = lat ? output_table_find(lat, "mlp") : NULL;
	for (size_t k = 0; k < m->level_count; k++) {
		const char *lat_name = m->levels[k].cache_level == 0 ? "memory" : m->levels[k].name;
		m->levels[k].mlp = output_number_at(mlp, output_row_where(mlp, "level", lat_name), "outstanding");
	}
}

int machine_model_build(machine_model *m, const output_report *topo, const output_report *lat, const output_report *bw,
                        const output_report *model, plumb_status *status)
{
	machine_model_clear(m);
	snprintf(m->source, sizeof m->source, "measured: the report's sections");
	double nominal[8];
	size_t caches = nominal_sizes(topo, lat, nominal, 8);
	double ghz = output_meta_number_of(lat, "core_clock_ghz_estimate");
	m->clock_ghz = ghz;
	m->clock_low = output_meta_number_of(lat, "core_clock_ghz_low");
	m->clock_high = output_meta_number_of(lat, "core_clock_ghz_high");
	if (!isfinite(m->clock_low))
		m->clock_low = ghz;
	if (!isfinite(m->clock_high))
		m->clock_high = ghz;
	double line = output_meta_number_of(lat, "line_bytes");
	if (line >= 8 && line <= 4096)
		m->line_bytes = (unsigned)line;
	const output_table *pages = topo ? output_table_find(topo, "pages") : NULL;
	double page = output_number_at(pages, pages && output_row_count(pages) ? 0 : -1, "size");
	if (page >= 4096)
		m->page_bytes = (uint64_t)page;
	if (lat)
		levels_from_lat(m, lat, nominal, caches);
	else {
		for (size_t c = 0; c <= caches && m->level_count < MACHINE_MODEL_LEVELS; c++) {
			machine_level *l = &m->levels[m->level_count++];
			level_clear(l);
			l->cache_level = c < caches ? (int)c + 1 : 0;
			l->nominal_bytes = c < caches ? nominal[c] : NAN;
			l->shared = c + 1 == caches;
			set_name(l);
		}
	}
	const output_table *bl = bw ? output_table_find(bw, "levels") : NULL, *bt = bw ? output_table_find(bw, "bandwidth") : NULL;
	m->threads_all = machine_bw_max_threads(bl);
	m->vector_bytes = vector_bytes(bl);
	for (size_t k = 0; k < m->level_count; k++) {
		machine_level *l = &m->levels[k];
		if (isfinite(l->latency_ns) && isfinite(ghz))
			l->latency_cycles = l->latency_ns * ghz;
		if (!bl || l->cache_level < 0)
			continue;
		l->read_1 = machine_bw_figure(bl, 1, "read", l->name);
		l->write_1 = machine_bw_figure(bl, 1, "write", l->name);
		if (m->threads_all > 1) {
			l->read_all = machine_bw_figure(bl, m->threads_all, "read", l->name);
			l->write_all = machine_bw_figure(bl, m->threads_all, "write", l->name);
			/* the largest per-thread working set those rows ran */
			for (size_t r = 0; bt && r < output_row_count(bt); r++) {
				const char *level = output_text_at(bt, (long)r, "level");
				double f = output_number_at(bt, (long)r, "footprint_per_thread");
				if (output_number_at(bt, (long)r, "threads") == m->threads_all && level && !strcmp(level, l->name) &&
				    f > 0 && !(f <= l->footprint_all))
					l->footprint_all = f;
			}
		}
		l->bandwidth_cv = bandwidth_cv(bt, l->name);
	}
	const output_table *fit = model ? output_table_find(model, "fit") : NULL;
	if (fit && output_row_count(fit)) {
		m->service_ns = output_number_at(fit, 0, "service_time");
		m->service_low = output_number_at(fit, 0, "service_time_low");
		m->service_high = output_number_at(fit, 0, "service_time_high");
		m->peak_mb_s = output_number_at(fit, 0, "peak_bandwidth");
		const char *shape = output_text_at(fit, 0, "shape");
		m->service_flat = shape && !strcmp(shape, "flat");
	}
	(void)status;
	return 0;
}

const machine_level *machine_model_level(const machine_model *m, const char *name)
{
	for (size_t k = 0; m && name && k < m->level_count; k++)
		if (!strcmp(m->levels[k].name, name) || (!strcmp(name, "memory") && m->levels[k].cache_level == 0))
			return &m->levels[k];
	return NULL;
}

double machine_model_memory_bandwidth(const machine_model *m)
{
	const machine_level *memory = machine_model_level(m, "DRAM");
	double gb_s = NAN;
	if (memory && isfinite(memory->read_1) && memory->read_1 > 0)
		gb_s = memory->read_1;
	if (memory && isfinite(memory->read_all) && memory->read_all > 0 && !(memory->read_all <= gb_s))
		gb_s = memory->read_all;
	return gb_s;
}

/* ----------------------------------------------------------------- checks */

static machine_check *add_check(machine_check *checks, size_t capacity, size_t *count, const char *figure, double value,
                                double limit, const char *unit, bool broken)
{
	if (*count >= capacity)
		return NULL;
	machine_check *c = &checks[(*count)++];
	memset(c, 0, sizeof *c);
	snprintf(c->figure, sizeof c->figure, "%s", figure);
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	c->value = value;
	c->limit = limit;
	c->broken = broken;
	return c;
}

/* Loads per cycle and bytes per load a core can sustain from its L1, as
 * the vendors document them: two loads of the widest vector with AVX-512
 * (Intel since Skylake-SP, AMD Zen 5), at most three 32-byte loads with
 * AVX2 (Intel Golden Cove), three 16-byte ones without.  An upper bound
 * over the cores that run these kernels, so a figure above it is not
 * physics. */
static double l1_bytes_per_cycle(unsigned vector)
{
	return vector >= 64 ? 2.0 * 64 : vector == 32 ? 3.0 * 32 : 3.0 * 16;
}

size_t machine_model_check(const machine_model *m, machine_check *checks, size_t capacity, size_t *broken)
{
	size_t n = 0;
	char figure[64];
	double clock_top = isfinite(m->clock_high) ? m->clock_high : m->clock_ghz;
	static const struct { const char *label; size_t offset; } bw[] = {
		{ "read, 1 thread", offsetof(machine_level, read_1) },
		{ "read, all threads", offsetof(machine_level, read_all) },
		{ "write, 1 thread", offsetof(machine_level, write_1) },
		{ "write, all threads", offsetof(machine_level, write_all) },
	};
#define FIELD(level, i) (*(const double *)((const char *)(level) + bw[i].offset))
	/* L1: load ports x width x clock, per thread.  Writes are held to the
	 * same bound (no core stores faster than it loads), which is loose
	 * but never flags what a core can do. */
	const machine_level *l1 = machine_model_level(m, "L1");
	if (l1 && isfinite(clock_top) && m->vector_bytes) {
		double per_cycle = l1_bytes_per_cycle(m->vector_bytes), per_core = per_cycle * clock_top;
		for (size_t i = 0; i < 4; i++) {
			double v = FIELD(l1, i);
			if (!isfinite(v))
				continue;
			double threads = i % 2 ? (isfinite(m->threads_all) ? m->threads_all : 1) : 1;
			double limit = per_core * threads;
			snprintf(figure, sizeof figure, "L1 %s vs load ports", bw[i].label);
			machine_check *c = add_check(checks, capacity, &n, figure, v, limit, "GB/s", v > limit);
			if (c)
				snprintf(c->rule, sizeof c->rule,
				         "%s%.0f B per cycle (%s %u-byte loads per cycle, the most this CPU's vector width allows) x %.2f GHz "
				         "(the fastest clock measured)%s = %.0f GB/s",
				         v > limit ? "above what the load ports can move: at most " : "at most ", per_cycle,
				         m->vector_bytes >= 64 ? "2" : "3", m->vector_bytes >= 64 ? 64 : m->vector_bytes == 32 ? 32u : 16u,
				         clock_top, threads > 1 ? " x threads" : "", limit);
		}
	}
	/* a level further from the core never outruns the one nearer it */
	for (size_t k = 1; k < m->level_count; k++) {
		const machine_level *l = &m->levels[k];
		const machine_level *near = NULL;
		for (size_t j = k; j-- > 0;)
			if (m->levels[j].cache_level >= 1 && !m->levels[j].hidden) {
				near = &m->levels[j];
				break;
			}
		if (!near || l->hidden)
			continue;
		for (size_t i = 0; i < 4; i++) {
			double v = FIELD(l, i), above = FIELD(near, i);
			if (!isfinite(v) || !isfinite(above))
				continue;
			/* All threads move at least what one thread does, so where the
			 * nearer level's all-threads figure came out below its own
			 * one-thread figure (another program took a CPU: flagged below),
			 * that one-thread figure is the nearer level's credible bound,
			 * and the level here is not flagged for the nearer one's loss. */
			bool one_thread_bound = i % 2 && isfinite(FIELD(near, i - 1)) && FIELD(near, i - 1) > above;
			if (one_thread_bound)
				above = FIELD(near, i - 1);
			double slack = 1.10 + (isfinite(near->bandwidth_cv) ? 2 * near->bandwidth_cv : 0);
			snprintf(figure, sizeof figure, "%s %s vs %s", l->name, bw[i].label, near->name);
			machine_check *c = add_check(checks, capacity, &n, figure, v, above * slack, "GB/s", v > above * slack);
			if (c)
				snprintf(c->rule, sizeof c->rule, "%s%s's %.1f GB/s%s (every line from %s passes through %s)%s",
				         v > above * slack ? "above the nearer level: " : "at most ", near->name, above,
				         one_thread_bound ? " (its one-thread figure: all threads measured less)" : "", l->name,
				         near->name, " with 10% and twice its CV of slack");
		}
	}
	/* all threads at least one thread's */
	for (size_t k = 0; k < m->level_count; k++) {
		const machine_level *l = &m->levels[k];
		for (size_t i = 0; i < 4; i += 2) {
			double one = FIELD(l, i), all = FIELD(l, i + 1);
			if (!isfinite(one) || !isfinite(all))
				continue;
			double floor = 0.9 * one;
			snprintf(figure, sizeof figure, "%s %s vs one thread", l->name, bw[i + 1].label);
			machine_check *c = add_check(checks, capacity, &n, figure, all, floor, "GB/s", all < floor);
			/* bw's working sets together against the usable size, where both are known */
			double together = l->footprint_all > 0 && m->threads_all > 0 ? l->footprint_all * m->threads_all : NAN;
			bool outgrew = l->shared && isfinite(together) && l->usable_bytes > 0 && together > l->usable_bytes;
			char why[200];
			if (outgrew)
				snprintf(why, sizeof why, "bw's %.0f threads x %.2f MiB outgrew the usable %.1f MiB, so the row is partly memory; "
				         "plumb bw --machine report.json sizes them from it", m->threads_all, l->footprint_all / 1048576,
				         l->usable_bytes / 1048576);
			else
				snprintf(why, sizeof why, "%s", l->shared && !isfinite(together)
				                                    ? "the threads' footprints together outgrew the usable shared cache, or another program ran; re-measure"
				                                    : "another program took the other CPUs; re-measure");
			if (c)
				snprintf(c->rule, sizeof c->rule, "%s%.1f GB/s, one thread's figure less 10%%: %s",
				         all < floor ? "below one thread's: all threads must reach at least " : "at least ", floor,
				         all < floor ? why : "one of the threads alone moves that much");
		}
	}
#undef FIELD
	/* latency grows from each level to the next */
	const machine_level *previous = NULL;
	for (size_t k = 0; k < m->level_count; k++) {
		const machine_level *l = &m->levels[k];
		if (!isfinite(l->latency_ns))
			continue;
		if (previous) {
			snprintf(figure, sizeof figure, "%s latency vs %s", l->name, previous->name);
			bool bad = !(l->latency_ns > previous->latency_ns);
			machine_check *c = add_check(checks, capacity, &n, figure, l->latency_ns, previous->latency_ns, "ns", bad);
			if (c)
				snprintf(c->rule, sizeof c->rule, "%s%s's %.3g ns: a miss in %s is served from %s or beyond",
				         bad ? "not above the nearer level: must exceed " : "above ", previous->name, previous->latency_ns,
				         previous->name, l->name);
		}
		previous = l;
	}
	/* DRAM latency from a plateau */
	const machine_level *memory = machine_model_level(m, "DRAM");
	if (memory && isfinite(memory->latency_ns) && isfinite(memory->latency_low) && isfinite(memory->latency_high)) {
		bool bad = memory->latency_ns > 1.02 * memory->latency_high || memory->latency_ns < 0.98 * memory->latency_low;
		machine_check *c = add_check(checks, capacity, &n, "DRAM latency vs plateau", memory->latency_ns, memory->latency_high, "ns", bad);
		if (c)
			snprintf(c->rule, sizeof c->rule, "%swithin its plateau, %.0f-%.0f ns (%s)", bad ? "outside its plateau: must lie " : "",
			         memory->latency_low, memory->latency_high, memory->latency_source[0] ? memory->latency_source : "latency sweep");
	}
	/* the queueing model against the measurements */
	double measured_memory = machine_model_memory_bandwidth(m);
	if (isfinite(m->peak_mb_s)) {
		double limit = isfinite(measured_memory) ? measured_memory * 1000 : NAN;
		bool low = isfinite(limit) && m->peak_mb_s < 0.95 * limit;
		/* nothing moves more than every core's L1 load ports */
		double cores = isfinite(m->threads_all) ? m->threads_all : 1;
		double ceiling = isfinite(clock_top) && m->vector_bytes ? l1_bytes_per_cycle(m->vector_bytes) * clock_top * cores * 1000 : NAN;
		bool high = isfinite(ceiling) && m->peak_mb_s > ceiling;
		machine_check *c = add_check(checks, capacity, &n, "queueing model peak", m->peak_mb_s, high ? ceiling : limit, "MB/s", low || high);
		if (c) {
			if (high)
				snprintf(c->rule, sizeof c->rule,
				         "above every core's L1 load ports together (%.0f MB/s): the fit is degenerate (a flat curve gives no service time)",
				         ceiling);
			else if (isfinite(limit))
				snprintf(c->rule, sizeof c->rule, "%sthe DRAM bandwidth measured in the same run, %.0f MB/s%s",
				         low ? "below " : "at least ", limit, low ? ": the model's peak must reach what was measured" : "");
			else
				snprintf(c->rule, sizeof c->rule, "no measured DRAM bandwidth to hold it against");
		}
	}
	if (isfinite(m->service_ns)) {
		/* a line per service time must not exceed the load ports either */
		double floor = isfinite(clock_top) && m->vector_bytes
		               ? m->line_bytes / (l1_bytes_per_cycle(m->vector_bytes) * clock_top * (isfinite(m->threads_all) ? m->threads_all : 1))
		               : NAN;
		bool bad = (isfinite(floor) && m->service_ns < floor) || m->service_flat;
		bool wide = isfinite(m->service_low) && isfinite(m->service_high) && m->service_high > 2 * m->service_low;
		machine_check *c = add_check(checks, capacity, &n, "queueing model service time", m->service_ns, floor, "ns", bad);
		if (c && m->service_flat)
			snprintf(c->rule, sizeof c->rule,
			         "a flat fit: the loaded latency does not rise with the bandwidth, so the data determine no service "
			         "time (nor a peak); measure closer to saturation");
		else if (c)
			snprintf(c->rule, sizeof c->rule, "%s%.3g ns (a %u-byte line at every core's load-port rate)%s",
			         bad ? "below what the load ports allow: at least " : "at least ", floor, m->line_bytes,
			         bad ? ": the loaded curve is flat, so the fit has no service time to find"
			             : wide ? "; its 95% interval is wide (a nearly flat curve)" : "");
	}
	if (isfinite(m->clock_low) && isfinite(m->clock_high) && isfinite(m->clock_ghz)) {
		bool bad = m->clock_high > 1.15 * m->clock_low;
		machine_check *c = add_check(checks, capacity, &n, "core clock", m->clock_ghz, m->clock_high, "GHz", bad);
		if (c)
			snprintf(c->rule, sizeof c->rule, "%s%.2f-%.2f GHz over the add chain's samples%s", bad ? "spread too wide: " : "spread ",
			         m->clock_low, m->clock_high, bad ? " (another program ran; the quiet samples' figure is used)" : "");
	}
	size_t b = 0;
	for (size_t i = 0; i < n; i++)
		b += checks[i].broken;
	if (broken)
		*broken = b;
	return n;
}

/* --------------------------------------------------------- as a report */

static void cell(output_table *t, double v, const char *status, const char *why)
{
	if (isfinite(v))
		output_cell_real(t, v);
	else
		output_cell_status(t, status, why);
}

void machine_model_add_tables(output_report *r, const machine_model *m)
{
	output_meta_text(r, "machine_source", m->source);
	if (isfinite(m->clock_ghz)) {
		output_meta_real(r, "machine_clock_ghz", m->clock_ghz);
		output_meta_real(r, "machine_clock_ghz_low", m->clock_low);
		output_meta_real(r, "machine_clock_ghz_high", m->clock_high);
	}
	output_meta_integer(r, "machine_line_bytes", (int64_t)m->line_bytes);
	output_meta_integer(r, "machine_page_bytes", (int64_t)m->page_bytes);
	if (m->vector_bytes)
		output_meta_integer(r, "machine_vector_bytes", (int64_t)m->vector_bytes);
	if (isfinite(m->threads_all))
		output_meta_real(r, "machine_threads_all", m->threads_all);
	if (isfinite(m->service_ns)) {
		output_meta_real(r, "machine_service_ns", m->service_ns);
		if (isfinite(m->service_low) && isfinite(m->service_high)) {
			output_meta_real(r, "machine_service_ns_low", m->service_low);
			output_meta_real(r, "machine_service_ns_high", m->service_high);
		}
	}
	if (isfinite(m->peak_mb_s))
		output_meta_real(r, "machine_peak_mb_s", m->peak_mb_s);
	if (m->service_flat)
		output_meta_text(r, "machine_service_fit", "flat");
	output_table *t = output_table_add(r, "machine", "The machine model: one description of this machine for every command");
	output_column(t, "level", NULL, 0);
	output_column(t, "cache_level", NULL, 0);
	output_column(t, "state", NULL, 0);
	output_column(t, "nominal_bytes", "bytes", 0);
	output_column(t, "usable_bytes", "bytes", 0);
	output_column(t, "usable_low", "bytes", 0);
	output_column(t, "usable_high", "bytes", 0);
	output_column(t, "latency", "ns", 2);
	output_column(t, "latency_low", "ns", 2);
	output_column(t, "latency_high", "ns", 2);
	output_column(t, "latency_cycles", "core cycles", 1);
	output_column(t, "latency_source", NULL, 0);
	output_column(t, "read_1", "GB/s", 1);
	output_column(t, "read_all", "GB/s", 1);
	output_column(t, "write_1", "GB/s", 1);
	output_column(t, "write_all", "GB/s", 1);
	output_column(t, "bandwidth_cv", NULL, 3);
	output_column(t, "mlp", NULL, 1);
	for (size_t k = 0; k < m->level_count; k++) {
		const machine_level *l = &m->levels[k];
		output_row(t);
		output_cell_text(t, l->name);
		output_cell_integer(t, l->cache_level);
		output_cell_text(t, l->hidden ? "hidden" : l->cache_level == 0 ? "memory" : l->cache_level < 0 ? "unmatched"
		                                : l->shared ? "shared" : "private");
		cell(t, l->nominal_bytes, "n/a", l->cache_level == 0 ? "main memory has no cache size" : "sysfs does not list this level");
		const char *no_end = l->hidden ? "hidden: the latency sweep shows no plateau of its own for this cache"
		                     : l->cache_level == 0 ? "main memory does not end inside the sweep" : "the latency sweep did not run";
		cell(t, l->usable_bytes, "n/a", no_end);
		cell(t, l->usable_low, "n/a", no_end);
		cell(t, l->usable_high, "n/a", no_end);
		const char *no_latency = l->hidden ? "hidden: no plateau of its own" : "the latency section did not run";
		cell(t, l->latency_ns, "unsupported", no_latency);
		cell(t, l->latency_low, "unsupported", no_latency);
		cell(t, l->latency_high, "unsupported", no_latency);
		cell(t, l->latency_cycles, "unsupported", no_latency);
		output_cell_text(t, l->latency_source[0] ? l->latency_source : "-");
		cell(t, l->read_1, "unsupported", "no bandwidth figure for this level");
		cell(t, l->read_all, "unsupported", "no all-threads bandwidth figure for this level");
		cell(t, l->write_1, "unsupported", "no bandwidth figure for this level");
		cell(t, l->write_all, "unsupported", "no all-threads bandwidth figure for this level");
		cell(t, l->bandwidth_cv, "unsupported", "no bandwidth figure for this level");
		cell(t, l->mlp, "unsupported", "plumb lat --mlp did not run");
	}
}

void machine_model_add_checks(output_report *r, const machine_check *checks, size_t count)
{
	output_table *t = output_table_add(r, "checks", "Every figure against the physical limit that applies to it");
	output_column(t, "figure", NULL, 0);
	output_column(t, "value", NULL, 3);
	output_column(t, "limit", NULL, 3);
	output_column(t, "unit", NULL, 0);
	output_column(t, "verdict", NULL, 0);
	output_column(t, "rule", NULL, 0);
	for (size_t i = 0; i < count; i++) {
		output_row(t);
		output_cell_text(t, checks[i].figure);
		cell(t, checks[i].value, "n/a", "no figure");
		cell(t, checks[i].limit, "n/a", "no limit to hold it against");
		output_cell_text(t, checks[i].unit);
		output_cell_text(t, checks[i].broken ? "flagged" : "possible");
		output_cell_text(t, checks[i].rule);
	}
}

/* A figure read back from a report: absent (NaN: a status cell, or no such
 * member) is allowed, as a real report leaves many figures unmeasured; a
 * present one must be finite and within [low, high], and a byte count
 * whole.  A report.json comes from someone else: a negative size, an
 * infinite latency or a cache of 1e300 bytes is refused by name rather
 * than simulated, priced, or silently replaced by sysfs's figure. */
static int figure_ok(double v, double low, double high, bool whole, const char *level, const char *name,
                     plumb_status *status)
{
	if (isnan(v) || (isfinite(v) && v >= low && v <= high && (!whole || v == floor(v))))
		return 0;
	return plumb_fail(status, EINVAL, "the machine model's %s%s%s is %g, outside what a machine can have (%g to %g%s)",
	                  level ? level : "", level ? " " : "", name, v, low, high, whole ? ", whole bytes" : "");
}

/* Sizes up to 1 PiB, latencies up to a second, bandwidths up to 10^7 GB/s:
 * far beyond any machine, far below what breaks the arithmetic after. */
#define FIGURE_MAX_BYTES 1125899906842624.0
#define FIGURE_MAX_NS 1e9
#define FIGURE_MAX_GBS 1e7

static int model_figures_ok(const machine_model *m, plumb_status *status)
{
	if (figure_ok(m->clock_ghz, 1e-3, 1e3, false, NULL, "clock (machine_clock_ghz)", status) ||
	    figure_ok(m->clock_low, 1e-3, 1e3, false, NULL, "clock's low end (machine_clock_ghz_low)", status) ||
	    figure_ok(m->clock_high, 1e-3, 1e3, false, NULL, "clock's high end (machine_clock_ghz_high)", status) ||
	    figure_ok(m->threads_all, 1, 1e6, false, NULL, "thread count (machine_threads_all)", status) ||
	    figure_ok(m->service_ns, 0, FIGURE_MAX_NS, false, NULL, "service time (machine_service_ns)", status) ||
	    figure_ok(m->service_low, 0, FIGURE_MAX_NS, false, NULL, "service time's low end", status) ||
	    figure_ok(m->service_high, 0, FIGURE_MAX_NS, false, NULL, "service time's high end", status) ||
	    figure_ok(m->peak_mb_s, 0, 1e3 * FIGURE_MAX_GBS * 1e3, false, NULL, "peak bandwidth (machine_peak_mb_s)", status))
		return -1;
	for (size_t i = 0; i < m->level_count; i++) {
		const machine_level *l = &m->levels[i];
		const char *n = l->name;
		if (figure_ok(l->nominal_bytes, 1, FIGURE_MAX_BYTES, true, n, "nominal_bytes", status) ||
		    figure_ok(l->usable_bytes, 1, FIGURE_MAX_BYTES, true, n, "usable_bytes", status) ||
		    figure_ok(l->usable_low, 1, FIGURE_MAX_BYTES, true, n, "usable_low", status) ||
		    figure_ok(l->usable_high, 1, FIGURE_MAX_BYTES, true, n, "usable_high", status) ||
		    figure_ok(l->latency_ns, 1e-3, FIGURE_MAX_NS, false, n, "latency", status) ||
		    figure_ok(l->latency_low, 1e-3, FIGURE_MAX_NS, false, n, "latency_low", status) ||
		    figure_ok(l->latency_high, 1e-3, FIGURE_MAX_NS, false, n, "latency_high", status) ||
		    figure_ok(l->latency_cycles, 1e-3, 1e12, false, n, "latency_cycles", status) ||
		    figure_ok(l->read_1, 1e-6, FIGURE_MAX_GBS, false, n, "read_1", status) ||
		    figure_ok(l->read_all, 1e-6, FIGURE_MAX_GBS, false, n, "read_all", status) ||
		    figure_ok(l->write_1, 1e-6, FIGURE_MAX_GBS, false, n, "write_1", status) ||
		    figure_ok(l->write_all, 1e-6, FIGURE_MAX_GBS, false, n, "write_all", status) ||
		    figure_ok(l->bandwidth_cv, 0, 1e6, false, n, "bandwidth_cv", status) ||
		    figure_ok(l->mlp, 1e-3, 1e6, false, n, "mlp", status))
			return -1;
	}
	return 0;
}

/* A power of two within [low, high] when present (NaN: absent). */
static int meta_bytes_ok(double v, double low, double high, const char *name, plumb_status *status)
{
	if (isnan(v) || (isfinite(v) && v >= low && v <= high && v == floor(v) && ((uint64_t)v & ((uint64_t)v - 1)) == 0))
		return 0;
	return plumb_fail(status, EINVAL, "the machine model's %s is %g, not a power of two from %g to %g", name, v, low, high);
}

int machine_model_from_report(const output_report *r, machine_model *m, plumb_status *status)
{
	machine_model_clear(m);
	const output_table *t = r ? output_table_find(r, "machine") : NULL;
	if (!t || output_column_index(t, "usable_bytes") < 0)
		return plumb_fail(status, ENOENT, "the report holds no machine model (table \"machine\")");
	output_meta_text_of(r, "machine_source", m->source, sizeof m->source);
	m->clock_ghz = output_meta_number_of(r, "machine_clock_ghz");
	m->clock_low = output_meta_number_of(r, "machine_clock_ghz_low");
	m->clock_high = output_meta_number_of(r, "machine_clock_ghz_high");
	double v = output_meta_number_of(r, "machine_line_bytes");
	if (meta_bytes_ok(v, 8, 4096, "line size (machine_line_bytes)", status) != 0)
		return -1;
	if (v >= 8 && v <= 4096)
		m->line_bytes = (unsigned)v;
	v = output_meta_number_of(r, "machine_page_bytes");
	if (meta_bytes_ok(v, 4096, FIGURE_MAX_BYTES, "page size (machine_page_bytes)", status) != 0)
		return -1;
	if (v >= 4096)
		m->page_bytes = (uint64_t)v;
	v = output_meta_number_of(r, "machine_vector_bytes");
	if (meta_bytes_ok(v, 8, 256, "vector width (machine_vector_bytes)", status) != 0)
		return -1;
	if (v >= 8 && v <= 256)
		m->vector_bytes = (unsigned)v;
	m->threads_all = output_meta_number_of(r, "machine_threads_all");
	m->service_ns = output_meta_number_of(r, "machine_service_ns");
	m->service_low = output_meta_number_of(r, "machine_service_ns_low");
	m->service_high = output_meta_number_of(r, "machine_service_ns_high");
	m->peak_mb_s = output_meta_number_of(r, "machine_peak_mb_s");
	char shape[32];
	output_meta_text_of(r, "machine_service_fit", shape, sizeof shape);
	m->service_flat = !strcmp(shape, "flat");
	for (size_t row = 0; row < output_row_count(t) && m->level_count < MACHINE_MODEL_LEVELS; row++) {
		machine_level *l = &m->levels[m->level_count++];
		level_clear(l);
		const char *name = output_text_at(t, (long)row, "level"), *state = output_text_at(t, (long)row, "state");
		snprintf(l->name, sizeof l->name, "%s", name ? name : "?");
		double c = output_number_at(t, (long)row, "cache_level");
		if (!isnan(c) && !(isfinite(c) && c >= 0 && c <= 8 && c == floor(c)))
			return plumb_fail(status, EINVAL, "the machine model's %s cache_level is %g, not a level from 0 to 8", l->name, c);
		l->cache_level = isfinite(c) ? (int)c : -1;
		l->hidden = state && !strcmp(state, "hidden");
		l->shared = state && !strcmp(state, "shared");
		l->nominal_bytes = output_number_at(t, (long)row, "nominal_bytes");
		l->usable_bytes = output_number_at(t, (long)row, "usable_bytes");
		l->usable_low = output_number_at(t, (long)row, "usable_low");
		l->usable_high = output_number_at(t, (long)row, "usable_high");
		l->latency_ns = output_number_at(t, (long)row, "latency");
		l->latency_low = output_number_at(t, (long)row, "latency_low");
		l->latency_high = output_number_at(t, (long)row, "latency_high");
		l->latency_cycles = output_number_at(t, (long)row, "latency_cycles");
		const char *source = output_text_at(t, (long)row, "latency_source");
		snprintf(l->latency_source, sizeof l->latency_source, "%s", source && strcmp(source, "-") ? source : "");
		l->read_1 = output_number_at(t, (long)row, "read_1");
		l->read_all = output_number_at(t, (long)row, "read_all");
		l->write_1 = output_number_at(t, (long)row, "write_1");
		l->write_all = output_number_at(t, (long)row, "write_all");
		l->bandwidth_cv = output_number_at(t, (long)row, "bandwidth_cv");
		l->mlp = output_number_at(t, (long)row, "mlp");
	}
	return model_figures_ok(m, status);
}

/* ------------------------------------------------------- from report.json */

static output_report *embedded(json_object *o)
{
	output_report *r = NULL;
	plumb_status ignored;
	if (!o || output_report_parse_json(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), &r, &ignored) != 0)
		return NULL;
	return r;
}

/* path's JSON, read through the bounded reader: /dev/zero or a file of
 * gigabytes handed over as a report.json fails with one line ("PATH: larger
 * than 64 MiB") instead of growing plumb without end; json-c's own
 * json_object_from_file has no limit. */
static json_object *report_json(const char *path, plumb_status *status)
{
	char *text;
	size_t length;
	if (read_file_limited(path, READ_FILE_MAX_BYTES, &text, &length, status) != 0)
		return NULL;
	json_object *root = strlen(text) == length ? json_tokener_parse(text) : NULL;
	free(text);
	if (!root)
		plumb_fail(status, EINVAL, "'%s' is not JSON (give plumb report's report.json)", path);
	return root;
}

int machine_model_load(const char *path, machine_model *m, plumb_status *status)
{
	machine_model_clear(m);
	json_object *root = report_json(path, status);
	if (!root)
		return -1;
	json_object *schema = NULL, *summary = NULL, *sections = NULL;
	const char *name = json_object_object_get_ex(root, "schema", &schema) ? json_object_get_string(schema) : NULL;
	if (!name || strcmp(name, "plumb-machine-report") != 0) {
		/* the message before the put: name lives in root */
		plumb_fail(status, EINVAL, "'%s' is not plumb report's report.json (schema \"%s\")", path, name ? name : "none");
		json_object_put(root);
		return -1;
	}
	int rc = -1;
	output_report *s = json_object_object_get_ex(root, "summary", &summary) ? embedded(summary) : NULL;
	plumb_status why = { 0 };
	if (s && machine_model_from_report(s, m, &why) == 0)
		rc = 0;
	output_report_free(s);
	if (rc != 0 && s && why.code == EINVAL) {
		/* a model that is there but wrong: said, never replaced by the sections' */
		plumb_fail(status, EINVAL, "%s: %s", path, why.message);
		json_object_put(root);
		return -1;
	}
	if (rc != 0 && json_object_object_get_ex(root, "sections", &sections) && json_object_is_type(sections, json_type_array)) {
		/* a report.json from before the machine model: build it from its sections */
		output_report *topo = NULL, *lat = NULL, *bw = NULL, *model = NULL;
		for (size_t i = 0; i < json_object_array_length(sections); i++) {
			json_object *section = json_object_array_get_idx(sections, i), *inner = NULL;
			if (!json_object_object_get_ex(section, "report", &inner))
				continue;
			output_report *r = embedded(inner);
			const char *command = r ? output_report_command(r) : "";
			output_report **slot = !strcmp(command, "topo") ? &topo : !strcmp(command, "lat") ? &lat
			                       : !strcmp(command, "bw") ? &bw : !strcmp(command, "model") ? &model : NULL;
			if (slot && !*slot)
				*slot = r;
			else
				output_report_free(r);
		}
		if (topo || lat || bw)
			rc = machine_model_build(m, topo, lat, bw, model, status);
		else
			rc = plumb_fail(status, ENOENT, "'%s' holds neither a machine model nor the sections to build one", path);
		output_report_free(topo);
		output_report_free(lat);
		output_report_free(bw);
		output_report_free(model);
	}
	json_object_put(root);
	if (rc == 0)
		snprintf(m->source, sizeof m->source, "%s", path);
	return rc;
}

output_report *machine_report_section(const char *path, const char *command, plumb_status *status)
{
	json_object *root = report_json(path, status), *schema = NULL, *sections = NULL;
	if (!root)
		return NULL;
	const char *name = json_object_object_get_ex(root, "schema", &schema) ? json_object_get_string(schema) : NULL;
	if (!name || strcmp(name, "plumb-machine-report") != 0) {
		plumb_fail(status, EINVAL, "'%s' is not plumb report's report.json (schema \"%s\")", path, name ? name : "none");
		json_object_put(root);
		return NULL;
	}
	output_report *found = NULL;
	if (json_object_object_get_ex(root, "sections", &sections) && json_object_is_type(sections, json_type_array))
		for (size_t i = 0; !found && i < json_object_array_length(sections); i++) {
			json_object *inner = NULL;
			if (!json_object_object_get_ex(json_object_array_get_idx(sections, i), "report", &inner))
				continue;
			output_report *r = embedded(inner);
			if (r && !strcmp(output_report_command(r), command))
				found = r;
			else
				output_report_free(r);
		}
	json_object_put(root);
	if (!found)
		plumb_fail(status, ENOENT, "'%s' holds no %s section", path, command);
	return found;
}

/* ------------------------------------------------- fresh against saved */

static bool apart(double a, double a_low, double a_high, double b, double b_low, double b_high)
{
	if (!isfinite(a) || !isfinite(b))
		return false;
	if (!isfinite(a_low) || !isfinite(a_high))
		a_low = a_high = a;
	if (!isfinite(b_low) || !isfinite(b_high))
		b_low = b_high = b;
	return a_high * 1.05 < b_low || b_high * 1.05 < a_low;
}

size_t machine_model_compare(const machine_model *fresh, const machine_model *saved, char lines[][256], size_t capacity)
{
	size_t n = 0;
	if (apart(fresh->clock_ghz, fresh->clock_low, fresh->clock_high, saved->clock_ghz, saved->clock_low, saved->clock_high) &&
	    n < capacity)
		snprintf(lines[n++], 256, "core clock: %.2f GHz (%.2f-%.2f) now, %.2f GHz (%.2f-%.2f) saved", fresh->clock_ghz,
		         fresh->clock_low, fresh->clock_high, saved->clock_ghz, saved->clock_low, saved->clock_high);
	for (size_t k = 0; k < fresh->level_count && n < capacity; k++) {
		const machine_level *a = &fresh->levels[k], *b = machine_model_level(saved, a->name);
		if (!b)
			continue;
		if (a->hidden != b->hidden) {
			snprintf(lines[n++], 256, "%s: %s now, %s in the saved model", a->name, a->hidden ? "hidden" : "measured",
			         b->hidden ? "hidden" : "measured");
			continue;
		}
		if (n < capacity && apart(a->latency_ns, a->latency_low, a->latency_high, b->latency_ns, b->latency_low, b->latency_high))
			snprintf(lines[n++], 256, "%s latency: %.3g ns (%.3g-%.3g) now, %.3g ns (%.3g-%.3g) saved", a->name,
			         a->latency_ns, a->latency_low, a->latency_high, b->latency_ns, b->latency_low, b->latency_high);
		/* one thread's read: the best sample, its spread two cv either side */
		double acv = isfinite(a->bandwidth_cv) ? 2 * a->bandwidth_cv : 0, bcv = isfinite(b->bandwidth_cv) ? 2 * b->bandwidth_cv : 0;
		if (n < capacity && apart(a->read_1, a->read_1 * (1 - acv), a->read_1 * (1 + acv), b->read_1, b->read_1 * (1 - bcv),
		                          b->read_1 * (1 + bcv)))
			snprintf(lines[n++], 256, "%s read, 1 thread: %.3g GB/s (%.3g-%.3g) now, %.3g GB/s (%.3g-%.3g) saved", a->name,
			         a->read_1, a->read_1 * (1 - acv), a->read_1 * (1 + acv), b->read_1, b->read_1 * (1 - bcv),
			         b->read_1 * (1 + bcv));
		if (n < capacity && apart(a->usable_bytes, a->usable_low, a->usable_high, b->usable_bytes, b->usable_low, b->usable_high))
			snprintf(lines[n++], 256, "%s usable size: %.3g MiB (%.3g-%.3g) now, %.3g MiB (%.3g-%.3g) saved", a->name,
			         a->usable_bytes / 1048576, a->usable_low / 1048576, a->usable_high / 1048576, b->usable_bytes / 1048576,
			         b->usable_low / 1048576, b->usable_high / 1048576);
	}
	return n;
}

size_t machine_model_difference_notes(const machine_model *fresh, const machine_model *saved, const char *path,
                                      char notes[][400], size_t capacity)
{
	char lines[16][256];
	size_t n = machine_model_compare(fresh, saved, lines, 16), k = 0;
	for (size_t i = 0; i < n && k < capacity; i++)
		snprintf(notes[k++], 400, "differs from the saved machine model (%.100s) beyond both spreads: %s", path, lines[i]);
	if (!n && k < capacity)
		snprintf(notes[k++], 400, "every level's latency, read bandwidth and usable size, and the clock, agree with the saved "
		                          "machine model (%.100s) within their spreads", path);
	return n;
}

int machine_model_note_differences(output_report *lat, const char *path, plumb_status *status)
{
	machine_model saved, fresh;
	if (machine_model_load(path, &saved, status) != 0)
		return -1;
	if (machine_model_build(&fresh, NULL, lat, NULL, NULL, status) != 0)
		return -1;
	char notes[17][400];
	size_t n = machine_model_difference_notes(&fresh, &saved, path, notes, 17);
	for (size_t i = 0; i < (n ? n : 1) && i < 17; i++)
		output_note(lat, "%s", notes[i]);
	output_meta_integer(lat, "differs_from_saved_model", (int64_t)n);
	return 0;
}
