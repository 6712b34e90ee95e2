/* deeploy-mlir runtime: copies of a tile box between memory levels. */
#ifndef DM_DMA_H
#define DM_DMA_H

#include "dm_common.h"

/* DM_REQ_NAME(&req, "name"): names a DMA request in the host emulation's
 * messages; nothing on a board. */
#ifdef DM_HOST_EMULATION
#define DM_REQ_NAME(req, name) dm_host_name_request((req), (name))
#else
#define DM_REQ_NAME(req, name) ((void)(req), (void)(name))
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
