/* deeploy-mlir runtime: what every kernel family shares.
 *
 * Every kernel is `void dm_<name>(void *args)` taking a pointer to its args
 * struct. It is run by each core of a team fork
 * (pi_cl_team_fork(NUM_CORES, dm_<name>, &args)) and splits its OUTER loop
 * into pi_cl_team_nb_cores() chunks by pi_core_id() (dm_chunk below).
 * Kernels use no barrier, no global mutable state, no malloc and no printf:
 * an operation with two phases is two kernels, run by two forks.
 * Tensors are row-major and contiguous unless a struct says otherwise; sizes
 * are uint32_t and count elements unless they are called `bytes`. */
#ifndef DM_COMMON_H
#define DM_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "pmsis.h"

/* The kernels' small helpers (the register tiles of gemm and conv, the row
 * loops of dm_rows.h): inlined at every optimization level, so a helper
 * costs nothing over the loop it names. */
#define DM_INLINE static inline __attribute__((always_inline))

/* [*start, *end) is this core's chunk of `total` items:
 * chunk = ceil(total / cores), start = id * chunk, end = min(start + chunk, total).
 * Cores past the end get an empty range. */
static inline void dm_chunk(uint32_t total, uint32_t *start, uint32_t *end)
{
    uint32_t cores = (uint32_t)pi_cl_team_nb_cores();
    uint32_t id = (uint32_t)pi_core_id();
    uint32_t chunk = (total + cores - 1u) / cores;
    uint32_t s = id * chunk;
    if (s > total) s = total;
    *start = s;
    *end = total - s > chunk ? s + chunk : total;
}

#endif
