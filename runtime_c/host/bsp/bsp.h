/* Host emulation: the SDKs' board support umbrella header (pulp-sdk and
 * gap_sdk pmsis_bsp "bsp/bsp.h"), which includes the board's devices. The
 * host "board" has both RAM configurations and, like gap_sdk's HyperRAM
 * boards, names the HyperRAM one its default (pi_default_ram_conf). */
#ifndef DM_HOST_BSP_BSP_H
#define DM_HOST_BSP_BSP_H

#include "pmsis.h"
#include "bsp/ram.h"
#include "bsp/ram/aps25xxxn.h"
#include "bsp/ram/hyperram.h"

#define pi_default_ram_conf pi_hyperram_conf
#define pi_default_ram_conf_init pi_hyperram_conf_init

#endif
