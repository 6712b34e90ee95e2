/* deeploy-mlir's PMSIS layer for GVSoC: the L3 RAM API of pulp-sdk's
 * pmsis_bsp (bsp/ram.h) that the emitted code uses, on the HyperRAM the GVSoC
 * pulp-open and siracusa boards carry behind the uDMA HyperBus interface
 * (ram_gvsoc.c). A cluster copy is queued on the interface and returns;
 * pi_cl_ram_copy_wait waits until the request's transfers are done. */
#ifndef DM_GVSOC_BSP_RAM_H
#define DM_GVSOC_BSP_RAM_H

#include "pmsis.h"

typedef struct pi_cl_ram_req_s {
    uint32_t done; /* 1 once a copy was issued on it */
    uint32_t seq;  /* the interface's transfer count after its last transfer */
    struct pi_cl_ram_req_s *next;
} pi_cl_ram_req_t;

/* struct pi_ram_conf and the calls, declared alike by the host emulation.
 * The path is relative to this file, so compiles without runtime/include
 * find it. */
#include "../../include/dm_bsp_ram_api.h"

#endif
