/* plumb report: the machine characterisation report. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/command.h"
#include "core/parse.h"
#include "report/report.h"

const char cmd_report_summary[] = "characterise this machine: an HTML report, its summary printed";

#define MAX_SECTIONS 32

static void usage(FILE *f)
{
	/* the default lists are the section table's (src/report/section_table.c) */
	char sections[256], quick_sections[256];
	report_section_list(REPORT_SECTION_DEFAULT, ",", sections, sizeof sections);
	report_section_list(REPORT_SECTION_QUICK, ",", quick_sections, sizeof quick_sections);
	fprintf(f, "usage: plumb report [options] [-o FILE] [--sections LIST] [--quick] [-d DIR]\n"
	           "                    [--program 'PROGRAM ARGS']\n"
	           "       plumb report [options] [-o FILE] --from REPORT.json...\n"
	           "       plumb report --compare A.json B.json [--csv | --json | --html] [-o FILE]\n\n"
	           "Runs each section's command (as 'plumb COMMAND --json', one process each) and\n"
	           "writes one self-contained HTML file that opens with a summary: the hierarchy\n"
	           "level by level (size, latency, bandwidth), cache-to-cache and loaded latency,\n"
	           "the queueing model's service time and whether this machine's counters can be\n"
	           "trusted. The same summary is printed here when the report is done, and\n"
	           "report.json (everything the page shows) is written beside the page. A section\n"
	           "that cannot run on this machine is kept, with the reason.\n\n"
	           "  -o, --output FILE    HTML file to write (default plumb-report.html),\n"
	           "                       atomically; the JSON goes beside it (FILE with .json\n"
	           "                       for .html)\n"
	           "  --sections LIST      comma-separated commands (default\n"
	           "                       %s);\n"
	           "                       model runs on loaded's measurements (loaded is added\n"
	           "                       if missing); perturb (not by default; about 5 s,\n"
	           "                       valgrind for the rate): Watson's halting experiment on\n"
	           "                       a built-in workload, and the trace buffer that halts\n"
	           "                       it rarely enough to change nothing\n"
	           "  --quick              a shorter run: sections %s\n"
	           "                       with shorter time caps (about half a minute)\n"
	           "  --program 'PROGRAM ARGS'\n"
	           "                       also run PROGRAM once under plumb's simulator\n"
	           "                       (valgrind): its miss-ratio curves, and the hierarchy's\n"
	           "                       rows say which level its working set lands in (split\n"
	           "                       into words as a shell quotes, but never run by a\n"
	           "                       shell: no expansion)\n"
	           "  -d, --output-dir DIR also keep each section's JSON report in DIR\n"
	           "  --wide               the summary with every column on a terminal (it\n"
	           "                       otherwise fits the terminal's width, the columns left\n"
	           "                       out named)\n"
	           "  --from               build the report from a saved report.json or section\n"
	           "                       JSON reports\n"
	           "  --compare A B        two report.json files side by side; differences beyond\n"
	           "                       the spread of either run are flagged (text, --csv,\n"
	           "                       --json, --html)\n"
	           "  -h, --help           this help\n\n"
	           "The default run takes 2 to 4 minutes on 2 shared cores (validate is most of\n"
	           "it; longer under heavy load), --quick about half a minute; the progress line\n"
	           "on a terminal says how far it is.  See plumb-report(1).\n", sections, quick_sections);
}

static bool command_exists(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return true;
	return false;
}

static int run_compare(int argc, char **argv, const cli_output *out, int html)
{
	if (argc != 2)
		return cli_usage_error("report", "--compare needs exactly two reports (A.json B.json), got %d", argc);
	report_bundle a, b;
	plumb_status status;
	if (report_bundle_read(argv[0], &a, &status) != 0)
		return cli_error("report", &status);
	if (report_bundle_read(argv[1], &b, &status) != 0) {
		report_bundle_free(&a);
		return cli_error("report", &status);
	}
	output_report *compare = report_compare(a.summary, b.summary, argv[0], argv[1]);
	int rc = 0;
	if (!compare) {
		rc = cli_usage_error("report", "out of memory");
	} else if (html) {
		const char *path = out->path && strcmp(out->path, "-") ? out->path : "plumb-compare.html";
		if (report_write_compare_html(path, compare, &status) != 0)
			rc = cli_error("report", &status);
		else
			printf("written: %s\n", path);
	} else {
		rc = cli_output_emit(out, compare);
	}
	output_report_free(compare);
	report_bundle_free(&a);
	report_bundle_free(&b);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_SECTIONS = 0x2001, OPT_SAVE_DIR, OPT_FROM, OPT_QUICK, OPT_COMPARE, OPT_HTML, OPT_PROGRAM };
	static const struct option options[] = {
		CLI_OUTPUT_OPTIONS, { "sections", required_argument, 0, OPT_SECTIONS },
		{ "output-dir", required_argument, 0, OPT_SAVE_DIR },
		{ "save-dir", required_argument, 0, OPT_SAVE_DIR }, /* the old name (man plumb-report) */ { "from", no_argument, 0, OPT_FROM },
		{ "quick", no_argument, 0, OPT_QUICK }, { "compare", no_argument, 0, OPT_COMPARE },
		{ "html", no_argument, 0, OPT_HTML }, { "program", required_argument, 0, OPT_PROGRAM },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	const char *save_dir = NULL, *program_line = NULL;
	cli_output out = { .format = OUTPUT_TABLE };
	char list[512];
	report_section_list(REPORT_SECTION_DEFAULT, ",", list, sizeof list);
	int from = 0, quick = 0, compare = 0, html = 0, sections_given = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hd:o:", options, NULL)) != -1) {
		if (cli_output_option("report", &out, c, optarg))
			continue;
		switch (c) {
		case 'h': usage(stdout); return 0;
		case OPT_SECTIONS:
			if (strlen(optarg) >= sizeof list)
				return cli_usage_error("report", "--sections list is too long");
			snprintf(list, sizeof list, "%s", optarg);
			sections_given = 1;
			break;
		case OPT_SAVE_DIR: case 'd': save_dir = optarg; break;
		case OPT_FROM: from = 1; break;
		case OPT_QUICK: quick = 1; break;
		case OPT_COMPARE: compare = 1; break;
		case OPT_HTML: html = 1; break;
		case OPT_PROGRAM: program_line = optarg; break;
		default: return cli_bad_option("report", c, argv);
		}
	}
	if (compare && from)
		return cli_usage_error("report", "--compare and --from cannot be combined");
	if (program_line && (compare || from))
		return cli_usage_error("report", "--program runs the program: it cannot be combined with %s (a saved "
		                       "report keeps the program's section)", compare ? "--compare" : "--from");
	if (compare)
		return run_compare(argc - optind, argv + optind, &out, html);
	if (out.format != OUTPUT_TABLE || html)
		return cli_usage_error("report", "--csv, --json and --html apply to --compare; the report writes HTML and JSON");
	if (!from && optind < argc)
		return cli_usage_error("report", "unexpected argument '%s' (use --from to read saved reports)", argv[optind]);
	if (from && optind == argc)
		return cli_usage_error("report", "--from needs at least one JSON report");
	if (quick && !sections_given)
		report_section_list(REPORT_SECTION_QUICK, ",", list, sizeof list);
	struct stat save_info;
	if (save_dir && (mkdir(save_dir, 0777) != 0 && access(save_dir, W_OK) != 0))
		return cli_usage_error("report", "--output-dir '%s' cannot be created or written", save_dir);
	/* A file, FIFO or device by that name would fail each section's JSON
	 * at the end of the run: said before minutes of measuring. */
	if (save_dir && (stat(save_dir, &save_info) != 0 || !S_ISDIR(save_info.st_mode)))
		return cli_usage_error("report", "--output-dir '%s' exists and is not a folder", save_dir);
	const char *path = out.path && strcmp(out.path, "-") ? out.path : "plumb-report.html";
	if (out.path && !strcmp(out.path, "-"))
		return cli_usage_error("report", "the report is a file: give -o FILE.html");

	plumb_status status;
	/* The program's words, never a shell's string (docs/bad-input.md, "Security"). */
	char **program_argv = NULL;
	size_t program_argc = 0;
	if (program_line && parse_command_line(program_line, &program_argv, &program_argc, &status) != 0)
		return cli_usage_error("report", "--program: %s", status.message);
	/* Fail before minutes of measuring, not after. */
	char directory[PATH_MAX];
	snprintf(directory, sizeof directory, "%s", path);
	char *slash = strrchr(directory, '/');
	if (slash)
		*(slash == directory ? slash + 1 : slash) = 0;
	if (access(slash ? directory : ".", W_OK) != 0) {
		plumb_fail_errno(&status, errno, "cannot create '%s' (folder '%s')", path, slash ? directory : ".");
		free(program_argv);
		return cli_error("report", &status);
	}

	output_report *reports[MAX_SECTIONS] = { 0 };
	const char *commands[MAX_SECTIONS];
	const char *failures[MAX_SECTIONS] = { 0 };
	char failure_text[MAX_SECTIONS][PLUMB_MESSAGE_MAX];
	const char *names[MAX_SECTIONS];
	char *owned[MAX_SECTIONS];
	size_t count = 0, owned_count = 0;
	int exit_code = 0;

	if (from) {
		for (int i = optind; i < argc; i++) {
			report_bundle b;
			if (report_bundle_read(argv[i], &b, &status) != 0) {
				for (size_t k = 0; k < count; k++)
					output_report_free(reports[k]);
				for (size_t k = 0; k < owned_count; k++)
					free(owned[k]);
				return cli_error("report", &status);
			}
			for (size_t k = 0; k < b.count; k++) {
				if (count == MAX_SECTIONS) {
					/* the files' contents, not the command line: exit 1, everything freed */
					report_bundle_free(&b);
					for (size_t r = 0; r < count; r++)
						output_report_free(reports[r]);
					for (size_t r = 0; r < owned_count; r++)
						free(owned[r]);
					plumb_fail(&status, E2BIG, "%s: more sections than a report holds (at most %d in all)", argv[i],
					           MAX_SECTIONS);
					return cli_error("report", &status);
				}
				reports[count] = b.sections[k];
				b.sections[k] = NULL;
				owned[owned_count++] = b.commands[k];
				commands[count] = b.commands[k];
				b.commands[k] = NULL;
				if (b.failures[k]) {
					snprintf(failure_text[count], sizeof failure_text[count], "%s", b.failures[k]);
					failures[count] = failure_text[count];
				}
				count++;
			}
			report_bundle_free(&b);
		}
	} else {
		char program[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
		if (n <= 0) {
			free(program_argv);
			return cli_usage_error("report", "cannot find the plumb program (/proc/self/exe)");
		}
		program[n] = 0;
		char notes[2][PLUMB_MESSAGE_MAX];
		/* room for the program's section, which comes last */
		int planned = report_plan_sections(list, command_exists, names, MAX_SECTIONS - (program_argv != NULL), &count,
		                                   notes, &status);
		for (int i = 0; i < 2; i++)
			if (notes[i][0])
				fprintf(stderr, "plumb report: %s\n", notes[i]);
		if (planned != 0 || count == 0) {
			free(program_argv);
			return cli_usage_error("report", "%s", planned != 0 ? status.message
			                       : "--sections names no command (e.g. topo,lat)");
		}
		if (program_argv)
			names[count++] = REPORT_PROGRAM_SECTION;
		for (size_t i = 0; i < count; i++)
			commands[i] = names[i];
		if (report_run_sections_with(program, "report", names, count, quick, save_dir, program_argv, reports,
		                             failure_text) != 0)
			exit_code = 1;
		free(program_argv);
		for (size_t i = 0; i < count; i++)
			if (failure_text[i][0])
				failures[i] = failure_text[i];
	}
	char json_path[PATH_MAX];
	report_json_path_for(path, json_path, sizeof json_path);
	/* The JSON goes beside the page only where a file can be made there. */
	bool with_json = output_path_takes_siblings(path);
	output_report *summary = report_summary_build(reports, commands, count);
	const char *title = "plumb: memory hierarchy report";
	if (report_write_page(path, title, summary, with_json ? json_path : NULL, reports, commands, failures, count, &status) != 0 ||
	    (with_json && report_write_json(json_path, title, summary, reports, commands, failures, count, &status) != 0)) {
		exit_code = cli_error("report", &status);
	} else {
		if (summary)
			report_summary_write_text(summary, stdout, cli_output_columns(&out));
		size_t failed = 0;
		for (size_t i = 0; i < count; i++)
			failed += failures[i] != NULL;
		printf("\nreport: %s (%zu section%s", path, count, count == 1 ? "" : "s");
		if (failed)
			printf(", %zu could not run", failed);
		printf(")\n");
		if (!with_json)
			fprintf(stderr, "plumb report: '%s' is not written beside '%s', as that is not a regular file: "
			        "-o FILE.html writes both\n", json_path, path);
		if (with_json)
			printf("report: %s (every figure and raw row, JSON)\n", json_path);
	}
	output_report_free(summary);
	for (size_t i = 0; i < count; i++)
		output_report_free(reports[i]);
	for (size_t k = 0; k < owned_count; k++)
		free(owned[k]);
	return exit_code;
}
