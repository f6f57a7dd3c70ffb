/* The loops that feed references to the engine (sim_engine.c), one
 * variant a file, chosen when the simulator is made (sim.c). */
#ifndef PLUMB_SIM_LOOP_H
#define PLUMB_SIM_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim_state.h"

void sim_program_free(struct sim_program *p);
/* A hit of an access of this kind in an LRU L1 needs (meta & need) == want
 * and sets dirty (the MRU loops' and plumbgrind's L1 filter's rule). */
void sim_mru_masks(sim_access_kind kind, bool write_back, uint8_t *need, uint8_t *want, uint8_t *dirty);

#endif
