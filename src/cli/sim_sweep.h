/* plumb sim --sweep (src/cli/sim_sweep.c), called from cmd_sim. */
#ifndef PLUMB_CLI_SIM_SWEEP_H
#define PLUMB_CLI_SIM_SWEEP_H

#include <stdbool.h>

/* True when the arguments (before any "--") ask for a sweep. */
bool cli_sim_is_sweep(int argc, char **argv);
int cli_sim_sweep(int argc, char **argv);

#endif
