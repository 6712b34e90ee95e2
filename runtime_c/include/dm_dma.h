/* deeploy-mlir runtime: copies of a tile box between memory levels. */
#ifndef DM_DMA_H
#define DM_DMA_H

#include "dm_common.h"

/* DM_REQ_NAME(&req, "name"): names a cluster-DMA command (pi_cl_dma_cmd_t)
 * or an L3 RAM request (pi_cl_ram_req_t) in the messages of the host
 * emulation, whose pmsis.h defines DM_HOST_EMULATION; against a real SDK it
 * expands to a statement that does nothing (neither argument is evaluated). */
#ifdef DM_HOST_EMULATION
#define DM_REQ_NAME(req, name) dm_host_name_request((req), (name))
#else
#define DM_REQ_NAME(req, name) ((void)0)
#endif

/* Synchronous copies of a rank-0..4 box between a tile (contiguous,
 * tile_shape) and the box of a big tensor (contiguous, big_shape) that starts
 * at `offsets`. Called by the cluster controller (core 0) between kernels;
 * rows of the last dimension move with memcpy.
 *   dm_dma_copy_in:  box of big -> all of tile
 *   dm_dma_copy_out: all of tile -> box of big */
void dm_dma_copy_in(const void *big, void *tile, uint32_t elem_bytes, uint32_t rank,
                    const uint32_t *big_shape, const uint32_t *tile_shape,
                    const uint32_t *offsets);
void dm_dma_copy_out(void *big, const void *tile, uint32_t elem_bytes, uint32_t rank,
                     const uint32_t *big_shape, const uint32_t *tile_shape,
                     const uint32_t *offsets);

#endif
