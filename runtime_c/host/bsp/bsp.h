/* Host emulation: the SDKs' board support umbrella header (pulp-sdk and
 * gap_sdk pmsis_bsp "bsp/bsp.h"); everything is in pmsis.h here. */
#ifndef DM_HOST_BSP_BSP_H
#define DM_HOST_BSP_BSP_H
#include "pmsis.h"
#endif
