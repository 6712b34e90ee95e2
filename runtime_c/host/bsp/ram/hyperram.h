/* Host emulation: pmsis_bsp "bsp/ram/hyperram.h" (pulp-sdk; gap_sdk has the
 * same for its HyperRAM boards): the HyperRAM configuration, opened as
 *   struct pi_hyperram_conf conf; pi_hyperram_conf_init(&conf);
 *   pi_open_from_conf(&ram, &conf); if (pi_ram_open(&ram) != 0) ...
 * The fields are pulp-sdk's; the emulation reads none of them. */
#ifndef DM_HOST_BSP_RAM_HYPERRAM_H
#define DM_HOST_BSP_RAM_HYPERRAM_H

#include "bsp/ram.h"

/* struct pi_hyperram_conf and pi_hyperram_conf_init, as in both layers. */
#include "../../../include/dm_bsp_hyperram_api.h"

#endif
