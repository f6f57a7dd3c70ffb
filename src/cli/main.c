/* plumb: dispatches to a subcommand, in the manner of git and perf. */
#include <stdio.h>
#include <string.h>
#include "cli/command.h"
#include "core/interrupt.h"

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

/* Optimal string alignment distance (Levenshtein with transpositions),
 * capped: names longer than 31 bytes are never close to a command. */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 31 || m > 31)
		return 99;
	unsigned d[32][32];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

/* "plumb: 'lta' is not a command; did you mean 'lat'?", as git says it:
 * the commands within two edits (one for names of three letters or fewer),
 * or that the word begins. */
static void not_a_command(const char *name)
{
	fprintf(stderr, "plumb: '%s' is not a command", name);
	const char *close[8];
	size_t found = 0;
	unsigned limit = strlen(name) <= 3 ? 1 : 2;
	for (const struct cli_command *c = cli_commands; c->name && found < 8; c++)
		if (edit_distance(name, c->name) <= limit || (strlen(name) >= 2 && !strncmp(c->name, name, strlen(name))))
			close[found++] = c->name;
	if (found == 1)
		fprintf(stderr, "; did you mean '%s'?\n", close[0]);
	else if (found > 1) {
		fprintf(stderr, "; did you mean one of these?");
		for (size_t i = 0; i < found; i++)
			fprintf(stderr, " '%s'", close[i]);
		fprintf(stderr, "\n");
	} else
		fprintf(stderr, "; 'plumb --help' lists them\n");
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
			not_a_command(argv[2]);
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
			 * (src/core/interrupt.h).  The state lives here, in main's
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
	not_a_command(name);
	return 2;
}
