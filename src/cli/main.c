/* plumb: dispatches to a subcommand, in the manner of git and perf. */
#include <stdio.h>
#include <string.h>
#include "cli/command.h"
#include "plumb/interrupt.h"

static void print_usage(FILE *stream)
{
	fprintf(stream, "usage: plumb [--version] [--help] COMMAND [ARGS]\n\n"
	                "plumb measures, predicts and simulates the memory hierarchy,\n"
	                "and checks whether hardware performance counters tell the truth.\n\n"
	                "Commands:\n");
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(stream, "  %-10s %s\n", c->name, c->summary);
	fprintf(stream, "\n'plumb COMMAND --help' describes a command; 'man plumb-COMMAND' in full.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			for (const struct cli_command *c = cli_commands; c->name; c++)
				if (!strcmp(c->name, argv[2])) {
					char *help_argv[] = { argv[2], "--help", NULL };
					return c->run(2, help_argv);
				}
			fprintf(stderr, "plumb: '%s' is not a command; 'plumb --help' lists them\n", argv[2]);
			return 2;
		}
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version")) {
		printf("plumb %s\n", PLUMB_VERSION);
		return 0;
	}
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name)) {
			/* SIGINT, SIGTERM and SIGHUP stop every command cleanly: children
			 * reaped, temporary files removed, exit 128 + the signal
			 * (include/plumb/interrupt.h).  The state lives here, in main's
			 * frame, for the whole run. */
			interrupt_state interrupts;
			interrupt_install(&interrupts);
			int code = c->run(argc - 1, argv + 1);
			if (interrupt_pending()) {
				/* A loop that polls stopped at a safe point (a trace being
				 * written is finished); what it left is cleaned here. */
				interrupt_cleanup();
				code = interrupt_exit_code();
			}
			fflush(NULL);
			interrupt_uninstall();
			return code;
		}
	fprintf(stderr, "plumb: '%s' is not a command; 'plumb --help' lists them\n", name);
	return 2;
}
