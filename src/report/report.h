/* The machine characterisation report: sections (each a command's output
 * report) rendered into one self-contained HTML file with charts. */
#ifndef PLUMB_REPORT_H
#define PLUMB_REPORT_H

#include <stdbool.h>
#include "core/output.h"
#include "core/status.h"

/* A chart of one table: y against x, one line per distinct value of the
 * series column (or one line if series is NULL). */
typedef struct report_chart {
	const char *table;     /* table name (the section's record lists its charts) */
	const char *x, *y, *series;
	bool log_x, log_y;
	const char *title;
	/* Axis labels in words with units; NULL = the column name and unit.
	 * series may name several columns separated by commas ("kernel,threads"):
	 * one line per distinct combination. */
	const char *x_label, *y_label;
	bool y_from_zero;      /* linear y axis starting at 0 */
	bool size_x;           /* x is a byte count: KiB/MiB/GiB ticks */
	/* Rows drawn: "column=value|value" (NULL = all), several such
	 * conditions joined by '&' (all must hold).  With two series
	 * columns, the first picks the colour and the second the dash. */
	const char *where;
} report_chart;

/* A vertical mark on a chart's x axis (a cache size, a detected boundary). */
typedef struct report_chart_mark {
	double x;
	const char *label;
	bool dashed;           /* dashed: claimed (sysfs); solid: measured */
} report_chart_mark;


/* Renders a chart as an SVG document through gnuplot.  Fails with a clear
 * message when gnuplot is missing or the table lacks the columns. */
int report_chart_svg(const output_table *table, const report_chart *chart, char **svg, plumb_status *status);
int report_chart_svg_marked(const output_table *table, const report_chart *chart, const report_chart_mark *marks,
                            size_t mark_count, char **svg, plumb_status *status);

/* A section's heading for a command ("validate" -> "Can I trust my counters?"). */
const char *report_section_title(const char *command);

/* Writes the HTML report atomically.  failures[i], if non-NULL, is a
 * one-line reason why section i could not be produced; its report may be NULL. */
int report_write_html(const char *path, const char *title, output_report *const *sections,
                      const char *const *commands, const char *const *failures, size_t count,
                      plumb_status *status);

/* The page with the summary first: summary may be NULL; json_name, if
 * non-NULL, is the report.json beside the page (linked by its base name). */
int report_write_page(const char *path, const char *title, const output_report *summary, const char *json_name,
                      output_report *const *sections, const char *const *commands, const char *const *failures,
                      size_t count, plumb_status *status);

/* Pieces of the page for other pages built the same way (plumb explain):
 * the document head with the report's style, one table (collapsed under a
 * <details> when collapsed is true), text escaped for HTML with the user's
 * home directory shown as "~", and the end of the document. */
void report_html_begin(FILE *f, const char *title);
void report_html_table(FILE *f, const output_table *table, bool collapsed);
void report_html_text(FILE *f, const char *text);
void report_html_end(FILE *f);

/* The summary: the answer on one screen, built from the sections' reports
 * (topo, lat, bw, geometry, c2c, loaded, model, validate; any may be
 * missing).  An output_report of command "summary" with the tables
 * "hierarchy" (a row per level), "figures" (one line per other quantity),
 * "counters" (event x source verdict grid) and "unsupported_reasons" (each
 * reason once), and the meta "counters" (one sentence).  NULL if out of memory. */
output_report *report_summary_build(output_report *const *sections, const char *const *commands, size_t count);
/* The summary for a terminal of COLUMNS characters: the hierarchy through
 * the fitted table writer (columns left out from the right and named:
 * bandwidth's spread, latency in cycles, the ranges, write bandwidth, in
 * that order) and every other line wrapped; COLUMNS 0 (--wide, a file or a
 * pipe) gives every column and unwrapped lines. */
int report_summary_write_text(const output_report *summary, FILE *f, unsigned columns);
/* "48 KiB", "1 MiB", "2.8 MiB". */
const char *report_format_bytes(double bytes, char *buffer, size_t length);

/* report.json: the summary and every section's own report (or its failure),
 * written atomically.  Read back with report_bundle_read. */
int report_write_json(const char *path, const char *title, const output_report *summary,
                      output_report *const *sections, const char *const *commands, const char *const *failures,
                      size_t count, plumb_status *status);
typedef struct report_bundle {
	output_report *summary;
	output_report **sections;  /* NULL where the section failed */
	char **commands, **failures;
	size_t count;
} report_bundle;
/* Reads report.json; also accepts one section's JSON (then count is 1 and
 * the summary is built from it). */
int report_bundle_read(const char *path, report_bundle *bundle, plumb_status *status);
void report_bundle_free(report_bundle *bundle);

/* Two summaries side by side (command "report-compare", table "compare":
 * quantity, unit, a, b, difference %, spread %, beyond_spread yes/no);
 * names are the two files (shown by base name).  NULL if out of memory. */
output_report *report_compare(const output_report *a, const output_report *b, const char *name_a, const char *name_b);
int report_write_compare_html(const char *path, const output_report *compare, plumb_status *status);

/* ---- One record per section: everything plumb knows about a section of
 * `plumb report` (and of a `plumb cluster` node), in one entry of the table
 * in src/report/section_table.c.  A new section is one new entry there. */

/* The sections' reports the summary reads (report_section.summary_input):
 * the summary's rows are built from these. */
typedef enum report_summary_input {
	REPORT_SUMMARY_NONE,
	REPORT_SUMMARY_TOPO,
	REPORT_SUMMARY_LAT,
	REPORT_SUMMARY_BW,
	REPORT_SUMMARY_GEOMETRY,
	REPORT_SUMMARY_C2C,
	REPORT_SUMMARY_LOADED,
	REPORT_SUMMARY_MODEL,
	REPORT_SUMMARY_VALIDATE,
	REPORT_SUMMARY_PERTURB,
	REPORT_SUMMARY_PROGRAM,
	REPORT_SUMMARY_INPUTS
} report_summary_input;

/* Which default lists a section is in (report_section.lists). */
enum {
	REPORT_SECTION_DEFAULT = 1,    /* plumb report */
	REPORT_SECTION_QUICK = 2,      /* plumb report --quick */
	REPORT_SECTION_CLUSTER = 4,    /* plumb cluster may run it on a node */
	REPORT_SECTION_CLUSTER_DEFAULT = 8,
	REPORT_SECTION_CLUSTER_QUICK = 16,
};

typedef struct report_section {
	const char *name;                        /* its name, and the command it runs unless command says another ("lat") */
	const char *command;                     /* the command it runs (NULL: name) */
	/* With command: a saved report of that command is this section's when
	 * it has this table (report --from DIR/NAME.json, whose own command is
	 * the one it ran); NULL: never. */
	const char *own_table;
	const char *title, *intro;               /* its heading, and the paragraph under it ("": none) */
	const char *const *arguments;            /* the report's arguments for the command (NULL: none) */
	const char *const *quick_arguments;      /* with --quick (NULL: arguments) */
	double seconds, quick_seconds;           /* expected cost: the progress line's weights (0: unknown) */
	/* An earlier section whose JSON report this one reads on stdin, with
	 * input_arguments; input_required: it cannot run without it (the plan
	 * adds the input before it), else it runs alone with arguments (the
	 * plan moves a listed input before it).  plan_note says the change;
	 * input_missing why the section failed when its input did not run. */
	const char *input;
	bool input_required;
	const char *const *input_arguments;
	const char *plan_note, *input_missing;
	/* given --peak-at-least with the DRAM bandwidth the machine model
	 * reads from the earlier topo, lat and bw sections, when they ran (the
	 * queueing model's peak can be no lower than what was measured) */
	bool bandwidth_bound;
	bool recorded;                           /* recorded first for its reference rate (report_run_perturb_section) */
	/* runs the user's program (plumb report --program): its arguments,
	 * then "--" and the program's argument vector (report_run_program_section) */
	bool program;
	unsigned lists;                          /* REPORT_SECTION_* */
	/* The charts of its tables on the page, in order (src/report/chart.c
	 * draws them; a chart whose table the report lacks is skipped). */
	const report_chart *charts;
	size_t chart_count;
	/* What the summary reads its report as (report_summary_build;
	 * REPORT_SUMMARY_NONE: nothing). */
	report_summary_input summary_input;
} report_section;

/* The DRAM bandwidth (MB/s, machine_model_memory_bandwidth) the machine
 * model reads from these sections' reports, the one the summary's physics
 * check holds the queueing model's peak to; 0 when there is none.  The model section is given it
 * (plumb model --peak-at-least): the queueing model's peak can be no lower. */
double report_measured_memory_mb_s(const output_report *topo, const output_report *lat, const output_report *bw);

/* The table, in the report's order; the entry for name, or NULL. */
const report_section *report_section_table(size_t *count);
const report_section *report_section_find(const char *name);
/* The summary's inputs from sections[0..count) (commands[i] names each; NULL
 * where it failed): in[k] is the first section whose record's summary_input
 * is k, or NULL. */
void report_section_summary_inputs(output_report *const *sections, const char *const *commands, size_t count,
                                   const output_report *in[REPORT_SUMMARY_INPUTS]);
/* The names of the sections whose lists have every bit of mask, in the
 * table's order, joined by separator ("topo,lat,..."). */
void report_section_list(unsigned mask, const char *separator, char *out, size_t length);

/* The section a program given to plumb report --program adds (its record's
 * name): the program's miss-ratio curves of every data level in one run. */
#define REPORT_PROGRAM_SECTION "program"
/* The command a section runs: its record's command, else its name. */
const char *report_section_command(const char *name);
/* The section a saved report of one command is (its record's name): the
 * record that runs that command under another name and whose own_table
 * the report has, else the command itself. */
const char *report_section_of(const output_report *report);

/* Where a program's working set lands (the summary's hierarchy, with
 * --program): for the cache levels in order, knee[i] is the knee of the
 * program's miss-ratio curve of level i (sim_curve_knee: 0 when no
 * capacity removes a miss, NaN when the level was not simulated) and
 * capacity[i] what the level holds for a program here (its usable capacity,
 * machine_usable_bytes, else its sysfs size; NaN: unknown; both NaN: the
 * machine has no such level).  The first level whose knee is 0 or at most
 * its capacity; count when none is (memory), or when one of a level's knee
 * and capacity is unknown before that (*unknown set). */
size_t report_working_set_level(const double *knee, const double *capacity, size_t count, bool *unknown);

/* The arguments report gives a section's command by default (NULL-terminated;
 * validate runs fewer repeats than its own default so the report stays short). */
const char *const *report_section_arguments(const char *command);
/* The same, or with quick true the shorter time caps of a quick report. */
const char *const *report_section_arguments_for(const char *command, bool quick);
/* What a section is expected to cost, in seconds on a 2-CPU VM under
 * ordinary load (docs/PERFORMANCE.md): the weights of the report's
 * progress line, so that its time left follows the work still ahead. */
double report_section_expected_seconds(const char *command, bool quick);

/* Runs sections names[0..count) in order, each through report_run_section
 * with report_section_arguments_for(name, quick); "model" is fitted to the
 * report of an earlier "loaded" in the list.  reports[i] gets the section's
 * report, or NULL and failures[i] its one-line reason (also printed as
 * "plumb WHO: section NAME: REASON").  Progress on stderr when it is a
 * terminal.  save_dir, if non-NULL, keeps each section's JSON there.
 * Returns the number of sections that failed. */
size_t report_run_sections(const char *program, const char *who, const char *const *names, size_t count, bool quick,
                           const char *save_dir, output_report **reports, char (*failures)[PLUMB_MESSAGE_MAX]);
/* The same, a section whose record runs a program (report_section.program)
 * given program_argv (NULL-terminated; NULL: such a section fails, saying
 * it needs --program). */
size_t report_run_sections_with(const char *program, const char *who, const char *const *names, size_t count,
                                bool quick, const char *save_dir, char *const *program_argv, output_report **reports,
                                char (*failures)[PLUMB_MESSAGE_MAX]);

/* What the report does while a section runs (report_run_section_watched):
 * fraction(context, f) for each progress record the section sends on its
 * progress channel (core/progress.h: the fraction of its own work done;
 * NULL: no channel is given), and tick(context) about once a second (NULL:
 * none), from the loop that reads the section's output. */
typedef struct report_section_watch {
	void (*fraction)(void *context, double fraction);
	void (*tick)(void *context);
	void *context;
	/* the section's own time left, in seconds, when it says one (NULL: not read) */
	void (*left)(void *context, double seconds);
} report_section_watch;

/* Runs `program COMMAND ARGS... --json` and parses its report.  Sections run
 * as separate processes so one section's crash, memory or pinned threads
 * cannot disturb the next.  On failure *out is NULL and status says why
 * (the child's last stderr line when it has one).  If save_path is non-NULL
 * the JSON is also written there atomically. */
int report_run_section(const char *program, const char *command, const char *const *arguments,
                       const char *save_path, output_report **out, plumb_status *status);
/* The same with input (may be NULL) on the child's standard input: the
 * model section reads loaded's JSON this way ("plumb model --from -"). */
int report_run_section_input(const char *program, const char *command, const char *const *arguments,
                             const char *input, const char *save_path, output_report **out, plumb_status *status);
/* The same, watched (watch may be NULL). */
int report_run_section_watched(const char *program, const char *command, const char *const *arguments,
                               const char *input, const char *save_path, const report_section_watch *watch,
                               output_report **out, plumb_status *status);
/* The perturb section: records the workload once under Valgrind (`plumb
 * trace record`) for its reference rate, then runs Watson's experiment on it
 * (report_section_arguments("perturb") and --rate-trace), so the summary can
 * give f* and the buffer it implies.  Without Valgrind the experiment still
 * runs, without the rate.  The recording is removed after.  watch (may be
 * NULL) watches both runs. */
int report_run_perturb_section(const char *program, const char *save_path, const report_section_watch *watch,
                               output_report **out, plumb_status *status);
/* A section that runs the user's program: `program COMMAND ARGUMENTS...
 * --json -- PROGRAM_ARGV...`, the program's argument vector passed as it
 * is, never through a shell (plumb sim --curve data runs it under
 * plumbgrind through trace_valgrind_start).  watch may be NULL. */
int report_run_program_section(const char *program, const char *command, const char *const *arguments,
                               char *const *program_argv, const char *save_path, const report_section_watch *watch,
                               output_report **out, plumb_status *status);
/* Reads a JSON report from a file ("-" = stdin). */
int report_read_file(const char *path, output_report **out, plumb_status *status);
/* The sections of `plumb report`, in the order they must run, from a
 * comma-separated list (cut in place: names point into it): a model section
 * gets a loaded section before it (added when the list has none; model is
 * fitted to loaded's measurements), and lat moves before geometry (geometry
 * reads lat's measurement).  known(name) says whether a name is a plumb
 * command.  Fails (EINVAL) on an unknown name, "report" itself, a name
 * listed twice, or capacity - 1 sections or more.  Each change made to the
 * order is said in notes ("" when there is none). */
int report_plan_sections(char *list, bool (*known)(const char *name), const char **names, size_t capacity,
                         size_t *count, char notes[2][PLUMB_MESSAGE_MAX], plumb_status *status);
/* The JSON beside a report page: FILE.html -> FILE.json, else FILE.json. */
void report_json_path_for(const char *html, char *out, size_t length);
#endif
