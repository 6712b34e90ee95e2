/* pulp-sdk's HyperRAM configuration (pmsis_bsp "bsp/ram/hyperram.h"),
 * declared alike by both PMSIS layers: runtime_c/host/bsp/ram/hyperram.h and
 * runtime_c/gvsoc/bsp/ram/hyperram.h include it. Include bsp/ram/hyperram.h,
 * not this. */
#ifndef DM_BSP_HYPERRAM_API_H
#define DM_BSP_HYPERRAM_API_H

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
