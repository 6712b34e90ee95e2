/* Host emulation: pmsis_bsp "bsp/ram/aps25xxxn.h" (gap_sdk): the APS25xxxN
 * OctoSPI PSRAM of the GAP9 EVK, whose board header (bsp/gap9_evk.h) makes it
 * the default RAM (pi_default_ram_conf = pi_aps25xxxn_conf). Opened as
 *   struct pi_aps25xxxn_conf conf; pi_aps25xxxn_conf_init(&conf);
 *   pi_open_from_conf(&ram, &conf); if (pi_ram_open(&ram) != 0) ...
 * The fields are gap_sdk's; the emulation reads none of them. */
#ifndef DM_HOST_BSP_RAM_APS25XXXN_H
#define DM_HOST_BSP_RAM_APS25XXXN_H

#include "bsp/ram.h"

struct pi_aps25xxxn_conf {
    struct pi_ram_conf ram;
    int spi_itf;
    int spi_cs;
    int xip_en;
    int ram_start;
    int ram_size;
    uint32_t baudrate;
    int reserve_addr_0;
};

void pi_aps25xxxn_conf_init(struct pi_aps25xxxn_conf *conf);

#endif
