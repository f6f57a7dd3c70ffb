/* plumb explain --on B.json: the program on another machine.  Its caches
 * come from the topo section of the report.json plumb report wrote there
 * (sizes, associativity, line size, cores), at the usable capacity its
 * machine model measured for a shared cache (as plumb sim --machine does
 * here); its latencies, bandwidths, MLP and clock from the same file's
 * machine model.  What cannot be carried over is said: a program of another
 * instruction set makes other references (no column); another CPU model
 * keeps this CPU's in-core cycles (llvm-mca prices this machine's blocks
 * for this CPU), which the note says. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/cpu.h"
#include "explain/explain.h"
#include "machine/machine_model.h"
#include "sim/sim.h"
#include "machine/topology.h"

static const char *property(const output_report *topo, const char *name)
{
	const output_table *t = output_table_find(topo, "machine");
	int pc = t ? output_column_index(t, "property") : -1, vc = t ? output_column_index(t, "value") : -1;
	for (size_t r = 0; pc >= 0 && vc >= 0 && r < output_row_count(t); r++) {
		const char *p = output_cell_string(t, r, (size_t)pc);
		if (p && !strcmp(p, name))
			return output_cell_string(t, r, (size_t)vc);
	}
	return NULL;
}

/* The in-core cycles on the other machine: this CPU's when the two have
 * the same cores (cpu.h's core_model), else its own core's (its CPU
 * recorded for explain_code). */
static void note_core(explain_result *result, const output_report *topo, const char *path)
{
	cpu_features here;
	cpu_features_detect(&here);
	const char *vendor = property(topo, "vendor"), *fms = property(topo, "family/model/stepping");
	unsigned family = 0, model = 0, stepping = 0;
	if (!vendor || !fms || sscanf(fms, "%u/%u/%u", &family, &model, &stepping) < 2) {
		explain_result_note(result, "on %s: its report does not name its CPU model, so its in-core time is this "
		                    "CPU's cycles at its clock", path);
		return;
	}
	/* the model its cores are priced as (topo's core_model; older reports
	 * have none: their CPUID model) */
	const char *core = property(topo, "core_model");
	unsigned core_model = 0;
	if (core && sscanf(core, "%u", &core_model) == 1 && core_model)
		model = core_model;
	if (!strcmp(vendor, here.vendor) && family == here.family && model == here.core_model)
		return;
	/* its blocks are priced again for its core (explain_code.c), which
	 * says how, or why not */
	snprintf(result->other_cpu, sizeof result->other_cpu, "%s", vendor);
	result->other_cpu_family = family;
	result->other_cpu_model = model;
}

int explain_other_load(const char *path, explain_result *result, plumb_status *status)
{
	plumb_status why;
	output_report *topo = machine_report_section(path, "topo", &why);
	if (!topo)
		return plumb_fail(status, why.code ? why.code : EINVAL, "--on: %s (its caches come from plumb report's "
		                  "topo section)", why.message);
	const char *isa = property(topo, "isa");
	if (isa && strcmp(isa, TOPOLOGY_ISA) != 0) {
		/* another instruction set runs other instructions: nothing here carries over */
		snprintf(result->other_error, sizeof result->other_error, "%s is %s, this program's instructions are %s: "
		         "its references and in-core time on that machine are not these", path, isa, TOPOLOGY_ISA);
		output_report_free(topo);
		return 0;
	}
	sim_config *config = malloc(sizeof *config);
	if (!config) {
		output_report_free(topo);
		return plumb_fail(status, ENOMEM, "out of memory");
	}
	if (sim_preset_from_topo(config, topo, &why) != 0 || sim_config_validate(config, &why) != 0) {
		free(config);
		output_report_free(topo);
		return plumb_fail(status, why.code ? why.code : EINVAL, "--on: %s: %s", path, why.message);
	}
	if (!isa)
		explain_result_note(result, "on %s: its report does not name its instruction set (written before plumb topo "
		                    "recorded it): these are %s references", path, TOPOLOGY_ISA);
	note_core(result, topo, path);
	output_report_free(topo);
	machine_model model;
	char usable[PLUMB_MESSAGE_MAX];
	int loaded = machine_model_load(path, &model, &why);
	if (loaded != 0 && why.code == EINVAL) {
		/* a model whose figures cannot be (a negative size): said, not replaced by sysfs's sizes */
		free(config);
		return plumb_fail(status, EINVAL, "--on: %s", why.message);
	}
	if (loaded == 0 && sim_preset_apply_machine(config, &model, usable, sizeof usable) > 0)
		explain_result_note(result, "on %s: %s", path, usable);
	if (explain_machine_load(path, &result->other_machine, &why) != 0)
		explain_result_note(result, "on %s: no figures to predict with: %s", path, why.message);
	char described[200];
	snprintf(result->other_caches, sizeof result->other_caches, "%s", sim_config_describe(config, described, sizeof described));
	result->other_config = config;
	result->have_other = true;
	return 0;
}
