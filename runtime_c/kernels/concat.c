/* Concat and Split along one axis, one part per call (dm_kernels_ext.h):
 * parallel over the rows of the part. */
#include "dm_kernels_ext.h"

/* Copy the part's rows to (to_whole) or from their slab of the whole. */
static inline void dm_concat_rows(const dm_concat_args_t *a, int to_whole)
{
    const uint32_t len = a->len, inner = a->inner;
    uint32_t r0, r1;
    dm_chunk(a->outer * len, &r0, &r1);
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t o = r / len, j = r % len;
        float *whole = a->whole + (o * a->total + a->offset + j) * inner;
        float *part = a->part + r * inner;
        if (to_whole) {
            for (uint32_t e = 0; e < inner; e++) whole[e] = part[e];
        } else {
            for (uint32_t e = 0; e < inner; e++) part[e] = whole[e];
        }
    }
}

void dm_concat_fp32(void *args)
{
    const dm_concat_args_t *a = (const dm_concat_args_t *)args;
    dm_concat_rows(a, 1);
}

void dm_split_fp32(void *args)
{
    const dm_concat_args_t *a = (const dm_concat_args_t *)args;
    dm_concat_rows(a, 0);
}
