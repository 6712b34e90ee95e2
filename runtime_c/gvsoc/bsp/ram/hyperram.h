/* deeploy-mlir's PMSIS layer for GVSoC: pulp-sdk's HyperRAM configuration
 * (pmsis_bsp bsp/ram/hyperram.h). ram_size 0 means the board's 8 MiB. */
#ifndef DM_GVSOC_BSP_RAM_HYPERRAM_H
#define DM_GVSOC_BSP_RAM_HYPERRAM_H

#include "bsp/ram.h"

struct pi_hyperram_conf {
    struct pi_ram_conf ram;
    int hyper_itf;
    int hyper_cs;
    char skip_pads_config;
    int xip_en;
    int ram_start;
    int ram_size;
    uint32_t baudrate;
    int reserve_addr_0;
};

void pi_hyperram_conf_init(struct pi_hyperram_conf *conf);

#endif
