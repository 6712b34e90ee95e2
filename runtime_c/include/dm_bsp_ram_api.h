/* The L3 RAM API of pmsis_bsp's "bsp/ram.h" (pulp-sdk, gap_sdk) that
 * deeploy-mlir's emitted code uses, declared alike by both PMSIS layers: the
 * host emulation (runtime_c/host/bsp/ram.h) and the GVSoC layer
 * (runtime_c/gvsoc/bsp/ram.h). Each layer's bsp/ram.h defines its
 * pi_cl_ram_req_t and includes this file after it. Include bsp/ram.h, not
 * this. */
#ifndef DM_BSP_RAM_API_H
#define DM_BSP_RAM_API_H

#include "bsp/ram.h"

/* The generic part of every RAM configuration (its first member). */
struct pi_ram_conf {
    void *api;
};

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
