#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "core/escape.h"
#include "cli/command.h"

/* The format an option asks for: --table NAME is CSV too. */
static const char *format_option(int option)
{
	return option == 0x1001 ? "--csv" : option == 0x1002 ? "--json" : "--table";
}

int cli_output_option(const char *command, cli_output *out, int option, const char *argument)
{
	output_format wanted;
	switch (option) {
	case 0x1001: wanted = OUTPUT_CSV; break;
	case 0x1002: wanted = OUTPUT_JSON; break;
	case 0x1003: wanted = OUTPUT_CSV; out->table = argument; break;
	case 'o': out->path = argument; return 1;
	case 0x1004: out->wide = true; return 1;
	default: return 0;
	}
	/* Two formats cannot both be honoured, and the last one winning
	 * silently would hand a script the other format than it named.  Nothing
	 * has run yet, so the usage error ends plumb here. */
	if (out->format != OUTPUT_TABLE && out->format != wanted)
		exit(cli_usage_error(command, "%s and %s ask for two output formats; give one",
		                     out->first_format, format_option(option)));
	if (out->format == OUTPUT_TABLE)
		out->first_format = format_option(option);
	out->format = wanted;
	return 1;
}

static int emit_csv(const cli_output *out, const output_report *report)
{
	plumb_status status;
	const char *command = output_report_command(report);
	const char *path = out->path ? out->path : "-";
	if (out->table) {
		if (output_write_csv_table(report, out->table, path, &status) != 0)
			return status.code == ENOENT && !output_table_find(report, out->table)
			       ? cli_usage_error(command, "--table: %s", status.message)
			       : cli_error(command, &status);
		return 0;
	}
	size_t count = output_table_count(report);
	if (output_path_takes_siblings(path)) {
		if (output_write_csv_tables(report, path, &status) != 0)
			return cli_error(command, &status);
		return 0;
	}
	if (output_write_csv_table(report, NULL, path, &status) != 0)
		return cli_error(command, &status);
	if (count > 1) {
		char others[1024] = "";
		for (size_t t = 1; t < count; t++) {
			size_t used = strlen(others);
			snprintf(others + used, sizeof others - used, "%s%s", t > 1 ? ", " : "",
			         output_table_name(output_table_at(report, t)));
		}
		if (!strcmp(path, "-"))
			fprintf(stderr, "plumb %s: the CSV is the table '%s'; the others (%s) with --table NAME, "
			        "or each in its own file with -o FILE\n", command, output_table_name(output_table_at(report, 0)),
			        others);
		else
			fprintf(stderr, "plumb %s: '%s' has the table '%s'; the others (%s) are not written beside it, as it "
			        "is not a regular file: --table NAME, or -o FILE for one file each\n", command, path,
			        output_table_name(output_table_at(report, 0)), others);
	}
	return 0;
}

/* The width of the terminal on standard output, or 0 when it is not one
 * (a file or a pipe gets every column).  $COLUMNS first, as ls and git. */
static unsigned terminal_columns(void)
{
	if (!isatty(STDOUT_FILENO))
		return 0;
	const char *columns = getenv("COLUMNS");
	if (columns && *columns) {
		char *end;
		unsigned long value = strtoul(columns, &end, 10);
		if (!*end && value >= 20 && value <= 10000)
			return (unsigned)value;
	}
	struct winsize size;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20)
		return size.ws_col;
	return 0;
}

unsigned cli_output_columns(const cli_output *out)
{
	return out->wide ? 0 : terminal_columns();
}

int cli_output_emit(const cli_output *out, const output_report *report)
{
	plumb_status status;
	if (out->format == OUTPUT_CSV)
		return emit_csv(out, report);
	unsigned columns = 0;
	if (out->format == OUTPUT_TABLE && !out->wide && (!out->path || !strcmp(out->path, "-")))
		columns = terminal_columns();
	if (columns) {
		if (output_write_fitted(report, stdout, columns, &status) != 0)
			return cli_error(output_report_command(report), &status);
		return 0;
	}
	if (output_write_file(report, out->format, out->path ? out->path : "-", &status) != 0)
		return cli_error(output_report_command(report), &status);
	return 0;
}

int cli_usage_error(const char *command, const char *format, ...)
{
	/* the words come from the command line: shown as text (plumb/escape.h) */
	char line[1024];
	va_list ap;
	va_start(ap, format);
	vsnprintf(line, sizeof line, format, ap);
	va_end(ap);
	escape_terminal_in_place(line);
	fprintf(stderr, "plumb %s: %s (see 'plumb %s --help')\n", command, line, command);
	return CLI_EXIT_USAGE;
}

int cli_error(const char *command, const plumb_status *status)
{
	/* a message may name a file, a region or a program from a trace */
	char message[sizeof status->message];
	snprintf(message, sizeof message, "%s", status && status->message[0] ? status->message : "failed");
	escape_terminal_in_place(message);
	fprintf(stderr, "plumb %s: %s\n", command, message);
	return CLI_EXIT_FAILURE;
}

int cli_bad_option(const char *command, int option, char **argv)
{
	/* getopt_long leaves the offending element at argv[optind - 1] for a long option;
	 * optopt is then the option's value (an internal code, not a letter), so the
	 * option is named as the user typed it, never as "-" plus that code. */
	const char *typed = optind > 0 ? argv[optind - 1] : NULL;
	bool is_long = typed && strncmp(typed, "--", 2) == 0;
	int name_length = 0;
	if (is_long) {
		const char *equals = strchr(typed, '=');
		name_length = equals ? (int)(equals - typed) : (int)strlen(typed);
	}
	if (option == ':') {
		if (is_long)
			return cli_usage_error(command, "option '%.*s' needs a value", name_length, typed);
		return cli_usage_error(command, "option '-%c' needs a value", optopt);
	}
	if (is_long && optopt != 0)
		return cli_usage_error(command, "option '%.*s' does not take a value", name_length, typed);
	if (is_long)
		return cli_usage_error(command, "unknown option '%.*s'", name_length, typed);
	if (optopt > ' ' && optopt < 127)
		return cli_usage_error(command, "unknown option '-%c'", optopt);
	return cli_usage_error(command, "unknown option '%s'", typed ? typed : "?");
}
