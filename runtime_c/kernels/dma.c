/* Tile box copies between memory levels (see dm_dma.h). */
#include <string.h>

#include "dm_dma.h"

/* Element offset in the big tensor of row `r` of the tile (rows are the
 * tile's last dimension, enumerated in row-major order). */
static uint32_t dm_row_offset(uint32_t r, uint32_t rank, const uint32_t *big_shape,
                              const uint32_t *tile_shape, const uint32_t *offsets)
{
    uint32_t off = 0u, stride = 1u;
    if (rank == 0u) return 0u;
    off = offsets[rank - 1u];
    stride = big_shape[rank - 1u];
    for (uint32_t d = rank - 1u; d-- > 0u;) {
        off += (offsets[d] + r % tile_shape[d]) * stride;
        r /= tile_shape[d];
        stride *= big_shape[d];
    }
    return off;
}

static uint32_t dm_rows(uint32_t rank, const uint32_t *tile_shape)
{
    uint32_t rows = 1u;
    for (uint32_t d = 0; d + 1u < rank; d++) rows *= tile_shape[d];
    return rows;
}

void dm_dma_copy_in(const void *big, void *tile, uint32_t elem_bytes, uint32_t rank,
                    const uint32_t *big_shape, const uint32_t *tile_shape,
                    const uint32_t *offsets)
{
    const uint8_t *b = (const uint8_t *)big;
    uint8_t *t = (uint8_t *)tile;
    const uint32_t row = rank ? tile_shape[rank - 1u] * elem_bytes : elem_bytes;
    const uint32_t rows = dm_rows(rank, tile_shape);
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t off = dm_row_offset(r, rank, big_shape, tile_shape, offsets);
        memcpy(t + (size_t)r * row, b + (size_t)off * elem_bytes, row);
    }
}

void dm_dma_copy_out(void *big, const void *tile, uint32_t elem_bytes, uint32_t rank,
                     const uint32_t *big_shape, const uint32_t *tile_shape,
                     const uint32_t *offsets)
{
    uint8_t *b = (uint8_t *)big;
    const uint8_t *t = (const uint8_t *)tile;
    const uint32_t row = rank ? tile_shape[rank - 1u] * elem_bytes : elem_bytes;
    const uint32_t rows = dm_rows(rank, tile_shape);
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t off = dm_row_offset(r, rank, big_shape, tile_shape, offsets);
        memcpy(b + (size_t)off * elem_bytes, t + (size_t)r * row, row);
    }
}
