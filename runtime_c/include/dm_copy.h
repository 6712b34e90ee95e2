/* deeploy-mlir runtime: memory copies. */
#ifndef DM_COPY_H
#define DM_COPY_H

#include "dm_common.h"

/* dst[0..bytes) = src[0..bytes), split in chunks over the cores.
 * src and dst do not overlap. */
typedef struct {
    const void *src;
    void *dst;
    uint32_t bytes;
} dm_copy_args_t;

void dm_copy(void *args);

#endif
