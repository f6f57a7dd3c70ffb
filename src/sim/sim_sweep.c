/* plumb sim --sweep: every trace through every configuration.  A job's row
 * travels as JSON text (to rank 0 under MPI, or straight to the assembler
 * when serial), and the table is built only from those texts in job
 * order, so the serial and the spread sweeps cannot differ by a byte. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sim/sim.h"
#include "sim/sim_sweep.h"
#include "trace/trace.h"

static int split(const char *list, char ***out, size_t *count, const char *what, plumb_status *status)
{
	*out = NULL;
	*count = 0;
	if (!list || !*list)
		return plumb_fail(status, EINVAL, "%s: the list is empty", what);
	char *copy = strdup(list);
	if (!copy)
		return plumb_fail(status, ENOMEM, "out of memory");
	size_t n = 1;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	char **items = calloc(n, sizeof *items);
	if (!items) {
		free(copy);
		return plumb_fail(status, ENOMEM, "out of memory");
	}
	int rc = 0;
	char *save = NULL;
	for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		items[*count] = strdup(s);
		if (!items[(*count)++]) {
			rc = plumb_fail(status, ENOMEM, "out of memory");
			break;
		}
	}
	free(copy);
	*out = items;
	if (rc == 0 && *count == 0)
		rc = plumb_fail(status, EINVAL, "%s: the list names nothing", what);
	return rc;
}

/* A configuration as the sweep names it: a file if one exists by that name, else a preset. */
static int load_config(sim_config *config, const char *spec, plumb_status *status)
{
	struct stat st;
	if (stat(spec, &st) == 0 && S_ISREG(st.st_mode)) {
		sim_config_default(config);
		if (sim_config_load(config, spec, status) != 0)
			return -1;
	} else if (sim_preset(config, spec, status) != 0) {
		char message[PLUMB_MESSAGE_MAX];
		snprintf(message, sizeof message, "%s", status->message);
		return plumb_fail(status, EINVAL, "--sweep: '%s' is neither a configuration file nor a preset (%s)", spec, message);
	}
	return sim_config_validate(config, status);
}

int sim_sweep_parse(sim_sweep *sweep, const char *configs, const char *traces, plumb_status *status)
{
	memset(sweep, 0, sizeof *sweep);
	if (split(configs, &sweep->configs, &sweep->config_count, "--sweep", status) != 0 ||
	    split(traces, &sweep->traces, &sweep->trace_count, "--traces", status) != 0) {
		sim_sweep_free(sweep);
		return -1;
	}
	for (size_t i = 0; i < sweep->config_count; i++) {
		sim_config config;
		if (load_config(&config, sweep->configs[i], status) != 0) {
			sim_sweep_free(sweep);
			return -1;
		}
	}
	for (size_t i = 0; i < sweep->trace_count; i++)
		if (access(sweep->traces[i], R_OK) != 0) {
			int err = errno;
			plumb_fail(status, err, "--traces: cannot read '%s': %s", sweep->traces[i], strerror(err));
			sim_sweep_free(sweep);
			return -1;
		}
	return 0;
}

void sim_sweep_free(sim_sweep *sweep)
{
	for (size_t i = 0; sweep->configs && i < sweep->config_count; i++)
		free(sweep->configs[i]);
	for (size_t i = 0; sweep->traces && i < sweep->trace_count; i++)
		free(sweep->traces[i]);
	free(sweep->configs);
	free(sweep->traces);
	memset(sweep, 0, sizeof *sweep);
}

size_t sim_sweep_job_count(const sim_sweep *sweep)
{
	return sweep->trace_count * sweep->config_count;
}

/* The columns of a row, in order: the job, then what the simulation counted. */
static const char *const figure_columns[] = {
	"cores", "references", "l1i_misses", "l1d_accesses", "l1d_misses", "l2_misses", "l3_misses",
	"memory_reads", "memory_writes", "invalidations", "cache_to_cache_transfers", "cycles_max_core",
};
#define FIGURES (sizeof figure_columns / sizeof *figure_columns)

static int simulate(const char *trace_path, const char *config_spec, uint64_t figures[FIGURES], plumb_status *status)
{
	sim_config config;
	if (load_config(&config, config_spec, status) != 0)
		return -1;
	trace_reader *reader;
	if (trace_reader_open(&reader, trace_path, TRACE_FORMAT_AUTO, status) != 0)
		return -1;
	sim *s;
	if (sim_new(&s, &config, status) != 0) {
		trace_reader_close(reader, NULL);
		return -1;
	}
	sim_feed feed = { .sims = &s, .count = 1 };
	int rc = sim_feed_reader(&feed, reader, status);
	plumb_status close_status;
	if (trace_reader_close(reader, &close_status) != 0 && rc == 0) {
		*status = close_status;
		rc = -1;
	}
	if (rc == 0) {
		const sim_stats *st = sim_statistics(s);
		memset(figures, 0, FIGURES * sizeof *figures);
		figures[0] = st->cores;
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			figures[1] += st->references[k];
		uint64_t cycles_max = 0;
		for (uint32_t c = 0; c < st->cores; c++) {
			const sim_core_stats *core = &st->core[c];
			for (int k = 0; k < SIM_KIND_COUNT; k++) {
				figures[2] += core->cache[SIM_L1I].misses[k];
				figures[3] += core->cache[SIM_L1D].accesses[k];
				figures[4] += core->cache[SIM_L1D].misses[k];
				figures[5] += core->cache[SIM_L2].misses[k];
			}
			figures[9] += core->coherence.invalidations_sent;
			figures[10] += core->coherence.transfers_supplied;
			uint64_t cycles = sim_core_cycles(s, c, NULL);
			if (cycles > cycles_max)
				cycles_max = cycles;
		}
		for (int k = 0; k < SIM_KIND_COUNT; k++)
			figures[6] += st->l3.misses[k];
		figures[7] = st->memory_reads;
		figures[8] = st->memory_writes;
		figures[11] = cycles_max;
	}
	sim_free(s);
	return rc;
}

static void columns(output_table *t)
{
	output_column(t, "trace", NULL, 0);
	output_column(t, "config", NULL, 0);
	output_column(t, "status", NULL, 0);
	for (size_t i = 0; i < FIGURES; i++)
		output_column(t, figure_columns[i], NULL, 0);
}

static void failed_row(output_table *t, const char *trace, const char *config, const char *reason)
{
	output_row(t);
	output_cell_text(t, trace);
	output_cell_text(t, config);
	output_cell_status(t, "failed", reason);
	for (size_t i = 0; i < FIGURES; i++)
		output_cell_status(t, "failed", reason);
}

char *sim_sweep_run_job(const sim_sweep *sweep, size_t job)
{
	const char *trace = sweep->traces[job / sweep->config_count], *config = sweep->configs[job % sweep->config_count];
	output_report *r = output_report_new("sim-sweep-row");
	if (!r)
		return NULL;
	output_table *t = output_table_add(r, "row", "One job of the sweep");
	columns(t);
	uint64_t figures[FIGURES];
	plumb_status status = { 0 };
	if (simulate(trace, config, figures, &status) != 0) {
		failed_row(t, trace, config, status.message[0] ? status.message : "the simulation failed");
	} else {
		output_row(t);
		output_cell_text(t, trace);
		output_cell_text(t, config);
		output_cell_text(t, "ok");
		for (size_t i = 0; i < FIGURES; i++)
			output_cell_integer(t, (int64_t)figures[i]);
	}
	char *text = NULL;
	size_t length = 0;
	FILE *m = open_memstream(&text, &length);
	if (m) {
		output_write(r, OUTPUT_JSON, m, &status);
		fclose(m);
	}
	output_report_free(r);
	return text;
}

output_report *sim_sweep_assemble(const sim_sweep *sweep, char *const *rows, size_t count)
{
	output_report *r = output_report_new("sim-sweep");
	if (!r)
		return NULL;
	output_meta_integer(r, "traces", (int64_t)sweep->trace_count);
	output_meta_integer(r, "configurations", (int64_t)sweep->config_count);
	output_table *t = output_table_add(r, "sweep", "Every trace through every configuration");
	columns(t);
	for (size_t k = 0; k < count; k++) {
		const char *trace = sweep->traces[k / sweep->config_count], *config = sweep->configs[k % sweep->config_count];
		output_report *row = NULL;
		plumb_status status = { 0 };
		const output_table *from = NULL;
		if (rows[k] && output_report_parse_json(rows[k], &row, &status) == 0)
			from = output_table_find(row, "row");
		if (!from || output_row_count(from) != 1 || output_column_count(from) != 3 + FIGURES) {
			failed_row(t, trace, config, rows[k] ? "the job's row is unreadable" : "the job's rank sent no row");
			output_report_free(row);
			continue;
		}
		output_row(t);
		for (size_t c = 0; c < 3 + FIGURES; c++) {
			switch (output_cell_kind(from, 0, c)) {
			case CELL_TEXT: output_cell_text(t, output_cell_string(from, 0, c)); break;
			case CELL_INTEGER: output_cell_integer(t, (int64_t)output_cell_number(from, 0, c)); break;
			case CELL_STATUS: output_cell_status(t, output_cell_string(from, 0, c), output_cell_reason(from, 0, c)); break;
			default: output_cell_empty(t); break;
			}
		}
		output_report_free(row);
	}
	return r;
}

int sim_sweep_write(const output_report *report, const char *dir, plumb_status *status)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return plumb_fail_errno(status, errno, "cannot create '%s'", dir);
	char path[4096];
	snprintf(path, sizeof path, "%s/sweep.json", dir);
	if (output_write_file(report, OUTPUT_JSON, path, status) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	return output_write_file(report, OUTPUT_CSV, path, status);
}

output_report *sim_sweep_run_all(const sim_sweep *sweep)
{
	size_t jobs = sim_sweep_job_count(sweep);
	char **rows = calloc(jobs ? jobs : 1, sizeof *rows);
	if (!rows)
		return NULL;
	for (size_t k = 0; k < jobs; k++)
		rows[k] = sim_sweep_run_job(sweep, k);
	output_report *r = sim_sweep_assemble(sweep, rows, jobs);
	for (size_t k = 0; k < jobs; k++)
		free(rows[k]);
	free(rows);
	return r;
}
