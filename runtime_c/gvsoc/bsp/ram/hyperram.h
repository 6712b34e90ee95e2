/* deeploy-mlir's PMSIS layer for GVSoC: pulp-sdk's HyperRAM configuration
 * (pmsis_bsp bsp/ram/hyperram.h). ram_size 0 means the board's 8 MiB. */
#ifndef DM_GVSOC_BSP_RAM_HYPERRAM_H
#define DM_GVSOC_BSP_RAM_HYPERRAM_H

#include "bsp/ram.h"

/* struct pi_hyperram_conf and pi_hyperram_conf_init, as in both layers. */
#include "../../../include/dm_bsp_hyperram_api.h"

#endif
