/* plumb report: the machine characterisation report. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/command.h"
#include "plumb/progress.h"
#include "plumb/report.h"

const char cmd_report_summary[] = "run the characterisation and write one HTML report";

#define DEFAULT_SECTIONS "topo,lat,bw,geometry,c2c,loaded,validate"
#define MAX_SECTIONS 32

static void usage(FILE *f)
{
	fprintf(f, "usage: plumb report [-o FILE] [--sections LIST] [--save-dir DIR]\n"
	           "       plumb report [-o FILE] --from REPORT.json...\n\n"
	           "Runs each section's command (as 'plumb COMMAND --json', one process each) and\n"
	           "writes one self-contained HTML file with tables and charts. A section that\n"
	           "cannot run on this machine is kept, with the reason.\n\n"
	           "  -o, --output FILE    HTML file to write (default plumb-report.html), atomically\n"
	           "  --sections LIST      comma-separated commands (default " DEFAULT_SECTIONS ")\n"
	           "  --save-dir DIR       also keep each section's JSON report in DIR\n"
	           "  --from               build the report from saved JSON reports instead of running\n"
	           "  -h, --help           this help\n");
}

static int command_exists(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return 1;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_SECTIONS = 0x2001, OPT_SAVE_DIR, OPT_FROM };
	static const struct option options[] = {
		{ "output", required_argument, 0, 'o' }, { "sections", required_argument, 0, OPT_SECTIONS },
		{ "save-dir", required_argument, 0, OPT_SAVE_DIR }, { "from", no_argument, 0, OPT_FROM },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	const char *path = "plumb-report.html", *save_dir = NULL;
	char list[512] = DEFAULT_SECTIONS;
	int from = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'o': path = optarg; break;
		case OPT_SECTIONS:
			if (strlen(optarg) >= sizeof list)
				return cli_usage_error("report", "--sections list is too long");
			snprintf(list, sizeof list, "%s", optarg);
			break;
		case OPT_SAVE_DIR: save_dir = optarg; break;
		case OPT_FROM: from = 1; break;
		default: return cli_bad_option("report", c, argv);
		}
	}
	if (!from && optind < argc)
		return cli_usage_error("report", "unexpected argument '%s' (use --from to read saved reports)", argv[optind]);
	if (from && optind == argc)
		return cli_usage_error("report", "--from needs at least one JSON report");
	if (save_dir && (mkdir(save_dir, 0777) != 0 && access(save_dir, W_OK) != 0))
		return cli_usage_error("report", "--save-dir '%s' cannot be created or written", save_dir);

	output_report *reports[MAX_SECTIONS] = { 0 };
	const char *commands[MAX_SECTIONS];
	const char *failures[MAX_SECTIONS] = { 0 };
	char failure_text[MAX_SECTIONS][PLUMB_MESSAGE_MAX];
	char *names[MAX_SECTIONS];
	size_t count = 0;
	plumb_status status;
	int exit_code = 0;

	if (from) {
		for (int i = optind; i < argc; i++) {
			if (count == MAX_SECTIONS)
				return cli_usage_error("report", "at most %d reports", MAX_SECTIONS);
			if (report_read_file(argv[i], &reports[count], &status) != 0) {
				for (size_t k = 0; k < count; k++)
					output_report_free(reports[k]);
				return cli_error("report", &status);
			}
			commands[count] = output_report_command(reports[count]);
			count++;
		}
	} else {
		char program[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
		if (n <= 0)
			return cli_usage_error("report", "cannot find the plumb program (/proc/self/exe)");
		program[n] = 0;
		for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			if (count == MAX_SECTIONS)
				return cli_usage_error("report", "at most %d sections", MAX_SECTIONS);
			if (!strcmp(s, "report"))
				return cli_usage_error("report", "a report cannot contain itself");
			if (!command_exists(s))
				return cli_usage_error("report", "'%s' is not a plumb command", s);
			for (size_t k = 0; k < count; k++)
				if (!strcmp(names[k], s))
					return cli_usage_error("report", "section '%s' is listed twice", s);
			names[count] = s;
			commands[count] = s;
			count++;
		}
		if (count == 0)
			return cli_usage_error("report", "--sections names no command (e.g. topo,lat)");
		progress p;
		progress_begin(&p, "report", count);
		for (size_t i = 0; i < count; i++) {
			progress_step(&p, i);
			if (p.enabled)
				fprintf(stderr, "\rreport: section %zu/%zu: plumb %s\033[K\n", i + 1, count, names[i]);
			char save_path[PATH_MAX], *save = NULL;
			if (save_dir) {
				snprintf(save_path, sizeof save_path, "%s/%s.json", save_dir, names[i]);
				save = save_path;
			}
			if (report_run_section(program, names[i], NULL, save, &reports[i], &status) != 0) {
				snprintf(failure_text[i], sizeof failure_text[i], "%s", status.message);
				failures[i] = failure_text[i];
				fprintf(stderr, "plumb report: section %s: %s\n", names[i], status.message);
				exit_code = 1;
			}
		}
		progress_end(&p);
	}
	if (report_write_html(path, "plumb: memory hierarchy report", reports, commands, failures, count, &status) != 0) {
		exit_code = cli_error("report", &status);
	} else {
		printf("report: %s (%zu sections", path, count);
		size_t failed = 0;
		for (size_t i = 0; i < count; i++)
			failed += failures[i] != NULL;
		if (failed)
			printf(", %zu could not run", failed);
		printf(")\n");
	}
	for (size_t i = 0; i < count; i++)
		output_report_free(reports[i]);
	return exit_code;
}
