#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli/command.h"

int cli_output_option(cli_output *out, int option, const char *argument)
{
	switch (option) {
	case 0x1001: out->format = OUTPUT_CSV; return 1;
	case 0x1002: out->format = OUTPUT_JSON; return 1;
	case 'o': out->path = argument; return 1;
	default: return 0;
	}
}

int cli_output_emit(const cli_output *out, const output_report *report)
{
	plumb_status status;
	if (output_write_file(report, out->format, out->path ? out->path : "-", &status) != 0)
		return cli_error(output_report_command(report), &status);
	return 0;
}

int cli_usage_error(const char *command, const char *format, ...)
{
	va_list ap;
	fprintf(stderr, "plumb %s: ", command);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fprintf(stderr, " (see 'plumb %s --help')\n", command);
	return 2;
}

int cli_error(const char *command, const plumb_status *status)
{
	fprintf(stderr, "plumb %s: %s\n", command, status && status->message[0] ? status->message : "failed");
	return 1;
}

int cli_bad_option(const char *command, char **argv)
{
	if (optopt)
		return cli_usage_error(command, "option '-%c' is unknown or needs a value", optopt);
	return cli_usage_error(command, "option '%s' is unknown or needs a value", argv[optind - 1]);
}
