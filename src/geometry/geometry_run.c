/* plumb geometry's sequence of experiments, and the comparison of each
 * finding with what sysfs, CPUID and sysconf claim.  The experiments run
 * in dependence order: the capacity sweep gives each level's latency and
 * capacity, which size the associativity tests; the TLB sweep gives the
 * first-level entry count, which sizes the page-size test. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "geometry/geometry.h"
#include "latency/latency.h"
#include "core/parse.h"
#include "core/stats.h"
#include <stdlib.h>

const char *geometry_verdict_name(geometry_verdict verdict)
{
	switch (verdict) {
	case GEOMETRY_AGREE: return "agree";
	case GEOMETRY_DISAGREE: return "DISAGREE";
	case GEOMETRY_UNSTABLE: return "unstable";
	case GEOMETRY_UNRESOLVED: return "unresolved";
	case GEOMETRY_NO_REFERENCE: return "no reference";
	}
	return "unknown";
}

geometry_verdict geometry_judge(double low, double high, bool has_reference, double reference)
{
	if (isnan(low) || isnan(high))
		return GEOMETRY_UNRESOLVED;
	if (!has_reference)
		return GEOMETRY_NO_REFERENCE;
	return reference >= low && reference <= high ? GEOMETRY_AGREE : GEOMETRY_DISAGREE;
}

geometry_verdict geometry_judge_capacity(double measured, bool has_reference, double reference,
                                         int points_per_octave)
{
	if (isnan(measured) || !(measured > 0) || points_per_octave < 1)
		return GEOMETRY_UNRESOLVED;
	if (!has_reference || !(reference > 0))
		return GEOMETRY_NO_REFERENCE;
	return latency_boundary_agrees((uint64_t)llround(measured), (uint64_t)llround(reference),
	                               (unsigned)points_per_octave, 1.0)
	       ? GEOMETRY_AGREE : GEOMETRY_DISAGREE;
}

static geometry_finding *add_finding(geometry_report *r, const char *property, const char *level, const char *unit)
{
	if (r->finding_count == GEOMETRY_MAX_FINDINGS)
		return NULL;
	geometry_finding *f = &r->findings[r->finding_count++];
	memset(f, 0, sizeof *f);
	snprintf(f->property, sizeof f->property, "%s", property);
	snprintf(f->level, sizeof f->level, "%s", level);
	snprintf(f->unit, sizeof f->unit, "%s", unit);
	f->measured = f->low = f->high = NAN;
	f->verdict = GEOMETRY_UNRESOLVED;
	return f;
}

static void set_measured(geometry_finding *f, double value, double low, double high)
{
	f->measured_ok = !isnan(value);
	f->measured = value;
	f->low = low;
	f->high = high;
}

static void set_reference(geometry_finding *f, double value, const char *source)
{
	f->has_reference = true;
	f->reference = value;
	snprintf(f->reference_source, sizeof f->reference_source, "%s", source);
}

static uint64_t power_of_two_at_least(double x)
{
	uint64_t p = 64;
	while ((double)p < x)
		p *= 2;
	return p;
}

/* Labels the findings from index first on with the quality of the curves
 * they were read from. */
static void mark_quality(geometry_report *r, int first, const geometry_curve *a, const geometry_curve *b)
{
	size_t n = a->n + (b ? b->n : 0);
	double *cv = malloc((n ? n : 1) * sizeof *cv);
	int noisy = 0;
	size_t k = 0;
	for (const geometry_curve *c = a; c; c = c == a ? b : NULL)
		for (size_t i = 0; i < c->n; i++) {
			cv[k++] = c->cv ? c->cv[i] : NAN;
			noisy += c->noisy && c->noisy[i];
		}
	double median = cv && n ? stats_median(cv, n) : NAN;
	free(cv);
	for (int i = first; i < r->finding_count; i++) {
		r->findings[i].points = (int)n;
		r->findings[i].noisy_points = noisy;
		r->findings[i].cv_median = median;
	}
}

typedef struct run_progress {
	const geometry_run_request *request;
	size_t done, total;
} run_progress;

static void step(run_progress *p)
{
	p->done++;
	if (p->request->progress)
		p->request->progress(p->request->progress_context, p->done, p->total);
}

/* Level i's name and its sysfs cache (NULL: none, or no topology). */
static const topology_cache *level_of(const geometry_report *r, int i, const topology *topo, char *name, size_t size)
{
	const geometry_cache_estimate *e = &r->levels[i];
	if (e->name[0])
		snprintf(name, size, "%s", e->name);
	else
		snprintf(name, size, "L%d", i + 1);
	int cache_level = e->cache_level == 0 ? i + 1 : e->cache_level;
	return topo && cache_level > 0 ? topology_data_cache(topo, cache_level) : NULL;
}

static void capacity_findings(geometry_report *r, const topology *topo, int points_per_octave)
{
	for (int i = 0; i < r->level_count; i++) {
		char level[16];
		const topology_cache *cache = level_of(r, i, topo, level, sizeof level);
		geometry_finding *f = add_finding(r, "latency", level, "ns");
		if (f) {
			set_measured(f, r->levels[i].ns, r->levels[i].ns, r->levels[i].ns);
			f->verdict = GEOMETRY_NO_REFERENCE;
			snprintf(f->note, sizeof f->note, "plateau of plumb lat's sweep%s", r->levels_saved ? " (saved)" : "");
		}
		f = add_finding(r, "capacity", level, "bytes");
		if (!f)
			continue;
		set_measured(f, r->levels[i].capacity_low, r->levels[i].capacity_low, r->levels[i].capacity_high);
		if (cache)
			set_reference(f, (double)cache->size, "sysfs");
		/* Agree only within one sweep step of the claim, as plumb lat
		 * judges its boundaries: the capacity is the last working set
		 * where half the loads still hit, so on a cache that really
		 * holds the claim it lands on the claim's grid point or next to
		 * it. */
		f->verdict = geometry_judge_capacity(f->measured, f->has_reference, f->reference, points_per_octave);
		const latency_boundary_spread *spread = &r->spreads[i];
		f->has_spread = spread->passes > 0;
		f->spread_low = (double)spread->low_bytes;
		f->spread_high = (double)spread->high_bytes;
		f->spread_steps = spread->spread_steps;
		f->passes = (int)spread->passes;
		f->stable = spread->stable;
		if (f->has_spread && !spread->stable && f->verdict != GEOMETRY_UNRESOLVED) {
			/* The passes disagree: the cache was shared with someone
			 * who evicted it between them, and no single end can be
			 * set against the claim. */
			char low[32], high[32];
			f->verdict = GEOMETRY_UNSTABLE;
			snprintf(f->note, sizeof f->note,
			         "the %d passes put the end between %s and %s (%.1f sweep steps): another program evicted the cache between them; the value is the quietest passes' end",
			         f->passes, format_size(spread->low_bytes, low, sizeof low),
			         format_size(spread->high_bytes, high, sizeof high), spread->spread_steps);
			continue;
		}
		if (f->verdict == GEOMETRY_AGREE && f->measured != f->reference)
			snprintf(f->note, sizeof f->note, "within one sweep step of the claim");
		bool last_level = topo && cache == topology_last_level_cache(topo);
		if (f->verdict == GEOMETRY_DISAGREE && cache && f->measured < (double)cache->size) {
			char have[32], claim[32];
			format_size((uint64_t)f->low, have, sizeof have);
			format_size(cache->size, claim, sizeof claim);
			if (last_level && topo->hypervisor)
				snprintf(f->note, sizeof f->note,
				         "usable %s is about %s, not the %s sysfs claims: on this VM the cache is shared with other guests or only partly given to this one",
				         level, have, claim);
			else
				snprintf(f->note, sizeof f->note,
				         "half the loads miss past %s, well before the %s sysfs claims (set conflicts of scattered physical pages, sharing, or a partitioned cache)",
				         have, claim);
		} else if (f->verdict == GEOMETRY_DISAGREE) {
			snprintf(f->note, sizeof f->note, "the level holds more than sysfs claims (an inclusive/victim pair, or another level's plateau)");
		}
	}
	if (topo) {
		int sysfs_levels = 0;
		while (topology_data_cache(topo, sysfs_levels + 1))
			sysfs_levels++;
		for (int i = 0; i < sysfs_levels; i++) {
			/* a sysfs cache no plateau was matched to */
			bool matched = false;
			for (int k = 0; k < r->level_count && !matched; k++)
				matched = r->levels[k].cache_level == 0 ? k == i : r->levels[k].cache_level == i + 1;
			if (matched)
				continue;
			char level[16];
			snprintf(level, sizeof level, "L%d", i + 1);
			geometry_finding *f = add_finding(r, "capacity", level, "bytes");
			if (!f)
				break;
			set_reference(f, (double)topology_data_cache(topo, i + 1)->size, "sysfs");
			f->verdict = GEOMETRY_UNRESOLVED;
			snprintf(f->note, sizeof f->note, "no latency plateau for this level in the sweep (too small to show, or beyond the sweep)");
		}
	}
	geometry_finding *f = add_finding(r, "latency", "memory", "ns");
	if (f) {
		set_measured(f, r->memory_ns, r->memory_ns, r->memory_ns);
		f->verdict = isnan(r->memory_ns) ? GEOMETRY_UNRESOLVED : GEOMETRY_NO_REFERENCE;
		snprintf(f->note, sizeof f->note, "flat tail of plumb lat's sweep%s", r->levels_saved ? " (saved)" : "");
	}
}

static void line_finding(geometry_report *r, const topology *topo)
{
	geometry_finding *f = add_finding(r, "line size", "L1", "bytes");
	if (!f)
		return;
	double line;
	if (geometry_infer_line_size(&r->line, &line) == 0)
		set_measured(f, line, line, line);
	else
		snprintf(f->note, sizeof f->note, "no clear step between a hit in the same line and a miss");
	const topology_cache *l1 = topo ? topology_data_cache(topo, 1) : NULL;
	if (l1 && l1->line)
		set_reference(f, l1->line, "sysfs");
	f->verdict = geometry_judge(f->low, f->high, f->has_reference, f->reference);
	if (f->verdict == GEOMETRY_DISAGREE && f->measured > f->reference)
		snprintf(f->note, sizeof f->note, "an adjacent-line prefetcher fetches lines in pairs, so timing sees a larger line");
}

static void ways_finding(geometry_report *r, int level, double threshold, const topology *topo)
{
	char name[16];
	const topology_cache *cache = level_of(r, level, topo, name, sizeof name);
	geometry_finding *f = add_finding(r, "associativity", name, "ways");
	if (!f)
		return;
	if (cache && cache->associativity > 0)
		set_reference(f, cache->associativity, "sysfs");
	double ways;
	const geometry_curve *c = &r->conflict[level];
	char stride[32];
	format_size(r->conflict_stride[level], stride, sizeof stride);
	if (geometry_infer_ways(c, threshold, &ways) == 0) {
		set_measured(f, ways, ways, ways);
		f->verdict = geometry_judge(ways, ways, f->has_reference, f->reference);
		snprintf(f->note, sizeof f->note, "lines %s apart: latency jumps past %.0f of them", stride, ways);
		if (f->verdict == GEOMETRY_DISAGREE)
			snprintf(f->note, sizeof f->note,
			         "lines %s apart: jump past %.0f; a hashed or sliced index, or pseudo-LRU replacement, moves the step",
			         stride, ways);
	} else if (!isnan(ways)) {
		f->verdict = GEOMETRY_UNRESOLVED;
		snprintf(f->note, sizeof f->note,
		         "no jump up to %.0f lines %s apart: they do not share a set, as when physical pages are not contiguous beyond 4 KiB (a VM host's pages) or the index is hashed",
		         ways, stride);
	} else {
		f->verdict = GEOMETRY_UNRESOLVED;
		snprintf(f->note, sizeof f->note, "even one line %s apart is slower than the level (%.1f ns threshold)", stride, threshold);
	}
}

static void tlb_findings(geometry_report *r, double page_size)
{
	double entries[2], upper[2], penalty[2];
	int found = geometry_infer_tlb(&r->tlb_pages, &r->tlb_control, entries, upper, penalty, 2);
	const geometry_tlb_reference *ref = &r->tlb_reference;
	for (int i = 0; i < 2; i++) {
		char level[16];
		snprintf(level, sizeof level, "DTLB%d", i + 1);
		geometry_finding *f = add_finding(r, "tlb entries", level, "entries");
		if (!f)
			return;
		if (i < ref->levels && ref->entries[i])
			set_reference(f, ref->entries[i], ref->source);
		if (i < found) {
			set_measured(f, entries[i], entries[i], upper[i]);
			f->verdict = geometry_judge(f->low, f->high, f->has_reference, f->reference);
			snprintf(f->note, sizeof f->note, "past it each load pays %.1f ns more than the same lines on few pages", penalty[i]);
			if (f->verdict == GEOMETRY_DISAGREE && f->high < f->reference)
				snprintf(f->note, sizeof f->note,
				         "misses start before the CPUID count (set conflicts in a set-associative TLB, or entries shared with the host's nested translations); %.1f ns more past it",
				         penalty[i]);
			geometry_finding *reach = add_finding(r, "tlb reach", level, "bytes");
			if (reach) {
				set_measured(reach, entries[i] * page_size, entries[i] * page_size, upper[i] * page_size);
				if (f->has_reference)
					set_reference(reach, f->reference * page_size, ref->source);
				reach->verdict = geometry_judge(reach->low, reach->high, reach->has_reference, reach->reference);
				snprintf(reach->note, sizeof reach->note, "entries x the %.0f-byte page", page_size);
			}
		} else {
			f->verdict = GEOMETRY_UNRESOLVED;
			snprintf(f->note, sizeof f->note, "no step in the TLB penalty for this level within the sweep");
		}
	}
}

static void thp_finding(geometry_report *r, double huge_fraction)
{
	geometry_finding *f = add_finding(r, "tlb page (THP)", "-", "bytes");
	if (!f)
		return;
	const double huge = 2u << 20;
	set_reference(f, huge, "THP mapping");
	double page;
	double largest = r->page_thp.n ? r->page_thp.x[r->page_thp.n - 1] : NAN;
	if (!(huge_fraction >= 0.5)) {
		f->verdict = GEOMETRY_UNRESOLVED;
		snprintf(f->note, sizeof f->note, "the kernel backed only %.0f%% of the mapping with 2 MiB pages",
		         isnan(huge_fraction) ? 0 : 100 * huge_fraction);
	} else if (geometry_infer_page_size(&r->page_thp, &page) == 0) {
		set_measured(f, page, page, page);
		f->verdict = geometry_judge(page, page, true, huge);
		if (f->verdict == GEOMETRY_DISAGREE)
			snprintf(f->note, sizeof f->note,
			         "the guest maps 2 MiB pages, but the TLB holds %.0f-byte translations: the hypervisor backs guest memory with small pages, so physical addresses above 4 KiB are scattered",
			         page);
	} else if (!geometry_curve_is_flat(&r->page_thp, 1.15)) {
		/* It rose, but the points past the rise are too noisy for a
		 * flat end: that is no evidence of large translations. */
		f->verdict = GEOMETRY_UNRESOLVED;
		snprintf(f->note, sizeof f->note, "the stride curve rises but has no flat end (noisy points): cannot tell the TLB's page");
	} else {
		/* Flat: no miss up to the largest stride, so the TLB holds
		 * translations at least that large. */
		set_measured(f, largest, largest, huge);
		f->verdict = GEOMETRY_AGREE;
		snprintf(f->note, sizeof f->note, "no TLB step up to %.0f-byte strides: the TLB holds large translations", largest);
	}
}

/* The capacity curve, cache levels and memory latency as plumb lat found
 * them: every level but the last is a cache, the last is memory. */
static int levels_of_latency(geometry_report *r, const latency_run_result *lat, unsigned points_per_octave,
                             plumb_status *status)
{
	r->points_per_octave = points_per_octave ? (int)points_per_octave : 4;
	if (geometry_curve_init(&r->capacity, lat->point_count, status) != 0)
		return -1;
	for (size_t i = 0; i < lat->point_count; i++) {
		r->capacity.x[i] = (double)lat->sizes[i];
		r->capacity.ns[i] = lat->points[i].latency.ns_p10;
		r->capacity.cv[i] = lat->points[i].latency.cv;
		r->capacity.noisy[i] = lat->points[i].latency.noisy;
	}
	r->memory_ns = lat->level_count ? lat->levels[lat->level_count - 1].level.ns : NAN;
	r->level_count = 0;
	for (size_t k = 0; k + 1 < lat->level_count && r->level_count < GEOMETRY_MAX_LEVELS; k++) {
		const latency_level *v = &lat->levels[k].level;
		geometry_cache_estimate *e = &r->levels[r->level_count];
		e->ns = v->ns;
		e->capacity_low = (double)lat->sizes[v->end_index];
		e->capacity_high = v->end_index + 1 < lat->point_count ? (double)lat->sizes[v->end_index + 1] : NAN;
		/* lat's names, matched to sysfs by capacity: a plateau it could not
		 * match ("level 3" on a VM whose L3 shows an extra step) must not
		 * take the next cache's name by its position */
		snprintf(e->name, sizeof e->name, "%s", lat->levels[k].name);
		e->cache_level = lat->levels[k].cache_level > 0 ? lat->levels[k].cache_level : -1;
		r->spreads[r->level_count++] = lat->levels[k].spread;
	}
	return 0;
}

int geometry_level_findings(geometry_report *r, const latency_run_result *lat, unsigned points_per_octave,
                            const topology *topo, bool saved, plumb_status *status)
{
	if (levels_of_latency(r, lat, points_per_octave, status) != 0)
		return -1;
	r->levels_saved = saved;
	int first = r->finding_count;
	capacity_findings(r, topo, r->points_per_octave);
	mark_quality(r, first, &r->capacity, NULL);
	return 0;
}

int geometry_run(const geometry_run_request *request, geometry_report *r, plumb_status *status)
{
	memset(r, 0, sizeof *r);
	const topology *topo = request->topo;
	const geometry_options *o = &request->options;
	long page = sysconf(_SC_PAGESIZE);
	geometry_tlb_reference_read(&r->tlb_reference);
	run_progress steps = { request, 0, 9 };

	/* 1. Capacities and latencies: plumb lat's measurement and detector,
	 * or a saved one. */
	latency_run_result own;
	const latency_run_result *lat = request->levels_from;
	if (!lat) {
		if (latency_run(&request->latency_options, &own, status) != 0) {
			latency_run_free(&own);
			goto fail;
		}
		lat = &own;
	}
	int rc = geometry_level_findings(r, lat, request->latency_options.points_per_octave, topo,
	                                 request->levels_from != NULL, status);
	if (lat == &own)
		latency_run_free(&own);
	if (rc != 0)
		goto fail;
	step(&steps);
	int first;

	/* 2. Line size: 512 blocks, 256 KiB, inside the first-level TLB reach. */
	if (geometry_probe_line(o, 256u << 10, 256, &r->line, status) != 0)
		goto fail;
	step(&steps);
	first = r->finding_count;
	line_finding(r, topo);
	mark_quality(r, first, &r->line, NULL);

	/* 3. Associativity of each level found, with lines one capacity
	 * (rounded up to a power of two) apart. */
	for (int i = 0; i < r->level_count && i < 3; i++) {
		char name[16];
		const topology_cache *cache = level_of(r, i, topo, name, sizeof name);
		unsigned max_count = cache && cache->associativity > 0 ? 2u * (unsigned)cache->associativity + 8 : 40;
		if (max_count < 24)
			max_count = 24;
		if (max_count > 40)
			max_count = 40;
		r->conflict_stride[i] = power_of_two_at_least(r->levels[i].capacity_low);
		if (geometry_probe_conflict(o, r->conflict_stride[i], max_count, &r->conflict[i], status) != 0)
			goto fail;
		r->conflict_count = i + 1;
		double next = i + 1 < r->level_count ? r->levels[i + 1].ns : r->memory_ns;
		first = r->finding_count;
		ways_finding(r, i, sqrt(r->levels[i].ns * next), topo);
		mark_quality(r, first, &r->conflict[i], NULL);
		step(&steps);
	}
	steps.done = 5;

	/* 4. TLB entries: 16..8192 pages, 8 points per octave. */
	if (geometry_probe_tlb(o, 16, 8192, 8, (uint64_t)page, &r->tlb_pages, &r->tlb_control, status) != 0)
		goto fail;
	step(&steps);

	/* 5. Page size, with the line count set by the first-level TLB. */
	double entries[2], upper[2], penalty[2];
	size_t lines = 128;
	if (geometry_infer_tlb(&r->tlb_pages, &r->tlb_control, entries, upper, penalty, 1) == 1) {
		lines = 2;
		while ((double)lines <= entries[0])
			lines *= 2;
	}
	if (geometry_probe_page_size(o, lines, 65536, 65536, ARENA_PAGES_SMALL, NULL, &r->page, status) != 0)
		goto fail;
	step(&steps);
	double page_size;
	first = r->finding_count;
	geometry_finding *f = add_finding(r, "page size", "-", "bytes");
	if (f) {
		if (geometry_infer_page_size(&r->page, &page_size) == 0)
			set_measured(f, page_size, page_size, page_size);
		else
			snprintf(f->note, sizeof f->note, "no flat end to the stride curve");
		set_reference(f, (double)page, "sysconf");
		f->verdict = geometry_judge(f->low, f->high, true, (double)page);
		if (f->verdict == GEOMETRY_DISAGREE)
			snprintf(f->note, sizeof f->note, "the TLB maps more than a base page per entry (coalesced neighbouring pages, or huge pages)");
		else if (f->verdict == GEOMETRY_AGREE)
			snprintf(f->note, sizeof f->note, "%zu lines: misses start when the stride reaches the page", lines);
	}
	mark_quality(r, first, &r->page, NULL);
	first = r->finding_count;
	tlb_findings(r, f && f->measured_ok ? f->measured : (double)page);
	mark_quality(r, first, &r->tlb_pages, &r->tlb_control);

	/* 6. The same stride test on a 2 MiB (THP) mapping: what page size
	 * the TLB really holds for it.  Under a hypervisor that backs guest
	 * memory with 4 KiB pages it is 4 KiB, and then no set-conflict test
	 * above 4 KiB can work (see the associativity findings). */
	if (!topo || strcmp(topo->thp_mode, "never") != 0) {
		double huge_fraction = NAN;
		if (geometry_probe_page_size(o, lines, 65536, 65536, ARENA_PAGES_THP, &huge_fraction, &r->page_thp, status) != 0)
			goto fail;
		first = r->finding_count;
		thp_finding(r, huge_fraction);
		mark_quality(r, first, &r->page_thp, NULL);
		const geometry_finding *thp = &r->findings[r->finding_count - 1];
		if (thp->measured_ok && thp->measured <= 4096)
			for (int i = 0; i < r->finding_count; i++) {
				geometry_finding *w = &r->findings[i];
				if (strcmp(w->property, "associativity") == 0 && strcmp(w->level, "L1") != 0 &&
				    w->verdict == GEOMETRY_UNRESOLVED)
					snprintf(w->note, sizeof w->note,
					         "no set-conflict step: the hypervisor backs guest memory with 4 KiB pages (see tlb page (THP)), so lines one capacity apart land in scattered sets");
			}
	}
	step(&steps);
	return 0;
fail:
	geometry_report_free(r);
	return -1;
}

void geometry_report_free(geometry_report *r)
{
	geometry_curve_free(&r->capacity);
	geometry_curve_free(&r->line);
	geometry_curve_free(&r->tlb_pages);
	geometry_curve_free(&r->tlb_control);
	geometry_curve_free(&r->page);
	geometry_curve_free(&r->page_thp);
	for (int i = 0; i < GEOMETRY_MAX_LEVELS; i++)
		geometry_curve_free(&r->conflict[i]);
	r->conflict_count = 0;
}
