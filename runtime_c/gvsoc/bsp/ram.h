/* deeploy-mlir's PMSIS layer for GVSoC: the L3 RAM API of pulp-sdk's
 * pmsis_bsp (bsp/ram.h) that the emitted code uses, on the HyperRAM the GVSoC
 * pulp-open and siracusa boards carry behind the uDMA HyperBus interface
 * (ram_gvsoc.c). Copies are synchronous: pi_cl_ram_copy returns when the
 * bytes have moved, and pi_cl_ram_copy_wait only checks the request. */
#ifndef DM_GVSOC_BSP_RAM_H
#define DM_GVSOC_BSP_RAM_H

#include "pmsis.h"

struct pi_ram_conf {
    void *api;
};

typedef struct pi_cl_ram_req_s {
    uint32_t done; /* 1 once a copy was issued on it */
    struct pi_cl_ram_req_s *next;
} pi_cl_ram_req_t;

int32_t pi_ram_open(struct pi_device *device);
void pi_ram_close(struct pi_device *device);
int pi_ram_alloc(struct pi_device *device, uint32_t *addr, uint32_t size);
int pi_ram_free(struct pi_device *device, uint32_t addr, uint32_t size);
void pi_ram_read(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size);
void pi_ram_write(struct pi_device *device, uint32_t pi_ram_addr, void *data, uint32_t size);
void pi_cl_ram_copy(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                    int ext2loc, pi_cl_ram_req_t *req);
void pi_cl_ram_copy_2d(struct pi_device *device, uint32_t pi_ram_addr, void *addr, uint32_t size,
                       uint32_t stride, uint32_t length, int ext2loc, pi_cl_ram_req_t *req);
void pi_cl_ram_copy_wait(pi_cl_ram_req_t *req);

#endif
