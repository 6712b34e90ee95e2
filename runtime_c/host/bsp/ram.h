/* Host emulation: pmsis_bsp "bsp/ram.h" of pulp-sdk and gap_sdk: the L3 RAM
 * device (pi_ram_*) and the cluster's asynchronous RAM copies (pi_cl_ram_*).
 * The device's configuration is board specific: bsp/ram/hyperram.h
 * (pulp-sdk, PULPOpen / Siracusa) or bsp/ram/aps25xxxn.h (gap_sdk, the GAP9
 * EVK's OctoSPI PSRAM). The emulation reads none of its fields. Using a RAM
 * device that is not open stops (see pmsis.h for every check). */
#ifndef DM_HOST_BSP_RAM_H
#define DM_HOST_BSP_RAM_H

#include "pmsis.h"

/* 96 bytes, as pulp-sdk's on RV32 (device, addresses, sizes, a pi_task_t
 * for the fabric controller, done flag), on every build. */
typedef struct pi_cl_ram_req_s {
    uint32_t id;         /* the latest transfer issued on this request; 0: none */
    uint32_t guard;      /* ~id from issue on (see pmsis.h: lifetimes) */
    uint8_t runtime[87]; /* the runtime's while in flight: a pattern here */
    uint8_t done;        /* set when the transfer has landed, as the SDK's */
} pi_cl_ram_req_t;
_Static_assert(sizeof(pi_cl_ram_req_t) == 96, "pi_cl_ram_req_t: 96 bytes as on pulp-sdk");

/* Declared in dm_bsp_ram_api.h with struct pi_ram_conf, as the GVSoC layer
 * declares them: pi_ram_open, pi_ram_close; pi_ram_alloc, pi_ram_free:
 * allocations are 4-byte aligned at addresses from 0x10000000; pi_ram_free
 * needs the allocated size back (the SDK allocator keeps no sizes): another
 * size stops. pi_ram_read, pi_ram_write: synchronous. pi_cl_ram_copy,
 * pi_cl_ram_copy_2d, pi_cl_ram_copy_wait: asynchronous, from the cluster.
 * ext2loc = 1: L3 -> L2; 0: L2 -> L3. 2-D: rows of `length` bytes, `stride`
 * bytes apart in L3, contiguous in L2. A request holds ONE transfer: wait for
 * it before issuing the next on it. The path is relative to this file. */
#include "../../include/dm_bsp_ram_api.h"

#endif
