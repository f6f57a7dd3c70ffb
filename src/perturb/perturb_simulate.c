/* The halting question through the simulator, which works on every machine:
 * in software the unhalted trace exists, so the halted one can be compared
 * with it reference by reference (Watson, 2004, could not: BACH's unhalted
 * long trace cannot be captured).
 *
 * For a trace buffer of B bytes holding B / record_bytes references, the
 * buffer fills, and the program is halted, every B / record_bytes
 * references.  At each halt the drain's own references go into a second
 * simulation of the same caches: the buffer read out line by line, the
 * handler's code fetched, its stack written.  Only the program's
 * references are counted in both, so the difference is what the drain's
 * displacement costs the program: extra misses per halt, per level, and per
 * window of W references after each halt (how long the perturbation lasts). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perturb/perturb.h"
#include "sim/sim.h"
#include "trace/trace.h"

/* Where the drain lives: far from any user address a trace holds. */
#define DRAIN_BUFFER_BASE 0x7e0000000000ull
#define DRAIN_CODE_BASE   0x7f0000000000ull
#define DRAIN_STACK_BASE  0x7f8000000000ull

enum { LEVEL_L1I, LEVEL_L1D, LEVEL_L2, LEVEL_L3, LEVEL_ITLB, LEVEL_DTLB, LEVEL_COUNT };
static const char *const level_names[LEVEL_COUNT] = { "L1I", "L1D", "L2", "L3", "ITLB", "DTLB" };

void perturb_sim_options_default(perturb_sim_options *o)
{
	memset(o, 0, sizeof *o);
	o->record_bytes = 16;
	o->footprint.lines = 8;
	o->footprint.code_bytes = 4096;
	o->window = 1000;
	o->windows = 32;
}

static void snapshot(const sim *s, uint64_t out[LEVEL_COUNT])
{
	const sim_stats *st = sim_statistics(s);
	const sim_core_stats *c = &st->core[0];
	for (int l = 0; l < 3; l++)
		out[l] = c->cache[l].misses[SIM_IFETCH] + c->cache[l].misses[SIM_READ] + c->cache[l].misses[SIM_WRITE];
	out[LEVEL_L3] = c->l3_misses;
	out[LEVEL_ITLB] = c->tlb[SIM_ITLB].misses;
	out[LEVEL_DTLB] = c->tlb[SIM_DTLB].misses;
}

typedef struct buffer_run {
	uint64_t bytes, every;        /* references between halts */
	sim *perturbed;
	uint64_t halts;
	uint64_t drain_excluded[LEVEL_COUNT];   /* misses of the drain's own references */
	uint64_t since_halt;          /* program references since the last halt */
	uint64_t window_start_p[LEVEL_COUNT], window_start_b[LEVEL_COUNT];
	double *window_extra;         /* [window][level], summed over halts */
	uint64_t *window_count;       /* halts that reached window k */
} buffer_run;

static int inject_drain(buffer_run *b, const perturb_sim_options *o, plumb_status *status)
{
	uint64_t before[LEVEL_COUNT], after[LEVEL_COUNT];
	snapshot(b->perturbed, before);
	for (uint64_t offset = 0; offset < o->footprint.code_bytes; offset += 64)
		if (sim_access(b->perturbed, 0, SIM_IFETCH, DRAIN_CODE_BASE + offset, 16, status) != 0)
			return -1;
	for (uint64_t line = 0; line < o->footprint.lines; line++)
		if (sim_access(b->perturbed, 0, SIM_WRITE, DRAIN_STACK_BASE - 64 * (line + 1), 8, status) != 0)
			return -1;
	for (uint64_t offset = 0; offset < b->bytes; offset += 64)
		if (sim_access(b->perturbed, 0, SIM_READ, DRAIN_BUFFER_BASE + offset, 64, status) != 0)
			return -1;
	for (uint64_t offset = 0; offset < o->footprint.pages * 4096; offset += 4096)
		if (sim_access(b->perturbed, 0, SIM_WRITE, DRAIN_STACK_BASE + 0x100000 + offset, 8, status) != 0)
			return -1;
	snapshot(b->perturbed, after);
	for (int l = 0; l < LEVEL_COUNT; l++)
		b->drain_excluded[l] += after[l] - before[l];
	b->halts++;
	return 0;
}

static sim_access_kind kind_of(uint8_t kind)
{
	return kind == TRACE_INSTRUCTION ? SIM_IFETCH : kind == TRACE_READ ? SIM_READ : SIM_WRITE;
}

static int feed(sim *s, const trace_record *r, plumb_status *status)
{
	uint32_t size = r->size ? r->size : 1;
	if (r->kind == TRACE_MODIFY && sim_access(s, 0, SIM_READ, r->address, size, status) != 0)
		return -1;
	return sim_access(s, 0, kind_of(r->kind), r->address, size, status);
}

int perturb_trace_references(const char *path, uint64_t *out, plumb_status *status)
{
	trace_reader *reader;
	if (trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, status) != 0)
		return -1;
	trace_record records[4096];
	uint64_t count = 0;
	long n;
	while ((n = trace_reader_read(reader, records, 4096, status)) > 0)
		for (long i = 0; i < n; i++)
			count += trace_is_reference(&records[i]);
	if (n < 0) {
		plumb_status ignored;
		trace_reader_close(reader, &ignored);
		return -1;
	}
	if (trace_reader_close(reader, status) != 0)
		return -1;
	if (count == 0)
		return plumb_fail(status, EINVAL, "%s holds no memory references", path);
	*out = count;
	return 0;
}

int perturb_trace_traffic(const char *path, const char *preset, perturb_traffic *out, plumb_status *status)
{
	memset(out, 0, sizeof *out);
	sim_config config;
	if (sim_preset(&config, preset ? preset : "host", status) != 0)
		return -1;
	config.cores = 1;
	if (sim_config_validate(&config, status) != 0)
		return -1;
	sim *s;
	if (sim_new(&s, &config, status) != 0)
		return -1;
	trace_reader *reader;
	if (trace_reader_open(&reader, path, TRACE_FORMAT_AUTO, status) != 0) {
		sim_free(s);
		return -1;
	}
	trace_record records[4096];
	long n;
	int rc = 0;
	while (rc == 0 && (n = trace_reader_read(reader, records, 4096, status)) > 0)
		for (long i = 0; i < n && rc == 0; i++)
			if (trace_is_reference(&records[i])) {
				out->references++;
				rc = feed(s, &records[i], status);
			}
	plumb_status ignored;
	if (rc != 0 || n < 0) {
		trace_reader_close(reader, &ignored);
		sim_free(s);
		return -1;
	}
	if (trace_reader_close(reader, status) != 0) {
		sim_free(s);
		return -1;
	}
	const sim_stats *st = sim_statistics(s);
	out->fills = st->core[0].memory_reads;
	out->writebacks = st->core[0].memory_writes;
	sim_config_describe(&config, out->caches, sizeof out->caches);
	sim_free(s);
	if (out->references == 0)
		return plumb_fail(status, EINVAL, "%s holds no memory references", path);
	return 0;
}

/* TLBs for --simulate when the preset describes none (sysfs and hwloc, which
 * the host preset reads, do not describe TLBs): a typical x86-64 core's
 * first-level TLBs of 4 KiB pages, 64-entry fully associative ITLB and DTLB
 * (docs/perturbation.md).  The drain's displacement of TLB entries is half
 * of what Watson found (ITLB misses suffered most). */
static bool default_tlbs(sim_config *config)
{
	for (int t = 0; t < SIM_TLB_COUNT; t++)
		if (config->tlb[t].entries > 0)
			return false;
	config->tlb[SIM_ITLB] = (sim_tlb_config){ .entries = 64, .assoc = 0, .page_size = 4096, .latency = 7 };
	config->tlb[SIM_DTLB] = (sim_tlb_config){ .entries = 64, .assoc = 0, .page_size = 4096, .latency = 7 };
	return true;
}

int perturb_simulate(const perturb_sim_options *o, output_report *report, plumb_status *status)
{
	if (!o->trace_path || o->n_buffers == 0)
		return plumb_fail(status, EINVAL, "a trace and at least one buffer size");
	if (o->record_bytes == 0 || o->window == 0 || o->windows == 0)
		return plumb_fail(status, EINVAL, "record bytes, window and windows must be above 0");
	sim_config config;
	sim_config_origin origin;
	if (sim_config_choose_machine(&config, o->preset ? o->preset : "host", NULL, o->machine_path, NULL, 0, &origin,
	                              status) != 0)
		return -1;
	config.cores = 1;
	bool tlbs_added = !o->no_default_tlbs && default_tlbs(&config);
	if (sim_config_validate(&config, status) != 0)
		return -1;
	size_t nb = o->n_buffers;
	buffer_run *runs = calloc(nb, sizeof *runs);
	sim *baseline = NULL;
	trace_reader *reader = NULL;
	int rc = -1;
	if (!runs) {
		plumb_fail(status, ENOMEM, "out of memory");
		goto done;
	}
	if (sim_new(&baseline, &config, status) != 0)
		goto done;
	for (size_t i = 0; i < nb; i++) {
		runs[i].bytes = o->buffers[i];
		runs[i].every = o->buffers[i] / o->record_bytes;
		if (runs[i].every == 0) {
			plumb_fail(status, EINVAL, "a buffer of %llu bytes holds no %u-byte record",
			           (unsigned long long)o->buffers[i], o->record_bytes);
			goto done;
		}
		runs[i].window_extra = calloc(o->windows * LEVEL_COUNT, sizeof(double));
		runs[i].window_count = calloc(o->windows, sizeof(uint64_t));
		if (!runs[i].window_extra || !runs[i].window_count) {
			plumb_fail(status, ENOMEM, "out of memory");
			goto done;
		}
		if (sim_new(&runs[i].perturbed, &config, status) != 0)
			goto done;
	}
	if (trace_reader_open(&reader, o->trace_path, TRACE_FORMAT_AUTO, status) != 0)
		goto done;
	trace_record records[4096];
	uint64_t references = 0;
	long n;
	bool stop = false;
	while (!stop && (n = trace_reader_read(reader, records, 4096, status)) > 0) {
		for (long k = 0; k < n; k++) {
			const trace_record *rec = &records[k];
			if (!trace_is_reference(rec))
				continue;
			if (o->max_records && references >= o->max_records) {
				stop = true;
				break;
			}
			if (feed(baseline, rec, status) != 0)
				goto done;
			references++;
			uint64_t base_now[LEVEL_COUNT];
			bool have_base = false;
			for (size_t i = 0; i < nb; i++) {
				buffer_run *b = &runs[i];
				if (feed(b->perturbed, rec, status) != 0)
					goto done;
				b->since_halt++;
				/* Window boundary after a halt: account the window just ended. */
				if (b->halts > 0 && b->since_halt % o->window == 0 && b->since_halt / o->window <= o->windows) {
					size_t w = (size_t)(b->since_halt / o->window) - 1;
					uint64_t p_now[LEVEL_COUNT];
					if (!have_base) {
						snapshot(baseline, base_now);
						have_base = true;
					}
					snapshot(b->perturbed, p_now);
					for (int l = 0; l < LEVEL_COUNT; l++) {
						double extra = (double)(p_now[l] - b->window_start_p[l]) -
						               (double)(base_now[l] - b->window_start_b[l]);
						b->window_extra[w * LEVEL_COUNT + (size_t)l] += extra;
						b->window_start_p[l] = p_now[l];
						b->window_start_b[l] = base_now[l];
					}
					b->window_count[w]++;
				}
				if (references % b->every == 0) {
					if (inject_drain(b, o, status) != 0)
						goto done;
					b->since_halt = 0;
					if (!have_base) {
						snapshot(baseline, base_now);
						have_base = true;
					}
					snapshot(b->perturbed, b->window_start_p);
					memcpy(b->window_start_b, base_now, sizeof base_now);
				}
			}
		}
	}
	if (!stop && n < 0)
		goto done;
	if (references == 0) {
		plumb_fail(status, EINVAL, "%s holds no memory references", o->trace_path);
		goto done;
	}

	char text[256];
	output_meta_text(report, "trace", o->trace_path);
	output_meta_integer(report, "references", (int64_t)references);
	output_meta_text(report, "caches", sim_config_describe(&config, text, sizeof text));
	output_meta_text(report, "preset", o->preset ? o->preset : "host");
	if (config.tlb[SIM_ITLB].entries || config.tlb[SIM_DTLB].entries)
		snprintf(text, sizeof text, "ITLB %u entries, DTLB %u entries, %llu B pages%s",
		         config.tlb[SIM_ITLB].entries, config.tlb[SIM_DTLB].entries,
		         (unsigned long long)(config.tlb[SIM_ITLB].page_size ? config.tlb[SIM_ITLB].page_size
		                                                             : config.tlb[SIM_DTLB].page_size),
		         tlbs_added ? " (plumb's default: the preset describes no TLBs)" : "");
	else
		snprintf(text, sizeof text, "none (the preset describes no TLBs)");
	output_meta_text(report, "tlbs", text);
	if (o->machine_path && origin.machine[0])
		output_meta_text(report, "machine", origin.machine);
	output_meta_integer(report, "record_bytes", o->record_bytes);
	output_meta_integer(report, "handler_code_bytes", (int64_t)o->footprint.code_bytes);
	output_meta_integer(report, "handler_stack_lines", (int64_t)o->footprint.lines);
	output_meta_integer(report, "window", (int64_t)o->window);
	uint64_t base_total[LEVEL_COUNT];
	snapshot(baseline, base_total);

	output_table *t = output_table_add(report, "buffers", "Extra misses of the program per halt, by buffer size");
	output_column(t, "buffer", "bytes", 0);
	output_column(t, "references_per_buffer", NULL, 0);
	output_column(t, "halts", NULL, 0);
	for (int l = 0; l < LEVEL_COUNT; l++) {
		snprintf(text, sizeof text, "%s_extra_per_halt", level_names[l]);
		output_column(t, text, NULL, 3);
	}
	for (int l = 0; l < LEVEL_COUNT; l++) {
		snprintf(text, sizeof text, "%s_change", level_names[l]);
		output_column(t, text, "%", 4);
	}
	output_column(t, "lasts_references", NULL, 0);
	bool tlb[2] = { config.tlb[SIM_ITLB].entries > 0, config.tlb[SIM_DTLB].entries > 0 };
	bool l3 = config.cache[SIM_L3].size > 0;
	for (size_t i = 0; i < nb; i++) {
		buffer_run *b = &runs[i];
		uint64_t p_total[LEVEL_COUNT];
		snapshot(b->perturbed, p_total);
		output_row(t);
		output_cell_integer(t, (int64_t)b->bytes);
		output_cell_integer(t, (int64_t)b->every);
		output_cell_integer(t, (int64_t)b->halts);
		double extra[LEVEL_COUNT];
		for (int l = 0; l < LEVEL_COUNT; l++)
			extra[l] = (double)(p_total[l] - b->drain_excluded[l]) - (double)base_total[l];
		for (int pass = 0; pass < 2; pass++)
			for (int l = 0; l < LEVEL_COUNT; l++) {
				bool present = (l == LEVEL_L3 && !l3) || (l == LEVEL_ITLB && !tlb[0]) ||
				               (l == LEVEL_DTLB && !tlb[1]) ? false : true;
				if (!present) {
					output_cell_status(t, "unsupported", "the simulated machine has no such level");
				} else if (b->halts == 0) {
					output_cell_status(t, "n/a", "the trace is shorter than the buffer: no halt");
				} else if (pass == 0) {
					output_cell_real(t, extra[l] / (double)b->halts);
				} else {
					output_cell_real(t, base_total[l] ? 100.0 * extra[l] / (double)base_total[l] : NAN);
				}
			}
		/* How long it lasts: the end of the last window whose extra misses
		 * per halt (all levels) are at least 5% of the first window's. */
		double first = 0;
		size_t last = 0;
		for (size_t w = 0; w < o->windows; w++) {
			if (b->window_count[w] == 0)
				break;
			double sum = 0;
			for (int l = 0; l < LEVEL_ITLB; l++)
				sum += b->window_extra[w * LEVEL_COUNT + (size_t)l] / (double)b->window_count[w];
			if (w == 0)
				first = sum;
			if (first > 0 && sum >= 0.05 * first)
				last = w + 1;
		}
		if (b->halts == 0)
			output_cell_status(t, "n/a", "no halt");
		else
			output_cell_integer(t, (int64_t)(last * o->window));
	}

	t = output_table_add(report, "windows", "Extra misses per halt in each window after a halt");
	output_column(t, "buffer", "bytes", 0);
	output_column(t, "window", NULL, 0);
	output_column(t, "references_after_halt", NULL, 0);
	output_column(t, "halts", NULL, 0);
	for (int l = 0; l < LEVEL_COUNT; l++)
		output_column(t, level_names[l], NULL, 3);
	for (size_t i = 0; i < nb; i++) {
		buffer_run *b = &runs[i];
		for (size_t w = 0; w < o->windows && b->window_count[w] > 0; w++) {
			output_row(t);
			output_cell_integer(t, (int64_t)b->bytes);
			output_cell_integer(t, (int64_t)w + 1);
			output_cell_integer(t, (int64_t)((w + 1) * o->window));
			output_cell_integer(t, (int64_t)b->window_count[w]);
			for (int l = 0; l < LEVEL_COUNT; l++)
				output_cell_real(t, b->window_extra[w * LEVEL_COUNT + (size_t)l] / (double)b->window_count[w]);
		}
	}
	output_note(report, "A halt every (buffer / %u) references injects the drain (the buffer read out, "
	            "%llu bytes of handler code, %llu stack lines); only the program's own misses are "
	            "compared with an unhalted simulation of the same trace.", o->record_bytes,
	            (unsigned long long)o->footprint.code_bytes, (unsigned long long)o->footprint.lines);
	if (tlbs_added)
		output_note(report, "The preset '%s' describes no TLBs (sysfs does not), so the ITLB and DTLB are "
		            "plumb's default: 64 entries each, fully associative, 4 KiB pages. --no-default-tlbs "
		            "leaves them out.", o->preset ? o->preset : "host");
	else if (!config.tlb[SIM_ITLB].entries && !config.tlb[SIM_DTLB].entries)
		output_note(report, "The simulated machine has no TLBs: the ITLB and DTLB columns are unsupported.");
	rc = 0;
done:
	if (reader) {
		plumb_status ignored;
		if (rc == 0)
			rc = trace_reader_close(reader, status);
		else
			trace_reader_close(reader, &ignored);
	}
	sim_free(baseline);
	if (runs)
		for (size_t i = 0; i < nb; i++) {
			sim_free(runs[i].perturbed);
			free(runs[i].window_extra);
			free(runs[i].window_count);
		}
	free(runs);
	return rc;
}
