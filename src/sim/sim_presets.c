/* Platform presets: the machines of the seeds (SGI Origin 2000 / R10000,
 * IBM Power3, Intel Itanium; seed 000 chapter 3, notes 000 section 7.7 S7),
 * two current cores, cachegrind's model, the thesis's hierarchy, and the
 * host as sysfs describes it.  Latencies are the published load-to-use
 * figures, rounded; docs/simulator.md gives the sources. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "machine/machine_model.h"
#include "sim/sim.h"
#include "machine/topology.h"

static void level(sim_config *c, sim_level l, uint64_t size, uint32_t line, uint32_t assoc, uint32_t latency)
{
	c->cache[l].size = size;
	c->cache[l].line = line;
	c->cache[l].assoc = assoc;
	c->cache[l].latency = latency;
}

static void tlb(sim_config *c, sim_tlb_level t, uint32_t entries, uint32_t assoc, uint64_t page, uint32_t latency)
{
	c->tlb[t].entries = entries;
	c->tlb[t].assoc = assoc;
	c->tlb[t].page_size = page;
	c->tlb[t].latency = latency;
}

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static void preset_origin2000(sim_config *c)
{
	/* R10000 at 195 MHz: 32 KiB 2-way L1s (I 64 B lines, D 32 B lines),
	 * 1 MiB 2-way 128 B off-chip L2 (the size seed 000 used), a 64-entry
	 * fully associative TLB; two processors per node, MESI directory. */
	c->cores = 2;
	level(c, SIM_L1I, 32 * KiB, 64, 2, 1);
	level(c, SIM_L1D, 32 * KiB, 32, 2, 2);
	level(c, SIM_L2, 1 * MiB, 128, 2, 10);
	level(c, SIM_L3, 0, 128, 1, 0);
	c->protocol = SIM_MESI;
	tlb(c, SIM_ITLB, 8, 0, 32 * KiB, 1);
	tlb(c, SIM_DTLB, 64, 0, 32 * KiB, 60);
	c->memory_latency = 100;
	c->transfer_latency = 150;
	c->upgrade_latency = 80;
}

static void preset_power3(sim_config *c)
{
	/* POWER3-II: 64 KiB 128-way L1D and 32 KiB 128-way L1I with 128 B
	 * lines and round-robin replacement, a 4 MiB direct-mapped L2 (as in
	 * seed 000), a 256-entry 2-way TLB of 4 KiB pages. */
	c->cores = 2;
	level(c, SIM_L1I, 32 * KiB, 128, 128, 1);
	level(c, SIM_L1D, 64 * KiB, 128, 128, 1);
	c->cache[SIM_L1I].replacement = c->cache[SIM_L1D].replacement = SIM_FIFO;
	level(c, SIM_L2, 4 * MiB, 128, 1, 9);
	level(c, SIM_L3, 0, 128, 1, 0);
	c->protocol = SIM_MESI;
	tlb(c, SIM_DTLB, 256, 2, 4 * KiB, 40);
	tlb(c, SIM_ITLB, 0, 0, 4 * KiB, 0);
	c->memory_latency = 100;
	c->transfer_latency = 120;
	c->upgrade_latency = 60;
}

static void preset_itanium(sim_config *c)
{
	/* Itanium (Merced): 16 KiB 4-way 32 B L1s, the L1D write-through and
	 * no-write-allocate, 96 KiB 6-way 64 B L2, 4 MiB 4-way off-die L3,
	 * DTLB 32 + 96 entries fully associative, 16 KiB pages. */
	c->cores = 1;
	level(c, SIM_L1I, 16 * KiB, 32, 4, 1);
	level(c, SIM_L1D, 16 * KiB, 32, 4, 2);
	c->cache[SIM_L1D].write_back = false;
	c->cache[SIM_L1D].write_allocate = false;
	level(c, SIM_L2, 96 * KiB, 64, 6, 7);
	level(c, SIM_L3, 4 * MiB, 64, 4, 21);
	c->l3_inclusion = SIM_NON_INCLUSIVE;
	c->protocol = SIM_MESI;
	tlb(c, SIM_ITLB, 64, 0, 16 * KiB, 0);
	tlb(c, SIM_DTLB, 32, 0, 16 * KiB, 4);
	tlb(c, SIM_STLB, 96, 0, 16 * KiB, 30);
	c->memory_latency = 150;
	c->transfer_latency = 150;
	c->upgrade_latency = 60;
}

static void preset_zen4(sim_config *c)
{
	/* AMD Zen 4 CCX: 32 KiB 8-way L1s, 1 MiB 8-way private L2, 32 MiB
	 * 16-way shared victim L3 (exclusive), MOESI; 72-entry L1 DTLB, 64-entry
	 * ITLB, 3072-entry 24-way L2 TLB. */
	c->cores = 8;
	level(c, SIM_L1I, 32 * KiB, 64, 8, 4);
	level(c, SIM_L1D, 32 * KiB, 64, 8, 4);
	level(c, SIM_L2, 1 * MiB, 64, 8, 14);
	level(c, SIM_L3, 32 * MiB, 64, 16, 50);
	c->l3_inclusion = SIM_EXCLUSIVE;
	c->protocol = SIM_MOESI;
	tlb(c, SIM_ITLB, 64, 0, 4 * KiB, 7);
	tlb(c, SIM_DTLB, 72, 0, 4 * KiB, 7);
	tlb(c, SIM_STLB, 3072, 24, 4 * KiB, 30);
	c->memory_latency = 350;
	c->transfer_latency = 90;
	c->upgrade_latency = 50;
}

static void preset_intel(sim_config *c)
{
	/* Intel Raptor Cove (Golden Cove) P-core: 32 KiB 8-way L1I, 48 KiB
	 * 12-way L1D, 2 MiB 16-way L2, 36 MiB 12-way non-inclusive L3 (49152
	 * sets, not a power of two: indexed modulo), MESI(F); 96-entry 6-way
	 * DTLB, 256-entry 8-way ITLB, 2048-entry 16-way STLB. */
	c->cores = 8;
	level(c, SIM_L1I, 32 * KiB, 64, 8, 4);
	level(c, SIM_L1D, 48 * KiB, 64, 12, 5);
	level(c, SIM_L2, 2 * MiB, 64, 16, 15);
	level(c, SIM_L3, 36 * MiB, 64, 12, 60);
	c->l3_inclusion = SIM_NON_INCLUSIVE;
	c->protocol = SIM_MESI;
	tlb(c, SIM_ITLB, 256, 8, 4 * KiB, 7);
	tlb(c, SIM_DTLB, 96, 6, 4 * KiB, 7);
	tlb(c, SIM_STLB, 2048, 16, 4 * KiB, 30);
	c->memory_latency = 350;
	c->transfer_latency = 70;
	c->upgrade_latency = 60;
}

static void preset_cachegrind(sim_config *c)
{
	/* cachegrind's model: I1, D1 and LL, LRU, write-allocate, no writeback
	 * traffic, one core; 'M' counts as one read; data accesses larger than
	 * the smallest line are cut to it (cg_main.c). */
	c->cores = 1;
	level(c, SIM_L1I, 32 * KiB, 64, 8, 1);
	level(c, SIM_L1D, 32 * KiB, 64, 8, 1);
	level(c, SIM_L2, 0, 64, 1, 0);
	level(c, SIM_L3, 8 * MiB, 64, 16, 10);
	c->l3_inclusion = SIM_NON_INCLUSIVE;
	c->modify = SIM_MODIFY_READ;
	c->max_access_size = 64;
	c->memory_latency = 100;
}

static void preset_franz08(sim_config *c)
{
	/* The thesis's model: private I1, D1 and L2 per core, no shared cache,
	 * write-through ESI, one thread per core (error beyond), Callgrind's
	 * 'M' as one write. */
	c->cores = 8;
	level(c, SIM_L1I, 32 * KiB, 64, 8, 1);
	level(c, SIM_L1D, 32 * KiB, 64, 8, 1);
	level(c, SIM_L2, 1 * MiB, 64, 16, 10);
	level(c, SIM_L3, 0, 64, 1, 0);
	c->protocol = SIM_ESI;
	for (int l = 0; l < SIM_LEVEL_COUNT; l++)
		c->cache[l].write_back = false;
	c->modify = SIM_MODIFY_WRITE;
	c->thread_map = SIM_MAP_ERROR;
}

static int preset_host(sim_config *c, plumb_status *status)
{
	topology t;
	if (topology_read(&t, status) != 0)
		return -1;
	c->cores = t.cores > SIM_MAX_CORES ? SIM_MAX_CORES : (t.cores > 0 ? (uint32_t)t.cores : 1);
	level(c, SIM_L2, 0, 64, 1, 14);
	level(c, SIM_L3, 0, 64, 1, 50);
	bool have_l1i = false, have_l1d = false;
	for (int i = 0; i < t.cache_count; i++) {
		const topology_cache *tc = &t.caches[i];
		sim_level l;
		if (tc->level == 1)
			l = tc->type == CACHE_INSTRUCTION ? SIM_L1I : SIM_L1D;
		else if (tc->level == 2)
			l = SIM_L2;
		else if (tc->level == 3)
			l = SIM_L3;
		else
			continue;
		if (tc->size == 0 || tc->line == 0)
			continue;
		c->cache[l].size = tc->size;
		c->cache[l].line = tc->line;
		c->cache[l].assoc = tc->associativity > 0 ? (uint32_t)tc->associativity : 0;
		have_l1i |= l == SIM_L1I;
		have_l1d |= l == SIM_L1D;
	}
	if (!have_l1i || !have_l1d)
		return plumb_fail(status, ENOENT, "host: sysfs/hwloc do not describe the L1 caches");
	c->l3_inclusion = SIM_NON_INCLUSIVE;
	return 0;
}

static const struct {
	const char *name;
	const char *description;
} presets[] = {
	{ "host", "this machine's caches as sysfs/hwloc describe them, one core per core; with --machine "
	          "report.json, a shared cache far smaller in use than sysfs says at its measured usable size" },
	{ "host-nominal", "this machine's caches at the sizes sysfs/hwloc give, whatever was measured" },
	{ "origin2000", "SGI Origin 2000 node: 2 MIPS R10000, 32 KiB L1s, 1 MiB 2-way L2, MESI" },
	{ "power3", "IBM POWER3-II: 128-way L1s with 128 B lines, 4 MiB direct-mapped L2" },
	{ "itanium", "Intel Itanium: 16 KiB L1s, write-through L1D, 96 KiB L2, 4 MiB L3, 16 KiB pages" },
	{ "zen4", "AMD Zen 4 CCX: 8 cores, 1 MiB L2, 32 MiB exclusive L3, MOESI" },
	{ "intel", "Intel Raptor Cove P-cores: 48 KiB L1D, 2 MiB L2, 36 MiB non-inclusive L3, MESI" },
	{ "cachegrind", "cachegrind's I1/D1/LL model (single core, M = read, LRU)" },
	{ "franz08", "Franz (2008): private I1/D1/L2 per core, write-through ESI, no shared cache" },
};

const char *const *sim_preset_names(void)
{
	static const char *const names[] = { "host", "host-nominal", "origin2000", "power3", "itanium", "zen4", "intel",
	                                     "cachegrind", "franz08", NULL };
	return names;
}

const char *sim_preset_description(const char *name)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (strcmp(presets[i].name, name) == 0)
			return presets[i].description;
	return NULL;
}

static void append(char *text, size_t size, size_t *used, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *text, size_t size, size_t *used, const char *format, ...)
{
	if (*used >= size)
		return;
	va_list arguments;
	va_start(arguments, format);
	int n = vsnprintf(text + *used, size - *used, format, arguments);
	va_end(arguments);
	if (n > 0)
		*used += (size_t)n;
}

const char *sim_size_text(uint64_t bytes, char *text, size_t size)
{
	if (bytes && bytes % MiB == 0)
		snprintf(text, size, "%llu MiB", (unsigned long long)(bytes / MiB));
	else if (bytes && bytes % KiB == 0)
		snprintf(text, size, "%llu KiB", (unsigned long long)(bytes / KiB));
	else
		snprintf(text, size, "%llu B", (unsigned long long)bytes);
	return text;
}

static void append_size(char *text, size_t size, size_t *used, uint64_t bytes)
{
	char exact[32];
	append(text, size, used, "%s", sim_size_text(bytes, exact, sizeof exact));
}

const char *sim_config_describe(const sim_config *config, char *text, size_t size)
{
	static const sim_level order[] = { SIM_L1D, SIM_L1I, SIM_L2, SIM_L3 };
	static const char *const names[] = { "L1i", "L1d", "L2", "L3" };
	size_t used = 0;
	if (size)
		text[0] = 0;
	uint32_t line = config->cache[SIM_L1D].line;
	bool same_line = true;
	for (size_t i = 0; i < 4; i++)
		if (config->cache[order[i]].size && config->cache[order[i]].line != line)
			same_line = false;
	for (size_t i = 0; i < 4; i++) {
		const sim_cache_config *c = &config->cache[order[i]];
		if (c->size == 0)
			continue;
		append(text, size, &used, "%s%s ", used ? ", " : "", names[order[i]]);
		append_size(text, size, &used, c->size);
		if (c->assoc)
			append(text, size, &used, " %u-way", c->assoc);
		else
			append(text, size, &used, " fully associative");
		if (!same_line)
			append(text, size, &used, " %u B lines", c->line);
		if (order[i] == SIM_L3)
			append(text, size, &used, " shared");
	}
	if (same_line)
		append(text, size, &used, ", %u B lines", line);
	append(text, size, &used, ", %u core%s", config->cores, config->cores == 1 ? "" : "s");
	return text;
}

int sim_preset(sim_config *config, const char *name, plumb_status *status)
{
	sim_config c;
	sim_config_default(&c);
	if (strcmp(name, "host") == 0 || strcmp(name, "host-nominal") == 0) {
		if (preset_host(&c, status) != 0)
			return -1;
	} else if (strcmp(name, "origin2000") == 0 || strcmp(name, "r10000") == 0) {
		preset_origin2000(&c);
	} else if (strcmp(name, "power3") == 0) {
		preset_power3(&c);
	} else if (strcmp(name, "itanium") == 0) {
		preset_itanium(&c);
	} else if (strcmp(name, "zen4") == 0) {
		preset_zen4(&c);
	} else if (strcmp(name, "intel") == 0) {
		preset_intel(&c);
	} else if (strcmp(name, "cachegrind") == 0) {
		preset_cachegrind(&c);
	} else if (strcmp(name, "franz08") == 0) {
		preset_franz08(&c);
	} else if (strcmp(name, "default") != 0) {
		return plumb_fail(status, EINVAL, "unknown preset '%s' (host, host-nominal, origin2000, power3, itanium, zen4, "
		                  "intel, cachegrind, franz08, default)", name);
	}
	snprintf(c.name, sizeof c.name, "%s", name);
	*config = c;
	return 0;
}

int sim_preset_from_topo(sim_config *config, const output_report *topo, plumb_status *status)
{
	sim_config c;
	sim_config_default(&c);
	const output_table *caches = topo ? output_table_find(topo, "caches") : NULL;
	int lc = caches ? output_column_index(caches, "level") : -1, tc = caches ? output_column_index(caches, "type") : -1;
	int sc = caches ? output_column_index(caches, "size") : -1, nc = caches ? output_column_index(caches, "line") : -1;
	int wc = caches ? output_column_index(caches, "ways") : -1;
	if (lc < 0 || tc < 0 || sc < 0 || nc < 0 || wc < 0)
		return plumb_fail(status, ENOENT, "the topo section has no table of caches (level, type, size, line, ways)");
	level(&c, SIM_L2, 0, 64, 1, 14);
	level(&c, SIM_L3, 0, 64, 1, 50);
	bool have_l1i = false, have_l1d = false;
	for (size_t r = 0; r < output_row_count(caches); r++) {
		const char *name = output_cell_string(caches, r, (size_t)lc), *type = output_cell_string(caches, r, (size_t)tc);
		double size = output_cell_number(caches, r, (size_t)sc), line = output_cell_number(caches, r, (size_t)nc);
		double ways = output_cell_number(caches, r, (size_t)wc);
		if (!name || !type)
			continue;
		sim_level l;
		if (!strcmp(name, "L1"))
			l = !strcmp(type, "instruction") ? SIM_L1I : SIM_L1D;
		else if (!strcmp(name, "L2"))
			l = SIM_L2;
		else if (!strcmp(name, "L3"))
			l = SIM_L3;
		else
			continue;
		if (!(size > 0) || !(line > 0) || size > 1e12 || line > 4096)
			return plumb_fail(status, EINVAL, "the topo section's %s %s cache has no size or line size", name, type);
		c.cache[l].size = (uint64_t)size;
		c.cache[l].line = (uint32_t)line;
		c.cache[l].assoc = ways > 0 && ways < 1e6 ? (uint32_t)ways : 0;
		have_l1i |= l == SIM_L1I;
		have_l1d |= l == SIM_L1D;
	}
	if (!have_l1i || !have_l1d)
		return plumb_fail(status, ENOENT, "the topo section does not describe the L1 caches");
	const output_table *machine = output_table_find(topo, "machine");
	int pc = machine ? output_column_index(machine, "property") : -1, vc = machine ? output_column_index(machine, "value") : -1;
	c.cores = 1;
	for (size_t r = 0; pc >= 0 && vc >= 0 && r < output_row_count(machine); r++) {
		const char *property = output_cell_string(machine, r, (size_t)pc), *value = output_cell_string(machine, r, (size_t)vc);
		long cores = property && value && !strcmp(property, "cores") ? strtol(value, NULL, 10) : 0;
		if (cores > 0)
			c.cores = cores > SIM_MAX_CORES ? SIM_MAX_CORES : (uint32_t)cores;
	}
	c.l3_inclusion = SIM_NON_INCLUSIVE;
	snprintf(c.name, sizeof c.name, "report");
	*config = c;
	return 0;
}

/* A measured level's hit latency in cycles (its ns at the measured clock
 * when the model has no cycle figure); 0 when it has neither. */
static uint32_t measured_cycles(const machine_model *model, const machine_level *l)
{
	double cycles = l->latency_cycles;
	if (!(cycles > 0) && l->latency_ns > 0 && model->clock_ghz > 0)
		cycles = l->latency_ns * model->clock_ghz;
	return cycles > 0 && cycles < 1e6 ? (uint32_t)(cycles + 0.5) : 0;
}

/* The simulator's cycle costs from the measured latencies, so that its
 * cycle estimate prices a hit where plumb lat measured it: the L1s, L2, L3
 * and memory the model names.  note gets which ones. */
static void apply_latencies(sim_config *config, const machine_model *model, char *note, size_t length, size_t *used)
{
	char said[160];
	size_t said_used = 0;
	said[0] = 0;
	for (size_t k = 0; k < model->level_count; k++) {
		const machine_level *l = &model->levels[k];
		uint32_t cycles = l->hidden ? 0 : measured_cycles(model, l);
		if (!cycles)
			continue;
		if (l->cache_level == 1) {
			config->cache[SIM_L1D].latency = config->cache[SIM_L1I].latency = cycles;
		} else if (l->cache_level == 2 && config->cache[SIM_L2].size) {
			config->cache[SIM_L2].latency = cycles;
		} else if (l->cache_level == 3 && config->cache[SIM_L3].size) {
			config->cache[SIM_L3].latency = cycles;
		} else if (l->cache_level == 0) {
			config->memory_latency = cycles;
		} else {
			continue;
		}
		append(said, sizeof said, &said_used, "%s%s %u", said_used ? ", " : "", l->name, cycles);
	}
	if (said_used)
		append(note, length, used, "%slatencies measured (%s): %s cycles", *used ? "; " : "", model->source, said);
}

int sim_preset_apply_machine(sim_config *config, const machine_model *model, char *note, size_t length)
{
	if (length)
		note[0] = 0;
	if (!model)
		return 0;
	/* the shared cache the simulator has: its L3, else its L2 */
	sim_level level = config->cache[SIM_L3].size ? SIM_L3 : SIM_L2;
	int cache_level = level == SIM_L3 ? 3 : 2;
	const machine_level *shared = NULL;
	for (size_t k = 0; k < model->level_count; k++)
		if (model->levels[k].cache_level == cache_level)
			shared = &model->levels[k];
	int changed = 0;
	size_t used = 0;
	if (shared && config->cache[level].size && shared->hidden) {
		char a[32];
		size_t written = 0;
		append_size(a, sizeof a, &written, config->cache[level].size);
		append(note, length, &used, "L%d at the nominal %s sysfs lists: the measurement (%s) found no plateau of its own "
		       "for it, so no usable size", cache_level, a, model->source);
	} else if (shared && config->cache[level].size && shared->shared) {
		changed = sim_preset_apply_usable(config, shared->usable_bytes, model->source, note, length);
		used = length ? strlen(note) : 0;
	}
	apply_latencies(config, model, note, length, &used);
	return changed;
}

int sim_preset_apply_usable(sim_config *config, double usable, const char *source, char *note, size_t length)
{
	if (length)
		note[0] = 0;
	sim_level level = config->cache[SIM_L3].size ? SIM_L3 : SIM_L2;
	if (!isfinite(machine_usable_bytes((double)config->cache[level].size, usable)))
		return 0;   /* not far below the nominal size: the one rule, machine_usable_bytes */
	uint64_t way_bytes = (uint64_t)config->cache[level].line * (config->cache[level].assoc ? config->cache[level].assoc : 1);
	uint64_t size = (uint64_t)(usable / (double)way_bytes) * way_bytes;
	if (size < way_bytes)
		size = way_bytes;
	char a[32] = "", b[32] = "";
	size_t ignored = 0, used = 0;
	append_size(a, sizeof a, &ignored, size);
	ignored = 0;
	append_size(b, sizeof b, &ignored, config->cache[level].size);
	config->cache[level].size = size;
	append(note, length, &used, "L%d at its usable %s, measured (%s), of the nominal %s sysfs lists (--preset host-nominal "
	       "simulates that)", level == SIM_L3 ? 3 : 2, a, source, b);
	return 1;
}
