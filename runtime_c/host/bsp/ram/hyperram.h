/* Host emulation: pmsis_bsp "bsp/ram/hyperram.h" (struct pi_hyperram_conf,
 * pi_hyperram_conf_init); see pmsis.h. */
#ifndef DM_HOST_BSP_RAM_HYPERRAM_H
#define DM_HOST_BSP_RAM_HYPERRAM_H
#include "pmsis.h"
#endif
