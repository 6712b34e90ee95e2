/* Host emulation: pmsis_bsp "bsp/ram.h" (pi_ram_*, pi_cl_ram_*); see pmsis.h. */
#ifndef DM_HOST_BSP_RAM_H
#define DM_HOST_BSP_RAM_H
#include "pmsis.h"
#endif
