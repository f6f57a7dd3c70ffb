/* plumb events: every event each backend knows, opened here to see whether
 * it counts (the only test that does not trust a PMU description: PAPI
 * says "6 hardware counters" on a VM that has none), and the catalogue of
 * the seeds' presets with what validation runs recorded on this CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters/counters.h"
#include "core/output.h"

typedef struct events_listing {
	output_table *table;
	const char *backend;
	bool probe;
	bool natives;
	size_t listed, working;
} events_listing;

bool counter_event_probe(const char *backend, const char *name, char *state, size_t state_length, char *reason,
                         size_t reason_length)
{
	counter_set *set;
	plumb_status status;
	const char *events[] = { name };
	counter_value value;
	if (counter_set_open(&set, backend, events, 1, NULL, &status) != 0) {
		snprintf(state, state_length, "unsupported");
		snprintf(reason, reason_length, "%s", status.message);
		return false;
	}
	if (counter_start(set, &status) != 0 || counter_stop(set, &status) != 0 ||
	    counter_read(set, &value, &status) != 0) {
		snprintf(state, state_length, "unsupported");
		snprintf(reason, reason_length, "%s", status.message);
	} else if (value.state == COUNTER_OK || value.state == COUNTER_MULTIPLEXED) {
		snprintf(state, state_length, "works");
		reason[0] = '\0';
	} else {
		snprintf(state, state_length, "%s", counter_state_name(value.state));
		snprintf(reason, reason_length, "%s", value.reason);
	}
	counter_close(set);
	return !strcmp(state, "works");
}

static void emit_event(void *argument, const char *name, const char *kind, const char *description)
{
	events_listing *listing = argument;
	if (!listing->natives && !strcmp(kind, "native") && !strcmp(listing->backend, "perf"))
		return;
	listing->listed++;
	output_row(listing->table);
	output_cell_text(listing->table, listing->backend);
	output_cell_text(listing->table, name);
	output_cell_text(listing->table, kind);
	if (listing->probe) {
		char state[32], reason[COUNTER_REASON_MAX + 64];
		if (counter_event_probe(listing->backend, name, state, sizeof state, reason, sizeof reason)) {
			listing->working++;
			output_cell_text(listing->table, "works");
		} else {
			output_cell_status(listing->table, state, reason);
		}
	} else {
		output_cell_empty(listing->table);
	}
	output_cell_text(listing->table, description ? description : "");
}

static void cell_optional(output_table *table, const char *text)
{
	if (text)
		output_cell_text(table, text);
	else
		output_cell_empty(table);
}

/* The state of one mapping on this CPU: "verified on this CPU (date, class)",
 * "checked: bias (date), not trusted", or "unverified". */
static void cell_verification(output_table *table, const counter_verification *records, size_t n,
                              const char *event, const char *cpu, const char *name)
{
	if (!name) {
		output_cell_empty(table);
		return;
	}
	char text[160];
	counter_verification_describe(counter_verification_find(records, n, event, cpu, name), text, sizeof text);
	output_cell_text(table, text);
}

static void catalogue_rows(output_table *table, const counter_catalogue_entry *entries, size_t n,
                           const char *kind, const counter_verification *records, size_t record_count,
                           const char *cpu)
{
	for (size_t i = 0; i < n; i++) {
		const counter_catalogue_entry *e = &entries[i];
		output_row(table);
		output_cell_text(table, e->preset);
		output_cell_text(table, kind);
		output_cell_text(table, e->description);
		cell_optional(table, e->perf_generic);
		cell_verification(table, records, record_count, e->preset, cpu, e->perf_generic);
		output_cell_text(table, e->relation);
		cell_optional(table, e->papi_native);
		/* Through PAPI a preset is opened by its own name; its native
		 * equivalent is a separate mapping.  Show the preset's state when
		 * it has one, else the native name's. */
		const char *papi = NULL;
		if (!strncmp(e->preset, "PAPI_", 5) &&
		    counter_verification_find(records, record_count, e->preset, cpu, e->preset))
			papi = e->preset;
		cell_verification(table, records, record_count, e->preset, cpu, papi ? papi : e->papi_native);
		/* This CPU's candidate only, or why there is none: another
		 * vendor's names are in the natives table, never offered here. */
		char native[256], reason[COUNTER_REASON_MAX];
		const char *name = counter_catalogue_native(e, cpu, native, sizeof native, reason, sizeof reason);
		if (name) {
			output_cell_text(table, name);
			cell_verification(table, records, record_count, e->preset, cpu, name);
		} else if (!strncmp(e->preset, "PAPI_", 5)) {
			output_cell_status(table, "unsupported", reason);
			output_cell_empty(table);
		} else {
			output_cell_empty(table);   /* a software event: the kernel counts it on every CPU */
			output_cell_empty(table);
		}
	}
}

/* Every table's candidates, one row each (the catalogue's other CPUs). */
static void add_natives(output_report *report)
{
	output_table *table = output_table_add(report, "natives",
	                                       "Candidate native events of every CPU the catalogue knows (unverified "
	                                       "unless a validation run on that CPU checked them)");
	output_column(table, "preset", NULL, 0);
	output_column(table, "pmu", NULL, 0);
	output_column(table, "native", NULL, 0);
	size_t n;
	const counter_catalogue_entry *entries = counter_catalogue(&n);
	for (size_t i = 0; i < n; i++)
		for (int v = 0; v < COUNTER_VENDOR_COUNT; v++) {
			if (!entries[i].native[v])
				continue;
			char name[256];
			snprintf(name, sizeof name, "%s::%s", counter_vendor_name((counter_vendor)v), entries[i].native[v]);
			output_row(table);
			output_cell_text(table, entries[i].preset);
			output_cell_text(table, counter_vendor_name((counter_vendor)v));
			output_cell_text(table, name);
		}
}

/* Every mapping a validation run recorded for this CPU, last verdict per
 * (event, name): what the catalogue's columns summarise, with the evidence. */
static void add_records(output_report *report, const counter_verification *records, size_t n, const char *cpu)
{
	output_table *table = output_table_add(report, "verification",
	                                       "Verification records for this CPU (last verdict per event and name)");
	output_column(table, "event", NULL, 0);
	output_column(table, "name", NULL, 0);
	output_column(table, "backend", NULL, 0);
	output_column(table, "encoding", NULL, 0);
	output_column(table, "state", NULL, 0);
	output_column(table, "class", NULL, 0);
	output_column(table, "date", NULL, 0);
	output_column(table, "evidence", NULL, 0);
	for (size_t i = 0; i < n; i++) {
		const counter_verification *r = &records[i];
		if (strcmp(r->cpu_identity, cpu) ||
		    counter_verification_find(records, n, r->event, r->cpu_identity, r->native) != r)
			continue;   /* another CPU, or superseded by a later record */
		char state[160];
		counter_verification_describe(r, state, sizeof state);
		output_row(table);
		output_cell_text(table, r->event);
		output_cell_text(table, r->native);
		output_cell_text(table, r->backend);
		output_cell_text(table, r->encoding);
		output_cell_text(table, state);
		output_cell_text(table, r->cls);
		output_cell_text(table, r->date);
		output_cell_text(table, r->evidence);
	}
}

static void add_catalogue(output_report *report, const char *verification_path, char *warning, size_t warning_length)
{
	counter_environment environment;
	counter_environment_read(&environment);
	counter_verification *records = NULL;
	size_t record_count = 0;
	plumb_status status;
	char default_path[4096];
	if (!verification_path &&
	    counter_verification_default_path(default_path, sizeof default_path, &status) == 0)
		verification_path = default_path;
	if (verification_path) {
		output_meta_text(report, "verification_file", verification_path);
		/* A damaged file must not hide the catalogue: one warning, and every
		 * mapping shows as unverified. */
		if (counter_verification_load(verification_path, &records, &record_count, &status) != 0) {
			snprintf(warning, warning_length, "verification records ignored: %s", status.message);
			output_note(report, "verification records not read (all shown unverified): %s", status.message);
		}
	}
	output_table *table = output_table_add(report, "catalogue",
	                                       "Catalogue: the PAPI presets of Salayandia (2002) and Aguilera et al. (2005) and their equivalents");
	output_column(table, "preset", NULL, 0);
	output_column(table, "kind", NULL, 0);
	output_column(table, "description", NULL, 0);
	output_column(table, "perf_event", NULL, 0);
	output_column(table, "perf_verification", NULL, 0);
	output_column(table, "relation", NULL, 0);
	output_column(table, "papi_native", NULL, 0);
	output_column(table, "papi_verification", NULL, 0);
	output_column(table, "native", NULL, 0);
	output_column(table, "native_verification", NULL, 0);
	size_t n;
	const counter_catalogue_entry *entries = counter_catalogue(&n);
	catalogue_rows(table, entries, n, "preset", records, record_count, environment.cpu_identity);
	entries = counter_catalogue_software(&n);
	catalogue_rows(table, entries, n, "software", records, record_count, environment.cpu_identity);
	add_records(report, records, record_count, environment.cpu_identity);
	add_natives(report);
	counter_cpu_table cpu_table;
	counter_cpu_native_table(environment.cpu_identity, &cpu_table);
	if (cpu_table.known) {
		output_meta_text(report, "native_pmu", cpu_table.pmu);
		output_note(report, "native candidates for this CPU, %s, from libpfm4's %s table%s%s", cpu_table.description,
		            cpu_table.pmu, cpu_table.caveat ? "; " : "", cpu_table.caveat ? cpu_table.caveat : "");
	} else {
		output_note(report, "no native-event catalogue for this CPU, %s: the native column is empty "
		            "(the natives table lists the CPUs plumb has candidates for)", cpu_table.description);
	}
	output_note(report, "mappings are 'unverified' until a validation run on this CPU (%s) compares their "
	            "counts with a prediction (plumb validate records it)", environment.cpu_identity);
	free(records);
}

output_report *counter_events_report(const counter_events_request *request, char *warning, size_t warning_length)
{
	if (warning_length)
		warning[0] = '\0';
	output_report *report = output_report_new("events");
	counter_environment environment;
	counter_environment_read(&environment);
	output_meta_text(report, "cpu", environment.cpu_identity);
	output_meta_integer(report, "perf_event_paranoid", environment.perf_event_paranoid);
	output_meta_text(report, "cpu_pmu", environment.cpu_pmu_present ? "present" : "absent");
	if (!request->catalogue_only) {
		output_table *table = output_table_add(report, "events", "Events by backend (each opened here)");
		output_column(table, "backend", NULL, 0);
		output_column(table, "event", NULL, 0);
		output_column(table, "kind", NULL, 0);
		output_column(table, "here", NULL, 0);
		output_column(table, "description", NULL, 0);
		const char *backends[] = { "perf", "papi" };
		for (size_t b = 0; b < 2; b++) {
			if (request->backend && strcmp(request->backend, backends[b]))
				continue;
			events_listing listing = { table, backends[b], request->probe, request->natives, 0, 0 };
			plumb_status status;
			const counter_backend *backend = counter_backend_find(backends[b], &status);
			if (!backend || backend->list(NULL, emit_event, &listing, &status) != 0) {
				output_note(report, "%s: unsupported: %s", backends[b], status.message);
				continue;
			}
			if (request->probe)
				output_note(report, "%s: %zu events listed, %zu work here", backends[b], listing.listed,
				            listing.working);
		}
	}
	add_catalogue(report, request->verification_path, warning, warning_length);
	return report;
}
